//! The default [`ApiClient`]: JSON over HTTP with `reqwest` (feature `http`).
//!
//! Relative targets resolve against a base URL the way a browser resolves
//! them (`new URL(target, base)`): `/v1/x` replaces the base's path, `x`
//! replaces its last segment. Default headers go on every request, then
//! the request's own, then `Idempotency-Key` when executing an approved
//! action. A non-2xx status is an error carrying status and body; an empty
//! body is `null`; a body that is not JSON is returned as a string.
//!
//! `reqwest` runs on Tokio, so calls must happen inside a Tokio runtime.
//! TLS is whatever the `reqwest` in your build offers: this crate enables
//! none, so add `reqwest = { version = "0.12", features = ["rustls-tls"] }`
//! to the host's own dependencies to call `https://` APIs (Cargo unifies
//! the features), or pass a client you built with
//! [`HttpApiClient::with_client`].

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Url};
use serde_json::Value;

use super::host::{ApiClient, ApiRequest, HostError};

/// Longest response body quoted in an error, in characters.
const MAX_ERROR_BODY_CHARS: usize = 2000;

/// How the default client is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpClientOptions {
    /// What relative targets resolve against (`https://api.example.com/v1/`).
    pub base_url: Option<String>,
    /// Headers sent with every request (an API key, say).
    pub headers: Vec<(String, String)>,
    /// How long one request may take, connection to last byte (default 30 s).
    pub timeout: Duration,
}

impl Default for HttpClientOptions {
    fn default() -> Self {
        HttpClientOptions {
            base_url: None,
            headers: Vec::new(),
            timeout: Duration::from_secs(30),
        }
    }
}

/// The default HTTP API client.
#[derive(Debug, Clone)]
pub struct HttpApiClient {
    client: reqwest::Client,
    base: Option<Url>,
    headers: HeaderMap,
    timeout: Duration,
}

impl HttpApiClient {
    /// A client with its own connection pool.
    pub fn new(options: HttpClientOptions) -> Result<Self, HostError> {
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| HostError::failed(format!("cannot build the HTTP client: {e}")))?;
        Self::with_client(client, options)
    }

    /// A client over a `reqwest::Client` you configured (TLS, proxies).
    pub fn with_client(
        client: reqwest::Client,
        options: HttpClientOptions,
    ) -> Result<Self, HostError> {
        let base = match &options.base_url {
            Some(b) => Some(Url::parse(b).map_err(|e| {
                HostError::failed(format!("the API base URL `{b}` is not a URL: {e}"))
            })?),
            None => None,
        };
        let headers = header_map(&options.headers)?;
        Ok(HttpApiClient {
            client,
            base,
            headers,
            timeout: options.timeout,
        })
    }
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

/// Resolves an action's `target` against a base URL: an absolute URL is
/// kept, anything else is joined onto the base (browser rules).
pub fn resolve_target(base: Option<&str>, target: &str) -> Result<String, HostError> {
    let base =
        match base {
            Some(b) => Some(Url::parse(b).map_err(|e| {
                HostError::failed(format!("the API base URL `{b}` is not a URL: {e}"))
            })?),
            None => None,
        };
    resolve(base.as_ref(), target).map(String::from)
}

fn resolve(base: Option<&Url>, target: &str) -> Result<Url, HostError> {
    if let Ok(url) = Url::parse(target) {
        return Ok(url);
    }
    let Some(base) = base else {
        return Err(HostError::failed(format!(
            "the api target `{target}` is relative and the HTTP client has no base URL"
        )));
    };
    base.join(target).map_err(|e| {
        HostError::failed(format!(
            "the api target `{target}` does not resolve against {base}: {e}"
        ))
    })
}

fn truncate(s: &str) -> String {
    match s.char_indices().nth(MAX_ERROR_BODY_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_owned(),
    }
}

#[async_trait::async_trait]
impl ApiClient for HttpApiClient {
    async fn request(&self, request: ApiRequest) -> Result<Value, HostError> {
        let url = resolve(self.base.as_ref(), &request.target)?;
        let shown_url = url.to_string();
        let method = Method::from_bytes(request.method.as_bytes()).map_err(|_| {
            HostError::failed(format!("`{}` is not an HTTP method", request.method))
        })?;
        let transport = |message: String| HostError::Transport {
            method: request.method.clone(),
            url: shown_url.clone(),
            message,
        };
        let mut headers = self.headers.clone();
        for (name, value) in header_map(&request.headers)? {
            if let Some(name) = name {
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
            .entry(reqwest::header::ACCEPT)
            .or_insert(HeaderValue::from_static("application/json"));
        let mut builder = self
            .client
            .request(method, url)
            .timeout(self.timeout)
            .headers(headers);
        if let Some(body) = &request.body {
            builder = builder.json(body);
        }
        let response = builder.send().await.map_err(|e| {
            if e.is_timeout() {
                transport(format!("no answer within {:?}", self.timeout))
            } else {
                transport(e.to_string())
            }
        })?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| transport(format!("reading the response failed: {e}")))?;
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            return Err(HostError::Http {
                status: status.as_u16(),
                method: request.method.clone(),
                url: shown_url,
                body: truncate(&text),
            });
        }
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
    fn targets_resolve_like_a_browser() {
        let base = Some("http://127.0.0.1:9/api/v1/");
        assert_eq!(
            resolve_target(base, "invoices/send").unwrap(),
            "http://127.0.0.1:9/api/v1/invoices/send"
        );
        assert_eq!(
            resolve_target(base, "/hooks/x").unwrap(),
            "http://127.0.0.1:9/hooks/x"
        );
        assert_eq!(
            resolve_target(base, "https://other.example/x").unwrap(),
            "https://other.example/x"
        );
        assert!(resolve_target(None, "/x").is_err());
        assert!(resolve_target(Some("not a url"), "/x").is_err());
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
}
