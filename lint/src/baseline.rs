//! Baselines: accept today's findings, report only new ones.
//!
//! An entry is keyed by rule, file, JSON path and the unresolved name, never
//! by line numbers, so reformatting a file does not invalidate it. The file
//! is JSON:
//!
//! ```json
//! { "version": 1,
//!   "entries": [ { "rule": "ai-skill-tool-unresolved",
//!                  "file": "examples/hotcrm-skills.json",
//!                  "path": "skills[2].tools[0]",
//!                  "ref": "triage_case" } ] }
//! ```

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::finding::Finding;

/// The baseline format version this crate writes and reads.
pub const BASELINE_VERSION: u32 = 1;

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaselineEntry {
    /// The rule id.
    pub rule: String,
    /// The file, as reported.
    pub file: String,
    /// The lenient JSON path.
    pub path: String,
    /// The unresolved name, when the finding has one.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

impl BaselineEntry {
    /// The key of a finding.
    pub fn of(finding: &Finding) -> Self {
        BaselineEntry {
            rule: finding.rule.clone(),
            file: finding.file().to_owned(),
            path: finding.path.clone(),
            reference: finding.reference.clone(),
        }
    }
}

/// A set of accepted findings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// Always [`BASELINE_VERSION`].
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
        "baseline version {0} is not supported (expected {BASELINE_VERSION}); rewrite it with `--write-baseline FILE`"
    )]
    Version(u32),
}

/// What filtering findings through a baseline leaves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filtered {
    /// Findings the baseline does not cover.
    pub new: Vec<Finding>,
    /// How many findings the baseline covered.
    pub accepted: usize,
    /// Baseline entries that no longer occur (fixed, or moved).
    pub gone: Vec<BaselineEntry>,
}

impl Baseline {
    /// A baseline accepting exactly `findings`.
    pub fn from_findings(findings: &[Finding]) -> Self {
        let mut entries: Vec<BaselineEntry> = findings.iter().map(BaselineEntry::of).collect();
        entries.sort();
        Baseline {
            version: BASELINE_VERSION,
            entries,
        }
    }

    /// The baseline as pretty JSON (with a trailing newline).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Reads a baseline from JSON text.
    pub fn from_json(text: &str) -> Result<Self, BaselineError> {
        let baseline: Baseline =
            serde_json::from_str(text).map_err(|e| BaselineError::Malformed(e.to_string()))?;
        if baseline.version != BASELINE_VERSION {
            return Err(BaselineError::Version(baseline.version));
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
        let mut out = Filtered::default();
        for finding in findings {
            let key = BaselineEntry::of(&finding);
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

    fn finding(path: &str, reference: &str, line: usize) -> Finding {
        Finding {
            rule: "ai-skill-tool-unresolved".into(),
            severity: Severity::Warning,
            where_: String::new(),
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
    fn rejects_other_shapes() {
        assert!(Baseline::from_json("[]").is_err());
        assert!(matches!(
            Baseline::from_json("{\"version\": 9, \"entries\": []}"),
            Err(BaselineError::Version(9))
        ));
    }
}
