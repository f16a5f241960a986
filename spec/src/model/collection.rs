//! Collections of records, written as arrays or as maps keyed by name.

#[cfg(feature = "schema")]
use std::borrow::Cow;

#[cfg(feature = "schema")]
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{DeserializeOwned, Error as _};
use serde::ser::{Error as _, SerializeMap};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// One collection of a stack: records written as an array or as a map
/// keyed by name.
///
/// A map entry's key becomes the record's `name` unless the entry writes
/// its own `name` (which wins, as upstream reads it). A map's records are
/// in JavaScript's property order, as [`crate::collection`] reads them
/// (integer-like keys first, ascending; then document order). Serialising
/// gives back the form that was parsed, its keys in that order.
#[derive(Debug, Clone, PartialEq)]
pub struct Collection<T> {
    items: Vec<T>,
    form: Form,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Form {
    Array,
    /// One slot per item: its map key and whether the entry wrote `name`.
    Map(Vec<(String, bool)>),
}

impl<T> Default for Collection<T> {
    fn default() -> Self {
        Self::from_items(Vec::new())
    }
}

impl<T> Collection<T> {
    /// A collection written as an array.
    pub fn from_items(items: Vec<T>) -> Self {
        Self {
            items,
            form: Form::Array,
        }
    }

    /// The records, in reading order (document order; for a map,
    /// JavaScript's property order).
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// The records, for editing in place.
    pub fn items_mut(&mut self) -> &mut [T] {
        &mut self.items
    }

    /// The records, taken out.
    pub fn into_items(self) -> Vec<T> {
        self.items
    }

    /// Whether it was written as a map keyed by name.
    pub fn is_map(&self) -> bool {
        matches!(self.form, Form::Map(_))
    }

    /// The records, in reading order (see [`Collection::items`]).
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// How many records there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<'a, T> IntoIterator for &'a Collection<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<T: Serialize> Serialize for Collection<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.form {
            Form::Array => self.items.serialize(serializer),
            Form::Map(slots) => {
                let mut map = serializer.serialize_map(Some(self.items.len()))?;
                for (item, (key, name_written)) in self.items.iter().zip(slots) {
                    let mut value = serde_json::to_value(item).map_err(S::Error::custom)?;
                    let mut key = key.clone();
                    if !name_written
                        && let Value::Object(fields) = &mut value
                        && let Some(Value::String(name)) = fields.shift_remove("name")
                    {
                        key = name;
                    }
                    map.serialize_entry(&key, &value)?;
                }
                map.end()
            }
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Collection<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Array(entries) => entries
                .into_iter()
                .enumerate()
                .map(|(i, entry)| {
                    serde_json::from_value(entry)
                        .map_err(|e| D::Error::custom(format!("entry [{i}]: {e}")))
                })
                .collect::<Result<Vec<T>, _>>()
                .map(Self::from_items),
            Value::Object(entries) => {
                let mut items = Vec::with_capacity(entries.len());
                let mut slots = Vec::with_capacity(entries.len());
                // Upstream reads the map after `JSON.parse`, so in
                // JavaScript's property order, as the lenient reading does.
                for (key, entry) in crate::json::order::js_order(entries.into_iter().collect()) {
                    let Value::Object(mut fields) = entry else {
                        return Err(D::Error::custom(format!(
                            "entry `{key}` must be an object, found {}",
                            crate::json::kind(&entry)
                        )));
                    };
                    let name_written = fields.contains_key("name");
                    if !name_written {
                        fields.insert("name".to_owned(), Value::String(key.clone()));
                    }
                    let item = serde_json::from_value(Value::Object(fields))
                        .map_err(|e| D::Error::custom(format!("entry `{key}`: {e}")))?;
                    items.push(item);
                    slots.push((key, name_written));
                }
                Ok(Self {
                    items,
                    form: Form::Map(slots),
                })
            }
            other => Err(D::Error::custom(format!(
                "a collection must be an array or a map keyed by name, found {}",
                crate::json::kind(&other)
            ))),
        }
    }
}

#[cfg(feature = "schema")]
impl<T: JsonSchema> JsonSchema for Collection<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Collection_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let item = generator.subschema_for::<T>();
        let entry = map_entry_schema(generator, &item);
        json_schema!({
            "anyOf": [
                { "type": "array", "items": item },
                { "type": "object", "additionalProperties": entry }
            ]
        })
    }
}

/// The schema of a map-form entry: the record's schema with `name` no
/// longer required (the key supplies it), registered as `<Name>Entry`.
#[cfg(feature = "schema")]
fn map_entry_schema(generator: &mut SchemaGenerator, item: &Schema) -> Schema {
    let Some(reference) = item.get("$ref").and_then(Value::as_str) else {
        return item.clone();
    };
    let Some(name) = reference.rsplit('/').next().map(str::to_owned) else {
        return item.clone();
    };
    let entry_name = format!("{name}Entry");
    let Some(mut definition) = generator.definitions().get(&name).cloned() else {
        return item.clone();
    };
    if let Some(Value::Array(required)) = definition.get_mut("required") {
        required.retain(|k| k != "name");
    }
    if let Some(Value::String(description)) = definition.get_mut("description") {
        description.push_str(" (As a map entry: the key is the name.)");
    }
    generator
        .definitions_mut()
        .insert(entry_name.clone(), definition);
    let prefix = reference.strip_suffix(name.as_str()).unwrap_or("#/$defs/");
    Schema::new_ref(format!("{prefix}{entry_name}"))
}
