//! Fakes shared by the runtime and approval tests: a host that records
//! every request it gets, and can append each dispatch to a ledger file
//! that several processes share.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use objectstack_bridge::approval::ApprovalQueue;
use objectstack_bridge::runtime::{
    Actor, ApiClient, ApiRequest, AutomationService, DataEngine, FieldWriteRequest, FlowRequest,
    HostError, HostServices, ScriptRequest,
};
use objectstack_spec::AIToolDefinition;
use serde_json::{Map, Value, json};

/// One request a fake service received.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Seen {
    Find {
        object: String,
        id: String,
        actor: String,
    },
    Script(ScriptRequest),
    FieldWrite(FieldWriteRequest),
    Flow(FlowRequest),
    Api(ApiRequest),
}

/// A host whose services record what they are asked and answer as told.
#[derive(Default)]
pub(crate) struct FakeHost {
    /// Records by (object, id); a record with `"hiddenFrom": [actor ids]`
    /// is invisible to those actors.
    pub(crate) records: Mutex<HashMap<(String, String), Value>>,
    pub(crate) seen: Mutex<Vec<Seen>>,
    /// Each dispatch's idempotency key (or `-`) is appended here, one line
    /// per dispatch, with O_APPEND (atomic across processes).
    pub(crate) ledger: Option<PathBuf>,
    /// What every dispatch returns (default `{"done": true}`).
    pub(crate) answer: Mutex<Option<Result<Value, HostError>>>,
    /// Block forever after writing the ledger line (crash tests).
    pub(crate) hang_after_ledger: bool,
    /// Called inside every dispatch, after the ledger line (fault
    /// injection: a connection cut between claim and outcome).
    pub(crate) on_dispatch: Option<Box<dyn Fn() + Send + Sync>>,
}

impl FakeHost {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub(crate) fn with_ledger(path: &Path) -> Arc<Self> {
        Arc::new(FakeHost {
            ledger: Some(path.to_path_buf()),
            ..FakeHost::default()
        })
    }

    pub(crate) fn add_record(&self, object: &str, record: Value) {
        let id = record["id"].as_str().unwrap().to_owned();
        self.records
            .lock()
            .unwrap()
            .insert((object.to_owned(), id), record);
    }

    pub(crate) fn answer_with(&self, answer: Result<Value, HostError>) {
        *self.answer.lock().unwrap() = Some(answer);
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    pub(crate) fn dispatches(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| !matches!(s, Seen::Find { .. }))
            .collect()
    }

    /// Services with this host as data engine, automation and API client.
    pub(crate) fn services(
        self: &Arc<Self>,
        approvals: Option<Arc<ApprovalQueue>>,
    ) -> HostServices {
        HostServices {
            data_engine: Some(self.clone()),
            automation: Some(self.clone()),
            api_client: Some(self.clone()),
            approvals,
            ..HostServices::default()
        }
    }

    fn dispatched(&self, seen: Seen, key: Option<&str>) -> Result<Value, HostError> {
        self.seen.lock().unwrap().push(seen);
        if let Some(path) = &self.ledger {
            let mut f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap();
            f.write_all(format!("{}\n", key.unwrap_or("-")).as_bytes())
                .unwrap();
            f.sync_all().unwrap();
            if let Some(hook) = &self.on_dispatch {
                hook();
            }
            if self.hang_after_ledger {
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(60));
                }
            }
        }
        self.answer
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(|| Ok(json!({"done": true})))
    }
}

#[async_trait::async_trait]
impl DataEngine for FakeHost {
    async fn find_record(
        &self,
        object: &str,
        id: &str,
        actor: &Actor,
    ) -> Result<Option<Value>, HostError> {
        self.seen.lock().unwrap().push(Seen::Find {
            object: object.to_owned(),
            id: id.to_owned(),
            actor: actor.id.clone(),
        });
        let records = self.records.lock().unwrap();
        let record = records.get(&(object.to_owned(), id.to_owned())).cloned();
        Ok(record.filter(|r| {
            !r.get("hiddenFrom")
                .and_then(Value::as_array)
                .is_some_and(|h| h.iter().any(|a| a == actor.id.as_str()))
        }))
    }

    async fn execute_action(&self, request: ScriptRequest) -> Result<Value, HostError> {
        let key = request.idempotency_key.clone();
        self.dispatched(Seen::Script(request), key.as_deref())
    }

    async fn update_record(&self, request: FieldWriteRequest) -> Result<Value, HostError> {
        let key = request.idempotency_key.clone();
        self.dispatched(Seen::FieldWrite(request), key.as_deref())
    }
}

#[async_trait::async_trait]
impl AutomationService for FakeHost {
    async fn execute(&self, request: FlowRequest) -> Result<Value, HostError> {
        let key = request.idempotency_key.clone();
        self.dispatched(Seen::Flow(request), key.as_deref())
    }
}

#[async_trait::async_trait]
impl ApiClient for FakeHost {
    async fn request(&self, request: ApiRequest) -> Result<Value, HostError> {
        let key = request.idempotency_key.clone();
        self.dispatched(Seen::Api(request), key.as_deref())
    }
}

pub(crate) fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// An exposed script action on `task` (row context), needing confirmation
/// when `confirm` is true.
pub(crate) fn script_action(name: &str, confirm: bool) -> Map<String, Value> {
    obj(json!({
        "name": name,
        "objectName": "task",
        "type": "script",
        "target": format!("scripts/{name}"),
        "locations": ["record_header"],
        "ai": {
            "exposed": true,
            "description": "Completes the task the user is looking at, with a note.",
            "requiresConfirmation": confirm
        }
    }))
}

/// The tool definition a materialiser would give `script_action`.
pub(crate) fn script_definition(name: &str, confirm: bool) -> AIToolDefinition {
    AIToolDefinition {
        name: format!("action_{name}"),
        label: None,
        description: "Completes the task the user is looking at, with a note.".into(),
        parameters: obj(json!({
            "type": "object",
            "properties": {
                "recordId": {"type": "string", "description": "The task record id to act on."},
                "note": {"type": "string"}
            },
            "required": ["recordId"],
            "additionalProperties": false
        })),
        category: None,
        output_schema: None,
        object_name: Some("task".into()),
        requires_confirmation: Some(confirm),
    }
}

/// Lines of a ledger file (empty when it does not exist).
pub(crate) fn ledger_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|s| s.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// A fresh scratch directory for one test, removed when dropped.
pub(crate) struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh scratch directory for one test.
pub(crate) fn scratch_dir(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!(
        "objectstack-bridge-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}
