//! Which actions materialise as AI tools, and which need a human's
//! confirmation.
//!
//! This is the single implementation of the static predicate: the lint's
//! resolution universe, the bridge's registration and the conformance kit
//! all call [`static_skip`] (or [`materialises`]), so they can never
//! disagree about which actions become `action_<name>` tools.
//!
//! The checks run in this order and the first that applies is reported:
//! 1. `ai.exposed` is not exactly `true` ([`StaticSkip::NotExposed`]);
//!    a non-boolean `exposed` or a non-object `ai` is a malformed block;
//! 2. `ai.description` is not a non-empty string
//!    ([`StaticSkip::MissingDescription`]);
//! 3. the rest of the `ai` block is malformed
//!    ([`StaticSkip::InvalidAiBlock`]): a non-boolean `requiresConfirmation`,
//!    a `category` outside the enum, `paramHints` that is not a map of
//!    objects, an `outputSchema` that is not an object;
//! 4. a declarative field write (`operation: "update"`) materialises,
//!    whatever `type` says;
//! 5. a UI-only type (`url`, `modal`, `form`) ([`StaticSkip::UiOnlyType`]);
//! 6. any type other than `script`, `api`, `flow`, or no type
//!    ([`StaticSkip::UnsupportedType`]);
//! 7. a `script` with neither `target` nor `body`, an `api` or `flow` with
//!    no `target` ([`StaticSkip::MissingTarget`]).
//!
//! "Set" means JavaScript truthiness throughout, as upstream reads it.
//!
//! Bound tool records (ADR-0109 Phase 2) have their predicate in
//! [`refine`], judged against an action's [`surface`].

use std::fmt;

use crate::json::{Map, Value};

pub mod refine;
pub mod surface;

use crate::json::{kind as json_kind, truthy as is_truthy};

/// The tool categories an `ai.category` may name.
pub const AI_CATEGORIES: &[&str] = &[
    "data",
    "action",
    "flow",
    "integration",
    "vector_search",
    "analytics",
    "utility",
];

/// Action types that only make sense in a UI and never become tools.
pub const UI_ONLY_TYPES: &[&str] = &["url", "modal", "form"];

/// Action locations that put an action in the context of one record, so
/// its tool takes a `recordId`.
pub const ROW_CONTEXT_LOCATIONS: &[&str] = &[
    "list_item",
    "record_header",
    "record_more",
    "record_related",
];

/// How a materialised action is executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    /// The data engine's action executor (`type: script`).
    Script,
    /// A declarative field write of `patch` on the record
    /// (`operation: "update"`), carried by the data engine.
    FieldWrite,
    /// An HTTP call (`type: api`).
    Api,
    /// The automation service (`type: flow`).
    Flow,
}

/// Why an action does not materialise, judged on the action alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaticSkip {
    /// `ai.exposed` is not `true`: the action stays human-only.
    NotExposed,
    /// Exposed, but `ai.description` is missing or empty.
    MissingDescription,
    /// The `ai` block is malformed; the string names the fault.
    InvalidAiBlock(String),
    /// A UI-only type (`url`, `modal`, `form`); the string is the type.
    UiOnlyType(String),
    /// A type the bridge cannot dispatch, or none; `None` when absent.
    UnsupportedType(Option<String>),
    /// The type needs a target (or, for scripts, a body) and has none.
    MissingTarget {
        /// The action's type (`script`, `api` or `flow`).
        action_type: String,
    },
}

impl StaticSkip {
    /// A stable machine-readable code for this reason.
    pub fn code(&self) -> &'static str {
        match self {
            StaticSkip::NotExposed => "not_exposed",
            StaticSkip::MissingDescription => "missing_description",
            StaticSkip::InvalidAiBlock(_) => "invalid_ai_block",
            StaticSkip::UiOnlyType(_) => "ui_only_type",
            StaticSkip::UnsupportedType(_) => "unsupported_type",
            StaticSkip::MissingTarget { .. } => "missing_target",
        }
    }

    /// A sentence for a person: what is wrong and how to change it.
    pub fn reason(&self) -> String {
        match self {
            StaticSkip::NotExposed => "not exposed to AI: `ai.exposed` is not true (opt in with \
                 `ai: { exposed: true, description: \"...\" }`, or leave it human-only)"
                .to_owned(),
            StaticSkip::MissingDescription => {
                "`ai.exposed` is true but `ai.description` is missing or \
                 empty: write an LLM-facing description of at least 40 characters"
                    .to_owned()
            }
            StaticSkip::InvalidAiBlock(fault) => {
                format!(
                    "the `ai` block is malformed: {fault}; fix it before the action can be armed"
                )
            }
            StaticSkip::UiOnlyType(t) => format!(
                "type `{t}` is UI-only and cannot run without a person; use a `script`, `api` or \
                 `flow` action to give the AI this capability"
            ),
            StaticSkip::UnsupportedType(Some(t)) => format!(
                "type `{t}` cannot be dispatched as a tool; only `script`, `api` and `flow` \
                 actions (or `operation: \"update\"` field writes) materialise"
            ),
            StaticSkip::UnsupportedType(None) => {
                "the action has no `type`; set `type` to `script`, \
                 `api` or `flow` (or declare `operation: \"update\"` with a `patch`)"
                    .to_owned()
            }
            StaticSkip::MissingTarget { action_type } if action_type == "script" => {
                "a `script` action needs a `target` or a `body` to run".to_owned()
            }
            StaticSkip::MissingTarget { action_type } => {
                format!("an `{action_type}` action needs a `target` to run")
            }
        }
    }
}

impl fmt::Display for StaticSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason())
    }
}

/// Why an action needs a human's confirmation before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfirmationReason {
    /// The author set `ai.requiresConfirmation: true`.
    AiRequiresConfirmation,
    /// The action has a `confirmText`.
    ConfirmText,
    /// The action has `mode: "delete"`.
    ModeDelete,
    /// The action has `variant: "danger"`.
    VariantDanger,
}

impl ConfirmationReason {
    /// The metadata that causes it, as an author would write it.
    pub fn as_source(&self) -> &'static str {
        match self {
            ConfirmationReason::AiRequiresConfirmation => "ai.requiresConfirmation: true",
            ConfirmationReason::ConfirmText => "confirmText",
            ConfirmationReason::ModeDelete => "mode: delete",
            ConfirmationReason::VariantDanger => "variant: danger",
        }
    }
}

impl fmt::Display for ConfirmationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_source())
    }
}

/// The `ai` block of an action when it is an object.
pub fn ai_block<'a>(action: &Map<'a>) -> Option<&'a Map<'a>> {
    action.get("ai").and_then(Value::as_object)
}

/// Judges the action alone: `None` when it materialises, else the first
/// reason it does not (see the module docs for the order).
pub fn static_skip(action: &Map<'_>) -> Option<StaticSkip> {
    let ai = match action.get("ai") {
        None | Some(Value::Null) => return Some(StaticSkip::NotExposed),
        Some(Value::Object(ai)) => ai,
        Some(other) => {
            return Some(StaticSkip::InvalidAiBlock(format!(
                "`ai` must be an object, found {}",
                json_kind(other)
            )));
        }
    };
    match ai.get("exposed") {
        Some(Value::Bool(true)) => {}
        None | Some(Value::Bool(false)) => return Some(StaticSkip::NotExposed),
        Some(other) => {
            return Some(StaticSkip::InvalidAiBlock(format!(
                "`ai.exposed` must be a boolean, found {}",
                json_kind(other)
            )));
        }
    }
    match ai.get("description") {
        Some(Value::String(s)) if !s.is_empty() => {}
        _ => return Some(StaticSkip::MissingDescription),
    }
    if let Some(fault) = ai_block_fault(ai) {
        return Some(StaticSkip::InvalidAiBlock(fault));
    }
    route_or_skip(action).err()
}

/// Whether the action materialises as a tool (no [`static_skip`] reason).
pub fn materialises(action: &Map<'_>) -> bool {
    static_skip(action).is_none()
}

/// The first fault of an `ai` block's optional keys, if any.
pub fn ai_block_fault(ai: &Map<'_>) -> Option<String> {
    if let Some(v) = ai.get("requiresConfirmation")
        && !v.is_boolean()
    {
        return Some(format!(
            "`ai.requiresConfirmation` must be a boolean, found {}",
            json_kind(v)
        ));
    }
    if let Some(v) = ai.get("category") {
        match v.as_str() {
            Some(c) if AI_CATEGORIES.contains(&c) => {}
            Some(c) => {
                return Some(format!(
                    "`ai.category` is `{c}`, which is not one of {}",
                    AI_CATEGORIES.join(", ")
                ));
            }
            None => {
                return Some(format!(
                    "`ai.category` must be a string, found {}",
                    json_kind(v)
                ));
            }
        }
    }
    if let Some(v) = ai.get("paramHints") {
        match v.as_object() {
            Some(hints) => {
                if let Some((key, hint)) = hints.iter().find(|(_, h)| !h.is_object()) {
                    return Some(format!(
                        "`ai.paramHints.{key}` must be an object, found {}",
                        json_kind(hint)
                    ));
                }
            }
            None => {
                return Some(format!(
                    "`ai.paramHints` must be a map of param name to hint, found {}",
                    json_kind(v)
                ));
            }
        }
    }
    if let Some(v) = ai.get("outputSchema")
        && !v.is_object()
    {
        return Some(format!(
            "`ai.outputSchema` must be a JSON Schema object, found {}",
            json_kind(v)
        ));
    }
    None
}

/// Whether the action is a declarative field write (`operation: "update"`).
pub fn is_field_write(action: &Map<'_>) -> bool {
    action.get("operation").and_then(Value::as_str) == Some("update")
}

/// How the action would be dispatched, judged on its type and target only
/// (the `ai` block is not consulted).
pub fn route_or_skip(action: &Map<'_>) -> Result<Route, StaticSkip> {
    if is_field_write(action) {
        return Ok(Route::FieldWrite);
    }
    let action_type = match action.get("type") {
        Some(Value::String(t)) => *t,
        Some(other) => {
            return Err(StaticSkip::UnsupportedType(Some(other.to_string())));
        }
        None => return Err(StaticSkip::UnsupportedType(None)),
    };
    if UI_ONLY_TYPES.contains(&action_type) {
        return Err(StaticSkip::UiOnlyType(action_type.to_owned()));
    }
    let (route, has_target) = match action_type {
        "script" => (
            Route::Script,
            is_truthy(action.get("target")) || is_truthy(action.get("body")),
        ),
        "api" => (Route::Api, is_truthy(action.get("target"))),
        "flow" => (Route::Flow, is_truthy(action.get("target"))),
        other => return Err(StaticSkip::UnsupportedType(Some(other.to_owned()))),
    };
    if has_target {
        Ok(route)
    } else {
        Err(StaticSkip::MissingTarget {
            action_type: action_type.to_owned(),
        })
    }
}

/// The destructive signal an action carries, checked in the order
/// `confirmText`, `mode: delete`, `variant: danger`.
pub fn destructive_signal(action: &Map<'_>) -> Option<ConfirmationReason> {
    if is_truthy(action.get("confirmText")) {
        Some(ConfirmationReason::ConfirmText)
    } else if action.get("mode").and_then(Value::as_str) == Some("delete") {
        Some(ConfirmationReason::ModeDelete)
    } else if action.get("variant").and_then(Value::as_str) == Some("danger") {
        Some(ConfirmationReason::VariantDanger)
    } else {
        None
    }
}

/// Whether the action looks destructive (see [`destructive_signal`]).
pub fn looks_destructive(action: &Map<'_>) -> bool {
    destructive_signal(action).is_some()
}

/// The explicit `ai.requiresConfirmation` choice, when it is a boolean.
pub fn explicit_confirmation(action: &Map<'_>) -> Option<bool> {
    ai_block(action)
        .and_then(|ai| ai.get("requiresConfirmation"))
        .and_then(Value::as_bool)
}

/// Why the action needs confirmation, or `None` when it may run directly.
///
/// `ai.requiresConfirmation` wins when it is a boolean; otherwise a
/// destructive-looking action needs confirmation.
pub fn needs_confirmation(action: &Map<'_>) -> Option<ConfirmationReason> {
    match explicit_confirmation(action) {
        Some(true) => Some(ConfirmationReason::AiRequiresConfirmation),
        Some(false) => None,
        None => destructive_signal(action),
    }
}

/// Whether the action looks destructive yet asserts
/// `ai.requiresConfirmation: false`: it would run unattended.
pub fn asserted_safe_despite_destructive(action: &Map<'_>) -> bool {
    explicit_confirmation(action) == Some(false) && looks_destructive(action)
}

/// Whether any of the action's `locations` puts it in a record's context.
pub fn is_row_context(action: &Map<'_>) -> bool {
    action
        .get("locations")
        .and_then(Value::as_array)
        .is_some_and(|locs| {
            locs.iter()
                .filter_map(Value::as_str)
                .any(|l| ROW_CONTEXT_LOCATIONS.contains(&l))
        })
}

/// Whether a call to the action's tool names one record (`recordId`),
/// given that the action names an object: it sits in a row-context
/// location, or it is a field write, which writes `patch` on one record
/// wherever it is shown. The runtime requires that id and the tool
/// definition lists it as required, from this one answer.
pub fn acts_on_one_record(action: &Map<'_>) -> bool {
    is_row_context(action) || is_field_write(action)
}

#[cfg(test)]
mod tests {
    use super::{ConfirmationReason, Route};
    use serde_json::{Map, Value, json};

    /// The predicates under test, over a `serde_json` action (leaked).
    fn dom(a: &Map<String, Value>) -> &'static crate::json::Map<'static> {
        let arena: &'static crate::json::Arena = Box::leak(Box::default());
        let a: &'static Map<String, Value> = Box::leak(Box::new(a.clone()));
        crate::json::Map::from_serde(a, arena)
    }
    fn static_skip(a: &Map<String, Value>) -> Option<super::StaticSkip> {
        super::static_skip(dom(a))
    }
    fn route_or_skip(a: &Map<String, Value>) -> Result<Route, super::StaticSkip> {
        super::route_or_skip(dom(a))
    }
    fn needs_confirmation(a: &Map<String, Value>) -> Option<ConfirmationReason> {
        super::needs_confirmation(dom(a))
    }
    fn asserted_safe_despite_destructive(a: &Map<String, Value>) -> bool {
        super::asserted_safe_despite_destructive(dom(a))
    }
    fn is_row_context(a: &Map<String, Value>) -> bool {
        super::is_row_context(dom(a))
    }
    fn acts_on_one_record(a: &Map<String, Value>) -> bool {
        super::acts_on_one_record(dom(a))
    }

    fn action(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("test actions are objects"),
        }
    }

    fn exposed(extra: Value) -> Map<String, Value> {
        let mut a = action(json!({
            "name": "a",
            "ai": {"exposed": true, "description": "Does a thing that is described well enough."}
        }));
        for (k, v) in action(extra) {
            a.insert(k, v);
        }
        a
    }

    fn code(a: &Map<String, Value>) -> Option<&'static str> {
        static_skip(a).map(|s| s.code())
    }

    #[test]
    fn not_exposed_when_ai_missing_or_false() {
        assert_eq!(
            code(&action(json!({"type": "script", "target": "x"}))),
            Some("not_exposed")
        );
        assert_eq!(
            code(&action(
                json!({"type": "script", "target": "x", "ai": {"exposed": false}})
            )),
            Some("not_exposed")
        );
        assert_eq!(code(&action(json!({"ai": null}))), Some("not_exposed"));
    }

    #[test]
    fn malformed_exposed_or_block_is_invalid() {
        assert_eq!(
            code(&action(json!({"ai": {"exposed": "true"}}))),
            Some("invalid_ai_block")
        );
        assert_eq!(code(&action(json!({"ai": true}))), Some("invalid_ai_block"));
    }

    #[test]
    fn missing_description() {
        assert_eq!(
            code(&action(json!({"ai": {"exposed": true}}))),
            Some("missing_description")
        );
        assert_eq!(
            code(&action(json!({"ai": {"exposed": true, "description": ""}}))),
            Some("missing_description")
        );
        assert_eq!(
            code(&action(json!({"ai": {"exposed": true, "description": 5}}))),
            Some("missing_description")
        );
    }

    #[test]
    fn invalid_optional_keys() {
        for bad in [
            json!({"requiresConfirmation": "yes"}),
            json!({"category": "magic"}),
            json!({"category": 3}),
            json!({"paramHints": []}),
            json!({"paramHints": {"x": "desc"}}),
            json!({"outputSchema": "string"}),
        ] {
            let mut a = exposed(json!({"type": "script", "target": "t"}));
            if let Some(Value::Object(ai)) = a.get_mut("ai") {
                for (k, v) in action(bad.clone()) {
                    ai.insert(k, v);
                }
            }
            assert_eq!(code(&a), Some("invalid_ai_block"), "{bad}");
        }
    }

    #[test]
    fn types_and_targets() {
        assert_eq!(
            code(&exposed(json!({"type": "script", "target": "t"}))),
            None
        );
        assert_eq!(
            code(&exposed(json!({"type": "script", "body": "return 1"}))),
            None
        );
        assert_eq!(code(&exposed(json!({"type": "api", "target": "/x"}))), None);
        assert_eq!(code(&exposed(json!({"type": "flow", "target": "f"}))), None);
        assert_eq!(
            code(&exposed(json!({"type": "modal", "target": "m"}))),
            Some("ui_only_type")
        );
        assert_eq!(code(&exposed(json!({"type": "url"}))), Some("ui_only_type"));
        assert_eq!(
            code(&exposed(json!({"type": "form"}))),
            Some("ui_only_type")
        );
        assert_eq!(
            code(&exposed(json!({"type": "other", "target": "x"}))),
            Some("unsupported_type")
        );
        assert_eq!(
            code(&exposed(json!({"target": "x"}))),
            Some("unsupported_type")
        );
        assert_eq!(
            code(&exposed(json!({"type": "script"}))),
            Some("missing_target")
        );
        assert_eq!(
            code(&exposed(json!({"type": "script", "target": ""}))),
            Some("missing_target")
        );
        assert_eq!(
            code(&exposed(json!({"type": "api", "body": "x"}))),
            Some("missing_target")
        );
        assert_eq!(
            code(&exposed(json!({"type": "flow"}))),
            Some("missing_target")
        );
    }

    #[test]
    fn field_write_materialises_whatever_the_type() {
        assert_eq!(
            code(&exposed(json!({"operation": "update", "patch": {"a": 1}}))),
            None
        );
        assert_eq!(
            code(&exposed(json!({"operation": "update", "type": "modal"}))),
            None
        );
        assert_eq!(
            route_or_skip(&exposed(json!({"operation": "update"}))),
            Ok(Route::FieldWrite)
        );
    }

    #[test]
    fn confirmation_rule() {
        let a = action(json!({"confirmText": "Sure?", "mode": "delete"}));
        assert_eq!(
            needs_confirmation(&a),
            Some(ConfirmationReason::ConfirmText)
        );
        let a = action(json!({"mode": "delete", "variant": "danger"}));
        assert_eq!(needs_confirmation(&a), Some(ConfirmationReason::ModeDelete));
        let a = action(json!({"variant": "danger"}));
        assert_eq!(
            needs_confirmation(&a),
            Some(ConfirmationReason::VariantDanger)
        );
        let a = action(json!({"variant": "danger", "ai": {"requiresConfirmation": false}}));
        assert_eq!(needs_confirmation(&a), None);
        assert!(asserted_safe_despite_destructive(&a));
        let a = action(json!({"ai": {"requiresConfirmation": true}}));
        assert_eq!(
            needs_confirmation(&a),
            Some(ConfirmationReason::AiRequiresConfirmation)
        );
        let a = action(json!({"confirmText": ""}));
        assert_eq!(needs_confirmation(&a), None);
    }

    #[test]
    fn row_context() {
        assert!(is_row_context(&action(
            json!({"locations": ["list_toolbar", "record_more"]})
        )));
        assert!(!is_row_context(&action(
            json!({"locations": ["list_toolbar"]})
        )));
        assert!(!is_row_context(&action(
            json!({"locations": "record_header"})
        )));
    }

    #[test]
    fn row_actions_and_field_writes_act_on_one_record() {
        assert!(acts_on_one_record(&action(
            json!({"locations": ["record_more"]})
        )));
        // A field write writes one record wherever it is shown.
        assert!(acts_on_one_record(&action(
            json!({"operation": "update", "locations": ["list_toolbar"]})
        )));
        assert!(acts_on_one_record(&action(json!({"operation": "update"}))));
        assert!(!acts_on_one_record(&action(
            json!({"type": "script", "locations": ["list_toolbar"]})
        )));
    }
}
