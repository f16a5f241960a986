//! Executing approved pending actions through the dispatchers registered
//! with their tools (bypassing the queue).
//!
//! Only the process that registers a tool can run its pending actions, so
//! the host calls [`ToolRegistry::execute_approved`] itself: on a timer (a
//! few seconds apart is plenty; every pass is one listing when nothing is
//! approved), and it may call it again right after an operator approves.
//! Before dispatching an approved action the executor refuses it, as
//! `failed` with the reason, when
//!
//! - its stored input no longer hashes to what was approved;
//! - it was queued before approvals were bound to definitions (a queue file
//!   from schema version 1): "approved before definitions were bound;
//!   propose it again";
//! - the tool registered here is not the one approved (its executable
//!   digest differs: another target, body, method, patch, route, object or
//!   parameter schema): "the action changed since it was approved";
//! - the stored input (the approved edits, when the approver changed the
//!   arguments) does not validate against the tool's current parameter
//!   schema and argument limits.

use std::time::Duration;

use serde_json::{Map, Value};

use super::{ActionTool, CallContext, ToolRegistry};
use crate::approval::{
    ApprovalError, Claim, ListFilter, Outcome, PendingAction, State, StoreError, check_integrity,
};

/// How [`ToolRegistry::execute_approved`] claims work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteOptions {
    /// This executor's name, recorded on every claim (default
    /// `pid-<process id>`).
    pub executor: String,
    /// How long a claim may go without an outcome before it becomes
    /// `in_doubt` (default 5 minutes). Choose it longer than the slowest
    /// dispatch: give host services timeouts shorter than the lease.
    pub lease: Duration,
    /// At most this many approved actions per call (default: all).
    pub limit: Option<usize>,
    /// Pass over actions approved less than this long ago (default: none):
    /// set it in an executor that picks up approvals recorded elsewhere,
    /// so the process that recorded one runs it under its approver's
    /// credential, and this one takes over only when that did not happen.
    pub settled: Duration,
}

impl Default for ExecuteOptions {
    fn default() -> Self {
        ExecuteOptions {
            executor: format!("pid-{}", std::process::id()),
            lease: Duration::from_secs(300),
            limit: None,
            settled: Duration::ZERO,
        }
    }
}

/// What one [`ToolRegistry::execute_approved`] pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecutionReport {
    /// Claims whose lease had run out, now `in_doubt`.
    pub in_doubt: Vec<String>,
    /// Dispatched by this pass and succeeded.
    pub executed: Vec<String>,
    /// Dispatched (or refused) by this pass and failed.
    pub failed: Vec<String>,
    /// Claimed actions whose lease ran out during the dispatch (another
    /// pass made them `in_doubt` before the outcome was recorded).
    pub lost_races: usize,
    /// Approved actions whose tool this registry does not have.
    pub skipped: Vec<String>,
    /// Actions that could not be processed, with why (store errors).
    pub errors: Vec<(String, String)>,
}

impl ToolRegistry {
    /// Executes every approved pending action whose tool is registered
    /// here, oldest first, after turning expired claims into `in_doubt`.
    ///
    /// Safe to run at the same time from many threads and processes
    /// sharing one queue: each action is claimed (committed) before it is
    /// dispatched, so it runs at most once; the losers of a race skip it.
    pub async fn execute_approved(
        &self,
        options: &ExecuteOptions,
    ) -> Result<ExecutionReport, ApprovalError> {
        let queue = self.queue()?;
        let mut report = ExecutionReport {
            in_doubt: queue
                .sweep_expired_leases()?
                .into_iter()
                .map(|r| r.id)
                .collect(),
            ..ExecutionReport::default()
        };
        // Claim one approved action at a time (the store skips, rather
        // than waits for, rows other executors are claiming), so executors
        // sharing the queue split the work instead of racing for each row.
        let tools = self.action_names();
        let mut claimed = 0;
        while options.limit.is_none_or(|limit| claimed < limit) {
            let claim = match queue.claim_next_settled(
                &tools,
                &options.executor,
                options.lease,
                options.settled,
            ) {
                Ok(Some(claim)) => claim,
                Ok(None) => break,
                Err(e) => {
                    report.errors.push((String::new(), e.to_string()));
                    break;
                }
            };
            claimed += 1;
            let id = claim.action.id.clone();
            let Some(tool) = self.action(&claim.action.tool_name) else {
                // Not reached: only rows of registered tools are claimed.
                report
                    .errors
                    .push((id, "claimed a tool that is not registered".into()));
                continue;
            };
            match self.run_claim(claim, tool).await {
                Ok(done) if done.state == State::Executed => report.executed.push(done.id),
                Ok(done) => report.failed.push(done.id),
                Err(ApprovalError::AlreadyDecided { .. }) => report.lost_races += 1,
                Err(e) => report.errors.push((id, e.to_string())),
            }
        }
        // What stays approved: rows of tools this registry does not have,
        // and rows that cannot be read (which cannot be executed: reported,
        // and the others go on).
        let left = queue.list(&ListFilter {
            state: Some(State::Approved),
            limit: options.limit,
            ..ListFilter::default()
        })?;
        for unreadable in left.unreadable {
            let id = match &unreadable {
                StoreError::CorruptRow { id, .. } => id.clone(),
                _ => String::new(),
            };
            report.errors.push((id, unreadable.to_string()));
        }
        for row in left.rows {
            if self.action(&row.tool_name).is_none() {
                report.skipped.push(row.id);
            }
        }
        Ok(report)
    }

    /// Executes one approved pending action: claims it, dispatches it under
    /// its proposer with its id as the idempotency key, and records
    /// `executed` or `failed` (a result envelope with `ok: false` counts
    /// as failed). Losing the claim to another executor is
    /// [`ApprovalError::AlreadyDecided`].
    pub async fn execute_pending(
        &self,
        id: &str,
        options: &ExecuteOptions,
    ) -> Result<PendingAction, ApprovalError> {
        let queue = self.queue()?;
        let row = queue.get(id)?;
        let Some(tool) = self.action(&row.tool_name) else {
            return Err(match row.state {
                State::Approved => ApprovalError::NoDispatcher {
                    id: row.id,
                    tool: row.tool_name,
                },
                State::Pending => ApprovalError::NotApproved {
                    id: row.id,
                    state: row.state,
                },
                state => ApprovalError::AlreadyDecided {
                    id: row.id,
                    state,
                    by: row.state_by,
                },
            });
        };
        let claim = queue.claim(id, &options.executor, options.lease)?;
        self.run_claim(claim, tool).await
    }

    /// The approval queue, or [`ApprovalError::NoQueue`].
    fn queue(&self) -> Result<&crate::approval::ApprovalQueue, ApprovalError> {
        self.services
            .approvals
            .as_deref()
            .ok_or(ApprovalError::NoQueue)
    }

    /// Dispatches a claimed action through `tool` (or refuses it) and
    /// records the outcome.
    async fn run_claim(
        &self,
        claim: Claim,
        tool: &ActionTool,
    ) -> Result<PendingAction, ApprovalError> {
        let queue = self.queue()?;
        let row = &claim.action;
        let outcome = match self.refusal(row, tool) {
            Some(why) => Outcome::Failed {
                error: format!("refused to dispatch: {why}"),
                result: None,
            },
            None => {
                let context = CallContext {
                    actor: Some(row.proposer.clone()),
                    conversation_id: row.conversation_id.clone(),
                    message_id: row.message_id.clone(),
                    tool_call_id: row.tool_call_id.clone(),
                    trace_id: row.trace_id.clone(),
                };
                let envelope = tool
                    .run(
                        row.execution_input().clone(),
                        &row.proposer,
                        &context,
                        Some(&row.id),
                        &self.services,
                    )
                    .await;
                if envelope.get("ok") == Some(&Value::Bool(true)) {
                    Outcome::Executed(envelope)
                } else {
                    let error = envelope
                        .get("error")
                        .and_then(Value::as_str)
                        .unwrap_or("the action reported `ok: false`")
                        .to_owned();
                    if envelope.get(super::OUTCOME_UNKNOWN) == Some(&Value::Bool(true)) {
                        Outcome::InDoubt {
                            error,
                            result: Some(envelope),
                        }
                    } else {
                        Outcome::Failed {
                            error,
                            result: Some(envelope),
                        }
                    }
                }
            }
        };
        let reported = match &outcome {
            Outcome::Executed(_) => "executed",
            Outcome::Failed { .. } => "failed",
            Outcome::InDoubt { .. } => "no answer",
        };
        match queue.finish(&claim, outcome) {
            Err(ApprovalError::Store(e)) => Err(ApprovalError::OutcomeNotRecorded {
                id: claim.action.id.clone(),
                outcome: reported,
                error: e.to_string(),
            }),
            other => other,
        }
    }

    /// Approves a pending action with changed arguments, after checking
    /// them against the tool as registered here: the tool must be the one
    /// proposed (same executable digest), and `edited` must pass its
    /// argument limits and its current parameter schema (`null` for an
    /// optional parameter counts as not given, as in a call). Then
    /// [`ApprovalQueue::approve_with_edits`] records it: `input_sha256` is
    /// the hash of the proposed input the approver saw.
    ///
    /// [`ApprovalQueue::approve_with_edits`]: crate::approval::ApprovalQueue::approve_with_edits
    pub fn approve_with_edits(
        &self,
        id: &str,
        by: &str,
        input_sha256: &str,
        mut edited: Map<String, Value>,
    ) -> Result<PendingAction, ApprovalError> {
        let queue = self.queue()?;
        let row = queue.get(id)?;
        if row.state != State::Pending {
            return Err(ApprovalError::AlreadyDecided {
                id: row.id,
                state: row.state,
                by: row.state_by,
            });
        }
        let (Some(tool), Some(entry)) = (self.action(&row.tool_name), self.entry(&row.tool_name))
        else {
            return Err(ApprovalError::NoDispatcher {
                id: row.id,
                tool: row.tool_name,
            });
        };
        let invalid = |problems: Vec<String>| ApprovalError::InvalidEdits {
            id: row.id.clone(),
            tool: row.tool_name.clone(),
            problems,
        };
        if !row
            .executable_sha256
            .as_deref()
            .is_some_and(|approved| tool.executable_sha256.is(approved))
        {
            return Err(invalid(vec![format!(
                "(input): `{}` changed since this action was proposed, so its arguments cannot                  be checked against what was proposed; reject it and propose it again",
                row.tool_name
            )]));
        }
        if let Err(message) = self.services.limits.check(&edited) {
            return Err(invalid(vec![format!("(input): {message}")]));
        }
        entry.validator.drop_absent_nulls(&mut edited);
        if let Err(violations) = entry.validator.validate(&edited) {
            return Err(invalid(violations.iter().map(located).collect()));
        }
        queue.approve_with_edits(id, by, input_sha256, edited)
    }

    /// Why `row` must not be dispatched through `tool`, if it must not.
    fn refusal(&self, row: &PendingAction, tool: &ActionTool) -> Option<String> {
        if let Err(e) = check_integrity(row) {
            return Some(e.to_string());
        }
        match &row.executable_sha256 {
            None => {
                return Some(
                    "this pending action was approved before definitions were bound; propose it \
                     again (it was queued by a version of the approval queue that did not record \
                     which definition of the tool an approval is for)"
                        .to_owned(),
                );
            }
            Some(approved) if !tool.executable_sha256.is(approved) => {
                return Some(format!(
                    "the action changed since it was approved: `{}` as registered here has \
                     executable sha256 {}, and {approved} was approved; propose it again",
                    row.tool_name, tool.executable_sha256
                ));
            }
            Some(_) => {}
        }
        let input = row.execution_input();
        if let Err(message) = self.services.limits.check(input) {
            return Some(format!(
                "the stored input is over the argument limits: {message}"
            ));
        }
        if let Some(entry) = self.entry(&row.tool_name)
            && let Err(violations) = entry.validator.validate(input)
        {
            let listed: Vec<String> = violations.iter().take(10).map(located).collect();
            return Some(format!(
                "the stored input does not match the parameters of `{}` as registered here ({} \
                 problem{}): {}",
                row.tool_name,
                violations.len(),
                if violations.len() == 1 { "" } else { "s" },
                listed.join("; ")
            ));
        }
        None
    }
}

/// A schema violation as `path: message` (`(input)` for the root).
fn located(v: &super::Violation) -> String {
    let path = if v.path.is_empty() {
        "(input)"
    } else {
        &v.path
    };
    format!("{path}: {}", v.message)
}
