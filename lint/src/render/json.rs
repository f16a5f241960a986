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
    for (i, finding) in findings.iter().enumerate() {
        piece.extend_from_slice(if first && i == 0 {
            b"\n    "
        } else {
            b",\n    "
        });
        push_finding(&mut piece, finding);
    }
    Ok(piece)
}

/// Appends `finding` as serde's pretty printer writes it (terminal-safe),
/// indented as an item of the document's `findings` array: the same bytes,
/// written in one pass rather than printed, escaped and then indented.
fn push_finding(out: &mut Vec<u8>, finding: &Finding) {
    use objectstack_spec::json::terminal::{StrContents, push_str_contents};
    let string = |out: &mut Vec<u8>, text: &str| {
        out.push(b'"');
        push_str_contents(out, text);
        out.push(b'"');
    };
    let optional = |out: &mut Vec<u8>, text: Option<&str>| match text {
        Some(text) => string(out, text),
        None => out.extend_from_slice(b"null"),
    };
    let text = |out: &mut Vec<u8>, text: &crate::finding::Text| {
        use std::fmt::Write as _;
        out.push(b'"');
        // Writing into a `Vec` cannot fail.
        let _ = write!(StrContents(out), "{text}");
        out.push(b'"');
    };
    out.extend_from_slice(b"{\n      \"rule\": ");
    string(out, &finding.rule);
    out.extend_from_slice(b",\n      \"severity\": ");
    string(out, finding.severity.as_str());
    out.extend_from_slice(b",\n      \"where\": ");
    string(out, &finding.where_);
    out.extend_from_slice(b",\n      \"path\": ");
    string(out, &finding.path);
    out.extend_from_slice(b",\n      \"message\": ");
    text(out, &finding.message);
    out.extend_from_slice(b",\n      \"hint\": ");
    text(out, &finding.hint);
    out.extend_from_slice(b",\n      \"ref\": ");
    optional(out, finding.reference.as_deref());
    out.extend_from_slice(b",\n      \"suggestion\": ");
    optional(out, finding.suggestion.as_deref());
    out.extend_from_slice(b",\n      \"location\": ");
    match &finding.location {
        Some(location) => {
            out.extend_from_slice(b"{\n        \"file\": ");
            string(out, &location.file);
            for (key, value) in [
                (&b",\n        \"line\": "[..], location.line),
                (b",\n        \"column\": ", location.column),
                (b",\n        \"byteStart\": ", location.byte_start),
                (b",\n        \"byteEnd\": ", location.byte_end),
            ] {
                out.extend_from_slice(key);
                // Writing into a `Vec` cannot fail.
                let _ = std::io::Write::write_fmt(out, format_args!("{value}"));
            }
            out.extend_from_slice(b"\n      }");
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b"\n    }");
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
            rule: "ai-skill-tool-unresolved".into(),
            severity: if i.is_multiple_of(3) {
                Severity::Error
            } else {
                Severity::Warning
            },
            where_: format!("skill \"s{i}\" \u{b7} tools"),
            path: format!("skills[{i}].tools[0]"),
            // Some texts are written when read, from parts (as the
            // reference rule's are).
            message: if i % 5 == 3 {
                Text::deferred(
                    crate::finding::Parts::new(&[text, "\u{202e}\"", "", "12:ab"]),
                    |parts, f| {
                        for part in parts.iter() {
                            f.write_str(part)?;
                        }
                        write!(f, " {}", parts.iter().count())
                    },
                )
            } else {
                Text::from(format!("{text} {i}"))
            },
            hint: Text::from(text.to_owned()),
            reference: i.is_multiple_of(2).then(|| text.to_owned()),
            suggestion: None,
            location: (i % 4 != 1).then(|| Location {
                file: "a.json".into(),
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
            "tab\t, \\ back, \u{1} \u{1f} \u{9b} \u{2028} \u{feff} é 😀",
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
