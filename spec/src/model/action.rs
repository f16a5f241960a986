//! Actions, their params, their `ai` block and its param hints.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::de::present;
use super::enums::{
    ActionLocation, ActionMode, ActionOperation, ActionType, ActionVariant, AiCategory, HttpMethod,
};
use super::values::{Keyed, Scalar, Text};

/// How an `api` action shapes its request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged)]
pub enum BodyShape {
    /// `"flat"`: the params at the top level of the body (the default).
    Flat(Flat),
    /// `{"wrap": KEY}`: the params nested under KEY.
    Wrapped(Wrapped),
}

/// The literal `"flat"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub enum Flat {
    /// `"flat"`.
    #[serde(rename = "flat")]
    Flat,
}

/// A body shape that nests the params under a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Wrapped {
    /// The key the params are sent under.
    pub wrap: String,
}

/// A business operation. Actions carry many UI keys this workspace does
/// not model; they are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Action {
    /// Machine name (lowercase snake_case); the tool is `action_<name>`.
    pub name: String,
    /// Display label.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub label: Option<Text>,
    /// The object the action belongs to.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub object_name: Option<String>,
    /// How the action is dispatched.
    #[serde(
        rename = "type",
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub action_type: Option<ActionType>,
    /// What to run or call: a handler name, URL, flow name, ...
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub target: Option<String>,
    /// An inline handler body for `script` actions.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub body: Option<Value>,
    /// Where the action appears; record locations put it in a row context.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub locations: Option<Vec<ActionLocation>>,
    /// Inputs collected before the action runs.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub params: Option<Vec<ActionParam>>,
    /// A confirmation prompt for people; marks the action destructive.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub confirm_text: Option<Text>,
    /// Visual emphasis.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub variant: Option<ActionVariant>,
    /// What the action does to a record.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub mode: Option<ActionMode>,
    /// The message shown (and returned to a model) on success.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub success_message: Option<Text>,
    /// HTTP method of an `api` action.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub method: Option<HttpMethod>,
    /// How an `api` action shapes its request body: `"flat"` (the
    /// default), or `{"wrap": "data"}` to send the params under that key.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub body_shape: Option<BodyShape>,
    /// Constant keys added to an `api` action's request body.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub body_extra: Option<Map<String, Value>>,
    /// The request-body key that carries the record id.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub record_id_param: Option<String>,
    /// The record field whose value is sent as the record id.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub record_id_field: Option<String>,
    /// A declarative write.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub operation: Option<ActionOperation>,
    /// The field values a declarative write sets.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub patch: Option<Map<String, Value>>,
    /// AI exposure (ADR-0011).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub ai: Option<ActionAi>,
    /// Every other key, untouched.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An input of an action: field-backed (`field`) or inline (`name`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("additionalProperties" = false)))]
pub struct ActionParam {
    /// Request-body key; defaults to `field`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<String>,
    /// An object field this param reads its label, type and options from.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub field: Option<String>,
    /// The object owning `field`, when not the action's own.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub object_override: Option<String>,
    /// Display label.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub label: Option<Text>,
    /// Field type of the value.
    #[serde(
        rename = "type",
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub param_type: Option<String>,
    /// Whether a value is required.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub required: Option<bool>,
    /// Picklist options: strings or `{label, value, visibleWhen}` objects.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub options: Option<Vec<Value>>,
    /// Placeholder text.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub placeholder: Option<String>,
    /// Help text shown under the input.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub help_text: Option<String>,
    /// The initial value.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub default_value: Option<Value>,
    /// Whether several values may be given.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub multiple: Option<bool>,
    /// Accepted upload types for file and image params.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub accept: Option<Vec<String>>,
    /// Largest upload, in bytes.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_size: Option<u64>,
    /// The target object of an inline lookup param.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub reference: Option<String>,
    /// Whether the value starts from the record in context.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub default_from_row: Option<bool>,
    /// Shown read-only and submitted as is.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub carry_over: Option<bool>,
    /// A visibility predicate.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub visible: Option<Value>,
    /// A feature flag that gates the param.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub requires_feature: Option<String>,
    /// Undeclared keys (an error for [`crate::validate`]), kept.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Map<String, Value>,
}

/// The AI exposure block of an action (ADR-0011): opt-in, default off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend(
    "additionalProperties" = false,
    "if" = { "properties": { "exposed": { "const": true } }, "required": ["exposed"] },
    "then" = { "required": ["description"] }
)))]
pub struct ActionAi {
    /// Whether agents may call the action as a tool; needs `description`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub exposed: Option<bool>,
    /// What the model reads to decide when to call the tool: at least 40
    /// UTF-16 code units.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "schema", schemars(length(min = 40)))]
    pub description: Option<String>,
    /// The tool category.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub category: Option<AiCategory>,
    /// Per-parameter hints for the model, keyed by param name or `recordId`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub param_hints: Option<Keyed<ParamHint>>,
    /// JSON Schema of the action's result.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<Map<String, Value>>,
    /// Whether an AI call waits for a person's approval.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub requires_confirmation: Option<bool>,
    /// Undeclared keys (an error for [`crate::validate`]), kept.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Map<String, Value>,
}

/// A hint that narrows what the model sees of one parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("additionalProperties" = false)))]
pub struct ParamHint {
    /// Replaces the parameter's description.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// Replaces the allowed values.
    #[serde(
        rename = "enum",
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub allowed: Option<Vec<Scalar>>,
    /// Example values.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub examples: Option<Vec<Value>>,
    /// Undeclared keys (an error for [`crate::validate`]), kept.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Map<String, Value>,
}
