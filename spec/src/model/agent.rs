//! Agents and the names in their `skills[]`.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::de::present;
use super::enums::AgentSurface;

/// An agent; its tools are its skills' tools (ADR-0064).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// Agent name, `^[a-z_][a-z0-9_]*$`.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$")))]
    pub name: String,
    /// Display name.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub label: Option<String>,
    /// The product surface the agent is.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub surface: Option<AgentSurface>,
    /// Names of the skills it has.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub skills: Option<Vec<AgentSkillName>>,
    /// Whether the agent is enabled (true when absent).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub active: Option<bool>,
    /// Every other key, untouched.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One entry of an agent's `skills[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(transparent)]
pub struct AgentSkillName(
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$")))] pub String,
);
