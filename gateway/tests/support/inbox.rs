//! Shared by the inbox tests: a gateway on 127.0.0.1 in front of the fake
//! server, an MCP client that queues actions, and a browser-less HTTP
//! client that keeps the session cookie.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)] // test helpers

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use objectstack_gateway::{ApiKey, Config, Gateway};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

use super::fake::Fake;

pub const ALICE: &str = "osk_alice_0123456789";
pub const BOB: &str = "osk_bob_9876543210";

/// `osk:<fingerprint>`, as the queue records a key.
pub fn actor(key: &str) -> String {
    format!("osk:{}", ApiKey::new(key).unwrap().fingerprint())
}

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/inbox.json")
}

pub struct Running {
    pub addr: SocketAddr,
    pub gateway: Gateway,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    pub dir: tempfile::TempDir,
}

impl Running {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn audit(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("audit.jsonl")).unwrap_or_default()
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = self.task.await;
    }
}

/// A gateway serving `tests/data/inbox.json` against `fake`.
pub async fn start(fake: &Fake, edit: impl FnOnce(&mut Config)) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(vec![fixture()]);
    config.server = Some(fake.url.clone());
    config.approvals = dir.path().join("approvals.sqlite");
    config.audit = Some(dir.path().join("audit.jsonl"));
    config.reload_interval = None;
    edit(&mut config);
    let gateway = Gateway::new(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = gateway.clone();
    let task = tokio::spawn(async move {
        serving
            .serve_listener(listener, async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    Running {
        addr,
        gateway,
        stop: Some(stop),
        task,
        dir,
    }
}

pub type Client = RunningService<RoleClient, ClientConfig>;

/// An MCP client under `key`.
pub async fn mcp(running: &Running, key: &str) -> Client {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(running.url("/mcp")).auth_header(key),
    );
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("gateway-inbox-test", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_06_18)
    .serve(transport)
    .await
    .unwrap()
}

pub async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("not an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap()
}

pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls `tool` and returns the pending action id it was queued as.
pub async fn queue(client: &Client, tool: &str, arguments: Value) -> String {
    let result = call(client, tool, arguments).await;
    let envelope: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(envelope["status"], "pending_approval", "{envelope}");
    envelope["pendingActionId"].as_str().unwrap().to_owned()
}

/// The model's lookup of one of its pending actions.
pub async fn lookup(client: &Client, id: &str) -> Map<String, Value> {
    let result = call(
        client,
        "gateway-pending-actions",
        serde_json::json!({"pendingActionId": id}),
    )
    .await;
    match serde_json::from_str::<Value>(&text(&result)).unwrap() {
        Value::Object(m) => m,
        other => panic!("{other}"),
    }
}

/// A browser-less inbox client: keeps the session cookie, follows a 303
/// itself.
pub struct Browser {
    http: reqwest::Client,
    base: String,
    pub cookie: Option<String>,
    /// The raw `Set-Cookie` values seen, in order.
    pub set_cookies: Vec<String>,
}

pub struct Page {
    pub status: u16,
    pub body: String,
    pub headers: reqwest::header::HeaderMap,
}

impl Page {
    /// The first CSRF token on the page.
    pub fn csrf(&self) -> String {
        let at = self
            .body
            .find("name=\"csrf\" value=\"")
            .expect("a csrf field");
        let rest = &self.body[at + 19..];
        rest[..rest.find('"').unwrap()].to_owned()
    }
}

impl Browser {
    pub fn new(running: &Running) -> Browser {
        Browser {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: running.url(""),
            cookie: None,
            set_cookies: Vec::new(),
        }
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let request = match &self.cookie {
            Some(c) => request.header("cookie", c.clone()),
            None => request,
        };
        let response = request.send().await.unwrap();
        for value in response.headers().get_all("set-cookie") {
            let value = value.to_str().unwrap().to_owned();
            let pair = value.split(';').next().unwrap().to_owned();
            self.cookie = if pair.ends_with('=') {
                None
            } else {
                Some(pair)
            };
            self.set_cookies.push(value);
        }
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.text().await.unwrap();
        Page {
            status,
            body,
            headers,
        }
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let request = self.http.get(format!("{}{path}", self.base));
        self.send(request).await
    }

    /// POSTs the form; a 303 is followed with a GET (as a browser does).
    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let request = self.http.post(format!("{}{path}", self.base)).form(form);
        let page = self.send(request).await;
        if page.status == 303 {
            let to = page.headers["location"].to_str().unwrap().to_owned();
            return self.get(&to).await;
        }
        page
    }

    /// Signs in with `key`; returns the inbox page.
    pub async fn sign_in(&mut self, key: &str) -> Page {
        let page = self.get("/approvals/ui").await;
        assert!(page.body.contains("Sign in"), "{}", page.body);
        let csrf = page.csrf();
        let page = self
            .post("/approvals/ui/sign-in", &[("csrf", &csrf), ("key", key)])
            .await;
        assert!(page.body.contains("Signed in as"), "{}", page.body);
        page
    }
}
