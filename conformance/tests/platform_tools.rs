//! `registry/platform-tools.json`, read as a non-Rust consumer would,
//! says the same as the registry crate.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

use objectstack_registry as registry;
use serde_json::{Value, json};

fn exported() -> Value {
    serde_json::from_str(&registry::render_json()).expect("render_json is valid JSON")
}

#[test]
fn the_export_matches_the_registry() {
    let v = exported();
    assert_eq!(v["formatVersion"], json!(1));
    assert_eq!(
        v["upstream"],
        json!({"package": "@objectstack/spec", "version": registry::UPSTREAM_VERSION})
    );
    assert_eq!(v["total"], json!(registry::TOTAL));
    assert_eq!(v["familyPrefixes"], json!(registry::FAMILY_PREFIXES));
    let groups: Vec<Value> = registry::GROUPS
        .iter()
        .map(|g| json!({"package": g.package, "names": g.names}))
        .collect();
    assert_eq!(v["groups"], Value::Array(groups));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "$comment",
            "formatVersion",
            "upstream",
            "total",
            "familyPrefixes",
            "groups"
        ]
    );
}

#[test]
fn the_export_is_laid_out_as_serde_json_pretty_prints_it() {
    let rendered = registry::render_json();
    let pretty = serde_json::to_string_pretty(&exported()).unwrap() + "\n";
    assert_eq!(rendered, pretty);
}

#[test]
fn the_committed_file_parses_to_the_same_document() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../registry/platform-tools.json"
    );
    let committed: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(committed, exported(), "stale: run `cargo xtask codegen`");
}
