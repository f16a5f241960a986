//! The `json` format.

use serde::Serialize;

use crate::finding::{Finding, Summary};

#[derive(Serialize)]
struct Output<'a> {
    findings: &'a [Finding],
    summary: Summary,
}

/// `{"findings": [...], "summary": {"errors", "warnings", "files"}}`,
/// pretty-printed, with a trailing newline.
pub fn json(findings: &[Finding], files: usize) -> String {
    let output = Output {
        findings,
        summary: Summary::of(findings, files),
    };
    let mut s = serde_json::to_string_pretty(&output).unwrap_or_default();
    s.push('\n');
    s
}
