//! The GitHub Actions recipe in `docs/github-actions.yml`: it parses, its
//! lint command is a valid `objectstack-ai lint` invocation that writes the
//! SARIF file the upload step reads, and that file is SARIF.

#![allow(clippy::unwrap_used)] // test helpers

mod common;

use std::fs;

use common::{root, scratch};
use serde_json::Value;

fn workflow() -> Value {
    let text = fs::read_to_string(root().join("docs/github-actions.yml")).unwrap();
    serde_yaml_ng::from_str(&text).unwrap()
}

fn steps(workflow: &Value) -> Vec<&Value> {
    workflow["jobs"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|job| job["steps"].as_array().unwrap())
        .collect()
}

/// The words of the one `run` line that starts with `program`.
fn command<'a>(steps: &[&'a Value], program: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .flat_map(str::lines)
        .filter(|l| l.trim_start().starts_with(program))
        .collect();
    assert_eq!(lines.len(), 1, "one `{program}` line: {lines:?}");
    let line = lines[0];
    // Plain words: no quoting or expansion for the test to interpret.
    assert!(
        !line.contains(['"', '\'', '$', '\\', '|', '>', '<', '&', ';']),
        "{line}"
    );
    line.split_whitespace().collect()
}

#[test]
fn the_workflow_runs_on_pushes_and_pull_requests_and_may_upload() {
    let w = workflow();
    assert!(w["on"]["push"].is_object(), "{}", w["on"]);
    assert!(w["on"].get("pull_request").is_some(), "{}", w["on"]);
    assert_eq!(w["permissions"]["security-events"], "write");
    assert_eq!(w["permissions"]["contents"], "read");
}

#[test]
fn the_install_step_installs_this_crate_from_this_repository() {
    let w = workflow();
    let words = command(&steps(&w), "cargo install");
    assert!(words.contains(&"--locked"), "{words:?}");
    assert_eq!(words.last(), Some(&env!("CARGO_PKG_NAME")), "{words:?}");
    let git = words.iter().position(|w| *w == "--git").unwrap();
    assert_eq!(words[git + 1], env!("CARGO_PKG_REPOSITORY"));
}

#[test]
fn the_lint_step_writes_the_sarif_the_upload_step_reads() {
    let w = workflow();
    let steps = steps(&w);
    let upload: Vec<&&Value> = steps
        .iter()
        .filter(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
        })
        .collect();
    assert_eq!(upload.len(), 1);
    let upload = upload[0];
    let sarif_file = upload["with"]["sarif_file"].as_str().unwrap();
    // The lint exits 1 on an error finding: the upload must still run.
    let condition = upload["if"].as_str().unwrap_or_default();
    assert!(
        condition.contains("!cancelled()") || condition.contains("always()"),
        "the upload is skipped when the lint fails: `if: {condition}`"
    );

    // A valid invocation of this binary's parser...
    let words = command(&steps, "objectstack-ai lint");
    objectstack_cli::command()
        .try_get_matches_from(&words)
        .unwrap_or_else(|e| panic!("{words:?} is not a valid invocation: {e}"));
    let writes_sarif = words
        .windows(2)
        .any(|w| w[0] == "--report" && w[1] == format!("sarif={sarif_file}"));
    assert!(writes_sarif, "{words:?} does not write {sarif_file}");

    // ...that, run where the app's compiled stack is, writes SARIF there.
    let dir = scratch("ci-recipe", "app");
    fs::create_dir_all(dir.join("dist")).unwrap();
    fs::copy(
        root().join("examples/hotcrm-skills.json"),
        dir.join("dist/objectstack.json"),
    )
    .unwrap();
    let out = common::run_in(&dir, &words[1..]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    assert!(
        common::stdout(&out).contains("::warning file=dist/objectstack.json"),
        "{}",
        common::stdout(&out)
    );
    let sarif: Value = serde_json::from_slice(&fs::read(dir.join(sarif_file)).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 10);
    fs::remove_dir_all(&dir).unwrap();
}
