//! `objectstack-ai conform`: dumps, the stack check, formats, exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

mod common;

use std::process::Output;

use common::{stderr, stdout};

use serde_json::{Value, json};

fn run(args: &[&str]) -> Output {
    common::run("conform", args)
}

fn temp_file(name: &str, content: &str) -> String {
    common::temp_file("conform", name, content)
        .to_string_lossy()
        .into_owned()
}

const TODO: &str = "examples/todo-app.json";

fn service_ai() -> Vec<&'static str> {
    objectstack_registry::group("service-ai")
        .unwrap()
        .names
        .to_vec()
}

fn studio() -> Vec<&'static str> {
    objectstack_registry::group("service-ai-studio")
        .unwrap()
        .names
        .to_vec()
}

/// What a runtime serving the todo example registers without an approval
/// queue: the static tools and five materialised ones.
fn todo_runtime() -> Vec<&'static str> {
    let mut names = service_ai();
    names.extend([
        "action_clone_task",
        "action_complete_task",
        "action_export_csv",
        "action_mass_complete",
        "action_start_task",
    ]);
    names
}

#[test]
fn a_correct_dump_exits_0() {
    let file = temp_file("correct.json", &json!(studio()).to_string());
    let out = run(&["--package", "service-ai-studio", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let n = studio().len();
    assert_eq!(
        stdout(&out),
        format!(
            "package `service-ai-studio` conforms: its {n} registered names match the {n} curated names\n"
        )
    );
}

#[test]
fn one_missing_and_one_extra_name_are_printed_with_the_fix_and_exit_1() {
    let mut names = studio();
    names.retain(|n| *n != "load_tools");
    names.push("load_skills");
    let file = temp_file("drift.json", &json!(names).to_string());
    let out = run(&["--package", "service-ai-studio", &file]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    insta::assert_snapshot!("conform_missing_and_extra", text);
    assert!(text.contains("    + load_skills\n"), "{text}");
    assert!(text.contains("    - load_tools\n"), "{text}");
    assert!(
        text.contains("add `load_skills` to the `service-ai-studio` group in registry/src/lib.rs")
    );
    assert!(
        text.contains(
            "remove `load_tools` from the `service-ai-studio` group in registry/src/lib.rs"
        )
    );
}

#[test]
fn a_dump_of_tool_definitions_is_read() {
    let tools: Vec<Value> = service_ai()
        .into_iter()
        .map(|name| json!({"name": name, "description": "A tool.", "parameters": {"type": "object"}}))
        .collect();
    let file = temp_file(
        "definitions.json",
        &json!({"runtime": "service-ai", "tools": tools}).to_string(),
    );
    let out = run(&["--package", "service-ai", &file]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );

    let file = temp_file(
        "names-in-tools.json",
        &json!({"tools": service_ai()}).to_string(),
    );
    assert_eq!(
        run(&["--package", "service-ai", &file]).status.code(),
        Some(0)
    );
}

#[test]
fn json_format_reports_every_category() {
    let mut names = service_ai();
    names.retain(|n| *n != "get_record");
    names.extend([
        "forecast_revenue",
        "describe_object",
        "action_x",
        "query_data",
    ]);
    let file = temp_file("all.json", &json!(names).to_string());
    let out = run(&["--package", "service-ai", "--format", "json", &file]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["package"], json!("service-ai"));
    assert_eq!(v["conformant"], json!(false));
    assert_eq!(v["registeredNotCurated"], json!(["forecast_revenue"]));
    assert_eq!(v["curatedNotRegistered"], json!(["get_record"]));
    assert_eq!(
        v["ownedByAnotherPackage"],
        json!([{"name": "describe_object", "owner": "service-ai-studio"}])
    );
    assert_eq!(
        v["underFamilyPrefix"],
        json!([{"name": "action_x", "prefix": "action_"}])
    );
    assert_eq!(
        v["registeredTwice"],
        json!([{"name": "query_data", "times": 2}])
    );
    assert!(v.get("materialised").is_none());
    assert_eq!(v["fixes"].as_array().unwrap().len(), 6);
}

#[test]
fn the_stack_check_passes_a_matching_runtime() {
    let file = temp_file("todo-runtime.json", &json!(todo_runtime()).to_string());
    let out = run(&["--package", "service-ai", &file, "--stack", TODO]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("conform: 5 registered, 5 expected from the stack"),
        "{text}"
    );
    assert!(
        text.contains("= action_delete_completed (objects[0].actions[6]: `confirmText`)"),
        "{text}"
    );
}

#[test]
fn the_stack_check_both_ways() {
    // Registered without an action behind it, and an action not registered.
    let mut names = todo_runtime();
    names.retain(|n| *n != "action_start_task");
    names.push("action_forecast");
    let file = temp_file("todo-drift.json", &json!(names).to_string());
    let out = run(&[
        "--package",
        "service-ai",
        &file,
        "--stack",
        TODO,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let family = &v["materialised"];
    assert_eq!(family["approval"], json!("not_wired"));
    assert_eq!(family["unexpected"][0]["name"], json!("action_forecast"));
    assert_eq!(family["unexpected"][0]["code"], json!("no_such_action"));
    assert_eq!(
        family["missing"],
        json!([{"name": "action_start_task", "path": "objects[0].actions[1]"}])
    );
    assert_eq!(
        v["underFamilyPrefix"],
        json!([]),
        "with a stack, family names are not static"
    );
}

#[test]
fn approval_makes_confirmation_gated_actions_expected() {
    let file = temp_file("todo-approval.json", &json!(todo_runtime()).to_string());
    let out = run(&[
        "--package",
        "service-ai",
        &file,
        "--stack",
        TODO,
        "--approval",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("approval queue wired"), "{text}");
    assert!(
        text.contains("    + action_delete_completed (objects[0].actions[6])\n"),
        "{text}"
    );
    assert!(
        text.contains("register `action_delete_completed` for action `delete_completed`"),
        "{text}"
    );

    let mut names = todo_runtime();
    names.push("action_delete_completed");
    let file = temp_file("todo-approval-ok.json", &json!(names).to_string());
    let out = run(&[
        "--package",
        "service-ai",
        &file,
        "--stack",
        TODO,
        "--approval",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // Without the queue, the same registration is unexpected.
    let out = run(&["--package", "service-ai", &file, "--stack", TODO]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out)
            .contains("needs confirmation (`confirmText`) but the approval queue is not wired")
    );
}

#[test]
fn an_unknown_package_exits_2_and_lists_the_known_ones() {
    let file = temp_file("any.json", "[]");
    let out = run(&["--package", "service-crm", &file]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("unknown package `service-crm`"), "{err}");
    assert!(err.contains("service-ai, service-ai-studio"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn unusable_dumps_exit_2_and_say_where() {
    let cases = [
        ("not-json.json", "[\"query_data\",\n  oops]", "2:3"),
        ("wrong-shape.json", "\"query_data\"", "the dump is a string"),
        ("no-tools.json", "{\"names\": []}", "`tools` is missing"),
        (
            "bad-entry.json",
            "{\"tools\": [\"a\", {\"label\": \"b\"}]}",
            "`tools[1].name` is missing",
        ),
        ("number.json", "[\"a\", 3]", "`[1]` is a number"),
    ];
    for (name, content, expected) in cases {
        let file = temp_file(name, content);
        let out = run(&["--package", "service-ai", &file]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = stderr(&out);
        assert!(err.starts_with("error: "), "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
        assert!(err.contains(expected), "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}");
    }
    let out = run(&["--package", "service-ai", "no/such/dump.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read no/such/dump.json"));
}

#[test]
fn an_unusable_stack_exits_2() {
    let file = temp_file("ok.json", &json!(service_ai()).to_string());
    let stack = temp_file("stack-array.json", "[1, 2]");
    let out = run(&["--package", "service-ai", &file, "--stack", &stack]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("stack-array.json"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn approval_requires_a_stack() {
    let file = temp_file("ok2.json", &json!(service_ai()).to_string());
    let out = run(&["--package", "service-ai", &file, "--approval"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--stack"), "{}", stderr(&out));
}

#[test]
fn the_package_is_required() {
    let file = temp_file("ok3.json", "[]");
    let out = run(&[&file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--package"), "{}", stderr(&out));
}
