//! Data-driven diagnostics: one fixture per id under
//! `tests/data/diagnostics/<id>[.<variant>].json`, each snapshotted.
//!
//! A fixture whose top level is `{"$compose": {"<name>": stack, ...}}` is
//! composed instead of validated. Update snapshots with
//! `INSTA_UPDATE=always cargo test -p objectstack-spec --test diagnostics`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use objectstack_spec::compose::{Source, compose};
use objectstack_spec::json::{Arena, parse_object};
use objectstack_spec::parse::parse_document;
use objectstack_spec::source::SourceIndex;
use objectstack_spec::validate::{Anchor, Diagnostic, DiagnosticId, validate};
use serde_json::Value;

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/diagnostics");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn render(diagnostics: &[Diagnostic], locate: &dyn Fn(&Diagnostic) -> String) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let anchor = if d.anchor == Anchor::Key {
            " (key)"
        } else {
            ""
        };
        writeln!(
            out,
            "{}[{}] {}{anchor} at {}",
            d.severity,
            d.id,
            d.path,
            locate(d)
        )
        .unwrap();
        writeln!(out, "  {}", d.message).unwrap();
        writeln!(out, "  fix: {}", d.fix).unwrap();
        for r in &d.related {
            let source = r.source.map(|s| format!("source {s} ")).unwrap_or_default();
            writeln!(out, "  related: {source}{}: {}", r.path, r.message).unwrap();
        }
    }
    out
}

fn run(path: &Path) -> (Vec<Diagnostic>, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = parse_document(text.as_bytes()).unwrap();
    if let Some(Value::Object(stacks)) = doc.get("$compose") {
        let docs: Vec<(&String, serde_json::Map<String, Value>)> = stacks
            .iter()
            .map(|(name, stack)| (name, stack.as_object().cloned().unwrap()))
            .collect();
        let sources: Vec<Source<'_>> = docs
            .iter()
            .map(|(name, stack)| Source { name, stack })
            .collect();
        let diagnostics = compose(&sources).diagnostics;
        let rendered = render(&diagnostics, &|d| {
            let s = d.source.unwrap();
            format!("{} {}", docs[s].0, d.path)
        });
        return (diagnostics, rendered);
    }
    // The borrowed tree, as the commands read a file: only it sees a key
    // written twice.
    let arena = Arena::new();
    let diagnostics = validate(parse_object(&text, &arena).unwrap());
    assert_eq!(
        without_duplicate_keys(&diagnostics),
        without_duplicate_keys(&validate(objectstack_spec::json::Map::from_serde(
            &doc,
            &Arena::new()
        ))),
        "the borrowed and the owned readings disagree"
    );
    let index = SourceIndex::new(&text);
    let rendered = render(&diagnostics, &|d| {
        let span = if d.anchor == Anchor::Key {
            index
                .locate_keys_many(std::slice::from_ref(&d.path))
                .remove(0)
        } else {
            index.locate(&d.path)
        }
        .unwrap_or_else(|| panic!("{d} cannot be located"));
        format!("{}:{}", span.line, span.column)
    });
    (diagnostics, rendered)
}

fn without_duplicate_keys(diagnostics: &[Diagnostic]) -> Vec<&Diagnostic> {
    diagnostics
        .iter()
        .filter(|d| d.id != DiagnosticId::DuplicateKey)
        .collect()
}

#[test]
fn every_fixture_reports_its_id() {
    let mut covered = BTreeSet::new();
    for path in fixtures() {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let id = stem.split('.').next().unwrap().to_owned();
        let expected = DiagnosticId::from_id(&id).unwrap_or_else(|| panic!("{stem}: unknown id"));
        let (diagnostics, rendered) = run(&path);
        assert!(
            diagnostics.iter().any(|d| d.id == expected),
            "{stem} does not report {id}:\n{rendered}"
        );
        covered.insert(expected);
        insta::assert_snapshot!(stem, rendered);
    }
    for id in DiagnosticId::ALL {
        assert!(covered.contains(id), "no fixture for {id}");
    }
}
