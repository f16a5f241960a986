//! Agents: a loose shape; their names, skills and surface are checked,
//! and the keys removed by ADR-0064 are explained.

use crate::json::{Map, Value};

use super::Anchor;
use super::check::{Cx, Expected, Grammar, enum_field, field, fields, name_grammar, wrong_type};
use super::keys::{Shape, check_keys};
use super::stack::{Entry, NameAt, record_name};
use crate::model::AgentSurface;

const AGENT: Shape = Shape {
    known: &[],
    also_known: &[],
    strict: false,
    aliases: &[],
    guidance: &[],
    retired: &[
        (
            "tools",
            "delete it and list the tools in a skill the agent has: an agent's tools are its \
             skills' tools (ADR-0064). Name a platform tool by its registered name, or \
             `action_<name>` for an exposed action",
        ),
        (
            "knowledge",
            "delete it: knowledge sources on an agent never scoped retrieval. Restrict sources in \
             the knowledge service, and describe the grounding you want in `instructions`",
        ),
    ],
};

/// Checks one agent; returns its name for the duplicate check.
pub(crate) fn check<'a>(
    cx: &mut Cx,
    entry: &Entry<'a>,
    raw: &Map<'_>,
) -> Option<(&'a str, NameAt)> {
    let who = entry.describe("agent");
    let path = &entry.path;
    let name = record_name(cx, entry, raw, "agent", Some(Grammar::Snake));
    check_keys(cx, &AGENT, raw, path, who);
    fields(
        cx,
        raw,
        path,
        &[
            ("label", Expected::String),
            ("role", Expected::String),
            ("instructions", Expected::String),
            ("active", Expected::Boolean),
        ],
    );
    enum_field(cx, raw, "surface", path, AgentSurface::NAMES);
    if let Some(Value::Array(skills)) = field(cx, raw, "skills", path, Expected::Array) {
        for (i, skill) in skills.iter().enumerate() {
            let at = path.key("skills").index(i);
            match skill {
                Value::String(s) => {
                    name_grammar(
                        cx,
                        s,
                        (at, Anchor::Value),
                        "skill reference",
                        Grammar::Snake,
                    );
                }
                other => cx.push(wrong_type(
                    at,
                    "each skill reference",
                    Expected::String,
                    other,
                )),
            }
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::super::test_support::ids;
    use serde_json::json;

    #[test]
    fn agents() {
        assert_eq!(
            ids(json!({"agents": [
                {"name": "sales_copilot", "label": "Sales", "role": "r", "instructions": "i",
                 "skills": ["live_data"], "surface": "ask", "model": {"provider": "x"}},
                {"name": "Support Bot", "surface": "both", "skills": ["Case Triage", 4], "tools": [], "knowledge": {}}
            ]})),
            vec![
                ("spec-invalid-name", "agents[1].name".to_owned()),
                ("spec-retired-key", "agents[1].tools".to_owned()),
                ("spec-retired-key", "agents[1].knowledge".to_owned()),
                ("spec-invalid-enum", "agents[1].surface".to_owned()),
                ("spec-invalid-name", "agents[1].skills[0]".to_owned()),
                ("spec-wrong-type", "agents[1].skills[1]".to_owned()),
            ]
        );
    }
}
