//! What the CLI tests share: running the binary from the workspace root
//! (where the examples live), reading what it printed, and scratch files.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses a part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The binary, to be run from the workspace root, without colour.
pub(crate) fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_objectstack-ai"));
    command.current_dir(root()).env("NO_COLOR", "1");
    command
}

/// Runs `objectstack-ai SUBCOMMAND ARGS...` from the workspace root.
pub(crate) fn run(subcommand: &str, args: &[&str]) -> Output {
    bin().arg(subcommand).args(args).output().unwrap()
}

/// Runs `objectstack-ai ARGS...` in `dir`.
pub(crate) fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

/// Standard output, which must be UTF-8.
pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Standard output of a run that must have succeeded (exit 0).
pub(crate) fn stdout_ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(out)
}

/// Standard error.
pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Writes `content` to `name` in this process's scratch directory for
/// `group` (one per test binary), and returns its path.
pub(crate) fn temp_file(group: &str, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("objectstack-{group}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

/// A fresh, empty scratch directory for one test.
pub(crate) fn scratch(group: &str, name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("objectstack-{group}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `objectstack-ai ARGS...` from the workspace root with `input` on
/// standard input.
pub(crate) fn run_with_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written beside the run: a command that stops reading early (an error)
    // must not leave the test blocked on a full pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}
