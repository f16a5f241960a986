//! Properties: nothing panics on any input, diagnostic paths are real,
//! and unmodelled keys survive a parse/serialise round trip.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use objectstack_spec::compose::{Source, compose};
use objectstack_spec::model::Stack;
use objectstack_spec::parse::parse_document;
use objectstack_spec::source::SourceIndex;
use objectstack_spec::validate::Anchor;

/// Keys the validator looks at, so arbitrary documents reach deep checks.
const KEYS: &[&str] = &[
    "objects",
    "actions",
    "tools",
    "skills",
    "agents",
    "name",
    "label",
    "fields",
    "ai",
    "exposed",
    "description",
    "category",
    "paramHints",
    "params",
    "field",
    "type",
    "enum",
    "binding",
    "triggerConditions",
    "operator",
    "value",
    "surface",
    "locations",
    "recordId",
    "aiExposed",
    "triggerPhrases",
    "enabled",
    "desc",
    "skill",
    "x y",
    "é",
];

/// Validates a `serde_json` document, borrowed through `from_serde` (the
/// one door for callers that hold one).
fn validate_serde(doc: &Map<String, Value>) -> Vec<objectstack_spec::validate::Diagnostic> {
    let arena = objectstack_spec::json::Arena::new();
    objectstack_spec::validate::validate(objectstack_spec::json::Map::from_serde(doc, &arena))
}

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => "[a-zA-Z_ *-]{0,6}",
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop::sample::select(
            &[
                "script",
                "api",
                "true",
                "in",
                "eq",
                "action",
                "Query Data",
                "action_*",
                "😀",
                "A description that is certainly longer than forty characters.",
            ][..]
        )
        .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 96, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((arb_key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

fn arb_document() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((arb_key(), arb_json()), 0..6).prop_map(|e| e.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Ok(doc) = parse_document(&bytes) {
            let _ = validate_serde(&doc);
            let _ = Stack::from_json(&doc);
        }
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let _ = SourceIndex::new(text).locate_many(&[objectstack_spec::path::JsonPath::root()]);
        }
    }

    #[test]
    fn the_borrowed_tree_reads_what_serde_json_reads(
        bytes in prop::collection::vec(any::<u8>(), 0..256),
        doc in arb_document(),
        cut in any::<prop::sample::Index>(),
    ) {
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let end = cut.index(text.len() + 1);
        let truncated = text.get(..end).unwrap_or("").as_bytes().to_vec();
        for input in [bytes, text.into_bytes(), truncated] {
            let arena = objectstack_spec::json::Arena::new();
            let ours = objectstack_spec::json::parse_document(&input, &arena);
            match (ours, parse_document(&input)) {
                (Ok(tree), Ok(owned)) => {
                    prop_assert_eq!(tree.to_serde(), owned.clone());
                    // Same validation either way.
                    // (Only the borrowed tree can tell a key written twice.)
                    let a: Vec<String> = objectstack_spec::validate::validate(tree)
                        .iter()
                        .filter(|d| d.id != objectstack_spec::validate::DiagnosticId::DuplicateKey)
                        .map(|d| d.to_string())
                        .collect();
                    let b: Vec<String> = validate_serde(&owned).iter().map(|d| d.to_string()).collect();
                    prop_assert_eq!(a, b);
                }
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                (a, b) => prop_assert!(false, "disagree: {:?} vs {:?}", a.map(|m| m.to_serde()), b),
            }
        }
    }

    #[test]
    fn a_key_written_twice_is_one_warning_at_both_places(
        doc in arb_document(),
        nested in any::<bool>(),
        pretty in any::<bool>(),
    ) {
        // Write the document's first member again at the end, at the top
        // level or inside a wrapper object.
        let Some((key, value)) = doc.iter().next() else { return Ok(()) };
        let body = |doc: &Map<String, Value>| if pretty { serde_json::to_string_pretty(doc) } else { serde_json::to_string(doc) }.unwrap();
        let inner = body(&doc);
        let inner = format!(
            "{}, {}: {}}}",
            inner.trim_end().strip_suffix('}').unwrap(),
            serde_json::to_string(key).unwrap(),
            serde_json::to_string(value).unwrap()
        );
        let text = if nested { format!("{{\"wrap\": {inner}}}") } else { inner };
        let arena = objectstack_spec::json::Arena::new();
        let tree = objectstack_spec::json::parse_object(&text, &arena).unwrap();
        let found = objectstack_spec::validate::validate(tree);
        let dups: Vec<_> = found
            .iter()
            .filter(|d| d.id == objectstack_spec::validate::DiagnosticId::DuplicateKey)
            .collect();
        prop_assert_eq!(dups.len(), 1, "{}", text);
        let expected = if nested { objectstack_spec::path::JsonPath::root().key("wrap").key(key) } else { objectstack_spec::path::JsonPath::root().key(key) };
        prop_assert_eq!(&dups[0].path, &expected);
        prop_assert_eq!(dups[0].severity, objectstack_spec::validate::Severity::Warning);
        // Both places are named, and the diagnostic points at the last.
        let index = SourceIndex::new(&text);
        let at = index.locate_key_occurrences(std::slice::from_ref(&expected));
        prop_assert_eq!(at[0].len(), 2);
        for span in &at[0] {
            let place = format!("{}:{}", span.line, span.column);
            prop_assert!(dups[0].message.contains(&place), "{} lacks {}", dups[0].message, place);
        }
        prop_assert_eq!(index.locate_keys_many(std::slice::from_ref(&expected))[0], at[0].last().copied());
        // Everything else is what the document without the copy gives.
        if !nested {
            let rest: Vec<String> = found.iter().filter(|d| d.id != objectstack_spec::validate::DiagnosticId::DuplicateKey).map(|d| d.to_string()).collect();
            let plain: Vec<String> = validate_serde(&doc).iter().map(|d| d.to_string()).collect();
            prop_assert_eq!(rest, plain);
        }
    }

    #[test]
    fn arbitrary_json_text_never_panics(doc in arb_document(), cut in any::<prop::sample::Index>()) {
        let text = serde_json::to_string(&doc).unwrap();
        // Truncated JSON is malformed: parse must say so, not panic.
        let end = cut.index(text.len() + 1);
        let truncated = text.get(..end).unwrap_or("");
        let _ = parse_document(truncated.as_bytes());
        let _ = SourceIndex::new(truncated).locate_many(&[objectstack_spec::path::JsonPath::root().key("objects")]);
    }

    #[test]
    fn validation_paths_point_into_the_text(doc in arb_document(), pretty in any::<bool>()) {
        let diagnostics = validate_serde(&doc);
        let text = if pretty { serde_json::to_string_pretty(&doc) } else { serde_json::to_string(&doc) }.unwrap();
        let index = SourceIndex::new(&text);
        let paths: Vec<_> = diagnostics.iter().map(|d| d.path.clone()).collect();
        let values = index.locate_many(&paths);
        let keys = index.locate_keys_many(&paths);
        for ((d, value), key) in diagnostics.iter().zip(values).zip(keys) {
            prop_assert!(value.is_some(), "{d} has no location in {text}");
            if d.anchor == Anchor::Key {
                prop_assert!(key.is_some(), "{d} has no key location in {text}");
            }
            for related in &d.related {
                prop_assert!(index.locate(&related.path).is_some(), "{d}: related {} missing", related.path);
            }
        }
    }

    #[test]
    fn stacks_and_compositions_of_arbitrary_json_never_panic(
        docs in prop::collection::vec(arb_document(), 0..4),
    ) {
        let names: Vec<String> = (0..docs.len()).map(|i| format!("s{i}.json")).collect();
        let sources: Vec<Source<'_>> = docs
            .iter()
            .zip(&names)
            .map(|(stack, name)| Source { name, stack })
            .collect();
        let composition = compose(&sources);
        let _ = validate_serde(&composition.stack);
        for d in &composition.diagnostics {
            let source = d.source.unwrap();
            let text = serde_json::to_string(&docs[source]).unwrap();
            prop_assert!(SourceIndex::new(&text).locate(&d.path).is_some(), "{d}");
        }
        for doc in &docs {
            let _ = Stack::from_json(doc);
        }
    }

    #[test]
    fn unmodelled_keys_round_trip(doc in arb_valid_stack()) {
        let stack = Stack::from_json(&doc).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = stack.to_json().map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(Value::Object(back), Value::Object(doc));
    }
}

/// Unmodelled keys: anything not declared by the record types.
fn arb_extra() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec(("x[A-Za-z]{0,6}", arb_json()), 0..3)
        .prop_map(|e| e.into_iter().collect())
}

fn with_extra(mut record: Value, extra: Map<String, Value>) -> Value {
    if let Value::Object(map) = &mut record {
        for (k, v) in extra {
            map.insert(k, v);
        }
    }
    record
}

fn arb_name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{1,8}"
}

fn arb_action() -> impl Strategy<Value = Value> {
    (arb_name(), arb_extra(), arb_extra(), arb_extra(), any::<bool>()).prop_map(|(name, extra, ai_extra, param_extra, exposed)| {
        let ai = with_extra(
            json!({"exposed": exposed, "description": "Describes what the action does in forty characters or more.",
                   "category": "data", "paramHints": {"p": {"description": "hint", "enum": ["a", 1]}}}),
            ai_extra,
        );
        let param = with_extra(json!({"name": "p", "type": "text", "defaultValue": null}), param_extra);
        with_extra(
            json!({"name": name, "label": "L", "type": "script", "target": "t",
                   "locations": ["record_header"], "params": [param], "ai": ai}),
            extra,
        )
    })
}

/// A collection in array or map form (map keys are the names).
fn collection(records: Vec<Value>, as_map: bool) -> Value {
    if !as_map {
        return Value::Array(records);
    }
    let mut map = Map::new();
    for (i, mut record) in records.into_iter().enumerate() {
        let key = match &mut record {
            Value::Object(fields) => match fields.shift_remove("name") {
                Some(Value::String(n)) => n,
                _ => format!("k{i}"),
            },
            _ => format!("k{i}"),
        };
        map.entry(key).or_insert(record);
    }
    Value::Object(map)
}

fn arb_valid_stack() -> impl Strategy<Value = Map<String, Value>> {
    (
        prop::collection::vec(arb_action(), 0..3),
        prop::collection::vec((arb_name(), arb_extra()), 0..3),
        prop::collection::vec((arb_name(), arb_extra()), 0..3),
        prop::collection::vec((arb_name(), arb_extra(), arb_extra()), 0..2),
        arb_extra(),
        any::<[bool; 4]>(),
    )
        .prop_map(|(actions, tools, skills, objects, top, forms)| {
            let tools = tools
                .into_iter()
                .map(|(n, e)| with_extra(json!({"name": n, "label": "T", "description": "d", "parameters": {"type": "object"}}), e))
                .collect();
            let skills = skills
                .into_iter()
                .map(|(n, e)| with_extra(json!({"name": n, "label": "S", "tools": ["query_data", "action_*"], "surface": "both"}), e))
                .collect();
            let objects = objects
                .into_iter()
                .map(|(n, e, field_extra)| {
                    with_extra(
                        json!({"name": n, "label": "O", "fields": {"title": with_extra(json!({"type": "text", "required": true}), field_extra)}}),
                        e,
                    )
                })
                .collect();
            let mut doc = top;
            doc.insert("actions".into(), collection(actions, forms[0]));
            doc.insert("tools".into(), collection(tools, forms[1]));
            doc.insert("skills".into(), collection(skills, forms[2]));
            doc.insert("objects".into(), collection(objects, forms[3]));
            doc
        })
}

/// Map keys that JavaScript orders specially (array indices: canonical
/// decimal integers below 2^32 - 1) and near misses that it does not.
const ORDER_KEYS: &[&str] = &[
    "0",
    "2",
    "10",
    "01",
    "00",
    "-1",
    "1.5",
    " 1",
    "4294967294",
    "4294967295",
    "99999999999",
    "a",
    "b",
    "z9",
];

fn arb_map_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(ORDER_KEYS).prop_map(str::to_owned),
        1 => "[0-9]{1,3}",
        1 => "[a-c0-2]{1,2}",
    ]
}

/// A map-shaped collection of records, some writing their own `name`.
fn arb_keyed_records() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((arb_map_key(), prop::option::of(arb_name())), 0..10).prop_map(
        |entries| {
            entries
                .into_iter()
                .map(|(key, inner)| {
                    let record = match inner {
                        Some(name) => json!({"name": name}),
                        None => json!({}),
                    };
                    (key, record)
                })
                .collect()
        },
    )
}

fn borrowed_names(doc: &Map<String, Value>, key: &str) -> Vec<String> {
    let arena = objectstack_spec::json::Arena::new();
    let tree =
        objectstack_spec::json::Value::from_serde(doc.get(key).unwrap_or(&Value::Null), &arena);
    objectstack_spec::collection::records(Some(&tree), &arena)
        .iter()
        .map(|r| r.name().unwrap_or_default().to_owned())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The typed model reads a map-shaped collection in the lenient
    /// reading's order (JavaScript's property order), and writes it back
    /// in that order.
    #[test]
    fn the_model_reads_maps_in_the_lenient_order(
        actions in arb_keyed_records(),
        fields in arb_keyed_records(),
    ) {
        let doc: Map<String, Value> = json!({
            "actions": actions,
            "objects": {"task": {"fields": fields}},
        })
        .as_object()
        .cloned()
        .unwrap();
        let stack = Stack::from_json(&doc).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let model_actions: Vec<String> =
            stack.actions.as_ref().unwrap().iter().map(|a| a.name.clone()).collect();
        prop_assert_eq!(&model_actions, &borrowed_names(&doc, "actions"));

        let object = &stack.objects.as_ref().unwrap().items()[0];
        let model_fields: Vec<String> = object
            .fields
            .as_ref()
            .unwrap()
            .iter()
            .map(|f| f.name.clone().unwrap_or_default())
            .collect();
        let object_doc = doc["objects"]["task"].as_object().unwrap();
        prop_assert_eq!(&model_fields, &borrowed_names(object_doc, "fields"));

        // Written back, the collection reads the same again.
        let back = stack.to_json().map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(borrowed_names(&back, "actions"), model_actions);
    }
}
