//! Reading a large document on two threads: its last top-level entry on a
//! second thread while the first reads the rest.
//!
//! A backward scan from the end finds where that entry starts (it tracks
//! strings, whose quotes look the same from either side, and nesting). The
//! second thread parses the entry's value into its own arena; the first
//! parses the document from the start and, when it reads the root key
//! written at exactly the place the scan found, takes the second thread's
//! value instead of reading it. The first thread's parse is the proof that
//! the place is a key of the root; the bytes around the value (`:` before
//! it, the root's `}` after it) are checked by the scan. Anything else (no
//! such key, a failure on either thread, a value nested as deep as the
//! nesting limit) ends in one serial parse of the whole text, so the tree,
//! the duplicate-key notes and every error are exactly [`super::parse`]'s.

use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, mpsc};

use super::{Arena, Borrow, DuplicateKey, Map, ParseError, Value};

/// Documents shorter than this are parsed on one thread.
const SPLIT_FROM: usize = 8 << 20;

/// [`super::parse_object`], with the document's last top-level entry read
/// on a second thread into `side` when the text is 8 MiB or more and that
/// entry holds at least an eighth of it. The tree, the notes on repeated
/// keys ([`Map::duplicates`]) and the errors are the same; the tree borrows
/// from both arenas.
pub fn parse_object_on_two_threads<'a>(
    text: &'a str,
    arena: &'a Arena,
    side: &'a mut Arena,
) -> Result<&'a Map<'a>, ParseError> {
    let options = Options {
        from: SPLIT_FROM,
        min_part: text.len() / 8,
        wait: false,
    };
    parse_split(text, arena, side, &options)
}

/// When a text is split.
pub(super) struct Options {
    /// The smallest text split.
    pub(super) from: usize,
    /// The smallest part for either thread.
    pub(super) min_part: usize,
    /// The first thread waits for the second to decide before it reads
    /// past a root key (for tests: a small text is otherwise read whole
    /// before the second thread has scanned it).
    pub(super) wait: bool,
}

/// [`parse_object_on_two_threads`] with its [`Options`].
pub(super) fn parse_split<'a>(
    text: &'a str,
    arena: &'a Arena,
    side: &'a mut Arena,
    options: &Options,
) -> Result<&'a Map<'a>, ParseError> {
    if text.len() < options.from {
        return super::parse_object(text, arena);
    }
    let min_part = options.min_part;
    let progress = Arc::new(Shared::default());
    let (tx, rx) = mpsc::sync_channel(1);
    let stop = Stop {
        base: text.as_ptr().addr(),
        progress: Arc::clone(&progress),
        wait: options.wait,
        rx,
    };
    let joined = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("objectstack-parse".to_owned())
            .spawn_scoped(scope, move || {
                // The scan runs here, beside the first thread's parse.
                let claimed = claim(text, min_part, &progress.progress);
                progress.decided();
                let Some(value_text) = claimed else {
                    return;
                };
                // A send fails only once the first thread no longer listens.
                let _ = tx.send(parse_side(value_text, side));
            });
        // No second thread (the system refused one): the first reads it all.
        let stop = spawned.is_ok().then_some(stop);
        let read = super::parse_text(text, arena, Borrow, stop);
        // Joined here, so a panic on the second thread is not raised again.
        if let Ok(handle) = spawned {
            let _ = handle.join();
        }
        read
    });
    match joined {
        Ok(Value::Object(map)) => Ok(map),
        // The serial parse says exactly what is wrong.
        _ => super::parse_object(text, arena),
    }
}

/// [`Progress`], and a signal for a first thread that waits for the
/// second's decision ([`Options::wait`]).
#[derive(Debug, Default)]
struct Shared {
    progress: Mutex<Progress>,
    decided: Condvar,
}

impl Shared {
    /// Records that the second thread has decided, and wakes the first.
    fn decided(&self) {
        if let Ok(mut progress) = self.progress.lock() {
            progress.decided = true;
        }
        self.decided.notify_all();
    }
}

/// Who decided what about the split, shared by the two threads.
#[derive(Debug, Default)]
struct Progress {
    /// The second thread has claimed the split or given it up.
    decided: bool,
    /// The offset of the last root key the first thread read without a
    /// split there (the keys it passes ascend).
    passed: Option<usize>,
    /// The offset of the root key the second thread reads the value of.
    split: Option<usize>,
}

/// Finds the last entry and claims it for the second thread unless the
/// first has already read past its key; its value's text, or `None`.
fn claim<'a>(text: &'a str, min_part: usize, progress: &Mutex<Progress>) -> Option<&'a str> {
    let last = last_entry(text.as_bytes(), min_part)?;
    if last.value.len() < min_part {
        return None;
    }
    let value = text.get(last.value)?;
    let mut progress = progress.lock().ok()?;
    if progress
        .passed
        .is_some_and(|passed| passed >= last.key_start)
    {
        return None;
    }
    progress.split = Some(last.key_start);
    Some(value)
}

/// What the first thread needs at the split: where it is, once the second
/// thread has claimed it, and that thread's value.
pub(super) struct Stop<'a> {
    /// The text's address: a key's offset is its address less this.
    base: usize,
    progress: Arc<Shared>,
    wait: bool,
    rx: mpsc::Receiver<Option<Side<'a>>>,
}

impl<'a> Stop<'a> {
    /// For the root key at `key` (a borrowed slice of the text, or a
    /// decoded copy elsewhere): whether it is where the second thread
    /// claimed the split. Either way the decision is final: the second
    /// thread claims no key the first has passed.
    pub(super) fn is_split(&self, key: &str) -> bool {
        let Some(at) = key.as_ptr().addr().checked_sub(self.base) else {
            return false;
        };
        let Ok(mut progress) = self.progress.progress.lock() else {
            return false;
        };
        while self.wait && !progress.decided {
            progress = match self.progress.decided.wait(progress) {
                Ok(progress) => progress,
                Err(_) => return false,
            };
        }
        if progress.split == Some(at) {
            return true;
        }
        progress.passed = Some(progress.passed.map_or(at, |p| p.max(at)));
        false
    }

    /// The second thread's value (waiting for it), or `None` if it could
    /// not read it.
    pub(super) fn take(self) -> Option<Side<'a>> {
        self.rx.recv().ok().flatten()
    }
}

/// The last top-level entry's value, read on the second thread.
pub(super) struct Side<'a> {
    pub(super) value: Value<'a>,
    pub(super) duplicates: Vec<DuplicateKey<'a>>,
}

/// Reads `value_text` (one JSON value) into `side`; `None` if it is not
/// one value, or nests as deep as the limit would refuse inside the root.
fn parse_side<'a>(value_text: &'a str, side: &'a mut Arena) -> Option<Side<'a>> {
    let side: &'a Arena = side;
    let (value, duplicates, deepest) = super::parse_part(value_text, side)?;
    // The whole document's parse meets the root's brace first: one level
    // of the limit (128) is gone before this value starts.
    (deepest < super::NESTING_LIMIT - 1).then_some(Side { value, duplicates })
}

/// Where the last entry of the root object is.
#[derive(Debug, PartialEq)]
struct LastEntry {
    /// Offset of the key's first byte, inside its quotes.
    key_start: usize,
    /// The value's bytes.
    value: Range<usize>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).copied().is_some_and(is_space) {
        at += 1;
    }
    at
}

/// Finds the last entry of the root object by scanning back from the end,
/// or `None` (not an object, one entry, an escaped key, or text that is
/// not JSON). Only a hint: the parses check it.
///
/// The scan gives up once it is within `min_part` bytes of the start (the
/// part before the entry would be too small to be worth a thread).
fn last_entry(bytes: &[u8], min_part: usize) -> Option<LastEntry> {
    let mut end = bytes.len();
    while end > 0 && bytes.get(end - 1).copied().is_some_and(is_space) {
        end -= 1;
    }
    let close = end.checked_sub(1)?;
    if bytes.get(close) != Some(&b'}') {
        return None;
    }
    let mut depth = 1usize;
    let mut at = close;
    let comma = loop {
        at = at.checked_sub(1)?;
        if at < min_part {
            return None;
        }
        match *bytes.get(at)? {
            // A string's closing quote: jump to its opening one, the first
            // quote before it not escaped by an odd run of backslashes.
            b'"' => loop {
                at = memchr::memrchr(b'"', bytes.get(..at)?)?;
                let backslashes = bytes
                    .get(..at)?
                    .iter()
                    .rev()
                    .take_while(|&&b| b == b'\\')
                    .count();
                if backslashes % 2 == 0 {
                    break;
                }
            },
            b']' | b'}' => depth += 1,
            b'[' | b'{' => {
                depth -= 1;
                if depth == 0 {
                    return None;
                }
            }
            b',' if depth == 1 => break at,
            _ => {}
        }
    };
    let quote = skip_space(bytes, comma + 1);
    if bytes.get(quote) != Some(&b'"') {
        return None;
    }
    let key_start = quote + 1;
    let key_end = key_start + memchr::memchr(b'"', bytes.get(key_start..)?)?;
    if bytes.get(key_start..key_end)?.contains(&b'\\') {
        return None;
    }
    let colon = skip_space(bytes, key_end + 1);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    let start = skip_space(bytes, colon + 1);
    let mut value_end = close;
    while value_end > start && bytes.get(value_end - 1).copied().is_some_and(is_space) {
        value_end -= 1;
    }
    (start < value_end).then_some(LastEntry {
        key_start,
        value: start..value_end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_last_entry_is_found_past_strings_and_nesting() {
        let text = r#"{"a": [1, {"b": "x,\"y"}], "skills" : [{"n": "}\\"}] }"#;
        let found = last_entry(text.as_bytes(), 0).unwrap();
        assert_eq!(&text[found.key_start..found.key_start + 6], "skills");
        assert_eq!(&text[found.value], r#"[{"n": "}\\"}]"#);
        for none in [
            r#"{"only": [1, 2]}"#,
            "[1, 2]",
            r#"{"a": 1, "k\"ey": 2}"#,
            "{}",
            "",
        ] {
            assert_eq!(last_entry(none.as_bytes(), 0), None, "{none}");
        }
    }

    /// Any text is split, and the first thread waits for the second.
    const TESTS: Options = Options {
        from: 0,
        min_part: 0,
        wait: true,
    };

    /// The notes on repeated keys, as (key, the object's keys).
    fn notes(map: &Map<'_>) -> Vec<(String, Vec<String>)> {
        map.duplicates()
            .map(|d| {
                d.keys
                    .iter()
                    .map(|k| {
                        (
                            k.key.to_owned(),
                            k.object.keys().map(str::to_owned).collect(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Both readings of `text`, split from any size, as comparable text.
    fn both(text: &str) -> (Result<String, String>, Result<String, String>) {
        let (arena, serial_arena) = (Arena::new(), Arena::new());
        let mut side = Arena::new();
        let show = |r: Result<&Map<'_>, ParseError>| {
            r.map(|m| format!("{} {:?}", Value::Object(m), notes(m)))
                .map_err(|e| e.to_string())
        };
        let split = show(parse_split(text, &arena, &mut side, &TESTS));
        let serial = show(super::super::parse_object(text, &serial_arena));
        (split, serial)
    }

    fn json() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("1.5".to_owned()),
            Just(r#""s""#.to_owned()),
            Just(r#""q\"}],{""#.to_owned()),
            Just(r#""\ud800""#.to_owned()),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(
                    (prop::sample::select(vec!["a", "b", "k\\u0061"]), inner),
                    0..4
                )
                .prop_map(|v| {
                    let entries: Vec<String> =
                        v.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                    format!("{{{}}}", entries.join(", "))
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn two_threads_read_what_one_reads(
            entries in prop::collection::vec(
                (prop::sample::select(vec!["a", "b", "skills", "sk\\u0069lls"]), json()),
                0..5,
            ),
            space in prop::sample::select(vec![" ", "\t", "\r\n", ""]),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
        ) {
            let body: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("\"{k}\"{space}:{space}{v}"))
                .collect();
            let mut text = format!("{{{space}{}{space}}}{space}", body.join(&format!("{space},{space}")));
            if truncate {
                text.truncate(cut.index(text.len() + 1));
            }
            let (split, serial) = both(&text);
            prop_assert_eq!(split, serial, "{}", text);
        }
    }

    #[test]
    fn the_last_entry_is_read_into_the_side_arena() {
        let text =
            r#"{"name": "s", "objects": [{"a": 1, "a": 2}], "skills": [{"b": [3], "b": 4}]}"#;
        let (arena, mut side) = (Arena::new(), Arena::new());
        let shown = {
            let root = parse_split(text, &arena, &mut side, &TESTS).unwrap();
            format!("{} {:?}", Value::Object(root), notes(root))
        };
        assert!(
            side.allocated_bytes() > 0,
            "nothing was read on the second thread"
        );
        assert_eq!(Ok(shown), both(text).1);
    }

    #[test]
    fn nesting_at_the_limit_is_refused_as_the_serial_parse_refuses_it() {
        for depth in [125, 126, 127, 128] {
            let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            // The first entry long enough that the split is made.
            let text = format!(r#"{{"a": "{}", "b": {deep}}}"#, "x".repeat(depth));
            let (split, serial) = both(&text);
            assert_eq!(split, serial, "depth {depth}");
        }
    }
}
