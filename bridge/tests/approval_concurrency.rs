//! Many deciders and executors on one SQLite file: every action is
//! approved exactly once and dispatched exactly once, across threads and
//! across processes.
//!
//! The two-process test runs this test binary again as its children (the
//! ignored `child_worker` test, steered by environment variables).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use approval_support::{FakeHost, ledger_lines, obj, scratch_dir};
use objectstack_bridge::approval::{
    ApprovalError, ApprovalQueue, ListFilter, Proposal, SqliteStore, State,
};
use objectstack_bridge::runtime::{Actor, ExecuteOptions, ToolRegistry};
use objectstack_spec::AIToolDefinition;
use serde_json::json;

const CHILD_ENV: &str = "OBJECTSTACK_BRIDGE_TEST_CHILD";

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Counts {
    approved: usize,
    approve_lost: usize,
    executed: usize,
    execute_lost: usize,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.approved += o.approved;
        self.approve_lost += o.approve_lost;
        self.executed += o.executed;
        self.execute_lost += o.execute_lost;
    }
}

fn registry(queue: Arc<ApprovalQueue>, ledger: &Path) -> ToolRegistry {
    let host = FakeHost::with_ledger(ledger);
    let mut registry = ToolRegistry::new(host.services(Some(queue)));
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
    registry.register_action(definition, action).unwrap();
    registry
}

/// Proposes `n` actions; returns (id, input hash) of each.
fn propose_all(path: &Path, n: usize) -> Vec<(String, String)> {
    let queue = Arc::new(ApprovalQueue::new(Arc::new(
        SqliteStore::open(path).unwrap(),
    )));
    let digest = registry(queue.clone(), &path.with_extension("unused-ledger"))
        .executable_sha256("action_archive")
        .unwrap()
        .to_owned();
    (0..n)
        .map(|i| {
            let row = queue
                .propose(Proposal {
                    tool_name: "action_archive".into(),
                    action_name: "archive".into(),
                    object_name: None,
                    input: obj(json!({"n": i})),
                    executable_sha256: digest.clone(),
                    conversation_id: Some("conv".into()),
                    message_id: None,
                    tool_call_id: Some(format!("call-{i}")),
                    trace_id: None,
                    proposer: Actor::new("u1"),
                })
                .unwrap()
                .action;
            (row.id, row.input_sha256)
        })
        .collect()
}

/// One thread: its own connection, approving and executing every action.
fn worker(path: &Path, ledger: &Path, ids: &[(String, String)], me: usize) -> Counts {
    let queue = Arc::new(ApprovalQueue::new(Arc::new(
        SqliteStore::open(path).unwrap(),
    )));
    let registry = registry(queue.clone(), ledger);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let options = ExecuteOptions {
        executor: format!("pid{}-w{me}", std::process::id()),
        lease: Duration::from_secs(600),
        limit: None,
    };
    let mut counts = Counts::default();
    let order: Box<dyn Iterator<Item = &(String, String)>> = if me.is_multiple_of(2) {
        Box::new(ids.iter())
    } else {
        Box::new(ids.iter().rev())
    };
    for (id, hash) in order {
        match queue.approve(id, &format!("op{me}"), hash) {
            Ok(_) => counts.approved += 1,
            Err(ApprovalError::AlreadyDecided { .. }) => counts.approve_lost += 1,
            Err(e) => panic!("approve {id}: {e}"),
        }
        match rt.block_on(registry.execute_pending(id, &options)) {
            Ok(row) => {
                assert_eq!(row.state, State::Executed, "{row:?}");
                counts.executed += 1;
            }
            Err(ApprovalError::AlreadyDecided { .. }) => counts.execute_lost += 1,
            Err(e) => panic!("execute {id}: {e}"),
        }
    }
    // Everything is decided by now, so a full pass finds nothing to run.
    let report = rt.block_on(registry.execute_approved(&options)).unwrap();
    assert!(
        report.executed.is_empty() && report.failed.is_empty(),
        "{report:?}"
    );
    counts
}

fn run_threads(path: &Path, ledger: &Path, ids: &[(String, String)], threads: usize) -> Counts {
    let mut total = Counts::default();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|me| s.spawn(move || worker(path, ledger, ids, me)))
            .collect();
        for h in handles {
            total += h.join().unwrap();
        }
    });
    total
}

/// Every action executed, and the ledger shows each exactly once.
fn assert_exactly_once(path: &Path, ledger: &Path, ids: &[(String, String)]) {
    let lines = ledger_lines(ledger);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for l in &lines {
        *seen.entry(l.as_str()).or_default() += 1;
    }
    assert_eq!(lines.len(), ids.len(), "one dispatch per action");
    for (id, _) in ids {
        assert_eq!(seen.get(id.as_str()), Some(&1), "{id} dispatched once");
    }
    let store = SqliteStore::open(path).unwrap();
    store.integrity_check().unwrap();
    let queue = ApprovalQueue::new(Arc::new(store));
    let executed = queue
        .list(&ListFilter {
            state: Some(State::Executed),
            ..ListFilter::default()
        })
        .unwrap()
        .rows;
    assert_eq!(executed.len(), ids.len());
}

#[test]
fn sixteen_threads_race_over_a_thousand_actions() {
    let dir = scratch_dir("threads");
    let (path, ledger) = (dir.join("q.db"), dir.join("ledger.txt"));
    let ids = propose_all(&path, 1000);
    let counts = run_threads(&path, &ledger, &ids, 16);
    assert_eq!(counts.approved, 1000, "{counts:?}");
    assert_eq!(
        counts.approve_lost,
        15 * 1000,
        "every other attempt is told it was decided"
    );
    assert_eq!(counts.executed, 1000, "{counts:?}");
    assert_eq!(counts.execute_lost, 15 * 1000, "{counts:?}");
    assert_exactly_once(&path, &ledger, &ids);
}

#[test]
fn two_processes_share_the_file() {
    const N: usize = 300;
    const THREADS: usize = 4;
    let dir = scratch_dir("processes");
    let (path, ledger) = (dir.join("q.db"), dir.join("ledger.txt"));
    let ids = propose_all(&path, N);
    let ids_file = dir.join("ids.json");
    std::fs::write(&ids_file, serde_json::to_vec(&ids).unwrap()).unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "child_worker",
                    "--exact",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD_ENV, "concurrency")
                .env("CHILD_DB", &path)
                .env("CHILD_LEDGER", &ledger)
                .env("CHILD_IDS", &ids_file)
                .env("CHILD_THREADS", THREADS.to_string())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut total = Counts::default();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "child failed: {out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("COUNTS ").map(|(_, c)| c))
            .unwrap_or_else(|| panic!("no counts in {stdout}"));
        total += serde_json::from_str::<Counts>(line).unwrap();
    }
    let attempts = 2 * THREADS * N;
    assert_eq!(total.approved, N, "{total:?}");
    assert_eq!(total.approve_lost, attempts - N);
    assert_eq!(total.executed, N);
    assert_eq!(total.execute_lost, attempts - N);
    assert_exactly_once(&path, &ledger, &ids);
}

/// Not a test on its own: the body of the child processes above.
#[test]
#[ignore = "run by two_processes_share_the_file as a child process"]
fn child_worker() {
    if std::env::var(CHILD_ENV).as_deref() != Ok("concurrency") {
        return;
    }
    let var = |k: &str| PathBuf::from(std::env::var(k).unwrap());
    let ids: Vec<(String, String)> =
        serde_json::from_slice(&std::fs::read(var("CHILD_IDS")).unwrap()).unwrap();
    let threads: usize = std::env::var("CHILD_THREADS").unwrap().parse().unwrap();
    let counts = run_threads(&var("CHILD_DB"), &var("CHILD_LEDGER"), &ids, threads);
    println!("COUNTS {}", serde_json::to_string(&counts).unwrap());
}
