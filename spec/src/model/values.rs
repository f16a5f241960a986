//! Value types shared by several records: translatable texts, scalars,
//! trigger values and maps that keep their keys in document order.

#[cfg(feature = "schema")]
use std::borrow::Cow;

#[cfg(feature = "schema")]
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{DeserializeOwned, Error as _};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A human-facing text: a plain string or a map of translations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged)]
pub enum Text {
    /// The text itself.
    Plain(String),
    /// A translatable text (for example `{key, defaultValue}`).
    Localised(Map<String, Value>),
}

/// A string or a number (a param hint's `enum` values).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged)]
pub enum Scalar {
    /// A string value.
    Text(String),
    /// A numeric value.
    Number(serde_json::Number),
}

/// A trigger condition's expected value: one string or a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged)]
pub enum TriggerValue {
    /// One string (for `eq`, `neq`, `contains`).
    One(String),
    /// A list of strings (for `in`, `not_in`).
    Many(Vec<String>),
}

/// A map that keeps its keys in document order.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed<T>(pub Vec<(String, T)>);

impl<T> Default for Keyed<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> Keyed<T> {
    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&T> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The keys, in document order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

impl<T: Serialize> Serialize for Keyed<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Keyed<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(deserializer)?;
        map.into_iter()
            .map(|(k, v)| {
                let value = serde_json::from_value(v)
                    .map_err(|e| D::Error::custom(format!("entry `{k}`: {e}")))?;
                Ok((k, value))
            })
            .collect::<Result<_, _>>()
            .map(Keyed)
    }
}

#[cfg(feature = "schema")]
impl<T: JsonSchema> JsonSchema for Keyed<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Keyed_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let value = generator.subschema_for::<T>();
        json_schema!({ "type": "object", "additionalProperties": value })
    }
}
