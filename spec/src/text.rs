//! String and value measures that match upstream JavaScript semantics.
//!
//! Upstream is TypeScript, so string lengths are UTF-16 code unit counts.
//! (JavaScript truthiness is [`crate::json::truthy`].) Everything here is
//! pure and allocation free.

/// Length of `s` in UTF-16 code units, as JavaScript's `String.length`.
///
/// ```
/// assert_eq!(objectstack_spec::text::utf16_len("abc"), 3);
/// assert_eq!(objectstack_spec::text::utf16_len("é"), 1);
/// assert_eq!(objectstack_spec::text::utf16_len("😀"), 2);
/// ```
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// `text` with every character a terminal would act on, or that reorders
/// or hides what follows it (bidirectional controls, zero-width marks),
/// written as a `\uXXXX` escape; newlines and tabs stay. Names and strings
/// from a document pass through this before a command prints them for a
/// person, so what is read is what the document says.
///
/// ```
/// use objectstack_spec::text::terminal_safe;
/// assert_eq!(terminal_safe("x\u{1b}[2Jy"), "x\\u001b[2Jy");
/// assert_eq!(terminal_safe("plain\ttext"), "plain\ttext");
/// ```
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    escape_unsafe(text, |c| c == '\n' || c == '\t')
}

/// [`terminal_safe`], with newlines and tabs escaped too: the text stays on
/// one line, so a stored value printed as one field of a line-oriented
/// listing cannot forge another line (or align itself into another
/// column). Every C0 and C1 control, DEL, the bidirectional controls and
/// the line and paragraph separators become `\uXXXX` escapes.
///
/// ```
/// use objectstack_spec::text::line_safe;
/// assert_eq!(line_safe("ok\n  input sha256: 00"), "ok\\u000a  input sha256: 00");
/// assert_eq!(line_safe("a\tb\u{85}c"), "a\\u0009b\\u0085c");
/// ```
pub fn line_safe(text: &str) -> std::borrow::Cow<'_, str> {
    escape_unsafe(text, |_| false)
}

/// Whether `c` is a character a terminal would act on (a C0 or C1 control,
/// DEL), or one that reorders or hides what follows it (a bidirectional
/// control, a zero-width mark, a line or paragraph separator): what
/// [`line_safe`] escapes. For writers of other formats (a diagram label)
/// that replace such characters their own way.
///
/// ```
/// use objectstack_spec::text::is_terminal_unsafe;
/// assert!(is_terminal_unsafe('\u{1b}') && is_terminal_unsafe('\u{202e}'));
/// assert!(is_terminal_unsafe('\n') && !is_terminal_unsafe('é'));
/// ```
pub fn is_terminal_unsafe(c: char) -> bool {
    let hidden = matches!(
        c,
        '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
    );
    c.is_control() || hidden
}

/// `text` with each character a terminal would act on, or that reorders
/// or hides what follows it, escaped; `kept` controls pass through.
fn escape_unsafe(text: &str, kept: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| is_terminal_unsafe(c) && !kept(c);
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `s` is snake_case in the grammar upstream uses for tool and
/// skill names: `^[a-z_][a-z0-9_]*$`.
pub fn is_snake_name(s: &str) -> bool {
    let Some((&first, rest)) = s.as_bytes().split_first() else {
        return false;
    };
    // A stack holds a million such names.
    (first.is_ascii_lowercase() || first == b'_') && !any_byte(rest, |b| !snake_byte(b))
}

/// Whether `hit` holds for any byte of `bytes`. Each 64-byte chunk is
/// folded without an early exit, so the compiler tests many bytes per
/// instruction where `Iterator::any` would branch on each.
#[inline]
pub(crate) fn any_byte(bytes: &[u8], hit: impl Fn(u8) -> bool) -> bool {
    bytes
        .chunks(64)
        .any(|chunk| chunk.iter().fold(false, |seen, &b| seen | hit(b)))
}

/// `[a-z0-9_]`, without branches.
#[inline]
fn snake_byte(b: u8) -> bool {
    (b.wrapping_sub(b'a') < 26) | (b.wrapping_sub(b'0') < 10) | (b == b'_')
}

/// Levenshtein distance between two strings counted in UTF-16 code units,
/// as upstream's JavaScript implementation counts it.
pub fn levenshtein_utf16(a: &str, b: &str) -> usize {
    let a: Vec<u16> = a.encode_utf16().collect();
    let b: Vec<u16> = b.encode_utf16().collect();
    levenshtein_units(&a, &b)
}

/// Levenshtein distance over two slices of comparable units.
pub fn levenshtein_units<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    if a.is_empty() {
        return b.len();
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev_diag = i;
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev_diag + cost);
            prev_diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_counts_surrogate_pairs_twice() {
        assert_eq!(utf16_len(""), 0);
        assert_eq!(utf16_len("a😀b"), 4);
        assert_eq!(utf16_len("—"), 1);
    }

    #[test]
    fn line_safe_escapes_every_control_and_keeps_the_rest() {
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            let escaped = line_safe(&format!("a{c}b")).into_owned();
            assert_eq!(escaped, format!("a\\u{:04x}b", u32::from(c)));
        }
        for c in [
            '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{2028}', '\u{2029}', '\u{200f}',
        ] {
            assert!(!line_safe(&c.to_string()).contains(c), "{c:?}");
        }
        assert_eq!(line_safe("plain, é 😀 \\n"), "plain, é 😀 \\n");
        assert!(matches!(line_safe("plain"), std::borrow::Cow::Borrowed(_)));
        // The terminal variant keeps newlines and tabs, and nothing else.
        assert_eq!(terminal_safe("a\tb\nc\rd"), "a\tb\nc\\u000dd");
    }

    #[test]
    fn snake_names() {
        assert!(is_snake_name("query_data"));
        assert!(is_snake_name("_x1"));
        assert!(!is_snake_name("1x"));
        assert!(!is_snake_name("Query"));
        assert!(!is_snake_name(""));
        assert!(!is_snake_name("a-b"));
        // Every byte, in the first place, inside and past the first chunk.
        for b in 0..=255u8 {
            let inside = b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_';
            let first = b.is_ascii_lowercase() || b == b'_';
            let one = [b];
            let at = |at: usize| {
                let mut bytes = vec![b'a'; 200];
                if let Some(slot) = bytes.get_mut(at) {
                    *slot = b;
                }
                String::from_utf8(bytes).ok()
            };
            if let Ok(s) = std::str::from_utf8(&one) {
                assert_eq!(is_snake_name(s), first, "{b}");
            }
            for place in [1, 63, 64, 65, 130, 199] {
                if let Some(s) = at(place) {
                    assert_eq!(is_snake_name(&s), inside, "{b} at {place}");
                }
            }
        }
        assert!(!is_snake_name("ab\u{e9}"));
    }

    #[test]
    fn levenshtein_basics() {
        assert_eq!(levenshtein_utf16("kitten", "sitting"), 3);
        assert_eq!(levenshtein_utf16("", "abc"), 3);
        assert_eq!(levenshtein_utf16("abc", ""), 3);
        assert_eq!(levenshtein_utf16("same", "same"), 0);
        // One astral character is two code units.
        assert_eq!(levenshtein_utf16("a😀", "a"), 2);
    }
}
