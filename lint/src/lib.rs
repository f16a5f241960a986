//! Reference integrity for ObjectStack AI metadata: do the names a skill,
//! agent or tool record uses resolve to something the runtime will really
//! have?
//!
//! The suite is a list of [`rules::RULES`], one file per rule, each with a
//! stable kebab-case id, a default [`Severity`] and documentation
//! ([`Rule::doc`]) that `objectstack-ai explain` prints. [`lint`] runs them
//! (plus the `spec` validation diagnostics, under their own ids) on one
//! stack, [`lint_each`] on several in parallel, [`lint_composed`] on their
//! composition. [`Config`] applies per-rule levels (`allow`, `warn`,
//! `deny`), [`Baseline`] filters out accepted findings, and
//! [`render`] prints them as `human`, `json`, `sarif` or `github`.
//!
//! ```
//! use objectstack_lint::{Source, lint};
//!
//! let text = r#"{"skills": [{"name": "triage", "label": "Triage", "tools": ["query_records", "triage_case"]}]}"#;
//! let arena = objectstack_spec::json::Arena::new();
//! let root = objectstack_spec::json::parse_document(text.as_bytes(), &arena).unwrap();
//! let findings = lint(&Source { file: "stack.json", text: Some(text), root });
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].rule, "ai-skill-tool-unresolved");
//! assert_eq!(findings[0].path, "skills[0].tools[1]");
//! assert_eq!(findings[0].reference.as_deref(), Some("triage_case"));
//! ```
//!
//! # The `json` format
//!
//! `objectstack-ai lint --format json` prints one object; its shape is
//! stable (keys are only ever added):
//!
//! ```json
//! {
//!   "findings": [
//!     {
//!       "rule": "ai-skill-tool-unresolved",
//!       "severity": "warning",
//!       "where": "skill \"case_triage\" · tools",
//!       "path": "skills[2].tools[0]",
//!       "message": "Skill \"case_triage\" references tool \"triage_case\", which ...",
//!       "hint": "Back \"triage_case\" with something real: ...",
//!       "ref": "triage_case",
//!       "suggestion": null,
//!       "location": {
//!         "file": "examples/hotcrm-skills.json",
//!         "line": 5,
//!         "column": 64,
//!         "byteStart": 313,
//!         "byteEnd": 326
//!       }
//!     }
//!   ],
//!   "summary": { "errors": 0, "warnings": 1, "files": 1 }
//! }
//! ```
//!
//! - `rule`: the rule id (`objectstack-ai rules` lists them), or the id of
//!   a `spec` validation diagnostic.
//! - `severity`: `error` or `warning`, after configuration.
//! - `where`: a short description of the place (`skill "x" · tools`; an
//!   unnamed record is `#<index>`).
//! - `path`: the JSON path of the offending value. Indices are *lenient*,
//!   as upstream counts them: entries of a collection that are not records
//!   are dropped before counting, and a collection written as a map keyed
//!   by name is indexed in JavaScript's property order (integer-like keys
//!   first, in numeric order; then the rest in document order, a key
//!   written twice at its first position), and findings are listed in
//!   that order too. (`spec-*` findings print the
//!   raw path `spec` reports: real array positions and map keys.)
//! - `message`: what is wrong and what it means at run time; `hint`: how to
//!   fix it. (In Rust both are a [`Text`], which reads and serialises as a
//!   string and may be written only when read.)
//! - `ref`: the name that did not resolve (or `null`); `suggestion`: the
//!   name it probably meant (or `null`).
//! - `location`: the file, the 1-based line and column (in characters) and
//!   the byte range of the offending value; `null` when the stack was not
//!   read from a file.
//! - `summary`: counts of `errors` and `warnings`, and how many `files`
//!   were linted.
#![deny(missing_docs)]

mod action_names;
mod anchor;
pub mod baseline;
pub mod capabilities;
pub mod config;
mod engine;
pub mod finding;
mod order;
mod references;
pub mod render;
pub mod rule;
pub mod rules;
mod stack;
pub mod synth;
pub mod universe;
mod validation;

#[cfg(test)]
mod testing;

pub use baseline::Baseline;
pub use config::{Config, Level};
pub use engine::{Source, lint, lint_composed, lint_each};
pub use finding::{Finding, Location, Severity, Summary, Text};
pub use rule::Rule;

/// Whether `id` names a lint rule or a `spec` validation diagnostic.
pub fn is_known_rule(id: &str) -> bool {
    rules::find(id).is_some() || validation::ids().contains(&id)
}

/// Every id `--allow`, `--warn` and `--deny` accept besides `warnings`:
/// the lint rules, then the `spec` validation ids.
pub fn rule_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = rules::RULES.iter().map(|r| r.id()).collect();
    ids.extend(validation::ids());
    ids
}

/// The default severity, one-line summary and documentation (Markdown) of
/// a lint rule or a `spec` validation id.
pub fn documentation(id: &str) -> Option<(Severity, String, String)> {
    match rules::find(id) {
        Some(rule) => Some((rule.default_severity(), rule.summary(), rule.doc())),
        None => validation::describe(id),
    }
}

/// The tool names a runtime registers from these stacks (composed) with
/// everything wired, as the lint's universe sees them: each materialised
/// `action_<name>` that no tool record supersedes, then each bound record
/// that refines its executable (ADR-0109 Phase 2), each name once and no
/// platform name. The bridge's registration holds to this (a property
/// test in the bridge checks it).
pub fn materialised_names(roots: &[&objectstack_spec::json::Map<'_>]) -> Vec<String> {
    let arena = objectstack_spec::json::Arena::new();
    let stack = stack::Stack::new(roots, &arena);
    rule::Context::new(&stack).materialised()
}

/// The known id nearest to `id`, for "did you mean" messages.
pub fn nearest_rule_id(id: &str) -> Option<&'static str> {
    universe::nearest(id, rule_ids())
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
