//! `objectstack-ai capabilities`: what each agent may invoke.
//!
//! Reads one stack file and prints, per agent, its skills, its effective
//! tool set (wildcards expanded), the tools that need human approval and
//! its dead references; skills no agent names are listed under a
//! pseudo-section. Formats: `text` (a tree), `json` (the stable shape
//! documented in `objectstack_lint::capabilities`), `dot` (Graphviz) and
//! `mermaid`, where dead references are red.
//!
//! Exit codes: 0 when the view is printed (dead references are shown, not
//! judged: `objectstack-ai lint` is the gate), 2 for unusable input or an
//! unknown `--agent`.

use std::io::Write as _;
use std::path::PathBuf;

use objectstack_lint::capabilities::{self, Format, RenderOptions};

use crate::{EXIT_OK, EXIT_UNUSABLE, input};

/// Arguments of `objectstack-ai capabilities`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The stack file (for example `dist/objectstack.json`).
    pub(crate) file: PathBuf,
    /// Show only this agent.
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub(crate) format: OutputFormat,
}

/// The formats `--format` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    /// A readable tree per agent.
    Text,
    /// The stable JSON shape.
    Json,
    /// Graphviz dot (dead references in red).
    Dot,
    /// A Mermaid flowchart (dead references in red).
    Mermaid,
}

impl From<OutputFormat> for Format {
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Text => Format::Text,
            OutputFormat::Json => Format::Json,
            OutputFormat::Dot => Format::Dot,
            OutputFormat::Mermaid => Format::Mermaid,
        }
    }
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    // Read into the borrowed tree, as `lint` does: a large stack costs a
    // fraction of what a `serde_json` value would.
    let arena = objectstack_spec::json::Arena::new();
    let doc = match input::read_text(&args.file) {
        Ok(doc) => doc,
        Err(err) => {
            eprintln!("error: {err:#}");
            return Ok(EXIT_UNUSABLE);
        }
    };
    let root = match doc.tree(&arena) {
        Ok(root) => root,
        Err(err) => {
            eprintln!("error: {err:#}");
            return Ok(EXIT_UNUSABLE);
        }
    };
    let caps = capabilities::build(root);
    // The text view is read in a terminal: escape what one would act on.
    // (JSON escapes by itself; DOT and Mermaid are inputs to other tools.)
    let for_terminal = matches!(args.format, OutputFormat::Text);
    let options = RenderOptions {
        format: args.format.into(),
        agent: args.agent,
    };
    match capabilities::render(&caps, &options) {
        Ok(text) => {
            // Copied only when something had to be escaped.
            let text = if for_terminal {
                match objectstack_spec::text::terminal_safe(&text) {
                    std::borrow::Cow::Owned(escaped) => escaped,
                    std::borrow::Cow::Borrowed(_) => text,
                }
            } else {
                text
            };
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                // A closed pipe (`| head`) is the reader's choice, not a failure.
                Ok(()) => Ok(EXIT_OK),
                Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(EXIT_OK),
                Err(err) => Err(anyhow::Error::new(err).context("cannot write to stdout")),
            }
        }
        Err(err) => {
            eprintln!("error: {}: {err}", doc.path.display());
            Ok(EXIT_UNUSABLE)
        }
    }
}
