//! Calling materialised tools: validation, actor, record loading, dispatch
//! by route, envelopes, and the approval path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;

use std::sync::Arc;

use approval_support::{FakeHost, Seen, obj, script_action, script_definition};
use objectstack_bridge::approval::{ApprovalQueue, MemoryStore, State};
use objectstack_bridge::runtime::{
    Actor, ArgumentLimits, CallContext, ExecuteOptions, HostError, HostServices, Invocation,
    RegisterError, ToolHandler, ToolRegistry,
};
use objectstack_spec::AIToolDefinition;
use serde_json::{Map, Value, json};

fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn queue() -> Arc<ApprovalQueue> {
    Arc::new(ApprovalQueue::new(Arc::new(MemoryStore::new())))
}

fn ctx(actor: Option<&str>, tool_call: &str) -> CallContext {
    CallContext {
        actor: actor.map(Actor::new),
        conversation_id: Some("conv-1".into()),
        message_id: Some("msg-1".into()),
        tool_call_id: Some(tool_call.into()),
        trace_id: Some("trace-1".into()),
    }
}

fn definition(name: &str, parameters: Value) -> AIToolDefinition {
    AIToolDefinition {
        name: name.into(),
        label: None,
        description: "A tool used by the runtime tests to check dispatch.".into(),
        parameters: obj(parameters),
        category: None,
        output_schema: None,
        object_name: None,
        requires_confirmation: None,
    }
}

fn host_with_task() -> Arc<FakeHost> {
    let host = FakeHost::new();
    host.add_record(
        "task",
        json!({"id": "t1", "number": "T-001", "title": "Write docs"}),
    );
    host.add_record(
        "task",
        json!({"id": "secret", "hiddenFrom": ["ai_agent", "u1"]}),
    );
    host
}

#[test]
fn script_call_loads_the_record_removes_record_id_and_wraps_the_result() {
    let host = host_with_task();
    host.answer_with(Ok(json!({"completed": 1})));
    let mut registry = ToolRegistry::new(host.services(None));
    registry
        .register_action(
            script_definition("complete", false),
            script_action("complete", false),
        )
        .unwrap();
    let out = block(registry.call(
        "action_complete",
        json!({"recordId": "t1", "note": "done"}),
        &ctx(Some("u1"), "c1"),
    ));
    assert_eq!(
        out,
        json!({"ok": true, "action": "complete", "objectName": "task", "recordId": "t1",
               "message": "Action 'complete' executed successfully.", "result": {"completed": 1}})
    );
    let seen = host.seen();
    assert_eq!(
        seen[0],
        Seen::Find {
            object: "task".into(),
            id: "t1".into(),
            actor: "u1".into()
        }
    );
    let Seen::Script(req) = &seen[1] else {
        panic!("{seen:?}")
    };
    assert_eq!(req.object.as_deref(), Some("task"));
    assert_eq!(req.target.as_deref(), Some("scripts/complete"));
    assert_eq!(req.params, obj(json!({"note": "done"})));
    assert_eq!(req.record.as_ref().unwrap()["title"], "Write docs");
    assert_eq!(req.actor.id, "u1");
    assert_eq!(req.context.trace_id.as_deref(), Some("trace-1"));
    assert_eq!(req.idempotency_key, None);
}

#[test]
fn actor_defaults_to_principal_then_ai_agent() {
    let host = host_with_task();
    let mut registry = ToolRegistry::new(host.services(None));
    registry
        .register_action(
            script_definition("complete", false),
            script_action("complete", false),
        )
        .unwrap();
    block(registry.call(
        "action_complete",
        json!({"recordId": "t1"}),
        &ctx(None, "c1"),
    ));
    let Seen::Script(req) = &host.dispatches()[0] else {
        panic!()
    };
    assert_eq!(req.actor, Actor::ai_agent());
    assert_eq!(req.actor.name.as_deref(), Some("AI Assistant"));

    let host = host_with_task();
    let mut services = host.services(None);
    services.principal = Some(Actor::new("svc-bot"));
    let mut registry = ToolRegistry::new(services);
    registry
        .register_action(
            script_definition("complete", false),
            script_action("complete", false),
        )
        .unwrap();
    block(registry.call(
        "action_complete",
        json!({"recordId": "t1"}),
        &ctx(None, "c1"),
    ));
    let Seen::Script(req) = &host.dispatches()[0] else {
        panic!()
    };
    assert_eq!(req.actor.id, "svc-bot");
}

#[test]
fn missing_or_invisible_record_is_an_error_and_nothing_runs() {
    let host = host_with_task();
    let mut def = script_definition("complete", false);
    // Without `required`, the runtime itself insists on recordId.
    def.parameters.insert("required".into(), json!([]));
    let mut registry = ToolRegistry::new(host.services(None));
    registry
        .register_action(def, script_action("complete", false))
        .unwrap();

    let out = block(registry.call("action_complete", json!({}), &ctx(Some("u1"), "c1")));
    assert_eq!(out["ok"], false);
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("`recordId` is required"),
        "{out}"
    );

    let out = block(registry.call(
        "action_complete",
        json!({"recordId": "nope"}),
        &ctx(None, "c2"),
    ));
    assert_eq!(out["error"], "task record 'nope' was not found");
    assert_eq!(out["recordId"], "nope");

    // A record the actor may not see reads exactly like a missing one.
    let out = block(registry.call(
        "action_complete",
        json!({"recordId": "secret"}),
        &ctx(None, "c3"),
    ));
    assert_eq!(out["error"], "task record 'secret' was not found");
    assert!(host.dispatches().is_empty());
}

#[test]
fn arguments_are_validated_with_every_violation_and_its_path() {
    let host = host_with_task();
    let mut registry = ToolRegistry::new(host.services(None));
    registry
        .register_action(
            script_definition("complete", false),
            script_action("complete", false),
        )
        .unwrap();
    let out = block(registry.call(
        "action_complete",
        json!({"note": 5, "colour": "red"}),
        &ctx(None, "c1"),
    ));
    assert_eq!(out["ok"], false);
    assert_eq!(out["tool"], "action_complete");
    let paths: Vec<&str> = out["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 3, "{out}");
    assert!(paths.contains(&"note"), "{out}");
    assert!(paths.contains(&""), "{out}");
    let error = out["error"].as_str().unwrap();
    assert!(error.contains("3 problems"), "{error}");
    assert!(error.contains("nothing was executed"), "{error}");
    assert!(error.contains("- note:"), "{error}");
    assert!(
        host.seen().is_empty(),
        "nothing runs, not even the record load"
    );
}

#[test]
fn bad_input_shapes_are_refused_before_anything_runs() {
    let host = host_with_task();
    let mut services = host.services(None);
    services.limits = ArgumentLimits {
        max_bytes: 4096,
        max_depth: 8,
    };
    let mut registry = ToolRegistry::new(services);
    let open = definition("open_tool", json!({"type": "object"}));
    let mut def = script_definition("complete", false);
    def.parameters = open.parameters.clone();
    registry
        .register_action(def, script_action("complete", false))
        .unwrap();

    let c = ctx(None, "c");
    let out = block(registry.call("no_such_tool", json!({}), &c));
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("no tool named `no_such_tool`"),
        "{out}"
    );
    for wrong in [json!([1]), json!("recordId"), json!(3)] {
        let out = block(registry.call("action_complete", wrong, &c));
        assert!(
            out["error"]
                .as_str()
                .unwrap()
                .contains("must be a JSON object"),
            "{out}"
        );
    }
    let mut deep = json!("x");
    for _ in 0..1000 {
        deep = json!({"a": deep});
    }
    let out = block(registry.call(
        "action_complete",
        json!({"recordId": "t1", "deep": deep}),
        &c,
    ));
    assert!(
        out["error"].as_str().unwrap().contains("deeper than 8"),
        "{out}"
    );
    let out = block(registry.call(
        "action_complete",
        json!({"recordId": "t1", "big": "x".repeat(5000)}),
        &c,
    ));
    assert!(
        out["error"].as_str().unwrap().contains("larger than 4096"),
        "{out}"
    );
    let out = block(registry.call_json("action_complete", &"x".repeat(5000), &c));
    assert!(
        out["error"].as_str().unwrap().contains("at most 4096"),
        "{out}"
    );
    let out = block(registry.call_json("action_complete", "{\"recordId\": ", &c));
    assert!(
        out["error"].as_str().unwrap().contains("not valid JSON"),
        "{out}"
    );
    let out = block(registry.call("action_complete", json!({"recordId": 7}), &c));
    assert!(
        out["error"].as_str().unwrap().contains("must be a string"),
        "{out}"
    );
    assert!(host.seen().is_empty());
    // A well-formed call through call_json does run.
    let out = block(registry.call_json("action_complete", r#"{"recordId":"t1"}"#, &c));
    assert_eq!(out["ok"], true, "{out}");
}

#[test]
fn flow_success_false_is_an_error_and_result_is_kept_otherwise() {
    let host = host_with_task();
    let mut registry = ToolRegistry::new(host.services(None));
    let action = obj(json!({
        "name": "escalate", "objectName": "task", "type": "flow", "target": "escalation_flow",
        "successMessage": "Escalated.",
        "ai": {"exposed": true, "description": "Escalates the task to the on-call manager right away."}
    }));
    registry
        .register_action(
            definition("action_escalate", json!({"type": "object"})),
            action,
        )
        .unwrap();
    host.answer_with(Ok(json!({"success": true, "output": {"ticket": 9}})));
    let out = block(registry.call("action_escalate", json!({"level": 2}), &ctx(None, "c1")));
    assert_eq!(
        out,
        json!({"ok": true, "action": "escalate", "objectName": "task", "message": "Escalated.",
               "result": {"success": true, "output": {"ticket": 9}}})
    );
    let Seen::Flow(req) = &host.dispatches()[0] else {
        panic!()
    };
    assert_eq!(req.flow, "escalation_flow");
    assert_eq!(req.action, "escalate");
    assert_eq!(req.params, obj(json!({"level": 2})));
    assert_eq!(req.record, None);

    host.answer_with(Ok(
        json!({"success": false, "error": "manager unavailable"}),
    ));
    let out = block(registry.call("action_escalate", json!({}), &ctx(None, "c2")));
    assert_eq!(
        out,
        json!({"ok": false, "action": "escalate", "objectName": "task",
               "error": "flow 'escalation_flow' failed: manager unavailable"})
    );
    host.answer_with(Err(HostError::failed("engine down")));
    let out = block(registry.call("action_escalate", json!({}), &ctx(None, "c3")));
    assert_eq!(out["error"], "engine down");
}

#[test]
fn field_write_patches_the_record_through_the_data_engine() {
    let host = host_with_task();
    let mut registry = ToolRegistry::new(host.services(None));
    let action = obj(json!({
        "name": "mark_done", "objectName": "task", "operation": "update",
        "patch": {"status": "done"}, "locations": ["record_more"],
        "ai": {"exposed": true, "description": "Marks the task as done without any other change."}
    }));
    registry
        .register_action(
            definition("action_mark_done", json!({"type": "object"})),
            action,
        )
        .unwrap();
    let out = block(registry.call(
        "action_mark_done",
        json!({"recordId": "t1"}),
        &ctx(Some("u9"), "c"),
    ));
    assert_eq!(out["ok"], true, "{out}");
    let Seen::FieldWrite(req) = &host.dispatches()[0] else {
        panic!()
    };
    assert_eq!(req.object, "task");
    assert_eq!(req.record_id, "t1");
    assert_eq!(req.patch, obj(json!({"status": "done"})));
    assert_eq!(req.actor.id, "u9");
}

#[test]
fn api_call_gets_the_built_body_and_method() {
    let host = host_with_task();
    let mut registry = ToolRegistry::new(host.services(None));
    let action = obj(json!({
        "name": "send", "objectName": "task", "type": "api", "target": "/hooks/send",
        "method": "put", "bodyShape": {"wrap": "payload"}, "recordIdParam": "taskNo",
        "recordIdField": "number", "bodyExtra": {"source": "ai"}, "locations": ["list_item"],
        "ai": {"exposed": true, "description": "Sends the task to the external tracker system."}
    }));
    registry
        .register_action(definition("action_send", json!({"type": "object"})), action)
        .unwrap();
    let out = block(registry.call(
        "action_send",
        json!({"recordId": "t1", "urgent": true}),
        &ctx(None, "c"),
    ));
    assert_eq!(out["ok"], true, "{out}");
    let Seen::Api(req) = &host.dispatches()[0] else {
        panic!()
    };
    assert_eq!(req.method, "PUT");
    assert_eq!(req.target, "/hooks/send");
    assert_eq!(
        req.body,
        Some(json!({"payload": {"urgent": true}, "taskNo": "T-001", "source": "ai"}))
    );
}

/// A host tool that answers with its arguments and actor.
struct Echo;

#[async_trait::async_trait]
impl ToolHandler for Echo {
    async fn call(
        &self,
        arguments: Map<String, Value>,
        inv: &Invocation,
    ) -> Result<Value, HostError> {
        Ok(json!({"echo": arguments, "actor": inv.actor.id}))
    }
}

#[test]
fn registration_refuses_duplicates_unexposed_actions_and_missing_services() {
    let host = host_with_task();
    let mut registry = ToolRegistry::new(HostServices {
        data_engine: Some(host.clone()),
        ..HostServices::default()
    });
    let platform = definition(
        "action_complete",
        json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
    );
    registry.register(platform, Arc::new(Echo)).unwrap();
    // Platform tools win: the action with the same name is refused.
    let err = registry
        .register_action(
            script_definition("complete", false),
            script_action("complete", false),
        )
        .unwrap_err();
    assert_eq!(err, RegisterError::Duplicate("action_complete".into()));
    let out = block(registry.call("action_complete", json!({"x": 1}), &ctx(None, "c")));
    assert_eq!(out, json!({"echo": {"x": 1}, "actor": "ai_agent"}));
    let out = block(registry.call("action_complete", json!({"x": "one"}), &ctx(None, "c")));
    assert_eq!(out["violations"][0]["path"], "x");

    let mut hidden = script_action("hidden", false);
    hidden.insert("ai".into(), json!({"exposed": false}));
    let err = registry
        .register_action(script_definition("hidden", false), hidden)
        .unwrap_err();
    assert!(
        matches!(err, RegisterError::NotMaterialisable { .. }),
        "{err}"
    );

    // Needs confirmation, no queue: never runs unattended.
    let err = registry
        .register_action(script_definition("wipe", true), script_action("wipe", true))
        .unwrap_err();
    assert!(err.to_string().contains("approval queue"), "{err}");
    let flow = obj(json!({"name": "f", "type": "flow", "target": "x",
        "ai": {"exposed": true, "description": "Runs a flow that nobody has wired up yet here."}}));
    let err = registry
        .register_action(definition("action_f", json!({"type": "object"})), flow)
        .unwrap_err();
    assert!(err.to_string().contains("automation service"), "{err}");
    let bad = definition("bad_schema", json!({"type": 12}));
    let err = registry.register(bad, Arc::new(Echo)).unwrap_err();
    assert!(matches!(err, RegisterError::InvalidSchema { .. }), "{err}");
    assert_eq!(
        registry
            .definitions()
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["action_complete"]
    );
}

#[test]
fn confirmation_queues_instead_of_running_then_approval_runs_it_once() {
    let host = host_with_task();
    let queue = queue();
    let mut registry = ToolRegistry::new(host.services(Some(queue.clone())));
    registry
        .register_action(script_definition("wipe", true), script_action("wipe", true))
        .unwrap();
    let call = || {
        block(registry.call(
            "action_wipe",
            json!({"recordId": "t1", "note": "x"}),
            &ctx(Some("u1"), "call-7"),
        ))
    };
    let out = call();
    assert_eq!(out["ok"], true);
    assert_eq!(out["status"], "pending_approval");
    let id = out["pendingActionId"].as_str().unwrap().to_owned();
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("Do not call this tool again"),
        "{out}"
    );
    assert!(out["message"].as_str().unwrap().contains(&id), "{out}");
    assert!(host.dispatches().is_empty(), "nothing ran");

    // The same tool call again: the same pending action.
    assert_eq!(call()["pendingActionId"], id.as_str());
    let rows = queue.list(&Default::default()).unwrap().rows;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.input, obj(json!({"recordId": "t1", "note": "x"})));
    assert_eq!(row.tool_name, "action_wipe");
    assert_eq!(row.object_name.as_deref(), Some("task"));
    assert_eq!(row.proposer.id, "u1");
    assert_eq!(row.message_id.as_deref(), Some("msg-1"));

    // A wrong record id is reported at once, and nothing is queued.
    let out = block(registry.call(
        "action_wipe",
        json!({"recordId": "zz"}),
        &ctx(None, "call-8"),
    ));
    assert_eq!(out["error"], "task record 'zz' was not found");
    assert_eq!(queue.list(&Default::default()).unwrap().rows.len(), 1);

    queue.approve(&id, "alice", &row.input_sha256).unwrap();
    let report = block(registry.execute_approved(&ExecuteOptions::default())).unwrap();
    assert_eq!(report.executed, vec![id.clone()]);
    let again = block(registry.execute_approved(&ExecuteOptions::default())).unwrap();
    assert!(again.executed.is_empty());
    let dispatches = host.dispatches();
    assert_eq!(dispatches.len(), 1);
    let Seen::Script(req) = &dispatches[0] else {
        panic!()
    };
    assert_eq!(req.idempotency_key.as_deref(), Some(id.as_str()));
    assert_eq!(req.actor.id, "u1", "runs under the proposer");
    assert_eq!(req.params, obj(json!({"note": "x"})));
    let done = queue.get(&id).unwrap();
    assert_eq!(done.state, State::Executed);
    assert_eq!(done.result.as_ref().unwrap()["ok"], true);
    // Replaying the tool call now reports the outcome.
    assert_eq!(call()["message"], "Action 'wipe' executed successfully.");
}

#[test]
fn a_handler_reporting_ok_false_marks_the_pending_action_failed() {
    let host = host_with_task();
    host.answer_with(Err(HostError::failed("permission denied for u1")));
    let queue = queue();
    let mut registry = ToolRegistry::new(host.services(Some(queue.clone())));
    registry
        .register_action(script_definition("wipe", true), script_action("wipe", true))
        .unwrap();
    let out = block(registry.call(
        "action_wipe",
        json!({"recordId": "t1"}),
        &ctx(Some("u1"), "c"),
    ));
    let id = out["pendingActionId"].as_str().unwrap();
    let hash = queue.get(id).unwrap().input_sha256;
    queue.approve(id, "alice", &hash).unwrap();
    let report = block(registry.execute_approved(&ExecuteOptions::default())).unwrap();
    assert_eq!(report.failed, vec![id.to_owned()]);
    let row = queue.get(id).unwrap();
    assert_eq!(row.state, State::Failed);
    assert_eq!(row.error.as_deref(), Some("permission denied for u1"));

    // A rejected proposal tells the model it did not run.
    let out = block(registry.call(
        "action_wipe",
        json!({"recordId": "t1"}),
        &ctx(Some("u1"), "c2"),
    ));
    let id = out["pendingActionId"].as_str().unwrap();
    queue.reject(id, "bob", Some("not today")).unwrap();
    let out = block(registry.call(
        "action_wipe",
        json!({"recordId": "t1"}),
        &ctx(Some("u1"), "c2"),
    ));
    assert_eq!(out["ok"], false);
    assert_eq!(out["status"], "rejected");
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("rejected by bob: not today"),
        "{out}"
    );
}

#[test]
fn a_hosts_error_loses_its_userinfo_before_the_model_or_the_queue_sees_it() {
    // A host's own client reporting the URL it called, credentials and all.
    let host = host_with_task();
    host.answer_with(Err(HostError::Transport {
        method: "POST".into(),
        url: "http://svc:TOPSECRET@billing.internal/api/wipe".into(),
        message: "connection reset (proxy http://ops:HUNTER2@proxy:3128)".into(),
    }));
    let queue = queue();
    let mut registry = ToolRegistry::new(host.services(Some(queue.clone())));
    registry
        .register_action(script_definition("wipe", true), script_action("wipe", true))
        .unwrap();
    let out = block(registry.call(
        "action_wipe",
        json!({"recordId": "t1"}),
        &ctx(Some("u1"), "c"),
    ));
    let id = out["pendingActionId"].as_str().unwrap().to_owned();
    let hash = queue.get(&id).unwrap().input_sha256;
    queue.approve(&id, "alice", &hash).unwrap();
    let report = block(registry.execute_approved(&ExecuteOptions::default())).unwrap();
    assert_eq!(report.failed, vec![id.clone()]);
    let row = queue.get(&id).unwrap();
    let stored = serde_json::to_string(&row).unwrap();
    assert!(
        !stored.contains("TOPSECRET") && !stored.contains("HUNTER2"),
        "{stored}"
    );
    let error = row.error.unwrap_or_default();
    assert!(
        error.contains("http://***@billing.internal/api/wipe")
            && error.contains("http://***@proxy:3128"),
        "{error}"
    );

    // The model is told the same, when the action runs at once.
    let mut direct = ToolRegistry::new(host.services(None));
    direct
        .register_action(
            script_definition("wipe", false),
            script_action("wipe", false),
        )
        .unwrap();
    let out = block(direct.call(
        "action_wipe",
        json!({"recordId": "t1"}),
        &ctx(Some("u1"), "d"),
    ));
    assert_eq!(out["ok"], false, "{out}");
    assert!(!out.to_string().contains("TOPSECRET"), "{out}");
    assert!(
        out["error"].as_str().unwrap().contains("http://***@"),
        "{out}"
    );
}

#[test]
fn register_stack_materialises_against_the_wiring() {
    let host = host_with_task();
    let stack = obj(json!({
        "objects": [{
            "name": "task",
            "fields": {"title": {"type": "text", "label": "Title"}},
            "actions": [
                {"name": "complete", "type": "script", "target": "t", "locations": ["record_header"],
                 "ai": {"exposed": true, "description": "Completes the task the user is looking at."}},
                {"name": "purge", "type": "script", "target": "p", "mode": "delete",
                 "ai": {"exposed": true, "description": "Deletes every completed task in one go, forever."}},
                {"name": "ui", "type": "modal", "target": "m",
                 "ai": {"exposed": true, "description": "Opens a dialog that only a human can fill in."}}
            ]
        }]
    }));
    let mut registry = ToolRegistry::new(host.services(None));
    let (materialised, refused) = registry.register_stack(&stack);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(materialised.registered.len(), 1);
    assert_eq!(materialised.skipped.len(), 2);
    assert!(registry.contains("action_complete"));
    assert!(
        !registry.contains("action_purge"),
        "needs confirmation and no queue"
    );
    let out = block(registry.call(
        "action_complete",
        json!({"recordId": "t1"}),
        &ctx(None, "c"),
    ));
    assert_eq!(out["ok"], true, "{out}");

    let mut registry = ToolRegistry::new(host.services(Some(queue())));
    let (_, refused) = registry.register_stack(&stack);
    assert!(refused.is_empty());
    assert!(registry.contains("action_purge"));
    assert_eq!(
        registry
            .definition("action_purge")
            .unwrap()
            .requires_confirmation,
        Some(true)
    );
}

#[test]
fn a_field_write_outside_a_row_location_takes_a_required_record_id_and_runs() {
    // `operation: update` writes one record whatever its locations say, so
    // its tool takes the record's id, and a call with it runs.
    let host = host_with_task();
    let stack = obj(json!({
        "objects": [{
            "name": "task",
            "actions": [{
                "name": "mark_done", "operation": "update", "patch": {"status": "done"},
                "locations": ["list_toolbar"],
                "ai": {"exposed": true, "description": "Marks the task as done without any other change."}
            }]
        }]
    }));
    let mut registry = ToolRegistry::new(host.services(None));
    let (materialised, refused) = registry.register_stack(&stack);
    assert!(refused.is_empty(), "{refused:?}");
    let parameters = &materialised.registered[0].definition.parameters;
    assert_eq!(
        parameters["properties"]["recordId"],
        json!({"type": "string", "description": "The task record id to act on."})
    );
    assert_eq!(parameters["required"], json!(["recordId"]));
    let out = block(registry.call(
        "action_mark_done",
        json!({"recordId": "t1"}),
        &ctx(Some("u9"), "c"),
    ));
    assert_eq!(out["ok"], true, "{out}");
    let Seen::FieldWrite(req) = &host.dispatches()[0] else {
        panic!("{:?}", host.dispatches())
    };
    assert_eq!(
        (req.object.as_str(), req.record_id.as_str()),
        ("task", "t1")
    );
    // Without it the arguments do not validate, and nothing runs.
    let out = block(registry.call("action_mark_done", json!({}), &ctx(None, "c2")));
    assert_eq!(out["ok"], false, "{out}");
    assert!(out["error"].as_str().unwrap().contains("recordId"), "{out}");
    assert_eq!(host.dispatches().len(), 1);
}

#[test]
fn a_row_action_lists_the_record_id_it_requires() {
    // The runtime requires `recordId` of every row-context action, so its
    // schema says so (upstream's required it only with `recordIdParam` or
    // `recordIdField`).
    let host = host_with_task();
    let stack = obj(json!({
        "objects": [{
            "name": "task",
            "actions": [{
                "name": "complete", "type": "script", "target": "t", "locations": ["record_header"],
                "ai": {"exposed": true, "description": "Completes the task the user is looking at."}
            }]
        }]
    }));
    let mut registry = ToolRegistry::new(host.services(None));
    let (materialised, refused) = registry.register_stack(&stack);
    assert!(refused.is_empty(), "{refused:?}");
    let parameters = &materialised.registered[0].definition.parameters;
    assert_eq!(parameters["required"], json!(["recordId"]));
    let out = block(registry.call("action_complete", json!({}), &ctx(None, "c")));
    assert_eq!(out["ok"], false, "{out}");
    assert!(host.dispatches().is_empty());
}

#[test]
fn a_registered_schema_is_held_once_and_definitions_come_back_whole() {
    let host = host_with_task();
    let stack = obj(json!({
        "objects": [{
            "name": "task",
            "actions": [
                {"name": "complete", "type": "script", "target": "t", "locations": ["record_header"],
                 "params": [{"name": "note", "type": "text", "label": "Note"}],
                 "ai": {"exposed": true, "description": "Completes the task the user is looking at."}}
            ]
        }]
    }));
    let mut registry = ToolRegistry::new(host.services(None));
    let (materialised, refused) = registry.register_stack(&stack);
    assert!(refused.is_empty(), "{refused:?}");
    let registered = &materialised.registered[0].definition;
    // A copy handed out is the definition registered, schema included.
    let definition = registry.definition("action_complete").unwrap();
    assert_eq!(&definition, registered);
    assert_eq!(registry.definitions(), vec![registered.clone()]);
    // The schema a host serves is the validator's own allocation.
    let first = registry.parameters("action_complete").unwrap();
    let again = registry.parameters("action_complete").unwrap();
    assert!(Arc::ptr_eq(first, again));
    assert_eq!(**first, registered.parameters);
    assert!(registry.parameters("action_missing").is_none());
    // A host lists the tools borrowed, in registration order, with the
    // same shared schema.
    let listed: Vec<_> = registry.listed().collect();
    assert_eq!(listed.len(), registry.len());
    assert_eq!(listed[0].name, "action_complete");
    assert_eq!(listed[0].label, registered.label.as_deref());
    assert_eq!(listed[0].description, registered.description);
    assert!(Arc::ptr_eq(listed[0].parameters, first));
    assert_eq!(registry.position("action_complete"), Some(0));
    assert_eq!(registry.position("action_missing"), None);
    assert!(registry.listed_tool("action_missing").is_none());
    assert_eq!(
        registry.listed_tool("action_complete").map(|t| t.name),
        Some("action_complete")
    );
    // And calls are still validated against it.
    let out = block(registry.call(
        "action_complete",
        json!({"recordId": "t1", "note": 5}),
        &ctx(None, "c"),
    ));
    assert_eq!(out["ok"], false, "{out}");
    assert!(host.dispatches().is_empty(), "nothing ran");
}

#[test]
fn every_field_of_a_registered_definition_comes_back() {
    let mut registry = ToolRegistry::new(host_with_task().services(None));
    let mut full = definition(
        "summarise",
        json!({"type": "object", "properties": {"topic": {"type": "string"}}}),
    );
    full.label = Some("Summarise".into());
    full.category = Some("analytics".into());
    full.output_schema = Some(obj(
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    ));
    full.object_name = Some("report".into());
    full.requires_confirmation = Some(false);
    registry.register(full.clone(), Arc::new(Echo)).unwrap();
    let bare = definition("bare", json!({"type": "object"}));
    registry.register(bare.clone(), Arc::new(Echo)).unwrap();
    assert_eq!(registry.definition("summarise"), Some(full.clone()));
    assert_eq!(registry.definitions(), vec![full, bare]);
    registry.shrink_to_fit();
    assert_eq!(registry.len(), 2);
    assert_eq!(
        registry.listed().map(|t| t.name).collect::<Vec<_>>(),
        ["summarise", "bare"]
    );
}
