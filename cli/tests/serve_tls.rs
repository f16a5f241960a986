//! `objectstack-ai serve --server https://…`: the released binary reaches an
//! ObjectStack server over TLS, trusting the system's roots and the
//! certificates `SSL_CERT_FILE` names, and refuses a certificate nobody
//! vouches for before anything is sent.
//!
//! The server is the tests' fake ObjectStack server behind a real TLS
//! listener on 127.0.0.1 (rustls), with a certificate for `127.0.0.1`
//! signed by a test CA made for this run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

#[path = "../../gateway/tests/support/fake.rs"]
mod fake;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fake::Fake;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::{self, pki_types::PrivateKeyDer};

const KEY: &str = "osk_tls_test_key_0123456789";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gateway/tests/data")
        .join(name)
}

/// The fake server behind TLS, and the PEM of the CA that signed its
/// certificate.
struct TlsFake {
    fake: Fake,
    url: String,
    ca_pem: String,
}

async fn start_tls_fake() -> TlsFake {
    let fake = Fake::start().await;
    let upstream = fake.url.trim_start_matches("http://").to_owned();

    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "objectstack-ai test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &ca, &ca_key).unwrap();

    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
    )
    .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let upstream = upstream.clone();
            tokio::spawn(async move {
                // A handshake the client aborts (an untrusted certificate)
                // simply ends here.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(&upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    TlsFake {
        fake,
        url,
        ca_pem: ca.pem(),
    }
}

/// The binary over stdio serving `stack`, `--server` the TLS fake;
/// `ca_file` becomes `SSL_CERT_FILE` (removed from the environment when
/// `None`).
async fn spawn(
    stack: &str,
    server: &str,
    extra: &[&str],
    ca_file: Option<&Path>,
    dir: &Path,
) -> RunningService<RoleClient, ()> {
    let approvals = dir.join("approvals.sqlite");
    let audit = dir.join("audit.jsonl");
    let command =
        tokio::process::Command::new(env!("CARGO_BIN_EXE_objectstack-ai")).configure(|cmd| {
            cmd.arg("serve")
                .arg("--stack")
                .arg(fixture(stack))
                .arg("--server")
                .arg(server)
                .args(extra)
                .arg("--approvals")
                .arg(&approvals)
                .arg("--audit")
                .arg(&audit)
                .env("RUST_LOG", "warn")
                .env("OBJECTSTACK_API_KEY", KEY)
                .env_remove("OBJECTSTACK_EXECUTOR_KEY")
                .env_remove("SSL_CERT_DIR");
            match ca_file {
                Some(file) => cmd.env("SSL_CERT_FILE", file),
                None => cmd.env_remove("SSL_CERT_FILE"),
            };
        });
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap()
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn an_https_server_whose_certificate_is_trusted_runs_the_call() {
    let server = start_tls_fake().await;
    server.fake.add_record(
        "support_ticket",
        "t1",
        json!({"id": "t1", "subject": "Printer"}),
    );
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, &server.ca_pem).unwrap();
    let client = spawn(
        "helpdesk.json",
        &server.url,
        &[],
        Some(&ca_file),
        dir.path(),
    )
    .await;

    let result = call(
        &client,
        "action_escalate_ticket",
        json!({"recordId": "t1", "reason": "over TLS"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let received = server.fake.received();
    assert_eq!(received.len(), 2, "{received:?}");
    assert_eq!(
        received[1].path,
        "/api/v1/actions/support_ticket/escalate_ticket/t1"
    );
    assert_eq!(received[1].body, json!({"params": {"reason": "over TLS"}}));
    for r in &received {
        assert_eq!(
            r.authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_untrusted_certificate_is_a_tool_error_and_nothing_is_sent() {
    let server = start_tls_fake().await;
    server
        .fake
        .add_record("support_ticket", "t1", json!({"id": "t1"}));
    let dir = tempfile::tempdir().unwrap();
    let client = spawn("helpdesk.json", &server.url, &[], None, dir.path()).await;

    let result = call(
        &client,
        "action_escalate_ticket",
        json!({"recordId": "t1", "reason": "over TLS"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true), "{}", text(&result));
    let message = text(&result);
    assert!(
        message.contains("TLS certificate was refused") && message.contains("SSL_CERT_FILE"),
        "{message}"
    );
    assert!(!message.contains(KEY), "{message}");
    // The handshake failed, so no request (and no key) reached the server.
    assert!(server.fake.received().is_empty());
    assert!(server.fake.probes().is_empty());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_api_action_reaches_an_https_origin_with_the_key() {
    let server = start_tls_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, &server.ca_pem).unwrap();
    let base = format!("{}/", server.url);
    let client = spawn(
        "hooks.json",
        &server.url,
        &["--api-base-url", &base],
        Some(&ca_file),
        dir.path(),
    )
    .await;

    let sent = call(&client, "action_send_reminder", json!({"channel": "sms"})).await;
    assert_eq!(sent.is_error, Some(false), "{}", text(&sent));
    let received = server.fake.received();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0].path, "/hooks/reminders");
    assert_eq!(received[0].body, json!({"channel": "sms"}));
    // The API origin is the server's, so the caller's key goes with it.
    assert_eq!(
        received[0].authorization.as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    client.cancel().await.unwrap();
}
