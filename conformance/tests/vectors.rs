//! Runs the language-neutral vectors in `conformance/vectors/` (the format
//! is in `conformance/vectors/README.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

use std::collections::BTreeSet;
use std::path::Path;

use objectstack_conformance::dump::registered_names;
use objectstack_conformance::{Approval, StackCheck, check};
use objectstack_registry::{self as registry, Group};
use serde_json::{Value, json};

const FILES: &[&str] = &["registry", "invariants", "dump", "package", "materialised"];

fn vectors_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/vectors"))
}

fn load(file: &str) -> Vec<Value> {
    let path = vectors_dir().join(format!("{file}.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let cases: Vec<Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(!cases.is_empty(), "{file}.json has no cases");
    let mut seen = BTreeSet::new();
    for case in &cases {
        let keys: BTreeSet<&str> = case
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            BTreeSet::from(["description", "input", "expected"]),
            "{file}.json: {case}"
        );
        let description = case["description"].as_str().unwrap();
        assert!(
            seen.insert(description),
            "{file}.json: duplicate description {description:?}"
        );
    }
    cases
}

/// Runs every case of `file` through `run` and fails with every mismatch.
fn run_file(file: &str, run: impl Fn(&Value) -> Value) {
    let mut failures = Vec::new();
    for case in load(file) {
        let actual = run(&case["input"]);
        if actual != case["expected"] {
            failures.push(format!(
                "{file}.json: {}\n  expected: {}\n  actual:   {}",
                case["description"], case["expected"], actual
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing vectors:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

#[test]
fn every_vector_file_is_run() {
    let mut on_disk: Vec<String> = std::fs::read_dir(vectors_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut known: Vec<_> = FILES.iter().map(|f| f.to_string()).collect();
    known.sort();
    assert_eq!(on_disk, known, "add a runner for each vector file");
}

#[test]
fn registry_vectors() {
    run_file("registry", |input| {
        let name = input["name"].as_str().unwrap();
        json!({
            "platformTool": registry::is_platform_tool(name),
            "owner": registry::owner(name),
            "family": registry::family(name),
        })
    });
}

#[test]
fn invariant_vectors() {
    run_file("invariants", |input| {
        let groups: Vec<Group> = input["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| Group {
                package: leak(g["package"].as_str().unwrap()),
                names: Box::leak(
                    strings(&g["names"])
                        .into_iter()
                        .map(leak)
                        .collect::<Vec<_>>()
                        .into_boxed_slice(),
                ),
            })
            .collect();
        let prefixes: Vec<&'static str> = strings(&input["familyPrefixes"])
            .into_iter()
            .map(leak)
            .collect();
        match registry::check(&groups, &prefixes) {
            Ok(()) => json!({"valid": true}),
            Err(v) => json!({"valid": false, "code": v.code(), "entry": v.entry()}),
        }
    });
}

#[test]
fn dump_vectors() {
    run_file("dump", |input| match registered_names(&input["dump"]) {
        Ok(names) => json!({ "names": names }),
        Err(err) => json!({"error": err.code(), "path": err.path()}),
    });
}

/// The report's JSON without what the vectors leave out: the package echo,
/// the approval echo, human messages and fixes.
fn neutral(mut report: Value) -> Value {
    let top = report.as_object_mut().unwrap();
    top.shift_remove("package");
    top.shift_remove("fixes");
    if let Some(Value::Object(family)) = top.get_mut("materialised") {
        family.shift_remove("approval");
        for tool in family["unexpected"].as_array_mut().unwrap() {
            tool.as_object_mut().unwrap().shift_remove("message");
        }
    }
    report
}

fn run_check(input: &Value) -> Value {
    let package = input["package"].as_str().unwrap();
    let registered = strings(&input["registered"]);
    let stack = input.get("stack").map(|s| s.as_object().unwrap());
    let approval = match input.get("approval") {
        Some(Value::Bool(true)) => Approval::Wired,
        _ => Approval::NotWired,
    };
    let with = stack.map(|stack| StackCheck { stack, approval });
    match check(package, &registered, with) {
        Ok(report) => {
            let json = neutral(report.to_json());
            assert_eq!(json["conformant"], json!(report.is_conformant()));
            json
        }
        Err(_) => json!({"error": "unknown_package"}),
    }
}

#[test]
fn package_vectors() {
    for case in load("package") {
        assert!(
            case["input"].get("stack").is_none(),
            "package.json cases have no stack"
        );
    }
    run_file("package", run_check);
}

#[test]
fn materialised_vectors() {
    for case in load("materialised") {
        assert!(
            case["input"]["stack"].is_object(),
            "materialised.json cases have a stack"
        );
        assert!(
            case["input"]["approval"].is_boolean(),
            "materialised.json cases say whether approval is wired"
        );
    }
    run_file("materialised", run_check);
}
