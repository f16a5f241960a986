//! The bridge's output contract: one AI tool definition per materialised
//! action, as upstream's `AIToolDefinition` (in `contracts/ai-service`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool as handed to an agent runtime (and from there to a model).
///
/// Serialises with upstream's camelCase keys; optional keys are omitted
/// when absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AIToolDefinition {
    /// The tool name (`action_<name>` for a materialised action).
    pub name: String,
    /// A human label (the action's label), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The LLM-facing description.
    pub description: String,
    /// The JSON Schema (draft 2020-12) of the tool's arguments: an object
    /// schema with `properties`, optional `required` and
    /// `additionalProperties: false`.
    pub parameters: Map<String, Value>,
    /// The tool category (`data`, `action`, `flow`, `integration`,
    /// `vector_search`, `analytics`, `utility`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The JSON Schema of the tool's result, when the author gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// The object the action belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_name: Option<String>,
    /// Whether a call must wait for a human's approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_confirmation: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serialises_camel_case_and_omits_absent_keys() {
        let def = AIToolDefinition {
            name: "action_x".into(),
            label: None,
            description: "d".into(),
            parameters: Map::new(),
            category: None,
            output_schema: None,
            object_name: Some("task".into()),
            requires_confirmation: Some(false),
        };
        assert_eq!(
            serde_json::to_value(&def).unwrap(),
            json!({"name": "action_x", "description": "d", "parameters": {},
                   "objectName": "task", "requiresConfirmation": false})
        );
    }
}
