//! The durable human-approval queue for actions that need confirmation.
//!
//! A call to a tool whose action needs a person's confirmation does not run:
//! the runtime [proposes](ApprovalQueue::propose) a [`PendingAction`] and
//! tells the model to wait. An operator later approves or rejects it (the
//! `objectstack-ai approvals` command, or a host UI), and the host process
//! that owns the dispatchers executes what was approved
//! (`runtime::ToolRegistry::execute_approved`, feature `runtime`).
//!
//! # States
//!
//! ```text
//! pending ──► approved ──► executing ──► executed
//!    │                         │    └──► failed
//!    ├──► rejected             └──► in_doubt ──► executed | failed   (operator only)
//!    ├──► expired   (its deadline passed: `expires_at`, or the queue's TTL)
//!    └──► cancelled
//! ```
//!
//! Terminal states (`rejected`, `expired`, `cancelled`, `executed`,
//! `failed`) never change. Every transition is one compare-and-set on the
//! row's version: of two people deciding at once, exactly one wins and the
//! other gets [`ApprovalError::AlreadyDecided`], which names the state the
//! row is in and who put it there.
//!
//! # Guarantees
//!
//! - Proposing the same tool call (conversation id, tool-call id, tool name
//!   and proposer) twice returns the first pending action; a different
//!   input under the same tool call is refused
//!   ([`ApprovalError::ToolCallConflict`]). Another proposer or another tool
//!   reusing a tool-call id gets a pending action of its own.
//! - An approval is bound to the SHA-256 of the input the operator saw
//!   ([`input_sha256`]); execution re-checks it and refuses to dispatch an
//!   input that no longer matches.
//! - It is bound to what executes, too: the proposal records the
//!   executable digest of the tool as registered
//!   ([`PendingAction::executable_sha256`]: tool, action, object, route,
//!   target or body, method, patch, API body settings and the parameter
//!   schema). The executor recomputes it from the tool it has registered
//!   and refuses, as `failed`, an action that changed since it was
//!   approved, one queued before digests were recorded (schema version 1),
//!   and an input the current schema rejects.
//! - Execution first *claims* the row (`approved -> executing`, committed,
//!   with a lease) and only then dispatches, so an action runs at most once
//!   however many threads or processes execute the queue. The pending
//!   action's id is passed to the executor as an idempotency key.
//! - A claim whose lease runs out without an outcome (the process died)
//!   becomes `in_doubt`: it is never retried automatically; an operator
//!   checks the target system and [resolves](ApprovalQueue::resolve) it.
//! - An approver may change the arguments
//!   ([`ApprovalQueue::approve_with_edits`]): the row keeps the proposed
//!   input (`input`, never changed) and the approved one
//!   ([`PendingAction::approved_input`]); `approved_sha256` is the hash of
//!   what runs, and the executor validates it against the tool's current
//!   schema like any stored input. The executable digest binding is the
//!   same as for a plain approval.
//! - Four eyes: by default nobody approves an action they proposed
//!   (the decider is compared with [`PendingAction::proposer`]'s id,
//!   [`ApprovalError::SelfApproval`]); [`ApprovalQueue::with_self_approval`]
//!   turns the rule off.
//! - Deadlines: a queue with a TTL ([`ApprovalQueue::with_ttl`]) stamps
//!   each proposal with [`PendingAction::expires_at`]; an approval after
//!   the deadline expires the action instead, and
//!   [`ApprovalQueue::expire_due`] sweeps the ones nobody decided.
//!
//! Storage is behind the [`ApprovalStore`] trait: [`SqliteStore`] (feature
//! `sqlite`, the embedded default), `PostgresStore` (feature `postgres`,
//! one queue shared by several hosts) and [`MemoryStore`] (tests, demos).
//! [`QueueLocation`] picks one from what a person wrote (a path,
//! `sqlite:PATH` or a `postgres://` URL).

mod canonical;
mod clock;
mod error;
#[cfg(feature = "runtime")]
mod executable;
mod id;
mod location;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod queue;
#[cfg(feature = "sqlite")]
mod sqlite;
mod state;
mod store;

pub use canonical::{MAX_INPUT_BYTES, MAX_INPUT_DEPTH, canonical_json, input_sha256};
pub use clock::{Clock, ManualClock, SystemClock, format_timestamp};
pub use error::ApprovalError;
#[cfg(feature = "runtime")]
pub(crate) use executable::{ExecutableDigest, executable_sha256};
pub use location::{OpenMode, PostgresUrl, QueueLocation};
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresOptions, PostgresStore};
#[cfg(feature = "runtime")]
pub(crate) use queue::check_integrity;
pub use queue::{
    ApprovalQueue, Claim, EXPIRY_DECIDER, LEASE_DECIDER, Listing, Outcome, Pages, Proposal,
    Proposed, QueueObserver, Resolution,
};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteOptions, SqliteStore};
pub use state::{PendingAction, State, UnknownState};
pub use store::{ApprovalStore, Cas, ListCursor, ListFilter, ListOrder, StoreError, Wake};
