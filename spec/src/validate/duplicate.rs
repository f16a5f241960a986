//! Keys written twice in one object ([`DiagnosticId::DuplicateKey`]).
//!
//! `JSON.parse` keeps a repeated key's last value silently, so
//! `requiresConfirmation: true, ..., requiresConfirmation: false` turns the
//! human gate off while the first line says it is on. The borrowed parser
//! notes such keys on the document's root ([`Map::duplicates`]); a
//! document without any pays nothing here. The objects are found by one
//! walk of the tree, and every occurrence of each key by one scan of the
//! text ([`SourceIndex::locate_key_occurrences`]).

use std::collections::HashMap;

use super::check::Cx;
use super::{Diagnostic, DiagnosticId};
use crate::json::{Map, Value};
use crate::path::{JsonPath, Segment};
use crate::source::{SourceIndex, Span};

/// Reports every key written more than once in one object of `document`.
pub(super) fn check(cx: &mut Cx, document: &Map<'_>) {
    let Some(duplicates) = document.duplicates() else {
        return;
    };
    let mut wanted: HashMap<usize, Vec<&str>> = HashMap::new();
    for d in duplicates.keys {
        wanted.entry(d.object.identity()).or_default().push(d.key);
    }
    // Objects inside a value that was itself overwritten are not in the
    // tree; the key that overwrote it is reported instead.
    let mut found: Vec<(JsonPath, &str)> = Vec::new();
    walk(document, |map, path| {
        if let Some(keys) = wanted.remove(&map.identity()) {
            let object = path();
            found.extend(keys.into_iter().map(|k| (object.clone(), k)));
        }
        !wanted.is_empty()
    });
    let paths: Vec<JsonPath> = found.iter().map(|(object, key)| object.key(key)).collect();
    let occurrences = SourceIndex::new(duplicates.text).locate_key_occurrences(&paths);
    for (((object, key), path), at) in found.iter().zip(paths).zip(occurrences) {
        cx.push(diagnostic(object, key, path, &at));
    }
}

fn diagnostic(object: &JsonPath, key: &str, path: JsonPath, at: &[Span]) -> Diagnostic {
    let times = match at.len() {
        0..=2 => "twice".to_owned(),
        n => format!("{n} times"),
    };
    let place = if object.is_root() {
        "at the top level".to_owned()
    } else {
        format!("in `{object}`")
    };
    let positions: Vec<String> = at
        .iter()
        .map(|s| format!("{}:{}", s.line, s.column))
        .collect();
    let positions = match positions.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!(" (at {} and {last})", rest.join(", ")),
        _ => String::new(),
    };
    Diagnostic::new(
        DiagnosticId::DuplicateKey,
        path,
        format!("key `{key}` is written {times} {place}{positions}; only the last value is read"),
        "remove one; the last one wins, as JSON.parse does",
    )
    .at_key()
}

/// One container being walked: the next entry or element to visit.
enum Frame<'a> {
    Object(&'a Map<'a>, usize),
    Array(&'a [Value<'a>], usize),
}

/// Calls `visit(map, path)` for every object of the tree, root first, in
/// document order, until it returns `false`; `path()` builds the object's
/// raw path (only for the objects that need one). Iterative, so depth
/// cannot overflow the stack.
fn walk<'a>(root: &'a Map<'a>, mut visit: impl FnMut(&'a Map<'a>, &dyn Fn() -> JsonPath) -> bool) {
    let mut segments: Vec<Segment> = Vec::new();
    let path_of = |segments: &[Segment]| {
        segments
            .iter()
            .fold(JsonPath::root(), |path, s| path.with(s.clone()))
    };
    if !visit(root, &|| JsonPath::root()) {
        return;
    }
    let mut stack = vec![Frame::Object(root, 0)];
    while let Some(frame) = stack.last_mut() {
        let (segment, child) = match frame {
            Frame::Object(map, next) => {
                let Some((key, value)) = map.entry_at(*next) else {
                    stack.pop();
                    segments.pop();
                    continue;
                };
                *next += 1;
                if !matches!(value, Value::Object(_) | Value::Array(_)) {
                    continue;
                }
                (Segment::Key(key.to_owned()), value)
            }
            Frame::Array(items, next) => {
                let at = *next;
                let Some(value) = items.get(at) else {
                    stack.pop();
                    segments.pop();
                    continue;
                };
                *next += 1;
                (Segment::Index(at), value)
            }
        };
        match child {
            Value::Object(map) => {
                segments.push(segment);
                if !visit(map, &|| path_of(&segments)) {
                    return;
                }
                stack.push(Frame::Object(map, 0));
            }
            Value::Array(items) => {
                segments.push(segment);
                stack.push(Frame::Array(items, 0));
            }
            _ => {}
        }
    }
}
