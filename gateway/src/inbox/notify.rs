//! `--notify-url`: a JSON POST when an action is queued, decided, run,
//! failed or in doubt. The body has a Slack-compatible `text` (a Slack or
//! Mattermost incoming webhook shows it as is) and structured fields for
//! anything else, with a link to the inbox.
//!
//! The queue tells the [`Notifier`] about each change it commits; the
//! notifier only puts the message on a bounded channel, so a slow or dead
//! receiver never blocks a decision, and the pending action is stored
//! before anyone is told about it. One task delivers the messages in
//! order, retrying each with exponential backoff; a message that still
//! fails is logged and dropped (the action waits in the inbox regardless).
//! Messages carry no arguments, results or keys: only what is needed to
//! decide to open the inbox.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use objectstack_bridge::approval::{PendingAction, QueueObserver, State, format_timestamp};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// Messages waiting for delivery at most; past that new ones are dropped
/// (and logged).
const BACKLOG: usize = 1024;

/// Where and how notifications are delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    /// The receiver (a Slack-compatible incoming webhook, or anything that
    /// takes JSON).
    pub url: String,
    /// Tries per message (at least 1).
    pub attempts: u32,
    /// The wait before the first retry; doubled for each next one, up to
    /// a minute.
    pub backoff: Duration,
    /// The timeout of one delivery.
    pub timeout: Duration,
}

impl NotifyConfig {
    /// Delivery to `url`: 6 tries, 1 s first backoff (1, 2, 4, 8, 16 s),
    /// 10 s timeout.
    pub fn new(url: impl Into<String>) -> Self {
        NotifyConfig {
            url: url.into(),
            attempts: 6,
            backoff: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
        }
    }
}

/// The queue's observer that turns changes into notifications.
pub(crate) struct Notifier {
    tx: mpsc::Sender<Value>,
    rx: Mutex<Option<mpsc::Receiver<Value>>>,
    config: NotifyConfig,
    /// The inbox's address, once known (`http://host:port/approvals/ui`).
    base: Arc<OnceLock<String>>,
    ttl: Option<Duration>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("url", &objectstack_bridge::redact::url(&self.config.url))
            .finish_non_exhaustive()
    }
}

impl Notifier {
    pub(crate) fn new(
        config: NotifyConfig,
        base: Arc<OnceLock<String>>,
        ttl: Option<Duration>,
    ) -> Self {
        let (tx, rx) = mpsc::channel(BACKLOG);
        Notifier {
            tx,
            rx: Mutex::new(Some(rx)),
            config,
            base,
            ttl,
        }
    }

    /// Starts the delivery task (once; later calls do nothing). Needs a
    /// Tokio runtime.
    pub(crate) fn start(&self) {
        let rx = match self.rx.lock() {
            Ok(mut rx) => rx.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        let Some(rx) = rx else { return };
        let client = reqwest::Client::builder()
            .timeout(self.config.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build();
        match client {
            Ok(client) => {
                tokio::spawn(deliver(client, self.config.clone(), rx));
            }
            Err(e) => tracing::error!("notifications are off: the HTTP client failed: {e}"),
        }
    }
}

impl QueueObserver for Notifier {
    fn changed(&self, previous: Option<State>, row: &PendingAction) {
        // A late outcome recorded on an in-doubt action is evidence, not news.
        if previous == Some(row.state) {
            return;
        }
        // Claims are bookkeeping; their outcome is what people need.
        if row.state == State::Executing {
            return;
        }
        let link = self.base.get().map(|base| format!("{base}/{}", row.id));
        let message = message(row, link.as_deref(), self.ttl);
        match self.tx.try_send(message) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => tracing::warn!(
                pending = %row.id,
                "notification dropped: {BACKLOG} are waiting for the receiver already"
            ),
            Err(mpsc::error::TrySendError::Closed(_)) => {
                tracing::warn!(pending = %row.id, "notification dropped: delivery stopped");
            }
        }
    }
}

/// What a change is called in a notification.
fn event(state: State) -> &'static str {
    match state {
        State::Pending => "queued",
        other => other.as_str(),
    }
}

/// The notification of `row`'s current state.
pub(crate) fn message(row: &PendingAction, link: Option<&str>, ttl: Option<Duration>) -> Value {
    let record = row.input.get("recordId").and_then(Value::as_str);
    let on = match (&row.object_name, record) {
        (Some(o), Some(r)) => format!(" on {o} {r}"),
        (Some(o), None) => format!(" on {o}"),
        _ => String::new(),
    };
    let by = row.decided_by.as_deref().or(row.state_by.as_deref());
    let deadline = row.deadline(ttl);
    let headline = match row.state {
        State::Pending => format!(
            "Approval needed: {}{on}, proposed by {}{}",
            row.action_name,
            row.proposer.id,
            deadline
                .map(|d| format!(" (expires {})", format_timestamp(d)))
                .unwrap_or_default()
        ),
        State::Approved => format!("Approved: {}{on} by {}", row.action_name, by.unwrap_or("?")),
        State::Rejected => format!(
            "Rejected: {}{on} by {}{}",
            row.action_name,
            by.unwrap_or("?"),
            row.reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ),
        State::Expired => format!("Expired without a decision: {}{on}", row.action_name),
        State::Cancelled => format!("Cancelled: {}{on}", row.action_name),
        State::Executed => format!("Done: {}{on} ran", row.action_name),
        State::Failed => format!(
            "Failed: {}{on}: {}",
            row.action_name,
            row.error.as_deref().unwrap_or("no error recorded")
        ),
        State::InDoubt => format!(
            "In doubt: {}{on} may or may not have run; check the target system and resolve it",
            row.action_name
        ),
        State::Executing => format!("Running: {}{on}", row.action_name),
    };
    let text = match link {
        Some(link) => format!("{} <{link}|Open in the inbox>", slack_escape(&headline)),
        None => slack_escape(&headline),
    };
    let mut out = Map::new();
    out.insert("text".into(), json!(text));
    out.insert("event".into(), json!(event(row.state)));
    out.insert("pendingActionId".into(), json!(row.id));
    out.insert("state".into(), json!(row.state.as_str()));
    out.insert("tool".into(), json!(row.tool_name));
    out.insert("action".into(), json!(row.action_name));
    out.insert("objectName".into(), json!(row.object_name));
    out.insert("recordId".into(), json!(record));
    out.insert("proposer".into(), json!(row.proposer.id));
    out.insert("proposedAt".into(), json!(format_timestamp(row.created_at)));
    out.insert("deadline".into(), json!(deadline.map(format_timestamp)));
    out.insert("by".into(), json!(by));
    out.insert("reason".into(), json!(row.reason));
    out.insert("error".into(), json!(row.error));
    out.insert("edited".into(), json!(row.approved_input.is_some()));
    out.insert("url".into(), json!(link));
    out.insert("time".into(), json!(format_timestamp(row.state_at)));
    Value::Object(out)
}

/// Slack's three control characters in message text.
fn slack_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Delivers every message in order; each is tried `attempts` times.
async fn deliver(client: reqwest::Client, config: NotifyConfig, mut rx: mpsc::Receiver<Value>) {
    let shown = objectstack_bridge::redact::url(&config.url);
    while let Some(message) = rx.recv().await {
        let mut wait = config.backoff;
        let attempts = config.attempts.max(1);
        for attempt in 1..=attempts {
            let sent = client.post(&config.url).json(&message).send().await;
            let why = match sent {
                Ok(response) if response.status().is_success() => break,
                Ok(response) => format!("the receiver answered {}", response.status()),
                Err(e) => objectstack_bridge::redact::text(&e.to_string()).into_owned(),
            };
            if attempt == attempts {
                let pending = message
                    .get("pendingActionId")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                tracing::warn!(
                    url = %shown,
                    pending,
                    "notification not delivered after {attempts} tries: {why}"
                );
                break;
            }
            tracing::debug!(url = %shown, "notification try {attempt} failed, retrying in {wait:?}: {why}");
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(60));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use objectstack_bridge::runtime::Actor;

    fn row(state: State) -> PendingAction {
        let input = match json!({"recordId": "t<1>", "secret": "do not send"}) {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        PendingAction {
            id: "pa_1".into(),
            tool_name: "action_purge".into(),
            action_name: "purge".into(),
            object_name: Some("ticket".into()),
            input,
            input_sha256: "0".repeat(64),
            executable_sha256: None,
            conversation_id: None,
            message_id: None,
            tool_call_id: None,
            trace_id: None,
            proposer: Actor::new("osk:abc"),
            created_at: 0,
            state,
            version: 1,
            state_by: Some("osk:def".into()),
            state_at: 1000,
            decided_by: None,
            decided_at: None,
            reason: Some("not <now>".into()),
            approved_sha256: None,
            approved_input: None,
            expires_at: Some(86_400_000),
            claimed_by: None,
            claimed_at: None,
            lease_until: None,
            result: None,
            error: None,
            finished_at: None,
        }
    }

    #[test]
    fn a_message_has_slack_text_structured_fields_and_a_link_and_no_arguments() {
        let m = message(
            &row(State::Pending),
            Some("http://127.0.0.1:1/approvals/ui/pa_1"),
            None,
        );
        assert_eq!(
            m["text"],
            "Approval needed: purge on ticket t&lt;1&gt;, proposed by osk:abc (expires \
             1970-01-02T00:00:00.000Z) <http://127.0.0.1:1/approvals/ui/pa_1|Open in the inbox>"
        );
        assert_eq!(m["event"], "queued");
        assert_eq!(m["recordId"], "t<1>");
        assert_eq!(m["deadline"], "1970-01-02T00:00:00.000Z");
        assert_eq!(m["url"], "http://127.0.0.1:1/approvals/ui/pa_1");
        assert!(!m.to_string().contains("do not send"), "{m}");
        let rejected = message(&row(State::Rejected), None, None);
        assert_eq!(rejected["event"], "rejected");
        assert_eq!(
            rejected["text"],
            "Rejected: purge on ticket t&lt;1&gt; by osk:def: not &lt;now&gt;"
        );
        assert_eq!(
            message(&row(State::InDoubt), None, None)["event"],
            "in_doubt"
        );
    }
}
