//! A host wiring its data engine, automation service and the default HTTP
//! client into the bridge, then calling the tools a model would call.
//!
//! ```text
//! cargo run -p objectstack-bridge --example host
//! cargo run -p objectstack-bridge --example host -- --queue approvals.db [--wait SECONDS]
//! ```
//!
//! The "external API" is a tiny HTTP server this example starts on
//! 127.0.0.1.
//!
//! Without `--queue`, the approval queue is a SQLite file in the temp
//! directory, and the example approves the destructive call itself and
//! executes it.
//!
//! With `--queue FILE`, it leaves that call pending in FILE for a person
//! to decide with the `approvals` command, and shows the part a real host
//! runs all the time: executing what was approved, from the process that
//! registers the tools, once a second (for `--wait` seconds, default 0:
//! one pass). Run it again, or with `--wait`, after approving:
//!
//! ```text
//! cargo run -p objectstack-bridge --example host -- --queue approvals.db
//! objectstack-ai approvals --db approvals.db show pa_…
//! objectstack-ai approvals --db approvals.db approve pa_… --by you
//! cargo run -p objectstack-bridge --example host -- --queue approvals.db
//! ```
//!
//! The tool calls carry fixed tool-call ids, so every run asks for the
//! same purge: the queue answers with the pending action it already has
//! instead of queueing another.

use std::collections::HashMap;
use std::error::Error;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use objectstack_bridge::approval::{ApprovalQueue, PendingAction, SqliteStore, State};
use objectstack_bridge::runtime::{
    Actor, AutomationService, CallContext, DataEngine, ExecuteOptions, FieldWriteRequest,
    FlowRequest, HostError, HostServices, HttpApiClient, HttpClientOptions, ScriptRequest,
    ToolRegistry,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The host's records: tasks in a map. A real host checks the actor's
/// permissions here.
struct Records(Mutex<HashMap<String, Value>>);

#[async_trait::async_trait]
impl DataEngine for Records {
    async fn find_record(
        &self,
        _object: &str,
        id: &str,
        _actor: &Actor,
    ) -> Result<Option<Value>, HostError> {
        Ok(self
            .0
            .lock()
            .map_err(|_| HostError::failed("lock"))?
            .get(id)
            .cloned())
    }

    async fn execute_action(&self, req: ScriptRequest) -> Result<Value, HostError> {
        Ok(json!({"ran": req.target, "by": req.actor.id, "params": req.params}))
    }

    async fn update_record(&self, req: FieldWriteRequest) -> Result<Value, HostError> {
        let mut records = self.0.lock().map_err(|_| HostError::failed("lock"))?;
        let record = records
            .get_mut(&req.record_id)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| HostError::failed("no such record"))?;
        record.extend(req.patch);
        Ok(Value::Object(record.clone()))
    }
}

/// The host's flows.
struct Flows;

#[async_trait::async_trait]
impl AutomationService for Flows {
    async fn execute(&self, req: FlowRequest) -> Result<Value, HostError> {
        Ok(json!({"success": true, "output": {"flow": req.flow, "record": req.record}}))
    }
}

/// Stands in for an external API: answers every request with what it got.
async fn start_api() -> Result<String, Box<dyn Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            // Read the head, then as many body bytes as Content-Length says.
            let (mut request, mut chunk) = (String::new(), [0u8; 4096]);
            while let Ok(n @ 1..) = sock.read(&mut chunk).await {
                request.push_str(&String::from_utf8_lossy(&chunk[..n]));
                if let Some((head, body)) = request.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().to_owned())
                        })
                        .and_then(|v| v.parse::<usize>().ok())
                        .unwrap_or(0);
                    if body.len() >= length {
                        break;
                    }
                }
            }
            let (head, body) = request.split_once("\r\n\r\n").unwrap_or((&request, ""));
            let line = head.lines().next().unwrap_or_default();
            let reply = json!({"received": line, "body": body}).to_string();
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
            let _ = sock.write_all(response.as_bytes()).await;
        }
    });
    Ok(format!("http://{addr}/api/"))
}

/// The tools the demo calls, in order; the last needs approval.
const CALLS: [&str; 5] = [
    "action_complete",
    "action_mark_blocked",
    "action_escalate",
    "action_sync",
    "action_purge",
];

/// Wires the host's services and the stack's actions into a registry.
async fn wire(queue: Arc<ApprovalQueue>) -> Result<ToolRegistry, Box<dyn Error>> {
    let records = HashMap::from([("t1".to_owned(), json!({"id": "t1", "title": "Ship v1"}))]);
    let api = HttpApiClient::new(HttpClientOptions {
        base_url: Some(start_api().await?),
        headers: vec![("Authorization".into(), "Bearer demo".into())],
        ..HttpClientOptions::default()
    })?;
    let mut registry = ToolRegistry::new(HostServices {
        data_engine: Some(Arc::new(Records(Mutex::new(records)))),
        automation: Some(Arc::new(Flows)),
        api_client: Some(Arc::new(api)),
        approvals: Some(queue),
        ..HostServices::default()
    });

    let exposed = |d: &str| json!({"exposed": true, "description": d});
    let stack = json!({"objects": [{"name": "task", "fields": {"title": {"type": "text"}}, "actions": [
        {"name": "complete", "type": "script", "target": "complete_task", "locations": ["record_header"],
         "ai": exposed("Marks the task the user is looking at as complete.")},
        {"name": "mark_blocked", "operation": "update", "patch": {"status": "blocked"}, "locations": ["record_more"],
         "ai": exposed("Flags the task as blocked so the team sees it in standup.")},
        {"name": "escalate", "type": "flow", "target": "escalation", "locations": ["record_header"],
         "ai": exposed("Starts the escalation flow that pages the on-call manager.")},
        {"name": "sync", "type": "api", "target": "tracker/sync", "recordIdParam": "taskId",
         "locations": ["list_item"], "ai": exposed("Pushes the task to the external issue tracker.")},
        {"name": "purge", "type": "script", "target": "purge_task", "mode": "delete", "locations": ["record_more"],
         "ai": exposed("Deletes the task and all its history; cannot be undone.")}
    ]}]});
    let stack = stack.as_object().ok_or("the stack is an object")?;
    let (materialised, refused) = registry.register_stack(stack);
    if !refused.is_empty() || !materialised.skipped.is_empty() {
        return Err(format!("refused {refused:?}, skipped {:?}", materialised.skipped).into());
    }
    Ok(registry)
}

/// Calls every tool as a model would; returns (tool, result envelope).
async fn call_all(registry: &ToolRegistry) -> Vec<(String, Value)> {
    let mut transcript = Vec::new();
    for (i, name) in CALLS.into_iter().enumerate() {
        // What the chat turn knows: who is asking, and which tool call this is.
        let ctx = CallContext {
            actor: Some(Actor::new("u1")),
            conversation_id: Some("conv-1".into()),
            tool_call_id: Some(format!("call-{i}")),
            ..CallContext::default()
        };
        let out = registry.call(name, json!({"recordId": "t1"}), &ctx).await;
        transcript.push((name.to_owned(), out));
    }
    transcript
}

/// Wires everything, calls every tool, approves the destructive one and
/// executes it. Returns (tool, result envelope) in call order.
pub(crate) async fn demo() -> Result<Vec<(String, Value)>, Box<dyn Error>> {
    let db = std::env::temp_dir().join(format!(
        "objectstack-host-example-{}.db",
        std::process::id()
    ));
    let queue = Arc::new(ApprovalQueue::new(Arc::new(SqliteStore::open(&db)?)));
    let registry = wire(queue.clone()).await?;
    let mut transcript = call_all(&registry).await;

    // An operator approves the queued purge (normally `objectstack-ai
    // approvals approve`); the host then executes everything approved.
    let (_, pending) = transcript.last().ok_or("no calls")?;
    let id = pending["pendingActionId"]
        .as_str()
        .ok_or("purge was not queued")?;
    let row = queue.get(id)?;
    queue.approve(id, "operator", &row.input_sha256)?;
    registry
        .execute_approved(&ExecuteOptions::default())
        .await?;
    let done = queue.get(id)?;
    transcript.push((
        "approved purge".to_owned(),
        done.result.unwrap_or(Value::Null),
    ));
    drop((registry, queue));
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    Ok(transcript)
}

/// What one run against a queue file did.
#[derive(Debug)]
pub(crate) struct QueueRun {
    /// (tool, result envelope) in call order.
    pub(crate) transcript: Vec<(String, Value)>,
    /// The purge's pending action as the run left it.
    pub(crate) purge: PendingAction,
}

/// Wires everything over the queue in `db`, calls every tool (the purge
/// is queued, or found queued from an earlier run), then executes what is
/// approved once a second until the purge is decided or `wait` has passed
/// (at least one pass). A pending purge is left in the file.
pub(crate) async fn run_with_queue(db: &Path, wait: Duration) -> Result<QueueRun, Box<dyn Error>> {
    let queue = Arc::new(ApprovalQueue::new(Arc::new(SqliteStore::open(db)?)));
    let registry = wire(queue.clone()).await?;
    let transcript = call_all(&registry).await;
    let (_, queued) = transcript.last().ok_or("no calls")?;
    let id = queued["pendingActionId"]
        .as_str()
        .ok_or_else(|| format!("the purge was not queued: {queued}"))?
        .to_owned();
    let options = ExecuteOptions {
        executor: format!("example-host-{}", std::process::id()),
        ..ExecuteOptions::default()
    };
    let deadline = Instant::now() + wait;
    loop {
        // The host's loop: run what was approved (this also turns claims
        // whose lease ran out into in_doubt).
        registry.execute_approved(&options).await?;
        let purge = queue.get(&id)?;
        let waiting = matches!(purge.state, State::Pending | State::Approved);
        if !waiting || Instant::now() >= deadline {
            return Ok(QueueRun { transcript, purge });
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// `--queue FILE [--wait SECONDS]`, or nothing.
fn parse_args() -> Result<Option<(std::path::PathBuf, Duration)>, String> {
    let usage = "usage: host [--queue FILE [--wait SECONDS]]";
    let mut args = std::env::args().skip(1);
    let (mut queue, mut wait) = (None, Duration::ZERO);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--queue" => queue = Some(args.next().ok_or(usage)?.into()),
            "--wait" => {
                let secs = args.next().ok_or(usage)?;
                let secs: u64 = secs
                    .parse()
                    .map_err(|_| format!("--wait takes whole seconds, not `{secs}`; {usage}"))?;
                wait = Duration::from_secs(secs);
            }
            _ => return Err(format!("unknown argument `{arg}`; {usage}")),
        }
    }
    match queue {
        Some(queue) => Ok(Some((queue, wait))),
        None if wait.is_zero() => Ok(None),
        None => Err(format!("--wait needs --queue; {usage}")),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let Some((db, wait)) = parse_args()? else {
        for (call, out) in demo().await? {
            println!("{call}:\n{}\n", serde_json::to_string_pretty(&out)?);
        }
        return Ok(());
    };
    let run = run_with_queue(&db, wait).await?;
    for (call, out) in &run.transcript {
        println!("{call}:\n{}\n", serde_json::to_string_pretty(out)?);
    }
    let (id, shown) = (&run.purge.id, db.display());
    match run.purge.state {
        State::Pending => println!(
            "The purge is waiting for a person, as pending action {id} in {shown}.\n\
             Review and approve it:\n  \
             objectstack-ai approvals --db {shown} show {id}\n  \
             objectstack-ai approvals --db {shown} approve {id} --by <you>\n\
             then run this example again (or with --wait 60): the host executes approved \
             actions, since only it has their dispatchers."
        ),
        State::Approved => println!("{id} is approved; run this example again to execute it."),
        state => {
            let why = run.purge.error.or(run.purge.reason).unwrap_or_default();
            println!("{id} is {state}. {why}");
            if let Some(result) = &run.purge.result {
                println!("{}", serde_json::to_string_pretty(result)?);
            }
        }
    }
    Ok(())
}
