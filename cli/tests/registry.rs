//! `objectstack-ai registry`: text and JSON output.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

mod common;

use std::process::Output;

use common::{root, stdout_ok as stdout};

fn run(args: &[&str]) -> Output {
    common::run("registry", args)
}

/// What `registry` prints, written out from the registry itself (not
/// snapshotted, so adding a name to a group changes no test): the layout
/// is pinned here, the names and counts come from the groups.
fn expected_text() -> String {
    use objectstack_registry::{GROUPS, TOTAL, UPSTREAM_VERSION};
    let mut text = format!(
        "Platform tool names: {TOTAL} in {} packages (as published in @objectstack/spec {UPSTREAM_VERSION})\n",
        GROUPS.len()
    );
    for group in GROUPS {
        text.push_str(&format!("\n{} ({})\n", group.package, group.names.len()));
        for name in group.names {
            text.push_str(&format!("  {name}\n"));
        }
    }
    text.push_str("\nFamilies materialised at run time: action_*\n");
    text
}

#[test]
fn text_is_the_default_and_lists_every_name() {
    let text = stdout(&run(&[]));
    assert_eq!(text, stdout(&run(&["--format", "text"])));
    assert_eq!(text, expected_text());
    assert!(text.contains("\nservice-ai (") && text.contains("\n  aggregate_data\n"));
}

#[test]
fn json_is_the_committed_export() {
    let json = stdout(&run(&["--format", "json"]));
    let committed = std::fs::read_to_string(root().join("registry/platform-tools.json")).unwrap();
    assert_eq!(json, committed);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["total"], objectstack_registry::TOTAL);
}

#[test]
fn an_unknown_format_exits_2() {
    let out = run(&["--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("yaml"));
}
