//! `objectstack-ai capabilities`: formats, `--agent`, exit codes.

#![allow(clippy::unwrap_used)] // test helpers

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{stderr, stdout_ok as stdout};

use serde_json::Value;

const FIXTURE: &str = "lint/tests/data/capabilities/support.json";
const HOTCRM: &str = "examples/hotcrm-skills.json";

fn run(args: &[&str]) -> Output {
    common::run("capabilities", args)
}

fn temp_file(name: &str, content: &str) -> PathBuf {
    common::temp_file("capabilities", name, content)
}

#[test]
fn text_is_the_default_format() {
    let out = stdout(&run(&[FIXTURE]));
    assert_eq!(out, stdout(&run(&[FIXTURE, "--format", "text"])));
    insta::assert_snapshot!("capabilities_fixture_text", out);
}

#[test]
fn every_format_prints_and_exits_zero() {
    let json: Value = serde_json::from_str(&stdout(&run(&[FIXTURE, "--format", "json"]))).unwrap();
    assert_eq!(json["summary"]["agents"], 2);
    assert_eq!(json["summary"]["needsApproval"], 1);
    let dot = stdout(&run(&[FIXTURE, "--format", "dot"]));
    assert!(dot.starts_with("digraph capabilities {"));
    assert!(dot.trim_end().ends_with('}'));
    let mermaid = stdout(&run(&[FIXTURE, "--format", "mermaid"]));
    assert!(mermaid.starts_with("flowchart LR\n"));
}

#[test]
fn agent_filter_shows_one_agent() {
    let out = run(&[FIXTURE, "--agent", "studio_helper", "--format", "json"]);
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let agents = json["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1);
    assert_eq!(agents[0]["name"], "studio_helper");
    assert_eq!(json["unattached"], Value::Null);
    insta::assert_snapshot!(
        "capabilities_studio_helper_dot",
        stdout(&run(&[
            FIXTURE,
            "--agent",
            "studio_helper",
            "--format",
            "dot"
        ]))
    );
}

#[test]
fn unknown_agent_exits_2_and_lists_the_known_ones() {
    let out = run(&[FIXTURE, "--agent", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(err.contains("no agent named \"nobody\""), "{err}");
    assert!(
        err.contains("known agents: support_desk, studio_helper"),
        "{err}"
    );

    let out = run(&[HOTCRM, "--agent", "ask"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("defines no agents"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_stack_without_agents_lists_its_skills_as_unattached() {
    let out = stdout(&run(&[HOTCRM]));
    assert!(out.starts_with("unattached skills"), "{out}");
    assert!(out.contains("dead references: 10"), "{out}");
    let json: Value = serde_json::from_str(&stdout(&run(&[HOTCRM, "--format", "json"]))).unwrap();
    assert_eq!(json["agents"].as_array().unwrap().len(), 0);
    assert_eq!(json["unattached"]["skills"].as_array().unwrap().len(), 6);
    assert_eq!(json["summary"]["deadReferences"], 10);
}

#[test]
fn unusable_input_exits_2() {
    let out = run(&["does/not/exist.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));

    let broken = temp_file("broken.json", "{\"skills\": [");
    let out = run(&[broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());

    let array = temp_file("array.json", "[1, 2]");
    assert_eq!(run(&[array.to_str().unwrap()]).status.code(), Some(2));
}

#[test]
fn bad_usage_exits_2() {
    assert_eq!(run(&[FIXTURE, "--format", "svg"]).status.code(), Some(2));
    assert_eq!(run(&[]).status.code(), Some(2));
}

#[test]
fn junk_shapes_are_shown_not_refused() {
    let junk = temp_file(
        "junk.json",
        r#"{"agents": 3, "skills": [null, {"name": "s", "tools": [1, "query_data", "x*"]}]}"#,
    );
    let out = stdout(&run(&[junk.to_str().unwrap(), "--format", "mermaid"]));
    assert!(out.contains("query_data"), "{out}");
    assert!(out.contains("wildcard_empty"), "{out}");
}

#[test]
fn names_that_would_drive_a_terminal_are_escaped_in_the_text_view() {
    let path = temp_file(
        "escape.json",
        r#"{"skills": [{"name": "s\u001b[31m", "label": "S", "tools": ["query_records"]}]}"#,
    );
    let text = stdout(&run(&[path.to_str().unwrap()]));
    assert!(text.contains("s\\u001b[31m"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
}
