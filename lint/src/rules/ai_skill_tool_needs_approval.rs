//! `ai-skill-tool-needs-approval`: a skill names an action tool that only
//! exists where the approval queue is wired.

use objectstack_registry::ACTION_PREFIX;
use objectstack_spec::json::Value;

use crate::finding::Severity;
use crate::rule::{Context, Pending, Report, declare_rule};

declare_rule! {
    /// A skill names `action_<x>` where the action `x` needs a human's
    /// confirmation, so the tool exists only where the approval queue is
    /// wired.
    ///
    /// ## What it finds
    ///
    /// A reference in `skills[].tools[]` to a materialised action tool whose
    /// action needs confirmation: `ai.requiresConfirmation: true`, or, when
    /// that is not set, an action that looks destructive (`confirmText`,
    /// `mode: "delete"` or `variant: "danger"`).
    ///
    /// ## Why it matters
    ///
    /// A call to such a tool does not run; it is queued for a person to
    /// approve. A runtime without an approval queue (approval disabled, or no
    /// queue that accepts proposals) therefore does not register the tool at
    /// all, and the skill loses the capability there without any error. The
    /// model also has to be told that the call returns `pending_approval`
    /// rather than a result.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "objects": [{ "name": "invoice", "actions": [
    ///     { "name": "void_invoice", "type": "script", "target": "voidInvoice",
    ///       "confirmText": "Void this invoice?",
    ///       "ai": { "exposed": true,
    ///               "description": "Void an issued invoice so it can no longer be paid." } } ] }],
    ///   "skills": [{ "name": "billing", "tools": ["action_void_invoice"] }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Nothing is broken when every deployment wires the approval queue:
    /// then allow this rule. Otherwise make sure the runtimes that load this
    /// skill enable approval with a queue, and let the skill's instructions
    /// say that the action waits for a person's approval. If the action is
    /// in fact safe to run unattended, say so explicitly with
    /// `ai.requiresConfirmation: false`.
    pub static RULE = {
        id: "ai-skill-tool-needs-approval",
        severity: Severity::Warning,
        check: check,
    };
}

fn check(cx: &Context<'_, '_>, out: &mut Vec<Pending<'_>>) {
    if cx.needs_approval.is_empty() {
        // No action needs confirmation: no reference can name one, and a
        // large stack's references need not be read again.
        return;
    }
    for skill in &cx.stack.skills {
        let Some(Value::Array(refs)) = skill.record.get("tools") else {
            continue;
        };
        for (j, value) in refs.iter().enumerate() {
            let Some(action_name) = value
                .as_str()
                .and_then(|r| r.strip_prefix(ACTION_PREFIX))
                .filter(|n| !n.is_empty())
                // A superseded tool is not registered at all
                // (`ai-skill-tool-superseded` reports it).
                .filter(|n| !cx.superseded.contains(n))
            else {
                continue;
            };
            let Some((action, reason)) = cx
                .needs_approval
                .get(action_name)
                .and_then(|&(i, reason)| cx.stack.actions.get(i).map(|a| (a, reason)))
            else {
                continue;
            };
            let reference = format!("{ACTION_PREFIX}{action_name}");
            let skill_name = skill.label();
            let (path, raw) = skill.key("tools");
            out.push(
                Report {
                    rule: &RULE,
                    source: skill.source(),
                    anchor: raw.index(j).into(),
                    where_: format!("skill \"{skill_name}\" \u{b7} tools"),
                    path: path.index(j).to_string(),
                    message: format!(
                        "Skill \"{skill_name}\" uses tool \"{reference}\", and {} needs a \
                         person's confirmation (`{reason}`). Its calls are queued for approval \
                         instead of running, and a runtime without a wired approval queue does \
                         not register the tool at all, so there the skill silently loses it.",
                        action.where_text()
                    )
                    .into(),
                    hint: format!(
                        "Deploy this skill only where approval is enabled with a queue, and let \
                         its instructions say that \"{reference}\" waits for approval. If the \
                         action is safe to run unattended, set `ai.requiresConfirmation: false` \
                         on it; if every runtime wires the queue, allow this rule."
                    )
                    .into(),
                    reference: Some(reference),
                    suggestion: None,
                }
                .hit(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_rule, doc};
    use serde_json::json;

    use super::RULE;

    const D: &str = "Does the thing this action does, described for a model.";

    #[test]
    fn destructive_and_explicit_confirmation_are_reported() {
        let d = doc(json!({
            "objects": [{"name": "inv", "actions": [
                {"name": "void", "type": "script", "target": "v", "confirmText": "Sure?",
                 "ai": {"exposed": true, "description": D}},
                {"name": "send", "type": "api", "target": "/send",
                 "ai": {"exposed": true, "description": D, "requiresConfirmation": true}},
                {"name": "safe", "type": "script", "target": "s", "variant": "danger",
                 "ai": {"exposed": true, "description": D, "requiresConfirmation": false}},
                {"name": "plain", "type": "script", "target": "p",
                 "ai": {"exposed": true, "description": D}}
            ]}],
            "skills": [{"name": "billing", "tools": ["action_void", "action_send", "action_safe", "action_plain", "action_*"]}]
        }));
        let hits = check_rule(&RULE, d);
        let refs: Vec<_> = hits.iter().filter_map(|h| h.reference.as_deref()).collect();
        assert_eq!(refs, ["action_void", "action_send"]);
        assert!(hits[0].message.to_cow().contains("`confirmText`"));
        assert!(
            hits[1]
                .message
                .to_cow()
                .contains("`ai.requiresConfirmation: true`")
        );
        assert!(
            hits[0]
                .message
                .to_cow()
                .contains("object \"inv\" \u{b7} action \"void\"")
        );
    }

    #[test]
    fn actions_that_do_not_materialise_are_left_to_the_unresolved_rule() {
        let d = doc(json!({
            "actions": [{"name": "void", "type": "modal", "mode": "delete",
                         "ai": {"exposed": true, "description": D}}],
            "skills": [{"name": "s", "tools": ["action_void"]}]
        }));
        assert!(check_rule(&RULE, d).is_empty());
    }
}
