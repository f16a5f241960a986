//! Where a pending action is in its life ([`State`], the transitions the
//! state machine has) and the row that carries it ([`PendingAction`]).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use super::clock::{duration_ms, format_timestamp};
use super::id::dedup_key;
use crate::actor::Actor;

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
    /// SHA-256 (hex) of the canonical JSON of `input` (see
    /// [`input_sha256`](super::input_sha256)).
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

fn ser_time<S: serde::Serializer>(ms: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_timestamp(*ms))
}

fn ser_opt_time<S: serde::Serializer>(ms: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match ms {
        Some(ms) => s.serialize_str(&format_timestamp(*ms)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
