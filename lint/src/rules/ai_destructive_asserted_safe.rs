//! `ai-destructive-asserted-safe`: an exposed destructive-looking action
//! that opts out of confirmation.

use crate::finding::Severity;
use crate::rule::{ActionFacts, Context, Pending, Report, declare_rule, hits_in_order};
use crate::rules::ai_destructive_exposure_undecided::capitalise;
use crate::stack::ActionEntry;

declare_rule! {
    /// An action exposed to AI looks destructive yet sets
    /// `ai.requiresConfirmation: false`, so a model can run it unattended.
    ///
    /// ## What it finds
    ///
    /// A stack-level or object-level action with `ai.exposed: true` that
    /// looks destructive (`confirmText`, `mode: "delete"` or
    /// `variant: "danger"`) and explicitly sets
    /// `ai.requiresConfirmation: false`.
    ///
    /// ## Why it matters
    ///
    /// A destructive-looking action normally waits for a person's approval
    /// when a model calls it. Setting `requiresConfirmation: false` removes
    /// that gate: the model's call runs at once. A human clicking the same
    /// button in the UI would have been asked to confirm, which is a strong
    /// sign the operation is not safe to run without one.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "name": "delete_completed", "type": "script", "target": "deleteCompleted",
    ///   "variant": "danger", "confirmText": "Delete all completed tasks?",
    ///   "ai": { "exposed": true, "requiresConfirmation": false,
    ///           "description": "Delete every completed task of the current user." } }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Remove `requiresConfirmation: false` (or set it to `true`) so model
    /// calls wait for approval. If the operation really is safe to run
    /// unattended, drop the destructive signal that says otherwise, or
    /// allow this rule with a comment saying why.
    pub static RULE = {
        id: "ai-destructive-asserted-safe",
        severity: Severity::Warning,
        check: check,
    };
}

fn check<'a>(cx: &Context<'_, 'a>, out: &mut Vec<Pending<'a>>) {
    // Exposed, destructive-looking, and `ai.requiresConfirmation: false`.
    let asserted: Vec<_> = cx
        .stack
        .actions
        .iter()
        .zip(&cx.action_facts)
        .filter_map(|(action, facts)| match facts {
            ActionFacts {
                signal: Some(signal),
                exposed: Some(true),
                explicit_confirmation: Some(false),
            } => Some((action, signal.as_source())),
            _ => None,
        })
        .collect();
    hits_in_order(&asserted, out, |&(action, signal)| {
        Some(hit(action, signal))
    });
}

fn hit<'a>(action: &ActionEntry<'a>, signal: &str) -> Pending<'a> {
    let (path, raw) = action.entry.key("ai");
    Report {
        rule: &RULE,
        source: action.entry.source(),
        anchor: raw.key("requiresConfirmation").into(),
        where_: action.where_text(),
        path: path.key("requiresConfirmation").to_string(),
        message: format!(
            "{} is exposed to AI and looks destructive (`{signal}`), yet sets \
             `ai.requiresConfirmation: false`: a model's call runs at once, with no \
             person approving it, although a person clicking it would be asked to \
             confirm.",
            capitalise(&action.where_text())
        )
        .into(),
        hint: "Remove `requiresConfirmation: false` (or set it to `true`) so model calls \
               wait for approval; if the operation is truly safe unattended, remove the \
               destructive signal instead."
            .into(),
        reference: None,
        suggestion: None,
    }
    .hit()
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_rule, doc};
    use serde_json::json;

    use super::RULE;

    #[test]
    fn only_exposed_destructive_opt_outs() {
        let d = doc(json!({
            "actions": [
                {"name": "a", "variant": "danger", "ai": {"exposed": true, "requiresConfirmation": false}},
                {"name": "b", "variant": "danger", "ai": {"exposed": false, "requiresConfirmation": false}},
                {"name": "c", "ai": {"exposed": true, "requiresConfirmation": false}},
                {"name": "d", "mode": "delete", "ai": {"exposed": true}},
                {"name": "e", "mode": "delete", "ai": {"exposed": true, "requiresConfirmation": true}}
            ]
        }));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].path, "actions[0].ai.requiresConfirmation");
        assert!(hits[0].message.to_cow().contains("`variant: danger`"));
    }
}
