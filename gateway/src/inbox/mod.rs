//! The approvals inbox at `/approvals/ui`: server-rendered HTML (no
//! script), for the people who decide what the AI proposed.
//!
//! | route | what |
//! | --- | --- |
//! | `GET /approvals/ui` | sign-in, or the pending actions, those in doubt, and the history |
//! | `GET /approvals/ui/{id}` | one action: everything about it, the edit form, the diff |
//! | `POST /approvals/ui/sign-in` | `key`: signs in with the approver's ObjectStack key |
//! | `POST /approvals/ui/sign-out` | ends the session |
//! | `POST /approvals/ui/{id}/approve` | `input_sha256`: approves as proposed, and runs it |
//! | `POST /approvals/ui/{id}/edit` | `input_sha256`, `f.<param>`…: approves with edits, and runs it |
//! | `POST /approvals/ui/{id}/reject` | `reason` (required) |
//! | `POST /approvals/ui/{id}/resolve` | `outcome` (`executed`\|`failed`), `note` (required): an in-doubt action |
//!
//! Every POST carries the session's CSRF token (`csrf`), else it is
//! refused (403) and nothing changes. The session is an HttpOnly,
//! SameSite=Strict cookie (Secure when the inbox is reached over TLS);
//! the key stays in this process's memory for the session and is sent
//! only as `Authorization` on the backend calls of the decisions made in
//! it. Decisions go through the same queue operations as the JSON API
//! (`Shared::approve`, `Shared::reject`), so four eyes, the input hash,
//! the deadline and exactly-once execution are the queue's.

mod diff;
mod form;
mod html;
mod notify;
mod session;

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use objectstack_bridge::approval::{
    ApprovalError, ApprovalQueue, ListCursor, ListFilter, ListOrder, PendingAction, Resolution,
    State as Row, StoreError,
};
use serde_json::Value;

pub use notify::NotifyConfig;

use crate::identity::{ApiKey, Caller, Transport};
use crate::{Gateway, Shared, executor_options, with_caller};
use html::{Page, esc, pretty, span, time};
use session::Sessions;

/// The inbox, the deadlines and the notifications of a gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxConfig {
    /// How long a pending action waits for a decision before it expires
    /// (`None`: never). Default 24 hours.
    pub approval_ttl: Option<Duration>,
    /// Whether a proposer may approve their own action (four eyes off).
    /// Default `false`. Proposer and approver are compared by key
    /// fingerprint (`osk:…`).
    pub allow_self_approval: bool,
    /// Where to POST a JSON message when an action is queued, decided, run,
    /// failed or in doubt.
    pub notify: Option<NotifyConfig>,
    /// The address people reach the gateway at (`https://approvals.example.com`),
    /// for the links in notifications; an `https` address also makes the
    /// session cookie `Secure`. Default: the listener's own address.
    pub public_url: Option<String>,
    /// How often expired pending actions and expired claims are swept.
    pub sweep_interval: Duration,
}

impl Default for InboxConfig {
    fn default() -> Self {
        InboxConfig {
            approval_ttl: Some(Duration::from_secs(24 * 3600)),
            allow_self_approval: false,
            notify: None,
            public_url: None,
            sweep_interval: Duration::from_secs(5),
        }
    }
}

/// A duration as written on the command line: a number and a unit, `s`,
/// `m`, `h` or `d` (`90s`, `30m`, `24h`, `7d`; units may be combined,
/// `1h30m`); `off` or `0` for none.
pub fn parse_duration(text: &str) -> Result<Option<Duration>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") || text == "0" {
        return Ok(None);
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut any = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit: u64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => {
                return Err(format!(
                    "`{text}` is not a duration: use a number and a unit, s, m, h or d (e.g. 24h, 30m, 1h30m), or `off`"
                ));
            }
        };
        let n: u64 = digits.parse().map_err(|_| {
            format!("`{text}` is not a duration: a unit needs a number before it (e.g. 24h)")
        })?;
        digits.clear();
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(|| format!("`{text}` is too long a duration"))?;
        any = true;
    }
    if !digits.is_empty() || !any {
        return Err(format!(
            "`{text}` is not a duration: give it a unit, s, m, h or d (e.g. 24h), or `off`"
        ));
    }
    if total == 0 {
        return Ok(None);
    }
    Ok(Some(Duration::from_secs(total)))
}

/// The inbox's state inside a gateway.
#[derive(Debug)]
pub(crate) struct Inbox {
    sessions: Sessions,
    /// `…/approvals/ui`, once the address is known.
    base: Arc<OnceLock<String>>,
    notifier: Option<Arc<notify::Notifier>>,
    secure: bool,
}

/// Applies the inbox configuration to the queue (TTL, four eyes, the
/// notifier as its observer) and builds the inbox state.
pub(crate) fn wire(config: &InboxConfig, queue: Arc<ApprovalQueue>) -> (Arc<ApprovalQueue>, Inbox) {
    let base = Arc::new(OnceLock::new());
    if let Some(url) = &config.public_url {
        let _ = base.set(format!("{}/approvals/ui", url.trim_end_matches('/')));
    }
    let mut configured = (*queue)
        .clone()
        .with_ttl(config.approval_ttl)
        .with_self_approval(config.allow_self_approval);
    let notifier = config
        .notify
        .clone()
        .map(|n| Arc::new(notify::Notifier::new(n, base.clone(), config.approval_ttl)));
    if let Some(notifier) = &notifier {
        configured = configured.with_observer(notifier.clone());
    }
    let secure = config
        .public_url
        .as_deref()
        .is_some_and(|u| u.to_ascii_lowercase().starts_with("https://"));
    (
        Arc::new(configured),
        Inbox {
            sessions: Sessions::default(),
            base,
            notifier,
            secure,
        },
    )
}

impl Inbox {
    /// The listener's address is known: links point at it unless a public
    /// address was configured.
    pub(crate) fn listening(&self, addr: std::net::SocketAddr) {
        let _ = self.base.set(format!("http://{addr}/approvals/ui"));
    }

    /// Starts notification delivery (needs a Tokio runtime; once).
    pub(crate) fn start(&self) {
        if let Some(notifier) = &self.notifier {
            notifier.start();
        }
    }
}

impl Gateway {
    /// Expires pending actions past their deadline and turns claims whose
    /// lease ran out into `in_doubt`, every `sweep_interval`, until the
    /// gateway is dropped. [`Gateway::serve_stdio`] and
    /// [`Gateway::serve_http`] start it; a host mounting
    /// [`Gateway::router`] itself calls it once.
    pub fn spawn_sweeper(&self) -> tokio::task::JoinHandle<()> {
        self.shared.inbox.start();
        let every = self
            .shared
            .config
            .inbox
            .sweep_interval
            .max(Duration::from_millis(10));
        let weak = Arc::downgrade(&self.shared);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(shared) = weak.upgrade() else { return };
                match shared.queue.expire_due() {
                    Ok(rows) => {
                        for row in rows {
                            tracing::info!(pending = %row.id, "expired without a decision");
                        }
                    }
                    Err(e) => tracing::warn!("sweeping expired approvals failed: {e}"),
                }
                match shared.queue.sweep_expired_leases() {
                    Ok(rows) => {
                        for row in rows {
                            tracing::warn!(pending = %row.id, "a claim ran out of lease: in doubt");
                        }
                    }
                    Err(e) => tracing::warn!("sweeping expired claims failed: {e}"),
                }
            }
        })
    }
}

/// The inbox's routes (outside the bearer gate: the inbox has its own
/// sign-in).
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/approvals/ui", get(index))
        .route("/approvals/ui/", get(index))
        .route("/approvals/ui/style.css", get(style))
        .route("/approvals/ui/sign-in", post(sign_in))
        .route("/approvals/ui/sign-out", post(sign_out))
        .route("/approvals/ui/{id}", get(detail))
        .route("/approvals/ui/{id}/approve", post(approve))
        .route("/approvals/ui/{id}/edit", post(edit))
        .route("/approvals/ui/{id}/reject", post(reject))
        .route("/approvals/ui/{id}/resolve", post(resolve))
        .with_state(shared)
}

type Fields = Vec<(String, String)>;
type Pairs = [(String, String)];

/// The security headers of every inbox answer.
fn secured(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

fn html_response(status: StatusCode, body: String) -> Response {
    secured(
        (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            body,
        )
            .into_response(),
    )
}

fn redirect(to: &str, cookie: Option<String>) -> Response {
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_owned())]).into_response();
    if let Some(cookie) = cookie
        && let Ok(value) = HeaderValue::from_str(&cookie)
    {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    secured(response)
}

/// A page that is only a message (refusals, errors).
fn message_page(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<p>{}</p>\n<p><a href=\"/approvals/ui\">Back to the inbox</a></p>\n",
        esc(text)
    );
    html_response(
        status,
        Page {
            title,
            signed_in: None,
            flash: None,
            body,
        }
        .render(),
    )
}

/// Whether the request's `Host` is one the gateway answers to (DNS
/// rebinding protection, as for `/mcp`; see [`crate::hosts`]).
pub(crate) fn host_allowed(shared: &Shared, headers: &HeaderMap) -> bool {
    crate::hosts::allowed(
        &shared.config.allowed_hosts,
        shared.config.inbox.public_url.as_deref(),
        headers,
    )
}

/// Whether the cookie gets `Secure`: the inbox is reached over TLS.
fn secure(shared: &Shared, headers: &HeaderMap) -> bool {
    shared.inbox.secure
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

/// The request's live session, by its cookie.
fn current(shared: &Shared, headers: &HeaderMap) -> Option<(String, session::Session)> {
    let id = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(session::from_cookie)?;
    let s = shared.inbox.sessions.get(id)?;
    Some((id.to_owned(), s))
}

fn field<'a>(form: &'a Fields, name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The caller a signed-in session decides as.
fn caller(key: &ApiKey) -> Caller {
    Caller {
        key: Some(key.clone()),
        transport: Transport::Http,
        session: None,
    }
}

/// A POST's session, checked: signed in (unless `sign_in`) and carrying
/// the session's CSRF token. `Err` is the refusal to send.
fn checked_post(
    shared: &Shared,
    headers: &HeaderMap,
    form: &Fields,
    signing_in: bool,
) -> Result<(String, session::Session), Box<Response>> {
    if !host_allowed(shared, headers) {
        return Err(Box::new(message_page(
            StatusCode::FORBIDDEN,
            "Refused",
            "This request's Host is not one the gateway answers to; start it with --allowed-host for this name.",
        )));
    }
    let Some((id, session)) = current(shared, headers) else {
        return Err(Box::new(message_page(
            StatusCode::FORBIDDEN,
            "Refused",
            "Your session has ended (or this form did not come from the inbox); nothing was changed. Open the inbox and sign in again.",
        )));
    };
    let token = field(form, "csrf").unwrap_or("");
    if !session::same_token(token, &session.csrf) {
        return Err(Box::new(message_page(
            StatusCode::FORBIDDEN,
            "Refused",
            "This form's CSRF token is missing or wrong, so it may not have come from the inbox; nothing was changed. Reload the page and decide again.",
        )));
    }
    if !signing_in && session.key.is_none() {
        return Err(Box::new(message_page(
            StatusCode::FORBIDDEN,
            "Refused",
            "Sign in first; nothing was changed.",
        )));
    }
    Ok((id, session))
}

/// A decision's POST on `pending`, checked as [`checked_post`] and refused
/// (a flash, nothing recorded) when the key may not read the action's
/// object: the session id, the session and the approver's key.
async fn decider_post(
    shared: &Shared,
    headers: &HeaderMap,
    form: &Fields,
    pending: &str,
) -> Result<(String, session::Session, ApiKey), Box<Response>> {
    let (id, session) = checked_post(shared, headers, form, false)?;
    let Some(key) = session.key.clone() else {
        return Err(Box::new(redirect("/approvals/ui", None)));
    };
    if let Ok(row) = shared.queue.get(pending)
        && let Err(refusal) = shared.may_read(&key, row.object_name.as_deref()).await
    {
        let text = format!("Nothing was changed: {}", refusal.message());
        shared.inbox.sessions.flash(&id, true, text);
        return Err(Box::new(redirect(
            &format!("/approvals/ui/{}", path_segment(pending)),
            None,
        )));
    }
    Ok((id, session, key))
}

async fn style() -> Response {
    secured(
        (
            [
                (header::CONTENT_TYPE, "text/css; charset=utf-8"),
                (header::CACHE_CONTROL, "max-age=3600"),
            ],
            html::STYLE,
        )
            .into_response(),
    )
}

/// The session for a GET, created when there is none; the cookie to set
/// when it was.
fn session_for_get(
    shared: &Shared,
    headers: &HeaderMap,
) -> Result<(String, session::Session, Option<String>), Box<Response>> {
    if !host_allowed(shared, headers) {
        return Err(Box::new(message_page(
            StatusCode::FORBIDDEN,
            "Refused",
            "This request's Host is not one the gateway answers to; start it with --allowed-host for this name.",
        )));
    }
    if let Some((id, s)) = current(shared, headers) {
        return Ok((id, s, None));
    }
    match shared.inbox.sessions.create(None) {
        Ok((id, s)) => {
            let cookie = session::set_cookie(Some(&id), secure(shared, headers));
            Ok((id, s, Some(cookie)))
        }
        Err(e) => Err(Box::new(message_page(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Unavailable",
            &format!("no session could be created (the system's random source failed: {e})"),
        ))),
    }
}

fn with_cookie(mut response: Response, cookie: Option<String>) -> Response {
    if let Some(cookie) = cookie
        && let Ok(value) = HeaderValue::from_str(&cookie)
    {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

fn sign_in_page(session: &session::Session, flash: Option<(bool, String)>) -> String {
    let body = format!(
        "<p>Sign in with your ObjectStack API key to review what the AI proposed. Approved \
         actions run on the server under this key, as if you had run them in the app.</p>\n\
         <form method=\"post\" action=\"/approvals/ui/sign-in\" class=\"card\">\n\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\n\
         <div class=\"field\"><label for=\"key\">API key <span class=\"hint\" id=\"key-hint\">\
         Your own key (osk_…), minted on your ObjectStack server. It is kept in this \
         gateway's memory for your session only, never stored.</span></label>\n\
         <input type=\"password\" id=\"key\" name=\"key\" required autocomplete=\"off\" \
         aria-describedby=\"key-hint\" autofocus></div>\n\
         <button type=\"submit\" class=\"primary\">Sign in</button>\n</form>\n",
        csrf = esc(&session.csrf)
    );
    Page {
        title: "Sign in",
        signed_in: None,
        flash: flash.as_ref().map(|(e, t)| (*e, t.as_str())),
        body,
    }
    .render()
}

/// How many decided actions a page of the index's history shows.
const HISTORY: usize = 100;

/// The position of a history page's last decision, as the "Older
/// decisions" link carries it: `STATE_AT.ID` (its `state_at` in ms, its
/// id). The next page starts after it.
fn cursor_param(cursor: &ListCursor) -> String {
    format!("{}.{}", cursor.at, path_segment(&cursor.id))
}

/// [`cursor_param`] read back, or `None` when it is not one.
fn parse_cursor(value: &str) -> Option<ListCursor> {
    let (at, id) = value.split_once('.')?;
    let at = at.parse::<i64>().ok()?;
    (!id.is_empty()).then(|| ListCursor {
        at,
        id: id.to_owned(),
    })
}

/// What the index shows.
struct IndexRows {
    /// Every row that may still change, oldest first, then one page of the
    /// history, newest first; each on an object the key may read.
    rows: Vec<PendingAction>,
    /// Rows among those read that cannot be read back.
    unreadable: Vec<StoreError>,
    /// Where older decisions start, when some follow this history page:
    /// the last decision shown, in the store's order.
    older: Option<ListCursor>,
}

/// The rows the index shows, each on an object `key` may read: every row
/// that may still change, oldest first, then [`HISTORY`] decided rows,
/// most recently decided first, from the newest or from just after
/// `older` (the last decision of the page before). The store picks them
/// a page at a time, each page starting after the last (keyset paging),
/// so a page deep in a queue's years of history costs what the first
/// does. Rows that cannot be read are reported among those pages.
async fn index_rows(
    shared: &Shared,
    key: &ApiKey,
    older: Option<ListCursor>,
) -> Result<IndexRows, Response> {
    let unreadable_queue = |e: &ApprovalError| {
        message_page(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The queue cannot be read",
            &e.to_string(),
        )
    };
    let mut found = IndexRows {
        rows: Vec::new(),
        unreadable: Vec::new(),
        older: None,
    };
    let live = shared.queue.list(&ListFilter {
        terminal: Some(false),
        ..ListFilter::default()
    });
    let history = ListFilter {
        terminal: Some(true),
        order: ListOrder::RecentlyChanged,
        after: older,
        ..ListFilter::default()
    };
    let mut seen = HashSet::new();
    // Readable decided rows met so far, and the last of them shown.
    let mut decided = 0;
    let mut last_shown = None;
    for listing in std::iter::once(live).chain(shared.queue.pages(&history, HISTORY)) {
        let listing = listing.map_err(|e| unreadable_queue(&e))?;
        found.unreadable.extend(listing.unreadable);
        for row in listing.rows {
            // A row decided between two pages can come twice.
            if !seen.insert(row.id.clone()) {
                continue;
            }
            match shared.may_read(key, row.object_name.as_deref()).await {
                Ok(()) if !row.state.is_terminal() => found.rows.push(row),
                Ok(()) => {
                    decided += 1;
                    if decided > HISTORY {
                        found.older = last_shown;
                        return Ok(found);
                    }
                    last_shown = Some(ListCursor::of(&row, ListOrder::RecentlyChanged));
                    found.rows.push(row);
                }
                Err(crate::verify::Refusal::Forbidden(_)) => {}
                Err(refusal) => {
                    return Err(message_page(
                        StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_GATEWAY),
                        "Not allowed",
                        refusal.message(),
                    ));
                }
            }
        }
    }
    Ok(found)
}

#[derive(Debug, serde::Deserialize)]
struct IndexQuery {
    /// The decisions older than this one ([`cursor_param`]).
    older: Option<String>,
}

async fn index(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<IndexQuery>,
    headers: HeaderMap,
) -> Response {
    let older = match query.older.as_deref().map(parse_cursor) {
        None => None,
        Some(Some(cursor)) => Some(cursor),
        Some(None) => {
            return message_page(
                StatusCode::BAD_REQUEST,
                "No such page",
                "`older` names the last decision of the page before, as the \"Older decisions\" \
                 link gives it: follow the links from the approvals page.",
            );
        }
    };
    let (id, session, cookie) = match session_for_get(&shared, &headers) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let flash = shared.inbox.sessions.take_flash(&id);
    let Some(key) = &session.key else {
        return with_cookie(
            html_response(StatusCode::OK, sign_in_page(&session, flash)),
            cookie,
        );
    };
    let me = caller(key).actor_id();
    let deep = older.is_some();
    let found = match index_rows(&shared, key, older).await {
        Ok(found) => found,
        Err(refused) => return refused,
    };
    let view = View::new(&shared, &me, &session.csrf);
    let body = view.index(&found, deep);
    with_cookie(
        html_response(
            StatusCode::OK,
            Page {
                title: "Approvals",
                signed_in: Some((&me, &session.csrf)),
                flash: flash.as_ref().map(|(e, t)| (*e, t.as_str())),
                body,
            }
            .render(),
        ),
        cookie,
    )
}

async fn detail(
    State(shared): State<Arc<Shared>>,
    Path(pending): Path<String>,
    headers: HeaderMap,
) -> Response {
    let (id, session, cookie) = match session_for_get(&shared, &headers) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let flash = shared.inbox.sessions.take_flash(&id);
    let Some(key) = &session.key else {
        return with_cookie(
            html_response(StatusCode::OK, sign_in_page(&session, flash)),
            cookie,
        );
    };
    let me = caller(key).actor_id();
    let row = match shared.queue.get(&pending) {
        Ok(row) => row,
        Err(ApprovalError::NotFound { .. }) => {
            return message_page(
                StatusCode::NOT_FOUND,
                "Not found",
                &format!("There is no pending action `{pending}`."),
            );
        }
        Err(e) => {
            return message_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The queue cannot be read",
                &e.to_string(),
            );
        }
    };
    if let Err(refusal) = shared.may_read(key, row.object_name.as_deref()).await {
        return message_page(
            StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_GATEWAY),
            "Not allowed",
            refusal.message(),
        );
    }
    let view = View::new(&shared, &me, &session.csrf);
    let body = view.detail(&row, None);
    with_cookie(
        html_response(
            StatusCode::OK,
            Page {
                title: &view.title(&row),
                signed_in: Some((&me, &session.csrf)),
                flash: flash.as_ref().map(|(e, t)| (*e, t.as_str())),
                body,
            }
            .render(),
        ),
        cookie,
    )
}

async fn sign_in(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Form(form): Form<Fields>,
) -> Response {
    let (old, _) = match checked_post(&shared, &headers, &form, true) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let Some(key) = field(&form, "key").and_then(ApiKey::new) else {
        shared.inbox.sessions.flash(
            &old,
            true,
            "Enter your ObjectStack API key to sign in.".into(),
        );
        return redirect("/approvals/ui", None);
    };
    if let Err(refusal) = shared.key_accepted(&key).await {
        shared
            .inbox
            .sessions
            .flash(&old, true, format!("Not signed in: {}", refusal.message()));
        return redirect("/approvals/ui", None);
    }
    // A new session id on sign-in: an id planted before cannot be reused.
    shared.inbox.sessions.remove(&old);
    let fingerprint = key.fingerprint();
    match shared.inbox.sessions.create(Some(key)) {
        Ok((id, _)) => {
            tracing::info!(key = %fingerprint, "signed in to the inbox");
            redirect(
                "/approvals/ui",
                Some(session::set_cookie(Some(&id), secure(&shared, &headers))),
            )
        }
        Err(e) => message_page(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Unavailable",
            &format!("no session could be created (the system's random source failed: {e})"),
        ),
    }
}

async fn sign_out(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Form(form): Form<Fields>,
) -> Response {
    let (id, _) = match checked_post(&shared, &headers, &form, true) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    shared.inbox.sessions.remove(&id);
    redirect(
        "/approvals/ui",
        Some(session::set_cookie(None, secure(&shared, &headers))),
    )
}

/// The message after a decision that ran the action.
fn ran(decision: &crate::Decision) -> (bool, String) {
    match decision.state {
        "executed" => (false, "Approved, and it ran.".to_owned()),
        "approved" => (
            false,
            decision
                .error
                .clone()
                .unwrap_or_else(|| "Approved.".to_owned()),
        ),
        _ => (
            true,
            format!(
                "Approved, but it failed: {}",
                decision.error.as_deref().unwrap_or("no error recorded")
            ),
        ),
    }
}

fn decision_error(e: &ApprovalError) -> String {
    match e {
        ApprovalError::InputMismatch { .. } => {
            "The arguments changed since this page was shown; nothing was approved. Review them again.".to_owned()
        }
        other => format!("Nothing was changed: {other}"),
    }
}

async fn approve(
    State(shared): State<Arc<Shared>>,
    Path(pending): Path<String>,
    headers: HeaderMap,
    Form(form): Form<Fields>,
) -> Response {
    let (id, _, key) = match decider_post(&shared, &headers, &form, &pending).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let key = &key;
    let sha = field(&form, "input_sha256").unwrap_or("");
    let (error, text) = match shared.approve(&caller(key), &pending, sha).await {
        Ok(decision) => ran(&decision),
        Err(e) => (true, decision_error(&e)),
    };
    shared.inbox.sessions.flash(&id, error, text);
    redirect(&format!("/approvals/ui/{}", path_segment(&pending)), None)
}

async fn reject(
    State(shared): State<Arc<Shared>>,
    Path(pending): Path<String>,
    headers: HeaderMap,
    Form(form): Form<Fields>,
) -> Response {
    let (id, _, key) = match decider_post(&shared, &headers, &form, &pending).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let key = &key;
    let reason = field(&form, "reason").map(str::trim).unwrap_or("");
    let (error, text) = if reason.is_empty() {
        (
            true,
            "Say why you reject it (the reason is shown to the model); nothing was changed."
                .to_owned(),
        )
    } else {
        match shared.reject(&caller(key), &pending, Some(reason)) {
            Ok(_) => (false, "Rejected; it will not run.".to_owned()),
            Err(e) => (true, decision_error(&e)),
        }
    };
    shared.inbox.sessions.flash(&id, error, text);
    redirect(&format!("/approvals/ui/{}", path_segment(&pending)), None)
}

async fn resolve(
    State(shared): State<Arc<Shared>>,
    Path(pending): Path<String>,
    headers: HeaderMap,
    Form(form): Form<Fields>,
) -> Response {
    let (id, _, key) = match decider_post(&shared, &headers, &form, &pending).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let key = &key;
    let note = field(&form, "note").map(str::trim).unwrap_or("");
    let outcome = match field(&form, "outcome") {
        Some("executed") => Some(Resolution::Executed),
        Some("failed") => Some(Resolution::Failed),
        _ => None,
    };
    let (error, text) = match (outcome, note.is_empty()) {
        (None, _) => (
            true,
            "Choose whether it ran or not; nothing was changed.".to_owned(),
        ),
        (_, true) => (
            true,
            "Say what you checked (the note is recorded with the outcome); nothing was changed."
                .to_owned(),
        ),
        (Some(how), false) => {
            let started = Instant::now();
            let who = caller(key);
            match shared
                .queue
                .resolve(&pending, &who.actor_id(), how, Some(note))
            {
                Ok(row) => {
                    shared.audit.record(
                        &who,
                        "resolve",
                        Some(row.input_sha256.clone()),
                        row.state.as_str(),
                        Some(&row.id),
                        started.elapsed(),
                    );
                    (false, format!("Recorded as {}.", row.state))
                }
                Err(e) => (true, decision_error(&e)),
            }
        }
    };
    shared.inbox.sessions.flash(&id, error, text);
    redirect(&format!("/approvals/ui/{}", path_segment(&pending)), None)
}

async fn edit(
    State(shared): State<Arc<Shared>>,
    Path(pending): Path<String>,
    headers: HeaderMap,
    Form(form): Form<Fields>,
) -> Response {
    let (id, session, key) = match decider_post(&shared, &headers, &form, &pending).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let key = &key;
    let who = caller(key);
    let me = who.actor_id();
    let back = format!("/approvals/ui/{}", path_segment(&pending));
    let row = match shared.queue.get(&pending) {
        Ok(row) => row,
        Err(e) => {
            shared.inbox.sessions.flash(&id, true, decision_error(&e));
            return redirect(&back, None);
        }
    };
    let catalog = shared.catalog();
    let Some(definition) = catalog.registry.definition(&row.tool_name) else {
        shared.inbox.sessions.flash(
            &id,
            true,
            format!(
                "`{}` is not served by this gateway now, so edits cannot be checked; nothing was approved.",
                row.tool_name
            ),
        );
        return redirect(&back, None);
    };
    let fields = form::fields(&definition.parameters);
    let sha = field(&form, "input_sha256").unwrap_or("").to_owned();
    let problems = match form::parse(&fields, &form, &row.input) {
        Ok(edited) => {
            let started = Instant::now();
            match catalog
                .registry
                .approve_with_edits(&pending, &me, &sha, edited)
            {
                Ok(approved) => {
                    let done = with_caller(
                        who.key.clone(),
                        catalog
                            .registry
                            .execute_pending(&pending, &executor_options()),
                    )
                    .await;
                    let (error, text) = match done {
                        Ok(done) => {
                            shared.audit.record(
                                &who,
                                "approve",
                                approved.approved_sha256.clone(),
                                done.state.as_str(),
                                Some(&pending),
                                started.elapsed(),
                            );
                            match done.state {
                                Row::Executed => {
                                    (false, "Approved with your edits, and it ran.".to_owned())
                                }
                                _ => (
                                    true,
                                    format!(
                                        "Approved with your edits, but it failed: {}",
                                        done.error.as_deref().unwrap_or("no error recorded")
                                    ),
                                ),
                            }
                        }
                        Err(e) => (true, format!("Approved with your edits, but: {e}")),
                    };
                    shared.inbox.sessions.flash(&id, error, text);
                    return redirect(&back, None);
                }
                Err(ApprovalError::InvalidEdits { problems, .. }) => problems
                    .into_iter()
                    .map(|p| match p.split_once(": ") {
                        Some((path, message)) => {
                            let name = path.split(['.', '[']).next().unwrap_or(path);
                            (name.to_owned(), message.to_owned())
                        }
                        None => (String::new(), p),
                    })
                    .collect::<Vec<_>>(),
                Err(e) => {
                    shared.inbox.sessions.flash(&id, true, decision_error(&e));
                    return redirect(&back, None);
                }
            }
        }
        Err(problems) => problems,
    };
    // Show the form again, as typed, with each problem beside its field.
    let view = View::new(&shared, &me, &session.csrf);
    let body = view.detail(&row, Some((&form, problems.as_slice())));
    html_response(
        StatusCode::UNPROCESSABLE_ENTITY,
        Page {
            title: &view.title(&row),
            signed_in: Some((&me, &session.csrf)),
            flash: Some((
                true,
                "The edited arguments are not valid for this action; nothing was approved. Fix the fields marked below.",
            )),
            body,
        }
        .render(),
    )
}

/// A pending action id as a path segment (ids are `pa_` and hex, but a
/// URL typed by hand can hold anything).
fn path_segment(id: &str) -> String {
    id.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Renders rows for one signed-in approver.
struct View<'a> {
    shared: &'a Shared,
    catalog: Arc<crate::catalog::Catalog>,
    me: &'a str,
    csrf: &'a str,
    now: i64,
}

impl<'a> View<'a> {
    fn new(shared: &'a Shared, me: &'a str, csrf: &'a str) -> Self {
        View {
            shared,
            catalog: shared.catalog(),
            me,
            csrf,
            now: shared.queue.now_ms(),
        }
    }

    /// The action's label: the served tool's title (the action's label),
    /// else its name.
    fn label(&self, row: &PendingAction) -> String {
        self.catalog
            .title(&row.tool_name)
            .unwrap_or_else(|| row.action_name.clone())
    }

    fn title(&self, row: &PendingAction) -> String {
        format!("{} ({})", self.label(row), row.state)
    }

    fn csrf_input(&self) -> String {
        format!(
            "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
            esc(self.csrf)
        )
    }

    fn mine(&self, row: &PendingAction) -> bool {
        row.proposer.id == self.me
    }

    fn four_eyes_blocks(&self, row: &PendingAction) -> bool {
        self.mine(row) && !self.shared.queue.allows_self_approval()
    }

    /// The index page; `deep`: its history is not the newest decisions.
    fn index(&self, found: &IndexRows, deep: bool) -> String {
        let (rows, unreadable) = (&found.rows, &found.unreadable);
        let mut out = String::new();
        let pending: Vec<&PendingAction> =
            rows.iter().filter(|r| r.state == Row::Pending).collect();
        let doubt: Vec<&PendingAction> = rows.iter().filter(|r| r.state == Row::InDoubt).collect();
        let waiting: Vec<&PendingAction> = rows
            .iter()
            .filter(|r| matches!(r.state, Row::Approved | Row::Executing))
            .collect();
        let mut history: Vec<&PendingAction> =
            rows.iter().filter(|r| r.state.is_terminal()).collect();
        history.sort_by(|a, b| (b.state_at, &b.id).cmp(&(a.state_at, &a.id)));
        history.truncate(100);

        out.push_str(&format!(
            "<nav aria-label=\"Sections\"><ul class=\"sections\"><li><a href=\"#pending\">Waiting for a decision ({})</a></li>\
             <li><a href=\"#doubt\">In doubt ({})</a></li><li><a href=\"#history\">History</a></li></ul></nav>\n",
            pending.len(),
            doubt.len()
        ));
        out.push_str(
            "<section aria-labelledby=\"pending\"><h2 id=\"pending\">Waiting for a decision</h2>\n",
        );
        if pending.is_empty() {
            out.push_str("<p class=\"empty\">Nothing is waiting for a decision.</p>\n");
        }
        for row in &pending {
            out.push_str(&self.card(row));
        }
        out.push_str(
            "</section>\n<section aria-labelledby=\"doubt\"><h2 id=\"doubt\">In doubt</h2>\n",
        );
        if doubt.is_empty() {
            out.push_str("<p class=\"empty\">Nothing is in doubt.</p>\n");
        } else {
            out.push_str(
                "<p>These were approved and started, but the gateway that ran them stopped before \
                 it recorded how they ended. They are never retried by themselves: check the \
                 target system, then record what happened.</p>\n",
            );
        }
        for row in &doubt {
            out.push_str(&self.card(row));
        }
        out.push_str("</section>\n");
        if !waiting.is_empty() {
            out.push_str("<section aria-labelledby=\"running\"><h2 id=\"running\">Approved, waiting to run</h2>\n<ul>");
            for row in &waiting {
                out.push_str(&format!(
                    "<li><a href=\"/approvals/ui/{}\">{}</a> ({}, by {})</li>",
                    path_segment(&row.id),
                    esc(&self.label(row)),
                    esc(row.state.as_str()),
                    esc(row.decided_by.as_deref().unwrap_or("?"))
                ));
            }
            out.push_str("</ul></section>\n");
        }
        out.push_str("<section aria-labelledby=\"history\"><h2 id=\"history\">History</h2>\n");
        if history.is_empty() {
            out.push_str(if deep {
                "<p class=\"empty\">No decisions this far back.</p>\n"
            } else {
                "<p class=\"empty\">Nothing has been decided yet.</p>\n"
            });
        } else {
            out.push_str(
                "<table><caption class=\"skip\">Decided actions, newest first</caption><thead><tr>\
                 <th scope=\"col\">Action</th><th scope=\"col\">Object</th><th scope=\"col\">Outcome</th>\
                 <th scope=\"col\">By</th><th scope=\"col\">When</th><th scope=\"col\">Result or error</th>\
                 </tr></thead><tbody>\n",
            );
            for row in &history {
                let detail = match (&row.error, &row.result, &row.reason) {
                    (Some(error), _, _) => esc(error),
                    (None, Some(result), _) => esc(&truncate(&result.to_string(), 160)),
                    (None, None, Some(reason)) => esc(reason),
                    _ => String::new(),
                };
                let edited = if row.approved_input.is_some() {
                    " <span class=\"badge\">edited</span>"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "<tr><td><a href=\"/approvals/ui/{id}\">{label}</a>{edited}</td><td>{object}</td>\
                     <td class=\"outcome-{state}\">{state}</td><td>{by}</td><td>{when}</td><td>{detail}</td></tr>\n",
                    id = path_segment(&row.id),
                    label = esc(&self.label(row)),
                    object = self.object(row),
                    state = esc(row.state.as_str()),
                    by = esc(row.state_by.as_deref().unwrap_or("")),
                    when = time(row.state_at),
                ));
            }
            out.push_str("</tbody></table>\n");
        }
        if deep || found.older.is_some() {
            out.push_str("<nav aria-label=\"History pages\"><ul class=\"sections\">");
            if deep {
                out.push_str(
                    "<li><a href=\"/approvals/ui#history\" rel=\"first\">Newest decisions</a></li>",
                );
            }
            if let Some(older) = &found.older {
                out.push_str(&format!(
                    "<li><a href=\"/approvals/ui?older={}#history\" rel=\"next\">Older decisions</a></li>",
                    cursor_param(older)
                ));
            }
            out.push_str("</ul></nav>\n");
        }
        out.push_str("</section>\n");
        for problem in unreadable {
            out.push_str(&format!(
                "<p class=\"flash error\" role=\"alert\">{}</p>\n",
                esc(&problem.to_string())
            ));
        }
        out
    }

    fn object(&self, row: &PendingAction) -> String {
        let record = row.input.get("recordId").and_then(Value::as_str);
        match (&row.object_name, record) {
            (Some(o), Some(r)) => format!("{} <span class=\"tool\">{}</span>", esc(o), esc(r)),
            (Some(o), None) => esc(o),
            (None, Some(r)) => format!("<span class=\"tool\">{}</span>", esc(r)),
            (None, None) => String::new(),
        }
    }

    /// The facts of a row, as a definition list.
    fn facts(&self, row: &PendingAction) -> String {
        let mut out = String::from("<dl class=\"facts\">");
        let mut fact = |name: &str, value: String| {
            out.push_str(&format!("<dt>{}</dt><dd>{value}</dd>", esc(name)));
        };
        fact("State", esc(row.state.as_str()));
        let object = self.object(row);
        if !object.is_empty() {
            fact("Object and record", object);
        }
        let proposer = match &row.proposer.name {
            Some(name) => format!("{} ({})", esc(&row.proposer.id), esc(name)),
            None => esc(&row.proposer.id),
        };
        let you = if self.mine(row) { " (you)" } else { "" };
        fact("Proposed by", format!("{proposer}{you}"));
        fact(
            "Proposed",
            format!(
                "{} ago, {}",
                span(self.now - row.created_at),
                time(row.created_at)
            ),
        );
        if row.state == Row::Pending {
            match row.deadline(self.shared.queue.ttl()) {
                Some(d) if d > self.now => fact(
                    "Deadline",
                    format!("{}, in {}", time(d), span(d - self.now)),
                ),
                Some(d) => fact(
                    "Deadline",
                    format!("{} (passed; it expires at the next sweep)", time(d)),
                ),
                None => fact("Deadline", "none".to_owned()),
            }
        }
        if let Some(by) = &row.decided_by {
            let at = row.decided_at.map(time).unwrap_or_default();
            fact("Decided by", format!("{} {at}", esc(by)));
        }
        if let Some(reason) = &row.reason {
            fact("Reason", esc(reason));
        }
        if let Some(error) = &row.error {
            fact("Error", esc(error));
        }
        if (row.state.is_terminal() || row.state == Row::InDoubt)
            && let Some(by) = &row.state_by
        {
            fact(
                "Last change",
                format!("{} by {}", time(row.state_at), esc(by)),
            );
        }
        out.push_str("</dl>");
        out
    }

    /// One pending or in-doubt action on the index.
    fn card(&self, row: &PendingAction) -> String {
        let id = path_segment(&row.id);
        let description = self
            .catalog
            .registry
            .definition(&row.tool_name)
            .map(|d| d.description.clone())
            .unwrap_or_default();
        let doubt = row.state == Row::InDoubt;
        let mut out = format!(
            "<article class=\"card{}\" aria-labelledby=\"t-{id}\">\
             <h3 id=\"t-{id}\"><a href=\"/approvals/ui/{id}\">{}</a>{}</h3>\
             <div class=\"tool\">{} · {}</div><p class=\"desc\">{}</p>{}",
            if doubt { " doubt" } else { "" },
            esc(&self.label(row)),
            if doubt {
                " <span class=\"badge warn\">in doubt</span>"
            } else {
                ""
            },
            esc(&row.tool_name),
            esc(&row.id),
            esc(&description),
            self.facts(row),
        );
        out.push_str(&format!(
            "<h4 id=\"a-{id}\">Arguments</h4><pre aria-labelledby=\"a-{id}\">{}</pre>",
            pretty(&Value::Object(row.execution_input().clone()))
        ));
        if doubt {
            out.push_str(&self.resolve_form(row));
        } else {
            out.push_str(&self.decide_forms(row, true));
        }
        out.push_str("</article>\n");
        out
    }

    /// Approve, reject and (on the index) a link to approve with edits.
    fn decide_forms(&self, row: &PendingAction, link_to_edit: bool) -> String {
        let id = path_segment(&row.id);
        let mut out = String::from("<div class=\"decide\">");
        if self.four_eyes_blocks(row) {
            out.push_str(
                "<p class=\"flash error\">You proposed this action, so someone else must approve \
                 it (four eyes). You can still reject it.</p>",
            );
        } else {
            out.push_str(&format!(
                "<form method=\"post\" action=\"/approvals/ui/{id}/approve\">{}\
                 <input type=\"hidden\" name=\"input_sha256\" value=\"{}\">\
                 <button type=\"submit\" class=\"primary\" aria-describedby=\"t-{id}\">Approve</button></form>",
                self.csrf_input(),
                esc(&row.input_sha256)
            ));
        }
        out.push_str(&format!(
            "<form method=\"post\" action=\"/approvals/ui/{id}/reject\">{}\
             <div><label for=\"r-{id}\">Reason for rejecting</label>\
             <input type=\"text\" id=\"r-{id}\" name=\"reason\" required aria-describedby=\"t-{id}\"></div>\
             <button type=\"submit\" class=\"danger\" aria-describedby=\"t-{id}\">Reject</button></form>",
            self.csrf_input()
        ));
        if link_to_edit && !self.four_eyes_blocks(row) {
            out.push_str(&format!(
                "<a class=\"button\" href=\"/approvals/ui/{id}#edit\">Approve with edits…</a>"
            ));
        }
        out.push_str("</div>");
        out
    }

    fn resolve_form(&self, row: &PendingAction) -> String {
        let id = path_segment(&row.id);
        format!(
            "<form method=\"post\" action=\"/approvals/ui/{id}/resolve\" class=\"resolve\">{}\
             <fieldset><legend>After checking the target system, it…</legend>\
             <label class=\"check\"><input type=\"radio\" name=\"outcome\" value=\"executed\" id=\"o-{id}-x\" required> ran (mark executed)</label>\
             <label class=\"check\"><input type=\"radio\" name=\"outcome\" value=\"failed\" id=\"o-{id}-f\"> did not run, or was undone (mark failed)</label>\
             </fieldset>\
             <div class=\"field\"><label for=\"n-{id}\">What you checked</label>\
             <input type=\"text\" id=\"n-{id}\" name=\"note\" required></div>\
             <button type=\"submit\">Record the outcome</button></form>",
            self.csrf_input()
        )
    }

    /// One action's page; `retry` is a submitted edit form with its
    /// problems, shown again.
    fn detail(&self, row: &PendingAction, retry: Option<(&Fields, &[(String, String)])>) -> String {
        let definition = self.catalog.registry.definition(&row.tool_name);
        let mut out = format!(
            "<span id=\"t-{}\" hidden>{}</span><p class=\"tool\">{} · {}</p><p class=\"desc\">{}</p>{}",
            path_segment(&row.id),
            esc(&self.label(row)),
            esc(&row.tool_name),
            esc(&row.id),
            esc(definition
                .as_ref()
                .map(|d| d.description.as_str())
                .unwrap_or("This tool is not served by this gateway now (the stack changed).")),
            self.facts(row)
        );
        out.push_str(&format!(
            "<h2 id=\"args\">Arguments as proposed</h2><pre aria-labelledby=\"args\">{}</pre>",
            pretty(&Value::Object(row.input.clone()))
        ));
        if let Some(approved) = &row.approved_input {
            out.push_str("<h2>What the approver changed</h2>");
            out.push_str(&diff::render(&diff::diff(&row.input, approved)));
        }
        if let Some(result) = &row.result {
            out.push_str(&format!(
                "<h2 id=\"result\">Result</h2><pre aria-labelledby=\"result\">{}</pre>",
                pretty(result)
            ));
        }
        match row.state {
            Row::Pending => {
                out.push_str("<h2>Decide</h2>");
                out.push_str(&self.decide_forms(row, false));
                if !self.four_eyes_blocks(row) {
                    out.push_str(&self.edit_form(row, definition.as_ref(), retry));
                }
            }
            Row::InDoubt => {
                out.push_str("<h2>Record what happened</h2>");
                out.push_str(&self.resolve_form(row));
            }
            _ => {}
        }
        out.push_str("<p><a href=\"/approvals/ui\">Back to the inbox</a></p>");
        out
    }

    fn edit_form(
        &self,
        row: &PendingAction,
        definition: Option<&objectstack_spec::tool_definition::AIToolDefinition>,
        retry: Option<(&Fields, &[(String, String)])>,
    ) -> String {
        let id = path_segment(&row.id);
        let Some(definition) = definition else {
            return "<p>Approve with edits needs the tool's current schema, and this gateway does not serve the tool now.</p>".to_owned();
        };
        let fields = form::fields(&definition.parameters);
        let (typed, problems): (&Pairs, &Pairs) = match retry {
            Some((typed, problems)) => (typed, problems),
            None => (&[], &[]),
        };
        let general: Vec<&str> = problems
            .iter()
            .filter(|(f, _)| !fields.iter().any(|x| x.name == *f))
            .map(|(_, m)| m.as_str())
            .collect();
        let mut out = format!(
            "<h2 id=\"edit\">Approve with edits</h2>\
             <p>Change the arguments, then approve: the action runs with your arguments, and the \
             record keeps both. Fields follow the tool's current schema; your edits are checked \
             against it before anything is approved.</p>\
             <form method=\"post\" action=\"/approvals/ui/{id}/edit\" class=\"card\" aria-labelledby=\"edit\">{}\
             <input type=\"hidden\" name=\"input_sha256\" value=\"{}\">",
            self.csrf_input(),
            esc(&row.input_sha256)
        );
        for message in general {
            out.push_str(&format!(
                "<p class=\"flash error\" role=\"alert\">{}</p>",
                esc(message)
            ));
        }
        out.push_str(&form::render(&fields, &row.input, typed, problems));
        out.push_str("<button type=\"submit\" class=\"primary\">Approve with these arguments</button></form>");
        out
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_with_their_units() {
        assert_eq!(parse_duration("24h"), Ok(Some(Duration::from_secs(86_400))));
        assert_eq!(parse_duration("1h30m"), Ok(Some(Duration::from_secs(5400))));
        assert_eq!(parse_duration("90s"), Ok(Some(Duration::from_secs(90))));
        assert_eq!(parse_duration("7d"), Ok(Some(Duration::from_secs(604_800))));
        assert_eq!(parse_duration("off"), Ok(None));
        assert_eq!(parse_duration("0"), Ok(None));
        for bad in ["", "24", "h", "5x", "1.5h", "-1h", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn history_cursors_round_trip_through_a_query_string() {
        // What axum's `Query` does to the link's value.
        let decoded = |text: &str| -> String {
            let bytes = text.as_bytes();
            let mut out = Vec::new();
            let mut i = 0;
            while i < bytes.len() {
                match (bytes[i], text.get(i + 1..i + 3)) {
                    (b'%', Some(hex)) => {
                        out.push(u8::from_str_radix(hex, 16).unwrap());
                        i += 3;
                    }
                    (b, _) => {
                        out.push(b);
                        i += 1;
                    }
                }
            }
            String::from_utf8(out).unwrap()
        };
        for (at, id) in [
            (1_800_000_000_000, "pa_0a1b"),
            (-5, "pa.with.dots"),
            (0, "odd id+&=#%é"),
        ] {
            let cursor = ListCursor {
                at,
                id: id.to_owned(),
            };
            let param = cursor_param(&cursor);
            assert!(!param.contains(['&', '#', '+', ' ']), "{param}");
            assert_eq!(parse_cursor(&decoded(&param)), Some(cursor));
        }
        for bad in ["", "1", "1.", ".pa", "x.pa", "1e3.pa"] {
            assert_eq!(parse_cursor(bad), None, "{bad}");
        }
    }

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(path_segment("pa_0a1b"), "pa_0a1b");
        assert_eq!(path_segment("a/b?\"<"), "a%2Fb%3F%22%3C");
    }
}
