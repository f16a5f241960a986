//! Data-driven: every skip code (and the cases that register), from
//! `tests/data/skip_cases.json`. Each case is one action of an object
//! `task`, materialised with the case's wiring (`none`, `all`, `static` for
//! no wiring context, or an object of flags) and host tool names.

#![allow(clippy::unwrap_used)]

mod common;

use objectstack_bridge::materialise::{SkipCode, Wiring, materialise};
use serde_json::{Value, json};

fn wiring(spec: &Value) -> Option<Wiring> {
    match spec {
        Value::String(s) if s == "static" => None,
        Value::String(s) if s == "none" => Some(Wiring::NONE),
        Value::String(s) if s == "all" => Some(Wiring::ALL),
        Value::Object(flags) => {
            let flag = |k: &str| flags.get(k).and_then(Value::as_bool).unwrap_or(false);
            Some(Wiring {
                automation: flag("automation"),
                api_client: flag("api_client"),
                approval: flag("approval"),
            })
        }
        other => panic!("bad wiring {other}"),
    }
}

#[test]
fn skip_cases() {
    let cases: Vec<Value> = serde_json::from_str(include_str!("data/skip_cases.json")).unwrap();
    let mut seen = Vec::new();
    for case in &cases {
        let name = case["case"].as_str().unwrap();
        let stack = common::map(
            json!({"objects": [{"name": "task", "actions": [case["action"].clone()]}]}),
        );
        let host: Vec<&str> = case["host"]
            .as_array()
            .map(|h| h.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let w = wiring(&case["wiring"]);
        let m = materialise(&stack, w.as_ref(), &|n| host.contains(&n));
        let expect = case["expect"].as_str().unwrap();
        if expect == "registered" {
            assert_eq!(m.registered.len(), 1, "{name}: {:?}", m.skipped);
            assert!(m.skipped.is_empty(), "{name}");
        } else {
            assert!(m.registered.is_empty(), "{name}");
            assert_eq!(m.skipped.len(), 1, "{name}");
            let s = &m.skipped[0];
            assert_eq!(s.code.as_str(), expect, "{name}: {}", s.reason);
            assert_eq!(s.object.as_deref(), Some("task"), "{name}");
            if let Some(needle) = case["reason_contains"].as_str() {
                assert!(s.reason.contains(needle), "{name}: {}", s.reason);
            }
            seen.push(s.code);
        }
        let warnings: Vec<&str> = m.warnings.iter().map(|w| w.code.as_str()).collect();
        let expected: Vec<&str> = case["warning"].as_str().into_iter().collect();
        assert_eq!(warnings, expected, "{name}");
    }
    for code in SkipCode::ALL {
        assert!(seen.contains(code), "no case for {code}");
    }
}
