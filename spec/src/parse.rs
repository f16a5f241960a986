//! Reading a stack document from bytes, with errors that say where.
//!
//! [`parse_document`] accepts UTF-8 JSON (an optional byte-order mark is
//! skipped) whose top level is an object. Malformed JSON reports its
//! 1-based line and column; invalid UTF-8 reports the byte offset and the
//! line and column of the first bad byte; nesting deeper than serde_json's
//! recursion limit (128) is an error, never a stack overflow.
//!
//! Where this differs from `JSON.parse`, which upstream reads stacks with:
//! besides the nesting limit, a number too large for a double (`1e400`,
//! which JavaScript reads as `Infinity`) is a syntax error, with its
//! position, where upstream reads the file; and a `\u` escape of a lone
//! surrogate (`"\ud83d"`, which JavaScript keeps and a Rust string cannot
//! hold) is read as U+FFFD ([`patch_lone_surrogates`]).

use serde_json::{Map, Value};

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The bytes are not UTF-8.
    #[error(
        "{line}:{column}: the file is not valid UTF-8 (first bad byte at offset {offset}); save it as UTF-8"
    )]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
        /// 1-based line of that byte.
        line: usize,
        /// 1-based column (in characters) of that byte.
        column: usize,
    },
    /// The text is not JSON (or nests too deeply).
    #[error("{line}:{column}: {message}")]
    Syntax {
        /// What serde_json reported, without its position suffix.
        message: String,
        /// 1-based line (0 when the error has no position).
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// The document is JSON but its top level is not an object.
    #[error("1:1: a stack must be a JSON object at the top level, found {found}")]
    NotAnObject {
        /// What the top level was.
        found: &'static str,
    },
}

impl ParseError {
    /// The 1-based line and column the error points at.
    pub fn line_column(&self) -> (usize, usize) {
        match self {
            ParseError::NotUtf8 { line, column, .. } | ParseError::Syntax { line, column, .. } => {
                (*line, *column)
            }
            ParseError::NotAnObject { .. } => (1, 1),
        }
    }
}

/// Checks that `bytes` are UTF-8 and returns the text, without a leading
/// byte-order mark.
pub fn decode_utf8(bytes: &[u8]) -> Result<&str, ParseError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(err) => {
            let offset = err.valid_up_to();
            let good = std::str::from_utf8(bytes.get(..offset).unwrap_or_default()).unwrap_or("");
            let (line, column) = line_column_at(good, good.len());
            Err(ParseError::NotUtf8 {
                offset,
                line,
                column,
            })
        }
    }
}

/// Parses a JSON value from text, mapping serde_json's error to a
/// [`ParseError::Syntax`]. A `\u` escape of a lone surrogate is read as
/// U+FFFD ([`patch_lone_surrogates`]).
pub fn parse_value(text: &str) -> Result<Value, ParseError> {
    serde_json::from_str(text).or_else(|err| match patch_lone_surrogates(text) {
        Some(patched) => serde_json::from_str(&patched).map_err(|e| located(&patched, &e)),
        None => Err(located(text, &err)),
    })
}

/// `text` with every `\u` escape of a lone surrogate (half of a UTF-16
/// pair, without its other half) inside a string replaced by `\uFFFD`, or
/// `None` when it has none. `JSON.parse` keeps such a string, and upstream
/// reads the stack; a Rust string cannot hold one, and serde_json refuses
/// it. The replacement is as long as the escape, so every position in the
/// text, and every error reported in it, stays where it was.
pub fn patch_lone_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let hex = |at: usize| -> Option<u16> {
        let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
        u16::from_str_radix(digits, 16).ok()
    };
    // A `\u` escape at `at` (its backslash) and its value.
    let escape = |at: usize| -> Option<u16> {
        (bytes.get(at..at + 2)? == b"\\u").then_some(())?;
        hex(at + 2)
    };
    let mut lone = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if !in_string {
            in_string = b == b'"';
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' => match escape(i) {
                Some(0xD800..=0xDBFF) => {
                    if matches!(escape(i + 6), Some(0xDC00..=0xDFFF)) {
                        i += 12;
                    } else {
                        lone.push(i);
                        i += 6;
                    }
                }
                Some(0xDC00..=0xDFFF) => {
                    lone.push(i);
                    i += 6;
                }
                Some(_) => i += 6,
                // Any other escape: the backslash and the character it
                // escapes (so `\\u...` is not read as an escape).
                None => i += 2,
            },
            _ => i += 1,
        }
    }
    if lone.is_empty() {
        return None;
    }
    let mut patched = String::with_capacity(text.len());
    let mut from = 0;
    for at in lone {
        patched.push_str(text.get(from..at)?);
        patched.push_str("\\uFFFD");
        from = at + 6;
    }
    patched.push_str(text.get(from..)?);
    Some(patched)
}

/// A `serde_json` error on `text` as a [`ParseError`] whose column counts
/// characters.
pub(crate) fn located(text: &str, err: &serde_json::Error) -> ParseError {
    match syntax_error(err) {
        ParseError::Syntax {
            mut message,
            line,
            column,
        } if line > 0 => {
            if text.trim().is_empty() {
                message
                    .push_str(": the file is empty (or only whitespace); a stack is a JSON object");
            }
            let (line, column) = character_column(text, line, column);
            ParseError::Syntax {
                message,
                line,
                column,
            }
        }
        other => other,
    }
}

/// serde_json counts a column in bytes, and 0 when nothing on the line was
/// read (an empty file, a file ending in a newline): the 1-based character
/// column of the last byte it read instead.
fn character_column(text: &str, line: usize, byte_column: usize) -> (usize, usize) {
    let line_start = if line <= 1 {
        Some(0)
    } else {
        text.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)
    };
    match line_start {
        Some(start) if byte_column > 0 => {
            let (_, column) = line_column_at(text, start + byte_column - 1);
            (line, column)
        }
        _ => (line, 1),
    }
}

/// Parses a stack document: UTF-8, JSON, an object at the top level.
pub fn parse_document(bytes: &[u8]) -> Result<Map<String, Value>, ParseError> {
    let text = decode_utf8(bytes)?;
    match parse_value(text)? {
        Value::Object(map) => Ok(map),
        other => Err(ParseError::NotAnObject {
            found: crate::json::shape::kind(&other),
        }),
    }
}

/// Converts a serde_json error into a [`ParseError::Syntax`].
pub fn syntax_error(err: &serde_json::Error) -> ParseError {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let mut message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    if message == "recursion limit exceeded" {
        message.push_str(": the JSON nests 128 levels deep or more (at most 127 are read)");
    }
    ParseError::Syntax {
        message,
        line: err.line(),
        column: err.column(),
    }
}

/// The 1-based line and column (counted in characters) of byte `offset`
/// in `text`. An offset past the end points just after the last character.
pub fn line_column_at(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = text.get(..offset).unwrap_or("");
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Strings of escapes, surrogates among them, lone or paired, and
        /// backslashes that escape a backslash: the patch changes exactly
        /// the lone surrogate escapes, keeps the length, and what it gives
        /// back reads as the same text with U+FFFD in their place.
        #[test]
        fn only_lone_surrogate_escapes_are_patched(
            pieces in prop::collection::vec(prop_oneof![
                Just("\\ud83d".to_owned()),
                Just("\\ude00".to_owned()),
                Just("\\ud83d\\ude00".to_owned()),
                Just("\\\\ud800".to_owned()),
                Just("\\n".to_owned()),
                Just("\\u0041".to_owned()),
                "[a-z \"]{0,3}".prop_map(|s| s.replace('"', "\\\"")),
            ], 0..12),
        ) {
            let body = pieces.concat();
            let text = format!("{{\"k\": \"{body}\", \"n\": [1, \"x\"]}}");
            match patch_lone_surrogates(&text) {
                None => {
                    prop_assert!(serde_json::from_str::<Value>(&text).is_ok(), "{}", text);
                }
                Some(patched) => {
                    prop_assert_eq!(patched.len(), text.len());
                    prop_assert!(serde_json::from_str::<Value>(&text).is_err());
                    let read: Value = serde_json::from_str(&patched).unwrap();
                    // What JavaScript would read, lone halves as U+FFFD.
                    let expected = body
                        .replace("\\ud83d\\ude00", "\u{1F600}")
                        .replace("\\\\", "\u{0}BS")
                        .replace("\\ud83d", "\u{FFFD}")
                        .replace("\\ude00", "\u{FFFD}")
                        .replace("\\u0041", "A")
                        .replace("\\n", "\n")
                        .replace("\\\"", "\"")
                        .replace("\u{0}BS", "\\");
                    prop_assert_eq!(read["k"].as_str(), Some(expected.as_str()), "{}", text);
                }
            }
        }
    }

    #[test]
    fn reads_an_object() {
        let doc = parse_document(b"{\"skills\": []}").unwrap();
        assert!(doc.contains_key("skills"));
    }

    #[test]
    fn skips_bom() {
        assert!(parse_document(b"\xEF\xBB\xBF{}").is_ok());
    }

    #[test]
    fn syntax_error_has_position() {
        let err = parse_document(b"{\n  \"a\": [1,\n}").unwrap_err();
        match err {
            ParseError::Syntax { line, column, .. } => {
                assert_eq!(line, 3);
                assert_eq!(column, 1);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn syntax_error_columns_count_characters_from_one() {
        let column = |text: &str| parse_value(text).unwrap_err().line_column();
        // `x` is the 11th character and the 20th byte of its line.
        assert_eq!(column("{\"ééé😀😀\": x}"), (1, 11));
        assert_eq!(column("{\n  \"é\": x}"), (2, 8));
        // serde_json says column 0 when the line is empty.
        assert_eq!(column(""), (1, 1));
        assert_eq!(column("{\"a\": 1,\n"), (2, 1));
        assert_eq!(column("\n\n"), (3, 1));
        let text = format!("[{}]", "[".repeat(200));
        assert_eq!(parse_value(&text).unwrap_err().line_column().0, 1);
    }

    #[test]
    fn non_utf8_has_position() {
        let err = parse_document(b"{\n \"a\": \"\xff\"}").unwrap_err();
        assert_eq!(
            err,
            ParseError::NotUtf8 {
                offset: 9,
                line: 2,
                column: 8
            }
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(100_000);
        let err = parse_document(text.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("recursion limit"), "{err}");
    }

    #[test]
    fn top_level_must_be_object() {
        assert_eq!(
            parse_document(b"[1]").unwrap_err(),
            ParseError::NotAnObject { found: "an array" }
        );
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column_at("ab\ncdé", 7), (2, 4));
        assert_eq!(line_column_at("ab\ncdé", 6), (2, 3));
        assert_eq!(line_column_at("", 5), (1, 1));
    }
}
