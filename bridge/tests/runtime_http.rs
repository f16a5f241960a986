//! The default HTTP API client against a real HTTP/1.1 server on
//! 127.0.0.1, started by each test (a small hand-written responder on a
//! Tokio listener: no extra dependency, and every byte on the wire is
//! visible to the assertions).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use approval_support::obj;
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
    path: String,
    headers: HashMap<String, String>,
    body: String,
}

/// Starts the server; returns its base URL and what it receives.
async fn serve() -> (String, Arc<Mutex<Vec<Received>>>) {
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
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    let n = sock.read(&mut chunk).await.unwrap();
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
                seen.lock().unwrap().push(Received {
                    method: method.clone(),
                    path: path.clone(),
                    headers,
                    body: body.clone(),
                });
                let (status, payload) = match path.as_str() {
                    "/empty" => ("204 No Content", String::new()),
                    "/text" => ("200 OK", "plain words".to_owned()),
                    "/fail" => (
                        "422 Unprocessable Entity",
                        r#"{"error":"amount too large"}"#.to_owned(),
                    ),
                    "/slow" => {
                        tokio::time::sleep(Duration::from_secs(3)).await;
                        ("200 OK", "{}".to_owned())
                    }
                    _ => (
                        "200 OK",
                        json!({"method": method, "path": path, "echo": body}).to_string(),
                    ),
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
                    payload.len()
                );
                let _ = sock.write_all(response.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (format!("http://{addr}/api/v1/"), log)
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

fn client(base: &str) -> HttpApiClient {
    HttpApiClient::new(HttpClientOptions {
        base_url: Some(base.to_owned()),
        headers: vec![
            ("Authorization".into(), "Bearer k".into()),
            ("X-Call".into(), "default".into()),
        ],
        timeout: Duration::from_millis(500),
    })
    .unwrap()
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
async fn absolute_paths_replace_the_base_path_and_get_sends_no_body() {
    let (base, log) = serve().await;
    let out = client(&base)
        .request(request("GET", "/health", None))
        .await
        .unwrap();
    assert_eq!(out["path"], "/health");
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
        c.request(request("DELETE", "/empty", None)).await.unwrap(),
        Value::Null
    );
    assert_eq!(
        c.request(request("POST", "/text", Some(json!({}))))
            .await
            .unwrap(),
        json!("plain words")
    );
}

#[tokio::test]
async fn non_2xx_is_an_error_with_status_and_body() {
    let (base, _) = serve().await;
    let err = client(&base)
        .request(request("POST", "/fail", Some(json!({"amount": 1e9}))))
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
async fn a_slow_server_times_out_and_a_closed_port_is_a_transport_error() {
    let (base, _) = serve().await;
    let started = std::time::Instant::now();
    let err = client(&base)
        .request(request("GET", "/slow", None))
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Transport { .. }), "{err:?}");
    assert!(err.to_string().contains("no answer within"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));

    // A port nobody listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = client(&format!("http://127.0.0.1:{port}/"))
        .request(request("GET", "/x", None))
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
