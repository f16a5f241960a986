//! The approval stores under executors: claims per second (claim and
//! record the outcome, nothing dispatched) and approve-to-executed latency,
//! on the SQLite file and on PostgreSQL, with 1 and 16 executors (each its
//! own store, as separate hosts have); and what the inbox and the model's
//! lookup read from a queue with a long history.
//!
//! PostgreSQL runs when `OBJECTSTACK_TEST_POSTGRES_URL` names a server
//! (`.ci/postgres.sh`); otherwise only SQLite is measured, and the bench
//! says so. SQLite executors poll every 10 ms (SQLite cannot announce an
//! approval); PostgreSQL executors sleep until `NOTIFY` wakes them.
//!
//! `cargo bench -p objectstack-bridge --features postgres --bench approval_store`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use objectstack_bridge::approval::{
    ApprovalQueue, ApprovalStore, ListCursor, ListFilter, ListOrder, OpenMode, Outcome, Proposal,
    QueueLocation,
};
use objectstack_bridge::runtime::Actor;
use serde_json::json;

const BATCH: usize = 400;
const TOOL: &str = "action_archive";

/// A fresh queue: its location, and what removes it.
struct Queue {
    location: String,
    _cleanup: Cleanup,
}

enum Cleanup {
    File(PathBuf),
    Schema(String, String),
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        match self {
            Cleanup::File(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Cleanup::Schema(url, schema) => sql(url, &format!("DROP SCHEMA {schema} CASCADE")),
        }
    }
}

fn sql(url: &str, statement: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let driver = tokio::spawn(connection);
        client.batch_execute(statement).await.unwrap();
        drop(client);
        let _ = driver.await;
    });
}

fn fresh(kind: &str, n: usize) -> Option<Queue> {
    match kind {
        "sqlite" => {
            let dir = std::env::temp_dir().join(format!(
                "objectstack-bench-{}-{n}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            Some(Queue {
                location: dir.join("q.db").display().to_string(),
                _cleanup: Cleanup::File(dir),
            })
        }
        _ => {
            let url = std::env::var("OBJECTSTACK_TEST_POSTGRES_URL").ok()?;
            let schema = format!("bench_{}_{n}", std::process::id());
            sql(
                &url,
                &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"),
            );
            let sep = if url.contains('?') { '&' } else { '?' };
            Some(Queue {
                location: format!("{url}{sep}options=-csearch_path%3D{schema}"),
                _cleanup: Cleanup::Schema(url, schema),
            })
        }
    }
}

fn open(location: &str) -> Arc<ApprovalQueue> {
    let store: Arc<dyn ApprovalStore> = QueueLocation::parse(std::ffi::OsStr::new(location))
        .unwrap()
        .open(OpenMode::Create)
        .unwrap();
    Arc::new(ApprovalQueue::new(store))
}

fn propose(queue: &ApprovalQueue, n: usize) -> (String, String) {
    propose_as(queue, n, "u1")
}

fn propose_as(queue: &ApprovalQueue, n: usize, proposer: &str) -> (String, String) {
    let row = queue
        .propose(Proposal {
            tool_name: TOOL.into(),
            action_name: "archive".into(),
            object_name: None,
            input: serde_json::from_value(json!({"n": n})).unwrap(),
            executable_sha256: "ab".repeat(32),
            conversation_id: None,
            message_id: None,
            tool_call_id: None,
            trace_id: None,
            proposer: Actor::new(proposer),
        })
        .unwrap()
        .action;
    (row.id, row.input_sha256)
}

/// Claims and finishes everything approved, from `executors` threads.
fn drain(queues: &[Arc<ApprovalQueue>]) -> usize {
    let tools = vec![TOOL.to_owned()];
    std::thread::scope(|s| {
        let handles: Vec<_> = queues
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let tools = &tools;
                s.spawn(move || {
                    let mut done = 0;
                    while let Some(claim) = q
                        .claim_next(tools, &format!("w{i}"), Duration::from_secs(600))
                        .unwrap()
                    {
                        q.finish(&claim, Outcome::Executed(json!({"ok": true})))
                            .unwrap();
                        done += 1;
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

fn claims(c: &mut Criterion) {
    let mut group = c.benchmark_group("approval_store/claims");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(BATCH as u64));
    for kind in ["sqlite", "postgres"] {
        for executors in [1, 16] {
            let Some(queue) = fresh(kind, executors) else {
                eprintln!("approval_store: no PostgreSQL server configured, measuring SQLite only");
                continue;
            };
            let approver = open(&queue.location);
            let queues: Vec<_> = (0..executors).map(|_| open(&queue.location)).collect();
            let mut n = 0;
            group.bench_function(format!("{kind}/{executors}"), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        for _ in 0..BATCH {
                            let (id, sha) = propose(&approver, n);
                            n += 1;
                            approver.approve(&id, "alice", &sha).unwrap();
                        }
                        let started = Instant::now();
                        assert_eq!(drain(&queues), BATCH);
                        total += started.elapsed();
                    }
                    total
                });
            });
        }
    }
    group.finish();
}

/// Executors waiting for work; each executed action's id is sent back.
struct Executors {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Executors {
    fn start(location: &str, count: usize, done: &mpsc::Sender<String>) -> Executors {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..count)
            .map(|i| {
                let q = open(location);
                let stop = stop.clone();
                let done = done.clone();
                let signal = Arc::new((Mutex::new(false), Condvar::new()));
                let notify = signal.clone();
                let announced = q
                    .watch_approved(Arc::new(move || {
                        *notify.0.lock().unwrap() = true;
                        notify.1.notify_one();
                    }))
                    .unwrap();
                let idle = if announced {
                    Duration::from_secs(1)
                } else {
                    Duration::from_millis(10)
                };
                std::thread::spawn(move || {
                    let tools = vec![TOOL.to_owned()];
                    while !stop.load(Ordering::Relaxed) {
                        match q
                            .claim_next(&tools, &format!("w{i}"), Duration::from_secs(600))
                            .unwrap()
                        {
                            Some(claim) => {
                                let row = q
                                    .finish(&claim, Outcome::Executed(json!({"ok": true})))
                                    .unwrap();
                                let _ = done.send(row.id);
                            }
                            None => {
                                let (woken, cv) = &*signal;
                                let guard = woken.lock().unwrap();
                                let (mut guard, _) =
                                    cv.wait_timeout_while(guard, idle, |w| !*w).unwrap();
                                *guard = false;
                            }
                        }
                    }
                })
            })
            .collect();
        Executors { stop, threads }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

fn latency(c: &mut Criterion) {
    let mut group = c.benchmark_group("approval_store/approve_to_executed");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    for kind in ["sqlite", "postgres"] {
        for executors in [1, 16] {
            let Some(queue) = fresh(kind, 100 + executors) else {
                continue;
            };
            let approver = open(&queue.location);
            let (tx, rx) = mpsc::channel();
            let running = Executors::start(&queue.location, executors, &tx);
            // Let the listeners connect.
            std::thread::sleep(Duration::from_millis(500));
            let mut n = 0;
            group.bench_function(format!("{kind}/{executors}"), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let (id, sha) = propose(&approver, n);
                        n += 1;
                        let started = Instant::now();
                        approver.approve(&id, "alice", &sha).unwrap();
                        let executed = rx.recv_timeout(Duration::from_secs(30)).unwrap();
                        total += started.elapsed();
                        assert_eq!(executed, id);
                    }
                    total
                });
            });
            running.stop();
        }
    }
    group.finish();
}

/// Rows in the listing benches' queue: all decided but the last
/// [`LIVE`], a tenth of them by a second proposer.
const ROWS: usize = 3000;
const LIVE: usize = 30;

/// What the inbox and the model's lookup read from a queue with a long
/// history: every row (what both read before the store could page), the
/// rows that may still change plus one 100-row page of history (the inbox
/// now), and one proposer's 20 newest (the lookup now).
fn listings(c: &mut Criterion) {
    let mut group = c.benchmark_group("approval_store/list");
    group.sample_size(20);
    for kind in ["sqlite", "postgres"] {
        let Some(queue) = fresh(kind, 200) else {
            continue;
        };
        let q = open(&queue.location);
        for n in 0..ROWS {
            let (id, _) = if n % 10 == 0 {
                propose_as(&q, n, "u2")
            } else {
                propose(&q, n)
            };
            if n < ROWS - LIVE {
                q.reject(&id, "alice", Some("no")).unwrap();
            }
        }
        // The statistics autovacuum keeps on a live database; without
        // them the planner sorts where an index would stop at the limit.
        if let Cleanup::Schema(url, schema) = &queue._cleanup {
            sql(url, &format!("ANALYZE {schema}.pending_actions"));
        }
        group.bench_function(format!("{kind}/everything"), |b| {
            b.iter(|| q.list(&ListFilter::default()).unwrap().rows.len());
        });
        group.bench_function(format!("{kind}/inbox"), |b| {
            b.iter(|| {
                let live = q
                    .list(&ListFilter {
                        terminal: Some(false),
                        ..ListFilter::default()
                    })
                    .unwrap();
                let history = q
                    .list(&ListFilter {
                        terminal: Some(true),
                        order: ListOrder::RecentlyChanged,
                        limit: Some(100),
                        ..ListFilter::default()
                    })
                    .unwrap();
                live.rows.len() + history.rows.len()
            });
        });
        // The last history page, 2,900 decisions deep: by offset (how
        // pages were read before) and after the last row of the page
        // before (keyset, how `ApprovalQueue::pages` reads them now).
        let deep = ListFilter {
            terminal: Some(true),
            order: ListOrder::RecentlyChanged,
            limit: Some(100),
            ..ListFilter::default()
        };
        let before_last = q
            .list(&ListFilter {
                offset: Some(2_899),
                limit: Some(1),
                ..deep.clone()
            })
            .unwrap()
            .rows
            .pop()
            .map(|row| ListCursor::of(&row, ListOrder::RecentlyChanged));
        group.bench_function(format!("{kind}/deep_page_by_offset"), |b| {
            b.iter(|| {
                q.list(&ListFilter {
                    offset: Some(2_900),
                    ..deep.clone()
                })
                .unwrap()
                .rows
                .len()
            });
        });
        group.bench_function(format!("{kind}/deep_page_by_key"), |b| {
            b.iter(|| {
                q.list(&ListFilter {
                    after: before_last.clone(),
                    ..deep.clone()
                })
                .unwrap()
                .rows
                .len()
            });
        });
        group.bench_function(format!("{kind}/lookup"), |b| {
            b.iter(|| {
                q.list(&ListFilter {
                    proposer_id: Some("u2".into()),
                    order: ListOrder::NewestFirst,
                    limit: Some(20),
                    ..ListFilter::default()
                })
                .unwrap()
                .rows
                .len()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, claims, latency, listings);
criterion_main!(benches);
