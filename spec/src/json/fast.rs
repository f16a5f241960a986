//! A direct reader for well-formed documents, in front of serde_json.
//!
//! serde_json reads a document through serde's visitor protocol: a call
//! per map entry and per element, each checking state the tree builder
//! does not need. This reader walks the text itself and calls the same
//! [`Builder`] in the same order (keys, the split's side value, values,
//! closing objects), so the tree it builds is the one serde_json's
//! reading builds, value for value and layout for layout.
//!
//! It reads only what it is sure of. At anything else it gives up
//! ([`GiveUp`]) and the caller reads the whole text again with
//! serde_json, which then says what is wrong: a syntax error, a lone
//! surrogate escape, nesting near the limit, a trailing comma. Numbers
//! other than integers of up to 18 digits are read by serde_json too, one
//! token at a time, so that a float rounds exactly as it does there.

use super::{Builder, Number, Strings, Value, number_from_serde};

/// The reader met something it leaves to serde_json (see the module
/// docs); the tree built so far is to be thrown away.
#[derive(Debug)]
pub(super) struct GiveUp;

/// Nesting the reader goes to; deeper documents are serde_json's, which
/// knows its own limit (128) and its error.
const DEEPEST: u32 = 100;

/// Reads `text`, all of it one JSON value, into `builder`.
///
/// When the builder's split stops the root at its last key, the root is
/// returned at once (the rest of the text is the second thread's).
pub(super) fn read<'de, 'a, S: Strings<'de, 'a>>(
    text: &'de str,
    builder: &mut Builder<'a, S>,
) -> Result<Value<'a>, GiveUp> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
        scratch: String::new(),
    };
    let value = reader.value(builder)?;
    if builder.stopped.is_some() {
        return Ok(value);
    }
    reader.skip_space();
    if reader.at == reader.bytes.len() {
        Ok(value)
    } else {
        Err(GiveUp)
    }
}

struct Reader<'de> {
    text: &'de str,
    bytes: &'de [u8],
    /// The next byte to read.
    at: usize,
    /// A string with escapes, decoded.
    scratch: String,
}

impl<'de> Reader<'de> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after any whitespace, not consumed.
    fn next(&mut self) -> Result<u8, GiveUp> {
        self.skip_space();
        self.bytes.get(self.at).copied().ok_or(GiveUp)
    }

    fn value<'a, S: Strings<'de, 'a>>(
        &mut self,
        builder: &mut Builder<'a, S>,
    ) -> Result<Value<'a>, GiveUp> {
        match self.next()? {
            b'"' => {
                self.at += 1;
                self.string(builder, false).map(Value::String)
            }
            b'{' => self.object(builder),
            b'[' => self.array(builder),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(GiveUp),
        }
    }

    fn literal<'a>(&mut self, word: &[u8], value: Value<'a>) -> Result<Value<'a>, GiveUp> {
        let end = self.at + word.len();
        if self.bytes.get(self.at..end) != Some(word) {
            return Err(GiveUp);
        }
        self.at = end;
        Ok(value)
    }

    fn number<'a>(&mut self) -> Result<Value<'a>, GiveUp> {
        let start = self.at;
        let mut end = start;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.bytes.get(end) {
            end += 1;
        }
        self.at = end;
        let token = self.bytes.get(start..end).ok_or(GiveUp)?;
        // An integer without a leading zero is what serde_json reads it
        // as: of at most 19 digits (all fit in a u64), or a minus and at
        // most 18 (all fit in an i64; `-0` is a float there, so it is
        // left to it). Anything else is serde_json's to read.
        let (negative, digits) = match token.split_first() {
            Some((b'-', digits)) => (true, digits),
            _ => (false, token),
        };
        let plain = !digits.is_empty()
            && digits.len() <= if negative { 18 } else { 19 }
            && digits.iter().all(u8::is_ascii_digit)
            && (digits.first() != Some(&b'0') || (digits.len() == 1 && !negative));
        if plain {
            let n = digits
                .iter()
                .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
            return Ok(Value::Number(if negative {
                // At most 18 digits: below 2^63.
                Number::NegInt(0i64.saturating_sub_unsigned(n))
            } else {
                Number::PosInt(n)
            }));
        }
        if let Some(f) = short_float(token) {
            return Ok(Value::Number(Number::Float(f)));
        }
        let token = self.text.get(start..end).ok_or(GiveUp)?;
        let n: serde_json::Number = serde_json::from_str(token).map_err(|_| GiveUp)?;
        Ok(Value::Number(number_from_serde(&n)))
    }

    /// A string whose opening quote has been read, kept by the builder's
    /// string policy as serde_json's reading would keep it (borrowed
    /// unless it has escapes).
    fn string<'a, S: Strings<'de, 'a>>(
        &mut self,
        builder: &mut Builder<'a, S>,
        key: bool,
    ) -> Result<&'a str, GiveUp> {
        let start = self.at;
        let end = special(self.bytes, start);
        match self.bytes.get(end) {
            Some(b'"') => {
                // Both ends are ASCII bytes: character boundaries.
                let s: &'de str = self.text.get(start..end).ok_or(GiveUp)?;
                self.at = end + 1;
                Ok(builder.strings.borrowed(builder.bump, s, key))
            }
            Some(b'\\') => {
                self.scratch.clear();
                self.scratch
                    .push_str(self.text.get(start..end).ok_or(GiveUp)?);
                self.at = end;
                self.escaped()?;
                Ok(builder.strings.transient(builder.bump, &self.scratch, key))
            }
            // A control character, or the end of the text.
            _ => Err(GiveUp),
        }
    }

    /// Decodes the rest of a string from the backslash at `self.at` into
    /// `scratch`, and reads its closing quote.
    fn escaped(&mut self) -> Result<(), GiveUp> {
        loop {
            let escape = self.bytes.get(self.at + 1).copied().ok_or(GiveUp)?;
            self.at += 2;
            let decoded = match escape {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => self.unicode()?,
                _ => return Err(GiveUp),
            };
            self.scratch.push(decoded);
            let end = special(self.bytes, self.at);
            self.scratch
                .push_str(self.text.get(self.at..end).ok_or(GiveUp)?);
            self.at = end;
            match self.bytes.get(end) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {}
                _ => return Err(GiveUp),
            }
        }
    }

    /// The character of a `\u` escape whose four hex digits start at
    /// `self.at` (a surrogate pair takes the escape after it). A lone
    /// surrogate is serde_json's to refuse.
    fn unicode(&mut self) -> Result<char, GiveUp> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                    return Err(GiveUp);
                }
                self.at += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(GiveUp);
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(GiveUp),
            code => code,
        };
        char::from_u32(code).ok_or(GiveUp)
    }

    fn hex4(&mut self) -> Result<u32, GiveUp> {
        let digits = self.bytes.get(self.at..self.at + 4).ok_or(GiveUp)?;
        let mut code = 0;
        for &d in digits {
            let v = char::from(d).to_digit(16).ok_or(GiveUp)?;
            code = code * 16 + v;
        }
        self.at += 4;
        Ok(code)
    }

    /// Reads the bracket or brace at `self.at` and opens the array or
    /// object, unless that would nest past [`DEEPEST`].
    fn enter<S>(&mut self, builder: &mut Builder<'_, S>) -> Result<(), GiveUp> {
        if builder.depth >= DEEPEST {
            return Err(GiveUp);
        }
        self.at += 1;
        builder.open();
        Ok(())
    }

    fn array<'a, S: Strings<'de, 'a>>(
        &mut self,
        builder: &mut Builder<'a, S>,
    ) -> Result<Value<'a>, GiveUp> {
        self.enter(builder)?;
        let start = builder.values.len();
        if self.next()? == b']' {
            self.at += 1;
        } else {
            loop {
                let value = self.value(builder)?;
                builder.values.push(value);
                match self.next()? {
                    b',' => self.at += 1,
                    b']' => {
                        self.at += 1;
                        break;
                    }
                    _ => return Err(GiveUp),
                }
            }
        }
        Ok(Value::Array(builder.close_array(start)))
    }

    fn object<'a, S: Strings<'de, 'a>>(
        &mut self,
        builder: &mut Builder<'a, S>,
    ) -> Result<Value<'a>, GiveUp> {
        self.enter(builder)?;
        let start = builder.entries.len();
        if self.next()? == b'}' {
            self.at += 1;
            return Ok(Value::Object(builder.close_map(start)));
        }
        loop {
            if self.next()? != b'"' {
                return Err(GiveUp);
            }
            self.at += 1;
            let key = self.string(builder, true)?;
            if let Some(root) = builder.stop_at(key, start) {
                return Ok(Value::Object(root));
            }
            if self.next()? != b':' {
                return Err(GiveUp);
            }
            self.at += 1;
            let value = self.value(builder)?;
            builder.entries.push((key, value));
            match self.next()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Ok(Value::Object(builder.close_map(start)));
                }
                _ => return Err(GiveUp),
            }
        }
    }
}

/// A JSON number with a fraction or an exponent whose digits number at
/// most 15 and whose value is those digits times a power of ten within
/// ±22, as a float; `None` for any other token.
///
/// serde_json reads such a number as its digits (exactly a float, being
/// below 2^53) times or divided by that power (exactly a float too): one
/// correctly rounded operation, so its float is the correctly rounded one
/// that `str::parse` gives. Other numbers are read by serde_json itself.
fn short_float(token: &[u8]) -> Option<f64> {
    let digits_from = |at: usize| {
        token.get(at..).map_or(0, |rest| {
            rest.iter().take_while(|b| b.is_ascii_digit()).count()
        })
    };
    let mut at = usize::from(token.first() == Some(&b'-'));
    let whole = digits_from(at);
    // No digit, or a leading zero before another digit: not JSON.
    if whole == 0 || (whole > 1 && token.get(at) == Some(&b'0')) {
        return None;
    }
    at += whole;
    let mut fraction = 0;
    if token.get(at) == Some(&b'.') {
        fraction = digits_from(at + 1);
        if fraction == 0 {
            return None;
        }
        at += 1 + fraction;
    }
    let mut exponent: i64 = 0;
    // An integer (`-0` among them) is not this function's.
    let mut float = fraction > 0;
    if let Some(b'e' | b'E') = token.get(at) {
        float = true;
        at += 1;
        let negative = token.get(at) == Some(&b'-');
        if let Some(b'-' | b'+') = token.get(at) {
            at += 1;
        }
        let digits = digits_from(at);
        if digits == 0 || digits > 4 {
            return None;
        }
        exponent = token
            .get(at..at + digits)?
            .iter()
            .fold(0, |e, d| e * 10 + i64::from(d - b'0'));
        if negative {
            exponent = -exponent;
        }
        at += digits;
    }
    let power = exponent - i64::try_from(fraction).ok()?;
    let short = float && at == token.len() && whole + fraction <= 15 && (-22..=22).contains(&power);
    if !short {
        return None;
    }
    std::str::from_utf8(token).ok()?.parse().ok()
}

/// The first byte at or after `at` that ends a run of plain string
/// content: a quote, a backslash or a control character (or the text's
/// length). Eight bytes are checked at a time.
fn special(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let quote = x ^ (ONES * u64::from(b'"'));
        let backslash = x ^ (ONES * u64::from(b'\\'));
        // Each term's lowest set high bit marks its first matching byte
        // (a borrow only reaches bytes above a match), so the lowest of
        // all is the first special byte.
        let found = ((quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (x.wrapping_sub(ONES * 0x20) & !x))
            & HIGH;
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return at;
        }
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Arena, Borrow, ValueSeed};
    use proptest::prelude::*;
    use serde::de::DeserializeSeed;

    /// What a reading built: the value, how its numbers print, the
    /// repeated keys noted, and the deepest nesting.
    #[derive(Debug, PartialEq)]
    struct Read {
        value: serde_json::Value,
        shown: String,
        repeated: Vec<String>,
        deepest: u32,
    }

    fn outcome(value: Value<'_>, builder: &Builder<'_, Borrow>) -> Read {
        Read {
            value: value.to_serde(),
            shown: value.to_string(),
            repeated: builder
                .duplicates
                .iter()
                .map(|d| format!("{}@{}", d.key, d.object.len()))
                .collect(),
            deepest: builder.deepest,
        }
    }

    /// This reader's tree (`None` when it gives up) and serde_json's
    /// (`None` when it refuses the text).
    fn both(text: &str) -> (Option<Read>, Option<Read>) {
        let arena = Arena::new();
        let mut builder = Builder::new(&arena.bump, Borrow, None);
        let fast = read(text, &mut builder).ok().map(|v| outcome(v, &builder));
        let mut builder = Builder::new(&arena.bump, Borrow, None);
        let mut de = serde_json::Deserializer::from_str(text);
        let serde = ValueSeed(&mut builder)
            .deserialize(&mut de)
            .and_then(|v| de.end().map(|()| v))
            .ok()
            .map(|v| outcome(v, &builder));
        (fast, serde)
    }

    /// Whatever this reader reads, serde_json reads the same; what it gives
    /// up on is an error there, or one of the cases left to it.
    fn agrees(text: &str) -> Result<(), TestCaseError> {
        let (fast, serde) = both(text);
        match (&fast, &serde) {
            (Some(f), Some(s)) => prop_assert_eq!(f, s, "{}", text),
            (Some(_), None) => prop_assert!(false, "read what serde_json refuses: {text}"),
            (None, Some(s)) => {
                // Given up on a readable text: only for a lone surrogate
                // escape, deep nesting or a number it leaves to serde_json
                // that serde_json then refuses; never for a plain document.
                prop_assert!(
                    text.contains("\\u") || s.deepest >= DEEPEST,
                    "gave up on a readable text: {text}"
                );
            }
            (None, None) => {}
        }
        Ok(())
    }

    fn json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            "\\PC{0,12}".prop_map(serde_json::Value::from),
            "[a-z\"\\\\/\n\t\u{0}-\u{1f}é😀]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(5, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                prop::collection::vec(("[a-c\"\\\\]{0,3}", inner), 0..6).prop_map(|entries| {
                    serde_json::Value::Object(entries.into_iter().collect())
                }),
            ]
        })
    }

    /// Text pieces that are valid and invalid in turn: numbers in every
    /// form, escapes (lone surrogates among them), literals, stray bytes.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("0".to_owned()),
            Just("-0".to_owned()),
            Just("-1".to_owned()),
            Just("0.5".to_owned()),
            Just("-12.5E+2".to_owned()),
            Just("1.25e-3".to_owned()),
            Just("123456789012345.6".to_owned()),
            Just("1e22".to_owned()),
            Just("1e23".to_owned()),
            Just("-0.0".to_owned()),
            Just("0.1e-22".to_owned()),
            Just("1e-0".to_owned()),
            Just("1e+".to_owned()),
            Just("00.5".to_owned()),
            Just("-01".to_owned()),
            Just("-999999999999999999".to_owned()),
            Just("-9223372036854775808".to_owned()),
            Just("-9223372036854775809".to_owned()),
            Just("01".to_owned()),
            Just("1.5e3".to_owned()),
            Just("1e400".to_owned()),
            Just("-".to_owned()),
            Just("18446744073709551616".to_owned()),
            Just("9999999999999999999".to_owned()),
            Just("1.".to_owned()),
            Just(".5".to_owned()),
            Just("\"\\ud800\"".to_owned()),
            Just("\"\\ud83d\\ude00\"".to_owned()),
            Just("\"\\udc00x\"".to_owned()),
            Just("\"\\u00e9\\n\\/\"".to_owned()),
            Just("\"\\x\"".to_owned()),
            Just("\"a\tb\"".to_owned()),
            Just("tru".to_owned()),
            Just("nul".to_owned()),
            Just(" \n\r\t".to_owned()),
            Just("\u{feff}".to_owned()),
            "[\\[\\]{}:,\"]".prop_map(|s| s),
            "[0-9a-z\\-+.eE]{1,6}",
        ]
    }

    proptest! {
        #[test]
        fn reads_any_document_as_serde_json_does(value in json(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&value)
            } else {
                serde_json::to_string(&value)
            }
            .unwrap_or_default();
            let (fast, serde) = both(&text);
            prop_assert!(fast.is_some(), "gave up on {}", text);
            prop_assert_eq!(fast, serde);
        }

        #[test]
        fn reads_short_numbers_as_serde_json_does(
            minus in any::<bool>(),
            digits in "[0-9]{1,17}",
            point in any::<prop::sample::Index>(),
            exponent in prop::option::of((prop_oneof![Just("e"), Just("E")], prop_oneof![Just(""), Just("+"), Just("-")], 0u32..40)),
        ) {
            let point = point.index(digits.len() + 1);
            let (whole, fraction) = digits.split_at(point);
            let mut token = String::new();
            if minus {
                token.push('-');
            }
            token.push_str(if whole.is_empty() { "0" } else { whole });
            if !fraction.is_empty() {
                token.push('.');
                token.push_str(fraction);
            }
            if let Some((e, sign, n)) = exponent {
                token.push_str(&format!("{e}{sign}{n}"));
            }
            agrees(&format!("[{token}]"))?;
            let (fast, _) = both(&format!("[{token}]"));
            // Only leading zeros and numbers out of range are left.
            prop_assert!(fast.is_some() || token.trim_start_matches('-').starts_with("0") || token.contains('e') || token.contains('E'), "{}", token);
        }

        #[test]
        fn agrees_with_serde_json_on_pieced_texts(pieces in prop::collection::vec(piece(), 1..12)) {
            agrees(&pieces.concat())?;
        }

        #[test]
        fn agrees_with_serde_json_on_damaged_documents(
            value in json(),
            at in any::<prop::sample::Index>(),
            with in piece(),
            cut in 0usize..4,
        ) {
            let text = serde_json::to_string(&value).unwrap_or_default();
            let mut at = at.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + cut).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let damaged = format!("{}{}{}", &text[..at], with, &text[end..]);
            agrees(&damaged)?;
        }
    }

    #[test]
    fn repeated_keys_and_nesting_are_noted_as_serde_json_reading_notes_them() {
        for text in [
            r#"{"a": 1, "b": {"a": 2, "a": 3}, "a": [4]}"#,
            r#"[{"x": {"y": {"z": []}}}, {"x": 1, "x": 2, "x": 3}]"#,
            r#"{"k\u0041": 1, "kA": 2}"#,
        ] {
            let (fast, serde) = both(text);
            assert!(fast.is_some(), "{text}");
            assert_eq!(fast, serde, "{text}");
        }
    }

    #[test]
    fn gives_up_at_what_it_leaves_to_serde_json() {
        let deep = format!("{}{}", "[".repeat(101), "]".repeat(101));
        for text in [
            "[1,]",
            r#"{"a":1,}"#,
            r#""\ud800""#,
            r#""\udc00""#,
            "\"tab\there\"",
            "1 2",
            "\u{feff}{}",
            "01",
            "",
            deep.as_str(),
        ] {
            let arena = Arena::new();
            let mut builder = Builder::new(&arena.bump, Borrow, None);
            assert!(read(text, &mut builder).is_err(), "{text}");
        }
    }

    #[test]
    fn special_finds_the_first_quote_backslash_or_control() {
        let cases: [(&[u8], usize); 8] = [
            (b"abc\"", 3),
            (b"abcdefgh\\", 8),
            (b"abcdefghij\nk\"", 10),
            (b"abcdefghijk", 11),
            (b"\"", 0),
            (b"a\x1fb\"", 1),
            ("é😀é\"x".as_bytes(), 8),
            (b"\x7f\x20\x21\x80aaa\\\"", 7),
        ];
        for (bytes, want) in cases {
            assert_eq!(special(bytes, 0), want, "{bytes:?}");
        }
        // From an offset, and a word whose later bytes borrow.
        assert_eq!(special(b"\"\x00\x00\x00\x00\x00\x00\x00\"", 1), 1);
        assert_eq!(special(b"ab\x00\"\x00\x00\x00\x00", 0), 2);
    }
}
