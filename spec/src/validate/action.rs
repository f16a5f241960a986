//! Actions and their params.
//!
//! An action is a *loose* shape: real actions carry many UI keys this
//! workspace does not model, so only the AI-related mistakes are reported
//! among its keys (the retired `aiExposed`, top-level `exposed` and
//! `requiresConfirmation`, and `llm`/`tool` for `ai`). Its params are
//! strict.

use crate::json::{Map, Value};
use std::fmt;

use super::check::{Cx, Expected, Grammar, enum_field, field, fields, name_grammar, require};
use super::keys::{Shape, check_keys};
use super::stack::{Entry, NameAt, duplicates, duplicates_as, record_name};
use super::{Anchor, Diagnostic, DiagnosticId, Severity, ai};
use crate::model::{
    ActionLocation, ActionMode, ActionOperation, ActionType, ActionVariant, HttpMethod,
};
use crate::path::JsonPath;

/// Every key upstream declares on an action (17.4.0).
const ACTION_KEYS: &[&str] = &[
    "name",
    "label",
    "description",
    "objectName",
    "icon",
    "locations",
    "component",
    "type",
    "target",
    "openIn",
    "body",
    "operation",
    "patch",
    "params",
    "variant",
    "order",
    "confirmText",
    "successMessage",
    "errorMessage",
    "refreshAfter",
    "undoable",
    "resultDialog",
    "visible",
    "requiresFeature",
    "disabled",
    "requiredPermissions",
    "ai",
    "recordIdParam",
    "recordIdField",
    "bodyShape",
    "method",
    "bodyExtra",
    "mode",
    "opensInNewTab",
    "newTabUrl",
    "onSuccess",
    "aria",
    "_lock",
    "_lockReason",
    "_lockSource",
    "_provenance",
    "_packageId",
    "_packageVersion",
    "_lockDocsUrl",
];

const ACTION: Shape = Shape {
    known: ACTION_KEYS,
    also_known: &[],
    strict: false,
    // `AI` and `Ai` too (synonyms ignore case): the action would silently
    // not be exposed.
    aliases: &[("llm", "ai"), ("tool", "ai"), ("AI", "ai")],
    guidance: &[],
    retired: &[
        (
            "execute",
            "`execute` was renamed `target` in spec 17: rename the key and keep its value (the \
             handler, flow or URL it names)",
        ),
        (
            "shortcut",
            "`shortcut` was removed in spec 17: nothing ever dispatched it. Delete the key; a real \
             keyboard shortcut is registered in the console and invokes the action by name",
        ),
        (
            "bulkEnabled",
            "`bulkEnabled` was removed in spec 17: the list view's `bulkActions` decide what the \
             selection bar offers. Delete the key and list the action there",
        ),
        (
            "aiExposed",
            "`aiExposed` is gone and has no alias: exposure is the `ai` block. Delete it and write \
             `\"ai\": {\"exposed\": true, \"description\": \"<when and why a model should call this, \
             40+ characters>\"}`",
        ),
        (
            "exposed",
            "AI exposure lives inside the `ai` block: move it to `ai.exposed`, and give \
             `ai.description` (40+ characters), which exposure requires",
        ),
        (
            "requiresConfirmation",
            "the AI confirmation switch lives inside the `ai` block: move it to \
             `ai.requiresConfirmation` (`confirmText` is the separate prompt people see)",
        ),
    ],
};

/// Every key upstream declares on an action param (17.4.0).
const PARAM_KEYS: &[&str] = &[
    "name",
    "field",
    "objectOverride",
    "label",
    "type",
    "required",
    "options",
    "placeholder",
    "helpText",
    "defaultValue",
    "multiple",
    "accept",
    "maxSize",
    "reference",
    "defaultFromRow",
    "carryOver",
    "visible",
    "requiresFeature",
];

pub(super) const PARAM: Shape = Shape {
    known: PARAM_KEYS,
    also_known: &[],
    strict: true,
    aliases: &[
        ("referenceTo", "reference"),
        ("referenceObject", "reference"),
        ("referencedObject", "reference"),
        ("targetObject", "reference"),
        ("visibleWhen", "visible"),
        ("visibleOn", "visible"),
        ("visibility", "visible"),
        ("description", "helpText"),
        ("help", "helpText"),
        ("default", "defaultValue"),
        ("readonly", "carryOver"),
        ("disabled", "carryOver"),
    ],
    guidance: &[],
    retired: &[],
};

/// The field types a param `type` may name (upstream `FieldType`, 17.4.0).
pub(crate) const FIELD_TYPES: &[&str] = &[
    "text",
    "textarea",
    "email",
    "url",
    "phone",
    "password",
    "secret",
    "markdown",
    "html",
    "richtext",
    "number",
    "currency",
    "percent",
    "date",
    "datetime",
    "time",
    "boolean",
    "toggle",
    "select",
    "multiselect",
    "radio",
    "checkboxes",
    "lookup",
    "master_detail",
    "tree",
    "user",
    "image",
    "file",
    "avatar",
    "video",
    "audio",
    "formula",
    "summary",
    "autonumber",
    "composite",
    "repeater",
    "record",
    "location",
    "address",
    "code",
    "json",
    "color",
    "rating",
    "slider",
    "signature",
    "qrcode",
    "progress",
    "tags",
    "vector",
];

/// Checks every action of one collection and their names' uniqueness.
pub(crate) fn check_all(
    cx: &mut Cx,
    parent: &Map<'_>,
    key: &str,
    entries: &[Entry<'_>],
    object: Option<&str>,
    scope: &str,
) {
    let mut names = Vec::new();
    for entry in entries {
        let Some(raw) = entry.raw(parent, key) else {
            continue;
        };
        if let Some(name) = record_name(cx, entry, raw, "action", Some(Grammar::Identifier)) {
            names.push(name);
        }
        check(cx, entry, raw, object);
    }
    duplicates(cx, &names, "action", scope);
}

fn check(cx: &mut Cx, entry: &Entry<'_>, raw: &Map<'_>, object: Option<&str>) {
    let path = &entry.path;
    let who = entry.describe("action").of_object(object);
    check_keys(cx, &ACTION, raw, path, who);
    fields(
        cx,
        raw,
        path,
        &[
            ("label", Expected::Text),
            ("description", Expected::Text),
            ("icon", Expected::String),
            ("target", Expected::String),
            ("confirmText", Expected::Text),
            ("successMessage", Expected::Text),
            ("errorMessage", Expected::Text),
            ("refreshAfter", Expected::Boolean),
            ("undoable", Expected::Boolean),
            ("order", Expected::Number),
            ("requiredPermissions", Expected::Array),
            ("recordIdParam", Expected::String),
            ("recordIdField", Expected::String),
            ("patch", Expected::Object),
            ("bodyExtra", Expected::Object),
            ("opensInNewTab", Expected::Boolean),
            ("newTabUrl", Expected::String),
        ],
    );
    if let Some(name) = field(cx, raw, "objectName", path, Expected::String).and_then(Value::as_str)
    {
        name_grammar(
            cx,
            name,
            (path.key("objectName"), Anchor::Value),
            "`objectName`",
            Grammar::Snake,
        );
    }
    body_shape(cx, raw, path);
    action_type(cx, raw, path);
    enum_field(cx, raw, "variant", path, ActionVariant::NAMES);
    enum_field(cx, raw, "mode", path, ActionMode::NAMES);
    enum_field(cx, raw, "method", path, HttpMethod::NAMES);
    enum_field(cx, raw, "operation", path, ActionOperation::NAMES);
    enum_field(cx, raw, "openIn", path, &["self", "new-tab"]);
    if let Some(Value::Array(locations)) = field(cx, raw, "locations", path, Expected::Array) {
        for (i, location) in locations.iter().enumerate() {
            // Made only for a report: most locations are allowed.
            let at = || path.key("locations").index(i);
            match location.as_str() {
                Some(l) => {
                    super::check::enum_value(cx, l, at, "a location", ActionLocation::NAMES);
                }
                None => cx.push(super::check::wrong_type(
                    at(),
                    "a location",
                    Expected::String,
                    location,
                )),
            }
        }
    }
    let declared = params(cx, raw, path, who);
    match raw.get("ai") {
        None => {}
        Some(Value::Object(block)) => {
            ai::check(cx, block, &path.key("ai"), declared.as_deref(), who)
        }
        Some(other) => {
            let mut d = super::check::wrong_type(path.key("ai"), "`ai`", Expected::Object, other);
            if other.is_boolean() {
                d.fix = "write the block: `\"ai\": {\"exposed\": true, \"description\": \"...\"}`"
                    .to_owned();
            }
            cx.push(d);
        }
    }
}

fn action_type(cx: &mut Cx, raw: &Map<'_>, path: &JsonPath) {
    let Some(Value::String(t)) = raw.get("type") else {
        field(cx, raw, "type", path, Expected::String);
        return;
    };
    if *t == "update" {
        cx.push(Diagnostic::new(
            DiagnosticId::InvalidEnum,
            path.key("type"),
            "`type` is `update`, which is not an action type",
            "a declarative field write is `\"operation\": \"update\"` with a `patch` of field \
             values; delete `type` (the write runs on the `script` route)",
        ));
        return;
    }
    enum_field(cx, raw, "type", path, ActionType::NAMES);
    // These types go somewhere: upstream refuses them without a target.
    const TARGETED: [&str; 5] = ["url", "flow", "modal", "api", "form"];
    let targetless = match raw.get("target") {
        None => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    };
    if TARGETED.contains(t) && targetless {
        cx.push(Diagnostic::new(
            DiagnosticId::MissingKey,
            path.clone(),
            format!("the action is `\"type\": \"{t}\"` but has no `target`, which that type needs"),
            format!(
                "add `\"target\"`: what the {t} action opens or calls (`url`, `flow`, `modal`, `api` \
                 and `form` actions all need one)"
            ),
        ));
    }
}

/// Checks `params`; returns the declared param names, or `None` when
/// `params` is unusable (so hints cannot be judged).
fn params(
    cx: &mut Cx,
    raw: &Map<'_>,
    path: &JsonPath,
    who: impl fmt::Display,
) -> Option<Vec<String>> {
    let Some(value) = raw.get("params") else {
        return Some(Vec::new());
    };
    let Value::Array(items) = value else {
        field(cx, raw, "params", path, Expected::Array);
        return None;
    };
    let mut names = Vec::new();
    let mut declared = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = path.key("params").index(i);
        let Value::Object(param) = item else {
            cx.push(super::check::wrong_type(
                at,
                "each param",
                Expected::Object,
                item,
            ));
            continue;
        };
        let label = match (param.get("name"), param.get("field")) {
            (Some(Value::String(n)), _) | (None, Some(Value::String(n))) => {
                format!("param `{n}` of {who}")
            }
            _ => format!("param #{i} of {who}"),
        };
        if let Some(name) = self::param(cx, param, &at, &label) {
            declared.push(name.0.clone());
            names.push(name);
        }
    }
    // Upstream accepts two params with one name (the later one wins in
    // the tool's properties), so this is a warning, not an error.
    let names: Vec<(&str, NameAt)> = names
        .iter()
        .map(|(name, path, anchor)| (name.as_str(), NameAt::at(path.clone(), *anchor)))
        .collect();
    duplicates_as(
        cx,
        &names,
        "param",
        &format!("the params of {who}"),
        Severity::Warning,
    );
    Some(declared)
}

/// Checks one param; returns its effective name and where it is written.
fn param(
    cx: &mut Cx,
    param: &Map<'_>,
    path: &JsonPath,
    who: impl fmt::Display,
) -> Option<(String, JsonPath, Anchor)> {
    check_keys(cx, &PARAM, param, path, format_args!("the {who}"));
    fields(
        cx,
        param,
        path,
        &[
            ("label", Expected::Text),
            ("required", Expected::Boolean),
            ("options", Expected::Array),
            ("placeholder", Expected::String),
            ("helpText", Expected::String),
            ("multiple", Expected::Boolean),
            ("accept", Expected::Array),
            ("maxSize", Expected::PositiveInteger),
            ("reference", Expected::String),
            ("defaultFromRow", Expected::Boolean),
            ("carryOver", Expected::Boolean),
            ("requiresFeature", Expected::String),
        ],
    );
    enum_field(cx, param, "type", path, FIELD_TYPES);
    if let Some(o) =
        field(cx, param, "objectOverride", path, Expected::String).and_then(Value::as_str)
    {
        name_grammar(
            cx,
            o,
            (path.key("objectOverride"), Anchor::Value),
            "`objectOverride`",
            Grammar::Snake,
        );
    }
    let name = field(cx, param, "name", path, Expected::String).and_then(Value::as_str);
    let field_name = field(cx, param, "field", path, Expected::String).and_then(Value::as_str);
    if let Some(f) = field_name {
        name_grammar(
            cx,
            f,
            (path.key("field"), Anchor::Value),
            "`field`",
            Grammar::Identifier,
        );
    }
    // As upstream's refinement reads them, an empty `name` or `field` is
    // none.
    let blank = |key: &str| match param.get(key) {
        None => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    };
    if blank("name") && blank("field") {
        cx.push(Diagnostic::new(
            DiagnosticId::MissingKey,
            path.clone(),
            format!("the {who} has neither a `name` nor a `field` (an empty one counts as none)"),
            "add `\"field\": \"<object field>\"` to reuse an object field, or `\"name\": \
             \"<request key>\"` for an inline param",
        ));
    }
    match (name, field_name) {
        (Some(n), _) => Some((n.to_owned(), path.key("name"), Anchor::Value)),
        (None, Some(f)) => Some((f.to_owned(), path.key("field"), Anchor::Value)),
        (None, None) => None,
    }
}

/// The key for a body shape: `wrap`, which people also call these.
const BODY_SHAPE: Shape = Shape {
    known: &["wrap"],
    also_known: &[],
    strict: true,
    aliases: &[
        ("key", "wrap"),
        ("under", "wrap"),
        ("nest", "wrap"),
        ("root", "wrap"),
    ],
    guidance: &[],
    retired: &[],
};

/// `bodyShape`: `"flat"` (the params at the top level, the default) or
/// `{"wrap": KEY}` (nested under KEY), as upstream's union reads it. A
/// typo or another value would send the params other than meant.
fn body_shape(cx: &mut Cx, raw: &Map<'_>, path: &JsonPath) {
    let Some(shape) = raw.get("bodyShape") else {
        return;
    };
    let at = path.key("bodyShape");
    match shape {
        Value::String(s) if *s == "flat" => {}
        Value::Object(wrapped) => {
            check_keys(cx, &BODY_SHAPE, wrapped, &at, "a body shape");
            if require(cx, wrapped, "wrap", &at, "`bodyShape`", "\"<key>\"") {
                field(cx, wrapped, "wrap", &at, Expected::String);
            }
        }
        other => cx.push(Diagnostic::new(
            DiagnosticId::WrongType,
            at,
            format!(
                "`bodyShape` must be \"flat\" or an object `{{\"wrap\": KEY}}`, found {}",
                super::check::describe(other)
            ),
            "write \"flat\" to send the params at the top level (or leave the key out), or \
             {\"wrap\": \"data\"} to nest them under `data`",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{ids, run};
    use serde_json::json;

    fn one(action: serde_json::Value) -> Vec<(&'static str, String)> {
        ids(json!({"actions": [action]}))
    }

    #[test]
    fn retired_and_misplaced_keys() {
        let d = run(
            json!({"actions": [{"name": "close_case", "aiExposed": true, "exposed": true,
            "requiresConfirmation": true, "llm": {}, "icon": "x", "refreshAfter": true}]}),
        );
        let got: Vec<_> = d
            .iter()
            .map(|d| (d.id.as_str(), d.path.to_string()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("spec-retired-key", "actions[0].aiExposed".to_owned()),
                ("spec-retired-key", "actions[0].exposed".to_owned()),
                (
                    "spec-retired-key",
                    "actions[0].requiresConfirmation".to_owned()
                ),
                ("spec-unknown-key", "actions[0].llm".to_owned()),
            ]
        );
        assert!(d[1].fix.contains("ai.exposed"));
        assert!(d[3].fix.contains("did you mean `ai`?"));
    }

    #[test]
    fn names_types_and_enums() {
        assert_eq!(
            one(
                json!({"name": "Close-Case", "type": "scirpt", "variant": "Danger", "locations": ["record_header", "global", 3],
                       "objectName": "Case", "refreshAfter": "yes"})
            ),
            vec![
                ("spec-invalid-name", "actions[0].name".to_owned()),
                ("spec-wrong-type", "actions[0].refreshAfter".to_owned()),
                ("spec-invalid-name", "actions[0].objectName".to_owned()),
                ("spec-invalid-enum", "actions[0].type".to_owned()),
                ("spec-invalid-enum", "actions[0].variant".to_owned()),
                ("spec-invalid-enum", "actions[0].locations[1]".to_owned()),
                ("spec-wrong-type", "actions[0].locations[2]".to_owned()),
            ]
        );
    }

    #[test]
    fn a_body_shape_is_flat_or_an_object_whose_wrap_is_a_string() {
        let api = |shape: serde_json::Value| {
            one(
                json!({"name": "sync_case", "type": "api", "target": "cases/sync",
                       "bodyShape": shape}),
            )
        };
        // Upstream's union: "flat", or a strict `{wrap: string}`.
        assert!(api(json!("flat")).is_empty());
        assert!(api(json!({"wrap": "data"})).is_empty());
        for wrong in [
            json!("wrap"),
            json!("Flat"),
            json!(null),
            json!(1),
            json!(["wrap"]),
        ] {
            assert_eq!(
                api(wrong.clone()),
                vec![("spec-wrong-type", "actions[0].bodyShape".to_owned())],
                "{wrong}"
            );
        }
        assert_eq!(
            api(json!({"wrap": 5})),
            vec![("spec-wrong-type", "actions[0].bodyShape.wrap".to_owned())]
        );
        assert_eq!(
            api(json!({})),
            vec![("spec-missing-key", "actions[0].bodyShape".to_owned())]
        );
        assert_eq!(
            api(json!({"under": "data"})),
            vec![
                ("spec-unknown-key", "actions[0].bodyShape.under".to_owned()),
                ("spec-missing-key", "actions[0].bodyShape".to_owned()),
            ]
        );
    }

    #[test]
    fn keys_removed_in_spec_17_are_retired_and_a_capital_ai_is_a_typo() {
        for key in ["execute", "shortcut", "bulkEnabled"] {
            let mut action =
                json!({"name": "close", "label": "Close", "type": "script", "target": "x"});
            action[key] = json!("x");
            assert_eq!(
                one(action),
                vec![("spec-retired-key", format!("actions[0].{key}"))],
                "{key}"
            );
        }
        for key in ["AI", "Ai"] {
            let mut action =
                json!({"name": "close", "label": "Close", "type": "script", "target": "x"});
            action[key] = json!({"exposed": true});
            assert_eq!(
                one(action),
                vec![("spec-unknown-key", format!("actions[0].{key}"))],
                "{key}"
            );
        }
    }

    #[test]
    fn types_that_go_somewhere_need_a_target() {
        for t in ["url", "flow", "modal", "api", "form"] {
            assert_eq!(
                one(json!({"name": "go", "label": "Go", "type": t})),
                vec![("spec-missing-key", "actions[0]".to_owned())],
                "{t}"
            );
            assert_eq!(
                one(json!({"name": "go", "label": "Go", "type": t, "target": ""})),
                vec![("spec-missing-key", "actions[0]".to_owned())],
                "{t}"
            );
            assert!(one(json!({"name": "go", "label": "Go", "type": t, "target": "x"})).is_empty());
        }
        assert!(one(json!({"name": "go", "label": "Go", "type": "script", "body": {"language": "js", "source": "1"}})).is_empty());
    }

    #[test]
    fn a_param_with_an_empty_name_and_no_field_has_no_name() {
        let with = |param: serde_json::Value| {
            one(
                json!({"name": "go", "label": "Go", "type": "script", "target": "x", "params": [param]}),
            )
        };
        for param in [json!({"name": "", "type": "text"}), json!({"type": "text"})] {
            assert_eq!(
                with(param.clone()),
                vec![("spec-missing-key", "actions[0].params[0]".to_owned())],
                "{param}"
            );
        }
        assert!(with(json!({"name": "", "field": "subject"})).is_empty());
        assert!(with(json!({"name": "note"})).is_empty());
    }

    #[test]
    fn a_whole_number_written_with_a_fraction_or_exponent_is_whole() {
        let param = |size: serde_json::Value| {
            one(
                json!({"name": "upload", "label": "Upload", "type": "script", "target": "x",
                       "params": [{"name": "file", "label": "File", "type": "file", "maxSize": size}]}),
            )
        };
        for whole in [json!(1000), json!(1000.0), json!(1e3)] {
            assert!(param(whole.clone()).is_empty(), "{whole}");
        }
        for wrong in [
            json!(0),
            json!(-1),
            json!(1.5),
            json!(0.0),
            json!(1e300),
            json!("1000"),
        ] {
            assert_eq!(
                param(wrong.clone()),
                vec![("spec-wrong-type", "actions[0].params[0].maxSize".to_owned())],
                "{wrong}"
            );
        }
    }

    #[test]
    fn type_update_points_at_operation() {
        let d = run(json!({"actions": [{"name": "mark_done", "type": "update"}]}));
        assert_eq!(d.len(), 1);
        assert!(d[0].fix.contains("\"operation\": \"update\""));
    }

    #[test]
    fn duplicate_params_are_a_warning_not_an_error() {
        // Upstream's ActionSchema accepts two params with one name.
        let d = run(
            json!({"actions": [{"name": "defer", "label": "Defer", "params": [
                {"name": "until", "type": "date"},
                {"name": "until", "type": "text"}
            ]}]}),
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].id.as_str(), "spec-duplicate-name");
        assert_eq!(d[0].path.to_string(), "actions[0].params[1].name");
        assert!(!d[0].is_error());
        // Duplicate actions stay errors.
        let d = run(json!({"actions": [{"name": "defer"}, {"name": "defer"}]}));
        assert_eq!(d.len(), 1);
        assert!(d[0].is_error());
    }

    #[test]
    fn params_are_strict() {
        assert_eq!(
            one(json!({"name": "defer", "params": [
                {"name": "until", "description": "x", "type": "datetime"},
                {"label": "No name"},
                {"field": "Due Date", "type": "dat"},
                "junk",
                {"name": "until", "maxSize": -1}
            ]})),
            vec![
                (
                    "spec-unknown-key",
                    "actions[0].params[0].description".to_owned()
                ),
                ("spec-missing-key", "actions[0].params[1]".to_owned()),
                ("spec-invalid-enum", "actions[0].params[2].type".to_owned()),
                ("spec-invalid-name", "actions[0].params[2].field".to_owned()),
                ("spec-wrong-type", "actions[0].params[3]".to_owned()),
                ("spec-wrong-type", "actions[0].params[4].maxSize".to_owned()),
                (
                    "spec-duplicate-name",
                    "actions[0].params[4].name".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn param_synonyms_suggest_the_declared_key() {
        let d = run(
            json!({"actions": [{"name": "defer", "params": [{"name": "a", "default": 1, "visibleWhen": "x"}]}]}),
        );
        assert_eq!(
            d[0].fix,
            "did you mean `defaultValue`? Rename `default` to `defaultValue`"
        );
        assert_eq!(
            d[1].fix,
            "did you mean `visible`? Rename `visibleWhen` to `visible`"
        );
    }

    #[test]
    fn object_actions_and_duplicates() {
        let d = ids(json!({"objects": [{"name": "case", "actions": [
            {"name": "close"}, {"name": "close"}, {"label": "nameless"}
        ]}]}));
        assert_eq!(
            d,
            vec![
                ("spec-missing-key", "objects[0].actions[2]".to_owned()),
                (
                    "spec-duplicate-name",
                    "objects[0].actions[1].name".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn ai_must_be_an_object() {
        assert_eq!(
            one(json!({"name": "ab", "ai": true})),
            vec![("spec-wrong-type", "actions[0].ai".to_owned())]
        );
        assert_eq!(
            one(json!({"name": "ab", "ai": null})),
            vec![("spec-wrong-type", "actions[0].ai".to_owned())]
        );
    }

    #[test]
    fn a_real_action_is_clean() {
        assert_eq!(
            one(
                json!({"name": "complete_task", "label": "Mark Complete", "objectName": "todo_task",
                "icon": "check-circle", "type": "script", "target": "completeTask",
                "locations": ["record_header", "list_item"], "successMessage": "Done!", "refreshAfter": true,
                "params": [{"field": "due_date"}, {"name": "note", "type": "textarea", "required": false}],
                "ai": {"exposed": true, "description": "Mark a todo task as complete when the user says it is done.",
                       "paramHints": {"note": {"description": "Why"}, "recordId": {"examples": ["t1"]}, "due_date": {}}}})
            ),
            vec![]
        );
    }
}
