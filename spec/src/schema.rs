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
//! enums, name patterns and the 40-character minimum of `ai.description`
//! (JSON Schema counts code points, not UTF-16 units, so a description of
//! astral characters can differ by a few). Cross-field rules (an exposed
//! action needs a description; param hint keys name declared params;
//! duplicate names) are only in [`crate::validate`].

use schemars::generate::SchemaSettings;

use crate::model::Stack;

/// Where the committed schema lives, relative to the workspace root.
pub const SCHEMA_PATH: &str = "spec/schema/stack.schema.json";

/// The `$id` of the schema.
pub const SCHEMA_ID: &str =
    "https://github.com/objectstack-ai/objectstack-ai-rs/spec/schema/stack.schema.json";

/// The stack model's JSON Schema as a JSON value.
pub fn schema() -> serde_json::Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<Stack>();
    let mut value = schema.to_value();
    if let serde_json::Value::Object(map) = &mut value {
        map.shift_insert(1, "$id".to_owned(), SCHEMA_ID.into());
    }
    value
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
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/stack.schema.json");
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
        for strict in ["ActionAi", "ParamHint", "ActionParam", "Tool", "ToolBinding", "Skill"] {
            assert_eq!(s["$defs"][strict]["additionalProperties"], false, "{strict}");
        }
        assert_eq!(s["$defs"]["ToolEntry"]["required"], serde_json::json!(["label", "description", "parameters"]));
    }
}
