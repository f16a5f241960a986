//! The queue: the state machine over an [`ApprovalStore`], with the
//! requests it takes (proposals, claims, outcomes, resolutions) and the
//! observer it tells of every committed change.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::canonical::{input_sha256, input_sha256_of, is_sha256_hex};
use super::clock::{Clock, SystemClock, duration_ms};
use super::id::new_id;
use super::store::{ApprovalStore, Cas, ListCursor, ListFilter, StoreError, Wake};
use super::{ApprovalError, PendingAction, State};
use crate::actor::Actor;

/// The decider recorded when pending actions expire by age.
pub const EXPIRY_DECIDER: &str = "system:expiry";

/// The decider recorded when a claim's lease runs out.
pub const LEASE_DECIDER: &str = "system:lease-expired";

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
    /// The request was sent and no answer came back: whether the action
    /// ran is unknown. The row becomes `in_doubt`, for an operator to
    /// check the target system and [`resolve`](ApprovalQueue::resolve).
    InDoubt {
        /// What went wrong.
        error: String,
        /// The result envelope, when there is one.
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

/// What [`ApprovalQueue::list`] found.
#[derive(Debug, Default)]
pub struct Listing {
    /// The rows that were read, in the filter's order.
    pub rows: Vec<PendingAction>,
    /// The rows that could not be read back, in listing order; each is a
    /// [`StoreError::CorruptRow`] naming the row and what is wrong with it.
    pub unreadable: Vec<StoreError>,
}

/// [`ApprovalQueue::pages`]: a listing read `size` rows at a time, each
/// page read only when asked for.
pub struct Pages<'q> {
    queue: &'q ApprovalQueue,
    filter: ListFilter,
    size: usize,
    done: bool,
}

impl Iterator for Pages<'_> {
    type Item = Result<Listing, ApprovalError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let read = match self.queue.store.list(&self.filter) {
            Ok(read) => read,
            Err(e) => {
                self.done = true;
                return Some(Err(e.into()));
            }
        };
        self.done = read.len() < self.size;
        // The next page starts after the last readable row (keyset
        // paging); rows read after it that cannot be read, whose position
        // is unknown, are passed over by offset.
        let mut trailing = 0usize;
        let mut last = None;
        let mut page = Listing::default();
        for row in read {
            match row {
                Ok(row) => {
                    trailing = 0;
                    last = Some(ListCursor::of(&row, self.filter.order));
                    page.rows.push(row);
                }
                Err(e) => {
                    trailing += 1;
                    page.unreadable.push(e);
                }
            }
        }
        match last {
            Some(cursor) => {
                self.filter.after = Some(cursor);
                self.filter.offset = Some(trailing);
            }
            None => {
                let skipped = self.filter.offset.unwrap_or(0);
                self.filter.offset = Some(skipped.saturating_add(trailing));
            }
        }
        let empty = page.rows.is_empty() && page.unreadable.is_empty();
        (!empty).then_some(Ok(page))
    }
}

/// The queue: the state machine over an [`ApprovalStore`].
///
/// Cheap to share (`Arc`); every operation is one short transaction, safe
/// to call from many threads (and, with
/// [`SqliteStore`](super::SqliteStore), many processes).
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

    /// Pending actions matching `filter`, in its order, and the rows among
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

    /// The rows matching `filter`, in its order, `size` (at least 1) at a
    /// time: each page is one store read, made when the iterator is
    /// advanced, so a caller that stops early reads no further. Each page
    /// starts after the last row of the one before ([`ListFilter::after`],
    /// keyset paging; the filter's own `offset` and `limit` are replaced,
    /// its `after` is where the first page starts), so every page costs
    /// the same, and a row that does not change is listed exactly once
    /// however the others change meanwhile. A row that changes between two
    /// reads moves in the order: it can come twice, or not at all.
    pub fn pages(&self, filter: &ListFilter, size: usize) -> Pages<'_> {
        let size = size.max(1);
        Pages {
            queue: self,
            filter: ListFilter {
                offset: None,
                limit: Some(size),
                ..filter.clone()
            },
            size,
            done: false,
        }
    }

    /// The readable rows matching `filter`, in its order; rows that cannot
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
        self.claim_next_settled(tools, executor, lease, Duration::ZERO)
    }

    /// [`claim_next`](Self::claim_next), passing over actions approved
    /// less than `settled` ago: an executor that picks up approvals
    /// recorded elsewhere leaves the approver's own process the time to
    /// run what it approved (under the approver's credential), and takes
    /// over only when that process did not.
    pub fn claim_next_settled(
        &self,
        tools: &[String],
        executor: &str,
        lease: Duration,
        settled: Duration,
    ) -> Result<Option<Claim>, ApprovalError> {
        let executor = decider(executor)?;
        let lease = duration_ms(lease);
        let settled = duration_ms(settled);
        let clock = &self.clock;
        let claimed = self.store.claim_next(tools, &mut |row| {
            let now = clock.now_ms();
            (row.state == State::Approved && now.saturating_sub(row.state_at) >= settled)
                .then(|| claimed(row, executor, lease, now))
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
                    Outcome::Failed { error, result } | Outcome::InDoubt { error, result } => {
                        next.error = Some(error.clone());
                        next.result = result.clone();
                    }
                }
                next.reason = Some(format!(
                    "executor `{executor}` reported `{}` after its lease ran out",
                    match outcome {
                        Outcome::Executed(_) => "executed",
                        Outcome::Failed { .. } => "failed",
                        Outcome::InDoubt { .. } => "no answer",
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
        Outcome::InDoubt { error, result } => {
            next.state = State::InDoubt;
            next.error = Some(error.clone());
            next.result = result.clone();
            next.reason = Some(format!(
                "the request was sent and no answer came back ({error}); check the target \
                 system, then resolve it"
            ));
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
