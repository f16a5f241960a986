//! Baselines: accept today's findings, report only new ones.
//!
//! An entry is keyed by what the finding is about, never by where it sits:
//! the rule, the file, the record that holds it by name (the finding's
//! `where`, such as `skill "case_triage" · tools`), the name it is about
//! (`ref`) or, for a finding without one, its path inside that record with
//! the indices left out (`at`, such as `ai.exposed` or `fields[].type`),
//! and which of the findings with that same key it is (`occurrence`,
//! counted in document order from 0, written only when it is not 0). So
//! reformatting a file, or inserting, removing or reordering records,
//! leaves the accepted findings accepted, as ESLint's suppressions and
//! ruff's `noqa` do. A second identical reference in the same skill is a
//! new finding: the first stays accepted, the second has occurrence 1.
//!
//! A record without a name is known by its index (`skill "#2"`), so moving
//! it does make its findings new.
//!
//! The file is JSON:
//!
//! ```json
//! { "version": 2,
//!   "entries": [ { "rule": "ai-skill-tool-unresolved",
//!                  "file": "examples/hotcrm-skills.json",
//!                  "where": "skill \"case_triage\" · tools",
//!                  "ref": "triage_case" },
//!                { "rule": "ai-skill-tool-unresolved",
//!                  "file": "examples/hotcrm-skills.json",
//!                  "where": "skill \"case_triage\" · tools",
//!                  "ref": "triage_case",
//!                  "occurrence": 1 } ] }
//! ```
//!
//! Version 1 files (before this keying) named each finding by its JSON
//! path (`"path": "skills[2].tools[0]"`). They are still read, and matched
//! by position as before; rewriting the baseline with `--write-baseline`
//! turns it into version 2 ([`Baseline::is_positional`]).

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::finding::Finding;

/// The baseline format version this crate writes.
pub const BASELINE_VERSION: u32 = 2;

/// The version of positional baselines, which are still read.
pub const POSITIONAL_VERSION: u32 = 1;

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaselineEntry {
    /// The rule id.
    pub rule: String,
    /// The file, as reported.
    pub file: String,
    /// The record that holds the finding, by name, as the finding's
    /// `where` says it (`skill "triage" · tools`; `stack` for none).
    #[serde(rename = "where", default)]
    pub where_: String,
    /// The name the finding is about, when it has one.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// For a finding without a `ref`: its path inside the record, without
    /// indices (`ai.exposed`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub at: String,
    /// Which of the findings with this same key it is, in document order.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub occurrence: usize,
    /// The JSON path, in a version-1 (positional) baseline only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl BaselineEntry {
    /// The content key of a finding, as its first occurrence (see
    /// [`Baseline::entries_of`] for the occurrences).
    pub fn of(finding: &Finding) -> Self {
        let at = match finding.reference {
            Some(_) => String::new(),
            None => inner_path(&finding.where_, &finding.path),
        };
        BaselineEntry {
            rule: finding.rule.to_string(),
            file: finding.file().to_owned(),
            where_: finding.where_.clone(),
            reference: finding.reference.clone(),
            at,
            occurrence: 0,
            path: None,
        }
    }

    /// The positional key of a finding, as a version-1 baseline has it.
    fn positional(finding: &Finding) -> Self {
        BaselineEntry {
            rule: finding.rule.to_string(),
            file: finding.file().to_owned(),
            where_: String::new(),
            reference: finding.reference.clone(),
            at: String::new(),
            occurrence: 0,
            path: Some(finding.path.clone()),
        }
    }
}

/// `file where rule (ref)`, or `file path rule (ref)` for a positional
/// entry; with `#n` for a later occurrence.
impl fmt::Display for BaselineEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{} {path} {}", self.file, self.rule)?,
            None => {
                write!(f, "{} {}", self.file, self.where_)?;
                if !self.at.is_empty() {
                    write!(f, " · {}", self.at)?;
                }
                write!(f, " {}", self.rule)?;
            }
        }
        if let Some(reference) = &self.reference {
            write!(f, " ({reference})")?;
        }
        if self.occurrence > 0 {
            write!(f, " #{}", self.occurrence + 1)?;
        }
        Ok(())
    }
}

/// The part of a finding's path inside the record its `where` names,
/// without indices: `objects[0].actions[2].ai.exposed` under
/// `object "o" · action "a"` is `ai.exposed`.
fn inner_path(where_: &str, path: &str) -> String {
    let segments = segments(path);
    let records = if where_ == "stack" || where_.is_empty() {
        0
    } else if where_.contains(" \u{b7} action \"")
        && matches!(segments.first(), Some(Segment::Key("objects")))
        && matches!(segments.get(2), Some(Segment::Key("actions")))
    {
        2
    } else {
        1
    };
    let mut out = String::new();
    for segment in segments.iter().skip(records * 2) {
        match segment {
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Segment::Index => out.push_str("[]"),
        }
    }
    out
}

/// A segment of a path as findings print it.
#[derive(Debug, PartialEq, Eq)]
enum Segment<'p> {
    Key(&'p str),
    Index,
}

/// Reads a path as findings print it (`a.b[0]["c d"]`); anything it does
/// not understand becomes part of a key, never an error.
fn segments(path: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            if let Some(quoted) = inner.strip_prefix('"') {
                // A quoted key ends at the first `"]` not escaped.
                let mut end = None;
                let mut escaped = false;
                for (i, c) in quoted.char_indices() {
                    match c {
                        '\\' if !escaped => escaped = true,
                        '"' if !escaped => {
                            end = Some(i);
                            break;
                        }
                        _ => escaped = false,
                    }
                }
                let end = end.unwrap_or(quoted.len());
                out.push(Segment::Key(quoted.get(..end).unwrap_or(quoted)));
                let after = quoted.get(end..).unwrap_or("");
                rest = after.strip_prefix("\"]").unwrap_or(after);
            } else {
                let end = inner.find(']').unwrap_or(inner.len());
                out.push(Segment::Index);
                rest = inner.get(end + 1..).unwrap_or("");
            }
        } else {
            let body = rest.strip_prefix('.').unwrap_or(rest);
            let end = body.find(['.', '[']).unwrap_or(body.len());
            let key = body.get(..end).unwrap_or(body);
            if !key.is_empty() {
                out.push(Segment::Key(key));
            }
            rest = body.get(end..).unwrap_or("");
            if end == 0 && rest.starts_with('.') {
                rest = rest.get(1..).unwrap_or("");
            }
        }
    }
    out
}

/// A set of accepted findings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// [`BASELINE_VERSION`], or [`POSITIONAL_VERSION`] for a file read in
    /// the old format.
    pub version: u32,
    /// The accepted findings, sorted.
    pub entries: Vec<BaselineEntry>,
}

/// Why a baseline file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaselineError {
    /// Not JSON of the baseline shape.
    #[error("not a baseline file ({0}); write one with `--write-baseline FILE`")]
    Malformed(String),
    /// Written by another format version.
    #[error(
        "baseline version {0} is not supported (this version reads {POSITIONAL_VERSION} and {BASELINE_VERSION}); rewrite it with `--write-baseline FILE`"
    )]
    Version(u32),
    /// A version-1 entry without its `path`, or a version-2 one without
    /// its `where`.
    #[error(
        "baseline entry {index} has no `{missing}`, which version {version} entries need; rewrite the baseline with `--write-baseline FILE`"
    )]
    Incomplete {
        /// The entry's index in `entries`.
        index: usize,
        /// The key it lacks.
        missing: &'static str,
        /// The file's version.
        version: u32,
    },
}

/// What filtering findings through a baseline leaves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filtered {
    /// Findings the baseline does not cover.
    pub new: Vec<Finding>,
    /// How many findings the baseline covered.
    pub accepted: usize,
    /// Baseline entries that no longer occur (fixed, or their record
    /// renamed).
    pub gone: Vec<BaselineEntry>,
}

impl Baseline {
    /// The entries accepting exactly `findings`, in their order: each
    /// finding's content key, numbered among the findings with the same
    /// key.
    pub fn entries_of(findings: &[Finding]) -> Vec<BaselineEntry> {
        let mut seen: HashMap<BaselineEntry, usize> = HashMap::new();
        findings
            .iter()
            .map(|finding| {
                let mut entry = BaselineEntry::of(finding);
                let count = seen.entry(entry.clone()).or_default();
                entry.occurrence = *count;
                *count += 1;
                entry
            })
            .collect()
    }

    /// A baseline accepting exactly `findings`.
    pub fn from_findings(findings: &[Finding]) -> Self {
        let mut entries = Self::entries_of(findings);
        entries.sort();
        Baseline {
            version: BASELINE_VERSION,
            entries,
        }
    }

    /// Whether this baseline was read from a version-1 file, whose entries
    /// match by position: inserting a record makes the findings after it
    /// new again. Rewrite it with `--write-baseline`.
    pub fn is_positional(&self) -> bool {
        self.version == POSITIONAL_VERSION
    }

    /// The baseline as pretty JSON (with a trailing newline).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Reads a baseline from JSON text (version 2, or a positional
    /// version-1 file).
    pub fn from_json(text: &str) -> Result<Self, BaselineError> {
        let baseline: Baseline =
            serde_json::from_str(text).map_err(|e| BaselineError::Malformed(e.to_string()))?;
        let missing = match baseline.version {
            POSITIONAL_VERSION => baseline
                .entries
                .iter()
                .position(|e| e.path.is_none())
                .map(|index| (index, "path")),
            BASELINE_VERSION => baseline
                .entries
                .iter()
                .position(|e| e.where_.is_empty() || e.path.is_some())
                .map(|index| (index, "where")),
            other => return Err(BaselineError::Version(other)),
        };
        if let Some((index, missing)) = missing {
            return Err(BaselineError::Incomplete {
                index,
                missing,
                version: baseline.version,
            });
        }
        Ok(baseline)
    }

    /// Splits `findings` into new ones and accepted ones, and lists the
    /// entries that matched nothing. Entries count: two identical entries
    /// accept two identical findings.
    pub fn filter(&self, findings: Vec<Finding>) -> Filtered {
        let mut remaining: HashMap<&BaselineEntry, usize> = HashMap::new();
        for entry in &self.entries {
            *remaining.entry(entry).or_default() += 1;
        }
        let keys = if self.is_positional() {
            findings.iter().map(BaselineEntry::positional).collect()
        } else {
            Self::entries_of(&findings)
        };
        let mut out = Filtered::default();
        for (finding, key) in findings.into_iter().zip(keys) {
            match remaining.get_mut(&key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    out.accepted += 1;
                }
                _ => out.new.push(finding),
            }
        }
        for entry in &self.entries {
            if let Some(n) = remaining.get_mut(entry)
                && *n > 0
            {
                *n -= 1;
                out.gone.push(entry.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Location, Severity};
    use serde_json::{Value, json};

    fn finding(path: &str, reference: &str, line: usize) -> Finding {
        Finding {
            rule: "ai-skill-tool-unresolved".into(),
            severity: Severity::Warning,
            where_: "skill \"s\" \u{b7} tools".into(),
            path: path.into(),
            message: crate::Text::default(),
            hint: crate::Text::default(),
            reference: Some(reference.into()),
            suggestion: None,
            location: Some(Location {
                file: "a.json".into(),
                line,
                column: 1,
                byte_start: 0,
                byte_end: 1,
            }),
        }
    }

    /// The findings of a stack, as `lint` reports them.
    fn lint(stack: Value) -> Vec<Finding> {
        let text = serde_json::to_string_pretty(&stack).unwrap();
        let arena = objectstack_spec::json::Arena::new();
        let root = objectstack_spec::json::parse_object(&text, &arena).unwrap();
        crate::lint(&crate::Source {
            file: "stack.json",
            text: Some(&text),
            root,
        })
    }

    fn skill(name: &str, tools: &[&str]) -> Value {
        json!({"name": name, "label": name, "description": "A skill.", "tools": tools})
    }

    #[test]
    fn reports_only_new_findings_and_gone_entries() {
        let baseline = Baseline::from_findings(&[
            finding("skills[0].tools[0]", "x", 3),
            finding("skills[0].tools[1]", "y", 3),
        ]);
        let parsed = Baseline::from_json(&baseline.to_json()).unwrap();
        assert_eq!(parsed, baseline);
        // Line numbers moved; x is still there, y was fixed, z is new.
        let out = parsed.filter(vec![
            finding("skills[0].tools[0]", "x", 9),
            finding("skills[0].tools[2]", "z", 9),
        ]);
        assert_eq!(out.accepted, 1);
        assert_eq!(out.new.len(), 1);
        assert_eq!(out.new[0].reference.as_deref(), Some("z"));
        assert_eq!(out.gone.len(), 1);
        assert_eq!(out.gone[0].reference.as_deref(), Some("y"));
    }

    #[test]
    fn a_changed_reference_at_the_same_path_is_new() {
        let baseline = Baseline::from_findings(&[finding("skills[0].tools[0]", "x", 1)]);
        let out = baseline.filter(vec![finding("skills[0].tools[0]", "x2", 1)]);
        assert_eq!((out.new.len(), out.gone.len()), (1, 1));
    }

    #[test]
    fn inserting_a_skill_at_the_top_keeps_the_accepted_findings() {
        // Issue 12, item 20: entries were keyed by path, so every finding
        // after an inserted record became new again.
        let before = json!({
            "skills": [skill("billing", &["ghost_a", "query_data"]), skill("support", &["ghost_b"])],
            "agents": [{"name": "bot", "skills": ["billing", "nobody"]}],
            "tools": [{"name": "lonely"}]
        });
        let findings = lint(before);
        assert!(findings.len() >= 4, "{findings:#?}");
        let baseline = Baseline::from_json(&Baseline::from_findings(&findings).to_json()).unwrap();
        let after = json!({
            "tools": [
                {"name": "first", "label": "First",
                 "description": "Runs the nightly flow that archives last month's closed tickets.",
                 "parameters": {"type": "object", "properties": {}},
                 "binding": {"type": "flow", "name": "f"}},
                {"name": "lonely"}
            ],
            "flows": [{"name": "f"}],
            "skills": [
                skill("new_one", &["query_data"]),
                skill("billing", &["query_data", "ghost_a"]),
                skill("support", &["ghost_b"])
            ],
            "agents": [{"name": "helper", "skills": ["new_one"]}, {"name": "bot", "skills": ["nobody", "billing"]}]
        });
        let out = baseline.filter(lint(after));
        assert_eq!(out.new, [], "nothing is new");
        assert_eq!(out.accepted, findings.len());
        assert_eq!(out.gone, []);
    }

    #[test]
    fn a_second_identical_reference_in_the_same_skill_is_new() {
        let findings = lint(json!({"skills": [skill("billing", &["ghost"])]}));
        let baseline = Baseline::from_findings(&findings);
        let out = baseline.filter(lint(
            json!({"skills": [skill("billing", &["ghost", "ghost"])]}),
        ));
        assert_eq!(out.accepted, 1);
        assert_eq!(out.new.len(), 1);
        assert_eq!(out.new[0].path, "skills[0].tools[1]");
        // The same reference in another skill is new too.
        let out = baseline.filter(lint(json!({"skills": [
            skill("other", &["ghost"]), skill("billing", &["ghost"])
        ]})));
        assert_eq!((out.accepted, out.new.len()), (1, 1));
        assert_eq!(out.new[0].where_, "skill \"other\" \u{b7} tools");
        // Renaming the skill makes its findings new, and the old ones gone.
        let out = baseline.filter(lint(json!({"skills": [skill("invoicing", &["ghost"])]})));
        assert_eq!((out.accepted, out.new.len(), out.gone.len()), (0, 1, 1));
    }

    #[test]
    fn findings_without_a_reference_are_keyed_inside_their_record() {
        let entry = |where_: &str, path: &str| inner_path(where_, path);
        assert_eq!(
            entry(
                "object \"o\" \u{b7} action \"a\"",
                "objects[3].actions[2].ai.exposed"
            ),
            "ai.exposed"
        );
        assert_eq!(
            entry("object \"o\"", "objects[3].fields[1].type"),
            "fields[].type"
        );
        assert_eq!(
            entry("tool \"t\" \u{b7} binding", "tools[4].binding"),
            "binding"
        );
        assert_eq!(entry("skill \"s\"", "skills.s[\"we.ird\"]"), "we.ird");
        assert_eq!(entry("stack", "(top level)"), "(top level)");
        assert_eq!(entry("stack", "compose[1]"), "compose[]");
        // Nothing a path can hold makes it fail.
        for junk in ["", "[", "[\"", "a..b", "[\"x\\\"]", "]]", ".", "[12"] {
            let _ = entry("skill \"s\"", junk);
        }
    }

    #[test]
    fn version_one_files_are_still_read_by_position() {
        let v1 = r#"{"version": 1, "entries": [
            {"rule": "ai-skill-tool-unresolved", "file": "a.json",
             "path": "skills[0].tools[0]", "ref": "x"}]}"#;
        let baseline = Baseline::from_json(v1).unwrap();
        assert!(baseline.is_positional());
        let out = baseline.filter(vec![
            finding("skills[0].tools[0]", "x", 1),
            finding("skills[1].tools[0]", "x", 1),
        ]);
        assert_eq!((out.accepted, out.new.len()), (1, 1));
        assert_eq!(
            baseline.entries[0].to_string(),
            "a.json skills[0].tools[0] ai-skill-tool-unresolved (x)"
        );
        // Written again, it is version 2.
        let rewritten = Baseline::from_findings(&[finding("skills[0].tools[0]", "x", 1)]);
        assert!(!rewritten.is_positional());
        assert!(rewritten.to_json().contains("\"version\": 2"));
    }

    #[test]
    fn rejects_other_shapes() {
        assert!(Baseline::from_json("[]").is_err());
        assert!(matches!(
            Baseline::from_json("{\"version\": 9, \"entries\": []}"),
            Err(BaselineError::Version(9))
        ));
        let err = Baseline::from_json(
            r#"{"version": 2, "entries": [{"rule": "r", "file": "f", "path": "skills[0]"}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("entry 0 has no `where`"), "{err}");
        let err = Baseline::from_json(r#"{"version": 1, "entries": [{"rule": "r", "file": "f"}]}"#)
            .unwrap_err();
        assert!(err.to_string().contains("no `path`"), "{err}");
    }
}
