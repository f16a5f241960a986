//! The bridge from actions to AI tools (ADR-0011).
//!
//! - [`materialise`]: which actions of a stack become tools, and why the
//!   others do not; the [`objectstack_spec::AIToolDefinition`] of each.
//! - [`projection`]: the same definitions rendered for model APIs (MCP,
//!   OpenAI strict function tools, Anthropic tools).
//! - [`runtime`]: a tool registry that validates arguments and dispatches
//!   calls to the host's data engine, automation service or HTTP client.
//! - [`approval`]: the durable human-approval queue for actions that need
//!   confirmation.
#![deny(missing_docs)]

pub mod approval;
pub mod materialise;
pub mod projection;
pub mod runtime;

/// Runs one of `spec`'s action predicates, which read the borrowed document
/// (`objectstack_spec::json`), on an action held as a `serde_json` map.
/// Strings are shared, not copied; only the containers are rebuilt.
pub(crate) fn on_action<R>(
    action: &serde_json::Map<String, serde_json::Value>,
    predicate: impl FnOnce(&objectstack_spec::json::Map<'_>) -> R,
) -> R {
    let arena = objectstack_spec::json::Arena::new();
    predicate(objectstack_spec::json::Map::from_serde(action, &arena))
}
