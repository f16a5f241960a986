//! `objectstack-ai tools`: wiring flags, formats, exit codes.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::root;

use serde_json::{Value, json};

fn run(args: &[&str]) -> Output {
    common::run("tools", args)
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_str(&common::stdout_ok(out)).unwrap()
}

fn temp_stack(name: &str, content: &str) -> PathBuf {
    common::temp_file("tools", name, content)
}

const TODO: &str = "examples/todo-app.json";

fn registered(v: &Value) -> Vec<&str> {
    v["registered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect()
}

fn skipped(v: &Value) -> Vec<(&str, &str)> {
    v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["action"].as_str().unwrap(), s["code"].as_str().unwrap()))
        .collect()
}

#[test]
fn todo_with_nothing_wired() {
    let v = stdout_json(&run(&[TODO]));
    assert_eq!(
        v.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["registered", "skipped", "warnings"]
    );
    assert_eq!(
        registered(&v),
        [
            "action_complete_task",
            "action_start_task",
            "action_clone_task",
            "action_mass_complete",
            "action_export_csv"
        ]
    );
    assert_eq!(
        skipped(&v),
        [
            ("defer_task", "not_exposed"),
            ("set_reminder", "not_exposed"),
            ("delete_completed", "requires_confirmation")
        ]
    );
    let s = v["skipped"][2].as_object().unwrap();
    assert_eq!(
        s.keys().collect::<Vec<_>>(),
        ["action", "object", "code", "reason"]
    );
    assert_eq!(s["object"], "todo_task");
    assert_eq!(v["warnings"], json!([]));
}

#[test]
fn todo_with_the_approval_queue() {
    let v = stdout_json(&run(&[TODO, "--approval"]));
    let names = registered(&v);
    assert_eq!(names.len(), 6);
    let delete = v["registered"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "action_delete_completed")
        .unwrap();
    assert_eq!(delete["requiresConfirmation"], true);
    assert_eq!(
        skipped(&v),
        [
            ("defer_task", "not_exposed"),
            ("set_reminder", "not_exposed")
        ]
    );
}

#[test]
fn todo_human() {
    let out = run(&[TODO, "--format", "human"]);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("todo_human", String::from_utf8(out.stdout).unwrap());
}

const SERVICES: &str = r#"{"objects": [{"name": "deal", "actions": [
  {"name": "sync", "type": "api", "target": "/sync", "locations": ["record_header"],
   "ai": {"exposed": true, "description": "Push one deal to the billing system so invoices match it."}},
  {"name": "score", "type": "flow", "target": "score_flow",
   "ai": {"exposed": true, "description": "Score the pipeline with the forecasting flow and store the results."}},
  {"name": "wipe", "type": "script", "target": "wipe", "variant": "danger",
   "ai": {"exposed": true, "requiresConfirmation": false, "description": "Remove stale draft deals older than one year from the pipeline."}}
]}]}"#;

#[test]
fn wiring_flags() {
    let file = temp_stack("services.json", SERVICES);
    let file = file.to_str().unwrap();
    let v = stdout_json(&run(&[file]));
    assert_eq!(registered(&v), ["action_wipe"]);
    assert_eq!(
        skipped(&v),
        [("sync", "no_api_client"), ("score", "no_automation")]
    );
    assert_eq!(v["warnings"][0]["code"], "destructive_unattended");

    let v = stdout_json(&run(&[file, "--automation"]));
    assert_eq!(registered(&v), ["action_score", "action_wipe"]);
    let v = stdout_json(&run(&[file, "--api"]));
    assert_eq!(registered(&v), ["action_sync", "action_wipe"]);
    let v = stdout_json(&run(&[
        file,
        "--api-base-url",
        "https://api.example.com/v1",
    ]));
    assert_eq!(registered(&v), ["action_sync", "action_wipe"]);
    // `/sync` would leave the base URL's path `/v1/`.
    let v = stdout_json(&run(&[
        file,
        "--api-base-url",
        "https://api.example.com/v1/",
    ]));
    assert_eq!(registered(&v), ["action_wipe"]);
    assert_eq!(skipped(&v)[0], ("sync", "unsafe_api_target"));
}

#[test]
fn projection_formats() {
    let v = stdout_json(&run(&[TODO, "--approval", "--format", "mcp"]));
    let tools = v["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 6);
    assert_eq!(tools[0]["inputSchema"]["type"], "object");
    assert_eq!(tools[4]["annotations"]["destructiveHint"], true);

    let v = stdout_json(&run(&[TODO, "--format", "openai"]));
    assert_eq!(v.as_array().unwrap().len(), 5);
    assert_eq!(v[0]["type"], "function");
    assert_eq!(v[0]["function"]["strict"], true);
    assert_eq!(
        v[0]["function"]["parameters"]["required"],
        json!(["recordId"])
    );

    let v = stdout_json(&run(&[TODO, "--format", "anthropic"]));
    assert_eq!(v[0]["input_schema"]["type"], "object");
    assert!(v[0].get("strict").is_none());
    let v = stdout_json(&run(&[TODO, "--format", "anthropic", "--strict"]));
    assert_eq!(v[0]["strict"], true);
}

#[test]
fn projection_notes_go_to_stderr() {
    let file = temp_stack("notes.json", SERVICES);
    let out = run(&[file.to_str().unwrap(), "--format", "openai"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("warning: wipe:"), "{stderr}");
    assert!(stderr.contains("2 action(s) not registered"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
}

#[test]
fn junk_shapes_are_not_failures() {
    let file = temp_stack(
        "junk.json",
        r#"{"objects": 5, "actions": [null, 3, {"name": 1}]}"#,
    );
    let v = stdout_json(&run(&[file.to_str().unwrap()]));
    assert_eq!(registered(&v).len(), 0);
    assert_eq!(skipped(&v), [("#0", "not_exposed")]);
    let out = run(&[file.to_str().unwrap(), "--format", "human"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_very_long_action_name_renders_in_the_human_table() {
    // `{:<w$}` panics for a width above u16::MAX.
    let name = "a".repeat(70_000);
    let file = temp_stack(
        "long.json",
        &json!({"objects": [{"name": "o", "actions": [
            {"name": name, "label": "L", "type": "script", "target": "t"},
            {"name": "short", "label": "S", "type": "script", "target": "t"}
        ]}]})
        .to_string(),
    );
    let out = run(&[file.to_str().unwrap(), "--format", "human"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let short = text.lines().find(|l| l.starts_with("o.short ")).unwrap();
    assert!(short.contains("skipped: not_exposed"), "{short}");
    assert_eq!(
        short.find("skipped"),
        Some("o.".len() + name.len() + 2),
        "columns stay aligned"
    );
}

#[test]
fn unusable_input_exits_2() {
    let not_json = temp_stack("bad.json", "{\"objects\": [");
    let array = temp_stack("array.json", "[]");
    for args in [
        vec!["no/such/file.json"],
        vec![not_json.to_str().unwrap()],
        vec![array.to_str().unwrap()],
        vec![TODO, "--api", "--api-base-url", "https://x"],
        vec![TODO, "--api-base-url", "ftp://x"],
        vec![TODO, "--api-base-url", "https://"],
        vec![TODO, "--strict"],
        vec![TODO, "--format", "mcp", "--strict"],
        vec![TODO, "--format", "yaml"],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn streamed_json_is_the_library_serialisation() {
    use objectstack_bridge::materialise::{Wiring, materialise};
    for (file, args, wiring) in [
        (TODO, vec![], Wiring::NONE),
        (
            TODO,
            vec!["--automation", "--api", "--approval"],
            Wiring::ALL,
        ),
        (
            "bridge/tests/data/showcase.json",
            vec!["--approval"],
            Wiring {
                approval: true,
                ..Wiring::NONE
            },
        ),
    ] {
        let mut all = vec![file];
        all.extend(args);
        let out = run(&all);
        assert_eq!(out.status.code(), Some(0));
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let arena = objectstack_spec::json::Arena::new();
        let stack = objectstack_spec::json::parse_document(text.as_bytes(), &arena).unwrap();
        let mut expected =
            serde_json::to_vec(&materialise(stack, &arena, Some(&wiring), &|_| false)).unwrap();
        expected.push(b'\n');
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(expected).unwrap()
        );
    }
}

#[test]
fn names_that_would_drive_a_terminal_are_escaped_in_the_human_view() {
    // An action name carrying an escape sequence (clear screen) and a
    // right-to-left override: the table shows them as `\uXXXX`.
    let stack = json!({"actions": [{
        "name": "wipe\u{1b}[2J\u{202e}", "type": "script", "target": "t",
        "ai": {"exposed": true, "description": "Runs the script the user asked for, on one record."}
    }]});
    let path = temp_stack("escape.json", &stack.to_string());
    let out = run(&[path.to_str().unwrap(), "--format", "human"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("wipe\\u001b[2J\\u202e"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text}"
    );
}

/// Two stacks: an object's action in one, a stack-level action in the
/// other (written under names of `test`'s own: tests run in parallel).
fn two_stacks(test: &str) -> (String, String) {
    let a = temp_stack(
        &format!("{test}-a.json"),
        r#"{"objects": [{"name": "task", "actions": [{"name": "complete", "type": "script",
            "target": "completeTask", "ai": {"exposed": true,
            "description": "Mark one task as complete when the user says it is done."}}]}]}"#,
    );
    let b = temp_stack(
        &format!("{test}-b.json"),
        r#"{"actions": [{"name": "archive", "type": "script", "target": "archiveAll",
            "ai": {"exposed": true,
            "description": "Archive every completed task when the user asks to tidy up."}},
            {"name": "purge", "type": "script", "target": "purgeAll"}]}"#,
    );
    (
        a.to_string_lossy().into_owned(),
        b.to_string_lossy().into_owned(),
    )
}

#[test]
fn several_files_are_materialised_each_on_its_own() {
    let (a, b) = two_stacks("several");
    let out = run(&[&a, &b]);
    let text = common::stdout_ok(&out);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["file"], a.as_str());
    assert_eq!(registered(&lines[0]), ["action_complete"]);
    assert_eq!(lines[1]["file"], b.as_str());
    assert_eq!(registered(&lines[1]), ["action_archive"]);
    assert_eq!(skipped(&lines[1]), [("purge", "not_exposed")]);

    let out = run(&[&a, &b, "--format", "human"]);
    let text = common::stdout_ok(&out);
    assert_eq!(text.matches("AI exposure of ").count(), 2, "{text}");
    assert!(text.contains(&format!("AI exposure of {a}\n")), "{text}");
    assert!(text.contains(&format!("AI exposure of {b}\n")), "{text}");

    // One unusable file: the others are still materialised, and exit 2.
    let out = run(&[&a, "no-such-file.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(common::stdout(&out).lines().count(), 1);
    assert!(common::stderr(&out).contains("no-such-file.json"));
}

#[test]
fn compose_materialises_the_files_as_one_stack() {
    let (a, b) = two_stacks("compose");
    let v = stdout_json(&run(&[&a, &b, "--compose"]));
    assert_eq!(
        v.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["registered", "skipped", "warnings"]
    );
    assert_eq!(registered(&v), ["action_complete", "action_archive"]);
    for format in ["mcp", "openai", "anthropic"] {
        let out = run(&[&a, &b, "--compose", "--format", format]);
        let v: Value = serde_json::from_str(&common::stdout_ok(&out)).unwrap();
        let tools = v.get("tools").unwrap_or(&v).as_array().unwrap();
        assert_eq!(tools.len(), 2, "{format}: {v}");
    }
    let out = run(&[&a, &b, "--compose", "--format", "human"]);
    let text = common::stdout_ok(&out);
    assert!(
        text.contains(&format!("AI exposure of the composition of {a}, {b}\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("(actions[1] of the composition, from {b})")),
        "{text}"
    );
}

#[test]
fn compose_reports_a_name_two_files_define_and_exits_1() {
    let (a, _) = two_stacks("duplicate");
    let out = run(&[&a, &a, "--compose"]);
    assert_eq!(out.status.code(), Some(1));
    let err = common::stderr(&out);
    assert!(err.contains("error[spec-duplicate-name]"), "{err}");
    // The tools are still printed: the first registration wins.
    let v: Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    assert_eq!(registered(&v), ["action_complete"]);
    assert_eq!(skipped(&v), [("complete", "name_collision")]);

    let out = run(&[&a, "no-such-file.json", "--compose"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(common::stdout(&out), "");
    assert!(common::stderr(&out).contains("not composing"));
}

#[test]
fn a_model_api_format_takes_several_files_only_composed() {
    let (a, b) = two_stacks("projection");
    for format in ["mcp", "openai", "anthropic"] {
        let out = run(&[&a, &b, "--format", format]);
        assert_eq!(out.status.code(), Some(2), "{format}");
        assert!(common::stderr(&out).contains("--compose"), "{format}");
        assert_eq!(common::stdout(&out), "");
    }
}
