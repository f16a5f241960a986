//! Every command against a hostile environment: standard output and error
//! closed by their reader, inputs that never end, and names that would
//! drive a terminal or forge a line.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers

mod common;

use std::io::{PipeWriter, Write as _};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bin, stderr, stdout, temp_file};

/// The write end of a pipe whose reader is already gone: every write to it
/// fails with a broken pipe, as `| head -c 100` makes it once `head` exits.
fn closed_pipe() -> PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

/// Every command, each with arguments that make it print on stdout or
/// stderr (or both); `test` names the files it writes (tests run in
/// parallel).
fn every_command(test: &str) -> Vec<Vec<String>> {
    let dump = temp_file(
        "hostile",
        &format!("{test}-dump.json"),
        r#"["list_objects"]"#,
    );
    let missing_db = std::env::temp_dir().join("objectstack-hostile-no-such.db");
    let owned = |args: &[&str]| args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    vec![
        owned(&["--help"]),
        owned(&["--version"]),
        owned(&["no-such-command"]),
        owned(&["rules"]),
        owned(&["explain", "ai-skill-tool-unresolved"]),
        owned(&["explain", "no-such-rule"]),
        owned(&["validate", "examples/broken-stack.json"]),
        owned(&["validate", "examples/todo-app.json", "no-such-file.json"]),
        owned(&["lint", "examples/hotcrm-skills.json"]),
        owned(&["lint", "examples/hotcrm-skills.json", "--format", "json"]),
        owned(&["lint", "no-such-file.json"]),
        owned(&["tools", "examples/todo-app.json"]),
        owned(&["tools", "examples/todo-app.json", "--format", "human"]),
        owned(&["tools", "examples/todo-app.json", "--format", "mcp"]),
        owned(&["tools", "no-such-file.json"]),
        owned(&["capabilities", "examples/hotcrm-skills.json"]),
        owned(&["registry"]),
        owned(&["registry", "--format", "json"]),
        vec![
            "conform".into(),
            "--package".into(),
            "service-ai".into(),
            dump.to_string_lossy().into_owned(),
        ],
        vec![
            "approvals".into(),
            "--db".into(),
            missing_db.to_string_lossy().into_owned(),
            "list".into(),
        ],
    ]
}

fn assert_no_panic(args: &[String], what: &str, expected: Option<i32>, out: &Output) {
    assert_ne!(
        out.status.code(),
        Some(101),
        "{args:?} with {what}: a panic"
    );
    assert_eq!(
        out.status.code(),
        expected,
        "{args:?} with {what}: a closed stream changes nothing but the output; stderr: {}",
        stderr(out)
    );
    assert!(
        !stderr(out).contains("panicked"),
        "{args:?} with {what}: {}",
        stderr(out)
    );
}

#[test]
fn a_closed_stdout_never_panics() {
    for args in every_command("stdout") {
        let expected = bin().args(&args).output().unwrap().status.code();
        let out = bin()
            .args(&args)
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_no_panic(&args, "stdout closed", expected, &out);
    }
}

#[test]
fn a_closed_stderr_never_panics() {
    for args in every_command("stderr") {
        let expected = bin().args(&args).output().unwrap().status.code();
        let out = bin()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(closed_pipe())
            .output()
            .unwrap();
        assert_no_panic(&args, "stderr closed", expected, &out);
    }
}

#[test]
fn both_closed_as_in_2_and_1_into_head_never_panics() {
    for args in every_command("both") {
        let expected = bin().args(&args).output().unwrap().status.code();
        let pipe = closed_pipe();
        let out = bin()
            .args(&args)
            .stdout(pipe.try_clone().unwrap())
            .stderr(pipe)
            .output()
            .unwrap();
        // Nothing can be read back; the exit code says there was no panic.
        assert_eq!(
            out.status.code(),
            expected,
            "{args:?} with stdout and stderr closed"
        );
    }
}

/// A queue file for `serve` (which opens its queue before it reads the
/// stack) outside the working directory.
fn scratch_queue(test: &str) -> String {
    std::env::temp_dir()
        .join(format!(
            "objectstack-hostile-{test}-{}.sqlite",
            std::process::id()
        ))
        .to_string_lossy()
        .into_owned()
}

/// Waits for `child` at most `limit`; kills it and fails if it is not done.
fn finish_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still reading after {limit:?}: the input limit is not enforced");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The limit the tests lower the 1 GiB default to, so that a test reads
/// 64 KiB of a never-ending input rather than 1 GiB.
const LIMIT: &str = "65536";

fn run_limited(args: &[&str], what: &str) -> Output {
    let child = bin()
        .args(args)
        .env("OBJECTSTACK_AI_MAX_INPUT_BYTES", LIMIT)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish_within(child, Duration::from_secs(60), what)
}

#[cfg(unix)]
#[test]
fn a_never_ending_input_is_refused_at_the_limit() {
    let stack = "examples/hotcrm-skills.json";
    let dump = temp_file("hostile", "limit-dump.json", r#"["list_objects"]"#);
    let dump = dump.to_string_lossy();
    let queue = scratch_queue("limit");
    let cases: [&[&str]; 10] = [
        &["validate", "/dev/zero"],
        &["serve", "--stack", "/dev/zero", "--approvals", &queue],
        &["validate", "--format", "json", "/dev/zero"],
        &["lint", "/dev/zero"],
        &["lint", stack, "--config", "/dev/zero"],
        &["lint", stack, "--baseline", "/dev/zero"],
        &["tools", "/dev/zero"],
        &["capabilities", "/dev/zero"],
        &["conform", "--package", "service-ai", "/dev/zero"],
        &[
            "conform",
            "--package",
            "service-ai",
            &dump,
            "--stack",
            "/dev/zero",
        ],
    ];
    for args in cases {
        let out = run_limited(args, &args.join(" "));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            said.contains("/dev/zero") && said.contains("more than 65536 bytes"),
            "{args:?}: {said}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_never_ending_pipe_is_refused_at_the_limit() {
    let mut child = bin()
        .args(["lint", "/dev/stdin"])
        .env("OBJECTSTACK_AI_MAX_INPUT_BYTES", LIMIT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Writes until the command stops reading (a broken pipe ends it).
    let writer = std::thread::spawn(move || {
        let block = [b' '; 8192];
        while stdin.write_all(&block).is_ok() {}
    });
    let out = finish_within(child, Duration::from_secs(60), "lint /dev/stdin");
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/dev/stdin is more than 65536 bytes"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_file_at_the_limit_is_read() {
    // 65,536 bytes exactly: a valid stack padded with spaces.
    let mut text = br#"{"objects": []}"#.to_vec();
    text.resize(65_536, b' ');
    let at = temp_file("hostile", "at-limit.json", &text);
    let out = run_limited(&["validate", &at.to_string_lossy()], "validate at-limit");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    text.push(b' ');
    let over = temp_file("hostile", "over-limit.json", &text);
    let out = run_limited(
        &["validate", &over.to_string_lossy()],
        "validate over-limit",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("more than 65536 bytes"),
        "{}",
        stdout(&out)
    );
}

/// A value that would drive a terminal (an OSC title, BEL, an 8-bit CSI,
/// a right-to-left override) and then forge a line of its own.
const EVIL: &str =
    "x\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}\u{2066}\nFORGED: looks like the command's own line";

/// `EVIL` as a JSON string's content (escaped, as JSON requires for C0).
const EVIL_JSON: &str =
    r"x\u001b]0;pwned\u0007\u009b31m\u202e\u2066\nFORGED: looks like the command's own line";

/// Fails if `text` holds anything a terminal would act on, or a line
/// that a value forged.
fn assert_terminal_safe(what: &str, text: &str) {
    for c in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}', '\u{2066}'] {
        assert!(!text.contains(c), "{what}: {c:?} printed raw:\n{text}");
    }
    assert!(
        !text.lines().any(|l| l.trim_start().starts_with("FORGED")),
        "{what}: a value forged a line:\n{text}"
    );
}

fn both(out: &Output) -> String {
    format!("{}{}", stdout(out), stderr(out))
}

/// A file whose name is [`EVIL`] plus `.json`, holding `content`.
#[cfg(unix)]
fn evil_file(content: &str) -> String {
    temp_file("hostile", &format!("{EVIL}.json"), content)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn validate_escapes_names_messages_and_source_lines() {
    // An unknown key with the value in it, once escaped (as JSON must
    // write C0 controls) and once with the C1 and bidi characters raw, as
    // JSON allows: the source line shows them too.
    let stack = format!(
        r#"{{"objects": [{{"name": "o", "actions": [{{"name": "a", "type": "script", "target": "t",
  "ai": {{"exposed": true, "description": "Closes the case the user is looking at, with a note.",
  "{EVIL_JSON}": 1, "raw{}": 2}}}}]}}]}}"#,
        "\u{9b}31m\u{202e}"
    );
    let file = temp_file("hostile", "evil-keys.json", &stack);
    let out = bin()
        .args(["validate", &file.to_string_lossy()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert!(
        stdout(&out).contains(r"\u001b]0;pwned\u0007\u009b31m\u202e\u2066\u000aFORGED"),
        "{}",
        stdout(&out)
    );
    assert_terminal_safe("validate", &both(&out));
}

#[cfg(unix)]
#[test]
fn every_command_escapes_file_names() {
    let stack =
        std::fs::read_to_string(common::root().join("examples/hotcrm-skills.json")).unwrap();
    let file = evil_file(&stack);
    let missing = format!("{file}.missing");
    let other = "examples/todo-app.json";
    let queue = scratch_queue("names");
    let cases: [&[&str]; 15] = [
        &["serve", "--stack", &missing, "--approvals", &queue],
        &["validate", &file],
        &["validate", &missing],
        &["lint", &file],
        &["lint", &missing],
        &["lint", &file, "--format", "github"],
        &["capabilities", &file, other],
        &["capabilities", &missing],
        &["capabilities", &file, other, "--format", "dot"],
        &["capabilities", &file, other, "--format", "mermaid"],
        &["tools", &file, other, "--format", "human"],
        &["tools", &file, "--format", "human"],
        &["tools", &missing],
        &["conform", "--package", "service-ai", &missing],
        &["lint", "examples/hotcrm-skills.json", "--config", &missing],
    ];
    for args in cases {
        let out = bin().args(args).output().unwrap();
        let said = both(&out);
        assert!(
            said.contains("pwned"),
            "{args:?}: the name is not shown: {said}"
        );
        assert_terminal_safe(&format!("{:?}", args.first()), &said);
    }
}

#[test]
fn diagrams_and_annotations_escape_stack_names() {
    let stack = format!(
        r#"{{"skills": [{{"name": "s{EVIL_JSON}", "label": "S", "description": "A skill.",
  "instructions": "Use.", "tools": ["ghost{EVIL_JSON}"]}}],
  "agents": [{{"name": "g{EVIL_JSON}", "label": "G", "role": "r", "instructions": "Help.",
  "skills": ["s{EVIL_JSON}"]}}]}}"#
    );
    let file = temp_file("hostile", "evil-diagram.json", &stack);
    let file = file.to_string_lossy();
    for format in ["dot", "mermaid"] {
        let out = bin()
            .args(["capabilities", &file, "--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", both(&out));
        assert!(stdout(&out).contains("pwned"), "{}", stdout(&out));
        assert_terminal_safe(format, &both(&out));
    }
    let out = bin()
        .args(["lint", &file, "--format", "github"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("pwned"), "{}", stdout(&out));
    assert_terminal_safe("lint --format github", &both(&out));
}

#[test]
fn serve_escapes_the_diagnostics_of_a_stack_it_refuses() {
    let stack = format!(
        r#"{{"objects": [{{"name": "o", "actions": [{{"name": "a{EVIL_JSON}", "type": "script", "target": "t"}}]}}]}}"#
    );
    let file = temp_file("hostile", "evil-serve.json", &stack);
    let out = bin()
        .args(["serve", "--stack", &file.to_string_lossy()])
        .args(["--approvals", &scratch_queue("serve-diagnostics")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert!(stderr(&out).contains("pwned"), "{}", stderr(&out));
    assert_terminal_safe("serve", &both(&out));
}

#[test]
fn userinfo_typed_in_a_url_is_never_repeated() {
    let queue = scratch_queue("userinfo");
    let cases: [&[&str]; 2] = [
        &[
            "tools",
            "examples/todo-app.json",
            "--api-base-url",
            "ftp://svc:TOPSECRET@host/",
        ],
        &[
            "serve",
            "--stack",
            "examples/todo-app.json",
            "--server",
            "http://svc:TOPSECRET@127.0.0.1:9/",
            "--approvals",
            &queue,
        ],
    ];
    for args in cases {
        let out = bin().args(args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", both(&out));
        let said = both(&out);
        assert!(said.contains("://***@"), "{args:?}: {said}");
        assert!(!said.contains("TOPSECRET"), "{args:?}: {said}");
    }
}

#[test]
fn tools_escapes_action_names_in_the_table() {
    let stack = format!(
        r#"{{"objects": [{{"name": "o", "actions": [{{"name": "{EVIL_JSON}", "type": "script", "target": "t"}}]}}]}}"#
    );
    let file = temp_file("hostile", "evil-action.json", &stack);
    let out = bin()
        .args(["tools", &file.to_string_lossy(), "--format", "human"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    assert!(stdout(&out).contains("pwned"), "{}", stdout(&out));
    assert_terminal_safe("tools --format human", &both(&out));
}

#[test]
fn conform_escapes_registered_names() {
    let dump = temp_file(
        "hostile",
        "evil-dump.json",
        format!(r#"["list_objects", "{EVIL_JSON}"]"#),
    );
    let out = bin()
        .args([
            "conform",
            "--package",
            "service-ai",
            &dump.to_string_lossy(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert!(stdout(&out).contains("pwned"), "{}", stdout(&out));
    assert_terminal_safe("conform", &both(&out));
}

#[test]
fn explain_and_usage_errors_escape_what_was_typed() {
    let out = bin().args(["explain", EVIL]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("pwned"), "{}", stderr(&out));
    assert_terminal_safe("explain", &both(&out));
    let out = bin()
        .args(["conform", "--package", EVIL, "dump.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_terminal_safe("conform --package", &both(&out));
    // A wrong value clap rejects is quoted in its message.
    for args in [
        &["lint", "--format", EVIL][..],
        &["tools", "x.json", "--format", EVIL],
        &[EVIL],
    ] {
        let out = bin().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("pwned"), "{}", stderr(&out));
        assert_terminal_safe(&format!("{args:?}"), &both(&out));
    }
}

#[test]
fn a_limit_that_is_not_a_number_is_said_once_and_the_default_kept() {
    let out = bin()
        .args([
            "validate",
            "examples/todo-app.json",
            "examples/hotcrm-skills.json",
        ])
        .env("OBJECTSTACK_AI_MAX_INPUT_BYTES", "64k\u{1b}[2J")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("not a number of bytes").count(), 1, "{err}");
    assert!(
        err.contains("stays 1 GiB") && !err.contains('\u{1b}'),
        "{err}"
    );
}

#[test]
fn json_outputs_escape_what_would_reorder_or_drive_a_terminal() {
    // A right-to-left override, a C1 CSI and a zero-width space in names,
    // labels and descriptions: valid JSON either way, but written raw they
    // make a terminal show something else than the text.
    let stack = temp_file(
        "hostile",
        "bidi.json",
        "{\"objects\": [{\"name\": \"task\", \"actions\": [{\"name\": \"go\u{202e}og\", \
         \"label\": \"Go\u{9b}2J\", \"type\": \"script\", \"target\": \"go\", \"ai\": {\"exposed\": true, \
         \"description\": \"Runs the task now, for the user who asked\u{200b} for it.\"}}]}], \
         \"skills\": [{\"name\": \"s\", \"label\": \"S\u{202e}\", \"tools\": [\"action_go\u{202e}og\", \"nope\u{202e}\"]}]}",
    );
    let stack = stack.to_string_lossy();
    for args in [
        vec!["validate", "--format", "json", &stack],
        vec!["lint", "--format", "json", &stack],
        vec!["lint", "--format", "sarif", &stack],
        vec!["tools", "--format", "json", &stack],
        vec!["tools", "--format", "mcp", &stack],
        vec!["capabilities", "--format", "json", &stack],
    ] {
        let out = bin().args(&args).output().unwrap();
        let text = stdout(&out);
        assert!(!text.is_empty(), "{args:?}: {}", stderr(&out));
        for c in ['\u{202e}', '\u{9b}', '\u{200b}'] {
            assert!(!text.contains(c), "{args:?} wrote {c:?} raw: {text}");
        }
        assert!(text.contains("\\u202e"), "{args:?}: {text}");
        // Still JSON, and the same text once read.
        let first: serde_json::Value = serde_json::Deserializer::from_str(&text)
            .into_iter()
            .next()
            .unwrap()
            .unwrap();
        assert!(first.to_string().contains('\u{202e}'), "{args:?}");
    }
}
