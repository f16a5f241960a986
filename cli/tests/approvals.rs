//! `objectstack-ai approvals`: operating a queue file a host wrote.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use common::stderr;
use objectstack_bridge::approval::{
    ApprovalQueue, ManualClock, PendingAction, Proposal, SqliteStore, State,
};
use objectstack_bridge::runtime::Actor;
use serde_json::{Value, json};

/// 2024-05-01T09:00:00Z
const T0: i64 = 1_714_554_000_000;

struct Fixture {
    _dir: TempDir,
    db: PathBuf,
    /// pending (t1), approved (t2), pending (t3, no object), executing with
    /// a lease long gone.
    rows: Vec<PendingAction>,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fixture(name: &str) -> Fixture {
    let dir = std::env::temp_dir().join(format!(
        "objectstack-cli-approvals-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("queue.db");
    let clock = Arc::new(ManualClock::new(T0));
    let queue =
        ApprovalQueue::new(Arc::new(SqliteStore::open(&db).unwrap())).with_clock(clock.clone());
    let propose = |n: usize, object: Option<&str>| {
        clock.advance(Duration::from_secs(60));
        let mut input = serde_json::Map::new();
        if object.is_some() {
            input.insert("recordId".into(), json!(format!("t{n}")));
        }
        input.insert("reason".into(), json!("cleanup"));
        queue
            .propose(Proposal {
                tool_name: "action_delete_task".into(),
                action_name: "delete_task".into(),
                object_name: object.map(str::to_owned),
                input,
                executable_sha256: "ab".repeat(32),
                conversation_id: Some("conv-1".into()),
                message_id: Some(format!("msg-{n}")),
                tool_call_id: Some(format!("call-{n}")),
                trace_id: None,
                proposer: Actor {
                    id: "u1".into(),
                    name: Some("Ada".into()),
                    roles: vec![],
                    permissions: vec![],
                },
            })
            .unwrap()
            .action
    };
    let a = propose(1, Some("task"));
    let b = propose(2, Some("task"));
    let c = propose(3, None);
    let d = propose(4, Some("task"));
    clock.advance(Duration::from_secs(60));
    queue.approve(&b.id, "alice", &b.input_sha256).unwrap();
    queue.approve(&d.id, "alice", &d.input_sha256).unwrap();
    queue
        .claim(&d.id, "worker-1", Duration::from_secs(30))
        .unwrap();
    let rows = [a, b, c, d]
        .iter()
        .map(|r| queue.get(&r.id).unwrap())
        .collect();
    Fixture {
        _dir: TempDir(dir),
        db,
        rows,
    }
}

fn run(db: &Path, args: &[&str]) -> Output {
    common::bin()
        .arg("approvals")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn text(out: &Output, code: i32) -> String {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Replaces the generated ids with stable names for snapshots.
fn redact(f: &Fixture, s: &str) -> String {
    let mut s = s.to_owned();
    for (i, row) in f.rows.iter().enumerate() {
        s = s.replace(&row.id, &format!("pa_{:0>24}", i + 1));
    }
    s
}

#[test]
fn list_shows_every_action_oldest_first() {
    let f = fixture("list");
    let out = text(&run(&f.db, &["list"]), 0);
    insta::assert_snapshot!("approvals_list", redact(&f, &out));
    let approved = text(&run(&f.db, &["list", "--state", "approved"]), 0);
    assert!(approved.contains(&f.rows[1].id));
    assert!(!approved.contains(&f.rows[0].id));
    assert!(
        approved.ends_with("1 pending action (1 approved)\n"),
        "{approved}"
    );
    let none = text(&run(&f.db, &["list", "--state", "failed"]), 0);
    assert_eq!(none, "no pending actions in state failed\n");
    let json: Value =
        serde_json::from_str(&text(&run(&f.db, &["list", "--format", "json"]), 0)).unwrap();
    let rows = json["pendingActions"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0]["id"], f.rows[0].id.as_str());
    assert_eq!(rows[0]["state"], "pending");
    assert_eq!(rows[0]["createdAt"], "2024-05-01T09:01:00.000Z");
    assert_eq!(rows[3]["state"], "executing");
    let limited: Value = serde_json::from_str(&text(
        &run(&f.db, &["--format", "json", "list", "--limit", "2"]),
        0,
    ))
    .unwrap();
    assert_eq!(limited["pendingActions"].as_array().unwrap().len(), 2);
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["--format", "json", "list"];
        all.extend_from_slice(args);
        let json: Value = serde_json::from_str(&text(&run(&f.db, &all), 0)).unwrap();
        json["pendingActions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        ids(&["--order", "newest", "--limit", "2"]),
        [f.rows[3].id.clone(), f.rows[2].id.clone()]
    );
    // The two decided since they were proposed come first; they changed in
    // the same millisecond, so the larger id leads.
    let mut decided = vec![f.rows[1].id.clone(), f.rows[3].id.clone()];
    decided.sort();
    decided.reverse();
    assert_eq!(ids(&["--order", "changed", "--limit", "2"]), decided);
    let bad = run(&f.db, &["list", "--order", "sideways"]);
    let err = String::from_utf8_lossy(&bad.stderr).into_owned();
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--order must be oldest, newest or changed"),
        "{err}"
    );
}

#[test]
fn show_prints_the_input_and_its_hash() {
    let f = fixture("show");
    let out = text(&run(&f.db, &["show", &f.rows[1].id]), 0);
    insta::assert_snapshot!("approvals_show", redact(&f, &out));
    assert!(out.contains(&f.rows[1].input_sha256));
    let json: Value = serde_json::from_str(&text(
        &run(&f.db, &["show", &f.rows[0].id, "--format", "json"]),
        0,
    ))
    .unwrap();
    assert_eq!(json["inputSha256"], f.rows[0].input_sha256.as_str());
    assert_eq!(
        json["input"],
        json!({"recordId": "t1", "reason": "cleanup"})
    );
    assert_eq!(json["proposer"], json!({"id": "u1", "name": "Ada"}));
}

#[test]
fn approve_once_then_everyone_else_is_told_who_decided() {
    let f = fixture("approve");
    let id = &f.rows[0].id;
    let out = text(&run(&f.db, &["approve", id, "--by", "carol"]), 0);
    assert!(out.starts_with(&format!("approved {id} by carol")), "{out}");
    let again = run(&f.db, &["approve", id, "--by", "dave"]);
    text(&again, 1);
    assert!(
        stderr(&again).contains("is already approved (by carol)"),
        "{}",
        stderr(&again)
    );
    let json: Value = serde_json::from_str(&text(
        &run(&f.db, &["reject", id, "--by", "dave", "--format", "json"]),
        1,
    ))
    .unwrap();
    assert_eq!(
        json,
        json!({"error": {"code": "already_decided", "id": id, "state": "approved", "by": "carol",
               "message": format!("pending action `{id}` is already approved (by carol); nothing was changed")}})
    );
    let row: Value =
        serde_json::from_str(&text(&run(&f.db, &["show", id, "--format", "json"]), 0)).unwrap();
    assert_eq!(row["state"], "approved");
    assert_eq!(row["decidedBy"], "carol");
    assert_eq!(row["approvedSha256"], f.rows[0].input_sha256.as_str());
}

#[test]
fn approval_is_bound_to_the_hash_the_operator_saw() {
    let f = fixture("hash");
    let (id, hash) = (&f.rows[0].id, &f.rows[0].input_sha256);
    let wrong = f.rows[2].input_sha256.as_str();
    let out = run(
        &f.db,
        &["approve", id, "--by", "carol", "--input-sha256", wrong],
    );
    text(&out, 1);
    assert!(stderr(&out).contains("review it again"), "{}", stderr(&out));
    let out = text(
        &run(
            &f.db,
            &[
                "approve",
                id,
                "--by",
                "carol",
                "--input-sha256",
                &hash.to_uppercase(),
            ],
        ),
        0,
    );
    assert!(out.contains(hash.as_str()), "{out}");
}

#[test]
fn reject_records_the_reason() {
    let f = fixture("reject");
    let id = &f.rows[2].id;
    let out = text(
        &run(
            &f.db,
            &[
                "reject",
                id,
                "--by",
                "bob",
                "--reason",
                "not during quarter close",
            ],
        ),
        0,
    );
    assert_eq!(
        out,
        format!("rejected {id} by bob: not during quarter close\n")
    );
    let json: Value =
        serde_json::from_str(&text(&run(&f.db, &["--format", "json", "show", id]), 0)).unwrap();
    assert_eq!(json["state"], "rejected");
    assert_eq!(json["reason"], "not during quarter close");
}

#[test]
fn expire_old_pending_actions_and_stale_claims() {
    let f = fixture("expire");
    let json: Value = serde_json::from_str(&text(
        &run(&f.db, &["expire", "--older-than", "1h", "--format", "json"]),
        0,
    ))
    .unwrap();
    assert_eq!(json["expired"], json!([f.rows[0].id, f.rows[2].id]));
    assert_eq!(json["inDoubt"], json!([f.rows[3].id]));
    let states: Vec<String> = f
        .rows
        .iter()
        .map(|r| {
            let v: Value =
                serde_json::from_str(&text(&run(&f.db, &["show", &r.id, "--format", "json"]), 0))
                    .unwrap();
            v["state"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(states, ["expired", "approved", "expired", "in_doubt"]);
    let out = text(&run(&f.db, &["expire", "--older-than", "1h"]), 0);
    assert_eq!(out, "expired 0 pending actions older than 1h\n");

    let id = &f.rows[3].id;
    let out = run(
        &f.db,
        &["resolve", &f.rows[1].id, "--as", "executed", "--by", "ops"],
    );
    text(&out, 1);
    assert!(stderr(&out).contains("not in_doubt"), "{}", stderr(&out));
    let out = text(
        &run(
            &f.db,
            &[
                "resolve",
                id,
                "--as",
                "failed",
                "--by",
                "ops",
                "--note",
                "never reached the API",
            ],
        ),
        0,
    );
    assert_eq!(out, format!("resolved {id} as failed by ops\n"));
    let v: Value =
        serde_json::from_str(&text(&run(&f.db, &["show", id, "--format", "json"]), 0)).unwrap();
    assert_eq!(v["state"], "failed");
    assert_eq!(v["error"], "never reached the API");
    assert_eq!(State::Failed.as_str(), v["state"]);
}

#[test]
fn stored_text_cannot_drive_the_terminal_or_panic_the_table() {
    let f = fixture("hostile");
    let long_id = "L".repeat(70_000);
    let conn = rusqlite::Connection::open(&f.db).unwrap();
    conn.execute(
        "UPDATE pending_actions SET id = ?1 WHERE id = ?2",
        [&long_id, &f.rows[2].id],
    )
    .unwrap();
    conn.execute(
        "UPDATE pending_actions SET conversation_id = ?1, state_by = ?2 WHERE id = ?3",
        ["conv\u{1b}[2J", "sys\u{202e}tem", &f.rows[0].id],
    )
    .unwrap();
    drop(conn);
    let out = text(&run(&f.db, &["list"]), 0);
    assert!(
        out.lines().any(|l| l.starts_with(&long_id)),
        "the long id is listed"
    );
    let out = text(&run(&f.db, &["show", &f.rows[0].id]), 0);
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{202e}'),
        "{out}"
    );
    assert!(out.contains("conversation conv\\u001b[2J"), "{out}");
    let json: Value = serde_json::from_str(&text(
        &run(&f.db, &["show", &f.rows[0].id, "--format", "json"]),
        0,
    ))
    .unwrap();
    assert_eq!(
        json["conversationId"], "conv\u{1b}[2J",
        "JSON keeps the stored text"
    );
}

#[test]
fn refused_files_are_left_as_they_were() {
    let f = fixture("foreign");
    let other = f.db.with_file_name("crm.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE customers (id INTEGER); INSERT INTO customers VALUES (1);")
        .unwrap();
    let before = std::fs::read(&other).unwrap();
    let out = run(&other, &["list"]);
    text(&out, 2);
    assert!(stderr(&out).contains("something else"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&other).unwrap(), before);
    let empty = f.db.with_file_name("empty.db");
    std::fs::write(&empty, b"").unwrap();
    text(&run(&empty, &["list"]), 2);
    assert_eq!(std::fs::read(&empty).unwrap(), b"");
    let dir = f.db.parent().unwrap();
    let out = run(dir, &["list"]);
    text(&out, 2);
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
    text(&run(&f.db, &["list", "--limit", "0"]), 2);
    // In JSON mode an unusable file is a JSON error too.
    let out = run(&other, &["--format", "json", "list"]);
    let json: Value = serde_json::from_str(&text(&out, 2)).unwrap();
    assert_eq!(json["error"]["code"], "unusable");
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("something else"),
        "{json}"
    );
}

#[test]
fn unusable_input_is_exit_2_and_unknown_ids_exit_1() {
    let f = fixture("bad");
    let missing = f.db.with_file_name("nope.db");
    let out = run(&missing, &["list"]);
    text(&out, 2);
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    assert!(!missing.exists());
    let junk = f.db.with_file_name("junk.db");
    std::fs::write(
        &junk,
        "hello, this is certainly not a database file at all....",
    )
    .unwrap();
    let out = run(&junk, &["list"]);
    text(&out, 2);
    assert!(
        stderr(&out).contains("not an approval queue"),
        "{}",
        stderr(&out)
    );
    for args in [
        &["expire", "--older-than", "24"][..],
        &["list", "--state", "done"],
        &["approve", "x"],
        &["frobnicate"],
    ] {
        let out = run(&f.db, args);
        text(&out, 2);
    }
    let out = run(&f.db, &["show", "pa_nope"]);
    text(&out, 1);
    assert!(
        stderr(&out).contains("no pending action `pa_nope`"),
        "{}",
        stderr(&out)
    );
    // A blank decider is a command-line error, refused before the queue
    // is opened.
    let out = run(&f.db, &["approve", &f.rows[0].id, "--by", " "]);
    text(&out, 2);
    assert!(stderr(&out).contains("it is empty"), "{}", stderr(&out));
}

#[test]
fn a_damaged_row_is_reported_and_the_others_are_listed() {
    let f = fixture("damaged");
    let conn = rusqlite::Connection::open(&f.db).unwrap();
    conn.execute_batch("DROP TRIGGER pending_actions_input_is_immutable")
        .unwrap();
    conn.execute(
        "UPDATE pending_actions SET input = 'not json' WHERE id = ?1",
        [&f.rows[0].id],
    )
    .unwrap();
    drop(conn);

    let out = run(&f.db, &["list"]);
    let listed = text(&out, 1);
    for row in &f.rows[1..] {
        assert!(listed.contains(&row.id), "{listed}");
    }
    assert!(!listed.contains(&f.rows[0].id), "{listed}");
    assert!(
        listed.ends_with("3 pending actions (1 pending, 1 approved, 1 executing)\n"),
        "{listed}"
    );
    let warning = stderr(&out);
    assert!(
        warning.starts_with(&format!(
            "warning: pending action `{}` cannot be read: its input is not a JSON object",
            f.rows[0].id
        )),
        "{warning}"
    );

    let json: Value =
        serde_json::from_str(&text(&run(&f.db, &["list", "--format", "json"]), 1)).unwrap();
    assert_eq!(json["pendingActions"].as_array().unwrap().len(), 3);
    assert_eq!(json["unreadable"][0]["id"], f.rows[0].id.as_str());
    assert!(
        json["unreadable"][0]["message"]
            .as_str()
            .unwrap()
            .contains("input is not a JSON object")
    );

    // Only the damaged row is damaged: the others can still be decided.
    let approved = text(
        &run(
            &f.db,
            &[
                "approve",
                &f.rows[2].id,
                "--by",
                "alice",
                "--input-sha256",
                &f.rows[2].input_sha256,
            ],
        ),
        0,
    );
    assert!(approved.contains(&f.rows[2].id), "{approved}");
    let shown = run(&f.db, &["show", &f.rows[0].id]);
    assert_eq!(shown.status.code(), Some(2), "{}", stderr(&shown));
}

/// The names in the queue's directory, sorted.
fn files_beside(db: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn list_and_show_only_read_the_file() {
    let f = fixture("readonly");
    // As the host leaves it: a rollback-journal file no process has open.
    rusqlite::Connection::open(&f.db)
        .unwrap()
        .pragma_update(None, "journal_mode", "DELETE")
        .unwrap();
    let (bytes, files) = (std::fs::read(&f.db).unwrap(), files_beside(&f.db));
    assert_eq!(files, ["queue.db"]);
    let id = f.rows[0].id.as_str();
    for args in [
        &["list"][..],
        &["list", "--format", "json"],
        &["list", "--state", "pending"],
        &["show", id],
        &["show", id, "--format", "json"],
    ] {
        text(&run(&f.db, args), 0);
        assert_eq!(
            files_beside(&f.db),
            files,
            "{args:?} left files beside the queue"
        );
        assert!(
            std::fs::read(&f.db).unwrap() == bytes,
            "{args:?} wrote to the queue"
        );
    }
}

#[test]
fn a_writer_holding_a_write_transaction_does_not_block_list_or_show() {
    let f = fixture("writer");
    let writer = rusqlite::Connection::open(&f.db).unwrap();
    writer
        .execute_batch(&format!(
            "BEGIN IMMEDIATE; UPDATE pending_actions SET reason = 'uncommitted' WHERE id = '{}';",
            f.rows[0].id
        ))
        .unwrap();
    for args in [&["list"][..], &["show", f.rows[0].id.as_str()]] {
        let start = std::time::Instant::now();
        let out = run(&f.db, args);
        let elapsed = start.elapsed();
        let shown = text(&out, 0);
        assert!(
            elapsed < Duration::from_secs(10),
            "{args:?} waited {elapsed:?} for the writer"
        );
        assert!(!shown.contains("uncommitted"), "{shown}");
    }
    writer.execute_batch("COMMIT").unwrap();
    let shown = text(&run(&f.db, &["show", &f.rows[0].id]), 0);
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("  reason:") && l.ends_with(" uncommitted")),
        "{shown}"
    );
}

/// Writes the queue file objectstack-ai 0.1 left (schema version 1, WAL).
fn load_v1(db: &Path) {
    let sql =
        std::fs::read_to_string(common::root().join("bridge/tests/data/approval-queue-v1.sql"))
            .unwrap();
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
}

fn user_version(db: &Path) -> i64 {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn reading_an_old_queue_leaves_it_old_and_the_first_write_upgrades_it() {
    let f = fixture("v1");
    let db = f.db.with_file_name("old.db");
    load_v1(&db);
    let (bytes, files) = (std::fs::read(&db).unwrap(), files_beside(&db));
    let listed = text(&run(&db, &["list"]), 0);
    assert!(
        listed.ends_with("3 pending actions (1 pending, 1 approved, 1 executed)\n"),
        "{listed}"
    );
    let shown = text(&run(&db, &["show", "pa_000000000000000000000002"]), 0);
    assert!(shown.contains("before definitions were bound"), "{shown}");
    assert!(
        std::fs::read(&db).unwrap() == bytes,
        "a read upgraded the file"
    );
    assert_eq!(files_beside(&db), files);
    assert_eq!(user_version(&db), 1);

    text(
        &run(
            &db,
            &["reject", "pa_000000000000000000000001", "--by", "ops"],
        ),
        0,
    );
    assert_eq!(user_version(&db), 3, "the first write upgrades it");
    let journal: String = rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "delete");
    let json: Value = serde_json::from_str(&text(
        &run(
            &db,
            &["show", "pa_000000000000000000000001", "--format", "json"],
        ),
        0,
    ))
    .unwrap();
    assert_eq!(json["state"], "rejected");
    assert_eq!(json["executableSha256"], Value::Null);
}

#[test]
fn stored_text_cannot_forge_a_line() {
    let f = fixture("forge");
    let conn = rusqlite::Connection::open(&f.db).unwrap();
    conn.execute_batch("DROP TRIGGER pending_actions_input_is_immutable")
        .unwrap();
    let fake = "0".repeat(64);
    conn.execute(
        "UPDATE pending_actions SET reason = ?1, state_by = ?2, conversation_id = ?3, \
         message_id = ?4, tool_name = ?5, action_name = ?6 WHERE id = ?7",
        [
            format!("fine\n  input sha256: {fake}"),
            "ops\r\n  state:        approved".to_owned(),
            "conv\u{85}  decided:      by ceo".to_owned(),
            "msg\u{2028}x\tz".to_owned(),
            "action_delete_task\npa_fake  approved".to_owned(),
            "delete_task\u{202e}".to_owned(),
            f.rows[0].id.clone(),
        ],
    )
    .unwrap();
    conn.execute(
        "UPDATE pending_actions SET state_by = 'alice\n  forged' WHERE id = ?1",
        [&f.rows[1].id],
    )
    .unwrap();
    drop(conn);
    let shown = text(&run(&f.db, &["show", &f.rows[0].id]), 0);
    let hashes: Vec<&str> = shown
        .lines()
        .filter(|l| l.trim_start().starts_with("input sha256:"))
        .collect();
    assert_eq!(hashes.len(), 1, "{shown}");
    assert!(hashes[0].starts_with("  input sha256: "), "{shown}");
    assert!(hashes[0].ends_with(&f.rows[0].input_sha256), "{shown}");
    assert_eq!(
        shown.lines().filter(|l| l.starts_with("  state:")).count(),
        1,
        "{shown}"
    );
    for c in ['\r', '\t', '\u{85}', '\u{2028}', '\u{202e}'] {
        assert!(!shown.contains(c), "{c:?} in {shown}");
    }
    assert!(shown.contains("fine\\u000a  input sha256: 000"), "{shown}");
    assert!(shown.contains("ops\\u000d\\u000a"), "{shown}");

    let listed = text(&run(&f.db, &["list"]), 0);
    assert_eq!(listed.lines().count(), 1 + f.rows.len() + 1, "{listed}");
    assert!(
        !listed.lines().any(|l| l.starts_with("pa_fake")),
        "{listed}"
    );

    // An error naming a stored value is one line too.
    let out = run(&f.db, &["approve", &f.rows[1].id, "--by", "x"]);
    text(&out, 1);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("(by alice\\u000a  forged)"), "{err}");
}

#[test]
fn show_redacts_userinfo_in_a_stored_error_or_result() {
    // A row another writer (or an older version) left with credentials.
    let f = fixture("redact");
    let conn = rusqlite::Connection::open(&f.db).unwrap();
    conn.execute(
        "UPDATE pending_actions SET error = ?1, result = ?2 WHERE id = ?3",
        [
            "POST http://svc:TOPSECRET@billing.internal/x failed: reset",
            r#"{"ok": false, "url": "https://ops:HUNTER2@h/y"}"#,
            &f.rows[0].id,
        ],
    )
    .unwrap();
    drop(conn);
    let shown = text(&run(&f.db, &["show", &f.rows[0].id]), 0);
    assert!(
        !shown.contains("TOPSECRET") && !shown.contains("HUNTER2"),
        "{shown}"
    );
    assert!(
        shown.contains("error:             POST http://***@billing.internal/x failed: reset"),
        "{shown}"
    );
    assert!(shown.contains(r#""url": "https://***@h/y""#), "{shown}");
}

#[test]
fn with_format_json_store_errors_are_json_too() {
    let f = fixture("jsonerr");
    let conn = rusqlite::Connection::open(&f.db).unwrap();
    conn.execute_batch("DROP TRIGGER pending_actions_input_is_immutable")
        .unwrap();
    conn.execute(
        "UPDATE pending_actions SET input = 'not json' WHERE id = ?1",
        [&f.rows[0].id],
    )
    .unwrap();
    drop(conn);
    for args in [
        &["show", f.rows[0].id.as_str(), "--format", "json"][..],
        &[
            "--format",
            "json",
            "approve",
            f.rows[0].id.as_str(),
            "--by",
            "x",
        ],
    ] {
        let out = run(&f.db, args);
        let json: Value = serde_json::from_str(&text(&out, 2))
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stderr(&out)));
        assert_eq!(json["error"]["code"], "corrupt_row", "{json}");
        assert_eq!(json["error"]["id"], f.rows[0].id.as_str(), "{json}");
        assert!(
            json["error"]["message"]
                .as_str()
                .unwrap()
                .contains("its input is not a JSON object"),
            "{json}"
        );
        assert_eq!(stderr(&out), "", "{args:?}");
    }
    // A missing file, in JSON.
    let out = run(
        &f.db.with_file_name("none.db"),
        &["--format", "json", "show", "x"],
    );
    let json: Value = serde_json::from_str(&text(&out, 2)).unwrap();
    assert_eq!(json["error"]["code"], "unusable");
}

#[test]
fn with_format_json_a_bad_option_value_is_a_json_error() {
    let f = fixture("jsonusage");
    for (args, needle) in [
        (
            &["--format", "json", "list", "--state", "done"][..],
            "--state: unknown state `done`",
        ),
        (
            &["--format", "json", "list", "--limit", "0"],
            "--limit must be at least 1",
        ),
        (
            &["--format", "json", "expire", "--older-than", "24"],
            "--older-than: `24` ends without a unit",
        ),
        // What the argument parser refuses is a JSON error too.
        (
            &["--format", "json", "list", "--limit", "ten"],
            "invalid value 'ten' for '--limit <LIMIT>'",
        ),
        (
            &["list", "--format=json", "--bogus"],
            "unexpected argument '--bogus'",
        ),
        (
            &["--format", "json", "approve", "pa_1"],
            "the following required arguments were not provided:\n  --by <BY>",
        ),
    ] {
        let out = run(&f.db, args);
        let json: Value = serde_json::from_str(&text(&out, 2))
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stderr(&out)));
        assert_eq!(json["error"]["code"], "usage", "{json}");
        let message = json["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{message}");
    }
    // In text, the same on stderr.
    let out = run(&f.db, &["list", "--state", "done"]);
    text(&out, 2);
    assert!(
        stderr(&out).starts_with("error: --state: unknown state `done`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bad_decider_or_hash_is_a_command_line_error_and_nothing_is_decided() {
    let f = fixture("bad-args");
    let id = f.rows[0].id.as_str();
    for args in [
        vec!["approve", id, "--by", ""],
        vec!["approve", id, "--by", "   "],
        vec!["approve", id, "--by", "ev\u{1b}[2Jil"],
        vec!["reject", id, "--by", "carol\nadmin"],
        vec!["approve", id, "--by", "carol", "--input-sha256", "deadbeef"],
        vec![
            "approve",
            id,
            "--by",
            "carol",
            "--input-sha256",
            &"g".repeat(64),
        ],
        vec!["expire", "--older-than", "1d", "--by", ""],
    ] {
        let out = run(&f.db, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("invalid value"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let shown = text(&run(&f.db, &["show", id]), 0);
    assert!(shown.contains("pending"), "{shown}");
}
