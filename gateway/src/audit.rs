//! The audit trail: one JSON line per tool call or approval decision.
//!
//! `{"time", "transport", "session", "key", "tool", "inputSha256",
//! "outcome", "pendingId", "durationMs"}`; `key` is the caller's key
//! fingerprint (never the key). The lines go to a file (appended) or to
//! stderr (stdout is the protocol in stdio mode).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::identity::Caller;

/// Where audit lines go.
pub struct Audit {
    sink: Mutex<Box<dyn Write + Send>>,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Audit")
    }
}

/// One audit line.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry<'a> {
    /// RFC 3339, UTC.
    pub time: String,
    /// `stdio` or `http`.
    pub transport: &'a str,
    /// The MCP session, when there is one.
    pub session: Option<&'a str>,
    /// The caller's key fingerprint (`anonymous` without a key).
    pub key: String,
    /// The tool called (or `approve` / `reject` for decisions).
    pub tool: &'a str,
    /// The SHA-256 of the canonical input.
    pub input_sha256: Option<String>,
    /// `ok`, `error`, `refused`, `pending`, `executed`, `failed`, `rejected`, `declined`,
    /// or `abandoned` (the process ended while the call ran: it may have
    /// run on the server).
    pub outcome: &'a str,
    /// The pending action, when the call proposed or decided one.
    pub pending_id: Option<&'a str>,
    /// How long it took, in milliseconds.
    pub duration_ms: u128,
}

impl Audit {
    /// Audit lines appended to `path` (created if missing).
    pub fn to_file(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Audit {
            sink: Mutex::new(Box::new(file)),
        })
    }

    /// Audit lines on stderr.
    pub fn to_stderr() -> Self {
        Audit {
            sink: Mutex::new(Box::new(std::io::stderr())),
        }
    }

    /// Audit lines written to any writer (tests, embedding hosts).
    pub fn to_writer(writer: Box<dyn Write + Send>) -> Self {
        Audit {
            sink: Mutex::new(writer),
        }
    }

    /// Writes one line; a failing sink is logged, never fatal.
    pub(crate) fn record(
        &self,
        caller: &Caller,
        tool: &str,
        input_sha256: Option<String>,
        outcome: &str,
        pending_id: Option<&str>,
        duration: Duration,
    ) {
        let entry = Entry {
            time: now_rfc3339(),
            transport: caller.transport.as_str(),
            session: caller.session.as_deref(),
            key: caller.fingerprint(),
            tool,
            input_sha256,
            outcome,
            pending_id,
            duration_ms: duration.as_millis(),
        };
        let Ok(mut line) = serde_json::to_vec(&entry) else {
            return;
        };
        line.push(b'\n');
        let mut sink = match self.sink.lock() {
            Ok(sink) => sink,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Err(e) = sink.write_all(&line).and_then(|()| sink.flush()) {
            tracing::warn!(error = %e, "could not write the audit line");
        }
    }
}

fn now_rfc3339() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    objectstack_bridge::approval::format_timestamp(ms)
}
