//! The todo example behaves as ADR-0011 Phase 2 says, and its definitions
//! and projections are pinned by snapshots.

#![allow(clippy::unwrap_used)]

mod common;

use common::materialise;
use common::{
    check_anthropic_strict, check_mcp_tool, check_openai_strict, check_schema, todo_stack,
};
use objectstack_bridge::materialise::{Materialised, SkipCode, Wiring};
use objectstack_bridge::projection::{anthropic, mcp, openai};
use serde_json::Value;

const PHASE_2: &[&str] = &[
    "action_complete_task",
    "action_start_task",
    "action_clone_task",
    "action_mass_complete",
    "action_export_csv",
];

fn names(m: &Materialised<'_>) -> Vec<String> {
    m.definitions().map(|d| d.name.clone()).collect()
}

fn skipped(m: &Materialised<'_>) -> Vec<(String, SkipCode)> {
    m.skipped
        .iter()
        .map(|s| (s.action.clone(), s.code))
        .collect()
}

#[test]
fn phase_2_without_the_approval_queue() {
    let stack = todo_stack();
    let m = materialise(&stack, Some(&Wiring::NONE), &|_| false);
    assert_eq!(names(&m), PHASE_2);
    assert_eq!(
        skipped(&m),
        [
            ("defer_task".to_owned(), SkipCode::NotExposed),
            ("set_reminder".to_owned(), SkipCode::NotExposed),
            (
                "delete_completed".to_owned(),
                SkipCode::RequiresConfirmation
            ),
        ]
    );
    assert!(m.warnings.is_empty());
    assert!(
        m.registered
            .iter()
            .all(|r| r.definition.requires_confirmation == Some(false))
    );
    insta::assert_json_snapshot!("todo_without_approval", m);
}

#[test]
fn phase_2_with_the_approval_queue() {
    let stack = todo_stack();
    let approval = Wiring {
        approval: true,
        ..Wiring::NONE
    };
    let m = materialise(&stack, Some(&approval), &|_| false);
    let mut expected: Vec<&str> = PHASE_2.to_vec();
    expected.insert(4, "action_delete_completed");
    assert_eq!(names(&m), expected);
    let delete = &m.registered[4];
    assert_eq!(delete.definition.requires_confirmation, Some(true));
    assert_eq!(
        skipped(&m),
        [
            ("defer_task".to_owned(), SkipCode::NotExposed),
            ("set_reminder".to_owned(), SkipCode::NotExposed),
        ]
    );
    for d in m.definitions() {
        check_schema(&Value::Object(d.parameters.clone())).unwrap();
    }
    insta::assert_json_snapshot!("todo_definitions", m.definitions().collect::<Vec<_>>());
}

fn with_approval() -> Materialised<'static> {
    let approval = Wiring {
        approval: true,
        ..Wiring::NONE
    };
    materialise(&todo_stack(), Some(&approval), &|_| false)
}

#[test]
fn mcp_projection() {
    let m = with_approval();
    let projected = mcp::tools(&m.registered);
    assert!(projected.warnings.is_empty(), "{:?}", projected.warnings);
    let value = serde_json::json!({ "tools": projected.tools });
    for tool in value["tools"].as_array().unwrap() {
        check_mcp_tool(tool).unwrap();
    }
    let delete = &value["tools"][4];
    assert_eq!(delete["annotations"]["destructiveHint"], true);
    insta::assert_json_snapshot!("todo_mcp", value);
}

#[test]
fn openai_projection() {
    let m = with_approval();
    let projected = openai::tools(m.definitions());
    assert!(projected.warnings.is_empty(), "{:?}", projected.warnings);
    for tool in &projected.tools {
        check_openai_strict(&Value::Object(tool.function.parameters.clone())).unwrap();
    }
    insta::assert_json_snapshot!("todo_openai", projected.tools);
}

#[test]
fn anthropic_projection() {
    let m = with_approval();
    let projected = anthropic::tools(m.definitions(), anthropic::Options::default());
    assert!(projected.warnings.is_empty(), "{:?}", projected.warnings);
    insta::assert_json_snapshot!("todo_anthropic", projected.tools);
    let strict = anthropic::tools(m.definitions(), anthropic::Options { strict: true });
    assert!(strict.warnings.is_empty(), "{:?}", strict.warnings);
    for tool in &strict.tools {
        check_anthropic_strict(&Value::Object(tool.input_schema.clone())).unwrap();
    }
    insta::assert_json_snapshot!("todo_anthropic_strict", strict.tools);
}
