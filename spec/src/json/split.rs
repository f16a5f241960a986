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
use std::sync::mpsc;

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
    parse_split(text, arena, side, SPLIT_FROM)
}

/// [`parse_object_on_two_threads`] with the size from which it splits.
pub(super) fn parse_split<'a>(
    text: &'a str,
    arena: &'a Arena,
    side: &'a mut Arena,
    from: usize,
) -> Result<&'a Map<'a>, ParseError> {
    let last = (text.len() >= from)
        .then(|| last_entry(text.as_bytes()))
        .flatten()
        .filter(|last| {
            let eighth = text.len() / 8;
            last.value.len() >= eighth && last.value.start >= eighth
        });
    let (Some(last), Some(value_text)) = (
        last.as_ref(),
        last.as_ref().and_then(|l| text.get(l.value.clone())),
    ) else {
        return super::parse_object(text, arena);
    };
    let key_at = text.as_ptr().addr() + last.key_start;
    let (tx, rx) = mpsc::sync_channel(1);
    let joined = std::thread::scope(|scope| {
        scope.spawn(move || {
            // A send fails only once the first thread no longer listens.
            let _ = tx.send(parse_side(value_text, side));
        });
        super::parse_text(text, arena, Borrow, Some(Stop { key_at, rx }))
    });
    match joined {
        Ok(Value::Object(map)) => Ok(map),
        // The serial parse says exactly what is wrong.
        _ => super::parse_object(text, arena),
    }
}

/// What the first thread waits for at the split: the second thread's value
/// and the keys its objects repeat, or `None` if it could not read it.
pub(super) struct Stop<'a> {
    /// The address of the first byte of the root key (inside its quotes).
    pub(super) key_at: usize,
    pub(super) rx: mpsc::Receiver<Option<Side<'a>>>,
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
fn last_entry(bytes: &[u8]) -> Option<LastEntry> {
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
        let found = last_entry(text.as_bytes()).unwrap();
        assert_eq!(&text[found.key_start..found.key_start + 6], "skills");
        assert_eq!(&text[found.value], r#"[{"n": "}\\"}]"#);
        for none in [
            r#"{"only": [1, 2]}"#,
            "[1, 2]",
            r#"{"a": 1, "k\"ey": 2}"#,
            "{}",
            "",
        ] {
            assert_eq!(last_entry(none.as_bytes()), None, "{none}");
        }
    }

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
        let split = show(parse_split(text, &arena, &mut side, 0));
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
            entries in prop::collection::vec((prop::sample::select(vec!["a", "b", "skills"]), json()), 0..5),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
        ) {
            let body: Vec<String> = entries.iter().map(|(k, v)| format!("\"{k}\" : {v}")).collect();
            let mut text = format!("{{ {} }}\n", body.join(" ,\n"));
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
            let root = parse_split(text, &arena, &mut side, 0).unwrap();
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
