//! Every example stack checked against the committed JSON Schema with the
//! `jsonschema` crate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("spec/schema/stack.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    assert!(
        jsonschema::meta::is_valid(&schema),
        "the schema is not a valid JSON Schema"
    );
    jsonschema::validator_for(&schema).unwrap()
}

fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn every_good_example_conforms() {
    let validator = validator();
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.extension().is_none_or(|e| e != "json") || name.starts_with("broken") {
            continue;
        }
        let instance: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let found = errors(&validator, &instance);
        assert!(found.is_empty(), "{name}:\n{}", found.join("\n"));
        checked += 1;
    }
    assert!(checked >= 2, "expected the HotCRM and todo examples");
}

#[test]
fn the_broken_example_does_not_conform() {
    let validator = validator();
    let path = root().join("examples/broken-stack.json");
    let instance: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let failing: std::collections::BTreeSet<String> = validator
        .iter_errors(&instance)
        .map(|e| e.instance_path().to_string())
        .collect();
    // Each collection with a broken record fails (anyOf reports the whole
    // collection; `validate` pins down the records).
    for collection in ["/objects", "/tools", "/skills"] {
        assert!(
            failing.contains(collection),
            "{collection} passed: {failing:?}"
        );
    }
}

#[test]
fn schema_rules_match_validate_on_small_cases() {
    let validator = validator();
    let good = json!({"actions": [{"name": "close_case", "ai": {"exposed": true,
        "description": "Close the support case the user is viewing once resolved."}}],
        "skills": {"triage": {"label": "Triage", "tools": ["action_*"]}}});
    assert!(validator.is_valid(&good), "{:?}", errors(&validator, &good));
    for bad in [
        json!({"actions": [{"name": "a_b", "ai": {"exposed": true}}]}),
        json!({"actions": [{"name": "a_b", "ai": {"description": "short"}}]}),
        json!({"actions": [{"name": "a_b", "ai": {"enabled": true}}]}),
        json!({"actions": [{"name": "a_b", "label": null}]}),
        json!({"skills": [{"name": "s", "label": "S", "tools": "x"}]}),
        json!({"skills": [{"name": "S", "label": "S", "tools": []}]}),
        json!({"tools": [{"name": "t", "label": "T", "description": "d", "parameters": {}, "active": true}]}),
        json!({"tools": {"t": {"label": "T"}}}),
    ] {
        assert!(!validator.is_valid(&bad), "{bad}");
    }
}
