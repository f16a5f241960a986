//! `examples/refined-tools.json` (ADR-0109 Phase 2) behaves as
//! `examples/README.md` describes through `validate`, `lint`, `tools` (every
//! format), `capabilities` and `conform`.

#![allow(clippy::unwrap_used)]

mod common;

use serde_json::Value;

const EXAMPLE: &str = "examples/refined-tools.json";
const REFINED: [&str; 5] = [
    "close_as_fixed",
    "close_with_reason",
    "hand_over",
    "purge_ticket",
    "renew_customer_contract",
];

fn json(out: &std::process::Output) -> Value {
    serde_json::from_str(&common::stdout(out)).unwrap()
}

#[test]
fn validate_accepts_it() {
    let out = common::run("validate", &[EXAMPLE]);
    assert_eq!(common::stdout_ok(&out), "examples/refined-tools.json: ok\n");
}

#[test]
fn lint_reports_each_failure_with_its_rule() {
    let out = common::run("lint", &[EXAMPLE, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    let report = json(&out);
    let findings = report
        .as_array()
        .or_else(|| report["findings"].as_array())
        .unwrap();
    let got: Vec<(&str, &str)> = findings
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "ai-tool-binding-relaxes-confirmation",
                "tools[3].requiresConfirmation"
            ),
            ("ai-tool-binding-unexposed", "tools[5].binding.name"),
            (
                "ai-tool-binding-widens",
                "tools[6].parameters.properties.priority"
            ),
            ("ai-tool-record-shadows-platform", "tools[7].name"),
            ("ai-tool-record-shadows-platform", "tools[8].name"),
            ("ai-tool-binding-unexposed", "tools[9].description"),
            ("ai-tool-binding-unresolved", "tools[10].binding.name"),
            ("ai-skill-tool-superseded", "skills[0].tools[4]"),
        ]
    );
}

#[test]
fn tools_registers_the_refinements_in_every_format() {
    let wired = ["--automation", "--approval"];
    let out = common::run("tools", &[EXAMPLE, wired[0], wired[1]]);
    let v = json(&out);
    let names: Vec<&str> = v["registered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, REFINED);
    let codes: Vec<(&str, &str)> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["tool"].as_str().or(s["action"].as_str()).unwrap(),
                s["code"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(codes.contains(&("close_ticket", "superseded")), "{codes:?}");
    assert!(
        codes.contains(&("close_urgent", "binding_widens")),
        "{codes:?}"
    );
    assert!(
        codes.contains(&("query_records", "shadows_platform")),
        "{codes:?}"
    );
    for format in ["mcp", "openai", "anthropic"] {
        let out = common::run("tools", &[EXAMPLE, wired[0], wired[1], "--format", format]);
        let text = common::stdout_ok(&out);
        for name in REFINED {
            assert!(text.contains(&format!("\"{name}\"")), "{format}: {name}");
        }
        assert!(
            !text.contains("\"action_"),
            "{format}: a raw tool is projected"
        );
    }
    let out = common::run("tools", &[EXAMPLE, wired[0], wired[1], "--format", "human"]);
    insta::assert_snapshot!("refined_human", common::stdout_ok(&out));
}

#[test]
fn capabilities_uses_the_refined_names_and_marks_the_superseded_one() {
    let out = common::run("capabilities", &[EXAMPLE, "--format", "json"]);
    let v = json(&out);
    let agent = &v["agents"][0];
    let tools: Vec<&str> = agent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, REFINED);
    assert_eq!(agent["deadReferences"][0]["kind"], "tool_superseded");
    assert_eq!(agent["deadReferences"][0]["suggestion"], "close_as_fixed");
    let out = common::run("capabilities", &[EXAMPLE, "--format", "dot"]);
    let dot = common::stdout_ok(&out);
    assert!(dot.contains("binding"), "{dot}");
}

#[test]
fn conform_expects_the_refined_names() {
    let mut names = objectstack_registry::group("service-ai")
        .unwrap()
        .names
        .to_vec();
    names.extend(REFINED);
    let dump = common::temp_file(
        "refined",
        "dump.json",
        serde_json::to_string(&names).unwrap(),
    );
    let dump = dump.to_str().unwrap();
    let ok = ["--package", "service-ai", "--stack", EXAMPLE, "--approval"];
    let out = common::run("conform", &[&[dump][..], &ok[..]].concat());
    assert!(common::stdout_ok(&out).contains("conform: 5 registered, 5 expected"));

    names.push("action_close_ticket");
    let dump = common::temp_file(
        "refined",
        "raw.json",
        serde_json::to_string(&names).unwrap(),
    );
    let out = common::run(
        "conform",
        &[
            &[dump.to_str().unwrap()][..],
            &ok[..],
            &["--format", "json"][..],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["materialised"]["unexpected"][0]["code"], "superseded");
}
