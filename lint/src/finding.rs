//! What a rule reports: a [`Finding`], its [`Severity`] and where it is.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How serious a finding is once configuration has been applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth fixing; does not fail the run.
    Warning,
    /// Fails the run (exit code 1).
    Error,
}

impl Severity {
    /// `"warning"` or `"error"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "warning" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            other => Err(format!(
                "unknown severity `{other}`: write `warning` or `error`"
            )),
        }
    }
}

/// Where the offending value sits in its file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    /// The file, as reported (relative to the working directory when the
    /// input was given that way).
    pub file: String,
    /// 1-based line of the value's first byte.
    pub line: usize,
    /// 1-based column of the value's first byte, counted in characters.
    pub column: usize,
    /// Byte offset of the value's first byte.
    pub byte_start: usize,
    /// Byte offset just past the value's last byte.
    pub byte_end: usize,
}

/// One problem found in a stack.
///
/// Serialises to the stable JSON shape documented at the crate root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The rule's stable kebab-case id (or a `spec` validation id).
    pub rule: String,
    /// The severity after configuration.
    pub severity: Severity,
    /// A short human description of the place, e.g.
    /// `skill "case_triage" · tools`.
    #[serde(rename = "where")]
    pub where_: String,
    /// The lenient JSON path of the offending value, e.g.
    /// `skills[2].tools[0]` (indices count only the entries that are
    /// records, as upstream does).
    pub path: String,
    /// What is wrong and what it means at run time.
    pub message: String,
    /// How to fix it.
    pub hint: String,
    /// The name that did not resolve, where there is one.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// The name it probably meant, if any.
    pub suggestion: Option<String>,
    /// Where the offending value is in its file (absent when the stack was
    /// not read from text).
    pub location: Option<Location>,
}

impl Finding {
    /// The file the finding is in, or `""` when it has no location.
    pub fn file(&self) -> &str {
        self.location.as_ref().map_or("", |l| l.file.as_str())
    }
}

/// Counts of a set of findings, as the JSON `summary` reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Findings with severity `error`.
    pub errors: usize,
    /// Findings with severity `warning`.
    pub warnings: usize,
    /// Files linted.
    pub files: usize,
}

impl Summary {
    /// Counts `findings` over `files` linted files.
    pub fn of(findings: &[Finding], files: usize) -> Self {
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        Summary {
            errors,
            warnings: findings.len() - errors,
            files,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_round_trips() {
        assert_eq!("warning".parse::<Severity>(), Ok(Severity::Warning));
        assert_eq!("error".parse::<Severity>(), Ok(Severity::Error));
        assert!("fatal".parse::<Severity>().is_err());
        assert!(Severity::Error > Severity::Warning);
    }

    #[test]
    fn summary_counts() {
        let f = |severity| Finding {
            rule: "r".into(),
            severity,
            where_: String::new(),
            path: String::new(),
            message: String::new(),
            hint: String::new(),
            reference: None,
            suggestion: None,
            location: None,
        };
        let s = Summary::of(
            &[
                f(Severity::Error),
                f(Severity::Warning),
                f(Severity::Warning),
            ],
            2,
        );
        assert_eq!(
            s,
            Summary {
                errors: 1,
                warnings: 2,
                files: 2
            }
        );
    }
}
