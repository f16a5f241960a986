//! The `parameters` JSON Schema of a materialised action (behaviour.md,
//! "The tool definition"): one property per param (its type, description,
//! options, default), the injected `recordId`, then the `ai.paramHints`
//! laid over them, written without copying anything from the document.

use std::collections::HashMap;
use std::fmt;

use objectstack_spec::collection;
use objectstack_spec::json::order::{JsOrdered, js_entries, js_order};
use objectstack_spec::json::{Arena, Map, Value};
use objectstack_spec::materialise::ai_block;
use objectstack_spec::materialise::surface::{option_value, param_facts};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::definition::{Display, Fast, ObjectIndex, Owner};

/// The separator between a parameter's label and its help text: an em dash
/// (U+2014) with a space either side.
pub(crate) const LABEL_HELP_SEPARATOR: &str = " \u{2014} ";

/// The `parameters` JSON Schema of an action: `{type: object, properties,
/// required (when any), additionalProperties: false}`.
#[derive(Debug, Clone)]
pub(super) struct Parameters<'a> {
    properties: Vec<(&'a str, Property<'a>)>,
    required: Vec<&'a str>,
}

impl Serialize for Parameters<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct PropertyMap<'p, 'a>(&'p [(&'a str, Property<'a>)]);
        impl Serialize for PropertyMap<'_, '_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
            }
        }
        let len = 3 + usize::from(!self.required.is_empty());
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("type", "object")?;
        map.serialize_entry("properties", &PropertyMap(&self.properties))?;
        if !self.required.is_empty() {
            map.serialize_entry("required", &self.required)?;
        }
        map.serialize_entry("additionalProperties", &false)?;
        map.end()
    }
}

/// The keywords a property schema can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keyword {
    Type,
    Description,
    Enum,
    Items,
    Default,
    Examples,
}

/// One property's schema. Its keywords are written in the order they were
/// first set, as a JavaScript object keeps its keys: a hint that replaces
/// a keyword keeps its place, one that adds a keyword puts it last.
#[derive(Debug, Clone)]
struct Property<'a> {
    order: [Keyword; 6],
    len: u8,
    kind: &'static str,
    description: Option<Text<'a>>,
    enumeration: Option<Enumeration<'a>>,
    /// `items` (always `{type: string}`), with its `enum` when it has one.
    items: Option<Option<Enumeration<'a>>>,
    default: Option<&'a Value<'a>>,
    examples: Option<&'a [Value<'a>]>,
}

impl<'a> Property<'a> {
    /// `{type: kind}`.
    fn of_type(kind: &'static str) -> Self {
        Property {
            order: [Keyword::Type; 6],
            len: 1,
            kind,
            description: None,
            enumeration: None,
            items: None,
            default: None,
            examples: None,
        }
    }

    /// Records that `keyword` is set, keeping the place of one set before.
    fn set(&mut self, keyword: Keyword) {
        let len = usize::from(self.len);
        let order = self.order.get(..len).unwrap_or_default();
        if !order.contains(&keyword)
            && let Some(slot) = self.order.get_mut(len)
        {
            *slot = keyword;
            self.len += 1;
        }
    }

    fn set_description(&mut self, text: Text<'a>) {
        self.set(Keyword::Description);
        self.description = Some(text);
    }

    fn set_enum(&mut self, values: Enumeration<'a>) {
        self.set(Keyword::Enum);
        self.enumeration = Some(values);
    }

    /// Sets `items` (`{type: string}`), with `values` as its `enum` when
    /// given; an `items` already there keeps its `enum` when not.
    fn set_items(&mut self, values: Option<Enumeration<'a>>) {
        self.set(Keyword::Items);
        match (&mut self.items, values) {
            (Some(items), Some(values)) => *items = Some(values),
            (Some(_), None) => {}
            (items @ None, values) => *items = Some(values),
        }
    }

    fn set_default(&mut self, value: &'a Value<'a>) {
        self.set(Keyword::Default);
        self.default = Some(value);
    }

    fn set_examples(&mut self, values: &'a [Value<'a>]) {
        self.set(Keyword::Examples);
        self.examples = Some(values);
    }
}

impl Serialize for Property<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let keywords = self.order.get(..usize::from(self.len)).unwrap_or_default();
        let mut map = serializer.serialize_map(Some(keywords.len()))?;
        for keyword in keywords {
            match keyword {
                Keyword::Type => map.serialize_entry("type", self.kind)?,
                Keyword::Description => {
                    if let Some(text) = &self.description {
                        map.serialize_entry("description", &Display(text))?;
                    }
                }
                Keyword::Enum => {
                    if let Some(values) = &self.enumeration {
                        map.serialize_entry("enum", values)?;
                    }
                }
                Keyword::Items => {
                    if let Some(values) = &self.items {
                        map.serialize_entry("items", &Items(values.as_ref()))?;
                    }
                }
                Keyword::Default => {
                    if let Some(value) = self.default {
                        map.serialize_entry("default", &JsOrdered(value))?;
                    }
                }
                Keyword::Examples => {
                    if let Some(values) = self.examples {
                        map.serialize_entry("examples", &JsOrdered(&Value::Array(values)))?;
                    }
                }
            }
        }
        map.end()
    }
}

/// `{type: string}`, with an `enum` when there is one.
struct Items<'e, 'a>(Option<&'e Enumeration<'a>>);

impl Serialize for Items<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1 + usize::from(self.0.is_some())))?;
        map.serialize_entry("type", "string")?;
        if let Some(values) = self.0 {
            map.serialize_entry("enum", values)?;
        }
        map.end()
    }
}

/// A property's description.
#[derive(Debug, Clone, Copy)]
enum Text<'a> {
    /// Written as it is.
    Plain(&'a str),
    /// A label and its help text, joined by [`LABEL_HELP_SEPARATOR`].
    Joined(&'a str, &'a str),
    /// The injected `recordId`'s description, naming the object.
    RecordId(&'a str),
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Text::Plain(text) => f.write_str(text),
            Text::Joined(label, help) => {
                f.write_str(label)?;
                f.write_str(LABEL_HELP_SEPARATOR)?;
                f.write_str(help)
            }
            Text::RecordId(object) => write!(f, "The {object} record id to act on."),
        }
    }
}

/// An `enum` list.
#[derive(Debug, Clone, Copy)]
enum Enumeration<'a> {
    /// The string values of an `options` list: string entries, or the
    /// string `value` of `{value, label}` entries; anything else is
    /// dropped.
    Options(&'a [Value<'a>]),
    /// A hint's list, copied as it is (objects in JavaScript's key order).
    Values(&'a [Value<'a>]),
}

impl Serialize for Enumeration<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Enumeration::Options(options) => {
                serializer.collect_seq(options.iter().filter_map(option_value))
            }
            Enumeration::Values(values) => JsOrdered(&Value::Array(values)).serialize(serializer),
        }
    }
}

/// The properties of a schema under construction: in insertion order, a
/// name set again keeping its place. Short lists (the usual case) are
/// searched; long ones get an index, so a pathological action stays linear.
#[derive(Debug, Default)]
struct Properties<'a> {
    entries: Vec<(&'a str, Property<'a>)>,
    index: HashMap<&'a str, usize, Fast>,
}

impl<'a> Properties<'a> {
    /// Entries kept in the list alone, before an index is built.
    const SEARCHED: usize = 16;

    fn with_capacity(capacity: usize) -> Self {
        Properties {
            entries: Vec::with_capacity(capacity),
            index: HashMap::default(),
        }
    }

    fn position(&mut self, key: &str) -> Option<usize> {
        if self.entries.len() <= Self::SEARCHED {
            return self.entries.iter().position(|(k, _)| *k == key);
        }
        if self.index.is_empty() {
            self.index = (self.entries.iter().enumerate())
                .map(|(i, (k, _))| (*k, i))
                .collect();
        }
        self.index.get(key).copied()
    }

    fn push(&mut self, key: &'a str, property: Property<'a>) -> usize {
        let at = self.entries.len();
        self.entries.push((key, property));
        if !self.index.is_empty() {
            self.index.insert(key, at);
        }
        at
    }

    /// Sets `key` to `property`, in place when it is there already.
    fn insert(&mut self, key: &'a str, property: Property<'a>) {
        match self.position(key).and_then(|i| self.entries.get_mut(i)) {
            Some((_, slot)) => *slot = property,
            None => {
                self.push(key, property);
            }
        }
    }

    /// The property under `key`, created as `{type: string}` when absent.
    fn entry(&mut self, key: &'a str) -> Option<&mut Property<'a>> {
        let at = match self.position(key) {
            Some(at) => at,
            None => self.push(key, Property::of_type("string")),
        };
        self.entries.get_mut(at).map(|(_, p)| p)
    }
}

/// The `parameters` of an action.
pub(super) fn parameters<'a>(
    action: &'a Map<'a>,
    owner: &Owner<'_, 'a>,
    index: &ObjectIndex<'a>,
    arena: &'a Arena,
    row_context: bool,
) -> Parameters<'a> {
    let hints = ai_block(action)
        .and_then(|ai| ai.get("paramHints"))
        .and_then(Value::as_object);
    let capacity = 1
        + action
            .get("params")
            .and_then(Value::as_array)
            .map_or(0, <[_]>::len)
        + hints.map_or(0, Map::len);
    let mut properties = Properties::with_capacity(capacity);
    let mut required = Required::default();

    // `row_context`: the action has an owner and acts on one record (a
    // row-context location, or a field write:
    // `spec::materialise::acts_on_one_record`, decided by the caller). The
    // runtime refuses a call without the id, so it is required (upstream
    // required it only with `recordIdParam` or `recordIdField`).
    if let Some(object_name) = owner.name
        && row_context
    {
        let mut record_id = Property::of_type("string");
        record_id.set_description(Text::RecordId(object_name));
        properties.insert("recordId", record_id);
        required.add("recordId");
    }

    let mut add_param = |param: &'a Map<'a>| {
        if let Some((name, schema, is_required)) = param_schema(param, owner, index) {
            if is_required {
                required.add(name);
            }
            properties.insert(name, schema);
        }
    };
    match action.get("params") {
        // The common shape, read without collecting records first.
        Some(Value::Array(params)) => params
            .iter()
            .filter_map(Value::as_object)
            .for_each(&mut add_param),
        other => collection::records(other, arena)
            .iter()
            .for_each(|p| add_param(p.fields)),
    }

    for (key, hint) in hints.map(js_entries).into_iter().flatten() {
        let Value::Object(hint) = hint else { continue };
        if let Some(property) = properties.entry(key) {
            apply_hint(property, hint);
        }
    }

    // JavaScript lists integer-like keys first, whatever the order of
    // insertion: upstream's `properties` object serialises that way.
    Parameters {
        properties: js_order(properties.entries),
        required: required.names,
    }
}

/// The `required` list: each name once, in first-seen order. Short lists
/// (the usual case) are searched; long ones get a set, so a pathological
/// action stays linear.
#[derive(Debug, Default)]
struct Required<'a> {
    names: Vec<&'a str>,
    seen: std::collections::HashSet<&'a str, Fast>,
}

impl<'a> Required<'a> {
    /// Names kept in the list alone, before a set is built.
    const SEARCHED: usize = 16;

    fn add(&mut self, name: &'a str) {
        if self.names.len() < Self::SEARCHED {
            if self.names.contains(&name) {
                return;
            }
        } else {
            if self.seen.is_empty() {
                self.seen.extend(self.names.iter().copied());
            }
            if !self.seen.insert(name) {
                return;
            }
        }
        self.names.push(name);
    }
}

/// A parameter's property name, schema and whether it is required; `None`
/// when the parameter has no usable name.
///
/// Where upstream reads `param.x ?? field.x`, a param key that is present
/// and not `null` wins even when its value is unusable (an empty string, a
/// value of the wrong type): the field is consulted only when the param
/// says nothing.
fn param_schema<'a>(
    param: &'a Map<'a>,
    owner: &Owner<'_, 'a>,
    index: &ObjectIndex<'a>,
) -> Option<(&'a str, Property<'a>, bool)> {
    // The name, the field behind it, the type, the options and whether it
    // is required are read by `spec` (the surface refinements are judged
    // against); the rest of the schema is written here.
    let facts = param_facts(param, owner.object, index)?;
    let p = Keys::of(param);
    let str_of = |v: Option<&'a Value<'a>>| v.and_then(Value::as_str);
    let f = facts.field.map(Keys::of).unwrap_or_default();
    let json_type = facts.kind;
    let mut schema = Property::of_type(json_type);

    // A param label that is not a string (an i18n map) defers to the
    // field's label; help text follows `??`.
    let label = str_of(p.label)
        .or_else(|| str_of(f.label))
        .filter(|s| !s.is_empty());
    let help = match given(p.help_text) {
        Some(help) => help.as_str(),
        None => str_of(f.description),
    }
    .filter(|s| !s.is_empty());
    match (label, help) {
        (Some(label), Some(help)) => schema.set_description(Text::Joined(label, help)),
        (Some(one), None) | (None, Some(one)) => schema.set_description(Text::Plain(one)),
        (None, None) => {}
    }

    // `param.options ?? field.options`. A non-empty list enumerates its
    // string values (to `items` on an array); when none of them is a
    // string there is no enum, and, as upstream, no `items` either. A
    // missing, empty or non-list source leaves an array with
    // `items: {type: string}`.
    match facts.options {
        Some(Value::Array(options)) if !options.is_empty() => {
            let values = Enumeration::Options(options);
            match (options.iter().any(|o| option_value(o).is_some()), json_type) {
                (false, _) => {}
                (true, "array") => schema.set_items(Some(values)),
                (true, _) => schema.set_enum(values),
            }
        }
        _ if json_type == "array" => schema.set_items(None),
        _ => {}
    }

    if let Some(default) = p.default_value {
        schema.set_default(default);
    }
    Some((facts.name, schema, facts.required))
}

/// A value that is present and not `null` (what `??` keeps).
fn given<'v, 'a>(value: Option<&'v Value<'a>>) -> Option<&'v Value<'a>> {
    value.filter(|v| !v.is_null())
}

/// The keys a parameter (or the field behind it) is read for, found in one
/// pass over its entries: cheaper than a lookup per key on the small maps
/// params and fields are.
#[derive(Debug, Default, Clone, Copy)]
struct Keys<'a> {
    label: Option<&'a Value<'a>>,
    help_text: Option<&'a Value<'a>>,
    description: Option<&'a Value<'a>>,
    default_value: Option<&'a Value<'a>>,
}

impl<'a> Keys<'a> {
    fn of(map: &'a Map<'a>) -> Self {
        let mut keys = Keys::default();
        for (key, value) in map.iter() {
            let slot = match key {
                "label" => &mut keys.label,
                "helpText" => &mut keys.help_text,
                "description" => &mut keys.description,
                "defaultValue" => &mut keys.default_value,
                _ => continue,
            };
            *slot = Some(value);
        }
        keys
    }
}

/// Applies one `ai.paramHints` entry to its property (created as `{type:
/// string}` when the key had none): `description`, `enum` (on an array,
/// to `items`) and `examples` override. Values of the wrong JSON type are
/// ignored (the `validate` command reports them).
fn apply_hint<'a>(property: &mut Property<'a>, hint: &'a Map<'a>) {
    if let Some(Value::String(description)) = hint.get("description") {
        property.set_description(Text::Plain(description));
    }
    if let Some(Value::Array(values)) = hint.get("enum") {
        let values = Enumeration::Values(values);
        if property.kind == "array" {
            property.set_items(Some(values));
        } else {
            property.set_enum(values);
        }
    }
    if let Some(Value::Array(examples)) = hint.get("examples") {
        property.set_examples(examples);
    }
}
