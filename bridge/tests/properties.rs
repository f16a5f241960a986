//! Properties over generated stacks:
//! - every generated `parameters` is a valid JSON Schema (draft 2020-12);
//! - with everything wired, the registered tool names are exactly the
//!   `action_<name>`s of the actions the spec predicate says materialise
//!   (the lint's universe), minus platform names;
//! - with tool records too, the registered names are exactly what the lint
//!   treats as materialised (refined names in, superseded raw names out);
//! - every projection meets its API's documented constraints, refined
//!   tools included.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeSet;

use common::{
    check_anthropic_strict, check_mcp_tool, check_openai_strict, check_schema, materialise,
};
use objectstack_bridge::materialise::{Event, Wiring, materialise_each};
use objectstack_bridge::projection::{anthropic, mcp, openai};
use objectstack_spec::collection::records;
use objectstack_spec::materialise::static_skip;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const DESC: &str = "Does one useful thing to a record, described for a model.";

fn junk() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..5).prop_map(Value::from),
        "[a-z]{0,4}".prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
    ]
}

fn field_type() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "text", "number", "currency", "percent", "rating", "slider", "autonumber", "boolean",
            "toggle", "multiselect", "checkboxes", "tags", "select", "date", "lookup",
        ])
        .prop_map(Value::from),
        1 => junk(),
    ]
}

fn options() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(["a", "b"])),
        Just(json!([{"value": "x", "label": "X"}, {"value": 3}, "y", null])),
        Just(json!([])),
        junk(),
    ]
}

/// An optional key: absent (`None`) or the value.
fn opt<S: Strategy<Value = Value>>(s: S) -> impl Strategy<Value = Option<Value>> {
    prop::option::of(s)
}

fn object_of(entries: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
            .collect(),
    )
}

fn field() -> impl Strategy<Value = Value> {
    (
        opt(field_type()),
        opt("[A-Z][a-z]{0,5}".prop_map(Value::from)),
        opt(options()),
        opt(junk()),
        opt(junk()),
    )
        .prop_map(|(t, label, options, required, description)| {
            object_of(vec![
                ("type", t),
                ("label", label),
                ("options", options),
                ("required", required),
                ("description", description),
            ])
        })
}

fn param() -> impl Strategy<Value = Value> {
    (
        opt(prop::sample::select(vec!["p1", "p2", "recordId", ""]).prop_map(Value::from)),
        opt(prop::sample::select(vec!["f1", "f2", "f3"]).prop_map(Value::from)),
        opt(prop::sample::select(vec!["o0", "o1", "nowhere"]).prop_map(Value::from)),
        opt(field_type()),
        opt(prop_oneof![
            "[A-Z][a-z]{0,5}".prop_map(Value::from),
            Just(json!({"en": "L"}))
        ]),
        opt("[a-z ]{0,8}".prop_map(Value::from)),
        opt(options()),
        opt(junk()),
        opt(junk()),
    )
        .prop_map(
            |(name, field, over, t, label, help, options, default, required)| {
                object_of(vec![
                    ("name", name),
                    ("field", field),
                    ("objectOverride", over),
                    ("type", t),
                    ("label", label),
                    ("helpText", help),
                    ("options", options),
                    ("defaultValue", default),
                    ("required", required),
                ])
            },
        )
}

fn hint() -> impl Strategy<Value = Value> {
    (
        opt(junk()),
        opt(prop_oneof![Just(json!(["a", 1])), junk()]),
        opt(junk()),
    )
        .prop_map(|(description, values, examples)| {
            object_of(vec![
                ("description", description),
                ("enum", values),
                ("examples", examples),
            ])
        })
}

fn ai() -> impl Strategy<Value = Value> {
    (
        prop_oneof![6 => Just(Some(json!(true))), 1 => opt(junk())],
        prop_oneof![6 => Just(Some(json!(DESC))), 1 => opt(junk())],
        opt(prop_oneof![
            prop::sample::select(vec!["data", "action", "analytics", "vector_search", "flow"])
                .prop_map(Value::from),
            junk()
        ]),
        opt(prop::collection::btree_map(
            prop::sample::select(vec!["p1", "p2", "f1", "recordId", "zz"]),
            hint(),
            0..3,
        )
        .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))),
        opt(prop_oneof![
            Just(json!({"type": "object", "properties": {"ok": {"type": "boolean"}, "id": {}}})),
            Just(json!({"type": "array"})),
            junk()
        ]),
        opt(prop_oneof![4 => any::<bool>().prop_map(Value::from), 1 => junk()]),
    )
        .prop_map(|(exposed, description, category, hints, output, confirm)| {
            object_of(vec![
                ("exposed", exposed),
                ("description", description),
                ("category", category),
                ("paramHints", hints),
                ("outputSchema", output),
                ("requiresConfirmation", confirm),
            ])
        })
}

fn action() -> impl Strategy<Value = Value> {
    (
        opt(
            prop::sample::select(vec!["a", "b", "c", "d", "e", "query_data"]).prop_map(Value::from),
        ),
        opt(prop::sample::select(vec![
            "script", "api", "flow", "modal", "url", "form", "other",
        ])
        .prop_map(Value::from)),
        opt(prop_oneof![Just(json!("target")), junk()]),
        opt(prop_oneof![Just(json!("update")), junk()]),
        opt(prop::collection::vec(
            prop::sample::select(vec![
                "record_header",
                "list_item",
                "list_toolbar",
                "record_more",
            ]),
            0..3,
        )
        .prop_map(|v| json!(v))),
        opt(prop::collection::vec(param(), 0..5).prop_map(Value::from)),
        opt(ai()),
        opt(prop_oneof![Just(json!("Sure?")), junk()]),
        opt(prop_oneof![
            Just(json!("delete")),
            Just(json!("danger")),
            junk()
        ]),
        opt(prop::sample::select(vec!["o0", "o1", "ghost"]).prop_map(Value::from)),
        opt(prop_oneof![Just(json!("id")), junk()]),
    )
        .prop_map(
            |(
                name,
                t,
                target,
                operation,
                locations,
                params,
                ai,
                confirm,
                flavour,
                object,
                record_id,
            )| {
                let (mode, variant) = match &flavour {
                    Some(v) if v == "delete" => (flavour.clone(), None),
                    Some(v) if v == "danger" => (None, flavour.clone()),
                    _ => (None, None),
                };
                object_of(vec![
                    ("name", name),
                    ("label", Some(json!("Label"))),
                    ("type", t),
                    ("target", target),
                    ("operation", operation),
                    ("locations", locations),
                    ("params", params),
                    ("ai", ai),
                    ("confirmText", confirm),
                    ("mode", mode),
                    ("variant", variant),
                    ("objectName", object),
                    ("recordIdParam", record_id),
                ])
            },
        )
}

/// A property schema a record may give: some narrow the action's, some
/// widen it.
fn record_property() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => Just(json!({})),
        1 => Just(json!({"type": "string"})),
        1 => Just(json!({"type": "number"})),
        1 => Just(json!({"type": "integer"})),
        1 => Just(json!({"type": "boolean"})),
        1 => Just(json!({"enum": ["a", "b"]})),
        1 => Just(json!({"enum": ["x"]})),
        1 => Just(json!({"const": "a"})),
        1 => Just(json!({"type": "array", "items": {"enum": ["a"]}})),
        1 => junk(),
    ]
}

fn record_parameters() -> impl Strategy<Value = Value> {
    (
        prop::collection::btree_map(
            prop::sample::select(vec!["p1", "p2", "f1", "recordId", "zz"]),
            record_property(),
            0..4,
        ),
        prop::collection::vec(
            prop::sample::select(vec!["p1", "p2", "f1", "recordId"]),
            0..3,
        ),
        opt(prop_oneof![Just(json!(false)), Just(json!(true))]),
    )
        .prop_map(|(properties, required, additional)| {
            let properties: Map<String, Value> = properties
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            object_of(vec![
                ("type", Some(json!("object"))),
                ("properties", Some(Value::Object(properties))),
                ("required", Some(json!(required))),
                ("additionalProperties", additional),
            ])
        })
}

/// A tool record: bound to an action or a flow (or not, or badly), under
/// names that may be reserved.
fn record() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            8 => prop::sample::select(vec!["r1", "r2", "r3"]).prop_map(|n| Some(Value::from(n))),
            1 => prop::sample::select(vec!["query_records", "action_a", "R x"])
                .prop_map(|n| Some(Value::from(n))),
            1 => Just(None),
        ],
        prop_oneof![
            6 => (
                prop::sample::select(vec!["action", "action", "action", "flow"]),
                prop::sample::select(vec!["a", "a", "a", "b", "b", "c", "d", "fl", "nothing"]),
            )
                .prop_map(|(t, n)| Some(json!({"type": t, "name": n}))),
            1 => Just(None),
            1 => junk().prop_map(Some),
        ],
        prop_oneof![
            3 => Just(None),
            3 => record_parameters().prop_map(Some),
            1 => junk().prop_map(Some),
        ],
        prop_oneof![
            3 => Just(None),
            3 => any::<bool>().prop_map(|b| Some(Value::from(b))),
            1 => junk().prop_map(Some),
        ],
        prop_oneof![Just(json!(DESC)), Just(json!("Short."))],
    )
        .prop_map(|(name, binding, parameters, confirm, description)| {
            object_of(vec![
                ("name", name),
                ("label", Some(json!("Record"))),
                ("description", Some(description)),
                ("binding", binding),
                ("parameters", parameters),
                ("requiresConfirmation", confirm),
            ])
        })
}

/// A stack with tool records (and a flow) besides its actions.
fn refined_stack() -> impl Strategy<Value = Map<String, Value>> {
    (
        stack(),
        prop::collection::vec(record(), 0..5),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(mut stack, tools, flow, seeded)| {
            if seeded {
                // Actions that surely materialise, for the records to bind:
                // a stack-level one with a required and an optional param,
                // and a row action taking a field of its object.
                let a = json!({"name": "a", "type": "script", "target": "t",
                    "params": [{"name": "p1", "required": true, "options": ["a", "b"]},
                               {"name": "p2", "type": "number"}],
                    "ai": {"exposed": true, "description": DESC}});
                if let Some(Value::Array(actions)) = stack.get_mut("actions") {
                    actions.insert(0, a);
                }
                let b = json!({"name": "b", "type": "script", "target": "t",
                    "locations": ["record_header"], "params": [{"field": "f1"}],
                    "ai": {"exposed": true, "description": DESC}});
                if let Some(Value::Array(objects)) = stack.get_mut("objects")
                    && let Some(Value::Array(actions)) =
                        objects.first_mut().and_then(|o| o.get_mut("actions"))
                {
                    actions.insert(0, b);
                }
            }
            stack.insert("tools".into(), Value::Array(tools));
            if flow {
                stack.insert("flows".into(), json!([{"name": "fl"}]));
            }
            stack
        })
}

fn stack() -> impl Strategy<Value = Map<String, Value>> {
    let object = (
        prop::collection::btree_map(prop::sample::select(vec!["f1", "f2", "f3"]), field(), 0..3),
        prop::collection::vec(action(), 0..5),
    );
    (
        prop::collection::vec(object, 0..3),
        prop::collection::vec(action(), 0..3),
    )
        .prop_map(|(objects, actions)| {
            let objects: Vec<Value> = objects
                .into_iter()
                .enumerate()
                .map(|(i, (fields, actions))| {
                    let fields: Map<String, Value> =
                        fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                    json!({"name": format!("o{i}"), "fields": fields, "actions": actions})
                })
                .collect();
            common::map(json!({"objects": objects, "actions": actions}))
        })
}

/// The lint's universe of action tools: `action_<name>` of every object
/// and stack-level action the spec predicate says materialises.
fn universe(stack: &Map<String, Value>) -> BTreeSet<String> {
    let arena = objectstack_spec::json::Arena::new();
    let document = objectstack_spec::json::Map::from_serde(stack, &arena);
    let mut names = BTreeSet::new();
    let mut add = |action: &objectstack_spec::json::Map<'_>| {
        if static_skip(action).is_none()
            && let Some(name) = action
                .get("name")
                .and_then(objectstack_spec::json::Value::as_str)
        {
            let tool = objectstack_registry::action_tool_name(name);
            if !objectstack_registry::is_platform_tool(&tool) {
                names.insert(tool);
            }
        }
    };
    for object in records(document.get("objects"), &arena) {
        for action in records(object.get("actions"), &arena) {
            add(action.fields);
        }
    }
    for action in records(document.get("actions"), &arena) {
        add(action.fields);
    }
    names
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn parameters_are_valid_json_schema(stack in stack()) {
        for wiring in [None, Some(Wiring::NONE), Some(Wiring::ALL)] {
            let m = materialise(&stack, wiring.as_ref(), &|_| false);
            for d in m.definitions() {
                let schema = Value::Object(d.parameters.clone());
                prop_assert!(check_schema(&schema).is_ok(), "{:?}", check_schema(&schema));
                let required: Vec<&Value> = schema.get("required").and_then(Value::as_array).map(|r| r.iter().collect()).unwrap_or_default();
                let unique: BTreeSet<String> = required.iter().map(|r| r.to_string()).collect();
                prop_assert_eq!(unique.len(), required.len(), "duplicate in required: {}", schema);
                for r in &required {
                    prop_assert!(schema["properties"].get(r.as_str().unwrap_or_default()).is_some());
                }
                prop_assert_eq!(schema.get("required").map(|r| r.as_array().map(Vec::len)), if required.is_empty() { None } else { Some(Some(required.len())) });
            }
        }
    }

    #[test]
    fn the_borrowed_document_materialises_the_same(stack in stack(), as_map in any::<bool>()) {
        let mut stack = stack;
        if as_map {
            // Map-shaped collections, keyed by name, as authors may write them.
            let keyed = |items: &Value| -> Value {
                let mut map = Map::new();
                for (i, item) in items.as_array().into_iter().flatten().enumerate() {
                    let key = item.get("name").and_then(Value::as_str).map_or_else(|| format!("k{i}"), str::to_owned);
                    map.insert(key, item.clone());
                }
                Value::Object(map)
            };
            let objects = keyed(&stack["objects"]);
            stack.insert("objects".into(), objects);
            let actions = keyed(&stack["actions"]);
            stack.insert("actions".into(), actions);
        }
        let text = serde_json::to_string(&stack).unwrap();
        let arena = objectstack_spec::json::Arena::new();
        let document = objectstack_spec::json::parse_document(text.as_bytes(), &arena).unwrap();
        for wiring in [None, Some(Wiring::NONE), Some(Wiring::ALL)] {
            let owned = materialise(&stack, wiring.as_ref(), &|_| false);
            let borrowed = objectstack_bridge::materialise::materialise(document, &arena, wiring.as_ref(), &|_| false);
            prop_assert_eq!(&borrowed, &owned);
            // What `tools` streams: the borrowed definitions, written as
            // the owned ones are, key order included.
            let mut streamed = Vec::new();
            materialise_each(document, &arena, wiring.as_ref(), &|_| false, &mut |e| {
                if let Event::Registered(r) = e {
                    streamed.push(serde_json::to_string(&r.definition).unwrap());
                }
            });
            let written: Vec<String> = owned.definitions().map(|d| serde_json::to_string(d).unwrap()).collect();
            prop_assert_eq!(streamed, written);
        }
    }

    #[test]
    fn registered_names_are_the_lint_universe(stack in stack()) {
        let m = materialise(&stack, Some(&Wiring::ALL), &|_| false);
        let registered: BTreeSet<String> = m.definitions().map(|d| d.name.clone()).collect();
        prop_assert_eq!(registered.len(), m.registered.len(), "a name registered twice");
        prop_assert_eq!(registered, universe(&stack));
    }

    /// Phase 2: with everything wired, the registered names are exactly
    /// what the lint's universe treats as materialised, refined names
    /// included and superseded raw names excluded; a superseded raw name is
    /// never registered.
    #[test]
    fn refined_names_are_the_lint_universe(stack in refined_stack()) {
        let m = materialise(&stack, Some(&Wiring::ALL), &|_| false);
        let registered: BTreeSet<String> = m.definitions().map(|d| d.name.clone()).collect();
        prop_assert_eq!(registered.len(), m.registered.len(), "a name registered twice");
        let arena = objectstack_spec::json::Arena::new();
        let document = objectstack_spec::json::Map::from_serde(&stack, &arena);
        let lint: BTreeSet<String> = objectstack_lint::materialised_names(&[document]).into_iter().collect();
        prop_assert_eq!(&registered, &lint);
        for r in &m.registered {
            if let Some(refines) = &r.refines {
                if let Some(raw) = &refines.supersedes {
                    prop_assert!(!registered.contains(raw), "{} registered beside {}", raw, r.definition.name);
                }
                let schema = Value::Object(r.definition.parameters.clone());
                prop_assert!(check_schema(&schema).is_ok(), "{:?}", check_schema(&schema));
            }
        }
        // The borrowed walk agrees with the owned one.
        let text = serde_json::to_string(&stack).unwrap();
        let parsed = objectstack_spec::json::parse_document(text.as_bytes(), &arena).unwrap();
        let borrowed = objectstack_bridge::materialise::materialise(parsed, &arena, Some(&Wiring::ALL), &|_| false);
        prop_assert_eq!(&borrowed, &m);
    }

    /// The surface refinements are judged against (`spec`) is what the
    /// bridge writes: the same properties in the same order, types,
    /// allowed values and required list, for every registered action.
    #[test]
    fn the_spec_surface_is_the_written_schema(stack in stack()) {
        use objectstack_spec::materialise::surface::{ObjectIndex, surface};
        let arena = objectstack_spec::json::Arena::new();
        let document = objectstack_spec::json::Map::from_serde(&stack, &arena);
        let objects = objectstack_spec::collection::records(document.get("objects"), &arena);
        let index = ObjectIndex::build(&objects);
        let m = materialise(&stack, Some(&Wiring::ALL), &|_| false);
        for r in &m.registered {
            let owner = match r.location.object {
                Some(o) => index.at(o),
                None => r.object.as_deref().and_then(|o| index.get(o)),
            };
            let action = objectstack_spec::json::Map::from_serde(&r.action, &arena);
            let s = surface(action, owner, &index, &arena, r.row_context);
            let schema = Value::Object(r.definition.parameters.clone());
            let written: Vec<&str> = schema["properties"].as_object().unwrap().keys().map(String::as_str).collect();
            let names: Vec<&str> = s.properties.iter().map(|(k, _)| *k).collect();
            prop_assert_eq!(&names, &written);
            for (name, p) in &s.properties {
                let w = &schema["properties"][*name];
                prop_assert_eq!(w["type"].as_str(), Some(p.kind), "{}", name);
                let values = if p.kind == "array" { &w["items"]["enum"] } else { &w["enum"] };
                prop_assert_eq!(values.is_array(), p.allowed.is_some(), "{} {}", name, w);
                if let Some(allowed) = p.allowed {
                    for v in values.as_array().unwrap() {
                        let v = objectstack_spec::json::Value::from_serde(v, &arena);
                        prop_assert!(allowed.allows(&v), "{} {:?}", name, v);
                    }
                }
            }
            let required: Vec<&str> = schema.get("required").and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            prop_assert_eq!(&s.required, &required);
        }
    }

    #[test]
    fn projections_meet_their_constraints(stack in refined_stack()) {
        let m = materialise(&stack, Some(&Wiring::ALL), &|_| false);
        let projected = mcp::tools(&m.registered);
        for tool in &projected.tools {
            let v = serde_json::to_value(tool).unwrap();
            prop_assert!(check_mcp_tool(&v).is_ok(), "{:?}", check_mcp_tool(&v));
        }
        for tool in openai::tools(m.definitions()).tools {
            let p = Value::Object(tool.function.parameters);
            prop_assert!(check_openai_strict(&p).is_ok(), "{:?}", check_openai_strict(&p));
        }
        for tool in anthropic::tools(m.definitions(), anthropic::Options { strict: true }).tools {
            let p = Value::Object(tool.input_schema);
            prop_assert!(check_anthropic_strict(&p).is_ok(), "{:?}", check_anthropic_strict(&p));
        }
    }
}
