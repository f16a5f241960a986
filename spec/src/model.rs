//! Serde types for the modelled parts of a stack.
//!
//! The types name every key this workspace reasons about, with upstream's
//! camelCase spelling, and keep every other key in an `extra` map so that
//! serialising a parsed [`Stack`] gives back every key it was given.
//!
//! These types are *typed*: a modelled key with the wrong JSON type (or
//! `null`, which upstream's optional keys do not accept either) fails
//! [`Stack::from_json`]. Tools that must read any document use the raw
//! JSON with [`crate::collection`] and report problems with
//! [`crate::validate`], which never fails.
//!
//! Collections ([`Collection`]) may be written as arrays or as maps keyed by
//! name; both parse to the same list of records, a map entry's key becoming
//! its `name` (a map is read in JavaScript's property order, as
//! [`crate::collection`] reads it), and each serialises back in the form it
//! was written.
//!
//! The strict shapes (the `ai` block, params, param hints, tool records,
//! skills, tool bindings) still keep unknown keys here, so nothing is lost,
//! but their JSON Schema ([`crate::schema`]) forbids them and
//! [`crate::validate`] reports them.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{DeserializeOwned, Error as _};
use serde::ser::{Error as _, SerializeMap};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

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

/// Deserialises a key that is present as `Some`, so that `null` is refused
/// for typed keys (as upstream refuses it) and kept for untyped ones.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Defines a string enum with its wire spelling, a list of every value and
/// a JSON Schema `enum`.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every value's spelling, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The value as written in JSON.
            pub fn as_str(&self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the JSON spelling.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($text => Some($name::$variant),)+ _ => None }
            }
        }
    };
}

string_enum! {
    /// How an action is dispatched (its `type`).
    ActionType {
        /// Runs a handler on the server (`target` or `body`).
        Script = "script",
        /// Opens a URL in the browser; UI-only.
        Url = "url",
        /// Opens a modal; UI-only.
        Modal = "modal",
        /// Starts a flow named by `target`.
        Flow = "flow",
        /// Calls an HTTP endpoint named by `target`.
        Api = "api",
        /// Opens a form; UI-only.
        Form = "form",
    }
}

string_enum! {
    /// Where an action appears in the UI (`locations[]`).
    ActionLocation {
        /// The list view's toolbar.
        ListToolbar = "list_toolbar",
        /// Each row of a list (row context).
        ListItem = "list_item",
        /// A record page's header (row context).
        RecordHeader = "record_header",
        /// A record page's overflow menu (row context).
        RecordMore = "record_more",
        /// A related list on a record page (row context).
        RecordRelated = "record_related",
        /// A section of a record page.
        RecordSection = "record_section",
    }
}

string_enum! {
    /// An action's visual emphasis (`variant`); `danger` marks it destructive.
    ActionVariant {
        /// The main call to action.
        Primary = "primary",
        /// A secondary button.
        Secondary = "secondary",
        /// Destructive: an AI call needs confirmation unless the `ai` block says otherwise.
        Danger = "danger",
        /// A borderless button.
        Ghost = "ghost",
        /// A link-styled button.
        Link = "link",
    }
}

string_enum! {
    /// What an action does to a record (`mode`); `delete` marks it destructive.
    ActionMode {
        /// Creates a record.
        Create = "create",
        /// Edits a record.
        Edit = "edit",
        /// Deletes a record: an AI call needs confirmation unless the `ai` block says otherwise.
        Delete = "delete",
        /// Anything else.
        Custom = "custom",
    }
}

string_enum! {
    /// The HTTP method of an `api` action (`method`, POST when absent).
    HttpMethod {
        /// POST.
        Post = "POST",
        /// PATCH.
        Patch = "PATCH",
        /// PUT.
        Put = "PUT",
        /// DELETE (sends no body).
        Delete = "DELETE",
    }
}

string_enum! {
    /// A declarative write (`operation`).
    ActionOperation {
        /// Writes the action's `patch` to the record in context.
        Update = "update",
    }
}

string_enum! {
    /// The tool category of an exposed action (`ai.category`).
    AiCategory {
        /// Reads data.
        Data = "data",
        /// Has side effects (the default).
        Action = "action",
        /// Starts an automation.
        Flow = "flow",
        /// Talks to an external system.
        Integration = "integration",
        /// Searches embeddings.
        VectorSearch = "vector_search",
        /// Aggregates data.
        Analytics = "analytics",
        /// A helper.
        Utility = "utility",
    }
}

string_enum! {
    /// Which agent surface a skill binds to (`surface`, `ask` when absent).
    SkillSurface {
        /// Data agents.
        Ask = "ask",
        /// Authoring agents.
        Build = "build",
        /// Either.
        Both = "both",
    }
}

string_enum! {
    /// The product surface an agent is (`surface`, `ask` when absent).
    AgentSurface {
        /// The data product.
        Ask = "ask",
        /// The authoring product.
        Build = "build",
    }
}

string_enum! {
    /// What a tool record's `binding` refines.
    BindingType {
        /// An action, by name.
        Action = "action",
        /// A flow, by name.
        Flow = "flow",
    }
}

string_enum! {
    /// How a skill trigger condition compares (`operator`).
    TriggerOperator {
        /// Equal to one string.
        Eq = "eq",
        /// Not equal to one string.
        Neq = "neq",
        /// One of a list of strings.
        In = "in",
        /// None of a list of strings.
        NotIn = "not_in",
        /// Contains a string.
        Contains = "contains",
    }
}

/// A human-facing text: a plain string or a map of translations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Text {
    /// The text itself.
    Plain(String),
    /// A translatable text (for example `{key, defaultValue}`).
    Localised(Map<String, Value>),
}

/// A string or a number (a param hint's `enum` values).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Scalar {
    /// A string value.
    Text(String),
    /// A numeric value.
    Number(serde_json::Number),
}

/// A trigger condition's expected value: one string or a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
                for (key, entry) in crate::collection::js_order(entries.into_iter().collect()) {
                    let Value::Object(mut fields) = entry else {
                        return Err(D::Error::custom(format!(
                            "entry `{key}` must be an object, found {}",
                            crate::materialise::kind(&entry)
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
                crate::materialise::kind(&other)
            ))),
        }
    }
}

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

/// One application's compiled metadata, as far as the AI tool authoring
/// model reads it. Every other top-level key (views, pages, flows, ...) is
/// carried through untouched.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "ObjectStack stack (AI tool authoring model)")]
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
                message: format!("a stack serialised to {}", crate::materialise::kind(&other)),
            }),
            Err(e) => Err(ModelError::from_serde(&e)),
        }
    }
}

/// A business object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

/// A business operation. Actions carry many UI keys this workspace does
/// not model; they are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// How an `api` action shapes its request body (for example `{wrap}`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub body_shape: Option<Value>,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
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
    #[schemars(skip)]
    pub extra: Map<String, Value>,
}

/// The AI exposure block of an action (ADR-0011): opt-in, default off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "additionalProperties" = false,
    "if" = { "properties": { "exposed": { "const": true } }, "required": ["exposed"] },
    "then" = { "required": ["description"] }
))]
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
    #[schemars(length(min = 40))]
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
    #[schemars(skip)]
    pub extra: Map<String, Value>,
}

/// A hint that narrows what the model sees of one parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
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
    #[schemars(skip)]
    pub extra: Map<String, Value>,
}

/// A tool record (`stack.tools[]`): the optional refinement layer of
/// ADR-0109.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "additionalProperties" = false,
    "patternProperties" = { "^_(lock|lockReason|lockSource|provenance|packageId|packageVersion|lockDocsUrl)$": true },
    "anyOf" = [{ "required": ["parameters"] }, { "required": ["binding"] }],
    "dependentRequired" = { "requiresConfirmation": ["binding"] }
))]
pub struct Tool {
    /// Tool name, `^[a-z_][a-z0-9_]*$`.
    #[schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$"))]
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
    #[schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$"))]
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
    #[schemars(skip)]
    pub extra: Map<String, Value>,
}

/// What a tool record refines: an action or a flow, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
pub struct ToolBinding {
    /// Action or flow.
    #[serde(rename = "type")]
    pub binding_type: BindingType,
    /// The action's or flow's name.
    pub name: String,
    /// Undeclared keys (an error for [`crate::validate`]), kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Map<String, Value>,
}

/// A skill: instructions plus the tools an agent gets with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "additionalProperties" = false,
    "patternProperties" = { "^_(lock|lockReason|lockSource|provenance|packageId|packageVersion|lockDocsUrl)$": true }
))]
pub struct Skill {
    /// Skill name, `^[a-z_][a-z0-9_]*$`.
    #[schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$"))]
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
    #[schemars(skip)]
    pub extra: Map<String, Value>,
}

/// One entry of a skill's `tools[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct SkillToolName(#[schemars(regex(pattern = r"^[a-z_][a-z0-9_]*\*?$"))] pub String);

/// A condition on the conversation context that activates a skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

/// An agent; its tools are its skills' tools (ADR-0064).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// Agent name, `^[a-z_][a-z0-9_]*$`.
    #[schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$"))]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct AgentSkillName(#[schemars(regex(pattern = r"^[a-z_][a-z0-9_]*$"))] pub String);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("test documents are objects"),
        }
    }

    #[test]
    fn arrays_and_maps_parse_to_the_same_records() {
        let as_array = Stack::from_json(&doc(json!({
            "skills": [{"name": "triage", "label": "Triage", "tools": ["get_record"]}]
        })))
        .unwrap();
        let as_map = Stack::from_json(&doc(json!({
            "skills": {"triage": {"label": "Triage", "tools": ["get_record"]}}
        })))
        .unwrap();
        assert_eq!(
            as_array.skills.as_ref().unwrap().items(),
            as_map.skills.as_ref().unwrap().items()
        );
        assert!(as_map.skills.unwrap().is_map());
    }

    #[test]
    fn map_form_round_trips_including_inner_names() {
        let original = doc(json!({
            "objects": {"task": {"label": "Task", "fields": {"title": {"type": "text"}}}},
            "tools": {"key_name": {"name": "inner_name", "label": "L", "description": "d", "parameters": {}}},
            "views": [{"anything": true}]
        }));
        let stack = Stack::from_json(&original).unwrap();
        assert_eq!(stack.tools.as_ref().unwrap().items()[0].name, "inner_name");
        assert_eq!(
            Value::Object(stack.to_json().unwrap()),
            Value::Object(original)
        );
    }

    #[test]
    fn unmodelled_keys_survive() {
        let original = doc(json!({
            "actions": [{
                "name": "close_case", "icon": "x", "refreshAfter": true,
                "ai": {"exposed": true, "description": "Closes the case the user is looking at right now.", "futureKey": 1},
                "params": [{"name": "reason", "defaultValue": null, "hmm": [1]}]
            }]
        }));
        let stack = Stack::from_json(&original).unwrap();
        let action = &stack.actions.as_ref().unwrap().items()[0];
        assert_eq!(action.extra.get("icon"), Some(&json!("x")));
        assert_eq!(
            action.ai.as_ref().unwrap().extra.get("futureKey"),
            Some(&json!(1))
        );
        assert_eq!(
            Value::Object(stack.to_json().unwrap()),
            Value::Object(original)
        );
    }

    #[test]
    fn wrong_types_and_nulls_are_errors() {
        for bad in [
            json!({"skills": "all"}),
            json!({"skills": [{"name": "a", "label": "A", "tools": "x"}]}),
            json!({"actions": [{"name": "a", "label": null}]}),
            json!({"actions": [{"name": "a", "type": "teleport"}]}),
            json!({"tools": {"t": 3}}),
        ] {
            let err = Stack::from_json(&doc(bad.clone())).unwrap_err();
            assert!(err.to_string().contains("validate"), "{bad}: {err}");
        }
    }

    #[test]
    fn enum_lists_match_the_materialisation_predicate() {
        assert_eq!(AiCategory::NAMES, crate::materialise::AI_CATEGORIES);
        for t in crate::materialise::UI_ONLY_TYPES {
            assert!(ActionType::from_name(t).is_some());
        }
        for l in crate::materialise::ROW_CONTEXT_LOCATIONS {
            assert!(ActionLocation::from_name(l).is_some());
        }
        assert_eq!(ActionType::Script.as_str(), "script");
        assert_eq!(ActionType::ALL.len(), ActionType::NAMES.len());
    }
}
