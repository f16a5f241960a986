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

/// `n` exposed actions and `n` agents, each with its own skill granting
/// `action_*`: every agent may call every action.
fn every_agent_every_action(n: usize) -> String {
    let actions: Vec<Value> = (0..n)
        .map(|i| {
            serde_json::json!({"name": format!("act_{i}"), "type": "script", "target": "t",
                "ai": {"exposed": true, "description": "Does a thing well enough."}})
        })
        .collect();
    let skills: Vec<Value> = (0..n)
        .map(|i| serde_json::json!({"name": format!("skill_{i}"), "tools": ["action_*"]}))
        .collect();
    let agents: Vec<Value> = (0..n)
        .map(
            |i| serde_json::json!({"name": format!("agent_{i}"), "skills": [format!("skill_{i}")]}),
        )
        .collect();
    serde_json::json!({"actions": actions, "skills": skills, "agents": agents}).to_string()
}

#[test]
fn a_wildcard_shared_by_every_agent_is_shown_once_per_agent() {
    // Issue 12, item 13: each agent's `action_*` was listed expanded, so
    // the output (and the time and memory) grew with agents x actions.
    let small = temp_file("nxn200.json", &every_agent_every_action(200));
    let large = temp_file("nxn400.json", &every_agent_every_action(400));
    let input = std::fs::metadata(&large).unwrap().len() as usize;
    for format in ["text", "json", "dot", "mermaid"] {
        let size = |path: &PathBuf| {
            let out = run(&[path.to_str().unwrap(), "--format", format]);
            stdout(&out).len()
        };
        let (at_200, at_400) = (size(&small), size(&large));
        // Twice the stack, about twice the output (quadratic was 4x), and
        // within a few times the input (quadratic was 60x in text).
        assert!(
            at_400 * 10 < at_200 * 25,
            "{format}: {at_200} bytes at 200, {at_400} at 400"
        );
        assert!(at_400 < input * 8, "{format}: {at_400} bytes for {input}");
    }
    let json: Value = serde_json::from_str(&stdout(&run(&[
        large.to_str().unwrap(),
        "--format",
        "json",
    ])))
    .unwrap();
    let agent = &json["agents"][399];
    assert_eq!(agent["toolCount"], 400);
    assert_eq!(agent["tools"].as_array().unwrap().len(), 0);
    assert_eq!(agent["wildcards"][0]["ref"], "action_*");
    assert_eq!(agent["wildcards"][0]["matches"], 400);
    assert_eq!(agent["skills"][0]["tools"][0]["resolves"], Value::Null);
    assert_eq!(json["summary"]["tools"], 400);
    let text = stdout(&run(&[large.to_str().unwrap()]));
    assert!(
        text.contains("    action_*  → 400 tools; via skill_399\n"),
        "{}",
        &text[..400]
    );
}

#[test]
fn expand_wildcards_lists_every_tool() {
    let path = temp_file("nxn20.json", &every_agent_every_action(20));
    let args = [
        path.to_str().unwrap(),
        "--format",
        "json",
        "--expand-wildcards",
    ];
    let json: Value = serde_json::from_str(&stdout(&run(&args))).unwrap();
    assert_eq!(json["expandWildcards"], true);
    let agent = &json["agents"][3];
    let tools = agent["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 20);
    assert_eq!(tools[0]["grantedBy"][0]["ref"], "action_*");
    assert_eq!(
        agent["skills"][0]["tools"][0]["resolves"]
            .as_array()
            .unwrap()
            .len(),
        20
    );
    let text = stdout(&run(&[path.to_str().unwrap(), "--expand-wildcards"]));
    assert!(text.contains("    action_act_19  runs action act_19; via skill_0 (action_*)\n"));
    let dot = stdout(&run(&[
        path.to_str().unwrap(),
        "--format",
        "dot",
        "--expand-wildcards",
    ]));
    let plain = stdout(&run(&[path.to_str().unwrap(), "--format", "dot"]));
    assert!(dot.contains("action_act_19"), "{dot}");
    assert!(!plain.contains("action_act_19"), "{plain}");
}

#[test]
fn several_files_are_shown_one_by_one() {
    let actions = temp_file(
        "actions.json",
        r#"{"actions": [{"name": "ship", "type": "script", "target": "t",
            "ai": {"exposed": true, "description": "Ships the order now."}}]}"#,
    );
    let skills = temp_file(
        "skills.json",
        r#"{"skills": [{"name": "s", "tools": ["action_ship"]}],
            "agents": [{"name": "bot", "skills": ["s"]}]}"#,
    );
    let (a, s) = (actions.to_str().unwrap(), skills.to_str().unwrap());
    let text = stdout(&run(&[a, s]));
    assert!(text.starts_with(&format!("== {a} ==\n\n")), "{text}");
    assert!(text.contains(&format!("\n== {s} ==\n\n")), "{text}");
    // Alone, the skills file names an action it does not have.
    assert!(text.contains("action_ship: DEAD tool_unresolved"), "{text}");
    let json: Value = serde_json::from_str(&stdout(&run(&[a, s, "--format", "json"]))).unwrap();
    let files = json["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[1]["file"], s);
    assert_eq!(files[1]["summary"]["deadReferences"], 1);
    // One graph, a cluster or subgraph per file, ids numbered on.
    let dot = stdout(&run(&[a, s, "--format", "dot"]));
    assert_eq!(dot.matches("digraph ").count(), 1, "{dot}");
    assert!(
        dot.contains("  subgraph cluster_1 {\n    label=\""),
        "{dot}"
    );
    let mermaid = stdout(&run(&[a, s, "--format", "mermaid"]));
    assert_eq!(mermaid.matches("flowchart LR").count(), 1, "{mermaid}");
    assert!(mermaid.contains("  subgraph f1[\""), "{mermaid}");
    let ids: Vec<&str> = mermaid
        .lines()
        .filter_map(|l| l.trim().split(['[', '(', '{']).next())
        .filter(|id| id.starts_with('n') && id[1..].chars().all(|c| c.is_ascii_digit()))
        .collect();
    let distinct: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert_eq!(ids.len(), distinct.len(), "{mermaid}");
    // An agent only one file defines.
    let out = run(&[a, s, "--agent", "bot", "--format", "json"]);
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["files"].as_array().unwrap().len(), 1);
    let out = run(&[a, s, "--agent", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("known agents: bot"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn compose_reads_the_files_as_one_stack() {
    let actions = temp_file(
        "c_actions.json",
        r#"{"actions": [{"name": "ship", "type": "script", "target": "t", "mode": "delete",
            "ai": {"exposed": true, "description": "Ships the order now."}}]}"#,
    );
    let skills = temp_file(
        "c_skills.json",
        r#"{"skills": [{"name": "s", "tools": ["action_ship", "nope"]}],
            "agents": [{"name": "bot", "skills": ["s"]}]}"#,
    );
    let (a, s) = (actions.to_str().unwrap(), skills.to_str().unwrap());
    let json: Value =
        serde_json::from_str(&stdout(&run(&[a, s, "--compose", "--format", "json"]))).unwrap();
    let bot = &json["agents"][0];
    assert_eq!(bot["tools"][0]["name"], "action_ship");
    assert_eq!(bot["tools"][0]["needsApproval"], true);
    assert_eq!(bot["tools"][0]["action"]["path"], format!("{a}:actions[0]"));
    assert_eq!(bot["path"], format!("{s}:agents[0]"));
    assert_eq!(
        bot["deadReferences"][0]["path"],
        format!("{s}:skills[0].tools[1]")
    );
    assert_eq!(json["summary"]["needsApproval"], 1);
    // A composition missing a file is not shown, as `tools --compose`
    // refuses it: its skills would point at what the missing file holds.
    let out = run(&[a, s, "no-such-file.json", "--compose"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(common::stdout(&out), "");
    assert!(stderr(&out).contains("not composing"), "{}", stderr(&out));
}

#[test]
fn an_unreadable_file_is_reported_and_the_others_shown() {
    let good = temp_file(
        "good.json",
        r#"{"skills": [{"name": "s", "tools": ["query_data"]}]}"#,
    );
    let out = run(&[good.to_str().unwrap(), "does/not/exist.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    let shown = common::stdout(&out);
    assert!(shown.contains("skill s"), "{shown}");
}
