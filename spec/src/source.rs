//! Finding where a JSON value sits in its source text.
//!
//! Diagnostics carry [`JsonPath`]s; people want `file:line:column`.
//! [`SourceIndex`] maps *raw* paths (real array positions, real object
//! keys) back to byte ranges and 1-based positions in the text the document
//! was parsed from.
//!
//! The scanner is iterative (no recursion, so nesting depth cannot overflow
//! the stack), never panics on any text, and answers many paths in one pass:
//! the paths are folded into a trie and every subtree no path enters is
//! skipped by a fast bracket-and-string counter. On text that is not valid
//! JSON the answers are best effort: a structural fault on the way to a
//! path stops the scan there (later paths are `None`), while faults inside
//! skipped subtrees go unnoticed. Validate with [`crate::parse`] first.
//!
//! When an object repeats a key, the *last* occurrence is reported, which is
//! the value a JSON parser keeps; [`SourceIndex::locate_key_occurrences`]
//! lists every occurrence.

use std::collections::HashMap;

use crate::path::{JsonPath, Segment};

/// Byte range and 1-based position of a JSON value in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Byte offset of the value's first byte.
    pub start: usize,
    /// Byte offset just past the value's last byte (strings include their
    /// quotes, containers their brackets).
    pub end: usize,
    /// 1-based line of `start`.
    pub line: usize,
    /// 1-based column of `start`, counted in characters.
    pub column: usize,
}

/// An index over one JSON text that answers "where is this path?".
#[derive(Debug, Clone, Copy)]
pub struct SourceIndex<'a> {
    text: &'a str,
}

/// A trie of the requested paths.
#[derive(Default)]
struct Node {
    keys: HashMap<String, usize>,
    indices: HashMap<usize, usize>,
    /// Which requested paths end here.
    targets: Vec<usize>,
}

impl Node {
    fn has_children(&self) -> bool {
        !self.keys.is_empty() || !self.indices.is_empty()
    }
}

struct Trie {
    nodes: Vec<Node>,
}

impl Trie {
    fn build(paths: &[JsonPath]) -> Self {
        let mut nodes = vec![Node::default()];
        for (target, path) in paths.iter().enumerate() {
            let mut at = 0;
            for segment in path.segments() {
                let next_id = nodes.len();
                let Some(node) = nodes.get_mut(at) else { break };
                let child = match segment {
                    Segment::Key(k) => *node.keys.entry(k).or_insert(next_id),
                    Segment::Index(i) => *node.indices.entry(i).or_insert(next_id),
                };
                if child == next_id {
                    nodes.push(Node::default());
                }
                at = child;
            }
            if let Some(node) = nodes.get_mut(at) {
                node.targets.push(target);
            }
        }
        Self { nodes }
    }

    fn node(&self, id: usize) -> Option<&Node> {
        self.nodes.get(id)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

struct Frame {
    container: Container,
    node: usize,
    start: usize,
    key: Option<(usize, usize)>,
    index: usize,
}

/// Where one path was found: the value's byte range and, for an object
/// member, its key's byte range.
#[derive(Clone, Copy)]
struct Found {
    value: (usize, usize),
    key: Option<(usize, usize)>,
}

/// A member's value start, its trie node and its key's byte range.
type Member = (usize, Option<usize>, Option<(usize, usize)>);

/// What the scanner expects next.
enum Step {
    /// A value at the cursor, belonging to this trie node (if any), with
    /// the byte range of its key when it is an object member.
    Value(Option<usize>, Option<(usize, usize)>),
    /// The end of a value: a comma, a closing bracket, or the end of text.
    After,
}

impl<'a> SourceIndex<'a> {
    /// Wraps a JSON text. Cheap: nothing is scanned until asked.
    pub fn new(text: &'a str) -> Self {
        Self { text }
    }

    /// The text this index reads.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// Where the value at `path` (a raw path) is, or `None` when the path
    /// does not exist in the text.
    pub fn locate(&self, path: &JsonPath) -> Option<Span> {
        self.locate_many(std::slice::from_ref(path))
            .into_iter()
            .next()
            .flatten()
    }

    /// Where each of `paths` is, in the order given, in one pass over the
    /// text.
    pub fn locate_many(&self, paths: &[JsonPath]) -> Vec<Option<Span>> {
        let found = self.scan(paths);
        self.spans(found.iter().map(|f| f.map(|f| f.value)))
    }

    /// Where the *key* of each path's last segment is written (quotes
    /// included), in one pass; `None` when the path does not exist or does
    /// not end in an object key. Diagnostics about a key itself (unknown,
    /// retired) point here rather than at the value.
    pub fn locate_keys_many(&self, paths: &[JsonPath]) -> Vec<Option<Span>> {
        let found = self.scan(paths);
        self.spans(found.iter().map(|f| f.and_then(|f| f.key)))
    }

    /// Where the key of each path's last segment is written, every time
    /// the object holding it writes it, in text order, in one pass. When a
    /// key on the way is itself repeated, the occurrences are those in the
    /// object a JSON parser keeps (the last one). Empty when the path does
    /// not exist or does not end in an object key.
    pub fn locate_key_occurrences(&self, paths: &[JsonPath]) -> Vec<Vec<Span>> {
        // Per path: the start of the object instance holding the keys
        // found so far, and their ranges.
        let mut found: Vec<(usize, Vec<(usize, usize)>)> = vec![(0, Vec::new()); paths.len()];
        self.scan_with(paths, |target, parent, hit| {
            let (Some(slot), Some(key)) = (found.get_mut(target), hit.key) else {
                return;
            };
            if slot.0 != parent {
                *slot = (parent, Vec::new());
            }
            slot.1.push(key);
        });
        let ranges: Vec<Option<(usize, usize)>> = found
            .iter()
            .flat_map(|(_, keys)| keys.iter().copied().map(Some))
            .collect();
        let mut spans = self.spans(ranges.iter().copied()).into_iter().flatten();
        found
            .iter()
            .map(|(_, keys)| spans.by_ref().take(keys.len()).collect())
            .collect()
    }

    /// The text of 1-based line `line`, without its line break.
    pub fn line_text(&self, line: usize) -> Option<&'a str> {
        let text = self.text.split('\n').nth(line.checked_sub(1)?)?;
        Some(text.strip_suffix('\r').unwrap_or(text))
    }

    /// Spans of byte ranges already known (for example from a parsed
    /// document whose strings borrow from this text), every position
    /// computed in one walk. A range that does not fit the text, or does
    /// not start on a character boundary, is `None`.
    pub fn spans_of(&self, ranges: &[Option<(usize, usize)>]) -> Vec<Option<Span>> {
        let text = self.text;
        self.spans(ranges.iter().map(|r| {
            r.filter(|&(start, end)| {
                start <= end && end <= text.len() && text.is_char_boundary(start)
            })
        }))
    }

    /// Turns byte ranges into spans, computing every position in one walk.
    /// The ranges are read twice rather than copied: a large stack locates
    /// tens of thousands of findings.
    fn spans(
        &self,
        ranges: impl Iterator<Item = Option<(usize, usize)>> + Clone,
    ) -> Vec<Option<Span>> {
        let mut starts: Vec<usize> = ranges.clone().flatten().map(|(s, _)| s).collect();
        starts.sort_unstable();
        starts.dedup();
        let positions = positions_of(self.text, &starts);
        ranges
            .map(|range| {
                let (start, end) = range?;
                let at = starts.binary_search(&start).ok()?;
                let &(line, column) = positions.get(at)?;
                Some(Span {
                    start,
                    end,
                    line,
                    column,
                })
            })
            .collect()
    }

    /// The byte ranges of every path (last occurrence wins).
    fn scan(&self, paths: &[JsonPath]) -> Vec<Option<Found>> {
        let mut found = vec![None; paths.len()];
        self.scan_with(paths, |target, _, hit| {
            if let Some(slot) = found.get_mut(target) {
                *slot = Some(hit);
            }
        });
        found
    }

    /// Calls `on_hit(target, parent, found)` for every occurrence of every
    /// path, in text order; `parent` is the byte offset of the container
    /// holding it.
    fn scan_with(&self, paths: &[JsonPath], mut on_hit: impl FnMut(usize, usize, Found)) {
        if paths.is_empty() {
            return;
        }
        let trie = Trie::build(paths);
        let bytes = self.text.as_bytes();
        let mut record = |node: usize, parent: usize, hit: Found| {
            if let Some(n) = trie.node(node) {
                for &t in &n.targets {
                    on_hit(t, parent, hit);
                }
            }
        };
        let mut stack: Vec<Frame> = Vec::new();
        let mut pos = skip_ws(bytes, 0);
        let mut step = Step::Value(Some(0), None);
        loop {
            match step {
                Step::Value(node, key) => {
                    pos = skip_ws(bytes, pos);
                    let Some(&b) = bytes.get(pos) else { break };
                    let descend = node
                        .and_then(|n| trie.node(n))
                        .is_some_and(Node::has_children)
                        && (b == b'{' || b == b'[');
                    match (descend, node) {
                        (true, Some(n)) => {
                            let (container, close) = if b == b'{' {
                                (Container::Object, b'}')
                            } else {
                                (Container::Array, b']')
                            };
                            stack.push(Frame {
                                container,
                                node: n,
                                start: pos,
                                key,
                                index: 0,
                            });
                            let after = skip_ws(bytes, pos + 1);
                            if bytes.get(after) == Some(&close) {
                                pos = after;
                                step = Step::After;
                            } else {
                                match self.enter_member(&trie, &stack, bytes, after) {
                                    Some((next_pos, child, key)) => {
                                        pos = next_pos;
                                        step = Step::Value(child, key);
                                    }
                                    None => break,
                                }
                            }
                        }
                        _ => {
                            let Some(end) = skip_value(bytes, pos) else {
                                break;
                            };
                            if let Some(n) = node {
                                let parent = stack.last().map_or(0, |f| f.start);
                                record(
                                    n,
                                    parent,
                                    Found {
                                        value: (pos, end),
                                        key,
                                    },
                                );
                            }
                            pos = end;
                            step = Step::After;
                        }
                    }
                }
                Step::After => {
                    let Some(frame) = stack.last_mut() else { break };
                    pos = skip_ws(bytes, pos);
                    match bytes.get(pos) {
                        Some(b',') => {
                            frame.index += 1;
                            match self.enter_member(&trie, &stack, bytes, pos + 1) {
                                Some((next_pos, child, key)) => {
                                    pos = next_pos;
                                    step = Step::Value(child, key);
                                }
                                None => break,
                            }
                        }
                        Some(b'}') | Some(b']') => {
                            pos += 1;
                            if let Some(done) = stack.pop() {
                                let parent = stack.last().map_or(0, |f| f.start);
                                record(
                                    done.node,
                                    parent,
                                    Found {
                                        value: (done.start, pos),
                                        key: done.key,
                                    },
                                );
                            }
                            step = Step::After;
                        }
                        _ => break,
                    }
                }
            }
        }
    }

    /// Reads what precedes a member value inside the top frame (a key and
    /// a colon for objects, nothing for arrays) starting at `pos`; returns
    /// where the value starts, its trie node and its key's byte range.
    fn enter_member(
        &self,
        trie: &Trie,
        stack: &[Frame],
        bytes: &[u8],
        pos: usize,
    ) -> Option<Member> {
        let frame = stack.last()?;
        let node = trie.node(frame.node)?;
        let pos = skip_ws(bytes, pos);
        match frame.container {
            Container::Array => Some((pos, node.indices.get(&frame.index).copied(), None)),
            Container::Object => {
                if bytes.get(pos) != Some(&b'"') {
                    return None;
                }
                let key_end = skip_string(bytes, pos)?;
                let raw = self.text.get(pos..key_end)?;
                let child = match raw.get(1..raw.len().saturating_sub(1)) {
                    Some(inner) if !inner.contains('\\') => node.keys.get(inner).copied(),
                    // A lone surrogate escape reads as U+FFFD, as the
                    // document itself was read.
                    _ => serde_json::from_str::<String>(raw)
                        .ok()
                        .or_else(|| {
                            let patched = crate::parse::patch_lone_surrogates(raw)?;
                            serde_json::from_str::<String>(&patched).ok()
                        })
                        .and_then(|k| node.keys.get(&k).copied()),
                };
                let colon = skip_ws(bytes, key_end);
                if bytes.get(colon) != Some(&b':') {
                    return None;
                }
                Some((colon + 1, child, Some((pos, key_end))))
            }
        }
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Skips JSON whitespace (and a byte-order mark) from `pos`.
fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    loop {
        match bytes.get(pos) {
            Some(&b) if is_ws(b) => pos += 1,
            Some(0xEF) if bytes.get(pos + 1..pos + 3) == Some(&[0xBB, 0xBF]) => pos += 3,
            _ => return pos,
        }
    }
}

/// The end (past the closing quote) of the string starting at `pos`.
fn skip_string(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos + 1;
    loop {
        match bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The end of the value starting at `pos` (which is not whitespace), or
/// `None` when the text ends inside it or no value starts there.
fn skip_value(bytes: &[u8], pos: usize) -> Option<usize> {
    match *bytes.get(pos)? {
        b'"' => skip_string(bytes, pos),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = pos;
            loop {
                match bytes.get(i)? {
                    b'"' => {
                        i = skip_string(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        b',' | b':' | b'}' | b']' => None,
        _ => {
            let mut i = pos;
            while let Some(&b) = bytes.get(i) {
                if is_ws(b) || matches!(b, b',' | b'}' | b']' | b':' | b'"' | b'{' | b'[') {
                    break;
                }
                i += 1;
            }
            (i > pos).then_some(i)
        }
    }
}

/// The characters in UTF-8 `bytes`: every byte that does not continue a
/// multi-byte sequence.
fn chars_in(bytes: &[u8]) -> usize {
    // Counted in bytes a chunk of 255 at a time (no chunk can overflow
    // one), so the compiler adds sixteen or more bytes per instruction
    // where a `usize` count widened each to 64 bits: 4x faster over a
    // one-line document of many megabytes.
    bytes
        .chunks(255)
        .map(|chunk| {
            let starts = chunk
                .iter()
                .fold(0u8, |n, &b| n.wrapping_add(u8::from(b & 0xC0 != 0x80)));
            usize::from(starts)
        })
        .sum()
}

/// Texts shorter than this are walked on one thread by [`positions_of`].
const WALK_PARTS_FROM: usize = 4 << 20;

/// The 1-based (line, column) of each offset in `sorted` (ascending, each
/// on a character boundary), in one walk over the text: on several threads
/// for a large text, each walking a stretch and counting from its start,
/// then adding what the stretches before it hold.
fn positions_of(text: &str, sorted: &[usize]) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let parts = if last_offset(bytes, sorted) < WALK_PARTS_FROM {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    };
    positions_in_parts(bytes, sorted, parts)
}

/// Where the walk for `sorted` ends: the last offset (the text is not
/// read past it).
fn last_offset(bytes: &[u8], sorted: &[usize]) -> usize {
    sorted.last().map_or(0, |&o| o.min(bytes.len()))
}

/// [`positions_of`] with the text up to the last offset walked in `parts`
/// stretches.
fn positions_in_parts(bytes: &[u8], sorted: &[usize], parts: usize) -> Vec<(usize, usize)> {
    let end = last_offset(bytes, sorted);
    if parts <= 1 {
        return walk(bytes, 0, end, sorted).positions;
    }
    let stretches = stretches(end, sorted, parts);
    let walked: Vec<Walked> = std::thread::scope(|scope| {
        let handles: Vec<_> = stretches
            .iter()
            .skip(1)
            .map(|&(from, to, mine)| {
                std::thread::Builder::new()
                    .name("objectstack-locate".to_owned())
                    .spawn_scoped(scope, move || walk(bytes, from, to, mine))
            })
            .collect();
        let mut walked = Vec::with_capacity(stretches.len());
        if let Some(&(from, to, mine)) = stretches.first() {
            walked.push(walk(bytes, from, to, mine));
        }
        for (handle, &(from, to, mine)) in handles.into_iter().zip(stretches.iter().skip(1)) {
            // A thread the system refused, or one that panicked, is
            // walked here instead.
            match handle.map(|h| h.join()) {
                Ok(Ok(done)) => walked.push(done),
                _ => walked.push(walk(bytes, from, to, mine)),
            }
        }
        walked
    });
    // Each stretch counted from line 1, column 1 at its start: shift it by
    // where that start really is.
    let mut out = Vec::with_capacity(sorted.len());
    let mut start = (1, 1);
    for part in walked {
        out.extend(part.positions.into_iter().map(|at| shifted(start, at)));
        start = shifted(start, part.end);
    }
    out
}

/// The place `(line, column)`, counted from a stretch's start, counted
/// from the text's instead, the stretch starting at `start`: before the
/// stretch's first newline the column continues the line it started in.
fn shifted(start: (usize, usize), (line, column): (usize, usize)) -> (usize, usize) {
    if line == 1 {
        (start.0, start.1 + column - 1)
    } else {
        (start.0 + line - 1, column)
    }
}

/// `parts` stretches `from..to` of `0..end` (`end` the last offset) and
/// the offsets each holds: those before its end, and for the last one
/// also the offsets at `end`.
fn stretches(end: usize, sorted: &[usize], parts: usize) -> Vec<(usize, usize, &[usize])> {
    let mut stretches = Vec::with_capacity(parts);
    let mut rest = sorted;
    for i in 0..parts {
        let (from, last) = (end / parts * i, i + 1 == parts);
        let to = if last { end } else { end / parts * (i + 1) };
        let taken = if last {
            rest.len()
        } else {
            rest.partition_point(|&o| o < to)
        };
        let (mine, later) = rest.split_at(taken);
        rest = later;
        stretches.push((from, to, mine));
    }
    stretches
}

/// What [`walk`] finds, counted from line 1, column 1 at its start.
struct Walked {
    /// Each offset's (line, column).
    positions: Vec<(usize, usize)>,
    /// The (line, column) at the stretch's end.
    end: (usize, usize),
}

/// The positions of the ascending `sorted` (all in `from..=to`), counted
/// from `from`, and the position of `to`.
fn walk(bytes: &[u8], from: usize, to: usize, sorted: &[usize]) -> Walked {
    let mut positions = Vec::with_capacity(sorted.len());
    let mut line = 1;
    // The column of `cursor`, advanced with it, so a long line (a compact
    // one-line document) is walked once, not once per offset.
    let mut column = 1;
    let mut cursor = from;
    for offset in sorted.iter().map(|&o| o.min(to)).chain([to]) {
        if let Some(chunk) = bytes.get(cursor..offset) {
            // Searching and counting, rather than branching per byte: a
            // compact document is one line of many megabytes.
            match memchr::memrchr(b'\n', chunk) {
                Some(last) => {
                    line += memchr::memchr_iter(b'\n', chunk).count();
                    column = 1 + chars_in(chunk.get(last + 1..).unwrap_or_default());
                }
                None => column += chars_in(chunk),
            }
            cursor = offset;
        }
        positions.push((line, column));
    }
    let end = positions.pop().unwrap_or((line, column));
    Walked { positions, end }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::line_column_at;
    use proptest::prelude::*;

    fn p(segments: &[Segment]) -> JsonPath {
        JsonPath::from(segments.to_vec())
    }

    fn k(s: &str) -> Segment {
        Segment::Key(s.to_owned())
    }

    const DOC: &str = "{\n  \"skills\": [\n    null,\n    {\"name\": \"é\", \"tools\": [\"a\", \"b\"]}\n  ],\n  \"x\\u0079\": {\"a\": 1}\n}";

    #[test]
    fn every_occurrence_of_a_repeated_key_is_listed() {
        let text = "{\"a\": {\"x\": 1, \"x\": 2},\n \"a\": {\"x\": 3, \"y\": [], \"\\u0078\": 4}, \"z\": 0}";
        let index = SourceIndex::new(text);
        let found = index.locate_key_occurrences(&[
            p(&[Segment::Key("a".into()), Segment::Key("x".into())]),
            p(&[Segment::Key("a".into())]),
            p(&[Segment::Key("z".into())]),
            p(&[Segment::Key("nope".into())]),
        ]);
        let at = |spans: &Vec<Span>| -> Vec<(usize, usize)> {
            spans.iter().map(|s| (s.line, s.column)).collect()
        };
        // In the kept `a` only (the second), escaped spelling included.
        assert_eq!(at(&found[0]), [(2, 8), (2, 25)]);
        assert_eq!(&text[found[0][1].start..found[0][1].end], "\"\\u0078\"");
        assert_eq!(at(&found[1]), [(1, 2), (2, 2)]);
        assert_eq!(at(&found[2]), [(2, 39)]);
        assert!(found[3].is_empty());
        // The last occurrence is what `locate_keys_many` reports.
        let last =
            index.locate_keys_many(&[p(&[Segment::Key("a".into()), Segment::Key("x".into())])]);
        assert_eq!(last[0], found[0].last().copied());
    }

    #[test]
    fn locates_values_with_positions() {
        let idx = SourceIndex::new(DOC);
        let span = idx
            .locate(&p(&[
                k("skills"),
                Segment::Index(1),
                k("tools"),
                Segment::Index(1),
            ]))
            .unwrap();
        assert_eq!(&DOC[span.start..span.end], "\"b\"");
        assert_eq!((span.line, span.column), (4, 34));
        let name = idx
            .locate(&p(&[k("skills"), Segment::Index(1), k("name")]))
            .unwrap();
        assert_eq!(&DOC[name.start..name.end], "\"é\"");
        let tools = idx
            .locate(&p(&[k("skills"), Segment::Index(1), k("tools")]))
            .unwrap();
        assert_eq!(&DOC[tools.start..tools.end], "[\"a\", \"b\"]");
        // A column after a multibyte character counts characters.
        assert_eq!(tools.column, 28);
    }

    #[test]
    fn root_and_escaped_keys() {
        let idx = SourceIndex::new(DOC);
        let root = idx.locate(&JsonPath::root()).unwrap();
        assert_eq!((root.start, root.end), (0, DOC.len()));
        let xy = idx.locate(&p(&[k("xy"), k("a")])).unwrap();
        assert_eq!(&DOC[xy.start..xy.end], "1");
    }

    #[test]
    fn a_key_with_a_lone_surrogate_escape_is_found_as_it_is_read() {
        let text = r#"{"k\ud800": {"a": 1}}"#;
        let span = SourceIndex::new(text)
            .locate(&p(&[k("k\u{fffd}"), k("a")]))
            .unwrap();
        assert_eq!(&text[span.start..span.end], "1");
    }

    #[test]
    fn missing_paths_are_none() {
        let idx = SourceIndex::new(DOC);
        assert_eq!(idx.locate(&p(&[k("nope")])), None);
        assert_eq!(idx.locate(&p(&[k("skills"), Segment::Index(9)])), None);
        assert_eq!(idx.locate(&p(&[k("skills"), k("name")])), None);
        assert_eq!(idx.locate(&p(&[k("xy"), k("a"), k("deeper")])), None);
    }

    #[test]
    fn duplicate_keys_report_the_last() {
        let text = r#"{"a": 1, "a": [2]}"#;
        let span = SourceIndex::new(text).locate(&p(&[k("a")])).unwrap();
        assert_eq!(&text[span.start..span.end], "[2]");
    }

    #[test]
    fn keys_are_located_too() {
        let idx = SourceIndex::new(DOC);
        let spans = idx.locate_keys_many(&[
            p(&[k("skills"), Segment::Index(1), k("tools")]),
            p(&[k("xy")]),
            p(&[k("skills"), Segment::Index(1)]),
            JsonPath::root(),
        ]);
        let tools = spans[0].unwrap();
        assert_eq!(&DOC[tools.start..tools.end], "\"tools\"");
        assert_eq!((tools.line, tools.column), (4, 19));
        let xy = spans[1].unwrap();
        assert_eq!(&DOC[xy.start..xy.end], "\"x\\u0079\"");
        assert_eq!(spans[2], None);
        assert_eq!(spans[3], None);
    }

    #[test]
    fn many_paths_in_one_pass() {
        let idx = SourceIndex::new(DOC);
        let paths = vec![
            p(&[k("x")]),
            p(&[k("skills"), Segment::Index(0)]),
            p(&[k("skills")]),
            p(&[k("skills"), Segment::Index(0)]),
        ];
        let spans = idx.locate_many(&paths);
        assert_eq!(spans[0], None);
        let null = spans[1].unwrap();
        assert_eq!(&DOC[null.start..null.end], "null");
        assert_eq!(spans[1], spans[3]);
        assert_eq!(spans[2].unwrap().line, 2);
    }

    #[test]
    fn invalid_json_answers_what_came_before() {
        let text = "{\"a\": 1, \"b\" [1, 2], \"c\": 3}";
        let idx = SourceIndex::new(text);
        assert!(idx.locate(&p(&[k("a")])).is_some());
        assert_eq!(idx.locate(&p(&[k("c")])), None);
        for junk in [
            "",
            "{",
            "[",
            "\"",
            "{\"a\"",
            "{\"a\":",
            "]]]",
            "{\"a\\",
            "\u{feff}{}",
        ] {
            let _ = SourceIndex::new(junk).locate_many(&[JsonPath::root(), p(&[k("a")])]);
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 200_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let mut path = JsonPath::root();
        for _ in 0..1000 {
            path = path.index(0);
        }
        let span = SourceIndex::new(&text).locate(&path).unwrap();
        assert_eq!(span.end - span.start, 2 * (depth - 1000));
    }

    #[test]
    fn line_text_strips_line_breaks() {
        let idx = SourceIndex::new("a\r\nb\nc");
        assert_eq!(idx.line_text(1), Some("a"));
        assert_eq!(idx.line_text(3), Some("c"));
        assert_eq!(idx.line_text(0), None);
        assert_eq!(idx.line_text(4), None);
    }

    /// Every path of a parsed value, raw.
    fn all_paths(value: &serde_json::Value, at: JsonPath, out: &mut Vec<JsonPath>) {
        out.push(at.clone());
        match value {
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    all_paths(item, at.index(i), out);
                }
            }
            serde_json::Value::Object(map) => {
                for (key, item) in map {
                    all_paths(item, at.key(key), out);
                }
            }
            _ => {}
        }
    }

    fn arb_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[a-z\"\\\\é😀 ]{0,6}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::from),
                prop::collection::vec(("[a-z\"\\\\ é]{0,4}", inner), 0..5).prop_map(|entries| {
                    serde_json::Value::Object(entries.into_iter().collect())
                }),
            ]
        })
    }

    #[test]
    fn characters_are_counted_across_chunks() {
        for unit in ["a", "é", "€", "😀"] {
            for n in [0, 1, 63, 64, 254, 255, 256, 511, 1000] {
                let text = unit.repeat(n) + "x";
                assert_eq!(chars_in(text.as_bytes()), n + 1, "{unit} x {n}");
            }
        }
        // A chunk boundary inside a character counts it once.
        let text = format!("{}😀{}", "a".repeat(253), "é".repeat(300));
        assert_eq!(chars_in(text.as_bytes()), text.chars().count());
    }

    proptest! {
        #[test]
        fn every_path_points_at_its_value(value in arb_json(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            let mut paths = Vec::new();
            all_paths(&value, JsonPath::root(), &mut paths);
            let spans = SourceIndex::new(&text).locate_many(&paths);
            for (path, span) in paths.iter().zip(spans) {
                let span = span.unwrap();
                let slice = &text[span.start..span.end];
                let parsed: serde_json::Value = serde_json::from_str(slice).unwrap();
                let mut expected = &value;
                for seg in path.segments() {
                    expected = match seg {
                        Segment::Key(key) => &expected[key.as_str()],
                        Segment::Index(i) => &expected[i],
                    };
                }
                prop_assert_eq!(&parsed, expected);
                prop_assert_eq!((span.line, span.column), line_column_at(&text, span.start));
            }
        }

        #[test]
        fn a_text_walked_in_stretches_gives_each_offset_its_line_and_column(
            text in "[a\né\n😀 ]{0,80}",
            picks in prop::collection::vec(0usize..100, 0..12),
            parts in 1usize..6,
        ) {
            // Character boundaries, ascending, repeats and the very end
            // included (an offset may sit exactly on a stretch's bound).
            let mut sorted: Vec<usize> = picks
                .iter()
                .map(|&p| p * text.len() / 99)
                .filter(|&o| text.is_char_boundary(o))
                .collect();
            sorted.sort_unstable();
            let got = positions_in_parts(text.as_bytes(), &sorted, parts);
            // The stretches tile the text up to the last offset and no
            // further, each holding the offsets that fall in it.
            let end = sorted.last().copied().unwrap_or(0);
            prop_assert_eq!(last_offset(text.as_bytes(), &sorted), end);
            let cut = stretches(end, &sorted, parts);
            let mut next = 0;
            for &(from, to, mine) in &cut {
                prop_assert_eq!(from, next);
                prop_assert!(mine.iter().all(|&o| from <= o && o <= to));
                next = to;
            }
            prop_assert_eq!(next, end);
            prop_assert_eq!(cut.iter().map(|c| c.2.len()).sum::<usize>(), sorted.len());
            let expected: Vec<(usize, usize)> =
                sorted.iter().map(|&o| line_column_at(&text, o)).collect();
            prop_assert_eq!(got, expected);
        }

        #[test]
        fn never_panics_on_any_text(text in "\\PC{0,64}", keys in prop::collection::vec("[a-z]{0,2}", 0..4)) {
            let mut path = JsonPath::root();
            for (i, key) in keys.iter().enumerate() {
                path = if i % 2 == 0 { path.key(key) } else { path.index(i) };
            }
            let _ = SourceIndex::new(&text).locate_many(&[path, JsonPath::root()]);
        }
    }
}

#[cfg(test)]
mod scale {
    use super::*;

    /// Run with `cargo test -p objectstack-spec --release -- --ignored scale`.
    #[test]
    #[ignore = "scale check, takes a few seconds in debug builds"]
    fn many_paths_on_a_large_text() {
        let entry = r#"{"name": "skill_NNNNNN", "label": "A skill", "description": "Padding text that makes the entry long enough to matter.", "tools": ["query_data", "action_x", "get_record"]}"#;
        let mut text = String::from("{\"skills\": [\n");
        let mut n = 0;
        while text.len() < 60_000_000 {
            if n > 0 {
                text.push_str(",\n");
            }
            text.push_str(&entry.replace("NNNNNN", &format!("{n:06}")));
            n += 1;
        }
        text.push_str("\n]}");
        let paths: Vec<JsonPath> = (0..100_000)
            .map(|i| {
                JsonPath::root()
                    .key("skills")
                    .index((i * 7) % n)
                    .key("tools")
                    .index(i % 3)
            })
            .collect();
        let started = std::time::Instant::now();
        let spans = SourceIndex::new(&text).locate_many(&paths);
        let took = started.elapsed();
        assert!(spans.iter().all(Option::is_some));
        assert!(took.as_secs() < 5, "took {took:?}");
        eprintln!("{n} entries, {} paths: {took:?}", paths.len());
    }
}
