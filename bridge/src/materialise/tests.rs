use serde_json::json;

use super::*;

const DESC: &str = "Does one useful thing to a record, described for a model.";

fn map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// [`materialise`] over a `serde_json` stack, borrowed through
/// [`json::Map::from_serde`].
fn materialise_serde(
    stack: &Map<String, Value>,
    wiring: Option<&Wiring>,
    already_registered: &dyn Fn(&str) -> bool,
) -> Materialised<'static> {
    let arena = json::Arena::new();
    materialise(
        json::Map::from_serde(stack, &arena),
        &arena,
        wiring,
        already_registered,
    )
    .into_owned()
}

fn run(stack: &Map<String, Value>, wiring: Option<&Wiring>) -> Materialised<'static> {
    materialise_serde(stack, wiring, &|_| false)
}

/// An exposed script action with extra keys laid over it.
fn action(name: &str, extra: Value) -> Value {
    let mut a = map(json!({
        "name": name,
        "label": "Do It",
        "type": "script",
        "target": "doIt",
        "ai": {"exposed": true, "description": DESC}
    }));
    for (k, v) in map(extra) {
        if let (true, Value::Object(extra_ai)) = (k == "ai", &v) {
            if let Some(Value::Object(ai)) = a.get_mut("ai") {
                for (k, v) in extra_ai {
                    ai.insert(k.clone(), v.clone());
                }
            }
        } else if v.is_null() {
            a.remove(&k);
        } else {
            a.insert(k, v);
        }
    }
    Value::Object(a)
}

/// A stack with one object `task` (fields as given) holding the actions.
fn task_stack(fields: Value, actions: Vec<Value>) -> Map<String, Value> {
    map(
        json!({"objects": [{"name": "task", "label": "Task", "fields": fields, "actions": actions}]}),
    )
}

fn one(extra: Value) -> Materialised<'static> {
    run(
        &task_stack(json!({}), vec![action("a", extra)]),
        Some(&Wiring::ALL),
    )
}

fn params(extra: Value) -> Value {
    let m = one(extra);
    assert!(m.skipped.is_empty(), "{:?}", m.skipped);
    Value::Object(m.registered[0].definition.parameters.clone())
}

fn params_with_fields(fields: Value, extra: Value) -> Value {
    let m = run(
        &task_stack(fields, vec![action("a", extra)]),
        Some(&Wiring::ALL),
    );
    assert!(m.skipped.is_empty(), "{:?}", m.skipped);
    Value::Object(m.registered[0].definition.parameters.clone())
}

fn skip_code(m: &Materialised<'_>) -> Option<&'static str> {
    m.skipped.first().map(|s| s.code.as_str())
}

// ---- skip codes -------------------------------------------------------

#[test]
fn static_codes_come_from_the_spec_predicate() {
    let cases = [
        (json!({"ai": {"exposed": false}}), "not_exposed"),
        (json!({"ai": null}), "not_exposed"),
        (json!({"ai": {"description": ""}}), "missing_description"),
        (json!({"ai": {"category": "magic"}}), "invalid_ai_block"),
        (
            json!({"ai": {"requiresConfirmation": "yes"}}),
            "invalid_ai_block",
        ),
        (json!({"type": "modal"}), "ui_only_type"),
        (json!({"type": "email"}), "unsupported_type"),
        (json!({"type": null}), "unsupported_type"),
        (json!({"target": null}), "missing_target"),
        (json!({"type": "flow", "target": null}), "missing_target"),
    ];
    for (extra, code) in cases {
        let m = one(extra.clone());
        assert_eq!(skip_code(&m), Some(code), "{extra}");
        assert!(m.registered.is_empty());
        let a = action("a", extra);
        let arena = objectstack_spec::json::Arena::new();
        let expected = static_skip(objectstack_spec::json::Map::from_serde(
            a.as_object().unwrap(),
            &arena,
        ))
        .unwrap()
        .reason();
        assert_eq!(m.skipped[0].reason, expected);
    }
}

#[test]
fn no_automation_only_when_wired_without_it() {
    let stack = task_stack(
        json!({}),
        vec![action("f", json!({"type": "flow", "target": "f1"}))],
    );
    let m = run(&stack, Some(&Wiring::NONE));
    assert_eq!(skip_code(&m), Some("no_automation"));
    assert!(m.skipped[0].reason.contains("automation service"));
    let wired = Wiring {
        automation: true,
        ..Wiring::NONE
    };
    assert_eq!(run(&stack, Some(&wired)).registered.len(), 1);
    assert_eq!(run(&stack, None).registered.len(), 1);
}

#[test]
fn no_api_client_only_when_wired_without_it() {
    let stack = task_stack(
        json!({}),
        vec![action("h", json!({"type": "api", "target": "/x"}))],
    );
    let m = run(&stack, Some(&Wiring::NONE));
    assert_eq!(skip_code(&m), Some("no_api_client"));
    let wired = Wiring {
        api_client: true,
        ..Wiring::NONE
    };
    let r = run(&stack, Some(&wired));
    assert_eq!(r.registered.len(), 1);
    assert_eq!(r.registered[0].route, Route::Api);
    assert_eq!(run(&stack, None).registered.len(), 1);
}

#[test]
fn requires_confirmation_names_why() {
    let cases = [
        (
            json!({"ai": {"requiresConfirmation": true}}),
            "ai.requiresConfirmation: true",
        ),
        (
            json!({"confirmText": "Sure?", "mode": "delete"}),
            "confirmText",
        ),
        (
            json!({"mode": "delete", "variant": "danger"}),
            "mode: delete",
        ),
        (json!({"variant": "danger"}), "variant: danger"),
    ];
    for (extra, why) in cases {
        let stack = task_stack(json!({}), vec![action("d", extra.clone())]);
        let m = run(&stack, Some(&Wiring::NONE));
        assert_eq!(skip_code(&m), Some("requires_confirmation"), "{extra}");
        assert!(
            m.skipped[0].reason.contains(&format!("(`{why}`)")),
            "{}",
            m.skipped[0].reason
        );
        let approved = Wiring {
            approval: true,
            ..Wiring::NONE
        };
        let r = run(&stack, Some(&approved));
        assert_eq!(r.registered.len(), 1, "{extra}");
        assert_eq!(r.registered[0].definition.requires_confirmation, Some(true));
        // With no wiring context only the static checks apply.
        assert_eq!(run(&stack, None).registered.len(), 1);
    }
}

#[test]
fn missing_name_is_skipped_with_its_index() {
    let m = one(json!({"name": null}));
    assert_eq!(skip_code(&m), Some("missing_name"));
    assert_eq!(m.skipped[0].action, "#0");
    // A nameless action that does not materialise keeps its static reason.
    let m = one(json!({"name": 7, "type": "url"}));
    assert_eq!(skip_code(&m), Some("ui_only_type"));
}

#[test]
fn name_collision_within_the_run_keeps_the_first() {
    let stack = map(json!({
        "objects": [
            {"name": "a", "actions": [action("go", json!({}))]},
            {"name": "b", "actions": [action("go", json!({}))]}
        ],
        "actions": [action("go", json!({}))]
    }));
    let m = run(&stack, Some(&Wiring::ALL));
    assert_eq!(m.registered.len(), 1);
    assert_eq!(m.registered[0].object.as_deref(), Some("a"));
    assert_eq!(m.skipped.len(), 2);
    assert!(m.skipped.iter().all(|s| s.code == SkipCode::NameCollision));
    assert!(
        m.skipped[0].reason.contains("objects[0].actions[0]"),
        "{}",
        m.skipped[0].reason
    );
    assert_eq!(m.skipped[1].object, None);
}

#[test]
fn name_collision_with_the_host_registry() {
    let stack = task_stack(
        json!({}),
        vec![action("go", json!({})), action("stay", json!({}))],
    );
    let m = materialise_serde(&stack, Some(&Wiring::ALL), &|n| n == "action_go");
    assert_eq!(skip_code(&m), Some("name_collision"));
    assert!(
        m.skipped[0]
            .reason
            .contains("already registered in this runtime")
    );
    assert_eq!(m.registered.len(), 1);
    assert_eq!(m.registered[0].definition.name, "action_stay");
}

#[test]
fn platform_tools_always_win() {
    // No curated name starts with `action_` today, so exercise the check
    // itself: a platform name is taken whatever the host says.
    let index = ObjectIndex::default();
    let arena = objectstack_spec::json::Arena::new();
    let mut sink = |_: Event<Registration<'_>>| {};
    let superseded = Superseded::default();
    let walk = Walk {
        wiring: None,
        already_registered: &|_| false,
        index: &index,
        arena: &arena,
        taken: HashMap::default(),
        taken_records: HashMap::default(),
        emit: &mut sink,
        ordinal: 0,
        superseded: &superseded,
        bound: HashMap::default(),
    };
    let reason = walk.collision("x", "query_data", false).unwrap();
    assert!(
        reason.contains("platform tool registered by `service-ai`"),
        "{reason}"
    );
    assert_eq!(
        walk.collision("query_data", "action_query_data", false),
        None
    );
}

#[test]
fn first_reason_wins() {
    // Not exposed beats UI-only.
    let m = one(json!({"type": "modal", "ai": {"exposed": false}}));
    assert_eq!(skip_code(&m), Some("not_exposed"));
    // Missing target beats the wiring checks.
    let stack = task_stack(
        json!({}),
        vec![action("f", json!({"type": "flow", "target": ""}))],
    );
    assert_eq!(
        skip_code(&run(&stack, Some(&Wiring::NONE))),
        Some("missing_target")
    );
    // The wiring of the route beats confirmation.
    let stack = task_stack(
        json!({}),
        vec![action(
            "h",
            json!({"type": "api", "target": "/x", "variant": "danger"}),
        )],
    );
    assert_eq!(
        skip_code(&run(&stack, Some(&Wiring::NONE))),
        Some("no_api_client")
    );
    // Confirmation beats a name collision.
    let stack = task_stack(
        json!({}),
        vec![
            action("x", json!({})),
            action("x", json!({"mode": "delete"})),
        ],
    );
    let m = run(&stack, Some(&Wiring::NONE));
    assert_eq!(skip_code(&m), Some("requires_confirmation"));
}

// ---- walk ----------------------------------------------------------------

#[test]
fn walks_objects_then_stack_actions_and_fills_object_name() {
    let stack = map(json!({
        "actions": [action("s1", json!({"objectName": "b"})), action("s2", json!({}))],
        "objects": [
            {"name": "a", "actions": [action("a1", json!({})), action("a2", json!({"ai": {"exposed": false}}))]},
            {"name": "b", "actions": {"b1": action("ignored_name_is_key_overridden", json!({"name": null}))}}
        ]
    }));
    let m = run(&stack, Some(&Wiring::ALL));
    let names: Vec<_> = m
        .registered
        .iter()
        .map(|r| r.definition.name.as_str())
        .collect();
    assert_eq!(names, ["action_a1", "action_b1", "action_s1", "action_s2"]);
    let objects: Vec<_> = m.registered.iter().map(|r| r.object.as_deref()).collect();
    assert_eq!(objects, [Some("a"), Some("b"), Some("b"), None]);
    let locations: Vec<_> = m
        .registered
        .iter()
        .map(|r| r.location.to_string())
        .collect();
    assert_eq!(
        locations,
        [
            "objects[0].actions[0]",
            "objects[1].actions[0]",
            "actions[0]",
            "actions[1]"
        ]
    );
    let ordinals: Vec<_> = m.registered.iter().map(|r| r.location.ordinal).collect();
    assert_eq!(ordinals, [0, 2, 3, 4]);
    assert_eq!(m.skipped[0].location.ordinal, 1);
    assert_eq!(m.registered[1].definition.object_name.as_deref(), Some("b"));
}

#[test]
fn bound_stack_actions_join_their_object_and_echoes_are_walked_once() {
    // A built stack carries each bound action twice: in `actions` and in
    // its object's `actions` (defineStack's merge). The copy is not a
    // second action; an unbuilt bound action joins its object.
    let bound = action("bound", json!({"objectName": "a"}));
    let stack = map(json!({
        "objects": [
            {"name": "a", "actions": [action("own", json!({})), bound.clone()]},
            {"name": "b", "actions": [action("b1", json!({}))]}
        ],
        "actions": [
            action("global", json!({})),
            bound,
            action("joins", json!({"objectName": "a"})),
            action("elsewhere", json!({"objectName": "nowhere"})),
            action("hidden", json!({"objectName": "a", "ai": {"exposed": false}}))
        ]
    }));
    let m = run(&stack, Some(&Wiring::ALL));
    let names: Vec<_> = m
        .registered
        .iter()
        .map(|r| r.action_name.as_str())
        .collect();
    assert_eq!(
        names,
        ["own", "bound", "joins", "b1", "global", "elsewhere"]
    );
    let locations: Vec<_> = m
        .registered
        .iter()
        .map(|r| r.location.to_string())
        .collect();
    assert_eq!(
        locations,
        [
            "objects[0].actions[0]",
            "objects[0].actions[1]",
            "actions[2]",
            "objects[1].actions[0]",
            "actions[0]",
            "actions[3]"
        ]
    );
    // Skipped once, in its object's place, and no collision anywhere.
    assert_eq!(m.skipped.len(), 1, "{:?}", m.skipped);
    assert_eq!(m.skipped[0].action, "hidden");
    assert_eq!(m.skipped[0].location.ordinal, 3);
    // The object's copy may leave `objectName` out (or `null`): defineStack
    // fills it from the object, so it is still the same action.
    for own in [json!({}), json!({"objectName": null})] {
        let stack = map(json!({
            "objects": [{"name": "a", "actions": [action("x", own)]}],
            "actions": [action("x", json!({"objectName": "a"}))]
        }));
        let m = run(&stack, Some(&Wiring::ALL));
        assert_eq!(m.registered.len(), 1);
        assert!(m.skipped.is_empty(), "{:?}", m.skipped);
    }
    // Filled, it must still name the object the stack-level copy names.
    let stack = map(json!({
        "objects": [{"name": "a", "actions": [action("x", json!({"objectName": "b"}))]}, {"name": "b"}],
        "actions": [action("x", json!({"objectName": "a"}))]
    }));
    let m = run(&stack, Some(&Wiring::ALL));
    assert_eq!(skip_code(&m), Some("name_collision"));
    // A hand-written twin that differs is a second action: it collides.
    let stack = map(json!({
        "objects": [{"name": "a", "actions": [action("x", json!({}))]}],
        "actions": [action("x", json!({"objectName": "a", "label": "Other"}))]
    }));
    let m = run(&stack, Some(&Wiring::ALL));
    assert_eq!(m.registered.len(), 1);
    assert_eq!(skip_code(&m), Some("name_collision"));
    // The reason says which copy is served and that the two must match,
    // not to rename one: they are the same action, edited in one place.
    let reason = &m.skipped[0].reason;
    assert!(
        reason.contains("registered from the object's copy of the action at objects[0].actions[0]")
            && reason.contains("Edit both alike")
            && !reason.contains("rename"),
        "{reason}"
    );
    // A stack-level action of the same name bound to another object is a
    // second action: rename one.
    let stack = map(json!({
        "objects": [{"name": "a", "actions": [action("x", json!({}))]}, {"name": "b"}],
        "actions": [action("x", json!({"objectName": "b"}))]
    }));
    let m = run(&stack, Some(&Wiring::ALL));
    assert!(
        m.skipped[0].reason.contains("rename one of them"),
        "{:?}",
        m.skipped
    );
}

#[test]
fn groups_are_sorted_by_order_when_one_sets_it() {
    let stack = map(json!({
        "objects": [{"name": "a", "actions": [
            action("third", json!({"order": 5})),
            action("first", json!({})),
            action("second", json!({"order": 0})),
        ]}],
        "actions": [
            action("late", json!({"order": 2})),
            action("early", json!({"order": -1})),
            action("joins_first", json!({"objectName": "a", "order": -3}))
        ]
    }));
    let m = run(&stack, Some(&Wiring::ALL));
    let names: Vec<_> = m
        .registered
        .iter()
        .map(|r| r.action_name.as_str())
        .collect();
    assert_eq!(
        names,
        ["joins_first", "first", "second", "third", "early", "late"]
    );
}

#[test]
fn object_name_is_filled_only_when_missing() {
    let stack = map(json!({"objects": [{"name": "task", "actions": [
        action("missing", json!({"locations": ["list_item"]})),
        action("null", json!({"objectName": null, "locations": ["list_item"]})),
        action("empty", json!({"objectName": "", "locations": ["list_item"]})),
        action("number", json!({"objectName": 5, "locations": ["list_item"]})),
    ]}]}));
    let m = run(&stack, Some(&Wiring::ALL));
    let got: Vec<_> = m
        .registered
        .iter()
        .map(|r| {
            (
                r.definition.object_name.clone(),
                r.definition.parameters["properties"]
                    .get("recordId")
                    .is_some(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (Some("task".to_owned()), true),
            (Some("task".to_owned()), true),
            (None, false),
            (None, false)
        ]
    );
}

#[test]
fn warning_comes_even_when_the_name_then_collides() {
    let risky = action(
        "wipe",
        json!({"mode": "delete", "ai": {"requiresConfirmation": false}}),
    );
    let stack = task_stack(json!({}), vec![action("wipe", json!({})), risky]);
    let m = run(&stack, Some(&Wiring::ALL));
    assert_eq!(m.registered.len(), 1);
    assert_eq!(skip_code(&m), Some("name_collision"));
    assert_eq!(m.warnings.len(), 1);
    assert_eq!(m.warnings[0].location, m.skipped[0].location);
}

#[test]
fn array_and_map_collections_register_the_same_action() {
    let stack = task_stack(json!({}), vec![action("a", json!({}))]);
    let from_array = run(&stack, None);
    let stack = map(json!({"objects": {"task": {"actions": [action("a", json!({}))]}}}));
    let from_map = run(&stack, None);
    assert_eq!(from_map.registered[0].object.as_deref(), Some("task"));
    assert_eq!(
        from_map.registered[0].action,
        from_array.registered[0].action
    );
}

#[test]
fn junk_shapes_never_panic() {
    for stack in [
        json!({"objects": 5, "actions": "x"}),
        json!({"objects": [null, 1, {"actions": 3}], "actions": [null, []]}),
        json!({"objects": [{"name": 3, "fields": "x", "actions": [
            action("p", json!({"params": [null, 3, {"name": 4}, {"field": ["x"]}, {"name": "ok", "options": "x", "type": 9}]}))
        ]}]}),
        json!({"objects": [{"name": "o", "fields": [1, {"name": 2}, {"name": "f", "options": 3}], "actions": [
            action("q", json!({"params": [{"field": "f", "objectOverride": 5, "label": {"en": "x"}, "required": "yes"}],
                               "locations": "record_header",
                               "ai": {"paramHints": {"f": {"description": 3, "enum": "x", "examples": {}}}}}))
        ]}]}),
    ] {
        let m = run(&map(stack.clone()), Some(&Wiring::ALL));
        for r in &m.registered {
            let schema = Value::Object(r.definition.parameters.clone());
            assert!(jsonschema::draft202012::meta::is_valid(&schema), "{schema}");
        }
    }
}

// ---- the definition ---------------------------------------------------------

#[test]
fn definition_copies_category_output_schema_and_object_but_not_label() {
    let m = one(json!({
        "ai": {"category": "data", "outputSchema": {"type": "object", "properties": {"count": {}, "ids": {}}}}
    }));
    let d = &m.registered[0].definition;
    assert_eq!(d.name, "action_a");
    // As upstream: the definition carries no label (MCP reads the action's).
    assert_eq!(d.label, None);
    assert_eq!(d.category.as_deref(), Some("data"));
    assert_eq!(d.object_name.as_deref(), Some("task"));
    assert_eq!(d.requires_confirmation, Some(false));
    assert_eq!(
        d.description,
        format!("{DESC}\n\nReturns an object with: count, ids.")
    );
    assert_eq!(
        d.output_schema.as_ref().map(|s| Value::Object(s.clone())),
        Some(json!({"type": "object", "properties": {"count": {}, "ids": {}}}))
    );
}

#[test]
fn description_has_no_returns_line_without_properties() {
    for schema in [
        json!({"type": "object"}),
        json!({"type": "object", "properties": {}}),
        json!({"properties": []}),
    ] {
        let m = one(json!({"ai": {"outputSchema": schema}}));
        assert_eq!(m.registered[0].definition.description, DESC);
    }
    assert_eq!(one(json!({})).registered[0].definition.description, DESC);
}

#[test]
fn field_write_rides_the_script_route() {
    let m =
        one(json!({"type": null, "target": null, "operation": "update", "patch": {"done": true}}));
    assert_eq!(m.registered.len(), 1);
    assert_eq!(m.registered[0].route, Route::FieldWrite);
}

#[test]
fn warns_when_destructive_runs_unattended() {
    let m = one(json!({"variant": "danger", "ai": {"requiresConfirmation": false}}));
    assert_eq!(m.registered.len(), 1);
    assert_eq!(
        m.registered[0].definition.requires_confirmation,
        Some(false)
    );
    assert_eq!(
        m.registered[0].destructive,
        Some(ConfirmationReason::VariantDanger)
    );
    assert_eq!(m.warnings.len(), 1);
    assert_eq!(m.warnings[0].code, WarningCode::DestructiveUnattended);
    assert!(m.warnings[0].warning.contains("`variant: danger`"));
    // No warning for an action that does not register.
    let m = one(json!({"type": "url", "variant": "danger", "ai": {"requiresConfirmation": false}}));
    assert!(m.warnings.is_empty());
}

#[test]
fn serialises_the_documented_shape() {
    let stack = task_stack(
        json!({}),
        vec![
            action("a", json!({})),
            action("b", json!({"ai": {"exposed": false}})),
            action(
                "c",
                json!({"mode": "delete", "ai": {"requiresConfirmation": false}}),
            ),
        ],
    );
    let m = run(&stack, Some(&Wiring::ALL));
    let v = serde_json::to_value(&m).unwrap();
    assert_eq!(v["registered"][0]["name"], "action_a");
    assert_eq!(v["registered"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["skipped"][0],
        json!({"action": "b", "object": "task", "code": "not_exposed",
               "reason": StaticSkip::NotExposed.reason()})
    );
    let w = v["warnings"][0].as_object().unwrap();
    assert_eq!(
        w.keys().collect::<Vec<_>>(),
        ["action", "object", "code", "warning"]
    );
    assert_eq!(w["code"], "destructive_unattended");
}

// ---- parameters ---------------------------------------------------------------

#[test]
fn empty_parameters_omit_required() {
    assert_eq!(
        params(json!({})),
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}

#[test]
fn record_id_comes_first_for_row_context_actions() {
    let p = params(json!({"locations": ["list_toolbar", "record_more"],
                          "params": [{"name": "note", "type": "text", "required": true}]}));
    assert_eq!(
        p,
        json!({
            "type": "object",
            "properties": {
                "recordId": {"type": "string", "description": "The task record id to act on."},
                "note": {"type": "string"}
            },
            "required": ["recordId", "note"],
            "additionalProperties": false
        })
    );
    for location in ROW_CONTEXT_LOCATIONS {
        let p = params(json!({"locations": [location]}));
        assert!(p["properties"]["recordId"].is_object(), "{location}");
        assert_eq!(p["required"], json!(["recordId"]), "{location}");
    }
    let p = params(json!({"locations": ["list_toolbar"]}));
    assert!(p["properties"].get("recordId").is_none());
}

use objectstack_spec::materialise::ROW_CONTEXT_LOCATIONS;

#[test]
fn record_id_is_required_whenever_it_is_offered() {
    // The runtime refuses a row action's call without `recordId`, so the
    // schema requires it, with or without `recordIdParam` or
    // `recordIdField` (upstream required it only with one of them).
    for extra in [
        json!({"recordIdParam": "id"}),
        json!({"recordIdField": "external_id"}),
        json!({"recordIdParam": ""}),
        json!({}),
    ] {
        let mut e = map(extra);
        e.insert("locations".into(), json!(["record_header"]));
        let p = params(Value::Object(e));
        assert_eq!(p["required"], json!(["recordId"]));
    }
}

#[test]
fn a_field_write_takes_its_record_id_wherever_it_is_shown() {
    for locations in [json!(["list_toolbar"]), json!([]), Value::Null] {
        let p = params(json!({"type": null, "target": null, "operation": "update",
                              "patch": {"done": true}, "locations": locations}));
        assert_eq!(
            p["properties"]["recordId"],
            json!({"type": "string", "description": "The task record id to act on."}),
            "{locations}"
        );
        assert_eq!(p["required"], json!(["recordId"]), "{locations}");
    }
    let m = one(json!({"type": null, "target": null, "operation": "update", "patch": {}}));
    assert!(m.registered[0].row_context);
}

#[test]
fn record_id_needs_an_object() {
    let stack = map(json!({"actions": [action("s", json!({"locations": ["record_header"]}))]}));
    let m = run(&stack, Some(&Wiring::ALL));
    assert!(
        m.registered[0].definition.parameters["properties"]
            .get("recordId")
            .is_none()
    );
    assert!(!m.registered[0].row_context);
    let stack = map(
        json!({"actions": [action("s", json!({"locations": ["record_header"], "objectName": "deal"}))]}),
    );
    let m = run(&stack, Some(&Wiring::ALL));
    assert_eq!(
        m.registered[0].definition.parameters["properties"]["recordId"]["description"],
        "The deal record id to act on."
    );
    assert!(m.registered[0].row_context);
}

#[test]
fn type_mapping() {
    let cases = [
        ("number", "number"),
        ("currency", "number"),
        ("percent", "number"),
        ("rating", "number"),
        ("slider", "number"),
        ("autonumber", "number"),
        ("boolean", "boolean"),
        ("toggle", "boolean"),
        ("multiselect", "array"),
        ("checkboxes", "array"),
        ("tags", "array"),
        ("text", "string"),
        ("date", "string"),
        ("select", "string"),
        ("lookup", "string"),
        ("no_such_type", "string"),
    ];
    for (field_type, json_type) in cases {
        let p = params(json!({"params": [{"name": "x", "type": field_type}]}));
        assert_eq!(p["properties"]["x"]["type"], json_type, "{field_type}");
        if json_type == "array" {
            assert_eq!(p["properties"]["x"]["items"], json!({"type": "string"}));
        } else {
            assert!(p["properties"]["x"].get("items").is_none());
        }
    }
    // No type at all: a string.
    let p = params(json!({"params": [{"name": "x"}]}));
    assert_eq!(p["properties"]["x"], json!({"type": "string"}));
}

fn task_fields() -> Value {
    json!({
        "status": {"label": "Status", "type": "select", "required": true,
                   "description": "Where the task stands",
                   "options": [{"label": "Open", "value": "open"}, {"label": "Done", "value": "done"}, {"value": 3}]},
        "hours": {"label": "Hours", "type": "number"},
        "labels": {"label": "Labels", "type": "tags", "options": ["a", "b", 5]}
    })
}

#[test]
fn field_backed_params_read_the_owning_object() {
    let p = params_with_fields(
        task_fields(),
        json!({"params": [{"field": "status"}, {"field": "hours"}, {"field": "labels"}, {"field": "missing"}]}),
    );
    assert_eq!(
        p,
        json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "description": "Status \u{2014} Where the task stands",
                           "enum": ["open", "done"]},
                "hours": {"type": "number", "description": "Hours"},
                "labels": {"type": "array", "description": "Labels",
                           "items": {"type": "string", "enum": ["a", "b"]}},
                "missing": {"type": "string"}
            },
            "required": ["status"],
            "additionalProperties": false
        })
    );
}

#[test]
fn fields_as_an_array_index_the_same() {
    let p = params_with_fields(
        json!([{"name": "hours", "label": "Hours", "type": "number"}, {"name": "hours", "type": "text"}]),
        json!({"params": [{"field": "hours"}]}),
    );
    assert_eq!(
        p["properties"]["hours"],
        json!({"type": "number", "description": "Hours"})
    );
}

#[test]
fn param_keys_override_field_keys() {
    let p = params_with_fields(
        task_fields(),
        json!({"params": [{"field": "status", "name": "new_status", "label": "New status",
                           "helpText": "Pick one", "type": "multiselect", "required": false,
                           "options": ["x", {"value": "y", "label": "Y"}]}]}),
    );
    assert_eq!(
        p["properties"]["new_status"],
        json!({"type": "array", "description": "New status \u{2014} Pick one",
               "items": {"type": "string", "enum": ["x", "y"]}})
    );
    assert!(p.get("required").is_none());
}

#[test]
fn object_override_reads_another_object_when_it_exists() {
    let stack = map(json!({"objects": [
        {"name": "task", "fields": {"amount": {"label": "Task amount", "type": "text"}},
         "actions": [action("a", json!({"params": [
             {"field": "amount", "objectOverride": "invoice"},
             {"name": "amount_2", "field": "amount", "objectOverride": "nowhere"}
         ]}))]},
        {"name": "invoice", "fields": {"amount": {"label": "Invoice amount", "type": "currency"}}}
    ]}));
    let m = run(&stack, Some(&Wiring::ALL));
    let p = &m.registered[0].definition.parameters["properties"];
    assert_eq!(
        p["amount"],
        json!({"type": "number", "description": "Invoice amount"})
    );
    assert_eq!(
        p["amount_2"],
        json!({"type": "string", "description": "Task amount"})
    );
}

#[test]
fn stack_level_actions_read_fields_of_their_object_name() {
    let stack = map(json!({
        "objects": [{"name": "task", "fields": {"hours": {"label": "Hours", "type": "number"}}}],
        "actions": [action("s", json!({"objectName": "task", "params": [{"field": "hours"}]}))]
    }));
    let m = run(&stack, Some(&Wiring::ALL));
    assert_eq!(
        m.registered[0].definition.parameters["properties"]["hours"],
        json!({"type": "number", "description": "Hours"})
    );
}

#[test]
fn fields_come_from_the_object_holding_the_action_not_its_object_name() {
    let stack = map(json!({"objects": [
        {"name": "task", "fields": {"hours": {"label": "Task hours", "type": "number"}},
         "actions": [action("a", json!({"objectName": "invoice", "params": [{"field": "hours"}]}))]},
        {"name": "invoice", "fields": {"hours": {"label": "Invoice hours", "type": "text"}}}
    ]}));
    let m = run(&stack, Some(&Wiring::ALL));
    let d = &m.registered[0].definition;
    assert_eq!(d.object_name.as_deref(), Some("invoice"));
    assert_eq!(
        d.parameters["properties"]["hours"],
        json!({"type": "number", "description": "Task hours"})
    );
}

#[test]
fn object_override_reads_the_last_object_of_a_name() {
    let stack = map(json!({"objects": [
        {"name": "task", "actions": [action("a", json!({"params": [
            {"field": "amount", "objectOverride": "invoice"}
        ]}))]},
        {"name": "invoice", "fields": {"amount": {"label": "First", "type": "text"}}},
        {"name": "invoice", "fields": {"amount": {"label": "Last", "type": "currency"}}}
    ]}));
    let m = run(&stack, Some(&Wiring::ALL));
    assert_eq!(
        m.registered[0].definition.parameters["properties"]["amount"],
        json!({"type": "number", "description": "Last"})
    );
}

#[test]
fn map_fields_are_looked_up_by_key() {
    let p = params_with_fields(
        json!({"hours": {"name": "effort", "label": "Hours", "type": "number"}}),
        json!({"params": [{"field": "hours"}, {"field": "effort"}]}),
    );
    assert_eq!(
        p["properties"],
        json!({"hours": {"type": "number", "description": "Hours"}, "effort": {"type": "string"}})
    );
}

#[test]
fn label_and_help_text() {
    let cases = [
        (
            json!({"name": "x", "label": "L", "helpText": "H"}),
            Some("L \u{2014} H"),
        ),
        (json!({"name": "x", "label": "L"}), Some("L")),
        (json!({"name": "x", "helpText": "H"}), Some("H")),
        (json!({"name": "x"}), None),
        (json!({"name": "x", "label": "", "helpText": ""}), None),
        // An i18n label object falls back to the field label.
        (
            json!({"field": "hours", "name": "x", "label": {"en": "L"}}),
            Some("Hours"),
        ),
    ];
    for (param, expected) in cases {
        let p = params_with_fields(task_fields(), json!({"params": [param.clone()]}));
        assert_eq!(
            p["properties"]["x"]["description"].as_str(),
            expected,
            "{param}"
        );
    }
}

#[test]
fn options_shapes() {
    let cases = [
        (json!(["a", "b"]), Some(json!(["a", "b"]))),
        (
            json!([{"value": "a", "label": "A"}, {"label": "no value"}, {"value": 1}, 2, null, "b"]),
            Some(json!(["a", "b"])),
        ),
        (json!([]), None),
        (json!([3, {"value": true}]), None),
    ];
    for (options, expected) in cases {
        let p = params(json!({"params": [{"name": "x", "options": options.clone()}]}));
        assert_eq!(
            p["properties"]["x"].get("enum"),
            expected.as_ref(),
            "{options}"
        );
    }
    // An array param's options go to its items.
    let p = params(json!({"params": [{"name": "x", "type": "tags", "options": ["a"]}]}));
    assert_eq!(
        p["properties"]["x"],
        json!({"type": "array", "items": {"type": "string", "enum": ["a"]}})
    );
    // `param.options ?? field.options`: param options that are given,
    // even unusable ones, hide the field's; `null` defers to them.
    for (options, expected) in [
        (json!("x"), None),
        (json!([]), None),
        (json!([5]), None),
        (json!(null), Some(json!(["open", "done"]))),
    ] {
        let p = params_with_fields(
            task_fields(),
            json!({"params": [{"field": "status", "options": options.clone()}]}),
        );
        assert_eq!(
            p["properties"]["status"].get("enum"),
            expected.as_ref(),
            "{options}"
        );
    }
}

#[test]
fn array_items_follow_the_options_source() {
    let cases = [
        // No options, empty options or options that are not a list: items
        // of strings.
        (json!({}), Some(json!({"type": "string"}))),
        (json!({"options": []}), Some(json!({"type": "string"}))),
        (json!({"options": "x"}), Some(json!({"type": "string"}))),
        // Options with no string value: no enum and, as upstream, no items.
        (json!({"options": [1, {"value": 2}]}), None),
        (
            json!({"options": [1, "a"]}),
            Some(json!({"type": "string", "enum": ["a"]})),
        ),
    ];
    for (extra, expected) in cases {
        let mut param = map(json!({"name": "x", "type": "checkboxes"}));
        param.extend(map(extra.clone()));
        let p = params(json!({"params": [param]}));
        let x = &p["properties"]["x"];
        assert_eq!(x["type"], "array", "{extra}");
        assert_eq!(x.get("items"), expected.as_ref(), "{extra}");
        assert!(x.get("enum").is_none(), "{extra}");
    }
}

#[test]
fn param_type_and_help_follow_nullish_coalescing() {
    let fields = json!({"n": {"type": "number", "label": "N", "description": "Field help"}});
    let cases = [
        // Given but not a string: no field fallback, a string.
        (
            json!({"field": "n", "type": 5}),
            json!({"type": "string", "description": "N \u{2014} Field help"}),
        ),
        (
            json!({"field": "n", "type": null}),
            json!({"type": "number", "description": "N \u{2014} Field help"}),
        ),
        // An empty or non-string help text hides the field's description.
        (
            json!({"field": "n", "helpText": ""}),
            json!({"type": "number", "description": "N"}),
        ),
        (
            json!({"field": "n", "helpText": 7}),
            json!({"type": "number", "description": "N"}),
        ),
        (
            json!({"field": "n", "helpText": null}),
            json!({"type": "number", "description": "N \u{2014} Field help"}),
        ),
        // An empty param label is a label: dropped, not replaced.
        (
            json!({"field": "n", "label": ""}),
            json!({"type": "number", "description": "Field help"}),
        ),
    ];
    for (param, expected) in cases {
        let p = params_with_fields(fields.clone(), json!({"params": [param.clone()]}));
        assert_eq!(p["properties"]["n"], expected, "{param}");
    }
}

#[test]
fn param_names_follow_nullish_coalescing() {
    let p = params(json!({"params": [
        {"name": "", "field": "f1"},      // an empty name drops the param
        {"name": null, "field": "f2"},    // null: the field names it
        {"name": 5, "field": "f3"},       // not a string: treated as absent
        {"field": ""},                    // nothing to name it
        {"label": "no name"}
    ]}));
    let keys: Vec<_> = p["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["f2", "f3"]);
}

#[test]
fn integer_like_property_names_come_first_as_in_javascript() {
    let p = params(json!({
        "locations": ["record_header"],
        "params": [{"name": "b"}, {"name": "10"}, {"name": "2"}, {"name": "01"}],
        "ai": {"paramHints": {"7": {"description": "from a hint"}}}
    }));
    let keys: Vec<_> = p["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["2", "7", "10", "recordId", "b", "01"]);
}

#[test]
fn copied_values_list_keys_in_javascript_order() {
    let m = one(json!({
        "params": [{"name": "x", "defaultValue": {"b": 1, "2": 2, "1": 1}}],
        "ai": {"outputSchema": {"type": "object", "properties": {"z": {}, "3": {"b": 1, "0": 0}}}}
    }));
    let d = &m.registered[0].definition;
    let text = serde_json::to_string(d).unwrap();
    assert!(text.contains(r#""default":{"1":1,"2":2,"b":1}"#), "{text}");
    assert!(
        text.contains(
            r#""outputSchema":{"type":"object","properties":{"3":{"0":0,"b":1},"z":{}}}"#
        ),
        "{text}"
    );
    assert!(d.description.ends_with("\n\nReturns an object with: 3, z."));
}

#[test]
fn returns_line_reads_an_array_of_properties_as_object_keys_does() {
    let m = one(json!({"ai": {"outputSchema": {"properties": ["a", "b"]}}}));
    assert!(
        m.registered[0]
            .definition
            .description
            .ends_with("\n\nReturns an object with: 0, 1."),
        "{}",
        m.registered[0].definition.description
    );
    for properties in [json!({}), json!([]), json!("ab"), json!(null)] {
        let m = one(json!({"ai": {"outputSchema": {"properties": properties.clone()}}}));
        assert_eq!(m.registered[0].definition.description, DESC, "{properties}");
    }
}

#[test]
fn default_value_becomes_default() {
    for value in [
        json!("x"),
        json!(3),
        json!(false),
        json!(null),
        json!(["a"]),
    ] {
        let p = params(json!({"params": [{"name": "x", "defaultValue": value.clone()}]}));
        assert_eq!(p["properties"]["x"]["default"], value);
    }
    // A field's defaultValue is not inherited.
    let p = params_with_fields(
        json!({"n": {"type": "number", "defaultValue": 1}}),
        json!({"params": [{"field": "n"}]}),
    );
    assert!(p["properties"]["n"].get("default").is_none());
}

#[test]
fn required_fallbacks_and_no_duplicates() {
    let p = params_with_fields(
        task_fields(),
        json!({
            "locations": ["record_header"], "recordIdParam": "id",
            "params": [
                {"field": "status"},                       // field says required
                {"field": "status", "required": false},    // param wins, but already listed
                {"field": "hours", "required": true},      // param says required
                {"name": "free"},                          // neither: optional
                {"name": "recordId", "required": true},    // duplicate of the injected one
                {"name": "flag", "required": "yes"},       // truthy, as Boolean("yes")
                {"name": "zero", "required": 0},           // falsy
                {"field": "status", "name": "nul", "required": null} // null: the field decides
            ]
        }),
    );
    assert_eq!(
        p["required"],
        json!(["recordId", "status", "hours", "flag", "nul"])
    );
    let p = params_with_fields(
        task_fields(),
        json!({"params": [{"field": "status", "required": false}]}),
    );
    assert!(p.get("required").is_none());
}

#[test]
fn param_hints_apply_last() {
    let p = params(json!({
        "locations": ["record_header"],
        "params": [
            {"name": "stage", "label": "Stage", "options": ["a", "b"]},
            {"name": "labels", "type": "tags"}
        ],
        "ai": {"paramHints": {
            "stage": {"description": "The next stage", "enum": ["b"], "examples": ["b"]},
            "labels": {"enum": ["x", "y"]},
            "recordId": {"description": "The task id", "examples": ["t-1"]},
            "extra": {"description": "Created by a hint", "enum": [1, "two"]}
        }}
    }));
    assert_eq!(
        p["properties"],
        json!({
            "recordId": {"type": "string", "description": "The task id", "examples": ["t-1"]},
            "stage": {"type": "string", "description": "The next stage", "enum": ["b"], "examples": ["b"]},
            "labels": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            "extra": {"type": "string", "description": "Created by a hint", "enum": [1, "two"]}
        })
    );
}

#[test]
fn hint_for_an_absent_record_id_creates_it() {
    let p = params(json!({"ai": {"paramHints": {"recordId": {}}}}));
    assert_eq!(p["properties"]["recordId"], json!({"type": "string"}));
}

#[test]
fn events_come_in_walk_order_with_warnings_first() {
    let stack = task_stack(
        json!({}),
        vec![
            action("a", json!({"ai": {"exposed": false}})),
            action(
                "b",
                json!({"variant": "danger", "ai": {"requiresConfirmation": false}}),
            ),
            action("c", json!({})),
        ],
    );
    let mut events = Vec::new();
    let arena = json::Arena::new();
    let document = json::Map::from_serde(&stack, &arena);
    materialise_each(document, &arena, Some(&Wiring::ALL), &|_| false, &mut |e| {
        events.push(match e {
            Event::Registered(r) => format!("registered {}", r.action_name),
            Event::Skipped(s) => format!("skipped {}", s.action),
            Event::Warning(w) => format!("warning {}", w.action),
        })
    });
    assert_eq!(
        events,
        ["skipped a", "warning b", "registered b", "registered c"]
    );
}

#[test]
fn required_stays_unique_in_long_lists() {
    let mut params: Vec<Value> = (0..40)
        .map(|i| json!({"name": format!("p{i}"), "required": true}))
        .collect();
    params.extend((0..40).map(|i| json!({"name": format!("p{}", i % 20), "required": true})));
    let p = params_with_fields(json!({}), json!({"params": params}));
    let required: Vec<String> = (0..40).map(|i| format!("p{i}")).collect();
    assert_eq!(p["required"], json!(required));
}

#[test]
fn keywords_keep_the_order_they_were_set_in() {
    // Upstream builds each property as a JavaScript object: a hint that
    // replaces a keyword keeps its place, one that adds a keyword puts it
    // last. Compared as text, since `Value` equality ignores key order.
    let p = params(json!({
        "params": [
            {"name": "when", "label": "When", "defaultValue": {"b": 1, "10": 2, "a": 3}},
            {"name": "kind", "options": ["x"], "helpText": "Pick one"}
        ],
        "ai": {"paramHints": {
            "when": {"description": "Overridden", "examples": [{"z": 0, "2": 1}]},
            "kind": {"enum": ["y"], "description": "Replaced in place"}
        }}
    }));
    assert_eq!(
        serde_json::to_string(&p["properties"]).unwrap(),
        concat!(
            r#"{"when":{"type":"string","description":"Overridden","default":{"10":2,"b":1,"a":3},"#,
            r#""examples":[{"2":1,"z":0}]},"#,
            r#""kind":{"type":"string","description":"Replaced in place","enum":["y"]}}"#
        )
    );
    let added = params(json!({
        "params": [{"name": "n", "type": "number", "defaultValue": 3}],
        "ai": {"paramHints": {"n": {"description": "Added last"}}}
    }));
    assert_eq!(
        serde_json::to_string(&added["properties"]["n"]).unwrap(),
        r#"{"type":"number","default":3,"description":"Added last"}"#
    );
}

#[test]
fn borrowed_definitions_write_what_owned_ones_do() {
    let stack = task_stack(
        json!({"status": {"type": "select", "label": "Status", "options": [{"value": "open"}]}}),
        vec![action(
            "a",
            json!({
                "locations": ["record_header"],
                "recordIdParam": "id",
                "params": [{"field": "status"}, {"name": "tags", "type": "tags"}],
                "ai": {"category": "data", "outputSchema": {"properties": {"2": {}, "ok": {}}},
                       "paramHints": {"tags": {"enum": ["t"]}}}
            }),
        )],
    );
    let text = serde_json::to_string(&stack).unwrap();
    let arena = objectstack_spec::json::Arena::new();
    let document = objectstack_spec::json::parse_document(text.as_bytes(), &arena).unwrap();
    let mut written = Vec::new();
    materialise_each(document, &arena, Some(&Wiring::ALL), &|_| false, &mut |e| {
        if let Event::Registered(r) = e {
            let borrowed = serde_json::to_string(&r.definition).unwrap();
            let owned = serde_json::to_string(&r.definition.to_definition()).unwrap();
            assert_eq!(borrowed, owned);
            assert_eq!(r.definition.name(), "action_a");
            assert_eq!(r.definition.category(), Some("data"));
            assert_eq!(r.definition.object_name(), Some("task"));
            assert!(!r.definition.requires_confirmation());
            written.push(borrowed);
        }
    });
    assert_eq!(written.len(), 1);
    assert!(
        written[0].contains(r#"\n\nReturns an object with: 2, ok.""#),
        "{}",
        written[0]
    );
}

#[test]
fn copied_numbers_are_spelled_as_javascript_spells_integers() {
    let p = params(json!({
        "params": [
            {"name": "a", "defaultValue": 5.0},
            {"name": "b", "defaultValue": -0.0},
            {"name": "c", "defaultValue": 1e5},
            {"name": "d", "defaultValue": 0.5},
            {"name": "e", "defaultValue": 9007199254740993.0},
            {"name": "g", "defaultValue": 1e17},
            {"name": "f", "defaultValue": 12}
        ],
        "ai": {"paramHints": {"a": {"examples": [2.0, {"n": 3.0}]}}}
    }));
    assert_eq!(
        serde_json::to_string(&p["properties"]).unwrap(),
        concat!(
            r#"{"a":{"type":"string","default":5,"examples":[2,{"n":3}]},"#,
            r#""b":{"type":"string","default":0},"c":{"type":"string","default":100000},"#,
            r#""d":{"type":"string","default":0.5},"#,
            // 2^53 + 1 reads as 2^53 (as in JavaScript), the last exact
            // integer; past it a float keeps its float spelling.
            r#""e":{"type":"string","default":9007199254740992},"#,
            r#""g":{"type":"string","default":1e+17},"#,
            r#""f":{"type":"string","default":12}}"#
        )
    );
}
