//! Inbox sessions: a random id in an HttpOnly, SameSite=Strict cookie, and
//! in this process's memory only the approver's key, the session's CSRF
//! token and a one-shot message. Nothing of a session is written anywhere:
//! a restart signs everyone out.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::identity::ApiKey;

/// The cookie's name.
pub(crate) const COOKIE: &str = "osg_inbox";

/// A signed-in session ends after this long without a request.
const IDLE: Duration = Duration::from_secs(30 * 60);
/// And after this long in any case.
const ABSOLUTE: Duration = Duration::from_secs(12 * 3600);
/// Sessions kept at most; the oldest idle ones go first.
const MAX_SESSIONS: usize = 10_000;

/// One browser's session.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// The token every form of this session carries.
    pub(crate) csrf: String,
    /// The approver's key, once signed in.
    pub(crate) key: Option<ApiKey>,
    /// A message for the next page: (is it an error, text).
    pub(crate) flash: Option<(bool, String)>,
    created: Instant,
    seen: Instant,
}

impl Session {
    fn fresh(key: Option<ApiKey>) -> Result<Session, getrandom::Error> {
        let now = Instant::now();
        Ok(Session {
            csrf: token()?,
            key,
            flash: None,
            created: now,
            seen: now,
        })
    }

    fn live(&self, now: Instant) -> bool {
        now.duration_since(self.seen) < IDLE && now.duration_since(self.created) < ABSOLUTE
    }
}

/// Every live session, by id.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // Every change is one map operation: a panic elsewhere cannot have
        // left a session half-written.
        self.map
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The live session with this id (touching it), or `None`.
    pub(crate) fn get(&self, id: &str) -> Option<Session> {
        let now = Instant::now();
        let mut map = self.lock();
        match map.get_mut(id) {
            Some(s) if s.live(now) => {
                s.seen = now;
                Some(s.clone())
            }
            Some(_) => {
                map.remove(id);
                None
            }
            None => None,
        }
    }

    /// A new session (signed in when `key` is given); its id.
    pub(crate) fn create(
        &self,
        key: Option<ApiKey>,
    ) -> Result<(String, Session), getrandom::Error> {
        let id = token()?;
        let session = Session::fresh(key)?;
        let now = Instant::now();
        let mut map = self.lock();
        if map.len() >= MAX_SESSIONS {
            map.retain(|_, s| s.live(now));
            if map.len() >= MAX_SESSIONS
                && let Some(oldest) = map
                    .iter()
                    .min_by_key(|(_, s)| s.seen)
                    .map(|(id, _)| id.clone())
            {
                map.remove(&oldest);
            }
        }
        map.insert(id.clone(), session.clone());
        Ok((id, session))
    }

    /// Ends a session.
    pub(crate) fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    /// Sets the message the session's next page shows.
    pub(crate) fn flash(&self, id: &str, error: bool, text: String) {
        if let Some(s) = self.lock().get_mut(id) {
            s.flash = Some((error, text));
        }
    }

    /// Takes the message (it shows once).
    pub(crate) fn take_flash(&self, id: &str) -> Option<(bool, String)> {
        self.lock().get_mut(id).and_then(|s| s.flash.take())
    }
}

/// 32 random bytes from the operating system, as hex.
fn token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether two tokens are equal, in time that does not depend on where
/// they differ.
pub(crate) fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The session id from a `Cookie` header.
pub(crate) fn from_cookie(header: &str) -> Option<&str> {
    header.split(';').find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        (name == COOKIE && !value.is_empty()).then_some(value)
    })
}

/// The `Set-Cookie` value for a session id (`None`: clear it). `Secure`
/// when the inbox is reached over TLS.
pub(crate) fn set_cookie(id: Option<&str>, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    match id {
        Some(id) => format!("{COOKIE}={id}; Path=/approvals/ui; HttpOnly; SameSite=Strict{secure}"),
        None => {
            format!("{COOKIE}=; Path=/approvals/ui; HttpOnly; SameSite=Strict; Max-Age=0{secure}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_compared_whole() {
        let (a, b) = (token().unwrap_or_default(), token().unwrap_or_default());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(same_token(&a, &a.clone()));
        assert!(!same_token(&a, &b));
        assert!(!same_token(&a, a.get(..63).unwrap_or("")));
        assert!(!same_token("", "x"));
    }

    #[test]
    fn cookies_are_http_only_strict_and_secure_behind_tls() {
        assert_eq!(
            set_cookie(Some("abc"), false),
            "osg_inbox=abc; Path=/approvals/ui; HttpOnly; SameSite=Strict"
        );
        assert!(set_cookie(Some("abc"), true).ends_with("; Secure"));
        assert!(set_cookie(None, false).contains("Max-Age=0"));
        assert_eq!(from_cookie("a=1; osg_inbox=xyz; b=2"), Some("xyz"));
        assert_eq!(from_cookie("osg_inbox="), None);
        assert_eq!(from_cookie("other=1"), None);
    }

    #[test]
    fn a_session_holds_its_key_in_memory_and_ends() {
        let sessions = Sessions::default();
        let key = ApiKey::new("osk_secret");
        let (id, s) = sessions
            .create(key.clone())
            .unwrap_or_else(|_| unreachable!());
        assert_eq!(s.key, key);
        assert!(sessions.get(&id).is_some());
        sessions.flash(&id, true, "x".into());
        assert_eq!(sessions.take_flash(&id), Some((true, "x".into())));
        assert_eq!(sessions.take_flash(&id), None);
        sessions.remove(&id);
        assert!(sessions.get(&id).is_none());
        // The session's Debug shows no key.
        assert!(!format!("{s:?}").contains("secret"));
    }
}
