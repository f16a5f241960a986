//! An approval is bound to what executes: the executable parts of the
//! action and its parameter schema as registered when it was proposed, and
//! the proposer who asked. A host running another version of the stack, or
//! another caller reusing a tool-call id, gets nothing that was approved
//! for someone or something else.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;

use std::path::Path;
use std::sync::Arc;

use approval_support::{FakeHost, Seen, obj, scratch_dir};
use objectstack_bridge::approval::{ApprovalError, ApprovalQueue, SqliteStore, State, StoreError};
use objectstack_bridge::runtime::{Actor, CallContext, ExecuteOptions, ToolRegistry};
use serde_json::{Map, Value, json};

fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn ctx(actor: &str, tool_call: &str) -> CallContext {
    CallContext {
        actor: Some(Actor::new(actor)),
        conversation_id: Some("conv-1".into()),
        message_id: Some("msg-1".into()),
        tool_call_id: Some(tool_call.into()),
        trace_id: None,
    }
}

fn host() -> Arc<FakeHost> {
    let host = FakeHost::new();
    host.add_record("task", json!({"id": "t1", "title": "Ship v1"}));
    host
}

/// A stack of one object `task` with one action, which needs confirmation.
fn stack(action: Value) -> Map<String, Value> {
    obj(json!({"objects": [{
        "name": "task",
        "fields": {"title": {"type": "text"}, "status": {"type": "text"}},
        "actions": [action]
    }]}))
}

/// A host process: its own connection to the queue file, the stack it runs.
fn registry(host: &Arc<FakeHost>, db: &Path, stack: &Map<String, Value>) -> ToolRegistry {
    let queue = Arc::new(ApprovalQueue::new(Arc::new(SqliteStore::open(db).unwrap())));
    let mut registry = ToolRegistry::new(host.services(Some(queue)));
    let (materialised, refused) = registry.register_stack(stack);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(
        materialised.registered.len(),
        1,
        "{:?}",
        materialised.skipped
    );
    registry
}

fn queue(registry: &ToolRegistry) -> &ApprovalQueue {
    registry.services().approvals.as_deref().unwrap()
}

/// Proposes `args` under v1, approves it, then executes the queue from a
/// host running v2. Returns the row afterwards and what v2 dispatched.
fn approve_under_then_execute_under(
    v1: Value,
    v2: Value,
    args: Value,
) -> (objectstack_bridge::approval::PendingAction, Vec<Seen>) {
    let dir = scratch_dir("binding");
    let db = dir.join("q.db");
    let (old_host, new_host) = (host(), host());
    let v1 = registry(&old_host, &db, &stack(v1));
    let out = block(v1.call("action_purge", args, &ctx("alice", "call-1")));
    assert_eq!(out["status"], "pending_approval", "{out}");
    let id = out["pendingActionId"].as_str().unwrap().to_owned();
    let row = queue(&v1).get(&id).unwrap();
    queue(&v1)
        .approve(&id, "operator", &row.input_sha256)
        .unwrap();
    drop(v1);

    let v2 = registry(&new_host, &db, &stack(v2));
    let report = block(v2.execute_approved(&ExecuteOptions::default())).unwrap();
    assert!(report.errors.is_empty(), "{report:?}");
    let row = queue(&v2).get(&id).unwrap();
    assert!(old_host.dispatches().is_empty());
    (row, new_host.dispatches())
}

fn purge(extra: Value) -> Value {
    let mut action = obj(json!({
        "name": "purge", "type": "script", "target": "purge_one", "mode": "delete",
        "locations": ["record_more"],
        "ai": {"exposed": true, "description": "Deletes the task and its history; it cannot be undone."}
    }));
    action.extend(obj(extra));
    Value::Object(action)
}

#[test]
fn an_approval_given_under_v1_is_not_executed_by_a_host_running_v2() {
    // The reproduction from the issue: v2 retargets the script and changes
    // the parameters; the stored input is valid under v1 only.
    let v2 = purge(json!({
        "target": "purge_ALL_TENANTS",
        "params": [{"name": "scope", "type": "text", "required": true}]
    }));
    let (row, dispatched) =
        approve_under_then_execute_under(purge(json!({})), v2, json!({"recordId": "t1"}));
    assert!(
        dispatched.is_empty(),
        "v2 ran v1's approval: {dispatched:?}"
    );
    assert_eq!(row.state, State::Failed);
    let error = row.error.unwrap_or_default();
    assert!(
        error.contains("the action changed since it was approved"),
        "{error}"
    );
}

#[test]
fn every_executable_part_is_bound_and_nothing_else() {
    // (what changes, v1, v2, whether v2 may run v1's approval)
    let api = |extra: Value| {
        let mut a = obj(json!({
            "name": "purge", "type": "api", "target": "tasks/purge", "method": "POST",
            "recordIdParam": "taskId", "locations": ["record_more"],
            "ai": {"exposed": true, "requiresConfirmation": true,
                   "description": "Purges the task in the tracker; it cannot be undone."}
        }));
        a.extend(obj(extra));
        Value::Object(a)
    };
    let write = |patch: Value| {
        json!({
            "name": "purge", "operation": "update", "patch": patch, "locations": ["record_more"],
            "ai": {"exposed": true, "requiresConfirmation": true,
                   "description": "Archives the task for good; it cannot be undone."}
        })
    };
    let cases = [
        (
            "script target",
            purge(json!({})),
            purge(json!({"target": "purge_all"})),
            false,
        ),
        (
            "script body",
            purge(json!({"target": null, "body": "delete(record)"})),
            purge(json!({"target": null, "body": "deleteAll()"})),
            false,
        ),
        (
            "type",
            purge(json!({})),
            purge(json!({"type": "flow"})),
            false,
        ),
        (
            "api method",
            api(json!({})),
            api(json!({"method": "PUT"})),
            false,
        ),
        (
            "api target",
            api(json!({})),
            api(json!({"target": "tenants/purge"})),
            false,
        ),
        (
            "api body",
            api(json!({})),
            api(json!({"bodyExtra": {"everything": true}})),
            false,
        ),
        (
            "api record id parameter",
            api(json!({})),
            api(json!({"recordIdParam": "tenantId"})),
            false,
        ),
        (
            "patch",
            write(json!({"status": "archived"})),
            write(json!({"status": "deleted"})),
            false,
        ),
        (
            "parameter schema",
            purge(json!({"params": [{"name": "note", "type": "text"}]})),
            purge(json!({"params": [{"name": "note", "type": "number"}]})),
            false,
        ),
        (
            "description and label only",
            purge(json!({"label": "Purge"})),
            purge(json!({
                "label": "Purge for good",
                "successMessage": "Gone.",
                "ai": {"exposed": true, "description": "Deletes the task and every trace of it, for good."}
            })),
            true,
        ),
        (
            "key order and number spelling",
            api(json!({"bodyExtra": {"a": 1, "b": 2.0}})),
            api(json!({"bodyExtra": {"b": 2, "a": 1.0}})),
            true,
        ),
    ];
    for (what, v1, v2, runs) in cases {
        let (row, dispatched) = approve_under_then_execute_under(v1, v2, json!({"recordId": "t1"}));
        if runs {
            assert_eq!(row.state, State::Executed, "{what}: {row:?}");
            assert_eq!(dispatched.len(), 1, "{what}");
        } else {
            assert!(dispatched.is_empty(), "{what}: ran {dispatched:?}");
            assert_eq!(row.state, State::Failed, "{what}");
            assert!(
                row.error
                    .as_deref()
                    .unwrap_or_default()
                    .contains("the action changed since it was approved"),
                "{what}: {row:?}"
            );
        }
    }
}

#[test]
fn a_reused_tool_call_id_never_hands_one_callers_result_to_another() {
    let dir = scratch_dir("dedup");
    let db = dir.join("q.db");
    let host = host();
    let two = obj(json!({"objects": [{
        "name": "task",
        "fields": {"title": {"type": "text"}},
        "actions": [
            purge(json!({})),
            purge(json!({"name": "archive", "target": "archive_one"}))
        ]
    }]}));
    let queue = Arc::new(ApprovalQueue::new(Arc::new(
        SqliteStore::open(&db).unwrap(),
    )));
    let mut registry = ToolRegistry::new(host.services(Some(queue.clone())));
    let (_, refused) = registry.register_stack(&two);
    assert!(refused.is_empty(), "{refused:?}");

    let alice = block(registry.call(
        "action_purge",
        json!({"recordId": "t1"}),
        &ctx("alice", "call-1"),
    ));
    let alice_id = alice["pendingActionId"].as_str().unwrap().to_owned();
    let hash = queue.get(&alice_id).unwrap().input_sha256;
    queue.approve(&alice_id, "operator", &hash).unwrap();
    let report = block(registry.execute_approved(&ExecuteOptions::default())).unwrap();
    assert_eq!(report.executed, std::slice::from_ref(&alice_id));

    // Bob, in the same conversation, reuses Alice's tool-call id: his own
    // request is queued; he does not get her result.
    let bob = block(registry.call(
        "action_purge",
        json!({"recordId": "t1"}),
        &ctx("bob", "call-1"),
    ));
    assert_eq!(bob["status"], "pending_approval", "{bob}");
    let bob_id = bob["pendingActionId"].as_str().unwrap();
    assert_ne!(bob_id, alice_id);
    assert_eq!(queue.get(bob_id).unwrap().proposer.id, "bob");

    // Another tool under the same id is another request too.
    let other = block(registry.call(
        "action_archive",
        json!({"recordId": "t1"}),
        &ctx("alice", "call-1"),
    ));
    assert_eq!(other["status"], "pending_approval", "{other}");
    let other_id = other["pendingActionId"].as_str().unwrap();
    assert_ne!(other_id, alice_id);
    assert_ne!(other_id, bob_id);
    assert_eq!(queue.get(other_id).unwrap().tool_name, "action_archive");

    // Alice replaying her own call still gets her own outcome.
    let again = block(registry.call(
        "action_purge",
        json!({"recordId": "t1"}),
        &ctx("alice", "call-1"),
    ));
    assert_eq!(again["ok"], true, "{again}");
    assert_eq!(again["message"], "Action 'purge' executed successfully.");
    assert_eq!(host.dispatches().len(), 1);
}

/// Writes the queue file objectstack-bridge 0.1 left: schema version 1.
fn load_v1(db: &Path) {
    let sql = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/approval-queue-v1.sql"
    ))
    .unwrap();
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
fn a_version_1_queue_upgrades_when_a_host_opens_it_and_its_unbound_approval_never_runs() {
    let dir = scratch_dir("v1");
    let db = dir.join("q.db");
    load_v1(&db);
    assert_eq!(user_version(&db), 1);
    let host = host();
    host.add_record("task", json!({"id": "t2"}));
    let registry = registry(&host, &db, &stack(purge(json!({}))));
    assert_eq!(user_version(&db), 3, "the host's open upgrades the file");

    // Approved under 0.1, when nothing recorded what was approved: refused.
    let report = block(registry.execute_approved(&ExecuteOptions::default())).unwrap();
    assert_eq!(report.failed, ["pa_000000000000000000000002"], "{report:?}");
    assert!(host.dispatches().is_empty(), "{:?}", host.dispatches());
    let row = queue(&registry).get("pa_000000000000000000000002").unwrap();
    assert_eq!(row.state, State::Failed);
    assert_eq!(row.executable_sha256, None);
    let error = row.error.unwrap_or_default();
    assert!(
        error.contains("approved before definitions were bound; propose it again"),
        "{error}"
    );
    // What 0.1 executed keeps its outcome.
    let done = queue(&registry).get("pa_000000000000000000000003").unwrap();
    assert_eq!(done.state, State::Executed);
    assert_eq!(done.result, Some(json!({"ok": true, "action": "purge"})));

    // The dedup keys were re-keyed: Alice's replay finds her row, Bob's
    // reuse of her id is his own request.
    let replay = block(registry.call(
        "action_purge",
        json!({"recordId": "t1"}),
        &ctx("alice", "call-1"),
    ));
    assert_eq!(replay["pendingActionId"], "pa_000000000000000000000001");
    let bob = block(registry.call(
        "action_purge",
        json!({"recordId": "t1"}),
        &ctx("bob", "call-1"),
    ));
    assert_eq!(bob["status"], "pending_approval", "{bob}");
    assert_ne!(bob["pendingActionId"], "pa_000000000000000000000001");

    // The upgraded file still guards itself, the new column included.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let terminal = conn.execute(
        "UPDATE pending_actions SET reason = 'x' WHERE id = 'pa_000000000000000000000003'",
        [],
    );
    assert!(terminal.is_err());
    let rebind = conn.execute(
        "UPDATE pending_actions SET executable_sha256 = 'x' WHERE id = 'pa_000000000000000000000001'",
        [],
    );
    assert!(
        rebind.unwrap_err().to_string().contains("never changes"),
        "what was proposed never changes"
    );
}

#[test]
fn a_stored_input_the_current_schema_rejects_is_never_dispatched() {
    // A proposal made by hand, bypassing the call's validation, with the
    // right digest: the executor still validates the input before it runs.
    let dir = scratch_dir("revalidate");
    let db = dir.join("q.db");
    let host = host();
    let registry = registry(
        &host,
        &db,
        &stack(purge(
            json!({"params": [{"name": "note", "type": "text", "required": true}]}),
        )),
    );
    let queue = queue(&registry);
    let digest = registry
        .executable_sha256("action_purge")
        .unwrap()
        .to_owned();
    assert_eq!(digest.len(), 64);
    assert_eq!(registry.executable_sha256("no_such_tool"), None);
    let mut ids = Vec::new();
    for input in [
        json!({"recordId": "t1", "note": 5}),
        json!({"recordId": "t1"}),
        json!({"recordId": "t1", "note": "ok", "extra": true}),
    ] {
        let row = queue
            .propose(objectstack_bridge::approval::Proposal {
                tool_name: "action_purge".into(),
                action_name: "purge".into(),
                object_name: Some("task".into()),
                input: obj(input),
                executable_sha256: digest.clone(),
                conversation_id: None,
                message_id: None,
                tool_call_id: None,
                trace_id: None,
                proposer: Actor::new("alice"),
            })
            .unwrap()
            .action;
        queue
            .approve(&row.id, "operator", &row.input_sha256)
            .unwrap();
        ids.push(row.id);
    }
    let report = block(registry.execute_approved(&ExecuteOptions::default())).unwrap();
    assert_eq!(report.failed, ids, "{report:?}");
    assert!(host.dispatches().is_empty(), "{:?}", host.dispatches());
    for id in &ids {
        let error = queue.get(id).unwrap().error.unwrap_or_default();
        assert!(
            error.starts_with(
                "refused to dispatch: the stored input does not match the parameters of `action_purge`"
            ),
            "{error}"
        );
    }

    // A proposal needs a digest that looks like one.
    let err = queue
        .propose(objectstack_bridge::approval::Proposal {
            tool_name: "action_purge".into(),
            action_name: "purge".into(),
            object_name: None,
            input: Map::new(),
            executable_sha256: "v1".into(),
            conversation_id: None,
            message_id: None,
            tool_call_id: None,
            trace_id: None,
            proposer: Actor::new("alice"),
        })
        .unwrap_err();
    assert!(err.to_string().contains("64 lowercase hex digits"), "{err}");
}

/// A queue file whose writes of outcomes fail: the database lost just
/// after a dispatch.
struct LosesOutcomes(Arc<dyn objectstack_bridge::approval::ApprovalStore>);

impl objectstack_bridge::approval::ApprovalStore for LosesOutcomes {
    fn insert(
        &self,
        row: &objectstack_bridge::approval::PendingAction,
    ) -> Result<(objectstack_bridge::approval::PendingAction, bool), StoreError> {
        self.0.insert(row)
    }

    fn get(
        &self,
        id: &str,
    ) -> Result<Option<objectstack_bridge::approval::PendingAction>, StoreError> {
        self.0.get(id)
    }

    fn list(
        &self,
        filter: &objectstack_bridge::approval::ListFilter,
    ) -> Result<Vec<Result<objectstack_bridge::approval::PendingAction, StoreError>>, StoreError>
    {
        self.0.list(filter)
    }

    fn compare_and_set(
        &self,
        expected_version: u64,
        next: &objectstack_bridge::approval::PendingAction,
    ) -> Result<objectstack_bridge::approval::Cas, StoreError> {
        if matches!(next.state, State::Executed | State::Failed | State::InDoubt) {
            return Err(StoreError::Backend {
                operation: "recording an outcome",
                message: "connection lost".into(),
            });
        }
        self.0.compare_and_set(expected_version, next)
    }

    fn claim_next(
        &self,
        tools: &[String],
        claim: &mut dyn FnMut(
            &objectstack_bridge::approval::PendingAction,
        ) -> Option<objectstack_bridge::approval::PendingAction>,
    ) -> Result<Option<objectstack_bridge::approval::PendingAction>, StoreError> {
        self.0.claim_next(tools, claim)
    }
}

#[test]
fn a_dispatch_whose_outcome_cannot_be_recorded_says_it_ran() {
    let dir = scratch_dir("outcome-lost");
    let db = dir.join("q.db");
    let host = host();
    let store = Arc::new(LosesOutcomes(Arc::new(SqliteStore::open(&db).unwrap())));
    let queue = Arc::new(ApprovalQueue::new(store));
    let mut registry = ToolRegistry::new(host.services(Some(queue)));
    let (_, refused) = registry.register_stack(&stack(purge(json!({}))));
    assert!(refused.is_empty(), "{refused:?}");
    let out = block(registry.call(
        "action_purge",
        json!({"recordId": "t1"}),
        &ctx("alice", "call-1"),
    ));
    let id = out["pendingActionId"].as_str().unwrap().to_owned();
    let queue = registry.services().approvals.clone().unwrap();
    let row = queue.get(&id).unwrap();
    queue.approve(&id, "operator", &row.input_sha256).unwrap();
    let err = block(registry.execute_pending(&id, &ExecuteOptions::default())).unwrap_err();
    assert!(
        matches!(
            &err,
            ApprovalError::OutcomeNotRecorded {
                outcome: "executed",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("check the target system"), "{err}");
    assert_eq!(host.dispatches().len(), 1, "it ran, once");
    assert_eq!(queue.get(&id).unwrap().state, State::Executing);
}
