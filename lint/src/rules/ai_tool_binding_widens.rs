//! `ai-tool-binding-widens`: a tool record's parameters do not narrow its
//! action's.

use objectstack_spec::materialise::refine::RecordSkip;

use crate::finding::Severity;
use crate::rule::{Context, Pending, Report, declare_rule};
use crate::rules::ai_tool_record_inert::tool_where;

declare_rule! {
    /// A bound tool record's `parameters` would let the model send what the
    /// action does not take: a refinement only narrows.
    ///
    /// ## What it finds
    ///
    /// A record bound to an action whose `parameters` name a property the
    /// action's materialised tool does not have, give a property another
    /// JSON type (`integer` for a `number` is narrower and fine), add an
    /// `enum` value (or pin a `const`) the action does not allow, drop or
    /// make optional a parameter the action requires (pin it with `const`
    /// instead), or set `additionalProperties` to anything but `false`.
    /// The finding names the exact property.
    ///
    /// ## Why it matters
    ///
    /// A refinement exists to show the model less than the raw action:
    /// three of twenty parameters, a shorter list of values. A record that
    /// widens the surface would promise the model arguments the executable
    /// rejects or never reads. The bridge skips the record
    /// (`binding_widens`), and since the record binds the action, the raw
    /// `action_<name>` is not registered either.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "tools": [{ "name": "close_as_fixed", "label": "Close as fixed",
    ///               "description": "Close a ticket whose fix has shipped.",
    ///               "binding": { "type": "action", "name": "close_ticket" },
    ///               "parameters": { "type": "object",
    ///                 "properties": { "resolution": { "enum": ["fixed", "shipped"] } } } }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Keep only properties the action takes, with its types; list only
    /// values its options allow; keep every parameter it requires in
    /// `required`, or pin it with `const` (the runtime then sends that
    /// value). Leave `parameters` out to take the action's as they are.
    pub static RULE = {
        id: "ai-tool-binding-widens",
        severity: Severity::Error,
        check: check,
    };
}

fn check(cx: &Context<'_, '_>, out: &mut Vec<Pending<'_>>) {
    for (tool, outcome) in cx.stack.tools.iter().zip(&cx.refinements) {
        let Err(RecordSkip::Widens { property, reason }) = outcome else {
            continue;
        };
        let (mut path, mut raw) = tool.key("parameters");
        let properties = tool
            .fields()
            .get("parameters")
            .and_then(|p| p.as_object())
            .and_then(|p| p.get("properties"))
            .and_then(|p| p.as_object());
        if properties.is_some_and(|p| p.contains_key(property)) {
            path = path.key("properties").key(property);
            raw = raw.key("properties").key(property);
        } else if property == "additionalProperties" {
            path = path.key(property);
            raw = raw.key(property);
        }
        let label = tool.label();
        out.push(
            Report {
                rule: &RULE,
                source: tool.source(),
                anchor: raw.into(),
                where_: format!("{} \u{b7} parameters", tool_where(tool)),
                path: path.to_string(),
                message: format!(
                    "Tool record \"{label}\" widens its action's parameters at `{property}`: \
                     {reason}. A refinement only narrows, so the record is skipped \
                     (`binding_widens`) and, as it binds the action, the raw tool is not \
                     registered either."
                )
                .into(),
                hint: "Keep only properties the action takes, with its types and a subset of its \
                       values; keep its required parameters required or pin them with `const`; \
                       or leave `parameters` out to take the action's."
                    .into(),
                reference: Some(property.clone()),
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
    fn the_exact_property_is_named() {
        let d = doc(json!({
            "actions": [{"name": "close", "type": "script", "target": "t",
                "params": [{"name": "resolution", "type": "select", "required": true,
                            "options": ["fixed", "wontfix"]}, {"name": "note"}],
                "ai": {"exposed": true, "description": D}}],
            "tools": [
                {"name": "ok", "binding": {"type": "action", "name": "close"},
                 "parameters": {"properties": {"resolution": {"const": "fixed"}}}},
                {"name": "bad_enum", "binding": {"type": "action", "name": "close"},
                 "parameters": {"properties": {"resolution": {"enum": ["fixed", "shipped"]}},
                                "required": ["resolution"]}},
                {"name": "extra", "binding": {"type": "action", "name": "close"},
                 "parameters": {"properties": {"resolution": {}, "priority": {}},
                                "required": ["resolution"]}},
                {"name": "dropped", "binding": {"type": "action", "name": "close"},
                 "parameters": {"properties": {"note": {}}}}
            ]
        }));
        let hits = check_rule(&RULE, d);
        let got: Vec<_> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.reference.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "tools[1].parameters.properties.resolution",
                    Some("resolution")
                ),
                ("tools[2].parameters.properties.priority", Some("priority")),
                ("tools[3].parameters", Some("resolution")),
            ]
        );
        assert!(hits[0].message.to_cow().contains("\"shipped\""));
    }
}
