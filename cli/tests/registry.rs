//! `objectstack-ai registry`: text and JSON output.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

mod common;

use std::process::Output;

use common::{root, stdout_ok as stdout};

fn run(args: &[&str]) -> Output {
    common::run("registry", args)
}

#[test]
fn text_is_the_default_and_lists_every_name() {
    let text = stdout(&run(&[]));
    assert_eq!(text, stdout(&run(&["--format", "text"])));
    insta::assert_snapshot!("registry_text", text);
    for name in objectstack_registry::all_names() {
        assert!(text.contains(&format!("\n  {name}\n")), "{name}");
    }
}

#[test]
fn json_is_the_committed_export() {
    let json = stdout(&run(&["--format", "json"]));
    let committed = std::fs::read_to_string(root().join("registry/platform-tools.json")).unwrap();
    assert_eq!(json, committed);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["total"], 35);
}

#[test]
fn an_unknown_format_exits_2() {
    let out = run(&["--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("yaml"));
}
