//! `ai-skill-tool-superseded`: a skill names a raw action tool that a
//! refinement replaces.

use std::collections::HashSet;

use objectstack_registry::ACTION_PREFIX;
use rayon::prelude::*;

use crate::finding::Severity;
use crate::references::SupersededRef;
use crate::rule::{Context, FastHash, Pending, Report, declare_rule};

declare_rule! {
    /// A skill names `action_<x>` while a tool record binds the action `x`:
    /// the refinement replaces the raw tool, which is not registered.
    ///
    /// ## What it finds
    ///
    /// A reference in `skills[].tools[]` to `action_<x>` where some
    /// `stack.tools` record has `binding: { "type": "action", "name": "x" }`.
    /// The hint names the refined tool or tools to use instead (the records
    /// that refine the action; when none does, every record that binds it).
    ///
    /// ## Why it matters
    ///
    /// When any record binds an action, the runtime registers the record's
    /// refined tool and not `action_<x>`: otherwise the narrowed surface
    /// (fewer parameters, tighter values, a confirmation gate) could be
    /// bypassed through the raw one. A skill that still names `action_<x>`
    /// names a tool its agents never get.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "tools": [{ "name": "close_as_fixed", "label": "Close as fixed",
    ///               "description": "Close a ticket whose fix has shipped.",
    ///               "binding": { "type": "action", "name": "close_ticket" } }],
    ///   "skills": [{ "name": "support", "tools": ["action_close_ticket"] }] }
    /// ```
    ///
    /// ## How to fix
    ///
    /// Name the refined tool (`close_as_fixed`) in the skill. If the raw
    /// tool is what the skill needs, remove or unbind the record instead.
    pub static RULE = {
        id: "ai-skill-tool-superseded",
        severity: Severity::Warning,
        check: check,
    };
}

fn check<'a>(cx: &Context<'_, 'a>, out: &mut Vec<Pending<'a>>) {
    if cx.superseded.is_empty() {
        return;
    }
    // The names of the records that refine their tool, once (not a scan
    // of every record per hit).
    let refined: HashSet<&str, FastHash> = cx
        .refinements
        .iter()
        .filter_map(|r| match r {
            Ok(Some(r)) => Some(r.name),
            _ => None,
        })
        .collect();
    // The references are resolved once for the rules that read them, in
    // chunks of skills; each chunk's hits are made in parallel and the
    // chunks' joined in document order.
    let per_chunk: Vec<Vec<Pending<'a>>> = cx
        .references()
        .superseded
        .par_iter()
        .map(|found| found.iter().filter_map(|r| hit(cx, &refined, r)).collect())
        .collect();
    out.reserve(per_chunk.iter().map(Vec::len).sum());
    for hits in per_chunk {
        out.extend(hits);
    }
}

fn hit<'a>(
    cx: &Context<'_, 'a>,
    refined: &HashSet<&str, FastHash>,
    found: &SupersededRef<'a>,
) -> Option<Pending<'a>> {
    let skill = cx.stack.skills.get(found.skill)?;
    let (j, action) = (found.at, found.action);
    // The records that do refine it, when any does; else every
    // record that binds it (each still supersedes the raw tool).
    let all = cx.superseded.refined_by(action);
    let refining: Vec<&str> = all
        .iter()
        .copied()
        .filter(|name| refined.contains(name))
        .collect();
    let by: &[&str] = if refining.is_empty() { all } else { &refining };
    let named = by
        .iter()
        .map(|b| format!("\"{b}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let reference = format!("{ACTION_PREFIX}{action}");
    let skill_name = skill.label();
    let (path, raw) = skill.key("tools");
    Some(
        Report {
            rule: &RULE,
            source: skill.source(),
            anchor: raw.index(j).into(),
            where_: format!("skill \"{skill_name}\" \u{b7} tools"),
            path: path.index(j).to_string(),
            message: format!(
                "Skill \"{skill_name}\" uses tool \"{reference}\", but a tool record binds \
                 the action \"{action}\", so its refinement is registered instead and \
                 \"{reference}\" is not: the skill's agents never get it."
            )
            .into(),
            hint: if by.is_empty() {
                format!(
                    "Name the record that binds \"{action}\" in this skill (give it a \
                     `name` first), or remove the record to keep \"{reference}\"."
                )
            } else {
                format!(
                    "Use the refined {} {named} instead, or remove the record to keep \
                     \"{reference}\".",
                    if by.len() == 1 { "tool" } else { "tools" }
                )
            }
            .into(),
            reference: Some(reference),
            suggestion: by.first().map(|b| (*b).to_owned()),
        }
        .hit(),
    )
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_rule, doc};
    use serde_json::json;

    use super::RULE;

    #[test]
    fn hits_across_many_skills_come_in_document_order() {
        // More skills than one task reads, each naming refined and raw
        // tools: the chunks' hits are joined in order.
        let skills: Vec<_> = (0..1300)
            .map(|i| json!({"name": format!("s{i}"), "tools": ["action_close", "x", "action_open", "action_close"]}))
            .collect();
        let d = doc(json!({
            "actions": [{"name": "close", "type": "script", "target": "t",
                         "ai": {"exposed": true, "description": "Closes the thing, described for a model."}},
                        {"name": "open", "type": "script", "target": "t",
                         "ai": {"exposed": true, "description": "Opens the thing, described for a model."}}],
            "tools": [{"name": "close_fixed", "binding": {"type": "action", "name": "close"}},
                      {"name": "open_bound", "binding": {"type": "action", "name": "open"}}],
            "skills": skills
        }));
        let paths: Vec<String> = check_rule(&RULE, d).into_iter().map(|f| f.path).collect();
        let wanted: Vec<String> = (0..1300)
            .flat_map(|i| [0, 2, 3].map(|j| format!("skills[{i}].tools[{j}]")))
            .collect();
        assert_eq!(paths, wanted);
    }

    #[test]
    fn the_hint_names_every_refinement() {
        let d = doc(json!({
            "actions": [{"name": "close", "type": "script", "target": "t",
                         "ai": {"exposed": true, "description": "Closes the thing, described for a model."}},
                        {"name": "open"}],
            "tools": [
                {"name": "close_fixed", "binding": {"type": "action", "name": "close"}},
                {"name": "close_dupe", "binding": {"type": "action", "name": "close"}},
                {"name": "close_wide", "binding": {"type": "action", "name": "close"},
                 "parameters": {"properties": {"extra": {}}}}
            ],
            "skills": [{"name": "s", "tools": ["action_close", "action_open", "close_fixed", "action_*"]}]
        }));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].path, "skills[0].tools[0]");
        assert_eq!(hits[0].suggestion.as_deref(), Some("close_fixed"));
        assert!(
            hits[0]
                .hint
                .to_cow()
                .contains("\"close_fixed\", \"close_dupe\" instead"),
            "{}",
            hits[0].hint
        );
    }
}
