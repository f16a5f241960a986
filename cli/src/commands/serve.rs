//! `objectstack-ai serve`: the MCP gateway. Serves a stack's action tools
//! to any MCP client (stdio or Streamable HTTP) and runs them on an
//! ObjectStack server under the caller's own key; a thin wrapper over
//! `objectstack_gateway`.
//!
//! Over stdio the key is `OBJECTSTACK_API_KEY`; over HTTP every request
//! carries its own `Authorization: Bearer`. Logs go to stderr (`RUST_LOG`
//! sets the level, `info` by default); so do audit lines unless `--audit`
//! names a file.
//!
//! Exit codes: 0 after a clean shutdown, 1 when the stack has errors (each
//! is printed), 2 when a file, flag or listener is unusable.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use objectstack_gateway::{ApiKey, Config, ConfirmMode, Gateway, GatewayError};
use objectstack_spec::text::{line_safe, terminal_safe};

use crate::{EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE};

/// Arguments of `objectstack-ai serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The stack files, composed in order (typically `dist/objectstack.json`);
    /// not `-`: the gateway reloads its files when they change, and over
    /// stdio standard input carries MCP messages.
    #[arg(long = "stack", value_name = "FILE", required = true, num_args = 1..)]
    stacks: Vec<PathBuf>,
    /// The ObjectStack server script, flow and field-write actions run on.
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// The base URL `api` actions' relative targets resolve against.
    #[arg(long, value_name = "URL")]
    api_base_url: Option<String>,
    /// The MCP transport.
    #[arg(long, value_enum, default_value_t = TransportArg::Stdio)]
    transport: TransportArg,
    /// Where the HTTP transport listens.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    /// The approval queue: an SQLite file (or sqlite:PATH), or a
    /// postgres:// URL that several gateways share (put the password in
    /// PGPASSWORD, not the URL).
    #[arg(
        long,
        value_name = "FILE|URL",
        default_value = "objectstack-approvals.sqlite"
    )]
    approvals: PathBuf,
    /// Serve only what this agent may invoke.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// How actions that need confirmation are confirmed.
    #[arg(long, value_enum, default_value_t = ConfirmArg::Queue)]
    confirm: ConfirmArg,
    /// Append audit lines to this file instead of stderr.
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// Timeout of each call to the ObjectStack server, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    timeout: u64,
    /// Also answer HTTP requests whose Host is this name (repeatable):
    /// `name` with any port, or `name:port` with that port only (an IPv6
    /// address in brackets); loopback names are always accepted.
    #[arg(long, value_name = "HOST")]
    allowed_host: Vec<String>,
    /// Also answer browser requests from this origin (repeatable;
    /// `https://gw.example.com`), e.g. the gateway's own name behind a
    /// reverse proxy that rewrites `Host`. A request whose `Origin` is
    /// neither a page on an allowed host nor one of these gets 403; clients
    /// that send no `Origin` are not affected. The gateway sends no CORS
    /// headers, so pages on other origins still cannot call it.
    #[arg(long, value_name = "ORIGIN", value_parser = origin)]
    allowed_origin: Vec<String>,
    /// How long a pending action waits for a decision before it expires
    /// (`30m`, `24h`, `7d`; `off` never).
    #[arg(long, value_name = "DURATION", default_value = "24h", value_parser = ttl)]
    approval_ttl: Ttl,
    /// POST a JSON message (Slack-compatible `text`, structured fields, a
    /// link to the inbox) here when an action is queued, decided, run,
    /// failed or in doubt.
    #[arg(long, value_name = "URL")]
    notify_url: Option<String>,
    /// The address people reach this gateway at (`https://…`), for the
    /// links in notifications; `https` also makes the inbox cookie Secure.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Let a proposer approve their own action (four eyes off).
    #[arg(long)]
    allow_self_approval: bool,
}

/// A parsed `--approval-ttl` (clap needs a named type for `Option`).
#[derive(Debug, Clone, Copy)]
struct Ttl(Option<Duration>);

fn origin(text: &str) -> Result<String, String> {
    objectstack_gateway::parse_origin(text)
}

fn ttl(text: &str) -> Result<Ttl, String> {
    objectstack_gateway::parse_duration(text).map(Ttl)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TransportArg {
    /// Standard input and output (one client; the key from OBJECTSTACK_API_KEY).
    Stdio,
    /// Streamable HTTP at /mcp, with the approvals API at /approvals.
    Http,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ConfirmArg {
    /// Propose to the approval queue.
    Queue,
    /// Ask the present user (MCP elicitation), else the queue.
    Elicit,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    if args.stacks.iter().any(|p| crate::input::is_stdin(p)) {
        eprintln!(
            "error: --stack -: serve reads its stack from files, which it reloads when they \
             change, and over stdio standard input carries MCP messages; write the stack to a \
             file and pass its path"
        );
        return Ok(EXIT_UNUSABLE);
    }
    init_logging();
    let mut config = Config::new(args.stacks);
    config.server = args.server;
    config.api_base_url = args.api_base_url;
    config.approvals = args.approvals;
    config.agent = args.agent;
    config.audit = args.audit;
    config.backend_timeout = Duration::from_secs(args.timeout.max(1));
    config.allowed_hosts.extend(args.allowed_host);
    config.allowed_origins.extend(args.allowed_origin);
    config.inbox.approval_ttl = args.approval_ttl.0;
    config.inbox.allow_self_approval = args.allow_self_approval;
    config.inbox.notify = args.notify_url.map(objectstack_gateway::NotifyConfig::new);
    config.inbox.public_url = args.public_url;
    // The input limit every command reads by (`OBJECTSTACK_AI_MAX_INPUT_BYTES`).
    config.max_stack_bytes = crate::input::max_bytes();
    config.executor_key = std::env::var("OBJECTSTACK_EXECUTOR_KEY")
        .ok()
        .and_then(|k| ApiKey::new(&k));
    config.confirm = match args.confirm {
        ConfirmArg::Queue => ConfirmMode::Queue,
        ConfirmArg::Elicit => ConfirmMode::Elicit,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let code = runtime.block_on(async move {
        let gateway = match Gateway::new(config) {
            Ok(g) => g,
            Err(e) => {
                // It quotes file names and names from the stack: escaped. An
                // invalid stack's diagnostics, one a line, come escaped.
                let message = e.to_string();
                let shown = match &e {
                    GatewayError::InvalidStack { .. } => terminal_safe(&message),
                    _ => line_safe(&message),
                };
                eprintln!("error: {shown}");
                return Ok(match e {
                    GatewayError::InvalidStack { .. } => EXIT_FINDINGS,
                    _ => EXIT_UNUSABLE,
                });
            }
        };
        let served = match args.transport {
            TransportArg::Stdio => {
                let key = std::env::var("OBJECTSTACK_API_KEY")
                    .ok()
                    .and_then(|k| ApiKey::new(&k));
                if key.is_none() {
                    tracing::warn!(
                        "OBJECTSTACK_API_KEY is not set: backend calls carry no key and the server will refuse them"
                    );
                }
                gateway.serve_stdio(key).await
            }
            TransportArg::Http => {
                if !args.listen.ip().is_loopback() {
                    tracing::warn!(addr = %args.listen, "listening beyond loopback: put TLS in front of it");
                }
                gateway
                    .serve_http(args.listen, std::future::pending())
                    .await
            }
        };
        match served {
            Ok(()) => Ok(EXIT_OK),
            Err(e) => {
                eprintln!("error: {}", line_safe(&e.to_string()));
                Ok(EXIT_UNUSABLE)
            }
        }
    });
    // Over stdio, a read of standard input stays blocked on a thread of the
    // runtime until the client writes or closes it; once served, the
    // process does not wait for it (SIGTERM would otherwise not end an
    // idle stdio gateway).
    runtime.shutdown_timeout(Duration::from_secs(1));
    code
}

/// Logs on stderr (stdout is the protocol in stdio mode), `RUST_LOG`
/// filtered, `info` by default (`warn` for rmcp, whose `info` lines echo every session).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
