//! Output formats: `human`, `json`, `sarif` and `github`.
//!
//! Every renderer is a pure function from findings (and, for `human`, the
//! source texts) to a string.

use std::fmt;
use std::str::FromStr;

use crate::finding::{Finding, Summary};

mod github;
mod human;
mod json;
mod sarif;

pub use github::{github, write_github};
pub use human::{HumanOptions, human, write_human};
pub use json::{json, write_json};
pub use sarif::{sarif, write_sarif};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Annotated source snippets for people, with a summary line.
    Human,
    /// `{"findings": [...], "summary": {...}}` (see the crate docs).
    Json,
    /// SARIF 2.1.0, as GitHub code scanning accepts it.
    Sarif,
    /// GitHub Actions workflow annotations (`::warning file=...::...`).
    Github,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 4] = [Format::Human, Format::Json, Format::Sarif, Format::Github];

    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Human => "human",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Github => "github",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| format!("unknown format `{s}`: use human, json, sarif or github"))
    }
}

/// A file's name and text, for renderers that quote the source.
#[derive(Debug, Clone, Copy)]
pub struct SourceText<'a> {
    /// The file name, as findings report it.
    pub file: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// Renders `findings` from `files` linted files in `format` (`human` without
/// colour).
pub fn render(
    format: Format,
    findings: &[Finding],
    sources: &[SourceText<'_>],
    files: usize,
) -> String {
    match format {
        Format::Human => human(findings, sources, files, &HumanOptions::default()),
        Format::Json => json(findings, files),
        Format::Sarif => sarif(findings),
        Format::Github => github(findings, files),
    }
}

/// The one-line summary: `2 errors, 10 warnings in 1 file`.
pub fn summary_line(summary: &Summary) -> String {
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("{n} {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    let files = plural(summary.files, "file");
    if summary.errors == 0 && summary.warnings == 0 {
        return format!("no findings in {files}");
    }
    format!(
        "{}, {} in {files}",
        plural(summary.errors, "error"),
        plural(summary.warnings, "warning")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse() {
        for f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>(), Ok(f));
        }
        assert!("xml".parse::<Format>().is_err());
    }

    #[test]
    fn summary_lines() {
        let s = |errors, warnings, files| {
            summary_line(&Summary {
                errors,
                warnings,
                files,
            })
        };
        assert_eq!(s(0, 0, 1), "no findings in 1 file");
        assert_eq!(s(1, 10, 2), "1 error, 10 warnings in 2 files");
    }
}
