//! The bridge's host services over an ObjectStack server's REST API.
//!
//! - records: `GET {server}/api/v1/data/{object}/{id}` (404 is "not found");
//! - script actions, flow actions and declarative field writes:
//!   `POST {server}/api/v1/actions/{object}/{action}[/{recordId}]` with
//!   `{"params": {...}}`, plus `"confirm": true` when an approved pending
//!   action runs (the server's confirmation member);
//! - `{"success": true, "data": ...}` is the result; the error envelope
//!   `{"success": false, "error": {code, message, httpStatus}}` (and the data
//!   routes' flat `{error, code}`) becomes an error carrying the server's
//!   message and code.
//!
//! The key a call runs under is the current task's [`with_caller`] scope:
//! the bridge's host traits carry an actor, not a credential, and the
//! gateway must forward each caller's own key, so the key travels beside
//! the call rather than through the bridge (it never reaches the queue).

use std::future::Future;
use std::time::Duration;

use objectstack_bridge::runtime::{
    Actor, AutomationService, DataEngine, FieldWriteRequest, FlowRequest, HostError, ScriptRequest,
};
use serde_json::{Map, Value, json};

use crate::identity::ApiKey;

tokio::task_local! {
    static KEY: Option<ApiKey>;
}

/// Runs `future` with `key` as the credential of every backend call it
/// makes.
pub async fn with_caller<F: Future>(key: Option<ApiKey>, future: F) -> F::Output {
    KEY.scope(key, future).await
}

pub(crate) fn current_key() -> Option<ApiKey> {
    KEY.try_with(Clone::clone).ok().flatten()
}

/// The largest response body read from the server (16 MiB).
const MAX_RESPONSE_BYTES: usize = 16 << 20;

/// An ObjectStack server, as the bridge's data engine and automation
/// service.
#[derive(Debug, Clone)]
pub struct ObjectStackBackend {
    client: reqwest::Client,
    base: reqwest::Url,
}

/// Why a backend could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The server URL is not an absolute http(s) URL.
    #[error("--server {url}: {why}")]
    Url {
        /// The URL given, its userinfo redacted.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}

impl ObjectStackBackend {
    /// A backend for the server at `url` (for example
    /// `http://127.0.0.1:3417`), with a timeout on every request.
    pub fn new(url: &str, timeout: Duration) -> Result<Self, BackendError> {
        let bad = |why: &str| BackendError::Url {
            url: objectstack_bridge::redact::url(url).into_owned(),
            why: why.to_owned(),
        };
        let mut base = reqwest::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(bad("use an http:// or https:// URL"));
        }
        if !base.username().is_empty() || base.password().is_some() {
            return Err(bad(
                "credentials do not belong in the URL; the caller's key is sent as `Authorization`",
            ));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(bad(
                "give the server's base URL, without a query or fragment",
            ));
        }
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| BackendError::Client(e.to_string()))?;
        Ok(ObjectStackBackend { client, base })
    }

    /// The server's base URL.
    pub fn base_url(&self) -> &reqwest::Url {
        &self.base
    }

    fn url(&self, segments: &[&str]) -> Result<reqwest::Url, HostError> {
        let mut path = String::from("api/v1");
        for segment in segments {
            if segment.is_empty() || segment.chars().all(|c| c == '.') {
                return Err(HostError::failed(format!(
                    "`{segment}` cannot be used as a path segment of an ObjectStack route"
                )));
            }
            path.push('/');
            encode_segment(segment, &mut path);
        }
        self.base
            .join(&path)
            .map_err(|e| HostError::failed(format!("cannot build the request URL: {e}")))
    }

    async fn send(
        &self,
        method: reqwest::Method,
        url: reqwest::Url,
        body: Option<Value>,
    ) -> Result<(u16, Value), HostError> {
        let mut request = self
            .client
            .request(method.clone(), url.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(key) = current_key() {
            request = request.header(reqwest::header::AUTHORIZATION, key.bearer());
        }
        if let Some(body) = &body {
            request = request.json(body);
        }
        let transport = |e: reqwest::Error| transport_error(&method, &url, &e);
        let mut response = request.send().await.map_err(transport)?;
        let status = response.status().as_u16();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(HostError::failed(format!(
                    "the ObjectStack server's answer to {method} {url} is larger than {MAX_RESPONSE_BYTES} bytes"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        let value = if bytes.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|_| {
                Value::String(String::from_utf8_lossy(truncate(&bytes, 2000)).into_owned())
            })
        };
        Ok((status, value))
    }

    /// Asks whether `key` may read `object`: the status of
    /// `GET {server}/api/v1/data/{object}?limit=0`, which lists nothing.
    pub(crate) async fn probe(&self, key: &ApiKey, object: &str) -> Result<u16, HostError> {
        let mut url = self.url(&["data", object])?;
        url.set_query(Some("limit=0"));
        let response = self
            .client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::AUTHORIZATION, key.bearer())
            .send()
            .await
            .map_err(|e| transport_error(&reqwest::Method::GET, &url, &e))?;
        Ok(response.status().as_u16())
    }

    /// Invokes an action route; the value is the envelope's `data`.
    async fn invoke(
        &self,
        object: &str,
        action: &str,
        record_id: Option<&str>,
        params: Map<String, Value>,
        confirm: bool,
    ) -> Result<Value, HostError> {
        let mut segments = vec!["actions", object, action];
        if let Some(id) = record_id {
            segments.push(id);
        }
        let url = self.url(&segments)?;
        let mut body = json!({ "params": params });
        if confirm && let Value::Object(b) = &mut body {
            b.insert("confirm".into(), Value::Bool(true));
        }
        let (status, value) = self.send(reqwest::Method::POST, url, Some(body)).await?;
        if !(200..300).contains(&status) {
            return Err(server_error(status, &value));
        }
        match value {
            Value::Object(mut envelope) => match envelope.get("success") {
                Some(Value::Bool(true)) => Ok(envelope.remove("data").unwrap_or(Value::Null)),
                Some(Value::Bool(false)) => Err(server_error(status, &Value::Object(envelope))),
                _ => Ok(Value::Object(envelope)),
            },
            other => Ok(other),
        }
    }

    /// [`Self::invoke`] for a script or flow request, whose object is
    /// optional in the bridge but required by the action route, and whose
    /// record (when loaded) carries the id.
    async fn invoke_on(
        &self,
        object: Option<&str>,
        action: &str,
        record: Option<&Value>,
        params: Map<String, Value>,
        confirm: bool,
    ) -> Result<Value, HostError> {
        let object = object.ok_or_else(|| {
            HostError::failed(format!(
                "action '{action}' has no object; the ObjectStack action route needs one"
            ))
        })?;
        let record_id = record_id(record);
        self.invoke(object, action, record_id.as_deref(), params, confirm)
            .await
    }
}

/// Why the server's certificate was refused, when that is why a request
/// could not be sent: the TLS library's words, found in the error's chain.
fn certificate_refusal(e: &reqwest::Error) -> Option<String> {
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let text = cause.to_string();
        if text.contains("certificate") {
            return Some(objectstack_bridge::redact::text(&text).into_owned());
        }
        source = cause.source();
    }
    None
}

/// A request that got no answer, as the model should read it. A request
/// other than `GET` that was sent (not refused at connecting) may have run:
/// [`HostError::Unanswered`], which the queue records as `in_doubt`.
fn transport_error(method: &reqwest::Method, url: &reqwest::Url, e: &reqwest::Error) -> HostError {
    let refused = certificate_refusal(e);
    if method != reqwest::Method::GET && !e.is_connect() && !e.is_builder() && refused.is_none() {
        return HostError::Unanswered {
            method: method.to_string(),
            url: url.to_string(),
            message: if e.is_timeout() {
                "the ObjectStack server did not answer in time (timeout)".to_owned()
            } else {
                e.to_string()
            },
        };
    }
    HostError::Transport {
        method: method.to_string(),
        url: url.to_string(),
        message: if e.is_timeout() {
            "the ObjectStack server did not answer in time (timeout)".to_owned()
        } else if let Some(reason) = refused {
            format!(
                "the ObjectStack server's TLS certificate was refused ({reason}); nothing was \
                 sent. If a private CA signed it, set SSL_CERT_FILE to that CA's PEM file"
            )
        } else if e.is_connect() {
            "the ObjectStack server is unreachable".to_owned()
        } else {
            e.to_string()
        },
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn encode_segment(segment: &str, out: &mut String) {
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

fn truncate(bytes: &[u8], max: usize) -> &[u8] {
    bytes.get(..max).unwrap_or(bytes)
}

/// The server's refusal as the model should read it: its message, then
/// its code and status.
fn server_error(status: u16, body: &Value) -> HostError {
    let (code, message) = match body {
        Value::Object(map) => match map.get("error") {
            // The action routes' envelope.
            Some(Value::Object(error)) => (
                error.get("code").and_then(Value::as_str),
                error.get("message").and_then(Value::as_str),
            ),
            // The data routes' flat shape.
            Some(Value::String(message)) => (
                map.get("code").and_then(Value::as_str),
                map.get("message")
                    .and_then(Value::as_str)
                    .or(Some(message.as_str())),
            ),
            _ => (
                map.get("code").and_then(Value::as_str),
                map.get("message").and_then(Value::as_str),
            ),
        },
        _ => (None, body.as_str()),
    };
    let message = message.unwrap_or("the server gave no message");
    let code = code.unwrap_or(match status {
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        _ => "ERROR",
    });
    HostError::failed(format!(
        "the ObjectStack server refused the call (HTTP {status} {code}): {message}"
    ))
}

#[async_trait::async_trait]
impl DataEngine for ObjectStackBackend {
    async fn find_record(
        &self,
        object: &str,
        id: &str,
        _actor: &Actor,
    ) -> Result<Option<Value>, HostError> {
        let url = self.url(&["data", object, id])?;
        let (status, value) = self.send(reqwest::Method::GET, url, None).await?;
        if status == 404 {
            return Ok(None);
        }
        if !(200..300).contains(&status) {
            return Err(server_error(status, &value));
        }
        // `{"object", "id", "record": {...}}`; the record keeps its id so the
        // action call knows which record it runs on.
        let mut record = match value {
            Value::Object(mut body) => match body.remove("record") {
                Some(Value::Object(record)) => record,
                _ => body,
            },
            _ => Map::new(),
        };
        record
            .entry("id")
            .or_insert_with(|| Value::String(id.to_owned()));
        Ok(Some(Value::Object(record)))
    }

    async fn execute_action(&self, request: ScriptRequest) -> Result<Value, HostError> {
        self.invoke_on(
            request.object.as_deref(),
            &request.action,
            request.record.as_ref(),
            request.params,
            request.idempotency_key.is_some(),
        )
        .await
    }

    async fn update_record(&self, request: FieldWriteRequest) -> Result<Value, HostError> {
        // The server applies the action's own `patch`: the gateway sends no
        // field values, only which record.
        self.invoke(
            &request.object,
            &request.action,
            Some(&request.record_id),
            Map::new(),
            request.idempotency_key.is_some(),
        )
        .await
    }
}

#[async_trait::async_trait]
impl AutomationService for ObjectStackBackend {
    async fn execute(&self, request: FlowRequest) -> Result<Value, HostError> {
        self.invoke_on(
            request.object.as_deref(),
            &request.action,
            request.record.as_ref(),
            request.params,
            request.idempotency_key.is_some(),
        )
        .await
    }
}

fn record_id(record: Option<&Value>) -> Option<String> {
    match record?.get("id")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_and_dot_segments_refused() {
        let backend = ObjectStackBackend::new("http://127.0.0.1:1/base", Duration::from_secs(1))
            .unwrap_or_else(|e| panic!("{e}"));
        let url = backend
            .url(&["data", "task", "a/b?c d"])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:1/base/api/v1/data/task/a%2Fb%3Fc%20d"
        );
        assert!(backend.url(&["data", "task", ".."]).is_err());
        assert!(backend.url(&["data", "task", ""]).is_err());
    }

    #[test]
    fn bad_server_urls_are_refused() {
        for url in [
            "ftp://x",
            "http://user:pw@host",
            "not a url",
            "http://h/?q=1",
        ] {
            assert!(
                ObjectStackBackend::new(url, Duration::from_secs(1)).is_err(),
                "{url}"
            );
        }
        // The refusal does not repeat the credentials it refuses.
        let err = ObjectStackBackend::new("http://svc:TOPSECRET@host/", Duration::from_secs(1))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("http://***@host/"), "{err}");
        assert!(!err.contains("TOPSECRET"), "{err}");
    }

    #[test]
    fn both_error_shapes_carry_code_and_message() {
        let envelope = json!({"success": false, "error": {"code": "PERMISSION_DENIED", "message": "no", "httpStatus": 403}});
        assert_eq!(
            server_error(403, &envelope).to_string(),
            "the ObjectStack server refused the call (HTTP 403 PERMISSION_DENIED): no"
        );
        let flat = json!({"error": "Record x not found", "code": "RECORD_NOT_FOUND"});
        assert_eq!(
            server_error(404, &flat).to_string(),
            "the ObjectStack server refused the call (HTTP 404 RECORD_NOT_FOUND): Record x not found"
        );
        assert_eq!(
            server_error(502, &Value::String("Bad gateway".into())).to_string(),
            "the ObjectStack server refused the call (HTTP 502 ERROR): Bad gateway"
        );
    }
}
