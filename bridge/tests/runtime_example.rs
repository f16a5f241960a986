//! `examples/host.rs` runs, and does what its comments say.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../examples/host.rs"]
mod host;

use serde_json::json;

#[test]
fn the_host_example_wires_everything_and_runs() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let transcript = rt.block_on(host::demo()).unwrap();
    let calls: Vec<&str> = transcript.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(
        calls,
        [
            "action_complete",
            "action_mark_blocked",
            "action_escalate",
            "action_sync",
            "action_purge",
            "approved purge"
        ]
    );
    let out = |i: usize| &transcript[i].1;
    assert_eq!(
        out(0)["result"],
        json!({"ran": "complete_task", "by": "u1", "params": {}})
    );
    assert_eq!(out(1)["result"]["status"], "blocked");
    assert_eq!(out(2)["result"]["output"]["record"]["id"], "t1");
    assert_eq!(
        out(3)["result"]["received"],
        "POST /api/tracker/sync HTTP/1.1"
    );
    assert_eq!(out(3)["result"]["body"], r#"{"taskId":"t1"}"#);
    assert_eq!(out(4)["status"], "pending_approval");
    assert_eq!(out(5)["ok"], true);
    assert_eq!(out(5)["result"]["ran"], "purge_task");
    for (call, envelope) in &transcript[..4] {
        assert_eq!(envelope["ok"], true, "{call}: {envelope}");
    }
}

#[test]
fn the_host_example_leaves_its_pending_action_for_an_operator_then_executes_it() {
    use objectstack_bridge::approval::{ApprovalQueue, ListFilter, SqliteStore, State};
    use std::sync::Arc;
    use std::time::Duration;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("objectstack-host-queue-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("approvals.db");

    // First run: the purge is queued and left pending in the file.
    let first = rt
        .block_on(host::run_with_queue(&db, Duration::ZERO))
        .unwrap();
    assert_eq!(first.purge.state, State::Pending);
    assert_eq!(first.transcript[4].1["status"], "pending_approval");
    let id = first.purge.id.clone();

    // The operator, in another process, sees it read-only and approves it
    // (what `objectstack-ai approvals list` and `approve` do).
    let listed = ApprovalQueue::new(Arc::new(SqliteStore::open_read_only(&db).unwrap()))
        .list(&ListFilter::default())
        .unwrap()
        .rows;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, id);
    assert_eq!(listed[0].tool_name, "action_purge");
    let operator = ApprovalQueue::new(Arc::new(SqliteStore::open_existing(&db).unwrap()));
    operator
        .approve(&id, "operator", &listed[0].input_sha256)
        .unwrap();
    drop(operator);

    // The next run of the host asks for the same purge (the same tool
    // call), finds it approved and executes it.
    let second = rt
        .block_on(host::run_with_queue(&db, Duration::from_secs(10)))
        .unwrap();
    assert_eq!(
        second.purge.id, id,
        "the same tool call is not queued twice"
    );
    assert_eq!(second.purge.state, State::Executed, "{:?}", second.purge);
    assert_eq!(
        second.purge.result.as_ref().unwrap()["result"]["ran"],
        "purge_task"
    );
    let rows = ApprovalQueue::new(Arc::new(SqliteStore::open_read_only(&db).unwrap()))
        .list(&ListFilter::default())
        .unwrap()
        .rows;
    assert_eq!(rows.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
