//! Canonical JSON and its SHA-256: what binds an approval to the input the
//! operator saw. Object keys are sorted by their UTF-8 bytes, there is no
//! whitespace, strings and numbers are written as `serde_json` writes
//! them, within a size and a nesting limit.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::ApprovalError;

/// Deepest nesting of a pending action's input that is accepted.
pub const MAX_INPUT_DEPTH: usize = 64;

/// Largest pending action input, in bytes of canonical JSON.
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;

/// The SHA-256 (lowercase hex) of the canonical JSON of `input`: object
/// keys sorted by their UTF-8 bytes, no whitespace, strings and numbers as
/// `serde_json` writes them. The same input always hashes the same,
/// whatever order its keys arrived in.
pub fn input_sha256(input: &Map<String, Value>) -> Result<String, ApprovalError> {
    let canonical = canonical_json(input)?;
    Ok(hex(&Sha256::digest(canonical.as_bytes())))
}

pub(super) fn input_sha256_of(input: &Map<String, Value>) -> Result<String, ApprovalError> {
    input_sha256(input).map_err(|e| match e {
        ApprovalError::InvalidRequest(why) => {
            ApprovalError::InvalidRequest(format!("the edited input: {why}"))
        }
        other => other,
    })
}

/// The canonical JSON text of `input` (see [`input_sha256`]).
pub fn canonical_json(input: &Map<String, Value>) -> Result<String, ApprovalError> {
    let mut out = String::new();
    let rules = Canonical {
        max_bytes: MAX_INPUT_BYTES,
        max_depth: MAX_INPUT_DEPTH,
        integral_floats_as_integers: false,
    };
    match write_object(input, &mut out, 1, &rules) {
        Ok(()) => Ok(out),
        Err(CanonicalError::TooDeep) => Err(ApprovalError::InvalidRequest(format!(
            "the input nests deeper than {MAX_INPUT_DEPTH} levels"
        ))),
        Err(CanonicalError::TooLarge) => Err(ApprovalError::InvalidRequest(format!(
            "the input is larger than {MAX_INPUT_BYTES} bytes of JSON"
        ))),
    }
}

/// How [`write_object`] writes a canonical form.
pub(super) struct Canonical {
    /// Largest text, in bytes.
    pub(super) max_bytes: usize,
    /// Deepest nesting.
    pub(super) max_depth: usize,
    /// Write a float with no fractional part (of magnitude at most 2^53)
    /// as the integer it equals, as `JSON.stringify` does: `2.0` and `2`
    /// are one value written two ways.
    pub(super) integral_floats_as_integers: bool,
}

/// Why a value has no canonical form within the limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CanonicalError {
    /// Nested deeper than the limit.
    TooDeep,
    /// Longer than the limit.
    TooLarge,
}

/// Writes `map` with its keys sorted by their UTF-8 bytes, recursively, no
/// whitespace, strings as `serde_json` escapes them.
pub(super) fn write_object(
    map: &Map<String, Value>,
    out: &mut String,
    depth: usize,
    rules: &Canonical,
) -> Result<(), CanonicalError> {
    if depth > rules.max_depth {
        return Err(CanonicalError::TooDeep);
    }
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    out.push('{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(key, out);
        out.push(':');
        write_value(value, out, depth, rules)?;
        if out.len() > rules.max_bytes {
            return Err(CanonicalError::TooLarge);
        }
    }
    out.push('}');
    Ok(())
}

fn write_value(
    value: &Value,
    out: &mut String,
    depth: usize,
    rules: &Canonical,
) -> Result<(), CanonicalError> {
    match value {
        Value::Object(map) => write_object(map, out, depth + 1, rules)?,
        Value::Array(items) => {
            if depth + 1 > rules.max_depth {
                return Err(CanonicalError::TooDeep);
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out, depth + 1, rules)?;
                if out.len() > rules.max_bytes {
                    return Err(CanonicalError::TooLarge);
                }
            }
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        Value::Number(n) if rules.integral_floats_as_integers && n.is_f64() => {
            const LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53
            match n.as_f64() {
                // In range, so the cast is exact (and -0 becomes 0).
                Some(f) if f.fract() == 0.0 && f.abs() <= LIMIT => {
                    out.push_str(&(f as i64).to_string());
                }
                _ => out.push_str(&n.to_string()),
            }
        }
        scalar => out.push_str(&scalar.to_string()),
    }
    Ok(())
}

fn write_string(s: &str, out: &mut String) {
    out.push_str(&Value::String(s.to_owned()).to_string());
}

/// Whether `s` is a SHA-256 as this module writes them: 64 lowercase hex
/// digits.
pub(super) fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

pub(super) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn canonical_json_sorts_keys_recursively() {
        let a = map(json!({"b": 1, "a": {"d": [1, {"y": 2, "x": 1}], "c": "é\n"}}));
        assert_eq!(
            canonical_json(&a).unwrap(),
            r#"{"a":{"c":"é\n","d":[1,{"x":1,"y":2}]},"b":1}"#
        );
        let b = map(json!({"a": {"c": "é\n", "d": [1, {"x": 1, "y": 2}]}, "b": 1}));
        assert_eq!(input_sha256(&a).unwrap(), input_sha256(&b).unwrap());
        assert_ne!(
            input_sha256(&a).unwrap(),
            input_sha256(&map(json!({"b": 2}))).unwrap()
        );
    }

    #[test]
    fn sha256_of_empty_object_is_the_known_digest() {
        // sha256("{}")
        assert_eq!(
            input_sha256(&Map::new()).unwrap(),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn deep_or_huge_input_is_refused() {
        let mut v = json!(1);
        for _ in 0..100 {
            v = json!([v]);
        }
        let err = input_sha256(&map(json!({"x": v}))).unwrap_err();
        assert!(err.to_string().contains("deeper than"), "{err}");
        let big = "x".repeat(MAX_INPUT_BYTES + 1);
        let err = input_sha256(&map(json!({"x": big}))).unwrap_err();
        assert!(err.to_string().contains("bytes"), "{err}");
    }
}
