//! An MCP gateway between AI clients and an ObjectStack server
//! (ADR-0011's invocation flow as a product).
//!
//! A [`Gateway`] serves one stack's action tools over the Model Context
//! Protocol (the official Rust SDK, `rmcp`), on stdio or Streamable HTTP:
//!
//! - one tool per opted-in action, with its exact schema, sent through the
//!   bridge's MCP projection (annotations true to the action; an
//!   `outputSchema` and `structuredContent` when `ai.outputSchema` is set);
//! - arguments validated by the bridge's [`ToolRegistry`] before anything
//!   runs;
//! - the call executed on the user's own ObjectStack server
//!   ([`ObjectStackBackend`]) under the caller's own API key;
//! - actions that need confirmation parked in the durable approval queue
//!   (or, with [`ConfirmMode::Elicit`], put to the present user).
//!
//! ```no_run
//! # async fn run() -> Result<(), objectstack_gateway::GatewayError> {
//! use objectstack_gateway::{ApiKey, Config, Gateway};
//!
//! let mut config = Config::new(vec!["dist/objectstack.json".into()]);
//! config.server = Some("http://127.0.0.1:3417".into());
//! let gateway = Gateway::new(config)?;
//! let key = std::env::var("OBJECTSTACK_API_KEY").ok().and_then(|k| ApiKey::new(&k));
//! gateway.serve_stdio(key).await?;
//! # Ok(()) }
//! ```
//!
//! [`ToolRegistry`]: objectstack_bridge::runtime::ToolRegistry
#![deny(missing_docs)]

mod api;
mod asked;
mod audit;
mod backend;
mod catalog;
mod hosts;
mod http;
mod identity;
mod inbox;
mod jsonrpc;
mod listing;
mod mcp;
mod output;
mod stdio;
mod verify;
mod waits;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime};

use objectstack_bridge::approval::{
    ApprovalError, ApprovalQueue, ListFilter, ListOrder, OpenMode, PendingAction, QueueLocation,
    State, input_sha256,
};
use objectstack_bridge::runtime::{
    CallContext, ExecuteOptions, HostServices, HttpApiClient, HttpClientOptions,
};
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

pub use audit::{Audit, Entry as AuditEntry};
pub use backend::{BackendError, ObjectStackBackend, with_caller};
pub use catalog::PENDING_TOOL;
pub use hosts::parse_origin;
pub use identity::{ApiKey, Caller, Transport};
pub use inbox::{InboxConfig, NotifyConfig, parse_duration};

use catalog::Catalog;

/// How calls that need a person's confirmation are confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConfirmMode {
    /// Proposed to the durable approval queue; someone approves them later.
    #[default]
    Queue,
    /// The present user is asked through MCP elicitation when the client
    /// declares it; otherwise the queue.
    Elicit,
}

/// How a gateway is set up. [`Config::new`] gives the defaults.
#[derive(Debug, Clone)]
pub struct Config {
    /// The stack files, composed in order (typically `dist/objectstack.json`).
    pub stacks: Vec<PathBuf>,
    /// The ObjectStack server script, flow and field-write actions run on.
    /// Without it those actions are not served (each reason is logged).
    pub server: Option<String>,
    /// The base URL `api` actions' relative targets resolve against. The
    /// caller's key is sent there only when it is on `server`'s origin.
    pub api_base_url: Option<String>,
    /// The approval queue: an SQLite file (a path, or `sqlite:PATH`), or a
    /// `postgres://` URL (one queue several gateways share; needs the
    /// `postgres` feature).
    pub approvals: PathBuf,
    /// Serve only what this agent may invoke.
    pub agent: Option<String>,
    /// How confirmation is asked for.
    pub confirm: ConfirmMode,
    /// Where audit lines go; `None` is stderr.
    pub audit: Option<PathBuf>,
    /// The timeout of every backend call.
    pub backend_timeout: Duration,
    /// How often the stack files are checked for changes; `None` never.
    pub reload_interval: Option<Duration>,
    /// The largest HTTP request body, and the longest line over stdio,
    /// accepted (bytes).
    pub max_body_bytes: usize,
    /// How long SIGTERM waits for calls in flight, and how long the end of
    /// a stdio session waits for the client to read the last answers.
    pub drain_timeout: Duration,
    /// The key approvals recorded elsewhere (the `approvals` CLI) are
    /// executed under; without it they are reported as approved and waiting.
    pub executor_key: Option<ApiKey>,
    /// Hostnames the HTTP listener answers to (DNS-rebinding protection);
    /// loopback names by default. Each is `name` (any port) or
    /// `name:port`, an IPv6 address in brackets; every route reads them as
    /// rmcp does for `/mcp`. An empty list answers every name (not
    /// recommended).
    pub allowed_hosts: Vec<String>,
    /// Browser origins answered besides those whose host is an allowed
    /// host (`https://gw.example.com` behind a proxy that rewrites `Host`):
    /// a request carrying any other `Origin` gets 403, as MCP's Streamable
    /// HTTP transport asks. Requests without `Origin` (every non-browser
    /// client) are not affected. No CORS headers are sent, so this does
    /// not let pages on other origins call the gateway.
    pub allowed_origins: Vec<String>,
    /// The approvals inbox, deadlines, four eyes and notifications.
    pub inbox: InboxConfig,
    /// The most bytes read of one stack file (1 GiB by default); a larger
    /// file, or a pipe or device that goes on, is refused.
    pub max_stack_bytes: u64,
}

impl Config {
    /// The defaults for `stacks`: no server, `objectstack-approvals.sqlite`,
    /// queue confirmation, audit on stderr, 30 s backend timeout, reload
    /// checked every second, 4 MiB bodies, 30 s drain, 1 GiB stack files.
    pub fn new(stacks: Vec<PathBuf>) -> Self {
        Config {
            stacks,
            server: None,
            api_base_url: None,
            approvals: PathBuf::from("objectstack-approvals.sqlite"),
            agent: None,
            confirm: ConfirmMode::Queue,
            audit: None,
            backend_timeout: Duration::from_secs(30),
            reload_interval: Some(Duration::from_secs(1)),
            max_body_bytes: 4 << 20,
            drain_timeout: Duration::from_secs(30),
            executor_key: None,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: Vec::new(),
            inbox: InboxConfig::default(),
            max_stack_bytes: catalog::MAX_STACK_BYTES,
        }
    }
}

/// Why the gateway could not start or serve.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// No stack file was given.
    #[error("no stack file given; pass the compiled stack, e.g. dist/objectstack.json")]
    NoStack,
    /// A stack file cannot be read or parsed.
    #[error("{}: {why}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong (with line and column for JSON errors).
        why: String,
    },
    /// The stack has errors; nothing is served.
    #[error("the stack has {} error(s), so nothing from it is served; fix them:\n{}", diagnostics.len(), diagnostics.join("\n"))]
    InvalidStack {
        /// Each error, located, with its fix.
        diagnostics: Vec<String>,
    },
    /// `--agent` names no agent of the stack.
    #[error("no agent named \"{name}\" in this stack; {}", if known.is_empty() { "it defines no agents".to_owned() } else { format!("known agents: {}", known.join(", ")) })]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents the stack defines.
        known: Vec<String>,
    },
    /// The server URL is unusable.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The `--api-base-url` client could not be built.
    #[error("--api-base-url: {0}")]
    ApiClient(String),
    /// The approval queue cannot be opened.
    #[error("the approval queue {}: {why}", path.display())]
    Queue {
        /// The file, or the URL with its credentials redacted.
        path: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// The audit file cannot be opened.
    #[error("the audit file {}: {why}", path.display())]
    Audit {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// The listener could not be bound.
    #[error("cannot listen on {addr}: {why}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// What went wrong.
        why: String,
    },
    /// The MCP session failed.
    #[error("the MCP session failed: {0}")]
    Protocol(String),
    /// Serving failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// State every session of one gateway shares.
pub(crate) struct Shared {
    config: Config,
    services: HostServices,
    queue: Arc<ApprovalQueue>,
    catalog: RwLock<Arc<Catalog>>,
    stamp: Mutex<Vec<Option<SystemTime>>>,
    audit: Audit,
    peers: Mutex<Vec<rmcp::Peer<rmcp::RoleServer>>>,
    /// Bumped on every reload; `subscriptions/listen` streams watch it.
    changes: tokio::sync::watch::Sender<u64>,
    tracker: tokio_util::task::TaskTracker,
    /// Whether the server accepts a caller's key.
    keys: verify::KeyCheck,
    inbox: inbox::Inbox,
    /// The confirmations asked with `input_required`: only these may be
    /// decided by a retried call.
    asked: asked::Asked,
    /// The key each Streamable HTTP session was opened with.
    owners: http::SessionOwners,
    /// Whether the reload watcher, the executor and the sweeper run: once
    /// per gateway, however many sessions or listeners it serves.
    background: std::sync::atomic::AtomicBool,
    /// Cancelled when a drain starts: questions to the present user are
    /// given up (their actions stay queued) instead of holding the drain.
    stopping: tokio_util::sync::CancellationToken,
    /// The `tools/list` placeholders the transports replace.
    listing: Arc<listing::Listing>,
}

/// An MCP gateway serving one stack (see the crate docs).
#[derive(Clone)]
pub struct Gateway {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("stacks", &self.shared.config.stacks)
            .finish()
    }
}

impl Gateway {
    /// Reads and checks the stack, opens the approval queue and the audit
    /// trail, and builds what is served. A stack with errors is refused
    /// with every diagnostic. Needs a Tokio runtime when an `--api-base-url`
    /// client is configured.
    pub fn new(config: Config) -> Result<Self, GatewayError> {
        // The stack is read and checked first: a stack that is refused
        // leaves no queue or audit file behind.
        let stamp = stamps(&config.stacks);
        let mut stack = catalog::read_stack(&config.stacks, config.max_stack_bytes)?;
        let arena = objectstack_spec::json::Arena::new();
        let checked = catalog::check(&mut stack, &arena, config.agent.as_deref())?;
        let refused =
            |shown: String, e: objectstack_bridge::approval::StoreError| GatewayError::Queue {
                path: PathBuf::from(shown),
                why: e.to_string(),
            };
        let location = QueueLocation::parse(config.approvals.as_os_str()).map_err(|e| {
            refused(
                objectstack_bridge::redact::text(&config.approvals.to_string_lossy()).into_owned(),
                e,
            )
        })?;
        let store = location
            .open(OpenMode::Create)
            .map_err(|e| refused(location.to_string(), e))?;
        let queue = Arc::new(ApprovalQueue::new(Arc::new(waits::Announced(store))));
        Self::assemble(config, queue, stamp, checked, &arena)
    }

    /// [`Gateway::new`] with a queue the host opened itself (another store,
    /// a test clock).
    pub fn with_queue(config: Config, queue: Arc<ApprovalQueue>) -> Result<Self, GatewayError> {
        let stamp = stamps(&config.stacks);
        let mut stack = catalog::read_stack(&config.stacks, config.max_stack_bytes)?;
        let arena = objectstack_spec::json::Arena::new();
        let checked = catalog::check(&mut stack, &arena, config.agent.as_deref())?;
        Self::assemble(config, queue, stamp, checked, &arena)
    }

    /// The gateway over a checked stack and an open queue.
    fn assemble(
        config: Config,
        queue: Arc<ApprovalQueue>,
        stamp: Vec<Option<std::time::SystemTime>>,
        checked: catalog::Checked<'_>,
        arena: &objectstack_spec::json::Arena,
    ) -> Result<Self, GatewayError> {
        let (queue, inbox) = inbox::wire(&config.inbox, queue);
        let mut services = HostServices {
            approvals: Some(queue.clone()),
            ..HostServices::default()
        };
        let mut server = None;
        if let Some(url) = &config.server {
            let backend = Arc::new(ObjectStackBackend::new(url, config.backend_timeout)?);
            services.data_engine = Some(backend.clone());
            services.automation = Some(backend.clone());
            server = Some(backend);
        }
        if let Some(url) = &config.api_base_url {
            let client = HttpApiClient::new(HttpClientOptions {
                base_url: Some(url.clone()),
                timeout: config.backend_timeout,
                ..HttpClientOptions::default()
            })
            .map_err(|e| GatewayError::ApiClient(e.to_string()))?;
            services.api_client = Some(Arc::new(api::KeyedApiClient::new(
                Arc::new(client),
                url,
                config.server.as_deref(),
            )));
        }
        let audit = match &config.audit {
            Some(path) => Audit::to_file(path).map_err(|e| GatewayError::Audit {
                path: path.clone(),
                why: e.to_string(),
            })?,
            None => Audit::to_stderr(),
        };
        let built = catalog::build_checked(checked, arena, services.clone());
        for note in &built.notes {
            tracing::info!("{note}");
        }
        tracing::info!(
            tools = built.tool_count(),
            prompts = built.prompts.len(),
            "stack loaded"
        );
        Ok(Gateway {
            shared: Arc::new(Shared {
                config,
                services,
                queue,
                catalog: RwLock::new(Arc::new(built)),
                stamp: Mutex::new(stamp),
                audit,
                peers: Mutex::new(Vec::new()),
                changes: tokio::sync::watch::Sender::new(0),
                tracker: tokio_util::task::TaskTracker::new(),
                keys: verify::KeyCheck::new(server),
                inbox,
                asked: asked::Asked::default(),
                owners: http::SessionOwners::default(),
                background: std::sync::atomic::AtomicBool::new(false),
                stopping: tokio_util::sync::CancellationToken::new(),
                listing: Arc::new(listing::Listing::new()),
            }),
        })
    }

    /// The names of the tools served now, in `tools/list` order.
    pub fn tool_names(&self) -> Vec<String> {
        self.shared.catalog().tool_names()
    }

    /// Why actions were not served (also logged at start).
    pub fn notes(&self) -> Vec<String> {
        self.shared.catalog().notes.clone()
    }

    /// The approval queue calls are proposed to.
    pub fn queue(&self) -> &Arc<ApprovalQueue> {
        &self.shared.queue
    }

    /// Re-reads the stack files now. On success the new tools are served
    /// and every connected client gets `notifications/tools/list_changed`;
    /// on failure the last good stack stays and the error says why.
    pub async fn reload(&self) -> Result<(), GatewayError> {
        let shared = &self.shared;
        let stamp = stamps(&shared.config.stacks);
        if let Ok(mut last) = shared.stamp.lock() {
            *last = stamp;
        }
        let built = catalog::read_stack(&shared.config.stacks, shared.config.max_stack_bytes)
            .and_then(|mut stack| {
                catalog::build(
                    &mut stack,
                    shared.services.clone(),
                    shared.config.agent.as_deref(),
                )
            })?;
        for note in &built.notes {
            tracing::info!("{note}");
        }
        tracing::info!(tools = built.tool_count(), "stack reloaded");
        match shared.catalog.write() {
            Ok(mut current) => *current = Arc::new(built),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(built),
        }
        shared.notify_list_changed().await;
        Ok(())
    }

    /// Starts the reload watcher, the executor and the sweeper, unless this
    /// gateway already started them (each runs until it is dropped).
    fn start_background(&self) {
        if self
            .shared
            .background
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        // Detached: each runs until the gateway is dropped.
        drop(self.spawn_watcher());
        drop(self.spawn_executor(Duration::from_secs(5)));
        drop(self.spawn_sweeper());
    }

    /// Checks the stack files every `reload_interval` and reloads when one
    /// changed; a bad reload is logged and the last good stack kept. Runs
    /// until the gateway is dropped.
    pub fn spawn_watcher(&self) -> Option<tokio::task::JoinHandle<()>> {
        let interval = self.shared.config.reload_interval?;
        let weak = Arc::downgrade(&self.shared);
        Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                let Some(shared) = weak.upgrade() else { return };
                let now = stamps(&shared.config.stacks);
                let changed = shared.stamp.lock().map(|s| *s != now).unwrap_or(false);
                if changed {
                    let gateway = Gateway { shared };
                    if let Err(e) = gateway.reload().await {
                        tracing::error!(
                            "the changed stack was not loaded; still serving the last good one: {e}"
                        );
                    }
                }
            }
        }))
    }

    /// Executes approvals recorded elsewhere on the store (the `approvals`
    /// CLI, another gateway) under `executor_key`, every `every`, and at
    /// once when the store announces an approval (PostgreSQL's `NOTIFY`;
    /// then `every` is only a fallback, at least 30 s). Without an
    /// executor key nothing runs: they stay approved and waiting.
    pub fn spawn_executor(&self, every: Duration) -> Option<tokio::task::JoinHandle<()>> {
        let key = self.shared.config.executor_key.clone()?;
        let weak = Arc::downgrade(&self.shared);
        let wake = Arc::new(tokio::sync::Notify::new());
        let notify = wake.clone();
        let every = match self
            .shared
            .queue
            .watch_approved(Arc::new(move || notify.notify_one()))
        {
            Ok(true) => every.max(Duration::from_secs(30)),
            Ok(false) => every,
            Err(e) => {
                tracing::warn!("approvals are not announced, so they are polled: {e}");
                every
            }
        };
        let executor = Caller {
            key: Some(key),
            transport: Transport::Executor,
            session: None,
        };
        Some(tokio::spawn(async move {
            loop {
                let woken = tokio::select! {
                    () = tokio::time::sleep(every) => false,
                    () = wake.notified() => true,
                };
                if woken {
                    // An approval was just recorded; the gateway that
                    // recorded it runs it within milliseconds, under the
                    // approver's key. Take over only what it left.
                    tokio::time::sleep(SETTLE + Duration::from_millis(500)).await;
                }
                let Some(shared) = weak.upgrade() else { return };
                let catalog = shared.catalog();
                let options = ExecuteOptions {
                    settled: SETTLE,
                    ..executor_options()
                };
                let started = Instant::now();
                match with_caller(
                    executor.key.clone(),
                    catalog.registry.execute_approved(&options),
                )
                .await
                {
                    Ok(report) => {
                        for (id, outcome) in report
                            .executed
                            .iter()
                            .map(|id| (id, "executed"))
                            .chain(report.failed.iter().map(|id| (id, "failed")))
                        {
                            if outcome == "executed" {
                                tracing::info!(pending = %id, "executed an approval recorded elsewhere");
                            } else {
                                tracing::warn!(
                                    pending = %id,
                                    "an approval recorded elsewhere failed (its row says why)"
                                );
                            }
                            let row = shared.queue.get(id).ok();
                            let state = row.as_ref().map_or(outcome, |r| r.state.as_str());
                            shared.audit.record(
                                &executor,
                                row.as_ref().map_or("execute", |r| r.tool_name.as_str()),
                                row.as_ref().map(|r| r.input_sha256.clone()),
                                state,
                                Some(id),
                                started.elapsed(),
                            );
                        }
                    }
                    Err(e) => tracing::warn!("executing approved actions failed: {e}"),
                }
            }
        }))
    }

    /// Serves one MCP session on stdin and stdout, every call under `key`,
    /// until the client disconnects or SIGTERM (which waits for the calls
    /// in flight).
    pub async fn serve_stdio(&self, key: Option<ApiKey>) -> Result<(), GatewayError> {
        let served = self
            .serve_io(key, tokio::io::stdin(), tokio::io::stdout())
            .await;
        // The end of stdin ends the session while calls may still run (rmcp
        // waits a few seconds for their answers, then lets go): each is
        // waited for, as on SIGTERM, so what it did on the server is in
        // the audit trail before the process ends. After SIGTERM the
        // session has drained already.
        let tracker = &self.shared.tracker;
        if !tracker.is_closed() {
            if !tracker.is_empty() {
                tracing::info!(
                    calls = tracker.len(),
                    "the session ended: waiting for the calls in flight"
                );
            }
            self.wait_for_calls().await;
            // The gateway may serve on (a host's other listener).
            tracker.reopen();
        }
        served
    }

    /// [`Gateway::serve_stdio`] over any pair of byte streams (a pipe, a
    /// socket, an in-process duplex): one MCP session, a JSON-RPC message
    /// per line read from `input` and written to `output`, every call under
    /// `key`, until `input` ends or SIGTERM. Audit lines name the transport
    /// `stdio`.
    pub async fn serve_io<R, W>(
        &self,
        key: Option<ApiKey>,
        input: R,
        output: W,
    ) -> Result<(), GatewayError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        use rmcp::ServiceExt;
        self.start_background();
        let caller = Caller {
            key,
            transport: Transport::Stdio,
            session: Some(format!(
                "stdio-{}-{}",
                std::process::id(),
                objectstack_bridge::approval::format_timestamp(now_ms())
            )),
        };
        let handler = mcp::Session::new(self.shared.clone(), Some(caller));
        let terminated = terminate();
        tokio::pin!(terminated);
        // Lines rmcp would drop unanswered are answered as JSON-RPC says.
        let screened = stdio::screen(
            input,
            output,
            self.shared.config.max_body_bytes,
            Some(self.shared.splicer()),
        );
        let session = async {
            let service = tokio::select! {
                service = handler.serve((screened.input, screened.output)) => {
                    service.map_err(|e| GatewayError::Protocol(e.to_string()))?
                }
                // Before the client finished initializing: nothing is in flight.
                () = &mut terminated => return Ok(()),
            };
            let cancel = service.cancellation_token();
            let waiting = service.waiting();
            tokio::pin!(waiting);
            tokio::select! {
                done = &mut waiting => {
                    done.map_err(|e| GatewayError::Protocol(e.to_string()))?;
                }
                () = terminated => {
                    tracing::info!("SIGTERM: waiting for the calls in flight");
                    self.drain().await;
                    // The last answers go out through rmcp's writer after their
                    // calls return: give it a moment before the service stops.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    cancel.cancel();
                }
            }
            Ok(())
        };
        let ended = session.await;
        // Whichever way the session ended, rmcp's end of the pipe is closed
        // now, and every line it wrote (and every answer of the screen's)
        // goes to stdout before the process ends; a client that never
        // reads stdout holds it at most `drain_timeout`.
        if tokio::time::timeout(self.shared.config.drain_timeout, screened.writer)
            .await
            .is_err()
        {
            tracing::warn!(
                "stdout was not read within {:?}: the last answers were not all written",
                self.shared.config.drain_timeout
            );
        }
        ended
    }

    /// The HTTP application: the MCP endpoint at `/mcp` and the approvals
    /// API at `/approvals`, every route behind `Authorization: Bearer`.
    /// Mount it in a host's own server, or use [`Gateway::serve_http`].
    pub fn router(&self, shutdown: tokio_util::sync::CancellationToken) -> axum::Router {
        http::router(self.shared.clone(), shutdown)
    }

    /// Serves HTTP on `addr` (bind 127.0.0.1 unless the deployment puts a
    /// proxy in front) until SIGTERM or `shutdown` resolves; then waits for
    /// the requests in flight.
    pub async fn serve_http(
        &self,
        addr: SocketAddr,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), GatewayError> {
        let listener =
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| GatewayError::Bind {
                    addr,
                    why: e.to_string(),
                })?;
        self.serve_listener(listener, shutdown).await
    }

    /// [`Gateway::serve_http`] on a listener the host bound.
    pub async fn serve_listener(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), GatewayError> {
        self.start_background();
        if let Ok(addr) = listener.local_addr() {
            self.shared.inbox.listening(addr);
            tracing::info!(%addr, "listening (MCP at /mcp, approvals at /approvals, inbox at /approvals/ui)");
        }
        if !self.shared.keys.enabled() {
            tracing::warn!(
                "no --server: bearer keys cannot be verified, so any key reads the approval queue; \
                 keep the listener on 127.0.0.1"
            );
        }
        let terminated = terminate();
        let token = tokio_util::sync::CancellationToken::new();
        let app = self.router(token.clone());
        let shared = self.shared.clone();
        let stop = token.clone();
        // Answers are written in several pieces (headers, SSE events); with
        // Nagle's algorithm a piece can wait for the client's delayed ACK.
        let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!("TCP_NODELAY not set on a connection: {e}");
            }
        });
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                tokio::select! {
                    () = shutdown => {}
                    () = terminated => tracing::info!("SIGTERM: draining"),
                }
                shared.tracker.close();
                let _ =
                    tokio::time::timeout(shared.config.drain_timeout, shared.tracker.wait()).await;
                stop.cancel();
            })
            .await?;
        Ok(())
    }

    /// SIGTERM: questions to the present user are given up (their actions
    /// stay queued, and their callers are answered so), then the calls in
    /// flight are waited for.
    async fn drain(&self) {
        self.shared.stopping.cancel();
        self.wait_for_calls().await;
    }

    /// Refuses new calls and waits (up to `drain_timeout`) for the ones in
    /// flight.
    async fn wait_for_calls(&self) {
        let shared = &self.shared;
        shared.tracker.close();
        if tokio::time::timeout(shared.config.drain_timeout, shared.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("calls still in flight after the drain timeout");
        }
    }
}

/// A call in progress, audited `abandoned` if it is dropped before it
/// finishes: when the process ends with the call still running (SIGTERM
/// or the end of stdin waited `drain_timeout` for it), the runtime drops
/// its task, and the trail says the action may have run on the server,
/// with no outcome, instead of saying nothing; with the pending action's
/// id when the call had proposed or was deciding one.
struct Unfinished<'a> {
    shared: &'a Shared,
    caller: &'a Caller,
    name: &'a str,
    sha: Option<String>,
    started: Instant,
    pending: Arc<OnceLock<String>>,
    running: bool,
}

/// When a call began and the SHA-256 of its input, read once for its
/// audit line and for [`Unfinished`]'s; and the pending action the call
/// proposed or decides, once known, for the `abandoned` line too (an
/// operator then knows which action to check on the server).
struct Begun {
    sha: Option<String>,
    started: Instant,
    pending: Arc<OnceLock<String>>,
}

impl<'a> Unfinished<'a> {
    /// Watches a call of `name` with `arguments`; returns the guard and
    /// what the call audits with.
    fn watch(
        shared: &'a Shared,
        caller: &'a Caller,
        name: &'a str,
        arguments: &Map<String, Value>,
    ) -> (Self, Begun) {
        let begun = Begun {
            sha: input_sha256(arguments).ok(),
            started: Instant::now(),
            pending: Arc::default(),
        };
        let guard = Unfinished {
            shared,
            caller,
            name,
            sha: begun.sha.clone(),
            started: begun.started,
            pending: begun.pending.clone(),
            running: true,
        };
        (guard, begun)
    }

    /// Runs `call`, which audits its own outcome when it finishes.
    async fn over<T>(mut self, call: impl std::future::Future<Output = T>) -> T {
        let done = call.await;
        self.running = false;
        done
    }
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if !self.running {
            return;
        }
        // A panic in the call is a failure of the gateway's, not a stop.
        let outcome = if std::thread::panicking() {
            "error"
        } else {
            tracing::warn!(
                tool = self.name,
                "a call was still running when the gateway stopped; it may have run on the server"
            );
            "abandoned"
        };
        self.shared.audit.record(
            self.caller,
            self.name,
            self.sha.take(),
            outcome,
            self.pending.get().map(String::as_str),
            self.started.elapsed(),
        );
    }
}

/// Resolves on SIGTERM (or Ctrl-C); never on platforms without signals.
fn terminate() -> impl std::future::Future<Output = ()> + Send + 'static {
    // The handler is installed now, not when the future is first polled:
    // a SIGTERM that arrives while a session is still being set up is
    // then a drain, not the default action (the process killed).
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    async move {
        #[cfg(unix)]
        {
            match term {
                Some(mut term) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = tokio::signal::ctrl_c() => {}
                    }
                }
                None => std::future::pending::<()>().await,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

fn stamps(paths: &[PathBuf]) -> Vec<Option<SystemTime>> {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .collect()
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// How long the executor leaves a fresh approval to the gateway that
/// recorded it (which claims it at once) before it takes it over.
const SETTLE: Duration = Duration::from_secs(2);

fn executor_options() -> ExecuteOptions {
    ExecuteOptions {
        executor: format!("objectstack-gateway-{}", std::process::id()),
        ..ExecuteOptions::default()
    }
}

/// What an approval decision over HTTP answers, as upstream's approve
/// route does.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Decision {
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl Shared {
    /// What the transports replace `tools/list` placeholders with.
    fn splicer(self: &Arc<Self>) -> listing::Splicer {
        let shared = self.clone();
        listing::Splicer::new(self.listing.clone(), Arc::new(move || shared.catalog()))
    }

    /// Whether the server accepts `key` at all (a 403 on the object keys
    /// are checked against still means it knows the key).
    pub(crate) async fn key_accepted(&self, key: &ApiKey) -> Result<(), verify::Refusal> {
        let probe = self.catalog().probe_object.clone();
        match self.keys.check(key, probe.as_deref()).await {
            Ok(()) | Err(verify::Refusal::Forbidden(_)) => Ok(()),
            Err(refusal) => Err(refusal),
        }
    }

    /// Whether `key` may see and decide an action on `object`.
    pub(crate) async fn may_read(
        &self,
        key: &ApiKey,
        object: Option<&str>,
    ) -> Result<(), verify::Refusal> {
        self.keys.check(key, object).await
    }

    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        match self.catalog.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    async fn notify_list_changed(&self) {
        // Subscriptions of 2026-07-28 (`subscriptions/listen`).
        self.changes.send_modify(|generation| *generation += 1);
        let peers: Vec<_> = match self.peers.lock() {
            Ok(mut peers) => {
                peers.retain(|p| !p.is_transport_closed());
                peers.clone()
            }
            Err(_) => Vec::new(),
        };
        for peer in peers {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!("list_changed not delivered: {e}");
            }
            let _ = peer.notify_prompt_list_changed().await;
        }
    }

    pub(crate) fn add_peer(&self, peer: rmcp::Peer<rmcp::RoleServer>) {
        if let Ok(mut peers) = self.peers.lock() {
            peers.retain(|p| !p.is_transport_closed());
            peers.push(peer);
        }
    }

    /// One `tools/call`: validated and dispatched by the bridge, under the
    /// caller's key; the envelope becomes the MCP result. A call the
    /// process ends before it finishes (its drain timed out) is audited
    /// `abandoned` ([`Unfinished`]).
    pub(crate) async fn call(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Map<String, Value>,
        tool_call_id: Option<String>,
        confirm: mcp::Confirm<'_>,
    ) -> CallToolResponse {
        let (guard, begun) = Unfinished::watch(self, caller, name, &arguments);
        guard
            .over(self.call_watched(caller, name, arguments, tool_call_id, confirm, begun))
            .await
    }

    async fn call_watched(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Map<String, Value>,
        tool_call_id: Option<String>,
        confirm: mcp::Confirm<'_>,
        Begun {
            sha,
            started,
            pending,
        }: Begun,
    ) -> CallToolResponse {
        let catalog = self.catalog();
        if catalog.serves_pending(name) {
            let result = self.lookup(caller, &arguments);
            let outcome = if result.is_error == Some(true) {
                "error"
            } else {
                "ok"
            };
            self.audit
                .record(caller, name, sha, outcome, None, started.elapsed());
            return result.into();
        }
        let served = catalog.served(name);
        let context = CallContext {
            actor: Some(objectstack_bridge::runtime::Actor::new(caller.actor_id())),
            conversation_id: caller.session.clone(),
            tool_call_id: caller.session.as_ref().and(tool_call_id),
            ..CallContext::default()
        };
        let envelope = with_caller(
            caller.key.clone(),
            catalog
                .registry
                .call(name, Value::Object(arguments), &context),
        )
        .await;
        let pending_id = pending_id(&envelope);
        if let Some(id) = &pending_id {
            let _ = pending.set(id.clone());
        }
        let confirmable = served.is_some_and(|s| s.needs_confirmation);
        if let (Some(id), true) = (pending_id.as_deref(), confirmable) {
            match confirm {
                mcp::Confirm::Queue => {}
                mcp::Confirm::Ask(peer) => {
                    let row = match self.queue.get(id) {
                        Ok(row) => row,
                        Err(e) => return error_result(&e.to_string()).into(),
                    };
                    let answer = mcp::ask(peer, &row, &self.stopping).await;
                    return self
                        .confirmed(caller, name, &row, answer, &catalog, sha, started)
                        .await
                        .into();
                }
                mcp::Confirm::InputRequired => {
                    if let Some(asked) = self
                        .queue
                        .get(id)
                        .ok()
                        .as_ref()
                        .and_then(mcp::input_required)
                    {
                        self.asked.ask(id, &caller.actor_id());
                        self.audit.record(
                            caller,
                            name,
                            sha,
                            "pending",
                            Some(id),
                            started.elapsed(),
                        );
                        return CallToolResponse::InputRequired(asked);
                    }
                }
            }
        }
        let outcome = outcome(&envelope);
        self.audit.record(
            caller,
            name,
            sha,
            outcome,
            pending_id.as_deref(),
            started.elapsed(),
        );
        to_result(&envelope, served.and_then(|s| s.output())).into()
    }

    /// Whether `name` is a tool the current catalog serves (the gateway's
    /// own lookup tool included, when it is served).
    pub(crate) fn serves(&self, name: &str) -> bool {
        let catalog = self.catalog();
        catalog.serves(name)
    }

    /// Audits a call that is refused before anything runs (a tool that is
    /// not served, a call during the drain).
    pub(crate) fn refuse_unknown(
        &self,
        caller: &Caller,
        name: &str,
        arguments: &Map<String, Value>,
    ) {
        let sha = input_sha256(arguments).ok();
        self.audit
            .record(caller, name, sha, "refused", None, Duration::ZERO);
    }

    /// The retry of a call answered with `input_required` (2026-07-28):
    /// `state` names the pending action it proposed, and `answer` is the
    /// user's. The state is echoed by the client, so it is only a handle:
    /// it must name a still pending action this gateway asked this caller
    /// about (so never one only queued for a person to approve, and never
    /// with `--confirm queue`), for this tool, with these very arguments;
    /// otherwise nothing is decided.
    pub(crate) async fn resume(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Map<String, Value>,
        state: &str,
        answer: mcp::Answer,
    ) -> CallToolResult {
        let (guard, begun) = Unfinished::watch(self, caller, name, &arguments);
        guard
            .over(self.resume_watched(caller, name, state, answer, begun))
            .await
    }

    async fn resume_watched(
        &self,
        caller: &Caller,
        name: &str,
        state: &str,
        answer: mcp::Answer,
        Begun {
            sha,
            started,
            pending,
        }: Begun,
    ) -> CallToolResult {
        let catalog = self.catalog();
        let asked = self.config.confirm == ConfirmMode::Elicit
            && self.asked.was_asked(state, &caller.actor_id());
        let row = asked
            .then(|| self.queue.get(state).ok())
            .flatten()
            .filter(|row| {
                row.proposer.id == caller.actor_id()
                    && row.tool_name == name
                    && sha.as_deref() == Some(row.input_sha256.as_str())
            });
        let Some(row) = row else {
            self.audit
                .record(caller, name, sha, "refused", None, started.elapsed());
            return error_result(
                "this confirmation does not belong to this call (not one this gateway asked, \
                 another caller's, another tool's, other arguments, or unknown); nothing was \
                 decided, and an action waiting for approval still waits for a person. Call the \
                 tool again to be asked afresh.",
            );
        };
        let _ = pending.set(row.id.clone());
        if row.state != State::Pending {
            self.audit.record(
                caller,
                name,
                sha,
                "refused",
                Some(&row.id),
                started.elapsed(),
            );
            return error_result(&format!(
                "pending action {} is already {}; nothing was decided again",
                row.id,
                row.state.as_str()
            ));
        }
        self.confirmed(caller, name, &row, answer, &catalog, sha, started)
            .await
    }

    /// What the present user answered about a pending action: accept
    /// approves and runs it (once, through the queue), decline rejects it,
    /// and no answer leaves it queued.
    #[allow(clippy::too_many_arguments)]
    async fn confirmed(
        &self,
        caller: &Caller,
        name: &str,
        row: &PendingAction,
        answer: mcp::Answer,
        catalog: &Catalog,
        sha: Option<String>,
        started: Instant,
    ) -> CallToolResult {
        let by = format!("{} (elicitation)", caller.actor_id());
        let (result, outcome) = match answer {
            mcp::Answer::Accept => {
                match self
                    .approve_and_run(caller, &by, &row.id, &row.input_sha256, catalog)
                    .await
                {
                    Ok(done) => {
                        let outcome = match done.state {
                            State::Executed => "executed",
                            State::InDoubt => "in_doubt",
                            _ => "failed",
                        };
                        let envelope = done.result.clone().unwrap_or_else(|| {
                            json!({"ok": false, "error": done.error.clone().unwrap_or_default()})
                        });
                        let output = catalog.served(name).and_then(|s| s.output());
                        (to_result(&envelope, output), outcome)
                    }
                    Err(e) => (error_result(&e.to_string()), "error"),
                }
            }
            mcp::Answer::Decline(why) => {
                let reason = format!("the user {why} at the confirmation prompt");
                let _ = self.queue.reject(&row.id, &by, Some(&reason));
                (
                    error_result(&format!(
                        "The user {why} running '{}'; it did not run. Do not retry it unless the user asks again.",
                        row.action_name
                    )),
                    "declined",
                )
            }
            mcp::Answer::Unavailable(why) => {
                tracing::debug!("elicitation failed, the call stays queued: {why}");
                let envelope = json!({
                    "ok": true,
                    "status": "pending_approval",
                    "pendingActionId": row.id,
                    "message": objectstack_bridge::runtime::pending_message(&row.action_name, &row.id),
                });
                let output = catalog.served(name).and_then(|s| s.output());
                (to_result(&envelope, output), "pending")
            }
        };
        self.audit
            .record(caller, name, sha, outcome, Some(&row.id), started.elapsed());
        result
    }

    /// Approves `id` as `by` (bound to `sha`) and executes it at once under
    /// the approver's key, exactly once (the queue's claim).
    async fn approve_and_run(
        &self,
        approver: &Caller,
        by: &str,
        id: &str,
        sha: &str,
        catalog: &Catalog,
    ) -> Result<PendingAction, ApprovalError> {
        self.queue.approve(id, by, sha)?;
        let ran = with_caller(
            approver.key.clone(),
            catalog.registry.execute_pending(id, &executor_options()),
        )
        .await;
        match ran {
            // An executor woken by the approval (another gateway sharing
            // the queue) claimed it first: its outcome is the answer.
            Err(ApprovalError::AlreadyDecided { .. }) => self.outcome_elsewhere(id).await,
            other => other,
        }
    }

    /// The row once the executor that claimed it recorded an outcome (or
    /// as it is when that takes longer than a backend call may).
    async fn outcome_elsewhere(&self, id: &str) -> Result<PendingAction, ApprovalError> {
        let deadline = Instant::now() + self.config.backend_timeout + Duration::from_secs(5);
        loop {
            let row = self.queue.get(id)?;
            if row.state != State::Executing || Instant::now() >= deadline {
                return Ok(row);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `POST /approvals/{id}/approve`.
    pub(crate) async fn approve(
        &self,
        approver: &Caller,
        id: &str,
        sha: &str,
    ) -> Result<Decision, ApprovalError> {
        let started = Instant::now();
        let catalog = self.catalog();
        let by = approver.actor_id();
        let done = self.approve_and_run(approver, &by, id, sha, &catalog).await;
        let done = match done {
            Ok(done) => done,
            Err(ApprovalError::NoDispatcher { .. }) => {
                self.audit.record(
                    approver,
                    "approve",
                    Some(sha.to_owned()),
                    "approved",
                    Some(id),
                    started.elapsed(),
                );
                return Ok(Decision {
                    state: "approved",
                    result: None,
                    error: Some("approved, but no tool of that name is served now; it waits for a gateway that serves it".into()),
                });
            }
            Err(e @ ApprovalError::OutcomeNotRecorded { .. }) => {
                // It ran (or may have): say so, not "internal error".
                tracing::warn!(pending = %id, "{e}");
                self.audit.record(
                    approver,
                    "approve",
                    Some(sha.to_owned()),
                    "in_doubt",
                    Some(id),
                    started.elapsed(),
                );
                return Ok(Decision {
                    state: "in_doubt",
                    result: None,
                    error: Some(e.to_string()),
                });
            }
            Err(e) => return Err(e),
        };
        let state = match done.state {
            State::Executed => "executed",
            State::Executing | State::InDoubt => done.state.as_str(),
            _ => "failed",
        };
        self.audit.record(
            approver,
            "approve",
            Some(sha.to_owned()),
            state,
            Some(id),
            started.elapsed(),
        );
        Ok(Decision {
            state,
            result: done.result,
            error: done.error,
        })
    }

    /// `POST /approvals/{id}/reject`.
    pub(crate) fn reject(
        &self,
        by: &Caller,
        id: &str,
        reason: Option<&str>,
    ) -> Result<PendingAction, ApprovalError> {
        let started = Instant::now();
        let row = self.queue.reject(id, &by.actor_id(), reason)?;
        self.audit.record(
            by,
            "reject",
            Some(row.input_sha256.clone()),
            "rejected",
            Some(id),
            started.elapsed(),
        );
        Ok(row)
    }

    /// The gateway's read-only lookup: the caller's own pending actions.
    fn lookup(&self, caller: &Caller, arguments: &Map<String, Value>) -> CallToolResult {
        let owner = caller.actor_id();
        let view = |row: &PendingAction| {
            let mut out = Map::new();
            out.insert("pendingActionId".into(), json!(row.id));
            out.insert("tool".into(), json!(row.tool_name));
            out.insert("state".into(), json!(row.state.as_str()));
            out.insert(
                "proposedAt".into(),
                json!(objectstack_bridge::approval::format_timestamp(
                    row.created_at
                )),
            );
            if let Some(deadline) = row.deadline(self.queue.ttl()) {
                out.insert(
                    "deadline".into(),
                    json!(objectstack_bridge::approval::format_timestamp(deadline)),
                );
            }
            if let Some(by) = &row.decided_by {
                out.insert("decidedBy".into(), json!(by));
            }
            if let Some(reason) = &row.reason {
                out.insert("reason".into(), json!(reason));
            }
            if let Some(result) = &row.result {
                out.insert("result".into(), result.clone());
            }
            if let Some(error) = &row.error {
                out.insert("error".into(), json!(error));
            }
            Value::Object(out)
        };
        match arguments.get("pendingActionId") {
            Some(Value::String(id)) => match self.queue.get(id) {
                Ok(row) if row.proposer.id == owner => json_result(&view(&row)),
                Ok(_) | Err(ApprovalError::NotFound { .. }) => error_result(&format!(
                    "you have no pending action `{id}`; call {PENDING_TOOL} without arguments to list yours"
                )),
                Err(e) => error_result(&e.to_string()),
            },
            Some(_) => error_result("`pendingActionId` must be a string"),
            // The store picks the caller's 20 newest readable rows, a page
            // at a time past any that cannot be read; the rest of the
            // queue is never read.
            None => {
                const MINE: usize = 20;
                let filter = ListFilter {
                    proposer_id: Some(owner),
                    order: ListOrder::NewestFirst,
                    ..ListFilter::default()
                };
                let mut mine: Vec<Value> = Vec::with_capacity(MINE);
                for page in self.queue.pages(&filter, MINE) {
                    let page = match page {
                        Ok(page) => page,
                        Err(e) => return error_result(&e.to_string()),
                    };
                    let room = MINE - mine.len();
                    mine.extend(page.rows.iter().take(room).map(view));
                    if mine.len() == MINE {
                        break;
                    }
                }
                json_result(&json!({ "pendingActions": mine }))
            }
        }
    }
}

fn pending_id(envelope: &Value) -> Option<String> {
    (envelope.get("status").and_then(Value::as_str) == Some("pending_approval"))
        .then(|| envelope.get("pendingActionId").and_then(Value::as_str))
        .flatten()
        .map(str::to_owned)
}

fn outcome(envelope: &Value) -> &'static str {
    if pending_id(envelope).is_some() {
        "pending"
    } else if envelope.get("ok") == Some(&Value::Bool(true)) {
        "ok"
    } else if envelope.get("action").is_none() {
        // Refused before anything ran (unknown tool, invalid arguments).
        "refused"
    } else {
        "error"
    }
}

/// The bridge's envelope as an MCP result: `ok: false` is a tool error
/// carrying the message; otherwise the envelope as text and, for a tool
/// with an `outputSchema` (`output`), the action's result (or the pending
/// envelope) as `structuredContent`, once the schema accepts it. A result
/// it refuses is a tool error that says the action ran: clients refuse a
/// success whose structured content does not conform.
fn to_result(envelope: &Value, output: Option<&output::OutputCheck>) -> CallToolResult {
    if envelope.get("ok") != Some(&Value::Bool(true)) {
        let message = envelope
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("the call failed");
        return error_result(message);
    }
    let Some(output) = output else {
        return CallToolResult::success(vec![ContentBlock::text(envelope.to_string())]);
    };
    let structured = if pending_id(envelope).is_some() {
        envelope.clone()
    } else {
        envelope.get("result").cloned().unwrap_or(Value::Null)
    };
    match output.check(&structured) {
        Ok(()) => {
            // MCP: a result with structured content also carries it
            // serialised in a text block, for clients that read only text.
            let serialised = structured.to_string();
            let mut result = CallToolResult::success(vec![ContentBlock::text(serialised)]);
            result.structured_content = Some(structured);
            result
        }
        Err(why) => error_result(&format!(
            "The action ran (do not run it again), but its result does not match the tool's \
             outputSchema ({why}), so it cannot be returned as structured content. What it \
             returned: {envelope}"
        )),
    }
}

fn json_result(value: &Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(value.to_string())])
}

fn error_result(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_owned())])
}

/// A name from a request, as an error quotes it back: cut at 120
/// characters, on one line, with nothing a terminal would act on.
pub(crate) fn shown_name(name: &str) -> String {
    const MOST: usize = 120;
    // Cut first, so an escape is never cut in half.
    match name.char_indices().nth(MOST) {
        Some((cut, _)) => format!(
            "{}…",
            objectstack_spec::text::line_safe(name.get(..cut).unwrap_or_default())
        ),
        None => objectstack_spec::text::line_safe(name).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_back_cut_and_on_one_line() {
        assert_eq!(shown_name("action_x"), "action_x");
        let shown = shown_name(&format!("\u{1b}[31m{}\u{202e}\n", "x".repeat(300)));
        assert!(!shown.contains(['\u{1b}', '\u{202e}', '\n']), "{shown}");
        assert!(
            shown.ends_with('…') && shown.chars().count() < 140,
            "{shown}"
        );
        // Control characters only: each escaped whole, never cut in half.
        let shown = shown_name(&"\u{1b}".repeat(200));
        assert!(shown.trim_end_matches('…').ends_with("\\u001b"), "{shown}");
    }
}
