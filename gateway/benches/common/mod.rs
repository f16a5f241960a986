//! What the gateway benches share: the generated stack, rmcp clients on
//! any revision, and `tools/call` by hand over plain HTTP.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use objectstack_gateway::{Config, Gateway};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// The key every bench client sends.
pub const KEY: &str = "osk_bench_0123456789";

pub fn stack_with(actions: usize) -> Value {
    let actions: Vec<Value> = (0..actions)
        .map(|i| {
            json!({
                "name": format!("do_thing_{i}"),
                "label": format!("Do thing {i}"),
                "type": "script",
                "locations": ["list_toolbar"],
                "params": [{"name": "note", "label": "Note", "type": "text"}],
                "body": {"language": "js", "source": "return 1;"},
                "ai": {"exposed": true, "description": format!("Does thing number {i} to the tickets, when the user asks for it.")}
            })
        })
        .collect();
    json!({"objects": [{"name": "support_ticket", "fields": {}, "actions": actions}]})
}

pub fn params() -> CallToolRequestParams {
    let Value::Object(arguments) = json!({"note": "bench"}) else {
        unreachable!()
    };
    CallToolRequestParams::new("action_do_thing_7").with_arguments(arguments)
}

pub async fn client(
    url: &str,
    version: ProtocolVersion,
) -> RunningService<RoleClient, ClientConfig> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(KEY),
    );
    let config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("bench", "0"),
    )
    .with_protocol_version(version.clone());
    if version.has_initialize() {
        config.serve(transport).await.unwrap()
    } else {
        // The sessionless revision: `server/discover`, no `initialize`.
        rmcp::service::serve_client_with_lifecycle(
            config,
            transport,
            rmcp::service::ClientLifecycleMode::Discover {
                preferred_versions: vec![version],
            },
        )
        .await
        .unwrap()
    }
}

pub async fn raw_post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut request = http
        .post(url)
        .bearer_auth(KEY)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    response
}

pub async fn raw_session(http: &reqwest::Client, url: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
    let response = raw_post(http, url, None, &initialize).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = response.bytes().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = raw_post(http, url, Some(&session), &initialized).await;
    session
}

/// A gateway serving `stack` in front of `server`, on a spawned task of the
/// current runtime; its MCP URL.
pub async fn start_gateway(server: &str, stack: &Path, dir: &Path) -> String {
    let mut config = Config::new(vec![stack.to_owned()]);
    config.server = Some(server.to_owned());
    config.approvals = dir.join("approvals.sqlite");
    config.audit = Some(dir.join("audit.jsonl"));
    config.reload_interval = None;
    let gateway = Gateway::new(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = gateway
            .serve_listener(listener, std::future::pending())
            .await;
    });
    url
}

/// A gateway serving `stack` in front of `server` over an in-process pipe
/// (its stdio transport, `Gateway::serve_io`), on a spawned task of the
/// current runtime, and rmcp's client on the other end.
pub async fn stdio_client(
    server: &str,
    stack: &Path,
    dir: &Path,
) -> RunningService<RoleClient, ClientConfig> {
    let mut config = Config::new(vec![stack.to_owned()]);
    config.server = Some(server.to_owned());
    config.approvals = dir.join("stdio-approvals.sqlite");
    config.audit = Some(dir.join("stdio-audit.jsonl"));
    config.reload_interval = None;
    let gateway = Gateway::new(config).unwrap();
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (input, output) = tokio::io::split(theirs);
    tokio::spawn(async move {
        let _ = gateway
            .serve_io(objectstack_gateway::ApiKey::new(KEY), input, output)
            .await;
    });
    let config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("bench", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25);
    config.serve(tokio::io::split(ours)).await.unwrap()
}
