//! What a `POST /mcp` body is, read without building it: one JSON-RPC
//! message (its id, and the kind of a `tools/call`'s `arguments`), a batch,
//! or not JSON. The check runs in front of rmcp on every request, so it
//! skims the body (unknown members and `arguments` are skipped, not built)
//! rather than parsing it into a tree that rmcp then builds again.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A body's shape.
#[derive(Debug, PartialEq)]
pub(crate) enum Shape {
    /// Not JSON; the parser's message.
    NotJson(String),
    /// A JSON-RPC batch (a top-level array).
    Batch,
    /// A `tools/call` request whose `arguments` is neither an object nor
    /// `null`: its id, and what `arguments` is (`"an array"`, ...).
    BadArguments(Value, &'static str),
    /// Anything else: rmcp reads it.
    Other,
}

/// The shape of `body`.
pub(crate) fn shape(body: &[u8]) -> Shape {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return match serde_json::from_slice::<IgnoredAny>(body) {
            Ok(_) => Shape::Batch,
            Err(e) => Shape::NotJson(e.to_string()),
        };
    }
    match serde_json::from_slice::<Probe>(body) {
        Ok(Probe {
            method: Some(method),
            id: Some(id),
            params: Some(Params {
                arguments: Some(Kind(kind)),
            }),
        }) if method == "tools/call" && kind != "an object" && kind != "null" => {
            Shape::BadArguments(id, kind)
        }
        Ok(_) => Shape::Other,
        Err(e) if e.is_syntax() || e.is_eof() => Shape::NotJson(e.to_string()),
        // JSON, but no message this probe reads (a scalar, a `method` that
        // is not a string): rmcp says what it says.
        Err(_) => Shape::Other,
    }
}

#[derive(Deserialize)]
struct Probe {
    method: Option<String>,
    id: Option<Value>,
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    arguments: Option<Kind>,
}

/// The JSON type of a value, which is skipped, not built.
struct Kind(&'static str);

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
        Ok(Kind("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind("a number"))
    }

    fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
        Ok(Kind("a string"))
    }

    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind("null"))
    }

    fn visit_none<E>(self) -> Result<Kind, E> {
        Ok(Kind("null"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Kind("an array"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Kind("an object"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bodies_are_told_apart_without_being_built() {
        assert!(matches!(
            shape(b"{\"jsonrpc\": \"2.0\", \"id\": 1,"),
            Shape::NotJson(_)
        ));
        assert!(matches!(shape(b"[1,"), Shape::NotJson(_)));
        assert_eq!(shape(b" [{\"jsonrpc\": \"2.0\"}]"), Shape::Batch);
        assert_eq!(shape(b"[]"), Shape::Batch);
        let call = |arguments: &str| {
            format!(
                "{{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"tools/call\", \
                 \"params\": {{\"name\": \"t\", \"arguments\": {arguments}, \"_meta\": {{}}}}}}"
            )
        };
        assert_eq!(
            shape(call("[1]").as_bytes()),
            Shape::BadArguments(json!(7), "an array")
        );
        assert_eq!(
            shape(call("\"x\"").as_bytes()),
            Shape::BadArguments(json!(7), "a string")
        );
        for fine in ["{\"a\": [1, {\"b\": null}]}", "null"] {
            assert_eq!(shape(call(fine).as_bytes()), Shape::Other, "{fine}");
        }
        // Not a request of ours to judge: rmcp answers them.
        assert_eq!(shape(b"5"), Shape::Other);
        assert_eq!(shape(b"{\"method\": 5}"), Shape::Other);
        assert_eq!(
            shape(b"{\"method\": \"tools/list\", \"id\": 1, \"params\": {\"arguments\": 1}}"),
            Shape::Other
        );
    }
}
