//! `objectstack-ai registry`: print the curated platform tool-name registry
//! (ADR-0109 decision 2).
//!
//! Formats: `text` (the default) lists each owning package with its names,
//! then the families materialised at run time; `json` prints exactly the
//! committed `registry/platform-tools.json` (its shape is documented in the
//! `objectstack-registry` crate).
//!
//! Exit codes: 0; 2 when the command line is unusable.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::Context;
use objectstack_registry as registry;

use crate::EXIT_OK;

/// Arguments of `objectstack-ai registry`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Each package with its names, then the family prefixes.
    Text,
    /// The registry as `registry/platform-tools.json` holds it.
    Json,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    let text = match args.format {
        Format::Text => render_text(),
        Format::Json => registry::render_json(),
    };
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(EXIT_OK),
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(EXIT_OK),
        Err(err) => Err(err).context("cannot write to stdout"),
    }
}

/// The registry for a person: packages in registry order, names in list
/// order.
fn render_text() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Platform tool names: {} in {} packages (as published in @objectstack/spec {})",
        registry::TOTAL,
        registry::GROUPS.len(),
        registry::UPSTREAM_VERSION
    );
    for group in registry::GROUPS {
        let _ = writeln!(out, "\n{} ({})", group.package, group.names.len());
        for name in group.names {
            let _ = writeln!(out, "  {name}");
        }
    }
    let families: Vec<String> = registry::FAMILY_PREFIXES
        .iter()
        .map(|prefix| format!("{prefix}*"))
        .collect();
    let _ = writeln!(
        out,
        "\nFamilies materialised at run time: {}",
        families.join(", ")
    );
    out
}
