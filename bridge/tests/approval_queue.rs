//! The approval queue's state machine, on both stores, plus what only the
//! SQLite file does (restart survival, schema versioning, triggers).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use approval_support::{obj, scratch_dir};
use objectstack_bridge::approval::{
    ApprovalError, ApprovalQueue, ApprovalStore, ListFilter, ManualClock, MemoryStore, Outcome,
    Proposal, Resolution, SqliteStore, State, StoreError, input_sha256,
};
use objectstack_bridge::runtime::Actor;
use serde_json::json;

fn proposal(tool_call: Option<&str>, n: i64) -> Proposal {
    Proposal {
        tool_name: "action_wipe".into(),
        action_name: "wipe".into(),
        object_name: Some("task".into()),
        input: obj(json!({"recordId": format!("t{n}"), "force": true})),
        executable_sha256: "ab".repeat(32),
        conversation_id: Some("conv".into()),
        message_id: Some("m".into()),
        tool_call_id: tool_call.map(str::to_owned),
        trace_id: None,
        proposer: Actor::new("u1"),
    }
}

/// Runs `check` on a fresh in-memory store and a fresh SQLite file.
fn on_both_stores(check: impl Fn(ApprovalQueue, Arc<ManualClock>)) {
    let dir = scratch_dir("queue");
    let stores: Vec<Arc<dyn ApprovalStore>> = vec![
        Arc::new(MemoryStore::new()),
        Arc::new(SqliteStore::open(&dir.join("q.db")).unwrap()),
    ];
    for store in stores {
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        check(ApprovalQueue::new(store).with_clock(clock.clone()), clock);
    }
}

#[test]
fn propose_is_idempotent_per_tool_call_and_refuses_a_changed_input() {
    on_both_stores(|q, _| {
        let first = q.propose(proposal(Some("tc1"), 1)).unwrap();
        assert!(first.created);
        let again = q.propose(proposal(Some("tc1"), 1)).unwrap();
        assert!(!again.created);
        assert_eq!(again.action, first.action);
        let err = q.propose(proposal(Some("tc1"), 2)).unwrap_err();
        assert!(
            matches!(&err, ApprovalError::ToolCallConflict { existing, .. } if *existing == first.action.id),
            "{err}"
        );
        // Without a tool-call id every proposal is new.
        let a = q.propose(proposal(None, 1)).unwrap();
        let b = q.propose(proposal(None, 1)).unwrap();
        assert_ne!(a.action.id, b.action.id);
        let row = &first.action;
        assert_eq!(row.state, State::Pending);
        assert_eq!(row.input_sha256, input_sha256(&row.input).unwrap());
        assert_eq!(row.input_sha256.len(), 64);
        assert_eq!(q.list(&ListFilter::default()).unwrap().rows.len(), 3);
    });
}

#[test]
fn a_tool_call_id_is_deduplicated_per_conversation_tool_and_proposer() {
    on_both_stores(|q, _| {
        let alice = q.propose(proposal(Some("tc1"), 1)).unwrap();
        // Another proposer reusing the id, with the same input.
        let mut bob = proposal(Some("tc1"), 1);
        bob.proposer = Actor::new("bob");
        let bob = q.propose(bob).unwrap();
        assert!(bob.created, "Bob's request is his own");
        assert_ne!(bob.action.id, alice.action.id);
        assert_eq!(bob.action.proposer.id, "bob");
        // Another tool under the same id, by the same proposer.
        let mut other = proposal(Some("tc1"), 1);
        other.tool_name = "action_archive".into();
        other.action_name = "archive".into();
        let other = q.propose(other).unwrap();
        assert!(other.created);
        assert_ne!(other.action.id, alice.action.id);
        assert_ne!(other.action.id, bob.action.id);
        // Another conversation.
        let mut elsewhere = proposal(Some("tc1"), 1);
        elsewhere.conversation_id = Some("conv-2".into());
        assert!(q.propose(elsewhere).unwrap().created);
        // The same four again: the same pending action.
        let again = q.propose(proposal(Some("tc1"), 1)).unwrap();
        assert!(!again.created);
        assert_eq!(again.action.id, alice.action.id);
        // Field boundaries are unambiguous: ("a\0b", "c") is not ("a", "b\0c").
        let mut left = proposal(Some("c"), 1);
        left.conversation_id = Some("a\0b".into());
        let mut right = proposal(Some("b\0c"), 1);
        right.conversation_id = Some("a".into());
        let left = q.propose(left).unwrap();
        assert!(q.propose(right).unwrap().created);
        assert!(left.created);
        // No conversation is not the empty conversation.
        let mut none = proposal(Some("tc9"), 1);
        none.conversation_id = None;
        let mut empty = proposal(Some("tc9"), 1);
        empty.conversation_id = Some(String::new());
        assert!(q.propose(none).unwrap().created);
        assert!(q.propose(empty).unwrap().created);
    });
}

#[test]
fn losing_a_decision_race_names_the_state_and_the_decider() {
    on_both_stores(|q, _| {
        let p = q.propose(proposal(Some("tc"), 1)).unwrap().action;
        let approved = q.approve(&p.id, "alice", &p.input_sha256).unwrap();
        assert_eq!(approved.state, State::Approved);
        assert_eq!(approved.decided_by.as_deref(), Some("alice"));
        assert_eq!(
            approved.approved_sha256.as_deref(),
            Some(p.input_sha256.as_str())
        );
        for err in [
            q.approve(&p.id, "bob", &p.input_sha256).unwrap_err(),
            q.reject(&p.id, "bob", Some("no")).unwrap_err(),
            q.cancel(&p.id, "bob").unwrap_err(),
        ] {
            match &err {
                ApprovalError::AlreadyDecided { state, by, .. } => {
                    assert_eq!(*state, State::Approved);
                    assert_eq!(by.as_deref(), Some("alice"));
                }
                other => panic!("{other}"),
            }
            assert!(
                err.to_string().contains("already approved (by alice)"),
                "{err}"
            );
        }
        let r = q.propose(proposal(Some("tc2"), 2)).unwrap().action;
        let rejected = q.reject(&r.id, "bob", Some("too risky")).unwrap();
        assert_eq!(rejected.reason.as_deref(), Some("too risky"));
        let err = q.claim(&r.id, "w", Duration::from_secs(5)).unwrap_err();
        assert!(
            matches!(
                err,
                ApprovalError::AlreadyDecided {
                    state: State::Rejected,
                    ..
                }
            ),
            "{err}"
        );
    });
}

#[test]
fn approval_is_bound_to_the_input_hash() {
    on_both_stores(|q, _| {
        let p = q.propose(proposal(Some("tc"), 1)).unwrap().action;
        let other = input_sha256(&obj(json!({"recordId": "t9"}))).unwrap();
        let err = q.approve(&p.id, "alice", &other).unwrap_err();
        assert!(matches!(err, ApprovalError::InputMismatch { .. }), "{err}");
        assert_eq!(
            q.get(&p.id).unwrap().state,
            State::Pending,
            "nothing changed"
        );
        assert!(matches!(
            q.approve(&p.id, "  ", &p.input_sha256).unwrap_err(),
            ApprovalError::InvalidRequest(_)
        ));
        assert!(matches!(
            q.approve("pa_missing", "alice", &p.input_sha256)
                .unwrap_err(),
            ApprovalError::NotFound { .. }
        ));
    });
}

#[test]
fn an_execution_that_got_no_answer_is_in_doubt_until_an_operator_resolves_it() {
    on_both_stores(|q, _clock| {
        let p = q.propose(proposal(Some("a"), 1)).unwrap().action;
        q.approve(&p.id, "alice", &p.input_sha256).unwrap();
        let claim = q.claim(&p.id, "w1", Duration::from_secs(10)).unwrap();
        let row = q
            .finish(
                &claim,
                Outcome::InDoubt {
                    error: "POST /x was sent but got no answer".into(),
                    result: None,
                },
            )
            .unwrap();
        assert_eq!(row.state, State::InDoubt);
        assert!(row.finished_at.is_some());
        assert!(
            row.reason
                .as_deref()
                .unwrap()
                .contains("check the target system"),
            "{:?}",
            row.reason
        );
        // Never claimed again; only an operator's verdict moves it on.
        assert!(q.claim(&p.id, "w2", Duration::from_secs(10)).is_err());
        let resolved = q.resolve(&p.id, "op", Resolution::Executed, None).unwrap();
        assert_eq!(resolved.state, State::Executed);
    });
}

#[test]
fn a_settled_claim_passes_over_fresh_approvals_until_they_settle() {
    on_both_stores(|q, clock| {
        let p = q.propose(proposal(Some("a"), 1)).unwrap().action;
        q.approve(&p.id, "alice", &p.input_sha256).unwrap();
        let tools = vec![p.tool_name.clone()];
        let settled = Duration::from_secs(2);
        let lease = Duration::from_secs(10);
        assert!(
            q.claim_next_settled(&tools, "w1", lease, settled)
                .unwrap()
                .is_none(),
            "approved just now: left to the process that approved it"
        );
        clock.advance(Duration::from_secs(2));
        let claim = q
            .claim_next_settled(&tools, "w1", lease, settled)
            .unwrap()
            .unwrap();
        assert_eq!(claim.action.id, p.id);
        assert_eq!(claim.action.state, State::Executing);
    });
}

#[test]
fn claim_finish_and_the_lease() {
    on_both_stores(|q, clock| {
        let p = q.propose(proposal(Some("a"), 1)).unwrap().action;
        assert!(matches!(
            q.claim(&p.id, "w1", Duration::from_secs(10)).unwrap_err(),
            ApprovalError::NotApproved { .. }
        ));
        q.approve(&p.id, "alice", &p.input_sha256).unwrap();
        let claim = q.claim(&p.id, "w1", Duration::from_secs(10)).unwrap();
        assert_eq!(claim.action.state, State::Executing);
        let err = q.claim(&p.id, "w2", Duration::from_secs(10)).unwrap_err();
        assert!(
            matches!(&err, ApprovalError::AlreadyDecided { state: State::Executing, by: Some(b), .. } if b == "w1"),
            "{err}"
        );
        // Not expired yet: the sweep leaves it alone.
        clock.advance(Duration::from_secs(9));
        assert!(q.sweep_expired_leases().unwrap().is_empty());
        let done = q
            .finish(&claim, Outcome::Executed(json!({"ok": true})))
            .unwrap();
        assert_eq!(done.state, State::Executed);
        assert!(
            q.finish(&claim, Outcome::Executed(json!({}))).is_err(),
            "once only"
        );

        // A claim that outlives its lease becomes in_doubt, never retried.
        let p2 = q.propose(proposal(Some("b"), 2)).unwrap().action;
        q.approve(&p2.id, "alice", &p2.input_sha256).unwrap();
        let claim2 = q.claim(&p2.id, "w1", Duration::from_secs(10)).unwrap();
        clock.advance(Duration::from_secs(11));
        let swept = q.sweep_expired_leases().unwrap();
        assert_eq!(swept.len(), 1);
        assert_eq!(swept[0].state, State::InDoubt);
        assert!(swept[0].reason.as_deref().unwrap().contains("w1"));
        // The executor reports late: kept as evidence, still in_doubt.
        let err = q
            .finish(
                &claim2,
                Outcome::Failed {
                    error: "boom".into(),
                    result: None,
                },
            )
            .unwrap_err();
        assert!(
            matches!(
                err,
                ApprovalError::AlreadyDecided {
                    state: State::InDoubt,
                    ..
                }
            ),
            "{err}"
        );
        let row = q.get(&p2.id).unwrap();
        assert_eq!(row.state, State::InDoubt);
        assert_eq!(row.error.as_deref(), Some("boom"));
        assert!(row.reason.unwrap().contains("after its lease ran out"));
        // Only an operator moves it on.
        assert!(matches!(
            q.resolve(&p.id, "op", Resolution::Failed, None)
                .unwrap_err(),
            ApprovalError::AlreadyDecided {
                state: State::Executed,
                ..
            }
        ));
        let resolved = q
            .resolve(
                &p2.id,
                "op",
                Resolution::Executed,
                Some("checked the ledger"),
            )
            .unwrap();
        assert_eq!(resolved.state, State::Executed);
        assert_eq!(resolved.state_by.as_deref(), Some("op"));
        assert!(q.resolve(&p2.id, "op", Resolution::Failed, None).is_err());
    });
}

#[test]
fn expire_only_touches_old_pending_actions() {
    on_both_stores(|q, clock| {
        let old = q.propose(proposal(Some("old"), 1)).unwrap().action;
        let old_approved = q.propose(proposal(Some("old2"), 2)).unwrap().action;
        q.approve(&old_approved.id, "a", &old_approved.input_sha256)
            .unwrap();
        clock.advance(Duration::from_secs(3600));
        let young = q.propose(proposal(Some("young"), 3)).unwrap().action;
        clock.advance(Duration::from_secs(60));
        let expired = q
            .expire_older_than(Duration::from_secs(30 * 60), "cron")
            .unwrap();
        assert_eq!(
            expired.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            [old.id.as_str()]
        );
        assert_eq!(q.get(&old.id).unwrap().state, State::Expired);
        assert_eq!(q.get(&old.id).unwrap().decided_by.as_deref(), Some("cron"));
        assert_eq!(q.get(&young.id).unwrap().state, State::Pending);
        assert_eq!(q.get(&old_approved.id).unwrap().state, State::Approved);
        let err = q.approve(&old.id, "a", &old.input_sha256).unwrap_err();
        assert!(matches!(
            err,
            ApprovalError::AlreadyDecided {
                state: State::Expired,
                ..
            }
        ));
        let filter = ListFilter {
            state: Some(State::Pending),
            ..ListFilter::default()
        };
        assert_eq!(q.list(&filter).unwrap().rows.len(), 1);
    });
}

fn sqlite_queue(path: &Path) -> ApprovalQueue {
    ApprovalQueue::new(Arc::new(SqliteStore::open(path).unwrap()))
}

#[test]
fn a_pending_action_survives_reopening_the_file() {
    let dir = scratch_dir("reopen");
    let path = dir.join("q.db");
    let id = {
        let q = sqlite_queue(&path);
        q.propose(proposal(Some("tc"), 1)).unwrap().action.id
    };
    let q = ApprovalQueue::new(Arc::new(SqliteStore::open_existing(&path).unwrap()));
    let row = q.get(&id).unwrap();
    assert_eq!(row.input, obj(json!({"recordId": "t1", "force": true})));
    assert_eq!(row.proposer, Actor::new("u1"));
    q.approve(&id, "alice", &row.input_sha256).unwrap();
    drop(q);
    let q = sqlite_queue(&path);
    assert_eq!(q.get(&id).unwrap().state, State::Approved);
}

#[test]
fn files_that_are_not_queues_are_refused_clearly() {
    let dir = scratch_dir("notaqueue");
    let missing = dir.join("missing.db");
    let err = SqliteStore::open_existing(&missing).unwrap_err();
    assert!(matches!(err, StoreError::Missing { .. }), "{err}");
    assert!(
        !missing.exists(),
        "opening an existing queue never creates one"
    );

    let junk = dir.join("junk.db");
    std::fs::write(
        &junk,
        b"this is not a database at all, not even close ............",
    )
    .unwrap();
    let err = SqliteStore::open(&junk).unwrap_err();
    assert!(matches!(err, StoreError::NotAQueue { .. }), "{err}");

    let other = dir.join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE customers (id INTEGER)")
        .unwrap();
    let err = SqliteStore::open(&other).unwrap_err();
    assert!(err.to_string().contains("something else"), "{err}");

    let newer = dir.join("newer.db");
    drop(SqliteStore::open(&newer).unwrap());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 7)
        .unwrap();
    let err = SqliteStore::open(&newer).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::SchemaTooNew {
                found: 7,
                supported: 3,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn refused_files_are_left_untouched() {
    let dir = scratch_dir("untouched");
    let other = dir.join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE customers (id INTEGER); INSERT INTO customers VALUES (1);")
        .unwrap();
    let before = std::fs::read(&other).unwrap();
    for open in [SqliteStore::open, SqliteStore::open_existing] {
        let err = open(&other).unwrap_err();
        assert!(err.to_string().contains("something else"), "{err}");
        assert_eq!(
            std::fs::read(&other).unwrap(),
            before,
            "another application's database is not switched to WAL"
        );
    }
    let journal: String = rusqlite::Connection::open(&other)
        .unwrap()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "delete");

    let empty = dir.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let err = SqliteStore::open_existing(&empty).unwrap_err();
    assert!(err.to_string().contains("the file is empty"), "{err}");
    assert_eq!(
        std::fs::read(&empty).unwrap(),
        b"",
        "an empty file stays empty"
    );

    let err = SqliteStore::open_existing(&dir).unwrap_err();
    assert!(
        matches!(err, StoreError::NotAQueue { ref detail, .. } if detail.contains("directory")),
        "{err}"
    );
}

/// The names of the file's indexes, and how SQLite plans `sql`.
fn indexes_and_plan(path: &Path, sql: &str) -> (Vec<String>, String) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'pending_actions_by_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names.sort();
    let plan: Vec<String> = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    (names, plan.join("; "))
}

#[test]
fn a_file_gains_the_listing_indexes_and_histories_stop_at_their_limit() {
    let dir = scratch_dir("indexes");
    let path = dir.join("q.db");
    let q = sqlite_queue(&path);
    let p = q.propose(proposal(Some("tc"), 1)).unwrap().action;
    q.reject(&p.id, "bob", None).unwrap();
    drop(q);
    let history = "SELECT id FROM pending_actions WHERE +state IN ('rejected') \
                   ORDER BY state_at DESC, id DESC LIMIT 100";
    let (names, plan) = indexes_and_plan(&path, history);
    assert_eq!(
        names,
        [
            "pending_actions_by_change",
            "pending_actions_by_creation",
            "pending_actions_by_proposer",
            "pending_actions_by_state"
        ]
    );
    // The history walks the change index and stops: no sort of the queue.
    assert!(plan.contains("pending_actions_by_change"), "{plan}");
    assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    // A file an older build wrote has none of them: a read-only open
    // reads it as it is, and the next write open adds them.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP INDEX pending_actions_by_change; DROP INDEX pending_actions_by_creation; \
             DROP INDEX pending_actions_by_proposer;",
        )
        .unwrap();
    let reader = ApprovalQueue::new(Arc::new(SqliteStore::open_read_only(&path).unwrap()));
    assert_eq!(reader.list(&ListFilter::default()).unwrap().rows.len(), 1);
    drop(reader);
    assert_eq!(indexes_and_plan(&path, "SELECT 1").0.len(), 1);
    let q = sqlite_queue(&path);
    assert_eq!(q.get(&p.id).unwrap().state, State::Rejected);
    assert_eq!(indexes_and_plan(&path, "SELECT 1").0.len(), 4);
}

#[test]
fn the_file_itself_refuses_illegal_changes() {
    let dir = scratch_dir("triggers");
    let path = dir.join("q.db");
    let q = sqlite_queue(&path);
    let p = q.propose(proposal(Some("tc"), 1)).unwrap().action;
    q.reject(&p.id, "bob", None).unwrap();
    let pending = q.propose(proposal(Some("tc2"), 2)).unwrap().action;
    let conn = rusqlite::Connection::open(&path).unwrap();
    let terminal = conn.execute(
        "UPDATE pending_actions SET state = 'approved' WHERE id = ?1",
        [&p.id],
    );
    let terminal = terminal.unwrap_err().to_string();
    assert!(
        terminal.contains("terminal state never changes") || terminal.contains("not a transition"),
        "{terminal}"
    );
    let note = conn.execute(
        "UPDATE pending_actions SET reason = 'x' WHERE id = ?1",
        [&p.id],
    );
    assert!(
        note.unwrap_err()
            .to_string()
            .contains("terminal state never changes")
    );
    let skip = conn.execute(
        "UPDATE pending_actions SET state = 'executing' WHERE id = ?1",
        [&pending.id],
    );
    assert!(skip.unwrap_err().to_string().contains("not a transition"));
    let tamper = conn.execute(
        "UPDATE pending_actions SET input = '{}' WHERE id = ?1",
        [&pending.id],
    );
    assert!(tamper.unwrap_err().to_string().contains("never changes"));
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    SqliteStore::open(&path).unwrap().integrity_check().unwrap();
}

#[test]
fn a_tampered_row_is_never_dispatched() {
    let dir = scratch_dir("tamper");
    let path = dir.join("q.db");
    let q = sqlite_queue(&path);
    let p = q.propose(proposal(Some("tc"), 1)).unwrap().action;
    // Someone edits the input behind the queue's back (dropping the guard first).
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP TRIGGER pending_actions_input_is_immutable")
        .unwrap();
    conn.execute(
        "UPDATE pending_actions SET input = '{\"recordId\":\"t1\",\"force\":false}' WHERE id = ?1",
        [&p.id],
    )
    .unwrap();
    let err = q.approve(&p.id, "alice", &p.input_sha256).unwrap_err();
    assert!(matches!(err, ApprovalError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("hashes to"), "{err}");
    assert_eq!(q.get(&p.id).unwrap().state, State::Pending);
}

#[test]
fn a_damaged_row_does_not_hide_the_others() {
    let dir = scratch_dir("damaged");
    let path = dir.join("q.db");
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let q = sqlite_queue(&path).with_clock(clock.clone());
    let ids: Vec<String> = (1..=3)
        .map(|n| {
            clock.advance(Duration::from_secs(1));
            q.propose(proposal(Some(&format!("tc{n}")), n))
                .unwrap()
                .action
                .id
        })
        .collect();
    // Damage two rows behind the queue's back: input that is not JSON, and
    // a column holding a value of the wrong type.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP TRIGGER pending_actions_input_is_immutable")
        .unwrap();
    conn.execute(
        "UPDATE pending_actions SET input = '{not json' WHERE id = ?1",
        [&ids[0]],
    )
    .unwrap();
    conn.execute(
        "UPDATE pending_actions SET tool_name = x'00ff' WHERE id = ?1",
        [&ids[2]],
    )
    .unwrap();
    drop(conn);

    let listing = q.list(&ListFilter::default()).unwrap();
    let listed: Vec<&str> = listing.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(listed, [ids[1].as_str()], "the readable row is listed");
    let unreadable: Vec<(&str, &str)> = listing
        .unreadable
        .iter()
        .map(|e| match e {
            StoreError::CorruptRow { id, detail } => (id.as_str(), detail.as_str()),
            other => panic!("not a damaged row: {other}"),
        })
        .collect();
    assert_eq!(unreadable.len(), 2, "{unreadable:?}");
    assert_eq!(unreadable[0].0, ids[0]);
    assert!(unreadable[0].1.contains("input is not a JSON object"));
    assert_eq!(unreadable[1].0, ids[2]);
    assert!(
        unreadable[1].1.contains("`tool_name` column"),
        "{}",
        unreadable[1].1
    );

    // Sweeps pass over damaged rows and still do their work on the others.
    clock.advance(Duration::from_secs(3600));
    let expired = q.expire_older_than(Duration::from_secs(60), "ops").unwrap();
    let expired: Vec<&str> = expired.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(expired, [ids[1].as_str()]);
    // A damaged row is reported, by id, when asked for directly.
    let err = q.get(&ids[0]).unwrap_err();
    assert!(err.to_string().contains(&ids[0]), "{err}");
}

#[test]
fn a_read_only_store_reads_and_refuses_to_write() {
    let dir = scratch_dir("readonly");
    let path = dir.join("q.db");
    let id = sqlite_queue(&path)
        .propose(proposal(Some("tc"), 1))
        .unwrap()
        .action
        .id;
    let before = std::fs::read(&path).unwrap();
    let store = Arc::new(SqliteStore::open_read_only(&path).unwrap());
    assert!(store.is_read_only());
    let q = ApprovalQueue::new(store.clone());
    let row = q.get(&id).unwrap();
    assert_eq!(
        q.list(&ListFilter::default()).unwrap().rows,
        std::slice::from_ref(&row)
    );
    let err = q.approve(&id, "alice", &row.input_sha256).unwrap_err();
    assert!(
        matches!(err, ApprovalError::Store(StoreError::ReadOnly { .. })),
        "{err}"
    );
    let err = q.propose(proposal(Some("tc2"), 2)).unwrap_err();
    assert!(err.to_string().contains("opened read-only"), "{err}");
    store.integrity_check().unwrap();
    drop((q, store));
    assert!(
        std::fs::read(&path).unwrap() == before,
        "the file was written"
    );
    let mut names: Vec<String> = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["q.db"]);

    // A read-only open never creates, and refuses what is not a queue.
    let missing = dir.join("missing.db");
    let err = SqliteStore::open_read_only(&missing).unwrap_err();
    assert!(matches!(err, StoreError::Missing { .. }), "{err}");
    assert!(!missing.exists());
    let junk = dir.join("junk.db");
    std::fs::write(
        &junk,
        b"not a database, not even close, no no no no no no no no",
    )
    .unwrap();
    let err = SqliteStore::open_read_only(&junk).unwrap_err();
    assert!(matches!(err, StoreError::NotAQueue { .. }), "{err}");
    let empty = dir.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let err = SqliteStore::open_read_only(&empty).unwrap_err();
    assert!(err.to_string().contains("the file is empty"), "{err}");
    let newer = dir.join("newer.db");
    drop(SqliteStore::open(&newer).unwrap());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 9)
        .unwrap();
    let err = SqliteStore::open_read_only(&newer).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 9, .. }),
        "{err}"
    );
}

#[test]
fn an_old_wal_queue_is_read_as_a_snapshot_that_notices_a_writer() {
    let dir = scratch_dir("snapshot");
    let path = dir.join("q.db");
    let sql = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/approval-queue-v1.sql"
    ))
    .unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let q = ApprovalQueue::new(Arc::new(SqliteStore::open_read_only(&path).unwrap()));
    let rows = q.list(&ListFilter::default()).unwrap().rows;
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.executable_sha256.is_none()));
    assert!(std::fs::read(&path).unwrap() == before);
    assert!(!dir.join("q.db-wal").exists() && !dir.join("q.db-shm").exists());

    // A host opens it meanwhile (and upgrades it): the snapshot says so
    // instead of answering from a file that changed under it.
    drop(sqlite_queue(&path));
    let err = q.get("pa_000000000000000000000001").unwrap_err();
    assert!(
        err.to_string().contains("changed while it was being read"),
        "{err}"
    );
    // Reopened, it reads the upgraded file.
    let q = ApprovalQueue::new(Arc::new(SqliteStore::open_read_only(&path).unwrap()));
    assert_eq!(
        q.get("pa_000000000000000000000001").unwrap().state,
        State::Pending
    );
}
