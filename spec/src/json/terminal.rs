//! JSON written so that it cannot act on, or mislead, a terminal that
//! shows it: besides what JSON itself escapes, every character
//! [`text::is_terminal_unsafe`](crate::text::is_terminal_unsafe) names (C1
//! controls, bidirectional controls such as U+202E, zero-width marks, line
//! and paragraph separators) is written as a `\uXXXX` escape. The text
//! reads back as the same JSON; only how it is spelled changes. The
//! command line writes every JSON output with it.
//!
//! ```
//! let text = objectstack_spec::json::terminal::to_string(&"a\u{202e}b").unwrap();
//! assert_eq!(text, r#""a\u202eb""#);
//! assert_eq!(serde_json::from_str::<String>(&text).unwrap(), "a\u{202e}b");
//! ```

use std::io;

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter, Serializer};

use crate::text::{any_byte, is_terminal_unsafe};

/// A formatter that writes as `F` does, with every terminal-unsafe
/// character of a string escaped.
#[derive(Debug, Clone, Default)]
pub struct TerminalSafe<F>(pub F);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            #[inline]
            fn $name<W: ?Sized + io::Write>(&mut self, writer: &mut W $(, $arg: $ty)*) -> io::Result<()> {
                self.0.$name(writer $(, $arg)*)
            }
        )*
    };
}

impl<F: Formatter> Formatter for TerminalSafe<F> {
    delegate! {
        write_null();
        write_bool(value: bool);
        write_i8(value: i8);
        write_i16(value: i16);
        write_i32(value: i32);
        write_i64(value: i64);
        write_i128(value: i128);
        write_u8(value: u8);
        write_u16(value: u16);
        write_u32(value: u32);
        write_u64(value: u64);
        write_u128(value: u128);
        write_f32(value: f32);
        write_f64(value: f64);
        write_number_str(value: &str);
        begin_string();
        end_string();
        write_char_escape(char_escape: CharEscape);
        write_byte_array(value: &[u8]);
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
        write_raw_fragment(fragment: &str);
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Every such character is DEL or starts with one of these bytes in
        // UTF-8 (C1 controls 0xC2, U+061C 0xD8, the U+2000 block 0xE2,
        // U+FEFF 0xEF): most fragments are written at once (a lint report
        // can be tens of megabytes of them).
        if !any_byte(fragment.as_bytes(), |b| {
            matches!(b, 0x7f | 0xc2 | 0xd8 | 0xe2 | 0xef)
        }) {
            return self.0.write_string_fragment(writer, fragment);
        }
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|&(_, c)| is_terminal_unsafe(c)) {
            let (before, after) = rest.split_at(at);
            self.0.write_string_fragment(writer, before)?;
            // Every such character is in the Basic Multilingual Plane.
            write!(writer, "\\u{:04x}", u32::from(c))?;
            rest = after.get(c.len_utf8()..).unwrap_or_default();
        }
        self.0.write_string_fragment(writer, rest)
    }
}

/// Writes `value` with `formatter`, made terminal-safe.
fn write_with<W: io::Write, T: ?Sized + Serialize, F: Formatter>(
    writer: W,
    value: &T,
    formatter: F,
) -> serde_json::Result<()> {
    value.serialize(&mut Serializer::with_formatter(
        writer,
        TerminalSafe(formatter),
    ))
}

/// [`serde_json::to_writer`], terminal-safe.
pub fn to_writer<W: io::Write, T: ?Sized + Serialize>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    write_with(writer, value, CompactFormatter)
}

/// [`serde_json::to_writer_pretty`], terminal-safe.
pub fn to_writer_pretty<W: io::Write, T: ?Sized + Serialize>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    write_with(writer, value, PrettyFormatter::new())
}

/// [`to_writer_pretty`] for a value that sits `depth` levels deep in a
/// larger document written by hand: its first line is written where the
/// output stands, and each later line indented two spaces a level, as
/// [`to_writer_pretty`] would indent the value inside the whole. (A JSON
/// string holds no raw line break, so each line break is the formatter's
/// own.)
pub fn to_writer_pretty_nested<W: io::Write, T: ?Sized + Serialize>(
    mut writer: W,
    value: &T,
    depth: usize,
) -> serde_json::Result<()> {
    let mut text = Vec::new();
    to_writer_pretty(&mut text, value)?;
    write_indented(&mut writer, &text, &"  ".repeat(depth)).map_err(serde_json::Error::io)
}

/// An array, `depth` levels deep as in [`to_writer_pretty_nested`], made
/// of `items` serialised one at a time: a caller can write a long list
/// without holding it, and the text is what [`to_writer_pretty`] writes
/// for the whole.
pub fn to_writer_pretty_array_nested<W: io::Write, T: Serialize>(
    mut writer: W,
    items: impl IntoIterator<Item = T>,
    depth: usize,
) -> serde_json::Result<()> {
    let pad = "  ".repeat(depth + 1);
    let mut text = Vec::new();
    let mut empty = true;
    for item in items {
        text.clear();
        to_writer_pretty(&mut text, &item)?;
        let open: &[u8] = if empty { b"[\n" } else { b",\n" };
        empty = false;
        writer
            .write_all(open)
            .and_then(|()| writer.write_all(pad.as_bytes()))
            .and_then(|()| write_indented(&mut writer, &text, &pad))
            .map_err(serde_json::Error::io)?;
    }
    let close = if empty {
        "[]".to_owned()
    } else {
        format!("\n{}]", "  ".repeat(depth))
    };
    writer
        .write_all(close.as_bytes())
        .map_err(serde_json::Error::io)
}

/// Writes `text`, each line after the first led by `pad`.
fn write_indented(writer: &mut impl io::Write, text: &[u8], pad: &str) -> io::Result<()> {
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            writer.write_all(b"\n")?;
            writer.write_all(pad.as_bytes())?;
        }
        writer.write_all(line)?;
    }
    Ok(())
}

/// [`serde_json::to_string`], terminal-safe.
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    string_with(value, CompactFormatter)
}

/// [`serde_json::to_string_pretty`], terminal-safe.
pub fn to_string_pretty<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    string_with(value, PrettyFormatter::new())
}

/// The text [`write_with`] writes. (It is UTF-8: JSON of a `str`, with
/// ASCII escapes.)
fn string_with<T: ?Sized + Serialize, F: Formatter>(
    value: &T,
    formatter: F,
) -> serde_json::Result<String> {
    let mut out = Vec::new();
    write_with(&mut out, value, formatter)?;
    String::from_utf8(out).map_err(serde::ser::Error::custom)
}

/// Appends `text` to `out` as the contents of a JSON string (without the
/// quotes), spelled byte for byte as [`to_writer`] spells a string: JSON's
/// own escapes (`\"`, `\\`, `\n`, `\u001b`, ...), and every
/// terminal-unsafe character as `\uXXXX`.
///
/// It is for writers that print many strings of their own (a lint report
/// of tens of megabytes): sixteen bytes are checked at a time, and a run
/// with nothing to escape is copied at once.
///
/// ```
/// let mut out = Vec::new();
/// objectstack_spec::json::terminal::push_str_contents(&mut out, "say \"hi\"\u{202e}");
/// assert_eq!(out, br#"say \"hi\"\u202e"#);
/// ```
pub fn push_str_contents(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    // `bytes[done..at]` waits to be copied; `at` is where the scan is.
    let (mut done, mut at) = (0, 0);
    while at < bytes.len() {
        let rest = bytes.get(at..).unwrap_or_default();
        let mut word = [b'a'; 8];
        let n = rest.len().min(8);
        if let (Some(to), Some(from)) = (word.get_mut(..n), rest.get(..n)) {
            to.copy_from_slice(from);
        }
        match first_attention(u64::from_le_bytes(word)) {
            None => at += n,
            Some(offset) => {
                at = escape_at(out, text, done, at + offset);
                done = at;
            }
        }
    }
    out.extend_from_slice(bytes.get(done..).unwrap_or_default());
}

/// The offset of the first byte of `word` (little-endian) where
/// [`attention`] holds, eight bytes at a time: each term's lowest set high
/// bit marks its first matching byte (a borrow reaches only the bytes
/// above a match), so the lowest of all is the first such byte.
#[inline]
fn first_attention(x: u64) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let del = x ^ (ONES * 0x7f);
    let found = ((x.wrapping_sub(ONES * 0x20) & !x)
        | (quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash)
        | (del.wrapping_sub(ONES) & !del)
        | x)
        & HIGH;
    (found != 0).then(|| (found.trailing_zeros() / 8) as usize)
}

/// A byte that may need escaping: an ASCII control, `"`, `\\`, DEL, or
/// any byte past ASCII (some characters past ASCII are terminal-unsafe);
/// [`first_attention`] finds the first in a word.
#[cfg(test)]
fn attention(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\') | (b >= 0x7f)
}

/// Copies `text[done..at]` to `out`, then the character at `at` (where
/// [`attention`] holds) as written or escaped; returns where the next
/// character starts.
fn escape_at(out: &mut Vec<u8>, text: &str, done: usize, at: usize) -> usize {
    let bytes = text.as_bytes();
    out.extend_from_slice(bytes.get(done..at).unwrap_or_default());
    let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
        // Not a character boundary: cannot happen in a `str` scanned from
        // one, but copy the byte rather than lose it.
        out.extend_from_slice(bytes.get(at..=at).unwrap_or_default());
        return at + 1;
    };
    let short: Option<&[u8]> = match c {
        '"' => Some(b"\\\""),
        '\\' => Some(b"\\\\"),
        '\u{8}' => Some(b"\\b"),
        '\u{c}' => Some(b"\\f"),
        '\n' => Some(b"\\n"),
        '\r' => Some(b"\\r"),
        '\t' => Some(b"\\t"),
        _ => None,
    };
    if let Some(escape) = short {
        out.extend_from_slice(escape);
    } else if c < ' ' || is_terminal_unsafe(c) {
        // Every such character is in the Basic Multilingual Plane.
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let code = u32::from(c);
        out.extend_from_slice(b"\\u");
        for shift in [12, 8, 4, 0] {
            out.extend(HEX.get(((code >> shift) & 0xf) as usize));
        }
    } else {
        out.extend_from_slice(bytes.get(at..at + c.len_utf8()).unwrap_or_default());
    }
    at + c.len_utf8()
}

/// A [`std::fmt::Write`] that appends what it is given with
/// [`push_str_contents`]: `write!` a `Display` value into it to print the
/// value as the contents of a JSON string without building it first.
#[derive(Debug)]
pub struct StrContents<'a>(pub &'a mut Vec<u8>);

impl std::fmt::Write for StrContents<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        push_str_contents(self.0, s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn unsafe_characters_are_escaped_and_read_back() {
        let value =
            json!({"na\u{202e}me": ["a\u{9b}b", "\u{200b}", "ok é 😀", "\u{1b}[2J", "\u{2028}"]});
        for text in [
            to_string(&value).unwrap(),
            to_string_pretty(&value).unwrap(),
        ] {
            let shown = |c: &char| *c != '\n';
            assert!(
                !text.chars().filter(shown).any(is_terminal_unsafe),
                "{text}"
            );
            assert!(
                !text.contains(['\u{202e}', '\u{9b}', '\u{200b}', '\u{1b}', '\u{2028}']),
                "{text}"
            );
            assert!(text.contains("\\u202e") && text.contains("\\u009b") && text.contains("😀"));
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
        }
        // Past the first 64 bytes of a fragment too.
        for at in [63, 64, 65, 130] {
            let long = format!("{}\u{202e}{}", "a".repeat(at), "b".repeat(70));
            let text = to_string(&json!(long)).unwrap();
            assert!(
                !text.contains('\u{202e}') && text.contains("\\u202e"),
                "{at}"
            );
        }
        // Nothing else changes.
        let plain = json!({"a": [1, 2.5, null, true, "x\"y\\z\n"]});
        assert_eq!(
            to_string(&plain).unwrap(),
            serde_json::to_string(&plain).unwrap()
        );
        assert_eq!(
            to_string_pretty(&plain).unwrap(),
            serde_json::to_string_pretty(&plain).unwrap()
        );
    }

    /// What `to_string` writes for `text`, without the quotes.
    fn by_serde(text: &str) -> Vec<u8> {
        let quoted = to_string(text).unwrap().into_bytes();
        quoted.get(1..quoted.len() - 1).unwrap_or_default().to_vec()
    }

    #[test]
    fn contents_are_spelled_as_serde_spells_them() {
        let every_escape: String = (0u32..0x100)
            .chain([
                0x61c, 0x200b, 0x200f, 0x2028, 0x202e, 0x2060, 0x2069, 0xfeff,
            ])
            .filter_map(char::from_u32)
            .collect();
        for text in [
            "",
            "plain",
            "x\"y\\z\n",
            "\u{1}\u{1f}\u{7f}\u{80}\u{9f}\u{a0}é😀",
            &every_escape,
            &format!("{}\u{202e}{}\"", "a".repeat(15), "b".repeat(17)),
        ] {
            let mut out = Vec::new();
            push_str_contents(&mut out, text);
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&by_serde(text))
            );
        }
    }

    proptest! {
        #[test]
        fn the_first_byte_that_needs_attention_is_found(
            // Mostly plain ASCII, so that words without any occur too.
            word in prop::array::uniform8(prop_oneof![6 => 0x20u8..0x7f, 1 => any::<u8>()])
        ) {
            let want = word.iter().position(|&b| attention(b));
            prop_assert_eq!(first_attention(u64::from_le_bytes(word)), want);
        }

        #[test]
        fn contents_equal_serdes_for_any_text(text in any::<String>(), pad in 0..20usize) {
            // Shifted past each position in an eight-byte word.
            let text = format!("{}{text}", "-".repeat(pad));
            let mut out = Vec::new();
            push_str_contents(&mut out, &text);
            prop_assert_eq!(out, by_serde(&text));
        }
    }

    #[test]
    fn a_nested_value_is_written_as_inside_the_whole() {
        let values = [
            serde_json::json!({"a": [1, {"b": []}, {}], "c": "line\nbreak \u{7} é", "d": null}),
            serde_json::json!([]),
            serde_json::json!("plain"),
            serde_json::json!([[["deep"]], {"k": {"k": [true]}}]),
        ];
        for value in values {
            for depth in 0..4 {
                let mut whole = serde_json::json!(value.clone());
                for _ in 0..depth {
                    whole = serde_json::json!([whole]);
                }
                let mut nested = Vec::new();
                for level in 0..depth {
                    nested.extend_from_slice(b"[\n");
                    nested.extend(std::iter::repeat_n(b' ', 2 * (level + 1)));
                }
                super::to_writer_pretty_nested(&mut nested, &value, depth).unwrap();
                for level in (0..depth).rev() {
                    nested.push(b'\n');
                    nested.extend(std::iter::repeat_n(b' ', 2 * level));
                    nested.push(b']');
                }
                let mut expected = Vec::new();
                super::to_writer_pretty(&mut expected, &whole).unwrap();
                assert_eq!(
                    String::from_utf8(nested).unwrap(),
                    String::from_utf8(expected).unwrap()
                );
            }
        }
    }

    #[test]
    fn a_nested_array_is_written_as_inside_the_whole() {
        let items = [
            serde_json::json!({"a": [1, {"b": []}], "c": "x\ny \u{7}"}),
            serde_json::json!([]),
            serde_json::json!("plain"),
        ];
        for count in 0..=items.len() {
            let list = items.get(..count).unwrap_or_default();
            // On its own, and as the value of a key one level down.
            let mut alone = Vec::new();
            super::to_writer_pretty_array_nested(&mut alone, list, 0).unwrap();
            let mut inside = b"{\n  \"k\": ".to_vec();
            super::to_writer_pretty_array_nested(&mut inside, list, 1).unwrap();
            inside.extend_from_slice(b"\n}");
            for (streamed, whole) in [
                (alone, serde_json::json!(list)),
                (inside, serde_json::json!({ "k": list })),
            ] {
                let mut expected = Vec::new();
                super::to_writer_pretty(&mut expected, &whole).unwrap();
                assert_eq!(
                    String::from_utf8(streamed).unwrap(),
                    String::from_utf8(expected).unwrap()
                );
            }
        }
    }
}
