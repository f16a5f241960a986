use super::*;
use serde_json::{Map, Value, json};

fn doc(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("test documents are objects"),
    }
}

#[test]
fn arrays_and_maps_parse_to_the_same_records() {
    let as_array = Stack::from_json(&doc(json!({
        "skills": [{"name": "triage", "label": "Triage", "tools": ["get_record"]}]
    })))
    .unwrap();
    let as_map = Stack::from_json(&doc(json!({
        "skills": {"triage": {"label": "Triage", "tools": ["get_record"]}}
    })))
    .unwrap();
    assert_eq!(
        as_array.skills.as_ref().unwrap().items(),
        as_map.skills.as_ref().unwrap().items()
    );
    assert!(as_map.skills.unwrap().is_map());
}

#[test]
fn map_form_round_trips_including_inner_names() {
    let original = doc(json!({
        "objects": {"task": {"label": "Task", "fields": {"title": {"type": "text"}}}},
        "tools": {"key_name": {"name": "inner_name", "label": "L", "description": "d", "parameters": {}}},
        "views": [{"anything": true}]
    }));
    let stack = Stack::from_json(&original).unwrap();
    assert_eq!(stack.tools.as_ref().unwrap().items()[0].name, "inner_name");
    assert_eq!(
        Value::Object(stack.to_json().unwrap()),
        Value::Object(original)
    );
}

#[test]
fn unmodelled_keys_survive() {
    let original = doc(json!({
        "actions": [{
            "name": "close_case", "icon": "x", "refreshAfter": true,
            "ai": {"exposed": true, "description": "Closes the case the user is looking at right now.", "futureKey": 1},
            "params": [{"name": "reason", "defaultValue": null, "hmm": [1]}]
        }]
    }));
    let stack = Stack::from_json(&original).unwrap();
    let action = &stack.actions.as_ref().unwrap().items()[0];
    assert_eq!(action.extra.get("icon"), Some(&json!("x")));
    assert_eq!(
        action.ai.as_ref().unwrap().extra.get("futureKey"),
        Some(&json!(1))
    );
    assert_eq!(
        Value::Object(stack.to_json().unwrap()),
        Value::Object(original)
    );
}

#[test]
fn wrong_types_and_nulls_are_errors() {
    for bad in [
        json!({"skills": "all"}),
        json!({"skills": [{"name": "a", "label": "A", "tools": "x"}]}),
        json!({"actions": [{"name": "a", "label": null}]}),
        json!({"actions": [{"name": "a", "type": "teleport"}]}),
        json!({"tools": {"t": 3}}),
    ] {
        let err = Stack::from_json(&doc(bad.clone())).unwrap_err();
        assert!(err.to_string().contains("validate"), "{bad}: {err}");
    }
}

#[test]
fn enum_lists_match_the_materialisation_predicate() {
    assert_eq!(AiCategory::NAMES, crate::materialise::AI_CATEGORIES);
    for t in crate::materialise::UI_ONLY_TYPES {
        assert!(ActionType::from_name(t).is_some());
    }
    for l in crate::materialise::ROW_CONTEXT_LOCATIONS {
        assert!(ActionLocation::from_name(l).is_some());
    }
    assert_eq!(ActionType::Script.as_str(), "script");
    assert_eq!(ActionType::ALL.len(), ActionType::NAMES.len());
}

/// One key list per strict shape: the keys the validator declares for each
/// strict shape are the fields of the model type (its JSON Schema's
/// `properties`), so adding a field in one place only fails here. Of the
/// protection keys the validator also accepts, the model declares
/// `protection` and keeps the rest in `extra`.
#[test]
fn the_validator_declares_the_model_fields_of_each_strict_shape() {
    use std::collections::BTreeSet;
    let schema = crate::schema::schema();
    for (name, known, also_known) in crate::validate::strict_keys() {
        let definition = &schema["$defs"][name];
        assert_eq!(
            definition["additionalProperties"],
            json!(false),
            "{name} is strict in the schema too"
        );
        let fields: BTreeSet<&str> = definition["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{name} has properties"))
            .keys()
            .map(String::as_str)
            .collect();
        let mut declared: BTreeSet<&str> = known.iter().copied().collect();
        declared.extend(also_known.iter().copied().filter(|k| *k == "protection"));
        assert_eq!(fields, declared, "{name}: model fields vs validator keys");
    }
}
