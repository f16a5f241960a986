//! The `json` format.

use rayon::prelude::*;

use crate::finding::{Finding, Summary};

#[cfg(test)]
#[derive(serde::Serialize)]
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
///
/// The findings are rendered a chunk at a time on every core and written
/// in order. Each is printed on its own and indented to its depth in the
/// document: JSON strings hold no raw line breaks, so the output is the
/// same bytes as printing `{"findings": [...], "summary": {...}}` whole.
pub fn write_json(
    findings: &[Finding],
    files: usize,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    out.write_all(b"{\n  \"findings\": [")?;
    if findings.is_empty() {
        out.write_all(b"]")?;
    } else {
        // Enough chunks at a time to keep every core busy, few enough that
        // the rendered text waiting to be written stays small.
        let batch = FINDINGS_PER_CHUNK * 4 * rayon::current_num_threads().max(1);
        for (b, findings) in findings.chunks(batch).enumerate() {
            let pieces: Vec<std::io::Result<Vec<u8>>> = findings
                .par_chunks(FINDINGS_PER_CHUNK)
                .enumerate()
                .map(|(c, chunk)| render_chunk(chunk, b == 0 && c == 0))
                .collect();
            for piece in pieces {
                out.write_all(&piece?)?;
            }
        }
        out.write_all(b"\n  ]")?;
    }
    out.write_all(b",\n  \"summary\": ")?;
    let mut summary = Vec::new();
    objectstack_spec::json::terminal::to_writer_pretty(
        &mut summary,
        &Summary::of(findings, files),
    )?;
    indented(&summary, b"\n  ", out)?;
    out.write_all(b"\n}\n")
}

/// Findings a rendering task prints.
const FINDINGS_PER_CHUNK: usize = 128;

/// The findings as items of the document's `findings` array: each after
/// `,` (or, for the document's first, nothing), a line break and the
/// array's item indent.
fn render_chunk(findings: &[Finding], first: bool) -> std::io::Result<Vec<u8>> {
    let mut piece = Vec::with_capacity(findings.len() * 1536);
    let mut one = Vec::with_capacity(1536);
    for (i, finding) in findings.iter().enumerate() {
        piece.extend_from_slice(if first && i == 0 {
            b"\n    "
        } else {
            b",\n    "
        });
        one.clear();
        objectstack_spec::json::terminal::to_writer_pretty(&mut one, finding)?;
        indented(&one, b"\n    ", &mut piece)?;
    }
    Ok(piece)
}

/// Writes `text` with each line break replaced by `break_and_indent`.
fn indented(
    text: &[u8],
    break_and_indent: &[u8],
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.write_all(break_and_indent)?;
        }
        out.write_all(line)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Location, Severity, Text};

    fn finding(i: usize, text: &str) -> Finding {
        Finding {
            rule: "ai-skill-tool-unresolved".to_owned(),
            severity: if i.is_multiple_of(3) {
                Severity::Error
            } else {
                Severity::Warning
            },
            where_: format!("skill \"s{i}\" \u{b7} tools"),
            path: format!("skills[{i}].tools[0]"),
            message: Text::from(format!("{text} {i}")),
            hint: Text::from(text.to_owned()),
            reference: i.is_multiple_of(2).then(|| text.to_owned()),
            suggestion: None,
            location: (i % 4 != 1).then(|| Location {
                file: "a.json".to_owned(),
                line: i,
                column: 1,
                byte_start: i,
                byte_end: i + 1,
            }),
        }
    }

    /// What serde prints for the whole document at once.
    fn whole(findings: &[Finding], files: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let output = Output {
            findings,
            summary: Summary::of(findings, files),
        };
        objectstack_spec::json::terminal::to_writer_pretty(&mut out, &output).unwrap();
        out.push(b'\n');
        out
    }

    #[test]
    fn chunked_output_is_the_whole_documents_bytes() {
        let texts = [
            "plain",
            "line\nbreak and \"quotes\"",
            "bidi \u{202e} and \u{7f}",
            "",
        ];
        for n in [0, 1, 2, FINDINGS_PER_CHUNK, FINDINGS_PER_CHUNK + 1, 5000] {
            let findings: Vec<Finding> =
                (0..n).map(|i| finding(i, texts[i % texts.len()])).collect();
            let mut chunked = Vec::new();
            write_json(&findings, 2, &mut chunked).unwrap();
            assert_eq!(
                String::from_utf8(chunked).unwrap(),
                String::from_utf8(whole(&findings, 2)).unwrap(),
                "{n} findings"
            );
        }
    }
}
