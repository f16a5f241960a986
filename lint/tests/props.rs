//! Property tests: no panic on arbitrary JSON; an extra tool record never
//! adds an `ai-skill-tool-unresolved` finding; a reference is flagged iff it
//! is outside the resolution universe (computed here independently).

#![allow(clippy::unwrap_used)] // test helpers

use std::collections::BTreeSet;

use objectstack_lint::render::{self, Format, SourceText};
use objectstack_lint::{Finding, Source, lint};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const RULE: &str = "ai-skill-tool-unresolved";

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z_*]{0,8}".prop_map(Value::String),
        "\\PC{0,4}".prop_map(Value::String),
        prop_oneof![
            Just("query_data"),
            Just("action_x"),
            Just("x"),
            Just("script")
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        let key = prop_oneof![
            Just("name".to_owned()),
            Just("tools".to_owned()),
            Just("skills".to_owned()),
            Just("actions".to_owned()),
            Just("ai".to_owned()),
            Just("exposed".to_owned()),
            Just("binding".to_owned()),
            Just("type".to_owned()),
            Just("mode".to_owned()),
            "[a-z]{1,3}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn arbitrary_stack() -> impl Strategy<Value = Map<String, Value>> {
    let key = prop_oneof![
        Just("skills"),
        Just("tools"),
        Just("actions"),
        Just("objects"),
        Just("agents"),
        Just("flows"),
    ];
    prop::collection::vec((key, arbitrary_json()), 0..6)
        .prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn lint_text(root: &Map<String, Value>) -> (String, Vec<Finding>) {
    let text = serde_json::to_string_pretty(root).unwrap();
    let arena = objectstack_spec::json::Arena::new();
    let parsed = objectstack_spec::json::parse_document(text.as_bytes(), &arena).unwrap();
    let findings = lint(&Source {
        file: "p.json",
        text: Some(&text),
        root: parsed,
    });
    (text, findings)
}

/// Names a generated stack draws from: platform tools, action tools, a
/// few free names, and wildcards over them.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("query_data".to_owned()),
        Just("get_record".to_owned()),
        Just("action_close".to_owned()),
        Just("action_open".to_owned()),
        Just("action_*".to_owned()),
        Just("get_*".to_owned()),
        Just("*".to_owned()),
        "[a-c_]{1,4}\\*?",
        "action_[a-c]{1,3}\\*?",
    ]
}

fn action() -> impl Strategy<Value = Value> {
    (
        "[a-c]{1,3}|close|open",
        any::<bool>(),
        prop_oneof![Just("script"), Just("modal"), Just("api")],
        any::<bool>(),
    )
        .prop_map(|(name, exposed, kind, target)| {
            let mut a = json!({
                "name": name,
                "type": kind,
                "ai": {"exposed": exposed, "description": "Does a thing described for a model."}
            });
            if target {
                a["target"] = json!("t");
            }
            a
        })
}

fn modelled_stack() -> impl Strategy<Value = Map<String, Value>> {
    (
        prop::collection::vec(prop::collection::vec(name(), 0..5), 0..4),
        prop::collection::vec(name(), 0..3),
        prop::collection::vec(action(), 0..4),
        prop::collection::vec(action(), 0..4),
    )
        .prop_map(|(skills, tools, actions, object_actions)| {
            let skills: Vec<Value> = skills
                .into_iter()
                .enumerate()
                .map(|(i, tools)| json!({"name": format!("s{i}"), "tools": tools}))
                .collect();
            let tools: Vec<Value> = tools
                .into_iter()
                .map(|n| json!({"name": n, "binding": {"type": "action", "name": "close"}}))
                .collect();
            let mut m = Map::new();
            m.insert("skills".into(), Value::Array(skills));
            m.insert("tools".into(), Value::Array(tools));
            m.insert("actions".into(), Value::Array(actions));
            m.insert(
                "objects".into(),
                json!([{"name": "o", "actions": object_actions}]),
            );
            m
        })
}

/// `(path, ref)` of the rule's findings.
fn unresolved(findings: &[Finding]) -> BTreeSet<(String, String)> {
    findings
        .iter()
        .filter(|f| f.rule == RULE)
        .map(|f| (f.path.clone(), f.reference.clone().unwrap_or_default()))
        .collect()
}

/// The universe computed from first principles.
fn universe(root: &Map<String, Value>) -> Vec<String> {
    let mut names: Vec<String> = objectstack_registry::all_names()
        .map(str::to_owned)
        .collect();
    let arr = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    for t in arr(root.get("tools")) {
        if let Some(n) = t["name"].as_str().filter(|n| !n.is_empty()) {
            names.push(n.to_owned());
        }
    }
    let mut actions = arr(root.get("actions"));
    for o in arr(root.get("objects")) {
        actions.extend(arr(o.get("actions")));
    }
    for a in actions {
        let (Some(n), Some(m)) = (a["name"].as_str(), a.as_object()) else {
            continue;
        };
        let arena = objectstack_spec::json::Arena::new();
        if objectstack_spec::materialise::materialises(objectstack_spec::json::Map::from_serde(
            m, &arena,
        )) {
            names.push(format!("action_{n}"));
        }
    }
    names
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics(root in arbitrary_stack()) {
        let (text, findings) = lint_text(&root);
        let sources = [SourceText { file: "p.json", text: &text }];
        for format in Format::ALL {
            let _ = render::render(format, &findings, &sources, 1);
        }
        for f in &findings {
            prop_assert!(f.location.is_some(), "{f:?}");
        }
    }

    #[test]
    fn an_extra_tool_record_never_adds_an_unresolved_finding(
        mut root in modelled_stack(),
        extra in name(),
    ) {
        let (_, before) = lint_text(&root);
        if let Some(Value::Array(tools)) = root.get_mut("tools") {
            tools.push(json!({"name": extra}));
        }
        let (_, after) = lint_text(&root);
        let before = unresolved(&before);
        let after = unresolved(&after);
        prop_assert!(after.is_subset(&before), "{after:?} not within {before:?}");
    }

    #[test]
    fn flagged_iff_outside_the_universe(root in modelled_stack()) {
        let names = universe(&root);
        let resolves = |r: &str| match r.strip_suffix('*') {
            Some(prefix) => names.iter().any(|n| n.starts_with(prefix)),
            None => names.iter().any(|n| n == r),
        };
        let mut expected = BTreeSet::new();
        for (i, skill) in root["skills"].as_array().unwrap().iter().enumerate() {
            for (j, r) in skill["tools"].as_array().unwrap().iter().enumerate() {
                let r = r.as_str().unwrap();
                if !r.is_empty() && !resolves(r) {
                    expected.insert((format!("skills[{i}].tools[{j}]"), r.to_owned()));
                }
            }
        }
        let (_, findings) = lint_text(&root);
        prop_assert_eq!(unresolved(&findings), expected);
    }
}
