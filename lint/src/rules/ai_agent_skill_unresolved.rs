//! `ai-agent-skill-unresolved`: an agent names a skill the stack does not
//! define.

use objectstack_spec::json::Value;

use crate::finding::Severity;
use crate::rule::{Context, Names, Pending, Report, declare_rule};

declare_rule! {
    /// An agent's `skills[]` names a skill the stack does not define.
    ///
    /// ## What it finds
    ///
    /// Every non-empty string in `agents[].skills[]` that is not the `name`
    /// of a record in `stack.skills`.
    ///
    /// ## Why it matters
    ///
    /// An agent's tools are its skills' tools (ADR-0064). A skill name that
    /// resolves to nothing contributes no instructions and no tools, and the
    /// runtime skips it without an error, so the agent quietly lacks the
    /// abilities its author attached.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "skills": [{ "name": "case_triage", "tools": ["query_records"] }],
    ///   "agents": [{ "name": "support", "skills": ["case_triage", "email_drafting"] }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Fix the name (the finding suggests the nearest skill), define the
    /// skill in `stack.skills`, or remove it from the agent.
    pub static RULE = {
        id: "ai-agent-skill-unresolved",
        severity: Severity::Warning,
        check: check,
    };
}

fn check(cx: &Context<'_, '_>, out: &mut Vec<Pending<'_>>) {
    if cx.stack.agents.is_empty() {
        return;
    }
    for agent in &cx.stack.agents {
        let Some(Value::Array(refs)) = agent.record.get("skills") else {
            continue;
        };
        for (j, value) in refs.iter().enumerate() {
            let Some(name) = value.as_str().filter(|s| !s.is_empty()) else {
                continue;
            };
            if cx.names(Names::Skills).contains(name) {
                continue;
            }
            let agent_name = agent.label();
            let suggestion = cx.nearest(Names::Skills, name).map(str::to_owned);
            let (path, raw) = agent.key("skills");
            let mut message = format!(
                "Agent \"{agent_name}\" names the skill \"{name}\", which this stack does not \
                 define. The runtime skips it, so the agent gets none of its instructions or \
                 tools and nobody is told."
            );
            if let Some(s) = &suggestion {
                message.push_str(&format!(" Did you mean \"{s}\"?"));
            }
            out.push(
                Report {
                    rule: &RULE,
                    source: agent.source(),
                    anchor: raw.index(j).into(),
                    where_: format!("agent \"{agent_name}\" \u{b7} skills"),
                    path: path.index(j).to_string(),
                    message: message.into(),
                    hint: format!(
                        "Fix the name, define a skill named \"{name}\" in `stack.skills`, or \
                         remove it from the agent."
                    )
                    .into(),
                    reference: Some(name.to_owned()),
                    suggestion,
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

    #[test]
    fn unknown_skills_with_suggestions() {
        let d = doc(json!({
            "skills": [{"name": "case_triage"}, {"name": "email_drafting"}],
            "agents": [{"name": "support", "skills": ["case_triage", "email_draft", 4, "", "billing"]},
                       {"name": "x", "skills": "case_triage"}]
        }));
        let hits = check_rule(&RULE, d);
        let got: Vec<_> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.suggestion.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("agents[0].skills[1]", Some("email_drafting")),
                ("agents[0].skills[4]", None)
            ]
        );
        assert_eq!(hits[0].where_, "agent \"support\" \u{b7} skills");
    }
}
