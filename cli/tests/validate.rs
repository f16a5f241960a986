//! `objectstack-ai validate`: output formats, exit codes, unusable input.

#![allow(clippy::unwrap_used)]

mod common;

use std::process::Output;

use common::{root, stdout};

use serde_json::{Value, json};

fn run(args: &[&str]) -> Output {
    common::run("validate", args)
}

fn temp_file(name: &str, bytes: &[u8]) -> String {
    common::temp_file("validate", name, bytes)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn good_examples_pass() {
    let out = run(&["examples/todo-app.json", "examples/hotcrm-skills.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        "examples/todo-app.json: ok\nexamples/hotcrm-skills.json: ok\n2 files checked: 0 errors, 0 warnings\n"
    );
}

#[test]
fn broken_example_human_output() {
    let out = run(&["examples/broken-stack.json"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("broken_stack_human", stdout(&out));
}

#[test]
fn broken_example_json_output() {
    let out = run(&["examples/broken-stack.json", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["version"], 1);
    assert_eq!(report["files"][0]["status"], "invalid");
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(
        (
            report["summary"]["errors"].clone(),
            report["summary"]["warnings"].clone()
        ),
        (json!(30), json!(1)),
        "examples/README.md says 30 errors and 1 warning: update it with the example"
    );
    assert_eq!(diagnostics.len(), 31);
    // Every diagnostic points at real text: its span starts where line and
    // column say.
    let text = std::fs::read_to_string(root().join("examples/broken-stack.json")).unwrap();
    for d in diagnostics {
        let start = d["start"].as_u64().unwrap() as usize;
        let (line, column) = objectstack_spec::parse::line_column_at(&text, start);
        assert_eq!(
            (
                d["line"].as_u64().unwrap() as usize,
                d["column"].as_u64().unwrap() as usize
            ),
            (line, column),
            "{d}"
        );
        for key in ["id", "severity", "file", "path", "message", "fix"] {
            assert!(d[key].is_string(), "{key} in {d}");
        }
    }
    insta::assert_json_snapshot!("broken_stack_json", report);
}

#[test]
fn malformed_json_reports_line_and_column() {
    let bad = temp_file("bad.json", b"{\n  \"skills\": [1,\n}\n");
    let out = run(&[&bad]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).starts_with(&format!("error: {bad}:3:1: expected value\n")),
        "{}",
        stdout(&out)
    );
    let out = run(&[&bad, "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["files"][0]["status"], "unusable");
    assert_eq!(report["files"][0]["error"]["line"], 3);
    assert_eq!(report["files"][0]["error"]["column"], 1);
}

#[test]
fn unusable_inputs_are_clear_errors() {
    let cases: Vec<(String, &str)> = vec![
        (
            temp_file("binary.bin", b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe"),
            "not valid UTF-8",
        ),
        (temp_file("nul.json", b"\x00\x00\x00{}"), "binary file"),
        (
            temp_file("latin1.json", b"{\"label\": \"caf\xe9\"}"),
            "1:15: the file is not valid UTF-8",
        ),
        (
            temp_file("deep.json", "[".repeat(200_000).as_bytes()),
            "nests 128 levels deep or more",
        ),
        (
            temp_file("array.json", b"[{\"name\": \"x\"}]"),
            "must be a JSON object at the top level",
        ),
        (temp_file("empty.json", b""), "EOF while parsing"),
        (
            root()
                .join("no-such-file.json")
                .to_string_lossy()
                .into_owned(),
            "cannot read it",
        ),
    ];
    for (file, expected) in &cases {
        let out = run(&[file]);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stdout(&out));
        assert!(
            out.stderr.is_empty(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout(&out).contains(expected), "{file}: {}", stdout(&out));
    }
}

#[test]
fn an_unusable_file_does_not_hide_the_others() {
    let bad = temp_file("partly.json", b"nope");
    let out = run(&["examples/broken-stack.json", &bad, "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["files"][0]["status"], "invalid");
    assert_eq!(report["files"][1]["status"], "unusable");
    assert!(report["summary"]["errors"].as_u64().unwrap() > 10);
}

#[test]
fn compose_reports_names_defined_twice_with_both_files() {
    let crm = temp_file(
        "crm.json",
        br#"{"api": {"v": 1}, "skills": [{"name": "triage", "label": "Triage", "tools": []}]}"#,
    );
    let helpdesk = temp_file(
        "helpdesk.json",
        b"{\"api\": {\"v\": 2},\n \"skills\": {\"triage\": {\"label\": \"Again\", \"tools\": []}}}",
    );
    // One by one, both files are fine.
    assert_eq!(run(&[&crm, &helpdesk]).status.code(), Some(0));
    let out = run(&["--compose", &crm, &helpdesk, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &report["diagnostics"];
    assert_eq!(d.as_array().unwrap().len(), 2, "{report:#}");
    let dup = d
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "spec-duplicate-name")
        .unwrap();
    assert_eq!(dup["file"], helpdesk.as_str());
    assert_eq!(
        (dup["line"].as_u64(), dup["column"].as_u64()),
        (Some(2), Some(13))
    );
    assert_eq!(dup["related"][0]["file"], crm.as_str());
    assert_eq!(dup["related"][0]["path"], "skills[0].name");
    assert!(dup["message"].as_str().unwrap().contains(&crm));
    let conflict = d
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "spec-compose-conflict")
        .unwrap();
    assert_eq!(conflict["severity"], "warning");
}

#[test]
fn huge_minified_file_is_validated_with_clipped_lines() {
    let mut text = String::from("{\"skills\": [");
    for i in 0..40_000 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            "{{\"name\": \"skill_{i}\", \"label\": \"Skill {i}\", \"tools\": [\"query_data\", \"get_record\"]}}"
        ));
    }
    text.push_str(", {\"name\": \"Bad Name\", \"label\": \"x\", \"tools\": \"query_data\"}]}");
    assert!(text.len() > 3_000_000);
    let file = temp_file("huge.json", text.as_bytes());
    let out = run(&[&file]);
    assert_eq!(out.status.code(), Some(1));
    let printed = stdout(&out);
    assert!(printed.contains(&format!("{file}:1:")), "{printed}");
    assert!(
        printed.lines().all(|l| l.chars().count() < 400),
        "{printed}"
    );
    assert!(printed.contains("skills[40000].name"), "{printed}");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&[]).status.code(), Some(2));
    assert_eq!(
        run(&["examples/todo-app.json", "--format", "xml"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn a_minified_file_with_many_problems_is_reported_in_linear_time() {
    // 20,000 problems on one line of more than 50 MB: each diagnostic
    // used to walk the whole line to print its excerpt.
    let mut text = String::from(r#"{"objects":["#);
    for i in 0..20_000 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"name":"o{i}","fields":{{"a":{{"type":"text","required":"yes"}}}}}}"#
        ));
    }
    text.push_str(r#"],"padding":""#);
    text.push_str(&"p".repeat(50 << 20));
    text.push_str(r#""}"#);
    let file = temp_file("minified.json", text.as_bytes());
    drop(text);
    let started = std::time::Instant::now();
    let out = run(&[&file]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1));
    let printed = stdout(&out);
    assert!(
        printed.ends_with("minified.json: 20000 errors, 0 warnings\n"),
        "{}",
        printed.lines().last().unwrap_or_default()
    );
    // Each source line is a window around its problem, not the whole line.
    assert!(
        printed.lines().all(|l| l.chars().count() < 400),
        "a source line is printed whole"
    );
    assert!(
        took < std::time::Duration::from_secs(60),
        "{took:?} for 20,000 problems on one line: the output is not linear"
    );
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn an_empty_file_is_said_to_be_empty() {
    // (validate's human report is on stdout, unusable files included.)
    let said = |out: &Output| format!("{}{}", stdout(out), common::stderr(out));
    for (name, bytes) in [("empty.json", &b""[..]), ("blank.json", b"  \n\t\n")] {
        let file = temp_file(name, bytes);
        let out = run(&[&file]);
        assert_eq!(out.status.code(), Some(2));
        let err = said(&out);
        assert!(
            err.contains("the file is empty (or only whitespace)"),
            "{err}"
        );
    }
    // A file that ends early is not called empty.
    let cut = temp_file("cut.json", b"{\"skills\": ");
    let err = said(&run(&[&cut]));
    assert!(
        err.contains("EOF while parsing") && !err.contains("empty"),
        "{err}"
    );
}

#[test]
fn a_dash_validates_standard_input() {
    let text = std::fs::read(root().join("examples/todo-app.json")).unwrap();
    let out = common::run_with_stdin(&["validate", "-"], &text);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let out = common::run_with_stdin(&["validate", "-"], b"{\"objects\": [1,");
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    let said = format!("{}{}", stdout(&out), common::stderr(&out));
    assert!(said.contains('-') && said.contains("1:"), "{said}");
}
