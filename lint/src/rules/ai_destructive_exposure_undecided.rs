//! `ai-destructive-exposure-undecided`: a destructive-looking action with no
//! explicit AI exposure decision.

use objectstack_spec::materialise::ConfirmationReason;

use crate::finding::Severity;
use crate::rule::{Context, Pending, Report, declare_rule, hits_in_order};
use crate::stack::ActionEntry;

declare_rule! {
    /// An action that looks destructive has no explicit `ai.exposed` choice.
    ///
    /// ## What it finds
    ///
    /// A stack-level or object-level action that looks destructive (it has a
    /// `confirmText`, `mode: "delete"` or `variant: "danger"`) and whose `ai`
    /// block does not set `exposed` to `true` or `false` (ADR-0011 Phase 3).
    ///
    /// ## Why it matters
    ///
    /// Today an undecided action stays human-only, because exposure is opt-in.
    /// But "nobody decided" is not the same as "somebody decided no": the
    /// next person to expose actions in bulk, or a future default, turns a
    /// delete button into something a model can press. Destructive
    /// operations deserve a recorded decision, reviewed like code.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "name": "purge_archive", "type": "script", "target": "purgeArchive",
    ///   "mode": "delete", "confirmText": "Purge every archived record?" }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Decide, and write it down: `ai: { exposed: false }` keeps the action
    /// human-only on purpose; `ai: { exposed: true, description: "..." }`
    /// exposes it, and then calls wait for a person's approval unless you
    /// also set `ai.requiresConfirmation: false`.
    pub static RULE = {
        id: "ai-destructive-exposure-undecided",
        severity: Severity::Warning,
        check: check,
    };
}

/// The key an author wrote for a destructive signal.
pub(crate) fn signal_key(reason: ConfirmationReason) -> &'static str {
    match reason {
        ConfirmationReason::AiRequiresConfirmation => "ai",
        ConfirmationReason::ConfirmText => "confirmText",
        ConfirmationReason::ModeDelete => "mode",
        ConfirmationReason::VariantDanger => "variant",
    }
}

fn check<'a>(cx: &Context<'_, 'a>, out: &mut Vec<Pending<'a>>) {
    // Undecided: a destructive signal, and no boolean `ai.exposed`.
    let undecided: Vec<_> = cx
        .stack
        .actions
        .iter()
        .zip(&cx.action_facts)
        .filter_map(|(action, facts)| match (facts.signal, facts.exposed) {
            (Some(signal), None) => Some((action, signal)),
            _ => None,
        })
        .collect();
    hits_in_order(&undecided, out, |&(action, signal)| {
        Some(hit(action, signal))
    });
}

fn hit<'a>(action: &ActionEntry<'a>, signal: ConfirmationReason) -> Pending<'a> {
    let (_, raw) = action.entry.key(signal_key(signal));
    Report {
        rule: &RULE,
        source: action.entry.source(),
        anchor: raw.into(),
        where_: action.where_text(),
        path: action.entry.path().to_string(),
        message: format!(
            "{} looks destructive (`{signal}`) but records no decision about AI \
             exposure: `ai.exposed` is not set. It stays human-only today only because \
             exposure is opt-in, and nothing shows that anyone chose that.",
            capitalise(&action.where_text())
        )
        .into(),
        hint: "Record the decision: `ai: { exposed: false }` keeps it human-only on \
               purpose; `ai: { exposed: true, description: \"...\" }` exposes it, and its \
               calls then wait for a person's approval."
            .into(),
        reference: None,
        suggestion: None,
    }
    .hit()
}

/// `action "x"` -> `Action "x"`.
pub(crate) fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_rule, doc};
    use serde_json::json;

    use super::RULE;

    #[test]
    fn each_signal_without_a_decision() {
        let d = doc(json!({
            "actions": [
                {"name": "a", "mode": "delete"},
                {"name": "b", "variant": "danger", "ai": {}},
                {"name": "c", "confirmText": "Sure?", "ai": {"description": "x"}},
                {"name": "d", "confirmText": "Sure?", "ai": {"exposed": false}},
                {"name": "e", "variant": "danger", "ai": {"exposed": true}},
                {"name": "f", "variant": "primary"},
                {"name": "g", "confirmText": ""}
            ]
        }));
        let hits = check_rule(&RULE, d);
        let paths: Vec<_> = hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(paths, ["actions[0]", "actions[1]", "actions[2]"]);
        assert!(
            hits[0]
                .message
                .to_cow()
                .starts_with("Action \"a\" looks destructive (`mode: delete`)")
        );
    }

    #[test]
    fn object_actions_are_checked_too() {
        let d =
            doc(json!({"objects": [{"name": "o", "actions": [{"name": "x", "mode": "delete"}]}]}));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits[0].where_, "object \"o\" \u{b7} action \"x\"");
        assert_eq!(hits[0].path, "objects[0].actions[0]");
    }
}
