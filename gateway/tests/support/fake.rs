//! A fake ObjectStack server for the gateway's tests: a real HTTP server on
//! 127.0.0.1 implementing the REST contract the gateway uses (as observed
//! on ObjectStack 17.4.0, `shared/tools/objectstack-server/README.md`),
//! recording every request it receives, and answering any action with a
//! chosen status and envelope.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)] // test helpers

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One request as the fake server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

#[derive(Default)]
pub struct FakeState {
    pub received: Mutex<Vec<Received>>,
    /// The key checks (`GET /api/v1/data/{object}?limit=0`), kept apart
    /// from `received` so "nothing reached the server" still means no
    /// record was read and no action ran.
    pub probes: Mutex<Vec<Received>>,
    /// Keys the server no longer accepts (401).
    pub revoked: Mutex<Vec<String>>,
    /// `(key, object)` pairs the server forbids (403).
    pub denied: Mutex<Vec<(String, String)>>,
    /// `(object, id)` to record.
    pub records: Mutex<HashMap<(String, String), Value>>,
    /// Action name to the status and body it answers with.
    pub replies: Mutex<HashMap<String, (u16, Value)>>,
    /// How long every answer waits.
    pub delay: Mutex<Option<Duration>>,
    /// How long the answer to an action (`POST`) waits, after it is
    /// recorded: a server that runs the action and answers late.
    pub action_delay: Mutex<Option<Duration>>,
}

pub struct Fake {
    pub url: String,
    pub state: Arc<FakeState>,
}

impl Fake {
    pub async fn start() -> Fake {
        let state = Arc::new(FakeState::default());
        let app = Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake server");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Fake { url, state }
    }

    pub fn add_record(&self, object: &str, id: &str, record: Value) {
        self.state
            .records
            .lock()
            .unwrap()
            .insert((object.to_owned(), id.to_owned()), record);
    }

    pub fn reply(&self, action: &str, status: u16, body: Value) {
        self.state
            .replies
            .lock()
            .unwrap()
            .insert(action.to_owned(), (status, body));
    }

    /// The key checks received.
    pub fn probes(&self) -> Vec<Received> {
        self.state.probes.lock().unwrap().clone()
    }

    /// Makes the server refuse `key` (401) from now on.
    pub fn revoke(&self, key: &str) {
        self.state.revoked.lock().unwrap().push(key.to_owned());
    }

    /// Makes the server forbid `key` anything on `object` (403).
    pub fn deny(&self, key: &str, object: &str) {
        self.state
            .denied
            .lock()
            .unwrap()
            .push((key.to_owned(), object.to_owned()));
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    pub fn clear(&self) {
        self.state.received.lock().unwrap().clear();
    }

    /// The upstream error envelope of the action routes.
    pub fn envelope(status: u16, code: &str, message: &str) -> Value {
        json!({"success": false, "error": {"code": code, "message": message, "httpStatus": status}})
    }
}

async fn handle(
    axum::extract::State(state): axum::extract::State<Arc<FakeState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let probe = method == Method::GET && uri.query() == Some("limit=0");
    let log = if probe {
        &state.probes
    } else {
        &state.received
    };
    log.lock().unwrap().push(Received {
        method: method.to_string(),
        path: uri.path().to_owned(),
        authorization: authorization.clone(),
        body: body.clone(),
    });
    let delay = *state.delay.lock().unwrap();
    let action_delay = *state.action_delay.lock().unwrap();
    if let Some(delay) = delay.or(action_delay.filter(|_| method == Method::POST)) {
        tokio::time::sleep(delay).await;
    }
    let answer = |status: u16, body: Value| {
        (
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            axum::Json(body),
        )
            .into_response()
    };
    let segments: Vec<String> = uri
        .path()
        .trim_start_matches('/')
        .split('/')
        .map(percent_decode)
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let key = authorization
        .as_deref()
        .and_then(|a| a.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    // A webhook receiver beside the REST API, for `api` actions: open to
    // anyone, it echoes what it got.
    if let ["hooks", ..] = segments.as_slice() {
        return answer(200, json!({"received": body, "path": uri.path()}));
    }
    if !key.starts_with("osk_") || state.revoked.lock().unwrap().contains(&key) {
        return answer(
            401,
            Fake::envelope(
                401,
                "UNAUTHENTICATED",
                "Authentication is required to access this endpoint.",
            ),
        );
    }
    if let ["api", "v1", "data" | "actions", object, ..] = segments.as_slice()
        && state
            .denied
            .lock()
            .unwrap()
            .contains(&(key.clone(), (*object).to_owned()))
    {
        return answer(
            403,
            Fake::envelope(403, "PERMISSION_DENIED", "Permission denied"),
        );
    }
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["api", "v1", "data", object]) => answer(
            200,
            json!({"object": object, "records": [], "total": 0, "hasMore": false}),
        ),
        ("GET", ["api", "v1", "data", object, id]) => {
            let record = state
                .records
                .lock()
                .unwrap()
                .get(&((*object).to_owned(), (*id).to_owned()))
                .cloned();
            match record {
                Some(record) => answer(200, json!({"object": object, "id": id, "record": record})),
                None => answer(
                    404,
                    json!({"error": format!("Record {id} not found in {object}"), "code": "RECORD_NOT_FOUND", "object": object}),
                ),
            }
        }
        ("POST", ["api", "v1", "actions", object, action, rest @ ..]) => {
            if let Some((status, body)) = state.replies.lock().unwrap().get(*action).cloned() {
                return answer(status, body);
            }
            let data = match *action {
                "ticket_stats" => json!({"total": 3, "byStatus": {"open": 2}}),
                _ => json!({
                    "object": object,
                    "action": action,
                    "recordId": rest.first(),
                    "params": body.get("params"),
                }),
            };
            answer(200, json!({"success": true, "data": data}))
        }
        _ => answer(
            404,
            Fake::envelope(404, "RESOURCE_NOT_FOUND", "no such route"),
        ),
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
