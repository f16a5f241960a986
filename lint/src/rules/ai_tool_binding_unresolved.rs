//! `ai-tool-binding-unresolved`: a tool record's binding points at nothing
//! that runs.

use objectstack_spec::json::Value;
use objectstack_spec::json::kind;

use crate::finding::{Severity, Text};
use crate::rule::{Context, Names, Pending, Report, declare_rule, hits_in_order};
use crate::rules::ai_tool_record_inert::tool_where;
use crate::stack::Entry;

declare_rule! {
    /// A tool record's `binding` is malformed, or names no action or flow
    /// of the stack.
    ///
    /// ## What it finds
    ///
    /// A `stack.tools` record whose `binding` (`{ "type": "action" | "flow",
    /// "name": "..." }`) is malformed, or names an action or flow the stack
    /// does not declare (the bridge skips it as `invalid_binding` or
    /// `binding_unresolved`). A declared action that does not materialise
    /// is `ai-tool-binding-unexposed`'s.
    ///
    /// ## Why it matters
    ///
    /// The binding is what makes a tool record executable: the record
    /// refines how an existing action or flow is presented to the model. A
    /// binding to nothing leaves the record as inert as one without a
    /// binding, and a binding to an action supersedes its raw
    /// `action_<name>` tool, so a broken binding leaves no tool at all.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "flows": [{ "name": "renew_contract" }],
    ///   "tools": [{ "name": "renew", "description": "Renew a contract.",
    ///               "binding": { "type": "flow", "name": "renew_contracts" } }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Point the binding at a real executable: fix the name (the finding
    /// suggests the nearest one), or declare the action or flow. `type`
    /// must be `action` or `flow`.
    pub static RULE = {
        id: "ai-tool-binding-unresolved",
        severity: Severity::Warning,
        check: check,
    };
}

struct Problem {
    key: Option<&'static str>,
    message: Text,
    hint: Text,
    reference: Option<String>,
    suggestion: Option<String>,
}

const SHAPE_HINT: &str = "Write the binding as `{ \"type\": \"action\", \"name\": \"<action>\" }` \
                          or `{ \"type\": \"flow\", \"name\": \"<flow>\" }`.";

/// The problem with `tool`'s binding, if any (the record's label is made
/// only for a problem: most bindings resolve).
fn problem(cx: &Context<'_, '_>, tool: &Entry<'_>, binding: &Value) -> Option<Problem> {
    let tool = || tool.label();
    let Value::Object(binding) = binding else {
        let tool = tool();
        return Some(Problem {
            key: None,
            message: format!(
                "Tool record \"{tool}\" has a `binding` that is {}, not an object, so it binds \
                 the record to nothing and nothing executes it.",
                kind(binding)
            )
            .into(),
            hint: SHAPE_HINT.into(),
            reference: None,
            suggestion: None,
        });
    };
    let binding_type = binding.get("type").and_then(Value::as_str);
    if !matches!(binding_type, Some("action" | "flow")) {
        let tool = tool();
        return Some(Problem {
            key: binding.contains_key("type").then_some("type"),
            message: format!(
                "Tool record \"{tool}\" has a binding whose `type` is {}, so the runtime cannot \
                 tell what executes it.",
                match binding.get("type") {
                    Some(Value::String(s)) => format!("\"{s}\""),
                    Some(other) => kind(other).to_owned(),
                    None => "missing".to_owned(),
                }
            )
            .into(),
            hint: SHAPE_HINT.into(),
            reference: None,
            suggestion: None,
        });
    }
    let Some(name) = binding
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    else {
        let tool = tool();
        return Some(Problem {
            key: binding.contains_key("name").then_some("name"),
            message: format!(
                "Tool record \"{tool}\" has a binding without a `name`, so it names no executable \
                 and nothing runs the record."
            )
            .into(),
            hint: SHAPE_HINT.into(),
            reference: None,
            suggestion: None,
        });
    };
    if binding_type == Some("flow") {
        if cx.names(Names::Flows).contains(name) {
            return None;
        }
        let tool = tool();
        let suggestion = cx.nearest(Names::Flows, name).map(str::to_owned);
        return Some(Problem {
            key: Some("name"),
            message: format!(
                "Tool record \"{tool}\" is bound to the flow \"{name}\", which this stack does not \
                 declare, so a call to the tool has nothing to run.{}",
                did_you_mean(suggestion.as_deref())
            )
            .into(),
            hint: format!(
                "Bind the record to a flow in `stack.flows` (fix the name, or declare \"{name}\"), \
                 or remove the record."
            )
            .into(),
            reference: Some(name.to_owned()),
            suggestion,
        });
    }
    if cx.actions_named(name).next().is_none() {
        let tool = tool();
        let suggestion = cx.nearest(Names::Actions, name).map(str::to_owned);
        return Some(Problem {
            key: Some("name"),
            message: format!(
                "Tool record \"{tool}\" is bound to the action \"{name}\", which this stack does \
                 not declare (neither at stack level nor on an object), so a call to the tool has \
                 nothing to run.{}",
                did_you_mean(suggestion.as_deref())
            )
            .into(),
            hint: format!(
                "Bind the record to a declared action (fix the name, or declare \"{name}\"), or \
                 remove the record."
            )
            .into(),
            reference: Some(name.to_owned()),
            suggestion,
        });
    }
    // An action that is declared but does not materialise is
    // `ai-tool-binding-unexposed`'s (the predicate's `binding_not_exposed`).
    None
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |s| format!(" Did you mean \"{s}\"?"))
}

fn check<'a>(cx: &Context<'_, 'a>, out: &mut Vec<Pending<'a>>) {
    hits_in_order(&cx.stack.tools, out, |tool| hit(cx, tool));
}

fn hit<'a>(cx: &Context<'_, 'a>, tool: &Entry<'a>) -> Option<Pending<'a>> {
    let binding = match tool.record.get("binding") {
        None | Some(Value::Null) => return None,
        Some(b) => b,
    };
    let p = problem(cx, tool, binding)?;
    let (mut path, mut raw) = tool.key("binding");
    if let Some(key) = p.key {
        path = path.key(key);
        raw = raw.key(key);
    }
    Some(
        Report {
            rule: &RULE,
            source: tool.source(),
            anchor: raw.into(),
            where_: format!("{} \u{b7} binding", tool_where(tool)),
            path: path.to_string(),
            message: p.message,
            hint: p.hint,
            reference: p.reference,
            suggestion: p.suggestion,
        }
        .hit(),
    )
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_rule, doc};
    use serde_json::json;

    use super::RULE;

    const D: &str = "Does the thing this action does, described for a model.";

    #[test]
    fn resolved_bindings_are_quiet() {
        let d = doc(json!({
            "flows": [{"name": "renew"}],
            "objects": [{"name": "o", "actions": [{"name": "close", "type": "script", "target": "t",
                "ai": {"exposed": true, "description": D}}]}],
            "tools": [{"name": "a", "binding": {"type": "flow", "name": "renew"}},
                      {"name": "b", "binding": {"type": "action", "name": "close"}},
                      {"name": "c"}]
        }));
        assert!(check_rule(&RULE, d).is_empty());
    }

    /// More records than one task reads: the chunks' hits come in
    /// document order, each record's where it is.
    #[test]
    fn hits_across_many_records_come_in_document_order() {
        let tools: Vec<_> = (0..2500)
            .map(|i| {
                let name = if i % 3 == 0 { "close" } else { "gone" };
                json!({"name": format!("t{i}"), "binding": {"type": "action", "name": name}})
            })
            .collect();
        let d = doc(json!({
            "actions": [{"name": "close", "type": "script", "target": "t",
                         "ai": {"exposed": true, "description": D}}],
            "tools": tools
        }));
        let got: Vec<(String, String)> = check_rule(&RULE, d)
            .into_iter()
            .map(|h| (h.path, h.where_))
            .collect();
        let wanted: Vec<(String, String)> = (0..2500)
            .filter(|i| i % 3 != 0)
            .map(|i| {
                (
                    format!("tools[{i}].binding.name"),
                    format!("tool \"t{i}\" \u{b7} binding"),
                )
            })
            .collect();
        assert_eq!(got, wanted);
    }

    #[test]
    fn unresolved_and_malformed() {
        let d = doc(json!({
            "flows": {"renew_contract": {}},
            "actions": [{"name": "archive", "type": "modal"}],
            "tools": [
                {"name": "a", "binding": {"type": "flow", "name": "renew_contracts"}},
                {"name": "b", "binding": {"type": "action", "name": "archive"}},
                {"name": "c", "binding": {"type": "action", "name": "nothing_here"}},
                {"name": "d", "binding": {"type": "job", "name": "x"}},
                {"name": "e", "binding": {"type": "flow"}},
                {"name": "f", "binding": "renew"}
            ]
        }));
        let hits = check_rule(&RULE, d);
        let got: Vec<_> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.suggestion.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("tools[0].binding.name", Some("renew_contract")),
                ("tools[2].binding.name", None),
                ("tools[3].binding.type", None),
                ("tools[4].binding", None),
                ("tools[5].binding", None),
            ]
        );
        assert!(
            hits[0]
                .message
                .to_cow()
                .ends_with("Did you mean \"renew_contract\"?")
        );
        assert_eq!(hits[0].where_, "tool \"a\" \u{b7} binding");
    }
}
