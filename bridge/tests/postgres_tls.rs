//! TLS to the PostgreSQL approval store, against a real server that offers
//! it (`.ci/postgres.sh`: a certificate for 127.0.0.1 signed by a CA made
//! for the cluster, `OBJECTSTACK_TEST_POSTGRES_CA`). Each mode is checked
//! by what the server itself reports (`pg_stat_ssl`), not by what the
//! store says about itself.
//!
//! Without `OBJECTSTACK_TEST_POSTGRES_URL` and `OBJECTSTACK_TEST_POSTGRES_CA`
//! the tests say why and pass; with `CI` set, their absence fails them.
#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

use objectstack_bridge::approval::{ApprovalStore, ListFilter, PostgresStore};

/// The server's URL and the CA's PEM file, or `None` after saying why.
fn server() -> Option<(String, String)> {
    let url = std::env::var("OBJECTSTACK_TEST_POSTGRES_URL").ok();
    let ca = std::env::var("OBJECTSTACK_TEST_POSTGRES_CA").ok();
    match (url, ca) {
        (Some(url), Some(ca)) if !url.is_empty() && !ca.is_empty() => Some((url, ca)),
        _ => {
            let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
            assert!(
                !ci,
                "CI needs OBJECTSTACK_TEST_POSTGRES_URL and OBJECTSTACK_TEST_POSTGRES_CA \
                 (eval \"$(bash .ci/postgres.sh start)\")"
            );
            eprintln!("skipped: no TLS test server (eval \"$(bash .ci/postgres.sh start)\")");
            None
        }
    }
}

/// `url` with more query parameters.
fn with(url: &str, params: &str) -> String {
    let joiner = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joiner}{params}")
}

/// A name no other test's connections carry.
fn application(test: &str) -> String {
    format!("tls_{test}_{}", std::process::id())
}

/// What the server says about the connections of `application`: whether
/// each is encrypted, asked over a plain connection of the test's own.
fn encrypted(url: &str, application: &str) -> Vec<bool> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let plain = with(url, "sslmode=disable");
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&plain, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .query(
                "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
                 WHERE a.application_name = $1",
                &[&application],
            )
            .await
            .unwrap()
            .iter()
            .map(|row| row.get::<_, bool>(0))
            .collect()
    })
}

/// Opens the store at `url` and reads from it, so a connection is open.
fn open(url: &str) -> Result<PostgresStore, String> {
    let store = PostgresStore::open(url).map_err(|e| e.to_string())?;
    store
        .list(&ListFilter::default())
        .map_err(|e| e.to_string())?;
    Ok(store)
}

#[test]
fn require_and_the_default_encrypt_and_disable_does_not() {
    let Some((url, _)) = server() else { return };
    for (mode, expected) in [
        ("sslmode=require", true),
        ("sslmode=prefer", true),
        ("", true),
        ("sslmode=disable", false),
    ] {
        let app = application(&format!("mode{}", mode.len()));
        let target = with(&url, &format!("application_name={app}"));
        let target = if mode.is_empty() {
            target
        } else {
            with(&target, mode)
        };
        let store = open(&target).unwrap();
        let seen = encrypted(&url, &app);
        assert!(!seen.is_empty(), "{mode}: no connection of {app}");
        assert!(seen.iter().all(|s| *s == expected), "{mode}: {seen:?}");
        drop(store);
    }
}

#[test]
fn verify_full_with_the_right_ca_connects_encrypted() {
    let Some((url, ca)) = server() else { return };
    let app = application("full");
    let target = with(
        &url,
        &format!("application_name={app}&sslmode=verify-full&sslrootcert={ca}"),
    );
    let _store = open(&target).unwrap();
    let seen = encrypted(&url, &app);
    assert!(!seen.is_empty() && seen.iter().all(|s| *s), "{seen:?}");
}

#[test]
fn verify_full_refuses_a_certificate_no_trusted_root_signed() {
    let Some((url, _)) = server() else { return };
    let app = application("untrusted");
    // The system's and Mozilla's roots: the cluster's CA is in neither.
    let target = with(&url, &format!("application_name={app}&sslmode=verify-full"));
    let err = open(&target).unwrap_err();
    assert!(
        err.contains("invalid peer certificate: UnknownIssuer"),
        "{err}"
    );
    assert!(err.contains("sslrootcert=PATH"), "{err}");
    assert!(encrypted(&url, &app).is_empty());
}

#[test]
fn verify_ca_checks_the_chain_and_verify_full_also_the_name() {
    let Some((url, ca)) = server() else { return };
    // Reach 127.0.0.1 under the name `localhost`, which the certificate
    // (for the address 127.0.0.1 only) does not name.
    let Some(rest) = url.strip_prefix("postgres://") else {
        panic!("the test URL is postgres://USER@HOST:PORT/DB: {url}")
    };
    let Some((user, after)) = rest.split_once('@') else {
        panic!("the test URL names its user: {url}")
    };
    let Some((_, port_db)) = after.split_once(':') else {
        panic!("the test URL names its port: {url}")
    };
    let renamed = format!("postgres://{user}@localhost:{port_db}");
    let renamed = with(&renamed, "hostaddr=127.0.0.1");

    let chain = with(&renamed, &format!("sslmode=verify-ca&sslrootcert={ca}"));
    open(&chain).unwrap();

    let full = with(&renamed, &format!("sslmode=verify-full&sslrootcert={ca}"));
    let err = open(&full).unwrap_err();
    // rustls names the mismatch with or without its context, depending on
    // its features.
    assert!(
        err.contains("NotValidForName") || err.contains("not valid for name \"localhost\""),
        "{err}"
    );
    assert!(err.contains("does not name the host"), "{err}");
}
