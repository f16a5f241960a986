//! `objectstack-ai conform`: check a runtime's registered tool names
//! against the curated platform tool registry, and optionally its
//! materialised `action_*` tools against a stack.
//!
//! FILE is the runtime's registry dump: a JSON array of tool names, or an
//! object whose `tools` array holds names or tool definitions (objects
//! with a `name`). With `--stack`, names under `action_` are checked
//! against the stack's actions, both ways; `--approval` says the runtime's
//! approval queue is wired, so actions that need confirmation are expected.
//!
//! Formats: `human` (the default) prints the verdict, a diff against the
//! registry and the stack, and the exact edits to make; `json` prints the
//! report (see `objectstack_conformance::Report::to_json`).
//!
//! Exit codes: 0 conformant, 1 not conformant, 2 when a file is unusable,
//! the package is unknown (the known ones are listed) or the command line
//! is wrong.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use objectstack_conformance::dump::registered_names;
use objectstack_conformance::package::UnknownPackage;
use objectstack_conformance::{Approval, StackCheck, check};
use serde_json::Value;

use crate::{EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE};

/// Arguments of `objectstack-ai conform`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The owning package whose curated group the names are checked
    /// against (`service-ai`, `service-ai-studio`).
    #[arg(long, value_name = "NAME")]
    package: String,
    /// The runtime's registry dump: a JSON array of tool names, or an
    /// object with a `tools` array of names or of definitions with `name`.
    file: PathBuf,
    /// Also check the materialised `action_*` tools against this stack's
    /// actions (JSON, e.g. `dist/objectstack.json`).
    #[arg(long, value_name = "STACK")]
    stack: Option<PathBuf>,
    /// The runtime's approval queue is wired: actions that need
    /// confirmation are expected to be registered.
    #[arg(long, requires = "stack")]
    approval: bool,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// The verdict, a diff and the edits to make.
    Human,
    /// The report as JSON.
    Json,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    if objectstack_registry::group(&args.package).is_none() {
        let err = UnknownPackage {
            package: args.package,
        };
        eprintln!(
            "error: {}",
            objectstack_spec::text::line_safe(&err.to_string())
        );
        return Ok(EXIT_UNUSABLE);
    }
    let dump = read_dump(&args.file)?;
    let names =
        registered_names(&dump).map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    let stack = match &args.stack {
        Some(path) => Some(crate::input::read_document(path)?),
        None => None,
    };
    let approval = if args.approval {
        Approval::Wired
    } else {
        Approval::NotWired
    };
    let with = stack.as_ref().map(|doc| StackCheck {
        stack: &doc.root,
        approval,
    });
    let report = check(&args.package, &names, with)?;
    let text = match args.format {
        Format::Human => report.to_string(),
        Format::Json => {
            let mut json = objectstack_spec::json::terminal::to_string_pretty(&report.to_json())?;
            json.push('\n');
            json
        }
    };
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => {}
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(err) => return Err(err).context("cannot write to stdout"),
    }
    Ok(if report.is_conformant() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}

/// Reads and parses a dump (any JSON value), with errors that say where.
fn read_dump(path: &Path) -> anyhow::Result<Value> {
    let bytes = crate::input::read_limited(path, "a registry dump")?;
    let text = objectstack_spec::parse::decode_utf8(&bytes)
        .map_err(|e| crate::input::located(path, &bytes, &e))?;
    objectstack_spec::parse::parse_value(text).map_err(|e| crate::input::located(path, &bytes, &e))
}
