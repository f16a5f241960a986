//! Tool records (`stack.tools[]`), strict, with the Phase 2 `binding`.

use crate::json::{Map, Value};

use super::Anchor;
use super::check::{Cx, Expected, Grammar, enum_field, field, fields, name_grammar, require};
use super::keys::{PROTECTION_KEYS, Shape, check_keys};
use super::stack::{Entry, NameAt, record_name};
use crate::model::BindingType;

/// Keys a tool record no longer takes. `requiresConfirmation` (last) is
/// retired only on an unbound record: on a bound one it gates the tool.
const RETIRED: &[(&str, &str)] = &[
    (
        "permissions",
        "delete it: a tool record's `permissions` was never enforced (nothing checked it \
         before a call). To restrict what the tool can do, restrict the action behind it \
         (`requiredPermissions`) or the permission sets of the objects it touches",
    ),
    (
        "active",
        "delete it: `active: false` never withdrew a tool; it still reached models and still \
         ran. To withdraw a tool, remove it from the skills that list it",
    ),
    (
        "category",
        "delete it: nothing grouped, filtered or routed tools by `category`. Group tools by \
         the skills that carry them (an exposed action's category is its `ai.category`)",
    ),
    (
        "builtIn",
        "delete it: no runtime ever read `builtIn`; it changed nothing",
    ),
    (
        "requiresConfirmation",
        "delete it, or bind the record: on a record without a `binding`, \
         `requiresConfirmation` never paused a call, which made it a false safety promise. \
         To gate a destructive operation, put it behind an action and set \
         `ai.requiresConfirmation: true` there, or bind this record to that action \
         (`binding: {\"type\": \"action\", \"name\": \"...\"}`), where \
         `requiresConfirmation: true` is enforced by the approval queue",
    ),
];

/// The keys of a bound record; `requiresConfirmation` (last) is known only
/// there.
const KNOWN: &[&str] = &[
    "name",
    "label",
    "description",
    "parameters",
    "outputSchema",
    "objectName",
    "binding",
    "requiresConfirmation",
];

const TOOL: Shape = Shape {
    known: KNOWN.split_at(KNOWN.len() - 1).0,
    also_known: PROTECTION_KEYS,
    strict: true,
    aliases: &[],
    guidance: &[],
    retired: RETIRED,
};

/// A bound record: a refinement, which may also set `requiresConfirmation`.
pub(super) const BOUND_TOOL: Shape = Shape {
    known: KNOWN,
    also_known: PROTECTION_KEYS,
    strict: true,
    aliases: &[],
    guidance: &[],
    retired: RETIRED.split_at(RETIRED.len() - 1).0,
};

pub(super) const BINDING: Shape = Shape {
    known: &["type", "name"],
    also_known: &[],
    strict: true,
    aliases: &[("kind", "type"), ("target", "name"), ("ref", "name")],
    guidance: &[],
    retired: &[],
};

/// Checks one tool record; returns its name for the duplicate check.
pub(crate) fn check<'a>(
    cx: &mut Cx,
    entry: &Entry<'a>,
    raw: &Map<'_>,
) -> Option<(&'a str, NameAt)> {
    let who = entry.describe("tool record");
    let path = &entry.path;
    let name = record_name(cx, entry, raw, "tool", Some(Grammar::Snake));
    // Bound: a well-formed binding, as the refinement predicate reads it
    // (a malformed one is reported below, and the record is judged as
    // unbound meanwhile).
    let bound = matches!(crate::materialise::refine::binding(raw), Some(Ok(_)));
    check_keys(cx, if bound { &BOUND_TOOL } else { &TOOL }, raw, path, who);
    require(cx, raw, "label", path, who, "\"<display name>\"");
    require(
        cx,
        raw,
        "description",
        path,
        who,
        "\"<what the tool does, for the model>\"",
    );
    // A bound record without `parameters` takes its action's.
    if !bound {
        require(
            cx,
            raw,
            "parameters",
            path,
            who,
            "{\"type\": \"object\", \"properties\": {}}",
        );
    }
    fields(
        cx,
        raw,
        path,
        &[
            ("label", Expected::String),
            ("description", Expected::String),
            ("parameters", Expected::Object),
            ("outputSchema", Expected::Object),
        ],
    );
    if bound {
        field(cx, raw, "requiresConfirmation", path, Expected::Boolean);
    }
    if let Some(o) = field(cx, raw, "objectName", path, Expected::String).and_then(Value::as_str) {
        name_grammar(
            cx,
            o,
            (path.key("objectName"), Anchor::Value),
            "`objectName`",
            Grammar::Snake,
        );
    }
    if let Some(Value::Object(binding)) = field(cx, raw, "binding", path, Expected::Object) {
        let at = path.key("binding");
        let surface = format!("the binding of {who}");
        check_keys(cx, &BINDING, binding, &at, &surface);
        if require(cx, binding, "type", &at, &surface, "\"action\"") {
            enum_field(cx, binding, "type", &at, BindingType::NAMES);
        }
        if require(
            cx,
            binding,
            "name",
            &at,
            &surface,
            "\"<action or flow name>\"",
        ) && let Some(name) =
            field(cx, binding, "name", &at, Expected::String).and_then(Value::as_str)
        {
            name_grammar(
                cx,
                name,
                (at.key("name"), Anchor::Value),
                "`binding.name`",
                Grammar::Snake,
            );
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{ids, run};
    use serde_json::json;

    fn tool(extra: serde_json::Value) -> serde_json::Value {
        let mut t = json!({"name": "create_case", "label": "Create case", "description": "d",
                           "parameters": {"type": "object"}});
        for (k, v) in extra.as_object().unwrap() {
            t[k] = v.clone();
        }
        json!({"tools": [t]})
    }

    #[test]
    fn a_complete_tool_is_clean() {
        assert_eq!(
            ids(tool(
                json!({"objectName": "case", "_lock": "full", "protection": {},
            "binding": {"type": "action", "name": "create_case"}})
            )),
            vec![]
        );
    }

    #[test]
    fn retired_keys_each_get_their_story() {
        let d = run(tool(
            json!({"permissions": [], "active": true, "category": "data",
                                "builtIn": true, "requiresConfirmation": true}),
        ));
        assert_eq!(d.len(), 5);
        assert!(d.iter().all(|d| d.id.as_str() == "spec-retired-key"));
        let fixes: std::collections::HashSet<_> = d.iter().map(|d| d.fix.clone()).collect();
        assert_eq!(fixes.len(), 5, "each retired key has its own explanation");
        assert!(d[4].fix.contains("ai.requiresConfirmation: true"));
    }

    #[test]
    fn bound_records_may_gate_and_take_their_actions_parameters() {
        let bound = json!({"tools": [{"name": "close_fixed", "label": "Close", "description": "d",
            "binding": {"type": "action", "name": "close"}, "requiresConfirmation": true}]});
        assert_eq!(ids(bound), vec![]);
        let d = ids(json!({"tools": [{"name": "close_fixed", "label": "Close",
            "description": "d", "binding": {"type": "action", "name": "close"},
            "requiresConfirmation": "yes"}]}));
        assert_eq!(
            d,
            vec![(
                "spec-wrong-type",
                "tools[0].requiresConfirmation".to_owned()
            )]
        );
        // Unbound: still retired, and still required to carry parameters.
        let d = run(
            json!({"tools": [{"name": "x", "label": "X", "description": "d",
            "requiresConfirmation": true}]}),
        );
        let got: Vec<_> = d.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(got, ["spec-retired-key", "spec-missing-key"]);
        assert!(d[0].fix.contains("bind this record"));
    }

    #[test]
    fn binding_names_follow_the_name_grammar() {
        assert_eq!(
            ids(tool(
                json!({"binding": {"type": "action", "name": "Close Case"}})
            )),
            vec![("spec-invalid-name", "tools[0].binding.name".to_owned())]
        );
    }

    #[test]
    fn strict_keys_suggest_the_nearest() {
        let d = run(tool(json!({"lable": "x", "outputschema": {}})));
        assert_eq!(
            d[0].fix,
            "did you mean `label`? It is already set, so delete `lable`"
        );
        assert_eq!(
            d[1].fix,
            "did you mean `outputSchema`? Rename `outputschema` to `outputSchema`"
        );
    }

    #[test]
    fn required_keys_names_and_types() {
        assert_eq!(
            ids(json!({"tools": [{"name": "Create Case", "parameters": "none"}]})),
            vec![
                ("spec-invalid-name", "tools[0].name".to_owned()),
                ("spec-missing-key", "tools[0]".to_owned()),
                ("spec-missing-key", "tools[0]".to_owned()),
                ("spec-wrong-type", "tools[0].parameters".to_owned()),
            ]
        );
    }

    #[test]
    fn bindings_are_strict() {
        assert_eq!(
            ids(tool(json!({"binding": {"type": "job", "target": "x"}}))),
            vec![
                ("spec-unknown-key", "tools[0].binding.target".to_owned()),
                ("spec-invalid-enum", "tools[0].binding.type".to_owned()),
                ("spec-missing-key", "tools[0].binding".to_owned()),
            ]
        );
        assert_eq!(
            ids(tool(json!({"binding": "create_case"}))),
            vec![("spec-wrong-type", "tools[0].binding".to_owned())]
        );
    }

    #[test]
    fn duplicate_tools() {
        let d = ids(
            json!({"tools": {"a": {"label": "A", "description": "d", "parameters": {}},
                                     "b": {"name": "a", "label": "B", "description": "d", "parameters": {}}}}),
        );
        assert_eq!(d, vec![("spec-duplicate-name", "tools.b.name".to_owned())]);
    }
}
