//! The tool definition of one materialised action (behaviour.md, "The tool
//! definition").
//!
//! A [`Definition`] borrows every name, label and schema fragment from the
//! document it was built from and is written out by its `Serialize`
//! implementation; nothing is copied into `serde_json` values unless an
//! owned [`AIToolDefinition`] is asked for ([`Definition::to_definition`]).
//! Objects and their fields are indexed once per walk ([`ObjectIndex`]),
//! so building a definition costs time proportional to the action alone.
//! The `parameters` schema is built by [`super::schema`]; values copied
//! from the stack are written in JavaScript's key order
//! ([`objectstack_spec::json::order`]).

use std::fmt;

use objectstack_spec::AIToolDefinition;
use objectstack_spec::json::order::{JsOrdered, js_entries, to_js_ordered_serde};
use objectstack_spec::json::{Arena, Map, Value};
use objectstack_spec::materialise::ai_block;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::schema::{Parameters, parameters};

/// Hash maps keyed by names from the document: not exposed to a hostile
/// choice of keys that matters (the walk is linear whatever the keys), so a
/// fast hasher.
pub(super) type Fast = foldhash::fast::RandomState;

pub(super) use objectstack_spec::materialise::surface::{ObjectFields, ObjectIndex};

/// The object an action acts on.
#[derive(Debug, Clone, Copy)]
pub(super) struct Owner<'o, 'v> {
    /// Its name (the action's `objectName`, else the owning object's).
    pub(super) name: Option<&'v str>,
    /// The fields field-backed params read: the object whose `actions`
    /// hold the action (upstream's owning object), whatever `objectName`
    /// says; `None` for a stack-level action no object takes in.
    pub(super) object: Option<&'o ObjectFields<'v>>,
}

/// The tool definition of a materialised action, borrowed from the
/// document it was built from.
///
/// It serialises to exactly the JSON of the owned [`AIToolDefinition`]
/// that [`Definition::to_definition`] returns (upstream's contract), but
/// writing it copies nothing: this is what `objectstack-ai tools` streams.
///
/// ```
/// use objectstack_bridge::materialise::{Event, materialise_each};
/// use objectstack_spec::json::{self, Arena};
///
/// let arena = Arena::new();
/// let stack = json::parse_document(br#"{"objects": [{"name": "task", "actions": [{
///     "name": "close", "type": "script", "target": "closeTask",
///     "ai": {"exposed": true, "description": "Closes a task whose work is done."}
/// }]}]}"#, &arena)?;
/// let mut out = Vec::new();
/// materialise_each(stack, &arena, None, &|_| false, &mut |event| {
///     if let Event::Registered(r) = event {
///         assert_eq!(r.definition.name(), "action_close");
///         serde_json::to_writer(&mut out, &r.definition).expect("writes to memory");
///     }
/// });
/// assert!(out.starts_with(br#"{"name":"action_close","description":"Closes"#));
/// # Ok::<(), objectstack_spec::parse::ParseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Definition<'a> {
    name: String,
    /// A refined tool's label (the record's); upstream's definitions of
    /// actions carry none.
    label: Option<&'a str>,
    description: Description<'a>,
    parameters: Params<'a>,
    category: Option<&'a str>,
    output_schema: Option<&'a Map<'a>>,
    object_name: Option<&'a str>,
    requires_confirmation: bool,
}

impl<'a> Definition<'a> {
    /// The tool name (`action_<name>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The object the action belongs to.
    pub fn object_name(&self) -> Option<&'a str> {
        self.object_name
    }

    /// The tool category (`ai.category`), when the action sets one.
    pub fn category(&self) -> Option<&'a str> {
        self.category
    }

    /// Whether a call must wait for a human's approval.
    pub fn requires_confirmation(&self) -> bool {
        self.requires_confirmation
    }

    /// An owned copy, detached from the document.
    pub fn to_definition(&self) -> AIToolDefinition {
        AIToolDefinition {
            name: self.name.clone(),
            // Upstream's bridge does not fill `label`; projections that need
            // a title read the action's label from the registration instead.
            // A refined tool carries its record's.
            label: self.label.map(str::to_owned),
            description: self.description.to_string(),
            parameters: match serde_json::to_value(&self.parameters) {
                Ok(serde_json::Value::Object(map)) => map,
                // Unreachable: the parameters serialise to an object, and
                // nothing in them can fail to serialise.
                _ => serde_json::Map::new(),
            },
            category: self.category.map(str::to_owned),
            output_schema: self.output_schema.map(to_js_ordered_serde),
            object_name: self.object_name.map(str::to_owned),
            requires_confirmation: Some(self.requires_confirmation),
        }
    }
}

impl Serialize for Definition<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The keys and their order are `AIToolDefinition`'s (camelCase,
        // absent options left out; `label` is never set).
        let len = 4
            + usize::from(self.label.is_some())
            + usize::from(self.category.is_some())
            + usize::from(self.output_schema.is_some())
            + usize::from(self.object_name.is_some());
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("name", &self.name)?;
        if let Some(label) = self.label {
            map.serialize_entry("label", label)?;
        }
        map.serialize_entry("description", &Display(&self.description))?;
        map.serialize_entry("parameters", &self.parameters)?;
        if let Some(category) = self.category {
            map.serialize_entry("category", category)?;
        }
        if let Some(schema) = self.output_schema {
            map.serialize_entry("outputSchema", &JsOrdered(&Value::Object(schema)))?;
        }
        if let Some(object) = self.object_name {
            map.serialize_entry("objectName", object)?;
        }
        map.serialize_entry("requiresConfirmation", &self.requires_confirmation)?;
        map.end()
    }
}

/// Builds the tool definition of an action that materialises;
/// `requires_confirmation` is the confirmation rule's answer for it.
/// Map-shaped `params` build their records in `arena`.
pub(super) fn build<'a>(
    tool_name: String,
    action: &'a Map<'a>,
    owner: &Owner<'_, 'a>,
    index: &ObjectIndex<'a>,
    arena: &'a Arena,
    requires_confirmation: bool,
    row_context: bool,
) -> Definition<'a> {
    let ai = ai_block(action);
    let ai_str = |key: &str| ai.and_then(|ai| ai.get(key)).and_then(Value::as_str);
    let output_schema = ai
        .and_then(|ai| ai.get("outputSchema"))
        .and_then(Value::as_object);
    Definition {
        name: tool_name,
        label: None,
        description: Description {
            base: ai_str("description").unwrap_or_default(),
            returns: output_schema.and_then(|s| s.get("properties")),
        },
        parameters: Params::Built(parameters(action, owner, index, arena, row_context)),
        category: ai_str("category"),
        output_schema,
        object_name: owner.name,
        requires_confirmation,
    }
}

/// What a refined tool's definition is made of, besides the record.
pub(super) struct Refined<'d, 'a> {
    /// The bound action's own definition (`None` for a flow).
    pub(super) action: Option<&'d Definition<'a>>,
    /// The object the tool acts on.
    pub(super) object_name: Option<&'a str>,
    /// Whether calls wait for a human.
    pub(super) requires_confirmation: bool,
}

/// The definition of a bound record's tool: the record's name, its
/// description (else the action's), its `parameters` (else the action's),
/// its `outputSchema` (else the action's), the action's category (`flow`
/// for a flow).
pub(super) fn refined<'a>(record: &'a Map<'a>, with: &Refined<'_, 'a>) -> Definition<'a> {
    let output_schema = record
        .get("outputSchema")
        .and_then(Value::as_object)
        .or_else(|| with.action.and_then(|a| a.output_schema));
    let base = record
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .or_else(|| with.action.map(|a| a.description.base))
        .unwrap_or_default();
    let parameters = match (
        record.get("parameters").and_then(Value::as_object),
        with.action,
    ) {
        (Some(given), _) => Params::Given(given),
        (None, Some(action)) => action.parameters.clone(),
        (None, None) => Params::Given(&Map::EMPTY),
    };
    Definition {
        name: record
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        label: record
            .get("label")
            .and_then(Value::as_str)
            .filter(|l| !l.is_empty()),
        description: Description {
            base,
            returns: output_schema.and_then(|s| s.get("properties")),
        },
        parameters,
        category: match with.action {
            Some(action) => action.category,
            None => Some("flow"),
        },
        output_schema,
        object_name: with.object_name,
        requires_confirmation: with.requires_confirmation,
    }
}

/// `ai.description`, plus a blank line and `Returns an object with: k1,
/// k2.` when the output schema has top-level properties: the keys of a
/// non-empty `properties` object in the order JavaScript lists them
/// (integer-like keys first), or, as `Object.keys` reads an array, the
/// indices of a non-empty `properties` array.
#[derive(Debug, Clone, Copy)]
struct Description<'a> {
    base: &'a str,
    /// The output schema's `properties`.
    returns: Option<&'a Value<'a>>,
}

impl fmt::Display for Description<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.base)?;
        match self.returns {
            Some(Value::Object(properties)) if !properties.is_empty() => {
                f.write_str("\n\nReturns an object with: ")?;
                for (i, (key, _)) in js_entries(properties).into_iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(key)?;
                }
                f.write_str(".")
            }
            Some(Value::Array(items)) if !items.is_empty() => {
                f.write_str("\n\nReturns an object with: ")?;
                for i in 0..items.len() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{i}")?;
                }
                f.write_str(".")
            }
            _ => Ok(()),
        }
    }
}

/// Serialises a `Display` value as a JSON string, without building it.
pub(super) struct Display<'d, T>(pub(super) &'d T);

impl<T: fmt::Display> Serialize for Display<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
    }
}

/// A definition's `parameters`: built from an action, or a bound
/// record's own (written with `type: object` and `additionalProperties:
/// false`, whatever the record says of them).
#[derive(Debug, Clone)]
enum Params<'a> {
    Built(Parameters<'a>),
    Given(&'a Map<'a>),
}

impl Serialize for Params<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Params::Built(p) => p.serialize(serializer),
            Params::Given(schema) => {
                let keep = |k: &str| k != "type" && k != "additionalProperties";
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "object")?;
                if !schema.contains_key("properties") {
                    map.serialize_entry("properties", &Map::EMPTY.to_serde())?;
                }
                for (key, value) in js_entries(schema) {
                    if keep(key) {
                        map.serialize_entry(key, &JsOrdered(value))?;
                    }
                }
                map.serialize_entry("additionalProperties", &false)?;
                map.end()
            }
        }
    }
}
