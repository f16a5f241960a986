//! JavaScript's property order, and a writer that follows it.
//!
//! After `JSON.parse`, a JavaScript object lists its array-index keys
//! (canonical decimal integers below 2^32 - 1) first, in ascending numeric
//! order, then every other key in document order. Upstream reads
//! map-shaped collections in that order ([`crate::collection`],
//! [`crate::model::Collection`]) and `JSON.stringify` writes objects in it
//! ([`JsOrdered`]); this module is the one place that order is written.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

use super::{Map, Number, Value};

/// Whether `key` is an array index in JavaScript's sense (a canonical
/// decimal integer below 2^32 - 1), and which. JavaScript objects list such
/// keys first, in ascending numeric order, before all other keys.
///
/// ```
/// use objectstack_spec::json::order::is_array_index_key;
/// assert_eq!(is_array_index_key("10"), Some(10));
/// assert_eq!(is_array_index_key("01"), None);
/// ```
pub fn is_array_index_key(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    match bytes {
        [] => None,
        [b'0'] => Some(0),
        [b'0', ..] => None,
        _ if bytes.len() <= 10 && bytes.iter().all(u8::is_ascii_digit) => key
            .parse::<u64>()
            .ok()
            .filter(|n| *n < u64::from(u32::MAX))
            .and_then(|n| u32::try_from(n).ok()),
        _ => None,
    }
}

/// Entries in the order JavaScript's `Object.entries` yields them after
/// `JSON.parse`: array-index keys first in ascending numeric order, then
/// every other key in document order.
pub fn js_order<K: AsRef<str>, V>(mut entries: Vec<(K, V)>) -> Vec<(K, V)> {
    if entries
        .iter()
        .any(|(k, _)| is_array_index_key(k.as_ref()).is_some())
    {
        // A stable sort keeps document order among the non-index keys.
        entries.sort_by_key(|(k, _)| match is_array_index_key(k.as_ref()) {
            Some(n) => (0u8, n),
            None => (1u8, 0),
        });
    }
    entries
}

/// A map's entries in JavaScript's order (see [`js_order`]).
pub fn js_entries<'a>(map: &Map<'a>) -> Vec<(&'a str, &'a Value<'a>)> {
    js_order(map.iter().collect())
}

/// Writes a document value as `JSON.stringify` writes a value upstream
/// copied from the stack: objects list their keys in JavaScript's order
/// (integer-like keys first, ascending), and a float with no fraction and
/// a magnitude of at most 2^53 is written as an integer (`5.0` as `5`,
/// `-0` as `0`).
///
/// ```
/// use objectstack_spec::json::{self, Arena, order::JsOrdered};
/// let arena = Arena::new();
/// let v = json::parse(r#"{"b": 1, "2": 2.0, "a": [3]}"#, &arena)?;
/// let text = serde_json::to_string(&JsOrdered(&v)).unwrap_or_default();
/// assert_eq!(text, r#"{"2":2,"b":1,"a":[3]}"#);
/// # Ok::<(), objectstack_spec::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct JsOrdered<'v, 'a>(pub &'v Value<'a>);

impl Serialize for JsOrdered<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(Number::PosInt(n)) => serializer.serialize_u64(*n),
            Value::Number(Number::NegInt(n)) => serializer.serialize_i64(*n),
            Value::Number(Number::Float(n)) => match js_integer(*n) {
                Some(i) => serializer.serialize_i64(i),
                None => serializer.serialize_f64(*n),
            },
            Value::String(s) => serializer.serialize_str(s),
            Value::Array(items) => JsOrderedSeq(items).serialize(serializer),
            Value::Object(map) => JsOrderedMap(map).serialize(serializer),
        }
    }
}

/// A float `JSON.stringify` writes as an integer, as that integer: one
/// with no fraction whose magnitude is at most 2^53, where every integer
/// is exact (`5.0` is written `5`, and `-0` is written `0`).
fn js_integer(n: f64) -> Option<i64> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    #[allow(clippy::cast_possible_truncation)]
    (n.fract() == 0.0 && n.abs() <= EXACT).then_some(n as i64)
}

/// [`JsOrdered`] for an array's items.
struct JsOrderedSeq<'v, 'a>(&'v [Value<'a>]);

impl Serialize for JsOrderedSeq<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for item in self.0 {
            seq.serialize_element(&JsOrdered(item))?;
        }
        seq.end()
    }
}

/// [`JsOrdered`] for an object.
struct JsOrderedMap<'v, 'a>(&'v Map<'a>);

impl Serialize for JsOrderedMap<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let map = self.0;
        let mut out = serializer.serialize_map(Some(map.len()))?;
        if map.keys().any(|k| is_array_index_key(k).is_some()) {
            for (key, value) in js_entries(map) {
                out.serialize_entry(key, &JsOrdered(value))?;
            }
        } else {
            for (key, value) in map.iter() {
                out.serialize_entry(key, &JsOrdered(value))?;
            }
        }
        out.end()
    }
}

/// An owned copy of a document object, its keys in JavaScript's order and
/// its numbers as [`JsOrdered`] writes them.
pub fn to_js_ordered_serde(map: &Map<'_>) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(JsOrderedMap(map)) {
        Ok(serde_json::Value::Object(map)) => map,
        // Unreachable: an object serialises to an object, and a document
        // value (finite numbers, string keys) cannot fail to serialise.
        _ => serde_json::Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Arena, parse};

    #[test]
    fn array_index_keys() {
        assert_eq!(is_array_index_key("0"), Some(0));
        assert_eq!(is_array_index_key("4294967294"), Some(4_294_967_294));
        assert_eq!(is_array_index_key("4294967295"), None);
        assert_eq!(is_array_index_key("-1"), None);
        assert_eq!(is_array_index_key(""), None);
    }

    #[test]
    fn writes_as_json_stringify_does() {
        let arena = Arena::new();
        let v = parse(
            r#"{"z": {"10": 1, "x": -0.0, "2": 5.0}, "1": [1.5, {"b": 0, "0": 1e300}]}"#,
            &arena,
        )
        .unwrap();
        let text = serde_json::to_string(&JsOrdered(&v)).unwrap();
        assert_eq!(
            text,
            r#"{"1":[1.5,{"0":1e+300,"b":0}],"z":{"2":5,"10":1,"x":0}}"#
        );
        let owned = to_js_ordered_serde(v.as_object().unwrap());
        assert_eq!(serde_json::to_string(&owned).unwrap(), text);
    }
}
