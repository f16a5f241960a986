//! `objectstack-ai lint`: reference integrity of AI metadata.
//!
//! Lints each FILE independently and in parallel, or with `--compose` their
//! composition as one stack. Levels come from the nearest
//! `objectstack-lint.toml` (or `--config`), then the command line, where
//! `--deny` beats `--warn` beats `--allow` for the same rule.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use objectstack_lint::baseline::Filtered;
use objectstack_lint::render::{self, Format, HumanOptions, SourceText};
use objectstack_lint::{Baseline, Config, Finding, Level, Severity, Source};
use rayon::prelude::*;

use objectstack_spec::json::{Arena, Map};
use objectstack_spec::text::line_safe;

use crate::input::{Text, read_text, tree_arena};
use crate::{EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE};

/// Where upstream `os compile` writes the compiled stack.
const DEFAULT_INPUT: &str = "dist/objectstack.json";

/// Arguments of `objectstack-ai lint`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Stack files to lint (default: dist/objectstack.json); `-` is
    /// standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Lint the files' composition as one stack, so a skill in one file may
    /// name an action in another.
    #[arg(long)]
    compose: bool,
    /// Output format on stdout.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = FormatArg(Format::Human))]
    format: FormatArg,
    /// Also write FORMAT (any `--format` value) to PATH (repeatable), e.g.
    /// `--report sarif=lint.sarif`.
    #[arg(long, value_name = "FORMAT=PATH", value_parser = parse_report)]
    report: Vec<(Format, PathBuf)>,
    /// Drop a rule's findings (repeatable).
    #[arg(long, value_name = "RULE")]
    allow: Vec<String>,
    /// Report a rule's findings as warnings (repeatable).
    #[arg(long, value_name = "RULE")]
    warn: Vec<String>,
    /// Report a rule's findings as errors (repeatable; `--deny warnings`
    /// makes every warning an error).
    #[arg(long, value_name = "RULE")]
    deny: Vec<String>,
    /// Read rule levels from FILE (`-` is standard input) instead of the
    /// nearest objectstack-lint.toml.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Report only findings not recorded in this baseline file (`-` is
    /// standard input).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Record today's findings in FILE and exit 0.
    #[arg(long, value_name = "FILE", conflicts_with = "baseline")]
    write_baseline: Option<PathBuf>,
}

/// A `--format` value: one of the lint's renderers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FormatArg(Format);

/// Every format, in `Format::ALL`'s order; sized by it, so a format added
/// to the lint is offered here (and listed by `--help` and docs/cli.md).
const FORMAT_ARGS: [FormatArg; Format::ALL.len()] = {
    let mut args = [FormatArg(Format::Human); Format::ALL.len()];
    let mut i = 0;
    while i < args.len() {
        args[i] = FormatArg(Format::ALL[i]);
        i += 1;
    }
    args
};

impl clap::ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        &FORMAT_ARGS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let help = match self.0 {
            Format::Human => "Each finding with its source line marked, then a summary",
            Format::Json => "One JSON document (`findings` and `summary`)",
            Format::Sarif => "SARIF 2.1.0, for GitHub code scanning",
            Format::Github => "GitHub Actions annotations (`::warning file=...::...`)",
        };
        Some(clap::builder::PossibleValue::new(self.0.as_str()).help(help))
    }
}

fn parse_report(s: &str) -> Result<(Format, PathBuf), String> {
    let (format, path) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not FORMAT=PATH (e.g. sarif=lint.sarif)"))?;
    if path.is_empty() {
        return Err(format!("`{s}` has no PATH after `=`"));
    }
    Ok((format.parse()?, PathBuf::from(path)))
}

/// A file that could be read, with the name findings report.
struct Loaded<'a> {
    name: String,
    doc: &'a Text,
    root: &'a Map<'a>,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    let files = if args.files.is_empty() {
        let default = PathBuf::from(DEFAULT_INPUT);
        if !default.is_file() {
            eprintln!(
                "error: no FILE given, and {DEFAULT_INPUT} (where `os compile` writes the \
                 compiled stack) does not exist; compile the stack first or name the files to lint"
            );
            return Ok(EXIT_UNUSABLE);
        }
        eprintln!("note: no FILE given; linting {DEFAULT_INPUT}");
        vec![default]
    } else {
        args.files.clone()
    };

    // A report or baseline written over a stack file would destroy it.
    let inputs: Vec<PathBuf> = files
        .iter()
        .filter(|f| !crate::input::is_stdin(f))
        .filter_map(|f| std::fs::canonicalize(f).ok())
        .collect();
    let outputs = args
        .report
        .iter()
        .map(|(_, path)| path)
        .chain(&args.write_baseline);
    for output in outputs {
        if let Ok(target) = std::fs::canonicalize(output)
            && inputs.contains(&target)
        {
            eprintln!(
                "error: {} is one of the files to lint; write the report or baseline to another path",
                shown(output)
            );
            return Ok(EXIT_UNUSABLE);
        }
    }

    let cli_levels = cli_config(&args)?;
    let fixed_config = match &args.config {
        Some(path) => Some(load_config(path)?),
        None => None,
    };
    let config_for = |path: &Path| -> anyhow::Result<Config> {
        let mut config = match &fixed_config {
            Some(c) => c.clone(),
            // Standard input has no directory: the search starts here.
            None => match Config::discover(if crate::input::is_stdin(path) {
                Path::new(".")
            } else {
                path
            }) {
                Some(found) => load_config(&found)?,
                None => Config::default(),
            },
        };
        config.merge(&cli_levels);
        Ok(config)
    };

    // Read in parallel, then parse into one arena (each parse is a fast,
    // borrowing pass); the lint itself runs the files in parallel.
    let read: Vec<anyhow::Result<Text>> = files.par_iter().map(|path| read_text(path)).collect();
    let mut unusable = 0usize;
    let mut read_files = Vec::new();
    for result in read {
        match result {
            Ok(text) => read_files.push(text),
            Err(err) => {
                unusable += 1;
                eprintln!("error: {}", line_safe(&format!("{err:#}")));
            }
        }
    }
    let arena = tree_arena(read_files.iter().map(|t| t.text().len()).sum());
    // One more arena per file, for the part read on a second thread.
    let mut sides: Vec<Arena> = read_files
        .iter()
        .map(|t| tree_arena(t.text().len()))
        .collect();
    let mut docs = Vec::new();
    for (doc, side) in read_files.iter().zip(sides.iter_mut()) {
        match doc.tree(&arena, side) {
            Ok(root) => docs.push(Loaded {
                name: display_name(&doc.path),
                doc,
                root,
            }),
            Err(err) => {
                unusable += 1;
                eprintln!("error: {}", line_safe(&format!("{err:#}")));
            }
        }
    }
    if docs.is_empty() {
        // Nothing was linted: a "no findings" report would say otherwise.
        return Ok(EXIT_UNUSABLE);
    }
    if unusable > 0 && args.write_baseline.is_some() {
        eprintln!(
            "error: not writing the baseline: {unusable} file(s) could not be read, and their \
             findings would be dropped from it; fix them and run again"
        );
        drop(docs);
        std::mem::forget(arena);
        std::mem::forget(sides);
        std::mem::forget(read_files);
        return Ok(EXIT_UNUSABLE);
    }
    let unusable = unusable > 0;

    let sources: Vec<Source<'_>> = docs
        .iter()
        .map(|l| Source {
            file: &l.name,
            text: Some(l.doc.text()),
            root: l.root,
        })
        .collect();
    let mut findings: Vec<Finding> = Vec::new();
    if args.compose {
        if let Some(first) = docs.first() {
            let config = config_for(&first.doc.path)?;
            findings = config.apply(objectstack_lint::lint_composed(&sources));
        }
    } else {
        let per_file = objectstack_lint::lint_each(&sources);
        for (l, file_findings) in docs.iter().zip(per_file) {
            let configured = config_for(&l.doc.path)?.apply(file_findings);
            // Not copied when it is the only file's (a large stack can have
            // tens of thousands of findings).
            if findings.is_empty() {
                findings = configured;
            } else {
                findings.extend(configured);
            }
        }
    }

    if let Some(path) = &args.write_baseline {
        let baseline = Baseline::from_findings(&findings);
        std::fs::write(path, baseline.to_json())
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!(
            "wrote {} finding(s) to the baseline {}; later runs with `--baseline {}` report only new ones",
            baseline.entries.len(),
            shown(path),
            shown(path)
        );
        drop(docs);
        std::mem::forget(arena);
        std::mem::forget(sides);
        std::mem::forget(read_files);
        return Ok(if unusable { EXIT_UNUSABLE } else { EXIT_OK });
    }

    if let Some(path) = &args.baseline {
        let text = crate::input::read_string(path, "a baseline file")
            .context("cannot read the baseline")?;
        let baseline =
            Baseline::from_json(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        if baseline.is_positional() {
            eprintln!(
                "note: {} is a version-1 baseline, which matches findings by position; rewrite it \
                 with `--write-baseline {}` so that moving a record keeps its findings accepted",
                shown(path),
                shown(path)
            );
        }
        let Filtered {
            new,
            accepted,
            gone,
        } = baseline.filter(findings);
        findings = new;
        if accepted > 0 {
            eprintln!(
                "note: {accepted} finding(s) accepted by the baseline {}",
                shown(path)
            );
        }
        if !gone.is_empty() {
            eprintln!(
                "note: {} baseline entr{} no longer occur{} (fixed or moved); refresh it with \
                 `--write-baseline {}`:",
                gone.len(),
                if gone.len() == 1 { "y" } else { "ies" },
                if gone.len() == 1 { "s" } else { "" },
                shown(path)
            );
            for entry in &gone {
                // The entries come from the baseline file: escaped.
                eprintln!("  {}", line_safe(&entry.to_string()));
            }
        }
    }

    let files_linted = docs.len();
    // Only the human format and the `--report` files quote the stacks'
    // text. Without them, the text and the tree (most of what the run
    // holds) are freed on another thread while the report is written,
    // rather than torn down at exit after it.
    let quotes = args.format.0 == Format::Human || !args.report.is_empty();
    let failed = if quotes {
        let texts: Vec<SourceText<'_>> = docs
            .iter()
            .map(|l| SourceText {
                file: &l.name,
                text: l.doc.text(),
            })
            .collect();
        let failed = report(&args, &findings, &texts, files_linted);
        drop(texts);
        drop(sources);
        drop(docs);
        // A large document is not worth freeing just before exit.
        std::mem::forget(arena);
        std::mem::forget(sides);
        std::mem::forget(read_files);
        failed
    } else {
        drop(sources);
        drop(docs);
        // Detached: the process may end before it is done. Should no
        // thread start, the memory is freed here instead.
        let _ = std::thread::Builder::new().spawn(move || drop((arena, sides, read_files)));
        report(&args, &findings, &[], files_linted)
    };
    let failed = failed?;
    // Nor are tens of thousands of findings.
    std::mem::forget(findings);
    Ok(if unusable {
        EXIT_UNUSABLE
    } else if failed {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}

/// Writes the `--report` files and the report on standard output; whether
/// any finding is an error.
fn report(
    args: &Args,
    findings: &[Finding],
    texts: &[SourceText<'_>],
    files_linted: usize,
) -> anyhow::Result<bool> {
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    for (format, path) in &args.report {
        std::fs::write(path, render::render(*format, findings, texts, files_linted))
            .with_context(|| format!("cannot write the {format} report {}", path.display()))?;
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = match args.format.0 {
        // Streamed: many findings make tens of megabytes of report.
        Format::Json => render::write_json(findings, files_linted, &mut out),
        Format::Sarif => render::write_sarif(findings, &mut out),
        Format::Github => render::write_github(findings, files_linted, &mut out),
        Format::Human => render::write_human(
            findings,
            texts,
            files_linted,
            &HumanOptions { color },
            &mut out,
        ),
    }
    .and_then(|()| out.flush());
    match written {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(err).context("cannot write the findings to standard output");
        }
        _ => {}
    }
    Ok(findings.iter().any(|f| f.severity == Severity::Error))
}

/// Reads a configuration file, as much of it as any input (see
/// `crate::input`).
fn load_config(path: &Path) -> anyhow::Result<Config> {
    let text = crate::input::read_string(path, "a configuration file")?;
    Ok(Config::parse(&text, &path.display().to_string())?)
}

/// The command line's levels: allow, then warn, then deny, so the strictest
/// flag wins for a rule named twice.
fn cli_config(args: &Args) -> anyhow::Result<Config> {
    let mut config = Config::default();
    for (ids, level) in [
        (&args.allow, Level::Allow),
        (&args.warn, Level::Warn),
        (&args.deny, Level::Deny),
    ] {
        for id in ids {
            config.set(id, level)?;
        }
    }
    Ok(config)
}

/// A path as a message shows it: escaped, so that a file name cannot drive
/// the terminal or forge a line.
fn shown(path: &Path) -> String {
    line_safe(&path.display().to_string()).into_owned()
}

/// The path as findings report it: relative to the working directory when
/// it is inside it, with `/` separators and no leading `./` (but a file
/// really called `-` stays `./-`, which standard input's `-` is not).
fn display_name(path: &Path) -> String {
    if crate::input::is_stdin(path) {
        return crate::input::STDIN.to_owned();
    }
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    let s = relative.to_string_lossy().replace('\\', "/");
    let s = s.strip_prefix("./").map(str::to_owned).unwrap_or(s);
    if s == crate::input::STDIN {
        format!("./{s}")
    } else {
        s
    }
}
