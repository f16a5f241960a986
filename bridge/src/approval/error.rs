//! Why a queue operation did not happen ([`ApprovalError`]).

use super::State;
use super::store::StoreError;

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
    /// An action was dispatched, and the store failed while recording its
    /// outcome: it ran (or may have), and the row stays `executing` until
    /// its lease runs out and it becomes `in_doubt`.
    #[error(
        "pending action `{id}` was dispatched ({outcome}), but its outcome could not be recorded \
         ({error}); it becomes in_doubt when its claim's lease runs out: check the target \
         system before running it again, then resolve it"
    )]
    OutcomeNotRecorded {
        /// The pending action's id.
        id: String,
        /// What the dispatch reported: `executed`, `failed` or `no answer`.
        outcome: &'static str,
        /// Why the store could not record it.
        error: String,
    },
    /// The storage backend failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
