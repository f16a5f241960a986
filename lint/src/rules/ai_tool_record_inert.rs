//! `ai-tool-record-inert`: a tool record with no binding executes nothing.

use crate::finding::Severity;
use crate::rule::{Context, Pending, Report, declare_rule};
use crate::stack::Entry;

declare_rule! {
    /// A `stack.tools` record has no `binding`, so nothing executes it.
    ///
    /// ## What it finds
    ///
    /// A record in `stack.tools` without a `binding` (`{ "type": "action" |
    /// "flow", "name": "..." }`) naming the executable it refines
    /// (ADR-0109 decision 4).
    ///
    /// ## Why it matters
    ///
    /// A tool record carries a name, a description and parameters, but no
    /// handler. Without a binding no runtime executes it: a skill that
    /// names it resolves by name, yet the call goes nowhere. It is metadata
    /// that looks like a capability and is not one (ADR-0078: no silently
    /// inert metadata). In the default path a third party needs no tool
    /// record at all: every exposed action already materialises as
    /// `action_<name>`.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "tools": [{ "name": "forecast_revenue", "label": "Forecast",
    ///               "description": "Forecast next quarter's revenue.",
    ///               "parameters": { "type": "object", "properties": {} } }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Delete the record and let skills reference the materialised
    /// `action_<name>` of an exposed action. Keep a record only to refine
    /// how an executable is presented to the model (a narrower parameter
    /// set, a better description, exposing a flow), and then bind it:
    /// `"binding": { "type": "action", "name": "forecast_revenue" }`.
    pub static RULE = {
        id: "ai-tool-record-inert",
        severity: Severity::Warning,
        check: check,
    };
}

/// `tool "x"` (or `tool "#i"`).
pub(crate) fn tool_where(tool: &Entry<'_>) -> String {
    format!("tool \"{}\"", tool.label())
}

fn check(cx: &Context<'_, '_>, out: &mut Vec<Pending<'_>>) {
    for tool in &cx.stack.tools {
        // The predicate's "unbound": no binding, or `binding: null`.
        if objectstack_spec::materialise::refine::binding(tool.fields()).is_some() {
            continue;
        }
        let anchor = if tool.name().is_some() {
            tool.key("name").1
        } else {
            tool.raw()
        };
        let label = tool.label();
        out.push(
            Report {
                rule: &RULE,
                source: tool.source(),
                anchor: anchor.into(),
                where_: tool_where(tool),
                path: tool.path().to_string(),
                message: format!(
                    "Tool record \"{label}\" has no `binding`, so no runtime executes it: a skill \
                     that names it resolves, but the call has no handler behind it. The record \
                     is inert metadata that looks like a capability."
                )
                .into(),
                hint: "Delete the record and reference the materialised `action_<name>` of an \
                       exposed action instead (no record needed), or bind the record to the \
                       executable it refines: `\"binding\": { \"type\": \"action\", \"name\": \
                       \"...\" }` (or `\"type\": \"flow\"`)."
                    .into(),
                reference: None,
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

    #[test]
    fn records_without_binding() {
        let d = doc(json!({
            "tools": [
                {"name": "a"},
                {"name": "b", "binding": {"type": "action", "name": "x"}},
                {"name": "c", "binding": null},
                {"label": "nameless"},
                7
            ]
        }));
        let hits = check_rule(&RULE, d);
        let paths: Vec<_> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.where_.as_str()))
            .collect();
        assert_eq!(
            paths,
            [
                ("tools[0]", "tool \"a\""),
                ("tools[2]", "tool \"c\""),
                ("tools[3]", "tool \"#3\"")
            ]
        );
    }
}
