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

/// The wrong-typed value for a schema property: one of another JSON type,
/// or `None` when the property takes any value (or a union).
fn wrong_value(property: &Value, defs: &Value) -> Option<Value> {
    let kind = match property.get("$ref").and_then(Value::as_str) {
        // An enum of strings (`oneOf` of string constants).
        Some(reference) => {
            let def = &defs[reference.trim_start_matches("#/$defs/")];
            let strings = def["oneOf"]
                .as_array()
                .is_some_and(|cases| cases.iter().all(|c| c["type"] == "string"));
            if !strings {
                return None;
            }
            "string"
        }
        None => property.get("type")?.as_str()?,
    };
    Some(match kind {
        "string" | "array" | "object" => json!(42),
        "boolean" | "integer" | "number" => json!("not a value of that type"),
        _ => return None,
    })
}

/// Every key of a strict shape that the schema types is checked by
/// `validate` too: a value of another JSON type is an error at that key.
/// Adding a key to a shape's key list without a type check fails here.
#[test]
fn every_typed_key_of_a_strict_shape_is_type_checked() {
    let text = std::fs::read_to_string(root().join("spec/schema/stack.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let defs = &schema["$defs"];
    // Each strict shape: a stack holding one instance with no fault at its
    // keys (a tool record without `parameters` is reported at the record),
    // and where it is.
    let shapes = [
        (
            "Skill",
            json!({"skills": [{"name": "s", "label": "S", "tools": []}]}),
            vec!["skills", "0"],
        ),
        (
            "Tool",
            json!({"tools": [{"name": "t", "label": "T", "description": "Does t."}]}),
            vec!["tools", "0"],
        ),
        (
            "ToolBinding",
            json!({"tools": [{"name": "t", "label": "T", "description": "Does t.",
                "binding": {"type": "action", "name": "a_b"}}]}),
            vec!["tools", "0", "binding"],
        ),
        (
            "ActionParam",
            json!({"actions": [{"name": "a_b", "params": [{"name": "p"}]}]}),
            vec!["actions", "0", "params", "0"],
        ),
        (
            "ActionAi",
            json!({"actions": [{"name": "a_b", "ai": {}}]}),
            vec!["actions", "0", "ai"],
        ),
        (
            "ParamHint",
            json!({"actions": [{"name": "a_b", "params": [{"name": "p"}],
                "ai": {"paramHints": {"p": {}}}}]}),
            vec!["actions", "0", "ai", "paramHints", "p"],
        ),
    ];
    let mut checked = 0;
    let mut unchecked = Vec::new();
    for (shape, base, at) in shapes {
        let def = &defs[shape];
        assert_eq!(
            def["additionalProperties"],
            json!(false),
            "{shape} is strict"
        );
        let properties = def["properties"].as_object().unwrap();
        for (key, property) in properties {
            let Some(wrong) = wrong_value(property, defs) else {
                continue;
            };
            let mut stack = base.clone();
            let mut target = &mut stack;
            for step in &at {
                target = match step.parse::<usize>() {
                    Ok(i) => &mut target[i],
                    Err(_) => &mut target[*step],
                };
            }
            target[key.as_str()] = wrong.clone();
            let text = stack.to_string();
            let arena = objectstack_spec::json::Arena::new();
            let document = objectstack_spec::json::parse_object(&text, &arena).unwrap();
            let prefix = format!("{}.{key}", path_of(&at));
            let flagged = objectstack_spec::validate::validate(document)
                .iter()
                .any(|d| {
                    let path = d.path.to_string();
                    d.severity == objectstack_spec::validate::Severity::Error
                        && (path == prefix || path.starts_with(&format!("{prefix}.")))
                });
            if !flagged {
                unchecked.push(format!("{shape}.{key} = {wrong}"));
            }
            checked += 1;
        }
    }
    assert!(checked > 30, "only {checked} keys were tried");
    assert!(unchecked.is_empty(), "not type-checked: {unchecked:?}");
}

/// `skills[0].binding` from its steps.
fn path_of(steps: &[&str]) -> String {
    let mut path = String::new();
    for step in steps {
        if step.parse::<usize>().is_ok() {
            path.push_str(&format!("[{step}]"));
        } else {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(step);
        }
    }
    path
}
