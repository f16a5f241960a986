//! Test oracles: each model API's documented tool constraints, restated
//! independently of the projection code, and small helpers.
#![allow(dead_code, clippy::unwrap_used)]

use objectstack_bridge::materialise::{Materialised, Wiring};
use objectstack_spec::json;
use serde_json::{Map, Value};

/// Materialises a `serde_json` stack, borrowed through
/// [`json::Map::from_serde`], detached from it.
pub(crate) fn materialise(
    stack: &Map<String, Value>,
    wiring: Option<&Wiring>,
    already_registered: &dyn Fn(&str) -> bool,
) -> Materialised<'static> {
    let arena = json::Arena::new();
    let document = json::Map::from_serde(stack, &arena);
    objectstack_bridge::materialise::materialise(document, &arena, wiring, already_registered)
        .into_owned()
}

/// Parses a JSON object.
pub(crate) fn map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// The todo example stack.
pub(crate) fn todo_stack() -> Map<String, Value> {
    let text = include_str!("../../../examples/todo-app.json");
    map(serde_json::from_str(text).unwrap())
}

/// A valid JSON Schema (draft 2020-12) that also compiles.
pub(crate) fn check_schema(schema: &Value) -> Result<(), String> {
    jsonschema::draft202012::meta::validate(schema).map_err(|e| format!("{e}: {schema}"))?;
    jsonschema::draft202012::new(schema).map_err(|e| format!("{e}: {schema}"))?;
    Ok(())
}

fn name_ok(name: &str, max: usize, extra: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= max
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(c))
}

/// OpenAI Structured Outputs, strict function parameters: the root is an
/// object (not `anyOf`); every object has `additionalProperties: false` and
/// lists every property in `required`; only supported keywords and formats.
pub(crate) fn check_openai_strict(schema: &Value) -> Result<(), String> {
    check_schema(schema)?;
    if schema["type"] != "object" {
        return Err(format!("root is not an object: {schema}"));
    }
    walk(schema, &|node| {
        const KEYWORDS: &[&str] = &[
            "type",
            "description",
            "title",
            "enum",
            "const",
            "$ref",
            "pattern",
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "minItems",
            "maxItems",
            "items",
            "anyOf",
            "$defs",
            "definitions",
            "properties",
            "required",
            "additionalProperties",
            "format",
        ];
        const FORMATS: &[&str] = &[
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "uuid",
        ];
        for key in node.keys() {
            if !KEYWORDS.contains(&key.as_str()) {
                return Err(format!("keyword `{key}` is not supported in strict mode"));
            }
        }
        if let Some(f) = node.get("format")
            && !f.as_str().is_some_and(|f| FORMATS.contains(&f))
        {
            return Err(format!("format {f} is not supported"));
        }
        if node.get("type") == Some(&Value::from("object")) || node.contains_key("properties") {
            if node.get("additionalProperties") != Some(&Value::Bool(false)) {
                return Err("an object without additionalProperties: false".into());
            }
            let keys: Vec<&String> = node["properties"].as_object().unwrap().keys().collect();
            let required: Vec<&str> = node["required"]
                .as_array()
                .ok_or("an object without required")?
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            if keys.len() != required.len() || keys.iter().any(|k| !required.contains(&k.as_str()))
            {
                return Err(format!(
                    "required {required:?} is not every property {keys:?}"
                ));
            }
        }
        Ok(())
    })
}

/// Anthropic strict tool input schemas: every object closed; supported
/// keywords and formats only; `minItems` 0 or 1; primitive enum values.
pub(crate) fn check_anthropic_strict(schema: &Value) -> Result<(), String> {
    check_schema(schema)?;
    if schema["type"] != "object" {
        return Err(format!("root is not an object: {schema}"));
    }
    walk(schema, &|node| {
        const KEYWORDS: &[&str] = &[
            "type",
            "description",
            "title",
            "enum",
            "const",
            "default",
            "$ref",
            "pattern",
            "minItems",
            "items",
            "anyOf",
            "allOf",
            "$defs",
            "definitions",
            "properties",
            "required",
            "additionalProperties",
            "format",
        ];
        const FORMATS: &[&str] = &[
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "uri",
            "ipv4",
            "ipv6",
            "uuid",
        ];
        for key in node.keys() {
            if !KEYWORDS.contains(&key.as_str()) {
                return Err(format!("keyword `{key}` is not supported in strict mode"));
            }
        }
        if let Some(f) = node.get("format")
            && !f.as_str().is_some_and(|f| FORMATS.contains(&f))
        {
            return Err(format!("format {f} is not supported"));
        }
        if let Some(n) = node.get("minItems")
            && n.as_u64().is_none_or(|n| n > 1)
        {
            return Err(format!("minItems {n} is not 0 or 1"));
        }
        if let Some(Value::Array(values)) = node.get("enum")
            && values.iter().any(|v| v.is_object() || v.is_array())
        {
            return Err("a non-primitive enum value".into());
        }
        if (node.get("type") == Some(&Value::from("object")) || node.contains_key("properties"))
            && node.get("additionalProperties") != Some(&Value::Bool(false))
        {
            return Err("an object without additionalProperties: false".into());
        }
        Ok(())
    })
}

/// An MCP `tools/list` entry: known keys only; a name of 1 to 128
/// characters of letters, digits, `_`, `-`, `.`; object input and output
/// schemas; boolean annotations.
pub(crate) fn check_mcp_tool(tool: &Value) -> Result<(), String> {
    let tool = tool.as_object().ok_or("a tool is an object")?;
    for key in tool.keys() {
        if ![
            "name",
            "title",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations",
        ]
        .contains(&key.as_str())
        {
            return Err(format!("unknown key `{key}`"));
        }
    }
    let name = tool["name"].as_str().ok_or("name is a string")?;
    if !name_ok(name, 128, ".") {
        return Err(format!("bad name {name}"));
    }
    if !tool["description"].is_string() {
        return Err("description is a string".into());
    }
    if let Some(title) = tool.get("title")
        && !title.is_string()
    {
        return Err("title is a string".into());
    }
    for key in ["inputSchema", "outputSchema"] {
        if let Some(schema) = tool.get(key) {
            if schema["type"] != "object" {
                return Err(format!("{key} is not an object schema"));
            }
            check_schema(schema)?;
        }
    }
    if !tool.contains_key("inputSchema") {
        return Err("no inputSchema".into());
    }
    if let Some(a) = tool.get("annotations") {
        for (k, v) in a.as_object().ok_or("annotations is an object")? {
            if ![
                "title",
                "readOnlyHint",
                "destructiveHint",
                "idempotentHint",
                "openWorldHint",
            ]
            .contains(&k.as_str())
                || (k != "title" && !v.is_boolean())
            {
                return Err(format!("bad annotation {k}: {v}"));
            }
        }
    }
    Ok(())
}

/// OpenAI function names: `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn openai_name_ok(name: &str) -> bool {
    name_ok(name, 64, "")
}

/// Visits every schema node (the root, properties, items, anyOf entries,
/// $defs) depth first.
/// A check of one schema node.
type NodeCheck<'c> = &'c dyn Fn(&Map<String, Value>) -> Result<(), String>;

fn walk(schema: &Value, check: NodeCheck<'_>) -> Result<(), String> {
    let Value::Object(node) = schema else {
        return Ok(());
    };
    check(node)?;
    if let Some(Value::Object(props)) = node.get("properties") {
        for p in props.values() {
            walk(p, check)?;
        }
    }
    if let Some(items) = node.get("items") {
        walk(items, check)?;
    }
    for key in ["anyOf", "allOf"] {
        if let Some(Value::Array(subs)) = node.get(key) {
            for s in subs {
                walk(s, check)?;
            }
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = node.get(key) {
            for s in defs.values() {
                walk(s, check)?;
            }
        }
    }
    Ok(())
}
