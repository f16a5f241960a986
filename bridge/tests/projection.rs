//! Each projection against its API's documented constraints.

#![allow(clippy::unwrap_used)]

mod common;

use common::{check_anthropic_strict, check_mcp_tool, check_openai_strict, map, materialise};
use objectstack_bridge::materialise::Wiring;
use objectstack_bridge::projection::{anthropic, mcp, openai};
use objectstack_spec::AIToolDefinition;
use serde_json::{Value, json};

fn def(name: &str, parameters: Value) -> AIToolDefinition {
    AIToolDefinition {
        name: name.to_owned(),
        label: None,
        description: "A tool.".to_owned(),
        parameters: map(parameters),
        category: None,
        output_schema: None,
        object_name: None,
        requires_confirmation: Some(false),
    }
}

fn codes(warnings: &[objectstack_bridge::projection::ProjectionWarning]) -> Vec<(&str, &str)> {
    warnings.iter().map(|w| (w.tool.as_str(), w.code)).collect()
}

fn object(properties: Value, required: Value) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

// ---- OpenAI ------------------------------------------------------------------

fn openai_params(parameters: Value) -> Value {
    let (tool, warnings) = openai::tool(&def("action_x", parameters));
    assert!(warnings.is_empty(), "{warnings:?}");
    let params = Value::Object(tool.function.parameters);
    check_openai_strict(&params).unwrap();
    params
}

#[test]
fn openai_tool_shape() {
    let (tool, _) = openai::tool(&def("action_x", object(json!({}), json!([]))));
    assert_eq!(
        serde_json::to_value(tool).unwrap(),
        json!({"type": "function", "function": {
            "name": "action_x", "description": "A tool.",
            "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
            "strict": true
        }})
    );
}

#[test]
fn openai_optional_properties_become_required_and_nullable() {
    let params = openai_params(object(
        json!({
            "recordId": {"type": "string", "description": "The task record id to act on."},
            "stage": {"type": "string", "enum": ["a", "b"]},
            "labels": {"type": "array", "items": {"type": "string", "enum": ["x"]}},
            "count": {"type": "number"}
        }),
        json!(["count"]),
    ));
    assert_eq!(
        params,
        json!({
            "type": "object",
            "properties": {
                "recordId": {"type": ["string", "null"], "description": "The task record id to act on."},
                "stage": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "labels": {"type": ["array", "null"], "items": {"type": "string", "enum": ["x"]}},
                "count": {"type": "number"}
            },
            "required": ["recordId", "stage", "labels", "count"],
            "additionalProperties": false
        })
    );
}

#[test]
fn openai_folds_rejected_keywords_into_the_description() {
    let params = openai_params(object(
        json!({
            "due": {"type": "string", "description": "Due date", "format": "date", "default": "2025-01-01"},
            "site": {"type": "string", "format": "uri", "examples": ["https://a", "https://b"]},
            "code": {"type": "string", "minLength": 3}
        }),
        json!(["due", "site", "code"]),
    ));
    assert_eq!(
        params["properties"],
        json!({
            "due": {"type": "string", "description": "Due date. Default: \"2025-01-01\".", "format": "date"},
            "site": {"type": "string", "description": "Format: \"uri\". Examples: \"https://a\", \"https://b\"."},
            "code": {"type": "string", "description": "minLength: 3."}
        })
    );
}

#[test]
fn openai_closes_nested_objects() {
    let params = openai_params(object(
        json!({"filter": {"type": "object", "properties": {"q": {"type": "string"}}},
               "rows": {"type": "array", "items": {"properties": {"id": {"type": "string"}}, "required": ["id"]}}}),
        json!(["filter", "rows"]),
    ));
    assert_eq!(
        params["properties"]["filter"]["additionalProperties"],
        false
    );
    assert_eq!(params["properties"]["filter"]["required"], json!(["q"]));
    assert_eq!(
        params["properties"]["filter"]["properties"]["q"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(params["properties"]["rows"]["items"]["type"], "object");
    assert_eq!(
        params["properties"]["rows"]["items"]["additionalProperties"],
        false
    );
}

#[test]
fn openai_drops_enum_values_of_the_wrong_type() {
    let (tool, warnings) = openai::tool(&def(
        "action_x",
        object(
            json!({"n": {"type": "number", "enum": ["a", 1]}}),
            json!([]),
        ),
    ));
    assert_eq!(codes(&warnings), [("action_x", "enum_type_mismatch")]);
    assert_eq!(
        tool.function.parameters["properties"]["n"]["enum"],
        json!([1, null])
    );
}

#[test]
fn openai_name_pattern() {
    let long = format!("action_{}", "x".repeat(57));
    assert_eq!(long.len(), 64);
    for (name, ok) in [
        ("action_ok-1", true),
        (long.as_str(), true),
        (&format!("{long}x"), false),
        ("action_with space", false),
        ("action.dot", false),
        ("action_é", false),
        ("", false),
    ] {
        let (_, warnings) = openai::tool(&def(name, object(json!({}), json!([]))));
        assert_eq!(warnings.is_empty(), ok, "{name}");
        assert_eq!(ok, common::openai_name_ok(name));
        if !ok {
            assert_eq!(warnings[0].code, "invalid_name");
            assert_eq!(warnings[0].tool, name);
        }
    }
}

#[test]
fn openai_at_most_128_tools() {
    let defs: Vec<_> = (0..130)
        .map(|i| def(&format!("action_{i}"), object(json!({}), json!([]))))
        .collect();
    let projected = openai::tools(&defs[..128]);
    assert!(projected.warnings.is_empty());
    let projected = openai::tools(&defs);
    assert_eq!(projected.tools.len(), 130);
    assert_eq!(
        codes(&projected.warnings),
        [("action_128", "too_many_tools")]
    );
    assert!(projected.warnings[0].warning.contains("tool 129"));
}

#[test]
fn openai_enum_limits() {
    let many: Vec<Value> = (0..1001).map(|i| json!(format!("v{i}"))).collect();
    let (_, w) = openai::tool(&def(
        "action_x",
        object(json!({"e": {"type": "string", "enum": many}}), json!(["e"])),
    ));
    assert!(
        codes(&w).contains(&("action_x", "too_many_enum_values")),
        "{w:?}"
    );

    let long: Vec<Value> = (0..300).map(|i| json!(format!("{i:0>60}"))).collect();
    let (_, w) = openai::tool(&def(
        "action_x",
        object(json!({"e": {"type": "string", "enum": long}}), json!(["e"])),
    ));
    assert_eq!(codes(&w), [("action_x", "enum_too_long")]);

    let short: Vec<Value> = (0..300).map(|i| json!(format!("{i}"))).collect();
    let (_, w) = openai::tool(&def(
        "action_x",
        object(
            json!({"e": {"type": "string", "enum": short}}),
            json!(["e"]),
        ),
    ));
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn openai_nesting_properties_and_string_limits() {
    let mut nested = json!({"type": "string"});
    for _ in 0..10 {
        nested = json!({"type": "object", "properties": {"inner": nested}, "required": ["inner"]});
    }
    let (_, w) = openai::tool(&def("action_x", nested.clone()));
    assert!(w.is_empty(), "10 levels are fine: {w:?}");
    let deeper = json!({"type": "object", "properties": {"outer": nested}, "required": ["outer"]});
    let (_, w) = openai::tool(&def("action_x", deeper));
    assert_eq!(codes(&w), [("action_x", "too_deep")]);

    let props: serde_json::Map<String, Value> = (0..5001)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let (_, w) = openai::tool(&def("action_x", object(Value::Object(props), json!([]))));
    assert_eq!(codes(&w), [("action_x", "too_many_properties")]);

    let props: serde_json::Map<String, Value> = (0..2)
        .map(|i| {
            (
                format!("{i}{}", "n".repeat(60_000)),
                json!({"type": "string"}),
            )
        })
        .collect();
    let (_, w) = openai::tool(&def("action_x", object(Value::Object(props), json!([]))));
    assert_eq!(codes(&w), [("action_x", "schema_strings_too_long")]);
}

// ---- Anthropic -------------------------------------------------------------

#[test]
fn anthropic_sends_parameters_as_they_are() {
    let params = object(
        json!({"x": {"type": "string", "examples": ["a"], "default": "a"}}),
        json!([]),
    );
    let projected = anthropic::tools(
        [&def("action_x", params.clone())],
        anthropic::Options::default(),
    );
    assert_eq!(
        serde_json::to_value(&projected.tools).unwrap(),
        json!([{"name": "action_x", "description": "A tool.", "input_schema": params}])
    );
}

#[test]
fn anthropic_strict_keeps_its_subset() {
    let params = object(
        json!({
            "x": {"type": "string", "examples": ["a"], "default": "a", "format": "uri"},
            "y": {"type": "string", "format": "color"},
            "n": {"type": "number", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "one": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "o": {"type": "string", "enum": ["a", {"b": 1}]}
        }),
        json!(["x"]),
    );
    let projected = anthropic::tools(
        [&def("action_x", params)],
        anthropic::Options { strict: true },
    );
    assert_eq!(
        codes(&projected.warnings),
        [("action_x", "enum_type_mismatch")]
    );
    let tool = serde_json::to_value(&projected.tools[0]).unwrap();
    assert_eq!(tool["strict"], true);
    let schema = &tool["input_schema"];
    check_anthropic_strict(schema).unwrap();
    assert_eq!(
        schema["properties"],
        json!({
            "x": {"type": "string", "default": "a", "format": "uri", "description": "Examples: \"a\"."},
            "y": {"type": "string", "description": "Format: \"color\"."},
            "n": {"type": "number", "description": "minimum: 0."},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "At least 2 items."},
            "one": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "o": {"type": "string", "enum": ["a"]}
        })
    );
    // Optional properties stay optional.
    assert_eq!(schema["required"], json!(["x"]));
}

#[test]
fn anthropic_name_pattern() {
    let ok = format!("action_{}", "x".repeat(121));
    assert_eq!(ok.len(), 128);
    for (name, valid) in [
        (ok.clone(), true),
        (format!("{ok}x"), false),
        ("a.b".to_owned(), false),
    ] {
        let p = anthropic::tools(
            [&def(&name, object(json!({}), json!([])))],
            anthropic::Options::default(),
        );
        assert_eq!(p.warnings.is_empty(), valid, "{name}");
    }
}

#[test]
fn anthropic_strict_request_limits() {
    let plain: Vec<_> = (0..21)
        .map(|i| def(&format!("action_{i}"), object(json!({}), json!([]))))
        .collect();
    let p = anthropic::tools(&plain, anthropic::Options { strict: true });
    assert_eq!(codes(&p.warnings), [("action_20", "too_many_tools")]);
    let p = anthropic::tools(&plain, anthropic::Options::default());
    assert!(p.warnings.is_empty());

    // 5 optional parameters per tool: the fifth tool crosses 24.
    let optional: Vec<_> = (0..6)
        .map(|i| {
            let props: serde_json::Map<String, Value> = (0..5)
                .map(|j| (format!("p{j}"), json!({"type": "string"})))
                .collect();
            def(
                &format!("action_{i}"),
                object(Value::Object(props), json!([])),
            )
        })
        .collect();
    let p = anthropic::tools(&optional, anthropic::Options { strict: true });
    assert_eq!(
        codes(&p.warnings),
        [("action_4", "too_many_optional_params")]
    );

    let unions: Vec<_> = (0..3)
        .map(|i| {
            let props: serde_json::Map<String, Value> = (0..6)
                .map(|j| (format!("p{j}"), json!({"type": ["string", "number"]})))
                .collect();
            let names: Vec<Value> = props.keys().map(|k| json!(k)).collect();
            def(
                &format!("action_{i}"),
                object(Value::Object(props), Value::Array(names)),
            )
        })
        .collect();
    let p = anthropic::tools(&unions, anthropic::Options { strict: true });
    assert_eq!(codes(&p.warnings), [("action_2", "too_many_union_params")]);
}

// ---- MCP -------------------------------------------------------------------

const DESC: &str = "Does one useful thing to a record, described for a model.";

fn mcp_tools(actions: Value) -> Vec<Value> {
    let stack = map(json!({"objects": [{"name": "task", "actions": actions}]}));
    let m = materialise(&stack, Some(&Wiring::ALL), &|_| false);
    assert!(m.skipped.is_empty(), "{:?}", m.skipped);
    let projected = mcp::tools(&m.registered);
    assert!(projected.warnings.is_empty(), "{:?}", projected.warnings);
    let tools: Vec<Value> = projected
        .tools
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    for t in &tools {
        check_mcp_tool(t).unwrap();
    }
    tools
}

fn exposed(name: &str, extra: Value) -> Value {
    let mut a = map(
        json!({"name": name, "label": "Label", "type": "script", "target": "t",
                           "ai": {"exposed": true, "description": DESC}}),
    );
    for (k, v) in map(extra) {
        if k == "ai" {
            for (ak, av) in map(v) {
                a["ai"].as_object_mut().unwrap().insert(ak, av);
            }
        } else {
            a.insert(k, v);
        }
    }
    Value::Object(a)
}

#[test]
fn mcp_annotations_come_from_the_action() {
    let tools = mcp_tools(json!([
        exposed("read", json!({"ai": {"category": "data"}})),
        exposed("stats", json!({"ai": {"category": "analytics"}})),
        exposed("search", json!({"ai": {"category": "vector_search"}})),
        exposed("act", json!({"ai": {"category": "action"}})),
        exposed("plain", json!({})),
        exposed(
            "loud",
            json!({"variant": "danger", "ai": {"category": "data", "requiresConfirmation": false}})
        ),
        exposed(
            "gated",
            json!({"ai": {"category": "analytics", "requiresConfirmation": true}})
        ),
        exposed("wipe", json!({"mode": "delete"})),
        exposed(
            "write",
            json!({"type": null, "operation": "update", "patch": {"a": 1}, "ai": {"category": "data"}})
        ),
        exposed(
            "call",
            json!({"type": "api", "target": "/x", "ai": {"category": "integration"}})
        )
    ]));
    let hints: Vec<(String, bool, bool, bool)> = tools
        .iter()
        .map(|t| {
            let a = &t["annotations"];
            (
                t["name"].as_str().unwrap().to_owned(),
                a["readOnlyHint"].as_bool().unwrap(),
                a["destructiveHint"].as_bool().unwrap(),
                a["openWorldHint"].as_bool().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("action_read", true, false, false),
        ("action_stats", true, false, false),
        ("action_search", true, false, false),
        ("action_act", false, false, false),
        ("action_plain", false, false, false),
        ("action_loud", false, false, false),
        ("action_gated", false, true, false),
        ("action_wipe", false, true, false),
        ("action_write", false, false, false),
        ("action_call", false, false, true),
    ];
    let expected: Vec<(String, bool, bool, bool)> = expected
        .iter()
        .map(|(n, r, d, o)| ((*n).to_owned(), *r, *d, *o))
        .collect();
    assert_eq!(hints, expected);
}

#[test]
fn mcp_entry_carries_title_parameters_and_output_schema() {
    let tools = mcp_tools(json!([exposed(
        "one",
        json!({
            "locations": ["record_header"],
            "params": [{"name": "note", "type": "text", "required": true}],
            "ai": {"outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}
        })
    )]));
    assert_eq!(
        tools[0],
        json!({
            "name": "action_one",
            "title": "Label",
            "description": format!("{DESC}\n\nReturns an object with: ok."),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "recordId": {"type": "string", "description": "The task record id to act on."},
                    "note": {"type": "string"}
                },
                "required": ["recordId", "note"],
                "additionalProperties": false
            },
            "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}
        })
    );
}

#[test]
fn mcp_output_schema_must_be_an_object() {
    let mut d = def("action_x", object(json!({}), json!([])));
    d.output_schema = Some(map(json!({"properties": {"a": {}}})));
    let (tool, w) = mcp::tool(&d, None);
    assert!(w.is_empty());
    assert_eq!(
        tool.output_schema.map(Value::Object),
        Some(json!({"type": "object", "properties": {"a": {}}}))
    );
    d.output_schema = Some(map(json!({"type": "array", "items": {}})));
    let (tool, w) = mcp::tool(&d, None);
    assert_eq!(tool.output_schema, None);
    assert_eq!(codes(&w), [("action_x", "output_schema_not_object")]);
    check_mcp_tool(&serde_json::to_value(&tool).unwrap()).unwrap();
}

#[test]
fn mcp_name_pattern() {
    for (name, ok) in [
        ("action_a.b-c", true),
        (&*format!("a{}", "b".repeat(127)), true),
        (&*format!("a{}", "b".repeat(128)), false),
        ("action a", false),
        ("", false),
    ] {
        let (_, w) = mcp::tool(&def(name, object(json!({}), json!([]))), None);
        assert_eq!(w.is_empty(), ok, "{name}");
    }
}

#[test]
fn strict_projections_give_an_array_without_items_string_items() {
    // The bridge leaves `items` off an array whose options have no string
    // value, as upstream does; strict dialects need one.
    let stack = map(json!({"objects": [{"name": "task", "actions": [{
        "name": "tag", "type": "script", "target": "t",
        "params": [{"name": "codes", "type": "tags", "required": true, "options": [1, 2]}],
        "ai": {"exposed": true, "description": "Tags a task with the numeric codes the user names."}
    }]}]}));
    let m = materialise(&stack, Some(&Wiring::ALL), &|_| false);
    let codes_schema = &m.registered[0].definition.parameters["properties"]["codes"];
    assert_eq!(codes_schema, &json!({"type": "array"}));
    let (tool, _) = openai::tool(&m.registered[0].definition);
    let params = Value::Object(tool.function.parameters);
    check_openai_strict(&params).unwrap();
    assert_eq!(
        params["properties"]["codes"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    let projected = anthropic::tools(m.definitions(), anthropic::Options { strict: true });
    let input = serde_json::to_value(&projected.tools[0]).unwrap()["input_schema"].clone();
    check_anthropic_strict(&input).unwrap();
    assert_eq!(
        input["properties"]["codes"]["items"],
        json!({"type": "string"})
    );
}
