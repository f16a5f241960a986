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
    let mut out = Vec::new();
    // Writing to a `Vec` cannot fail, and the output is UTF-8 JSON.
    let _ = write_json(findings, files, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// [`json`], written to `out` as it is produced rather than built as one
/// string first (a run with many findings prints tens of megabytes).
pub fn write_json(
    findings: &[Finding],
    files: usize,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let output = Output {
        findings,
        summary: Summary::of(findings, files),
    };
    objectstack_spec::json::terminal::to_writer_pretty(&mut *out, &output)?;
    out.write_all(b"\n")
}
