//! `objectstack-ai tools`: materialise a stack's actions as AI tool
//! definitions, as a runtime with the given services would.
//!
//! With no wiring flag nothing is wired, as in a runtime with no services:
//! `flow` and `api` actions are skipped (`no_automation`, `no_api_client`)
//! and actions that need confirmation are skipped
//! (`requires_confirmation`). `--automation`, `--api` (or
//! `--api-base-url`) and `--approval` wire those services.
//!
//! Formats: `json` (the default) prints `{"registered": [AIToolDefinition],
//! "skipped": [{action, object, code, reason}], "warnings": [{action,
//! object, code, warning}]}` in walk order (objects in document order,
//! each object's actions in order, a stack-level action bound to an object
//! joining that object's actions, each group sorted by `order` when one
//! sets it, then the unbound stack-level actions), streamed
//! as the definitions are made; `human` prints the "AI exposure" table;
//! `mcp` (a `tools/list` result), `openai` and `anthropic` (the `tools`
//! array of a request) print the registered tools as that API takes them,
//! with warnings on stderr. JSON is compact, one document per run, ending
//! with a newline.
//!
//! Exit codes: 0 whatever was skipped (skips are information), 2 when the
//! file or the command line is unusable.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use objectstack_bridge::materialise::{
    ApiScope, Event, Materialised, Registration, SkipCode, Wiring, materialise_document,
    materialise_document_each,
};
use objectstack_bridge::projection::{ProjectionWarning, anthropic, mcp, openai};
use objectstack_spec::json::{self, Arena};
use objectstack_spec::text::terminal_safe;

use crate::table::pad;
use crate::{EXIT_OK, EXIT_UNUSABLE};

/// Arguments of `objectstack-ai tools`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The stack file (JSON, e.g. `dist/objectstack.json`).
    file: PathBuf,
    /// Wire an automation service, so `flow` actions can run.
    #[arg(long)]
    automation: bool,
    /// Wire an API client, so `api` actions can run.
    #[arg(long, conflicts_with = "api_base_url")]
    api: bool,
    /// Wire an API client with this base URL (http or https), so `api`
    /// actions can run.
    #[arg(long, value_name = "URL")]
    api_base_url: Option<String>,
    /// Wire the approval queue, so actions that need confirmation register
    /// (their calls wait for a human).
    #[arg(long)]
    approval: bool,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Strict tools (Anthropic `strict: true` and its schema subset).
    /// OpenAI tools are always strict.
    #[arg(long)]
    strict: bool,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// `{"registered", "skipped", "warnings"}` (upstream's AIToolDefinition).
    Json,
    /// The "AI exposure" table: every action, exposed or not and why.
    Human,
    /// An MCP `tools/list` result.
    Mcp,
    /// OpenAI strict function tools.
    Openai,
    /// Anthropic tools.
    Anthropic,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    if args.strict && !matches!(args.format, Format::Anthropic | Format::Openai) {
        eprintln!(
            "error: --strict applies to --format anthropic (OpenAI tools are always strict); \
             drop it or pick one of those formats"
        );
        return Ok(EXIT_UNUSABLE);
    }
    if let Some(url) = &args.api_base_url
        && let Err(why) = check_base_url(url)
    {
        eprintln!("error: --api-base-url {url}: {why}");
        return Ok(EXIT_UNUSABLE);
    }
    let file = crate::input::read_text(&args.file)?;
    let arena = Arena::new();
    let document = file.tree(&arena)?;
    let wiring = Wiring {
        automation: args.automation,
        api_client: args.api || args.api_base_url.is_some(),
        approval: args.approval,
        api_scope: ApiScope {
            base_url: args.api_base_url.as_deref(),
            allowed_origins: &[],
        },
    };
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = if args.format == Format::Json {
        // Streamed: each definition is written and dropped as it is made.
        stream_json(&mut out, document, &arena, &wiring)
    } else {
        let materialised = materialise_document(document, &arena, Some(&wiring), &|_| false);
        let written = match args.format {
            Format::Human => {
                // Names come from the document: escape what a terminal
                // would act on.
                let mut table = Vec::new();
                write_human(&mut table, &args, &wiring, &materialised).and_then(|()| {
                    let table = String::from_utf8_lossy(&table);
                    out.write_all(terminal_safe(&table).as_bytes())
                })
            }
            Format::Mcp => {
                let projected = mcp::tools(&materialised.registered);
                notes(&materialised, &projected.warnings);
                write_json(&mut out, &serde_json::json!({ "tools": projected.tools }))
            }
            Format::Openai => {
                let projected = openai::tools(materialised.definitions());
                notes(&materialised, &projected.warnings);
                write_json(&mut out, &projected.tools)
            }
            // Not reached (JSON is streamed above); the same bytes.
            Format::Json => write_json(&mut out, &materialised),
            Format::Anthropic => {
                let options = anthropic::Options {
                    strict: args.strict,
                };
                let projected = anthropic::tools(materialised.definitions(), options);
                notes(&materialised, &projected.warnings);
                write_json(&mut out, &projected.tools)
            }
        };
        std::mem::forget(materialised);
        written
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => {}
        // A closed pipe (`| head`) is not a failure of this command.
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {}
        Err(err) => return Err(err).context("cannot write the output"),
    }
    // The document can be large and the process is about to exit: skip
    // freeing it.
    std::mem::forget(arena);
    std::mem::forget(file);
    Ok(EXIT_OK)
}

/// Writes `{"registered": [...], "skipped": [...], "warnings": [...]}`
/// (the serialisation of [`Materialised`]) without holding the
/// definitions: each is written as soon as it is made.
fn stream_json<'a>(
    out: &mut impl Write,
    stack: &'a json::Map<'a>,
    arena: &'a Arena,
    wiring: &Wiring,
) -> io::Result<()> {
    out.write_all(b"{\"registered\":[")?;
    let mut first = true;
    let mut failed: Option<io::Error> = None;
    let mut skipped = Vec::new();
    let mut warnings = Vec::new();
    let mut on_event = |event: Event<Registration<'a>>| match event {
        Event::Registered(registered) => {
            if failed.is_some() {
                return;
            }
            let separator = if first { &b""[..] } else { b"," };
            first = false;
            let written = out.write_all(separator).and_then(|()| {
                serde_json::to_writer(&mut *out, &registered.definition).map_err(io::Error::from)
            });
            if let Err(err) = written {
                failed = Some(err);
            }
        }
        Event::Skipped(s) => skipped.push(s),
        Event::Warning(w) => warnings.push(w),
    };
    materialise_document_each(stack, arena, Some(wiring), &|_| false, &mut on_event);
    if let Some(err) = failed {
        return Err(err);
    }
    out.write_all(b"],\"skipped\":")?;
    serde_json::to_writer(&mut *out, &skipped).map_err(io::Error::from)?;
    out.write_all(b",\"warnings\":")?;
    serde_json::to_writer(&mut *out, &warnings).map_err(io::Error::from)?;
    out.write_all(b"}\n")
}

/// Checks that a base URL is an absolute http(s) URL with a host.
fn check_base_url(url: &str) -> Result<(), &'static str> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or("a base URL starts with http:// or https://")?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err("the URL has no host");
    }
    Ok(())
}

fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Warnings and a skip summary on stderr, for the projection formats.
fn notes(materialised: &Materialised<'_>, projection: &[ProjectionWarning]) {
    let stderr = io::stderr();
    let mut err = stderr.lock();
    for w in &materialised.warnings {
        let line = format!("warning: {}: {} [{}]", w.action, w.warning, w.code);
        let _ = writeln!(err, "{}", terminal_safe(&line));
    }
    for w in projection {
        let _ = writeln!(err, "warning: {}", terminal_safe(&w.to_string()));
    }
    if !materialised.skipped.is_empty() {
        let _ = writeln!(
            err,
            "note: {} action(s) not registered; `--format human` shows why",
            materialised.skipped.len()
        );
    }
}

/// One row of the exposure table.
struct Row {
    ordinal: usize,
    action: String,
    status: String,
    change: String,
}

fn write_human(
    out: &mut impl Write,
    args: &Args,
    wiring: &Wiring,
    m: &Materialised<'_>,
) -> io::Result<()> {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    writeln!(out, "AI exposure of {}", args.file.display())?;
    writeln!(
        out,
        "wiring: automation {}, API client {}, approval queue {}",
        yes_no(wiring.automation),
        yes_no(wiring.api_client),
        yes_no(wiring.approval)
    )?;
    writeln!(out)?;

    let qualified = |object: Option<&str>, action: &str| match object {
        Some(o) => format!("{o}.{action}"),
        None => action.to_owned(),
    };
    let mut rows: Vec<Row> = Vec::with_capacity(m.registered.len() + m.skipped.len());
    // Looked up per registered action: a set, so a stack with many
    // warnings does not make the table quadratic.
    let warned: std::collections::HashSet<_> = m.warnings.iter().map(|w| w.location).collect();
    for r in &m.registered {
        let warned = warned.contains(&r.location);
        let change = match (r.confirmation, r.destructive) {
            (Some(why), _) => format!(
                "calls wait for a human's approval ({why}); `ai.exposed: false` withdraws it"
            ),
            (None, Some(signal)) if warned => format!(
                "runs unattended despite `{signal}`; drop `ai.requiresConfirmation: false` to \
                 queue calls for approval"
            ),
            _ => "runs directly; `ai.exposed: false` withdraws it".to_owned(),
        };
        rows.push(Row {
            ordinal: r.location.ordinal,
            action: qualified(r.object.as_deref(), &r.action_name),
            status: format!("registered as {}", r.definition.name),
            change,
        });
    }
    for s in &m.skipped {
        rows.push(Row {
            ordinal: s.location.ordinal,
            action: qualified(s.object.as_deref(), &s.action),
            status: format!("skipped: {}", s.code),
            change: remedy(s.code).to_owned(),
        });
    }
    rows.sort_by_key(|r| r.ordinal);

    if rows.is_empty() {
        writeln!(out, "The stack has no actions.")?;
    } else {
        let headers = ("ACTION", "STATUS", "WHAT WOULD CHANGE IT");
        let w_action = rows
            .iter()
            .map(|r| r.action.chars().count())
            .max()
            .unwrap_or(0);
        let w_action = w_action.max(headers.0.len());
        let w_status = rows
            .iter()
            .map(|r| r.status.chars().count())
            .max()
            .unwrap_or(0);
        let w_status = w_status.max(headers.1.len());
        // Padded by hand: a `{:<w$}` width above u16::MAX panics, and an
        // action name can be that long.
        writeln!(
            out,
            "{}  {}  {}",
            pad(headers.0, w_action),
            pad(headers.1, w_status),
            headers.2
        )?;
        for r in &rows {
            writeln!(
                out,
                "{}  {}  {}",
                pad(&r.action, w_action),
                pad(&r.status, w_status),
                r.change
            )?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "{} registered, {} skipped, {} warning(s)",
        m.registered.len(),
        m.skipped.len(),
        m.warnings.len()
    )?;

    if !m.skipped.is_empty() {
        writeln!(out)?;
        writeln!(out, "Why not registered:")?;
        for s in &m.skipped {
            writeln!(
                out,
                "  {} ({}) [{}]: {}",
                qualified(s.object.as_deref(), &s.action),
                s.location,
                s.code,
                s.reason
            )?;
        }
    }
    if !m.warnings.is_empty() {
        writeln!(out)?;
        writeln!(out, "Warnings:")?;
        for w in &m.warnings {
            writeln!(
                out,
                "  {} ({}) [{}]: {}",
                qualified(w.object.as_deref(), &w.action),
                w.location,
                w.code,
                w.warning
            )?;
        }
    }
    Ok(())
}

/// What would make a skipped action register, in a few words.
fn remedy(code: SkipCode) -> &'static str {
    match code {
        SkipCode::NotExposed => {
            "opt in with `ai: {exposed: true, description}`, or leave it human-only"
        }
        SkipCode::MissingDescription => "write `ai.description` (40+ characters, for a model)",
        SkipCode::InvalidAiBlock => "fix the `ai` block (see below)",
        SkipCode::UiOnlyType => "give the AI a script, api or flow action instead",
        SkipCode::UnsupportedType => "set `type` to script, api or flow",
        SkipCode::MissingTarget => "set `target` (a script may use `body`)",
        SkipCode::NoAutomation => "--automation (an automation service)",
        SkipCode::NoApiClient => "--api or --api-base-url URL (an API client)",
        SkipCode::UnsafeApiTarget => "write `target` as a path below the API's base URL",
        SkipCode::UnsendableApiData => {
            "fit the data to a query string, or use a method with a body"
        }
        SkipCode::RequiresConfirmation => {
            "--approval (the approval queue), or `ai.requiresConfirmation: false` if safe"
        }
        SkipCode::MissingName => "give the action a `name`",
        SkipCode::NameCollision => "rename the action",
    }
}
