//! The bundled example stacks validate as documented in examples/README.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use objectstack_spec::json::{Arena, parse_document};
use objectstack_spec::validate::{DiagnosticId, validate};

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn diagnostics(file: &str) -> Vec<objectstack_spec::validate::Diagnostic> {
    let bytes = std::fs::read(examples_dir().join(file)).unwrap();
    let arena = Arena::new();
    validate(parse_document(&bytes, &arena).unwrap())
}

#[test]
fn good_examples_have_no_diagnostics() {
    for entry in std::fs::read_dir(examples_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.extension().is_none_or(|e| e != "json") || name.starts_with("broken") {
            continue;
        }
        let found = diagnostics(&name);
        assert!(
            found.is_empty(),
            "{name}:\n{}",
            found
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn broken_example_shows_every_class_of_error() {
    let found = diagnostics("broken-stack.json");
    let ids: BTreeSet<&str> = found.iter().map(|d| d.id.as_str()).collect();
    for id in DiagnosticId::ALL {
        if *id == DiagnosticId::ComposeConflict {
            continue; // needs two stacks: see the compose tests
        }
        assert!(ids.contains(id.as_str()), "broken-stack.json shows no {id}");
    }
}

#[test]
fn good_examples_round_trip_through_the_typed_model() {
    for name in ["todo-app.json", "hotcrm-skills.json"] {
        let bytes = std::fs::read(examples_dir().join(name)).unwrap();
        let document = objectstack_spec::parse::parse_document(&bytes).unwrap();
        let stack = objectstack_spec::model::Stack::from_json(&document).unwrap();
        assert_eq!(stack.to_json().unwrap(), document, "{name}");
    }
}
