//! The HTTP application: rmcp's Streamable HTTP service at `/mcp` and the
//! JSON approvals API, on one axum router, every route behind
//! `Authorization: Bearer <key>`.
//!
//! | route | body | answer |
//! | --- | --- | --- |
//! | `GET /approvals?state=S` | | `{"approvals": [row...], "unreadable": [msg...]}` |
//! | `GET /approvals/{id}` | | the row |
//! | `POST /approvals/{id}/approve` | `{"input_sha256": "…"}` | `{"state": "executed"\|"failed", "result"?, "error"?}` |
//! | `POST /approvals/{id}/reject` | `{"reason": "…"}` | the row, `rejected` |
//!
//! Errors are `{"error": {"code", "message"}}` with 400, 401, 403 (an
//! object the key may not read, or four eyes), 404, 409 or 502. The
//! approvers' inbox (`/approvals/ui`, the `inbox` module) is merged in
//! beside these routes, outside the bearer gate: it has its own sign-in.
//!
//! With `--server`, the server is asked whether it accepts the key before
//! anything is answered (see `verify`): a key it refuses gets 401. The
//! approvals API shows and decides only actions on objects the key may
//! read (403 for one it may not; the listing leaves them out).

use std::borrow::Cow;
use std::str::FromStr;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use objectstack_bridge::approval::{ApprovalError, ListFilter, ListOrder};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::Shared;
use crate::identity::{ApiKey, Caller, Transport};
use crate::jsonrpc::Verdict;
use crate::mcp::Session;
use crate::verify::Refusal;

pub(crate) fn router(shared: Arc<Shared>, shutdown: CancellationToken) -> Router {
    // A sessionless request (2026-07-28) whose handler sends nothing
    // before its result is answered as one JSON body rather than an SSE
    // stream; sessions of earlier revisions are unchanged.
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_allowed_hosts(shared.config.allowed_hosts.clone())
        .with_max_request_body_bytes(shared.config.max_body_bytes)
        .with_cancellation_token(shutdown);
    let factory = shared.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(Session::new(factory.clone(), None)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let limit = shared.config.max_body_bytes;
    // The JSON approvals API answers the same Host names as `/mcp` (rmcp
    // checks those) and the inbox: DNS rebinding protection.
    let approvals = Router::new()
        .route("/approvals", get(list))
        .route("/approvals/{id}", get(show))
        .route("/approvals/{id}/approve", post(approve))
        .route("/approvals/{id}/reject", post(reject))
        .route_layer(middleware::from_fn_with_state(shared.clone(), known_host));
    Router::new()
        // Exactly `/mcp` (with or without its slash): every middleware
        // below (the message screen, the listing splice, the drain) knows
        // the endpoint by that path, and rmcp would answer any other.
        .route_service("/mcp", mcp.clone())
        .route_service("/mcp/", mcp)
        .merge(approvals)
        .with_state(shared.clone())
        .layer(middleware::from_fn_with_state(limit, well_formed))
        .layer(middleware::from_fn_with_state(
            shared.clone(),
            require_bearer,
        ))
        // Before the key is read. The inbox's pages are not held to it:
        // its forms carry a CSRF token and a SameSite=Strict cookie, and
        // a browser posts them with `Origin: null` under the inbox's
        // no-referrer policy.
        .layer(middleware::from_fn_with_state(shared.clone(), known_origin))
        .merge(crate::inbox::router(shared.clone()))
        .layer(middleware::from_fn(session_ended))
        .layer(middleware::from_fn_with_state(shared.clone(), in_flight))
        .layer(middleware::from_fn_with_state(shared, spliced))
        .layer(DefaultBodyLimit::max(limit))
}

/// Counts every request but an SSE stream (`GET /mcp`) as in flight until
/// its answer's body is sent whole, so a drain (SIGTERM) waits for the
/// answers, not only for the calls: a call's result goes out on its
/// request's SSE stream after the call returns. Once draining, new requests
/// are answered 503.
async fn in_flight(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if shared.tracker.is_closed() {
        let mut response = error(
            StatusCode::SERVICE_UNAVAILABLE,
            "SHUTTING_DOWN",
            "the gateway is shutting down and takes no new requests; retry in a moment",
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    }
    let stream = request.method() == axum::http::Method::GET
        && request.uri().path().trim_end_matches('/') == "/mcp";
    if stream {
        return next.run(request).await;
    }
    let token = shared.tracker.token();
    next.run(request).await.map(|body| {
        axum::body::Body::new(Tracked {
            body,
            _token: token,
        })
    })
}

/// Writes the catalog's tools in place of each `tools/list` placeholder
/// in what `/mcp` sends (see `listing`): on a request's own answer, and on
/// the stream a client resumes with `Last-Event-ID`.
async fn spliced(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if request.uri().path().trim_end_matches('/') != "/mcp" {
        return next.run(request).await;
    }
    let splicer = shared.splicer();
    let (parts, body) = next.run(request).await.into_parts();
    if http_body::Body::size_hint(&body).exact().is_none() {
        // A stream: each event is looked at as it is sent.
        return Response::from_parts(
            parts,
            axum::body::Body::new(crate::listing::Spliced::new(body, splicer)),
        );
    }
    // One JSON answer, already whole in memory: it keeps its length
    // unless it is a listing.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            "the answer could not be read",
        );
    };
    let body = if splicer.find(&bytes).is_some() {
        axum::body::Body::new(crate::listing::Spliced::new(bytes.into(), splicer))
    } else {
        bytes.into()
    };
    Response::from_parts(parts, body)
}

/// An answer's body, counted in the drain until it is sent (or dropped).
struct Tracked {
    body: axum::body::Body,
    _token: tokio_util::task::task_tracker::TaskTrackerToken,
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Answers a `POST /mcp` body that is no single JSON-RPC message as
/// JSON-RPC says, before rmcp sees it (rmcp answers each with 415 or
/// "method not found"): text that is not JSON is a parse error (-32700,
/// 400); a batch is refused as such (-32600, 400: no revision since
/// 2025-03-26 has batches, and this server takes none); JSON that is not a
/// JSON-RPC 2.0 message (no `"jsonrpc": "2.0"`, a request `id` that is
/// `null`, a float, a structure or beyond 64 bits, neither a method nor a
/// response; an error response may have a null id or none) is an invalid
/// request (-32600, 400); and a `tools/call` without a tool's `name`, or
/// whose `arguments` is not an object, is invalid params (-32602) for that
/// request's id. A lone surrogate escape in a message is passed on as
/// U+FFFD.
async fn well_formed(State(limit): State<usize>, request: Request, next: Next) -> Response {
    if request.method() != axum::http::Method::POST
        || request.uri().path().trim_end_matches('/') != "/mcp"
    {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
            &format!("the request body is more than {limit} bytes"),
        );
    };
    let rpc_error = |status: StatusCode, id: &serde_json::Value, code: i64, message: &str| {
        (
            status,
            Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})),
        )
            .into_response()
    };
    let bytes = match crate::jsonrpc::verdict(&bytes, "body") {
        // The body as it came, or without the byte-order mark it led with.
        Verdict::Pass(Cow::Borrowed(passed)) if passed.len() == bytes.len() => bytes,
        Verdict::Pass(Cow::Borrowed(passed)) => axum::body::Bytes::copy_from_slice(passed),
        Verdict::Pass(Cow::Owned(patched)) => axum::body::Bytes::from(patched),
        Verdict::Answer { id, code, message } => {
            let status = if code == -32602 {
                StatusCode::OK
            } else {
                StatusCode::BAD_REQUEST
            };
            return rpc_error(status, &id, code, &message);
        }
        // Over HTTP a notification or response that cannot be accepted is
        // refused with an error status (Streamable HTTP), and the body may
        // be an error without an id.
        Verdict::Drop(why) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &serde_json::Value::Null,
                -32600,
                &format!("Invalid Request: the {why}"),
            );
        }
    };
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// A session ended with `DELETE /mcp` is answered 200, as the reference
/// (TypeScript) server answers, rather than rmcp's 202: the official
/// Python client treats anything but 200 or 204 as a failed termination
/// and warns about it.
async fn session_ended(request: Request, next: Next) -> Response {
    let deleting = request.method() == axum::http::Method::DELETE
        && request.uri().path().trim_end_matches('/') == "/mcp";
    let mut response = next.run(request).await;
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// Refuses a request without `Authorization: Bearer <key>`, or with a key
/// the server refuses (401, nothing listed or called); otherwise hands the
/// caller to the route.
async fn require_bearer(
    State(shared): State<Arc<Shared>>,
    mut request: Request,
    next: Next,
) -> Response {
    let key = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(ApiKey::from_bearer);
    let Some(key) = key else {
        let mut response = error(
            StatusCode::UNAUTHORIZED,
            "UNAUTHENTICATED",
            "send your ObjectStack API key as `Authorization: Bearer osk_…`",
        );
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"objectstack-gateway\""),
        );
        return response;
    };
    match shared.key_accepted(&key).await {
        Ok(()) | Err(Refusal::Forbidden(_)) => {}
        Err(refusal @ Refusal::Unauthenticated(_)) => return refused(&refusal),
        // Calls will fail on their own with the server's error; the queue
        // is not shown to a key nobody vouched for.
        Err(refusal @ Refusal::Unavailable(_)) => {
            if !request.uri().path().starts_with("/mcp") {
                return refused(&refusal);
            }
        }
    }
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mcp = request.uri().path().starts_with("/mcp");
    let digest = key.digest();
    let deleting = request.method() == axum::http::Method::DELETE;
    if mcp
        && let Some(id) = &session
        && (shared.owners.refuses(id, &digest) || (deleting && !shared.owners.knows(id)))
    {
        // Answered as rmcp answers a session it does not know: another
        // key's session is not there for this one.
        return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
    }
    request.extensions_mut().insert(Caller {
        key: Some(key.clone()),
        transport: Transport::Http,
        session: session.clone(),
    });
    let response = next.run(request).await;
    if mcp {
        match &session {
            None => {
                if let Some(id) = response
                    .headers()
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
                {
                    shared.owners.opened(id, digest);
                }
            }
            Some(id) if deleting && response.status().is_success() => shared.owners.ended(id),
            Some(_) => {}
        }
    }
    response
}

/// Which key opened each Streamable HTTP session (by the key's SHA-256):
/// a session is used, listened to and ended only with the key that
/// opened it, as the MCP specification asks of a server that binds
/// sessions to users.
#[derive(Debug, Default)]
pub(crate) struct SessionOwners(std::sync::Mutex<std::collections::HashMap<String, [u8; 32]>>);

impl SessionOwners {
    /// Whether session `id` was opened with another key than the one whose
    /// SHA-256 is `digest`.
    fn refuses(&self, id: &str, digest: &[u8; 32]) -> bool {
        self.0
            .lock()
            .is_ok_and(|owners| owners.get(id).is_some_and(|owner| owner != digest))
    }

    /// Whether session `id` is open (ending an unknown or ended session
    /// is answered 404, as using one is).
    fn knows(&self, id: &str) -> bool {
        self.0.lock().is_ok_and(|owners| owners.contains_key(id))
    }

    fn opened(&self, id: &str, digest: [u8; 32]) {
        if let Ok(mut owners) = self.0.lock() {
            owners.insert(id.to_owned(), digest);
        }
    }

    fn ended(&self, id: &str) {
        if let Ok(mut owners) = self.0.lock() {
            owners.remove(id);
        }
    }
}

/// Refuses a request whose `Host` is not one the gateway answers to.
async fn known_host(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if crate::inbox::host_allowed(&shared, request.headers()) {
        next.run(request).await
    } else {
        error(
            StatusCode::FORBIDDEN,
            "HOST_NOT_ALLOWED",
            "this request's Host is not one the gateway answers to; start it with --allowed-host \
             for this name",
        )
    }
}

/// Refuses a browser request from a page the gateway does not answer
/// (MCP's Streamable HTTP transport: an `Origin` that is present and not
/// valid gets 403), on `/mcp` and the JSON approvals API, before the key
/// is read.
async fn known_origin(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if crate::hosts::origin_allowed(
        &shared.config.allowed_hosts,
        &shared.config.allowed_origins,
        shared.config.inbox.public_url.as_deref(),
        request.headers(),
    ) {
        next.run(request).await
    } else {
        error(
            StatusCode::FORBIDDEN,
            "ORIGIN_NOT_ALLOWED",
            "this request comes from a web page (its Origin) the gateway does not answer; \
             start it with --allowed-origin for that page's origin if it is yours",
        )
    }
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"code": code, "message": message}})),
    )
        .into_response()
}

fn refused(refusal: &Refusal) -> Response {
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut response = error(status, refusal.code(), refusal.message());
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(
                "Bearer realm=\"objectstack-gateway\", error=\"invalid_token\"",
            ),
        );
    }
    response
}

/// Whether `caller` may see and decide an action on `object`.
async fn may_read(shared: &Shared, caller: &Caller, object: Option<&str>) -> Result<(), Refusal> {
    match &caller.key {
        Some(key) => shared.may_read(key, object).await,
        None => Err(Refusal::Unauthenticated("no API key".to_owned())),
    }
}

fn queue_error(e: &ApprovalError) -> Response {
    let (status, code) = match e {
        ApprovalError::NotFound { .. } => (StatusCode::NOT_FOUND, "NOT_FOUND"),
        ApprovalError::AlreadyDecided { .. }
        | ApprovalError::NotApproved { .. }
        | ApprovalError::InputMismatch { .. } => (StatusCode::CONFLICT, "CONFLICT"),
        ApprovalError::InvalidRequest(_) => (StatusCode::BAD_REQUEST, "VALIDATION_ERROR"),
        ApprovalError::SelfApproval { .. } => (StatusCode::FORBIDDEN, "FOUR_EYES"),
        ApprovalError::InvalidEdits { .. } => (StatusCode::BAD_REQUEST, "VALIDATION_ERROR"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL_ERROR"),
    };
    error(status, code, &e.to_string())
}

#[derive(Debug, Deserialize)]
struct ListQuery {
    state: Option<String>,
    order: Option<String>,
    limit: Option<String>,
}

/// The most rows one `GET /approvals?limit=N` may ask for.
const MAX_LIST_LIMIT: usize = 1000;

/// The fewest rows `GET /approvals?limit=N` reads from the store at once.
const LIST_PAGE: usize = 100;

/// What `GET /approvals` reads: the filter from the query, and how many
/// readable rows to return (all of them without `limit`).
fn list_request(query: &ListQuery) -> Result<(ListFilter, Option<usize>), String> {
    let state = query
        .state
        .as_deref()
        .map(objectstack_bridge::approval::State::from_str)
        .transpose()
        .map_err(|e| e.to_string())?;
    let order = match query.order.as_deref() {
        None | Some("oldest") => ListOrder::OldestFirst,
        Some("newest") => ListOrder::NewestFirst,
        Some("changed") => ListOrder::RecentlyChanged,
        Some(other) => {
            return Err(format!(
                "`order` must be `oldest` (the default), `newest` or `changed`, not `{other}`"
            ));
        }
    };
    let limit = match query.limit.as_deref() {
        None => None,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=MAX_LIST_LIMIT).contains(&n) => Some(n),
            _ => {
                return Err(format!(
                    "`limit` must be a whole number from 1 to {MAX_LIST_LIMIT}, not `{text}`"
                ));
            }
        },
    };
    let filter = ListFilter {
        state,
        order,
        ..ListFilter::default()
    };
    Ok((filter, limit))
}

async fn list(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    // The query string's own faults (a parameter given twice, bad
    // percent-encoding) answer in the same envelope as bad values.
    let Query(query) = match query {
        Ok(query) => query,
        Err(rejection) => {
            return error(
                StatusCode::BAD_REQUEST,
                "VALIDATION_ERROR",
                &format!(
                    "the query string cannot be read ({}): give each of `state`, `order` and \
                     `limit` at most once",
                    rejection.body_text()
                ),
            );
        }
    };
    let (filter, limit) = match list_request(&query) {
        Ok(request) => request,
        Err(message) => return error(StatusCode::BAD_REQUEST, "VALIDATION_ERROR", &message),
    };
    // With a limit the store is read a page at a time (at least
    // `LIST_PAGE` rows, so a small limit over rows the caller may not read
    // costs few queries), until that many rows the caller may read are
    // found: the rest of the queue is not read. Without one, every
    // matching row is, in one read (a page with no end). A row that changes
    // between two pages can come twice; it is shown once.
    let size = limit.map_or(usize::MAX, |n| n.max(LIST_PAGE));
    let want = limit.unwrap_or(usize::MAX);
    let mut rows: Vec<objectstack_bridge::approval::PendingAction> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut unreadable = Vec::new();
    for listing in shared.queue.pages(&filter, size) {
        let listing = match listing {
            Ok(listing) => listing,
            Err(e) => return queue_error(&e),
        };
        unreadable.extend(listing.unreadable);
        for row in listing.rows {
            if rows.len() == want {
                break;
            }
            if !seen.insert(row.id.clone()) {
                continue;
            }
            match may_read(&shared, &caller, row.object_name.as_deref()).await {
                Ok(()) => rows.push(row),
                Err(Refusal::Forbidden(_)) => {}
                Err(refusal) => return refused(&refusal),
            }
        }
        if rows.len() == want {
            break;
        }
    }
    Json(json!({
        "approvals": rows,
        "unreadable": unreadable.iter().map(ToString::to_string).collect::<Vec<_>>(),
    }))
    .into_response()
}

async fn show(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    match shared.queue.get(&id) {
        Ok(row) => match may_read(&shared, &caller, row.object_name.as_deref()).await {
            Ok(()) => Json(row).into_response(),
            Err(refusal) => refused(&refusal),
        },
        Err(e) => queue_error(&e),
    }
}

/// Refuses a decision on `id` by a caller who may not read its object;
/// nothing is recorded then.
async fn may_decide(shared: &Shared, caller: &Caller, id: &str) -> Option<Response> {
    match shared.queue.get(id) {
        Ok(row) => may_read(shared, caller, row.object_name.as_deref())
            .await
            .err()
            .map(|r| refused(&r)),
        Err(e) => Some(queue_error(&e)),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveBody {
    input_sha256: String,
}

async fn approve(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Extension(caller): Extension<Caller>,
    body: Result<Json<ApproveBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "VALIDATION_ERROR",
                &format!(
                    "the body must be {{\"input_sha256\": \"<the hash shown by GET /approvals/{id}>\"}}: {e}"
                ),
            );
        }
    };
    if let Some(refusal) = may_decide(&shared, &caller, &id).await {
        return refusal;
    }
    match shared.approve(&caller, &id, &body.input_sha256).await {
        Ok(decision) => Json(decision).into_response(),
        Err(e) => queue_error(&e),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RejectBody {
    reason: Option<String>,
}

async fn reject(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> Response {
    // Optional, and read whatever its content type says: a reason sent
    // without `content-type: application/json` is not silently dropped,
    // and malformed JSON answers in the API's own envelope.
    let body: RejectBody = if body.iter().all(u8::is_ascii_whitespace) {
        RejectBody::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(b) => b,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "VALIDATION_ERROR",
                    &format!("the body must be empty or {{\"reason\": \"…\"}}: {e}"),
                );
            }
        }
    };
    if let Some(refusal) = may_decide(&shared, &caller, &id).await {
        return refusal;
    }
    match shared.reject(&caller, &id, body.reason.as_deref()) {
        Ok(row) => Json(row).into_response(),
        Err(e) => queue_error(&e),
    }
}
