//! The decisions a person makes in an inbox: four eyes, approve with
//! edits, deadlines, and resolving what is in doubt, on both stores, plus
//! the SQLite file's schema version 3 (its upgrade and its guards).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use approval_support::{FakeHost, Seen, obj, scratch_dir};
use objectstack_bridge::approval::{
    ApprovalError, ApprovalQueue, ApprovalStore, EXPIRY_DECIDER, ListFilter, ManualClock,
    MemoryStore, Outcome, Proposal, Resolution, SqliteStore, State, input_sha256,
};
use objectstack_bridge::runtime::{Actor, CallContext, ExecuteOptions, ToolRegistry};
use serde_json::{Value, json};

const START: i64 = 1_700_000_000_000;

fn proposal(proposer: &str, n: i64) -> Proposal {
    Proposal {
        tool_name: "action_wipe".into(),
        action_name: "wipe".into(),
        object_name: Some("task".into()),
        input: obj(json!({"recordId": format!("t{n}"), "force": true})),
        executable_sha256: "ab".repeat(32),
        conversation_id: Some("conv".into()),
        message_id: None,
        tool_call_id: Some(format!("tc{n}")),
        trace_id: None,
        proposer: Actor::new(proposer),
    }
}

/// Runs `check` on a fresh in-memory store and a fresh SQLite file, with
/// the queue built by `build` from a plain one.
fn on_both_stores(
    build: impl Fn(ApprovalQueue) -> ApprovalQueue,
    check: impl Fn(ApprovalQueue, Arc<ManualClock>),
) {
    let dir = scratch_dir("decisions");
    let stores: Vec<Arc<dyn ApprovalStore>> = vec![
        Arc::new(MemoryStore::new()),
        Arc::new(SqliteStore::open(&dir.join("q.db")).unwrap()),
    ];
    for store in stores {
        let clock = Arc::new(ManualClock::new(START));
        check(
            build(ApprovalQueue::new(store).with_clock(clock.clone())),
            clock,
        );
    }
}

#[test]
fn a_proposer_cannot_approve_their_own_action_unless_the_queue_allows_it() {
    on_both_stores(
        |q| q,
        |q, _| {
            assert!(!q.allows_self_approval(), "four eyes is the default");
            let row = q.propose(proposal("alice", 1)).unwrap().action;
            let err = q.approve(&row.id, "alice", &row.input_sha256).unwrap_err();
            assert!(
                matches!(&err, ApprovalError::SelfApproval { proposer, .. } if proposer == "alice"),
                "{err}"
            );
            assert!(err.to_string().contains("four eyes"), "{err}");
            // The edit path keeps the rule too, and nothing was recorded.
            let err = q
                .approve_with_edits(&row.id, " alice ", &row.input_sha256, row.input.clone())
                .unwrap_err();
            assert!(matches!(err, ApprovalError::SelfApproval { .. }), "{err}");
            assert_eq!(q.get(&row.id).unwrap().state, State::Pending);
            // Rejecting one's own proposal is always allowed.
            let other = q.propose(proposal("alice", 2)).unwrap().action;
            assert_eq!(
                q.reject(&other.id, "alice", Some("changed my mind"))
                    .unwrap()
                    .state,
                State::Rejected
            );
            let done = q.approve(&row.id, "bob", &row.input_sha256).unwrap();
            assert_eq!(done.state, State::Approved);
            assert_eq!(done.decided_by.as_deref(), Some("bob"));
        },
    );
    on_both_stores(
        |q| q.with_self_approval(true),
        |q, _| {
            let row = q.propose(proposal("alice", 1)).unwrap().action;
            let done = q.approve(&row.id, "alice", &row.input_sha256).unwrap();
            assert_eq!(done.state, State::Approved);
        },
    );
}

#[test]
fn approve_with_edits_keeps_the_proposed_and_the_approved_input() {
    on_both_stores(
        |q| q,
        |q, _| {
            let row = q.propose(proposal("alice", 1)).unwrap().action;
            let edited = obj(json!({"recordId": "t1", "force": false}));
            // The hash is the one of the proposed input the approver saw.
            let err = q
                .approve_with_edits(
                    &row.id,
                    "bob",
                    &input_sha256(&edited).unwrap(),
                    edited.clone(),
                )
                .unwrap_err();
            assert!(matches!(err, ApprovalError::InputMismatch { .. }), "{err}");
            let done = q
                .approve_with_edits(&row.id, "bob", &row.input_sha256, edited.clone())
                .unwrap();
            assert_eq!(done.state, State::Approved);
            assert_eq!(done.input, row.input, "the proposal never changes");
            assert_eq!(done.input_sha256, row.input_sha256);
            assert_eq!(done.approved_input.as_ref(), Some(&edited));
            assert_eq!(
                done.approved_sha256.as_deref(),
                Some(input_sha256(&edited).unwrap().as_str())
            );
            assert_eq!(done.execution_input(), &edited);
            // As stored.
            let stored = q.get(&row.id).unwrap();
            assert_eq!(stored, done);
            // A second decision loses.
            let err = q
                .approve_with_edits(&row.id, "carol", &row.input_sha256, edited)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    ApprovalError::AlreadyDecided {
                        state: State::Approved,
                        ..
                    }
                ),
                "{err}"
            );

            // An "edit" equal to the proposal (in another key order) is a
            // plain approval.
            let plain = q.propose(proposal("alice", 2)).unwrap().action;
            let same = obj(json!({"force": true, "recordId": "t2"}));
            let done = q
                .approve_with_edits(&plain.id, "bob", &plain.input_sha256, same)
                .unwrap();
            assert_eq!(done.approved_input, None);
            assert_eq!(done.approved_sha256.as_ref(), Some(&plain.input_sha256));
            assert_eq!(done.execution_input(), &plain.input);

            // Edits within the queue's limits only.
            let deep = q.propose(proposal("alice", 3)).unwrap().action;
            let mut v = json!(1);
            for _ in 0..100 {
                v = json!([v]);
            }
            let err = q
                .approve_with_edits(&deep.id, "bob", &deep.input_sha256, obj(json!({"x": v})))
                .unwrap_err();
            assert!(err.to_string().contains("the edited input"), "{err}");
            assert_eq!(q.get(&deep.id).unwrap().state, State::Pending);
        },
    );
}

#[test]
fn a_pending_action_expires_at_its_deadline() {
    let ttl = Duration::from_secs(3600);
    on_both_stores(
        |q| q.with_ttl(Some(ttl)),
        |q, clock| {
            assert_eq!(q.ttl(), Some(ttl));
            let a = q.propose(proposal("alice", 1)).unwrap().action;
            assert_eq!(a.expires_at, Some(START + 3_600_000));
            assert_eq!(a.deadline(None), a.expires_at);
            clock.advance(Duration::from_secs(1800));
            let b = q.propose(proposal("alice", 2)).unwrap().action;
            let c = q.propose(proposal("alice", 3)).unwrap().action;
            // Not yet.
            assert!(q.expire_due().unwrap().is_empty());
            clock.advance(Duration::from_secs(1800));
            // At the deadline, the first expires; an approval of it now
            // expires it instead of approving.
            let err = q.approve(&a.id, "bob", &a.input_sha256).unwrap_err();
            assert!(
                matches!(&err, ApprovalError::AlreadyDecided { state: State::Expired, by: Some(by), .. } if by == EXPIRY_DECIDER),
                "{err}"
            );
            assert_eq!(q.get(&a.id).unwrap().state, State::Expired);
            // The others are decided or swept.
            q.approve(&c.id, "bob", &c.input_sha256).unwrap();
            clock.advance(Duration::from_secs(1800));
            let swept = q.expire_due().unwrap();
            assert_eq!(
                swept.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
                [b.id.as_str()]
            );
            let b = q.get(&b.id).unwrap();
            assert_eq!(b.state, State::Expired);
            assert_eq!(b.decided_by.as_deref(), Some(EXPIRY_DECIDER));
            assert_eq!(q.get(&c.id).unwrap().state, State::Approved);
            assert!(q.expire_due().unwrap().is_empty(), "a sweep is idempotent");
        },
    );
}

#[test]
fn a_row_proposed_without_a_deadline_expires_by_age_under_a_queue_with_a_ttl() {
    let dir = scratch_dir("ttl-undated");
    let store: Arc<dyn ApprovalStore> = Arc::new(SqliteStore::open(&dir.join("q.db")).unwrap());
    let clock = Arc::new(ManualClock::new(START));
    let plain = ApprovalQueue::new(store.clone()).with_clock(clock.clone());
    let row = plain.propose(proposal("alice", 1)).unwrap().action;
    assert_eq!(row.expires_at, None);
    clock.advance(Duration::from_secs(7200));
    assert!(
        plain.expire_due().unwrap().is_empty(),
        "no TTL, no deadline"
    );
    let with_ttl = plain.clone().with_ttl(Some(Duration::from_secs(3600)));
    assert_eq!(row.deadline(with_ttl.ttl()), Some(START + 3_600_000));
    let swept = with_ttl.expire_due().unwrap();
    assert_eq!(swept.len(), 1);
    assert_eq!(plain.get(&row.id).unwrap().state, State::Expired);
}

#[test]
fn an_operator_resolves_an_in_doubt_action_and_the_record_says_who_and_why() {
    on_both_stores(
        |q| q,
        |q, clock| {
            for (n, how) in [(1, Resolution::Executed), (2, Resolution::Failed)] {
                let row = q.propose(proposal("alice", n)).unwrap().action;
                q.approve(&row.id, "bob", &row.input_sha256).unwrap();
                let claim = q.claim(&row.id, "exec-1", Duration::from_secs(60)).unwrap();
                clock.advance(Duration::from_secs(61));
                assert_eq!(q.sweep_expired_leases().unwrap().len(), 1);
                assert_eq!(q.get(&row.id).unwrap().state, State::InDoubt);
                // The executor's late report is kept as evidence only.
                assert!(
                    q.finish(&claim, Outcome::Executed(json!({"ok": true})))
                        .is_err()
                );
                let done = q
                    .resolve(&row.id, "carol", how, Some("checked the tracker"))
                    .unwrap();
                let state = match how {
                    Resolution::Executed => State::Executed,
                    Resolution::Failed => State::Failed,
                };
                assert_eq!(done.state, state);
                assert_eq!(done.state_by.as_deref(), Some("carol"));
                assert_eq!(done.reason.as_deref(), Some("checked the tracker"));
                assert!(done.finished_at.is_some());
                let err = q.resolve(&row.id, "carol", how, None).unwrap_err();
                assert!(matches!(err, ApprovalError::AlreadyDecided { .. }), "{err}");
            }
        },
    );
}

fn load_sql(db: &Path, file: &str) {
    let sql = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
}

fn user_version(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn a_version_2_queue_is_read_as_it_is_and_upgraded_by_the_first_writer() {
    let dir = scratch_dir("v2");
    let db = dir.join("q.db");
    load_sql(&db, "tests/data/approval-queue-v2.sql");
    assert_eq!(user_version(&db), 2);

    // A reader reads it as it is.
    let reader = SqliteStore::open_read_only(&db).unwrap();
    let rows: Vec<_> = reader
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r.approved_input.is_none() && r.expires_at.is_none())
    );
    drop(reader);
    assert_eq!(user_version(&db), 2, "reading never upgrades");

    // The first writer upgrades it; its rows keep what they had.
    let clock = Arc::new(ManualClock::new(START + 1000));
    let q = ApprovalQueue::new(Arc::new(SqliteStore::open(&db).unwrap())).with_clock(clock.clone());
    assert_eq!(user_version(&db), 3);
    let pending = q.get("pa_200000000000000000000001").unwrap();
    assert_eq!(pending.state, State::Pending);
    assert_eq!(pending.executable_sha256, Some("ab".repeat(32)));
    let approved = q.get("pa_200000000000000000000002").unwrap();
    assert_eq!(approved.execution_input(), &approved.input);

    // Approve with edits on the upgraded file survives a reopen.
    let edited = obj(json!({"recordId": "t9"}));
    q.approve_with_edits(&pending.id, "bob", &pending.input_sha256, edited.clone())
        .unwrap();
    drop(q);
    let q = ApprovalQueue::new(Arc::new(SqliteStore::open(&db).unwrap()));
    let row = q.get(&pending.id).unwrap();
    assert_eq!(row.approved_input, Some(edited));
    assert_eq!(row.input, pending.input);

    // The guards: the approved input is set by the approval only, and the
    // deadline is part of what was proposed.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let rewrite = conn.execute(
        "UPDATE pending_actions SET approved_input = '{\"recordId\":\"t0\"}' WHERE id = ?1",
        [&pending.id],
    );
    assert!(
        rewrite.unwrap_err().to_string().contains("never changes"),
        "an approved input cannot be rewritten"
    );
    let fresh = ApprovalQueue::new(Arc::new(SqliteStore::open(&db).unwrap()))
        .with_ttl(Some(Duration::from_secs(60)))
        .propose(proposal("alice", 5))
        .unwrap()
        .action;
    let moved = conn.execute(
        "UPDATE pending_actions SET expires_at = expires_at + 1000000 WHERE id = ?1",
        [&fresh.id],
    );
    assert!(moved.unwrap_err().to_string().contains("never changes"));
    let sneaked = conn.execute(
        "UPDATE pending_actions SET approved_input = '{}' WHERE id = ?1",
        [&fresh.id],
    );
    assert!(sneaked.is_err(), "no approved input without an approval");
}

// The registry's half: edits are validated against the tool's current
// schema, and what runs is the edited input, once.

fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn registry(host: &Arc<FakeHost>, db: &Path) -> ToolRegistry {
    let queue = Arc::new(ApprovalQueue::new(Arc::new(SqliteStore::open(db).unwrap())));
    let mut registry = ToolRegistry::new(host.services(Some(queue)));
    let stack = obj(json!({"objects": [{
        "name": "task",
        "fields": {"title": {"type": "text"}},
        "actions": [{
            "name": "purge", "type": "script", "target": "purge_one", "mode": "delete",
            "locations": ["record_more"],
            "params": [
                {"name": "note", "type": "text", "required": true},
                {"name": "keep_days", "type": "number"}
            ],
            "ai": {"exposed": true, "description": "Deletes the task and its history; it cannot be undone."}
        }]
    }]}));
    let (materialised, refused) = registry.register_stack(&stack);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(
        materialised.registered.len(),
        1,
        "{:?}",
        materialised.skipped
    );
    registry
}

#[test]
fn edits_are_validated_against_the_current_schema_and_the_edited_input_runs_once() {
    let dir = scratch_dir("edits");
    let db = dir.join("q.db");
    let host = FakeHost::new();
    host.add_record("task", json!({"id": "t1", "title": "Ship v1"}));
    host.add_record("task", json!({"id": "t2", "title": "Ship v2"}));
    let registry = registry(&host, &db);
    let context = CallContext {
        actor: Some(Actor::new("alice")),
        conversation_id: Some("c".into()),
        tool_call_id: Some("tc".into()),
        ..CallContext::default()
    };
    let out = block(registry.call(
        "action_purge",
        json!({"recordId": "t1", "note": "old"}),
        &context,
    ));
    assert_eq!(out["status"], "pending_approval", "{out}");
    let id = out["pendingActionId"].as_str().unwrap();
    let queue = registry.services().approvals.clone().unwrap();
    let row = queue.get(id).unwrap();

    for (bad, expect) in [
        (json!({"recordId": "t1", "note": 5}), "note"),
        (json!({"recordId": "t1"}), "note"),
        (json!({"recordId": "t1", "note": "x", "other": 1}), "other"),
        (
            json!({"recordId": "t1", "note": "x", "keep_days": "ten"}),
            "keep_days",
        ),
    ] {
        let err = registry
            .approve_with_edits(id, "bob", &row.input_sha256, obj(bad.clone()))
            .unwrap_err();
        match &err {
            ApprovalError::InvalidEdits { problems, tool, .. } => {
                assert_eq!(tool, "action_purge");
                assert!(
                    problems.iter().any(|p| p.contains(expect)),
                    "{bad}: {problems:?}"
                );
            }
            other => panic!("{bad}: {other}"),
        }
        assert_eq!(queue.get(id).unwrap().state, State::Pending);
    }
    // Four eyes holds here too.
    assert!(matches!(
        registry.approve_with_edits(
            id,
            "alice",
            &row.input_sha256,
            obj(json!({"recordId": "t1", "note": "x"}))
        ),
        Err(ApprovalError::SelfApproval { .. })
    ));

    // `null` for an optional parameter is "not given", as in a call.
    let done = registry
        .approve_with_edits(
            id,
            "bob",
            &row.input_sha256,
            obj(json!({"recordId": "t2", "note": "checked", "keep_days": null})),
        )
        .unwrap();
    assert_eq!(
        done.approved_input,
        Some(obj(json!({"recordId": "t2", "note": "checked"})))
    );
    let report = block(registry.execute_approved(&ExecuteOptions::default())).unwrap();
    assert_eq!(report.executed, [id.to_owned()], "{report:?}");
    let again = block(registry.execute_approved(&ExecuteOptions::default())).unwrap();
    assert!(again.executed.is_empty());
    let dispatched = host.dispatches();
    assert_eq!(dispatched.len(), 1, "{dispatched:?}");
    match dispatched.first() {
        Some(Seen::Script(request)) => {
            assert_eq!(request.params, obj(json!({"note": "checked"})));
            assert_eq!(
                request.record.as_ref().and_then(|r| r.get("id")),
                Some(&Value::from("t2"))
            );
            assert_eq!(request.idempotency_key.as_deref(), Some(id));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(queue.get(id).unwrap().state, State::Executed);

    // An unknown pending action, or one whose tool is not served here.
    assert!(matches!(
        registry.approve_with_edits("pa_missing", "bob", &row.input_sha256, obj(json!({}))),
        Err(ApprovalError::NotFound { .. })
    ));
}

#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<(Option<State>, State, String)>>);

impl objectstack_bridge::approval::QueueObserver for Recorder {
    fn changed(&self, previous: Option<State>, row: &objectstack_bridge::approval::PendingAction) {
        self.0
            .lock()
            .unwrap()
            .push((previous, row.state, row.id.clone()));
    }
}

#[test]
fn an_observer_sees_every_committed_change_once_and_nothing_that_was_refused() {
    let recorder = Arc::new(Recorder::default());
    let clock = Arc::new(ManualClock::new(START));
    let q = ApprovalQueue::new(Arc::new(MemoryStore::new()))
        .with_clock(clock.clone())
        .with_ttl(Some(Duration::from_secs(60)))
        .with_observer(recorder.clone());
    let a = q.propose(proposal("alice", 1)).unwrap().action;
    // A repeated proposal creates nothing.
    q.propose(proposal("alice", 1)).unwrap();
    let b = q.propose(proposal("alice", 2)).unwrap().action;
    // Refused decisions change nothing.
    assert!(q.approve(&a.id, "alice", &a.input_sha256).is_err());
    assert!(q.approve(&a.id, "bob", "0".repeat(64).as_str()).is_err());
    q.approve(&a.id, "bob", &a.input_sha256).unwrap();
    let claim = q.claim(&a.id, "exec", Duration::from_secs(5)).unwrap();
    q.finish(
        &claim,
        Outcome::Failed {
            error: "boom".into(),
            result: None,
        },
    )
    .unwrap();
    clock.advance(Duration::from_secs(61));
    q.expire_due().unwrap();
    let seen = recorder.0.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            (None, State::Pending, a.id.clone()),
            (None, State::Pending, b.id.clone()),
            (Some(State::Pending), State::Approved, a.id.clone()),
            (Some(State::Approved), State::Executing, a.id.clone()),
            (Some(State::Executing), State::Failed, a.id.clone()),
            (Some(State::Pending), State::Expired, b.id.clone()),
        ]
    );
}
