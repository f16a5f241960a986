//! Tool records (ADR-0109) and their bindings.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::de::present;
use super::enums::BindingType;

/// A tool record (`stack.tools[]`): the optional refinement layer of
/// ADR-0109.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend(
    "additionalProperties" = false,
    "patternProperties" = { "^_(lock|lockReason|lockSource|provenance|packageId|packageVersion|lockDocsUrl)$": true },
    "anyOf" = [{ "required": ["parameters"] }, { "required": ["binding"] }],
    "dependentRequired" = { "requiresConfirmation": ["binding"] }
)))]
pub struct Tool {
    /// Tool name, `^[a-z_][a-z0-9_]*$`.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$")))]
    pub name: String,
    /// Display name.
    pub label: String,
    /// What the model reads to decide when to call the tool.
    pub description: String,
    /// JSON Schema of the arguments; required on an unbound record. A bound
    /// record without it takes its action's parameters; with it, it may
    /// only narrow them.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub parameters: Option<Map<String, Value>>,
    /// Whether calls wait for a human's approval (bound records only; an
    /// unbound record's is a retired key). `false` never relaxes an action
    /// that needs confirmation.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub requires_confirmation: Option<bool>,
    /// JSON Schema of the result.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<Map<String, Value>>,
    /// The object the tool works on.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$")))]
    pub object_name: Option<String>,
    /// The executable this record refines (ADR-0109 Phase 2).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub binding: Option<ToolBinding>,
    /// A package author's lock policy, carried through.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub protection: Option<Value>,
    /// Undeclared keys (an error for [`crate::validate`]), kept.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Map<String, Value>,
}

/// What a tool record refines: an action or a flow, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("additionalProperties" = false)))]
pub struct ToolBinding {
    /// Action or flow.
    #[serde(rename = "type")]
    pub binding_type: BindingType,
    /// The action's or flow's name.
    pub name: String,
    /// Undeclared keys (an error for [`crate::validate`]), kept.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Map<String, Value>,
}
