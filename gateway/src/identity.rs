//! Who a call comes from: the caller's ObjectStack API key, kept out of
//! every log, error, audit line and stored row, and the short fingerprint
//! that stands for it there.

use std::fmt;
use std::sync::Arc;

use sha2::{Digest, Sha256};

/// An ObjectStack API key (`osk_…`), as the caller presented it.
///
/// Its `Debug` shows only the fingerprint; the key itself leaves this type
/// only as the `Authorization` header of a backend call.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(Arc<str>);

impl ApiKey {
    /// Wraps a key; `None` when it is empty or only whitespace.
    pub fn new(key: &str) -> Option<Self> {
        let key = key.trim();
        (!key.is_empty()).then(|| ApiKey(Arc::from(key)))
    }

    /// The key from an `Authorization: Bearer <key>` header value; `None`
    /// when the value is not of that form or the key is empty.
    pub fn from_bearer(header: &str) -> Option<Self> {
        let (scheme, key) = header.trim().split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        ApiKey::new(key)
    }

    /// The first 12 hex digits of the key's SHA-256: enough to tell keys
    /// apart in an audit trail, too little to recover or guess the key.
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.0.as_bytes());
        let mut out = String::with_capacity(12);
        for byte in digest.iter().take(6) {
            out.push_str(&format!("{byte:02x}"));
        }
        out
    }

    /// The key's whole SHA-256: what the gateway remembers a key by (a
    /// verdict's cache, a session's owner), never the key itself.
    pub(crate) fn digest(&self) -> [u8; 32] {
        Sha256::digest(self.0.as_bytes()).into()
    }

    /// The header value a backend call carries.
    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({})", self.fingerprint())
    }
}

/// The transport a call arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Standard input and output.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// The gateway's own executor, running approvals recorded elsewhere
    /// under `OBJECTSTACK_EXECUTOR_KEY`.
    Executor,
}

impl Transport {
    /// `stdio`, `http` or `executor`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Executor => "executor",
        }
    }
}

/// One caller: the key its calls run under, and where they come from.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The key forwarded on every backend call; `None` sends no
    /// `Authorization` (the server then refuses what needs one).
    pub key: Option<ApiKey>,
    /// The transport.
    pub transport: Transport,
    /// The MCP session, when the transport has one.
    pub session: Option<String>,
}

impl Caller {
    /// The key's fingerprint, or `anonymous`.
    pub fn fingerprint(&self) -> String {
        self.key
            .as_ref()
            .map_or_else(|| "anonymous".to_owned(), ApiKey::fingerprint)
    }

    /// The actor id calls and proposals are recorded under: `osk:<fingerprint>`.
    /// The server knows the real user from the key; the gateway records only
    /// the fingerprint, so the queue never holds a key.
    pub fn actor_id(&self) -> String {
        format!("osk:{}", self.fingerprint())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let key = ApiKey::new("osk_secret_value").unwrap_or_else(|| unreachable!());
        let shown = format!("{key:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert_eq!(shown, format!("ApiKey({})", key.fingerprint()));
        assert_eq!(key.fingerprint().len(), 12);
    }

    #[test]
    fn bearer_header_is_parsed_strictly() {
        assert_eq!(ApiKey::from_bearer("Bearer osk_a"), ApiKey::new("osk_a"));
        assert_eq!(ApiKey::from_bearer("bearer  osk_a "), ApiKey::new("osk_a"));
        assert_eq!(ApiKey::from_bearer("Basic osk_a"), None);
        assert_eq!(ApiKey::from_bearer("Bearer "), None);
        assert_eq!(ApiKey::from_bearer("osk_a"), None);
    }
}
