//! `objectstack-ai lint --baseline`: entries keyed by content, so editing
//! a stack around its accepted findings keeps them accepted; version-1
//! (positional) baselines are still read.

#![allow(clippy::unwrap_used)] // test helpers

mod common;

use std::fs;

use common::{run_in, scratch, stderr, stdout};

fn code(o: &std::process::Output) -> Option<i32> {
    o.status.code()
}

fn skill(name: &str, tools: &[&str]) -> serde_json::Value {
    serde_json::json!({"name": name, "label": name, "tools": tools})
}

#[test]
fn inserting_a_skill_at_the_top_keeps_the_accepted_findings() {
    let dir = scratch("baseline", "insert");
    let stack = dir.join("stack.json");
    let write = |skills: Vec<serde_json::Value>| {
        let doc = serde_json::json!({ "skills": skills });
        fs::write(&stack, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    };
    write(vec![
        skill("billing", &["ghost_a"]),
        skill("support", &["ghost_b"]),
    ]);
    let o = run_in(
        &dir,
        &["lint", "stack.json", "--write-baseline", "baseline.json"],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let baseline = fs::read_to_string(dir.join("baseline.json")).unwrap();
    assert!(baseline.contains("\"version\": 2"), "{baseline}");
    assert!(
        baseline.contains(r#""where": "skill \"support\" · tools""#),
        "{baseline}"
    );
    assert!(!baseline.contains("skills["), "no positions: {baseline}");

    // A skill inserted at the top moves every index.
    write(vec![
        skill("first", &["query_data"]),
        skill("billing", &["ghost_a"]),
        skill("support", &["ghost_b"]),
    ]);
    let args = [
        "lint",
        "stack.json",
        "--baseline",
        "baseline.json",
        "--deny",
        "warnings",
    ];
    let o = run_in(&dir, &args);
    assert_eq!(code(&o), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o), "no findings in 1 file\n");
    assert!(
        stderr(&o).contains("2 finding(s) accepted"),
        "{}",
        stderr(&o)
    );

    // The same name again in the same skill is new; renaming a skill makes
    // its findings new and names the entries that are gone.
    write(vec![
        skill("billing", &["ghost_a", "ghost_a"]),
        skill("helpdesk", &["ghost_b"]),
    ]);
    let o = run_in(
        &dir,
        &[
            "lint",
            "stack.json",
            "--baseline",
            "baseline.json",
            "--format",
            "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let new: Vec<(&str, &str)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["ref"].as_str().unwrap()))
        .collect();
    assert_eq!(
        new,
        [
            ("skills[0].tools[1]", "ghost_a"),
            ("skills[1].tools[0]", "ghost_b")
        ]
    );
    let err = stderr(&o);
    assert!(err.contains("1 baseline entry no longer occurs"), "{err}");
    assert!(
        err.contains("  stack.json skill \"support\" · tools ai-skill-tool-unresolved (ghost_b)"),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_version_1_baseline_is_read_by_position_with_a_note() {
    let dir = scratch("baseline", "v1");
    fs::write(
        dir.join("stack.json"),
        r#"{"skills": [{"name": "s", "label": "S", "tools": ["ghost_a", "ghost_b"]}]}"#,
    )
    .unwrap();
    fs::write(
        dir.join("old.json"),
        r#"{"version": 1, "entries": [
            {"rule": "ai-skill-tool-unresolved", "file": "stack.json",
             "path": "skills[0].tools[0]", "ref": "ghost_a"}]}"#,
    )
    .unwrap();
    let o = run_in(
        &dir,
        &[
            "lint",
            "stack.json",
            "--baseline",
            "old.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["findings"].as_array().unwrap().len(), 1);
    assert_eq!(v["findings"][0]["ref"], "ghost_b");
    let err = stderr(&o);
    assert!(err.contains("old.json is a version-1 baseline"), "{err}");
    assert!(err.contains("--write-baseline old.json"), "{err}");

    // A version-2 entry that lost its `where` is refused with a way out.
    fs::write(
        dir.join("broken.json"),
        r#"{"version": 2, "entries": [{"rule": "r", "file": "stack.json"}]}"#,
    )
    .unwrap();
    let o = run_in(&dir, &["lint", "stack.json", "--baseline", "broken.json"]);
    assert_eq!(code(&o), Some(2));
    assert!(
        stderr(&o).contains("entry 0 has no `where`"),
        "{}",
        stderr(&o)
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_baseline_and_a_config_can_come_from_standard_input() {
    let stack = common::root().join("examples/broken-stack.json");
    let stack = stack.to_str().unwrap();
    let all = common::run("lint", &["--format", "json", stack]);
    let all: serde_json::Value = serde_json::from_str(&stdout(&all)).unwrap();
    let total = all["findings"].as_array().unwrap().len();
    assert!(total > 0);

    let base = scratch("stdin-baseline", "dir").join("base.json");
    let wrote = common::run("lint", &["--write-baseline", base.to_str().unwrap(), stack]);
    assert_eq!(code(&wrote), Some(0), "{}", stderr(&wrote));
    let out = common::run_with_stdin(
        &["lint", "--baseline", "-", "--format", "json", stack],
        &fs::read(&base).unwrap(),
    );
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let left: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(left["findings"].as_array().unwrap().len(), 0);
    assert!(stderr(&out).contains("accepted by the baseline -"));

    let config = b"[rules]\n\"ai-skill-tool-unresolved\" = \"allow\"\n";
    let out = common::run_with_stdin(
        &["lint", "--config", "-", "--format", "json", stack],
        config,
    );
    let configured: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let findings = configured["findings"].as_array().unwrap();
    assert!(findings.len() < total, "{}", stderr(&out));
    assert!(
        findings
            .iter()
            .all(|f| f["rule"] != "ai-skill-tool-unresolved")
    );
}
