//! Refined tools (bound tool records, ADR-0109 Phase 2) through the
//! runtime, on `examples/refined-tools.json`: what registers, and that a
//! call is validated against the record's schema, then dispatched exactly
//! as the raw action tool would be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use approval_support::{FakeHost, Seen, obj};
use objectstack_bridge::approval::{ApprovalQueue, MemoryStore};
use objectstack_bridge::materialise::{SkipCode, WarningCode};
use objectstack_bridge::runtime::{Actor, CallContext, RegisterError, ToolRegistry};
use objectstack_spec::AIToolDefinition;
use serde_json::{Map, Value, json};

fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn example() -> Map<String, Value> {
    obj(serde_json::from_str(include_str!("../../examples/refined-tools.json")).unwrap())
}

fn ctx(call: &str) -> CallContext {
    CallContext {
        actor: Some(Actor::new("u1")),
        tool_call_id: Some(call.into()),
        ..CallContext::default()
    }
}

fn registry(host: &Arc<FakeHost>) -> ToolRegistry {
    let queue = Arc::new(ApprovalQueue::new(Arc::new(MemoryStore::new())));
    ToolRegistry::new(host.services(Some(queue)))
}

fn host() -> Arc<FakeHost> {
    let host = FakeHost::new();
    host.add_record("ticket", json!({"id": "t1", "subject": "Printer on fire"}));
    host
}

#[test]
fn the_example_registers_each_refinement_and_skips_each_failure() {
    let stack = example();
    let host = host();
    let mut registry = registry(&host);
    let (m, refused) = registry.register_stack(&stack);
    assert_eq!(refused, vec![]);
    let definitions = registry.definitions();
    let names: Vec<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "close_as_fixed",
            "close_with_reason",
            "hand_over",
            "purge_ticket",
            "renew_customer_contract",
        ]
    );
    let skipped: BTreeMap<String, SkipCode> = m
        .skipped
        .iter()
        .map(|s| (s.tool.clone().unwrap_or_else(|| s.action.clone()), s.code))
        .collect();
    let expected: BTreeMap<String, SkipCode> = [
        ("close_ticket", SkipCode::Superseded),
        ("reassign_ticket", SkipCode::Superseded),
        ("delete_ticket", SkipCode::Superseded),
        ("archive_ticket", SkipCode::NotExposed),
        ("notify_team", SkipCode::Superseded),
        ("export_report", SkipCode::Superseded),
        ("archive_old_ticket", SkipCode::BindingNotExposed),
        ("close_urgent", SkipCode::BindingWidens),
        ("query_records", SkipCode::ShadowsPlatform),
        ("action_export", SkipCode::ShadowsPlatform),
        ("renew_quickly", SkipCode::MissingDescription),
        ("escalate", SkipCode::BindingUnresolved),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(skipped, expected);
    let widens = m
        .skipped
        .iter()
        .find(|s| s.code == SkipCode::BindingWidens)
        .unwrap();
    assert!(widens.reason.contains("`priority`"), "{}", widens.reason);
    assert_eq!(widens.location.to_string(), "tools[6]");
    // Records come after every action, in record order.
    let ordinals: Vec<usize> = m.skipped.iter().map(|s| s.location.ordinal).collect();
    assert!(ordinals.windows(2).all(|w| w[0] < w[1]));
    // `false` never relaxes a gated action: a warning, and the tool is gated.
    assert_eq!(m.warnings.len(), 1);
    assert_eq!(m.warnings[0].code, WarningCode::ConfirmationNotRelaxed);
    assert_eq!(
        registry
            .definition("purge_ticket")
            .unwrap()
            .requires_confirmation,
        Some(true)
    );
    assert_eq!(
        registry
            .definition("hand_over")
            .unwrap()
            .requires_confirmation,
        Some(true)
    );
    // A record without parameters takes its action's.
    assert_eq!(
        Value::Object(registry.definition("hand_over").unwrap().parameters.clone())["required"],
        json!(["recordId", "assignee"])
    );
    let fixed = registry.definition("close_as_fixed").unwrap();
    assert_eq!(fixed.label.as_deref(), Some("Close as fixed"));
    assert_eq!(
        Value::Object(fixed.parameters.clone())["additionalProperties"],
        json!(false)
    );
}

#[test]
fn a_refined_call_is_dispatched_as_the_raw_action_with_its_pins() {
    let stack = example();
    let host = host();
    let mut registry = registry(&host);
    registry.register_stack(&stack);
    let out = block(registry.call(
        "close_as_fixed",
        json!({"recordId": "t1", "note": "New toner"}),
        &ctx("c1"),
    ));
    assert_eq!(out["ok"], json!(true), "{out}");
    // The envelope names the action, as `action_close_ticket`'s would.
    assert_eq!(out["action"], json!("close_ticket"));
    assert_eq!(out["objectName"], json!("ticket"));
    let seen = host.seen();
    assert!(matches!(&seen[0], Seen::Find { object, id, .. } if object == "ticket" && id == "t1"));
    let Seen::Script(request) = &seen[1] else {
        panic!("{seen:?}")
    };
    assert_eq!(request.action, "close_ticket");
    assert_eq!(request.target.as_deref(), Some("closeTicket"));
    // The pinned resolution is sent; the hidden parameters are not.
    assert_eq!(
        request.params,
        obj(json!({"note": "New toner", "resolution": "fixed"}))
    );
}

#[test]
fn a_refined_call_outside_the_record_schema_never_runs() {
    let stack = example();
    let host = host();
    let mut registry = registry(&host);
    registry.register_stack(&stack);
    for (tool, args) in [
        // `hours` exists on the action but the record hides it.
        ("close_as_fixed", json!({"recordId": "t1", "hours": 2})),
        // The record narrows the enum.
        (
            "close_with_reason",
            json!({"recordId": "t1", "resolution": "fixed"}),
        ),
        // Pinned: another value is refused.
        (
            "close_as_fixed",
            json!({"recordId": "t1", "resolution": "wontfix"}),
        ),
    ] {
        let out = block(registry.call(tool, args.clone(), &ctx("c2")));
        assert_eq!(out["ok"], json!(false), "{tool} {args}: {out}");
        assert!(out["violations"].is_array(), "{out}");
    }
    assert_eq!(host.seen(), vec![]);
}

#[test]
fn gated_refinements_are_queued_and_flows_go_to_the_automation_service() {
    let stack = example();
    let host = host();
    let mut registry = registry(&host);
    registry.register_stack(&stack);
    let out = block(registry.call(
        "hand_over",
        json!({"recordId": "t1", "assignee": "ana"}),
        &ctx("c3"),
    ));
    assert_eq!(out["status"], json!("pending_approval"), "{out}");
    assert_eq!(out["action"], json!("reassign_ticket"));
    assert!(host.dispatches().is_empty());

    let out = block(registry.call("renew_customer_contract", json!({}), &ctx("c4")));
    assert_eq!(out["ok"], json!(true), "{out}");
    let Seen::Flow(request) = &host.dispatches()[0] else {
        panic!("{:?}", host.dispatches())
    };
    assert_eq!(request.flow, "renew_contract");
}

#[test]
fn the_registry_refuses_a_refinement_that_shadows_the_platform() {
    let host = host();
    let mut registry = registry(&host);
    let stack = example();
    let (m, _) = registry.register_stack(&stack);
    let refined = m.registered.iter().find(|r| r.refines.is_some()).unwrap();
    for name in ["query_records", "action_close_ticket"] {
        let definition = AIToolDefinition {
            name: name.into(),
            ..refined.definition.clone()
        };
        let refused = registry.register_refinement(
            definition,
            refined.action.clone().into_owned(),
            refined.refines.as_ref().unwrap(),
        );
        assert!(
            matches!(&refused, Err(RegisterError::Reserved { tool, .. }) if tool == name),
            "{refused:?}"
        );
    }
}
