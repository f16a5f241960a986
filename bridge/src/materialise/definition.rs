//! The tool definition of one materialised action (behaviour.md, "The tool
//! definition").
//!
//! Objects and their fields are indexed once per walk ([`ObjectIndex`]), so
//! building a definition costs time proportional to the action alone.

use std::collections::{HashMap, HashSet};

use objectstack_spec::AIToolDefinition;
use objectstack_spec::collection::{Record, js_entries, records};
use objectstack_spec::materialise::{ai_block, is_row_context};
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
    /// Indexes the objects (read leniently). The first object or field of
    /// a name wins, as a lookup by name would find it.
    pub(super) fn build(objects: &'v [Record<'_>]) -> Self {
        let mut index = ObjectIndex {
            by_name: HashMap::with_capacity(objects.len()),
            objects: Vec::with_capacity(objects.len()),
        };
        for (i, object) in objects.iter().enumerate() {
            if let Some(name) = object.name() {
                index.by_name.entry(name).or_insert(i);
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
}

/// Indexes a `fields` collection by name with the semantics of
/// [`objectstack_spec::collection::records`], without copying: in a map an
/// entry's own string `name` wins over its key; entries that are not
/// objects carry nothing a parameter could read, so they are left out.
fn index_fields(fields: Option<&Value>) -> HashMap<&str, &Map<String, Value>> {
    let mut index = HashMap::new();
    match fields {
        Some(Value::Object(entries)) => {
            index.reserve(entries.len());
            for (key, entry) in entries {
                let Value::Object(field) = entry else {
                    continue;
                };
                let name = match field.get("name") {
                    None => key.as_str(),
                    Some(Value::String(name)) => name.as_str(),
                    Some(_) => continue,
                };
                index.entry(name).or_insert(field);
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
    /// Its fields, when the object exists in the stack.
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
        parameters: parameters(action, owner, index),
        category: ai_str("category").map(str::to_owned),
        output_schema: output_schema.cloned(),
        object_name: owner.name.map(str::to_owned),
        requires_confirmation: Some(requires_confirmation),
    }
}

/// `ai.description`, plus a blank line and `Returns an object with: k1,
/// k2.` when the output schema has top-level properties.
fn description(base: &str, output_schema: Option<&Map<String, Value>>) -> String {
    let properties = output_schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .filter(|p| !p.is_empty());
    let Some(properties) = properties else {
        return base.to_owned();
    };
    let mut text = String::with_capacity(base.len() + 32 + properties.len() * 12);
    text.push_str(base);
    text.push_str("\n\nReturns an object with: ");
    // Keys in the order JavaScript lists them (integer-like keys first).
    for (i, (key, _)) in js_entries(properties).into_iter().enumerate() {
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

    if let Some(object_name) = owner.name
        && is_row_context(action)
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
/// when the parameter has neither a `name` nor a `field`.
fn param_schema<'p>(
    param: &'p Map<String, Value>,
    owner: &Owner<'_>,
    index: &ObjectIndex<'_>,
) -> Option<(&'p str, Map<String, Value>, bool)> {
    let p = Keys::of(param);
    let str_of = |v: Option<&'p Value>| v.and_then(Value::as_str);
    let field_name = str_of(p.field).filter(|s| !s.is_empty());
    let name = str_of(p.name).filter(|s| !s.is_empty()).or(field_name)?;
    let field = field_name.and_then(|field_name| {
        let object = str_of(p.object_override)
            .and_then(|o| index.get(o))
            .or(owner.object);
        object.and_then(|o| o.fields.get(field_name)).copied()
    });
    let f = field.map(Keys::of).unwrap_or_default();

    let source_type = str_of(p.kind).or_else(|| f.kind.and_then(Value::as_str));
    let json_type = json_type(source_type);
    let mut schema = Map::with_capacity(4);
    schema.insert("type".into(), json_type.into());

    let label = str_of(p.label)
        .or_else(|| f.label.and_then(Value::as_str))
        .filter(|s| !s.is_empty());
    let help = str_of(p.help_text)
        .or_else(|| f.description.and_then(Value::as_str))
        .filter(|s| !s.is_empty());
    let description = match (label, help) {
        (Some(label), Some(help)) => Some(format!("{label}{LABEL_HELP_SEPARATOR}{help}")),
        (Some(one), None) | (None, Some(one)) => Some(one.to_owned()),
        (None, None) => None,
    };
    if let Some(description) = description {
        schema.insert("description".into(), description.into());
    }

    let options = p.options.filter(|o| o.is_array()).or(f.options);
    let values = option_values(options);
    if json_type == "array" {
        let mut items = Map::with_capacity(2);
        items.insert("type".into(), "string".into());
        if !values.is_empty() {
            items.insert("enum".into(), Value::Array(values));
        }
        schema.insert("items".into(), Value::Object(items));
    } else if !values.is_empty() {
        schema.insert("enum".into(), Value::Array(values));
    }

    if let Some(default) = p.default_value {
        schema.insert("default".into(), default.clone());
    }

    let required = p
        .required
        .and_then(Value::as_bool)
        .or_else(|| f.required.and_then(Value::as_bool))
        .unwrap_or(false);
    Some((name, schema, required))
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
fn option_values(options: Option<&Value>) -> Vec<Value> {
    let Some(Value::Array(options)) = options else {
        return Vec::new();
    };
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
        if property.get("type").and_then(Value::as_str) == Some("array") {
            let items = property
                .entry("items")
                .or_insert_with(|| serde_json::json!({"type": "string"}));
            if let Value::Object(items) = items {
                items.insert("enum".into(), values.clone());
            }
        } else {
            property.insert("enum".into(), values.clone());
        }
    }
    if let Some(examples @ Value::Array(_)) = hint.get("examples") {
        property.insert("examples".into(), examples.clone());
    }
}
