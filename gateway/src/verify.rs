//! Whether the ObjectStack server accepts a caller's key, asked before the
//! gateway answers anything from its own state (tool lists, the approval
//! queue).
//!
//! A bearer header proves nothing by itself: the gateway lists tools and
//! queued actions without calling the server, so without a check any
//! string after `Bearer` would read the queue. The check is a read the
//! server authorises like any other:
//! `GET {server}/api/v1/data/{object}?limit=0`. Its answer decides:
//!
//! | server | verdict |
//! | --- | --- |
//! | 2xx, or 404 (the key passed authentication; the object is unknown) | accepted |
//! | 401 | the key is not valid ([`Refusal::Unauthenticated`]) |
//! | 403 | the key may not read that object ([`Refusal::Forbidden`]) |
//! | anything else, or no answer | not known ([`Refusal::Unavailable`]) |
//!
//! Verdicts are cached in memory by the key's full SHA-256 (never the key)
//! and the object: an acceptance for a minute, a refusal for a few seconds
//! (so a key granted access a moment ago works soon), an unknown verdict
//! not at all. Without `--server`, or with no object to read, nothing can
//! be asked and every bearer is taken at its word; the gateway README says
//! so.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::ObjectStackBackend;
use crate::identity::ApiKey;

/// How long an accepted key is trusted without asking again.
const ACCEPTED_FOR: Duration = Duration::from_secs(60);
/// How long a refusal is remembered.
const REFUSED_FOR: Duration = Duration::from_secs(5);
/// The most verdicts kept; the cache is emptied when it is full, so a
/// stream of made-up keys costs memory only up to this bound.
const MAX_ENTRIES: usize = 10_000;

/// Why the server did not accept a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The server does not know the key (its 401).
    Unauthenticated(String),
    /// The key may not read the object (its 403).
    Forbidden(String),
    /// The server could not say (unreachable, slow, or an unexpected
    /// status).
    Unavailable(String),
}

impl Refusal {
    /// The HTTP status the gateway answers with.
    pub(crate) fn status(&self) -> u16 {
        match self {
            Refusal::Unauthenticated(_) => 401,
            Refusal::Forbidden(_) => 403,
            Refusal::Unavailable(_) => 502,
        }
    }

    /// The error code of the gateway's JSON error.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Refusal::Unauthenticated(_) => "UNAUTHENTICATED",
            Refusal::Forbidden(_) => "PERMISSION_DENIED",
            Refusal::Unavailable(_) => "SERVER_UNAVAILABLE",
        }
    }

    /// What the caller reads.
    pub(crate) fn message(&self) -> &str {
        match self {
            Refusal::Unauthenticated(m) | Refusal::Forbidden(m) | Refusal::Unavailable(m) => m,
        }
    }
}

type Verdict = Result<(), Refusal>;

/// A cache entry's key: the API key's SHA-256 and the object asked about.
type Asked = ([u8; 32], Box<str>);

/// Asks the server about keys, and remembers its answers for a while.
pub(crate) struct KeyCheck {
    backend: Option<Arc<ObjectStackBackend>>,
    cache: Mutex<HashMap<Asked, (Verdict, Instant)>>,
}

impl KeyCheck {
    /// Checks against `backend`; `None` accepts every key.
    pub(crate) fn new(backend: Option<Arc<ObjectStackBackend>>) -> Self {
        KeyCheck {
            backend,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Whether checks are made at all.
    pub(crate) fn enabled(&self) -> bool {
        self.backend.is_some()
    }

    /// Whether the server lets `key` read `object` (`None`: nothing to ask
    /// about, accepted).
    pub(crate) async fn check(&self, key: &ApiKey, object: Option<&str>) -> Verdict {
        let (Some(backend), Some(object)) = (&self.backend, object) else {
            return Ok(());
        };
        let entry = (key.digest(), Box::<str>::from(object));
        if let Some(verdict) = self.cached(&entry) {
            return verdict;
        }
        let verdict = match backend.probe(key, object).await {
            Ok(status) => judge(status, object),
            Err(e) => Err(Refusal::Unavailable(format!(
                "the ObjectStack server could not verify the key: {e}"
            ))),
        };
        let lifetime = match &verdict {
            Ok(()) => Some(ACCEPTED_FOR),
            Err(Refusal::Unauthenticated(_) | Refusal::Forbidden(_)) => Some(REFUSED_FOR),
            Err(Refusal::Unavailable(_)) => None,
        };
        if let Some(lifetime) = lifetime
            && let Ok(mut cache) = self.cache.lock()
        {
            if cache.len() >= MAX_ENTRIES {
                cache.clear();
            }
            cache.insert(entry, (verdict.clone(), Instant::now() + lifetime));
        }
        verdict
    }

    fn cached(&self, entry: &Asked) -> Option<Verdict> {
        let cache = self.cache.lock().ok()?;
        let (verdict, until) = cache.get(entry)?;
        (Instant::now() < *until).then(|| verdict.clone())
    }
}

/// The verdict a probe's status gives.
fn judge(status: u16, object: &str) -> Verdict {
    match status {
        200..=299 | 404 => Ok(()),
        401 => Err(Refusal::Unauthenticated(
            "the ObjectStack server does not accept this API key; send a valid key as \
             `Authorization: Bearer osk_…`"
                .to_owned(),
        )),
        403 => Err(Refusal::Forbidden(format!(
            "the ObjectStack server does not let this key read `{object}`"
        ))),
        other => Err(Refusal::Unavailable(format!(
            "the ObjectStack server answered HTTP {other} when asked to verify the key"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_verdicts() {
        assert_eq!(judge(200, "task"), Ok(()));
        assert_eq!(judge(404, "task"), Ok(()));
        assert_eq!(judge(401, "task").map_err(|r| r.status()), Err(401));
        assert_eq!(judge(403, "task").map_err(|r| r.status()), Err(403));
        assert_eq!(judge(500, "task").map_err(|r| r.status()), Err(502));
        assert_eq!(
            judge(302, "task").map_err(|r| r.code()),
            Err("SERVER_UNAVAILABLE")
        );
    }

    #[tokio::test]
    async fn without_a_server_every_key_is_accepted() {
        let check = KeyCheck::new(None);
        let key = ApiKey::new("osk_anything").unwrap_or_else(|| unreachable!());
        assert!(!check.enabled());
        assert_eq!(check.check(&key, Some("task")).await, Ok(()));
    }

    #[tokio::test]
    async fn an_unreachable_server_is_unavailable_and_not_cached() {
        // A port nothing listens on: bind one, then drop it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(9);
        let backend =
            ObjectStackBackend::new(&format!("http://127.0.0.1:{port}"), Duration::from_secs(2))
                .unwrap_or_else(|e| panic!("{e}"));
        let check = KeyCheck::new(Some(Arc::new(backend)));
        let key = ApiKey::new("osk_k").unwrap_or_else(|| unreachable!());
        let verdict = check.check(&key, Some("task")).await;
        assert_eq!(verdict.map_err(|r| r.status()), Err(502));
        assert!(check.cache.lock().map(|c| c.is_empty()).unwrap_or(false));
    }
}
