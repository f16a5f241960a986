//! The approvals inbox over plain HTTP (no browser): sign-in and its
//! cookie, CSRF, four eyes, escaping, approve with edits, rejection,
//! operator resolution, deadlines and notifications to a real receiver.
//! `inbox_browser.rs` drives the same pages in Chromium.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use objectstack_bridge::approval::State;
use objectstack_gateway::NotifyConfig;
use serde_json::{Value, json};
use support::fake::Fake;
use support::inbox::{ALICE, BOB, Browser, actor, lookup, mcp, queue, start, start_with};

async fn helpdesk() -> Fake {
    let fake = Fake::start().await;
    for id in ["t1", "t2", "t3"] {
        fake.add_record("support_ticket", id, json!({"subject": "Printer"}));
    }
    fake
}

fn refund(record: &str, amount: i64, reason: &str) -> Value {
    json!({"recordId": record, "amount": amount, "reason": reason, "channel": "email"})
}

#[tokio::test]
async fn sign_in_sets_a_strict_http_only_cookie_and_the_key_is_kept_nowhere() {
    let fake = helpdesk().await;
    let running = start(&fake, |_| {}).await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(
        &alice,
        "action_refund_ticket",
        refund("t1", 120, "duplicate"),
    )
    .await;

    let mut browser = Browser::new(&running);
    let page = browser.get("/approvals/ui").await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("<label for=\"key\">API key"),
        "{}",
        page.body
    );
    assert!(!page.body.contains(&id), "nothing is shown before sign-in");
    let first = browser.cookie.clone().unwrap();
    let set = browser.set_cookies.last().unwrap().clone();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    assert!(!set.contains("Secure"), "plain HTTP: {set}");
    for (name, value) in [
        ("content-security-policy", "default-src 'none'"),
        ("cache-control", "no-store"),
        ("x-frame-options", "DENY"),
    ] {
        assert!(
            page.headers[name].to_str().unwrap().contains(value),
            "{name}"
        );
    }
    // The pages of an action need a session with a key too.
    let page = browser.get(&format!("/approvals/ui/{id}")).await;
    assert!(page.body.contains("Sign in"), "{}", page.body);

    // A wrong or missing CSRF token on the sign-in form is refused.
    let refused = browser
        .post("/approvals/ui/sign-in", &[("csrf", "nope"), ("key", BOB)])
        .await;
    assert_eq!(refused.status, 403);
    let page = browser.sign_in(BOB).await;
    assert_ne!(
        browser.cookie.as_deref(),
        Some(first.as_str()),
        "a new id on sign-in"
    );
    assert!(page.body.contains(&actor(BOB)), "{}", page.body);
    assert!(page.body.contains("Refund the customer"), "{}", page.body);
    assert!(page.body.contains(&actor(ALICE)), "the proposer is shown");
    assert!(
        page.body.contains("&quot;amount&quot;: 120"),
        "the arguments"
    );
    assert!(page.body.contains("Deadline"), "{}", page.body);
    assert!(
        page.body.contains("in 23 h"),
        "24 h by default: {}",
        page.body
    );

    // The old session id is dead.
    let mut stale = Browser::new(&running);
    stale.cookie = Some(first);
    assert!(stale.get("/approvals/ui").await.body.contains("Sign in"));

    // Sign out ends the session.
    let csrf = page.csrf();
    let out = browser
        .post("/approvals/ui/sign-out", &[("csrf", &csrf)])
        .await;
    assert!(out.body.contains("Sign in"), "{}", out.body);

    // The key is in no file the gateway wrote.
    let audit = running.audit();
    let db = std::fs::read(running.dir.path().join("approvals.sqlite")).unwrap();
    for key in [BOB, ALICE] {
        assert!(!audit.contains(key));
        assert!(!String::from_utf8_lossy(&db).contains(key));
    }
    running.stop().await;

    // Behind TLS the cookie is Secure.
    let running = start(&fake, |c| {
        c.inbox.public_url = Some("https://approvals.example.com".into());
        c.allowed_hosts.push("approvals.example.com".into());
    })
    .await;
    let mut browser = Browser::new(&running);
    browser.get("/approvals/ui").await;
    assert!(browser.set_cookies.last().unwrap().contains("; Secure"));
    running.stop().await;
}

#[tokio::test]
async fn a_post_without_the_csrf_token_changes_nothing() {
    let fake = helpdesk().await;
    let running = start(&fake, |_| {}).await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    let sha = running.gateway.queue().get(&id).unwrap().input_sha256;
    let mut browser = Browser::new(&running);
    let page = browser.sign_in(BOB).await;
    let csrf = page.csrf();
    let approve = format!("/approvals/ui/{id}/approve");
    let reject = format!("/approvals/ui/{id}/reject");
    for (path, form) in [
        (&approve, vec![("input_sha256", sha.as_str())]),
        (&approve, vec![("csrf", ""), ("input_sha256", sha.as_str())]),
        (
            &approve,
            vec![("csrf", "0123"), ("input_sha256", sha.as_str())],
        ),
        (&reject, vec![("reason", "no")]),
    ] {
        let page = browser.post(path, &form).await;
        assert_eq!(page.status, 403, "{path} {form:?}");
        assert!(
            page.body.contains("CSRF token is missing or wrong"),
            "{}",
            page.body
        );
    }
    // Without the session cookie, the right token is refused too.
    let mut other = Browser::new(&running);
    let page = other
        .post(&approve, &[("csrf", &csrf), ("input_sha256", &sha)])
        .await;
    assert_eq!(page.status, 403);
    assert_eq!(
        running.gateway.queue().get(&id).unwrap().state,
        State::Pending
    );
    assert!(fake.received().iter().all(|r| r.method != "POST"));

    let page = browser
        .post(&approve, &[("csrf", &csrf), ("input_sha256", &sha)])
        .await;
    assert!(page.body.contains("Approved, and it ran."), "{}", page.body);
    assert_eq!(
        running.gateway.queue().get(&id).unwrap().state,
        State::Executed
    );
    running.stop().await;
}

#[tokio::test]
async fn a_proposer_cannot_approve_their_own_action_unless_configured() {
    let fake = helpdesk().await;
    let running = start(&fake, |_| {}).await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    let sha = running.gateway.queue().get(&id).unwrap().input_sha256;
    let mut browser = Browser::new(&running);
    browser.sign_in(ALICE).await;
    let page = browser.get(&format!("/approvals/ui/{id}")).await;
    assert!(
        page.body.contains("someone else must approve it"),
        "{}",
        page.body
    );
    assert!(!page.body.contains(&format!("/approvals/ui/{id}/approve")));
    assert!(!page.body.contains("Approve with these arguments"));
    // Forged: refused by the queue.
    let csrf = page.csrf();
    let page = browser
        .post(
            &format!("/approvals/ui/{id}/approve"),
            &[("csrf", &csrf), ("input_sha256", &sha)],
        )
        .await;
    assert!(page.body.contains("four eyes"), "{}", page.body);
    assert_eq!(
        running.gateway.queue().get(&id).unwrap().state,
        State::Pending
    );
    // The JSON API holds the same rule.
    let response = reqwest::Client::new()
        .post(running.url(&format!("/approvals/{id}/approve")))
        .bearer_auth(ALICE)
        .json(&json!({"input_sha256": sha}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    running.stop().await;

    let running = start(&fake, |c| c.inbox.allow_self_approval = true).await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(&alice, "action_purge_ticket", json!({"recordId": "t3"})).await;
    let mut browser = Browser::new(&running);
    browser.sign_in(ALICE).await;
    let page = browser.get(&format!("/approvals/ui/{id}")).await;
    let csrf = page.csrf();
    let sha = running.gateway.queue().get(&id).unwrap().input_sha256;
    let page = browser
        .post(
            &format!("/approvals/ui/{id}/approve"),
            &[("csrf", &csrf), ("input_sha256", &sha)],
        )
        .await;
    assert!(page.body.contains("Approved, and it ran."), "{}", page.body);
    running.stop().await;
}

/// `body` without the values of its form controls (`value="…"` and
/// `<textarea>` contents).
fn without_control_values(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    loop {
        let next = [rest.find(" value=\""), rest.find("<textarea")]
            .into_iter()
            .flatten()
            .min();
        let Some(at) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = if let Some(value) = tail.strip_prefix(" value=\"") {
            value.find('"').map(|e| at + 8 + e + 1)
        } else {
            tail.find("</textarea>").map(|e| at + e)
        };
        match end {
            Some(end) => rest = &rest[end..],
            None => return out,
        }
        if rest.starts_with("</textarea>") {
            out.push_str("</textarea>");
            rest = &rest["</textarea>".len()..];
        }
    }
}

#[tokio::test]
async fn hostile_arguments_and_reasons_are_shown_as_text() {
    let fake = helpdesk().await;
    let running = start(&fake, |_| {}).await;
    let alice = mcp(&running, ALICE).await;
    let hostile = "<script>alert(1)</script>\"><img src=x onerror=alert(2)> refund 10 EUR \u{202e}0000001 RUE";
    let id = queue(&alice, "action_refund_ticket", refund("t1", 5, hostile)).await;
    let other = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    let mut browser = Browser::new(&running);
    let page = browser.sign_in(BOB).await;
    let csrf = page.csrf();
    browser
        .post(
            &format!("/approvals/ui/{other}/reject"),
            &[("csrf", &csrf), ("reason", hostile)],
        )
        .await;
    for path in [
        "/approvals/ui".to_owned(),
        format!("/approvals/ui/{id}"),
        format!("/approvals/ui/{other}"),
    ] {
        let page = browser.get(&path).await;
        assert!(
            !page.body.contains("<script>alert"),
            "{path}: {}",
            page.body
        );
        assert!(!page.body.contains("<img src=x"), "{path}");
        assert!(
            page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{path}"
        );
        // A right-to-left override would make `1000000` read `10 EUR`: the
        // page shows it escaped. Only an edit control holds it as it is (so
        // an untouched field submits it back), with a warning beside it.
        let outside_controls = without_control_values(&page.body);
        assert!(!outside_controls.contains('\u{202e}'), "{path}");
        assert!(page.body.contains("EUR \\u{202e}0000001"), "{path}");
        if path.ends_with(&id) {
            assert!(page.body.contains("id=\"f-reason\""), "{}", page.body);
            assert!(
                page.body.contains("invisible or direction-changing"),
                "{path}"
            );
        }
    }
    running.stop().await;
}

#[tokio::test]
async fn approve_with_edits_checks_the_schema_runs_the_edit_once_and_shows_the_diff() {
    let fake = helpdesk().await;
    let running = start(&fake, |_| {}).await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(
        &alice,
        "action_refund_ticket",
        refund("t1", 120, "duplicate"),
    )
    .await;
    let sha = running.gateway.queue().get(&id).unwrap().input_sha256;
    let mut browser = Browser::new(&running);
    browser.sign_in(BOB).await;
    let path = format!("/approvals/ui/{id}");
    let page = browser.get(&path).await;
    // The form is the tool's schema, filled with the proposal.
    for control in [
        "<input type=\"number\" step=\"any\" id=\"f-amount\" name=\"f.amount\" value=\"120\" required",
        "<input type=\"text\" id=\"f-reason\" name=\"f.reason\" value=\"duplicate\" required",
        "<option value=\"&quot;email&quot;\" selected>email</option>",
        "<select id=\"f-notify\" name=\"f.notify\">",
        "name=\"f.labels\" value=\"&quot;vip&quot;\"",
    ] {
        assert!(page.body.contains(control), "{control}: {}", page.body);
    }
    let csrf = page.csrf();
    let edit = format!("{path}/edit");
    // Invalid edits: nothing approved, the form comes back as typed.
    let page = browser
        .post(
            &edit,
            &[
                ("csrf", &csrf),
                ("input_sha256", &sha),
                ("f.recordId", "t1"),
                ("f.amount", "lots"),
                ("f.reason", ""),
                ("f.channel", "\"email\""),
            ],
        )
        .await;
    assert_eq!(page.status, 422, "{}", page.body);
    assert!(
        page.body.contains("`lots` is not a number"),
        "{}",
        page.body
    );
    assert!(page.body.contains("value=\"lots\""), "{}", page.body);
    let page = browser
        .post(
            &edit,
            &[
                ("csrf", &csrf),
                ("input_sha256", &sha),
                ("f.recordId", "t1"),
                ("f.amount", "80"),
                ("f.reason", ""),
                ("f.channel", "\"email\""),
            ],
        )
        .await;
    assert_eq!(page.status, 422);
    assert!(
        page.body.contains("reason"),
        "the schema names the missing field: {}",
        page.body
    );
    assert_eq!(
        running.gateway.queue().get(&id).unwrap().state,
        State::Pending
    );
    assert!(fake.received().iter().all(|r| r.method != "POST"));

    fake.clear();
    let page = browser
        .post(
            &edit,
            &[
                ("csrf", &csrf),
                ("input_sha256", &sha),
                ("f.recordId", "t1"),
                ("f.amount", "80"),
                ("f.reason", "partial refund"),
                ("f.channel", "\"sms\""),
                ("f.notify", "true"),
                ("f.labels", "\"goodwill\""),
            ],
        )
        .await;
    assert!(
        page.body.contains("Approved with your edits, and it ran."),
        "{}",
        page.body
    );
    assert!(page.body.contains("<del>120</del>"), "{}", page.body);
    assert!(page.body.contains("<ins>80</ins>"), "{}", page.body);
    let posts: Vec<_> = fake
        .received()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1, "{posts:?}");
    let post = &posts[0];
    assert_eq!(post.path, "/api/v1/actions/support_ticket/refund_ticket/t1");
    assert_eq!(
        post.authorization.as_deref(),
        Some(format!("Bearer {BOB}").as_str())
    );
    assert_eq!(
        post.body["params"],
        json!({"amount": 80, "reason": "partial refund", "channel": "sms", "notify": true, "labels": ["goodwill"]})
    );
    let row = running.gateway.queue().get(&id).unwrap();
    assert_eq!(row.state, State::Executed);
    assert_eq!(row.input["amount"], 120, "the proposal is kept");
    assert_eq!(row.approved_input.as_ref().unwrap()["amount"], 80);
    assert!(running.audit().contains("\"outcome\":\"executed\""));
    // Once: the edit form is gone and a replay changes nothing.
    let page = browser
        .post(
            &edit,
            &[
                ("csrf", &csrf),
                ("input_sha256", &sha),
                ("f.recordId", "t1"),
                ("f.amount", "1"),
                ("f.reason", "x"),
            ],
        )
        .await;
    assert!(page.body.contains("already executed"), "{}", page.body);
    assert_eq!(
        fake.received()
            .iter()
            .filter(|r| r.method == "POST")
            .count(),
        1
    );
    running.stop().await;
}

#[tokio::test]
async fn reject_needs_a_reason_and_the_model_sees_it() {
    let fake = helpdesk().await;
    let running = start(&fake, |_| {}).await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    let mut browser = Browser::new(&running);
    let page = browser.sign_in(BOB).await;
    let csrf = page.csrf();
    let path = format!("/approvals/ui/{id}/reject");
    let page = browser
        .post(&path, &[("csrf", &csrf), ("reason", "  ")])
        .await;
    assert!(page.body.contains("Say why you reject it"), "{}", page.body);
    assert_eq!(
        running.gateway.queue().get(&id).unwrap().state,
        State::Pending
    );
    let page = browser
        .post(
            &path,
            &[("csrf", &csrf), ("reason", "keep it for the audit")],
        )
        .await;
    assert!(
        page.body.contains("Rejected; it will not run."),
        "{}",
        page.body
    );
    let seen = lookup(&alice, &id).await;
    assert_eq!(seen["state"], "rejected");
    assert_eq!(seen["reason"], "keep it for the audit");
    assert_eq!(seen["decidedBy"], actor(BOB));
    let page = browser.get("/approvals/ui").await;
    assert!(page.body.contains("outcome-rejected"), "{}", page.body);
    assert!(page.body.contains("keep it for the audit"));
    running.stop().await;
}

#[tokio::test]
async fn an_in_doubt_action_is_flagged_and_an_operator_records_what_happened() {
    let fake = helpdesk().await;
    let running = start(&fake, |_| {}).await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    let q = running.gateway.queue().clone();
    let row = q.get(&id).unwrap();
    q.approve(&id, "someone", &row.input_sha256).unwrap();
    q.claim(&id, "a-gateway-that-died", Duration::from_millis(1))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    q.sweep_expired_leases().unwrap();
    assert_eq!(q.get(&id).unwrap().state, State::InDoubt);

    let mut browser = Browser::new(&running);
    let page = browser.sign_in(BOB).await;
    assert!(page.body.contains("in doubt</span>"), "{}", page.body);
    assert!(page.body.contains("Record the outcome"), "{}", page.body);
    let csrf = page.csrf();
    let path = format!("/approvals/ui/{id}/resolve");
    let page = browser
        .post(&path, &[("csrf", &csrf), ("outcome", "failed")])
        .await;
    assert!(page.body.contains("Say what you checked"), "{}", page.body);
    let page = browser
        .post(
            &path,
            &[
                ("csrf", &csrf),
                ("outcome", "failed"),
                ("note", "ticket t2 still exists"),
            ],
        )
        .await;
    assert!(page.body.contains("Recorded as failed."), "{}", page.body);
    let row = q.get(&id).unwrap();
    assert_eq!(row.state, State::Failed);
    assert_eq!(row.state_by, Some(actor(BOB)));
    assert_eq!(row.reason.as_deref(), Some("ticket t2 still exists"));
    assert!(
        fake.received().iter().all(|r| r.method != "POST"),
        "nothing ran"
    );
    running.stop().await;
}

#[tokio::test]
async fn pending_actions_expire_and_the_model_and_the_inbox_say_so() {
    let fake = helpdesk().await;
    let running = start(&fake, |c| {
        c.inbox.approval_ttl = Some(Duration::from_millis(600));
        c.inbox.sweep_interval = Duration::from_millis(50);
    })
    .await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    let seen = lookup(&alice, &id).await;
    assert_eq!(seen["state"], "pending");
    assert!(seen["deadline"].is_string(), "{seen:?}");
    let mut browser = Browser::new(&running);
    let page = browser.sign_in(BOB).await;
    let csrf = page.csrf();
    tokio::time::sleep(Duration::from_millis(900)).await;
    let seen = lookup(&alice, &id).await;
    assert_eq!(seen["state"], "expired", "{seen:?}");
    let page = browser.get("/approvals/ui").await;
    assert!(
        page.body.contains("outcome-expired\">expired"),
        "{}",
        page.body
    );
    assert!(page.body.contains("Nothing is waiting for a decision."));
    let sha = running.gateway.queue().get(&id).unwrap().input_sha256;
    let page = browser
        .post(
            &format!("/approvals/ui/{id}/approve"),
            &[("csrf", &csrf), ("input_sha256", &sha)],
        )
        .await;
    assert!(page.body.contains("already expired"), "{}", page.body);
    assert!(
        fake.received().iter().all(|r| r.method != "POST"),
        "nothing ran"
    );
    running.stop().await;
}

/// A webhook receiver on 127.0.0.1 that fails the first `failures`
/// requests with 500 and records every body it accepts.
async fn receiver(failures: usize) -> (String, Arc<Mutex<Vec<Value>>>, Arc<Mutex<usize>>) {
    let accepted = Arc::new(Mutex::new(Vec::new()));
    let tries = Arc::new(Mutex::new(0usize));
    let (a, t) = (accepted.clone(), tries.clone());
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let (a, t) = (a.clone(), t.clone());
            async move {
                let n = {
                    let mut t = t.lock().unwrap();
                    *t += 1;
                    *t
                };
                if n <= failures {
                    return axum::http::StatusCode::INTERNAL_SERVER_ERROR;
                }
                a.lock().unwrap().push(body);
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, accepted, tries)
}

async fn wait_for(accepted: &Arc<Mutex<Vec<Value>>>, n: usize) -> Vec<Value> {
    for _ in 0..200 {
        let got = accepted.lock().unwrap().clone();
        if got.len() >= n {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    accepted.lock().unwrap().clone()
}

#[tokio::test]
async fn notifications_reach_a_real_receiver_with_retries_and_never_block() {
    let fake = helpdesk().await;
    let (url, accepted, tries) = receiver(2).await;
    let running = start(&fake, |c| {
        let mut notify = NotifyConfig::new(url.clone());
        notify.backoff = Duration::from_millis(20);
        c.inbox.notify = Some(notify);
        c.inbox.sweep_interval = Duration::from_millis(50);
    })
    .await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(
        &alice,
        "action_refund_ticket",
        refund("t1", 120, "secret reason"),
    )
    .await;
    let got = wait_for(&accepted, 1).await;
    assert_eq!(*tries.lock().unwrap(), 3, "two failures, then delivered");
    let queued = &got[0];
    assert_eq!(queued["event"], "queued");
    assert_eq!(queued["pendingActionId"], json!(id));
    assert_eq!(queued["tool"], "action_refund_ticket");
    assert_eq!(queued["recordId"], "t1");
    assert_eq!(queued["proposer"], json!(actor(ALICE)));
    let link = running.url(&format!("/approvals/ui/{id}"));
    assert_eq!(queued["url"], json!(link));
    let slack = queued["text"].as_str().unwrap();
    assert!(
        slack.starts_with("Approval needed: refund_ticket on support_ticket t1"),
        "{slack}"
    );
    assert!(
        slack.ends_with(&format!("<{link}|Open in the inbox>")),
        "{slack}"
    );
    assert!(
        !queued.to_string().contains("secret reason"),
        "no arguments in messages"
    );

    // Decided and run: two more messages, in order.
    let mut browser = Browser::new(&running);
    let page = browser.sign_in(BOB).await;
    let csrf = page.csrf();
    let sha = running.gateway.queue().get(&id).unwrap().input_sha256;
    browser
        .post(
            &format!("/approvals/ui/{id}/approve"),
            &[("csrf", &csrf), ("input_sha256", &sha)],
        )
        .await;
    let got = wait_for(&accepted, 3).await;
    let events: Vec<&str> = got.iter().map(|m| m["event"].as_str().unwrap()).collect();
    assert_eq!(events, ["queued", "approved", "executed"]);
    assert_eq!(got[1]["by"], json!(actor(BOB)));

    // A failed run and a claim that ran out of lease (found by the
    // gateway's own sweep) are announced too.
    fake.reply(
        "purge_ticket",
        400,
        Fake::envelope(400, "VALIDATION_ERROR", "ticket is locked"),
    );
    let failing = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    let sha = running.gateway.queue().get(&failing).unwrap().input_sha256;
    browser
        .post(
            &format!("/approvals/ui/{failing}/approve"),
            &[("csrf", &csrf), ("input_sha256", &sha)],
        )
        .await;
    let lost = queue(&alice, "action_purge_ticket", json!({"recordId": "t3"})).await;
    let q = running.gateway.queue().clone();
    q.approve(&lost, "someone", &q.get(&lost).unwrap().input_sha256)
        .unwrap();
    q.claim(&lost, "a-gateway-that-died", Duration::from_millis(1))
        .unwrap();
    let got = wait_for(&accepted, 9).await;
    let events: Vec<(&str, &str)> = got[3..]
        .iter()
        .map(|m| {
            (
                m["event"].as_str().unwrap(),
                m["pendingActionId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("queued", failing.as_str()),
            ("approved", failing.as_str()),
            ("failed", failing.as_str()),
            ("queued", lost.as_str()),
            ("approved", lost.as_str()),
            ("in_doubt", lost.as_str()),
        ]
    );
    assert!(
        got[5]["error"]
            .as_str()
            .unwrap()
            .contains("ticket is locked"),
        "{}",
        got[5]
    );
    assert!(
        got[5]["text"]
            .as_str()
            .unwrap()
            .starts_with("Failed: purge_ticket")
    );
    assert!(
        got[8]["text"]
            .as_str()
            .unwrap()
            .starts_with("In doubt: purge_ticket")
    );
    assert_eq!(
        q.get(&lost).unwrap().state,
        State::InDoubt,
        "swept by the gateway itself"
    );
    running.stop().await;

    // A receiver that is down: the call is queued at once all the same.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/hook", l.local_addr().unwrap())
    };
    let running = start(&fake, |c| {
        let mut notify = NotifyConfig::new(dead);
        notify.backoff = Duration::from_secs(30);
        c.inbox.notify = Some(notify);
    })
    .await;
    let alice = mcp(&running, ALICE).await;
    let started = std::time::Instant::now();
    let id = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    let id2 = queue(&alice, "action_purge_ticket", json!({"recordId": "t3"})).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        running.gateway.queue().get(&id).unwrap().state,
        State::Pending
    );
    assert_eq!(
        running.gateway.queue().get(&id2).unwrap().state,
        State::Pending
    );
    running.stop().await;
}

#[tokio::test]
async fn the_inbox_page_renders_as_reviewed() {
    // On a fixed clock, with the random parts (ids, the CSRF token)
    // replaced, the whole page is pinned: structure, labels, escaping.
    let fake = helpdesk().await;
    let clock = Arc::new(objectstack_bridge::approval::ManualClock::new(
        1_796_131_200_000,
    ));
    let running = start_with(&fake, |_| {}, Some(clock.clone())).await;
    let alice = mcp(&running, ALICE).await;
    let pending = queue(
        &alice,
        "action_refund_ticket",
        refund("t1", 120, "charged <twice>"),
    )
    .await;
    let rejected = queue(&alice, "action_purge_ticket", json!({"recordId": "t2"})).await;
    clock.advance(Duration::from_secs(3 * 3600 + 120));
    running
        .gateway
        .queue()
        .reject(&rejected, &actor(BOB), Some("keep it"))
        .unwrap();
    let mut browser = Browser::new(&running);
    let page = browser.sign_in(BOB).await;
    let csrf = page.csrf();
    let body = page
        .body
        .replace(&csrf, "CSRF")
        .replace(&pending, "pa_PENDING")
        .replace(&rejected, "pa_REJECTED");
    insta::assert_snapshot!(body);
    running.stop().await;
}

#[tokio::test]
async fn the_server_decides_who_signs_in_and_what_they_see() {
    const MALLORY: &str = "osk_mallory_revoked";
    const CAROL: &str = "osk_carol_no_tickets";
    let fake = helpdesk().await;
    fake.revoke(MALLORY);
    fake.deny(CAROL, "support_ticket");
    let running = start(&fake, |_| {}).await;
    let alice = mcp(&running, ALICE).await;
    let id = queue(&alice, "action_refund_ticket", refund("t2", 40, "late")).await;

    // A key the server refuses does not sign in.
    let mut browser = Browser::new(&running);
    let page = browser.get("/approvals/ui").await;
    let csrf = page.csrf();
    let page = browser
        .post(
            "/approvals/ui/sign-in",
            &[("csrf", &csrf), ("key", MALLORY)],
        )
        .await;
    assert!(!page.body.contains("Signed in as"), "{}", page.body);
    assert!(
        page.body.contains("does not accept this API key"),
        "{}",
        page.body
    );
    assert!(!page.body.contains(&id));

    // A key that may not read tickets signs in but sees and decides none.
    let mut carol = Browser::new(&running);
    let page = carol.sign_in(CAROL).await;
    assert!(!page.body.contains(&id), "{}", page.body);
    let detail = carol.get(&format!("/approvals/ui/{id}")).await;
    assert_eq!(detail.status, 403, "{}", detail.body);
    let csrf = page.csrf();
    let page = carol
        .post(
            &format!("/approvals/ui/{id}/reject"),
            &[("csrf", &csrf), ("reason", "not mine")],
        )
        .await;
    assert!(!page.body.contains("Rejected"), "{}", page.body);
    let row = running.gateway.queue().get(&id).unwrap();
    assert_eq!(row.state, State::Pending);
    running.stop().await;
}

#[tokio::test]
async fn the_history_shows_the_decisions_the_key_may_read_a_hundred_at_a_time() {
    const CAROL: &str = "osk_carol_no_tickets";
    let fake = helpdesk().await;
    fake.deny(CAROL, "support_ticket");
    let clock = Arc::new(objectstack_bridge::approval::ManualClock::new(
        1_800_000_000_000,
    ));
    let running = start_with(&fake, |_| {}, Some(clock.clone())).await;
    let queue = running.gateway.queue();
    let propose = |object: &str, n: usize| {
        clock.advance(Duration::from_secs(1));
        queue
            .propose(support::proposal_on(
                "action_purge_ticket",
                object,
                &format!("r{n}"),
                "osk:elsewhere",
            ))
            .unwrap()
            .action
            .id
    };
    let waiting = propose("support_ticket", 999);
    // Two invoices decided first, then 101 tickets: more than a page.
    let decided: Vec<String> = (0..103)
        .map(|n| {
            let id = propose(if n < 2 { "invoice" } else { "support_ticket" }, n);
            clock.advance(Duration::from_secs(1));
            queue.reject(&id, "bob", Some("no")).unwrap();
            id
        })
        .collect();
    let linked = |body: &str, id: &str| body.contains(&format!("href=\"/approvals/ui/{id}\""));

    // A key that reads everything: what waits, and the 100 newest decisions.
    let mut bob = Browser::new(&running);
    let page = bob.sign_in(BOB).await;
    assert!(linked(&page.body, &waiting), "{}", page.body);
    for (n, id) in decided.iter().enumerate() {
        assert_eq!(linked(&page.body, id), n >= 3, "decision {n}");
    }
    // "Older decisions" leads on from the last decision shown; the page
    // after it starts with the decision after that one.
    let older_link = |body: &str| -> Option<String> {
        let at = body.find("href=\"/approvals/ui?older=")? + "href=\"".len();
        let end = at + body.get(at..)?.find('"')?;
        Some(body.get(at..end)?.replace("&amp;", "&"))
    };
    let next = older_link(&page.body).expect("an Older decisions link");
    assert!(next.ends_with("#history"), "{next}");
    assert!(!page.body.contains("Newest decisions"));
    // The next page: the three oldest decisions, and what still waits.
    let page = bob.get(next.trim_end_matches("#history")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(linked(&page.body, &waiting));
    for (n, id) in decided.iter().enumerate() {
        assert_eq!(linked(&page.body, id), n < 3, "decision {n} on page 2");
    }
    assert!(
        page.body.contains("href=\"/approvals/ui#history\""),
        "{}",
        page.body
    );
    assert!(older_link(&page.body).is_none(), "{}", page.body);
    // Past the oldest decision: nothing, said so.
    let oldest = queue.get(&decided[0]).unwrap();
    let far = bob
        .get(&format!(
            "/approvals/ui?older={}.{}",
            oldest.state_at, oldest.id
        ))
        .await;
    assert_eq!(far.status, 200);
    assert!(
        far.body.contains("No decisions this far back"),
        "{}",
        far.body
    );
    for bad in [
        "",
        "two",
        "1",
        "x.pa_1",
        ".pa_1",
        "1.",
        "18446744073709551615.pa_1",
    ] {
        let page = bob.get(&format!("/approvals/ui?older={bad}")).await;
        assert_eq!(page.status, 400, "{bad}: {}", page.body);
    }
    // A key that may not read tickets: its newest readable decisions lie
    // past a whole page of tickets, and are found there.
    let mut carol = Browser::new(&running);
    let page = carol.sign_in(CAROL).await;
    assert!(!linked(&page.body, &waiting));
    for (n, id) in decided.iter().enumerate() {
        assert_eq!(linked(&page.body, id), n < 2, "decision {n}");
    }
    assert!(older_link(&page.body).is_none(), "{}", page.body);
    running.stop().await;
}
