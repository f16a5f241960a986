//! The default HTTP API client against a real HTTP/1.1 server on
//! 127.0.0.1, started by each test (a small hand-written responder on a
//! Tokio listener: no extra dependency, and every byte on the wire is
//! visible to the assertions).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use approval_support::{FakeHost, obj};
use objectstack_bridge::approval::{ApprovalQueue, MemoryStore, State};
use objectstack_bridge::runtime::{
    Actor, ApiClient, ApiRequest, CallContext, ExecuteOptions, HostError, HostServices,
    HttpApiClient, HttpClientOptions, ToolRegistry,
};
use objectstack_spec::AIToolDefinition;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the server read it.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    /// The request target as sent: path and query.
    path: String,
    headers: HashMap<String, String>,
    body: String,
}

/// What the server answers.
enum Reply {
    /// A complete response with a `Content-Length`.
    Full {
        status: &'static str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A response head, part of the body, then silence for `stall` (the
    /// connection stays open).
    Stall {
        head: String,
        sent: Vec<u8>,
        stall: Duration,
    },
    /// `total` bytes of body in chunked encoding (no `Content-Length`).
    Chunked { status: &'static str, total: usize },
}

impl Reply {
    fn json(status: &'static str, body: String) -> Reply {
        Reply::Full {
            status,
            headers: Vec::new(),
            body: body.into_bytes(),
        }
    }

    fn redirect(to: &str) -> Reply {
        Reply::Full {
            status: "302 Found",
            headers: vec![("Location".into(), to.to_owned())],
            body: Vec::new(),
        }
    }
}

type Log = Arc<Mutex<Vec<Received>>>;
type Handler = Arc<dyn Fn(&Received) -> Reply + Send + Sync>;

/// Starts a server answering with `handler`; returns its origin
/// (`http://127.0.0.1:PORT`) and what it receives.
async fn serve_with(handler: Handler) -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let seen = seen.clone();
            let handler = handler.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let mut lines = head.split("\r\n");
                let mut request_line = lines.next().unwrap().split(' ');
                let method = request_line.next().unwrap().to_owned();
                let path = request_line.next().unwrap().to_owned();
                let headers: HashMap<String, String> = lines
                    .filter_map(|l| l.split_once(": "))
                    .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
                    .collect();
                let len: usize = headers
                    .get("content-length")
                    .map(|l| l.parse().unwrap())
                    .unwrap_or(0);
                while buf.len() < head_end + len {
                    let n = sock.read(&mut chunk).await.unwrap();
                    buf.extend_from_slice(&chunk[..n]);
                }
                let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).to_string();
                let received = Received {
                    method,
                    path,
                    headers,
                    body,
                };
                seen.lock().unwrap().push(received.clone());
                match handler(&received) {
                    Reply::Full {
                        status,
                        headers,
                        body,
                    } => {
                        let mut head = format!(
                            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                            body.len()
                        );
                        for (k, v) in headers {
                            head.push_str(&format!("{k}: {v}\r\n"));
                        }
                        head.push_str("\r\n");
                        let _ = sock.write_all(head.as_bytes()).await;
                        let _ = sock.write_all(&body).await;
                    }
                    Reply::Stall { head, sent, stall } => {
                        let _ = sock.write_all(head.as_bytes()).await;
                        let _ = sock.write_all(&sent).await;
                        let _ = sock.flush().await;
                        tokio::time::sleep(stall).await;
                    }
                    Reply::Chunked { status, total } => {
                        let head = format!(
                            "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                        );
                        if sock.write_all(head.as_bytes()).await.is_err() {
                            return;
                        }
                        let piece = vec![b'x'; 16 * 1024];
                        let mut left = total;
                        while left > 0 {
                            let n = left.min(piece.len());
                            let frame = format!("{n:x}\r\n");
                            if sock.write_all(frame.as_bytes()).await.is_err()
                                || sock.write_all(&piece[..n]).await.is_err()
                                || sock.write_all(b"\r\n").await.is_err()
                            {
                                return;
                            }
                            left -= n;
                        }
                        let _ = sock.write_all(b"0\r\n\r\n").await;
                    }
                }
                let _ = sock.shutdown().await;
            });
        }
    });
    (format!("http://{addr}"), log)
}

/// The default routes: an echo, and a few fixed answers.
fn routes(received: &Received) -> Reply {
    let Received {
        method, path, body, ..
    } = received;
    match path.as_str() {
        "/api/v1/empty" => Reply::json("204 No Content", String::new()),
        "/api/v1/text" => Reply::json("200 OK", "plain words".to_owned()),
        "/api/v1/fail" => Reply::json(
            "422 Unprocessable Entity",
            r#"{"error":"amount too large"}"#.to_owned(),
        ),
        "/api/v1/slow" => Reply::Stall {
            head: String::new(),
            sent: Vec::new(),
            stall: Duration::from_secs(3),
        },
        _ => Reply::json(
            "200 OK",
            json!({"method": method, "path": path, "echo": body}).to_string(),
        ),
    }
}

/// Starts a server with the default routes; returns its base URL
/// (`http://127.0.0.1:PORT/api/v1/`) and what it receives.
async fn serve() -> (String, Log) {
    let (origin, log) = serve_with(Arc::new(routes)).await;
    (format!("{origin}/api/v1/"), log)
}

fn request(method: &str, target: &str, body: Option<Value>) -> ApiRequest {
    ApiRequest {
        action: "a".into(),
        method: method.into(),
        target: target.into(),
        body,
        headers: vec![("X-Call".into(), "per-call".into())],
        actor: Actor::new("u1"),
        context: CallContext::default(),
        idempotency_key: None,
    }
}

/// The options of the test client: credentials in two headers, a short
/// timeout.
fn options(base: &str) -> HttpClientOptions {
    HttpClientOptions {
        base_url: Some(base.to_owned()),
        headers: vec![
            ("Authorization".into(), "Bearer k".into()),
            ("X-Api-Key".into(), "key-1".into()),
            ("X-Call".into(), "default".into()),
        ],
        timeout: Duration::from_millis(500),
        ..HttpClientOptions::default()
    }
}

fn client(base: &str) -> HttpApiClient {
    HttpApiClient::new(options(base)).unwrap()
}

#[tokio::test]
async fn posts_json_to_a_relative_target_with_default_and_per_call_headers() {
    let (base, log) = serve().await;
    let out = client(&base)
        .request(request("POST", "invoices/send", Some(json!({"amount": 5}))))
        .await
        .unwrap();
    assert_eq!(out["path"], "/api/v1/invoices/send");
    assert_eq!(out["echo"], r#"{"amount":5}"#);
    let got = log.lock().unwrap()[0].clone();
    assert_eq!(got.method, "POST");
    assert_eq!(got.headers["authorization"], "Bearer k");
    assert_eq!(
        got.headers["x-call"], "per-call",
        "per-call headers win over defaults"
    );
    assert_eq!(got.headers["content-type"], "application/json");
    assert!(!got.headers.contains_key("idempotency-key"));
}

#[tokio::test]
async fn absolute_paths_within_the_base_path_and_get_sends_no_body() {
    let (base, log) = serve().await;
    let out = client(&base)
        .request(request("GET", "/api/v1/health", None))
        .await
        .unwrap();
    assert_eq!(out["path"], "/api/v1/health");
    let got = log.lock().unwrap()[0].clone();
    assert_eq!(got.method, "GET");
    assert_eq!(got.body, "");
    assert!(!got.headers.contains_key("content-type"));
}

#[tokio::test]
async fn empty_body_is_null_and_text_is_a_string() {
    let (base, _) = serve().await;
    let c = client(&base);
    assert_eq!(
        c.request(request("DELETE", "empty", None)).await.unwrap(),
        Value::Null
    );
    assert_eq!(
        c.request(request("POST", "text", Some(json!({}))))
            .await
            .unwrap(),
        json!("plain words")
    );
}

#[tokio::test]
async fn non_2xx_is_an_error_with_status_and_body() {
    let (base, _) = serve().await;
    let err = client(&base)
        .request(request("POST", "fail", Some(json!({"amount": 1e9}))))
        .await
        .unwrap_err();
    match &err {
        HostError::Http {
            status, body, url, ..
        } => {
            assert_eq!(*status, 422);
            assert_eq!(body, r#"{"error":"amount too large"}"#);
            assert!(url.ends_with("/fail"), "{url}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("HTTP 422 from POST http://127.0.0.1:"),
        "{err}"
    );
}

#[tokio::test]
async fn a_request_that_may_change_something_and_got_no_answer_has_an_unknown_outcome() {
    let (base, _) = serve().await;
    // Sent, and no answer in time: it may have run.
    let err = client(&base)
        .request(request("POST", "slow", Some(json!({"a": 1}))))
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Unanswered { .. }), "{err:?}");
    assert!(err.outcome_unknown());
    assert!(err.to_string().contains("may have run"), "{err}");
    // A refused connection sent nothing.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = client(&format!("http://127.0.0.1:{port}/"))
        .request(request("POST", "x", Some(json!({}))))
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Transport { .. }), "{err:?}");
    assert!(!err.outcome_unknown());
}

#[tokio::test]
async fn a_slow_server_times_out_and_a_closed_port_is_a_transport_error() {
    let (base, _) = serve().await;
    let started = std::time::Instant::now();
    let err = client(&base)
        .request(request("GET", "slow", None))
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Transport { .. }), "{err:?}");
    assert!(err.to_string().contains("no answer within 500 ms"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));

    // A port nobody listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = client(&format!("http://127.0.0.1:{port}/"))
        .request(request("GET", "x", None))
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Transport { .. }), "{err:?}");
    let err = HttpApiClient::new(HttpClientOptions::default())
        .unwrap()
        .request(request("GET", "relative/only", None))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no base URL"), "{err}");
}

#[tokio::test]
async fn an_approved_api_action_sends_its_idempotency_key_over_the_wire() {
    let (base, log) = serve().await;
    let queue = Arc::new(ApprovalQueue::new(Arc::new(MemoryStore::new())));
    let mut registry = ToolRegistry::new(HostServices {
        api_client: Some(Arc::new(client(&base))),
        approvals: Some(queue.clone()),
        ..HostServices::default()
    });
    let action = obj(json!({
        "name": "refund", "type": "api", "target": "payments/refund", "variant": "danger",
        "bodyShape": {"wrap": "refund"}, "bodyExtra": {"currency": "EUR"},
        "ai": {"exposed": true, "description": "Refunds a payment to the customer who made it."}
    }));
    let def = AIToolDefinition {
        name: "action_refund".into(),
        label: None,
        description: "Refunds a payment.".into(),
        parameters: obj(
            json!({"type": "object", "properties": {"amount": {"type": "number"}},
                               "required": ["amount"], "additionalProperties": false}),
        ),
        category: None,
        output_schema: None,
        object_name: None,
        requires_confirmation: Some(true),
    };
    registry.register_action(def, action).unwrap();
    let ctx = CallContext {
        tool_call_id: Some("tc-1".into()),
        ..CallContext::default()
    };
    let out = registry
        .call("action_refund", json!({"amount": 12.5}), &ctx)
        .await;
    assert_eq!(out["status"], "pending_approval", "{out}");
    assert!(
        log.lock().unwrap().is_empty(),
        "nothing was sent before approval"
    );
    let id = out["pendingActionId"].as_str().unwrap();
    let hash = queue.get(id).unwrap().input_sha256;
    queue.approve(id, "ops", &hash).unwrap();
    let report = registry
        .execute_approved(&ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(report.executed, [id]);
    let got = log.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, "/api/v1/payments/refund");
    assert_eq!(got[0].headers["idempotency-key"], id);
    assert_eq!(
        serde_json::from_str::<Value>(&got[0].body).unwrap(),
        json!({"refund": {"amount": 12.5}, "currency": "EUR"})
    );
    let row = queue.get(id).unwrap();
    assert_eq!(row.state, State::Executed);
    assert_eq!(
        row.result.unwrap()["result"]["path"],
        "/api/v1/payments/refund"
    );
}

// ---- credentials go only to the base URL's origin ----------------------

/// A server on another origin that records what reaches it.
async fn foreign() -> (String, Log) {
    serve_with(Arc::new(|_: &Received| {
        Reply::json("200 OK", r#"{"reached": "foreign"}"#.to_owned())
    }))
    .await
}

fn host_port(origin: &str) -> &str {
    origin.strip_prefix("http://").unwrap()
}

/// Targets that would send the request, and the client's credentials,
/// somewhere else than below the base URL.
fn escaping_targets(foreign: &str) -> Vec<String> {
    let hp = host_port(foreign);
    vec![
        format!("//{hp}/x"),
        format!("\\\\{hp}\\x"),
        format!("/\\{hp}/x"),
        format!("{foreign}/x"),
        format!("http://user:pw@{hp}/x"),
        format!(" //{hp}/x"),
        format!("\t//{hp}/x"),
        format!("/\n/{hp}/x"),
        format!("ftp://{hp}/x"),
        "../../admin/x".to_owned(),
        "%2e%2e/%2E%2e/admin/x".to_owned(),
        "tasks/..%2f..%2fadmin".to_owned(),
        "/admin/x".to_owned(),
    ]
}

#[tokio::test]
async fn targets_that_name_another_origin_or_leave_the_base_path_send_nothing() {
    let (base, log) = serve().await;
    let (evil, reached) = foreign().await;
    let c = client(&base);
    for target in escaping_targets(&evil) {
        let out = c.request(request("POST", &target, Some(json!({})))).await;
        let err = out.expect_err(&format!("{target:?} was sent"));
        assert!(err.to_string().contains("refused"), "{target:?}: {err}");
    }
    assert!(
        reached.lock().unwrap().is_empty(),
        "{:?}",
        reached.lock().unwrap()
    );
    for got in log.lock().unwrap().iter() {
        assert!(
            got.path.starts_with("/api/v1/"),
            "left the base path: {got:?}"
        );
    }
}

#[tokio::test]
async fn unsafe_targets_are_skipped_at_registration_with_a_code_and_a_reason() {
    let (base, _) = serve().await;
    let (evil, _) = foreign().await;
    let mut registry = ToolRegistry::new(HostServices {
        api_client: Some(Arc::new(client(&base))),
        ..HostServices::default()
    });
    let mut targets = escaping_targets(&evil);
    targets.push(format!("http://svc:TOPSECRET@{}/x", host_port(&evil)));
    let mut actions: Vec<Value> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({"name": format!("bad{i}"), "type": "api", "target": t,
                   "ai": {"exposed": true, "description": "Calls the API with the values given."}})
        })
        .collect();
    for (name, target) in [("good", "tasks/sync"), ("rooted", "/api/v1/tasks")] {
        actions.push(json!({"name": name, "type": "api", "target": target,
            "ai": {"exposed": true, "description": "Calls the API with the values given."}}));
    }
    let stack = obj(json!({"actions": actions}));
    let (materialised, refused) = registry.register_stack(&stack);
    assert!(refused.is_empty(), "{refused:?}");
    let registered: Vec<&str> = materialised
        .registered
        .iter()
        .map(|r| r.action_name.as_str())
        .collect();
    assert_eq!(registered, ["good", "rooted"]);
    assert_eq!(materialised.skipped.len(), targets.len());
    for skipped in &materialised.skipped {
        assert_eq!(skipped.code.as_str(), "unsafe_api_target", "{skipped:?}");
        assert!(skipped.reason.contains("target"), "{}", skipped.reason);
        assert!(!skipped.reason.contains("TOPSECRET"), "{}", skipped.reason);
        assert!(!registry.contains(&format!("action_{}", skipped.action)));
    }

    // A host registering the action itself is refused the same way.
    let action = obj(
        json!({"name": "direct", "type": "api", "target": format!("//{}/x", host_port(&evil)),
        "ai": {"exposed": true, "description": "Calls the API with the values given."}}),
    );
    let err = registry
        .register_action(definition("action_direct", json!({})), action)
        .unwrap_err();
    assert!(err.to_string().contains("unsafe_api_target"), "{err}");
}

/// A tool definition with these properties and nothing required.
fn definition(name: &str, properties: Value) -> AIToolDefinition {
    AIToolDefinition {
        name: name.into(),
        label: None,
        description: "Calls the API with the values given.".into(),
        parameters: obj(
            json!({"type": "object", "properties": properties, "additionalProperties": false}),
        ),
        category: None,
        output_schema: None,
        object_name: None,
        requires_confirmation: Some(false),
    }
}

/// A server whose `away` redirects to `to` and `near` to `/api/v1/landed`.
async fn redirecting(to: String) -> (String, Log) {
    let (origin, log) = serve_with(Arc::new(move |r: &Received| match r.path.as_str() {
        "/api/v1/away" => Reply::redirect(&to),
        "/api/v1/near" => Reply::redirect("/api/v1/landed"),
        _ => routes(r),
    }))
    .await;
    (format!("{origin}/api/v1/"), log)
}

#[tokio::test]
async fn redirects_are_not_followed_by_default() {
    let (evil, reached) = foreign().await;
    let (base, log) = redirecting(format!("{evil}/steal")).await;
    let c = client(&base);
    for target in ["away", "near"] {
        let err = c.request(request("GET", target, None)).await.unwrap_err();
        assert!(
            matches!(err, HostError::Http { status: 302, .. }),
            "{target}: {err:?}"
        );
        assert!(err.to_string().contains("not followed"), "{err}");
    }
    assert!(
        reached.lock().unwrap().is_empty(),
        "the redirect was followed"
    );
    assert_eq!(log.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn an_opted_in_client_follows_redirects_within_the_origin_only() {
    let (evil, reached) = foreign().await;
    let (base, log) = redirecting(format!("{evil}/steal")).await;
    let c = HttpApiClient::new(HttpClientOptions {
        follow_redirects: true,
        ..options(&base)
    })
    .unwrap();
    let out = c.request(request("GET", "near", None)).await.unwrap();
    assert_eq!(out["path"], "/api/v1/landed");
    let landed = log.lock().unwrap()[1].clone();
    assert_eq!(landed.headers["x-api-key"], "key-1");
    assert!(!landed.headers.contains_key("referer"), "{landed:?}");

    let err = c.request(request("GET", "away", None)).await.unwrap_err();
    assert!(
        matches!(err, HostError::Http { status: 302, .. }),
        "{err:?}"
    );
    assert!(
        reached.lock().unwrap().is_empty(),
        "followed to another origin"
    );
}

#[tokio::test]
async fn an_allowed_origin_gets_the_request_but_not_the_credentials() {
    let (base, _) = serve().await;
    let (hooks, reached) = foreign().await;
    let (other, elsewhere) = foreign().await;
    let c = HttpApiClient::new(HttpClientOptions {
        allowed_origins: vec![hooks.clone()],
        ..options(&base)
    })
    .unwrap();
    let out = c
        .request(request(
            "POST",
            &format!("{hooks}/hook"),
            Some(json!({"a": 1})),
        ))
        .await
        .unwrap();
    assert_eq!(out["reached"], "foreign");
    let got = reached.lock().unwrap()[0].clone();
    assert_eq!(got.path, "/hook");
    assert!(!got.headers.contains_key("authorization"), "{got:?}");
    assert!(!got.headers.contains_key("x-api-key"), "{got:?}");
    assert_eq!(got.headers["x-call"], "per-call");
    for target in [
        format!("{other}/hook"),
        format!("http://u:p@{}/hook", host_port(&hooks)),
    ] {
        let err = c.request(request("POST", &target, None)).await.unwrap_err();
        assert!(err.to_string().contains("refused"), "{err}");
    }
    assert!(elsewhere.lock().unwrap().is_empty());
    assert_eq!(reached.lock().unwrap().len(), 1);

    // And an action naming the allowed origin registers.
    let mut registry = ToolRegistry::new(HostServices {
        api_client: Some(Arc::new(c)),
        ..HostServices::default()
    });
    let stack = obj(json!({"actions": [
        {"name": "hook", "type": "api", "target": format!("{hooks}/hook"),
         "ai": {"exposed": true, "description": "Calls the API with the values given."}},
        {"name": "other", "type": "api", "target": format!("{other}/hook"),
         "ai": {"exposed": true, "description": "Calls the API with the values given."}}
    ]}));
    let (materialised, _) = registry.register_stack(&stack);
    assert!(registry.contains("action_hook"));
    assert_eq!(materialised.skipped.len(), 1);
    assert_eq!(materialised.skipped[0].code.as_str(), "unsafe_api_target");
}

// ---- GET and DELETE send their data in the query string ----------------

fn task_registry(base: &str, queue: Option<Arc<ApprovalQueue>>) -> ToolRegistry {
    let host = FakeHost::new();
    host.add_record("task", json!({"id": "t42", "title": "Ship"}));
    ToolRegistry::new(HostServices {
        data_engine: Some(host),
        api_client: Some(Arc::new(client(base))),
        approvals: queue,
        ..HostServices::default()
    })
}

#[tokio::test]
async fn an_approved_delete_sends_the_record_id_it_was_approved_with() {
    let (base, log) = serve().await;
    let queue = Arc::new(ApprovalQueue::new(Arc::new(MemoryStore::new())));
    let mut registry = task_registry(&base, Some(queue.clone()));
    let stack = obj(json!({"objects": [{"name": "task", "actions": [
        {"name": "remove", "type": "api", "method": "DELETE", "target": "tasks",
         "recordIdParam": "id", "mode": "delete", "locations": ["record_more"],
         "ai": {"exposed": true, "description": "Deletes the task the user is looking at."}},
        {"name": "search", "type": "api", "method": "get", "target": "tasks?limit=5",
         "params": [{"name": "status", "type": "text"}, {"name": "tags", "type": "tags"},
                    {"name": "n", "type": "number"}, {"name": "done", "type": "boolean"},
                    // An array with no string option has no `items`: it still registers.
                    {"name": "codes", "type": "multiselect", "options": [{"value": 1}]}],
         "bodyExtra": {"source": "ai"},
         "ai": {"exposed": true, "description": "Finds the tasks that match what the user asks."}}
    ]}]}));
    let (materialised, refused) = registry.register_stack(&stack);
    assert!(
        refused.is_empty() && materialised.skipped.is_empty(),
        "{refused:?} {:?}",
        materialised.skipped
    );

    let ctx = CallContext {
        tool_call_id: Some("tc-del".into()),
        ..CallContext::default()
    };
    let out = registry
        .call("action_remove", json!({"recordId": "t42"}), &ctx)
        .await;
    assert_eq!(out["status"], "pending_approval", "{out}");
    let id = out["pendingActionId"].as_str().unwrap();
    let hash = queue.get(id).unwrap().input_sha256;
    queue.approve(id, "ops", &hash).unwrap();
    let report = registry
        .execute_approved(&ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(report.executed, [id]);
    let sent = log.lock().unwrap()[0].clone();
    assert_eq!(sent.method, "DELETE");
    assert_eq!(sent.path, "/api/v1/tasks?id=t42");
    assert_eq!(sent.body, "");

    let out = registry
        .call(
            "action_search",
            json!({"status": "open & shut/2", "tags": ["a", "b c"], "n": 3, "done": false}),
            &CallContext::default(),
        )
        .await;
    assert_eq!(out["ok"], true, "{out}");
    let sent = log.lock().unwrap()[1].clone();
    assert_eq!(sent.method, "GET");
    assert_eq!(
        sent.path,
        "/api/v1/tasks?limit=5&status=open%20%26%20shut%2F2&tags=a&tags=b%20c&n=3&done=false&source=ai"
    );
}

#[tokio::test]
async fn get_and_delete_data_a_query_cannot_carry_is_skipped() {
    let (base, log) = serve().await;
    let mut registry = task_registry(&base, None);
    let exposed = json!({"exposed": true, "description": "Calls the API with the values given."});
    let stack = obj(json!({"objects": [{"name": "task", "actions": [
        {"name": "wrapped", "type": "api", "method": "GET", "target": "tasks",
         "bodyShape": {"wrap": "filter"}, "ai": exposed},
        {"name": "nested", "type": "api", "method": "DELETE", "target": "tasks",
         "bodyExtra": {"filter": {"done": true}}, "ai": exposed},
        {"name": "no_param", "type": "api", "method": "DELETE", "target": "tasks",
         "locations": ["record_header"], "ai": {"exposed": true, "requiresConfirmation": false,
         "description": "Calls the API with the values given."}}
    ]}]}));
    let (materialised, refused) = registry.register_stack(&stack);
    assert!(refused.is_empty(), "{refused:?}");
    assert!(materialised.registered.is_empty());
    let codes: Vec<(&str, &str)> = materialised
        .skipped
        .iter()
        .map(|s| (s.action.as_str(), s.code.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            ("wrapped", "unsendable_api_data"),
            ("nested", "unsendable_api_data"),
            ("no_param", "unsendable_api_data")
        ]
    );
    assert!(
        materialised.skipped[2].reason.contains("recordIdParam"),
        "{}",
        materialised.skipped[2].reason
    );

    // A host definition with an object parameter on a GET is refused too.
    let action = obj(
        json!({"name": "deep", "type": "api", "method": "GET", "target": "tasks",
        "ai": {"exposed": true, "description": "Calls the API with the values given."}}),
    );
    let err = registry
        .register_action(
            definition("action_deep", json!({"filter": {"type": "object"}})),
            action,
        )
        .unwrap_err();
    assert!(err.to_string().contains("unsendable_api_data"), "{err}");
    assert!(log.lock().unwrap().is_empty());
}

// ---- the response-size limit --------------------------------------------

/// A server with big answers: `big` (64 KiB, with a length), `chunked`
/// (`total` bytes, no length), `huge-fail` (a 500 announcing 10 MiB,
/// sending 20 KiB, then silence).
async fn big_answers(total: usize) -> (String, Log) {
    let (origin, log) = serve_with(Arc::new(move |r: &Received| match r.path.as_str() {
        "/api/v1/big" => Reply::Full {
            status: "200 OK",
            headers: Vec::new(),
            body: vec![b'x'; 64 * 1024],
        },
        "/api/v1/chunked" => Reply::Chunked {
            status: "200 OK",
            total,
        },
        "/api/v1/huge-fail" => Reply::Stall {
            head: "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 10485760\r\n\r\n".into(),
            sent: vec![b'e'; 20 * 1024],
            stall: Duration::from_secs(5),
        },
        _ => routes(r),
    }))
    .await;
    (format!("{origin}/api/v1/"), log)
}

#[tokio::test]
async fn a_response_over_the_limit_is_refused_while_it_streams() {
    let (base, _) = big_answers(4 * 1024 * 1024).await;
    let c = HttpApiClient::new(HttpClientOptions {
        max_response_bytes: 32 * 1024,
        ..options(&base)
    })
    .unwrap();
    for target in ["big", "chunked"] {
        let err = c.request(request("GET", target, None)).await.unwrap_err();
        assert!(matches!(err, HostError::Transport { .. }), "{err:?}");
        assert!(
            err.to_string().contains("more than 32768 bytes"),
            "{target}: {err}"
        );
    }
    assert!(
        c.request(request("GET", "anything", None)).await.is_ok(),
        "a small answer passes"
    );
}

#[tokio::test]
async fn the_default_limit_is_8_mib() {
    assert_eq!(
        HttpClientOptions::default().max_response_bytes,
        8 * 1024 * 1024
    );
    let (over, _) = big_answers(8 * 1024 * 1024 + 1).await;
    let err = client(&over)
        .request(request("GET", "chunked", None))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("more than 8388608 bytes"), "{err}");
    let (at, _) = big_answers(8 * 1024 * 1024).await;
    let out = client(&at)
        .request(request("GET", "chunked", None))
        .await
        .unwrap();
    assert_eq!(out.as_str().map(str::len), Some(8 * 1024 * 1024));
}

#[tokio::test]
async fn a_non_2xx_body_is_read_only_as_far_as_the_error_quotes_it() {
    let (base, _) = big_answers(0).await;
    let started = std::time::Instant::now();
    let err = client(&base)
        .request(request("GET", "huge-fail", None))
        .await
        .unwrap_err();
    match &err {
        HostError::Http { status, body, .. } => {
            assert_eq!(*status, 500);
            assert_eq!(
                body.chars().count(),
                2001,
                "2000 characters and an ellipsis"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_millis(450), "read on");
}

#[tokio::test]
async fn an_approved_execution_never_stores_an_oversized_answer() {
    let (base, _) = big_answers(4 * 1024 * 1024).await;
    let queue = Arc::new(ApprovalQueue::new(Arc::new(MemoryStore::new())));
    let c = HttpApiClient::new(HttpClientOptions {
        max_response_bytes: 32 * 1024,
        ..options(&base)
    })
    .unwrap();
    let mut registry = ToolRegistry::new(HostServices {
        api_client: Some(Arc::new(c)),
        approvals: Some(queue.clone()),
        ..HostServices::default()
    });
    let stack = obj(json!({"actions": [
        {"name": "export", "type": "api", "method": "GET", "target": "chunked",
         "ai": {"exposed": true, "requiresConfirmation": true,
                "description": "Exports every record of the account as one file."}}
    ]}));
    registry.register_stack(&stack);
    let ctx = CallContext {
        tool_call_id: Some("tc-export".into()),
        ..CallContext::default()
    };
    let out = registry.call("action_export", json!({}), &ctx).await;
    let id = out["pendingActionId"].as_str().unwrap();
    let hash = queue.get(id).unwrap().input_sha256;
    queue.approve(id, "ops", &hash).unwrap();
    registry
        .execute_approved(&ExecuteOptions::default())
        .await
        .unwrap();
    let row = queue.get(id).unwrap();
    assert_eq!(row.state, State::Failed);
    let stored = serde_json::to_string(&row).unwrap();
    assert!(stored.len() < 4096, "{} bytes stored", stored.len());
    assert!(stored.contains("more than 32768 bytes"), "{stored}");
}

// ---- timeouts -------------------------------------------------------------

#[tokio::test]
async fn a_body_that_stalls_is_reported_as_a_timeout() {
    let (origin, _) = serve_with(Arc::new(|_: &Received| Reply::Stall {
        head: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".into(),
        sent: b"{\"a\":".to_vec(),
        stall: Duration::from_secs(3),
    }))
    .await;
    let c = HttpApiClient::new(HttpClientOptions {
        timeout: Duration::from_millis(300),
        ..options(&format!("{origin}/"))
    })
    .unwrap();
    let err = c.request(request("GET", "x", None)).await.unwrap_err();
    assert!(matches!(err, HostError::Transport { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("within 300 ms"), "{message}");
    assert!(!message.contains("decoding"), "{message}");
}

// ---- userinfo is never shown ------------------------------------------------

#[tokio::test]
async fn userinfo_in_the_base_url_never_reaches_an_error() {
    let (base, log) = serve().await;
    let secret = base.replacen("http://", "http://svc:TOPSECRET@", 1);
    let c = HttpApiClient::new(HttpClientOptions {
        base_url: Some(secret.clone()),
        ..HttpClientOptions::default()
    })
    .unwrap();
    let ok = c.request(request("GET", "who", None)).await.unwrap();
    assert_eq!(ok["path"], "/api/v1/who");
    assert!(
        log.lock().unwrap()[0].headers["authorization"].starts_with("Basic "),
        "the userinfo is sent as basic auth"
    );
    let mut errors = vec![
        c.request(request("POST", "fail", Some(json!({}))))
            .await
            .unwrap_err(),
    ];
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = HttpApiClient::new(HttpClientOptions {
        base_url: Some(format!("http://svc:TOPSECRET@127.0.0.1:{port}/")),
        ..HttpClientOptions::default()
    })
    .unwrap();
    errors.push(closed.request(request("GET", "x", None)).await.unwrap_err());
    errors.push(
        HttpApiClient::new(HttpClientOptions {
            base_url: Some("http://svc:TOPSECRET@[::1/".into()),
            ..HttpClientOptions::default()
        })
        .unwrap_err(),
    );
    for err in &errors {
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("TOPSECRET"), "{shown}");
    }
    assert!(
        errors[0].to_string().contains("http://***@127.0.0.1:"),
        "{}",
        errors[0]
    );

    // What the model is handed.
    let mut registry = ToolRegistry::new(HostServices {
        api_client: Some(Arc::new(c)),
        ..HostServices::default()
    });
    let stack = obj(json!({"actions": [
        {"name": "pay", "type": "api", "target": "fail",
         "ai": {"exposed": true, "description": "Pays the invoice the user names, in full."}}
    ]}));
    registry.register_stack(&stack);
    let out = registry
        .call("action_pay", json!({}), &CallContext::default())
        .await;
    assert_eq!(out["ok"], false);
    assert!(!out.to_string().contains("TOPSECRET"), "{out}");
}
