//! The `ai` block of an action (ADR-0011) and its param hints, both strict.

use crate::json::{Map, Value};
use std::fmt;

use super::check::{Cx, Expected, closest, enum_field, field, fields, wrong_type};
use super::keys::{Shape, check_keys};
use super::{Diagnostic, DiagnosticId};
use crate::model::AiCategory;
use crate::path::JsonPath;
use crate::text::utf16_len;

/// The shortest useful `ai.description`, in UTF-16 code units.
pub const MIN_DESCRIPTION_LEN: usize = 40;

pub(super) const AI: Shape = Shape {
    known: &[
        "exposed",
        "description",
        "category",
        "paramHints",
        "outputSchema",
        "requiresConfirmation",
    ],
    also_known: &[],
    strict: true,
    aliases: &[
        ("enabled", "exposed"),
        ("enable", "exposed"),
        ("aiEnabled", "exposed"),
        ("expose", "exposed"),
        ("visible", "exposed"),
        ("prompt", "description"),
        ("toolDescription", "description"),
        ("summary", "description"),
        ("type", "category"),
        ("kind", "category"),
        ("toolCategory", "category"),
        ("hints", "paramHints"),
        ("parameterHints", "paramHints"),
        ("params", "paramHints"),
        ("returns", "outputSchema"),
        ("responseSchema", "outputSchema"),
        ("output", "outputSchema"),
        ("confirm", "requiresConfirmation"),
        ("requireConfirmation", "requiresConfirmation"),
        ("hitl", "requiresConfirmation"),
        ("humanInTheLoop", "requiresConfirmation"),
    ],
    guidance: &[
        (
            "permissions",
            "delete it: AI calls are not gated by a key in this block. An agent reaches the \
             action only through a skill that lists it, and who may use that agent is governed by \
             the agent's `access` and `permissions`. For a person's approval of each call, set \
             `requiresConfirmation: true`",
        ),
        (
            "approval",
            "delete it: there is no approval key here. `requiresConfirmation: true` makes every AI \
             call wait for a person; a multi-step business approval is separate metadata, not an \
             action key",
        ),
    ],
    retired: &[],
};

pub(super) const HINT: Shape = Shape {
    known: &["description", "enum", "examples"],
    also_known: &[],
    strict: true,
    aliases: &[
        ("desc", "description"),
        ("hint", "description"),
        ("values", "enum"),
        ("options", "enum"),
        ("choices", "enum"),
        ("allowed", "enum"),
        ("example", "examples"),
        ("sample", "examples"),
    ],
    guidance: &[],
    retired: &[],
};

/// Checks an `ai` block at `path`; `declared` lists the action's param
/// names (`None` when they cannot be known); `who` names the action.
pub(crate) fn check(
    cx: &mut Cx,
    block: &Map<'_>,
    path: &JsonPath,
    declared: Option<&[String]>,
    who: impl fmt::Display,
) {
    check_keys(
        cx,
        &AI,
        block,
        path,
        format_args!("the `ai` block of {who}"),
    );
    fields(
        cx,
        block,
        path,
        &[
            ("outputSchema", Expected::Object),
            ("requiresConfirmation", Expected::Boolean),
        ],
    );
    let exposed = field(cx, block, "exposed", path, Expected::Boolean).and_then(Value::as_bool);
    description(cx, block, path, exposed == Some(true), &who);
    enum_field(cx, block, "category", path, AiCategory::NAMES);
    if let Some(Value::Object(hints)) = field(cx, block, "paramHints", path, Expected::Object) {
        param_hints(cx, hints, &path.key("paramHints"), declared, who);
    }
}

fn description(
    cx: &mut Cx,
    block: &Map<'_>,
    path: &JsonPath,
    exposed: bool,
    who: impl fmt::Display,
) {
    // Made only for a report: most descriptions are fine.
    let at = || path.key("description");
    match block.get("description") {
        Some(Value::String(text)) if !text.is_empty() => {
            let len = utf16_len(text);
            if len < MIN_DESCRIPTION_LEN {
                cx.push(Diagnostic::new(
                    DiagnosticId::AiDescriptionTooShort,
                    at(),
                    format!(
                        "`ai.description` of {who} is {len} characters long; it needs at least \
                         {MIN_DESCRIPTION_LEN} (counted in UTF-16 code units)"
                    ),
                    "say when a model should call the tool, what it changes and what it needs",
                ));
            }
        }
        Some(Value::String(_)) | None if exposed => cx.push(Diagnostic::new(
            DiagnosticId::AiDescriptionRequired,
            if block.contains_key("description") { at() } else { path.clone() },
            format!("{who} is exposed to AI but has no `ai.description`"),
            "add an LLM-facing `description` of at least 40 characters saying when and why to \
             call it, or set `exposed` to `false`",
        )),
        Some(Value::String(_)) => cx.push(Diagnostic::new(
            DiagnosticId::AiDescriptionTooShort,
            at(),
            format!("`ai.description` of {who} is empty; it needs at least {MIN_DESCRIPTION_LEN} characters"),
            "write an LLM-facing description, or delete the key",
        )),
        None => {}
        Some(other) => cx.push(wrong_type(at(), "`description`", Expected::String, other)),
    }
}

fn param_hints(
    cx: &mut Cx,
    hints: &Map<'_>,
    path: &JsonPath,
    declared: Option<&[String]>,
    who: impl fmt::Display,
) {
    for (name, hint) in hints {
        let at = path.key(name);
        if let Some(declared) = declared
            && name != "recordId"
            && !declared.iter().any(|d| d == name)
        {
            let candidates: Vec<&str> = declared
                .iter()
                .map(String::as_str)
                .chain(std::iter::once("recordId"))
                .collect();
            let fix = match closest(name, &candidates) {
                Some(near) => format!("did you mean `{near}`? Rename the hint to `{near}`"),
                None if declared.is_empty() => {
                    "the action declares no params: declare the param in \
                         `params`, or key the hint by `recordId`, or delete it"
                        .to_owned()
                }
                None => format!(
                    "key the hint by a declared param ({}) or `recordId`, or delete it",
                    declared
                        .iter()
                        .map(|d| format!("`{d}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            cx.push(
                Diagnostic::new(
                    DiagnosticId::ParamHintUnknownParam,
                    at.clone(),
                    format!("`ai.paramHints.{name}` of {who} names no declared param"),
                    fix,
                )
                .at_key(),
            );
        }
        let Value::Object(hint) = hint else {
            cx.push(wrong_type(
                at,
                format_args!("the hint for `{name}`"),
                Expected::Object,
                hint,
            ));
            continue;
        };
        check_keys(
            cx,
            &HINT,
            hint,
            &at,
            format_args!("the hint for `{name}` of {who}"),
        );
        fields(
            cx,
            hint,
            &at,
            &[
                ("description", Expected::String),
                ("examples", Expected::Array),
            ],
        );
        if let Some(Value::Array(values)) = field(cx, hint, "enum", &at, Expected::Array) {
            for (i, v) in values.iter().enumerate() {
                if !(v.is_string() || v.is_number()) {
                    let mut d = wrong_type(
                        at.key("enum").index(i),
                        "each `enum` value",
                        Expected::String,
                        v,
                    );
                    d.message = format!(
                        "each `enum` value must be a string or a number, found {}",
                        super::check::describe(v)
                    );
                    cx.push(d);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{ids, run};
    use serde_json::{Value, json};

    const GOOD: &str = "Close the support case the user is viewing once it is resolved.";

    fn action(ai: Value) -> Value {
        json!({"actions": [{"name": "close_case", "type": "script", "target": "t",
                            "params": [{"name": "reason"}, {"field": "resolution"}], "ai": ai}]})
    }

    #[test]
    fn synonyms_guidance_and_nearest_key() {
        let d = run(action(
            json!({"enabled": true, "description": GOOD, "permissions": ["x"],
                                   "kind": "data", "outputSchem": {}}),
        ));
        let got: Vec<_> = d
            .iter()
            .map(|d| (d.id.as_str(), d.path.to_string(), d.fix.clone()))
            .collect();
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(
            got[0].2,
            "did you mean `exposed`? Rename `enabled` to `exposed`"
        );
        assert!(got[1].2.contains("requiresConfirmation: true"));
        assert_eq!(
            got[2].2,
            "did you mean `category`? Rename `kind` to `category`"
        );
        assert_eq!(
            got[3].2,
            "did you mean `outputSchema`? Rename `outputSchem` to `outputSchema`"
        );
    }

    #[test]
    fn exposed_needs_a_description() {
        assert_eq!(
            ids(action(json!({"exposed": true}))),
            vec![("spec-ai-description-required", "actions[0].ai".to_owned())]
        );
        assert_eq!(
            ids(action(json!({"exposed": true, "description": ""}))),
            vec![(
                "spec-ai-description-required",
                "actions[0].ai.description".to_owned()
            )]
        );
        assert_eq!(ids(action(json!({"exposed": false}))), vec![]);
        assert_eq!(
            ids(action(json!({"exposed": "true", "description": 7}))),
            vec![
                ("spec-wrong-type", "actions[0].ai.exposed".to_owned()),
                ("spec-wrong-type", "actions[0].ai.description".to_owned()),
            ]
        );
    }

    #[test]
    fn description_length_counts_utf16_code_units() {
        // 20 emoji = 20 characters, 40 UTF-16 code units, 80 bytes: long enough.
        let emoji = "😀".repeat(20);
        assert_eq!(
            ids(action(json!({"exposed": true, "description": emoji}))),
            vec![]
        );
        // 39 "é" = 39 code units but 78 bytes: too short.
        let accents = "é".repeat(39);
        assert_eq!(
            ids(action(json!({"exposed": true, "description": accents}))),
            vec![(
                "spec-ai-description-too-short",
                "actions[0].ai.description".to_owned()
            )]
        );
        // Too short applies whether or not the action is exposed, and to "".
        assert_eq!(
            ids(action(json!({"description": "Closes a case"}))),
            vec![(
                "spec-ai-description-too-short",
                "actions[0].ai.description".to_owned()
            )]
        );
        assert_eq!(
            ids(action(json!({"description": ""}))),
            vec![(
                "spec-ai-description-too-short",
                "actions[0].ai.description".to_owned()
            )]
        );
    }

    #[test]
    fn category_enum() {
        let d = run(action(json!({"category": "Analytics"})));
        assert_eq!(d[0].id.as_str(), "spec-invalid-enum");
        assert!(
            d[0].fix.starts_with("did you mean `analytics`?"),
            "{}",
            d[0].fix
        );
    }

    #[test]
    fn hints_must_name_declared_params() {
        let d = run(action(json!({"paramHints": {
            "reason": {"desc": "why"}, "resolution": {"enum": ["fixed", 2, null]},
            "recordId": {}, "reasn": {}, "zzzzzzzz": "x"
        }})));
        let got: Vec<_> = d
            .iter()
            .map(|d| (d.id.as_str(), d.path.to_string()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "spec-unknown-key",
                    "actions[0].ai.paramHints.reason.desc".to_owned()
                ),
                (
                    "spec-wrong-type",
                    "actions[0].ai.paramHints.resolution.enum[2]".to_owned()
                ),
                (
                    "spec-param-hint-unknown-param",
                    "actions[0].ai.paramHints.reasn".to_owned()
                ),
                (
                    "spec-param-hint-unknown-param",
                    "actions[0].ai.paramHints.zzzzzzzz".to_owned()
                ),
                (
                    "spec-wrong-type",
                    "actions[0].ai.paramHints.zzzzzzzz".to_owned()
                ),
            ]
        );
        assert!(d[2].fix.starts_with("did you mean `reason`?"));
        assert!(d[3].fix.contains("`reason`, `resolution`"));
    }

    #[test]
    fn hints_without_params_and_with_unusable_params() {
        let d = run(json!({"actions": [{"name": "ab", "ai": {"paramHints": {"x": {}}}}]}));
        assert!(d[0].fix.starts_with("the action declares no params"));
        assert_eq!(
            ids(
                json!({"actions": [{"name": "ab", "params": "x", "ai": {"paramHints": {"x": {}}}}]})
            ),
            vec![("spec-wrong-type", "actions[0].params".to_owned())]
        );
    }
}
