//! `ai-skill-surface-mismatch`: an agent names a skill of another surface,
//! which the runtime refuses to bind. Also the one reading of surface
//! affinity ([`surface`], [`binds`]) that the capabilities view shares.

use std::collections::HashMap;

use objectstack_spec::collection::Record;
use objectstack_spec::json::Value;

use crate::finding::Severity;
use crate::rule::{Context, Pending, Report, declare_rule};

declare_rule! {
    /// An agent's `skills[]` names a skill whose `surface` is neither the
    /// agent's nor `both`.
    ///
    /// ## What it finds
    ///
    /// Every non-empty string in `agents[].skills[]` that names a skill of
    /// `stack.skills` whose surface is not `both` and not the agent's. A
    /// missing or empty `surface` is `ask`, on agents and skills alike;
    /// when two skills share a name, the later one is the skill. Names
    /// that match no skill are `ai-agent-skill-unresolved`'s.
    ///
    /// ## Why it matters
    ///
    /// A skill is written for one product surface (ADR-0064 §3): `ask`
    /// agents work with data, `build` agents author the application. The
    /// runtime checks the affinity when it loads an agent and refuses a
    /// skill of the other surface with a load error, so the stack
    /// validates and deploys cleanly, and the agent fails the first time
    /// someone talks to it.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "skills": [{ "name": "schema_editing", "surface": "build", "tools": ["add_field"] }],
    ///   "agents": [{ "name": "support", "skills": ["schema_editing"] }] }
    /// ```
    ///
    /// `support` has no `surface`, so it is an `ask` agent, and
    /// `schema_editing` is a `build` skill.
    ///
    /// ## How to fix
    ///
    /// Attach the skill to an agent of its own surface, or change the
    /// skill's `surface` to the agent's. Declare `surface: "both"` only for
    /// a read-only capability that both kinds of agent genuinely share:
    /// it lets the skill into every agent.
    pub static RULE = {
        id: "ai-skill-surface-mismatch",
        severity: Severity::Error,
        check: check,
    };
}

/// A record's surface: its `surface` when that is a non-empty string, else
/// `ask` (for agents and skills alike).
pub(crate) fn surface<'a>(record: &Record<'a>) -> &'a str {
    record
        .str("surface")
        .filter(|s| !s.is_empty())
        .unwrap_or("ask")
}

/// Whether a skill of surface `skill` binds to an agent of surface
/// `agent`: the same surface, or a skill for `both`.
pub(crate) fn binds(agent: &str, skill: &str) -> bool {
    skill == "both" || skill == agent
}

fn check(cx: &Context<'_, '_>, out: &mut Vec<Pending<'_>>) {
    if cx.stack.agents.is_empty() || cx.stack.skills.is_empty() {
        return;
    }
    // Each name's surface; a later skill of a name replaces an earlier one.
    let skills: HashMap<&str, &str, foldhash::fast::RandomState> = cx
        .stack
        .skills
        .iter()
        .filter_map(|s| Some((s.name()?, surface(&s.record))))
        .collect();
    for agent in &cx.stack.agents {
        let Some(Value::Array(refs)) = agent.record.get("skills") else {
            continue;
        };
        let agent_surface = surface(&agent.record);
        for (j, value) in refs.iter().enumerate() {
            let Some(name) = value.as_str().filter(|s| !s.is_empty()) else {
                continue;
            };
            let Some(&skill_surface) = skills.get(name) else {
                continue;
            };
            if binds(agent_surface, skill_surface) {
                continue;
            }
            let agent_name = agent.label();
            let (path, raw) = agent.key("skills");
            out.push(
                Report {
                    rule: &RULE,
                    source: agent.source(),
                    anchor: raw.index(j).into(),
                    where_: format!("agent \"{agent_name}\" \u{b7} skills"),
                    path: path.index(j).to_string(),
                    message: format!(
                        "Agent \"{agent_name}\" has surface `{agent_surface}` and names skill \
                         \"{name}\", whose surface is `{skill_surface}`. The runtime binds a \
                         skill only to an agent of its own surface, or any agent for a `both` \
                         skill, and refuses this binding with a load error when it loads the \
                         agent (ADR-0064 \u{a7}3): schema validation does not catch it, and \
                         the agent fails the first time it is used."
                    )
                    .into(),
                    hint: format!(
                        "Attach \"{name}\" to an agent whose surface is `{skill_surface}` instead, \
                         or change the skill's `surface` to `{agent_surface}`. Use `surface: both` only if \
                         \"{name}\" is a read-only capability both kinds of agent share."
                    )
                    .into(),
                    reference: Some(name.to_owned()),
                    suggestion: None,
                }
                .hit(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_rule, doc};
    use serde_json::json;

    use super::RULE;

    fn paths(stack: serde_json::Value) -> Vec<String> {
        check_rule(&RULE, doc(stack))
            .into_iter()
            .map(|h| h.path)
            .collect()
    }

    #[test]
    fn a_skill_of_another_surface_is_refused() {
        let d = doc(json!({
            "skills": [{"name": "s", "surface": "ask"}, {"name": "b", "surface": "both"}],
            "agents": [{"name": "ag", "surface": "build", "skills": ["s", "b"]}]
        }));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits.len(), 1);
        let hit = &hits[0];
        assert_eq!(hit.path, "agents[0].skills[0]");
        assert_eq!(hit.where_, "agent \"ag\" \u{b7} skills");
        assert_eq!(hit.reference.as_deref(), Some("s"));
        assert_eq!(hit.severity, crate::finding::Severity::Error);
        let message = hit.message.to_cow();
        for part in ["\"ag\"", "`build`", "\"s\"", "`ask`", "ADR-0064"] {
            assert!(message.contains(part), "{part} in {message}");
        }
        let hint = hit.hint.to_cow();
        assert!(hint.contains("surface is `ask`") && hint.contains("surface: both"));
    }

    #[test]
    fn a_missing_or_empty_surface_is_ask() {
        assert_eq!(
            paths(json!({
                "skills": [{"name": "plain"}, {"name": "empty", "surface": ""},
                           {"name": "build", "surface": "build"}],
                "agents": [{"skills": ["plain", "empty", "build"]},
                           {"surface": "", "skills": ["plain", "build"]},
                           {"surface": "build", "skills": ["plain", "empty", "build"]}]
            })),
            [
                "agents[0].skills[2]",
                "agents[1].skills[1]",
                "agents[2].skills[0]",
                "agents[2].skills[1]"
            ]
        );
    }

    #[test]
    fn the_later_skill_of_a_name_is_the_skill() {
        let stack = |first: &str, second: &str| {
            json!({
                "skills": [{"name": "s", "surface": first}, {"name": "s", "surface": second}],
                "agents": [{"name": "ag", "skills": ["s"]}]
            })
        };
        assert_eq!(paths(stack("build", "ask")), Vec::<String>::new());
        assert_eq!(paths(stack("ask", "build")), ["agents[0].skills[0]"]);
    }

    #[test]
    fn other_references_are_not_this_rules() {
        // Unknown names, non-strings, empty strings, a `skills` that is not
        // an array, nameless skills, and a surface that is not a string.
        assert_eq!(
            paths(json!({
                "skills": [{"name": "b", "surface": "build"}, {"surface": "build"},
                           {"name": "n", "surface": 7}, "junk", null],
                "agents": [{"name": "x", "skills": ["nope", 4, "", null, {"name": "b"}, "n"]},
                           {"name": "y", "skills": "b"},
                           {"name": "z", "surface": "build", "skills": ["b", "n"]}]
            })),
            ["agents[2].skills[1]"]
        );
    }

    #[test]
    fn map_shaped_collections_are_read_by_name() {
        let hits = check_rule(
            &RULE,
            doc(json!({
                "skills": {"editing": {"surface": "build"}, "reading": {}},
                "agents": {"support": {"skills": ["reading", "editing"]}}
            })),
        );
        let got: Vec<_> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.where_.as_str()))
            .collect();
        assert_eq!(
            got,
            [("agents[0].skills[1]", "agent \"support\" \u{b7} skills")]
        );
    }
}
