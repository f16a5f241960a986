//! Skills, strict, and their trigger conditions.

use crate::json::{Map, Value};
use std::fmt;

use super::check::{
    Cx, Expected, Grammar, enum_field, field, fields, name_grammar, require, wrong_type,
};
use super::keys::{PROTECTION_KEYS, Shape, check_keys};
use super::stack::{Entry, NameAt, record_name};
use super::{Anchor, Diagnostic, DiagnosticId};
use crate::model::{SkillSurface, TriggerOperator};
use crate::path::JsonPath;

pub(super) const SKILL: Shape = Shape {
    known: &[
        "name",
        "label",
        "description",
        "surface",
        "instructions",
        "tools",
        "triggerConditions",
        "active",
    ],
    also_known: PROTECTION_KEYS,
    strict: true,
    aliases: &[
        ("prompt", "instructions"),
        ("content", "instructions"),
        ("body", "instructions"),
        ("tool", "tools"),
    ],
    guidance: &[
        (
            "trigger",
            "delete it: skills are not activated by a phrase. For programmatic activation write \
             `\"triggerConditions\": [{\"field\": ..., \"operator\": ..., \"value\": ...}]`; to \
             describe intent, write it in `description` or `instructions`, which the model reads",
        ),
        (
            "permissions",
            "delete it: skills carry no permission gate. Govern who may talk to an agent with the \
             agent's `access` and `permissions`, and what a tool may do on the action behind it",
        ),
    ],
    retired: &[(
        "triggerPhrases",
        "delete it: phrases were never matched against what a user says. Activate the skill with \
         `triggerConditions` (context field, operator, value) and describe its intent in \
         `description` or `instructions`",
    )],
};

/// Checks one skill; returns its name for the duplicate check.
pub(crate) fn check<'a>(
    cx: &mut Cx,
    entry: &Entry<'a>,
    raw: &Map<'_>,
) -> Option<(&'a str, NameAt)> {
    let who = entry.describe("skill");
    let path = &entry.path;
    let name = record_name(cx, entry, raw, "skill", Some(Grammar::Snake));
    check_keys(cx, &SKILL, raw, path, who);
    require(cx, raw, "label", path, who, "\"<display name>\"");
    fields(
        cx,
        raw,
        path,
        &[
            ("label", Expected::String),
            ("description", Expected::String),
            ("instructions", Expected::String),
            ("active", Expected::Boolean),
        ],
    );
    enum_field(cx, raw, "surface", path, SkillSurface::NAMES);
    if require(cx, raw, "tools", path, who, "[\"<tool name>\"]")
        && let Some(Value::Array(tools)) = field(cx, raw, "tools", path, Expected::Array)
    {
        for (j, tool) in tools.iter().enumerate() {
            // The path is built only for a problem: a skill may name
            // thousands of tools, and nearly all of them are fine.
            let at = || path.key("tools").index(j);
            match tool {
                Value::String(t) if Grammar::SnakeWildcard.accepts(t) => {}
                Value::String(t) => {
                    name_grammar(
                        cx,
                        t,
                        (at(), Anchor::Value),
                        "tool entry",
                        Grammar::SnakeWildcard,
                    );
                }
                other => cx.push(wrong_type(at(), "each tool entry", Expected::String, other)),
            }
        }
    }
    if let Some(Value::Array(conditions)) =
        field(cx, raw, "triggerConditions", path, Expected::Array)
    {
        for (k, condition) in conditions.iter().enumerate() {
            let at = path.key("triggerConditions").index(k);
            match condition {
                Value::Object(c) => trigger_condition(cx, c, &at, who),
                other => cx.push(wrong_type(
                    at,
                    "each trigger condition",
                    Expected::Object,
                    other,
                )),
            }
        }
    }
    name
}

fn trigger_condition(cx: &mut Cx, condition: &Map<'_>, path: &JsonPath, who: impl fmt::Display) {
    let owner = format!("a trigger condition of {who}");
    require(cx, condition, "field", path, &owner, "\"<context field>\"");
    let has_operator = require(cx, condition, "operator", path, &owner, "\"eq\"");
    let has_value = require(cx, condition, "value", path, &owner, "\"<value>\"");
    field(cx, condition, "field", path, Expected::String);
    let operator = if has_operator {
        enum_field(cx, condition, "operator", path, TriggerOperator::NAMES)
    } else {
        None
    };
    let Some(value) = condition.get("value").filter(|_| has_value) else {
        return;
    };
    let at = path.key("value");
    let list_operator = matches!(operator, Some("in" | "not_in"));
    let scalar_operator = matches!(operator, Some("eq" | "neq"));
    match value {
        Value::String(_) if list_operator => {
            let mut d = wrong_type(at, "`value`", Expected::Array, value);
            d.message = format!(
                "operator `{}` tests membership of a list, so `value` must be a list of strings, found {}",
                operator.unwrap_or_default(),
                super::check::describe(value)
            );
            cx.push(d);
        }
        Value::Array(_) if scalar_operator => {
            let op = operator.unwrap_or_default();
            let membership = if op == "eq" { "in" } else { "not_in" };
            cx.push(Diagnostic::new(
                DiagnosticId::WrongType,
                at,
                format!(
                    "operator `{op}` compares one string, so `value` must be a string, found a list"
                ),
                format!(
                    "use operator `{membership}` to test membership of the list, or give one string"
                ),
            ));
        }
        Value::String(_) => {}
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if !item.is_string() {
                    cx.push(wrong_type(
                        at.index(i),
                        "each `value` entry",
                        Expected::String,
                        item,
                    ));
                }
            }
        }
        other => {
            let mut d = wrong_type(at, "`value`", Expected::String, other);
            d.message = format!(
                "`value` must be a string or a list of strings, found {}",
                super::check::describe(other)
            );
            cx.push(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{ids, run};
    use serde_json::json;

    #[test]
    fn hotcrm_style_skill_is_clean() {
        assert_eq!(
            ids(
                json!({"skills": [{"name": "live_data", "label": "Live Data", "surface": "both",
                "tools": ["query_records", "action_*"], "active": true,
                "triggerConditions": [{"field": "app", "operator": "in", "value": ["crm"]}]}]})
            ),
            vec![]
        );
    }

    #[test]
    fn retired_synonym_and_guidance() {
        let d = run(json!({"skills": [{"name": "s1", "label": "S", "tools": [],
            "triggerPhrases": ["hi"], "prompt": "x", "trigger": "y", "tols": []}]}));
        let got: Vec<_> = d
            .iter()
            .map(|d| (d.id.as_str(), d.path.to_string()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("spec-retired-key", "skills[0].triggerPhrases".to_owned()),
                ("spec-unknown-key", "skills[0].prompt".to_owned()),
                ("spec-unknown-key", "skills[0].trigger".to_owned()),
                ("spec-unknown-key", "skills[0].tols".to_owned()),
            ]
        );
        assert!(d[0].fix.contains("triggerConditions"));
        assert_eq!(
            d[1].fix,
            "did you mean `instructions`? Rename `prompt` to `instructions`"
        );
        assert!(d[2].fix.contains("not activated by a phrase"));
        assert_eq!(
            d[3].fix,
            "did you mean `tools`? It is already set, so delete `tols`"
        );
    }

    #[test]
    fn tools_grammar_and_types() {
        assert_eq!(
            ids(
                json!({"skills": [{"name": "Email Drafting", "label": "E", "surface": "chat",
                "tools": ["generate_email", "Send-Email", "action_**", 3, ""]}]})
            ),
            vec![
                ("spec-invalid-name", "skills[0].name".to_owned()),
                ("spec-invalid-enum", "skills[0].surface".to_owned()),
                ("spec-invalid-name", "skills[0].tools[1]".to_owned()),
                ("spec-invalid-name", "skills[0].tools[2]".to_owned()),
                ("spec-wrong-type", "skills[0].tools[3]".to_owned()),
                ("spec-invalid-name", "skills[0].tools[4]".to_owned()),
            ]
        );
    }

    #[test]
    fn tools_as_a_string_is_a_wrong_type_with_a_wrapping_fix() {
        let d = run(json!({"skills": [{"name": "s1", "label": "S", "tools": "query_data"}]}));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].fix, "wrap it in a list: `[\"query_data\"]`");
    }

    #[test]
    fn required_keys() {
        assert_eq!(
            ids(json!({"skills": {"s1": {}}})),
            vec![
                ("spec-missing-key", "skills.s1".to_owned()),
                ("spec-missing-key", "skills.s1".to_owned()),
            ]
        );
    }

    #[test]
    fn trigger_conditions() {
        assert_eq!(
            ids(
                json!({"skills": [{"name": "s1", "label": "S", "tools": [], "triggerConditions": [
                    {"field": "app", "operator": "in", "value": "crm"},
                    {"field": "app", "operator": "eq", "value": ["crm"]},
                    {"field": "app", "operator": "like", "value": "x"},
                    {"operator": "in", "value": ["a", 1]},
                    {"field": "app", "operator": "contains", "value": {}},
                    "junk"
                ]}]})
            ),
            vec![
                (
                    "spec-wrong-type",
                    "skills[0].triggerConditions[0].value".to_owned()
                ),
                (
                    "spec-wrong-type",
                    "skills[0].triggerConditions[1].value".to_owned()
                ),
                (
                    "spec-invalid-enum",
                    "skills[0].triggerConditions[2].operator".to_owned()
                ),
                (
                    "spec-missing-key",
                    "skills[0].triggerConditions[3]".to_owned()
                ),
                (
                    "spec-wrong-type",
                    "skills[0].triggerConditions[3].value[1]".to_owned()
                ),
                (
                    "spec-wrong-type",
                    "skills[0].triggerConditions[4].value".to_owned()
                ),
                (
                    "spec-wrong-type",
                    "skills[0].triggerConditions[5]".to_owned()
                ),
            ]
        );
    }
}
