//! `ai-skill-tool-unresolved`: a skill names a tool nothing provides.

use objectstack_registry::{ACTION_PREFIX, FAMILY_PREFIXES};
use objectstack_spec::materialise::static_skip;

use rayon::prelude::*;

use std::fmt;

use crate::finding::{Parts, Severity, Text, WriteText};
use crate::references::Miss;
use crate::rule::{Context, Hit, Later, Pending, Report, declare_rule};

declare_rule! {
    /// A skill's `tools[]` names a tool that no tool record, platform tool or
    /// materialised action provides.
    ///
    /// ## What it finds
    ///
    /// Every non-empty string in `skills[].tools[]` is resolved against the
    /// tools the runtime can really have: the curated platform tool names,
    /// the names of `stack.tools` records, and `action_<name>` for every
    /// stack-level or object-level action that materialises as a tool
    /// (exposed with `ai.exposed: true` and an `ai.description`, with a
    /// headless `script`, `api` or `flow` path). A reference ending in `*`
    /// is a family wildcard and resolves when any of those names starts with
    /// its prefix. A reference that does not resolve is reported in one of
    /// three kinds:
    ///
    /// - a wildcard that matches nothing;
    /// - `action_<x>` where the action `x` exists but does not materialise;
    /// - any other name (a fictional tool), with the nearest real name as a
    ///   suggestion when one is close.
    ///
    /// ## Why it matters
    ///
    /// The runtime silently drops a tool name it cannot find. The skill
    /// still ships, its instructions still promise the capability, and the
    /// assistant improvises or fails when it reaches for a tool it does not
    /// have. This is how a copilot ends up claiming abilities it does not
    /// have, and nothing else catches it: the metadata parses and validates
    /// cleanly. The severity starts at warning because a runtime plugin
    /// outside the platform registry can register tools no static check can
    /// see; promote it to error once the registry has soaked.
    ///
    /// ## Example
    ///
    /// ```json
    /// { "skills": [
    ///     { "name": "case_triage", "label": "Case Triage",
    ///       "tools": ["triage_case", "query_records"] } ] }
    /// ```
    ///
    /// `query_records` is a platform tool; `triage_case` is provided by
    /// nothing, so it is reported.
    ///
    /// ## How to fix
    ///
    /// Give the reference something real to resolve to. The default path
    /// needs no tool record: declare the operation as an action (or flow),
    /// opt it in with `ai: { exposed: true, description: "..." }`, and
    /// reference its materialised tool `action_<name>`. Or reference a
    /// platform tool by its registered name, or remove the reference together
    /// with the instructions that rely on it. If a plugin outside the
    /// registry really provides the tool, allow this rule for that stack.
    pub static RULE = {
        id: "ai-skill-tool-unresolved",
        severity: Severity::Warning,
        check: check,
    };
}

/// The kind of an unresolved reference.
enum Kind<'s> {
    Wildcard(&'s str),
    /// The action and the reason it does not materialise.
    Unexposed(&'s str, String),
    Fictional(Option<&'s str>),
}

impl Kind<'_> {
    /// The message and the hint of a finding of this kind, kept as their
    /// parts (`[skill, reference, ...]`, shared by the two) and written
    /// when read: a large stack can have tens of thousands of these.
    fn texts(&self, skill: &str, reference: &str) -> (Text, Text) {
        let (parts, message, hint): (Parts, WriteText, WriteText) = match self {
            Kind::Wildcard(prefix) => (
                Parts::new(&[skill, reference, prefix]),
                wildcard_message,
                wildcard_hint,
            ),
            Kind::Unexposed(action, reason) => (
                Parts::new(&[skill, reference, action, reason]),
                unexposed_message,
                unexposed_hint,
            ),
            Kind::Fictional(Some(suggestion)) => (
                Parts::new(&[skill, reference, suggestion]),
                fictional_message,
                fictional_hint,
            ),
            Kind::Fictional(None) => (
                Parts::new(&[skill, reference]),
                fictional_message,
                fictional_hint,
            ),
        };
        (
            Text::deferred(parts.clone(), message),
            Text::deferred(parts, hint),
        )
    }
}

fn check<'a>(cx: &Context<'_, 'a>, out: &mut Vec<Pending<'a>>) {
    // The references are resolved once for the rules that read them (a
    // large stack has a million, read in parallel chunks of skills); the
    // few that do not resolve are classified here, a chunk's at a time,
    // and the chunks' hits joined in document order. Each hit is kept as
    // the skill, the position and what was found, and made into a finding
    // by `finish` once the rules' other indexes are gone: a fictional
    // name's suggestion is looked for only then, as the suggestion index
    // is large (see `Later`).
    let batches: Vec<Vec<Later<'a>>> = cx
        .references()
        .misses
        .par_iter()
        .map(|misses| misses.iter().filter_map(|m| later(cx, m)).collect())
        .collect();
    out.extend(
        batches
            .into_iter()
            .filter(|batch| !batch.is_empty())
            .map(Pending::Later),
    );
}

const WILDCARD: u8 = 0;
const UNEXPOSED: u8 = 1;
const FICTIONAL: u8 = 2;

fn later<'a>(cx: &Context<'_, 'a>, miss: &Miss<'a>) -> Option<Later<'a>> {
    let entry = cx.stack.skills.get(miss.skill)?.clone();
    // 32 bits: a `Later` is kept per miss, and a `tools` list of four
    // billion entries cannot be parsed into memory in the first place.
    let at = u32::try_from(miss.at).ok()?;
    let (code, detail) = match classify(cx, miss.reference) {
        Kind::Wildcard(_) => (WILDCARD, None),
        Kind::Unexposed(_, reason) => (UNEXPOSED, Some(reason.into_boxed_str())),
        Kind::Fictional(_) => (FICTIONAL, None),
    };
    Some(Later {
        entry,
        at,
        name: miss.reference,
        code,
        detail,
        suggests: code == FICTIONAL,
        finish,
    })
}

/// Makes the finding of a reference [`check`] put off (a fictional one's
/// suggestion, if any, is its detail by now).
fn finish(later: Later<'_>) -> Option<Hit> {
    let skill = &later.entry;
    let at = later.at as usize;
    let reference = later.name;
    let kind = match later.code {
        WILDCARD => Kind::Wildcard(reference.strip_suffix('*').unwrap_or(reference)),
        UNEXPOSED => Kind::Unexposed(
            reference.strip_prefix(ACTION_PREFIX).unwrap_or(reference),
            later.detail.map(String::from).unwrap_or_default(),
        ),
        _ => Kind::Fictional(later.detail.as_deref()),
    };
    let skill_name = skill.label();
    let (message, hint) = kind.texts(&skill_name, reference);
    let path = skill.path().key("tools");
    let report = Report {
        rule: &RULE,
        source: skill.source(),
        anchor: skill.item_anchor("tools", at),
        where_: format!("skill \"{skill_name}\" \u{b7} tools"),
        path: path.index(at).to_string(),
        message,
        hint,
        reference: Some(reference.to_owned()),
        suggestion: match kind {
            Kind::Fictional(s) => s.map(str::to_owned),
            _ => None,
        },
    };
    Some(report.into_hit())
}

/// The kind of an unresolved reference; a fictional one's suggestion is
/// looked up later, by the engine (`Pending::suggest`), and reaches
/// [`finish`] as the hit's detail.
fn classify<'s>(cx: &'s Context<'_, '_>, reference: &'s str) -> Kind<'s> {
    if let Some(prefix) = reference.strip_suffix('*') {
        return Kind::Wildcard(prefix);
    }
    if let Some(action) = reference.strip_prefix(ACTION_PREFIX)
        && cx.unexposed.contains(action)
    {
        let reason = cx
            .actions_named(action)
            .find_map(|a| static_skip(a.entry.fields()))
            .map(|skip| skip.reason())
            .unwrap_or_default();
        return Kind::Unexposed(action, reason);
    }
    Kind::Fictional(None)
}

/// Part `i` of a deferred text (empty when absent).
fn part(parts: &Parts, i: usize) -> &str {
    parts.get(i).unwrap_or_default()
}

fn wildcard_message(parts: &Parts, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (skill, reference, prefix) = (part(parts, 0), part(parts, 1), part(parts, 2));
    write!(
        f,
        "Skill \"{skill}\" subscribes to the tool family \"{reference}\", but no tool this stack \
         can resolve starts with \"{prefix}\": no tool record, no platform tool and no \
         materialised action tool. At run time the subscription adds no tools at all."
    )
}

fn unexposed_message(parts: &Parts, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (skill, reference) = (part(parts, 0), part(parts, 1));
    let (action, reason) = (part(parts, 2), part(parts, 3));
    write!(
        f,
        "Skill \"{skill}\" references tool \"{reference}\", but the action \"{action}\" does not \
         become an AI tool ({reason}). The runtime materialises `action_<name>` only for an \
         action that opts in with `ai.exposed: true` and an `ai.description` and has a headless \
         path (`script`, `api` or `flow`); otherwise the reference is dropped and the skill \
         promises a capability the agent cannot call."
    )
}

fn fictional_message(parts: &Parts, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (skill, reference) = (part(parts, 0), part(parts, 1));
    write!(
        f,
        "Skill \"{skill}\" references tool \"{reference}\", which nothing in this stack \
         provides: it is not a tool record, not a platform tool and not a materialised action \
         tool (`action_<name>`). The runtime drops the reference without a word, so the skill \
         claims a capability the agent does not have and the assistant will improvise or fail \
         when it tries to use it."
    )?;
    match parts.get(2) {
        Some(suggestion) => write!(f, " Did you mean \"{suggestion}\"?"),
        None => Ok(()),
    }
}

fn wildcard_hint(parts: &Parts, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let prefix = part(parts, 2);
    write!(
        f,
        "Make a tool in the family real (for `action_*`, expose an action with \
         `ai: {{ exposed: true, description: \"...\" }}` on a headless type), declare a tool \
         whose name starts with \"{prefix}\", or remove the wildcard."
    )
}

fn unexposed_hint(parts: &Parts, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let action = part(parts, 2);
    write!(
        f,
        "Either opt \"{action}\" in: set `ai: {{ exposed: true, description: \"...\" }}` (an \
         LLM-facing description of at least 40 characters) and give it a `script`, `api` or \
         `flow` type with a target; or drop the reference and let the skill's instructions send \
         the user to the button. A `url`, `modal` or `form` action is human-driven by design, \
         and keeping it that way is a legitimate answer."
    )
}

fn fictional_hint(parts: &Parts, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let reference = part(parts, 1);
    write!(
        f,
        "Back \"{reference}\" with something real: declare an action (or flow) that does the \
         work, expose it with `ai.exposed: true` and `ai.description`, and reference its \
         materialised tool `action_<name>` (no tool record needed); or use a platform tool by \
         its registered name; or remove the reference and the instructions that rely on it. \
         Keep it only if a runtime plugin outside the platform registry provides \
         \"{reference}\" (then allow this rule for the stack). Families the runtime \
         materialises: "
    )?;
    // Written a prefix at a time: a report can hold this hint tens of
    // thousands of times, and a joined string would be made for each.
    for (i, prefix) in FAMILY_PREFIXES.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(prefix)?;
    }
    f.write_str(".")
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_rule, doc};
    use serde_json::json;

    use super::RULE;

    const EXPOSED: &str = "Does the thing this action does, described for a model.";

    #[test]
    fn platform_tools_and_records_resolve() {
        let d = doc(json!({
            "tools": [{"name": "my_tool"}],
            "skills": [{"name": "s", "tools": ["query_data", "my_tool", "ghost"]}]
        }));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].path, "skills[0].tools[2]");
        assert_eq!(hits[0].reference.as_deref(), Some("ghost"));
        assert_eq!(hits[0].where_, "skill \"s\" \u{b7} tools");
    }

    #[test]
    fn fictional_kind_suggests_the_action_prefix_first() {
        let d = doc(json!({
            "actions": [{"name": "close_case", "type": "script", "target": "t",
                         "ai": {"exposed": true, "description": EXPOSED}}],
            "skills": [{"name": "s", "tools": ["close_case"]}]
        }));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits[0].suggestion.as_deref(), Some("action_close_case"));
        assert!(
            hits[0]
                .message
                .to_cow()
                .ends_with(" Did you mean \"action_close_case\"?")
        );
    }

    #[test]
    fn unexposed_kind_names_the_reason_and_has_no_suggestion() {
        let d = doc(json!({
            "objects": [{"name": "case", "actions": [{"name": "escalate", "type": "modal",
                "ai": {"exposed": true, "description": EXPOSED}}]}],
            "skills": [{"tools": ["action_escalate"]}]
        }));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].where_, "skill \"#0\" \u{b7} tools");
        assert!(
            hits[0].message.to_cow().contains("UI-only"),
            "{}",
            hits[0].message
        );
        assert!(hits[0].hint.to_cow().contains("legitimate"));
        assert_eq!(hits[0].suggestion, None);
        assert!(!hits[0].message.to_cow().contains("Did you mean"));
    }

    #[test]
    fn wildcard_kind() {
        let d = doc(json!({"skills": [{"name": "s", "tools": ["action_*", "query_*", "*"]}]}));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].reference.as_deref(), Some("action_*"));
        assert!(hits[0].message.to_cow().contains("no tools at all"));
        assert_eq!(hits[0].suggestion, None);
    }

    #[test]
    fn materialised_actions_resolve_exactly_and_by_wildcard() {
        let d = doc(json!({
            "objects": {"case": {"actions": [{"name": "close", "operation": "update",
                "ai": {"exposed": true, "description": EXPOSED}}]}},
            "skills": [{"name": "s", "tools": ["action_close", "action_*", "action_clo*"]}]
        }));
        assert!(check_rule(&RULE, d).is_empty());
    }

    #[test]
    fn lenient_indices_and_junk() {
        let d = doc(json!({
            "skills": [null, "x", {"name": "s", "tools": [null, 3, "", "ghost"]},
                       {"name": "t", "tools": "ghost"}, {"name": "u"}]
        }));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].path, "skills[0].tools[3]");
    }

    #[test]
    fn map_shaped_skills() {
        let d =
            doc(json!({"skills": {"a": {"tools": ["x"]}, "b": {"name": "bee", "tools": ["y"]}}}));
        let hits = check_rule(&RULE, d);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[1].path, "skills[1].tools[0]");
        assert_eq!(hits[1].where_, "skill \"bee\" \u{b7} tools");
    }
}
