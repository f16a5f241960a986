//! The services a host implements for the runtime to dispatch to.
//!
//! Every request carries the [`Actor`] the call runs for and the caller's
//! [`CallContext`], so permission checks, row-level security and audit
//! attribution stay the host's own; and an idempotency key (the pending
//! action's id) when the call executes an approved action.

use serde_json::{Map, Value};

use super::{Actor, CallContext};
use crate::materialise::ApiScope;

/// Why a host service failed. The message is what the model sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// The service refused or failed; the message says why.
    #[error("{0}")]
    Failed(String),
    /// An HTTP API answered with a non-2xx status.
    #[error("HTTP {status} from {method} {url}: {body}")]
    Http {
        /// The status code.
        status: u16,
        /// The request method.
        method: String,
        /// The URL requested, its userinfo redacted.
        url: String,
        /// The response body (truncated).
        body: String,
    },
    /// The request never got an answer (connection, timeout, bad URL).
    #[error("{method} {url} failed: {message}")]
    Transport {
        /// The request method.
        method: String,
        /// The URL requested, its userinfo redacted.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The service does not offer this operation.
    #[error("{0}")]
    Unsupported(String),
    /// A request that may change something was sent, and no (usable) answer
    /// came back: a timeout after sending, a dropped connection. Whether it
    /// ran is unknown, so it must not be reported as failed (and retried):
    /// an approved action that ends this way becomes `in_doubt`.
    #[error(
        "{method} {url} was sent but got no answer ({message}): the action may have run, so \
         check the target system before running it again"
    )]
    Unanswered {
        /// The request method.
        method: String,
        /// The URL requested, its userinfo redacted.
        url: String,
        /// What went wrong.
        message: String,
    },
}

impl HostError {
    /// A failure with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        HostError::Failed(message.into())
    }

    /// Whether the request may have run although it failed
    /// ([`HostError::Unanswered`]).
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, HostError::Unanswered { .. })
    }
}

/// A script action to run: the data engine's action executor with
/// `(object, target, {record, user, params})`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptRequest {
    /// The action's name.
    pub action: String,
    /// The action's object, when it has one.
    pub object: Option<String>,
    /// The script target, when the action names one.
    pub target: Option<String>,
    /// The inline script body, when the action carries one.
    pub body: Option<Value>,
    /// The record the action runs on (row-context actions), as loaded.
    pub record: Option<Value>,
    /// The params from the model, `recordId` removed.
    pub params: Map<String, Value>,
    /// Who the call runs for (upstream's `user`).
    pub actor: Actor,
    /// The caller's context.
    pub context: CallContext,
    /// The pending action's id when executing an approved action.
    pub idempotency_key: Option<String>,
}

/// A declarative field write (`operation: "update"`): write `patch` on the
/// record.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldWriteRequest {
    /// The action's name.
    pub action: String,
    /// The record's object.
    pub object: String,
    /// The record's id.
    pub record_id: String,
    /// The fields to write, as the action declares them.
    pub patch: Map<String, Value>,
    /// Who the call runs for.
    pub actor: Actor,
    /// The caller's context.
    pub context: CallContext,
    /// The pending action's id when executing an approved action.
    pub idempotency_key: Option<String>,
}

/// A flow to run: the automation service with `{record, params, user, action}`.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowRequest {
    /// The flow's name (the action's `target`).
    pub flow: String,
    /// The action's name.
    pub action: String,
    /// The action's object, when it has one.
    pub object: Option<String>,
    /// The record (row-context actions), as loaded.
    pub record: Option<Value>,
    /// The params from the model, `recordId` removed.
    pub params: Map<String, Value>,
    /// Who the call runs for (upstream's `user`).
    pub actor: Actor,
    /// The caller's context.
    pub context: CallContext,
    /// The pending action's id when executing an approved action.
    pub idempotency_key: Option<String>,
}

/// An HTTP call for an `api` action, body already built (see
/// [`build_api_body`](super::build_api_body)).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiRequest {
    /// The action's name.
    pub action: String,
    /// The method, upper case (`POST` when the action names none).
    pub method: String,
    /// The action's `target`, relative to the client's base URL (or
    /// absolute on an origin the client allows). For `GET` and `DELETE` it
    /// carries the action's data in its query string: the params, the
    /// `recordIdParam` and the `bodyExtra` constants, in the order and with
    /// the precedence a body would have (see
    /// [`build_api_target`](super::build_api_target)).
    pub target: String,
    /// The JSON body; `None` for `GET` and `DELETE`.
    pub body: Option<Value>,
    /// Per-call headers (the client adds its defaults).
    pub headers: Vec<(String, String)>,
    /// Who the call runs for.
    pub actor: Actor,
    /// The caller's context.
    pub context: CallContext,
    /// The pending action's id when executing an approved action; the
    /// default client sends it as `Idempotency-Key`.
    pub idempotency_key: Option<String>,
}

/// Records and script actions.
#[async_trait::async_trait]
pub trait DataEngine: Send + Sync {
    /// The record `id` of `object` as `actor` may see it; `Ok(None)` when it
    /// does not exist *or* the actor may not see it (the model is told
    /// "not found" either way).
    async fn find_record(
        &self,
        object: &str,
        id: &str,
        actor: &Actor,
    ) -> Result<Option<Value>, HostError>;

    /// Runs a script action; the value is the action's result.
    async fn execute_action(&self, request: ScriptRequest) -> Result<Value, HostError>;

    /// Writes a declarative field patch on a record; the value is the
    /// result (the updated record, say). The default refuses.
    async fn update_record(&self, request: FieldWriteRequest) -> Result<Value, HostError> {
        Err(HostError::Unsupported(format!(
            "this data engine does not support declarative field writes (action `{}`)",
            request.action
        )))
    }
}

/// Flows.
#[async_trait::async_trait]
pub trait AutomationService: Send + Sync {
    /// Runs a flow; the value is its result. A result object with
    /// `success: false` is treated as a failure by the runtime.
    async fn execute(&self, request: FlowRequest) -> Result<Value, HostError>;
}

/// HTTP APIs.
#[async_trait::async_trait]
pub trait ApiClient: Send + Sync {
    /// Sends the request; the value is the response body as JSON (`null`
    /// when empty). A non-2xx status is an error carrying status and body.
    async fn request(&self, request: ApiRequest) -> Result<Value, HostError>;

    /// Where this client may send requests: its base URL and the other
    /// origins it allows. Each `api` action's `target` is judged against
    /// it when the action registers, and skipped (`unsafe_api_target`)
    /// when it could leave (see [`ApiScope`]). The default knows no base
    /// URL and allows no other origin: only relative targets that name no
    /// host, scheme or `..` register. A client whose requests carry
    /// credentials should also refuse such targets in
    /// [`request`](Self::request), as the default client (feature `http`)
    /// does.
    fn scope(&self) -> ApiScope<'_> {
        ApiScope::default()
    }
}
