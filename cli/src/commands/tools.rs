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
//! with warnings on stderr. JSON is compact, one document per line.
//!
//! Several files are materialised each on its own, as a runtime serving
//! only that file would: `human` prints one table per file, `json` one
//! document per file and line, in the order given, each starting with a
//! `"file"` key. With `--compose` they are composed into one stack first
//! (`objectstack_spec::compose`: collections concatenated in file order),
//! as a runtime serving all of them would; a name that two files define is
//! reported on stderr. The model API formats print one tools list, so they
//! take several files only with `--compose`.
//!
//! Exit codes: 0 whatever was skipped (skips are information), 1 when the
//! composition has errors (a name two files define), 2 when a file or the
//! command line is unusable.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use objectstack_bridge::materialise::{
    ApiScope, Event, Location, Materialised, Registration, SkipCode, Wiring, materialise,
    materialise_each,
};
use objectstack_bridge::projection::{ProjectionWarning, anthropic, mcp, openai};
use objectstack_spec::compose::{Composition, Source, compose};
use objectstack_spec::json::{self, Arena};
use objectstack_spec::path::JsonPath;
use objectstack_spec::text::{line_safe, terminal_safe};

use crate::table::pad;
use crate::{EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE};

/// Arguments of `objectstack-ai tools`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Stack files (JSON, e.g. `dist/objectstack.json`); each is
    /// materialised on its own unless `--compose` is given. `-` is
    /// standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Materialise the composition of all the files as one stack
    /// (collections concatenated in file order), as a runtime serving all
    /// of them would.
    #[arg(long)]
    compose: bool,
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
    /// `{"registered", "skipped", "warnings"}` (upstream's AIToolDefinition);
    /// several files without `--compose` give one such object a line (JSON
    /// Lines), each led by its `"file"`.
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
        eprintln!(
            "error: --api-base-url {}: {why}",
            line_safe(&objectstack_bridge::redact::url(url))
        );
        return Ok(EXIT_UNUSABLE);
    }
    let several = args.files.len() > 1;
    if several && !args.compose && !matches!(args.format, Format::Json | Format::Human) {
        eprintln!(
            "error: --format {} prints one tools list, for one runtime: add --compose to \
             materialise the files as one stack, or run once per file",
            format_name(args.format)
        );
        return Ok(EXIT_UNUSABLE);
    }
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
    let mut code = EXIT_OK;
    let written = if several && args.compose {
        let Some((names, composition)) = composed(&args.files) else {
            return Ok(EXIT_UNUSABLE);
        };
        if report_composition(&names, &composition) {
            code = EXIT_FINDINGS;
        }
        let arena = Arena::new();
        let document = json::Map::from_serde(&composition.stack, &arena);
        let view = View {
            title: format!("the composition of {}", names.join(", ")),
            file: None,
            origin: Some((&composition, &names)),
        };
        let written = emit(&mut out, &args, &wiring, document, &arena, &view);
        // Large documents: the process is about to exit.
        std::mem::forget(arena);
        std::mem::forget(composition);
        written
    } else {
        let mut written = Ok(());
        for (i, path) in args.files.iter().enumerate() {
            let file = match crate::input::read_text(path) {
                Ok(file) => file,
                Err(err) => {
                    eprintln!("error: {}", line_safe(&format!("{err:#}")));
                    code = EXIT_UNUSABLE;
                    continue;
                }
            };
            let arena = crate::input::tree_arena(file.text().len());
            let mut side = crate::input::tree_arena(file.text().len());
            let document = match file.tree(&arena, &mut side) {
                Ok(document) => document,
                Err(err) => {
                    eprintln!("error: {}", line_safe(&format!("{err:#}")));
                    code = EXIT_UNUSABLE;
                    continue;
                }
            };
            let view = View {
                title: path.display().to_string(),
                file: several.then(|| path.display().to_string()),
                origin: None,
            };
            if several && args.format == Format::Human && i > 0 {
                written = writeln!(out);
            }
            if written.is_ok() {
                written = emit(&mut out, &args, &wiring, document, &arena, &view);
            }
            // The document can be large and the process is about to exit:
            // skip freeing it.
            std::mem::forget(arena);
            std::mem::forget(side);
            std::mem::forget(file);
            if written.is_err() {
                break;
            }
        }
        written
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => {}
        // A closed pipe (`| head`) is not a failure of this command.
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {}
        Err(err) => return Err(err).context("cannot write the output"),
    }
    Ok(code)
}

/// What one run prints about: a file, or the composition of several.
struct View<'a> {
    /// What the human table is "the AI exposure of".
    title: String,
    /// The file name JSON output starts with (several files, not composed).
    file: Option<String>,
    /// For a composition: where each composed entry came from, and the
    /// file names.
    origin: Option<(&'a Composition, &'a [String])>,
}

impl View<'_> {
    /// The file an action at `location` of the composition came from.
    fn source_of(&self, location: &Location) -> Option<&str> {
        let (composition, names) = self.origin?;
        let path = match location.object {
            _ if location.record => JsonPath::root().key("tools").index(location.action),
            Some(o) => JsonPath::root().key("objects").index(o),
            None => JsonPath::root().key("actions").index(location.action),
        };
        let (source, _) = composition.origin(&path)?;
        names.get(source).map(String::as_str)
    }
}

/// Reads and composes several files, or says what cannot be read (then
/// nothing is composed: a composition missing a file is not the runtime's).
fn composed(files: &[PathBuf]) -> Option<(Vec<String>, Composition)> {
    let mut documents = Vec::new();
    let mut unusable = 0usize;
    for path in files {
        match crate::input::read_document(path) {
            Ok(document) => documents.push((path.display().to_string(), document)),
            Err(err) => {
                unusable += 1;
                eprintln!("error: {}", line_safe(&format!("{err:#}")));
            }
        }
    }
    if unusable > 0 {
        eprintln!(
            "error: not composing: {unusable} file(s) could not be read, and a composition \
             without them is not what the runtime serves; fix them and run again"
        );
        return None;
    }
    let sources: Vec<Source<'_>> = documents
        .iter()
        .map(|(name, document)| Source {
            name,
            stack: &document.root,
        })
        .collect();
    let composition = compose(&sources);
    let names = documents.iter().map(|(name, _)| name.clone()).collect();
    drop(sources);
    // The process is about to exit: skip freeing large documents.
    std::mem::forget(documents);
    Some((names, composition))
}

/// Prints the composition's diagnostics on stderr; whether one is an
/// error.
fn report_composition(names: &[String], composition: &Composition) -> bool {
    let mut errors = false;
    for d in &composition.diagnostics {
        errors |= d.is_error();
        let file = d
            .source
            .and_then(|s| names.get(s))
            .map_or_else(String::new, |name| format!("{name}: "));
        let at = if d.path.is_root() {
            String::new()
        } else {
            format!("{}: ", d.path)
        };
        eprintln!(
            "{}[{}]: {}",
            d.severity,
            d.id,
            line_safe(&format!("{file}{at}{}", d.message))
        );
        eprintln!("  = fix: {}", line_safe(&d.fix));
    }
    errors
}

/// The name `--format` takes for `format`.
fn format_name(format: Format) -> String {
    clap::ValueEnum::to_possible_value(&format)
        .map_or_else(String::new, |v| v.get_name().to_owned())
}

/// Materialises one stack and prints it in the chosen format.
fn emit<'a>(
    out: &mut impl Write,
    args: &Args,
    wiring: &Wiring,
    document: &'a json::Map<'a>,
    arena: &'a Arena,
    view: &View<'_>,
) -> io::Result<()> {
    if args.format == Format::Json {
        // Streamed: each definition is written and dropped as it is made.
        return stream_json(out, document, arena, wiring, view.file.as_deref());
    }
    let materialised = materialise(document, arena, Some(wiring), &|_| false);
    let written = match args.format {
        Format::Human => {
            // Every field is escaped as it is written (`write_human`); this
            // pass over the table is a second guard, and copies nothing
            // when all is well.
            let mut table = Vec::new();
            write_human(&mut table, view, wiring, &materialised).and_then(|()| {
                let table = String::from_utf8_lossy(&table);
                out.write_all(terminal_safe(&table).as_bytes())
            })
        }
        Format::Mcp => {
            let projected = mcp::tools(&materialised.registered);
            notes(&materialised, &projected.warnings);
            write_json(out, &serde_json::json!({ "tools": projected.tools }))
        }
        Format::Openai => {
            let projected = openai::tools(materialised.definitions());
            notes(&materialised, &projected.warnings);
            write_json(out, &projected.tools)
        }
        // Not reached (JSON is streamed above); the same bytes.
        Format::Json => write_json(out, &materialised),
        Format::Anthropic => {
            let options = anthropic::Options {
                strict: args.strict,
            };
            let projected = anthropic::tools(materialised.definitions(), options);
            notes(&materialised, &projected.warnings);
            write_json(out, &projected.tools)
        }
    };
    std::mem::forget(materialised);
    written
}

/// Writes `{"registered": [...], "skipped": [...], "warnings": [...]}`
/// (the serialisation of [`Materialised`]) without holding the
/// definitions: each is written as soon as it is made.
fn stream_json<'a>(
    out: &mut impl Write,
    stack: &'a json::Map<'a>,
    arena: &'a Arena,
    wiring: &Wiring,
    file: Option<&str>,
) -> io::Result<()> {
    out.write_all(b"{")?;
    if let Some(file) = file {
        out.write_all(b"\"file\":")?;
        objectstack_spec::json::terminal::to_writer(&mut *out, file).map_err(io::Error::from)?;
        out.write_all(b",")?;
    }
    out.write_all(b"\"registered\":[")?;
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
                objectstack_spec::json::terminal::to_writer(&mut *out, &registered.definition)
                    .map_err(io::Error::from)
            });
            if let Err(err) = written {
                failed = Some(err);
            }
        }
        Event::Skipped(s) => skipped.push(s),
        Event::Warning(w) => warnings.push(w),
    };
    materialise_each(stack, arena, Some(wiring), &|_| false, &mut on_event);
    if let Some(err) = failed {
        return Err(err);
    }
    out.write_all(b"],\"skipped\":")?;
    objectstack_spec::json::terminal::to_writer(&mut *out, &skipped).map_err(io::Error::from)?;
    out.write_all(b",\"warnings\":")?;
    objectstack_spec::json::terminal::to_writer(&mut *out, &warnings).map_err(io::Error::from)?;
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
    objectstack_spec::json::terminal::to_writer(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Warnings and a skip summary on stderr, for the projection formats.
fn notes(materialised: &Materialised<'_>, projection: &[ProjectionWarning]) {
    let stderr = io::stderr();
    let mut err = stderr.lock();
    for w in &materialised.warnings {
        let line = format!("warning: {}: {} [{}]", w.action, w.warning, w.code);
        let _ = writeln!(err, "{}", line_safe(&line));
    }
    for w in projection {
        let _ = writeln!(err, "warning: {}", line_safe(&w.to_string()));
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
    view: &View<'_>,
    wiring: &Wiring,
    m: &Materialised<'_>,
) -> io::Result<()> {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    writeln!(out, "AI exposure of {}", line_safe(&view.title))?;
    writeln!(
        out,
        "wiring: automation {}, API client {}, approval queue {}",
        yes_no(wiring.automation),
        yes_no(wiring.api_client),
        yes_no(wiring.approval)
    )?;
    writeln!(out)?;

    // Every name and reason comes from the document: each field is escaped
    // on its own, so none can drive the terminal or forge a line.
    let qualified = |object: Option<&str>, action: &str| {
        line_safe(&match object {
            Some(o) => format!("{o}.{action}"),
            None => action.to_owned(),
        })
        .into_owned()
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
        // A refinement is shown as its record, with what it refines and
        // the raw tool it supersedes; the record, not `ai.exposed`, is what
        // withdraws it.
        let change = match &r.refines {
            Some(refines) => {
                let gated_by_record = r.confirmation
                    == Some(
                        objectstack_spec::materialise::ConfirmationReason::AiRequiresConfirmation,
                    )
                    && r.action
                        .get("ai")
                        .and_then(|ai| ai.get("requiresConfirmation"))
                        != Some(&serde_json::Value::Bool(true));
                let withdraw = match &refines.supersedes {
                    Some(raw) => {
                        format!("with no record bound to {}, {raw} returns", refines.target)
                    }
                    None => "removing the record withdraws it".to_owned(),
                };
                match r.confirmation {
                    Some(_) if gated_by_record => format!(
                        "calls wait for a human's approval (the record's `requiresConfirmation: true`); {withdraw}"
                    ),
                    Some(why) => format!("calls wait for a human's approval ({why}); {withdraw}"),
                    None => format!("runs directly; {withdraw}"),
                }
            }
            None => change,
        };
        let (action, status) = match &r.refines {
            Some(refines) => (
                format!("tool {}", line_safe(&r.definition.name)),
                match &refines.supersedes {
                    Some(raw) => format!(
                        "refines {}, supersedes {}",
                        qualified(r.object.as_deref(), &refines.target),
                        line_safe(raw)
                    ),
                    None => format!("refines flow {}", line_safe(&refines.target)),
                },
            ),
            None => (
                qualified(r.object.as_deref(), &r.action_name),
                format!("registered as {}", line_safe(&r.definition.name)),
            ),
        };
        rows.push(Row {
            ordinal: r.location.ordinal,
            action,
            status,
            change: line_safe(&change).into_owned(),
        });
    }
    for s in &m.skipped {
        rows.push(Row {
            ordinal: s.location.ordinal,
            action: match &s.tool {
                Some(tool) => format!("tool {}", line_safe(tool)),
                None => qualified(s.object.as_deref(), &s.action),
            },
            status: format!("skipped: {}", s.code),
            change: match (&s.tool, s.code) {
                (Some(_), SkipCode::MissingDescription) => {
                    "give the record a `description` (40+ characters, for a model)"
                }
                (Some(_), SkipCode::MissingName) => "give the record a snake_case `name`",
                (Some(_), SkipCode::NameCollision) => "rename the record",
                _ => remedy(s.code),
            }
            .to_owned(),
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
                match &s.tool {
                    Some(tool) => format!("tool {}", line_safe(tool)),
                    None => qualified(s.object.as_deref(), &s.action),
                },
                line_safe(&located(view, &s.location)),
                s.code,
                line_safe(&s.reason)
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
                line_safe(&located(view, &w.location)),
                w.code,
                line_safe(&w.warning)
            )?;
        }
    }
    Ok(())
}

/// An action's place: its lenient path, and in a composition the file it
/// came from.
fn located(view: &View<'_>, location: &Location) -> String {
    match view.source_of(location) {
        Some(file) => format!("{location} of the composition, from {file}"),
        None => location.to_string(),
    }
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
        SkipCode::Superseded => "skills name the refined tool (see below)",
        SkipCode::InvalidBinding => "write `binding: {type: action|flow, name}`",
        SkipCode::ShadowsPlatform => "rename the record (not a platform name, not `action_`)",
        SkipCode::BindingUnresolved => "bind a declared action or flow",
        SkipCode::BindingNotExposed => "opt the action in with `ai: {exposed: true, description}`",
        SkipCode::InvalidRecord => "fix the record (see below)",
        SkipCode::BindingWidens => "narrow the record's `parameters` (see below)",
    }
}
