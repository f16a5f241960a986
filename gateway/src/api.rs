//! `api` actions: the bridge's HTTP client against `--api-base-url`, under
//! its origin rules, with the caller's key added only where the key
//! belongs.
//!
//! The key is an ObjectStack credential. It is sent to `--api-base-url`
//! only when that URL is on the same origin (scheme, host and port) as
//! `--server`, typically an `api` action that targets the server's own REST
//! routes. Any other base URL is a third party, and gets no key. Below the
//! base URL the bridge's client keeps the header; it drops it on a target
//! that leaves, as it drops its own credentials.

use std::sync::Arc;

use objectstack_bridge::materialise::ApiScope;
use objectstack_bridge::runtime::{ApiClient, ApiRequest, HostError};
use serde_json::Value;

use crate::backend::current_key;

/// An [`ApiClient`] that forwards the caller's key when its base URL is
/// the ObjectStack server's origin.
pub(crate) struct KeyedApiClient {
    inner: Arc<dyn ApiClient>,
    forward_key: bool,
}

impl KeyedApiClient {
    /// Wraps `inner`, whose base URL is `base`; the key is forwarded when
    /// `base` and `server` share an origin.
    pub(crate) fn new(inner: Arc<dyn ApiClient>, base: &str, server: Option<&str>) -> Self {
        let forward_key = server.is_some_and(|server| same_origin(base, server));
        KeyedApiClient { inner, forward_key }
    }
}

fn same_origin(a: &str, b: &str) -> bool {
    match (reqwest::Url::parse(a), reqwest::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

#[async_trait::async_trait]
impl ApiClient for KeyedApiClient {
    async fn request(&self, mut request: ApiRequest) -> Result<Value, HostError> {
        if self.forward_key
            && let Some(key) = current_key()
        {
            request
                .headers
                .retain(|(name, _)| !name.eq_ignore_ascii_case("authorization"));
            request
                .headers
                .push(("Authorization".to_owned(), key.bearer()));
        }
        self.inner.request(request).await
    }

    fn scope(&self) -> ApiScope<'_> {
        self.inner.scope()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert!(same_origin(
            "http://127.0.0.1:3417/api/v1/",
            "http://127.0.0.1:3417"
        ));
        assert!(!same_origin(
            "http://127.0.0.1:3418/",
            "http://127.0.0.1:3417"
        ));
        assert!(!same_origin(
            "https://127.0.0.1:3417/",
            "http://127.0.0.1:3417"
        ));
        assert!(!same_origin(
            "https://hooks.example.com/",
            "https://example.com"
        ));
        assert!(!same_origin("not a url", "http://127.0.0.1:3417"));
    }
}
