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
//! - [`redact`]: userinfo out of URLs before anything shows them.
#![deny(missing_docs)]

pub mod approval;
pub mod materialise;
pub mod projection;
pub mod redact;
pub mod runtime;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
