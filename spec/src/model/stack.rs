//! The stack itself, its objects and their fields.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::action::Action;
use super::agent::Agent;
use super::collection::Collection;
use super::de::present;
use super::skill::Skill;
use super::tool::Tool;
use super::values::Text;

/// Why a document does not fit the typed model.
#[derive(Debug, thiserror::Error)]
#[error(
    "the stack does not fit the typed model: {message}; run `objectstack-ai validate` for every problem with its location"
)]
pub struct ModelError {
    /// What serde reported.
    pub message: String,
}

impl ModelError {
    fn from_serde(err: &serde_json::Error) -> Self {
        Self {
            message: err.to_string(),
        }
    }
}

/// One application's compiled metadata, as far as the AI tool authoring
/// model reads it. Every other top-level key (views, pages, flows, ...) is
/// carried through untouched.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(title = "ObjectStack stack (AI tool authoring model)")
)]
pub struct Stack {
    /// Business objects, each with fields and actions.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub objects: Option<Collection<Object>>,
    /// Stack-level actions.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub actions: Option<Collection<Action>>,
    /// Tool records: an optional refinement layer over actions and flows
    /// (ADR-0109).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub tools: Option<Collection<Tool>>,
    /// Skills: the unit that gives agents tools.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub skills: Option<Collection<Skill>>,
    /// Agents, each reaching the tools of its skills.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub agents: Option<Collection<Agent>>,
    /// Every other top-level key, untouched.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Stack {
    /// Reads a stack document into the typed model.
    pub fn from_json(document: &Map<String, Value>) -> Result<Self, ModelError> {
        Self::deserialize(document).map_err(|e| ModelError::from_serde(&e))
    }

    /// Writes the stack back as a JSON document.
    pub fn to_json(&self) -> Result<Map<String, Value>, ModelError> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(ModelError {
                message: format!("a stack serialised to {}", crate::json::kind(&other)),
            }),
            Err(e) => Err(ModelError::from_serde(&e)),
        }
    }
}

/// A business object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Object {
    /// Machine name.
    pub name: String,
    /// Display label.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub label: Option<Text>,
    /// Fields, usually a map keyed by field name.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub fields: Option<Collection<Field>>,
    /// The object's actions.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub actions: Option<Collection<Action>>,
    /// Every other key, untouched.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A field of an object, as far as tool parameters read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Field {
    /// Machine name (the map key when fields are a map).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<String>,
    /// The field type (`text`, `number`, `select`, ...).
    #[serde(
        rename = "type",
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub field_type: Option<String>,
    /// Display label.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub label: Option<Text>,
    /// Whether a value is required.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub required: Option<bool>,
    /// Picklist options: strings or `{value, label}` objects.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub options: Option<Vec<Value>>,
    /// Help text for people (and, through params, for models).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// Every other key, untouched.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
