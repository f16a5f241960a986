//! Snapshots of every output format, on two fixtures with warnings, an
//! error, suggestions and a finding without a source location.

#![allow(clippy::unwrap_used)] // test helpers

use std::fs;
use std::path::Path;

use objectstack_lint::render::{self, Format, HumanOptions, SourceText};
use objectstack_lint::{Finding, Source, lint_each};

const FILES: [&str; 2] = [
    "tests/data/lint/unresolved_fictional.json",
    "tests/data/lint/tool_records.json",
];

fn run() -> (Vec<Finding>, Vec<(String, String)>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let texts: Vec<(String, String)> = FILES
        .iter()
        .map(|f| ((*f).to_owned(), fs::read_to_string(dir.join(f)).unwrap()))
        .collect();
    let arena = objectstack_spec::json::Arena::new();
    let roots: Vec<_> = texts
        .iter()
        .map(|(_, t)| objectstack_spec::json::parse_document(t.as_bytes(), &arena).unwrap())
        .collect();
    let sources: Vec<Source<'_>> = texts
        .iter()
        .zip(roots)
        .map(|((file, text), root)| Source {
            file,
            text: Some(text),
            root,
        })
        .collect();
    let findings = lint_each(&sources)
        .into_iter()
        .flatten()
        .filter(|f| !f.rule.starts_with("spec-"))
        .collect();
    (findings, texts)
}

fn rendered(format: Format) -> String {
    let (findings, texts) = run();
    let sources: Vec<SourceText<'_>> = texts
        .iter()
        .map(|(file, text)| SourceText { file, text })
        .collect();
    render::render(format, &findings, &sources, 2)
}

#[test]
fn human() {
    insta::assert_snapshot!(rendered(Format::Human));
}

#[test]
fn json() {
    let out = rendered(Format::Json);
    let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(parsed["summary"]["files"], 2);
    insta::assert_snapshot!(out);
}

#[test]
fn sarif() {
    let out = rendered(Format::Sarif);
    let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let run = &parsed["runs"][0];
    assert_eq!(parsed["version"], "2.1.0");
    // Every result points at a declared rule, with a real level and a
    // relative URI.
    for result in run["results"].as_array().unwrap() {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            run["tool"]["driver"]["rules"][index]["id"],
            result["ruleId"]
        );
        assert!(matches!(
            result["level"].as_str(),
            Some("warning" | "error")
        ));
        let uri = &result["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(uri["uriBaseId"], "%SRCROOT%");
        assert!(uri["uri"].as_str().unwrap().starts_with("tests/data/lint/"));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn github() {
    insta::assert_snapshot!(rendered(Format::Github));
}

#[test]
fn human_without_source_text_or_location() {
    let (mut findings, _) = run();
    findings.truncate(1);
    findings[0].location = None;
    let out = render::human(&findings, &[], 1, &HumanOptions::default());
    insta::assert_snapshot!(out);
}

/// The human format's `--> file:line:column` for findings deep in long
/// lines (which the snippet shows only a window of) and after multibyte
/// text: the column is the finding's own, as `json` reports it.
#[test]
fn human_columns_agree_with_the_json_location_in_long_lines() {
    let pad = "x".repeat(300);
    let cases = [
        (
            "ascii.json",
            format!(
                "{{\"pad\": \"{pad}\", \"skills\": [{{\"name\": \"s\", \"tools\": [\"zzz\"]}}]}}"
            ),
        ),
        (
            "multibyte.json",
            format!(
                "{{\"pad\": \"{}\", \"skills\": [{{\"name\": \"s\", \"tools\": [\"zzz\"]}}]}}",
                "é€😀".repeat(70)
            ),
        ),
        (
            "short.json",
            "{\"pad\": \"é€😀\", \"skills\": [{\"name\": \"s\", \"tools\": [\"zzz\"]}]}".to_owned(),
        ),
        (
            "second_line.json",
            format!(
                "{{\n\"pad\": \"{pad}é\", \"skills\": [{{\"name\": \"s\", \"tools\": [\"zzz\"]}}]}}"
            ),
        ),
    ];
    let mut shown = String::new();
    for (file, text) in &cases {
        let arena = objectstack_spec::json::Arena::new();
        let root = objectstack_spec::json::parse_document(text.as_bytes(), &arena).unwrap();
        let findings: Vec<Finding> = lint_each(&[Source {
            file,
            text: Some(text),
            root,
        }])
        .into_iter()
        .flatten()
        .filter(|f| f.rule == "ai-skill-tool-unresolved")
        .collect();
        let location = findings[0].location.clone().unwrap();
        let source = [SourceText { file, text }];
        let human = render::human(&findings, &source, 1, &HumanOptions::default());
        let arrow = format!("--> {file}:{}:{}\n", location.line, location.column);
        assert!(human.contains(&arrow), "{file}: want {arrow}in\n{human}");
        assert_eq!(human.matches("-->").count(), 1, "{human}");
        let json = render::render(Format::Json, &findings, &source, 1);
        assert!(
            json.contains(&format!("\"column\": {}", location.column)),
            "{json}"
        );
        if *file == "ascii.json" {
            shown = human;
        }
    }
    insta::assert_snapshot!(shown);
}
