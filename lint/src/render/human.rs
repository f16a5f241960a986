//! The `human` format: each finding with its source line marked, the hint
//! and the suggestion, then a summary line.

use std::borrow::Cow;

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use objectstack_spec::text::line_safe;

use crate::finding::{Finding, Location, Severity, Summary};
use crate::render::{SourceText, summary_line};

/// Options of the `human` format.
#[derive(Debug, Clone, Default)]
pub struct HumanOptions {
    /// Colour with ANSI escapes.
    pub color: bool,
}

/// Renders findings for a terminal.
pub fn human(
    findings: &[Finding],
    sources: &[SourceText<'_>],
    files: usize,
    options: &HumanOptions,
) -> String {
    let mut out = String::new();
    each_piece(findings, sources, options, |piece| {
        out.push_str(piece);
        Ok(())
    })
    .unwrap_or_default();
    out.push_str(&summary_line(&Summary::of(findings, files)));
    out.push('\n');
    out
}

/// Writes [`human`]'s text to `out` a batch of findings at a time, each
/// batch rendered on every core: a large stack's tens of thousands of
/// findings are never one string in memory.
pub fn write_human(
    findings: &[Finding],
    sources: &[SourceText<'_>],
    files: usize,
    options: &HumanOptions,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    each_piece(findings, sources, options, |piece| {
        out.write_all(piece.as_bytes())
    })?;
    out.write_all(summary_line(&Summary::of(findings, files)).as_bytes())?;
    out.write_all(b"\n")
}

/// Findings a rendering task renders.
const FINDINGS_PER_PIECE: usize = 64;

/// Calls `each` with every finding rendered and followed by a blank line,
/// in order, a piece of several findings at a time. The pieces of a batch
/// are rendered in parallel, enough to keep every core busy, few enough
/// that the text waiting to be written stays small.
fn each_piece(
    findings: &[Finding],
    sources: &[SourceText<'_>],
    options: &HumanOptions,
    mut each: impl FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    let batch = FINDINGS_PER_PIECE * 4 * rayon::current_num_threads().max(1);
    for findings in findings.chunks(batch) {
        let pieces: Vec<String> = findings
            .par_chunks(FINDINGS_PER_PIECE)
            .map(|chunk| {
                let renderer = if options.color {
                    Renderer::styled()
                } else {
                    Renderer::plain()
                }
                .decor_style(DecorStyle::Ascii);
                let mut piece = String::new();
                for f in chunk {
                    piece.push_str(&one(&renderer, f, sources));
                    piece.push_str("\n\n");
                }
                piece
            })
            .collect();
        for piece in &pieces {
            each(piece)?;
        }
    }
    Ok(())
}

fn one(renderer: &Renderer, f: &Finding, sources: &[SourceText<'_>]) -> String {
    let level = match f.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    // Names in findings come from the document, file names from the
    // command line: escape what a terminal would act on, and newlines, so
    // no value forges a line (the styling the renderer adds is its own).
    let message_text = f.message.to_cow();
    let message = line_safe(&message_text);
    let title = level.primary_title(message.as_ref()).id(f.rule.as_ref());
    let label = line_safe(&format!("{} ({})", f.where_, f.path)).into_owned();
    let snippet = f.location.as_ref().and_then(|l| {
        let text = sources.iter().find(|s| s.file == &*l.file)?.text;
        let (line, start) = line_window(text, l.byte_start)?;
        let len = l
            .byte_end
            .saturating_sub(l.byte_start)
            .min(line.len().saturating_sub(start));
        let (line, span) = visible(line, start..start + len);
        // No path on the snippet: the renderer would print its `-->` line
        // with a column counted from the start of the window, which a long
        // line cuts. The finding's own position goes in instead (`origin`).
        let snippet = Snippet::source(line)
            .line_start(l.line)
            .annotation(AnnotationKind::Primary.span(span).label(label.clone()));
        Some((snippet, l))
    });
    let mut primary = Group::with_title(title);
    let mut origin = None;
    match snippet {
        Some((s, l)) => {
            primary = primary.element(s);
            origin = Some(l);
        }
        None => {
            let at = match &f.location {
                Some(l) => format!("at {}:{}:{}: {label}", line_safe(&l.file), l.line, l.column),
                None => format!("at {label}"),
            };
            primary = primary.element(Level::NOTE.message(at));
        }
    }
    let hint_text = f.hint.to_cow();
    let hint = line_safe(&hint_text);
    primary = primary.element(Level::HELP.message(hint.as_ref()));
    if let Some(s) = f
        .suggestion
        .as_ref()
        .filter(|s| !message_text.contains(&format!("Did you mean \"{s}\"?")))
    {
        primary =
            primary.element(Level::HELP.message(format!("did you mean \"{}\"?", line_safe(s))));
    }
    let rendered = renderer.render(&[primary]);
    match origin {
        Some(l) => with_origin(renderer, rendered, l),
        None => rendered,
    }
}

/// `rendered` (a finding whose snippet has no path) with the `--> file:line:column`
/// line the renderer writes for a snippet with one, in its place under the
/// title and with its style, but with the finding's own line and column (in
/// characters, as `json` reports them).
fn with_origin(renderer: &Renderer, rendered: String, l: &Location) -> String {
    let origin = Origin::path(line_safe(&l.file).into_owned())
        .line(l.line)
        .char_column(l.column);
    let arrow = renderer.render(&[Group::with_level(Level::NOTE).element(origin)]);
    // The title is one line (its text is line-safe); the arrow is indented
    // by the width of the line-number gutter, as the renderer does.
    let (title, rest) = rendered.split_once('\n').unwrap_or((&rendered, ""));
    let gutter = " ".repeat(l.line.to_string().len());
    format!("{title}\n{gutter}{arrow}\n{rest}")
}

/// `line` with each character a terminal would act on (a C1 control such
/// as U+009B, which JSON strings may hold raw, or a bidirectional control)
/// shown as U+FFFD, one character for one; and `span`, in bytes of `line`,
/// moved to the same characters of the result.
fn visible(line: &str, span: std::ops::Range<usize>) -> (String, std::ops::Range<usize>) {
    let mut out = String::with_capacity(line.len());
    let (mut start, mut end) = (None, None);
    for (i, c) in line.char_indices() {
        if i == span.start {
            start = Some(out.len());
        }
        if i == span.end {
            end = Some(out.len());
        }
        let safe = c == '\t' || matches!(line_safe(c.encode_utf8(&mut [0; 4])), Cow::Borrowed(_));
        out.push(if safe { c } else { '\u{FFFD}' });
    }
    let start = start.unwrap_or(out.len());
    let end = end.unwrap_or(out.len()).max(start);
    (out, start..end)
}

/// Bytes of context kept on each side of a finding in a long line (a
/// compact one-line document would otherwise be quoted whole).
const WINDOW: usize = 160;

/// The (part of the) line holding byte `at`, and `at`'s offset in it. The
/// line is cut to [`WINDOW`] bytes around `at`, on character boundaries.
fn line_window(text: &str, at: usize) -> Option<(&str, usize)> {
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let ceil = |mut i: usize| {
        while i < text.len() && !text.is_char_boundary(i) {
            i += 1;
        }
        i
    };
    let at = floor(at.min(text.len()));
    let lo = floor(at.saturating_sub(WINDOW));
    let hi = ceil((at + WINDOW).min(text.len()));
    let start = text.get(lo..at)?.rfind('\n').map_or(lo, |i| lo + i + 1);
    let end = text.get(at..hi)?.find('\n').map_or(hi, |i| at + i);
    let line = text.get(start..end)?.trim_end_matches('\r');
    Some((line, at - start))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streamed text is the whole one, batch after batch, in colour
    /// or not: more findings than one batch, each pointing into the file.
    #[test]
    fn written_in_batches_it_is_the_whole_text() {
        let text: String = (0..1500)
            .map(|i| format!("{{\"name\": \"s{i}\", \"tools\": [\"t{i}\"]}}\n"))
            .collect();
        let findings: Vec<Finding> = (0..1500)
            .map(|i| {
                let at = text.find(&format!("[\"t{i}\"")).unwrap_or(0) + 1;
                Finding {
                    rule: "r".into(),
                    severity: if i % 3 == 0 {
                        Severity::Error
                    } else {
                        Severity::Warning
                    },
                    where_: format!("skill \"s{i}\""),
                    path: format!("skills[{i}].tools[0]"),
                    message: format!("m{i}").into(),
                    hint: "h".into(),
                    reference: Some(format!("t{i}")),
                    suggestion: (i % 2 == 0).then(|| "u".to_owned()),
                    location: Some(Location {
                        file: "f.json".into(),
                        line: i + 1,
                        column: 22,
                        byte_start: at,
                        byte_end: at + 4,
                    }),
                }
            })
            .collect();
        let sources = [SourceText {
            file: "f.json",
            text: &text,
        }];
        for color in [false, true] {
            let options = HumanOptions { color };
            let whole = human(&findings, &sources, 1, &options);
            let mut written = Vec::new();
            write_human(&findings, &sources, 1, &options, &mut written).unwrap();
            assert_eq!(String::from_utf8(written).unwrap(), whole);
            assert!(
                whole.ends_with(" in 1 file\n"),
                "{}",
                &whole[whole.len() - 40..]
            );
        }
    }

    #[test]
    fn controls_in_a_source_line_are_shown_as_replacement_characters() {
        let line = "{\"label\": \"a\u{9b}31m\u{202e}\", \"tools\": [\"x\"]}";
        let at = line.find("[\"x").unwrap();
        let (shown, span) = visible(line, at..at + 5);
        assert_eq!(
            shown,
            "{\"label\": \"a\u{fffd}31m\u{fffd}\", \"tools\": [\"x\"]}"
        );
        assert_eq!(&shown[span], "[\"x\"]");
        let (shown, span) = visible("\tplain", 1..6);
        assert_eq!((shown.as_str(), span), ("\tplain", 1..6));
    }

    /// On a line shown whole, the finding's position is the one the
    /// renderer counts itself: the output is what it writes for a snippet
    /// with a path, plain and styled, whatever the gutter's width.
    #[test]
    fn the_origin_line_is_the_renderers_own_on_a_whole_line() {
        for line in [1, 12, 1234] {
            let text = format!("{}{{\"a\": \"é\", \"b\": [\"x\"]}}", "\n".repeat(line - 1));
            let byte_start = text.find("[\"x").unwrap();
            let finding = Finding {
                rule: "r".into(),
                severity: Severity::Error,
                where_: "w".to_owned(),
                path: "p".to_owned(),
                message: "m".to_owned().into(),
                hint: "h".to_owned().into(),
                reference: None,
                suggestion: None,
                location: Some(Location {
                    file: "f.json".into(),
                    line,
                    column: 17,
                    byte_start,
                    byte_end: byte_start + 5,
                }),
            };
            let sources = [SourceText {
                file: "f.json",
                text: &text,
            }];
            for renderer in [Renderer::plain(), Renderer::styled()] {
                let renderer = renderer.decor_style(DecorStyle::Ascii);
                let source = text.lines().last().unwrap();
                let at = source.find("[\"x").unwrap();
                let own = Level::ERROR.primary_title("m").id("r").element(
                    Snippet::source(source)
                        .line_start(line)
                        .path("f.json")
                        .annotation(AnnotationKind::Primary.span(at..at + 5).label("w (p)")),
                );
                let own = renderer.render(&[own.element(Level::HELP.message("h"))]);
                assert_eq!(one(&renderer, &finding, &sources), own);
            }
        }
    }

    #[test]
    fn windows_are_cut_on_character_boundaries() {
        let text = "ab\ncd\r\nef";
        assert_eq!(line_window(text, 4), Some(("cd", 1)));
        assert_eq!(line_window(text, 0), Some(("ab", 0)));
        let long = "é".repeat(1000);
        let (line, at) = line_window(&long, 1001).unwrap();
        assert!(line.len() <= 2 * WINDOW + 2);
        assert!(line.is_char_boundary(at));
    }
}
