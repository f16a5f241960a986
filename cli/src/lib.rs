//! The `objectstack-ai` command as a library: the binary is a thin `main`
//! over [`run`], and `cargo xtask codegen` renders the CLI reference from
//! [`command`].
//!
//! Validate, lint, materialise and govern ObjectStack AI metadata.
//!
//! Each subcommand lives in its own module under `commands/`, with an
//! `Args` struct (clap) and a `run` function returning the process exit
//! code. Exit codes are shared by every command: 0 success, 1 findings or
//! errors in the input, 2 unusable input or usage. A closed standard
//! output or error (`| head`) never panics: the output is cut short and the
//! exit code is the one the input decides (see `out`).

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

// First: its `println!`/`eprintln!` replace `std`'s in every module below.
#[macro_use]
mod out;

mod commands;
mod input;
mod table;

/// Exit code: the input is usable and nothing failed.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit code: the input has errors (or findings that are errors).
pub(crate) const EXIT_FINDINGS: u8 = 1;
/// Exit code: the input is unusable, or the command line is wrong.
pub(crate) const EXIT_UNUSABLE: u8 = 2;

/// Validate, lint, materialise and govern ObjectStack AI metadata.
#[derive(Debug, Parser)]
#[command(name = "objectstack-ai", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check stack files against the metadata schema, with fixes.
    Validate(commands::validate::Args),
    /// Check the reference integrity of AI metadata (skills, tools, agents).
    Lint(commands::lint::Args),
    /// List the lint rules.
    Rules(commands::rules::Args),
    /// Print a lint rule's documentation.
    Explain(commands::explain::Args),
    /// Show what each agent may invoke: skills, tools, actions, objects.
    Capabilities(commands::capabilities::Args),
    /// Print the curated platform tool-name registry.
    Registry(commands::registry::Args),
    /// Check a runtime's registered tool names against the registry.
    Conform(commands::conform::Args),
    /// Materialise a stack's actions as AI tool definitions.
    Tools(commands::tools::Args),
    /// Operate the human-approval queue.
    Approvals(commands::approvals::Args),
    /// Serve a stack's action tools over MCP (stdio or HTTP), run on an ObjectStack server.
    Serve(commands::serve::Args),
}

/// The clap command tree (for generated reference docs).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// Whether `args` run `approvals` with `--format json`, whose every error,
/// a usage error included, is JSON on stdout.
fn approvals_json(args: &[std::ffi::OsString]) -> bool {
    let mut args = args.iter().skip(1).map(|a| a.to_str().unwrap_or_default());
    if !args.by_ref().any(|a| a == "approvals") {
        return false;
    }
    let mut previous = "";
    for a in args {
        if a == "--format=json" || (previous == "--format" && a == "json") {
            return true;
        }
        previous = a;
    }
    false
}

/// Prints a usage error as the approvals' JSON error (code `usage`) on
/// stdout; returns the exit code, 2.
fn json_usage_error(err: &clap::Error) -> u8 {
    let rendered = err.render().to_string();
    let message = rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect::<Vec<_>>()
        .join("\n");
    let message = message.trim().trim_start_matches("error: ");
    let body = serde_json::json!({"error": {"code": "usage", "message": message}});
    let text = objectstack_spec::json::terminal::to_string_pretty(&body).unwrap_or_default();
    let mut stdout = std::io::stdout().lock();
    // A closed stdout is the reader's choice; the exit code stays.
    let _ = writeln!(stdout, "{text}");
    EXIT_UNUSABLE
}

/// Reading a stack file as the commands do, for the benchmarks
/// (`cli/benches/read.rs`); not a stable API.
#[doc(hidden)]
pub mod bench {
    use std::path::Path;

    /// Reads `path` and checks its text once, as `lint` does (a file of
    /// 8 MiB or more into a mapping advised for huge pages, on Linux), or
    /// into a vector when `mapped` is false; returns the text's length.
    pub fn read_stack(path: &Path, mapped: bool) -> anyhow::Result<usize> {
        Ok(crate::input::read_text_into(path, mapped)?.text().len())
    }
}

/// Parses the process arguments, runs the command and returns the exit code.
pub fn run() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                EXIT_UNUSABLE
            } else {
                EXIT_OK
            };
            // clap quotes a wrong value as it was typed: one holding a
            // newline or a control would forge lines or drive the terminal.
            // The same parse over the escaped arguments fails the same way,
            // and says so with the value escaped.
            let escaped = |a: &std::ffi::OsString| {
                objectstack_spec::text::line_safe(&a.to_string_lossy()).into_owned()
            };
            let err = if err.use_stderr()
                && args
                    .iter()
                    .any(|a| a.to_str().is_none_or(|s| escaped(a) != s))
            {
                Cli::try_parse_from(args.iter().map(escaped))
                    .err()
                    .unwrap_or(err)
            } else {
                err
            };
            if err.use_stderr() && approvals_json(&args) {
                return ExitCode::from(json_usage_error(&err));
            }
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Validate(args) => commands::validate::run(args),
        Command::Lint(args) => commands::lint::run(args),
        Command::Rules(args) => commands::rules::run(args),
        Command::Explain(args) => commands::explain::run(args),
        Command::Capabilities(args) => commands::capabilities::run(args),
        Command::Registry(args) => commands::registry::run(args),
        Command::Conform(args) => commands::conform::run(args),
        Command::Tools(args) => commands::tools::run(args),
        Command::Approvals(args) => commands::approvals::run(args),
        Command::Serve(args) => commands::serve::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // Errors name files and values from the input: escaped.
            let message = format!("{err:#}");
            eprintln!("error: {}", objectstack_spec::text::line_safe(&message));
            ExitCode::from(EXIT_UNUSABLE)
        }
    }
}
