//! `ai-tool-record-shadows-platform`: a tool record takes a name the
//! platform owns.

use objectstack_registry::{family, owner};

use crate::finding::Severity;
use crate::rule::{Context, Pending, Report, declare_rule};
use crate::rules::ai_tool_record_inert::tool_where;

declare_rule! {
    /// A `stack.tools` record is named like a platform tool, or under a
    /// family prefix the runtime materialises (`action_`).
    ///
    /// ## What it finds
    ///
    /// A tool record whose `name` is one of the curated platform tool names
    /// (for example `query_records`), or starts with a family prefix the
    /// runtime fills in by itself (`action_`).
    ///
    /// ## Why it matters
    ///
    /// Platform tools win every name collision: the runtime registers its own
    /// tool and the record is ignored, while Studio and reviewers read the
    /// record as if it defined the tool. A name under `action_` collides with
    /// the tool the runtime materialises from an action of that name, or
    /// claims a name an action may take later. Either way, what the record
    /// says is not what runs. This is an error from the start: no runtime
    /// can honour such a record.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "tools": [{ "name": "query_records", "label": "Query",
    ///               "description": "Our own record query." }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Rename the record to a name of your own, outside the platform registry
    /// and outside `action_`. If it was meant to refine the platform tool or
    /// a materialised action, remove it: skills can name those tools
    /// directly.
    pub static RULE = {
        id: "ai-tool-record-shadows-platform",
        severity: Severity::Error,
        check: check,
    };
}

fn check(cx: &Context<'_, '_>, out: &mut Vec<Pending<'_>>) {
    for tool in &cx.stack.tools {
        let Some(name) = tool.name() else {
            continue;
        };
        let message = if let Some(package) = owner(name) {
            format!(
                "Tool record \"{name}\" takes the name of a platform tool registered by \
                 `{package}`. The platform's tool wins the collision at run time, so this record \
                 is ignored, while everyone reading the stack believes it defines the tool."
            )
        } else if let Some(prefix) = family(name) {
            format!(
                "Tool record \"{name}\" is named under the `{prefix}` family, which the runtime \
                 fills with tools materialised from actions. It collides with (or pre-empts) the \
                 tool of an action of that name, so what the record says is not what runs."
            )
        } else {
            continue;
        };
        let (path, raw) = tool.key("name");
        out.push(
            Report {
                rule: &RULE,
                source: tool.source(),
                anchor: raw.into(),
                where_: tool_where(tool),
                path: path.to_string(),
                message: message.into(),
                hint: "Rename the record to a name of your own, outside the platform registry and \
                       outside `action_`; or remove it and let skills name the platform tool or \
                       the materialised action tool directly."
                    .into(),
                reference: Some(name.to_owned()),
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
    use crate::finding::Severity;

    #[test]
    fn platform_names_and_family_prefixes() {
        let d = doc(json!({
            "tools": [{"name": "query_records"}, {"name": "action_close"}, {"name": "mine"},
                      {"name": "actionable"}]
        }));
        let hits = check_rule(&RULE, d);
        let paths: Vec<_> = hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(paths, ["tools[0].name", "tools[1].name"]);
        assert!(hits[0].message.to_cow().contains("`service-ai`"));
        assert!(hits[1].message.to_cow().contains("`action_`"));
        assert_eq!(hits[0].severity, Severity::Error);
    }
}
