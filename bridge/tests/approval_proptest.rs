//! A property test of the approval state machine: random sequences of
//! propose / approve / reject / cancel / execute / crash / sweep / expire /
//! resolve, checked step by step against a model.
//!
//! Properties: every answer (success or the kind of refusal) matches the
//! model; a terminal state never changes; an action executed by an
//! executor was dispatched exactly once; a rejected, expired or cancelled
//! action was never dispatched; nothing is dispatched twice.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use approval_support::{FakeHost, Seen, obj, scratch_dir};
use objectstack_bridge::approval::{
    ApprovalError, ApprovalQueue, ApprovalStore, ManualClock, MemoryStore, Proposal, Resolution,
    SqliteStore, State,
};
use objectstack_bridge::runtime::{Actor, ExecuteOptions, HostError, ToolRegistry};
use objectstack_spec::AIToolDefinition;
use proptest::prelude::*;
use serde_json::json;

const LEASE_SECS: u64 = 10;

#[derive(Debug, Clone)]
enum Op {
    Propose(u8),
    Approve(u8),
    Reject(u8),
    Cancel(u8),
    Execute(u8, bool),
    Crash(u8, bool),
    Advance(u8),
    Sweep,
    Expire(u8),
    Resolve(u8, bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..6).prop_map(Op::Propose),
        3 => any::<u8>().prop_map(Op::Approve),
        1 => any::<u8>().prop_map(Op::Reject),
        1 => any::<u8>().prop_map(Op::Cancel),
        3 => (any::<u8>(), any::<bool>()).prop_map(|(i, ok)| Op::Execute(i, ok)),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(i, d)| Op::Crash(i, d)),
        2 => (0u8..30).prop_map(Op::Advance),
        1 => Just(Op::Sweep),
        1 => (0u8..60).prop_map(Op::Expire),
        2 => (any::<u8>(), any::<bool>()).prop_map(|(i, e)| Op::Resolve(i, e)),
    ]
}

/// What the model expects of one pending action.
#[derive(Debug, Clone)]
struct Model {
    id: String,
    state: State,
    created_at: i64,
    lease_until: Option<i64>,
    dispatches: usize,
    resolved: bool,
}

/// The kind of answer an operation gives, to compare with the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Ok,
    AlreadyDecided,
    NotApproved,
    NotInDoubt,
}

fn answer<T>(r: Result<T, ApprovalError>) -> Answer {
    match r {
        Ok(_) => Answer::Ok,
        Err(ApprovalError::AlreadyDecided { .. }) => Answer::AlreadyDecided,
        Err(ApprovalError::NotApproved { .. }) => Answer::NotApproved,
        Err(ApprovalError::NotInDoubt { .. }) => Answer::NotInDoubt,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

fn run(store: Arc<dyn ApprovalStore>, ops: &[Op]) -> Result<(), TestCaseError> {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let queue = Arc::new(ApprovalQueue::new(store).with_clock(clock.clone()));
    let host = FakeHost::new();
    let mut registry = ToolRegistry::new(host.services(Some(queue.clone())));
    let action = obj(json!({
        "name": "purge", "type": "script", "target": "scripts/purge", "mode": "delete",
        "ai": {"exposed": true, "description": "Purges the numbered batch of records for good."}
    }));
    let definition = AIToolDefinition {
        name: "action_purge".into(),
        label: None,
        description: "Purges a batch.".into(),
        parameters: obj(json!({"type": "object"})),
        category: None,
        output_schema: None,
        object_name: None,
        requires_confirmation: Some(true),
    };
    registry.register_action(definition, action).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let options = ExecuteOptions {
        executor: "exec".into(),
        lease: Duration::from_secs(LEASE_SECS),
        limit: None,
    };

    let mut models: Vec<Model> = Vec::new();
    let mut by_call: HashMap<u8, usize> = HashMap::new();
    let mut first_terminal: HashMap<String, State> = HashMap::new();
    let mut simulated: HashMap<String, usize> = HashMap::new();

    for op in ops {
        let now = queue.now_ms();
        let pick = |i: &u8, models: &Vec<Model>| {
            (!models.is_empty()).then(|| usize::from(*i) % models.len())
        };
        match op {
            Op::Propose(k) => {
                let proposed = queue
                    .propose(Proposal {
                        tool_name: "action_purge".into(),
                        action_name: "purge".into(),
                        object_name: None,
                        input: obj(json!({"batch": k})),
                        executable_sha256: registry
                            .executable_sha256("action_purge")
                            .unwrap()
                            .to_owned(),
                        conversation_id: Some("c".into()),
                        message_id: None,
                        tool_call_id: Some(format!("call-{k}")),
                        trace_id: None,
                        proposer: Actor::new("u"),
                    })
                    .unwrap();
                match by_call.get(k) {
                    Some(&i) => {
                        prop_assert!(!proposed.created);
                        prop_assert_eq!(&proposed.action.id, &models[i].id);
                    }
                    None => {
                        prop_assert!(proposed.created);
                        by_call.insert(*k, models.len());
                        models.push(Model {
                            id: proposed.action.id,
                            state: State::Pending,
                            created_at: now,
                            lease_until: None,
                            dispatches: 0,
                            resolved: false,
                        });
                    }
                }
            }
            Op::Approve(i) | Op::Reject(i) | Op::Cancel(i) => {
                let Some(i) = pick(i, &models) else { continue };
                let m = &mut models[i];
                let got = match op {
                    Op::Approve(_) => {
                        let hash = queue.get(&m.id).unwrap().input_sha256;
                        answer(queue.approve(&m.id, "alice", &hash))
                    }
                    Op::Reject(_) => answer(queue.reject(&m.id, "bob", Some("no"))),
                    _ => answer(queue.cancel(&m.id, "u")),
                };
                if m.state == State::Pending {
                    prop_assert_eq!(got, Answer::Ok);
                    m.state = match op {
                        Op::Approve(_) => State::Approved,
                        Op::Reject(_) => State::Rejected,
                        _ => State::Cancelled,
                    };
                } else {
                    prop_assert_eq!(got, Answer::AlreadyDecided);
                }
            }
            Op::Execute(i, ok) => {
                let Some(i) = pick(i, &models) else { continue };
                host.answer_with(if *ok {
                    Ok(json!({"n": 1}))
                } else {
                    Err(HostError::failed("no"))
                });
                let m = &mut models[i];
                let got = answer(rt.block_on(registry.execute_pending(&m.id, &options)));
                match m.state {
                    State::Approved => {
                        prop_assert_eq!(got, Answer::Ok);
                        m.state = if *ok { State::Executed } else { State::Failed };
                        m.dispatches += 1;
                    }
                    State::Pending => prop_assert_eq!(got, Answer::NotApproved),
                    _ => prop_assert_eq!(got, Answer::AlreadyDecided),
                }
            }
            Op::Crash(i, dispatched) => {
                // Claim, maybe dispatch, then never record an outcome.
                let Some(i) = pick(i, &models) else { continue };
                let m = &mut models[i];
                let got = answer(queue.claim(&m.id, "doomed", Duration::from_secs(LEASE_SECS)));
                match m.state {
                    State::Approved => {
                        prop_assert_eq!(got, Answer::Ok);
                        m.state = State::Executing;
                        m.lease_until = Some(now + 1000 * LEASE_SECS as i64);
                        if *dispatched {
                            m.dispatches += 1;
                            *simulated.entry(m.id.clone()).or_default() += 1;
                        }
                    }
                    State::Pending => prop_assert_eq!(got, Answer::NotApproved),
                    _ => prop_assert_eq!(got, Answer::AlreadyDecided),
                }
            }
            Op::Advance(secs) => clock.advance(Duration::from_secs(u64::from(*secs))),
            Op::Sweep => {
                let swept = queue.sweep_expired_leases().unwrap();
                let mut expected = Vec::new();
                for m in &mut models {
                    if m.state == State::Executing && m.lease_until.is_some_and(|l| l <= now) {
                        m.state = State::InDoubt;
                        expected.push(m.id.clone());
                    }
                }
                let mut got: Vec<String> = swept.into_iter().map(|r| r.id).collect();
                got.sort();
                expected.sort();
                prop_assert_eq!(got, expected);
            }
            Op::Expire(mins) => {
                let age = Duration::from_secs(60 * u64::from(*mins));
                let expired = queue.expire_older_than(age, "cron").unwrap();
                let cutoff = now - i64::try_from(age.as_millis()).unwrap();
                let mut expected = Vec::new();
                for m in &mut models {
                    if m.state == State::Pending && m.created_at < cutoff {
                        m.state = State::Expired;
                        expected.push(m.id.clone());
                    }
                }
                let mut got: Vec<String> = expired.into_iter().map(|r| r.id).collect();
                got.sort();
                expected.sort();
                prop_assert_eq!(got, expected);
            }
            Op::Resolve(i, executed) => {
                let Some(i) = pick(i, &models) else { continue };
                let m = &mut models[i];
                let how = if *executed {
                    Resolution::Executed
                } else {
                    Resolution::Failed
                };
                let got = answer(queue.resolve(&m.id, "ops", how, None));
                match m.state {
                    State::InDoubt => {
                        prop_assert_eq!(got, Answer::Ok);
                        m.state = if *executed {
                            State::Executed
                        } else {
                            State::Failed
                        };
                        m.resolved = true;
                    }
                    s if s.is_terminal() => prop_assert_eq!(got, Answer::AlreadyDecided),
                    _ => prop_assert_eq!(got, Answer::NotInDoubt),
                }
            }
        }

        // After every step: the store agrees with the model, terminal
        // states stay put, and dispatch counts hold.
        let dispatched = host
            .dispatches()
            .into_iter()
            .filter_map(|s| match s {
                Seen::Script(r) => r.idempotency_key,
                _ => None,
            })
            .fold(HashMap::<String, usize>::new(), |mut acc, k| {
                *acc.entry(k).or_default() += 1;
                acc
            });
        for m in &models {
            let row = queue.get(&m.id).unwrap();
            prop_assert_eq!(row.state, m.state, "{:?} after {:?}", m, op);
            if let Some(first) = first_terminal.get(&m.id) {
                prop_assert_eq!(*first, row.state, "a terminal state changed");
            } else if row.state.is_terminal() {
                first_terminal.insert(m.id.clone(), row.state);
            }
            let count = dispatched.get(&m.id).copied().unwrap_or(0)
                + simulated.get(&m.id).copied().unwrap_or(0);
            prop_assert_eq!(count, m.dispatches);
            prop_assert!(count <= 1, "dispatched twice: {:?}", m);
            match row.state {
                State::Executed if !m.resolved => prop_assert_eq!(count, 1),
                State::Rejected
                | State::Expired
                | State::Cancelled
                | State::Pending
                | State::Approved => prop_assert_eq!(count, 0),
                _ => {}
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn state_machine_in_memory(ops in proptest::collection::vec(op(), 1..60)) {
        run(Arc::new(MemoryStore::new()), &ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn state_machine_on_sqlite(ops in proptest::collection::vec(op(), 1..40)) {
        let dir = scratch_dir("prop");
        let store = SqliteStore::open(&dir.join("q.db")).unwrap();
        run(Arc::new(store), &ops)?;
    }
}
