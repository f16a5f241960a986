//! The conformance kit that keeps the platform tool registry true.
//!
//! The curated registry ([`objectstack_registry`]) lets a static check tell
//! a real platform tool from a fictional one; an out-of-date registry is
//! worse than none, because consumers trust it. This crate is what each
//! owning package puts in its own test suite to prove that the list
//! matches what it really registers (ADR-0109 decision 2):
//!
//! - [`package`]: one package's registered names against its curated
//!   group: names registered but not curated, curated but not registered,
//!   curated under another package, static names under a family prefix,
//!   names registered twice;
//! - [`materialised`]: the runtime's `action_<name>` tools against a stack,
//!   both ways, with the approval queue wired or not;
//! - [`dump`]: reading a runtime's registry dump (what `objectstack-ai
//!   conform` takes).
//!
//! [`check`] runs both checks; [`assert_conforms`] panics, for `cargo
//! test`, with a readable diff and the exact edits to make.
//!
//! # Worked example
//!
//! The few lines a package adds to its tests (see also
//! `conformance/examples/package_tests.rs`). Here the runtime is faked by
//! a list; a real package boots its tool registry and lists its names.
//!
//! ```
//! use objectstack_conformance::{Approval, StackCheck, assert_conforms, check};
//! use serde_json::json;
//!
//! // The names `service-ai` registers at boot, static and materialised
//! // (the static ones faked here as exactly its curated group).
//! let mut registered = objectstack_registry::group("service-ai").map_or(vec![], |g| g.names.to_vec());
//! registered.push("action_complete_task");
//! // The stack the runtime served (normally read from `dist/objectstack.json`).
//! let stack = json!({"objects": [{"name": "todo_task", "actions": [{
//!     "name": "complete_task", "type": "script", "target": "completeTask",
//!     "ai": {"exposed": true, "description": "Mark a todo task as complete when the user says it is done."}
//! }]}]});
//! let stack = stack.as_object().unwrap();
//!
//! assert_conforms(
//!     "service-ai",
//!     &registered,
//!     Some(StackCheck { stack, approval: Approval::NotWired }),
//! );
//!
//! // A registry that lags behind the runtime fails with the edit to make:
//! let report = check("service-ai", &["query_data", "load_charts"], None).unwrap();
//! assert!(!report.is_conformant());
//! assert!(report.to_string().contains(
//!     "add `load_charts` to the `service-ai` group in registry/src/lib.rs"
//! ));
//! ```
//!
//! # Vectors
//!
//! `conformance/vectors/*.json` hold language-neutral cases (`description`,
//! `input`, `expected`; the format is in `conformance/vectors/README.md`)
//! that this crate's tests run, so an implementation in another language
//! can run the same suite.
#![deny(missing_docs)]

pub mod dump;
pub mod materialised;
pub mod package;

use std::fmt;

use serde_json::{Map, Value, json};

pub use materialised::Approval;
use materialised::{FamilyReport, HeldTool, MissingTool, UnexpectedReason};
use package::{OwnedElsewhere, PackageReport, RegisteredTwice, UnderFamilyPrefix, UnknownPackage};

/// A stack to check the materialised family against, and whether the
/// runtime's approval queue is wired.
#[derive(Debug, Clone, Copy)]
pub struct StackCheck<'a> {
    /// The stack document's top-level object.
    pub stack: &'a Map<String, Value>,
    /// Whether actions that need confirmation are expected.
    pub approval: Approval,
}

/// The full verdict on one package's runtime: its static names and, when a
/// stack was given, its materialised family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The static names against the package's curated group.
    pub package: PackageReport,
    /// The `action_*` names against the stack (with a stack only).
    pub materialised: Option<FamilyReport>,
}

impl Report {
    /// Whether both checks found nothing.
    pub fn is_conformant(&self) -> bool {
        self.package.is_conformant()
            && self
                .materialised
                .as_ref()
                .is_none_or(FamilyReport::is_conformant)
    }

    /// Every edit to make, package first; when any edits the registry,
    /// the last says to regenerate its JSON export.
    pub fn fixes(&self) -> Vec<String> {
        let mut fixes = self.package.fixes();
        let codegen = fixes
            .last()
            .filter(|f| f.contains("cargo xtask codegen"))
            .cloned();
        if codegen.is_some() {
            fixes.pop();
        }
        if let Some(family) = &self.materialised {
            fixes.extend(family.fixes());
        }
        fixes.extend(codegen);
        fixes
    }

    /// The report as JSON (what `objectstack-ai conform --format json`
    /// prints). Keys: `package`, `conformant`, the five package categories
    /// (`registeredNotCurated`, `curatedNotRegistered`,
    /// `ownedByAnotherPackage` of `{name, owner}`, `underFamilyPrefix` of
    /// `{name, prefix}`, `registeredTwice` of `{name, times}`), then
    /// `materialised` when a stack was given (`approval`, `conformant`,
    /// `unexpected` of `{name, code, path, message}`, `missing` of
    /// `{name, path}`, `heldForApproval` of `{name, path, because}`), and
    /// `fixes`.
    pub fn to_json(&self) -> Value {
        let p = &self.package;
        let mut out = Map::new();
        out.insert("package".into(), json!(p.package));
        out.insert("conformant".into(), json!(self.is_conformant()));
        out.insert(
            "registeredNotCurated".into(),
            json!(p.registered_not_curated),
        );
        out.insert(
            "curatedNotRegistered".into(),
            json!(p.curated_not_registered),
        );
        out.insert(
            "ownedByAnotherPackage".into(),
            p.owned_by_another
                .iter()
                .map(|OwnedElsewhere { name, owner }| json!({"name": name, "owner": owner}))
                .collect(),
        );
        out.insert(
            "underFamilyPrefix".into(),
            p.under_family_prefix
                .iter()
                .map(|UnderFamilyPrefix { name, prefix }| json!({"name": name, "prefix": prefix}))
                .collect(),
        );
        out.insert(
            "registeredTwice".into(),
            p.registered_twice
                .iter()
                .map(|RegisteredTwice { name, times }| json!({"name": name, "times": times}))
                .collect(),
        );
        if let Some(family) = &self.materialised {
            out.insert("materialised".into(), family_json(family));
        }
        out.insert("fixes".into(), json!(self.fixes()));
        Value::Object(out)
    }
}

fn family_json(family: &FamilyReport) -> Value {
    let unexpected: Vec<Value> = family
        .unexpected
        .iter()
        .map(|tool| {
            let message = match &tool.reason {
                UnexpectedReason::NoSuchAction => "the stack declares no such action".to_owned(),
                UnexpectedReason::DoesNotMaterialise(skip) => skip.reason(),
                UnexpectedReason::NeedsApproval(because) => format!(
                    "needs confirmation (`{because}`) but the approval queue is not wired"
                ),
                UnexpectedReason::Superseded(by) => format!(
                    "superseded by the refined tool(s) {}",
                    by.iter().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ")
                ),
                UnexpectedReason::RecordSkipped { reason, .. } => reason.clone(),
            };
            json!({"name": tool.name, "code": tool.reason.code(), "path": tool.path, "message": message})
        })
        .collect();
    let missing: Vec<Value> = family
        .missing
        .iter()
        .map(|MissingTool { name, path }| json!({"name": name, "path": path}))
        .collect();
    let held: Vec<Value> = family
        .held_for_approval
        .iter()
        .map(
            |HeldTool {
                 name,
                 path,
                 because,
             }| { json!({"name": name, "path": path, "because": because.as_source()}) },
        )
        .collect();
    json!({
        "approval": family.approval.as_str(),
        "conformant": family.is_conformant(),
        "unexpected": unexpected,
        "missing": missing,
        "heldForApproval": held,
    })
}

impl fmt::Display for Report {
    /// Both verdicts with their diffs, then the numbered fixes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.package.summary())?;
        self.package.write_diff(f)?;
        if let Some(family) = &self.materialised {
            writeln!(f, "{}", family.summary())?;
            family.write_diff(f)?;
        }
        package::write_fixes(f, &self.fixes())
    }
}

/// Checks what `package` registers: the static names against its curated
/// group, and, given a stack, the `action_*` names and the refined tools
/// of bound tool records against the stack (without a stack they count as
/// static names). Names registered twice are reported whichever check sees them.
pub fn check(
    package: &str,
    registered: &[&str],
    stack: Option<StackCheck<'_>>,
) -> Result<Report, UnknownPackage> {
    let (group, tally) = package::prepare(package, registered)?;
    let materialised =
        stack.map(|s| materialised::check_materialised(s.stack, registered, s.approval));
    // With a stack, the materialised check takes the `action_*` names and
    // the names of bound tool records (their refined tools).
    let bound = stack.map(|s| materialised::bound_record_names(s.stack));
    let in_family = |name: &str| {
        bound.as_ref().is_some_and(|bound| {
            name.starts_with(objectstack_registry::ACTION_PREFIX) || bound.contains(name)
        })
    };
    Ok(Report {
        package: package::report_for(group, &tally, in_family),
        materialised,
    })
}

/// Asserts that `package` conforms (see [`check`]), for `cargo test`.
///
/// # Panics
///
/// When it does not, with the report: a diff against the registry and the
/// stack, and the exact edits to make; or when the registry does not know
/// the package, listing the packages it knows.
#[track_caller]
pub fn assert_conforms(package: &str, registered: &[&str], stack: Option<StackCheck<'_>>) {
    match check(package, registered, stack) {
        Ok(report) if report.is_conformant() => {}
        Ok(report) => panic!("{report}"),
        Err(err) => panic!("{err}"),
    }
}

/// Asserts that a runtime's `action_*` names match the stack (see
/// [`materialised::check_materialised`]), for a runtime that is not one
/// of the curated packages.
///
/// # Panics
///
/// When they do not, with the report and the edits to make.
#[track_caller]
pub fn assert_materialised(stack: &Map<String, Value>, registered: &[&str], approval: Approval) {
    let report = materialised::check_materialised(stack, registered, approval);
    if !report.is_conformant() {
        panic!("{report}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service_ai() -> Vec<&'static str> {
        objectstack_registry::group("service-ai")
            .unwrap()
            .names
            .to_vec()
    }

    fn stack() -> Map<String, Value> {
        let v = json!({"actions": [
            {"name": "ship", "type": "flow", "target": "ship_flow",
             "ai": {"exposed": true, "description": "Ship the order to the customer's delivery address."}},
            {"name": "cancel", "type": "script", "target": "cancel", "mode": "delete",
             "ai": {"exposed": true, "description": "Cancel the order and release its reserved stock."}}
        ]});
        v.as_object().unwrap().clone()
    }

    #[test]
    fn with_a_stack_family_names_go_to_the_materialised_check() {
        let stack = stack();
        let mut names = service_ai();
        names.push("action_ship");
        let with = Some(StackCheck {
            stack: &stack,
            approval: Approval::NotWired,
        });
        let report = check("service-ai", &names, with).unwrap();
        assert!(report.is_conformant(), "{report}");
        assert_eq!(report.package.registered, service_ai().len());
        let family = report.materialised.as_ref().unwrap();
        assert_eq!(family.held_for_approval.len(), 1);

        let without = check("service-ai", &names, None).unwrap();
        assert!(!without.is_conformant());
        assert_eq!(without.package.under_family_prefix.len(), 1);
        assert!(without.materialised.is_none());
    }

    #[test]
    fn problems_on_both_sides_list_every_fix_codegen_last() {
        let stack = stack();
        let mut names = service_ai();
        names.retain(|n| *n != "get_record");
        names.push("load_charts");
        names.push("action_cancel");
        let report = check(
            "service-ai",
            &names,
            Some(StackCheck {
                stack: &stack,
                approval: Approval::NotWired,
            }),
        )
        .unwrap();
        assert!(!report.is_conformant());
        let fixes = report.fixes();
        assert_eq!(fixes.len(), 5, "{fixes:#?}");
        assert!(fixes[0].starts_with("add `load_charts` to the `service-ai` group"));
        assert!(fixes[1].starts_with("remove `get_record` from the `service-ai` group"));
        assert!(
            fixes[2].starts_with(
                "stop registering `action_cancel` while the approval queue is not wired"
            )
        );
        assert!(fixes[3].starts_with("register `action_ship` for action `ship` (actions[0])"));
        assert!(fixes[4].contains("cargo xtask codegen"));
        let text = report.to_string();
        assert!(
            text.contains("    + load_charts\n    ") || text.contains("    + load_charts\n"),
            "{text}"
        );
        assert!(text.contains("    - get_record\n"), "{text}");
        assert!(
            text.contains("    ! action_cancel (actions[1]): needs confirmation (`mode: delete`)"),
            "{text}"
        );
        assert!(text.contains("    + action_ship (actions[0])\n"), "{text}");
        assert!(text.contains("\nfix:\n  1. add `load_charts`"), "{text}");

        let json = report.to_json();
        assert_eq!(json["conformant"], json!(false));
        assert_eq!(json["registeredNotCurated"], json!(["load_charts"]));
        assert_eq!(
            json["materialised"]["unexpected"][0]["code"],
            json!("needs_approval")
        );
        assert_eq!(
            json["materialised"]["missing"],
            json!([{"name": "action_ship", "path": "actions[0]"}])
        );
        assert_eq!(json["fixes"].as_array().unwrap().len(), 5);
    }

    fn studio_plus(extra: &'static str) -> Vec<&'static str> {
        let mut names = objectstack_registry::group("service-ai-studio")
            .unwrap()
            .names
            .to_vec();
        names.push(extra);
        names
    }

    #[test]
    #[should_panic(
        expected = "add `load_skills` to the `service-ai-studio` group in registry/src/lib.rs"
    )]
    fn assert_conforms_panics_with_the_edit() {
        assert_conforms("service-ai-studio", &studio_plus("load_skills"), None);
    }

    #[test]
    fn the_panic_message_is_a_readable_diff() {
        let names = studio_plus("load_skills");
        let panic = std::panic::catch_unwind(|| assert_conforms("service-ai-studio", &names, None))
            .unwrap_err();
        let message = panic.downcast_ref::<String>().unwrap();
        assert_eq!(
            message,
            "package `service-ai-studio` does not conform to the platform tool registry (1 problem):\n\
             \x20 registered but not curated (missing from the `service-ai-studio` group):\n\
             \x20   + load_skills\n\
             fix:\n\
             \x20 1. add `load_skills` to the `service-ai-studio` group in registry/src/lib.rs (keep the group sorted)\n\
             \x20 2. then run `cargo xtask codegen` to refresh registry/platform-tools.json\n"
        );
    }

    #[test]
    fn a_conforming_package_does_not_panic() {
        assert_conforms("service-ai", &service_ai(), None);
    }

    #[test]
    #[should_panic(
        expected = "unknown package `service-crm`: the registry curates service-ai, service-ai-studio"
    )]
    fn assert_conforms_panics_on_an_unknown_package() {
        assert_conforms("service-crm", &[], None);
    }

    #[test]
    #[should_panic(expected = "register `action_ship` for action `ship` (actions[0])")]
    fn assert_materialised_panics_with_the_edit() {
        assert_materialised(&stack(), &[], Approval::NotWired);
    }

    #[test]
    fn assert_materialised_passes_a_matching_runtime() {
        assert_materialised(&stack(), &["action_ship", "action_cancel"], Approval::Wired);
    }
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
