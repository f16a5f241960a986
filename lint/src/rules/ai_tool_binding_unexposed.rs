//! `ai-tool-binding-unexposed`: a tool record binds an action that is not
//! opted in to AI.

use objectstack_spec::materialise::refine::{self, RecordSkip};

use crate::finding::Severity;
use crate::rule::{Context, Pending, Report, declare_rule};
use crate::rules::ai_tool_record_inert::tool_where;

declare_rule! {
    /// A tool record binds an action that does not materialise (it is not
    /// opted in with `ai.exposed` and a description, or fails the static
    /// checks), or binds a flow without the description that opts it in.
    ///
    /// ## What it finds
    ///
    /// A `stack.tools` record whose `binding` names a declared action that
    /// would not become `action_<name>` by itself: `ai.exposed` is not
    /// `true`, `ai.description` is missing, the `ai` block is malformed,
    /// the type is UI-only (`url`, `modal`, `form`) or unsupported, or the
    /// action has no target. Or a record bound to a flow whose
    /// `description` is missing or shorter than 40 characters: a flow has
    /// no `ai` block, so the record is the flow's opt-in.
    ///
    /// ## Why it matters
    ///
    /// A record refines an exposed action; it is never a way around the
    /// action's opt-in. The bridge skips the record (`binding_not_exposed`,
    /// or the action's own reason), so the refined tool is never
    /// registered, and because a record binds the action, the raw
    /// `action_<name>` is not registered either: the skills that name the
    /// refined tool get nothing.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "actions": [{ "name": "close_ticket", "type": "script", "target": "closeTicket" }],
    ///   "tools": [{ "name": "close_as_fixed", "label": "Close as fixed",
    ///               "description": "Close a ticket whose fix has shipped.",
    ///               "binding": { "type": "action", "name": "close_ticket" } }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Opt the action in: `ai: { exposed: true, description: "..." }` on a
    /// `script`, `api` or `flow` action with a target (or a field write).
    /// If the action is meant to stay human-only, remove the record. For a
    /// flow, give the record a description of 40 characters or more.
    pub static RULE = {
        id: "ai-tool-binding-unexposed",
        severity: Severity::Warning,
        check: check,
    };
}

fn check(cx: &Context<'_, '_>, out: &mut Vec<Pending<'_>>) {
    for (tool, outcome) in cx.stack.tools.iter().zip(&cx.refinements) {
        let reason = match outcome {
            Err(
                skip @ (RecordSkip::BindingNotExposed
                | RecordSkip::ActionSkipped(_)
                | RecordSkip::MissingDescription),
            ) => skip,
            _ => continue,
        };
        let binding = refine::binding(tool.fields()).and_then(Result::ok);
        let Some(action) = binding.map(|b| b.name()) else {
            continue;
        };
        let label = tool.label();
        if let RecordSkip::MissingDescription = reason {
            // A flow has no `ai` block: the record is its opt-in.
            let (path, raw) = tool.key("description");
            let anchor = if tool.fields().contains_key("description") {
                raw
            } else {
                tool.raw()
            };
            out.push(
                Report {
                    rule: &RULE,
                    source: tool.source(),
                    anchor: anchor.into(),
                    where_: tool_where(tool),
                    path: path.to_string(),
                    message: format!(
                        "Tool record \"{label}\" is bound to the flow \"{action}\" and is its \
                         opt-in, but its description is missing or shorter than {MIN} characters \
                         [missing_description], so the flow is not exposed.",
                        MIN = refine::MIN_FLOW_DESCRIPTION
                    )
                    .into(),
                    hint: format!(
                        "Describe for the model when to run \"{action}\" and what it does, in \
                         {} characters or more.",
                        refine::MIN_FLOW_DESCRIPTION
                    )
                    .into(),
                    reference: Some(action.to_owned()),
                    suggestion: None,
                }
                .hit(),
            );
            continue;
        }
        let (path, raw) = tool.key("binding");
        out.push(
            Report {
                rule: &RULE,
                source: tool.source(),
                anchor: raw.key("name").into(),
                where_: format!("{} \u{b7} binding", tool_where(tool)),
                path: path.key("name").to_string(),
                message: format!(
                    "Tool record \"{label}\" is bound to the action \"{action}\", which does not \
                     materialise as a tool [{}]: {}. A record never bypasses the action's opt-in, \
                     so neither the refined tool nor `action_{action}` is registered.",
                    reason.code(),
                    match reason {
                        RecordSkip::ActionSkipped(s) => s.reason(),
                        _ => "`ai.exposed` is not true".to_owned(),
                    }
                )
                .into(),
                hint: format!(
                    "Opt \"{action}\" in with `ai: {{ exposed: true, description: \"...\" }}` on a \
                     `script`, `api` or `flow` action with a target, or remove the record if the \
                     action stays human-only."
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

    const D: &str = "Closes a ticket whose work is done, described for a model.";

    #[test]
    fn unexposed_and_static_faults_are_reported_exposed_is_quiet() {
        let d = doc(json!({
            "actions": [
                {"name": "hidden", "type": "script", "target": "t"},
                {"name": "modal", "type": "modal", "ai": {"exposed": true, "description": D}},
                {"name": "open", "type": "script", "target": "t", "ai": {"exposed": true, "description": D}}
            ],
            "tools": [
                {"name": "a", "binding": {"type": "action", "name": "hidden"}},
                {"name": "b", "binding": {"type": "action", "name": "modal"}},
                {"name": "c", "binding": {"type": "action", "name": "open"}},
                {"name": "d", "binding": {"type": "action", "name": "missing"}},
                {"name": "e", "description": "Renews.", "binding": {"type": "flow", "name": "renew"}}
            ],
            "flows": [{"name": "renew"}]
        }));
        let hits = check_rule(&RULE, d);
        let got: Vec<_> = hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(
            got,
            [
                "tools[0].binding.name",
                "tools[1].binding.name",
                "tools[4].description"
            ]
        );
        assert!(hits[0].message.to_cow().contains("[binding_not_exposed]"));
        assert!(hits[1].message.to_cow().contains("[ui_only_type]"));
    }
}
