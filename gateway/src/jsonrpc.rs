//! What a message (a `POST /mcp` body, a stdio line) is, and what to do
//! with it ([`verdict`]): hand it to rmcp, answer it with JSON-RPC's error,
//! or drop it. [`shape`] skims it first, without building it (unknown
//! members and `arguments` are skipped): one JSON-RPC 2.0 message (its id,
//! and whether a `tools/call`'s params are a tool call), JSON that is no
//! such message, a batch, or not JSON. A message that passes is then read
//! as rmcp reads it (`ClientJsonRpcMessage`), so whatever rmcp would refuse
//! is answered here with the request's id; that read costs a few
//! microseconds for a call's usual body.

use std::borrow::Cow;
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
    /// JSON, but not a JSON-RPC 2.0 message: the request's id when it has
    /// a usable one (else `null`), and what is wrong.
    Invalid(Value, String),
    /// A `tools/call` request whose params are not a tool call: its id,
    /// and what is wrong (`arguments` that is not an object, no `name`).
    BadParams(Value, String),
    /// A well-formed message: rmcp reads it.
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
    if first.is_some_and(|b| *b != b'{') {
        return match serde_json::from_slice::<IgnoredAny>(body) {
            Ok(_) => Shape::Invalid(
                Value::Null,
                "the body is a JSON value but not an object; send one JSON-RPC message".into(),
            ),
            Err(e) => Shape::NotJson(e.to_string()),
        };
    }
    match serde_json::from_slice::<Probe>(body) {
        Ok(_) if too_deep(body) => Shape::Invalid(
            Value::Null,
            format!("the message nests arrays and objects deeper than {MAX_DEPTH} levels"),
        ),
        Ok(probe) => probe.judge(),
        Err(e) if e.is_syntax() || e.is_eof() => Shape::NotJson(e.to_string()),
        Err(e) => Shape::Invalid(Value::Null, format!("the message cannot be read ({e})")),
    }
}

/// The deepest nesting rmcp's reading accepts (serde_json's recursion
/// limit of 128 refuses the 128th level).
const MAX_DEPTH: usize = 127;

/// Whether `body` (JSON) nests arrays and objects deeper than
/// [`MAX_DEPTH`]. The probe skips what it does not read without a depth
/// limit, so this counts brackets outside strings.
fn too_deep(body: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The members of a message that say what it is; the rest is skipped.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    jsonrpc: Option<Kind>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default)]
    params: Option<Params>,
    #[serde(default, deserialize_with = "present_kind")]
    result: Option<Kind>,
    #[serde(default, deserialize_with = "present_kind")]
    error: Option<Kind>,
}

/// A member that is present, `null` included (`Some(Value::Null)`).
fn present<'de, D: de::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A member that is present, `null` included, by its JSON type.
fn present_kind<'de, D: de::Deserializer<'de>>(deserializer: D) -> Result<Option<Kind>, D::Error> {
    Kind::deserialize(deserializer).map(Some)
}

impl Probe {
    fn judge(self) -> Shape {
        let id = match &self.id {
            Some(id @ Value::String(_)) => id.clone(),
            Some(Value::Number(n)) if n.is_i64() => Value::Number(n.clone()),
            _ => Value::Null,
        };
        // An error response may have no usable id: JSON-RPC answers a
        // request whose id could not be read with `"id": null`.
        let error_response = self.method.is_none() && self.error.is_some() && self.result.is_none();
        let invalid = |why: &str| Shape::Invalid(id.clone(), why.to_owned());
        if self
            .jsonrpc
            .as_ref()
            .is_none_or(|v| v.text.as_deref() != Some("2.0"))
        {
            return invalid("`jsonrpc` must be \"2.0\"");
        }
        if self
            .id
            .as_ref()
            .is_some_and(|given| !given.is_null() || !error_response)
            && id.is_null()
        {
            return invalid("`id` must be a string or an integer (of 64 bits)");
        }
        match &self.method {
            Some(Value::String(_)) if self.result.is_some() || self.error.is_some() => invalid(
                "a message is a request or notification (`method`) or a response (`result` or \
                 `error`), not both",
            ),
            Some(Value::String(method)) => {
                if method == "tools/call"
                    && self.id.is_some()
                    && let Some(why) = self.params.unwrap_or_default().fault()
                {
                    return Shape::BadParams(id, why);
                }
                Shape::Other
            }
            Some(_) => invalid("`method` must be a string"),
            None if error_response
                || (self.id.is_some() && self.result.is_some() && self.error.is_none()) =>
            {
                Shape::Other
            }
            None => invalid(
                "the message is neither a request nor a notification (`method`), nor a response \
                 (`id` with `result`, or `error`)",
            ),
        }
    }
}

/// What to do with one message: a `POST /mcp` body or a stdio line.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict<'a> {
    /// Hand it to rmcp: the bytes, with each lone surrogate escape written
    /// as U+FFFD when it had any.
    Pass(Cow<'a, [u8]>),
    /// Answer it with this JSON-RPC error, and hand rmcp nothing.
    Answer {
        /// The request's id, or `null`.
        id: Value,
        /// The JSON-RPC error code.
        code: i64,
        /// What is wrong.
        message: String,
    },
    /// Drop it: a notification or response rmcp cannot read, which
    /// JSON-RPC never answers; why, for the log.
    Drop(String),
}

/// The verdict on `body`, a message sent as one `what` ("body" or
/// "line"). Past [`shape`]'s checks, the message is read as rmcp reads it
/// (`ClientJsonRpcMessage`), so what rmcp would refuse (with a plain-text
/// 415 over HTTP, an answer without an id or none at all over stdio) is
/// answered here with the request's id: -32602 when a request's `params`
/// do not fit its method.
pub(crate) fn verdict<'a>(body: &'a [u8], what: &str) -> Verdict<'a> {
    let answer = |id: Value, code: i64, message: String| Verdict::Answer { id, code, message };
    // rmcp skips a byte-order mark; JSON text is UTF-8; and a lone
    // surrogate escape is read as U+FFFD (as long as the escape, so every
    // position holds) before anything reads the message.
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let unmarked = body.strip_prefix(BOM).unwrap_or(body);
    let text = match std::str::from_utf8(unmarked) {
        Ok(text) => text,
        Err(e) => {
            return answer(
                Value::Null,
                -32700,
                format!(
                    "Parse error: the {what} is not UTF-8 (at byte {})",
                    e.valid_up_to() + (body.len() - unmarked.len())
                ),
            );
        }
    };
    let text: Cow<'a, str> = match objectstack_spec::parse::patch_lone_surrogates(text) {
        Some(patched) => Cow::Owned(patched),
        None => Cow::Borrowed(text),
    };
    // The skim comes first: rmcp reads a `tools/call` whose params are no
    // tool call as a custom request, so its own reading would pass it.
    match shape(text.as_bytes()) {
        Shape::Other => {}
        Shape::NotJson(why) => {
            return answer(
                Value::Null,
                -32700,
                format!("Parse error: the {what} is not JSON ({why})"),
            );
        }
        Shape::Batch => {
            return answer(
                Value::Null,
                -32600,
                format!(
                    "Invalid Request: JSON-RPC batches are not supported; send one message per \
                     {what}"
                ),
            );
        }
        Shape::Invalid(id, why) => return answer(id, -32600, format!("Invalid Request: {why}")),
        Shape::BadParams(id, why) => return answer(id, -32602, why),
    }
    let Err(e) = serde_json::from_str::<rmcp::model::ClientJsonRpcMessage>(&text) else {
        return Verdict::Pass(match text {
            Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
            Cow::Owned(text) => Cow::Owned(text.into_bytes()),
        });
    };
    // What the message is, as `shape` already found it well formed.
    let Ok(probe) = serde_json::from_str::<Probe>(&text) else {
        return answer(Value::Null, -32600, format!("Invalid Request: {e}"));
    };
    let id = match probe.id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
        _ => Value::Null,
    };
    match probe.method {
        Some(Value::String(method)) if !id.is_null() => answer(
            id,
            -32602,
            format!("Invalid params: `{method}` does not take these params ({e})"),
        ),
        Some(Value::String(method)) => Verdict::Drop(format!("notification `{method}`: {e}")),
        _ => Verdict::Drop(format!("response: {e}")),
    }
}

/// Why a `tools/call` request's params are not a tool call, if they are
/// not, from the JSON kinds (as [`kind_of`] names them) of `params` when it
/// is not an object, and of its `name` and `arguments`.
pub(crate) fn tool_call_fault(
    params: Option<&'static str>,
    name: Option<&'static str>,
    arguments: Option<&'static str>,
) -> Option<String> {
    if let Some(kind) = params {
        return Some(format!(
            "Invalid params: a tool call's `params` must be an object, not {kind}"
        ));
    }
    if name != Some("a string") {
        return Some("Invalid params: `name` must be the name of a tool (a string)".into());
    }
    match arguments {
        None | Some("an object" | "null") => None,
        Some(kind) => Some(format!(
            "Invalid params: `arguments` must be an object of the tool's parameters, not {kind}"
        )),
    }
}

/// The JSON kind of a value, as the messages name it (`"an array"`).
pub(crate) fn kind_of(value: &Value) -> &'static str {
    // Named as the probe names what it skims, by the same visitor.
    Kind::deserialize(value).map_or("a JSON value", |k| k.kind)
}

/// A request's `params`: the kinds of `name` and `arguments` when it is
/// an object, else its own kind.
#[derive(Default)]
struct Params {
    not_object: Option<&'static str>,
    name: Option<Kind>,
    arguments: Option<Kind>,
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParamsVisitor;
        impl<'de> Visitor<'de> for ParamsVisitor {
            type Value = Params;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
                let mut params = Params::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "name" => params.name = Some(map.next_value()?),
                        "arguments" => params.arguments = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(params)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Params, A::Error> {
                KindVisitor.visit_seq(seq).map(Params::other)
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Params, E> {
                KindVisitor.visit_bool(v).map(Params::other)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Params, E> {
                KindVisitor.visit_i64(v).map(Params::other)
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Params, E> {
                KindVisitor.visit_u64(v).map(Params::other)
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Params, E> {
                KindVisitor.visit_f64(v).map(Params::other)
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Params, E> {
                KindVisitor.visit_str(v).map(Params::other)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Params, E> {
                KindVisitor.visit_unit().map(Params::other)
            }
        }
        deserializer.deserialize_any(ParamsVisitor)
    }
}

impl Params {
    /// Params that are not an object, by the kind they are instead.
    fn other(kind: Kind) -> Params {
        Params {
            not_object: Some(kind.kind),
            ..Params::default()
        }
    }

    /// Why these are not a tool call's params, if they are not.
    fn fault(&self) -> Option<String> {
        tool_call_fault(
            self.not_object,
            self.name.as_ref().map(|k| k.kind),
            self.arguments.as_ref().map(|k| k.kind),
        )
    }
}

/// The JSON type of a value, which is skipped, not built (a short string
/// is kept: `jsonrpc`'s version).
struct Kind {
    kind: &'static str,
    text: Option<String>,
}

impl Kind {
    fn of(kind: &'static str) -> Kind {
        Kind { kind, text: None }
    }
}

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
        Ok(Kind::of("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind::of("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind::of("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind::of("a number"))
    }

    fn visit_str<E>(self, text: &str) -> Result<Kind, E> {
        Ok(Kind {
            kind: "a string",
            text: (text.len() <= 8).then(|| text.to_owned()),
        })
    }

    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::of("null"))
    }

    fn visit_none<E>(self) -> Result<Kind, E> {
        Ok(Kind::of("null"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Kind::of("an array"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Kind::of("an object"))
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
        assert!(matches!(shape(b"nope"), Shape::NotJson(_)));
        assert_eq!(shape(b" [{\"jsonrpc\": \"2.0\"}]"), Shape::Batch);
        assert_eq!(shape(b"[]"), Shape::Batch);
        let call = |arguments: &str| {
            format!(
                "{{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"tools/call\", \
                 \"params\": {{\"name\": \"t\", \"arguments\": {arguments}, \"_meta\": {{}}}}}}"
            )
        };
        let bad = |id: Value, why: &str| Shape::BadParams(id, why.to_owned());
        assert_eq!(
            shape(call("[1]").as_bytes()),
            bad(
                json!(7),
                "Invalid params: `arguments` must be an object of the tool's parameters, not an array"
            )
        );
        assert!(
            matches!(shape(call("\"x\"").as_bytes()), Shape::BadParams(id, why) if id == json!(7) && why.ends_with("not a string"))
        );
        for fine in ["{\"a\": [1, {\"b\": null}]}", "null"] {
            assert_eq!(shape(call(fine).as_bytes()), Shape::Other, "{fine}");
        }
    }

    #[test]
    fn a_tool_call_needs_a_name_and_object_params() {
        for (params, why) in [
            ("{}", "`name` must be the name of a tool"),
            ("{\"name\": 5}", "`name` must be the name of a tool"),
            ("[\"t\"]", "`params` must be an object, not an array"),
            ("\"t\"", "`params` must be an object, not a string"),
        ] {
            let body = format!(
                "{{\"jsonrpc\": \"2.0\", \"id\": \"c1\", \"method\": \"tools/call\", \"params\": {params}}}"
            );
            match shape(body.as_bytes()) {
                Shape::BadParams(id, message) => {
                    assert_eq!(id, json!("c1"));
                    assert!(message.contains(why), "{params}: {message}");
                }
                other => panic!("{params}: {other:?}"),
            }
        }
        // Missing params altogether is no tool call either.
        let body = b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"tools/call\"}";
        assert!(matches!(shape(body), Shape::BadParams(id, _) if id == json!(3)));
        // A notification of that name has no id to answer: rmcp drops it.
        let body = b"{\"jsonrpc\": \"2.0\", \"method\": \"tools/call\", \"params\": {}}";
        assert_eq!(shape(body), Shape::Other);
    }

    #[test]
    fn json_that_is_no_json_rpc_message_is_an_invalid_request() {
        for (body, id, why) in [
            ("{\"foo\": 1}", json!(null), "`jsonrpc` must be"),
            (
                "{\"jsonrpc\": \"1.0\", \"id\": 1, \"method\": \"ping\"}",
                json!(1),
                "`jsonrpc` must be",
            ),
            (
                "{\"id\": 1, \"method\": \"ping\"}",
                json!(1),
                "`jsonrpc` must be",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": null, \"method\": \"ping\"}",
                json!(null),
                "`id` must be",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": 9223372036854775808, \"method\": \"ping\"}",
                json!(null),
                "`id` must be",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": null, \"result\": {}}",
                json!(null),
                "`id` must be",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"method\": \"ping\"}",
                json!(null),
                "`id` must be",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": {\"a\": 1}, \"method\": \"ping\"}",
                json!(null),
                "`id` must be",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": 5}",
                json!(1),
                "`method` must be",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": 1}",
                json!(1),
                "neither a request",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}, \"error\": {}}",
                json!(1),
                "neither a request",
            ),
            ("123", json!(null), "not an object"),
            ("\"x\"", json!(null), "not an object"),
        ] {
            match shape(body.as_bytes()) {
                Shape::Invalid(got, message) => {
                    assert_eq!(got, id, "{body}");
                    assert!(message.contains(why), "{body}: {message}");
                }
                other => panic!("{body}: {other:?}"),
            }
        }
        // Requests, notifications and responses (a client answering an
        // elicitation) are rmcp's to read.
        for fine in [
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}",
            "{\"jsonrpc\": \"2.0\", \"id\": \"a\", \"method\": \"ping\", \"params\": {}}",
            "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}",
            "{\"jsonrpc\": \"2.0\", \"id\": 0, \"result\": {\"action\": \"accept\"}}",
            "{\"jsonrpc\": \"2.0\", \"id\": 0, \"result\": null}",
            "{\"jsonrpc\": \"2.0\", \"id\": 9, \"error\": {\"code\": -1, \"message\": \"no\"}}",
            // A client that could not read a server's message says so
            // without an id, or with a null one.
            "{\"jsonrpc\": \"2.0\", \"id\": null, \"error\": {\"code\": -32700, \"message\": \"x\"}}",
            "{\"jsonrpc\": \"2.0\", \"error\": {\"code\": -32700, \"message\": \"x\"}}",
        ] {
            assert_eq!(shape(fine.as_bytes()), Shape::Other, "{fine}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_before_rmcp() {
        let deep = format!(
            "{{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": {{\"name\": \"t\", \"arguments\": {{\"a\": {}1{}}}}}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(
            matches!(shape(deep.as_bytes()), Shape::Invalid(_, why) if why.contains("deeper than 127")),
        );
        // At the limit, and brackets inside strings, are fine.
        let at_limit = format!(
            "{{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"params\": {{\"_meta\": {}{}, \"s\": \"{}\\\"\"}}}}",
            "[".repeat(125),
            "]".repeat(125),
            "[".repeat(500)
        );
        assert_eq!(shape(at_limit.as_bytes()), Shape::Other);
        let over = at_limit.replacen("[", "[[", 1).replacen("]", "]]", 1);
        assert!(matches!(shape(over.as_bytes()), Shape::Invalid(..)));
    }
}

#[cfg(test)]
mod verdicts {
    use super::*;
    use serde_json::json;

    fn of(text: &[u8]) -> Verdict<'_> {
        verdict(text, "line")
    }

    fn answered(text: &[u8]) -> (Value, i64, String) {
        match of(text) {
            Verdict::Answer { id, code, message } => (id, code, message),
            other => panic!("{}: {other:?}", String::from_utf8_lossy(text)),
        }
    }

    #[test]
    fn what_rmcp_reads_passes_as_it_was() {
        for text in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":2,"method":"foo/bar","params":{"x":1}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{}}}"#,
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"no"}}"#,
        ] {
            assert_eq!(
                of(text),
                Verdict::Pass(Cow::Borrowed(text)),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn a_lone_surrogate_escape_is_passed_as_the_replacement_character() {
        let text = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"a":"\ud800"}}}"#;
        let Verdict::Pass(Cow::Owned(patched)) = of(text) else {
            panic!("{:?}", of(text));
        };
        assert_eq!(
            patched,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"a":"\uFFFD"}}}"#
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_in_a_string_are_a_parse_error() {
        let (id, code, message) =
            answered(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"x\":\"\xff\"}");
        assert_eq!((id, code), (Value::Null, -32700));
        assert!(message.contains("not UTF-8 (at byte 45)"), "{message}");
    }

    #[test]
    fn params_rmcp_cannot_read_are_invalid_params_for_the_request_id() {
        for (text, id) in [
            (&br#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":5}"#[..], json!(8)),
            (br#"{"jsonrpc":"2.0","id":"p","method":"ping","params":5}"#, json!("p")),
            (
                br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","_meta":"m"}}"#,
                json!(9),
            ),
        ] {
            let (got, code, message) = answered(text);
            assert_eq!((got, code), (id, -32602), "{message}");
            assert!(message.starts_with("Invalid params: `"), "{message}");
        }
    }

    #[test]
    fn a_notification_or_response_rmcp_cannot_read_is_not_answered() {
        for text in [
            &br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":5}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
        ] {
            assert!(
                matches!(of(text), Verdict::Drop(_)),
                "{}: {:?}",
                String::from_utf8_lossy(text),
                of(text)
            );
        }
    }

    #[test]
    fn a_message_that_is_both_a_request_and_a_response_is_invalid() {
        let (id, code, _) =
            answered(br#"{"jsonrpc":"2.0","id":115,"method":"tools/list","result":{}}"#);
        assert_eq!((id, code), (json!(115), -32600));
    }
}

#[cfg(test)]
mod before_the_skim {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_lone_surrogate_anywhere_is_patched_before_the_message_is_read() {
        for (text, id) in [
            (
                &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"t\ud83d":"a"}}}"#[..],
                json!(1),
            ),
            (br#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"x\ud83d"}}"#, json!(2)),
            (br#"{"jsonrpc":"2.0","id":"s\ud800","method":"ping"}"#, json!("s\u{fffd}")),
        ] {
            let Verdict::Pass(passed) = verdict(text, "line") else {
                panic!("{}: {:?}", String::from_utf8_lossy(text), verdict(text, "line"));
            };
            let read: Value = serde_json::from_slice(&passed).unwrap();
            assert_eq!(read["id"], id);
            assert!(String::from_utf8_lossy(&passed).contains("\\uFFFD"));
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped_as_rmcp_skips_it() {
        let text = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        assert_eq!(
            verdict(text, "line"),
            Verdict::Pass(Cow::Borrowed(&text[3..]))
        );
        let Verdict::Answer { code, message, .. } =
            verdict(b"\xEF\xBB\xBF{\"a\":\"\xff\"}", "line")
        else {
            panic!("not answered");
        };
        assert_eq!(code, -32700);
        assert!(message.contains("at byte 9"), "{message}");
    }
}
