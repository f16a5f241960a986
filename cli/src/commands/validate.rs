//! `objectstack-ai validate FILE... [--compose] [--format human|json]`:
//! check stack files against the metadata model and say how to fix what
//! is wrong.
//!
//! Each file is validated on its own (every problem at once, see
//! `objectstack_spec::validate`). With `--compose` the files are also
//! composed into one stack, which adds the problems only a composition
//! has: a name defined in two files, and top-level settings that differ.
//!
//! Human output (the default) prints, per problem, `severity[id]: message`,
//! `--> file:line:column`, the offending source line with a marker, the
//! JSON path and the fix; then one summary line per file and a total.
//!
//! JSON output (`--format json`) is one object, stable within `version` 1:
//!
//! ```json
//! {
//!   "version": 1,
//!   "compose": false,
//!   "files": [
//!     {"file": "a.json", "status": "ok" | "invalid" | "unusable",
//!      "errors": 0, "warnings": 0,
//!      "error": {"message": "...", "line": 3, "column": 7}}
//!   ],
//!   "diagnostics": [
//!     {"id": "spec-unknown-key", "severity": "error" | "warning",
//!      "file": "a.json", "path": "objects[0].actions[1].ai.enabled",
//!      "line": 12, "column": 9, "start": 301, "end": 310,
//!      "message": "...", "fix": "...",
//!      "related": [{"file": "...", "path": "...", "line": 1, "column": 1,
//!                   "message": "..."}]}
//!   ],
//!   "summary": {"files": 1, "errors": 0, "warnings": 0, "unusable": 0}
//! }
//! ```
//!
//! `error` is present only for unusable files (`line` and `column` are
//! `null` when the file could not be read at all). `line` and `column` are
//! 1-based, columns count characters; `start` and `end` are byte offsets
//! of what the diagnostic points at (a key for unknown and retired keys,
//! else the value; the nearest enclosing value when the path itself is
//! absent, such as a missing key). Diagnostics are sorted by file, then
//! position.
//!
//! Exit codes: 0 no errors (warnings allowed), 1 errors, 2 a file is
//! unusable (unreadable, not UTF-8, not JSON, nested too deeply, not an
//! object at the top level) or the command line is wrong.

use std::borrow::Cow;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use objectstack_spec::compose::{Source, compose};
use objectstack_spec::json::terminal;
use objectstack_spec::parse::{ParseError, decode_utf8, parse_value};
use objectstack_spec::path::JsonPath;
use objectstack_spec::source::{SourceIndex, Span};
use objectstack_spec::text::line_safe;
use objectstack_spec::validate::{Anchor, Diagnostic, Severity, validate};
use serde_json::{Map, Value, json};

use crate::{EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE};

/// Arguments of `objectstack-ai validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Stack files (JSON, e.g. `dist/objectstack.json`); each is validated
    /// on its own. `-` is standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Also validate the composition of all the files (collections
    /// concatenated; names must be unique across files).
    #[arg(long)]
    compose: bool,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Problems with their source lines, for people.
    Human,
    /// One JSON object (see the command's documentation).
    Json,
}

/// Why a file cannot be validated.
#[derive(Debug)]
struct Unusable {
    message: String,
    position: Option<(usize, usize)>,
}

/// One input file.
struct File {
    display: String,
    loaded: Result<Loaded, Unusable>,
}

struct Loaded {
    /// The file's bytes and text (see [`crate::input::Utf8::text`]).
    content: crate::input::Utf8,
    /// The `serde_json` reading, kept only for `--compose` (composition
    /// works on owned documents); validation reads the borrowed tree.
    root: Option<Map<String, Value>>,
    /// The file's own diagnostics, made while it was loaded.
    diagnostics: Vec<Diagnostic>,
}

/// A diagnostic with the file it belongs to.
struct Found {
    file: usize,
    diagnostic: Diagnostic,
    /// The file of each related location.
    related_files: Vec<usize>,
}

/// A located diagnostic, ready to print.
struct Located {
    found: Found,
    span: Span,
    related: Vec<Span>,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    let (files, located) = gather(&args.files, args.compose);

    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = match args.format {
        Format::Human => write_human(&mut out, &files, &located),
        Format::Json => write_json(&mut out, &files, &located, args.compose),
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {}
        Err(err) => return Err(err).context("cannot write the output"),
    }

    let code = if files.iter().any(|f| f.loaded.is_err()) {
        EXIT_UNUSABLE
    } else if located.iter().any(|l| l.found.diagnostic.is_error()) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    };
    // Large documents: the process is about to exit, so skip freeing them
    // one allocation at a time.
    std::mem::forget(files);
    std::mem::forget(located);
    Ok(code)
}

/// Loads and validates `paths` (and their composition, with `compose`),
/// and locates the diagnostics, in the order they are reported.
fn gather(paths: &[PathBuf], compose: bool) -> (Vec<File>, Vec<Located>) {
    let mut files: Vec<File> = paths
        .iter()
        .map(|path| File {
            display: path.display().to_string(),
            loaded: load(path, compose),
        })
        .collect();

    let mut found = Vec::new();
    for (i, file) in files.iter_mut().enumerate() {
        if let Ok(loaded) = &mut file.loaded {
            for diagnostic in std::mem::take(&mut loaded.diagnostics) {
                let related_files = vec![i; diagnostic.related.len()];
                found.push(Found {
                    file: i,
                    diagnostic,
                    related_files,
                });
            }
        }
    }
    if compose {
        found.extend(composed(&files));
    }
    let mut located = locate(&files, found);
    located.sort_by_key(|l| (l.found.file, l.span.line, l.span.column));
    (files, located)
}

/// Reads and parses one file; any failure is unusable input.
/// With `compose`, the `serde_json` reading is kept for the composition.
fn load(path: &Path, compose: bool) -> Result<Loaded, Unusable> {
    let plain = |message: String| Unusable {
        message,
        position: None,
    };
    let bytes = crate::input::read_bounded(path).map_err(|err| match err {
        crate::input::ReadError::Directory => {
            plain("it is a directory, not a stack file".to_owned())
        }
        other => plain(other.to_string()),
    })?;
    let binary = is_binary(&bytes);
    let located = |err: ParseError| {
        let message = err.to_string();
        let (line, column) = err.line_column();
        // The error's own text starts with "line:column: ".
        let message = message
            .strip_prefix(&format!("{line}:{column}: "))
            .map(str::to_owned)
            .unwrap_or(message);
        let message = if binary {
            format!("{message} (this looks like a binary file, not a JSON stack)")
        } else {
            message
        };
        Unusable {
            message,
            position: (line > 0).then_some((line, column)),
        }
    };
    // One UTF-8 check, and no copy: the bytes are kept with their text
    // (read without a byte-order mark).
    let content = match crate::input::Utf8::check(bytes) {
        Ok(content) => content,
        Err((bytes, _)) => {
            return Err(match decode_utf8(&bytes) {
                Err(e) => located(e),
                Ok(_) => plain("the file is not valid UTF-8".to_owned()),
            });
        }
    };
    let text = content.text();
    let serde_root = |text: &str| match parse_value(text).map_err(located)? {
        Value::Object(root) => Ok(root),
        other => Err(located(ParseError::NotAnObject {
            found: objectstack_spec::json::kind(&other),
        })),
    };
    // Composition reads owned documents: only `--compose` pays for one.
    let root = if compose {
        Some(serde_root(text)?)
    } else {
        None
    };
    // The borrowed tree (as `lint` reads a file) also notes a key written
    // twice in one object, which `serde_json` drops. Its errors are
    // `serde_json`'s; the owned reading reports them.
    let arena = crate::input::tree_arena(text.len());
    let mut side = crate::input::tree_arena(text.len());
    let diagnostics =
        match objectstack_spec::json::parse_object_on_two_threads(text, &arena, &mut side) {
            Ok(document) => validate(document),
            Err(_) => {
                let root = serde_root(text)?;
                validate(objectstack_spec::json::Map::from_serde(&root, &arena))
            }
        };
    drop(arena);
    drop(side);
    Ok(Loaded {
        content,
        root,
        diagnostics,
    })
}

/// Whether the bytes look like a binary file (a NUL in the first 8 KiB).
fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|&b| b == 0)
}

/// The diagnostics only a composition of the usable files has.
fn composed(files: &[File]) -> Vec<Found> {
    // Every usable file has its owned reading when composing.
    let usable: Vec<(usize, &File, &Map<String, Value>)> = files
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let root = f.loaded.as_ref().ok()?.root.as_ref()?;
            Some((i, f, root))
        })
        .collect();
    let sources: Vec<Source<'_>> = usable
        .iter()
        .map(|(_, file, root)| Source {
            name: &file.display,
            stack: root,
        })
        .collect();
    let file_of = |source: Option<usize>, default: usize| {
        source
            .and_then(|s| usable.get(s))
            .map_or(default, |(i, _, _)| *i)
    };
    compose(&sources)
        .diagnostics
        .into_iter()
        .map(|diagnostic| {
            let file = file_of(diagnostic.source, 0);
            let related_files = diagnostic
                .related
                .iter()
                .map(|r| file_of(r.source, file))
                .collect();
            Found {
                file,
                diagnostic,
                related_files,
            }
        })
        .collect()
}

/// One location request: a path (its key or its value) in one file.
struct Request {
    file: usize,
    path: JsonPath,
    key: bool,
}

/// Finds every diagnostic's span (and its related spans) with one scan per
/// file, falling back to the nearest enclosing value for paths that do not
/// exist (a missing key points at its record).
fn locate(files: &[File], found: Vec<Found>) -> Vec<Located> {
    let mut requests = Vec::new();
    for f in &found {
        requests.push(Request {
            file: f.file,
            path: f.diagnostic.path.clone(),
            key: f.diagnostic.anchor == Anchor::Key,
        });
        for (r, &file) in f.diagnostic.related.iter().zip(&f.related_files) {
            requests.push(Request {
                file,
                path: r.path.clone(),
                key: false,
            });
        }
    }
    let spans = resolve(files, &requests);
    let mut spans = spans.into_iter();
    let mut next = || {
        spans.next().flatten().unwrap_or(Span {
            start: 0,
            end: 0,
            line: 1,
            column: 1,
        })
    };
    found
        .into_iter()
        .map(|found| {
            let span = next();
            let related = found.diagnostic.related.iter().map(|_| next()).collect();
            Located {
                found,
                span,
                related,
            }
        })
        .collect()
}

/// Answers every request, walking up to ancestors for the unanswered.
fn resolve(files: &[File], requests: &[Request]) -> Vec<Option<Span>> {
    let mut answers: Vec<Option<Span>> = vec![None; requests.len()];
    for (i, file) in files.iter().enumerate() {
        let Ok(loaded) = &file.loaded else { continue };
        let index = SourceIndex::new(loaded.content.text());
        let mine: Vec<usize> = (0..requests.len())
            .filter(|&r| requests.get(r).is_some_and(|q| q.file == i))
            .collect();
        let (keys, values): (Vec<usize>, Vec<usize>) = mine
            .iter()
            .partition(|&&r| requests.get(r).is_some_and(|q| q.key));
        let paths = |ids: &[usize]| -> Vec<JsonPath> {
            ids.iter()
                .filter_map(|&r| requests.get(r).map(|q| q.path.clone()))
                .collect()
        };
        for (&r, span) in keys.iter().zip(index.locate_keys_many(&paths(&keys))) {
            if let Some(slot) = answers.get_mut(r) {
                *slot = span;
            }
        }
        for (&r, span) in values.iter().zip(index.locate_many(&paths(&values))) {
            if let Some(slot) = answers.get_mut(r) {
                *slot = span;
            }
        }
        // Fallback: every ancestor of each unanswered path, in one pass.
        let missing: Vec<usize> = mine
            .into_iter()
            .filter(|&r| answers.get(r).is_some_and(Option::is_none))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let mut ancestors = Vec::new();
        let mut owners = Vec::new();
        for &r in &missing {
            let Some(q) = requests.get(r) else { continue };
            let segments = q.path.segments();
            for depth in (0..segments.len()).rev() {
                ancestors.push(JsonPath::from(
                    segments.get(..depth).unwrap_or_default().to_vec(),
                ));
                owners.push(r);
            }
        }
        for (&r, span) in owners.iter().zip(index.locate_many(&ancestors)) {
            if let Some(slot @ None) = answers.get_mut(r) {
                *slot = span;
            }
        }
    }
    answers
}

/// A source line around a span, clipped to a window for very long lines.
struct Excerpt {
    text: String,
    /// Characters before the marker.
    marker_at: usize,
    /// Width of the marker in characters.
    marker_len: usize,
}

/// Lines up to this many characters are shown whole.
const WHOLE_LINE: usize = 160;
/// Characters kept before and after the marker on longer lines.
const WINDOW_BEFORE: usize = 60;
const WINDOW_AFTER: usize = 100;

fn excerpt(text: &str, span: &Span) -> Option<Excerpt> {
    let start = span.start.min(text.len());
    if !text.is_char_boundary(start) {
        return None;
    }
    let (before_all, after_all) = text.split_at(start);
    // Bounded walks out from the span, never to the ends of the line: a
    // minified file is one line of many megabytes, and a walk over the
    // whole line per diagnostic made the output quadratic.
    let mut before: Vec<char> = before_all
        .chars()
        .rev()
        .take_while(|&c| c != '\n')
        .take(WHOLE_LINE + 1)
        .collect();
    before.reverse();
    let mut after: Vec<char> = after_all
        .chars()
        .take_while(|&c| c != '\n')
        .take(WHOLE_LINE + 2)
        .collect();
    if after.len() <= WHOLE_LINE + 1 && after.last() == Some(&'\r') {
        // The line's end, within the window: not part of the line.
        after.pop();
    }
    after.truncate(WHOLE_LINE + 1);
    let (keep_before, keep_after) = if before.len() + after.len() <= WHOLE_LINE {
        (before.len(), after.len())
    } else {
        (
            before.len().min(WINDOW_BEFORE),
            after.len().min(WINDOW_AFTER),
        )
    };
    let clipped_before = keep_before < before.len();
    let clipped_after = keep_after < after.len();
    let before = before.get(before.len() - keep_before..).unwrap_or_default();
    let after = after.get(..keep_after).unwrap_or_default();

    let span_chars = text
        .get(start..span.end.clamp(start, text.len()))
        .map_or(1, |s| s.chars().take(WHOLE_LINE).count());
    // One character for one: the marker below stays under the span.
    let visible = |c: &char| match c {
        '\t' => ' ',
        c if matches!(line_safe(c.encode_utf8(&mut [0; 4])), Cow::Owned(_)) => '\u{FFFD}',
        c => *c,
    };
    let mut line = String::new();
    if clipped_before {
        line.push('…');
    }
    line.extend(before.iter().map(visible));
    line.extend(after.iter().map(visible));
    if clipped_after {
        line.push('…');
    }
    Some(Excerpt {
        text: line,
        marker_at: before.len() + usize::from(clipped_before),
        marker_len: span_chars.clamp(1, after.len().max(1)),
    })
}

fn counts<'a>(located: impl Iterator<Item = &'a Located>) -> (usize, usize) {
    located.fold((0, 0), |(e, w), l| match l.found.diagnostic.severity {
        Severity::Error => (e + 1, w),
        Severity::Warning => (e, w + 1),
    })
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn write_human(out: &mut impl Write, files: &[File], located: &[Located]) -> io::Result<()> {
    for (i, file) in files.iter().enumerate() {
        if let Err(unusable) = &file.loaded {
            let at = unusable
                .position
                .map(|(l, c)| format!(":{l}:{c}"))
                .unwrap_or_default();
            writeln!(
                out,
                "error: {}{at}: {}",
                line_safe(&file.display),
                line_safe(&unusable.message)
            )?;
            writeln!(
                out,
                "  = this file is unusable input: fix it and run again\n"
            )?;
            continue;
        }
        for l in located.iter().filter(|l| l.found.file == i) {
            write_one(out, files, l)?;
        }
    }
    let mut total = (0, 0);
    let mut unusable = 0;
    for (i, file) in files.iter().enumerate() {
        if file.loaded.is_err() {
            unusable += 1;
            writeln!(out, "{}: unusable", line_safe(&file.display))?;
            continue;
        }
        let (e, w) = counts(located.iter().filter(|l| l.found.file == i));
        total = (total.0 + e, total.1 + w);
        if e + w == 0 {
            writeln!(out, "{}: ok", line_safe(&file.display))?;
        } else {
            writeln!(
                out,
                "{}: {}, {}",
                line_safe(&file.display),
                plural(e, "error"),
                plural(w, "warning")
            )?;
        }
    }
    if files.len() > 1 {
        let mut line = format!(
            "{} checked: {}, {}",
            plural(files.len(), "file"),
            plural(total.0, "error"),
            plural(total.1, "warning")
        );
        if unusable > 0 {
            line.push_str(&format!(", {unusable} unusable"));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn write_one(out: &mut impl Write, files: &[File], l: &Located) -> io::Result<()> {
    let d = &l.found.diagnostic;
    let Some(file) = files.get(l.found.file) else {
        return Ok(());
    };
    // Messages, paths and file names carry names from the documents (and
    // the command line): each is escaped, so none can drive the terminal
    // or end its line and forge the next.
    writeln!(out, "{}[{}]: {}", d.severity, d.id, line_safe(&d.message))?;
    let gutter = l.span.line.to_string().len();
    let pad = " ".repeat(gutter);
    writeln!(
        out,
        "{pad}--> {}:{}:{}",
        line_safe(&file.display),
        l.span.line,
        l.span.column
    )?;
    if let Some(ex) = file
        .loaded
        .as_ref()
        .ok()
        .and_then(|loaded| excerpt(loaded.content.text(), &l.span))
    {
        writeln!(out, "{pad} |")?;
        writeln!(out, "{} | {}", l.span.line, ex.text)?;
        writeln!(
            out,
            "{pad} | {}{}",
            " ".repeat(ex.marker_at),
            "^".repeat(ex.marker_len)
        )?;
    }
    if !d.path.is_root() {
        writeln!(out, "{pad} = at: {}", line_safe(&d.path.to_string()))?;
    }
    writeln!(out, "{pad} = fix: {}", line_safe(&d.fix))?;
    for ((r, span), &rf) in d.related.iter().zip(&l.related).zip(&l.found.related_files) {
        let name = files.get(rf).map_or("?", |f| f.display.as_str());
        writeln!(
            out,
            "{pad} = note: {} ({}:{}:{}, {})",
            line_safe(&r.message),
            line_safe(name),
            span.line,
            span.column,
            line_safe(&r.path.to_string())
        )?;
    }
    writeln!(out)
}

/// The JSON report, written as `terminal::to_writer_pretty` writes the
/// whole report as one value, but a diagnostic at a time: a stack with a
/// hundred thousand problems is not held a second time as a JSON tree.
fn write_json(
    out: &mut impl Write,
    files: &[File],
    located: &[Located],
    compose: bool,
) -> io::Result<()> {
    let file_name = |i: usize| files.get(i).map_or("", |f| f.display.as_str());
    let (file_reports, summary) = file_reports(files, located);
    write!(
        out,
        "{{\n  \"version\": 1,\n  \"compose\": {compose},\n  \"files\": "
    )?;
    write_nested(&mut *out, &Value::Array(file_reports), 1)?;
    out.write_all(b",\n  \"diagnostics\": ")?;
    let diagnostics = located.iter().map(|l| diagnostic_json(l, &file_name));
    terminal::to_writer_pretty_array_nested(&mut *out, diagnostics, 1).map_err(io::Error::other)?;
    out.write_all(b",\n  \"summary\": ")?;
    write_nested(&mut *out, &summary, 1)?;
    out.write_all(b"\n}\n")
}

/// Each file's entry of the JSON report, and the report's summary.
fn file_reports(files: &[File], located: &[Located]) -> (Vec<Value>, Value) {
    let mut total = (0, 0);
    let reports = files
        .iter()
        .enumerate()
        .map(|(i, file)| match &file.loaded {
            Err(unusable) => json!({
                "file": file.display,
                "status": "unusable",
                "errors": 0,
                "warnings": 0,
                "error": {
                    "message": unusable.message,
                    "line": unusable.position.map(|p| p.0),
                    "column": unusable.position.map(|p| p.1),
                }
            }),
            Ok(_) => {
                let (e, w) = counts(located.iter().filter(|l| l.found.file == i));
                total = (total.0 + e, total.1 + w);
                json!({
                    "file": file.display,
                    "status": if e > 0 { "invalid" } else { "ok" },
                    "errors": e,
                    "warnings": w,
                })
            }
        })
        .collect();
    let summary = json!({
        "files": files.len(),
        "errors": total.0,
        "warnings": total.1,
        "unusable": files.iter().filter(|f| f.loaded.is_err()).count(),
    });
    (reports, summary)
}

/// Writes `value` `depth` levels deep in the report (see
/// [`terminal::to_writer_pretty_nested`]).
fn write_nested(out: &mut impl Write, value: &Value, depth: usize) -> io::Result<()> {
    terminal::to_writer_pretty_nested(out, value, depth).map_err(io::Error::other)
}

/// One diagnostic of the JSON report.
fn diagnostic_json<'f>(l: &Located, file_name: &impl Fn(usize) -> &'f str) -> Value {
    let d = &l.found.diagnostic;
    let related: Vec<Value> = d
        .related
        .iter()
        .zip(&l.related)
        .zip(&l.found.related_files)
        .map(|((r, span), &rf)| {
            json!({
                "file": file_name(rf),
                "path": r.path.to_string(),
                "line": span.line,
                "column": span.column,
                "message": r.message,
            })
        })
        .collect();
    json!({
        "id": d.id.as_str(),
        "severity": d.severity.as_str(),
        "file": file_name(l.found.file),
        "path": d.path.to_string(),
        "line": l.span.line,
        "column": l.span.column,
        "start": l.span.start,
        "end": l.span.end,
        "message": d.message,
        "fix": d.fix,
        "related": related,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report as one JSON value, written whole: what [`write_json`]
    /// must write a diagnostic at a time.
    fn whole_report(files: &[File], located: &[Located], compose: bool) -> Vec<u8> {
        let file_name = |i: usize| files.get(i).map_or("", |f| f.display.as_str());
        let (reports, summary) = file_reports(files, located);
        let diagnostics: Vec<Value> = located
            .iter()
            .map(|l| diagnostic_json(l, &file_name))
            .collect();
        let report = json!({
            "version": 1,
            "compose": compose,
            "files": reports,
            "diagnostics": diagnostics,
            "summary": summary,
        });
        let mut out = Vec::new();
        terminal::to_writer_pretty(&mut out, &report).unwrap();
        out.push(b'\n');
        out
    }

    #[test]
    fn the_streamed_report_is_the_whole_one() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let broken = root.join("examples/broken-stack.json");
        let todo = root.join("examples/todo-app.json");
        let twice = write(
            "twice.json",
            r#"{"skills": [{"name": "s", "label": "S", "tools": []}, {"name": "s", "label": "T\u0007", "tools": []}]}"#,
        );
        let clean = write("clean.json", r#"{"name": "ok"}"#);
        let bad = write("bad.json", "{ \"a\": ");
        let cases: Vec<(Vec<PathBuf>, bool)> = vec![
            (vec![clean.clone()], false),
            (vec![broken.clone()], false),
            (vec![twice.clone(), broken.clone(), bad.clone()], false),
            (vec![twice.clone(), twice.clone(), todo.clone()], true),
            (vec![bad.clone()], true),
            (vec![], false),
        ];
        for (paths, compose) in cases {
            let (files, located) = gather(&paths, compose);
            let mut streamed = Vec::new();
            write_json(&mut streamed, &files, &located, compose).unwrap();
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                String::from_utf8(whole_report(&files, &located, compose)).unwrap(),
                "{paths:?} compose {compose}"
            );
        }
    }

    fn span_of(text: &str, needle: &str) -> Span {
        let start = text.find(needle).unwrap();
        let (line, column) = objectstack_spec::parse::line_column_at(text, start);
        Span {
            start,
            end: start + needle.len(),
            line,
            column,
        }
    }

    #[test]
    fn excerpt_shows_normal_lines_whole() {
        let text = format!("{{\n  \"{}\": \"xyz\"\n}}", "k".repeat(100));
        let ex = excerpt(&text, &span_of(&text, "\"xyz\"")).unwrap();
        assert!(!ex.text.contains('…'));
        assert_eq!(ex.marker_at, 106);
    }

    #[test]
    fn excerpt_marks_the_span() {
        let text = "{\n\t\"a\": \"xyz\"\n}";
        let ex = excerpt(text, &span_of(text, "\"xyz\"")).unwrap();
        assert_eq!(ex.text, " \"a\": \"xyz\"");
        assert_eq!((ex.marker_at, ex.marker_len), (6, 5));
    }

    #[test]
    fn excerpt_clips_long_lines() {
        let text = format!(
            "{{\"pad\": \"{}\", \"k\": 1, \"tail\": \"{}\"}}",
            "p".repeat(500),
            "t".repeat(500)
        );
        let ex = excerpt(&text, &span_of(&text, "\"k\"")).unwrap();
        assert!(
            ex.text.starts_with('…') && ex.text.ends_with('…'),
            "{}",
            ex.text
        );
        assert!(ex.text.chars().count() <= WINDOW_BEFORE + WINDOW_AFTER + 2);
        let marked: String = ex
            .text
            .chars()
            .skip(ex.marker_at)
            .take(ex.marker_len)
            .collect();
        assert_eq!(marked, "\"k\"");
    }

    #[test]
    fn binary_detection() {
        assert!(is_binary(b"\x7fELF\x00\x01"));
        assert!(!is_binary(b"{}"));
    }
}
