//! The store-conformance suite: what every [`ApprovalStore`] must do, run
//! against the SQLite file and a PostgreSQL database alike (and, where no
//! persistence is involved, the in-memory store).
//!
//! - the trait's contract: deduplicated inserts, reads, ordered and
//!   filtered listings, compare-and-set, claims that skip what they cannot
//!   take, read-only opens, damaged rows reported in place, guards in the
//!   database itself, a newer schema refused, pending actions kept across
//!   a restart;
//! - 1,000 actions approved and executed by 16 racing workers in two
//!   processes, each dispatched exactly once;
//! - SIGKILL between claim and outcome: `in_doubt`, nothing else lost;
//! - the state machine as a property test against a model.
//!
//! PostgreSQL runs when `OBJECTSTACK_TEST_POSTGRES_URL` names a server
//! (`.ci/postgres.sh`); each test gets a schema of its own. Child processes
//! are this binary again (the ignored `child` test, steered by environment
//! variables).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;
mod stores;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use approval_support::{FakeHost, Seen, ledger_lines, obj};
use objectstack_bridge::approval::{
    ApprovalError, ApprovalQueue, ApprovalStore, Cas, Clock, ListCursor, ListFilter, ListOrder,
    ManualClock, MemoryStore, OpenMode, PendingAction, Proposal, QueueLocation, Resolution, State,
    StoreError,
};
use objectstack_bridge::runtime::{Actor, ExecuteOptions, HostError, ToolRegistry};
use objectstack_spec::AIToolDefinition;
use proptest::prelude::*;
use serde_json::json;
use stores::{Fixture, Kind};

const CHILD_ENV: &str = "OBJECTSTACK_STORE_CONFORMANCE_CHILD";

/// The suite, once per store.
macro_rules! conformance {
    ($($store:ident),*) => {$(
        mod $store {
            use super::*;

            fn fixture(name: &str) -> Option<Fixture> {
                Fixture::$store(name)
            }

            #[test]
            fn the_store_contract() {
                if let Some(f) = fixture("contract") { contract(&f) }
            }

            #[test]
            fn listings_are_ordered_paged_and_filtered() {
                if let Some(f) = fixture("orders") { orders(&f) }
            }

            #[test]
            fn pages_follow_one_another_by_key() {
                if let Some(f) = fixture("keyset") { keyset(f.open()) }
            }

            #[test]
            fn claims_skip_what_they_cannot_take() {
                if let Some(f) = fixture("claims") { claims(&f) }
            }

            #[test]
            fn a_read_only_open_reads_and_refuses_to_write() {
                if let Some(f) = fixture("readonly") { read_only(&f) }
            }

            #[test]
            fn a_damaged_row_is_reported_in_its_place() {
                if let Some(f) = fixture("damaged") { damaged(&f) }
            }

            #[test]
            fn the_database_itself_refuses_illegal_changes() {
                if let Some(f) = fixture("guards") { guards(&f) }
            }

            #[test]
            fn a_newer_schema_is_refused() {
                if let Some(f) = fixture("newer") { newer_schema(&f) }
            }

            #[test]
            fn a_restart_keeps_pending_actions() {
                if let Some(f) = fixture("restart") { restart(&f) }
            }

            #[test]
            fn edits_and_deadlines_round_trip_and_run() {
                if let Some(f) = fixture("edits") { edits_and_deadlines(&f) }
            }

            #[test]
            fn a_thousand_actions_sixteen_racers_two_processes_each_executed_once() {
                if let Some(f) = fixture("race") { race(&f, 1000, 8) }
            }

            #[test]
            fn sigkill_between_claim_and_outcome_ends_in_doubt_and_loses_nothing_else() {
                if let Some(f) = fixture("crash") { crash(&f) }
            }

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(16))]

                #[test]
                fn the_state_machine_matches_its_model(
                    ops in proptest::collection::vec(op(), 1..40)
                ) {
                    if let Some(f) = fixture("prop") { run(f.open(), &ops)?; }
                }
            }
        }
    )*};
}

conformance!(sqlite, postgres);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn the_state_machine_matches_its_model_in_memory(
        ops in proptest::collection::vec(op(), 1..60)
    ) {
        run(Arc::new(MemoryStore::new()), &ops)?;
    }
}

fn archive_definition() -> (AIToolDefinition, serde_json::Map<String, serde_json::Value>) {
    let action = obj(json!({
        "name": "archive", "type": "script", "target": "scripts/archive",
        "ai": {"exposed": true, "description": "Archives the numbered document for good, after approval.",
               "requiresConfirmation": true}
    }));
    let definition = AIToolDefinition {
        name: "action_archive".into(),
        label: None,
        description: "Archives a document.".into(),
        parameters: obj(
            json!({"type": "object", "properties": {"n": {"type": "integer"}},
                               "required": ["n"], "additionalProperties": false}),
        ),
        category: None,
        output_schema: None,
        object_name: None,
        requires_confirmation: Some(true),
    };
    (definition, action)
}

/// A registry executing `action_archive` through a fake host that appends
/// each dispatch to `ledger` (and hangs there when `hang`).
fn registry(queue: Arc<ApprovalQueue>, ledger: &Path, hang: bool) -> ToolRegistry {
    let host = Arc::new(FakeHost {
        ledger: Some(ledger.to_path_buf()),
        hang_after_ledger: hang,
        ..FakeHost::default()
    });
    let mut registry = ToolRegistry::new(host.services(Some(queue)));
    let (definition, action) = archive_definition();
    registry.register_action(definition, action).unwrap();
    registry
}

fn archive_sha256() -> String {
    let queue = Arc::new(ApprovalQueue::new(Arc::new(MemoryStore::new())));
    registry(queue, Path::new("/nonexistent"), false)
        .executable_sha256("action_archive")
        .unwrap()
        .to_owned()
}

fn proposal(n: usize, digest: &str) -> Proposal {
    Proposal {
        tool_name: "action_archive".into(),
        action_name: "archive".into(),
        object_name: None,
        input: obj(json!({"n": n})),
        executable_sha256: digest.to_owned(),
        conversation_id: Some("conv".into()),
        message_id: Some(format!("m{n}")),
        tool_call_id: Some(format!("call-{n}")),
        trace_id: None,
        proposer: Actor::new("u1"),
    }
}

fn open_location(location: &str) -> Arc<dyn ApprovalStore> {
    QueueLocation::parse(std::ffi::OsStr::new(location))
        .unwrap()
        .open(OpenMode::Create)
        .unwrap()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn_child(f: &Fixture, role: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "child",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, role)
    .env("CHILD_LOCATION", &f.location)
    .env("CHILD_DIR", f.dir());
    cmd
}

// ---------------------------------------------------------------- listings

/// The orders, pages and filters the inbox and the model's lookup read
/// through: the store does the work, the caller gets only what it shows.
fn orders(f: &Fixture) {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let store = f.open();
    let q = ApprovalQueue::new(store.clone()).with_clock(clock.clone());
    let digest = archive_sha256();
    let mut ids = Vec::new();
    for n in 0..6 {
        // Two rows share each creation time, so ties are broken by id.
        if n % 2 == 0 {
            clock.advance(Duration::from_secs(1));
        }
        let mut p = proposal(n, &digest);
        if n == 4 {
            p.proposer = Actor::new("bob");
        }
        ids.push(q.propose(p).unwrap().action.id);
    }
    let listed = |filter: ListFilter| -> Vec<String> {
        store
            .list(&filter)
            .unwrap()
            .into_iter()
            .map(|r| r.unwrap().id)
            .collect()
    };
    let oldest = listed(ListFilter::default());
    let mut by_key: Vec<(i64, String)> = ids
        .iter()
        .map(|id| (store.get(id).unwrap().unwrap().created_at, id.clone()))
        .collect();
    by_key.sort();
    assert_eq!(
        oldest,
        by_key.into_iter().map(|(_, id)| id).collect::<Vec<_>>()
    );
    let mut newest = oldest.clone();
    newest.reverse();
    assert_eq!(
        listed(ListFilter {
            order: ListOrder::NewestFirst,
            ..ListFilter::default()
        }),
        newest
    );
    // Pages: an offset with and without a limit, and past the end.
    assert_eq!(
        listed(ListFilter {
            order: ListOrder::NewestFirst,
            offset: Some(2),
            limit: Some(3),
            ..ListFilter::default()
        }),
        newest[2..5]
    );
    assert_eq!(
        listed(ListFilter {
            offset: Some(4),
            ..ListFilter::default()
        }),
        oldest[4..]
    );
    assert!(
        listed(ListFilter {
            offset: Some(6),
            ..ListFilter::default()
        })
        .is_empty()
    );
    // Decisions in an order unlike the rows' creation: the history is by
    // the time of the last change, newest first.
    clock.advance(Duration::from_secs(1));
    q.reject(&oldest[3], "carol", Some("first")).unwrap();
    clock.advance(Duration::from_secs(1));
    q.cancel(&oldest[0], "u1").unwrap();
    clock.advance(Duration::from_secs(1));
    let approved = store.get(&oldest[5]).unwrap().unwrap();
    q.approve(&oldest[5], "carol", &approved.input_sha256)
        .unwrap();
    assert_eq!(
        listed(ListFilter {
            terminal: Some(true),
            order: ListOrder::RecentlyChanged,
            ..ListFilter::default()
        }),
        [oldest[0].clone(), oldest[3].clone()]
    );
    assert_eq!(
        listed(ListFilter {
            terminal: Some(false),
            ..ListFilter::default()
        }),
        [
            oldest[1].clone(),
            oldest[2].clone(),
            oldest[4].clone(),
            oldest[5].clone()
        ]
    );
    assert_eq!(
        listed(ListFilter {
            order: ListOrder::RecentlyChanged,
            limit: Some(1),
            ..ListFilter::default()
        }),
        [oldest[5].clone()]
    );
    // By proposer, with the other filters.
    assert_eq!(
        listed(ListFilter {
            proposer_id: Some("bob".into()),
            ..ListFilter::default()
        }),
        [ids[4].clone()]
    );
    assert_eq!(
        listed(ListFilter {
            proposer_id: Some("u1".into()),
            terminal: Some(false),
            order: ListOrder::NewestFirst,
            ..ListFilter::default()
        })
        .len(),
        3
    );
    assert!(
        listed(ListFilter {
            proposer_id: Some("nobody".into()),
            ..ListFilter::default()
        })
        .is_empty()
    );
}

#[test]
fn pages_follow_one_another_by_key_in_memory() {
    keyset(Arc::new(MemoryStore::new()));
}

/// Keyset paging: `after` starts a listing after a row, in each order, and
/// `ApprovalQueue::pages` lists every row that does not change exactly
/// once while others are decided or proposed between its reads.
fn keyset(store: Arc<dyn ApprovalStore>) {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let q = ApprovalQueue::new(store.clone()).with_clock(clock.clone());
    let digest = archive_sha256();
    let mut ids = Vec::new();
    for n in 0..7 {
        // Ties on the time, broken by id.
        if n % 2 == 0 {
            clock.advance(Duration::from_secs(1));
        }
        ids.push(q.propose(proposal(n, &digest)).unwrap().action.id);
    }
    let listed = |filter: ListFilter| -> Vec<String> {
        store
            .list(&filter)
            .unwrap()
            .into_iter()
            .map(|r| r.unwrap().id)
            .collect()
    };
    for order in [
        ListOrder::OldestFirst,
        ListOrder::NewestFirst,
        ListOrder::RecentlyChanged,
    ] {
        let all = listed(ListFilter {
            order,
            ..ListFilter::default()
        });
        assert_eq!(all.len(), 7);
        for (k, id) in all.iter().enumerate() {
            let row = store.get(id).unwrap().unwrap();
            let after = listed(ListFilter {
                order,
                after: Some(ListCursor::of(&row, order)),
                ..ListFilter::default()
            });
            assert_eq!(after, all[k + 1..], "{order:?} after {k}");
            // With an offset and a limit on top.
            let paged = listed(ListFilter {
                order,
                after: Some(ListCursor::of(&row, order)),
                offset: Some(1),
                limit: Some(2),
                ..ListFilter::default()
            });
            let expected: Vec<String> = all.iter().skip(k + 2).take(2).cloned().collect();
            assert_eq!(paged, expected, "{order:?} after {k}, offset 1, limit 2");
        }
    }
    // Pending rows, three a page: a row of the first page is decided
    // before the second is read, and every untouched row is still listed
    // once (paging by offset passed one over).
    let pending = ListFilter {
        state: Some(State::Pending),
        ..ListFilter::default()
    };
    let mut pages = q.pages(&pending, 3);
    let first = pages.next().unwrap().unwrap();
    assert_eq!(first.rows.len(), 3);
    q.reject(&first.rows[0].id, "carol", None).unwrap();
    let mut seen: Vec<String> = first.rows.iter().map(|r| r.id.clone()).collect();
    for page in pages {
        seen.extend(page.unwrap().rows.into_iter().map(|r| r.id));
    }
    let oldest = listed(ListFilter::default());
    assert_eq!(seen, oldest, "each pending row once, in order");
    // Newest first, two a page: a proposal made between two reads comes
    // before the first page, and no row comes twice.
    let newest = ListFilter {
        order: ListOrder::NewestFirst,
        ..ListFilter::default()
    };
    let before = listed(newest.clone());
    let mut pages = q.pages(&newest, 2);
    let mut seen: Vec<String> = pages
        .next()
        .unwrap()
        .unwrap()
        .rows
        .into_iter()
        .map(|r| r.id)
        .collect();
    clock.advance(Duration::from_secs(1));
    q.propose(proposal(7, &digest)).unwrap();
    for page in pages {
        seen.extend(page.unwrap().rows.into_iter().map(|r| r.id));
    }
    assert_eq!(seen, before);
}

/// A queue call that waits on the database (here, on a table another
/// session holds) does not stall the host's other tasks, even on a
/// runtime with a single worker: the store announces its wait.
#[cfg(feature = "postgres")]
#[test]
fn postgres_waits_do_not_stall_the_hosts_other_tasks() {
    let Some(f) = Fixture::postgres("stall") else {
        return;
    };
    let store = f.open();
    let holder = hold_table(&f, "ACCESS EXCLUSIVE", 3);
    let host = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (listed, ticked) = host.block_on(async move {
        let started = Instant::now();
        let waiting = tokio::spawn(async move {
            // Waits on the lock, on the only worker.
            let rows = store.list(&ListFilter::default()).map(|r| r.len());
            (rows, started.elapsed())
        });
        // Let the listing take the worker first.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let ticker = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            started.elapsed()
        });
        let ticked = ticker.await.unwrap();
        (waiting.await.unwrap(), ticked)
    });
    holder.join().unwrap().unwrap();
    let (rows, waited) = listed;
    assert_eq!(rows.unwrap(), 0);
    assert!(
        waited > Duration::from_secs(2),
        "the listing waited {waited:?}"
    );
    assert!(
        ticked < Duration::from_secs(1),
        "another task ran after {ticked:?}, behind the listing"
    );
}

/// Another session holding `pending_actions` locked in `mode` (`ROW
/// EXCLUSIVE`, ...) for `seconds`, once the lock is granted.
#[cfg(feature = "postgres")]
fn hold_table(
    f: &Fixture,
    mode: &str,
    seconds: u32,
) -> std::thread::JoinHandle<Result<(), String>> {
    let location = f.location.clone();
    let lock = format!(
        "BEGIN; LOCK TABLE pending_actions IN {mode} MODE; SELECT pg_sleep({seconds}); COMMIT"
    );
    let holder = std::thread::spawn(move || stores::pg::run(&location, &lock));
    let url = std::env::var(stores::URL_VAR).unwrap();
    let schema = f.schema().unwrap().to_owned();
    // `ROW EXCLUSIVE` is `RowExclusiveLock` in `pg_locks`.
    let name: String = mode
        .split(' ')
        .map(|w| w[..1].to_owned() + &w[1..].to_lowercase())
        .collect::<String>()
        + "Lock";
    wait_for(&format!("the {mode} lock"), || {
        stores::pg::value(
            &url,
            &format!(
                "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
                 JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '{schema}' \
                 AND c.relname = 'pending_actions' AND l.mode = '{name}' AND l.granted"
            ),
        ) == "1"
    });
    holder
}

/// How many of the listing indexes a test's schema has.
#[cfg(feature = "postgres")]
fn listing_indexes(url: &str, schema: &str) -> String {
    stores::pg::value(
        url,
        &format!(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = '{schema}' AND indexname IN \
             ('pending_actions_by_change', 'pending_actions_by_creation', \
             'pending_actions_by_proposer')"
        ),
    )
}

/// The listing indexes only speed listings up: another writer holding the
/// table past the open's bound leaves the queue opened without them, soon,
/// and the next open adds them.
#[cfg(feature = "postgres")]
#[test]
fn postgres_opens_without_the_indexes_while_another_writer_holds_the_table() {
    use objectstack_bridge::approval::{PostgresOptions, PostgresStore};
    let Some(f) = Fixture::postgres("index_lock") else {
        return;
    };
    let url = std::env::var(stores::URL_VAR).unwrap();
    let schema = f.schema().unwrap().to_owned();
    drop(f.open());
    f.raw("DROP INDEX pending_actions_by_change").unwrap();
    let count = || listing_indexes(&url, &schema);
    assert_eq!(count(), "2");
    // Rows being written (ROW EXCLUSIVE) keep `CREATE INDEX` (SHARE) out.
    let holder = hold_table(&f, "ROW EXCLUSIVE", 6);
    let started = Instant::now();
    let options = PostgresOptions {
        statement_timeout: Duration::from_secs(3),
        ..PostgresOptions::default()
    };
    let store = PostgresStore::open_with(&f.location, &options).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // It works, the writer's lock notwithstanding.
    let q = ApprovalQueue::new(Arc::new(store));
    let id = q.propose(proposal(1, &archive_sha256())).unwrap().action.id;
    assert_eq!(q.get(&id).unwrap().id, id);
    holder.join().unwrap().unwrap();
    assert_eq!(count(), "2");
    drop(q);
    drop(f.open());
    assert_eq!(count(), "3");
}

/// PostgreSQL's listing indexes: a write open adds them; a role that may
/// write rows but does not own the table still opens the queue (without
/// them), and the owner's next open adds them back.
#[cfg(feature = "postgres")]
#[test]
fn postgres_writers_add_the_listing_indexes_when_they_may() {
    let Some(f) = Fixture::postgres("indexes") else {
        return;
    };
    let url = std::env::var(stores::URL_VAR).unwrap();
    let schema = f.schema().unwrap().to_owned();
    drop(f.open());
    let count = || listing_indexes(&url, &schema);
    assert_eq!(count(), "3");
    let role = format!("dml_{schema}");
    f.raw(&format!(
        "DROP INDEX pending_actions_by_change, pending_actions_by_creation, \
         pending_actions_by_proposer; CREATE ROLE {role} LOGIN; \
         GRANT USAGE ON SCHEMA {schema} TO {role}; \
         GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA {schema} TO {role};"
    ))
    .unwrap();
    let as_role = f
        .location
        .replacen("://postgres@", &format!("://{role}@"), 1);
    assert_ne!(as_role, f.location, "the test server's URL names its user");
    let q = ApprovalQueue::new(open_location(&as_role));
    let id = q.propose(proposal(1, &archive_sha256())).unwrap().action.id;
    let mine = q
        .list(&ListFilter {
            proposer_id: Some("u1".into()),
            order: ListOrder::NewestFirst,
            limit: Some(20),
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(mine.rows.len(), 1);
    assert_eq!(mine.rows[0].id, id);
    drop(q);
    assert_eq!(count(), "0");
    // A session that may not write at all opens for writing too (and
    // refuses the writes themselves), without adding them.
    let read_only = format!("{}%20-cdefault_transaction_read_only%3Don", f.location);
    let q = ApprovalQueue::new(open_location(&read_only));
    assert_eq!(q.list(&ListFilter::default()).unwrap().rows.len(), 1);
    drop(q);
    assert_eq!(count(), "0");
    drop(f.open());
    assert_eq!(count(), "3");
    f.raw(&format!("DROP OWNED BY {role}; DROP ROLE {role};"))
        .unwrap();
}

// ---------------------------------------------------------------- contract

fn contract(f: &Fixture) {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let store = f.open();
    let q = ApprovalQueue::new(store.clone()).with_clock(clock.clone());
    let digest = archive_sha256();
    // Insert, and the duplicate answer: the first row, not inserted.
    let first = q.propose(proposal(1, &digest)).unwrap();
    assert!(first.created);
    let again = store.insert(&first.action).unwrap();
    assert_eq!(again, (first.action.clone(), false));
    let mut other_id = first.action.clone();
    other_id.id = "pa_000000000000000000000000".into();
    let (dup, inserted) = store.insert(&other_id).unwrap();
    assert!(!inserted);
    assert_eq!(
        dup.id, first.action.id,
        "deduplicated by tool call, not by id"
    );
    // Another proposer reusing the tool-call id gets a row of its own.
    let mut bob = proposal(1, &digest);
    bob.proposer = Actor::new("bob");
    assert!(q.propose(bob).unwrap().created);
    // Without a tool-call id every proposal is new; an id already taken is
    // an error, never an overwrite.
    let mut loose = first.action.clone();
    loose.tool_call_id = None;
    loose.id = "pa_111111111111111111111111".into();
    assert!(store.insert(&loose).unwrap().1);
    let mut clash = loose.clone();
    clash.input = obj(json!({"n": 99}));
    let err = store.insert(&clash).unwrap_err();
    assert!(matches!(err, StoreError::Backend { .. }), "{err}");
    assert_eq!(
        store.get(&loose.id).unwrap().unwrap(),
        loose,
        "not overwritten"
    );
    assert_eq!(store.get(&first.action.id).unwrap().unwrap(), first.action);
    assert!(store.get("pa_nope").unwrap().is_none());

    // Listing: oldest first (then by id), filtered, limited.
    let mut ids = Vec::new();
    for n in 2..6 {
        clock.advance(Duration::from_secs(1));
        ids.push(q.propose(proposal(n, &digest)).unwrap().action.id);
    }
    let all = store.list(&ListFilter::default()).unwrap();
    let rows: Vec<PendingAction> = all.into_iter().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 7);
    let keys: Vec<(i64, String)> = rows.iter().map(|r| (r.created_at, r.id.clone())).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let limited = store
        .list(&ListFilter {
            limit: Some(2),
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(limited.len(), 2);
    let cutoff = rows[5].created_at;
    let older: Vec<String> = store
        .list(&ListFilter {
            created_before: Some(cutoff),
            ..ListFilter::default()
        })
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap().id)
        .collect();
    assert_eq!(older.len(), 5, "{older:?}");
    assert!(
        store
            .list(&ListFilter {
                tool_name: Some("action_other".into()),
                ..ListFilter::default()
            })
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .list(&ListFilter {
                conversation_id: Some("conv".into()),
                ..ListFilter::default()
            })
            .unwrap()
            .len(),
        7
    );

    // Compare-and-set: applied once, then a conflict naming the current row.
    let row = store.get(&ids[0]).unwrap().unwrap();
    let mut next = row.clone();
    next.state = State::Rejected;
    next.version += 1;
    next.reason = Some("no".into());
    assert_eq!(
        store.compare_and_set(row.version, &next).unwrap(),
        Cas::Applied
    );
    assert_eq!(store.get(&ids[0]).unwrap().unwrap(), next);
    match store.compare_and_set(row.version, &next).unwrap() {
        Cas::Conflict(current) => assert_eq!(*current, next),
        other => panic!("{other:?}"),
    }
    let mut ghost = next.clone();
    ghost.id = "pa_ffffffffffffffffffffffff".into();
    assert_eq!(store.compare_and_set(1, &ghost).unwrap(), Cas::Missing);
    let state = store
        .list(&ListFilter {
            state: Some(State::Rejected),
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(state.len(), 1);

    // Leases: a claim runs out, and the sweep finds it by its lease.
    q.approve(
        &ids[1],
        "alice",
        &store.get(&ids[1]).unwrap().unwrap().input_sha256,
    )
    .unwrap();
    let claim = q.claim(&ids[1], "w1", Duration::from_secs(10)).unwrap();
    assert!(q.sweep_expired_leases().unwrap().is_empty());
    clock.advance(Duration::from_secs(11));
    let swept = q.sweep_expired_leases().unwrap();
    assert_eq!(swept.len(), 1);
    assert_eq!(swept[0].state, State::InDoubt);
    // The late outcome is kept as evidence, and the action stays in doubt.
    let late = q.finish(
        &claim,
        objectstack_bridge::approval::Outcome::Executed(json!({"ok": true})),
    );
    assert!(
        matches!(late, Err(ApprovalError::AlreadyDecided { .. })),
        "{late:?}"
    );
    let doubtful = q.get(&ids[1]).unwrap();
    assert_eq!(doubtful.state, State::InDoubt);
    assert_eq!(doubtful.result, Some(json!({"ok": true})));
    f.check();
}

fn claims(f: &Fixture) {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let store = f.open();
    let q = ApprovalQueue::new(store.clone()).with_clock(clock.clone());
    let digest = archive_sha256();
    let mut ids = Vec::new();
    for n in 0..4 {
        clock.advance(Duration::from_secs(1));
        let row = q.propose(proposal(n, &digest)).unwrap().action;
        ids.push(row.id.clone());
        if n != 2 {
            q.approve(&row.id, "alice", &row.input_sha256).unwrap();
        }
    }
    let tools = vec!["action_archive".to_owned()];
    let lease = Duration::from_secs(60);
    // Nothing of another tool is claimed.
    assert!(
        q.claim_next(&["action_other".to_owned()], "w", lease)
            .unwrap()
            .is_none()
    );
    // Oldest first; a pending row is never claimed; passing one over moves on.
    let first = q.claim_next(&tools, "w", lease).unwrap().unwrap().action;
    assert_eq!(first.id, ids[0]);
    assert_eq!(first.state, State::Executing);
    assert_eq!(first.claimed_by.as_deref(), Some("w"));
    assert_eq!(first.lease_until, Some(clock.now_ms() + 60_000));
    let mut offered = Vec::new();
    let passed = store
        .claim_next(&tools, &mut |row| {
            offered.push(row.id.clone());
            None
        })
        .unwrap();
    assert!(passed.is_none());
    assert_eq!(
        offered,
        [ids[1].clone(), ids[3].clone()],
        "only approved rows, oldest first"
    );
    let second = q.claim_next(&tools, "w", lease).unwrap().unwrap().action;
    assert_eq!(second.id, ids[1]);
    assert_eq!(
        store.get(&ids[1]).unwrap().unwrap(),
        second,
        "the claim is committed"
    );
    let third = q.claim_next(&tools, "w", lease).unwrap().unwrap().action;
    assert_eq!(third.id, ids[3]);
    assert!(q.claim_next(&tools, "w", lease).unwrap().is_none());
    assert_eq!(q.get(&ids[2]).unwrap().state, State::Pending);
}

fn read_only(f: &Fixture) {
    let q = ApprovalQueue::new(f.open());
    let row = q.propose(proposal(1, &archive_sha256())).unwrap().action;
    let reader = f.open_read_only();
    assert_eq!(reader.get(&row.id).unwrap().unwrap(), row);
    assert_eq!(reader.list(&ListFilter::default()).unwrap().len(), 1);
    let mut next = row.clone();
    next.state = State::Rejected;
    next.version += 1;
    for err in [
        reader.insert(&row).unwrap_err(),
        reader.compare_and_set(row.version, &next).unwrap_err(),
        reader
            .claim_next(&["action_archive".into()], &mut |_| None)
            .unwrap_err(),
    ] {
        assert!(matches!(err, StoreError::ReadOnly { .. }), "{err}");
    }
    assert_eq!(q.get(&row.id).unwrap(), row);
}

fn damaged(f: &Fixture) {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let q = ApprovalQueue::new(f.open()).with_clock(clock.clone());
    let digest = archive_sha256();
    let ids: Vec<String> = (1..=3)
        .map(|n| {
            clock.advance(Duration::from_secs(1));
            q.propose(proposal(n, &digest)).unwrap().action.id
        })
        .collect();
    for id in &ids[1..] {
        let row = q.get(id).unwrap();
        q.approve(id, "alice", &row.input_sha256).unwrap();
    }
    // Damage two rows behind the queue's back, guards off: an input that
    // is not an object, a proposer that is not one.
    let (off, on) = match f.kind {
        Kind::Sqlite => ("DROP TRIGGER pending_actions_input_is_immutable;", ""),
        Kind::Postgres => (
            "ALTER TABLE pending_actions DISABLE TRIGGER pending_actions_guard;",
            "ALTER TABLE pending_actions ENABLE TRIGGER pending_actions_guard;",
        ),
    };
    f.raw(&format!(
        "{off} UPDATE pending_actions SET input = '[1]' WHERE id = '{}'; \
         UPDATE pending_actions SET proposer = '\"x\"' WHERE id = '{}'; {on}",
        ids[0], ids[2]
    ))
    .unwrap();
    let listing = q.list(&ListFilter::default()).unwrap();
    let listed: Vec<&str> = listing.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(listed, [ids[1].as_str()]);
    let unreadable: Vec<(String, String)> = listing
        .unreadable
        .iter()
        .map(|e| match e {
            StoreError::CorruptRow { id, detail } => (id.clone(), detail.clone()),
            other => panic!("not a damaged row: {other}"),
        })
        .collect();
    assert_eq!(unreadable.len(), 2, "{unreadable:?}");
    assert_eq!(unreadable[0].0, ids[0]);
    assert!(
        unreadable[0].1.contains("input is not a JSON object"),
        "{}",
        unreadable[0].1
    );
    assert_eq!(unreadable[1].0, ids[2]);
    assert!(unreadable[1].1.contains("proposer"), "{}", unreadable[1].1);
    // Paged, each row comes once in its place, whatever the page size:
    // pages start after the last readable row, and pass over the damaged
    // rows that follow it by count.
    for size in 1..=4 {
        let mut order = Vec::new();
        for page in q.pages(&ListFilter::default(), size) {
            let page = page.unwrap();
            let damaged = page.unreadable.iter().map(|e| match e {
                StoreError::CorruptRow { id, .. } => id.clone(),
                other => panic!("not a damaged row: {other}"),
            });
            order.extend(page.rows.iter().map(|r| r.id.clone()));
            order.extend(damaged);
        }
        let mut sorted = ids.clone();
        sorted.sort();
        order.sort();
        assert_eq!(order, sorted, "pages of {size}: each row once");
    }
    // An executor passes over the damaged approved row and runs the other.
    let tools = vec!["action_archive".to_owned()];
    let claim = q
        .claim_next(&tools, "w", Duration::from_secs(60))
        .unwrap()
        .unwrap();
    assert_eq!(claim.action.id, ids[1]);
    assert!(
        q.claim_next(&tools, "w", Duration::from_secs(60))
            .unwrap()
            .is_none()
    );
    let err = q.get(&ids[0]).unwrap_err();
    assert!(err.to_string().contains(&ids[0]), "{err}");
    // A proposer filter passes over a proposer that is not an object (and
    // in SQLite, one that is not JSON at all) without failing the listing;
    // a damaged input under the right proposer is still reported.
    if f.kind == Kind::Sqlite {
        f.raw(&format!(
            "UPDATE pending_actions SET proposer = '{{not json' WHERE id = '{}'",
            ids[2]
        ))
        .unwrap();
    }
    let mine = q
        .list(&ListFilter {
            proposer_id: Some("u1".into()),
            ..ListFilter::default()
        })
        .unwrap();
    let listed: Vec<&str> = mine.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(listed, [ids[1].as_str()]);
    assert_eq!(mine.unreadable.len(), 1, "{:?}", mine.unreadable);
}

fn guards(f: &Fixture) {
    let q = ApprovalQueue::new(f.open());
    let digest = archive_sha256();
    let done = q.propose(proposal(1, &digest)).unwrap().action;
    q.reject(&done.id, "bob", None).unwrap();
    let pending = q.propose(proposal(2, &digest)).unwrap().action;
    let err = f
        .raw(&format!(
            "UPDATE pending_actions SET state = 'approved' WHERE id = '{}'",
            done.id
        ))
        .unwrap_err();
    assert!(
        err.contains("terminal state never changes") || err.contains("not a transition"),
        "{err}"
    );
    let err = f
        .raw(&format!(
            "UPDATE pending_actions SET reason = 'x' WHERE id = '{}'",
            done.id
        ))
        .unwrap_err();
    assert!(err.contains("terminal state never changes"), "{err}");
    let err = f
        .raw(&format!(
            "UPDATE pending_actions SET state = 'executing' WHERE id = '{}'",
            pending.id
        ))
        .unwrap_err();
    assert!(err.contains("not a transition"), "{err}");
    let err = f
        .raw(&format!(
            "UPDATE pending_actions SET input = '{{}}' WHERE id = '{}'",
            pending.id
        ))
        .unwrap_err();
    assert!(err.contains("never changes"), "{err}");
    let err = f
        .raw(&format!(
            "UPDATE pending_actions SET executable_sha256 = 'x' WHERE id = '{}'",
            pending.id
        ))
        .unwrap_err();
    assert!(err.contains("never changes"), "{err}");
    assert_eq!(q.get(&pending.id).unwrap(), pending);
}

fn newer_schema(f: &Fixture) {
    let q = ApprovalQueue::new(f.open());
    let row = q.propose(proposal(1, &archive_sha256())).unwrap().action;
    drop(q);
    f.raw(match f.kind {
        Kind::Sqlite => "PRAGMA user_version = 99",
        Kind::Postgres => {
            "INSERT INTO objectstack_approvals_schema (version, applied_by) VALUES (99, 'future')"
        }
    })
    .unwrap();
    for mode in [OpenMode::Create, OpenMode::Existing, OpenMode::ReadOnly] {
        let err = f.parsed().open(mode).err().unwrap();
        assert!(
            matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("upgrade objectstack-ai"), "{err}");
    }
    f.raw(match f.kind {
        Kind::Sqlite => "PRAGMA user_version = 3",
        Kind::Postgres => "DELETE FROM objectstack_approvals_schema WHERE version = 99",
    })
    .unwrap();
    assert_eq!(
        ApprovalQueue::new(f.open()).get(&row.id).unwrap(),
        row,
        "nothing was touched"
    );
}

/// Approve-with-edits and deadlines (the inbox's additions): the approved
/// input and the deadline survive a reopen, the edited input is what runs,
/// the database keeps both as they were set, and a passed deadline
/// expires the action.
fn edits_and_deadlines(f: &Fixture) {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let digest = archive_sha256();
    let queue = |store| {
        Arc::new(
            ApprovalQueue::new(store)
                .with_clock(clock.clone())
                .with_ttl(Some(Duration::from_secs(600))),
        )
    };
    let q = queue(f.open());
    let edited = q.propose(proposal(1, &digest)).unwrap().action;
    let late = q.propose(proposal(2, &digest)).unwrap().action;
    assert_eq!(edited.expires_at, Some(1_700_000_000_000 + 600_000));
    let approved = q
        .approve_with_edits(
            &edited.id,
            "alice",
            &edited.input_sha256,
            obj(json!({"n": 41})),
        )
        .unwrap();
    assert_eq!(approved.approved_input, Some(obj(json!({"n": 41}))));
    drop(q);

    let q = queue(f.open());
    assert_eq!(
        q.get(&edited.id).unwrap(),
        approved,
        "the edit survives a reopen"
    );
    assert_eq!(q.get(&late.id).unwrap().expires_at, late.expires_at);
    for tamper in [
        format!(
            "UPDATE pending_actions SET approved_input = '{{\"n\": 7}}' WHERE id = '{}'",
            edited.id
        ),
        format!(
            "UPDATE pending_actions SET expires_at = 1 WHERE id = '{}'",
            late.id
        ),
    ] {
        let err = f.raw(&tamper).unwrap_err();
        assert!(err.contains("never changes"), "{err}");
    }
    // The edited input is what is dispatched.
    let ledger = f.dir().join("ledger.txt");
    let host = Arc::new(FakeHost {
        ledger: Some(ledger.clone()),
        ..FakeHost::default()
    });
    let mut registry = ToolRegistry::new(host.services(Some(q.clone())));
    let (definition, action) = archive_definition();
    registry.register_action(definition, action).unwrap();
    let report = rt()
        .block_on(registry.execute_approved(&ExecuteOptions::default()))
        .unwrap();
    assert_eq!(report.executed, [edited.id.as_str()], "{report:?}");
    let ran: Vec<serde_json::Value> = host
        .dispatches()
        .into_iter()
        .filter_map(|d| match d {
            Seen::Script(r) => Some(serde_json::to_value(&r.params).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(ran.len(), 1);
    assert_eq!(ran[0]["n"], 41, "{ran:?}");
    // Past its deadline, the other one expires, and cannot be approved.
    clock.advance(Duration::from_secs(601));
    let expired: Vec<String> = q.expire_due().unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(expired, [late.id.as_str()]);
    let err = q
        .approve(&late.id, "alice", &late.input_sha256)
        .unwrap_err();
    assert!(
        matches!(
            err,
            ApprovalError::AlreadyDecided {
                state: State::Expired,
                ..
            }
        ),
        "{err}"
    );
}

fn restart(f: &Fixture) {
    let digest = archive_sha256();
    let before: Vec<PendingAction> = {
        let q = ApprovalQueue::new(f.open());
        (0..5)
            .map(|n| q.propose(proposal(n, &digest)).unwrap().action)
            .collect()
    };
    // A new process (a restarted host) finds them, approves one and runs it.
    let status = spawn_child(f, "restart")
        .env("CHILD_ID", &before[0].id)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{status}");
    let q = ApprovalQueue::new(f.open());
    assert_eq!(q.get(&before[0].id).unwrap().state, State::Executed);
    for row in &before[1..] {
        assert_eq!(&q.get(&row.id).unwrap(), row);
    }
    assert_eq!(
        ledger_lines(&f.dir().join("ledger.txt")),
        [before[0].id.clone()]
    );
}

// -------------------------------------------------------------------- race

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Counts {
    approved: usize,
    approve_lost: usize,
    executed: usize,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.approved += o.approved;
        self.approve_lost += o.approve_lost;
        self.executed += o.executed;
    }
}

/// One racer with its own connection: approves every action (in its own
/// order) and executes, half the time the action it just approved (a
/// compare-and-set race by id), half the time whatever is next (a claim).
fn racer(location: &str, ledger: &Path, ids: &[(String, String)], me: usize) -> Counts {
    let queue = Arc::new(ApprovalQueue::new(open_location(location)));
    let registry = registry(queue.clone(), ledger, false);
    let rt = rt();
    let options = ExecuteOptions {
        executor: format!("pid{}-w{me}", std::process::id()),
        lease: Duration::from_secs(600),
        limit: Some(1),
        settled: Duration::ZERO,
    };
    let mut counts = Counts::default();
    let n = ids.len();
    let shift = me * n / 16;
    for k in 0..n {
        let i = if me.is_multiple_of(2) {
            (k + shift) % n
        } else {
            (n - 1 - k + n - shift) % n
        };
        let (id, hash) = &ids[i];
        match queue.approve(id, &format!("op{me}"), hash) {
            Ok(_) => counts.approved += 1,
            Err(ApprovalError::AlreadyDecided { .. }) => counts.approve_lost += 1,
            Err(e) => panic!("approve {id}: {e}"),
        }
        if k % 2 == 0 {
            match rt.block_on(registry.execute_pending(id, &options)) {
                Ok(row) => {
                    assert_eq!(row.state, State::Executed, "{row:?}");
                    counts.executed += 1;
                }
                Err(ApprovalError::AlreadyDecided { .. }) => {}
                Err(e) => panic!("execute {id}: {e}"),
            }
        } else {
            let report = rt.block_on(registry.execute_approved(&options)).unwrap();
            assert!(
                report.failed.is_empty() && report.errors.is_empty(),
                "{report:?}"
            );
            counts.executed += report.executed.len();
        }
    }
    let drain = ExecuteOptions {
        limit: None,
        ..options
    };
    loop {
        let report = rt.block_on(registry.execute_approved(&drain)).unwrap();
        assert!(
            report.failed.is_empty() && report.errors.is_empty(),
            "{report:?}"
        );
        if report.executed.is_empty() {
            break;
        }
        counts.executed += report.executed.len();
    }
    counts
}

fn racers(location: &str, ledger: &Path, ids: &[(String, String)], threads: usize) -> Counts {
    let mut total = Counts::default();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|me| s.spawn(move || racer(location, ledger, ids, me)))
            .collect();
        for h in handles {
            total += h.join().unwrap();
        }
    });
    total
}

fn race(f: &Fixture, n: usize, threads_per_process: usize) {
    let digest = archive_sha256();
    let ids: Vec<(String, String)> = {
        let q = ApprovalQueue::new(f.open());
        (0..n)
            .map(|i| {
                let row = q.propose(proposal(i, &digest)).unwrap().action;
                (row.id, row.input_sha256)
            })
            .collect()
    };
    let ids_file = f.dir().join("ids.json");
    std::fs::write(&ids_file, serde_json::to_vec(&ids).unwrap()).unwrap();
    let ledger = f.dir().join("ledger.txt");
    let children: Vec<_> = (0..2)
        .map(|p| {
            spawn_child(f, "race")
                .env("CHILD_THREADS", threads_per_process.to_string())
                .env("CHILD_OFFSET", (p * threads_per_process).to_string())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut total = Counts::default();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "a racing process failed: {out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("COUNTS ").map(|(_, c)| c))
            .unwrap_or_else(|| panic!("no counts in {stdout}"));
        total += serde_json::from_str::<Counts>(line).unwrap();
    }
    let attempts = 2 * threads_per_process * n;
    assert_eq!(total.approved, n, "{total:?}");
    assert_eq!(
        total.approve_lost,
        attempts - n,
        "every other approval is told it was decided"
    );
    assert_eq!(total.executed, n, "{total:?}");
    let lines = ledger_lines(&ledger);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for l in &lines {
        *seen.entry(l.as_str()).or_default() += 1;
    }
    assert_eq!(lines.len(), n, "one dispatch per action");
    for (id, _) in &ids {
        assert_eq!(seen.get(id.as_str()), Some(&1), "{id} dispatched once");
    }
    let q = ApprovalQueue::new(f.open());
    let executed = q
        .list(&ListFilter {
            state: Some(State::Executed),
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(executed.rows.len(), n);
    assert!(executed.unreadable.is_empty());
    f.check();
}

// ------------------------------------------------------------------- crash

const CRASH_LEASE: Duration = Duration::from_millis(800);

fn crash(f: &Fixture) {
    let digest = archive_sha256();
    let ledger = f.dir().join("ledger.txt");
    let q = ApprovalQueue::new(f.open());
    let doomed = q.propose(proposal(1, &digest)).unwrap().action;
    let survivor = q.propose(proposal(2, &digest)).unwrap().action;
    q.approve(&doomed.id, "alice", &doomed.input_sha256)
        .unwrap();
    let bystanders: Vec<PendingAction> = (3..13)
        .map(|i| q.propose(proposal(i, &digest)).unwrap().action)
        .collect();
    let approved_bystander = {
        let b = &bystanders[0];
        q.approve(&b.id, "alice", &b.input_sha256).unwrap()
    };
    drop(q);

    // The child claims and dispatches, and is killed inside the dispatch.
    let mut crashing = spawn_child(f, "crash")
        .env("CHILD_ID", &doomed.id)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the child's dispatch", || !ledger_lines(&ledger).is_empty());
    crashing.kill().unwrap(); // SIGKILL on unix
    assert!(!crashing.wait().unwrap().success());

    f.check();
    let queue = Arc::new(ApprovalQueue::new(f.open()));
    let claimed = queue.get(&doomed.id).unwrap();
    assert_eq!(
        claimed.state,
        State::Executing,
        "the claim was committed before dispatch"
    );
    assert!(
        claimed
            .claimed_by
            .as_deref()
            .unwrap()
            .starts_with("crash-child")
    );
    let lease_until = claimed.lease_until.unwrap();
    wait_for("the lease to run out", || queue.now_ms() > lease_until);

    // The next pass makes it in_doubt and does not dispatch it again; the
    // other approved action runs.
    let parent = registry(queue.clone(), &ledger, false);
    let report = rt()
        .block_on(parent.execute_approved(&ExecuteOptions::default()))
        .unwrap();
    assert_eq!(report.in_doubt, [doomed.id.as_str()]);
    assert_eq!(report.executed, [approved_bystander.id.as_str()]);
    assert_eq!(queue.get(&doomed.id).unwrap().state, State::InDoubt);
    assert_eq!(
        ledger_lines(&ledger),
        [doomed.id.clone(), approved_bystander.id.clone()]
    );

    // Nothing else was lost or changed.
    assert_eq!(queue.get(&survivor.id).unwrap(), survivor);
    for before in &bystanders[1..] {
        assert_eq!(&queue.get(&before.id).unwrap(), before);
    }
    let all = queue.list(&ListFilter::default()).unwrap();
    assert_eq!(all.rows.len(), 12);
    assert!(all.unreadable.is_empty());

    // The operator checks the target system and resolves it.
    let resolved = queue
        .resolve(
            &doomed.id,
            "ops",
            Resolution::Executed,
            Some("found in the ledger"),
        )
        .unwrap();
    assert_eq!(resolved.state, State::Executed);
    f.check();
}

/// Not a test on its own: the body of the child processes above.
#[test]
#[ignore = "run by the conformance tests as a child process"]
fn child() {
    let Ok(role) = std::env::var(CHILD_ENV) else {
        return;
    };
    let location = std::env::var("CHILD_LOCATION").unwrap();
    let dir = PathBuf::from(std::env::var("CHILD_DIR").unwrap());
    let ledger = dir.join("ledger.txt");
    let var = |k: &str| std::env::var(k).unwrap();
    match role.as_str() {
        "race" => {
            let ids: Vec<(String, String)> =
                serde_json::from_slice(&std::fs::read(dir.join("ids.json")).unwrap()).unwrap();
            let threads: usize = var("CHILD_THREADS").parse().unwrap();
            let counts = racers(&location, &ledger, &ids, threads);
            println!("COUNTS {}", serde_json::to_string(&counts).unwrap());
        }
        "crash" => {
            let queue = Arc::new(ApprovalQueue::new(open_location(&location)));
            let registry = registry(queue, &ledger, true);
            let options = ExecuteOptions {
                executor: format!("crash-child-{}", std::process::id()),
                lease: CRASH_LEASE,
                limit: None,
                settled: Duration::ZERO,
            };
            // Hangs inside the dispatch until killed.
            let _ = rt().block_on(registry.execute_pending(&var("CHILD_ID"), &options));
            unreachable!("the dispatcher never returns");
        }
        "restart" => {
            let queue = Arc::new(ApprovalQueue::new(open_location(&location)));
            let registry = registry(queue.clone(), &ledger, false);
            let id = var("CHILD_ID");
            let row = queue.get(&id).unwrap();
            assert_eq!(row.state, State::Pending);
            queue.approve(&id, "bob", &row.input_sha256).unwrap();
            let report = rt()
                .block_on(registry.execute_approved(&ExecuteOptions::default()))
                .unwrap();
            assert_eq!(report.executed, [id]);
        }
        other => panic!("unknown child role {other}"),
    }
}

// ---------------------------------------------------------- state machine

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
        settled: Duration::ZERO,
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

// ------------------------------------------------- PostgreSQL's own guarantees

#[cfg(feature = "postgres")]
mod postgres_only {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;

    use objectstack_bridge::approval::{PostgresOptions, PostgresStore};

    use super::*;

    /// An approval made through one store wakes a watcher on another
    /// (another connection, as another gateway has), and a proposal does
    /// not; after the listener's connection is killed, it reconnects and
    /// wakes on the next approval.
    #[test]
    fn an_approval_wakes_the_watchers_of_other_stores_and_survives_a_lost_listener() {
        // Alone: another test's approvals on this database would wake it.
        let Some(f) = Fixture::postgres_alone("notify") else {
            return;
        };
        let watcher = f.open();
        let (tx, rx) = mpsc::channel::<()>();
        let tx = Mutex::new(tx);
        let watching = watcher
            .watch_approved(Arc::new(move || {
                let _ = tx.lock().unwrap().send(());
            }))
            .unwrap();
        assert!(watching, "PostgreSQL announces approvals");
        // The catch-up wake once the listener is connected.
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the listener connects");
        let approver = ApprovalQueue::new(f.open());
        let row = approver
            .propose(proposal(1, &archive_sha256()))
            .unwrap()
            .action;
        assert!(
            rx.recv_timeout(Duration::from_millis(500)).is_err(),
            "a proposal is not an approval"
        );
        approver
            .approve(&row.id, "alice", &row.input_sha256)
            .unwrap();
        rx.recv_timeout(Duration::from_secs(5))
            .expect("the approval wakes the watcher");

        // Kill the listening connection; the store listens again by itself.
        let url = std::env::var(stores::URL_VAR).unwrap();
        stores::pg::admin(
            &url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()",
        );
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the listener reconnects");
        while rx.try_recv().is_ok() {}
        let second = approver
            .propose(proposal(2, &archive_sha256()))
            .unwrap()
            .action;
        approver
            .approve(&second.id, "alice", &second.input_sha256)
            .unwrap();
        rx.recv_timeout(Duration::from_secs(5))
            .expect("woken after reconnecting");
    }

    /// A database at schema version 1 (as objectstack-bridge 0.1 created
    /// it: `tests/data/postgres-queue-v1.sql`) is upgraded when a host
    /// opens it: its rows are kept and still run, the new columns work,
    /// and the version table says 2.
    #[test]
    fn a_version_1_database_is_upgraded_and_keeps_its_rows() {
        let Some(f) = Fixture::postgres("upgrade") else {
            return;
        };
        let v1 = include_str!("data/postgres-queue-v1.sql");
        f.raw(v1).unwrap();
        let digest = archive_sha256();
        let row = |id: &str, n: usize, state: &str, approved: &str| {
            let input = obj(json!({"n": n}));
            let sha = objectstack_bridge::approval::input_sha256(&input).unwrap();
            let approved_sha = if approved.is_empty() {
                "NULL".to_owned()
            } else {
                format!("'{sha}'")
            };
            format!(
                "INSERT INTO pending_actions (id, dedup_key, tool_name, action_name, input, \
                 input_sha256, executable_sha256, conversation_id, tool_call_id, proposer, \
                 created_at, state, version, state_at, decided_by, approved_sha256) VALUES \
                 ('{id}', NULL, 'action_archive', 'archive', '{{\"n\":{n}}}', '{sha}', \
                 '{digest}', 'conv', 'call-{n}', '{{\"id\":\"u1\"}}', {n}, '{state}', \
                 {version}, {n}, {decider}, {approved_sha});",
                version = if approved.is_empty() { 1 } else { 2 },
                decider = if approved.is_empty() {
                    "NULL".to_owned()
                } else {
                    format!("'{approved}'")
                },
            )
        };
        f.raw(&format!(
            "{}{}",
            row("pa_v1pending00000000000000", 1, "pending", ""),
            row("pa_v1approved0000000000000", 2, "approved", "alice")
        ))
        .unwrap();
        // Read-only openers leave it to a writer.
        let err = f.parsed().open(OpenMode::ReadOnly).err().unwrap();
        assert!(matches!(err, StoreError::NeedsWriter { .. }), "{err}");

        let q = Arc::new(ApprovalQueue::new(f.open()));
        let url = &f.location;
        assert_eq!(
            stores::pg::value(url, "SELECT max(version) FROM objectstack_approvals_schema"),
            "2"
        );
        let pending = q.get("pa_v1pending00000000000000").unwrap();
        assert_eq!(pending.state, State::Pending);
        assert_eq!(pending.approved_input, None);
        assert_eq!(pending.expires_at, None);
        let edited = q
            .approve_with_edits(
                &pending.id,
                "bob",
                &pending.input_sha256,
                obj(json!({"n": 10})),
            )
            .unwrap();
        assert_eq!(q.get(&pending.id).unwrap(), edited);
        let ledger = f.dir().join("ledger.txt");
        let registry = registry(q.clone(), &ledger, false);
        let report = rt()
            .block_on(registry.execute_approved(&ExecuteOptions::default()))
            .unwrap();
        assert_eq!(
            report.executed,
            ["pa_v1pending00000000000000", "pa_v1approved0000000000000"],
            "{report:?}"
        );
        // The upgraded guard covers the new columns.
        let err = f
            .raw("UPDATE pending_actions SET approved_input = '{}' WHERE id = 'pa_v1approved0000000000000'")
            .unwrap_err();
        assert!(err.contains("never changes"), "{err}");
        // Opening again migrates nothing more.
        drop(f.open());
        assert_eq!(
            stores::pg::value(url, "SELECT count(*) FROM objectstack_approvals_schema"),
            "2"
        );
    }

    /// A claim skips a row another transaction holds locked instead of
    /// waiting for it.
    #[test]
    fn a_claim_skips_a_row_another_claimer_holds() {
        let Some(f) = Fixture::postgres("skiplocked") else {
            return;
        };
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let q = ApprovalQueue::new(f.open()).with_clock(clock.clone());
        let digest = archive_sha256();
        let ids: Vec<String> = (0..2)
            .map(|n| {
                clock.advance(Duration::from_secs(1));
                let row = q.propose(proposal(n, &digest)).unwrap().action;
                q.approve(&row.id, "alice", &row.input_sha256).unwrap();
                row.id
            })
            .collect();
        let (locked_tx, locked_rx) = mpsc::channel::<()>();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let location = f.location.clone();
        let first = ids[0].clone();
        let holder = std::thread::spawn(move || {
            rt().block_on(async move {
                let (client, connection) =
                    tokio_postgres::connect(&location, tokio_postgres::NoTls)
                        .await
                        .unwrap();
                let driver = tokio::spawn(connection);
                client.batch_execute("BEGIN").await.unwrap();
                client
                    .query(
                        "SELECT id FROM pending_actions WHERE id = $1 FOR UPDATE",
                        &[&first],
                    )
                    .await
                    .unwrap();
                locked_tx.send(()).unwrap();
                let _ = tokio::task::spawn_blocking(move || release_rx.recv()).await;
                client.batch_execute("COMMIT").await.unwrap();
                drop(client);
                let _ = driver.await;
            });
        });
        locked_rx.recv().unwrap();
        let started = Instant::now();
        let claim = q
            .claim_next(&["action_archive".to_owned()], "w", Duration::from_secs(60))
            .unwrap()
            .unwrap();
        assert_eq!(claim.action.id, ids[1], "the locked row is skipped");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "and not waited for"
        );
        release_tx.send(()).unwrap();
        holder.join().unwrap();
        let next = q
            .claim_next(&["action_archive".to_owned()], "w", Duration::from_secs(60))
            .unwrap()
            .unwrap();
        assert_eq!(next.action.id, ids[0], "released, it is claimable again");
    }

    /// A TCP proxy in front of the server that the test can cut.
    struct Proxy {
        port: u16,
        cut: Arc<AtomicBool>,
        open: Arc<Mutex<Vec<TcpStream>>>,
    }

    impl Proxy {
        fn start(upstream: std::net::SocketAddr) -> Proxy {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let cut = Arc::new(AtomicBool::new(false));
            let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
            let (c, o) = (cut.clone(), open.clone());
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    let Ok(client) = client else { continue };
                    if c.load(Ordering::SeqCst) {
                        let _ = client.shutdown(Shutdown::Both);
                        continue;
                    }
                    let Ok(server) = TcpStream::connect(upstream) else {
                        continue;
                    };
                    {
                        let mut open = o.lock().unwrap();
                        open.push(client.try_clone().unwrap());
                        open.push(server.try_clone().unwrap());
                    }
                    for (mut from, mut to) in [
                        (client.try_clone().unwrap(), server.try_clone().unwrap()),
                        (server, client),
                    ] {
                        std::thread::spawn(move || {
                            let mut buf = [0u8; 16384];
                            while let Ok(n) = from.read(&mut buf) {
                                if n == 0 || to.write_all(&buf[..n]).is_err() {
                                    break;
                                }
                            }
                            let _ = to.shutdown(Shutdown::Both);
                        });
                    }
                }
            });
            Proxy { port, cut, open }
        }

        fn cut(&self) {
            self.cut.store(true, Ordering::SeqCst);
            for s in self.open.lock().unwrap().drain(..) {
                let _ = s.shutdown(Shutdown::Both);
            }
        }

        fn mend(&self) {
            self.cut.store(false, Ordering::SeqCst);
        }
    }

    /// The connection is lost after the claim and before the outcome: the
    /// outcome cannot be recorded, the action ends `in_doubt` when its
    /// lease runs out, it is never dispatched again, and the store works
    /// again once the database is reachable.
    #[test]
    fn a_connection_lost_between_claim_and_outcome_ends_in_doubt_never_in_a_second_dispatch() {
        let Some(f) = Fixture::postgres("lostconn") else {
            return;
        };
        let direct = Arc::new(ApprovalQueue::new(f.open()));
        let row = direct
            .propose(proposal(1, &archive_sha256()))
            .unwrap()
            .action;
        direct.approve(&row.id, "alice", &row.input_sha256).unwrap();

        let config: tokio_postgres::Config = f.location.parse().unwrap();
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let host = match config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            _ => "127.0.0.1".to_owned(),
        };
        let upstream = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
            .unwrap()
            .next()
            .unwrap();
        let proxy = Arc::new(Proxy::start(upstream));
        let through = f.location.replacen(
            &format!("{host}:{port}"),
            &format!("127.0.0.1:{}", proxy.port),
            1,
        );
        assert_ne!(through, f.location, "the URL goes through the proxy");
        let store = PostgresStore::open_with(
            &through,
            &PostgresOptions {
                connect_timeout: Duration::from_secs(1),
                statement_timeout: Duration::from_secs(2),
                ..PostgresOptions::default()
            },
        )
        .unwrap();
        let queue = Arc::new(ApprovalQueue::new(Arc::new(store)));
        let ledger = f.dir().join("ledger.txt");
        let cutter = proxy.clone();
        let host = Arc::new(FakeHost {
            ledger: Some(ledger.clone()),
            on_dispatch: Some(Box::new(move || cutter.cut())),
            ..FakeHost::default()
        });
        let mut registry = ToolRegistry::new(host.services(Some(queue.clone())));
        let (definition, action) = archive_definition();
        registry.register_action(definition, action).unwrap();
        let options = ExecuteOptions {
            executor: "cut-off".into(),
            lease: Duration::from_millis(500),
            limit: None,
            settled: Duration::ZERO,
        };
        let err = rt()
            .block_on(registry.execute_pending(&row.id, &options))
            .unwrap_err();
        assert!(
            matches!(
                err,
                ApprovalError::OutcomeNotRecorded {
                    outcome: "executed",
                    ..
                }
            ),
            "the outcome could not be recorded, and the error says it ran: {err}"
        );
        assert_eq!(ledger_lines(&ledger), [row.id.as_str()]);
        let claimed = direct.get(&row.id).unwrap();
        assert_eq!(claimed.state, State::Executing);
        wait_for("the lease", || {
            direct.now_ms() > claimed.lease_until.unwrap()
        });

        // The database is back; the same store reconnects by itself. Its
        // next pass finds the claim expired and does not dispatch again.
        proxy.mend();
        let report = rt().block_on(registry.execute_approved(&options)).unwrap();
        assert_eq!(report.in_doubt, [row.id.as_str()], "{report:?}");
        assert!(
            report.executed.is_empty() && report.failed.is_empty(),
            "{report:?}"
        );
        assert_eq!(queue.get(&row.id).unwrap().state, State::InDoubt);
        assert_eq!(ledger_lines(&ledger), [row.id.as_str()], "dispatched once");
    }
}
