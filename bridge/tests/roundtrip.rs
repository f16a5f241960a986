//! Every projection round-trips through the runtime: for each generated
//! stack, each projection's schema of each tool (MCP, OpenAI strict,
//! Anthropic, Anthropic strict) yields arguments a model may send (a
//! sample valid under that schema), and `ToolRegistry::call` accepts them:
//! the call runs (or is queued for approval), and a `null` the strict
//! projection sent for "not given" reaches no host.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use objectstack_bridge::approval::{ApprovalQueue, MemoryStore};
use objectstack_bridge::projection::{anthropic, mcp, openai};
use objectstack_bridge::runtime::{
    Actor, ApiClient, ApiRequest, AutomationService, CallContext, DataEngine, FieldWriteRequest,
    FlowRequest, HostError, HostServices, ScriptRequest, ToolRegistry,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const DESC: &str = "Does one useful thing to a record, described for a model.";

/// A host that finds every record it is asked for and records what it is
/// asked to run.
#[derive(Default)]
struct Host {
    params: Mutex<Vec<Map<String, Value>>>,
}

#[async_trait::async_trait]
impl DataEngine for Host {
    async fn find_record(
        &self,
        _object: &str,
        id: &str,
        _actor: &Actor,
    ) -> Result<Option<Value>, HostError> {
        Ok(Some(json!({"id": id, "number": format!("N-{id}")})))
    }

    async fn execute_action(&self, request: ScriptRequest) -> Result<Value, HostError> {
        self.params.lock().unwrap().push(request.params);
        Ok(json!({"done": true}))
    }

    async fn update_record(&self, _request: FieldWriteRequest) -> Result<Value, HostError> {
        Ok(json!({"done": true}))
    }
}

#[async_trait::async_trait]
impl AutomationService for Host {
    async fn execute(&self, request: FlowRequest) -> Result<Value, HostError> {
        self.params.lock().unwrap().push(request.params);
        Ok(json!({"success": true}))
    }
}

#[async_trait::async_trait]
impl ApiClient for Host {
    async fn request(&self, _request: ApiRequest) -> Result<Value, HostError> {
        Ok(json!({"done": true}))
    }
}

// ---- stacks ---------------------------------------------------------------

/// The fields of the one object, of every type family the bridge maps.
fn fields() -> Value {
    json!({
        "title": {"type": "text", "label": "Title", "description": "What it is about"},
        "amount": {"type": "currency", "label": "Amount"},
        "done": {"type": "toggle"},
        "tags": {"type": "tags", "options": ["red", "blue"]},
        "stage": {"type": "select", "options": [{"value": "new", "label": "New"}, {"value": "won"}]},
        "due": {"type": "date", "required": true}
    })
}

/// A param the action declares itself, or one backed by a field.
fn param(i: usize) -> impl Strategy<Value = Value> {
    let own = (
        prop::sample::select(vec![
            json!({"type": "text"}),
            json!({"type": "number"}),
            json!({"type": "percent"}),
            json!({"type": "boolean"}),
            json!({"type": "select", "options": ["low", "high"]}),
            json!({"type": "select", "options": [{"value": "a", "label": "A"}, {"value": 1}]}),
            json!({"type": "multiselect", "options": ["x", "y"]}),
            json!({"type": "checkboxes"}),
            json!({"type": "lookup"}),
            json!({}),
        ]),
        prop::option::of(prop_oneof![
            any::<bool>().prop_map(Value::from),
            Just(json!("yes")),
            Just(json!(0)),
        ]),
        prop::option::of(prop_oneof![
            Just(Value::Null),
            Just(json!("x")),
            Just(json!(3))
        ]),
        any::<bool>(),
    )
        .prop_map(move |(mut p, required, default, label)| {
            let m = p.as_object_mut().unwrap();
            m.insert("name".into(), json!(format!("p{i}")));
            if let Some(r) = required {
                m.insert("required".into(), r);
            }
            if let Some(d) = default {
                m.insert("defaultValue".into(), d);
            }
            if label {
                m.insert("label".into(), json!("A label"));
                m.insert("helpText".into(), json!("Some help"));
            }
            p
        });
    let field = (
        prop::sample::select(vec!["title", "amount", "done", "tags", "stage", "due"]),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(f, required)| {
            let mut p = json!({"field": f});
            if let Some(r) = required {
                p["required"] = json!(r);
            }
            p
        });
    prop_oneof![2 => own, 1 => field]
}

fn action(i: usize) -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec![
            json!({"type": "script", "target": "run"}),
            json!({"type": "flow", "target": "a_flow"}),
            json!({"type": "api", "target": "/hooks/x", "method": "POST"}),
            json!({"type": "api", "target": "/hooks/x", "recordIdParam": "rid", "recordIdField": "number"}),
            json!({"operation": "update", "patch": {"status": "done"}}),
        ]),
        prop::sample::select(vec![
            json!([]),
            json!(["record_header"]),
            json!(["list_toolbar"]),
            json!(["list_item", "record_more"]),
        ]),
        prop::collection::vec(0..6usize, 0..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(move |(route, locations, param_ids, confirm, hints)| {
            let params: Vec<BoxedStrategy<Value>> =
                param_ids.iter().map(|&j| param(j).boxed()).collect();
            (
                Just(route),
                Just(locations),
                params,
                Just(confirm),
                Just(hints),
            )
        })
        .prop_map(move |(route, locations, params, confirm, hints)| {
            let mut action = route;
            let m = action.as_object_mut().unwrap();
            m.insert("name".into(), json!(format!("act{i}")));
            m.insert("locations".into(), locations);
            // Each name once: a later param of the same name is dropped.
            let mut seen = std::collections::HashSet::new();
            let params: Vec<Value> = params
                .into_iter()
                .filter(|p| {
                    let key = p.get("name").or_else(|| p.get("field")).cloned();
                    seen.insert(key.map(|k| k.to_string()))
                })
                .collect();
            m.insert("params".into(), Value::Array(params));
            let mut ai = json!({"exposed": true, "description": DESC});
            if confirm {
                ai["requiresConfirmation"] = json!(true);
            }
            if hints {
                ai["paramHints"] = json!({
                    "recordId": {"description": "The id shown in the header."},
                    "p0": {"description": "Hinted.", "examples": ["e1", 2]},
                    "extra_hint": {"description": "A hint for a key with no param."}
                });
            }
            m.insert("ai".into(), ai);
            action
        })
}

fn stack() -> impl Strategy<Value = Map<String, Value>> {
    (1..5usize)
        .prop_flat_map(|n| (0..n).map(action).collect::<Vec<_>>())
        .prop_map(|actions| {
            let stack =
                json!({"objects": [{"name": "task", "fields": fields(), "actions": actions}]});
            stack.as_object().cloned().unwrap()
        })
}

// ---- samples --------------------------------------------------------------

/// A small deterministic generator (SplitMix64), seeded by proptest.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'v, T>(&mut self, items: &'v [T]) -> Option<&'v T> {
        items.get(self.below(items.len()))
    }
}

/// A value valid under `schema`, from the JSON Schema subset the
/// projections emit: `type` (one or a list), `enum`, `anyOf`, `items`,
/// `properties` with `required` (optional ones sometimes left out).
fn sample(schema: &Value, rng: &mut Rng) -> Value {
    if let Some(Value::Array(branches)) = schema.get("anyOf")
        && let Some(branch) = rng.pick(branches)
    {
        return sample(branch, rng);
    }
    if let Some(Value::Array(values)) = schema.get("enum")
        && let Some(value) = rng.pick(values)
    {
        return value.clone();
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if schema.get("properties").is_some() => vec!["object"],
        _ => vec!["string"],
    };
    match rng.pick(&types).copied().unwrap_or("string") {
        "null" => Value::Null,
        "boolean" => Value::Bool(rng.below(2) == 1),
        "number" => match rng.below(3) {
            0 => json!(rng.below(1000)),
            1 => json!(-2.5),
            _ => json!(0),
        },
        "integer" => json!(rng.below(100)),
        "array" => {
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            Value::Array((0..rng.below(3)).map(|_| sample(&items, rng)).collect())
        }
        "object" => {
            let required: Vec<&str> = match schema.get("required") {
                Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            let mut out = Map::new();
            if let Some(Value::Object(properties)) = schema.get("properties") {
                for (name, property) in properties {
                    if required.contains(&name.as_str()) || rng.below(2) == 1 {
                        out.insert(name.clone(), sample(property, rng));
                    }
                }
            }
            Value::Object(out)
        }
        _ => Value::String(["t1", "", "a b", "ünï", "42"][rng.below(5)].to_owned()),
    }
}

/// Each projection's name and its `(tool, schema)` pairs.
fn projections(
    registry: &ToolRegistry,
    stack: &Map<String, Value>,
) -> Vec<(&'static str, Vec<(String, Value)>)> {
    let definitions: Vec<_> = registry.definitions();
    let arena = objectstack_spec::json::Arena::new();
    let materialised = objectstack_bridge::materialise::materialise(
        objectstack_spec::json::Map::from_serde(stack, &arena),
        &arena,
        Some(&objectstack_bridge::materialise::Wiring::ALL),
        &|_| false,
    );
    let of = |pairs: Vec<(String, Map<String, Value>)>| {
        pairs
            .into_iter()
            .map(|(n, s)| (n, Value::Object(s)))
            .collect::<Vec<_>>()
    };
    vec![
        (
            "mcp",
            of(mcp::tools(&materialised.registered)
                .tools
                .into_iter()
                .map(|t| (t.name, t.input_schema))
                .collect()),
        ),
        (
            "openai",
            of(openai::tools(&definitions)
                .tools
                .into_iter()
                .map(|t| (t.function.name, t.function.parameters))
                .collect()),
        ),
        (
            "anthropic",
            of(
                anthropic::tools(&definitions, anthropic::Options { strict: false })
                    .tools
                    .into_iter()
                    .map(|t| (t.name, t.input_schema))
                    .collect(),
            ),
        ),
        (
            "anthropic strict",
            of(
                anthropic::tools(&definitions, anthropic::Options { strict: true })
                    .tools
                    .into_iter()
                    .map(|t| (t.name, t.input_schema))
                    .collect(),
            ),
        ),
    ]
}

fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn registry(host: &Arc<Host>) -> ToolRegistry {
    ToolRegistry::new(HostServices {
        data_engine: Some(host.clone()),
        automation: Some(host.clone()),
        api_client: Some(host.clone()),
        approvals: Some(Arc::new(ApprovalQueue::new(Arc::new(MemoryStore::new())))),
        ..HostServices::default()
    })
}

/// Calls every tool with one sample per projection and checks the runtime
/// took it.
fn round_trip(stack: &Map<String, Value>, seed: u64) -> Result<(), TestCaseError> {
    let host = Arc::new(Host::default());
    let mut registry = registry(&host);
    let (materialised, refused) = registry.register_stack(stack);
    prop_assert!(refused.is_empty(), "{:?}", refused);
    prop_assert!(!materialised.registered.is_empty());
    let mut rng = Rng(seed);
    let mut call = 0;
    for (projection, tools) in projections(&registry, stack) {
        for (tool, schema) in tools {
            let arguments = sample(&schema, &mut rng);
            let validator = jsonschema::validator_for(&schema).unwrap();
            prop_assert!(
                validator.is_valid(&arguments),
                "{projection}: the sample {arguments} is not valid under {schema}"
            );
            call += 1;
            let context = CallContext {
                tool_call_id: Some(format!("call-{call}")),
                conversation_id: Some("conv".into()),
                ..CallContext::default()
            };
            let before = host.params.lock().unwrap().len();
            let out = block(registry.call(&tool, arguments.clone(), &context));
            prop_assert!(
                out["ok"] == true,
                "{projection}: `{tool}` refused {arguments} (schema {schema}): {out}"
            );
            // What reached the host is what was sent, without `recordId`
            // and without the nulls that mean "not given".
            let params = host.params.lock().unwrap();
            if let Some(got) = params.get(before) {
                let mut expected = arguments.as_object().cloned().unwrap();
                expected.remove("recordId");
                expected.retain(|_, v| !v.is_null());
                prop_assert_eq!(got, &expected, "{}: `{}`", projection, tool);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_projection_round_trips_through_the_runtime(stack in stack(), seed in any::<u64>()) {
        round_trip(&stack, seed)?;
    }
}

#[test]
fn openai_strict_nulls_for_optional_parameters_mean_not_given() {
    let host = Arc::new(Host::default());
    let mut registry = registry(&host);
    let stack = json!({"objects": [{"name": "task", "fields": fields(), "actions": [{
        "name": "note", "type": "script", "target": "run", "locations": ["record_header"],
        "params": [{"name": "text", "type": "text"}, {"name": "level", "type": "select", "options": ["low", "high"]},
                   {"field": "due"}],
        "ai": {"exposed": true, "description": DESC}
    }]}]});
    let (_, refused) = registry.register_stack(stack.as_object().unwrap());
    assert!(refused.is_empty(), "{refused:?}");
    let tools = openai::tools(&registry.definitions());
    let parameters = &tools.tools[0].function.parameters;
    assert_eq!(
        parameters["required"],
        json!(["recordId", "text", "level", "due"])
    );
    assert_eq!(
        parameters["properties"]["text"]["type"],
        json!(["string", "null"])
    );
    let out = block(registry.call(
        "action_note",
        json!({"recordId": "t1", "text": null, "level": null, "due": "2026-01-01"}),
        &CallContext::default(),
    ));
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(
        host.params.lock().unwrap()[0],
        json!({"due": "2026-01-01"}).as_object().cloned().unwrap()
    );
    // A required parameter is still required: `null` is not a value.
    let out = block(registry.call(
        "action_note",
        json!({"recordId": "t1", "text": null, "level": null, "due": null}),
        &CallContext::default(),
    ));
    assert_eq!(out["ok"], false, "{out}");
    assert!(out["error"].as_str().unwrap().contains("due"), "{out}");
}
