//! Data-driven: every skip code (and the cases that register), from
//! `tests/data/skip_cases.json`. Each case is one action of an object
//! `task`, materialised with the case's wiring (`none`, `all`, `static` for
//! no wiring context, or an object of flags, with the API client's
//! `base_url` and `allowed_origins`) and host tool names.

#![allow(clippy::unwrap_used)]

mod common;

use common::materialise;
use objectstack_bridge::materialise::{ApiScope, SkipCode, Wiring};
use serde_json::{Value, json};

fn wiring<'a>(spec: &'a Value, origins: &'a [String]) -> Option<Wiring<'a>> {
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
                api_scope: ApiScope {
                    base_url: flags.get("base_url").and_then(Value::as_str),
                    allowed_origins: origins,
                },
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
        let mut stack = common::map(
            json!({"objects": [{"name": "task", "actions": [case["action"].clone()]}]}),
        );
        // A case with tool records (ADR-0109 Phase 2) and flows.
        for key in ["tools", "flows"] {
            if let Some(v) = case.get(key) {
                stack.insert(key.into(), v.clone());
            }
        }
        let host: Vec<&str> = case["host"]
            .as_array()
            .map(|h| h.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let origins: Vec<String> = case["wiring"]["allowed_origins"]
            .as_array()
            .map(|o| {
                o.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let w = wiring(&case["wiring"], &origins);
        let m = materialise(&stack, w.as_ref(), &|n| host.contains(&n));
        let expect = case["expect"].as_str().unwrap();
        if case.get("tools").is_some() {
            // The case's expected code is among the skips (the record's, or
            // the superseded action's); `registered` names what registers.
            let s = m.skipped.iter().find(|s| s.code.as_str() == expect);
            let s = s.unwrap_or_else(|| panic!("{name}: {:?}", m.skipped));
            if let Some(needle) = case["reason_contains"].as_str() {
                assert!(s.reason.contains(needle), "{name}: {}", s.reason);
            }
            let registered: Vec<&str> = m.definitions().map(|d| d.name.as_str()).collect();
            let want: Vec<&str> = case["registered"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            assert_eq!(registered, want, "{name}");
            seen.push(s.code);
        } else if expect == "registered" {
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
