//! The gateway's cost on loopback, against the fake ObjectStack server of
//! the tests (`cargo bench -p objectstack-gateway`):
//!
//! - `direct_rest`: one `POST /api/v1/actions/...` straight to the backend;
//! - `gateway_call`: the same call as an MCP `tools/call` over Streamable
//!   HTTP through the gateway (validation, dispatch, audit line); the
//!   difference of the two medians is the gateway's added latency;
//! - `stdio_call`: the same call over the stdio transport (`serve_io` on an
//!   in-process pipe, so the screen in front of rmcp is measured too);
//! - `gateway_16_clients`: 16 concurrent MCP clients, 64 calls each
//!   (throughput in calls/s);
//! - `tools_list_10000`: `tools/list` of a 10,000-tool stack over HTTP, by
//!   rmcp's client (which also parses the 10,000 tools into its types);
//! - `tools_list_10000_raw`: the same request as plain HTTP, reading the
//!   answer's bytes: the gateway's own share.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../tests/support/fake.rs"]
mod fake;

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmcp::model::ProtocolVersion;
use serde_json::json;

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.json");
    std::fs::write(&small, common::stack_with(20).to_string()).unwrap();
    let large = dir.path().join("large.json");
    std::fs::write(&large, common::stack_with(10_000).to_string()).unwrap();

    let fake = runtime.block_on(fake::Fake::start());
    let url = runtime.block_on(common::start_gateway(&fake.url, &small, dir.path()));
    let single = runtime.block_on(common::client(&url, ProtocolVersion::V_2025_11_25));
    let http = reqwest::Client::new();
    let direct = format!("{}/api/v1/actions/support_ticket/do_thing_7", fake.url);

    let mut group = c.benchmark_group("gateway");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("direct_rest", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let response = http
                    .post(&direct)
                    .bearer_auth(common::KEY)
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
                let result = single.call_tool(common::params()).await.unwrap();
                assert_eq!(result.is_error, Some(false));
            })
        });
        fake.clear();
    });

    let piped = runtime.block_on(common::stdio_client(&fake.url, &small, dir.path()));
    group.bench_function("stdio_call", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let result = piped.call_tool(common::params()).await.unwrap();
                assert_eq!(result.is_error, Some(false));
            })
        });
        fake.clear();
    });

    let clients: Vec<_> = runtime.block_on(async {
        let mut out = Vec::new();
        for _ in 0..16 {
            out.push(std::sync::Arc::new(
                common::client(&url, ProtocolVersion::V_2025_11_25).await,
            ));
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
                            let r = client.call_tool(common::params()).await.unwrap();
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

    let large_url = runtime.block_on(common::start_gateway(&fake.url, &large, dir.path()));
    let lister = runtime.block_on(common::client(&large_url, ProtocolVersion::V_2025_11_25));
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
    let session = runtime.block_on(common::raw_session(&http, &large_url));
    group.bench_function("tools_list_10000_raw", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
                let bytes = common::raw_post(&http, &large_url, Some(&session), &body)
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

criterion_group!(gateway, benches);
criterion_main!(gateway);
