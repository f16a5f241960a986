//! `ai-tool-parameters-malformed`: a bound tool record's `parameters` is
//! not a schema the runtime can use, so the record is skipped.

use objectstack_spec::json::Value;
use objectstack_spec::materialise::refine::{self, Binding, RecordSkip};

use crate::finding::Severity;
use crate::rule::{Context, Pending, Report, declare_rule};
use crate::rules::ai_tool_record_inert::tool_where;

declare_rule! {
    /// A bound tool record's `parameters` is an object but not a usable
    /// JSON Schema for the tool's arguments, so the runtime skips the record.
    ///
    /// ## What it finds
    ///
    /// A record with a `binding` whose `parameters` object has a `type`
    /// other than `"object"`, `properties` that is not an object, a
    /// property whose schema is not an object (`"note": 0`), or `required`
    /// that is not an array of names. The finding quotes the exact key.
    /// (`parameters` or `requiresConfirmation` of the wrong type altogether
    /// are reported by the `spec` validation, under `spec-wrong-type`.)
    ///
    /// ## Why it matters
    ///
    /// The runtime checks a record's parameters before it registers the
    /// tool, and skips a malformed record (`invalid_record`). A record that
    /// binds an action also hides the raw `action_<name>`, which is not
    /// registered either: a skill that names either resolves by name, yet
    /// no such tool reaches the model. Nothing else in the lint says so.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "tools": [{ "name": "close_with_note", "label": "Close with a note",
    ///               "description": "Close a ticket, leaving a note for the customer.",
    ///               "binding": { "type": "action", "name": "close_ticket" },
    ///               "parameters": { "type": "object", "properties": { "note": 0 } } }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Give each property a schema object (`"note": { "type": "string" }`),
    /// keep `type` at `"object"` and `required` a list of property names,
    /// or leave `parameters` out to take the action's as they are.
    pub static RULE = {
        id: "ai-tool-parameters-malformed",
        severity: Severity::Warning,
        check: check,
    };
}

fn check(cx: &Context<'_, '_>, out: &mut Vec<Pending<'_>>) {
    for (tool, outcome) in cx.stack.tools.iter().zip(&cx.refinements) {
        let Err(RecordSkip::InvalidRecord(fault)) = outcome else {
            continue;
        };
        // The wrong type altogether is the `spec` validation's finding.
        let fields = tool.fields();
        let parameters_object = matches!(fields.get("parameters"), Some(Value::Object(_)));
        let confirmation_ok = matches!(
            fields.get("requiresConfirmation"),
            None | Some(Value::Null | Value::Bool(_))
        );
        if !parameters_object || !confirmation_ok {
            continue;
        }
        let (path, raw) = tool.key("parameters");
        let label = tool.label();
        // Only an action has a raw tool (`action_<name>`) the record hides.
        let hides = match refine::binding(fields) {
            Some(Ok(Binding::Action(_))) => {
                " and, as it binds its executable, the raw tool is not registered either"
            }
            _ => "",
        };
        out.push(
            Report {
                rule: &RULE,
                source: tool.source(),
                anchor: raw.into(),
                where_: format!("{} \u{b7} parameters", tool_where(tool)),
                path: path.to_string(),
                message: format!(
                    "Tool record \"{label}\" has malformed `parameters`: {fault}. The runtime \
                     skips the record (`invalid_record`){hides}."
                )
                .into(),
                hint: "Give every property a schema object (`{\"type\": \"string\"}`), keep \
                       `type` at \"object\" and `required` a list of property names, or leave \
                       `parameters` out to take the action's."
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

    const D: &str = "Closes a ticket whose work is done, described for a model.";

    #[test]
    fn malformed_parameters_are_reported_with_the_exact_key() {
        let bound = |name: &str, extra: serde_json::Value| {
            let mut record = json!({"name": name, "binding": {"type": "action", "name": "close"}});
            if let (Some(r), Some(e)) = (record.as_object_mut(), extra.as_object()) {
                r.extend(e.clone());
            }
            record
        };
        let d = doc(json!({
            "actions": [{"name": "close", "type": "script", "target": "t",
                "params": [{"name": "note"}],
                "ai": {"exposed": true, "description": D}}],
            "flows": [{"name": "escalate"}],
            "tools": [
                bound("fine", json!({"parameters": {"properties": {"note": {}}}})),
                bound("not_a_schema", json!({"parameters": {"properties": {"note": 0}}})),
                bound("array_type", json!({"parameters": {"type": "array"}})),
                bound("listed_props", json!({"parameters": {"properties": []}})),
                bound("required_text", json!({"parameters": {"required": "note"}})),
                // The spec validation's findings, not this rule's.
                bound("number", json!({"parameters": 5})),
                bound("confirm_text", json!({"requiresConfirmation": "yes",
                                             "parameters": {"properties": {"note": 0}}})),
                {"name": "flow_tool", "description": D,
                 "binding": {"type": "flow", "name": "escalate"},
                 "parameters": {"properties": {"p1": 0}}},
                // Unbound: inert, not malformed.
                {"name": "unbound", "parameters": {"properties": {"note": 0}}}
            ]
        }));
        let hits = check_rule(&RULE, d);
        let got: Vec<(&str, bool)> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.message.to_string().contains('`')))
            .collect();
        assert_eq!(
            got,
            [
                ("tools[1].parameters", true),
                ("tools[2].parameters", true),
                ("tools[3].parameters", true),
                ("tools[4].parameters", true),
                ("tools[7].parameters", true),
            ]
        );
        // A flow has no raw tool for the record to hide.
        assert!(
            hits[0]
                .message
                .to_string()
                .contains("raw tool is not registered")
        );
        assert!(!hits[4].message.to_string().contains("raw tool"));
        let text = hits[0].message.to_string();
        assert!(
            text.contains("`parameters.properties.note` must be a schema object"),
            "{text}"
        );
        assert!(
            hits[3]
                .message
                .to_string()
                .contains("`parameters.required`")
        );
    }
}
