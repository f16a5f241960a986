//! Throughput with 16 concurrent clients, and what each call costs the
//! gateway alone (`cargo bench -p objectstack-gateway --bench throughput`).
//!
//! The gateway runs on a Tokio runtime of its own whose threads are named
//! `gateway`; the fake ObjectStack server and the clients run on another.
//! Reading each thread's CPU time from `/proc/self/task/*/stat` splits the
//! run's CPU between the gateway and everything else, so the figure "CPU
//! per call in the gateway" holds however busy the machine is, and
//! `cores / cpu_per_call` is what the gateway alone sustains on that many
//! cores. The wall-clock rate is also printed (clients, fake and gateway
//! sharing the machine).
//!
//! Clients:
//! - `rmcp-2025-11-25`: rmcp's client, a stateful session per client;
//! - `rmcp-2026-07-28`: rmcp's client on the sessionless revision;
//! - `raw-2025-11-25`: plain HTTP POSTs of `tools/call` in an initialized
//!   session, reading each answer (SSE) whole: the lightest real client.
//!
//! `--calls N` sets the calls per client (default 200).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../tests/support/fake.rs"]
mod fake;

use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;
use serde_json::json;

const CLIENTS: usize = 16;

fn main() {
    let mut calls = 200usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--calls"
            && let Some(n) = args.next().and_then(|n| n.parse().ok())
        {
            calls = n;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let stack = dir.path().join("stack.json");
    std::fs::write(&stack, common::stack_with(20).to_string()).unwrap();

    let gateway_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("gateway")
        .enable_all()
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("load")
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(fake::Fake::start());
    let url = gateway_rt.block_on(common::start_gateway(&fake.url, &stack, dir.path()));
    println!(
        "{CLIENTS} clients x {calls} calls of action_do_thing_7, 2 gateway threads, 2 load threads"
    );
    println!(
        "| client | calls/s (wall, all on this machine) | gateway CPU per call | gateway alone on 2 cores | all CPU per call (clients, fake, gateway) | all on 2 cores |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for mode in ["rmcp-2025-11-25", "rmcp-2026-07-28", "raw-2025-11-25"] {
        // A short warm-up, then the measured run.
        rt.block_on(run(mode, &url, CLIENTS, 8));
        fake.clear();
        let cpu_before = gateway_cpu();
        let all_before = process_cpu();
        let started = Instant::now();
        let done = rt.block_on(run(mode, &url, CLIENTS, calls));
        let wall = started.elapsed();
        let cpu = gateway_cpu().saturating_sub(cpu_before);
        let all = process_cpu().saturating_sub(all_before);
        fake.clear();
        let per_call = cpu.as_secs_f64() / done as f64;
        let all_per_call = all.as_secs_f64() / done as f64;
        println!(
            "| {mode} | {:.0} | {:.0} µs | {:.0} calls/s | {:.0} µs | {:.0} calls/s |",
            done as f64 / wall.as_secs_f64(),
            per_call * 1e6,
            2.0 / per_call,
            all_per_call * 1e6,
            2.0 / all_per_call
        );
    }
}

/// The CPU time of the gateway's threads so far.
fn gateway_cpu() -> Duration {
    threads_cpu(Some("(gateway"))
}

/// The CPU time of the whole process (gateway, fake server and clients).
fn process_cpu() -> Duration {
    threads_cpu(None)
}

/// The CPU time of this process's threads whose `(comm` starts with
/// `prefix` (every thread without one).
fn threads_cpu(prefix: Option<&str>) -> Duration {
    let ticks_per_second = 100.0; // USER_HZ on Linux
    let mut ticks = 0u64;
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ...`: comm may hold spaces, so split after `)`.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if prefix.is_some_and(|p| !head.contains(p)) {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // After `)`: state is field 0, utime 11, stime 12.
        let utime: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0);
        let stime: u64 = fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
        ticks += utime + stime;
    }
    Duration::from_secs_f64(ticks as f64 / ticks_per_second)
}

async fn run(mode: &str, url: &str, clients: usize, calls: usize) -> usize {
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let url = url.to_owned();
        let mode = mode.to_owned();
        tasks.push(tokio::spawn(async move {
            match mode.as_str() {
                "raw-2025-11-25" => {
                    let http = reqwest::Client::new();
                    let session = common::raw_session(&http, &url).await;
                    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                        "params": {"name": "action_do_thing_7", "arguments": {"note": "bench"}}});
                    for _ in 0..calls {
                        let text = common::raw_post(&http, &url, Some(&session), &body)
                            .await
                            .text()
                            .await
                            .unwrap();
                        assert!(text.contains("\"isError\":false"), "{text}");
                    }
                }
                _ => {
                    let version = if mode == "rmcp-2026-07-28" {
                        ProtocolVersion::V_2026_07_28
                    } else {
                        ProtocolVersion::V_2025_11_25
                    };
                    let client = common::client(&url, version).await;
                    for _ in 0..calls {
                        let r = client.call_tool(common::params()).await.unwrap();
                        assert_eq!(r.is_error, Some(false));
                    }
                    let _ = client.cancel().await;
                }
            }
            calls
        }));
    }
    let mut done = 0;
    for t in tasks {
        done += t.await.unwrap();
    }
    done
}
