//! A tool's `outputSchema` as served, and the check that every
//! `structuredContent` the gateway sends conforms to it.
//!
//! MCP clients hold a tool with an `outputSchema` to it: the official SDKs
//! refuse a successful result without `structuredContent`, or with one the
//! schema rejects. Two results of an action tool are not the action's
//! result: the pending envelope of an action that waits for approval, and
//! whatever the server answered when it does not match the author's
//! schema. So the schema served for a tool that needs confirmation also
//! admits the pending envelope, and a result is checked before it is sent
//! as structured content.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value, json};

/// The longest violation message quoted back.
const MOST_CHARS: usize = 300;

/// The `outputSchema` served for `author`'s schema (`ai.outputSchema`): as
/// written, or, when calls need confirmation, one that also admits the
/// pending envelope (`{"status": "pending_approval", "pendingActionId",
/// "message"}`). The author's `$schema`, `$id`, `$defs` and `definitions`
/// stay at the root, so its `$ref`s resolve as they did.
pub(crate) fn served_schema(author: Map<String, Value>, confirmable: bool) -> Map<String, Value> {
    if !confirmable {
        return author;
    }
    let mut inner = author;
    let mut root = Map::new();
    for key in ["$schema", "$id", "$defs", "definitions"] {
        if let Some(value) = inner.remove(key) {
            root.insert(key.to_owned(), value);
        }
    }
    root.insert("type".to_owned(), json!("object"));
    root.insert(
        "anyOf".to_owned(),
        json!([Value::Object(inner), pending_schema()]),
    );
    root
}

/// The pending envelope's schema.
fn pending_schema() -> Value {
    json!({
        "type": "object",
        "description": "The action waits for a person's approval and has not run; look it up later with gateway-pending-actions.",
        "properties": {
            "status": {"const": "pending_approval"},
            "pendingActionId": {"type": "string"},
            "message": {"type": "string"}
        },
        "required": ["status", "pendingActionId"]
    })
}

/// A served `outputSchema` and its validator, compiled on first use.
#[derive(Debug)]
pub(crate) struct OutputCheck {
    schema: Arc<Map<String, Value>>,
    compiled: OnceLock<Result<jsonschema::Validator, String>>,
}

impl OutputCheck {
    /// The check of `schema` (the one the tool is listed with).
    pub(crate) fn new(schema: Arc<Map<String, Value>>) -> Self {
        OutputCheck {
            schema,
            compiled: OnceLock::new(),
        }
    }

    /// The schema, as the tool is listed with it.
    pub(crate) fn schema(&self) -> &Arc<Map<String, Value>> {
        &self.schema
    }

    /// Whether `value` may be sent as `structuredContent`: an object the
    /// schema accepts. The error says where it is not, in one line.
    pub(crate) fn check(&self, value: &Value) -> Result<(), String> {
        if !value.is_object() {
            return Err(format!(
                "the result is {}, not an object",
                objectstack_spec::json::kind(value)
            ));
        }
        let compiled = self.compiled.get_or_init(|| {
            jsonschema::validator_for(&Value::Object((*self.schema).clone()))
                .map_err(|e| e.to_string())
        });
        let validator = match compiled {
            Ok(validator) => validator,
            Err(e) => return Err(format!("the outputSchema does not compile: {e}")),
        };
        match validator.iter_errors(value).next() {
            None => Ok(()),
            Some(error) => {
                let at = error.instance_path().as_str().to_owned();
                let message = error.to_string();
                let message: String = message.chars().take(MOST_CHARS).collect();
                let at = if at.is_empty() {
                    "the top".to_owned()
                } else {
                    at
                };
                Err(objectstack_spec::text::line_safe(&format!("at {at}: {message}")).into_owned())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn author() -> Map<String, Value> {
        object(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"total": {"$ref": "#/$defs/money"}},
            "required": ["total"],
            "$defs": {"money": {"type": "number"}}
        }))
    }

    #[test]
    fn a_tool_without_confirmation_is_served_the_authors_schema() {
        assert_eq!(served_schema(author(), false), author());
    }

    #[test]
    fn a_confirmable_tool_admits_its_result_and_the_pending_envelope_only() {
        let check = OutputCheck::new(Arc::new(served_schema(author(), true)));
        assert_eq!(check.check(&json!({"total": 12.5})), Ok(()));
        let pending = json!({"ok": true, "status": "pending_approval",
                             "pendingActionId": "pa_1", "message": "waits"});
        assert_eq!(check.check(&pending), Ok(()));
        // The `$ref` still resolves: a string total is refused.
        assert!(check.check(&json!({"total": "12"})).is_err());
        assert!(check.check(&json!({"status": "done"})).is_err());
    }

    #[test]
    fn a_result_the_schema_refuses_says_where() {
        let check = OutputCheck::new(Arc::new(author()));
        let refused = check.check(&json!({"total": "x"})).unwrap_err();
        assert!(refused.starts_with("at /total: "), "{refused}");
        let refused = check.check(&json!([1])).unwrap_err();
        assert_eq!(refused, "the result is an array, not an object");
        let refused = check.check(&json!({})).unwrap_err();
        assert!(refused.starts_with("at the top: "), "{refused}");
    }
}
