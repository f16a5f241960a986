//! Two `objectstack-ai serve --transport http` processes sharing one
//! PostgreSQL approval queue, in front of a fake ObjectStack server: an
//! action proposed through one and approved through the other, or by the
//! `approvals` command, is executed exactly once; the approval wakes the
//! gateways (no waiting for a poll); the URL's password shows nowhere.
//!
//! Runs when `OBJECTSTACK_TEST_POSTGRES_URL` names a server
//! (`.ci/postgres.sh`); elsewhere it says why and passes, and in CI it must
//! run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

#[path = "../../gateway/tests/support/fake.rs"]
mod fake;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use fake::Fake;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::{Value, json};

const URL_VAR: &str = "OBJECTSTACK_TEST_POSTGRES_URL";
const ALICE: &str = "osk_alice_0123456789";
const BOB: &str = "osk_bob_9876543210";
const EXECUTOR: &str = "osk_executor_5555555555";
const PASSWORD: &str = "pw-never-shown-7f3a";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../gateway/tests/data/helpdesk.json")
}

/// The server URL, or `None` (after saying why) outside CI.
fn server() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) => Some(url),
        Err(_) => {
            let required = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
                || std::env::var_os("OBJECTSTACK_TEST_POSTGRES_REQUIRED").is_some();
            assert!(
                !required,
                "{URL_VAR} is not set, and this test must run here: start a server with \
                 `eval \"$(bash .ci/postgres.sh start)\"`"
            );
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "skipping two gateways on one PostgreSQL queue: no server configured (set \
                 {URL_VAR}, e.g. with `eval \"$(bash .ci/postgres.sh start)\"`)"
            );
            None
        }
    }
}

async fn sql(url: &str, statement: &str) -> Vec<tokio_postgres::SimpleQueryMessage> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let driver = tokio::spawn(connection);
    let out = client.simple_query(statement).await.unwrap();
    drop(client);
    let _ = driver.await;
    out
}

fn first_value(rows: &[tokio_postgres::SimpleQueryMessage]) -> String {
    rows.iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
            _ => None,
        })
        .unwrap_or_default()
}

/// `url` with a password in its userinfo (the test server trusts local
/// connections, so any password is accepted) and `schema` on its path.
fn queue_url(url: &str, schema: &str) -> String {
    let with_password = url.replacen("://postgres@", &format!("://postgres:{PASSWORD}@"), 1);
    assert_ne!(with_password, url, "the test URL names the user postgres");
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{with_password}{sep}options=-csearch_path%3D{schema}")
}

struct Serve {
    _child: tokio::process::Child,
    addr: String,
    dir: tempfile::TempDir,
}

impl Serve {
    async fn start(fake: &Fake, approvals: &str) -> Serve {
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai"))
            .arg("serve")
            .arg("--stack")
            .arg(fixture())
            .args([
                "--server",
                &fake.url,
                "--transport",
                "http",
                "--listen",
                &addr,
            ])
            .arg("--approvals")
            .arg(approvals)
            .arg("--audit")
            .arg(dir.path().join("audit.jsonl"))
            .env("RUST_LOG", "info")
            .env("OBJECTSTACK_EXECUTOR_KEY", EXECUTOR)
            .env_remove("OBJECTSTACK_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("stderr.txt")).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let serve = Serve {
            _child: child,
            addr,
            dir,
        };
        let http = reqwest::Client::new();
        let started = Instant::now();
        loop {
            let up = http
                .get(serve.url("/approvals"))
                .bearer_auth(BOB)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if up {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the gateway did not start: {}",
                serve.stderr()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        serve
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr.txt")).unwrap_or_default()
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("audit.jsonl")).unwrap_or_default()
    }

    async fn client(&self, key: &str) -> RunningService<RoleClient, ClientConfig> {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(self.url("/mcp")).auth_header(key),
        );
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("serve-postgres-test", "0"),
        )
        .serve(transport)
        .await
        .unwrap()
    }
}

/// Proposes a purge of `record` through `client`; the pending action id.
async fn propose(client: &RunningService<RoleClient, ClientConfig>, record: &str) -> String {
    let mut arguments = serde_json::Map::new();
    arguments.insert("recordId".into(), json!(record));
    let result = client
        .call_tool(CallToolRequestParams::new("action_purge_ticket").with_arguments(arguments))
        .await
        .unwrap();
    let text = result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["pendingActionId"]
        .as_str()
        .unwrap_or_else(|| panic!("not queued: {text}"))
        .to_owned()
}

fn dispatches(fake: &Fake, record: &str) -> usize {
    fake.received()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.ends_with(&format!("/{record}")))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateways_share_one_postgres_queue_and_execute_an_approval_once() {
    let Some(server) = server() else { return };
    let schema = format!("t_two_gateways_{}", std::process::id());
    sql(
        &server,
        &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"),
    )
    .await;
    let approvals = queue_url(&server, &schema);

    let fake = Fake::start().await;
    for id in ["t3", "t4", "t5", "t6", "t7", "t8", "t9"] {
        fake.add_record("support_ticket", id, json!({"subject": "Dup"}));
    }
    let first = Serve::start(&fake, &approvals).await;
    let second = Serve::start(&fake, &approvals).await;

    // Proposed through the first gateway, approved through the second.
    let alice = first.client(ALICE).await;
    let id = propose(&alice, "t3").await;
    let http = reqwest::Client::new();
    let row: Value = http
        .get(second.url(&format!("/approvals/{id}")))
        .bearer_auth(BOB)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(row["state"], "pending", "{row}");
    let sha = row["inputSha256"].as_str().unwrap().to_owned();
    let decision: Value = http
        .post(second.url(&format!("/approvals/{id}/approve")))
        .bearer_auth(BOB)
        .json(&json!({"input_sha256": sha}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(decision["state"], "executed", "{decision}");
    // The first gateway is woken by the approval too, and finds it taken.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(dispatches(&fake, "t3"), 1, "executed exactly once");
    // An approval through a gateway runs under the approver's key, though
    // every gateway's executor (OBJECTSTACK_EXECUTOR_KEY) is woken by it.
    for record in ["t5", "t6", "t7", "t8", "t9"] {
        let id = propose(&alice, record).await;
        let row: Value = http
            .get(second.url(&format!("/approvals/{id}")))
            .bearer_auth(BOB)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let decision: Value = http
            .post(second.url(&format!("/approvals/{id}/approve")))
            .bearer_auth(BOB)
            .json(&json!({"input_sha256": row["inputSha256"]}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(decision["state"], "executed", "{decision}");
        let runs: Vec<Option<String>> = fake
            .received()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path.ends_with(&format!("/{record}")))
            .map(|r| r.authorization)
            .collect();
        assert_eq!(runs, vec![Some(format!("Bearer {BOB}"))], "{record}");
    }

    // Approved by the `approvals` command: neither gateway served the
    // decision, both are woken, one executes it, well before a poll.
    let id = propose(&alice, "t4").await;
    let show = tokio::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai"))
        .args([
            "approvals",
            "--format",
            "json",
            "--db",
            &approvals,
            "show",
            &id,
        ])
        .output()
        .await
        .unwrap();
    assert!(show.status.success(), "{show:?}");
    let row: Value = serde_json::from_slice(&show.stdout).unwrap();
    let approve = tokio::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai"))
        .args([
            "approvals",
            "--db",
            &approvals,
            "approve",
            &id,
            "--by",
            "ops",
        ])
        .args(["--input-sha256", row["inputSha256"].as_str().unwrap()])
        .output()
        .await
        .unwrap();
    assert!(approve.status.success(), "{approve:?}");
    let approved = Instant::now();
    while dispatches(&fake, "t4") == 0 {
        assert!(
            approved.elapsed() < Duration::from_secs(15),
            "no gateway executed the approval in time (the fallback poll is 30 s)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(dispatches(&fake, "t4"), 1, "executed exactly once");
    // The gateway that ran it audited it, as its executor.
    let audited: Vec<Value> = [&first, &second]
        .iter()
        .flat_map(|g| g.audit().lines().map(str::to_owned).collect::<Vec<_>>())
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .filter(|l| l["pendingId"] == json!(id) && l["transport"] == json!("executor"))
        .collect();
    assert_eq!(audited.len(), 1, "{audited:?}");
    assert_eq!(audited[0]["outcome"], json!("executed"), "{audited:?}");
    assert_eq!(
        audited[0]["tool"],
        json!("action_purge_ticket"),
        "{audited:?}"
    );
    let listed = tokio::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai"))
        .args([
            "approvals",
            "--format",
            "json",
            "--db",
            &approvals,
            "show",
            &id,
        ])
        .output()
        .await
        .unwrap();
    let row: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(row["state"], "executed", "{row}");

    // The password is nowhere: not in logs, audit lines, command output
    // or stored rows.
    alice.cancel().await.unwrap();
    for gateway in [&first, &second] {
        assert!(!gateway.stderr().contains(PASSWORD), "{}", gateway.stderr());
        assert!(!gateway.audit().contains(PASSWORD));
    }
    for out in [&show, &approve, &listed] {
        assert!(!String::from_utf8_lossy(&out.stdout).contains(PASSWORD));
        assert!(!String::from_utf8_lossy(&out.stderr).contains(PASSWORD));
    }
    let leaked = sql(
        &server,
        &format!(
            "SELECT count(*) FROM {schema}.pending_actions p \
             WHERE row_to_json(p)::text LIKE '%{PASSWORD}%'"
        ),
    )
    .await;
    assert_eq!(first_value(&leaked), "0");
    let bad = tokio::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai"))
        .args(["approvals", "--db"])
        .arg(approvals.replace("127.0.0.1", "127.0.0.1:1"))
        .arg("list")
        .output()
        .await
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(said.contains("postgres://***@"), "{said}");
    assert!(!said.contains(PASSWORD), "{said}");

    drop(first);
    drop(second);
    sql(&server, &format!("DROP SCHEMA {schema} CASCADE")).await;
}
