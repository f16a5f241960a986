//! The approvals inbox in a real browser: headless Chromium (Debian's
//! `chromium` and `chromium-driver`) driven over WebDriver, against a
//! gateway in front of the fake ObjectStack server, with actions queued
//! through MCP by rmcp's client.
//!
//! Where Chromium or chromedriver is missing the test prints why and
//! passes, except in CI (`CI` set), where it fails: `.ci/run` installs
//! both. With `OBJECTSTACK_INBOX_SCREENSHOT=path.png` it writes a
//! screenshot of the inbox there, and one of an action's edit form beside
//! it (`path.edit.png`; the ones in the gateway README:
//! `OBJECTSTACK_INBOX_SCREENSHOT=$PWD/gateway/docs/inbox.png cargo test -p
//! objectstack-gateway --test inbox_browser`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use objectstack_bridge::approval::State;
use serde_json::{Value, json};
use support::fake::Fake;
use support::inbox::{ALICE, BOB, actor, lookup, mcp, queue, start};

/// The flags the browser runs with: headless, and nothing that reaches
/// beyond the machine.
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1500",
];

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Chromium's binary (Debian's real one, not its wrapper script, when
/// there) and chromedriver.
fn browser_tools() -> Result<(PathBuf, PathBuf), String> {
    let chromium = [
        PathBuf::from("/usr/lib/chromium/chromium"),
        PathBuf::from("/usr/bin/chromium"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .or_else(|| on_path("chromium"))
    .ok_or("no chromium binary (apt-get install chromium)")?;
    let driver = on_path("chromedriver")
        .or_else(|| {
            let p = PathBuf::from("/usr/lib/chromium/chromedriver");
            p.is_file().then_some(p)
        })
        .ok_or("no chromedriver (apt-get install chromium-driver)")?;
    Ok((chromium, driver))
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// chromedriver on a free loopback port, ended when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn driver(path: &Path) -> Driver {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(path)
        .arg(format!("--port={port}"))
        .arg("--allowed-ips=127.0.0.1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let driver = Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let http = reqwest::Client::new();
    for _ in 0..100 {
        if let Ok(r) = http.get(format!("{}/status", driver.url)).send().await
            && r.status().is_success()
        {
            return driver;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not answer on {}", driver.url);
}

async fn browser(driver: &Driver, chromium: &Path, profile: &Path) -> Client {
    let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|s| (*s).to_owned()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": chromium.display().to_string(), "args": args}),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a Chromium session")
}

async fn body_text(client: &Client) -> String {
    match client.find(Locator::Css("body")).await {
        Ok(body) => body.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// The page's text once it contains `needle` (a navigation may still be
/// under way when a click returns); the last text seen after 10 s.
async fn wait_text(client: &Client, needle: &str) -> String {
    let mut text = String::new();
    for _ in 0..100 {
        text = body_text(client).await;
        if text.contains(needle) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    text
}

async fn sign_in(client: &Client, base: &str, key: &str) {
    client.goto(&format!("{base}/approvals/ui")).await.unwrap();
    let field = client.find(Locator::Css("#key")).await.unwrap();
    field.send_keys(key).await.unwrap();
    client
        .find(Locator::Css("form[action='/approvals/ui/sign-in'] button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let text = wait_text(client, "Signed in as").await;
    assert!(text.contains("Signed in as"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_decides_in_a_real_browser() {
    let (chromium, chromedriver) = match browser_tools() {
        Ok(tools) => tools,
        Err(why) if in_ci() => panic!("the browser tests must run in CI, but: {why}"),
        Err(why) => {
            eprintln!("skipped: the browser test needs Chromium and chromedriver: {why}");
            return;
        }
    };
    let fake = Fake::start().await;
    for id in ["t1", "t2", "t3"] {
        fake.add_record("support_ticket", id, json!({"subject": "Printer on fire"}));
    }
    let running = start(&fake, |_| {}).await;
    let base = running.url("");
    let alice = mcp(&running, ALICE).await;
    let refund = queue(
        &alice,
        "action_refund_ticket",
        json!({"recordId": "t1", "amount": 120, "reason": "charged twice <b>by mistake</b>", "channel": "email", "labels": ["billing"]}),
    )
    .await;
    let purge = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    let goodwill = queue(
        &alice,
        "action_refund_ticket",
        json!({"recordId": "t3", "amount": 45, "reason": "goodwill gesture", "notify": true}),
    )
    .await;

    let driver = driver(&chromedriver).await;
    let profile = tempfile::tempdir().unwrap();
    let client = browser(&driver, &chromium, profile.path()).await;

    // Bob signs in and sees what Alice's AI queued, arguments as text.
    sign_in(&client, &base, BOB).await;
    let text = wait_text(&client, "Waiting for a decision (3)").await;
    assert!(text.contains("Waiting for a decision (3)"), "{text}");
    assert!(text.contains("Refund the customer"), "{text}");
    assert!(text.contains("Purge Ticket"), "{text}");
    assert!(text.contains(&actor(ALICE)), "{text}");
    assert!(
        text.contains("\"reason\": \"charged twice <b>by mistake</b>\""),
        "{text}"
    );
    assert!(
        client.find(Locator::Css("pre b")).await.is_err(),
        "an argument is never markup"
    );
    // Keyboard: the first Tab reaches the skip link.
    client
        .find(Locator::Css("body"))
        .await
        .unwrap()
        .send_keys("\u{E004}")
        .await
        .unwrap();
    let focused = client
        .execute("return document.activeElement.textContent", vec![])
        .await
        .unwrap();
    assert_eq!(focused, json!("Skip to the content"));
    if let Ok(path) = std::env::var("OBJECTSTACK_INBOX_SCREENSHOT") {
        client
            .execute(
                "window.scrollTo(0, 0); document.activeElement.blur()",
                vec![],
            )
            .await
            .unwrap();
        let png = client.screenshot().await.unwrap();
        std::fs::write(&path, png).unwrap();
        eprintln!("wrote the inbox screenshot to {path}");
    }

    // Approve with an edit: the amount goes from 120 to 80.
    fake.clear();
    client
        .goto(&format!("{base}/approvals/ui/{refund}"))
        .await
        .unwrap();
    let amount = client.find(Locator::Css("#f-amount")).await.unwrap();
    amount.clear().await.unwrap();
    amount.send_keys("80").await.unwrap();
    client
        .find(Locator::Css("label[for='f-notify']"))
        .await
        .unwrap();
    let notify = client.find(Locator::Css("#f-notify")).await.unwrap();
    notify.select_by_value("true").await.unwrap();
    if let Ok(path) = std::env::var("OBJECTSTACK_INBOX_SCREENSHOT") {
        // The edit form, scrolled into view, beside the inbox screenshot.
        let edit = Path::new(&path).with_extension("edit.png");
        client
            .execute(
                "document.getElementById('edit').scrollIntoView(); document.activeElement.blur()",
                vec![],
            )
            .await
            .unwrap();
        std::fs::write(&edit, client.screenshot().await.unwrap()).unwrap();
        eprintln!("wrote the edit form screenshot to {}", edit.display());
    }
    client
        .find(Locator::XPath(
            "//button[text()='Approve with these arguments']",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let text = wait_text(&client, "Approved with your edits").await;
    assert!(
        text.contains("Approved with your edits, and it ran."),
        "{text}"
    );
    let removed = client.find(Locator::Css("table.diff del")).await.unwrap();
    assert_eq!(removed.text().await.unwrap(), "120");
    let added = client.find(Locator::Css("table.diff ins")).await.unwrap();
    assert_eq!(added.text().await.unwrap(), "80");
    let posts: Vec<_> = fake
        .received()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1, "exactly once: {posts:?}");
    assert_eq!(
        posts[0].path,
        "/api/v1/actions/support_ticket/refund_ticket/t1"
    );
    assert_eq!(
        posts[0].body["params"],
        json!({"amount": 80, "reason": "charged twice <b>by mistake</b>", "channel": "email", "notify": true, "labels": ["billing"]})
    );
    assert_eq!(
        posts[0].authorization.as_deref(),
        Some(format!("Bearer {BOB}").as_str())
    );
    // Reloading the page (or pressing back and submitting again) does not
    // run it twice.
    client.refresh().await.unwrap();
    assert!(client.find(Locator::Css("#f-amount")).await.is_err());
    assert_eq!(
        fake.received()
            .iter()
            .filter(|r| r.method == "POST")
            .count(),
        1
    );

    // Reject the purge with a reason, from the keyboard.
    client.goto(&format!("{base}/approvals/ui")).await.unwrap();
    let reason = client
        .find(Locator::Css(&format!("#r-{purge}")))
        .await
        .unwrap();
    reason
        .send_keys("we keep tickets for the audit")
        .await
        .unwrap();
    reason.send_keys("\u{E007}").await.unwrap();
    let text = wait_text(&client, "Rejected;").await;
    assert!(text.contains("Rejected; it will not run."), "{text}");
    let seen = lookup(&alice, &purge).await;
    assert_eq!(seen["state"], "rejected");
    assert_eq!(seen["reason"], "we keep tickets for the audit");

    // A POST without its CSRF token is refused, and changes nothing.
    client.goto(&format!("{base}/approvals/ui")).await.unwrap();
    let outcome: Value = client
        .execute(
            "const f = document.querySelector(`form[action='/approvals/ui/${arguments[0]}/approve']`);\
             f.querySelector('input[name=csrf]').remove(); f.submit(); return true;",
            vec![json!(goodwill)],
        )
        .await
        .unwrap();
    assert_eq!(outcome, json!(true));
    let text = wait_text(&client, "CSRF token").await;
    assert!(text.contains("CSRF token is missing or wrong"), "{text}");
    assert_eq!(
        running.gateway.queue().get(&goodwill).unwrap().state,
        State::Pending
    );

    // Alice cannot approve what she proposed, even with a forged form.
    client.goto(&format!("{base}/approvals/ui")).await.unwrap();
    client
        .find(Locator::Css("form.signout button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    // The click returns before the sign-out's redirect has loaded: wait
    // for the sign-in form it leads to, or the next page may still be
    // served under the old session.
    client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("#key"))
        .await
        .unwrap();
    sign_in(&client, &base, ALICE).await;
    client
        .goto(&format!("{base}/approvals/ui/{goodwill}"))
        .await
        .unwrap();
    let text = wait_text(&client, "someone else must approve it").await;
    assert!(text.contains("someone else must approve it"), "{text}");
    assert!(
        client
            .find(Locator::Css(&format!(
                "form[action='/approvals/ui/{goodwill}/approve']"
            )))
            .await
            .is_err()
    );
    let sha = running.gateway.queue().get(&goodwill).unwrap().input_sha256;
    client
        .execute(
            "const f = document.createElement('form'); f.method = 'post';\
             f.action = `/approvals/ui/${arguments[0]}/approve`;\
             for (const [k, v] of [['csrf', document.querySelector('input[name=csrf]').value], ['input_sha256', arguments[1]]]) {\
               const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i); }\
             document.body.appendChild(f); f.submit(); return true;",
            vec![json!(goodwill), json!(sha)],
        )
        .await
        .unwrap();
    let text = wait_text(&client, "who cannot approve it too").await;
    assert!(
        text.contains("who cannot approve it too (four eyes)"),
        "{text}"
    );
    assert_eq!(
        running.gateway.queue().get(&goodwill).unwrap().state,
        State::Pending
    );
    assert_eq!(
        fake.received()
            .iter()
            .filter(|r| r.method == "POST")
            .count(),
        1,
        "still only the edited refund ran"
    );

    client.close().await.unwrap();
    drop(driver);
    running.stop().await;
}
