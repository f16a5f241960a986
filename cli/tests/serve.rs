//! `objectstack-ai serve` end to end over stdio: the real binary spawned by
//! rmcp's client (`TokioChildProcess`), in front of a fake ObjectStack
//! server (a real HTTP server on 127.0.0.1 that records what it receives).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

#[path = "../../gateway/tests/support/fake.rs"]
mod fake;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use fake::Fake;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

const KEY: &str = "osk_test_key_0123456789";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../gateway/tests/data/helpdesk.json")
}

/// A test client: a protocol revision, an answer to elicitation (or none,
/// and then no elicitation capability), and a signal for list_changed.
#[derive(Clone)]
struct Client {
    version: ProtocolVersion,
    elicit: Option<ElicitationAction>,
    asked: Arc<std::sync::Mutex<Vec<String>>>,
    list_changed: Arc<Notify>,
}

impl Client {
    fn new(version: ProtocolVersion) -> Self {
        Client {
            version,
            elicit: None,
            asked: Arc::default(),
            list_changed: Arc::new(Notify::new()),
        }
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicit.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("gateway-test", "0"))
            .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match &request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            _ => String::new(),
        };
        self.asked.lock().unwrap().push(message);
        let action = self.elicit.clone().unwrap_or(ElicitationAction::Decline);
        Ok(ElicitResult::new(action).with_content(json!({})))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }
}

struct Gateway {
    client: RunningService<RoleClient, Client>,
    _dir: tempfile::TempDir,
    audit: PathBuf,
}

async fn spawn(
    stack: &Path,
    server: &str,
    extra: &[&str],
    key: Option<&str>,
    client: Client,
) -> Gateway {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let approvals = dir.path().join("approvals.sqlite");
    let command =
        tokio::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai")).configure(|cmd| {
            cmd.arg("serve")
                .arg("--stack")
                .arg(stack)
                .arg("--server")
                .arg(server)
                .arg("--approvals")
                .arg(&approvals)
                .arg("--audit")
                .arg(&audit)
                .args(extra)
                .env("RUST_LOG", "warn")
                .env_remove("OBJECTSTACK_API_KEY")
                .env_remove("OBJECTSTACK_EXECUTOR_KEY");
            if let Some(key) = key {
                cmd.env("OBJECTSTACK_API_KEY", key);
            }
        });
    let transport = TokioChildProcess::new(command).unwrap();
    let client = if client.version.has_initialize() {
        client.serve(transport).await.unwrap()
    } else {
        // The sessionless revision: `server/discover`, no `initialize`.
        let preferred_versions = vec![client.version.clone()];
        rmcp::service::serve_client_with_lifecycle(
            client,
            transport,
            rmcp::service::ClientLifecycleMode::Discover { preferred_versions },
        )
        .await
        .unwrap()
    };
    Gateway {
        client,
        _dir: dir,
        audit,
    }
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

async fn call(gateway: &Gateway, tool: &str, arguments: Value) -> CallToolResult {
    gateway
        .client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args(arguments)))
        .await
        .unwrap()
}

/// The protocol error of a call of a tool the gateway does not serve.
async fn call_unserved(gateway: &Gateway, tool: &str, arguments: Value) -> ErrorData {
    let answer = gateway
        .client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args(arguments)))
        .await;
    match answer {
        Err(rmcp::ServiceError::McpError(e)) => e,
        other => panic!("expected a protocol error for `{tool}`, got {other:?}"),
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn initialize_and_list_tools_on_both_revisions() {
    let fake = Fake::start().await;
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        let gateway = spawn(
            &fixture(),
            &fake.url,
            &[],
            Some(KEY),
            Client::new(version.clone()),
        )
        .await;
        let info = gateway.client.peer_info().unwrap();
        assert_eq!(info.protocol_version, version);
        assert_eq!(
            info.server_info.as_ref().map(|i| i.name.as_str()),
            Some("objectstack-gateway")
        );
        // Both lists are declared with their change notifications, so the
        // notifications sent after a reload are ones the client agreed to.
        let capabilities = &info.capabilities;
        assert_eq!(
            capabilities.tools.as_ref().and_then(|t| t.list_changed),
            Some(true)
        );
        assert_eq!(
            capabilities.prompts.as_ref().and_then(|p| p.list_changed),
            Some(true)
        );
        let tools = gateway.client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "action_escalate_ticket",
                "action_close_ticket",
                "action_ticket_stats",
                "action_purge_ticket",
                "action_notify_owner",
                "gateway-pending-actions",
            ]
        );
        let by_name = |n: &str| tools.iter().find(|t| t.name == n).unwrap();
        let escalate = by_name("action_escalate_ticket");
        assert_eq!(escalate.title.as_deref(), Some("Escalate"));
        assert_eq!(
            escalate.input_schema.get("required"),
            Some(&json!(["recordId", "reason"]))
        );
        assert_eq!(
            escalate.input_schema["properties"]["recordId"]["type"],
            json!("string")
        );
        assert_eq!(
            escalate.input_schema.get("additionalProperties"),
            Some(&json!(false))
        );
        let purge = by_name("action_purge_ticket").annotations.clone().unwrap();
        assert_eq!(purge.destructive_hint, Some(true));
        assert_eq!(purge.read_only_hint, Some(false));
        let stats = by_name("action_ticket_stats");
        assert_eq!(
            stats.annotations.clone().unwrap().read_only_hint,
            Some(true)
        );
        assert_eq!(
            stats.output_schema.as_ref().and_then(|s| s.get("required")),
            Some(&json!(["total"]))
        );
        // Nothing reached the server for listing.
        assert!(fake.received().is_empty(), "{:?}", fake.received());
        gateway.client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_call_reaches_the_server_exactly_as_validated_with_the_key() {
    let fake = Fake::start().await;
    fake.add_record(
        "support_ticket",
        "t 1/x",
        json!({"id": "t 1/x", "subject": "Printer"}),
    );
    let gateway = spawn(
        &fixture(),
        &fake.url,
        &[],
        Some(KEY),
        Client::new(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let result = call(
        &gateway,
        "action_escalate_ticket",
        json!({"recordId": "t 1/x", "reason": "customer is down", "level": 2}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let envelope: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(envelope["ok"], json!(true));
    assert_eq!(envelope["recordId"], json!("t 1/x"));
    assert_eq!(
        envelope["result"]["params"],
        json!({"reason": "customer is down", "level": 2})
    );
    let received = fake.received();
    assert_eq!(received.len(), 2, "{received:?}");
    assert_eq!(received[0].method, "GET");
    assert_eq!(received[0].path, "/api/v1/data/support_ticket/t%201%2Fx");
    assert_eq!(received[1].method, "POST");
    assert_eq!(
        received[1].path,
        "/api/v1/actions/support_ticket/escalate_ticket/t%201%2Fx"
    );
    assert_eq!(
        received[1].body,
        json!({"params": {"reason": "customer is down", "level": 2}})
    );
    for r in &received {
        assert_eq!(
            r.authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    // The structured result of a tool with an outputSchema.
    fake.clear();
    let stats = call(&gateway, "action_ticket_stats", json!({})).await;
    assert_eq!(
        stats.structured_content,
        Some(json!({"total": 3, "byStatus": {"open": 2}}))
    );
    // Its text block is that structured content, serialised, as MCP asks
    // of a result that has one.
    assert_eq!(
        serde_json::from_str::<Value>(&text(&stats)).ok(),
        stats.structured_content
    );
    assert_eq!(
        fake.received()[0].path,
        "/api/v1/actions/support_ticket/ticket_stats"
    );
    // A field write sends no values: the server applies the action's patch.
    fake.clear();
    fake.add_record("support_ticket", "t2", json!({"subject": "x"}));
    let closed = call(&gateway, "action_close_ticket", json!({"recordId": "t2"})).await;
    assert_eq!(closed.is_error, Some(false), "{}", text(&closed));
    assert_eq!(
        fake.received()[1].path,
        "/api/v1/actions/support_ticket/close_ticket/t2"
    );
    assert_eq!(fake.received()[1].body, json!({"params": {}}));
    // The audit trail has the fingerprint, never the key.
    gateway.client.cancel().await.unwrap();
    let audit = std::fs::read_to_string(&gateway.audit).unwrap();
    assert!(!audit.contains(KEY), "{audit}");
    let first: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!(first["tool"], json!("action_escalate_ticket"));
    assert_eq!(first["transport"], json!("stdio"));
    assert_eq!(first["outcome"], json!("ok"));
    assert_eq!(first["key"].as_str().map(str::len), Some(12));
    assert_eq!(first["inputSha256"].as_str().map(str::len), Some(64));
}

#[tokio::test]
async fn invalid_arguments_reach_nothing() {
    let fake = Fake::start().await;
    let gateway = spawn(
        &fixture(),
        &fake.url,
        &[],
        Some(KEY),
        Client::new(ProtocolVersion::V_2025_06_18),
    )
    .await;
    for bad in [
        json!({"recordId": "t1"}),
        json!({"recordId": "t1", "reason": 5}),
        json!({"recordId": "t1", "reason": "x", "extra": true}),
    ] {
        let result = call(&gateway, "action_escalate_ticket", bad.clone()).await;
        assert_eq!(result.is_error, Some(true), "{bad}");
    }
    // A tool that is not served (here: not exposed to AI) is unknown: a
    // protocol error (-32602), as the MCP specification has it, not a
    // tool result.
    let unknown = call_unserved(&gateway, "action_internal_note", json!({"recordId": "t1"})).await;
    assert_eq!(unknown.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    assert!(
        unknown
            .message
            .contains("Unknown tool: action_internal_note"),
        "{}",
        unknown.message
    );
    // Audited as refused, like the invalid arguments before it.
    let audit = std::fs::read_to_string(&gateway.audit).unwrap();
    let last: Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
    assert_eq!(last["tool"], "action_internal_note");
    assert_eq!(last["outcome"], "refused");
    // The session goes on.
    let bad = call(
        &gateway,
        "action_escalate_ticket",
        json!({"recordId": "t1"}),
    )
    .await;
    assert_eq!(bad.is_error, Some(true));
    assert!(fake.received().is_empty(), "{:?}", fake.received());
    gateway.client.cancel().await.unwrap();
}

#[tokio::test]
async fn server_errors_are_tool_errors_with_message_and_code() {
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t1", json!({"subject": "x"}));
    let gateway = spawn(
        &fixture(),
        &fake.url,
        &[],
        Some(KEY),
        Client::new(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let cases = [
        (400, "VALIDATION_ERROR", "Reason must be polite"),
        (
            401,
            "UNAUTHENTICATED",
            "Authentication is required to access this endpoint.",
        ),
        (403, "PERMISSION_DENIED", "You may not escalate tickets"),
        (
            404,
            "RESOURCE_NOT_FOUND",
            "Action 'escalate_ticket' has no declaration",
        ),
        (
            428,
            "ACTION_CONFIRMATION_REQUIRED",
            "This action needs confirmation",
        ),
        (503, "SERVICE_UNAVAILABLE", "Try later"),
    ];
    for (status, code, message) in cases {
        fake.reply(
            "escalate_ticket",
            status,
            Fake::envelope(status, code, message),
        );
        let result = call(
            &gateway,
            "action_escalate_ticket",
            json!({"recordId": "t1", "reason": "r"}),
        )
        .await;
        assert_eq!(result.is_error, Some(true), "{status}");
        let shown = text(&result);
        assert!(shown.contains(message), "{status}: {shown}");
        assert!(shown.contains(code), "{status}: {shown}");
        assert!(shown.contains(&status.to_string()), "{status}: {shown}");
    }
    // A missing record: 404 from the data route, and the action never runs.
    fake.clear();
    let missing = call(
        &gateway,
        "action_escalate_ticket",
        json!({"recordId": "nope", "reason": "r"}),
    )
    .await;
    assert_eq!(missing.is_error, Some(true));
    assert!(
        text(&missing).contains("was not found"),
        "{}",
        text(&missing)
    );
    let received = fake.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].method, "GET");
    gateway.client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unreachable_or_slow_server_is_a_tool_error() {
    // Nothing listens on this port.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let gateway = spawn(
        &fixture(),
        &url,
        &["--timeout", "1"],
        Some(KEY),
        Client::new(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let result = call(&gateway, "action_ticket_stats", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("unreachable"), "{}", text(&result));
    gateway.client.cancel().await.unwrap();

    let fake = Fake::start().await;
    *fake.state.delay.lock().unwrap() = Some(Duration::from_secs(3));
    let gateway = spawn(
        &fixture(),
        &fake.url,
        &["--timeout", "1"],
        Some(KEY),
        Client::new(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let result = call(&gateway, "action_ticket_stats", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("timeout"), "{}", text(&result));
    // The gateway is still serving.
    assert!(gateway.client.list_all_tools().await.is_ok());
    gateway.client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_a_key_the_server_refuses_and_says_so() {
    let fake = Fake::start().await;
    let gateway = spawn(
        &fixture(),
        &fake.url,
        &[],
        None,
        Client::new(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let result = call(&gateway, "action_ticket_stats", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("UNAUTHENTICATED"),
        "{}",
        text(&result)
    );
    assert_eq!(fake.received()[0].authorization, None);
    gateway.client.cancel().await.unwrap();
}

/// Runs `serve` to completion (it must refuse to start) and returns the
/// exit code and stderr. A refused `serve` leaves no queue or audit file.
fn refused(extra: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("a.sqlite");
    let audit = dir.path().join("audit.jsonl");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai"))
        .arg("serve")
        .arg("--approvals")
        .arg(&queue)
        .arg("--audit")
        .arg(&audit)
        .args(extra)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!queue.exists(), "a refused serve created its queue");
    assert!(!audit.exists(), "a refused serve created its audit file");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_stack_with_errors_refuses_to_start_and_shows_the_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"objects": [{"name": "t", "actions": [{"name": "a", "type": "script", "target": "x",
            "ai": {"exposed": "yes", "description": "A description long enough to be accepted here."}}]}]}"#,
    )
    .unwrap();
    let (code, stderr) = refused(&["--stack", bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("error(s)"), "{stderr}");
    assert!(
        stderr.contains("objects[0].actions[0].ai.exposed"),
        "{stderr}"
    );

    std::fs::write(&bad, "{ not json").unwrap();
    let (code, stderr) = refused(&["--stack", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.json"), "{stderr}");

    let (code, stderr) = refused(&["--stack", fixture().to_str().unwrap(), "--agent", "nobody"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("known agents: triager, janitor"),
        "{stderr}"
    );
}

#[tokio::test]
async fn an_agent_gets_only_its_tools_and_its_skills_become_prompts() {
    let fake = Fake::start().await;
    let everyone = spawn(
        &fixture(),
        &fake.url,
        &[],
        Some(KEY),
        Client::new(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let prompts = everyone.client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["triage", "cleanup"]);
    let prompt = everyone
        .client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("triage"))
        .await
        .unwrap();
    let shown = serde_json::to_string(&prompt.messages).unwrap();
    assert!(
        shown.contains("escalate it when the customer is blocked"),
        "{shown}"
    );
    everyone.client.cancel().await.unwrap();

    let triager = spawn(
        &fixture(),
        &fake.url,
        &["--agent", "triager"],
        Some(KEY),
        Client::new(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let tools = triager.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["action_escalate_ticket", "action_ticket_stats"]);
    let prompts = triager.client.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0].name, "triage");
    // A tool the agent may not invoke is not there to call.
    let refused = call_unserved(&triager, "action_purge_ticket", json!({"recordId": "t1"})).await;
    assert_eq!(refused.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    assert!(fake.received().is_empty());
    triager.client.cancel().await.unwrap();

    // A wildcard grant expands as `capabilities` expands it.
    let janitor = spawn(
        &fixture(),
        &fake.url,
        &["--agent", "janitor"],
        Some(KEY),
        Client::new(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let tools = janitor.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "action_close_ticket",
            "action_purge_ticket",
            "gateway-pending-actions"
        ]
    );
    janitor.client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_changed_stack_is_reloaded_and_clients_are_told() {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let stack = dir.path().join("stack.json");
    let original = std::fs::read_to_string(fixture()).unwrap();
    std::fs::write(&stack, &original).unwrap();
    let client = Client::new(ProtocolVersion::V_2025_11_25);
    let changed = client.list_changed.clone();
    let gateway = spawn(&stack, &fake.url, &[], Some(KEY), client).await;
    assert_eq!(gateway.client.list_all_tools().await.unwrap().len(), 6);

    // Withdraw one action: reloaded, and the client hears of it.
    let mut doc: Value = serde_json::from_str(&original).unwrap();
    doc["objects"][0]["actions"][0]["ai"]["exposed"] = json!(false);
    std::fs::write(&stack, serde_json::to_string(&doc).unwrap()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), changed.notified())
        .await
        .expect("notifications/tools/list_changed");
    let names: Vec<String> = gateway
        .client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names.len(), 5);
    assert!(!names.iter().any(|n| n == "action_escalate_ticket"));

    // A broken file and a stack with errors keep the last good stack.
    std::fs::write(&stack, "{ broken").unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    doc["objects"][0]["actions"][1]["ai"]["exposed"] = json!("yes");
    std::fs::write(&stack, serde_json::to_string(&doc).unwrap()).unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(gateway.client.list_all_tools().await.unwrap().len(), 5);
    let still = call(&gateway, "action_ticket_stats", json!({})).await;
    assert_eq!(still.is_error, Some(false), "{}", text(&still));
    gateway.client.cancel().await.unwrap();
}

#[tokio::test]
async fn elicitation_accept_runs_decline_does_not_and_no_capability_queues() {
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t5", json!({"subject": "Spam"}));
    let mut accepting = Client::new(ProtocolVersion::V_2025_11_25);
    accepting.elicit = Some(ElicitationAction::Accept);
    let asked = accepting.asked.clone();
    let gateway = spawn(
        &fixture(),
        &fake.url,
        &["--confirm", "elicit"],
        Some(KEY),
        accepting,
    )
    .await;
    let result = call(&gateway, "action_purge_ticket", json!({"recordId": "t5"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    // The purge has an outputSchema: the result is its structured content,
    // and the text block holds the same.
    let structured: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(result.structured_content.as_ref(), Some(&structured));
    assert_eq!(structured["action"], json!("purge_ticket"));
    let question = asked.lock().unwrap().join("\n");
    assert!(
        question.contains("purge_ticket") && question.contains("t5"),
        "{question}"
    );
    let posts: Vec<_> = fake
        .received()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].body, json!({"params": {}, "confirm": true}));
    // The queue holds the outcome too.
    let lookup = call(&gateway, "gateway-pending-actions", json!({})).await;
    assert!(
        text(&lookup).contains("\"state\":\"executed\""),
        "{}",
        text(&lookup)
    );
    gateway.client.cancel().await.unwrap();

    fake.clear();
    let mut declining = Client::new(ProtocolVersion::V_2025_06_18);
    declining.elicit = Some(ElicitationAction::Decline);
    let gateway = spawn(
        &fixture(),
        &fake.url,
        &["--confirm", "elicit"],
        Some(KEY),
        declining,
    )
    .await;
    let result = call(&gateway, "action_purge_ticket", json!({"recordId": "t5"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("declined"), "{}", text(&result));
    assert!(fake.received().iter().all(|r| r.method == "GET"));
    let lookup = call(&gateway, "gateway-pending-actions", json!({})).await;
    assert!(
        text(&lookup).contains("\"state\":\"rejected\""),
        "{}",
        text(&lookup)
    );
    gateway.client.cancel().await.unwrap();

    fake.clear();
    let gateway = spawn(
        &fixture(),
        &fake.url,
        &["--confirm", "elicit"],
        Some(KEY),
        Client::new(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let result = call(&gateway, "action_purge_ticket", json!({"recordId": "t5"})).await;
    assert_eq!(result.is_error, Some(false));
    let envelope: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(envelope["status"], json!("pending_approval"));
    assert!(fake.received().iter().all(|r| r.method == "GET"));
    gateway.client.cancel().await.unwrap();
}

#[tokio::test]
async fn on_2026_07_28_elicitation_is_an_input_required_round_trip() {
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t5", json!({"subject": "Spam"}));
    for (answer, runs) in [
        (ElicitationAction::Accept, true),
        (ElicitationAction::Decline, false),
    ] {
        fake.clear();
        let mut client = Client::new(ProtocolVersion::V_2026_07_28);
        client.elicit = Some(answer.clone());
        let asked = client.asked.clone();
        let gateway = spawn(
            &fixture(),
            &fake.url,
            &["--confirm", "elicit"],
            Some(KEY),
            client,
        )
        .await;
        assert_eq!(
            gateway.client.peer_info().unwrap().protocol_version,
            ProtocolVersion::V_2026_07_28
        );
        // rmcp's client answers `input_required` through its handler and
        // retries with the answer and the request state.
        let result = call(&gateway, "action_purge_ticket", json!({"recordId": "t5"})).await;
        let question = asked.lock().unwrap().join("\n");
        assert!(question.contains("purge_ticket"), "{answer:?}: {question}");
        let posts = fake
            .received()
            .into_iter()
            .filter(|r| r.method == "POST")
            .count();
        let lookup = call(&gateway, "gateway-pending-actions", json!({})).await;
        if runs {
            assert_eq!(result.is_error, Some(false), "{}", text(&result));
            assert_eq!(posts, 1, "accepted: it ran once");
            assert!(
                text(&lookup).contains("\"state\":\"executed\""),
                "{}",
                text(&lookup)
            );
        } else {
            assert_eq!(result.is_error, Some(true), "{}", text(&result));
            assert!(text(&result).contains("declined"), "{}", text(&result));
            assert_eq!(posts, 0, "declined: nothing ran");
            assert!(
                text(&lookup).contains("\"state\":\"rejected\""),
                "{}",
                text(&lookup)
            );
        }
        gateway.client.cancel().await.unwrap();
    }
}

#[test]
fn standard_input_is_refused_as_a_stack_and_the_fix_is_shown() {
    let (code, stderr) = refused(&["--stack", fixture().to_str().unwrap(), "-"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--stack -"), "{stderr}");
    assert!(stderr.contains("write the stack to a file"), "{stderr}");
    assert!(!stderr.contains("No such file"), "{stderr}");
}

#[test]
fn a_bad_approval_ttl_is_refused_with_the_accepted_forms() {
    for bad in ["24", "1.5h", "soon"] {
        let (code, stderr) = refused(&[
            "--stack",
            fixture().to_str().unwrap(),
            "--approval-ttl",
            bad,
        ]);
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stderr.contains("--approval-ttl"), "{bad}: {stderr}");
        assert!(stderr.contains("24h"), "the fix is shown: {stderr}");
    }
}

/// The binary over stdio, driven by hand: its stdin kept open, its
/// stdout read a JSON-RPC message a line.
struct RawStdio {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    _dir: tempfile::TempDir,
}

impl RawStdio {
    async fn start(server: &str) -> RawStdio {
        Self::start_with(server, &[], json!({})).await
    }

    /// [`RawStdio::start`] with more `serve` arguments and the client's
    /// capabilities.
    async fn start_with(server: &str, args: &[&str], capabilities: Value) -> RawStdio {
        let dir = tempfile::tempdir().unwrap();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai"))
            .arg("serve")
            .args(args)
            .arg("--stack")
            .arg(fixture())
            .arg("--server")
            .arg(server)
            .arg("--approvals")
            .arg(dir.path().join("approvals.sqlite"))
            .arg("--audit")
            .arg(dir.path().join("audit.jsonl"))
            .env("RUST_LOG", "warn")
            .env("OBJECTSTACK_API_KEY", KEY)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut raw = RawStdio {
            child,
            stdin,
            lines: tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout)),
            _dir: dir,
        };
        raw.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "raw", "version": "0"}}}),
        )
        .await;
        assert_eq!(raw.next().await["id"], json!(1));
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    async fn send(&mut self, message: Value) {
        self.send_line(message.to_string().as_bytes()).await;
    }

    /// Sends `line` (any bytes) and a newline.
    async fn send_line(&mut self, line: &[u8]) {
        use tokio::io::AsyncWriteExt as _;
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message, within 10 s.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the gateway's output is open");
        serde_json::from_str(&line).unwrap()
    }

    fn terminate(&self) {
        let pid = self.child.id().unwrap().to_string();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The exit code, within 10 s (its stdin still open).
    async fn exit_code(&mut self) -> Option<i32> {
        tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("the gateway exits within 10 s of SIGTERM, its stdin open")
            .unwrap()
            .code()
    }
}

#[tokio::test]
async fn sigterm_answers_the_call_in_flight_refuses_new_ones_and_exits() {
    let fake = Fake::start().await;
    // An idle gateway: SIGTERM ends it although the client keeps stdin open.
    let mut idle = RawStdio::start(&fake.url).await;
    idle.terminate();
    assert_eq!(idle.exit_code().await, Some(0));

    let mut gateway = RawStdio::start(&fake.url).await;
    *fake.state.action_delay.lock().unwrap() = Some(Duration::from_millis(1500));
    gateway
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "action_ticket_stats", "arguments": {}}}))
        .await;
    while fake.received().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    gateway.terminate();
    tokio::time::sleep(Duration::from_millis(300)).await;
    gateway
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "action_ticket_stats", "arguments": {}}}))
        .await;
    let mut answers = [gateway.next().await, gateway.next().await];
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(answers[0]["id"], json!(2));
    assert_eq!(
        answers[0]["result"]["isError"],
        json!(false),
        "{}",
        answers[0]
    );
    assert_eq!(answers[1]["id"], json!(3));
    assert_eq!(
        answers[1]["result"]["isError"],
        json!(true),
        "{}",
        answers[1]
    );
    assert!(
        answers[1].to_string().contains("shutting down"),
        "{}",
        answers[1]
    );
    assert_eq!(gateway.exit_code().await, Some(0));
    // The call during the drain never reached the server.
    let posts = fake
        .received()
        .into_iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 1);
}

#[tokio::test]
async fn over_stdio_a_malformed_call_is_invalid_params_and_an_unknown_method_says_so() {
    let fake = Fake::start().await;
    let mut gateway = RawStdio::start(&fake.url).await;
    // (Params that are not an object rmcp refuses itself, with no id; the
    // HTTP check in front of it answers those.)
    for (id, params, why) in [
        (2, json!({}), "`name` must be the name of a tool"),
        (
            3,
            json!({"name": "action_ticket_stats", "arguments": [1]}),
            "`arguments` must be an object of the tool's parameters, not an array",
        ),
    ] {
        gateway
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        let answer = gateway.next().await;
        assert_eq!(answer["id"], json!(id), "{answer}");
        assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains(why), "{answer}");
    }
    gateway
        .send(json!({"jsonrpc": "2.0", "id": 5, "method": "foo/bar"}))
        .await;
    let answer = gateway.next().await;
    assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
    assert_eq!(
        answer["error"]["message"],
        json!("Method not found: `foo/bar` is not a method this server offers")
    );
    assert!(fake.received().is_empty(), "{:?}", fake.received());
}

#[tokio::test]
async fn over_stdio_a_line_that_is_no_message_is_answered_and_the_session_goes_on() {
    let fake = Fake::start().await;
    let mut gateway = RawStdio::start(&fake.url).await;
    // rmcp alone skipped the first two without a word: a client waiting
    // for an answer waited forever.
    for (line, id, code, why) in [
        (&b"this is not json"[..], json!(null), -32700, "not JSON"),
        (
            &br#"{"jsonrpc": "2.0", "id": 2, "method": "tools/list""#[..],
            json!(null),
            -32700,
            "not JSON",
        ),
        (&b"\xff\xfe{}"[..], json!(null), -32700, "not UTF-8"),
        (&b"[1, 2]"[..], json!(null), -32600, "batches"),
        (
            &br#"{"jsonrpc": "1.0", "id": 4, "method": "tools/list"}"#[..],
            json!(4),
            -32600,
            "jsonrpc",
        ),
        // rmcp answered these without an id, which the official Python
        // client cannot read, or not at all.
        (
            &br#"{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": 5}"#[..],
            json!(5),
            -32602,
            "`tools/list` does not take these params",
        ),
        (
            &b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"ping\", \"x\": \"caf\xe9\"}"[..],
            json!(null),
            -32700,
            "not UTF-8",
        ),
    ] {
        gateway.send_line(line).await;
        let answer = gateway.next().await;
        assert_eq!(answer["jsonrpc"], json!("2.0"), "{answer}");
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], json!(code), "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains(why), "{answer}");
    }
    // A notification is never answered, even one rmcp cannot read.
    gateway
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": 5}))
        .await;
    gateway
        .send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}))
        .await;
    let answer = gateway.next().await;
    assert_eq!(answer["id"], json!(6), "{answer}");
    assert!(
        answer["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{answer}"
    );
    assert!(fake.received().is_empty(), "{:?}", fake.received());
}

/// `serve` over stdio as a script runs it: `input` written to a file that
/// is its whole stdin (so stdin ends after it), its audit trail in `dir`.
/// Returns the process's stdout once it exits (it must exit 0).
async fn scripted(fake: &Fake, dir: &Path, input: &str) -> String {
    let stdin = dir.join("stdin.jsonl");
    std::fs::write(&stdin, input).unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai"))
        .arg("serve")
        .arg("--stack")
        .arg(fixture())
        .arg("--server")
        .arg(&fake.url)
        .arg("--approvals")
        .arg(dir.join("approvals.sqlite"))
        .arg("--audit")
        .arg(dir.join("audit.jsonl"))
        .env("OBJECTSTACK_API_KEY", KEY)
        .stdin(std::fs::File::open(&stdin).unwrap())
        .stderr(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn over_stdio_every_line_before_the_end_of_stdin_is_answered() {
    // A script that writes its lines and closes stdin (`printf … | serve`)
    // gets every answer, the screen's included, before the process ends.
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut input = format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "script", "version": "0"}}})
    );
    input.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for _ in 0..500 {
        input.push_str("garbage\n");
    }
    input.push_str("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
    let stdout = scripted(&fake, dir.path(), &input).await;
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 502);
    let parse_errors = answers
        .iter()
        .filter(|a| a["id"].is_null() && a["error"]["code"] == json!(-32700))
        .count();
    assert_eq!(parse_errors, 500);
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == json!(2) && a["result"]["tools"].is_array())
    );
}

#[tokio::test]
async fn over_stdio_a_call_still_running_when_stdin_ends_is_waited_for_and_audited() {
    // rmcp lets go of a call 5 s after its input ends; the gateway waits
    // for it (up to the drain timeout), so what ran is audited.
    let fake = Fake::start().await;
    *fake.state.action_delay.lock().unwrap() = Some(Duration::from_secs(6));
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "script", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "action_ticket_stats", "arguments": {}}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let audit = dir.path().join("audit.jsonl");
    let started = std::time::Instant::now();
    scripted(&fake, dir.path(), &text).await;
    assert!(started.elapsed() >= Duration::from_secs(6));
    let audited = std::fs::read_to_string(&audit).unwrap();
    let entries: Vec<Value> = audited
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 1, "{audited}");
    assert_eq!(
        entries[0]["tool"],
        json!("action_ticket_stats"),
        "{audited}"
    );
    assert_eq!(entries[0]["outcome"], json!("ok"), "{audited}");
    let posts = fake
        .received()
        .into_iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 1);
}

#[tokio::test]
async fn sigterm_gives_up_a_question_nobody_answers_and_the_caller_hears_it_is_queued() {
    // The drain used to wait the whole 30 s for the present user, and the
    // caller then got no answer at all.
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t9", json!({"subject": "Old"}));
    let mut gateway = RawStdio::start_with(
        &fake.url,
        &["--confirm", "elicit"],
        json!({"elicitation": {}}),
    )
    .await;
    gateway
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "action_purge_ticket", "arguments": {"recordId": "t9"}}}))
        .await;
    let question = gateway.next().await;
    assert_eq!(
        question["method"],
        json!("elicitation/create"),
        "{question}"
    );
    let asked = std::time::Instant::now();
    gateway.terminate();
    let answer = gateway.next().await;
    assert_eq!(answer["id"], json!(2), "{answer}");
    assert!(answer.to_string().contains("pending"), "{answer}");
    assert_eq!(gateway.exit_code().await, Some(0));
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "{:?}",
        asked.elapsed()
    );
    // Nothing ran: the purge waits in the queue for a person.
    assert!(
        fake.received().iter().all(|r| r.method != "POST"),
        "{:?}",
        fake.received()
    );
}
