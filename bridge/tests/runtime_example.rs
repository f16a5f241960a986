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
