//! What an action's materialised tool takes: each parameter's name, JSON
//! type, allowed values and whether it is required.
//!
//! This is the part of a tool definition's `parameters` that narrowing is
//! judged against ([`super::refine`]). The bridge writes the full schema
//! (descriptions, defaults, examples); the facts here are read by the same
//! rules, and the bridge's tests hold the two equal for every registered
//! action.

use std::collections::HashMap;

use crate::collection;
use crate::json::order::js_order;
use crate::json::{self, Arena, Map, Value};

/// Field types whose values are JSON numbers.
pub const NUMBER_TYPES: &[&str] = &[
    "number",
    "currency",
    "percent",
    "rating",
    "slider",
    "autonumber",
];
/// Field types whose values are JSON booleans.
pub const BOOLEAN_TYPES: &[&str] = &["boolean", "toggle"];
/// Field types whose values are arrays of strings.
pub const ARRAY_TYPES: &[&str] = &["multiselect", "checkboxes", "tags"];

/// The JSON type a field (or param) type maps to.
pub fn json_type(field_type: Option<&str>) -> &'static str {
    match field_type {
        Some(t) if NUMBER_TYPES.contains(&t) => "number",
        Some(t) if BOOLEAN_TYPES.contains(&t) => "boolean",
        Some(t) if ARRAY_TYPES.contains(&t) => "array",
        _ => "string",
    }
}

/// One object's fields, by name.
#[derive(Debug, Default)]
pub struct ObjectFields<'v> {
    fields: HashMap<&'v str, &'v Map<'v>, foldhash::fast::RandomState>,
}

impl<'v> ObjectFields<'v> {
    /// Indexes a `fields` collection by name, without copying. A map (the
    /// schema's shape) is looked up by KEY, as upstream's `fields[ref]`
    /// does: an entry's own `name` does not matter. An array (lenient
    /// input) is looked up by each entry's string `name`, the first of a
    /// name winning. Entries that are not objects carry nothing a parameter
    /// could read, so they are left out.
    pub fn of(fields: Option<&'v Value<'v>>) -> Self {
        let mut index: HashMap<&'v str, &'v Map<'v>, foldhash::fast::RandomState> =
            HashMap::default();
        match fields {
            Some(Value::Object(entries)) => {
                index.reserve(entries.len());
                for (key, entry) in entries.iter() {
                    if let Value::Object(field) = entry {
                        index.insert(key, *field);
                    }
                }
            }
            Some(Value::Array(entries)) => {
                index.reserve(entries.len());
                for field in entries.iter().filter_map(Value::as_object) {
                    if let Some(name) = field.get("name").and_then(Value::as_str) {
                        index.entry(name).or_insert(field);
                    }
                }
            }
            _ => {}
        }
        ObjectFields { fields: index }
    }

    /// The field named `name`.
    pub fn get(&self, name: &str) -> Option<&'v Map<'v>> {
        self.fields.get(name).copied()
    }
}

/// Every object of a stack by name, with its fields by name.
#[derive(Debug, Default)]
pub struct ObjectIndex<'v> {
    by_name: HashMap<&'v str, usize, foldhash::fast::RandomState>,
    objects: Vec<ObjectFields<'v>>,
}

impl<'v> ObjectIndex<'v> {
    /// Indexes the objects (read leniently). The LAST object of a name wins,
    /// as in upstream's `new Map(objects.map(o => [o.name, o]))`; a
    /// duplicate name is an invalid stack anyway.
    pub fn build<'r>(objects: impl IntoIterator<Item = &'r collection::Record<'v>>) -> Self
    where
        'v: 'r,
    {
        let mut index = ObjectIndex::default();
        for (i, object) in objects.into_iter().enumerate() {
            if let Some(name) = object.name() {
                index.by_name.insert(name, i);
            }
            index.objects.push(ObjectFields::of(object.get("fields")));
        }
        index
    }

    /// The object named `name`.
    pub fn get(&self, name: &str) -> Option<&ObjectFields<'v>> {
        self.by_name.get(name).and_then(|&i| self.objects.get(i))
    }

    /// The object at lenient index `i`.
    pub fn at(&self, i: usize) -> Option<&ObjectFields<'v>> {
        self.objects.get(i)
    }

    /// Whether some object is named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }
}

/// A value `??` keeps: present and not `null`.
pub fn given<'v, 'a>(value: Option<&'v Value<'a>>) -> Option<&'v Value<'a>> {
    value.filter(|v| !v.is_null())
}

/// The object a call to an action's tool acts on, as upstream fills it:
/// `action.objectName ?? owner`. Only a missing (or `null`) `objectName`
/// is filled; one that is empty or not a string names no object.
pub fn object_of<'a>(action: &Map<'a>, owner_name: Option<&'a str>) -> Option<&'a str> {
    match action.get("objectName") {
        None | Some(Value::Null) => owner_name,
        Some(Value::String(name)) if !name.is_empty() => Some(*name),
        Some(_) => None,
    }
}

/// What one parameter of an action reads, decided once for the bridge's
/// schema and for [`Surface`].
#[derive(Debug, Clone, Copy)]
pub struct ParamFacts<'a> {
    /// The property name (`param.name ?? param.field`).
    pub name: &'a str,
    /// The field behind it, when it names one that exists.
    pub field: Option<&'a Map<'a>>,
    /// The JSON type.
    pub kind: &'static str,
    /// `param.options ?? field.options`, when given.
    pub options: Option<&'a Value<'a>>,
    /// `Boolean(param.required ?? field.required ?? false)`.
    pub required: bool,
}

/// The facts of one parameter; `None` when it has no usable name.
///
/// Where upstream reads `param.x ?? field.x`, a param key that is present
/// and not `null` wins even when its value is unusable: the field is
/// consulted only when the param says nothing. `owner` holds the fields of
/// the object whose `actions` hold the action; `objectOverride` names
/// another.
pub fn param_facts<'a>(
    param: &'a Map<'a>,
    owner: Option<&ObjectFields<'a>>,
    index: &ObjectIndex<'a>,
) -> Option<ParamFacts<'a>> {
    let str_of = |v: Option<&'a Value<'a>>| v.and_then(Value::as_str);
    let field_name = str_of(param.get("field")).filter(|s| !s.is_empty());
    // `param.name ?? param.field`, and no name at all drops the param: an
    // empty `name` is a name (an unusable one), so it does not fall back
    // to `field`. A name that is not a string is treated as absent.
    let name = match param.get("name") {
        Some(Value::String(name)) => Some(*name),
        _ => field_name,
    }
    .filter(|s| !s.is_empty())?;
    let field = field_name.and_then(|field_name| {
        let object = str_of(param.get("objectOverride"))
            .and_then(|o| index.get(o))
            .or(owner);
        object.and_then(|o| o.get(field_name))
    });
    let field_get = |key: &str| field.and_then(|f| f.get(key));
    let source_type = match given(param.get("type")) {
        Some(kind) => kind.as_str(),
        None => str_of(field_get("type")),
    };
    let required =
        json::truthy(given(param.get("required")).or_else(|| given(field_get("required"))));
    Some(ParamFacts {
        name,
        field,
        kind: json_type(source_type),
        options: given(param.get("options")).or_else(|| given(field_get("options"))),
        required,
    })
}

/// The string an `options` entry contributes, if any.
pub fn option_value<'a>(option: &Value<'a>) -> Option<&'a str> {
    match option {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("value").and_then(Value::as_str),
        _ => None,
    }
}

/// The values a property allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Allowed<'a> {
    /// The string values of an `options` list.
    Options(&'a [Value<'a>]),
    /// An `ai.paramHints` entry's `enum`, as written.
    Values(&'a [Value<'a>]),
}

impl<'a> Allowed<'a> {
    /// Whether `value` is one of them.
    pub fn allows(&self, value: &Value<'_>) -> bool {
        match *self {
            Allowed::Options(options) => {
                let Some(s) = value.as_str() else {
                    return false;
                };
                options.iter().filter_map(option_value).any(|o| o == s)
            }
            Allowed::Values(values) => values.iter().any(|v| v == value),
        }
    }
}

/// One property of an action's materialised `parameters`.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceProperty<'a> {
    /// Its JSON type (`string`, `number`, `boolean`, `array`).
    pub kind: &'static str,
    /// The values it allows (for an array, its items'), when it has an enum.
    pub allowed: Option<Allowed<'a>>,
}

/// The properties of an action's materialised tool, in the order its
/// schema lists them, and the ones it requires.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surface<'a> {
    /// Each property by name.
    pub properties: Vec<(&'a str, SurfaceProperty<'a>)>,
    /// The required names, in first-seen order.
    pub required: Vec<&'a str>,
}

impl<'a> Surface<'a> {
    /// The property named `name`.
    pub fn get(&self, name: &str) -> Option<&SurfaceProperty<'a>> {
        self.properties
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, p)| p)
    }

    /// Whether the action requires `name`.
    pub fn requires(&self, name: &str) -> bool {
        self.required.contains(&name)
    }

    fn set(&mut self, name: &'a str, property: SurfaceProperty<'a>) {
        match self.properties.iter_mut().find(|(k, _)| *k == name) {
            Some((_, slot)) => *slot = property,
            None => self.properties.push((name, property)),
        }
    }

    fn require(&mut self, name: &'a str) {
        if !self.required.contains(&name) {
            self.required.push(name);
        }
    }
}

/// The surface of an action that materialises. `object` is the object its
/// tool acts on ([`object_of`]), `owner` the fields of the object whose
/// `actions` hold it; `row_context` whether the tool takes the injected,
/// required `recordId` (`object.is_some() && acts_on_one_record(action)`).
/// Map-shaped `params` build their records in `arena`.
pub fn surface<'a>(
    action: &'a Map<'a>,
    owner: Option<&ObjectFields<'a>>,
    index: &ObjectIndex<'a>,
    arena: &'a Arena,
    row_context: bool,
) -> Surface<'a> {
    let mut out = Surface::default();
    if row_context {
        out.set(
            "recordId",
            SurfaceProperty {
                kind: "string",
                allowed: None,
            },
        );
        out.require("recordId");
    }
    let mut add = |param: &'a Map<'a>| {
        let Some(facts) = param_facts(param, owner, index) else {
            return;
        };
        let allowed = match facts.options {
            Some(Value::Array(options)) if options.iter().any(|o| option_value(o).is_some()) => {
                Some(Allowed::Options(options))
            }
            _ => None,
        };
        if facts.required {
            out.require(facts.name);
        }
        out.set(
            facts.name,
            SurfaceProperty {
                kind: facts.kind,
                allowed,
            },
        );
    };
    match action.get("params") {
        Some(Value::Array(params)) => params
            .iter()
            .filter_map(Value::as_object)
            .for_each(&mut add),
        other => collection::records(other, arena)
            .iter()
            .for_each(|p| add(p.fields)),
    }
    let hints = action
        .get("ai")
        .and_then(Value::as_object)
        .and_then(|ai| ai.get("paramHints"))
        .and_then(Value::as_object);
    for (key, hint) in hints
        .map(|h| js_order(h.iter().collect()))
        .into_iter()
        .flatten()
    {
        let Value::Object(hint) = hint else { continue };
        if out.get(key).is_none() {
            out.set(
                key,
                SurfaceProperty {
                    kind: "string",
                    allowed: None,
                },
            );
        }
        if let Some(Value::Array(values)) = hint.get("enum")
            && let Some((_, property)) = out.properties.iter_mut().find(|(k, _)| *k == key)
        {
            property.allowed = Some(Allowed::Values(values));
        }
    }
    out.properties = js_order(std::mem::take(&mut out.properties));
    out
}
