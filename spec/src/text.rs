//! String and value measures that match upstream JavaScript semantics.
//!
//! Upstream is TypeScript, so string lengths are UTF-16 code unit counts and
//! "is set" checks follow JavaScript truthiness. Everything here is pure and
//! allocation free.

use serde_json::Value;

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

/// Whether a JSON value is truthy under JavaScript rules.
///
/// `null`, `false`, `0`, `NaN` and `""` are falsy; everything else,
/// including empty arrays and objects, is truthy. A missing value is falsy.
pub fn is_truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => true,
    }
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
    let unsafe_char = |c: char| {
        let hidden = matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        );
        (c.is_control() && c != '\n' && c != '\t') || hidden
    };
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

/// [`terminal_safe`] for one field of a line (a file name, a name from a
/// document, a message): newlines are escaped too (`\u000a`), so a value
/// cannot end the line it is printed on and forge the next one.
///
/// ```
/// use objectstack_spec::text::line_safe;
/// assert_eq!(line_safe("a\nerror: forged"), "a\\u000aerror: forged");
/// assert_eq!(line_safe("x\u{202e}y\u{7}"), "x\\u202ey\\u0007");
/// assert_eq!(line_safe("plain\ttext"), "plain\ttext");
/// ```
pub fn line_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\n') {
        return terminal_safe(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (i, part) in text.split('\n').enumerate() {
        if i > 0 {
            out.push_str("\\u000a");
        }
        out.push_str(&terminal_safe(part));
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `s` is snake_case in the grammar upstream uses for tool and
/// skill names: `^[a-z_][a-z0-9_]*$`.
pub fn is_snake_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    match bytes.next() {
        Some(b) if b.is_ascii_lowercase() || b == b'_' => {}
        _ => return false,
    }
    bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
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
    use serde_json::json;

    #[test]
    fn utf16_counts_surrogate_pairs_twice() {
        assert_eq!(utf16_len(""), 0);
        assert_eq!(utf16_len("a😀b"), 4);
        assert_eq!(utf16_len("—"), 1);
    }

    #[test]
    fn truthiness_matches_javascript() {
        assert!(!is_truthy(None));
        assert!(!is_truthy(Some(&json!(null))));
        assert!(!is_truthy(Some(&json!(""))));
        assert!(!is_truthy(Some(&json!(0))));
        assert!(!is_truthy(Some(&json!(0.0))));
        assert!(!is_truthy(Some(&json!(false))));
        assert!(is_truthy(Some(&json!("x"))));
        assert!(is_truthy(Some(&json!([]))));
        assert!(is_truthy(Some(&json!({}))));
        assert!(is_truthy(Some(&json!(-1))));
    }

    #[test]
    fn line_safe_escapes_every_control_bidi_mark_and_newline() {
        let unsafe_chars = (0u32..0x20)
            .chain(0x7f..0xa0)
            .chain(0x202a..=0x202e)
            .chain(0x2066..=0x2069)
            .filter_map(char::from_u32)
            .filter(|&c| c != '\t');
        for c in unsafe_chars {
            let escaped = line_safe(&format!("a{c}b")).into_owned();
            assert_eq!(escaped, format!("a\\u{:04x}b", u32::from(c)), "{c:?}");
        }
        assert_eq!(line_safe("é\t😀"), "é\t😀");
        assert!(matches!(line_safe("plain"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn snake_names() {
        assert!(is_snake_name("query_data"));
        assert!(is_snake_name("_x1"));
        assert!(!is_snake_name("1x"));
        assert!(!is_snake_name("Query"));
        assert!(!is_snake_name(""));
        assert!(!is_snake_name("a-b"));
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
