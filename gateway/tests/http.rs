//! The gateway over Streamable HTTP, in process: rmcp's HTTP client and
//! plain HTTP requests against a gateway on 127.0.0.1, in front of a fake
//! ObjectStack server.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use objectstack_gateway::{Config, Gateway};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use support::fake::Fake;

const ALICE: &str = "osk_alice_0123456789";
const BOB: &str = "osk_bob_9876543210";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/helpdesk.json")
}

struct Running {
    gateway: Gateway,
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    dir: tempfile::TempDir,
}

impl Running {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("audit.jsonl")).unwrap_or_default()
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = self.task.await;
    }
}

/// The tests' configuration: the fixture in front of `fake`, the queue and
/// the audit trail in `dir`, no reloading.
fn config_for(fake: &Fake, dir: &Path) -> Config {
    let mut config = Config::new(vec![fixture()]);
    config.server = Some(fake.url.clone());
    config.approvals = dir.join("approvals.sqlite");
    config.audit = Some(dir.join("audit.jsonl"));
    config.reload_interval = None;
    config
}

async fn start(fake: &Fake, edit: impl FnOnce(&mut Config)) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_for(fake, dir.path());
    edit(&mut config);
    let gateway = Gateway::new(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = gateway.clone();
    let task = tokio::spawn(async move {
        gateway
            .serve_listener(listener, async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    Running {
        gateway: served,
        addr,
        stop: Some(stop),
        task,
        dir,
    }
}

async fn client(
    running: &Running,
    key: &str,
    version: ProtocolVersion,
) -> RunningService<RoleClient, ClientConfig> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(running.url("/mcp")).auth_header(key),
    );
    let config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("gateway-http-test", "0"),
    )
    .with_protocol_version(version.clone());
    if version.has_initialize() {
        config.serve(transport).await.unwrap()
    } else {
        // The sessionless revision: `server/discover`, no `initialize`.
        rmcp::service::serve_client_with_lifecycle(
            config,
            transport,
            rmcp::service::ClientLifecycleMode::Discover {
                preferred_versions: vec![version],
            },
        )
        .await
        .unwrap()
    }
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

async fn call(
    client: &RunningService<RoleClient, ClientConfig>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args(arguments)))
        .await
        .unwrap()
}

/// `GET /approvals/{id}` as `key` sees it.
async fn shown_row(running: &Running, key: &str, id: &str) -> Value {
    reqwest::Client::new()
        .get(running.url(&format!("/approvals/{id}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
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
async fn without_a_key_every_route_is_401_and_nothing_is_listed_or_called() {
    let fake = Fake::start().await;
    let running = start(&fake, |_| {}).await;
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "0"}}});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for (body, auth) in [
        (&initialize, None),
        (&list, None),
        (&initialize, Some("Basic b3NrOng=")),
        (&initialize, Some("Bearer ")),
    ] {
        let mut request = http
            .post(running.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(body);
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401, "{auth:?}");
        assert!(response.headers().contains_key("www-authenticate"));
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], json!("UNAUTHENTICATED"));
    }
    for path in ["/approvals", "/approvals/pa_1"] {
        let response = http.get(running.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 401, "{path}");
    }
    let response = http
        .post(running.url("/approvals/pa_1/approve"))
        .json(&json!({"input_sha256": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    // rmcp's client cannot even initialize.
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(running.url("/mcp")),
    );
    assert!(
        ClientConfig::default()
            .with_protocol_version(ProtocolVersion::V_2025_06_18)
            .serve(transport)
            .await
            .is_err()
    );
    assert!(fake.received().is_empty());
    running.stop().await;
}

#[tokio::test]
async fn each_request_runs_under_its_own_key_on_every_revision() {
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t1", json!({"subject": "Printer"}));
    let running = start(&fake, |_| {}).await;
    for version in [
        ProtocolVersion::V_2025_06_18,
        ProtocolVersion::V_2025_11_25,
        ProtocolVersion::V_2026_07_28,
    ] {
        let alice = client(&running, ALICE, version.clone()).await;
        let bob = client(&running, BOB, version.clone()).await;
        assert_eq!(alice.peer_info().unwrap().protocol_version, version);
        let tools = alice.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 6);
        fake.clear();
        let a = call(
            &alice,
            "action_escalate_ticket",
            json!({"recordId": "t1", "reason": "from alice"}),
        )
        .await;
        assert_eq!(a.is_error, Some(false), "{}", text(&a));
        let b = call(&bob, "action_ticket_stats", json!({})).await;
        assert_eq!(
            b.structured_content,
            Some(json!({"total": 3, "byStatus": {"open": 2}}))
        );
        let received = fake.received();
        assert_eq!(received.len(), 3, "{received:?}");
        let auth = |i: usize| received[i].authorization.clone().unwrap();
        assert_eq!(auth(0), format!("Bearer {ALICE}"));
        assert_eq!(auth(1), format!("Bearer {ALICE}"));
        assert_eq!(auth(2), format!("Bearer {BOB}"));
        assert_eq!(
            received[1].body,
            json!({"params": {"reason": "from alice"}})
        );
        // Invalid arguments: nothing reaches the server.
        fake.clear();
        let bad = call(&alice, "action_escalate_ticket", json!({"recordId": "t1"})).await;
        assert_eq!(bad.is_error, Some(true));
        assert!(fake.received().is_empty());
        // Server errors are tool errors.
        for (status, code) in [
            (400, "VALIDATION_ERROR"),
            (403, "PERMISSION_DENIED"),
            (404, "RESOURCE_NOT_FOUND"),
        ] {
            fake.reply(
                "ticket_stats",
                status,
                Fake::envelope(status, code, "refused by the server"),
            );
            let r = call(&bob, "action_ticket_stats", json!({})).await;
            assert_eq!(r.is_error, Some(true));
            assert!(
                text(&r).contains(code) && text(&r).contains("refused by the server"),
                "{}",
                text(&r)
            );
        }
        fake.state.replies.lock().unwrap().clear();
        alice.cancel().await.unwrap();
        bob.cancel().await.unwrap();
    }
    let audit = running.audit();
    assert!(!audit.contains(ALICE) && !audit.contains(BOB), "{audit}");
    assert!(audit.lines().all(|l| l.contains("\"transport\":\"http\"")));
    running.stop().await;
}

#[tokio::test]
async fn a_destructive_call_waits_is_approved_over_http_and_runs_once() {
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t9", json!({"subject": "Spam"}));
    let running = start(&fake, |_| {}).await;
    let alice = client(&running, ALICE, ProtocolVersion::V_2025_11_25).await;
    let proposed = call(&alice, "action_purge_ticket", json!({"recordId": "t9"})).await;
    assert_eq!(proposed.is_error, Some(false), "{}", text(&proposed));
    let envelope: Value = serde_json::from_str(&text(&proposed)).unwrap();
    assert_eq!(envelope["status"], json!("pending_approval"));
    let id = envelope["pendingActionId"].as_str().unwrap().to_owned();
    // The tool has an outputSchema: the pending envelope is its structured
    // content, and the schema served admits it (clients check both).
    assert_eq!(proposed.structured_content.as_ref(), Some(&envelope));
    let purge = alice
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.name == "action_purge_ticket")
        .unwrap();
    let schema = Value::Object((*purge.output_schema.unwrap()).clone());
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&envelope), "{schema}");
    assert!(!validator.is_valid(&json!({"status": "done"})), "{schema}");
    assert!(
        envelope["message"]
            .as_str()
            .unwrap()
            .contains("Do not call this tool again")
    );
    // Only the record was loaded: nothing ran.
    assert!(fake.received().iter().all(|r| r.method == "GET"));

    // The model's lookup: pending.
    let lookup = call(
        &alice,
        "gateway-pending-actions",
        json!({"pendingActionId": id}),
    )
    .await;
    let view: Value = serde_json::from_str(&text(&lookup)).unwrap();
    assert_eq!(view["state"], json!("pending"));
    // Someone else's lookup does not see it.
    let bob = client(&running, BOB, ProtocolVersion::V_2025_11_25).await;
    let theirs = call(
        &bob,
        "gateway-pending-actions",
        json!({"pendingActionId": id}),
    )
    .await;
    assert_eq!(theirs.is_error, Some(true));

    let http = reqwest::Client::new();
    let listed: Value = http
        .get(running.url("/approvals?state=pending"))
        .bearer_auth(BOB)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rows = listed["approvals"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], json!(id));
    let shown = shown_row(&running, BOB, &id).await;
    let sha = shown["inputSha256"].as_str().unwrap().to_owned();
    assert!(!shown.to_string().contains(ALICE));

    // A wrong hash is refused, and nothing runs.
    let mismatch = http
        .post(running.url(&format!("/approvals/{id}/approve")))
        .bearer_auth(BOB)
        .json(&json!({"input_sha256": "0".repeat(64)}))
        .send()
        .await
        .unwrap();
    assert_eq!(mismatch.status(), 409);
    fake.clear();
    let approved = http
        .post(running.url(&format!("/approvals/{id}/approve")))
        .bearer_auth(BOB)
        .json(&json!({"input_sha256": sha}))
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), 200);
    let decision: Value = approved.json().await.unwrap();
    assert_eq!(decision["state"], json!("executed"), "{decision}");
    assert_eq!(decision["result"]["ok"], json!(true));
    // Executed once, under the approver's key, with the confirmation member.
    let posts: Vec<_> = fake
        .received()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1, "{posts:?}");
    assert_eq!(
        posts[0].path,
        "/api/v1/actions/support_ticket/purge_ticket/t9"
    );
    assert_eq!(posts[0].body, json!({"params": {}, "confirm": true}));
    assert_eq!(
        posts[0].authorization.as_deref(),
        Some(format!("Bearer {BOB}").as_str())
    );
    // Approving again changes nothing and runs nothing.
    let again = http
        .post(running.url(&format!("/approvals/{id}/approve")))
        .bearer_auth(BOB)
        .json(&json!({"input_sha256": sha}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
    assert_eq!(
        fake.received()
            .iter()
            .filter(|r| r.method == "POST")
            .count(),
        1
    );
    // The model's lookup shows the result.
    let lookup = call(&alice, "gateway-pending-actions", json!({})).await;
    let view: Value = serde_json::from_str(&text(&lookup)).unwrap();
    let mine = view["pendingActions"].as_array().unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["state"], json!("executed"));
    assert_eq!(mine[0]["result"]["result"]["action"], json!("purge_ticket"));

    // A rejected one never runs and says why.
    let second = call(&alice, "action_purge_ticket", json!({"recordId": "t9"})).await;
    let id2 = serde_json::from_str::<Value>(&text(&second)).unwrap()["pendingActionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(id2, id);
    fake.clear();
    // Malformed bodies are refused in the API's envelope; nothing is
    // decided.
    for (content_type, body) in [
        ("application/json", "{"),
        ("application/json", "{\"reason\": 5}"),
        ("application/x-www-form-urlencoded", "reason=keep+it"),
    ] {
        let refused = http
            .post(running.url(&format!("/approvals/{id2}/reject")))
            .bearer_auth(BOB)
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400, "{body}");
        let answer: Value = refused.json().await.unwrap();
        assert_eq!(answer["error"]["code"], json!("VALIDATION_ERROR"), "{body}");
    }
    // The reason is kept whatever the content type says.
    let rejected = http
        .post(running.url(&format!("/approvals/{id2}/reject")))
        .bearer_auth(BOB)
        .header("content-type", "text/plain")
        .body(json!({"reason": "keep it"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(rejected.status(), 200);
    let rejected: Value = rejected.json().await.unwrap();
    assert_eq!(rejected["state"], json!("rejected"));
    assert_eq!(rejected["reason"], json!("keep it"), "{rejected}");
    assert!(fake.received().is_empty());
    let lookup = call(
        &alice,
        "gateway-pending-actions",
        json!({"pendingActionId": id2}),
    )
    .await;
    let view: Value = serde_json::from_str(&text(&lookup)).unwrap();
    assert_eq!(view["state"], json!("rejected"));
    assert_eq!(view["reason"], json!("keep it"));
    // Unknown ids are 404.
    let missing = http
        .get(running.url("/approvals/pa_000000000000000000000000"))
        .bearer_auth(BOB)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    let audit = running.audit();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pending = lines
        .iter()
        .find(|l| l["outcome"] == json!("pending"))
        .unwrap();
    assert_eq!(pending["pendingId"], json!(id));
    assert_eq!(pending["tool"], json!("action_purge_ticket"));
    assert!(
        lines
            .iter()
            .any(|l| l["tool"] == json!("approve") && l["outcome"] == json!("executed"))
    );
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
    running.stop().await;
}

#[tokio::test]
async fn the_server_vouches_for_keys_before_anything_is_listed_or_decided() {
    const MALLORY: &str = "osk_mallory_revoked";
    const CAROL: &str = "osk_carol_no_tickets";
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t5", json!({"subject": "Old"}));
    fake.revoke(MALLORY);
    fake.deny(CAROL, "support_ticket");
    let running = start(&fake, |_| {}).await;
    let alice = client(&running, ALICE, ProtocolVersion::V_2025_11_25).await;
    let proposed = call(&alice, "action_purge_ticket", json!({"recordId": "t5"})).await;
    let envelope: Value = serde_json::from_str(&text(&proposed)).unwrap();
    let id = envelope["pendingActionId"].as_str().unwrap().to_owned();
    // The key was checked once, with a read that lists nothing, and then
    // remembered.
    let probes = fake.probes();
    assert_eq!(probes.len(), 1, "{probes:?}");
    assert_eq!(probes[0].path, "/api/v1/data/support_ticket");
    assert_eq!(
        probes[0].authorization.as_deref(),
        Some(format!("Bearer {ALICE}").as_str())
    );

    let http = reqwest::Client::new();
    // A key the server refuses reads nothing, over MCP or the approvals API.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "0"}}});
    let response = http
        .post(running.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(MALLORY)
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    for path in ["/approvals".to_owned(), format!("/approvals/{id}")] {
        let response = http
            .get(running.url(&path))
            .bearer_auth(MALLORY)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{path}");
        let body = response.text().await.unwrap();
        assert!(body.contains("does not accept this API key"), "{body}");
        assert!(!body.contains(MALLORY), "{body}");
    }
    let response = http
        .post(running.url(&format!("/approvals/{id}/reject")))
        .bearer_auth(MALLORY)
        .json(&json!({"reason": "no"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);

    // A key that may not read tickets does not see, or decide, one.
    let listed: Value = http
        .get(running.url("/approvals"))
        .bearer_auth(CAROL)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["approvals"], json!([]));
    let shown = http
        .get(running.url(&format!("/approvals/{id}")))
        .bearer_auth(CAROL)
        .send()
        .await
        .unwrap();
    assert_eq!(shown.status(), 403);
    let response = http
        .post(running.url(&format!("/approvals/{id}/reject")))
        .bearer_auth(CAROL)
        .json(&json!({"reason": "not mine to decide"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], json!("PERMISSION_DENIED"));
    // Still pending: the refused decisions recorded nothing.
    let listed: Value = http
        .get(running.url("/approvals"))
        .bearer_auth(BOB)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["approvals"][0]["state"], json!("pending"));
    running.stop().await;
}

#[tokio::test]
async fn api_actions_get_the_key_only_on_the_servers_origin() {
    let hooks = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hooks.json");
    let fake = Fake::start().await;
    let third_party = Fake::start().await;
    for (base, forwarded) in [(&fake, true), (&third_party, false)] {
        let stack = hooks.clone();
        let base_url = format!("{}/", base.url);
        let running = start(&fake, move |config| {
            config.stacks = vec![stack];
            config.api_base_url = Some(base_url);
        })
        .await;
        let alice = client(&running, ALICE, ProtocolVersion::V_2025_11_25).await;
        let tools = alice.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "action_send_reminder"));
        base.clear();
        let bad = call(&alice, "action_send_reminder", json!({"channel": "fax"})).await;
        assert_eq!(bad.is_error, Some(true));
        assert!(base.received().is_empty());
        let sent = call(&alice, "action_send_reminder", json!({"channel": "sms"})).await;
        assert_eq!(sent.is_error, Some(false), "{}", text(&sent));
        let received = base.received();
        assert_eq!(received.len(), 1, "{received:?}");
        assert_eq!(received[0].path, "/hooks/reminders");
        assert_eq!(received[0].body, json!({"channel": "sms"}));
        let expected = forwarded.then(|| format!("Bearer {ALICE}"));
        assert_eq!(
            received[0].authorization, expected,
            "forwarded: {forwarded}"
        );
        running.stop().await;
    }
}

#[tokio::test]
async fn ending_a_session_is_answered_200_and_the_session_is_gone() {
    let fake = Fake::start().await;
    let running = start(&fake, |_| {}).await;
    let http = reqwest::Client::new();
    let post = |key: &str, body: Value, session: Option<&str>| {
        let mut request = http
            .post(running.url("/mcp"))
            .bearer_auth(key)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let end = |key: &str, session: &str| {
        http.delete(running.url("/mcp"))
            .bearer_auth(key)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
    };
    let opened = post(
        ALICE,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(opened.status(), 200);
    let session = opened
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ready = post(ALICE, initialized, Some(&session)).await.unwrap();
    assert!(ready.status().is_success(), "{}", ready.status());
    // Another key can neither use nor end Alice's session: to it, the
    // session is not there.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let theirs = post(BOB, list.clone(), Some(&session)).await.unwrap();
    assert_eq!(theirs.status(), 404);
    assert_eq!(end(BOB, &session).await.unwrap().status(), 404);
    let mine = post(ALICE, list.clone(), Some(&session)).await.unwrap();
    assert_eq!(mine.status(), 200);
    assert!(mine.text().await.unwrap().contains("action_ticket_stats"));
    let ended = end(ALICE, &session).await.unwrap();
    assert_eq!(ended.status(), 200);
    // Ended once: ending it again (or a session never opened) is 404.
    assert_eq!(end(ALICE, &session).await.unwrap().status(), 404);
    assert_eq!(end(ALICE, "no-such-session").await.unwrap().status(), 404);
    // The session is over: a request in it is refused.
    let after = post(ALICE, list, Some(&session)).await.unwrap();
    assert_eq!(after.status(), 404, "{:?}", after.text().await);
    running.stop().await;
}

#[tokio::test]
async fn an_oversized_body_is_refused() {
    let fake = Fake::start().await;
    let running = start(&fake, |c| c.max_body_bytes = 1024).await;
    let response = reqwest::Client::new()
        .post(running.url("/approvals/pa_1/reject"))
        .bearer_auth(ALICE)
        .header("content-type", "application/json")
        .body(format!("{{\"reason\": \"{}\"}}", "x".repeat(4096)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    running.stop().await;
}

#[tokio::test]
async fn the_mcp_endpoint_is_only_slash_mcp() {
    // The message screen and the listing splice know the endpoint by its
    // path: rmcp must not answer beside them at any other.
    let fake = Fake::start().await;
    let running = start(&fake, |_| {}).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    for (path, status) in [("/mcp/x", 404), ("/mcp/", 200), ("/mcp", 200)] {
        let response = reqwest::Client::new()
            .post(running.url(path))
            .bearer_auth(ALICE)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{path}");
    }
    running.stop().await;
}

#[tokio::test]
async fn a_body_that_is_no_single_json_rpc_message_is_answered_as_json_rpc_says() {
    let fake = Fake::start().await;
    let running = start(&fake, |_| {}).await;
    let send = |body: String| {
        reqwest::Client::new()
            .post(running.url("/mcp"))
            .bearer_auth(ALICE)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-03-26")
            .body(body)
            .send()
    };
    let cases = [
        (
            "{\"jsonrpc\": \"2.0\", \"id\": 1,".to_owned(),
            400,
            -32700,
            Value::Null,
        ),
        (
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]).to_string(),
            400,
            -32600,
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "action_ticket_stats", "arguments": [1]}})
            .to_string(),
            200,
            -32602,
            json!(7),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {}}).to_string(),
            200,
            -32602,
            json!(8),
        ),
        // JSON, but no JSON-RPC 2.0 message (rmcp answered these 415 with
        // plain text).
        (json!({"foo": 1}).to_string(), 400, -32600, Value::Null),
        (
            json!({"jsonrpc": "1.0", "id": 9, "method": "ping"}).to_string(),
            400,
            -32600,
            json!(9),
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}).to_string(),
            400,
            -32600,
            Value::Null,
        ),
        ("123".to_owned(), 400, -32600, Value::Null),
        // Params rmcp cannot read (it answered a plain-text 415).
        (
            json!({"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": 5}).to_string(),
            200,
            -32602,
            json!(12),
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": 5})
                .to_string(),
            400,
            -32600,
            Value::Null,
        ),
        (
            format!(
                "{{\"jsonrpc\": \"2.0\", \"id\": 10, \"method\": \"ping\", \"params\": {{\"x\": {}{}}}}}",
                "[".repeat(200),
                "]".repeat(200)
            ),
            400,
            -32600,
            Value::Null,
        ),
    ];
    for (body, status, code, id) in cases {
        let response = send(body.clone()).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{body}");
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["error"]["code"], json!(code), "{body}: {answer}");
        assert_eq!(answer["id"], id, "{body}: {answer}");
    }
    // Served although rmcp alone answered each with a plain-text 415: a
    // lone surrogate escape is read as U+FFFD, and a byte-order mark before
    // the message is skipped (as over stdio).
    let initialize = |id: u32, name: &str| {
        format!(
            r#"{{"jsonrpc": "2.0", "id": {id}, "method": "initialize", "params": {{"protocolVersion": "2025-03-26", "capabilities": {{}}, "clientInfo": {{"name": "{name}", "version": "0"}}}}}}"#
        )
    };
    for (id, body) in [
        (11, initialize(11, r"x\ud800")),
        (13, format!("\u{feff}{}", initialize(13, "bom"))),
    ] {
        let response = send(body.clone()).await.unwrap();
        assert_eq!(response.status(), 200, "{body}");
        let answer = response.text().await.unwrap();
        let served = format!(r#""id":{id},"result":{{"protocolVersion""#);
        assert!(answer.contains(&served), "{body}: {answer}");
    }
    // Without a key it is 401 all the same.
    let response = reqwest::Client::new()
        .post(running.url("/mcp"))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert!(fake.received().is_empty());
    running.stop().await;
}

#[tokio::test]
async fn two_gateways_sharing_one_store_run_an_approved_action_once() {
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t3", json!({"subject": "Dup"}));
    let shared = tempfile::tempdir().unwrap();
    let store = shared.path().join("approvals.sqlite");
    let first = start(&fake, |c| c.approvals = store.clone()).await;
    let second = start(&fake, |c| c.approvals = store.clone()).await;
    let alice = client(&first, ALICE, ProtocolVersion::V_2025_11_25).await;
    let proposed = call(&alice, "action_purge_ticket", json!({"recordId": "t3"})).await;
    let id = serde_json::from_str::<Value>(&text(&proposed)).unwrap()["pendingActionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let http = reqwest::Client::new();
    let row = shown_row(&second, BOB, &id).await;
    let sha = row["inputSha256"].as_str().unwrap().to_owned();
    fake.clear();
    let approve = |running: &Running| {
        http.post(running.url(&format!("/approvals/{id}/approve")))
            .bearer_auth(BOB)
            .json(&json!({"input_sha256": sha}))
            .send()
    };
    let (a, b) = tokio::join!(approve(&first), approve(&second));
    let mut statuses = [a.unwrap().status().as_u16(), b.unwrap().status().as_u16()];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409]);
    let posts = fake
        .received()
        .into_iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 1);
    alice.cancel().await.unwrap();
    first.stop().await;
    second.stop().await;
}

#[tokio::test]
async fn refined_tools_are_served_and_dispatched_as_their_actions() {
    // ADR-0109 Phase 2: bound tool records replace the action tools they
    // refine; a call runs on the action's route, with the pinned values.
    let fake = Fake::start().await;
    fake.add_record("ticket", "t1", json!({"subject": "Printer on fire"}));
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/refined-tools.json");
    let running = start(&fake, |config| config.stacks = vec![example]).await;
    let alice = client(&running, ALICE, ProtocolVersion::V_2025_11_25).await;
    let tools = alice.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for refined in [
        "close_as_fixed",
        "close_with_reason",
        "hand_over",
        "purge_ticket",
    ] {
        assert!(names.contains(&refined), "{refined} not in {names:?}");
    }
    assert!(
        !names.iter().any(|n| n.starts_with("action_")),
        "a superseded raw tool is served: {names:?}"
    );
    let fixed = tools.iter().find(|t| t.name == "close_as_fixed").unwrap();
    assert_eq!(fixed.title.as_deref(), Some("Close as fixed"));
    assert_eq!(
        fixed.input_schema.get("additionalProperties"),
        Some(&json!(false))
    );

    fake.clear();
    let done = call(
        &alice,
        "close_as_fixed",
        json!({"recordId": "t1", "note": "New toner"}),
    )
    .await;
    assert_eq!(done.is_error, Some(false), "{}", text(&done));
    let received = fake.received();
    assert_eq!(received.len(), 2, "{received:?}");
    assert_eq!(received[0].path, "/api/v1/data/ticket/t1");
    assert!(
        received[1]
            .path
            .starts_with("/api/v1/actions/ticket/close_ticket"),
        "{}",
        received[1].path
    );
    assert_eq!(
        received[1].body,
        json!({"params": {"note": "New toner", "resolution": "fixed"}})
    );

    // A parameter the record hides is refused before anything is sent.
    fake.clear();
    let hidden = call(
        &alice,
        "close_as_fixed",
        json!({"recordId": "t1", "hours": 3}),
    )
    .await;
    assert_eq!(hidden.is_error, Some(true));
    assert!(fake.received().is_empty());

    // The gate of the action holds, whatever the record says.
    let purge = call(&alice, "purge_ticket", json!({"recordId": "t1"})).await;
    let envelope: Value = serde_json::from_str(&text(&purge)).unwrap();
    assert_eq!(envelope["status"], json!("pending_approval"), "{envelope}");
    assert!(
        fake.received()
            .iter()
            .all(|r| !r.path.contains("delete_ticket"))
    );
    alice.cancel().await.unwrap();
    running.stop().await;
}

#[tokio::test]
async fn a_reload_is_announced_to_a_2026_07_28_subscription() {
    let fake = Fake::start().await;
    let running = start(&fake, |_| {}).await;
    let alice = client(&running, ALICE, ProtocolVersion::V_2026_07_28).await;
    assert_eq!(
        alice.peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2026_07_28
    );
    let filter = rmcp::model::SubscriptionFilter::builder()
        .tools_list_changed()
        .build();
    let mut subscription = alice.peer().listen(filter).await.unwrap();
    assert_eq!(
        subscription.acknowledged().tools_list_changed,
        Some(true),
        "the gateway accepts tools/list_changed"
    );
    running.gateway.reload().await.unwrap();
    let note = tokio::time::timeout(std::time::Duration::from_secs(10), subscription.next())
        .await
        .expect("a notification within 10 s")
        .unwrap();
    assert!(
        matches!(
            note,
            Some(rmcp::model::ServerNotification::ToolListChangedNotification(_))
        ),
        "{note:?}"
    );
    // Still a working session afterwards.
    assert_eq!(alice.list_all_tools().await.unwrap().len(), 6);
    alice.cancel().await.unwrap();
    running.stop().await;
}

/// One sessionless (2026-07-28) `tools/call` by hand, as `key`.
async fn call_2026(key: &str, url: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
    });
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let response = reqwest::Client::new()
        .post(url)
        .bearer_auth(key)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "{status}: {text}");
    // JSON when nothing precedes the result; otherwise the SSE data line.
    let json = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&text);
    serde_json::from_str::<Value>(json).unwrap()["result"].clone()
}

/// Alice's sessionless (2026-07-28) purge of `t4`, answered with a
/// confirmation question.
async fn purge_asked(url: &str) -> Value {
    let asked = call_2026(
        ALICE,
        url,
        json!({"name": "action_purge_ticket", "arguments": {"recordId": "t4"}}),
    )
    .await;
    assert_eq!(asked["resultType"], json!("input_required"), "{asked}");
    asked
}

#[tokio::test]
async fn an_input_required_state_decides_only_its_own_callers_call() {
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t4", json!({"subject": "Old"}));
    let running = start(&fake, |c| {
        c.confirm = objectstack_gateway::ConfirmMode::Elicit;
    })
    .await;
    let url = running.url("/mcp");
    let args = json!({"recordId": "t4"});
    let asked = purge_asked(&url).await;
    let question = &asked["inputRequests"]["confirm"];
    assert_eq!(question["method"], json!("elicitation/create"), "{asked}");
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap()
            .contains("purge_ticket")
    );
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let accept = json!({"confirm": {"action": "accept"}});
    // Bob replays Alice's state; Alice retries with other arguments.
    for (key, arguments) in [(BOB, args.clone()), (ALICE, json!({"recordId": "t5"}))] {
        let refused = call_2026(
            key,
            &url,
            json!({"name": "action_purge_ticket", "arguments": arguments,
                   "requestState": state, "inputResponses": accept}),
        )
        .await;
        assert_eq!(refused["isError"], json!(true), "{refused}");
        assert!(refused.to_string().contains("does not belong"), "{refused}");
    }
    assert!(
        fake.received().iter().all(|r| r.method == "GET"),
        "nothing ran"
    );
    let row = running.gateway.queue().get(&state).unwrap();
    assert_eq!(row.state.as_str(), "pending");
    // Alice's own answer runs it, once.
    let done = call_2026(
        ALICE,
        &url,
        json!({"name": "action_purge_ticket", "arguments": args,
               "requestState": state, "inputResponses": accept}),
    )
    .await;
    assert_eq!(done["isError"], json!(false), "{done}");
    let again = call_2026(
        ALICE,
        &url,
        json!({"name": "action_purge_ticket", "arguments": args,
               "requestState": state, "inputResponses": accept}),
    )
    .await;
    assert_eq!(again["isError"], json!(true), "{again}");
    assert!(again.to_string().contains("already executed"), "{again}");
    let posts = fake
        .received()
        .into_iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 1);
    running.stop().await;
}

#[tokio::test]
async fn a_result_its_output_schema_refuses_is_an_error_that_says_the_action_ran() {
    let fake = Fake::start().await;
    let running = start(&fake, |_| {}).await;
    let bob = client(&running, BOB, ProtocolVersion::V_2025_11_25).await;
    for data in [json!({"total": "three"}), json!([1, 2]), Value::Null] {
        fake.reply("ticket_stats", 200, json!({"success": true, "data": data}));
        let r = call(&bob, "action_ticket_stats", json!({})).await;
        assert_eq!(r.is_error, Some(true), "{data}: {r:?}");
        assert!(r.structured_content.is_none());
        let said = text(&r);
        assert!(
            said.contains("The action ran (do not run it again)")
                && said.contains("does not match the tool's outputSchema"),
            "{said}"
        );
    }
    let _ = bob.cancel().await;
    running.stop().await;
}

#[tokio::test]
async fn a_shutdown_answers_the_calls_in_flight_and_refuses_new_requests() {
    let fake = Fake::start().await;
    let mut running = start(&fake, |_| {}).await;
    let bob = client(&running, BOB, ProtocolVersion::V_2025_11_25).await;
    *fake.state.delay.lock().unwrap() = Some(std::time::Duration::from_millis(800));
    let in_flight = tokio::spawn(async move {
        let result = bob
            .call_tool(CallToolRequestParams::new("action_ticket_stats"))
            .await;
        (result, bob)
    });
    // The call has reached the (slow) server when the shutdown begins.
    while fake.received().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let _ = running.stop.take().unwrap().send(());
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let refused = reqwest::Client::new()
        .get(running.url("/approvals"))
        .bearer_auth(ALICE)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "1");
    let (result, _bob) = tokio::time::timeout(std::time::Duration::from_secs(10), in_flight)
        .await
        .expect("the call in flight is answered, not left hanging")
        .unwrap();
    let result = result.expect("the answer of a call in flight is sent before the gateway stops");
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(
        result.structured_content,
        Some(json!({"total": 3, "byStatus": {"open": 2}}))
    );
    tokio::time::timeout(std::time::Duration::from_secs(10), running.task)
        .await
        .expect("the gateway stops once the drain is over")
        .unwrap();
}

#[tokio::test]
async fn an_approved_action_whose_server_does_not_answer_is_in_doubt_not_failed() {
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t9", json!({"subject": "Spam"}));
    let running = start(&fake, |c| {
        c.backend_timeout = std::time::Duration::from_millis(300);
    })
    .await;
    let alice = client(&running, ALICE, ProtocolVersion::V_2025_11_25).await;
    let proposed = call(&alice, "action_purge_ticket", json!({"recordId": "t9"})).await;
    let envelope: Value = serde_json::from_str(&text(&proposed)).unwrap();
    let id = envelope["pendingActionId"].as_str().unwrap().to_owned();
    let http = reqwest::Client::new();
    let shown = shown_row(&running, BOB, &id).await;
    // The server receives the purge and answers too late.
    *fake.state.action_delay.lock().unwrap() = Some(std::time::Duration::from_millis(900));
    let decision: Value = http
        .post(running.url(&format!("/approvals/{id}/approve")))
        .bearer_auth(BOB)
        .json(&json!({"input_sha256": shown["inputSha256"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(decision["state"], json!("in_doubt"), "{decision}");
    assert!(
        decision["error"].as_str().unwrap().contains("may have run"),
        "{decision}"
    );
    let row = running.gateway.queue().get(&id).unwrap();
    assert_eq!(row.state.as_str(), "in_doubt");
    assert!(fake.received().iter().any(|r| r.method == "POST"));
    let _ = alice.cancel().await;
    running.stop().await;
}

/// Alice's purge of `t4` as a 2026-07-28 client that cannot be asked
/// (no elicitation capability): queued for a person.
async fn purge_queued(url: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "action_purge_ticket", "arguments": {"recordId": "t4"},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let response = reqwest::Client::new()
        .post(url)
        .bearer_auth(ALICE)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "action_purge_ticket")
        .json(&body)
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    let json = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&text);
    let result = serde_json::from_str::<Value>(json).unwrap()["result"].clone();
    let envelope: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(envelope["status"], json!("pending_approval"), "{result}");
    envelope["pendingActionId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_client_cannot_answer_a_confirmation_it_was_never_asked() {
    for mode in [
        objectstack_gateway::ConfirmMode::Queue,
        objectstack_gateway::ConfirmMode::Elicit,
    ] {
        let fake = Fake::start().await;
        fake.add_record("support_ticket", "t4", json!({"subject": "Old"}));
        let running = start(&fake, |c| c.confirm = mode).await;
        let url = running.url("/mcp");
        // Queued for a person to approve: the client was not asked.
        let id = purge_queued(&url).await;
        let forged = call_2026(
            ALICE,
            &url,
            json!({"name": "action_purge_ticket", "arguments": {"recordId": "t4"},
                   "requestState": id, "inputResponses": {"confirm": {"action": "accept"}}}),
        )
        .await;
        assert_eq!(forged["isError"], json!(true), "{mode:?}: {forged}");
        assert!(
            forged.to_string().contains("not one this gateway asked"),
            "{forged}"
        );
        // The same over a session of an earlier revision.
        let client = client(&running, ALICE, ProtocolVersion::V_2025_06_18).await;
        let mut params = CallToolRequestParams::new("action_purge_ticket")
            .with_arguments(args(json!({"recordId": "t4"})));
        params.request_state = Some(id.clone());
        params.input_responses =
            serde_json::from_value(json!({"confirm": {"action": "accept"}})).unwrap();
        let forged = client.call_tool(params).await.unwrap();
        assert_eq!(forged.is_error, Some(true), "{mode:?}: {forged:?}");
        let _ = client.cancel().await;
        assert_eq!(
            running.gateway.queue().get(&id).unwrap().state.as_str(),
            "pending",
            "{mode:?}: it still waits for a person"
        );
        assert!(
            fake.received().iter().all(|r| r.method == "GET"),
            "{mode:?}: nothing ran"
        );
        running.stop().await;
    }
}

async fn list_as(running: &Running, key: &str, query: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .get(running.url(&format!("/approvals{query}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// The ids the model's lookup lists for this client, in its order.
async fn my_pending(client: &RunningService<RoleClient, ClientConfig>) -> Vec<String> {
    let lookup = call(client, "gateway-pending-actions", json!({})).await;
    let view: Value = serde_json::from_str(&text(&lookup)).unwrap();
    view["pendingActions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pendingActionId"].as_str().unwrap().to_owned())
        .collect()
}

fn listed_ids(listing: &Value) -> Vec<String> {
    listing["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn listings_are_ordered_limited_and_read_a_page_at_a_time() {
    const CAROL: &str = "osk_carol_no_tickets";
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t9", json!({"subject": "Spam"}));
    fake.deny(CAROL, "support_ticket");
    let running = start(&fake, |_| {}).await;
    let alice = client(&running, ALICE, ProtocolVersion::V_2025_11_25).await;
    let mut tickets = Vec::new();
    for _ in 0..23 {
        let r = call(&alice, "action_purge_ticket", json!({"recordId": "t9"})).await;
        let envelope: Value = serde_json::from_str(&text(&r)).unwrap();
        tickets.push(envelope["pendingActionId"].as_str().unwrap().to_owned());
    }
    // Rows on an object Carol may read, proposed elsewhere on the store.
    let queue = running.gateway.queue();
    let mut invoices = Vec::new();
    for n in 0..5 {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        let proposed = queue
            .propose(support::proposal_on(
                "action_void_invoice",
                "invoice",
                &format!("i{n}"),
                "osk:elsewhere",
            ))
            .unwrap();
        invoices.push(proposed.action.id);
    }
    // Decided in an order unlike their creation.
    for i in [2, 0, 1] {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        queue.reject(&tickets[i], "bob", Some("no")).unwrap();
    }

    // The model's lookup: Alice's 20 newest, newest first, and no one else's.
    let mine = my_pending(&alice).await;
    let newest: Vec<String> = tickets.iter().rev().take(20).cloned().collect();
    assert_eq!(mine, newest);

    // Everything, oldest first, without a limit.
    let (status, all) = list_as(&running, BOB, "").await;
    assert_eq!(status, 200);
    let everything: Vec<String> = tickets.iter().chain(&invoices).cloned().collect();
    assert_eq!(listed_ids(&all), everything);
    let (_, newest) = list_as(&running, BOB, "?order=newest&limit=3").await;
    assert_eq!(
        listed_ids(&newest),
        [
            invoices[4].clone(),
            invoices[3].clone(),
            invoices[2].clone()
        ]
    );
    let (_, decided) = list_as(&running, BOB, "?state=rejected&order=changed&limit=2").await;
    assert_eq!(
        listed_ids(&decided),
        [tickets[1].clone(), tickets[0].clone()]
    );
    // A limit counts rows the caller may read: Carol's first four are
    // found past six pages of tickets she may not see.
    let (_, carols) = list_as(&running, CAROL, "?limit=4").await;
    assert_eq!(listed_ids(&carols), invoices[..4]);
    let (_, carols) = list_as(&running, CAROL, "?order=newest").await;
    let mut reversed = invoices.clone();
    reversed.reverse();
    assert_eq!(listed_ids(&carols), reversed);

    // Bad parameters are refused, naming the parameter.
    for (query, named) in [
        ("?limit=0", "limit"),
        ("?limit=1001", "limit"),
        ("?limit=ten", "limit"),
        ("?order=sideways", "order"),
        ("?state=done", "done"),
        // A parameter given twice, as JSON like the others.
        ("?limit=1&limit=2", "limit"),
    ] {
        let (status, body) = list_as(&running, BOB, query).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["error"]["code"], json!("VALIDATION_ERROR"), "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(named),
            "{query}: {body}"
        );
    }
    // A damaged row among them is passed over, and the lookup still shows
    // twenty (it reads on past it).
    let file = running.dir.path().join("approvals.sqlite");
    rusqlite::Connection::open(&file)
        .unwrap()
        .execute_batch(&format!(
            "DROP TRIGGER pending_actions_input_is_immutable; \
             UPDATE pending_actions SET input = '[1]' WHERE id = '{}'",
            tickets[22]
        ))
        .unwrap();
    let mine = my_pending(&alice).await;
    let readable: Vec<String> = tickets[..22].iter().rev().take(20).cloned().collect();
    assert_eq!(mine, readable);
    alice.cancel().await.unwrap();
    running.stop().await;
}

/// A user's answer to a confirmation is recorded even when a reload
/// stopped serving the tool between the question and the answer: a
/// decline rejects the proposal, so nobody can approve it afterwards.
#[tokio::test]
async fn a_decline_is_recorded_after_a_reload_removed_the_tool() {
    let fake = Fake::start().await;
    fake.add_record("support_ticket", "t4", json!({"subject": "Old"}));
    let dir = tempfile::tempdir().unwrap();
    let stack = dir.path().join("helpdesk.json");
    std::fs::copy(fixture(), &stack).unwrap();
    let served = stack.clone();
    let running = start(&fake, |c| {
        c.confirm = objectstack_gateway::ConfirmMode::Elicit;
        c.stacks = vec![served];
    })
    .await;
    let url = running.url("/mcp");
    let args = json!({"recordId": "t4"});
    let asked = purge_asked(&url).await;
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let text = std::fs::read_to_string(&stack).unwrap();
    std::fs::write(
        &stack,
        text.replace(
            "\"name\": \"purge_ticket\"",
            "\"name\": \"purge_ticket_v2\"",
        ),
    )
    .unwrap();
    running.gateway.reload().await.unwrap();
    assert!(
        !running
            .gateway
            .tool_names()
            .contains(&"action_purge_ticket".to_owned())
    );
    let answer = call_2026(
        ALICE,
        &url,
        json!({"name": "action_purge_ticket", "arguments": args, "requestState": state,
               "inputResponses": {"confirm": {"action": "decline"}}}),
    )
    .await;
    assert!(answer.to_string().contains("declined"), "{answer}");
    let row = running.gateway.queue().get(&state).unwrap();
    assert_eq!(row.state.as_str(), "rejected");
    // The record was read to propose the call; nothing ran.
    assert!(
        fake.received().iter().all(|r| r.method == "GET"),
        "{:?}",
        fake.received()
    );
    running.stop().await;
}

#[tokio::test]
async fn the_approvals_api_refuses_a_host_it_does_not_answer_to() {
    let fake = Fake::start().await;
    let running = start(&fake, |_| {}).await;
    let http = reqwest::Client::new();
    // A page on another site that rebinds its name to 127.0.0.1 sends its
    // own name as the Host, with whatever key the browser would attach.
    for (method, path) in [
        ("GET", "/approvals"),
        ("GET", "/approvals/pa_1"),
        ("POST", "/approvals/pa_1/approve"),
        ("POST", "/approvals/pa_1/reject"),
    ] {
        let request = match method {
            "GET" => http.get(running.url(path)),
            _ => http.post(running.url(path)).json(&json!({"reason": "x"})),
        };
        let response = request
            .header("host", "rebound.example.com")
            .bearer_auth(BOB)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 403, "{method} {path}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], json!("HOST_NOT_ALLOWED"), "{path}");
    }
    // The names it does answer to still work, port included.
    let port = running
        .url("/")
        .split(':')
        .nth(2)
        .unwrap_or("")
        .trim_matches('/')
        .to_owned();
    let response = http
        .get(running.url("/approvals"))
        .header("host", format!("localhost:{port}"))
        .bearer_auth(BOB)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn allowed_hosts_with_ports_or_brackets_open_the_approvals_api_as_they_open_mcp() {
    let fake = Fake::start().await;
    let running = start(&fake, |c| {
        c.allowed_hosts.push("gw.example.com:8443".into());
        c.allowed_hosts.push("[fd00::1]".into());
    })
    .await;
    let http = reqwest::Client::new();
    for (host, status) in [
        ("gw.example.com:8443", 200),
        ("[fd00::1]:9000", 200),
        ("gw.example.com:9000", 403),
    ] {
        let response = http
            .get(running.url("/approvals"))
            .header("host", host)
            .bearer_auth(BOB)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{host}");
    }
}

#[tokio::test]
async fn a_page_on_another_site_is_refused_by_mcp_and_the_approvals_api_and_nothing_reaches_the_server()
 {
    let fake = Fake::start().await;
    let running = start(&fake, |c| {
        c.allowed_origins.push("https://app.example.com".into());
    })
    .await;
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "page", "version": "0"}}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "action_escalate_ticket", "arguments": {"recordId": "t1", "reason": "x"}}});
    let mcp = |origin: &str, body: &Value| {
        http.post(running.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("origin", origin)
            .bearer_auth(BOB)
            .json(body)
            .send()
    };
    // A page elsewhere (or sandboxed: `null`) that a browser lets post to
    // 127.0.0.1, with whatever key it has.
    for origin in [
        "http://evil.example",
        "null",
        "http://localhost.evil.example:8787",
    ] {
        for body in [&initialize, &call] {
            let response = mcp(origin, body).await.unwrap();
            assert_eq!(response.status(), 403, "{origin}");
            let answer: Value = response.json().await.unwrap();
            assert_eq!(
                answer["error"]["code"],
                json!("ORIGIN_NOT_ALLOWED"),
                "{origin}"
            );
        }
        for (method, path) in [("GET", "/approvals"), ("POST", "/approvals/pa_1/approve")] {
            let request = match method {
                "GET" => http.get(running.url(path)),
                _ => http
                    .post(running.url(path))
                    .json(&json!({"input_sha256": "x"})),
            };
            let response = request
                .header("origin", origin)
                .bearer_auth(BOB)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 403, "{origin} {method} {path}");
        }
    }
    assert!(fake.received().is_empty(), "{:?}", fake.received());
    // The inbox's forms are held by their CSRF token and cookie instead: a
    // browser posts them with `Origin: null` under its no-referrer policy.
    let response = http
        .post(running.url("/approvals/ui/sign-in"))
        .header("origin", "null")
        .form(&[("key", "osk_wrong")])
        .send()
        .await
        .unwrap();
    // (The inbox refuses the wrong key itself, with its own page.)
    let html = response
        .headers()
        .get("content-type")
        .is_some_and(|t| t.to_str().unwrap_or("").starts_with("text/html"));
    let body = response.text().await.unwrap();
    assert!(html && !body.contains("ORIGIN_NOT_ALLOWED"), "{body}");
    // A local tool on another loopback port, a page allowed by name, and
    // a client that sends no Origin are answered.
    for origin in [
        "http://localhost:6274",
        "http://127.0.0.1:3000",
        "https://app.example.com",
    ] {
        let response = mcp(origin, &initialize).await.unwrap();
        assert_eq!(response.status(), 200, "{origin}");
    }
    let response = http
        .get(running.url("/approvals"))
        .bearer_auth(BOB)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    running.stop().await;
}

/// Serves `config` over stdio on a runtime of its own, makes `call` as
/// Alice through a client with `handler`, waits until the fake server is
/// asked to run an action, then shuts that runtime down as the CLI does at
/// exit (the call still running); returns the audit trail's lines.
fn audit_after_stopping_mid_call(
    fake: &Fake,
    config: Config,
    handler: impl rmcp::ClientHandler,
    call: CallToolRequestParams,
) -> Vec<Value> {
    let audit_path = config.audit.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let gateway = Gateway::new(config).unwrap();
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (input, output) = tokio::io::split(theirs);
        tokio::spawn(async move {
            let _ = gateway
                .serve_io(objectstack_gateway::ApiKey::new(ALICE), input, output)
                .await;
        });
        let client = handler.serve(tokio::io::split(ours)).await.unwrap();
        tokio::spawn(async move {
            let _ = client.call_tool(call).await;
            drop(client);
        });
        for _ in 0..100 {
            if fake.received().iter().any(|r| r.method == "POST") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    });
    assert!(fake.received().iter().any(|r| r.method == "POST"));
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    let audit = std::fs::read_to_string(audit_path.unwrap()).unwrap();
    assert!(!audit.contains(ALICE));
    audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A fake server on a runtime of its own (the gateway's is shut down
/// under it), whose actions take 30 s.
fn slow_fake() -> (tokio::runtime::Runtime, Fake) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fake = runtime.block_on(Fake::start());
    *fake.state.action_delay.lock().unwrap() = Some(std::time::Duration::from_secs(30));
    (runtime, fake)
}

/// The process ending while a call still runs (its drain timed out) leaves
/// an `abandoned` line in the audit trail, not silence: the action may
/// have run on the server. Here over the stdio transport (`serve_io`), and
/// the "process" is the gateway's runtime, shut down as the CLI shuts its
/// own down.
#[test]
fn a_call_the_gateway_stops_before_it_finishes_is_audited_abandoned() {
    let (_runtime, fake) = slow_fake();
    let dir = tempfile::tempdir().unwrap();
    let entries = audit_after_stopping_mid_call(
        &fake,
        config_for(&fake, dir.path()),
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("test", "0"),
        ),
        CallToolRequestParams::new("action_ticket_stats"),
    );
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["tool"], json!("action_ticket_stats"));
    assert_eq!(entries[0]["outcome"], json!("abandoned"));
    assert_eq!(entries[0]["transport"], json!("stdio"));
    assert_eq!(entries[0]["pendingId"], Value::Null);
}

/// A client that accepts every confirmation it is asked for (form
/// elicitation, on a revision before 2026-07-28).
struct Accepts;

impl rmcp::ClientHandler for Accepts {
    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(json!({})),
        )
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
        ClientConfig::new(capabilities, Implementation::new("test", "0"))
    }
}

/// A confirmed action still running on the server when the process ends
/// is audited `abandoned` with its pending action's id: the operator can
/// look that action up and check whether it ran.
#[test]
fn an_abandoned_confirmed_call_names_its_pending_action() {
    let (_runtime, fake) = slow_fake();
    fake.add_record("support_ticket", "t4", json!({"subject": "Old"}));
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_for(&fake, dir.path());
    config.confirm = objectstack_gateway::ConfirmMode::Elicit;
    let entries = audit_after_stopping_mid_call(
        &fake,
        config,
        Accepts,
        CallToolRequestParams::new("action_purge_ticket")
            .with_arguments(args(json!({"recordId": "t4"}))),
    );
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["tool"], json!("action_purge_ticket"));
    assert_eq!(entries[0]["outcome"], json!("abandoned"));
    let id = entries[0]["pendingId"].as_str().unwrap_or_default();
    assert!(!id.is_empty(), "{entries:?}");
}
