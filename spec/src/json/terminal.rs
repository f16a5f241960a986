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

#[cfg(test)]
mod tests {
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
}
