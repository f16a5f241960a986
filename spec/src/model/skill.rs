//! Skills, the names in their `tools[]` and their trigger conditions.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::de::present;
use super::enums::{SkillSurface, TriggerOperator};
use super::values::TriggerValue;

/// A skill: instructions plus the tools an agent gets with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend(
    "additionalProperties" = false,
    "patternProperties" = { "^_(lock|lockReason|lockSource|provenance|packageId|packageVersion|lockDocsUrl)$": true }
)))]
pub struct Skill {
    /// Skill name, `^[a-z_][a-z0-9_]*$`.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$")))]
    pub name: String,
    /// Display name.
    pub label: String,
    /// What the skill is for.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// Which agents it binds to.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub surface: Option<SkillSurface>,
    /// Instructions for the model while the skill is active.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub instructions: Option<String>,
    /// Tool names, `^[a-z_][a-z0-9_]*\*?$` (a trailing `*` names a family).
    pub tools: Vec<SkillToolName>,
    /// When the skill activates: all conditions must hold.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub trigger_conditions: Option<Vec<TriggerCondition>>,
    /// Whether the skill is enabled (true when absent).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub active: Option<bool>,
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

/// One entry of a skill's `tools[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(transparent)]
pub struct SkillToolName(
    #[cfg_attr(
        feature = "schema",
        schemars(regex(pattern = r"^[a-z_][a-z0-9_]*\*?$"))
    )]
    pub String,
);

/// A condition on the conversation context that activates a skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TriggerCondition {
    /// The context field compared.
    pub field: String,
    /// How it is compared.
    pub operator: TriggerOperator,
    /// A string for `eq`/`neq`/`contains`, a list for `in`/`not_in`.
    pub value: TriggerValue,
    /// Every other key, untouched.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
