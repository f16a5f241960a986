//! A runtime's materialised `action_<name>` tools against a stack, both
//! ways.
//!
//! The lint resolves `action_<x>` when action `x` of the stack (stack-level
//! `actions[]` or any object's `actions[]`) materialises by the static
//! predicate, [`objectstack_spec::materialise::static_skip`]. The runtime
//! must agree, or one of them is wrong:
//! - every registered `action_<x>` must come from an action that
//!   materialises (else the lint would call a real tool fictional);
//! - every action that materialises must have been registered (else a
//!   skill the lint passes names a tool the runtime lacks).
//!
//! An action that needs confirmation
//! ([`objectstack_spec::materialise::needs_confirmation`]) is expected
//! only when the approval queue is wired ([`Approval::Wired`]); otherwise
//! the runtime must skip it, and the report lists it as held for approval.
//!
//! Bound tool records (ADR-0109 Phase 2) refine the family: when a record
//! binds action `x`, `action_x` is superseded and must not be registered,
//! and each record the predicate says refines its executable
//! ([`objectstack_spec::materialise::refine::judge_all`]) must be registered
//! under the record's name. Registered names outside `action_*` are checked
//! only when a bound record has that name.
//!
//! The check assumes the runtime is otherwise fully wired (an automation
//! service for flows, an HTTP client or base URL for `api` actions).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use objectstack_registry as registry;
use objectstack_spec::collection::records_of;
use objectstack_spec::materialise::refine::{self, ActionAt, Binding, Reserved, Superseded};
use objectstack_spec::materialise::{
    ConfirmationReason, StaticSkip, needs_confirmation, static_skip,
};
use objectstack_spec::path::JsonPath;
use objectstack_spec::text::line_safe;
use serde_json::{Map, Value};

use crate::package::{plural, write_fixes};

/// Whether the runtime's approval queue is wired (approval enabled and a
/// queue that can take proposals).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Approval {
    /// Actions that need confirmation are registered (calls are queued).
    Wired,
    /// Actions that need confirmation are skipped.
    NotWired,
}

impl Approval {
    /// `wired` or `not_wired`.
    pub fn as_str(self) -> &'static str {
        match self {
            Approval::Wired => "wired",
            Approval::NotWired => "not_wired",
        }
    }
}

/// Why a registered family member was not expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnexpectedReason {
    /// The stack declares no action of that name.
    NoSuchAction,
    /// The action exists but does not materialise.
    DoesNotMaterialise(StaticSkip),
    /// The action materialises but needs confirmation, and the approval
    /// queue is not wired.
    NeedsApproval(ConfirmationReason),
    /// A tool record binds the action, so its refinements register
    /// instead (the records' names).
    Superseded(Vec<String>),
    /// A bound tool record of that name does not refine its executable:
    /// the predicate's code and reason.
    RecordSkipped {
        /// The code (`binding_widens`, `binding_not_exposed`, ...).
        code: &'static str,
        /// Why.
        reason: String,
    },
}

impl UnexpectedReason {
    /// A stable code: `no_such_action`, `needs_approval`, or the
    /// [`StaticSkip::code`] of the action (`not_exposed`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            UnexpectedReason::NoSuchAction => "no_such_action",
            UnexpectedReason::DoesNotMaterialise(skip) => skip.code(),
            UnexpectedReason::NeedsApproval(_) => "needs_approval",
            UnexpectedReason::Superseded(_) => "superseded",
            UnexpectedReason::RecordSkipped { code, .. } => code,
        }
    }
}

/// A registered `action_<x>` the stack does not account for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnexpectedTool {
    /// The registered tool name.
    pub name: String,
    /// Where the action is (`objects[0].actions[2]`); `None` when the
    /// stack has no such action.
    pub path: Option<String>,
    /// Why it was not expected.
    pub reason: UnexpectedReason,
}

/// An action that materialises but whose tool was not registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingTool {
    /// The tool name it materialises as.
    pub name: String,
    /// Where the action is.
    pub path: String,
}

/// An action that materialises but needs confirmation while the approval
/// queue is not wired: correctly not registered (informational).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldTool {
    /// The tool name it would materialise as.
    pub name: String,
    /// Where the action is.
    pub path: String,
    /// Why it needs confirmation.
    pub because: ConfirmationReason,
}

/// How a runtime's registered family members compare with a stack.
///
/// Every list is sorted by tool name and holds each name once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyReport {
    /// Whether the approval queue was taken as wired.
    pub approval: Approval,
    /// How many distinct `action_*` names were registered.
    pub registered: usize,
    /// How many the stack makes the runtime expect.
    pub expected: usize,
    /// Registered, but no action of the stack accounts for them.
    pub unexpected: Vec<UnexpectedTool>,
    /// Materialise from the stack, but were not registered.
    pub missing: Vec<MissingTool>,
    /// Held for approval (not a problem).
    pub held_for_approval: Vec<HeldTool>,
}

impl FamilyReport {
    /// Whether nothing is unexpected and nothing is missing.
    pub fn is_conformant(&self) -> bool {
        self.problem_count() == 0
    }

    /// How many unexpected and missing tools there are.
    pub fn problem_count(&self) -> usize {
        self.unexpected.len() + self.missing.len()
    }

    /// The edits that make the runtime and the stack agree, one sentence
    /// each.
    pub fn fixes(&self) -> Vec<String> {
        let mut fixes = Vec::new();
        for tool in &self.unexpected {
            let name = &tool.name;
            let action = registry::action_name(name).unwrap_or("");
            let at = tool.path.as_deref().unwrap_or("");
            fixes.push(match &tool.reason {
                UnexpectedReason::NoSuchAction => format!(
                    "stop registering `{name}`: the stack declares no action `{action}` (or give the check the stack the runtime serves)"
                ),
                UnexpectedReason::DoesNotMaterialise(skip) => format!(
                    "stop registering `{name}`: action `{action}` ({at}) does not materialise, and the runtime must decide with the same predicate as the lint (objectstack_spec::materialise::static_skip); the action's fault: {skip}"
                ),
                UnexpectedReason::NeedsApproval(because) => format!(
                    "stop registering `{name}` while the approval queue is not wired: `{name}` ({at}) needs confirmation (`{because}`) and would run unattended; or wire the queue and check with approval"
                ),
                UnexpectedReason::Superseded(by) => format!(
                    "stop registering `{name}`: a tool record binds action `{action}`, so the refined {} `{}` register instead (objectstack_spec::materialise::refine::Superseded)",
                    plural(by.len(), "tool", "tools"),
                    by.join("`, `")
                ),
                UnexpectedReason::RecordSkipped { code, reason } => format!(
                    "stop registering `{name}`: the tool record ({at}) does not refine its executable [{code}]: {reason}"
                ),
            });
        }
        for MissingTool { name, path } in &self.missing {
            fixes.push(match registry::action_name(name) {
                Some(action) => format!(
                    "register `{name}` for action `{action}` ({path}): it materialises, so the lint lets skills name it; if the runtime is right to skip it, change the action so the static predicate agrees"
                ),
                None => format!(
                    "register `{name}` for the tool record ({path}): it refines its executable (objectstack_spec::materialise::refine::judge), so the lint lets skills name it"
                ),
            });
        }
        fixes
    }

    pub(crate) fn summary(&self) -> String {
        let approval = match self.approval {
            Approval::Wired => "approval queue wired",
            Approval::NotWired => "approval queue not wired",
        };
        if self.is_conformant() {
            format!(
                "materialised tools (`action_*`, {approval}) conform: {} registered, {} expected from the stack",
                self.registered, self.expected
            )
        } else {
            format!(
                "materialised tools (`action_*`, {approval}) do not match the stack ({} {}):",
                self.problem_count(),
                plural(self.problem_count(), "problem", "problems")
            )
        }
    }

    pub(crate) fn write_diff(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.unexpected.is_empty() {
            writeln!(
                f,
                "  registered, but no action of the stack accounts for them:"
            )?;
            for tool in &self.unexpected {
                // Names come from the dump and the stack: escaped, so none
                // can drive a terminal or forge a line of the report.
                let action = line_safe(registry::action_name(&tool.name).unwrap_or(""));
                let name = line_safe(&tool.name);
                match (&tool.reason, &tool.path) {
                    (UnexpectedReason::NoSuchAction, _) | (_, None) => {
                        writeln!(f, "    ! {name}: the stack declares no action `{action}`")?
                    }
                    (UnexpectedReason::DoesNotMaterialise(skip), Some(path)) => writeln!(
                        f,
                        "    ! {name} ({}): does not materialise: {}",
                        line_safe(path),
                        line_safe(&skip.to_string())
                    )?,
                    (UnexpectedReason::NeedsApproval(because), Some(path)) => writeln!(
                        f,
                        "    ! {name} ({}): needs confirmation (`{}`) but the approval queue is not wired",
                        line_safe(path),
                        line_safe(&because.to_string())
                    )?,
                    (UnexpectedReason::Superseded(by), Some(path)) => writeln!(
                        f,
                        "    ! {name} ({}): superseded by the refined {} `{}`",
                        line_safe(path),
                        plural(by.len(), "tool", "tools"),
                        line_safe(&by.join("`, `"))
                    )?,
                    (UnexpectedReason::RecordSkipped { code, reason }, Some(path)) => writeln!(
                        f,
                        "    ! {name} ({}): the record does not refine its executable [{code}]: {}",
                        line_safe(path),
                        line_safe(reason)
                    )?,
                }
            }
        }
        if !self.missing.is_empty() {
            writeln!(f, "  not registered, although their action materialises:")?;
            for MissingTool { name, path } in &self.missing {
                writeln!(f, "    + {} ({})", line_safe(name), line_safe(path))?;
            }
        }
        if !self.held_for_approval.is_empty() {
            writeln!(
                f,
                "  held for approval (need confirmation; correctly not registered without the queue):"
            )?;
            for HeldTool {
                name,
                path,
                because,
            } in &self.held_for_approval
            {
                writeln!(
                    f,
                    "    = {} ({}: `{}`)",
                    line_safe(name),
                    line_safe(path),
                    line_safe(&because.to_string())
                )?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for FamilyReport {
    /// The verdict, the diff and the numbered fixes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.summary())?;
        self.write_diff(f)?;
        write_fixes(f, &self.fixes())
    }
}

/// The names of the stack's bound tool records (any `binding`): the names
/// the materialised check judges besides `action_*`.
pub fn bound_record_names(stack: &Map<String, Value>) -> BTreeSet<String> {
    let arena = objectstack_spec::json::Arena::new();
    let stack = objectstack_spec::json::Map::from_serde(stack, &arena);
    records_of(stack, "tools", &arena)
        .iter()
        .filter(|t| refine::binding(t.fields).is_some())
        .filter_map(|t| t.name().filter(|n| !n.is_empty()).map(str::to_owned))
        // A platform name stays the package check's.
        .filter(|n| registry::owner(n).is_none())
        .collect()
}

/// Checks the registered `action_*` names against the actions of `stack`
/// (see the module docs). Names outside the family are ignored; a name
/// registered twice counts once.
pub fn check_materialised(
    stack: &Map<String, Value>,
    registered: &[&str],
    approval: Approval,
) -> FamilyReport {
    let statuses = action_statuses(stack, approval);
    let registered: BTreeSet<&str> = registered
        .iter()
        .copied()
        .filter(|name| name.starts_with(registry::ACTION_PREFIX) || statuses.contains_key(*name))
        .collect();
    let mut report = FamilyReport {
        approval,
        registered: registered.len(),
        expected: statuses
            .values()
            .filter(|s| matches!(s, Status::Expected { .. }))
            .count(),
        unexpected: Vec::new(),
        missing: Vec::new(),
        held_for_approval: Vec::new(),
    };
    for name in &registered {
        let unexpected = |path: &str, reason| UnexpectedTool {
            name: (*name).to_owned(),
            path: Some(path.to_owned()),
            reason,
        };
        match statuses.get(*name) {
            Some(Status::Expected { .. }) => {}
            Some(Status::Held { path, because }) => report
                .unexpected
                .push(unexpected(path, UnexpectedReason::NeedsApproval(*because))),
            Some(Status::Skipped { path, skip }) => report.unexpected.push(unexpected(
                path,
                UnexpectedReason::DoesNotMaterialise(skip.clone()),
            )),
            Some(Status::Superseded { path, by }) => report
                .unexpected
                .push(unexpected(path, UnexpectedReason::Superseded(by.clone()))),
            Some(Status::RecordSkipped { path, code, reason }) => {
                report.unexpected.push(unexpected(
                    path,
                    UnexpectedReason::RecordSkipped {
                        code,
                        reason: reason.clone(),
                    },
                ))
            }
            None => report.unexpected.push(UnexpectedTool {
                name: (*name).to_owned(),
                path: None,
                reason: UnexpectedReason::NoSuchAction,
            }),
        }
    }
    for (name, status) in &statuses {
        if registered.contains(name.as_str()) {
            continue;
        }
        match status {
            Status::Expected { path } => report.missing.push(MissingTool {
                name: name.clone(),
                path: path.clone(),
            }),
            Status::Held { path, because } => report.held_for_approval.push(HeldTool {
                name: name.clone(),
                path: path.clone(),
                because: *because,
            }),
            Status::Skipped { .. } | Status::Superseded { .. } | Status::RecordSkipped { .. } => {}
        }
    }
    report
}

/// What the stack says about one tool name.
#[derive(Debug, Clone)]
enum Status {
    /// An action materialises and the runtime must register it.
    Expected { path: String },
    /// An action materialises but needs confirmation the runtime cannot
    /// ask for.
    Held {
        path: String,
        because: ConfirmationReason,
    },
    /// An action exists but does not materialise.
    Skipped { path: String, skip: StaticSkip },
    /// A tool record binds the action: the raw tool must not register.
    Superseded { path: String, by: Vec<String> },
    /// A bound tool record that does not refine its executable.
    RecordSkipped {
        path: String,
        code: &'static str,
        reason: String,
    },
}

impl Status {
    fn rank(&self) -> u8 {
        match self {
            Status::Expected { .. } => 2,
            Status::Held { .. } => 1,
            Status::Skipped { .. } | Status::Superseded { .. } | Status::RecordSkipped { .. } => 0,
        }
    }
}

/// Every action name of the stack (stack-level `actions[]`, then each
/// object's `actions[]`, read leniently; names must be non-empty strings)
/// as a tool name with its status. When two actions share a name, the
/// best status wins (expected, then held, then skipped), the first on a
/// tie.
fn action_statuses(stack: &Map<String, Value>, approval: Approval) -> BTreeMap<String, Status> {
    let arena = objectstack_spec::json::Arena::new();
    let stack = objectstack_spec::json::Map::from_serde(stack, &arena);
    let mut statuses = BTreeMap::new();
    let root = JsonPath::root();
    let tools = records_of(stack, "tools", &arena);
    let superseded = Superseded::of(tools.iter().map(|t| t.fields));
    let mut visit = |actions: Vec<objectstack_spec::collection::Record<'_>>, base: JsonPath| {
        for action in actions {
            let Some(name) = action.name().filter(|n| !n.is_empty()) else {
                continue;
            };
            let path = base.index(action.index()).to_string();
            if superseded.contains(name) && static_skip(action.fields).is_none() {
                let by = superseded
                    .refined_by(name)
                    .iter()
                    .map(|b| (*b).to_owned())
                    .collect();
                statuses.insert(
                    registry::action_tool_name(name),
                    Status::Superseded { path, by },
                );
                continue;
            }
            let status = match static_skip(action.fields) {
                Some(skip) => Status::Skipped { path, skip },
                None => match (needs_confirmation(action.fields), approval) {
                    (Some(because), Approval::NotWired) => Status::Held { path, because },
                    _ => Status::Expected { path },
                },
            };
            let tool = registry::action_tool_name(name);
            match statuses.get(&tool) {
                Some(existing) if Status::rank(existing) >= status.rank() => {}
                _ => {
                    statuses.insert(tool, status);
                }
            }
        }
    };
    visit(records_of(stack, "actions", &arena), root.key("actions"));
    let objects = records_of(stack, "objects", &arena);
    for object in &objects {
        let base = root.key("objects").index(object.index()).key("actions");
        visit(records_of(object.fields, "actions", &arena), base);
    }
    refinement_statuses(stack, &arena, &tools, &objects, approval, &mut statuses);
    // A superseded tool names the records that refine its action, when
    // any does.
    let refining: BTreeSet<String> = statuses
        .iter()
        .filter(|(_, s)| matches!(s, Status::Expected { .. } | Status::Held { .. }))
        .map(|(n, _)| n.clone())
        .collect();
    for status in statuses.values_mut() {
        if let Status::Superseded { by, .. } = status
            && by.iter().any(|b| refining.contains(b))
        {
            by.retain(|b| refining.contains(b));
        }
    }
    statuses
}

/// The status of each bound tool record's name (the first record of a
/// name decides it).
fn refinement_statuses<'a>(
    stack: &'a objectstack_spec::json::Map<'a>,
    arena: &'a objectstack_spec::json::Arena,
    tools: &[objectstack_spec::collection::Record<'a>],
    objects: &[objectstack_spec::collection::Record<'a>],
    approval: Approval,
    statuses: &mut BTreeMap<String, Status>,
) {
    let judged = refine::judge_stacks(
        &[stack],
        arena,
        Reserved {
            platform: &registry::owner,
            family_prefixes: registry::FAMILY_PREFIXES,
        },
    );
    let actions: Vec<ActionAt<'a>> = records_of(stack, "actions", arena)
        .into_iter()
        .chain(
            objects
                .iter()
                .flat_map(|o| records_of(o.fields, "actions", arena)),
        )
        .map(|a| ActionAt {
            action: a.fields,
            owner: None,
        })
        .collect();
    for (record, outcome) in tools.iter().zip(judged) {
        let Some(name) = record.name().filter(|n| !n.is_empty()) else {
            continue;
        };
        // A platform name stays the package check's.
        if statuses.contains_key(name) || registry::owner(name).is_some() {
            continue;
        }
        let path = JsonPath::root()
            .key("tools")
            .index(record.index())
            .to_string();
        let status = match outcome {
            Ok(None) => continue,
            Ok(Some(r)) => {
                let gate = (r.requires_confirmation == Some(true))
                    .then_some(ConfirmationReason::AiRequiresConfirmation);
                let because = match r.binding {
                    Binding::Action(a) => actions
                        .iter()
                        .find(|at| at.action.get("name").and_then(|n| n.as_str()) == Some(a))
                        .and_then(|at| needs_confirmation(at.action))
                        .or(gate),
                    Binding::Flow(_) => gate,
                };
                match (because, approval) {
                    (Some(because), Approval::NotWired) => Status::Held { path, because },
                    _ => Status::Expected { path },
                }
            }
            Err(skip) => Status::RecordSkipped {
                path,
                code: skip.code(),
                reason: skip.reason(refine::binding(record.fields).and_then(Result::ok)),
            },
        };
        statuses.insert(name.to_owned(), status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stack(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn ai() -> Value {
        json!({"exposed": true, "description": "Does something useful for the user, described at length."})
    }

    /// A stack with: stack-level `notify` (script, materialises);
    /// object `task` with `complete` (script), `purge` (needs confirmation:
    /// confirmText), `defer` (not exposed), `open_form` (modal).
    fn todo() -> Map<String, Value> {
        stack(json!({
            "actions": [{"name": "notify", "type": "api", "target": "/notify", "ai": ai()}],
            "objects": [{
                "name": "task",
                "actions": [
                    {"name": "complete", "type": "script", "target": "complete", "ai": ai()},
                    {"name": "purge", "type": "script", "target": "purge", "confirmText": "Sure?", "ai": ai()},
                    {"name": "defer", "type": "script", "target": "defer"},
                    {"name": "open_form", "type": "modal", "target": "f", "ai": ai()}
                ]
            }]
        }))
    }

    #[test]
    fn a_matching_runtime_conforms_without_approval() {
        let r = check_materialised(
            &todo(),
            &["action_complete", "action_notify"],
            Approval::NotWired,
        );
        assert!(r.is_conformant(), "{r}");
        assert_eq!((r.registered, r.expected), (2, 2));
        assert_eq!(r.held_for_approval.len(), 1);
        assert_eq!(r.held_for_approval[0].name, "action_purge");
        assert_eq!(r.held_for_approval[0].path, "objects[0].actions[1]");
        assert_eq!(
            r.held_for_approval[0].because,
            ConfirmationReason::ConfirmText
        );
        assert!(
            r.to_string()
                .contains("= action_purge (objects[0].actions[1]: `confirmText`)"),
            "{r}"
        );
    }

    #[test]
    fn a_matching_runtime_conforms_with_approval() {
        let names = ["action_complete", "action_notify", "action_purge"];
        let r = check_materialised(&todo(), &names, Approval::Wired);
        assert!(r.is_conformant(), "{r}");
        assert!(r.held_for_approval.is_empty());
        assert_eq!(r.expected, 3);
    }

    #[test]
    fn missing_when_a_materialising_action_was_not_registered() {
        let r = check_materialised(&todo(), &["action_complete"], Approval::NotWired);
        assert_eq!(
            r.missing,
            [MissingTool {
                name: "action_notify".into(),
                path: "actions[0]".into()
            }]
        );
        assert!(r.unexpected.is_empty());
        assert!(
            r.fixes()[0].starts_with("register `action_notify` for action `notify` (actions[0])")
        );
        // With approval wired, the confirmation-gated action is missing too.
        let r = check_materialised(
            &todo(),
            &["action_complete", "action_notify"],
            Approval::Wired,
        );
        let missing: Vec<_> = r.missing.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(missing, ["action_purge"]);
    }

    #[test]
    fn unexpected_when_no_action_accounts_for_a_tool() {
        let names = [
            "action_complete",
            "action_notify",
            "action_ghost",
            "action_defer",
            "action_open_form",
            "action_purge",
            "query_data",
        ];
        let r = check_materialised(&todo(), &names, Approval::NotWired);
        let got: Vec<_> = r
            .unexpected
            .iter()
            .map(|u| (u.name.as_str(), u.path.as_deref(), u.reason.code()))
            .collect();
        assert_eq!(
            got,
            [
                ("action_defer", Some("objects[0].actions[2]"), "not_exposed"),
                ("action_ghost", None, "no_such_action"),
                (
                    "action_open_form",
                    Some("objects[0].actions[3]"),
                    "ui_only_type"
                ),
                (
                    "action_purge",
                    Some("objects[0].actions[1]"),
                    "needs_approval"
                ),
            ]
        );
        assert!(r.missing.is_empty());
        assert_eq!(r.registered, 6, "query_data is not a family member");
        let fixes = r.fixes();
        assert!(
            fixes[1].contains("the stack declares no action `ghost`"),
            "{fixes:?}"
        );
        assert!(
            fixes[3].contains("needs confirmation (`confirmText`)"),
            "{fixes:?}"
        );
    }

    #[test]
    fn map_shaped_collections_and_junk_are_read_leniently() {
        let s = stack(json!({
            "actions": {"notify": {"type": "script", "body": "x", "ai": ai()}},
            "objects": [null, 5, {"name": "t", "actions": [null, {"name": "", "ai": ai()}, {"name": 3}, {"name": "go", "operation": "update", "ai": ai()}]}]
        }));
        let r = check_materialised(&s, &[], Approval::NotWired);
        let missing: Vec<_> = r
            .missing
            .iter()
            .map(|m| (m.name.as_str(), m.path.as_str()))
            .collect();
        assert_eq!(
            missing,
            [
                ("action_go", "objects[0].actions[2]"),
                ("action_notify", "actions[0]")
            ]
        );
        assert!(
            check_materialised(
                &stack(json!({"objects": "x", "actions": 7})),
                &["action_x"],
                Approval::Wired
            )
            .unexpected
            .len()
                == 1
        );
    }

    #[test]
    fn a_shared_name_takes_the_best_status() {
        let s = stack(json!({
            "actions": [{"name": "go", "type": "modal", "ai": ai()}],
            "objects": [{"name": "t", "actions": [{"name": "go", "type": "script", "target": "x", "ai": ai()}]}]
        }));
        let r = check_materialised(&s, &["action_go"], Approval::NotWired);
        assert!(r.is_conformant(), "{r}");
        assert_eq!(r.expected, 1);
    }

    #[test]
    fn explicit_false_confirmation_is_expected_without_approval() {
        let s = stack(json!({"actions": [{
            "name": "wipe", "type": "script", "target": "x", "variant": "danger",
            "ai": {"exposed": true, "description": "Wipes things, asserted safe to run unattended.", "requiresConfirmation": false}
        }]}));
        assert!(check_materialised(&s, &["action_wipe"], Approval::NotWired).is_conformant());
    }
}
