//! The JSON Schema (draft 2020-12) of the stack model.
//!
//! Generated from the [`crate::model`] types, so the schema and the serde
//! types cannot drift. The committed copy lives at
//! `spec/schema/stack.schema.json`; `cargo xtask codegen` rewrites it and a
//! test fails when it is stale (running that test with `UPDATE_SCHEMA=1`
//! rewrites it too).
//!
//! The strict shapes (the `ai` block, params, param hints, tool records,
//! tool bindings, skills) forbid undeclared keys; the loose ones (stack,
//! objects, fields, actions, agents) allow them. The schema checks types,
//! enums, name patterns, required keys, "exposed needs a description" and
//! the 40-character minimum of `ai.description` (JSON Schema counts code
//! points, not UTF-16 units, so a description of astral characters can
//! differ by a few). Rules across records (param hint keys name declared
//! params; duplicate names) are only in [`crate::validate`].

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use crate::model::Stack;

/// Where the committed schema lives, relative to the workspace root.
pub const SCHEMA_PATH: &str = "spec/schema/stack.schema.json";

/// The `$id` of the schema.
pub const SCHEMA_ID: &str =
    "https://github.com/objectstack-ai/objectstack-ai-rs/spec/schema/stack.schema.json";

/// The stack model's JSON Schema as a JSON value.
pub fn schema() -> Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut value = generator.into_root_schema_for::<Stack>().to_value();
    forbid_null(&mut value);
    let Value::Object(mut generated) = value else {
        return value;
    };
    // Header keys first, then the rest in generation order.
    let mut root = Map::new();
    for key in ["$schema", "$id", "title", "description"] {
        let v = match key {
            "$id" => Some(Value::from(SCHEMA_ID)),
            _ => generated.shift_remove(key),
        };
        if let Some(v) = v {
            root.insert(key.to_owned(), v);
        }
    }
    root.extend(generated);
    Value::Object(root)
}

/// Removes the `null` that schemars allows for every `Option`: the model
/// refuses `null` for optional keys (as upstream does), so the schema must
/// too. Iterative, so schema depth is no concern.
fn forbid_null(root: &mut Value) {
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                while let Some(inner) = drop_null_type(map) {
                    for (k, v) in inner {
                        map.entry(k).or_insert(v);
                    }
                }
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

/// Drops `null` from a `type` list; for an `anyOf` of one schema and
/// `null`, removes the `anyOf` and returns the schema to merge in.
fn drop_null_type(map: &mut Map<String, Value>) -> Option<Map<String, Value>> {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".to_owned(), only);
        }
    }
    let is_null = |o: &Value| o.get("type").and_then(Value::as_str) == Some("null");
    let keep = match map.get("anyOf") {
        Some(Value::Array(options)) if options.len() == 2 => {
            match (
                options.first().is_some_and(is_null),
                options.get(1).is_some_and(is_null),
            ) {
                (false, true) => 0,
                (true, false) => 1,
                _ => return None,
            }
        }
        _ => return None,
    };
    match map.shift_remove("anyOf") {
        Some(Value::Array(mut options)) => match options.swap_remove(keep) {
            Value::Object(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// The committed file's exact text: pretty JSON and a final newline.
pub fn render_schema() -> String {
    let mut text = serde_json::to_string_pretty(&schema()).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_schema_is_fresh() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/stack.schema.json");
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != render_schema() && std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, render_schema()).unwrap();
            return;
        }
        assert!(
            committed == render_schema(),
            "stale: run `cargo xtask codegen` ({} differs from render_schema())",
            path.display()
        );
    }

    #[test]
    fn schema_is_draft_2020_12_with_strict_shapes() {
        let s = schema();
        assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert_eq!(s["$id"], SCHEMA_ID);
        for strict in [
            "ActionAi",
            "ParamHint",
            "ActionParam",
            "Tool",
            "ToolBinding",
            "Skill",
        ] {
            assert_eq!(
                s["$defs"][strict]["additionalProperties"], false,
                "{strict}"
            );
        }
        assert_eq!(
            s["$defs"]["ToolEntry"]["required"],
            serde_json::json!(["label", "description"])
        );
        // `parameters` only when unbound; `requiresConfirmation` only when
        // bound (ADR-0109 Phase 2).
        let tool = &s["$defs"]["Tool"];
        assert_eq!(
            tool["anyOf"],
            serde_json::json!([{"required": ["parameters"]}, {"required": ["binding"]}])
        );
        assert_eq!(
            tool["dependentRequired"],
            serde_json::json!({"requiresConfirmation": ["binding"]})
        );
    }
}
