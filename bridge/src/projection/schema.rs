//! Rewriting a JSON Schema into the subset a strict-mode model API
//! accepts, and measuring it against that API's limits.
//!
//! The rewrite keeps the keywords the API supports, folds the others
//! (`default`, `examples`, unsupported `format`s, length limits, ...) into
//! the node's `description` so the model still reads them, closes every
//! object (`additionalProperties: false`) and, for APIs that want every
//! property listed in `required`, makes the optional ones nullable.

use serde_json::{Map, Value};

/// What one strict-mode API accepts.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// Keywords kept as they are (besides the structural ones).
    pub(crate) kept: &'static [&'static str],
    /// Subschema-bearing keywords whose subschemas are rewritten in turn.
    pub(crate) structural: &'static [&'static str],
    /// The `format` values the API supports.
    pub(crate) formats: &'static [&'static str],
    /// Every property must be listed in `required`; optional ones become
    /// nullable.
    pub(crate) all_required: bool,
    /// The largest `minItems` the API accepts, when it limits it.
    pub(crate) max_min_items: Option<u64>,
    /// Only primitive values may appear in `enum`.
    pub(crate) primitive_enums: bool,
}

/// Measures of a rewritten schema, for the API's limits.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Enum values, over the whole schema.
    pub(crate) enum_values: usize,
    /// The largest number of values of one enum.
    pub(crate) largest_enum: usize,
    /// The total length (characters) of the values of the largest enum
    /// that has more than 250 values.
    pub(crate) large_enum_chars: usize,
    /// Object properties, over the whole schema.
    pub(crate) properties: usize,
    /// Characters of property names, definition names, enum and const
    /// string values.
    pub(crate) string_chars: usize,
    /// The deepest object nesting (the root object is level 1).
    pub(crate) depth: usize,
    /// Properties not listed in their object's `required`.
    pub(crate) optional: usize,
    /// Nodes whose `type` is an array of types, or that use `anyOf`.
    pub(crate) unions: usize,
    /// Enum values dropped because they do not fit the node (their JSON
    /// type differs from the node's `type`, or they are not primitive
    /// where only primitives are allowed), as `path: value` texts.
    pub(crate) dropped_enum_values: Vec<String>,
}

/// An enum with more values than this is "large" (OpenAI).
pub(crate) const LARGE_ENUM: usize = 250;

/// Rewrites the root schema of a tool's parameters.
pub(crate) fn rewrite(
    schema: &Map<String, Value>,
    dialect: &Dialect,
) -> (Map<String, Value>, Stats) {
    let mut stats = Stats::default();
    let out = node(schema, dialect, &mut stats, false, 0, "parameters");
    (out, stats)
}

fn node(
    src: &Map<String, Value>,
    d: &Dialect,
    stats: &mut Stats,
    nullable: bool,
    depth: usize,
    path: &str,
) -> Map<String, Value> {
    let is_object =
        src.get("type").and_then(Value::as_str) == Some("object") || src.contains_key("properties");
    let depth = if is_object { depth + 1 } else { depth };
    stats.depth = stats.depth.max(depth);
    let mut out = Map::new();
    let mut notes: Vec<String> = Vec::new();

    for (key, value) in src {
        match key.as_str() {
            "required" | "additionalProperties" if is_object => {}
            "properties" if is_object => {
                let required = string_set(src.get("required"));
                let mut properties = Map::new();
                if let Value::Object(props) = value {
                    for (name, prop) in props {
                        stats.properties += 1;
                        stats.string_chars += name.chars().count();
                        let optional = !required.contains(&name.as_str());
                        if optional && !d.all_required {
                            stats.optional += 1;
                        }
                        let sub_path = format!("{path}.{name}");
                        let rewritten = match prop {
                            Value::Object(prop) => Value::Object(node(
                                prop,
                                d,
                                stats,
                                optional && d.all_required,
                                depth,
                                &sub_path,
                            )),
                            other => other.clone(),
                        };
                        properties.insert(name.clone(), rewritten);
                    }
                }
                out.insert("properties".into(), Value::Object(properties));
            }
            k if d.structural.contains(&k) => {
                out.insert(
                    key.clone(),
                    subschemas(value, d, stats, depth, &format!("{path}.{k}")),
                );
            }
            "format" => match value.as_str() {
                Some(f) if d.formats.contains(&f) => {
                    out.insert(key.clone(), value.clone());
                }
                _ => notes.push(format!("Format: {}.", plain(value))),
            },
            "minItems" if d.max_min_items.is_some() => {
                let max = d.max_min_items.unwrap_or(0);
                match value.as_u64() {
                    Some(n) if n <= max => {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => notes.push(format!("At least {} items.", plain(value))),
                }
            }
            "default" if !d.kept.contains(&"default") => {
                notes.push(format!("Default: {}.", plain(value)));
            }
            "examples" if !d.kept.contains(&"examples") => {
                let text = match value {
                    Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
                    other => plain(other),
                };
                notes.push(format!("Examples: {text}."));
            }
            k if d.kept.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            k => notes.push(format!("{k}: {}.", plain(value))),
        }
    }

    if is_object {
        if !out.contains_key("type") {
            out.insert("type".into(), "object".into());
        }
        if !out.contains_key("properties") {
            out.insert("properties".into(), Value::Object(Map::new()));
        }
        let required: Vec<Value> = if d.all_required {
            out.get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| Value::String(k.clone())).collect())
                .unwrap_or_default()
        } else {
            match src.get("required") {
                Some(Value::Array(r)) => r.clone(),
                _ => Vec::new(),
            }
        };
        if !required.is_empty() || d.all_required {
            out.insert("required".into(), Value::Array(required));
        }
        out.insert("additionalProperties".into(), Value::Bool(false));
    }

    // Strict modes want every array to say what it holds. An array the
    // bridge made without `items` (options none of whose values is a
    // string) holds strings, as every array parameter does.
    if src.get("type").and_then(Value::as_str) == Some("array") && !out.contains_key("items") {
        out.insert("items".into(), serde_json::json!({"type": "string"}));
    }
    check_enum(&mut out, d, stats, path);
    if let Some(Value::String(s)) = out.get("const") {
        stats.string_chars += s.chars().count();
    }
    if nullable {
        make_nullable(&mut out);
    }
    if matches!(out.get("type"), Some(Value::Array(_))) || out.contains_key("anyOf") {
        stats.unions += 1;
    }
    if !notes.is_empty() {
        let mut text = out
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        for note in notes {
            if !text.is_empty() {
                if !text.ends_with(['.', '!', '?', ':', ';']) {
                    text.push('.');
                }
                text.push(' ');
            }
            text.push_str(&note);
        }
        out.insert("description".into(), Value::String(text));
    }
    out
}

/// Rewrites the subschemas of a structural keyword (`items`, `anyOf`,
/// `$defs`, ...), whatever its shape.
fn subschemas(value: &Value, d: &Dialect, stats: &mut Stats, depth: usize, path: &str) -> Value {
    match value {
        Value::Object(m) if looks_like_schema_map(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    stats.string_chars += k.chars().count();
                    let sub = format!("{path}.{k}");
                    (k.clone(), subschema(v, d, stats, depth, &sub))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| subschema(v, d, stats, depth, &format!("{path}[{i}]")))
                .collect(),
        ),
        other => subschema(other, d, stats, depth, path),
    }
}

/// A `$defs`-like map (every value a schema object), as opposed to one
/// schema (`items`).
fn looks_like_schema_map(m: &Map<String, Value>) -> bool {
    !m.is_empty()
        && m.values().all(Value::is_object)
        && !m.contains_key("type")
        && !m.contains_key("properties")
        && !m.contains_key("enum")
        && !m.contains_key("$ref")
}

fn subschema(value: &Value, d: &Dialect, stats: &mut Stats, depth: usize, path: &str) -> Value {
    match value {
        Value::Object(m) => Value::Object(node(m, d, stats, false, depth, path)),
        other => other.clone(),
    }
}

/// Counts an enum, and drops the values that cannot match the node.
fn check_enum(out: &mut Map<String, Value>, d: &Dialect, stats: &mut Stats, path: &str) {
    let types: Vec<String> = match out.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let Some(Value::Array(values)) = out.get_mut("enum") else {
        return;
    };
    let before = values.len();
    let mut dropped = Vec::new();
    values.retain(|v| {
        let primitive_ok = !d.primitive_enums || !(v.is_object() || v.is_array());
        let type_ok = types.is_empty() || types.iter().any(|t| has_type(v, t));
        let keep = primitive_ok && type_ok;
        if !keep {
            dropped.push(format!("{path}: {v}"));
        }
        keep
    });
    let kept = values.len();
    let chars: usize = values
        .iter()
        .filter_map(Value::as_str)
        .map(|s| s.chars().count())
        .sum();
    if kept == 0 && before > 0 {
        out.remove("enum");
    }
    stats.enum_values += kept;
    stats.largest_enum = stats.largest_enum.max(kept);
    stats.string_chars += chars;
    if kept > LARGE_ENUM {
        stats.large_enum_chars = stats.large_enum_chars.max(chars);
    }
    stats.dropped_enum_values.extend(dropped);
}

/// Whether a value is an instance of a JSON Schema type name.
fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    }
}

/// Lets a node also accept `null`: `type` gains `"null"` and `enum` gains
/// `null`; a node without a `type` becomes `anyOf: [node, {type: null}]`.
fn make_nullable(out: &mut Map<String, Value>) {
    match out.get_mut("type") {
        Some(Value::String(t)) => {
            if t != "null" {
                let t = std::mem::take(t);
                out.insert(
                    "type".into(),
                    Value::Array(vec![Value::String(t), Value::String("null".into())]),
                );
            }
        }
        Some(Value::Array(ts)) => {
            if !ts.iter().any(|t| t == "null") {
                ts.push(Value::String("null".into()));
            }
        }
        _ => {
            let inner = std::mem::take(out);
            let description = inner.get("description").cloned();
            let mut any_of = vec![Value::Object(inner), serde_json::json!({"type": "null"})];
            if let Some(Value::Object(first)) = any_of.first_mut() {
                first.remove("description");
            }
            if let Some(description) = description {
                out.insert("description".into(), description);
            }
            out.insert("anyOf".into(), Value::Array(any_of));
            return;
        }
    }
    if let Some(Value::Array(values)) = out.get_mut("enum")
        && !values.iter().any(Value::is_null)
    {
        values.push(Value::Null);
    }
}

/// The strings of a `required` array.
fn string_set(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A value as written into a description: as JSON, so strings keep their
/// quotes and nothing is ambiguous.
fn plain(value: &Value) -> String {
    value.to_string()
}
