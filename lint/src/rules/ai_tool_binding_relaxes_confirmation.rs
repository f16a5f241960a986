//! `ai-tool-binding-relaxes-confirmation`: a tool record tries to lift its
//! action's confirmation.

use crate::finding::Severity;
use crate::rule::{Context, Pending, Report, declare_rule};
use crate::rules::ai_tool_record_inert::tool_where;

declare_rule! {
    /// A bound tool record sets `requiresConfirmation: false` on an action
    /// that needs a human's confirmation; the tool stays gated.
    ///
    /// ## What it finds
    ///
    /// A record bound to an action that needs confirmation (it sets
    /// `ai.requiresConfirmation: true`, or looks destructive: `confirmText`,
    /// `mode: "delete"`, `variant: "danger"`, without asserting
    /// `ai.requiresConfirmation: false`), while the record says
    /// `requiresConfirmation: false`.
    ///
    /// ## Why it matters
    ///
    /// A refinement only tightens. `requiresConfirmation: true` on a record
    /// gates a tool through the approval queue; `false` never relaxes the
    /// action behind it, so calls still wait for a human. The record reads
    /// as a promise that the tool runs unattended, which is not what
    /// happens.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "tools": [{ "name": "purge_ticket", "label": "Purge",
    ///               "description": "Delete a ticket for good.",
    ///               "binding": { "type": "action", "name": "delete_ticket" },
    ///               "requiresConfirmation": false }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Remove `requiresConfirmation: false` from the record. If the action
    /// really is safe to run unattended, say so on the action
    /// (`ai.requiresConfirmation: false`), where reviewers look for it.
    pub static RULE = {
        id: "ai-tool-binding-relaxes-confirmation",
        severity: Severity::Warning,
        check: check,
    };
}

fn check(cx: &Context<'_, '_>, out: &mut Vec<Pending<'_>>) {
    for (tool, outcome) in cx.stack.tools.iter().zip(&cx.refinements) {
        let Ok(Some(refinement)) = outcome else {
            continue;
        };
        if !refinement.relaxes_confirmation {
            continue;
        }
        let (path, raw) = tool.key("requiresConfirmation");
        let (label, action) = (tool.label(), refinement.binding.name());
        out.push(
            Report {
                rule: &RULE,
                source: tool.source(),
                anchor: raw.into(),
                where_: tool_where(tool),
                path: path.to_string(),
                message: format!(
                    "Tool record \"{label}\" sets `requiresConfirmation: false`, but the action \
                     \"{action}\" needs a human's confirmation. A refinement never relaxes it: \
                     calls to \"{label}\" still wait in the approval queue."
                )
                .into(),
                hint: format!(
                    "Remove `requiresConfirmation: false` from the record; if \"{action}\" is safe \
                     to run unattended, set `ai.requiresConfirmation: false` on the action."
                )
                .into(),
                reference: Some(action.to_owned()),
                suggestion: None,
            }
            .hit(),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_rule, doc};
    use serde_json::json;

    use super::RULE;

    const D: &str = "Deletes a ticket for good, described for a model.";

    #[test]
    fn only_false_on_a_gated_action_is_reported() {
        let d = doc(json!({
            "actions": [
                {"name": "purge", "type": "script", "target": "t", "mode": "delete",
                 "ai": {"exposed": true, "description": D}},
                {"name": "open", "type": "script", "target": "t",
                 "ai": {"exposed": true, "description": D}}
            ],
            "tools": [
                {"name": "a", "binding": {"type": "action", "name": "purge"}, "requiresConfirmation": false},
                {"name": "b", "binding": {"type": "action", "name": "purge"}, "requiresConfirmation": true},
                {"name": "c", "binding": {"type": "action", "name": "open"}, "requiresConfirmation": false}
            ]
        }));
        let hits = check_rule(&RULE, d);
        let got: Vec<_> = hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(got, ["tools[0].requiresConfirmation"]);
    }
}
