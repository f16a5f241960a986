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

#[cfg(feature = "runtime")]
mod executable;
mod location;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
mod store;

use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::actor::Actor;

#[cfg(feature = "runtime")]
pub(crate) use executable::executable_sha256;
pub use location::{OpenMode, PostgresUrl, QueueLocation};
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresOptions, PostgresStore};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteOptions, SqliteStore};
pub use store::{ApprovalStore, Cas, ListFilter, StoreError, Wake};

/// Deepest nesting of a pending action's input that is accepted.
pub const MAX_INPUT_DEPTH: usize = 64;

/// Largest pending action input, in bytes of canonical JSON.
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;

/// The decider recorded when pending actions expire by age.
pub const EXPIRY_DECIDER: &str = "system:expiry";

/// The decider recorded when a claim's lease runs out.
pub const LEASE_DECIDER: &str = "system:lease-expired";

/// Where a pending action is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Proposed; waiting for a person's decision.
    Pending,
    /// Approved; waiting for the host to execute it.
    Approved,
    /// Rejected by a person (terminal).
    Rejected,
    /// Not decided in time (terminal).
    Expired,
    /// Withdrawn before a decision (terminal).
    Cancelled,
    /// Claimed by an executor, which is dispatching it now.
    Executing,
    /// Dispatched, and the action succeeded (terminal).
    Executed,
    /// Dispatched (or refused at dispatch), and the action failed (terminal).
    Failed,
    /// A claim's lease ran out without an outcome: it may or may not have
    /// run. An operator decides.
    InDoubt,
}

impl State {
    /// Every state, in life order.
    pub const ALL: [State; 9] = [
        State::Pending,
        State::Approved,
        State::Rejected,
        State::Expired,
        State::Cancelled,
        State::Executing,
        State::Executed,
        State::Failed,
        State::InDoubt,
    ];

    /// The state's name as stored and printed (`in_doubt`).
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Approved => "approved",
            State::Rejected => "rejected",
            State::Expired => "expired",
            State::Cancelled => "cancelled",
            State::Executing => "executing",
            State::Executed => "executed",
            State::Failed => "failed",
            State::InDoubt => "in_doubt",
        }
    }

    /// Whether the state never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            State::Rejected | State::Expired | State::Cancelled | State::Executed | State::Failed
        )
    }

    /// Whether `self -> to` is a transition of the state machine.
    ///
    /// `in_doubt -> in_doubt` is allowed: it records an outcome an
    /// executor reported after its lease ran out, as evidence.
    pub fn can_become(self, to: State) -> bool {
        use State::*;
        matches!(
            (self, to),
            (Pending, Approved | Rejected | Expired | Cancelled)
                | (Approved, Executing)
                | (Executing, Executed | Failed | InDoubt)
                | (InDoubt, InDoubt | Executed | Failed)
        )
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A state name that is not one of [`State::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown state `{0}`: expected one of pending, approved, rejected, expired, cancelled, executing, executed, failed, in_doubt"
)]
pub struct UnknownState(pub String);

impl FromStr for State {
    type Err = UnknownState;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        State::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| UnknownState(s.to_owned()))
    }
}

/// One proposed action and everything decided about it since.
///
/// Times are milliseconds since the Unix epoch (UTC); they serialise as
/// RFC 3339 strings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingAction {
    /// The pending action's id (`pa_` and 24 hex digits); also the
    /// idempotency key handed to the executor.
    pub id: String,
    /// The tool the model called (`action_<name>`).
    pub tool_name: String,
    /// The action's name.
    pub action_name: String,
    /// The object the action belongs to, when it has one.
    pub object_name: Option<String>,
    /// The full arguments of the call, `recordId` included.
    pub input: Map<String, Value>,
    /// SHA-256 (hex) of the canonical JSON of `input` (see [`input_sha256`]).
    pub input_sha256: String,
    /// SHA-256 (hex) of what executes: the executable parts of the tool as
    /// it was registered when the call was proposed (see
    /// `runtime::ToolRegistry::executable_sha256`). `None` for a
    /// row queued before digests were recorded (queue schema version 1):
    /// such a row is never dispatched.
    pub executable_sha256: Option<String>,
    /// The conversation the call came from.
    pub conversation_id: Option<String>,
    /// The message that carried the call.
    pub message_id: Option<String>,
    /// The model's tool-call id.
    pub tool_call_id: Option<String>,
    /// The trace the call belongs to.
    pub trace_id: Option<String>,
    /// Who the call ran for; the action executes under this actor.
    pub proposer: Actor,
    /// When it was proposed.
    #[serde(serialize_with = "ser_time")]
    pub created_at: i64,
    /// Where it is now.
    pub state: State,
    /// Incremented by every change; the compare-and-set token.
    pub version: u64,
    /// Who (or what) put it in its current state.
    pub state_by: Option<String>,
    /// When it entered its current state.
    #[serde(serialize_with = "ser_time")]
    pub state_at: i64,
    /// Who approved, rejected, expired or cancelled it.
    pub decided_by: Option<String>,
    /// When that decision was made.
    #[serde(serialize_with = "ser_opt_time")]
    pub decided_at: Option<i64>,
    /// A rejection reason, or an operator's note when resolving.
    pub reason: Option<String>,
    /// The hash of the input that was approved, and will run: the
    /// proposed input's hash, or the edited input's when the approver
    /// changed the arguments.
    pub approved_sha256: Option<String>,
    /// The input as the approver edited it, when they approved with edits
    /// (`None` when approved as proposed, or not approved). The proposed
    /// input stays in [`input`](Self::input).
    pub approved_input: Option<Map<String, Value>>,
    /// When the action expires if nobody decides it (its deadline); `None`
    /// when the queue that proposed it had no TTL.
    #[serde(serialize_with = "ser_opt_time")]
    pub expires_at: Option<i64>,
    /// The executor holding (or that held) the claim.
    pub claimed_by: Option<String>,
    /// When it was claimed.
    #[serde(serialize_with = "ser_opt_time")]
    pub claimed_at: Option<i64>,
    /// When the claim's lease runs out.
    #[serde(serialize_with = "ser_opt_time")]
    pub lease_until: Option<i64>,
    /// What the executor returned (the result envelope), when known.
    pub result: Option<Value>,
    /// Why it failed, when it failed.
    pub error: Option<String>,
    /// When an outcome was recorded.
    #[serde(serialize_with = "ser_opt_time")]
    pub finished_at: Option<i64>,
}

impl PendingAction {
    /// The key that makes proposals idempotent: one pending action per
    /// (conversation, tool-call id, tool name, proposer id). `None` when
    /// the call has no tool-call id.
    pub fn dedup_key(&self) -> Option<String> {
        dedup_key(
            self.conversation_id.as_deref(),
            self.tool_call_id.as_deref(),
            &self.tool_name,
            &self.proposer.id,
        )
    }

    /// The input that runs when the action is executed: the approved
    /// edits when there are any, else the proposed input.
    pub fn execution_input(&self) -> &Map<String, Value> {
        self.approved_input.as_ref().unwrap_or(&self.input)
    }

    /// The moment the action expires if nobody decides it: its recorded
    /// deadline, else (a row proposed without one) its creation time plus
    /// `ttl` when given.
    pub fn deadline(&self, ttl: Option<Duration>) -> Option<i64> {
        self.expires_at
            .or_else(|| ttl.map(|ttl| self.created_at.saturating_add(duration_ms(ttl))))
    }
}

/// SHA-256 (hex) over the dedup fields, each length-prefixed (and an absent
/// conversation told apart from an empty one), so no two different tuples
/// share a key.
pub(crate) fn dedup_key(
    conversation_id: Option<&str>,
    tool_call_id: Option<&str>,
    tool_name: &str,
    proposer_id: &str,
) -> Option<String> {
    let tool_call_id = tool_call_id?;
    let mut h = Sha256::new();
    h.update(b"objectstack.dedup/2");
    for part in [
        conversation_id,
        Some(tool_call_id),
        Some(tool_name),
        Some(proposer_id),
    ] {
        match part {
            None => h.update([0u8]),
            Some(text) => {
                h.update([1u8]);
                h.update((text.len() as u64).to_be_bytes());
                h.update(text.as_bytes());
            }
        }
    }
    Some(hex(&h.finalize()))
}

fn ser_time<S: serde::Serializer>(ms: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_timestamp(*ms))
}

fn ser_opt_time<S: serde::Serializer>(ms: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match ms {
        Some(ms) => s.serialize_str(&format_timestamp(*ms)),
        None => s.serialize_none(),
    }
}

/// What the runtime hands the queue when a call needs confirmation.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The tool the model called.
    pub tool_name: String,
    /// The action's name.
    pub action_name: String,
    /// The action's object, when it has one.
    pub object_name: Option<String>,
    /// The full, validated arguments.
    pub input: Map<String, Value>,
    /// The executable digest of the tool as registered now (64 lowercase
    /// hex digits): what the approval will be bound to. The runtime fills
    /// it in; a host proposing by hand takes it from
    /// `runtime::ToolRegistry::executable_sha256`.
    pub executable_sha256: String,
    /// The conversation id.
    pub conversation_id: Option<String>,
    /// The message id.
    pub message_id: Option<String>,
    /// The tool-call id (proposals are idempotent per conversation,
    /// tool-call id, tool name and proposer).
    pub tool_call_id: Option<String>,
    /// The trace id.
    pub trace_id: Option<String>,
    /// Who the call runs for.
    pub proposer: Actor,
}

/// The answer to [`ApprovalQueue::propose`].
#[derive(Debug, Clone, PartialEq)]
pub struct Proposed {
    /// The stored pending action (the earlier one for a repeated tool call).
    pub action: PendingAction,
    /// Whether this call created it.
    pub created: bool,
}

/// A claim on an approved action: the right to dispatch it once.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The row as claimed (state `executing`).
    pub action: PendingAction,
}

/// How an executor's dispatch ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The action ran and reported success; the result envelope.
    Executed(Value),
    /// The action failed or was refused; why, and the envelope when any.
    Failed {
        /// The error message.
        error: String,
        /// The result envelope, when the action produced one.
        result: Option<Value>,
    },
}

/// An operator's verdict on an `in_doubt` action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// It did run (checked in the target system).
    Executed,
    /// It did not run, or its effect was undone.
    Failed,
}

/// Why a queue operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// No pending action has this id.
    #[error("no pending action `{id}` exists; list them with `objectstack-ai approvals list`")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// Someone else decided first (or the row is past the step asked for).
    #[error("pending action `{id}` is already {state}{}; nothing was changed", by.as_deref().map(|b| format!(" (by {b})")).unwrap_or_default())]
    AlreadyDecided {
        /// The pending action's id.
        id: String,
        /// Its current state.
        state: State,
        /// Who put it in that state.
        by: Option<String>,
    },
    /// The action is still waiting for a decision, so it cannot execute.
    #[error("pending action `{id}` is {state}, not approved: approve it before executing it")]
    NotApproved {
        /// The pending action's id.
        id: String,
        /// Its current state.
        state: State,
    },
    /// Only an `in_doubt` action can be resolved by an operator.
    #[error(
        "pending action `{id}` is {state}, not in_doubt: only in-doubt actions are resolved by hand"
    )]
    NotInDoubt {
        /// The pending action's id.
        id: String,
        /// Its current state.
        state: State,
    },
    /// The approver saw a different input than the one stored.
    #[error(
        "pending action `{id}` has input sha256 {actual}, but the approval was for {expected}: review it again (`approvals show {id}`) and approve what is shown"
    )]
    InputMismatch {
        /// The pending action's id.
        id: String,
        /// The hash the approver gave.
        expected: String,
        /// The hash of the stored input.
        actual: String,
    },
    /// The same tool call was proposed before with a different input.
    #[error(
        "tool call `{tool_call_id}` was already proposed as `{existing}` with a different input; a tool call is proposed once"
    )]
    ToolCallConflict {
        /// The tool-call id.
        tool_call_id: String,
        /// The earlier pending action.
        existing: String,
    },
    /// Four eyes: the decider proposed this action, and the queue does
    /// not let a proposer approve their own action.
    #[error(
        "pending action `{id}` was proposed by `{proposer}`, who cannot approve it too (four eyes): ask someone else to approve it"
    )]
    SelfApproval {
        /// The pending action's id.
        id: String,
        /// The proposer (and would-be approver).
        proposer: String,
    },
    /// Approved arguments that the tool's current schema refuses.
    #[error(
        "the edited arguments of pending action `{id}` are not valid for `{tool}`, so nothing was approved: {}",
        problems.join("; ")
    )]
    InvalidEdits {
        /// The pending action's id.
        id: String,
        /// The tool.
        tool: String,
        /// Each problem, `path: message` (`(input)` for the root).
        problems: Vec<String>,
    },
    /// A request field is unusable (empty decider, input too deep, ...).
    #[error("{0}")]
    InvalidRequest(String),
    /// The stored row is not consistent (its input no longer matches its hash).
    #[error("pending action `{id}` is corrupt: {detail}")]
    Corrupt {
        /// The pending action's id.
        id: String,
        /// What is wrong.
        detail: String,
    },
    /// No tool with the pending action's name is registered in this process.
    #[error(
        "pending action `{id}` calls tool `{tool}`, which is not registered in this process; execute it from the host that registers it"
    )]
    NoDispatcher {
        /// The pending action's id.
        id: String,
        /// The tool name.
        tool: String,
    },
    /// The runtime has no approval queue wired.
    #[error("no approval queue is wired into this tool registry (set `HostServices::approvals`)")]
    NoQueue,
    /// The storage backend failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A source of the current time, in milliseconds since the Unix epoch.
pub trait Clock: Send + Sync {
    /// Now.
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock moved by hand, for tests and simulations.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock that reads `ms`.
    pub fn new(ms: i64) -> Self {
        ManualClock(AtomicI64::new(ms))
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(duration_ms(by), Ordering::SeqCst);
    }

    /// Sets the clock.
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn duration_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// What [`ApprovalQueue::list`] found.
#[derive(Debug, Default)]
pub struct Listing {
    /// The rows that were read, oldest first.
    pub rows: Vec<PendingAction>,
    /// The rows that could not be read back, in listing order; each is a
    /// [`StoreError::CorruptRow`] naming the row and what is wrong with it.
    pub unreadable: Vec<StoreError>,
}

/// The queue: the state machine over an [`ApprovalStore`].
///
/// Cheap to share (`Arc`); every operation is one short transaction, safe
/// to call from many threads (and, with [`SqliteStore`], many processes).
#[derive(Clone)]
pub struct ApprovalQueue {
    store: Arc<dyn ApprovalStore>,
    clock: Arc<dyn Clock>,
    ttl: Option<Duration>,
    allow_self_approval: bool,
    observer: Option<Arc<dyn QueueObserver>>,
}

/// Told about every change a queue makes, after it is committed: a host's
/// hook for notifications. Called on the thread that made the change, so
/// it must return at once (hand the row to a channel; never do I/O here).
/// Changes made by other processes sharing the store are not seen.
pub trait QueueObserver: Send + Sync {
    /// `row` was proposed (`previous` is `None`) or moved from `previous`
    /// to its current state (`in_doubt` to `in_doubt` when a late outcome
    /// was recorded as evidence).
    fn changed(&self, previous: Option<State>, row: &PendingAction);
}

impl fmt::Debug for ApprovalQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalQueue").finish_non_exhaustive()
    }
}

/// How many times an operation re-reads a row after losing a
/// compare-and-set before giving up. The state machine is acyclic, so a
/// handful always suffices.
const MAX_CAS_ROUNDS: usize = 16;

impl ApprovalQueue {
    /// A queue over `store`, on the system clock.
    pub fn new(store: Arc<dyn ApprovalStore>) -> Self {
        ApprovalQueue {
            store,
            clock: Arc::new(SystemClock),
            ttl: None,
            allow_self_approval: false,
            observer: None,
        }
    }

    /// The same queue, telling `observer` about every change it commits.
    pub fn with_observer(mut self, observer: Arc<dyn QueueObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The same queue on another clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The same queue with a time to live: every proposal gets the
    /// deadline `now + ttl` ([`PendingAction::expires_at`]), and a row
    /// proposed without one expires `ttl` after it was created. `None`
    /// (the default): nothing expires unless
    /// [`expire_older_than`](Self::expire_older_than) is run.
    pub fn with_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.ttl = ttl;
        self
    }

    /// The queue's time to live.
    pub fn ttl(&self) -> Option<Duration> {
        self.ttl
    }

    /// The same queue with the four-eyes rule off (`true`: a proposer may
    /// approve their own action) or on (`false`, the default).
    pub fn with_self_approval(mut self, allow: bool) -> Self {
        self.allow_self_approval = allow;
        self
    }

    /// Whether a proposer may approve their own action.
    pub fn allows_self_approval(&self) -> bool {
        self.allow_self_approval
    }

    /// The current time on the queue's clock.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The store underneath.
    pub fn store(&self) -> &dyn ApprovalStore {
        self.store.as_ref()
    }

    /// Queues a call for approval. Idempotent per (conversation, tool-call
    /// id, tool name, proposer): a repeat returns the first pending action
    /// with `created: false`.
    pub fn propose(&self, proposal: Proposal) -> Result<Proposed, ApprovalError> {
        let hash = input_sha256(&proposal.input)?;
        if proposal.tool_name.is_empty() || proposal.action_name.is_empty() {
            return Err(ApprovalError::InvalidRequest(
                "a proposal needs a tool name and an action name".to_owned(),
            ));
        }
        if !is_sha256_hex(&proposal.executable_sha256) {
            return Err(ApprovalError::InvalidRequest(format!(
                "a proposal's executable digest must be 64 lowercase hex digits (take it from \
                 `ToolRegistry::executable_sha256`), not `{}`",
                proposal.executable_sha256.escape_debug()
            )));
        }
        let now = self.clock.now_ms();
        let expires_at = self.ttl.map(|ttl| now.saturating_add(duration_ms(ttl)));
        let row = PendingAction {
            id: new_id(),
            tool_name: proposal.tool_name,
            action_name: proposal.action_name,
            object_name: proposal.object_name,
            input: proposal.input,
            input_sha256: hash,
            executable_sha256: Some(proposal.executable_sha256),
            conversation_id: proposal.conversation_id,
            message_id: proposal.message_id,
            tool_call_id: proposal.tool_call_id,
            trace_id: proposal.trace_id,
            proposer: proposal.proposer,
            created_at: now,
            state: State::Pending,
            version: 1,
            state_by: None,
            state_at: now,
            decided_by: None,
            decided_at: None,
            reason: None,
            approved_sha256: None,
            approved_input: None,
            expires_at,
            claimed_by: None,
            claimed_at: None,
            lease_until: None,
            result: None,
            error: None,
            finished_at: None,
        };
        let (stored, created) = self.store.insert(&row)?;
        if !created && stored.input_sha256 != row.input_sha256 {
            return Err(ApprovalError::ToolCallConflict {
                tool_call_id: row.tool_call_id.unwrap_or_default(),
                existing: stored.id,
            });
        }
        if created && let Some(observer) = &self.observer {
            observer.changed(None, &stored);
        }
        Ok(Proposed {
            action: stored,
            created,
        })
    }

    /// The pending action with this id.
    pub fn get(&self, id: &str) -> Result<PendingAction, ApprovalError> {
        self.store
            .get(id)?
            .ok_or_else(|| ApprovalError::NotFound { id: id.to_owned() })
    }

    /// Pending actions matching `filter`, oldest first, and the rows among
    /// them that cannot be read back (each named, in [`Listing::unreadable`]):
    /// a damaged row does not hide the others.
    pub fn list(&self, filter: &ListFilter) -> Result<Listing, ApprovalError> {
        let mut listing = Listing::default();
        for row in self.store.list(filter)? {
            match row {
                Ok(row) => listing.rows.push(row),
                Err(e) => listing.unreadable.push(e),
            }
        }
        Ok(listing)
    }

    /// The readable rows matching `filter`, oldest first; rows that cannot
    /// be read cannot change state either, so sweeps pass over them (they
    /// show in [`ApprovalQueue::list`]).
    fn readable(&self, filter: &ListFilter) -> Result<Vec<PendingAction>, ApprovalError> {
        Ok(self.store.list(filter)?.into_iter().flatten().collect())
    }

    /// Approves a pending action, bound to the input hash the approver saw.
    ///
    /// Refused when `by` proposed it and the queue keeps four eyes
    /// ([`ApprovalError::SelfApproval`]); past its deadline the action
    /// expires instead ([`ApprovalError::AlreadyDecided`] in `expired`).
    pub fn approve(
        &self,
        id: &str,
        by: &str,
        input_sha256: &str,
    ) -> Result<PendingAction, ApprovalError> {
        self.approve_inner(id, by, input_sha256, None)
    }

    /// Approves a pending action with changed arguments. `input_sha256` is
    /// the hash of the *proposed* input the approver saw (as for
    /// [`approve`](Self::approve)); `edited` is the full input to run
    /// instead. The row keeps both; `approved_sha256` becomes the edited
    /// input's hash. An edit equal to the proposed input is a plain
    /// approval.
    ///
    /// The queue checks only the size and nesting limits: validate
    /// `edited` against the tool's current schema first (what
    /// `runtime::ToolRegistry::approve_with_edits` does). The
    /// executor validates it again before dispatch.
    pub fn approve_with_edits(
        &self,
        id: &str,
        by: &str,
        input_sha256: &str,
        edited: Map<String, Value>,
    ) -> Result<PendingAction, ApprovalError> {
        let edited_sha = input_sha256_of(&edited)?;
        self.approve_inner(id, by, input_sha256, Some((edited, edited_sha)))
    }

    fn approve_inner(
        &self,
        id: &str,
        by: &str,
        input_sha256: &str,
        edited: Option<(Map<String, Value>, String)>,
    ) -> Result<PendingAction, ApprovalError> {
        let by = decider(by)?;
        let ttl = self.ttl;
        let allow_self = self.allow_self_approval;
        let done = self.transition(id, |row, now| {
            if row.state != State::Pending {
                return Err(already(row));
            }
            if row.deadline(ttl).is_some_and(|d| d <= now) {
                let mut next = row.clone();
                next.state = State::Expired;
                next.decided_by = Some(EXPIRY_DECIDER.to_owned());
                next.decided_at = Some(now);
                return Ok(stamp(next, EXPIRY_DECIDER, now));
            }
            if !allow_self && row.proposer.id.trim() == by {
                return Err(ApprovalError::SelfApproval {
                    id: row.id.clone(),
                    proposer: row.proposer.id.clone(),
                });
            }
            if row.input_sha256 != input_sha256 {
                return Err(ApprovalError::InputMismatch {
                    id: row.id.clone(),
                    expected: input_sha256.to_owned(),
                    actual: row.input_sha256.clone(),
                });
            }
            check_integrity(row)?;
            let mut next = row.clone();
            next.state = State::Approved;
            next.decided_by = Some(by.to_owned());
            next.decided_at = Some(now);
            match &edited {
                Some((input, sha)) if *sha != row.input_sha256 => {
                    next.approved_input = Some(input.clone());
                    next.approved_sha256 = Some(sha.clone());
                }
                _ => next.approved_sha256 = Some(input_sha256.to_owned()),
            }
            Ok(stamp(next, by, now))
        })?;
        if done.state == State::Expired {
            return Err(already(&done));
        }
        Ok(done)
    }

    /// Rejects a pending action, with an optional reason the next model
    /// turn can surface.
    pub fn reject(
        &self,
        id: &str,
        by: &str,
        reason: Option<&str>,
    ) -> Result<PendingAction, ApprovalError> {
        let by = decider(by)?;
        self.decide(id, by, State::Rejected, reason)
    }

    /// Withdraws a pending action before anyone decides it.
    pub fn cancel(&self, id: &str, by: &str) -> Result<PendingAction, ApprovalError> {
        let by = decider(by)?;
        self.decide(id, by, State::Cancelled, None)
    }

    fn decide(
        &self,
        id: &str,
        by: &str,
        to: State,
        reason: Option<&str>,
    ) -> Result<PendingAction, ApprovalError> {
        self.transition(id, |row, now| {
            if row.state != State::Pending {
                return Err(already(row));
            }
            let mut next = row.clone();
            next.state = to;
            next.decided_by = Some(by.to_owned());
            next.decided_at = Some(now);
            next.reason = reason.map(str::to_owned);
            Ok(stamp(next, by, now))
        })
    }

    /// Expires every pending action proposed more than `age` ago; returns
    /// the ones this call expired. Races with a decision are left to the
    /// decision.
    pub fn expire_older_than(
        &self,
        age: Duration,
        by: &str,
    ) -> Result<Vec<PendingAction>, ApprovalError> {
        let by = decider(by)?;
        let cutoff = self.clock.now_ms().saturating_sub(duration_ms(age));
        let candidates = self.readable(&ListFilter {
            state: Some(State::Pending),
            created_before: Some(cutoff),
            ..ListFilter::default()
        })?;
        let mut expired = Vec::new();
        for row in candidates {
            match self.decide(&row.id, by, State::Expired, None) {
                Ok(row) => expired.push(row),
                Err(ApprovalError::AlreadyDecided { .. } | ApprovalError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(expired)
    }

    /// Expires every pending action whose deadline has passed (its
    /// `expires_at`, or for a row proposed without one, its age against
    /// the queue's TTL); returns the ones this call expired, recorded as
    /// decided by [`EXPIRY_DECIDER`]. Races with a decision are left to the
    /// decision. Without a TTL only rows that carry a deadline expire.
    pub fn expire_due(&self) -> Result<Vec<PendingAction>, ApprovalError> {
        let now = self.clock.now_ms();
        let candidates = self.readable(&ListFilter {
            state: Some(State::Pending),
            ..ListFilter::default()
        })?;
        let mut expired = Vec::new();
        for row in candidates {
            if row.deadline(self.ttl).is_none_or(|d| d > now) {
                continue;
            }
            match self.decide(&row.id, EXPIRY_DECIDER, State::Expired, None) {
                Ok(row) => expired.push(row),
                Err(ApprovalError::AlreadyDecided { .. } | ApprovalError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(expired)
    }

    /// Claims an approved action for dispatch, with a lease. The claim is
    /// committed before this returns; dispatch only after it.
    pub fn claim(&self, id: &str, executor: &str, lease: Duration) -> Result<Claim, ApprovalError> {
        let executor = decider(executor)?;
        let lease = duration_ms(lease);
        self.transition(id, |row, now| {
            match row.state {
                State::Approved => {}
                State::Pending => {
                    return Err(ApprovalError::NotApproved {
                        id: row.id.clone(),
                        state: row.state,
                    });
                }
                _ => return Err(already(row)),
            }
            Ok(claimed(row, executor, lease, now))
        })
        .map(|action| Claim { action })
    }

    /// Claims the oldest approved action of one of `tools` for dispatch,
    /// with a lease, skipping (not waiting for) actions other executors
    /// are claiming at the same moment; `None` when nothing is left. Like
    /// [`ApprovalQueue::claim`], the claim is committed before this returns.
    pub fn claim_next(
        &self,
        tools: &[String],
        executor: &str,
        lease: Duration,
    ) -> Result<Option<Claim>, ApprovalError> {
        let executor = decider(executor)?;
        let lease = duration_ms(lease);
        let clock = &self.clock;
        let claimed = self.store.claim_next(tools, &mut |row| {
            (row.state == State::Approved).then(|| claimed(row, executor, lease, clock.now_ms()))
        })?;
        if let (Some(observer), Some(action)) = (&self.observer, &claimed) {
            observer.changed(Some(State::Approved), action);
        }
        Ok(claimed.map(|action| Claim { action }))
    }

    /// Calls `wake` whenever an action is approved anywhere, when the
    /// store can tell (see [`ApprovalStore::watch_approved`]); returns
    /// whether it will.
    pub fn watch_approved(&self, wake: Wake) -> Result<bool, ApprovalError> {
        Ok(self.store.watch_approved(wake)?)
    }

    /// Records the outcome of a claimed dispatch.
    ///
    /// When the claim's lease ran out first and the action is now
    /// `in_doubt`, the outcome is kept on the row as evidence for the
    /// operator and [`ApprovalError::AlreadyDecided`] is returned.
    pub fn finish(&self, claim: &Claim, outcome: Outcome) -> Result<PendingAction, ApprovalError> {
        let claimed = &claim.action;
        let executor = claimed.claimed_by.clone().unwrap_or_default();
        let mut late = false;
        let result = self.transition(&claimed.id, |row, now| {
            let same_claim =
                row.claimed_at == claimed.claimed_at && row.claimed_by == claimed.claimed_by;
            if row.state == State::Executing && row.version == claimed.version {
                let mut next = row.clone();
                apply_outcome(&mut next, &outcome, now);
                return Ok(stamp(next, &executor, now));
            }
            if row.state == State::InDoubt && same_claim && row.finished_at.is_none() && !late {
                // Keep the late outcome as evidence; the state stays in_doubt.
                let mut next = row.clone();
                match &outcome {
                    Outcome::Executed(value) => next.result = Some(value.clone()),
                    Outcome::Failed { error, result } => {
                        next.error = Some(error.clone());
                        next.result = result.clone();
                    }
                }
                next.reason = Some(format!(
                    "executor `{executor}` reported `{}` after its lease ran out",
                    match outcome {
                        Outcome::Executed(_) => "executed",
                        Outcome::Failed { .. } => "failed",
                    }
                ));
                next.version = row.version + 1;
                late = true;
                return Ok(next);
            }
            Err(already(row))
        });
        match result {
            Ok(row) if late => Err(already(&row)),
            other => other,
        }
    }

    /// Turns every claim whose lease has run out into `in_doubt`; returns
    /// them. Safe to run from anywhere at any time.
    pub fn sweep_expired_leases(&self) -> Result<Vec<PendingAction>, ApprovalError> {
        let now = self.clock.now_ms();
        let candidates = self.readable(&ListFilter {
            state: Some(State::Executing),
            lease_expired_at: Some(now),
            ..ListFilter::default()
        })?;
        let mut swept = Vec::new();
        for row in candidates {
            let outcome = self.transition(&row.id, |cur, now| {
                let expired = cur.lease_until.is_some_and(|l| l <= now);
                if cur.state != State::Executing || !expired {
                    return Err(already(cur));
                }
                let mut next = cur.clone();
                next.state = State::InDoubt;
                next.reason = Some(format!(
                    "the claim by `{}` ran out of lease before an outcome was recorded; check the target system, then resolve it",
                    cur.claimed_by.as_deref().unwrap_or("?")
                ));
                Ok(stamp(next, LEASE_DECIDER, now))
            });
            match outcome {
                Ok(row) => swept.push(row),
                Err(ApprovalError::AlreadyDecided { .. } | ApprovalError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(swept)
    }

    /// An operator's verdict on an `in_doubt` action.
    pub fn resolve(
        &self,
        id: &str,
        by: &str,
        resolution: Resolution,
        note: Option<&str>,
    ) -> Result<PendingAction, ApprovalError> {
        let by = decider(by)?;
        self.transition(id, |row, now| {
            if row.state != State::InDoubt {
                if row.state.is_terminal() {
                    return Err(already(row));
                }
                return Err(ApprovalError::NotInDoubt {
                    id: row.id.clone(),
                    state: row.state,
                });
            }
            let mut next = row.clone();
            match resolution {
                Resolution::Executed => next.state = State::Executed,
                Resolution::Failed => {
                    next.state = State::Failed;
                    next.error = Some(
                        note.unwrap_or("resolved as failed by an operator")
                            .to_owned(),
                    );
                }
            }
            if let Some(note) = note {
                next.reason = Some(note.to_owned());
            }
            next.finished_at = Some(now);
            Ok(stamp(next, by, now))
        })
    }

    /// Reads the row, lets `step` compute the next row (or refuse), and
    /// writes it with one compare-and-set; re-reads on a lost race.
    fn transition(
        &self,
        id: &str,
        mut step: impl FnMut(&PendingAction, i64) -> Result<PendingAction, ApprovalError>,
    ) -> Result<PendingAction, ApprovalError> {
        let mut row = self.get(id)?;
        for _ in 0..MAX_CAS_ROUNDS {
            let now = self.clock.now_ms();
            let next = step(&row, now)?;
            if !(row.state.can_become(next.state)) || next.version != row.version + 1 {
                return Err(ApprovalError::Corrupt {
                    id: row.id.clone(),
                    detail: format!(
                        "refused an invalid transition {} -> {}",
                        row.state, next.state
                    ),
                });
            }
            match self.store.compare_and_set(row.version, &next)? {
                Cas::Applied => {
                    if let Some(observer) = &self.observer {
                        observer.changed(Some(row.state), &next);
                    }
                    return Ok(next);
                }
                Cas::Conflict(current) => row = *current,
                Cas::Missing => return Err(ApprovalError::NotFound { id: id.to_owned() }),
            }
        }
        Err(already(&row))
    }
}

fn apply_outcome(next: &mut PendingAction, outcome: &Outcome, now: i64) {
    match outcome {
        Outcome::Executed(value) => {
            next.state = State::Executed;
            next.result = Some(value.clone());
        }
        Outcome::Failed { error, result } => {
            next.state = State::Failed;
            next.error = Some(error.clone());
            next.result = result.clone();
        }
    }
    next.finished_at = Some(now);
}

/// `row` claimed by `executor` at `now`, for `lease` milliseconds.
fn claimed(row: &PendingAction, executor: &str, lease: i64, now: i64) -> PendingAction {
    let mut next = row.clone();
    next.state = State::Executing;
    next.claimed_by = Some(executor.to_owned());
    next.claimed_at = Some(now);
    next.lease_until = Some(now.saturating_add(lease));
    stamp(next, executor, now)
}

/// Sets the bookkeeping of a state change.
fn stamp(mut next: PendingAction, by: &str, now: i64) -> PendingAction {
    next.state_by = Some(by.to_owned());
    next.state_at = now;
    next.version += 1;
    next
}

fn already(row: &PendingAction) -> ApprovalError {
    ApprovalError::AlreadyDecided {
        id: row.id.clone(),
        state: row.state,
        by: row.state_by.clone(),
    }
}

fn decider(by: &str) -> Result<&str, ApprovalError> {
    let by = by.trim();
    if by.is_empty() {
        return Err(ApprovalError::InvalidRequest(
            "say who decides: the decider (`--by`) must not be empty".to_owned(),
        ));
    }
    if by.len() > 256 {
        return Err(ApprovalError::InvalidRequest(
            "the decider name is longer than 256 bytes".to_owned(),
        ));
    }
    Ok(by)
}

/// Checks that the stored input still hashes to the stored hash (and to the
/// approved hash, once approved).
pub(crate) fn check_integrity(row: &PendingAction) -> Result<(), ApprovalError> {
    let actual = input_sha256(&row.input).map_err(|e| ApprovalError::Corrupt {
        id: row.id.clone(),
        detail: e.to_string(),
    })?;
    if actual != row.input_sha256 {
        return Err(ApprovalError::Corrupt {
            id: row.id.clone(),
            detail: format!(
                "its input hashes to {actual}, not to the recorded {}",
                row.input_sha256
            ),
        });
    }
    let (runs, what) = match &row.approved_input {
        Some(edited) => (
            input_sha256(edited).map_err(|e| ApprovalError::Corrupt {
                id: row.id.clone(),
                detail: format!("its approved input: {e}"),
            })?,
            "approved input",
        ),
        None => (actual, "input"),
    };
    match &row.approved_sha256 {
        Some(approved) if *approved != runs => Err(ApprovalError::Corrupt {
            id: row.id.clone(),
            detail: format!("its {what} hashes to {runs}, but {approved} was approved"),
        }),
        None if row.approved_input.is_some() => Err(ApprovalError::Corrupt {
            id: row.id.clone(),
            detail: "it has an approved input but no approved hash".to_owned(),
        }),
        _ => Ok(()),
    }
}

/// The SHA-256 (lowercase hex) of the canonical JSON of `input`: object
/// keys sorted by their UTF-8 bytes, no whitespace, strings and numbers as
/// `serde_json` writes them. The same input always hashes the same,
/// whatever order its keys arrived in.
pub fn input_sha256(input: &Map<String, Value>) -> Result<String, ApprovalError> {
    let canonical = canonical_json(input)?;
    Ok(hex(&Sha256::digest(canonical.as_bytes())))
}

fn input_sha256_of(input: &Map<String, Value>) -> Result<String, ApprovalError> {
    input_sha256(input).map_err(|e| match e {
        ApprovalError::InvalidRequest(why) => {
            ApprovalError::InvalidRequest(format!("the edited input: {why}"))
        }
        other => other,
    })
}

/// The canonical JSON text of `input` (see [`input_sha256`]).
pub fn canonical_json(input: &Map<String, Value>) -> Result<String, ApprovalError> {
    let mut out = String::new();
    let rules = Canonical {
        max_bytes: MAX_INPUT_BYTES,
        max_depth: MAX_INPUT_DEPTH,
        integral_floats_as_integers: false,
    };
    match write_object(input, &mut out, 1, &rules) {
        Ok(()) => Ok(out),
        Err(CanonicalError::TooDeep) => Err(ApprovalError::InvalidRequest(format!(
            "the input nests deeper than {MAX_INPUT_DEPTH} levels"
        ))),
        Err(CanonicalError::TooLarge) => Err(ApprovalError::InvalidRequest(format!(
            "the input is larger than {MAX_INPUT_BYTES} bytes of JSON"
        ))),
    }
}

/// How [`write_object`] writes a canonical form.
struct Canonical {
    /// Largest text, in bytes.
    max_bytes: usize,
    /// Deepest nesting.
    max_depth: usize,
    /// Write a float with no fractional part (of magnitude at most 2^53)
    /// as the integer it equals, as `JSON.stringify` does: `2.0` and `2`
    /// are one value written two ways.
    integral_floats_as_integers: bool,
}

/// Why a value has no canonical form within the limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CanonicalError {
    TooDeep,
    TooLarge,
}

/// Writes `map` with its keys sorted by their UTF-8 bytes, recursively, no
/// whitespace, strings as `serde_json` escapes them.
fn write_object(
    map: &Map<String, Value>,
    out: &mut String,
    depth: usize,
    rules: &Canonical,
) -> Result<(), CanonicalError> {
    if depth > rules.max_depth {
        return Err(CanonicalError::TooDeep);
    }
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    out.push('{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(key, out);
        out.push(':');
        write_value(value, out, depth, rules)?;
        if out.len() > rules.max_bytes {
            return Err(CanonicalError::TooLarge);
        }
    }
    out.push('}');
    Ok(())
}

fn write_value(
    value: &Value,
    out: &mut String,
    depth: usize,
    rules: &Canonical,
) -> Result<(), CanonicalError> {
    match value {
        Value::Object(map) => write_object(map, out, depth + 1, rules)?,
        Value::Array(items) => {
            if depth + 1 > rules.max_depth {
                return Err(CanonicalError::TooDeep);
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out, depth + 1, rules)?;
                if out.len() > rules.max_bytes {
                    return Err(CanonicalError::TooLarge);
                }
            }
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        Value::Number(n) if rules.integral_floats_as_integers && n.is_f64() => {
            const LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53
            match n.as_f64() {
                // In range, so the cast is exact (and -0 becomes 0).
                Some(f) if f.fract() == 0.0 && f.abs() <= LIMIT => {
                    out.push_str(&(f as i64).to_string());
                }
                _ => out.push_str(&n.to_string()),
            }
        }
        scalar => out.push_str(&scalar.to_string()),
    }
    Ok(())
}

fn write_string(s: &str, out: &mut String) {
    out.push_str(&Value::String(s.to_owned()).to_string());
}

/// Whether `s` is a SHA-256 as this module writes them: 64 lowercase hex
/// digits.
fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

/// A fresh pending action id: `pa_` and 24 hex digits, unique across
/// threads and processes (time, process id, thread, a counter).
fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut thread = DefaultHasher::new();
    std::thread::current().id().hash(&mut thread);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = Sha256::new();
    h.update(nanos.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(thread.finish().to_le_bytes());
    h.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    h.update((&COUNTER as *const AtomicU64 as usize).to_le_bytes());
    let digest = h.finalize();
    format!("pa_{}", hex(digest.get(..12).unwrap_or(&[])))
}

/// Formats milliseconds since the Unix epoch as RFC 3339 UTC with
/// milliseconds (`2025-03-01T12:00:00.000Z`).
pub fn format_timestamp(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a (year, month, day) civil date (proleptic
/// Gregorian), after Howard Hinnant's algorithm.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn canonical_json_sorts_keys_recursively() {
        let a = map(json!({"b": 1, "a": {"d": [1, {"y": 2, "x": 1}], "c": "é\n"}}));
        assert_eq!(
            canonical_json(&a).unwrap(),
            r#"{"a":{"c":"é\n","d":[1,{"x":1,"y":2}]},"b":1}"#
        );
        let b = map(json!({"a": {"c": "é\n", "d": [1, {"x": 1, "y": 2}]}, "b": 1}));
        assert_eq!(input_sha256(&a).unwrap(), input_sha256(&b).unwrap());
        assert_ne!(
            input_sha256(&a).unwrap(),
            input_sha256(&map(json!({"b": 2}))).unwrap()
        );
    }

    #[test]
    fn sha256_of_empty_object_is_the_known_digest() {
        // sha256("{}")
        assert_eq!(
            input_sha256(&Map::new()).unwrap(),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn deep_or_huge_input_is_refused() {
        let mut v = json!(1);
        for _ in 0..100 {
            v = json!([v]);
        }
        let err = input_sha256(&map(json!({"x": v}))).unwrap_err();
        assert!(err.to_string().contains("deeper than"), "{err}");
        let big = "x".repeat(MAX_INPUT_BYTES + 1);
        let err = input_sha256(&map(json!({"x": big}))).unwrap_err();
        assert!(err.to_string().contains("bytes"), "{err}");
    }

    #[test]
    fn timestamps_format_as_rfc3339() {
        assert_eq!(format_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_timestamp(951_782_400_123),
            "2000-02-29T00:00:00.123Z"
        );
        assert_eq!(
            format_timestamp(1_735_689_599_999),
            "2024-12-31T23:59:59.999Z"
        );
        assert_eq!(format_timestamp(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn state_machine_edges() {
        use State::*;
        assert!(Pending.can_become(Approved));
        assert!(!Pending.can_become(Executing));
        assert!(!Approved.can_become(Rejected));
        assert!(InDoubt.can_become(Executed));
        for s in State::ALL {
            if s.is_terminal() {
                assert!(State::ALL.iter().all(|t| !s.can_become(*t)), "{s}");
            }
            assert_eq!(s.as_str().parse::<State>().unwrap(), s);
        }
        assert!("done".parse::<State>().is_err());
    }

    #[test]
    fn ids_are_unique_and_shaped() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|i| i.len() == 27 && i.starts_with("pa_")));
    }
}
