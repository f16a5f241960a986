//! `objectstack-ai capabilities`: what each agent may invoke.
//!
//! Reads one or more stack files and prints, per agent, its skills, its
//! effective tool set (each wildcard once, with how many tools it matches;
//! `--expand-wildcards` lists them), the tools that need human approval
//! and its dead references; skills no agent names are listed under a
//! pseudo-section. Several files are shown one by one, or with `--compose`
//! as one stack (as `lint` reads them). Formats: `text` (a tree), `json`
//! (the stable shape documented in `objectstack_lint::capabilities`), `dot`
//! (Graphviz) and `mermaid`, where dead references are red. The view is
//! written as it is made, never built whole.
//!
//! Exit codes: 0 when the view is printed (dead references are shown, not
//! judged: `objectstack-ai lint` is the gate), 2 for unusable input (the
//! other files are still shown) or an unknown `--agent`.

use std::io::Write as _;
use std::path::PathBuf;

use objectstack_lint::Source;
use objectstack_lint::capabilities::{self, CapabilitiesError, Format, RenderOptions};
use objectstack_spec::json::Arena;
use objectstack_spec::text::line_safe;
use rayon::prelude::*;

use crate::input::{Text, read_text};
use crate::{EXIT_OK, EXIT_UNUSABLE};

/// Arguments of `objectstack-ai capabilities`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The stack files (for example `dist/objectstack.json`); `-` is
    /// standard input.
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// Show the files' composition as one stack, so a skill in one file may
    /// name an action in another (nothing is shown when a file cannot be
    /// read: the composition without it is not what the runtime serves).
    #[arg(long)]
    pub(crate) compose: bool,
    /// Show only this agent.
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// List every tool a wildcard matches, not only how many.
    #[arg(long)]
    pub(crate) expand_wildcards: bool,
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
    // Read as `lint` does: in parallel, then each into the borrowed tree in
    // one arena; a file that cannot be read is reported and the rest shown
    // (with `--compose`, nothing is: see below).
    let read: Vec<anyhow::Result<Text>> =
        args.files.par_iter().map(|path| read_text(path)).collect();
    let mut unusable = 0usize;
    let mut texts = Vec::new();
    for result in read {
        match result {
            Ok(text) => texts.push(text),
            Err(err) => {
                unusable += 1;
                eprintln!("error: {}", line_safe(&format!("{err:#}")));
            }
        }
    }
    let arena = crate::input::tree_arena(texts.iter().map(|t| t.text().len()).sum());
    let mut sides: Vec<Arena> = texts
        .iter()
        .map(|t| crate::input::tree_arena(t.text().len()))
        .collect();
    let names: Vec<String> = texts.iter().map(|t| t.path.display().to_string()).collect();
    let mut sources = Vec::new();
    for ((text, name), side) in texts.iter().zip(&names).zip(sides.iter_mut()) {
        match text.tree(&arena, side) {
            Ok(root) => sources.push(Source {
                file: name,
                text: Some(text.text()),
                root,
            }),
            Err(err) => {
                unusable += 1;
                eprintln!("error: {}", line_safe(&format!("{err:#}")));
            }
        }
    }
    if sources.is_empty() {
        return Ok(EXIT_UNUSABLE);
    }
    // As `tools --compose`: the view of a composition missing a file is
    // not what the runtime serves (its skills would point at tools the
    // missing file holds).
    if args.compose && unusable > 0 {
        eprintln!(
            "error: not composing: {unusable} file(s) could not be read, and a composition \
             without them is not what the runtime serves; fix them and run again"
        );
        return Ok(EXIT_UNUSABLE);
    }

    let options = RenderOptions {
        format: args.format.into(),
        agent: args.agent,
        expand: args.expand_wildcards,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let (written, views) = if args.compose || sources.len() == 1 {
        let caps = capabilities::build_composed(&sources, &arena);
        (capabilities::write(&caps, &options, &mut out), vec![caps])
    } else {
        let views: Vec<_> = sources
            .iter()
            .map(|s| capabilities::build(s.root, &arena))
            .collect();
        let each: Vec<(&str, &capabilities::Capabilities<'_>)> =
            sources.iter().map(|s| s.file).zip(&views).collect();
        (capabilities::write_each(&each, &options, &mut out), views)
    };
    let written = written.and_then(|()| out.flush().map_err(CapabilitiesError::from));
    // A large document is not worth freeing just before exit.
    std::mem::forget(views);
    drop(sources);
    std::mem::forget(arena);
    std::mem::forget(sides);
    std::mem::forget(texts);
    match written {
        Ok(()) => Ok(if unusable > 0 { EXIT_UNUSABLE } else { EXIT_OK }),
        Err(CapabilitiesError::Write(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => {
            // A closed pipe (`| head`) is the reader's choice, not a failure.
            Ok(if unusable > 0 { EXIT_UNUSABLE } else { EXIT_OK })
        }
        Err(CapabilitiesError::Write(err)) => {
            Err(anyhow::Error::new(err).context("cannot write to stdout"))
        }
        Err(err @ CapabilitiesError::UnknownAgent { .. }) => {
            match names.as_slice() {
                [one] => eprintln!("error: {}", line_safe(&format!("{one}: {err}"))),
                _ => eprintln!("error: {}", line_safe(&err.to_string())),
            }
            Ok(EXIT_UNUSABLE)
        }
    }
}
