//! The gateway's cost on loopback, against the fake ObjectStack server of
//! the tests (`cargo bench -p objectstack-gateway`):
//!
//! - `direct_rest`: one `POST /api/v1/actions/...` straight to the backend;
//! - `gateway_call`: the same call as an MCP `tools/call` over Streamable
//!   HTTP through the gateway (validation, dispatch, audit line); the
//!   difference of the two medians is the gateway's added latency;
//! - `gateway_16_clients`: 16 concurrent MCP clients, 64 calls each
//!   (throughput in calls/s);
//! - `tools_list_10000`: `tools/list` of a 10,000-tool stack over HTTP, by
//!   rmcp's client (which also parses the 10,000 tools into its types);
//! - `tools_list_10000_raw`: the same request as plain HTTP, reading the
//!   answer's bytes: the gateway's own share.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/fake.rs"]
mod fake;

use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use objectstack_gateway::{Config, Gateway};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

const KEY: &str = "osk_bench_0123456789";

fn stack_with(actions: usize) -> Value {
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

async fn start_gateway(fake: &fake::Fake, stack: &Path, dir: &Path) -> String {
    let mut config = Config::new(vec![stack.to_owned()]);
    config.server = Some(fake.url.clone());
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

async fn client(url: &str) -> RunningService<RoleClient, ClientConfig> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(KEY),
    );
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("bench", "0"),
    )
    .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_11_25)
    .serve(transport)
    .await
    .unwrap()
}

fn call_params() -> CallToolRequestParams {
    let arguments = match json!({"note": "bench"}) {
        Value::Object(m) => m,
        _ => unreachable!(),
    };
    CallToolRequestParams::new("action_do_thing_7").with_arguments(arguments)
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.json");
    std::fs::write(&small, stack_with(20).to_string()).unwrap();
    let large = dir.path().join("large.json");
    std::fs::write(&large, stack_with(10_000).to_string()).unwrap();

    let fake = runtime.block_on(fake::Fake::start());
    let url = runtime.block_on(start_gateway(&fake, &small, dir.path()));
    let single = runtime.block_on(client(&url));
    let http = reqwest::Client::new();
    let direct = format!("{}/api/v1/actions/support_ticket/do_thing_7", fake.url);

    let mut group = c.benchmark_group("gateway");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("direct_rest", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let response = http
                    .post(&direct)
                    .bearer_auth(KEY)
                    .json(&json!({"params": {"note": "bench"}}))
                    .send()
                    .await
                    .unwrap();
                response.bytes().await.unwrap()
            })
        });
    });
    group.bench_function("gateway_call", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let result = single.call_tool(call_params()).await.unwrap();
                assert_eq!(result.is_error, Some(false));
            })
        });
        fake.clear();
    });

    let clients: Vec<_> = runtime.block_on(async {
        let mut out = Vec::new();
        for _ in 0..16 {
            out.push(std::sync::Arc::new(client(&url).await));
        }
        out
    });
    const PER_CLIENT: usize = 64;
    group.throughput(Throughput::Elements((16 * PER_CLIENT) as u64));
    group.sample_size(10);
    group.bench_function("gateway_16_clients", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut tasks = Vec::new();
                for client in &clients {
                    let client = client.clone();
                    tasks.push(tokio::spawn(async move {
                        for _ in 0..PER_CLIENT {
                            let r = client.call_tool(call_params()).await.unwrap();
                            assert_eq!(r.is_error, Some(false));
                        }
                    }));
                }
                for t in tasks {
                    t.await.unwrap();
                }
            });
            fake.clear();
        });
    });
    group.finish();

    let large_url = runtime.block_on(start_gateway(&fake, &large, dir.path()));
    let lister = runtime.block_on(client(&large_url));
    let mut group = c.benchmark_group("gateway");
    group.sample_size(10);
    group.bench_function("tools_list_10000", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let tools = lister.list_all_tools().await.unwrap();
                assert_eq!(tools.len(), 10_000);
            })
        });
    });
    let session = runtime.block_on(raw_session(&http, &large_url));
    group.bench_function("tools_list_10000_raw", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
                let bytes = raw_post(&http, &large_url, Some(&session), &body)
                    .await
                    .bytes()
                    .await
                    .unwrap();
                assert!(bytes.len() > 1_000_000);
            })
        });
    });
    group.finish();
}

async fn raw_post(
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

/// An initialized session, by hand: its `mcp-session-id`.
async fn raw_session(http: &reqwest::Client, url: &str) -> String {
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

criterion_group!(gateway, benches);
criterion_main!(gateway);
