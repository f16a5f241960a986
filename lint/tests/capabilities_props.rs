//! Properties of the capability view on generated stacks: no panic in any
//! format, and a tool reference is dead exactly when it falls outside the
//! resolution universe (computed here independently).

#![allow(clippy::unwrap_used)] // test helpers

use std::collections::BTreeSet;

use objectstack_lint::capabilities::{self, Capabilities, Format, RenderOptions};
use objectstack_spec::materialise::materialises;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Names drawn from a small pool so references sometimes hit.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("query_data".to_owned()),
        Just("action_ship".to_owned()),
        Just("action_wipe".to_owned()),
        Just("ship".to_owned()),
        Just("wipe".to_owned()),
        Just("helper".to_owned()),
        Just("s1".to_owned()),
        Just("s2".to_owned()),
        Just("action_*".to_owned()),
        Just("query_*".to_owned()),
        Just("zz*".to_owned()),
        "[a-z_]{0,6}\\*?",
    ]
}

/// Any JSON value, biased towards the keys the view reads.
fn junk() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        name().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let key = prop_oneof![
            Just("name".to_owned()),
            Just("tools".to_owned()),
            Just("skills".to_owned()),
            Just("actions".to_owned()),
            Just("surface".to_owned()),
            Just("active".to_owned()),
            Just("binding".to_owned()),
            Just("type".to_owned()),
            Just("ai".to_owned()),
            name(),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn exposed_action(name: &str, destructive: bool) -> Value {
    let mut a = json!({
        "name": name, "type": "script", "target": "t",
        "ai": {"exposed": true, "description": "Does a thing that is described well enough."}
    });
    if destructive {
        a["mode"] = json!("delete");
    }
    a
}

/// A stack whose collections are sometimes arrays, sometimes maps,
/// sometimes junk.
fn stack() -> impl Strategy<Value = Map<String, Value>> {
    let refs = prop::collection::vec(prop_oneof![name().prop_map(Value::String), junk()], 0..6);
    let skill = || {
        (
            name(),
            refs.clone(),
            prop::option::of(prop_oneof![Just("ask"), Just("build"), Just("both")]),
        )
            .prop_map(|(n, tools, surface)| {
                let mut s = json!({"name": n, "tools": tools});
                if let Some(surface) = surface {
                    s["surface"] = json!(surface);
                }
                s
            })
    };
    let skills = prop_oneof![
        prop::collection::vec(prop_oneof![skill(), junk()], 0..5).prop_map(Value::Array),
        prop::collection::vec((name(), skill()), 0..4)
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        junk(),
    ];
    let agents = prop::collection::vec(
        prop_oneof![
            prop::collection::vec(name(), 0..4).prop_map(|s| json!({"name": "bot", "skills": s})),
            junk(),
        ],
        0..3,
    );
    let tools = prop::collection::vec(
        prop_oneof![
            name().prop_map(|n| json!({"name": n})),
            name()
                .prop_map(|n| json!({"name": "helper", "binding": {"type": "action", "name": n}})),
            junk(),
        ],
        0..3,
    );
    let actions = prop::collection::vec(
        prop_oneof![
            any::<bool>().prop_map(|d| exposed_action("ship", d)),
            any::<bool>().prop_map(|d| exposed_action("wipe", d)),
            Just(json!({"name": "hidden", "type": "script", "target": "t"})),
            junk(),
        ],
        0..3,
    );
    (skills, agents, tools, actions, junk()).prop_map(|(skills, agents, tools, actions, extra)| {
        let mut m = Map::new();
        m.insert("skills".into(), skills);
        m.insert("agents".into(), Value::Array(agents));
        m.insert("tools".into(), Value::Array(tools));
        m.insert(
            "objects".into(),
            json!([{"name": "order", "actions": actions}]),
        );
        m.insert("extra".into(), extra);
        m
    })
}

/// One record of a collection, read leniently and copied out.
struct Record {
    fields: Map<String, Value>,
}

impl Record {
    fn name(&self) -> Option<&str> {
        self.fields.get("name").and_then(Value::as_str)
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }
}

/// The lenient reading of a `serde_json` collection (borrowed through
/// `from_serde`), each record copied out.
fn records(value: Option<&Value>) -> Vec<Record> {
    let arena = objectstack_spec::json::Arena::new();
    let value = value.map(|v| objectstack_spec::json::Value::from_serde(v, &arena));
    objectstack_spec::collection::records(value.as_ref(), &arena)
        .iter()
        .map(|r| Record {
            fields: r.fields.to_serde(),
        })
        .collect()
}

/// The resolution universe, computed independently of the view.
fn universe(stack: &Map<String, Value>) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = objectstack_registry::all_names()
        .map(str::to_owned)
        .collect();
    // Actions a record binds: their raw tools are superseded (ADR-0109
    // Phase 2), so they are not tools.
    let mut bound = BTreeSet::new();
    for t in records(stack.get("tools")) {
        if let Some(n) = t.name() {
            names.insert(n.to_owned());
        }
        if let Some(Value::Object(b)) = t.get("binding")
            && b.get("type").and_then(Value::as_str) == Some("action")
            && let Some(a) = b
                .get("name")
                .and_then(Value::as_str)
                .filter(|a| !a.is_empty())
        {
            bound.insert(a.to_owned());
        }
    }
    let mut actions: Vec<Map<String, Value>> = records(stack.get("actions"))
        .into_iter()
        .map(|r| r.fields)
        .collect();
    for o in records(stack.get("objects")) {
        actions.extend(
            records(o.fields.get("actions"))
                .into_iter()
                .map(|r| r.fields),
        );
    }
    for a in actions {
        if let Some(n) = a.get("name").and_then(Value::as_str)
            && !bound.contains(n)
            && materialises(objectstack_spec::json::Map::from_serde(
                &a,
                &objectstack_spec::json::Arena::new(),
            ))
        {
            names.insert(format!("action_{n}"));
        }
    }
    names
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_json_never_panics(doc in junk()) {
        let map = match doc {
            Value::Object(m) => m,
            other => {
                let mut m = Map::new();
                m.insert("skills".into(), other);
                m
            }
        };
        let caps = build_caps(&map);
        for format in [Format::Text, Format::Json, Format::Dot, Format::Mermaid] {
            for expand in [false, true] {
                let out = capabilities::render(&caps, &RenderOptions { format, agent: None, expand });
                prop_assert!(out.is_ok());
            }
        }
    }

    #[test]
    fn a_reference_is_dead_iff_it_is_outside_the_universe(stack in stack()) {
        let names = universe(&stack);
        let caps = build_caps(&stack);
        for skill in &caps.skills {
            for r in &skill.refs {
                let inside = match r.text().strip_suffix('*') {
                    Some(prefix) => names.iter().any(|n| n.starts_with(prefix)),
                    None => names.contains(r.text()),
                };
                prop_assert_eq!(caps.dead_of(r).is_none(), inside, "{}", r.text());
                let resolved: BTreeSet<&str> =
                    caps.resolves(r).map(|i| caps.tools[i].name.as_ref()).collect();
                let expected: BTreeSet<&str> = match r.text().strip_suffix('*') {
                    Some(prefix) => names.iter().map(String::as_str).filter(|n| n.starts_with(prefix)).collect(),
                    None => names.iter().map(String::as_str).filter(|n| *n == r.text()).collect(),
                };
                prop_assert_eq!(caps.matches(r), expected.len());
                prop_assert_eq!(resolved, expected);
            }
        }
        for format in [Format::Text, Format::Json, Format::Dot, Format::Mermaid] {
            let out = capabilities::render(&caps, &RenderOptions { format, agent: None, expand: false });
            prop_assert!(out.is_ok());
        }
    }

    #[test]
    fn the_expanded_diagram_draws_the_graph(stack in stack()) {
        let caps = build_caps(&stack);
        let graph = caps.graph();
        let options = RenderOptions { format: Format::Dot, agent: None, expand: true };
        let dot = capabilities::render(&caps, &options).unwrap();
        let is_node = |l: &&str| l.contains(" [label=") && !l.contains(" -> ");
        let nodes = dot.lines().filter(is_node).count();
        let edges = dot.lines().filter(|l| l.contains(" -> ")).count();
        prop_assert_eq!(nodes, graph.node_count());
        prop_assert_eq!(edges, graph.edge_count());
        // Summarised, nothing is drawn that only a wildcard's matches reach.
        let options = RenderOptions { expand: false, ..options };
        let short = capabilities::render(&caps, &options).unwrap();
        prop_assert!(short.lines().filter(is_node).count() <= nodes);
    }

    #[test]
    fn effective_tools_are_the_union_of_bound_skills(stack in stack()) {
        let caps = build_caps(&stack);
        let sections = caps
            .agents
            .iter()
            .map(|a| a.skills.as_slice())
            .chain([caps.unattached.as_slice()]);
        let mut all = BTreeSet::new();
        for skills in sections {
            // Every (tool, skill, reference) that grants, independently.
            let mut expected: BTreeSet<String> = BTreeSet::new();
            let mut grants: Vec<(String, usize, &str)> = Vec::new();
            for r in skills.iter().filter(|r| r.status.grants_tools()) {
                let index = r.skill.unwrap();
                for t in &caps.skills[index].refs {
                    for i in caps.resolves(t) {
                        let name = caps.tools[i].name.to_string();
                        expected.insert(name.clone());
                        if !grants.contains(&(name.clone(), index, t.text())) {
                            grants.push((name, index, t.text()));
                        }
                    }
                }
            }
            let g = caps.grants(skills);
            let expanded: Vec<_> = g.expanded().collect();
            let got: BTreeSet<String> =
                expanded.iter().map(|t| caps.tools[t.tool].name.to_string()).collect();
            prop_assert_eq!(&got, &expected);
            prop_assert_eq!(expanded.len(), got.len(), "each tool once");
            prop_assert_eq!(g.tool_count, expected.len());
            let approvals = expanded.iter().filter(|t| caps.tools[t.tool].approval.is_some()).count();
            prop_assert_eq!(g.needs_approval, approvals);
            // The sweep lists each tool's grants in grant order.
            for t in &expanded {
                let name = caps.tools[t.tool].name.to_string();
                let want: Vec<(usize, &str)> = grants
                    .iter()
                    .filter(|(n, _, _)| *n == name)
                    .map(|(_, s, r)| (*s, *r))
                    .collect();
                let have: Vec<(usize, &str)> =
                    t.granted_by.iter().map(|g| (g.skill, g.reference)).collect();
                prop_assert_eq!(have, want);
            }
            // The named tools are the exact grants of the same set.
            for t in g.named() {
                let full = expanded.iter().find(|e| e.tool == t.tool).unwrap();
                let exact: Vec<_> = full
                    .granted_by
                    .iter()
                    .filter(|g| !g.reference.ends_with('*'))
                    .cloned()
                    .collect();
                prop_assert_eq!(&t.granted_by, &exact);
            }
            for w in &g.wildcards {
                let wildcard = &caps.wildcards[w.wildcard];
                let approvals = caps
                    .wildcard_tools(wildcard)
                    .filter(|&i| caps.tools[i].approval.is_some())
                    .count();
                prop_assert_eq!(w.needs_approval, approvals);
            }
            all.extend(expected);
        }
        // The summary counts the same in both modes, and the union.
        let summary = |expand| -> Value {
            let out = capabilities::render(&caps, &RenderOptions { format: Format::Json, agent: None, expand }).unwrap();
            serde_json::from_str::<Value>(&out).unwrap()["summary"].clone()
        };
        let (short, long) = (summary(false), summary(true));
        prop_assert_eq!(&short, &long);
        let shown_unattached = !caps.unattached.is_empty();
        if shown_unattached || !caps.agents.is_empty() {
            prop_assert_eq!(short["tools"].as_u64().unwrap() as usize, all.len());
        }
    }
}

/// [`capabilities::build`] over a `serde_json` document.
fn build_caps(stack: &serde_json::Map<String, serde_json::Value>) -> Capabilities<'static> {
    let arena: &'static objectstack_spec::json::Arena = Box::leak(Box::default());
    let stack: &'static Map<String, Value> = Box::leak(Box::new(stack.clone()));
    capabilities::build(objectstack_spec::json::Map::from_serde(stack, arena), arena)
}
