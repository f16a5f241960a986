//! The default [`ApiClient`]: JSON over HTTP with `reqwest` (feature `http`).
//!
//! Credentials go only where the base URL points. A target must be a
//! relative reference that stays below the base URL's path (`tasks/x`,
//! or `/v1/tasks` under `https://api.example.com/v1/`), or an absolute
//! `http(s)` URL on one of [`HttpClientOptions::allowed_origins`]; the
//! rules are [`ApiScope`]'s, so an action with any other target is
//! skipped when it registers (`unsafe_api_target`), and a request for
//! one is refused here as well, before anything is sent. Targets resolve
//! the way a browser resolves them (`new URL(target, base)`): `x` replaces
//! the base's last segment, `/v1/x` its path. The default headers (and a
//! base URL's userinfo, sent as basic authentication) go only to the base
//! URL's origin; a request to an allowed origin carries none of them, and
//! no per-call `Authorization`, `Proxy-Authorization`, `Cookie` or
//! `X-Api-Key` either.
//!
//! Redirects are not followed: a 3xx is an error naming where it pointed.
//! With [`HttpClientOptions::follow_redirects`] they are followed within
//! the origin of the request only. `Referer` is never sent.
//!
//! Default headers go on every request, then the request's own, then
//! `Idempotency-Key` when executing an approved action. A non-2xx status is
//! an error carrying status and body, of which at most 2,000 characters are
//! read; a 2xx body is read as it streams and refused past
//! [`HttpClientOptions::max_response_bytes`] (default 8 MiB). An empty body
//! is `null`; a body that is not JSON is returned as a string. A timeout
//! (the whole exchange, connection to last byte) is reported as one: "no
//! answer within 30 s". No URL shown in an error carries its userinfo
//! ([`crate::redact`]).
//!
//! For `GET` and `DELETE` the runtime sends the action's data in the
//! query string (see [`build_api_target`](super::build_api_target)); a
//! deliberate difference from upstream, which drops it.
//!
//! `reqwest` runs on Tokio, so calls must happen inside a Tokio runtime.
//! TLS is whatever the `reqwest` in your build offers: this crate enables
//! none, so add `reqwest = { version = "0.12", features = ["rustls-tls"] }`
//! to the host's own dependencies to call `https://` APIs (Cargo unifies
//! the features), or configure a builder and pass it to
//! [`HttpApiClient::with_builder`].

use std::error::Error as _;
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Url, redirect};
use serde_json::Value;

use super::host::{ApiClient, ApiRequest, HostError};
use crate::materialise::ApiScope;
use crate::redact;

/// Longest response body quoted in an error, in characters.
const MAX_ERROR_BODY_CHARS: usize = 2000;

/// The most bytes of a non-2xx body read: enough for the characters
/// quoted, at four bytes each at most.
const MAX_ERROR_BODY_BYTES: usize = MAX_ERROR_BODY_CHARS * 4;

/// Redirects followed at most in one request, when following is enabled.
const MAX_REDIRECTS: usize = 10;

/// Per-call headers never sent to an origin other than the base URL's.
const CREDENTIAL_HEADERS: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
];

/// How the default client is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpClientOptions {
    /// What relative targets resolve against (`https://api.example.com/v1/`).
    /// Its userinfo, if any, is sent as basic authentication and never
    /// shown.
    pub base_url: Option<String>,
    /// Headers sent with every request to the base URL's origin (an API
    /// key, say), and to no other.
    pub headers: Vec<(String, String)>,
    /// How long one request may take, connection to last byte (default 30 s).
    pub timeout: Duration,
    /// Other origins an absolute target may name
    /// (`https://hooks.example.com`: scheme, host and port, no path).
    /// Requests there carry none of `headers`. Empty by default: only
    /// targets below the base URL are sent.
    pub allowed_origins: Vec<String>,
    /// Follow redirects within the origin of the request (at most 10).
    /// Off by default: a 3xx is an error. A redirect to another origin is
    /// never followed.
    pub follow_redirects: bool,
    /// The largest response body read, in bytes (default 8 MiB); a larger
    /// one is an error, found while it streams, so no more than this is
    /// ever held.
    pub max_response_bytes: usize,
}

impl Default for HttpClientOptions {
    fn default() -> Self {
        HttpClientOptions {
            base_url: None,
            headers: Vec::new(),
            timeout: Duration::from_secs(30),
            allowed_origins: Vec::new(),
            follow_redirects: false,
            max_response_bytes: 8 * 1024 * 1024,
        }
    }
}

/// The default HTTP API client.
#[derive(Debug, Clone)]
pub struct HttpApiClient {
    client: reqwest::Client,
    base: Option<Url>,
    allowed_origins: Vec<String>,
    headers: HeaderMap,
    timeout: Duration,
    max_response_bytes: usize,
    follow_redirects: bool,
}

impl HttpApiClient {
    /// A client with its own connection pool.
    pub fn new(options: HttpClientOptions) -> Result<Self, HostError> {
        Self::with_builder(reqwest::Client::builder(), options)
    }

    /// A client built from a `reqwest::ClientBuilder` you configured (TLS,
    /// proxies, pool). The redirect policy and `Referer` are set here, over
    /// whatever the builder says, so that credentials cannot follow a
    /// redirect elsewhere. Give credentials in
    /// [`HttpClientOptions::headers`], not as the builder's default
    /// headers: those would go to allowed origins too.
    pub fn with_builder(
        builder: reqwest::ClientBuilder,
        options: HttpClientOptions,
    ) -> Result<Self, HostError> {
        let base = match &options.base_url {
            Some(b) => Some(parse_base(b)?),
            None => None,
        };
        let allowed_origins = options
            .allowed_origins
            .iter()
            .map(|o| parse_origin(o))
            .collect::<Result<Vec<_>, _>>()?;
        let headers = header_map(&options.headers)?;
        let policy = if options.follow_redirects {
            redirect::Policy::custom(same_origin_redirects)
        } else {
            redirect::Policy::none()
        };
        let client = builder
            .redirect(policy)
            .referer(false)
            .build()
            .map_err(|e| {
                HostError::failed(format!("cannot build the HTTP client: {}", describe(&e)))
            })?;
        Ok(HttpApiClient {
            client,
            base,
            allowed_origins,
            headers,
            timeout: options.timeout,
            max_response_bytes: options.max_response_bytes,
            follow_redirects: options.follow_redirects,
        })
    }
}

/// Follows a redirect only to the origin of the first request, without
/// userinfo, at most [`MAX_REDIRECTS`] times.
fn same_origin_redirects(attempt: redirect::Attempt<'_>) -> redirect::Action {
    let Some(first) = attempt.previous().first() else {
        return attempt.stop();
    };
    let next = attempt.url();
    if next.origin() != first.origin() || !next.username().is_empty() || next.password().is_some() {
        return attempt.stop();
    }
    if attempt.previous().len() > MAX_REDIRECTS {
        return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
    }
    attempt.follow()
}

fn parse_base(base: &str) -> Result<Url, HostError> {
    let shown = redact::url(base);
    let url = Url::parse(base)
        .map_err(|e| HostError::failed(format!("the API base URL `{shown}` is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(HostError::failed(format!(
            "the API base URL `{shown}` is not an http or https URL"
        )));
    }
    Ok(url)
}

/// An allowed origin, as [`ApiScope`] compares it (`https://h[:port]`).
fn parse_origin(origin: &str) -> Result<String, HostError> {
    let shown = redact::url(origin);
    let bad = |why: &str| {
        HostError::failed(format!(
            "the allowed origin `{shown}` {why}: write it as `https://host` or `https://host:port`"
        ))
    };
    let url = Url::parse(origin).map_err(|_| bad("is not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("is not http or https"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("carries userinfo"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(bad("has a path, query or fragment"));
    }
    Ok(url.origin().ascii_serialization())
}

fn header_map(pairs: &[(String, String)]) -> Result<HeaderMap, HostError> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| HostError::failed(format!("`{name}` is not a valid HTTP header name")))?;
        let v = HeaderValue::from_str(value).map_err(|_| {
            HostError::failed(format!(
                "the value of header `{name}` is not a valid header value"
            ))
        })?;
        map.insert(n, v);
    }
    Ok(map)
}

/// Resolves an action's `target` against a base URL as the default client
/// does, with the same refusals (no other origin is allowed here): the
/// URL a request would go to.
pub fn resolve_target(base: Option<&str>, target: &str) -> Result<String, HostError> {
    let base = base.map(parse_base).transpose()?;
    let scope = ApiScope {
        base_url: base.as_ref().map(Url::as_str),
        allowed_origins: &[],
    };
    resolve(base.as_ref(), scope, target).map(|(url, _)| String::from(url))
}

/// The URL of a target, and whether it is below the base URL (and so gets
/// the credentials); refused when it is neither that nor on an allowed
/// origin.
fn resolve(
    base: Option<&Url>,
    scope: ApiScope<'_>,
    target: &str,
) -> Result<(Url, bool), HostError> {
    let shown = redact::url(target);
    let refused = |why: String| HostError::failed(format!("refused to send the request: {why}"));
    scope.check(target).map_err(refused)?;
    if let Ok(url) = Url::parse(target) {
        // Absolute: `check` admitted it for an allowed origin; the parsed
        // URL must agree.
        let origin = url.origin().ascii_serialization();
        if url.username().is_empty()
            && url.password().is_none()
            && scope.allowed_origins.contains(&origin)
        {
            return Ok((url, false));
        }
        return Err(refused(format!(
            "the api `target` `{shown}` is not on an allowed origin"
        )));
    }
    let Some(base) = base else {
        return Err(HostError::failed(format!(
            "the api target `{shown}` is relative and the HTTP client has no base URL"
        )));
    };
    let url = base.join(target).map_err(|e| {
        HostError::failed(format!(
            "the api target `{shown}` does not resolve against {}: {e}",
            redact::url(base.as_str())
        ))
    })?;
    let dir = base
        .path()
        .rfind('/')
        .and_then(|i| base.path().get(..=i))
        .unwrap_or("/");
    let below = url.origin() == base.origin()
        && url.username() == base.username()
        && url.password() == base.password()
        && url.path().starts_with(dir);
    if !below {
        return Err(refused(format!(
            "the api `target` `{shown}` resolves to {}, which is not below the base URL",
            redact::url(url.as_str())
        )));
    }
    Ok((url, true))
}

/// `s` cut to [`MAX_ERROR_BODY_CHARS`] characters, with `…` when cut.
fn truncate(s: &str) -> String {
    match s.char_indices().nth(MAX_ERROR_BODY_CHARS) {
        Some((cut, _)) => format!("{}…", s.get(..cut).unwrap_or(s)),
        None => s.to_owned(),
    }
}

/// A duration as a person reads it: `3 s`, `1.5 s`, `500 ms`.
fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        format!("{d:?}")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else if ms > 1000 {
        format!("{} s", d.as_secs_f64())
    } else {
        format!("{ms} ms")
    }
}

/// A `reqwest` error and its causes, without the URL `reqwest` appends
/// (the caller shows its own, redacted), and with any URL inside redacted.
fn describe(e: &reqwest::Error) -> String {
    let mut message = e.to_string();
    if e.url().is_some()
        && let Some(i) = message.rfind(" for url (")
    {
        message.truncate(i);
    }
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    redact::text(&message).into_owned()
}

/// How reading a body ended.
enum Read {
    /// All of it (or, for an error body, all that is quoted).
    Done(Vec<u8>),
    /// More than the limit.
    TooLarge,
}

/// Reads the body up to `limit` bytes. Past it, a quote (`cut`) keeps
/// the first `limit` bytes and stops reading; otherwise the body is
/// [`Read::TooLarge`], found from its announced length or while it
/// streams, before more than `limit` bytes are held.
async fn read_body(
    response: &mut reqwest::Response,
    limit: usize,
    cut: bool,
) -> Result<Read, reqwest::Error> {
    let announced = response
        .content_length()
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    if !cut && announced.is_some_and(|n| n > limit) {
        return Ok(Read::TooLarge);
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit.saturating_sub(bytes.len());
        if chunk.len() > room {
            if !cut {
                return Ok(Read::TooLarge);
            }
            bytes.extend_from_slice(chunk.get(..room).unwrap_or_default());
            return Ok(Read::Done(bytes));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Read::Done(bytes))
}

impl HttpApiClient {
    /// The error for a failure after the request was sent.
    fn failure(&self, e: &reqwest::Error, reading: bool) -> String {
        match (e.is_timeout(), reading) {
            (true, false) => format!("no answer within {}", human(self.timeout)),
            (true, true) => format!(
                "no complete answer within {} (the response body was still arriving)",
                human(self.timeout)
            ),
            (false, false) => describe(e),
            (false, true) => format!("reading the response failed: {}", describe(e)),
        }
    }
}

#[async_trait::async_trait]
impl ApiClient for HttpApiClient {
    fn scope(&self) -> ApiScope<'_> {
        ApiScope {
            base_url: self.base.as_ref().map(Url::as_str),
            allowed_origins: &self.allowed_origins,
        }
    }

    async fn request(&self, request: ApiRequest) -> Result<Value, HostError> {
        let (url, below_base) = resolve(self.base.as_ref(), self.scope(), &request.target)?;
        let shown_url = redact::url(url.as_str()).into_owned();
        let method = Method::from_bytes(request.method.as_bytes()).map_err(|_| {
            HostError::failed(format!("`{}` is not an HTTP method", request.method))
        })?;
        let transport = |message: String| HostError::Transport {
            method: request.method.clone(),
            url: shown_url.clone(),
            message,
        };
        // Once a request that may change something is on its way, a
        // failure leaves its outcome unknown (`GET` and `HEAD` change
        // nothing, and a refused connection sent nothing).
        let changes = !matches!(method, Method::GET | Method::HEAD);
        let after_sending = |e: &reqwest::Error, reading: bool| {
            let message = self.failure(e, reading);
            if changes && !e.is_connect() && !e.is_builder() {
                HostError::Unanswered {
                    method: request.method.clone(),
                    url: shown_url.clone(),
                    message,
                }
            } else {
                transport(message)
            }
        };
        let mut headers = if below_base {
            self.headers.clone()
        } else {
            HeaderMap::new()
        };
        for (name, value) in header_map(&request.headers)? {
            if let Some(name) = name
                && (below_base || !CREDENTIAL_HEADERS.contains(&name.as_str()))
            {
                headers.insert(name, value);
            }
        }
        if let Some(key) = &request.idempotency_key {
            let value = HeaderValue::from_str(key).map_err(|_| {
                HostError::failed("the idempotency key is not a valid header value")
            })?;
            headers.insert(HeaderName::from_static("idempotency-key"), value);
        }
        headers
            .entry(header::ACCEPT)
            .or_insert(HeaderValue::from_static("application/json"));
        let mut builder = self
            .client
            .request(method, url)
            .timeout(self.timeout)
            .headers(headers);
        if let Some(body) = &request.body {
            builder = builder.json(body);
        }
        let mut response = builder.send().await.map_err(|e| after_sending(&e, false))?;
        let status = response.status();
        if status.is_redirection() {
            let to = response
                .headers()
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(|l| format!(" to `{}`", redact::url(l)))
                .unwrap_or_default();
            let why = if self.follow_redirects {
                "a redirect to another origin is never followed"
            } else {
                "the client follows no redirects (`follow_redirects` is off)"
            };
            return Err(HostError::Http {
                status: status.as_u16(),
                method: request.method.clone(),
                url: shown_url,
                body: format!(
                    "a redirect{to}, not followed: {why}; point the action's target at the \
                     final URL"
                ),
            });
        }
        if !status.is_success() {
            // Only as much as the error quotes; a read error or a timeout
            // just ends the quote.
            let bytes = match read_body(&mut response, MAX_ERROR_BODY_BYTES, true).await {
                Ok(Read::Done(bytes)) => bytes,
                Ok(Read::TooLarge) | Err(_) => Vec::new(),
            };
            return Err(HostError::Http {
                status: status.as_u16(),
                method: request.method.clone(),
                url: shown_url,
                body: truncate(&String::from_utf8_lossy(&bytes)),
            });
        }
        let bytes = match read_body(&mut response, self.max_response_bytes, false).await {
            Ok(Read::Done(bytes)) => bytes,
            Ok(Read::TooLarge) => {
                let message = format!(
                    "the response is more than {} bytes, the client's limit \
                     (`max_response_bytes`); nothing of it is returned",
                    self.max_response_bytes
                );
                // The server answered success: what it did is unknown only
                // in that its answer cannot be read.
                return Err(if changes {
                    HostError::Unanswered {
                        method: request.method.clone(),
                        url: shown_url,
                        message,
                    }
                } else {
                    transport(message)
                });
            }
            Err(e) => return Err(after_sending(&e, true)),
        };
        let text = String::from_utf8_lossy(&bytes);
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        Ok(serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.into_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_like_a_browser_below_the_base() {
        let base = Some("http://127.0.0.1:9/api/v1/");
        assert_eq!(
            resolve_target(base, "invoices/send").unwrap(),
            "http://127.0.0.1:9/api/v1/invoices/send"
        );
        assert_eq!(
            resolve_target(base, "/api/v1/hooks/x").unwrap(),
            "http://127.0.0.1:9/api/v1/hooks/x"
        );
        assert_eq!(
            resolve_target(Some("http://127.0.0.1:9"), "/hooks/x").unwrap(),
            "http://127.0.0.1:9/hooks/x"
        );
        for refused in [
            "/hooks/x",
            "https://other.example/x",
            "../x",
            "//other.example/x",
        ] {
            let err = resolve_target(base, refused).unwrap_err();
            assert!(err.to_string().contains("refused"), "{refused}: {err}");
        }
        assert!(resolve_target(None, "x").is_err());
        assert!(resolve_target(Some("not a url"), "x").is_err());
        assert!(resolve_target(Some("ftp://h/"), "x").is_err());
    }

    #[test]
    fn bad_headers_are_refused_up_front() {
        let err = HttpApiClient::new(HttpClientOptions {
            headers: vec![("bad header".into(), "v".into())],
            ..HttpClientOptions::default()
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("not a valid HTTP header name"),
            "{err}"
        );
    }

    #[test]
    fn allowed_origins_are_origins() {
        let origins = |o: &str| {
            HttpApiClient::new(HttpClientOptions {
                allowed_origins: vec![o.to_owned()],
                ..HttpClientOptions::default()
            })
            .map(|c| c.allowed_origins)
        };
        assert_eq!(
            origins("HTTPS://Hooks.Example.com:443/").unwrap(),
            ["https://hooks.example.com"]
        );
        assert_eq!(origins("http://h:8080").unwrap(), ["http://h:8080"]);
        for bad in [
            "https://h/path",
            "ftp://h",
            "https://u:TOPSECRET@h",
            "h",
            "https://h/?q",
        ] {
            let err = origins(bad).unwrap_err().to_string();
            assert!(err.contains("allowed origin"), "{bad}: {err}");
            assert!(!err.contains("TOPSECRET"), "{err}");
        }
    }

    #[test]
    fn durations_read_as_a_person_writes_them() {
        assert_eq!(human(Duration::from_secs(3)), "3 s");
        assert_eq!(human(Duration::from_millis(500)), "500 ms");
        assert_eq!(human(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human(Duration::from_micros(5)), "5µs");
    }

    #[test]
    fn error_bodies_are_cut_at_their_quoted_length() {
        let long = "é".repeat(MAX_ERROR_BODY_CHARS + 5);
        let cut = truncate(&long);
        assert_eq!(cut.chars().count(), MAX_ERROR_BODY_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(truncate("short"), "short");
    }
}
