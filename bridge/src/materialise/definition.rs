//! The tool definition of one materialised action (behaviour.md, "The tool
//! definition").
//!
//! Objects and their fields are indexed once per walk ([`ObjectIndex`]), so
//! building a definition costs time proportional to the action alone.

use std::collections::{HashMap, HashSet};

use objectstack_spec::AIToolDefinition;
use objectstack_spec::collection::is_array_index_key;
use objectstack_spec::collection::js_entries;
use objectstack_spec::collection::owned::{Record, records};
use objectstack_spec::text::is_truthy;
use serde_json::{Map, Value};

/// The separator between a parameter's label and its help text: an em dash
/// (U+2014) with a space either side.
pub(crate) const LABEL_HELP_SEPARATOR: &str = " \u{2014} ";

/// Field types whose values are JSON numbers.
const NUMBER_TYPES: &[&str] = &[
    "number",
    "currency",
    "percent",
    "rating",
    "slider",
    "autonumber",
];
/// Field types whose values are JSON booleans.
const BOOLEAN_TYPES: &[&str] = &["boolean", "toggle"];
/// Field types whose values are arrays of strings.
const ARRAY_TYPES: &[&str] = &["multiselect", "checkboxes", "tags"];

/// One object's fields, by name.
#[derive(Debug, Default)]
pub(super) struct ObjectInfo<'v> {
    fields: HashMap<&'v str, &'v Map<String, Value>>,
}

/// Every object of the stack by name, with its fields by name.
#[derive(Debug, Default)]
pub(super) struct ObjectIndex<'v> {
    by_name: HashMap<&'v str, usize>,
    objects: Vec<ObjectInfo<'v>>,
}

impl<'v> ObjectIndex<'v> {
    /// Indexes the objects (read leniently). The LAST object of a name wins,
    /// as in upstream's `new Map(objects.map(o => [o.name, o]))`; a
    /// duplicate name is an invalid stack anyway.
    pub(super) fn build(objects: &'v [Record<'_>]) -> Self {
        let mut index = ObjectIndex {
            by_name: HashMap::with_capacity(objects.len()),
            objects: Vec::with_capacity(objects.len()),
        };
        for (i, object) in objects.iter().enumerate() {
            if let Some(name) = object.name() {
                index.by_name.insert(name, i);
            }
            index.objects.push(ObjectInfo {
                fields: index_fields(object.get("fields")),
            });
        }
        index
    }

    /// The object named `name`.
    pub(super) fn get(&self, name: &str) -> Option<&ObjectInfo<'v>> {
        self.by_name.get(name).and_then(|&i| self.objects.get(i))
    }

    /// The object at lenient index `i`.
    pub(super) fn at(&self, i: usize) -> Option<&ObjectInfo<'v>> {
        self.objects.get(i)
    }

    /// Whether some object is named `name`.
    pub(super) fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }
}

/// Indexes a `fields` collection by name, without copying. A map (the
/// schema's shape) is looked up by KEY, as upstream's `fields[ref]` does:
/// an entry's own `name` does not matter. An array (lenient input) is
/// looked up by each entry's string `name`, the first of a name winning.
/// Entries that are not objects carry nothing a parameter could read, so
/// they are left out.
fn index_fields(fields: Option<&Value>) -> HashMap<&str, &Map<String, Value>> {
    let mut index = HashMap::new();
    match fields {
        Some(Value::Object(entries)) => {
            index.reserve(entries.len());
            for (key, entry) in entries {
                if let Value::Object(field) = entry {
                    index.insert(key.as_str(), field);
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
    index
}

/// The object an action acts on.
#[derive(Debug, Clone, Copy)]
pub(super) struct Owner<'o> {
    /// Its name (the action's `objectName`, else the owning object's).
    pub(super) name: Option<&'o str>,
    /// The fields field-backed params read: the object whose `actions`
    /// hold the action (upstream's owning object), whatever `objectName`
    /// says; `None` for a stack-level action no object takes in.
    pub(super) object: Option<&'o ObjectInfo<'o>>,
}

/// Builds the tool definition of an action that materialises;
/// `requires_confirmation` is the confirmation rule's answer for it.
pub(super) fn build(
    tool_name: String,
    action: &Map<String, Value>,
    owner: &Owner<'_>,
    index: &ObjectIndex<'_>,
    requires_confirmation: bool,
    row_context: bool,
) -> AIToolDefinition {
    let ai = ai_block(action);
    let ai_str = |key: &str| ai.and_then(|ai| ai.get(key)).and_then(Value::as_str);
    let output_schema = ai
        .and_then(|ai| ai.get("outputSchema"))
        .and_then(Value::as_object);
    AIToolDefinition {
        name: tool_name,
        // Upstream's bridge does not fill `label`; projections that need a
        // title read the action's label from the registration instead.
        label: None,
        description: description(ai_str("description").unwrap_or_default(), output_schema),
        parameters: parameters(action, owner, index, row_context),
        category: ai_str("category").map(str::to_owned),
        output_schema: output_schema.map(js_ordered_map),
        object_name: owner.name.map(str::to_owned),
        requires_confirmation: Some(requires_confirmation),
    }
}

/// `ai.description`, plus a blank line and `Returns an object with: k1,
/// k2.` when the output schema has top-level properties: the keys of a
/// non-empty `properties` object in the order JavaScript lists them
/// (integer-like keys first), or, as `Object.keys` reads an array, the
/// indices of a non-empty `properties` array.
fn description(base: &str, output_schema: Option<&Map<String, Value>>) -> String {
    let keys: Vec<std::borrow::Cow<'_, str>> = match output_schema.and_then(|s| s.get("properties"))
    {
        Some(Value::Object(properties)) => js_entries(properties)
            .into_iter()
            .map(|(key, _)| key.as_str().into())
            .collect(),
        Some(Value::Array(items)) => (0..items.len()).map(|i| i.to_string().into()).collect(),
        _ => Vec::new(),
    };
    if keys.is_empty() {
        return base.to_owned();
    }
    let mut text = String::with_capacity(base.len() + 32 + keys.len() * 12);
    text.push_str(base);
    text.push_str("\n\nReturns an object with: ");
    for (i, key) in keys.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(key);
    }
    text.push('.');
    text
}

/// The `parameters` JSON Schema of an action.
fn parameters(
    action: &Map<String, Value>,
    owner: &Owner<'_>,
    index: &ObjectIndex<'_>,
    row_context: bool,
) -> Map<String, Value> {
    let hints = ai_block(action)
        .and_then(|ai| ai.get("paramHints"))
        .and_then(Value::as_object);
    let capacity = 1
        + action
            .get("params")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
        + hints.map_or(0, Map::len);
    let mut properties = Map::with_capacity(capacity);
    let mut required = Required::default();

    // `row_context`: the action has an owner and a row-context location
    // (`spec::materialise::is_row_context`, decided by the caller).
    if let Some(object_name) = owner.name
        && row_context
    {
        let mut record_id = Map::with_capacity(2);
        record_id.insert("type".into(), "string".into());
        record_id.insert(
            "description".into(),
            format!("The {object_name} record id to act on.").into(),
        );
        properties.insert("recordId".into(), Value::Object(record_id));
        if is_truthy(action.get("recordIdParam")) || is_truthy(action.get("recordIdField")) {
            required.add("recordId");
        }
    }

    let mut add_param = |param: &Map<String, Value>| {
        if let Some((name, schema, is_required)) = param_schema(param, owner, index) {
            if is_required {
                required.add(name);
            }
            properties.insert(name.to_owned(), Value::Object(schema));
        }
    };
    match action.get("params") {
        // The common shape, read without collecting records first.
        Some(Value::Array(params)) => params
            .iter()
            .filter_map(Value::as_object)
            .for_each(&mut add_param),
        other => records(other).iter().for_each(|p| add_param(&p.fields)),
    }

    for (key, hint) in hints.map(js_entries).into_iter().flatten() {
        let Value::Object(hint) = hint else { continue };
        apply_hint(&mut properties, key, hint);
    }

    let properties = if properties.keys().any(|k| is_array_index_key(k).is_some()) {
        // JavaScript lists integer-like keys first, whatever the order of
        // insertion: upstream's `properties` object serialises that way.
        js_entries(&properties)
            .into_iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    } else {
        properties
    };
    let mut schema = Map::with_capacity(4);
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    if !required.names.is_empty() {
        let names = required.names.into_iter();
        schema.insert(
            "required".into(),
            Value::Array(names.map(Value::String).collect()),
        );
    }
    schema.insert("additionalProperties".into(), Value::Bool(false));
    schema
}

/// The `required` list: each name once, in first-seen order. Short lists
/// (the usual case) are searched; long ones get a set, so a pathological
/// action stays linear.
#[derive(Debug, Default)]
struct Required {
    names: Vec<String>,
    seen: HashSet<String>,
}

impl Required {
    /// Names kept in the list alone, before a set is built.
    const SEARCHED: usize = 16;

    fn add(&mut self, name: &str) {
        if self.names.len() < Self::SEARCHED {
            if self.names.iter().any(|n| n == name) {
                return;
            }
        } else {
            if self.seen.is_empty() {
                self.seen.extend(self.names.iter().cloned());
            }
            if !self.seen.insert(name.to_owned()) {
                return;
            }
        }
        self.names.push(name.to_owned());
    }
}

/// A parameter's property name, schema and whether it is required; `None`
/// when the parameter has no usable name.
///
/// Where upstream reads `param.x ?? field.x`, a param key that is present
/// and not `null` wins even when its value is unusable (an empty string, a
/// value of the wrong type): the field is consulted only when the param
/// says nothing.
fn param_schema<'p>(
    param: &'p Map<String, Value>,
    owner: &Owner<'_>,
    index: &ObjectIndex<'_>,
) -> Option<(&'p str, Map<String, Value>, bool)> {
    let p = Keys::of(param);
    let str_of = |v: Option<&'p Value>| v.and_then(Value::as_str);
    let field_name = str_of(p.field).filter(|s| !s.is_empty());
    // `param.name ?? param.field`, and no name at all drops the param: an
    // empty `name` is a name (an unusable one), so it does not fall back
    // to `field`. A name that is not a string is treated as absent.
    let name = match p.name {
        Some(Value::String(name)) => Some(name.as_str()),
        _ => field_name,
    }
    .filter(|s| !s.is_empty())?;
    let field = field_name.and_then(|field_name| {
        let object = str_of(p.object_override)
            .and_then(|o| index.get(o))
            .or(owner.object);
        object.and_then(|o| o.fields.get(field_name)).copied()
    });
    let f = field.map(Keys::of).unwrap_or_default();

    let source_type = match given(p.kind) {
        Some(kind) => kind.as_str(),
        None => f.kind.and_then(Value::as_str),
    };
    let json_type = json_type(source_type);
    let mut schema = Map::with_capacity(4);
    schema.insert("type".into(), json_type.into());

    // A param label that is not a string (an i18n map) defers to the
    // field's label; help text follows `??`.
    let label = str_of(p.label)
        .or_else(|| f.label.and_then(Value::as_str))
        .filter(|s| !s.is_empty());
    let help = match given(p.help_text) {
        Some(help) => help.as_str(),
        None => f.description.and_then(Value::as_str),
    }
    .filter(|s| !s.is_empty());
    let description = match (label, help) {
        (Some(label), Some(help)) => Some(format!("{label}{LABEL_HELP_SEPARATOR}{help}")),
        (Some(one), None) | (None, Some(one)) => Some(one.to_owned()),
        (None, None) => None,
    };
    if let Some(description) = description {
        schema.insert("description".into(), description.into());
    }

    // `param.options ?? field.options`. A non-empty list enumerates its
    // string values (to `items` on an array); when none of them is a
    // string there is no enum, and, as upstream, no `items` either. A
    // missing, empty or non-list source leaves an array with
    // `items: {type: string}`.
    match given(p.options).or_else(|| given(f.options)) {
        Some(Value::Array(options)) if !options.is_empty() => {
            let values = option_values(options);
            if !values.is_empty() {
                if json_type == "array" {
                    let mut items = Map::with_capacity(2);
                    items.insert("type".into(), "string".into());
                    items.insert("enum".into(), Value::Array(values));
                    schema.insert("items".into(), Value::Object(items));
                } else {
                    schema.insert("enum".into(), Value::Array(values));
                }
            }
        }
        _ if json_type == "array" => {
            let mut items = Map::with_capacity(1);
            items.insert("type".into(), "string".into());
            schema.insert("items".into(), Value::Object(items));
        }
        _ => {}
    }

    if let Some(default) = p.default_value {
        schema.insert("default".into(), js_ordered(default));
    }

    // `Boolean(param.required ?? field.required ?? false)`: JavaScript
    // truthiness of the first value that is present and not `null`.
    let required = is_truthy(given(p.required).or_else(|| given(f.required)));
    Some((name, schema, required))
}

/// A value that is present and not `null` (what `??` keeps).
fn given(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

/// The keys a parameter (or the field behind it) is read for, found in one
/// pass over its entries: cheaper than a hashed lookup per key on the small
/// maps params and fields are.
#[derive(Debug, Default, Clone, Copy)]
struct Keys<'p> {
    name: Option<&'p Value>,
    field: Option<&'p Value>,
    object_override: Option<&'p Value>,
    kind: Option<&'p Value>,
    label: Option<&'p Value>,
    help_text: Option<&'p Value>,
    description: Option<&'p Value>,
    options: Option<&'p Value>,
    default_value: Option<&'p Value>,
    required: Option<&'p Value>,
}

impl<'p> Keys<'p> {
    fn of(map: &'p Map<String, Value>) -> Self {
        let mut keys = Keys::default();
        for (key, value) in map {
            let slot = match key.as_str() {
                "name" => &mut keys.name,
                "field" => &mut keys.field,
                "objectOverride" => &mut keys.object_override,
                "type" => &mut keys.kind,
                "label" => &mut keys.label,
                "helpText" => &mut keys.help_text,
                "description" => &mut keys.description,
                "options" => &mut keys.options,
                "defaultValue" => &mut keys.default_value,
                "required" => &mut keys.required,
                _ => continue,
            };
            *slot = Some(value);
        }
        keys
    }
}

/// The JSON type a field type maps to.
pub(crate) fn json_type(field_type: Option<&str>) -> &'static str {
    match field_type {
        Some(t) if NUMBER_TYPES.contains(&t) => "number",
        Some(t) if BOOLEAN_TYPES.contains(&t) => "boolean",
        Some(t) if ARRAY_TYPES.contains(&t) => "array",
        _ => "string",
    }
}

/// The string values of an `options` list: string entries, or the string
/// `value` of `{value, label}` entries; anything else is dropped.
fn option_values(options: &[Value]) -> Vec<Value> {
    options
        .iter()
        .filter_map(|o| match o {
            Value::String(s) => Some(Value::String(s.clone())),
            Value::Object(o) => match o.get("value") {
                Some(Value::String(s)) => Some(Value::String(s.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// A copy of `value` whose objects list their keys in JavaScript's order
/// (integer-like keys first, ascending), as upstream serialises a value it
/// copied from the stack. Objects without such keys keep their order.
pub(crate) fn js_ordered(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(js_ordered_map(map)),
        Value::Array(items) => Value::Array(items.iter().map(js_ordered).collect()),
        other => other.clone(),
    }
}

/// [`js_ordered`] for a map.
pub(crate) fn js_ordered_map(map: &Map<String, Value>) -> Map<String, Value> {
    js_entries(map)
        .into_iter()
        .map(|(k, v)| (k.clone(), js_ordered(v)))
        .collect()
}

/// Applies one `ai.paramHints` entry: `description`, `enum` (on an array,
/// to `items`) and `examples` override; a hint for a key with no property
/// creates `{type: string}`. Values of the wrong JSON type are ignored (the
/// `validate` command reports them).
fn apply_hint(properties: &mut Map<String, Value>, key: &str, hint: &Map<String, Value>) {
    let property = properties.entry(key.to_owned()).or_insert_with(|| {
        let mut p = Map::with_capacity(1);
        p.insert("type".into(), "string".into());
        Value::Object(p)
    });
    let Value::Object(property) = property else {
        return;
    };
    if let Some(Value::String(description)) = hint.get("description") {
        property.insert("description".into(), description.clone().into());
    }
    if let Some(values @ Value::Array(_)) = hint.get("enum") {
        let values = js_ordered(values);
        if property.get("type").and_then(Value::as_str) == Some("array") {
            let items = property
                .entry("items")
                .or_insert_with(|| serde_json::json!({"type": "string"}));
            if let Value::Object(items) = items {
                items.insert("enum".into(), values);
            }
        } else {
            property.insert("enum".into(), values);
        }
    }
    if let Some(examples @ Value::Array(_)) = hint.get("examples") {
        property.insert("examples".into(), js_ordered(examples));
    }
}

/// The action's `ai` block when it is an object.
fn ai_block(action: &Map<String, Value>) -> Option<&Map<String, Value>> {
    action.get("ai").and_then(Value::as_object)
}
