//! Data-driven tests over `tests/data/lint/*.json`.
//!
//! - `<case>.expected`: every finding of the lint rules, one line each
//!   (`spec_*` cases list the `spec` validation findings too). Rewrite them after a
//!   deliberate change with `UPDATE_EXPECT=1 cargo test -p objectstack-lint`
//!   and review the diff.
//! - `<case>.upstream`: what upstream `@objectstack/lint` 17.4.0 reports
//!   for `ai-skill-tool-unresolved` on the same file, one line per finding
//!   (`path|where|ref|suggestion|kind|severity|rule`), produced with node by
//!   `tests/data/upstream.mjs`. Our findings of that rule must match them
//!   exactly, except in `deliberate_*` cases, where this workspace differs
//!   on purpose (a malformed `ai` block never materialises).

#![allow(clippy::unwrap_used)] // test helpers

use std::fs;
use std::path::{Path, PathBuf};

use objectstack_lint::{Finding, Source, lint};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn lint_file(path: &Path, name: &str) -> Vec<Finding> {
    let text = fs::read_to_string(path).unwrap();
    let arena = objectstack_spec::json::Arena::new();
    let root = objectstack_spec::json::parse_document(text.as_bytes(), &arena).unwrap();
    lint(&Source {
        file: name,
        text: Some(&text),
        root,
    })
}

fn expected_line(f: &Finding) -> String {
    let at = f
        .location
        .as_ref()
        .map_or_else(|| "-".to_owned(), |l| format!("{}:{}", l.line, l.column));
    format!(
        "{at} {} {} {} ref={} suggestion={}",
        f.severity,
        f.rule,
        f.path,
        f.reference.as_deref().unwrap_or("-"),
        f.suggestion.as_deref().unwrap_or("-"),
    )
}

/// Our `ai-skill-tool-unresolved` findings in the upstream line format.
fn upstream_lines(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings
        .iter()
        .filter(|f| f.rule == "ai-skill-tool-unresolved")
    {
        let reference = f.reference.as_deref().unwrap_or("");
        let kind = if reference.ends_with('*') {
            "wildcard"
        } else if f.message.to_cow().contains("does not become an AI tool") {
            "unexposed"
        } else {
            "fictional"
        };
        out.push_str(&format!(
            "{}|{}|{}|{}|{}|{}|{}\n",
            f.path,
            f.where_,
            reference,
            f.suggestion.as_deref().unwrap_or(""),
            kind,
            f.severity,
            f.rule
        ));
    }
    out
}

fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = fs::read_dir(data_dir().join("lint"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "fixtures missing");
    cases
}

#[test]
fn fixtures_match_their_expected_findings() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        // `spec` validation findings are checked only in `spec_*` cases, so
        // the rule fixtures can stay minimal.
        let got: String = lint_file(&case, &name)
            .iter()
            .filter(|f| name.starts_with("spec_") || !f.rule.starts_with("spec-"))
            .map(|f| expected_line(f) + "\n")
            .collect();
        let expected_path = case.with_extension("expected");
        if update {
            fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let expected = fs::read_to_string(&expected_path).unwrap_or_default();
        if got != expected {
            failures.push(format!("{name}:\n--- expected\n{expected}--- got\n{got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(run with UPDATE_EXPECT=1 after a deliberate change)",
        failures.join("\n")
    );
}

#[test]
fn rule_one_matches_upstream_on_every_fixture() {
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let ours = upstream_lines(&lint_file(&case, &name));
        let upstream = fs::read_to_string(case.with_extension("upstream")).unwrap();
        if name.starts_with("deliberate_") {
            assert_ne!(ours, upstream, "{name} no longer differs from upstream");
        } else {
            assert_eq!(ours, upstream, "{name}");
        }
    }
}

#[test]
fn hotcrm_yields_exactly_the_ten_fictional_tools() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hotcrm-skills.json");
    let findings = lint_file(&path, "examples/hotcrm-skills.json");
    assert_eq!(findings.len(), 10, "{findings:#?}");
    assert!(
        findings
            .iter()
            .all(|f| f.rule == "ai-skill-tool-unresolved")
    );
    let refs: Vec<&str> = findings
        .iter()
        .filter_map(|f| f.reference.as_deref())
        .collect();
    assert_eq!(
        refs,
        [
            "triage_case",
            "generate_email_copy",
            "optimize_subject_line",
            "personalize_content",
            "generate_email",
            "analyze_lead",
            "suggest_next_action",
            "analyze_pipeline",
            "identify_at_risk",
            "forecast_revenue",
        ]
    );
    // Zero false positives: the six platform references resolve.
    for platform in [
        "describe_object",
        "list_objects",
        "query_records",
        "get_record",
        "aggregate_data",
        "search_knowledge",
    ] {
        assert!(!refs.contains(&platform), "{platform}");
    }
    let upstream = fs::read_to_string(data_dir().join("hotcrm-skills.upstream")).unwrap();
    assert_eq!(upstream_lines(&findings), upstream);
    assert!(findings.iter().all(|f| f.location.is_some()));
}

#[test]
fn every_rule_has_a_fixture_finding() {
    let mut seen = std::collections::HashSet::new();
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        for f in lint_file(&case, &name) {
            seen.insert(f.rule);
        }
    }
    for rule in objectstack_lint::rules::RULES {
        assert!(
            seen.contains(rule.id()),
            "no fixture exercises {}",
            rule.id()
        );
    }
}
