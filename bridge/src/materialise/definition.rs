//! The tool definition of one materialised action (behaviour.md, "The tool
//! definition").
//!
//! A [`Definition`] borrows every name, label and schema fragment from the
//! document it was built from and is written out by its `Serialize`
//! implementation; nothing is copied into `serde_json` values unless an
//! owned [`AIToolDefinition`] is asked for ([`Definition::to_definition`]).
//! Objects and their fields are indexed once per walk ([`ObjectIndex`]),
//! so building a definition costs time proportional to the action alone.

use std::collections::HashMap;
use std::fmt;

use objectstack_spec::AIToolDefinition;
use objectstack_spec::collection::{self, is_array_index_key, js_order};
use objectstack_spec::json::{Arena, Map, Number, Value};
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

/// Hash maps keyed by names from the document: not exposed to a hostile
/// choice of keys that matters (the walk is linear whatever the keys), so a
/// fast hasher.
pub(super) type Fast = foldhash::fast::RandomState;

/// The separator between a parameter's label and its help text: an em dash
/// (U+2014) with a space either side.
pub(crate) const LABEL_HELP_SEPARATOR: &str = " \u{2014} ";

pub(super) use objectstack_spec::materialise::surface::{ObjectFields, ObjectIndex};
use objectstack_spec::materialise::surface::{option_value, param_facts};

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
/// use objectstack_bridge::materialise::{Event, materialise_document_each};
/// use objectstack_spec::json::{self, Arena};
///
/// let arena = Arena::new();
/// let stack = json::parse_document(br#"{"objects": [{"name": "task", "actions": [{
///     "name": "close", "type": "script", "target": "closeTask",
///     "ai": {"exposed": true, "description": "Closes a task whose work is done."}
/// }]}]}"#, &arena)?;
/// let mut out = Vec::new();
/// materialise_document_each(stack, &arena, None, &|_| false, &mut |event| {
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
            output_schema: self.output_schema.map(js_ordered_map),
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
            map.serialize_entry("outputSchema", &JsOrderedMap(schema))?;
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
struct Display<'d, T>(&'d T);

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

/// The `parameters` JSON Schema of an action: `{type: object, properties,
/// required (when any), additionalProperties: false}`.
#[derive(Debug, Clone)]
struct Parameters<'a> {
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
                        map.serialize_entry("examples", &JsOrderedSeq(values))?;
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
            Enumeration::Values(values) => JsOrderedSeq(values).serialize(serializer),
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
fn parameters<'a>(
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

/// The action's `ai` block when it is an object.
fn ai_block<'a>(action: &'a Map<'a>) -> Option<&'a Map<'a>> {
    action.get("ai").and_then(Value::as_object)
}

/// A map's entries in JavaScript's order (see [`js_order`]).
fn js_entries<'a>(map: &'a Map<'a>) -> Vec<(&'a str, &'a Value<'a>)> {
    js_order(map.iter().collect())
}

/// Writes a document value as upstream serialises a value it copied from
/// the stack: objects list their keys in JavaScript's order (integer-like
/// keys first, ascending).
struct JsOrdered<'v, 'a>(&'v Value<'a>);

impl Serialize for JsOrdered<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(Number::PosInt(n)) => serializer.serialize_u64(*n),
            Value::Number(Number::NegInt(n)) => serializer.serialize_i64(*n),
            Value::Number(Number::Float(n)) => match js_integer(*n) {
                Some(i) => serializer.serialize_i64(i),
                None => serializer.serialize_f64(*n),
            },
            Value::String(s) => serializer.serialize_str(s),
            Value::Array(items) => JsOrderedSeq(items).serialize(serializer),
            Value::Object(map) => JsOrderedMap(map).serialize(serializer),
        }
    }
}

/// A float `JSON.stringify` writes as an integer, as that integer: one
/// with no fraction whose magnitude is at most 2^53, where every integer
/// is exact (`5.0` is written `5`, and `-0` is written `0`).
fn js_integer(n: f64) -> Option<i64> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    #[allow(clippy::cast_possible_truncation)]
    (n.fract() == 0.0 && n.abs() <= EXACT).then_some(n as i64)
}

/// [`JsOrdered`] for an array's items.
struct JsOrderedSeq<'v, 'a>(&'v [Value<'a>]);

impl Serialize for JsOrderedSeq<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for item in self.0 {
            seq.serialize_element(&JsOrdered(item))?;
        }
        seq.end()
    }
}

/// [`JsOrdered`] for an object.
struct JsOrderedMap<'v, 'a>(&'v Map<'a>);

impl Serialize for JsOrderedMap<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let map = self.0;
        let mut out = serializer.serialize_map(Some(map.len()))?;
        if map.keys().any(|k| is_array_index_key(k).is_some()) {
            for (key, value) in js_entries(map) {
                out.serialize_entry(key, &JsOrdered(value))?;
            }
        } else {
            for (key, value) in map.iter() {
                out.serialize_entry(key, &JsOrdered(value))?;
            }
        }
        out.end()
    }
}

/// An owned copy of a document object in JavaScript's key order.
fn js_ordered_map(map: &Map<'_>) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(JsOrderedMap(map)) {
        Ok(serde_json::Value::Object(map)) => map,
        // Unreachable: an object serialises to an object, and a document
        // value (finite numbers, string keys) cannot fail to serialise.
        _ => serde_json::Map::new(),
    }
}
