//! `objectstack-ai lint`, `rules` and `explain`, run as the built binary.

#![allow(clippy::unwrap_used)] // test helpers

mod common;

use std::fs;
use std::path::PathBuf;
use std::process::Output;

use common::{root, run_in, stderr, stdout};

fn run(args: &[&str]) -> Output {
    run_in(&root(), args)
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("lint", name)
}

const HOTCRM: &str = "examples/hotcrm-skills.json";

const EXPOSED: &str = r#""ai": {"exposed": true, "description": "Closes the case the user is looking at, with a resolution note."}"#;

#[test]
fn hotcrm_human_shows_the_ten_findings() {
    let o = run(&["lint", HOTCRM]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.matches("warning[ai-skill-tool-unresolved]").count(), 10);
    assert!(out.ends_with("0 errors, 10 warnings in 1 file\n"), "{out}");
    insta::assert_snapshot!("hotcrm_human", out);
}

#[test]
fn hotcrm_json() {
    let o = run(&["lint", HOTCRM, "--format", "json"]);
    assert_eq!(code(&o), 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["summary"],
        serde_json::json!({"errors": 0, "warnings": 10, "files": 1})
    );
    assert_eq!(v["findings"][0]["path"], "skills[2].tools[0]");
    assert_eq!(v["findings"][0]["ref"], "triage_case");
    assert_eq!(v["findings"][0]["location"]["file"], HOTCRM);
    insta::assert_snapshot!("hotcrm_json", stdout(&o));
}

#[test]
fn hotcrm_github_and_sarif() {
    let o = run(&["lint", HOTCRM, "--format", "github"]);
    assert_eq!(code(&o), 0);
    insta::assert_snapshot!("hotcrm_github", stdout(&o));
    let o = run(&["lint", HOTCRM, "--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 10);
}

#[test]
fn levels_from_the_command_line() {
    let o = run(&["lint", HOTCRM, "--deny", "ai-skill-tool-unresolved"]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("10 errors, 0 warnings"));

    let o = run(&["lint", HOTCRM, "--deny", "warnings"]);
    assert_eq!(code(&o), 1);

    let o = run(&["lint", HOTCRM, "--allow", "ai-skill-tool-unresolved"]);
    assert_eq!(code(&o), 0);
    assert_eq!(stdout(&o), "no findings in 1 file\n");

    // The strictest flag wins for a rule named twice.
    let o = run(&[
        "lint",
        HOTCRM,
        "--allow",
        "ai-skill-tool-unresolved",
        "--deny",
        "ai-skill-tool-unresolved",
    ]);
    assert_eq!(code(&o), 1);

    let o = run(&["lint", HOTCRM, "--deny", "ai-skill-tool-unresolvd"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("did you mean `ai-skill-tool-unresolved`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn config_file_is_found_walking_up_and_can_be_named() {
    let dir = scratch("config");
    let nested = dir.join("app").join("dist");
    fs::create_dir_all(&nested).unwrap();
    fs::copy(root().join(HOTCRM), nested.join("objectstack.json")).unwrap();
    fs::write(
        dir.join("objectstack-lint.toml"),
        "[rules]\nai-skill-tool-unresolved = \"deny\"\n",
    )
    .unwrap();
    let o = run_in(&dir, &["lint", "app/dist/objectstack.json"]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));

    // The command line still wins over the file.
    let o = run_in(
        &dir,
        &[
            "lint",
            "app/dist/objectstack.json",
            "--warn",
            "ai-skill-tool-unresolved",
        ],
    );
    assert_eq!(code(&o), 0);

    let other = dir.join("lenient.toml");
    fs::write(&other, "[rules]\nai-skill-tool-unresolved = \"allow\"\n").unwrap();
    let o = run_in(
        &dir,
        &[
            "lint",
            "app/dist/objectstack.json",
            "--config",
            "lenient.toml",
        ],
    );
    assert_eq!(code(&o), 0);
    assert_eq!(stdout(&o), "no findings in 1 file\n");

    fs::write(&other, "[rules]\nno-such-rule = \"deny\"\n").unwrap();
    let o = run_in(
        &dir,
        &[
            "lint",
            "app/dist/objectstack.json",
            "--config",
            "lenient.toml",
        ],
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("unknown rule `no-such-rule`"),
        "{}",
        stderr(&o)
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn config_file_is_found_from_a_bare_file_name() {
    // `lint billing.json` in a subfolder finds the parent's config, as
    // `lint ./billing.json` does.
    let dir = scratch("config-bare");
    let sub = dir.join("billing");
    fs::create_dir_all(&sub).unwrap();
    fs::copy(root().join(HOTCRM), sub.join("billing.json")).unwrap();
    fs::write(
        dir.join("objectstack-lint.toml"),
        "[rules]\nai-skill-tool-unresolved = \"deny\"\n",
    )
    .unwrap();
    for name in ["billing.json", "./billing.json"] {
        let o = run_in(&sub, &["lint", name]);
        assert_eq!(code(&o), 1, "{name}: {}", stdout(&o));
        assert!(
            stdout(&o).contains("error[ai-skill-tool-unresolved]"),
            "{name}: {}",
            stdout(&o)
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn default_input_is_dist_objectstack_json() {
    let dir = scratch("default");
    let o = run_in(&dir, &["lint"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("dist/objectstack.json"),
        "{}",
        stderr(&o)
    );
    fs::create_dir_all(dir.join("dist")).unwrap();
    fs::copy(root().join(HOTCRM), dir.join("dist/objectstack.json")).unwrap();
    let o = run_in(&dir, &["lint", "--format", "json"]);
    assert_eq!(code(&o), 0);
    assert!(stderr(&o).contains("linting dist/objectstack.json"));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["summary"]["warnings"], 10);
    assert_eq!(
        v["findings"][0]["location"]["file"],
        "dist/objectstack.json"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn baseline_reports_only_new_findings_and_notes_gone_ones() {
    let dir = scratch("baseline");
    let stack = dir.join("stack.json");
    let write = |tools: &str| {
        fs::write(
            &stack,
            format!(
                "{{\"skills\": [{{\"name\": \"s\", \"label\": \"S\", \"tools\": [{tools}]}}]}}\n"
            ),
        )
        .unwrap();
    };
    write("\"ghost_a\", \"ghost_b\"");
    let o = run_in(
        &dir,
        &["lint", "stack.json", "--write-baseline", "baseline.json"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let baseline = fs::read_to_string(dir.join("baseline.json")).unwrap();
    assert!(baseline.contains("\"ref\": \"ghost_a\""), "{baseline}");
    assert!(!baseline.contains("\"line\""));

    let o = run_in(
        &dir,
        &[
            "lint",
            "stack.json",
            "--baseline",
            "baseline.json",
            "--deny",
            "warnings",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(stdout(&o), "no findings in 1 file\n");

    // Reformatted, ghost_b fixed, ghost_c new.
    fs::write(
        &stack,
        "{\n  \"skills\": [\n    {\"name\": \"s\", \"label\": \"S\",\n     \"tools\": [\"ghost_a\", \"ghost_c\"]}\n  ]\n}\n",
    )
    .unwrap();
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
    let refs: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["ref"].as_str().unwrap())
        .collect();
    assert_eq!(refs, ["ghost_c"]);
    assert!(
        stderr(&o).contains("1 baseline entry no longer occurs"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("ghost_b"));

    fs::write(dir.join("bad.json"), "[]").unwrap();
    let o = run_in(&dir, &["lint", "stack.json", "--baseline", "bad.json"]);
    assert_eq!(code(&o), 2);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reports_are_written_in_the_same_run() {
    let dir = scratch("report");
    let sarif = dir.join("lint.sarif");
    let json = dir.join("lint.json");
    let o = run(&[
        "lint",
        HOTCRM,
        "--report",
        &format!("sarif={}", sarif.display()),
        "--report",
        &format!("json={}", json.display()),
    ]);
    assert_eq!(code(&o), 0);
    let s: serde_json::Value = serde_json::from_str(&fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(s["version"], "2.1.0");
    let j: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["summary"]["warnings"], 10);
    let o = run(&["lint", HOTCRM, "--report", "xml=out.xml"]);
    assert_eq!(code(&o), 2);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn several_files_in_parallel_and_composed() {
    let dir = scratch("compose");
    fs::write(
        dir.join("skills.json"),
        r#"{"skills": [{"name": "support", "label": "Support", "tools": ["action_close_case", "ghost"]}]}"#,
    )
    .unwrap();
    fs::write(
        dir.join("actions.json"),
        format!(
            r#"{{"objects": [{{"name": "case", "label": "Case", "actions": [{{"name": "close_case", "label": "Close", "type": "script", "target": "closeCase", {EXPOSED}}}]}}]}}"#
        ),
    )
    .unwrap();
    let refs = |o: &Output| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{} {}",
                    f["location"]["file"].as_str().unwrap(),
                    f["ref"].as_str().unwrap_or("-")
                )
            })
            .collect()
    };
    let o = run_in(
        &dir,
        &["lint", "skills.json", "actions.json", "--format", "json"],
    );
    assert_eq!(code(&o), 0);
    assert_eq!(
        refs(&o),
        ["skills.json action_close_case", "skills.json ghost"]
    );
    let o = run_in(
        &dir,
        &[
            "lint",
            "skills.json",
            "actions.json",
            "--compose",
            "--format",
            "json",
        ],
    );
    assert_eq!(refs(&o), ["skills.json ghost"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["summary"]["files"], 2);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unusable_input_exits_2_but_other_files_are_linted() {
    let dir = scratch("unusable");
    fs::write(dir.join("broken.json"), "{\n  \"skills\": [\n}").unwrap();
    fs::copy(root().join(HOTCRM), dir.join("ok.json")).unwrap();
    let o = run_in(&dir, &["lint", "broken.json", "ok.json"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("broken.json:3:1"), "{}", stderr(&o));
    assert!(stdout(&o).contains("10 warnings in 1 file"));
    let o = run_in(&dir, &["lint", "missing.json"]);
    assert_eq!(code(&o), 2);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_usable_file_prints_no_report() {
    let dir = scratch("nousable");
    fs::write(dir.join("empty.json"), "").unwrap();
    let o = run_in(&dir, &["lint", "empty.json", "missing.json"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stdout(&o),
        "",
        "nothing was linted, so no `no findings` line"
    );
    // An empty file's error points at line 1, column 1 (serde_json says 0).
    assert!(stderr(&o).contains("empty.json:1:1: EOF"), "{}", stderr(&o));
    let o = run_in(&dir, &["lint", "empty.json", "--format", "sarif"]);
    assert_eq!(code(&o), 2);
    assert_eq!(stdout(&o), "");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_baseline_is_not_overwritten_from_partial_input() {
    let dir = scratch("partialbaseline");
    fs::copy(root().join(HOTCRM), dir.join("a.json")).unwrap();
    fs::copy(root().join(HOTCRM), dir.join("b.json")).unwrap();
    let o = run_in(
        &dir,
        &["lint", "a.json", "b.json", "--write-baseline", "base.json"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let before = fs::read(dir.join("base.json")).unwrap();
    fs::write(dir.join("b.json"), "{ \"skills\": [").unwrap();
    let o = run_in(
        &dir,
        &["lint", "a.json", "b.json", "--write-baseline", "base.json"],
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("not writing the baseline"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        fs::read(dir.join("base.json")).unwrap(),
        before,
        "b.json's accepted findings are kept"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_report_never_overwrites_an_input() {
    let dir = scratch("overwrite");
    fs::copy(root().join(HOTCRM), dir.join("stack.json")).unwrap();
    let before = fs::read(dir.join("stack.json")).unwrap();
    for args in [
        &["lint", "stack.json", "--report", "sarif=stack.json"][..],
        &["lint", "stack.json", "--report", "json=./stack.json"],
        &["lint", "stack.json", "--write-baseline", "stack.json"],
    ] {
        let o = run_in(&dir, args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(
            stderr(&o).contains("is one of the files to lint"),
            "{}",
            stderr(&o)
        );
        assert_eq!(
            fs::read(dir.join("stack.json")).unwrap(),
            before,
            "{args:?}"
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn binary_and_deep_files_say_what_they_are() {
    let dir = scratch("binarydeep");
    fs::write(dir.join("bin.json"), b"{\"a\": 1}\0\0\x01").unwrap();
    fs::write(
        dir.join("deep.json"),
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .unwrap();
    fs::write(dir.join("wide.json"), "{\"ééé😀😀\": x}").unwrap();
    let o = run_in(&dir, &["lint", "bin.json", "deep.json", "wide.json"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(err.contains("looks like a binary file"), "{err}");
    assert!(err.contains("nests 128 levels deep or more"), "{err}");
    // Columns count characters, not bytes.
    assert!(err.contains("wide.json:1:11: expected value"), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validation_errors_are_reported_and_fail_the_run() {
    let dir = scratch("spec");
    fs::write(
        dir.join("stack.json"),
        r#"{"skills": [{"name": "s", "label": "S", "tools": "query_data", "prompt": "x"}]}"#,
    )
    .unwrap();
    let o = run_in(&dir, &["lint", "stack.json", "--format", "json"]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rules: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"spec-wrong-type"), "{rules:?}");
    let o = run_in(
        &dir,
        &[
            "lint",
            "stack.json",
            "--allow",
            "spec-wrong-type",
            "--allow",
            "spec-unknown-key",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_key_written_twice_is_a_warning_that_does_not_fail_the_run() {
    let dir = scratch("duplicate-key");
    fs::write(
        dir.join("stack.json"),
        "{\"actions\": [{\"name\": \"purge\", \"ai\": {\n  \"requiresConfirmation\": true,\n  \"requiresConfirmation\": false}}]}",
    )
    .unwrap();
    let o = run_in(&dir, &["lint", "stack.json", "--format", "json"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let findings = v["findings"].as_array().unwrap();
    let found = findings
        .iter()
        .find(|f| f["rule"] == "spec-duplicate-key")
        .unwrap_or_else(|| panic!("{findings:?}"));
    assert_eq!(found["severity"], "warning");
    assert_eq!(found["path"], "actions[0].ai.requiresConfirmation");
    let message = found["message"].as_str().unwrap();
    assert!(message.contains("2:3 and 3:3"), "{message}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rules_lists_every_rule() {
    let o = run(&["rules"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    for id in objectstack_lint_ids() {
        assert!(out.contains(id), "{id} missing from\n{out}");
    }
    insta::assert_snapshot!("rules", out);
}

#[test]
fn rules_as_json_agree_with_the_listing_and_explain() {
    let o = run(&["rules", "--format", "json"]);
    assert_eq!(code(&o), 0);
    let listed: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rules = listed["rules"].as_array().unwrap();
    let text = stdout(&run(&["rules"]));
    // The text's ids, in its order: the first word of each indented line.
    let text_ids: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, text_ids);
    for id in objectstack_lint_ids() {
        let rule = rules.iter().find(|r| r["id"] == id).unwrap();
        assert_eq!(rule["kind"], "lint", "{id}");
    }
    assert!(rules.iter().any(|r| r["kind"] == "validation"));
    for rule in rules {
        let id = rule["id"].as_str().unwrap();
        let severity = rule["defaultSeverity"].as_str().unwrap();
        let summary = rule["summary"].as_str().unwrap();
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap();
        let mut words = line.split_whitespace();
        assert_eq!(words.nth(1), Some(severity), "{line}");
        assert!(line.ends_with(summary), "{line}\n{summary}");
        let explained = stdout(&run(&["explain", id]));
        assert_eq!(
            explained,
            format!(
                "# {id} (default: {severity})\n\n{}\n",
                rule["documentation"].as_str().unwrap()
            )
        );
    }
}

fn objectstack_lint_ids() -> [&'static str; 9] {
    [
        "ai-skill-tool-unresolved",
        "ai-skill-tool-needs-approval",
        "ai-destructive-exposure-undecided",
        "ai-destructive-asserted-safe",
        "ai-tool-record-inert",
        "ai-tool-record-shadows-platform",
        "ai-tool-binding-unresolved",
        "ai-agent-skill-unresolved",
        "ai-skill-surface-mismatch",
    ]
}

#[test]
fn explain_prints_the_doc_or_suggests() {
    for id in objectstack_lint_ids() {
        let o = run(&["explain", id]);
        assert_eq!(code(&o), 0);
        let out = stdout(&o);
        assert!(out.starts_with(&format!("# {id} (default: ")), "{out}");
        assert!(out.contains("## How to fix"));
    }
    let o = run(&["explain", "spec-unknown-key"]);
    assert_eq!(code(&o), 0);
    let o = run(&["explain", "ai-skill-tool-unresolve"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("did you mean `ai-skill-tool-unresolved`?"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn names_that_would_drive_a_terminal_are_escaped_in_the_human_report() {
    let path = common::temp_file(
        "lint",
        "escape.json",
        r#"{"skills": [{"name": "s", "label": "S", "tools": ["ghost\u001b]0;pwned\u0007"]}]}"#,
    );
    let out = common::run("lint", &["--format", "human", &path.to_string_lossy()]);
    let text = stdout(&out);
    assert!(text.contains("ghost\\u001b]0;pwned\\u0007"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
}

#[test]
fn help_and_the_reference_list_every_format() {
    let help = stdout(&run(&["lint", "--help"]));
    let reference = fs::read_to_string(root().join("docs/cli.md")).unwrap();
    let section = reference
        .split("## `objectstack-ai lint`")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap();
    let format_line = section
        .lines()
        .find(|l| l.starts_with("- `--format <FORMAT>`"))
        .unwrap();
    for format in objectstack_lint::render::Format::ALL {
        let name = format.as_str();
        assert!(
            help.contains(&format!("- {name}:")),
            "--help lacks {name}:\n{help}"
        );
        assert!(
            format_line.contains(&format!("`{name}`")),
            "docs/cli.md lacks {name}: {format_line}"
        );
    }
}

#[test]
fn a_lone_surrogate_escape_is_linted_not_refused() {
    // `JSON.parse` keeps `"\ud83d"`, and upstream lints the file; the
    // escape is read as U+FFFD and the file is linted, its findings
    // located in the text as written.
    let dir = scratch("lone-surrogate");
    let path = dir.join("stack.json");
    let text =
        r#"{"skills": [{"name": "triage", "label": "Triage", "tools": ["action_x\ud83d"]}]}"#;
    std::fs::write(&path, text).unwrap();
    let o = run(&["lint", path.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let unresolved: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "ai-skill-tool-unresolved")
        .collect();
    assert_eq!(unresolved.len(), 1, "{v}");
    assert_eq!(unresolved[0]["ref"], "action_x\u{fffd}");
    let at = |key: &str| unresolved[0]["location"][key].as_u64().unwrap() as usize;
    assert_eq!(&text[at("byteStart")..at("byteEnd")], r#""action_x\ud83d""#);
    assert_ne!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn a_dash_reads_the_stack_from_standard_input() {
    let path = "examples/broken-stack.json";
    let text = fs::read(root().join(path)).unwrap();
    let from_file = common::run("lint", &["--format", "json", path]);
    let from_stdin = common::run_with_stdin(&["lint", "--format", "json", "-"], &text);
    assert_eq!(from_stdin.status.code(), from_file.status.code());
    assert_eq!(from_file.status.code(), Some(1), "{}", stderr(&from_file));
    // The same findings, reported against `-`.
    let expected = stdout(&from_file).replace(&format!("\"{path}\""), "\"-\"");
    assert_eq!(stdout(&from_stdin), expected);
}

#[test]
fn a_dash_named_twice_is_refused_with_a_reason() {
    let out = common::run_with_stdin(&["lint", "-", "-"], b"{}");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("standard input (`-`) was already read for another argument"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_file_really_called_dash_is_reported_as_dot_slash_dash() {
    let dir = scratch("dash-file");
    fs::copy(root().join("examples/broken-stack.json"), dir.join("-")).unwrap();
    let out = run_in(&dir, &["lint", "--format", "json", "./-"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let files: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["location"]["file"].as_str().unwrap())
        .collect();
    assert!(!files.is_empty());
    assert!(files.iter().all(|f| *f == "./-"), "{files:?}");
    fs::remove_dir_all(&dir).unwrap();
}
