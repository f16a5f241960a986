//! The bridge from actions to AI tools (ADR-0011).
//!
//! Always there:
//!
//! - [`materialise`]: which actions of a stack become tools, and why the
//!   others do not; the [`objectstack_spec::AIToolDefinition`] of each.
//! - [`projection`]: the same definitions rendered for model APIs (MCP,
//!   OpenAI strict function tools, Anthropic tools).
//! - [`redact`]: userinfo out of URLs before anything shows them.
//!
//! Behind cargo features (none is on by default, so reading a stack costs
//! only the spec, the registry and serde):
//!
//! | feature | gives | implies |
//! | --- | --- | --- |
//! | `approval` | `approval`: the durable human-approval queue for actions that need confirmation, with the in-memory store; `actor` | |
//! | `runtime` | `runtime`: a tool registry that validates arguments and dispatches calls to the host's data engine, automation service or HTTP client | `approval` |
//! | `sqlite` | `approval::SqliteStore`, one file (rusqlite, bundled SQLite) | `approval` |
//! | `postgres` | `approval::PostgresStore`, one database several hosts share (tokio-postgres on a runtime of its own) | `approval` |
//! | `http` | `runtime::HttpApiClient`, the default API client (reqwest) | `runtime` |
//!
//! The runtime uses the approval queue, never the other way round; both
//! name the caller with `actor::Actor`, which sits below them.
#![deny(missing_docs)]

#[cfg(feature = "approval")]
pub mod actor;
#[cfg(feature = "approval")]
pub mod approval;
pub mod materialise;
pub mod projection;
pub mod redact;
#[cfg(feature = "runtime")]
pub mod runtime;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
