//! Validation that tells an author exactly what is wrong, where, and how
//! to fix it.
//!
//! [`validate`] reads a stack as *raw JSON*, so it never fails: a wrong
//! type anywhere is a [`Diagnostic`], not an error, and every problem is
//! reported at once. Collections are read the way [`crate::collection`]
//! reads them (arrays or maps keyed by name), but every diagnostic's
//! [`JsonPath`] is *raw*: a real array index (counting entries that are not
//! objects) or a real map key, so [`crate::source::SourceIndex`] can turn
//! it into a line and column.
//!
//! What is checked, by shape (one private module each, plus `keys` for
//! the unknown/retired key rules and `check` for type, enum and name
//! checks):
//! - `stack`: the collections and their records (shape, names,
//!   duplicates), objects and their fields, near-miss top-level keys;
//! - `action`: actions (loose) and their params (strict);
//! - `ai`: the `ai` block and its param hints (strict);
//! - `tool`: tool records with the Phase 2 `binding` (strict);
//! - `skill`: skills (strict) and their trigger conditions;
//! - `agent`: agents (loose);
//! - `duplicate`: keys written twice in one object, anywhere in the
//!   document.
//!
//! To add a rule: put the check in the module of its shape, give it an
//! existing [`DiagnosticId`] (or add one to `ids.rs`, with its
//! documentation), add a fixture under `spec/tests/data/diagnostics/` and
//! accept the snapshot.
//!
//! The `ai` block, params, param hints, tool records, skills and tool
//! bindings are *strict*: an undeclared key is a
//! [`DiagnosticId::UnknownKey`] that names the key meant, or explains why
//! the key does not exist; a removed key is a [`DiagnosticId::RetiredKey`]
//! with its explanation. Every id is listed, with its documentation, in
//! [`DiagnosticId::ALL`].

mod action;
mod agent;
mod ai;
mod check;
mod duplicate;
mod ids;
mod join;
mod keys;
mod skill;
mod stack;
mod tool;

use std::fmt;

use crate::json::Map;

pub use ai::MIN_DESCRIPTION_LEN;
pub use ids::DiagnosticId;
pub use join::{Join, Threads};

use crate::path::JsonPath;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The stack is wrong: upstream refuses it, or it silently does
    /// something other than what it says.
    Error,
    /// Probably a mistake, but the stack is usable.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which part of a member a diagnostic's path points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// The value at the path (the usual case).
    Value,
    /// The key of the path's last segment (for unknown and retired keys,
    /// and for names given by a map key).
    Key,
}

/// Another location a diagnostic refers to (the first definition of a
/// duplicate name, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    /// Which composed stack it is in (an index into the stacks given to
    /// [`crate::compose::compose`]); `None` for the validated document.
    pub source: Option<usize>,
    /// Raw path of the location.
    pub path: JsonPath,
    /// What is there.
    pub message: String,
}

/// One problem found in a stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stable id.
    pub id: DiagnosticId,
    /// How serious it is.
    pub severity: Severity,
    /// Raw path of the offending value.
    pub path: JsonPath,
    /// Whether the path's key or its value is at fault.
    pub anchor: Anchor,
    /// Which composed stack the path is in (see [`Related::source`]).
    pub source: Option<usize>,
    /// What is wrong, in one sentence.
    pub message: String,
    /// How to fix it.
    pub fix: String,
    /// Other locations involved.
    pub related: Vec<Related>,
}

impl Diagnostic {
    /// A diagnostic with the id's default severity, pointing at a value.
    pub fn new(
        id: DiagnosticId,
        path: JsonPath,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            id,
            severity: id.default_severity(),
            path,
            anchor: Anchor::Value,
            source: None,
            message: message.into(),
            fix: fix.into(),
            related: Vec::new(),
        }
    }

    /// The same diagnostic pointing at the key of its path.
    pub fn at_key(mut self) -> Self {
        self.anchor = Anchor::Key;
        self
    }

    /// The same diagnostic with another severity.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// The same diagnostic with a related location.
    pub fn with_related(mut self, related: Related) -> Self {
        self.related.push(related);
        self
    }

    /// Whether it is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_root() {
            "(top level)".to_owned()
        } else {
            self.path.to_string()
        };
        write!(
            f,
            "{}[{}] {path}: {} (fix: {})",
            self.severity, self.id, self.message, self.fix
        )
    }
}

/// Validates a stack document, reporting every problem at once, in
/// document order of the checks (collections in the order `objects`,
/// `actions`, `tools`, `skills`, `agents`), then the keys written twice in
/// one object (which only a document read by [`crate::json::parse`] can
/// tell: see [`crate::json::Map::duplicates`]).
pub fn validate(document: &Map<'_>) -> Vec<Diagnostic> {
    validate_with(document, &Threads)
}

/// [`validate`], with a large document's two halves run by `join` (see
/// [`Join`]); the diagnostics are the same, in the same order.
pub fn validate_with(document: &Map<'_>, join: &dyn Join) -> Vec<Diagnostic> {
    let mut cx = check::Cx::default();
    stack::check(&mut cx, document, join);
    duplicate::check(&mut cx, document);
    cx.into_diagnostics()
}

/// The declared keys of each strict shape, with the model type that
/// declares them: `(type, known, also known)`. A test in `model` holds
/// each list equal to the type's fields.
#[cfg(test)]
pub(crate) fn strict_keys() -> [(
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
); 6] {
    [
        ("ActionAi", ai::AI.known, ai::AI.also_known),
        ("ParamHint", ai::HINT.known, ai::HINT.also_known),
        ("ActionParam", action::PARAM.known, action::PARAM.also_known),
        ("Tool", tool::BOUND_TOOL.known, tool::BOUND_TOOL.also_known),
        ("ToolBinding", tool::BINDING.known, tool::BINDING.also_known),
        ("Skill", skill::SKILL.known, skill::SKILL.also_known),
    ]
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// Validates a JSON value that must be an object.
    pub(crate) fn run(value: serde_json::Value) -> Vec<Diagnostic> {
        match value {
            serde_json::Value::Object(map) => {
                let arena = crate::json::Arena::new();
                validate(Map::from_serde(&map, &arena))
            }
            _ => unreachable!("test documents are objects"),
        }
    }

    /// The `(id, path)` pairs of a validation, for compact assertions.
    pub(crate) fn ids(value: serde_json::Value) -> Vec<(&'static str, String)> {
        run(value)
            .into_iter()
            .map(|d| (d.id.as_str(), d.path.to_string()))
            .collect()
    }
}
