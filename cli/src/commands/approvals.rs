//! `objectstack-ai approvals`: operate the human-approval queue.
//!
//! ```text
//! objectstack-ai approvals --db FILE list [--state S] [--limit N] [--order oldest|newest|changed]
//! objectstack-ai approvals --db FILE show ID
//! objectstack-ai approvals --db FILE approve ID --by WHO [--input-sha256 HASH]
//! objectstack-ai approvals --db FILE reject ID --by WHO [--reason TEXT]
//! objectstack-ai approvals --db FILE expire --older-than DURATION [--by WHO]
//! objectstack-ai approvals --db FILE resolve ID --as executed|failed --by WHO [--note TEXT]
//! ```
//!
//! The queue is the SQLite file the host process writes, or the
//! PostgreSQL database (`--db postgres://...`) several hosts share.
//! Approving records
//! the decision, bound to the input's SHA-256 (the one `show` prints, or
//! the one given with `--input-sha256`); the host that owns the
//! dispatchers executes approved actions. `expire` also turns claims whose
//! lease ran out into `in_doubt`; `resolve` is the operator's verdict on an
//! `in_doubt` action after checking the target system.
//!
//! `list` and `show` only read: they open the file read-only, create
//! nothing beside it, take no write lock and never upgrade its schema, so
//! anyone who can read the file can list it while hosts write it. The
//! commands that decide open it for writing, and upgrade an older schema
//! first.
//!
//! `--format json` prints machine-readable output, and every error as
//! `{"error": {"code", "message", ...}}` on stdout (queue refusals, store
//! failures and what the argument parser refuses alike). Text output writes each stored value on its
//! line, with newlines and every other control character escaped, so no
//! stored value can forge a line.
//!
//! `list` prints every row it can read; a row it cannot (damaged by hand,
//! or written by something else) is reported by id, on stderr or under
//! `unreadable` in JSON, and the others are still listed.
//!
//! Exit codes: 0 done; 1 the queue refused (unknown id, already decided,
//! input mismatch, ...) or `list` met rows it cannot read; 2 unusable file,
//! a store failure, or a wrong command line.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use objectstack_bridge::approval::{
    ApprovalError, ApprovalQueue, EXPIRY_DECIDER, ListFilter, ListOrder, OpenMode, PendingAction,
    QueueLocation, Resolution, State, StoreError, format_timestamp,
};
use objectstack_bridge::redact;
use serde_json::{Value, json};

use crate::table::pad;
use crate::{EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE};

/// Arguments of `objectstack-ai approvals`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The approval queue the host writes: an SQLite file (or sqlite:PATH),
    /// or a postgres:// URL (put the password in PGPASSWORD, not the URL).
    #[arg(long, value_name = "FILE|URL")]
    db: PathBuf,
    /// Output format. With `json`, errors are JSON on stdout too.
    #[arg(long, value_enum, default_value_t = Format::Text, global = true)]
    format: Format,
    #[command(subcommand)]
    command: Sub,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// For people.
    Text,
    /// JSON on stdout.
    Json,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// List pending actions, oldest first (or as `--order` says).
    ///
    /// Reads only: the file is opened read-only, nothing is created beside
    /// it, no write lock is taken and an older schema is not upgraded, so
    /// anyone who can read the file can list it while hosts write it.
    List {
        /// Only this state (pending, approved, rejected, expired, cancelled,
        /// executing, executed, failed, in_doubt).
        // Read as text and checked in `run`, so that with `--format json`
        // a bad value is a JSON error like every other.
        #[arg(long, value_name = "STATE")]
        state: Option<String>,
        /// At most this many.
        #[arg(long)]
        limit: Option<u64>,
        /// The order: oldest (the default) or newest, by when each was
        /// proposed, or changed: the most recently decided or run first.
        #[arg(long, value_name = "ORDER")]
        order: Option<String>,
    },
    /// Show one pending action in full, with the input and its SHA-256.
    ///
    /// It also shows the executable sha256: the digest of the tool as
    /// registered when the call was proposed (target or body, method,
    /// patch, parameter schema, ...). The host refuses to execute an
    /// approval whose tool has changed since ("the action changed since it
    /// was approved"), and one queued before digests were recorded. Each
    /// stored value stays on its line, newlines and control characters
    /// escaped. Reads only, like `list`.
    Show {
        /// The pending action's id.
        id: String,
    },
    /// Approve a pending action; the host executes it.
    ///
    /// Approving records the decision only. The host process that
    /// registers the action's tool executes approved actions on its own
    /// schedule (`ToolRegistry::execute_approved`), once: `serve` runs them
    /// under `OBJECTSTACK_EXECUTOR_KEY`, and without that key they wait.
    Approve {
        /// The pending action's id.
        id: String,
        /// Who approves (recorded).
        #[arg(long, value_parser = decider)]
        by: String,
        /// The input hash you reviewed (from `show`); the approval fails if
        /// the stored input differs. Default: the stored input's hash.
        #[arg(long, value_name = "HASH", value_parser = sha256_hex)]
        input_sha256: Option<String>,
    },
    /// Reject a pending action.
    Reject {
        /// The pending action's id.
        id: String,
        /// Who rejects (recorded).
        #[arg(long, value_parser = decider)]
        by: String,
        /// Why; the next model turn can surface it.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Expire pending actions older than a duration, and mark claims whose
    /// lease ran out as in_doubt.
    ///
    /// A running `serve` expires its queue's pending actions at their
    /// deadline (`--approval-ttl`) on its own. A queue no gateway serves
    /// expires nothing by itself: run this from cron (for example `expire
    /// --older-than 24h`, hourly), or have the host call
    /// `ApprovalQueue::expire_older_than` on its timer.
    Expire {
        /// Age, as `90s`, `15m`, `24h`, `7d`, `1h30m`.
        #[arg(long, value_name = "DURATION")]
        older_than: String,
        /// Who expires them (recorded).
        #[arg(long, default_value = EXPIRY_DECIDER, value_parser = decider)]
        by: String,
    },
    /// Settle an in_doubt action after checking the target system.
    Resolve {
        /// The pending action's id.
        id: String,
        /// What happened.
        #[arg(long = "as", value_enum)]
        outcome: ResolveAs,
        /// Who resolves (recorded).
        #[arg(long, value_parser = decider)]
        by: String,
        /// What you found.
        #[arg(long)]
        note: Option<String>,
    },
}

/// A decider as `--by` takes it: a name with no control characters (it is
/// recorded, and shown to other approvers).
fn decider(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("it is empty: say who decides (a name or an email address)".into());
    }
    if text.chars().any(char::is_control) {
        return Err(format!(
            "`{}` holds a control character (a newline, an escape, ...): give the name on one line, \
             as plain text",
            text.escape_debug()
        ));
    }
    Ok(text.to_owned())
}

/// A SHA-256 as `--input-sha256` takes it: 64 hexadecimal digits (as
/// `show` prints them), in either case.
fn sha256_hex(text: &str) -> Result<String, String> {
    if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(format!(
            "`{}` is not a SHA-256: give the 64 hexadecimal digits `approvals show ID` prints as \
             `input sha256`",
            text.escape_debug()
        ))
    }
}

/// An operator's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ResolveAs {
    /// It ran.
    Executed,
    /// It did not run (or was undone).
    Failed,
}

/// The option values clap reads as text, checked before anything is
/// opened (so that with `--format json` a bad one is a JSON error too).
#[derive(Debug, Default)]
struct Values {
    state: Option<State>,
    limit: Option<usize>,
    order: ListOrder,
    older_than: Duration,
}

impl Values {
    fn of(command: &Sub) -> Result<Values, String> {
        let mut values = Values::default();
        match command {
            Sub::List {
                state,
                limit,
                order,
            } => {
                values.order = match order.as_deref() {
                    None | Some("oldest") => ListOrder::OldestFirst,
                    Some("newest") => ListOrder::NewestFirst,
                    Some("changed") => ListOrder::RecentlyChanged,
                    Some(other) => {
                        return Err(format!(
                            "--order must be oldest, newest or changed, not `{other}`"
                        ));
                    }
                };
                values.state = state
                    .as_deref()
                    .map(|s| parse_state(s).map_err(|e| format!("--state: {e}")))
                    .transpose()?;
                values.limit = match limit {
                    None => None,
                    Some(0) => {
                        return Err(
                            "--limit must be at least 1 (omit it to list every action)".to_owned()
                        );
                    }
                    Some(n) => Some(usize::try_from(*n).unwrap_or(usize::MAX)),
                };
            }
            Sub::Expire { older_than, .. } => {
                values.older_than =
                    parse_duration(older_than).map_err(|e| format!("--older-than: {e}"))?;
            }
            _ => {}
        }
        Ok(values)
    }
}

fn parse_state(s: &str) -> Result<State, String> {
    s.parse::<State>().map_err(|e| e.to_string())
}

/// Parses `90s`, `15m`, `24h`, `7d`, `2w` and sums like `1h30m`.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let hint = "write a number and a unit: s, m, h, d or w (for example 24h, 7d, 1h30m)";
    let s = s.trim();
    if s.is_empty() {
        return Err(format!("empty duration: {hint}"));
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if c == '.' || c == ',' {
            return Err(format!(
                "`{s}` has a fraction: write whole numbers of smaller units (1h30m, not 1.5h)"
            ));
        }
        let unit: u64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            other => return Err(format!("unknown unit `{other}` in `{s}`: {hint}")),
        };
        if digits.is_empty() {
            return Err(format!("`{s}` has a unit without a number: {hint}"));
        }
        let n: u64 = digits
            .parse()
            .map_err(|_| format!("`{digits}` is too large"))?;
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| format!("`{s}` is too long a duration"))?;
        digits.clear();
    }
    if !digits.is_empty() {
        return Err(format!("`{s}` ends without a unit: {hint}"));
    }
    Ok(Duration::from_secs(total))
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    let json = args.format == Format::Json;
    let values = match Values::of(&args.command) {
        Ok(values) => values,
        Err(message) => {
            if json {
                write_stdout(&pretty(
                    &json!({"error": {"code": "usage", "message": message}}),
                ))?;
            } else {
                eprintln!("error: {}", line_safe(&message));
            }
            return Ok(EXIT_UNUSABLE);
        }
    };
    // Listing and showing only read; deciding writes (and upgrades an older
    // schema first).
    let reads_only = matches!(args.command, Sub::List { .. } | Sub::Show { .. });
    let mode = if reads_only {
        OpenMode::ReadOnly
    } else {
        OpenMode::Existing
    };
    let opened = QueueLocation::parse(args.db.as_os_str())
        .and_then(|location| location.open(mode).map(|store| (location, store)));
    let store = match opened {
        Ok((_, store)) => store,
        Err(e) => {
            let message = match QueueLocation::parse(args.db.as_os_str()) {
                Ok(location) => format!("cannot open the approval queue {location}: {e}"),
                Err(_) => format!("cannot open the approval queue: {e}"),
            };
            if json {
                // As documented: in JSON mode errors are JSON too.
                write_stdout(&pretty(
                    &json!({"error": {"code": "unusable", "message": message}}),
                ))?;
            } else {
                eprintln!("error: {}", line_safe(&message));
            }
            return Ok(EXIT_UNUSABLE);
        }
    };
    let queue = ApprovalQueue::new(store);
    // Set when a listing met rows it cannot read: the others are printed,
    // and the exit code says the queue needs attention.
    let mut unreadable = 0usize;
    let outcome = match args.command {
        Sub::List { .. } => list(
            &queue,
            &ListFilter {
                state: values.state,
                limit: values.limit,
                order: values.order,
                ..ListFilter::default()
            },
            json,
            &mut unreadable,
        ),
        Sub::Show { id } => queue
            .get(&id)
            .map(|row| if json { to_json(&row) } else { show(&row) }),
        Sub::Approve {
            id,
            by,
            input_sha256,
        } => approve(&queue, &id, &by, input_sha256.as_deref(), json),
        Sub::Reject { id, by, reason } => queue.reject(&id, &by, reason.as_deref()).map(|row| {
            if json {
                to_json(&row)
            } else {
                let why = row
                    .reason
                    .as_deref()
                    .map(|r| format!(": {}", line_safe(r)))
                    .unwrap_or_default();
                format!(
                    "rejected {} by {}{why}\n",
                    line_safe(&row.id),
                    line_safe(&by)
                )
            }
        }),
        Sub::Expire { by, .. } => expire(&queue, values.older_than, &by, json),
        Sub::Resolve {
            id,
            outcome,
            by,
            note,
        } => {
            let resolution = match outcome {
                ResolveAs::Executed => Resolution::Executed,
                ResolveAs::Failed => Resolution::Failed,
            };
            queue
                .resolve(&id, &by, resolution, note.as_deref())
                .map(|row| {
                    if json {
                        to_json(&row)
                    } else {
                        format!(
                            "resolved {} as {} by {}\n",
                            line_safe(&row.id),
                            row.state,
                            line_safe(&by)
                        )
                    }
                })
        }
    };
    match outcome {
        Ok(text) => {
            // JSON escapes what a terminal would act on; text does not.
            write_stdout(&if json { text } else { terminal_safe(&text) })?;
            Ok(if unreadable > 0 {
                EXIT_FINDINGS
            } else {
                EXIT_OK
            })
        }
        Err(e) => {
            // A store failure makes the file unusable for this command; a
            // refusal is the queue's answer about one action.
            let (code, message) = match &e {
                ApprovalError::Store(store) => {
                    (EXIT_UNUSABLE, format!("the approval queue failed: {store}"))
                }
                other => (EXIT_FINDINGS, other.to_string()),
            };
            if json {
                let mut error = error_json(&e);
                if let Some(fields) = error.as_object_mut() {
                    fields.insert("message".into(), Value::String(message));
                }
                write_stdout(&pretty(&json!({ "error": error })))?;
            } else {
                eprintln!("error: {}", line_safe(&message));
            }
            Ok(code)
        }
    }
}

/// [`objectstack_spec::text::terminal_safe`], owned: for whole blocks of
/// output whose lines are ours.
fn terminal_safe(text: &str) -> String {
    objectstack_spec::text::terminal_safe(text).into_owned()
}

/// [`objectstack_spec::text::line_safe`], owned: for every value that came
/// from the queue file (or the command line) and is printed inside a line.
fn line_safe(text: &str) -> String {
    objectstack_spec::text::line_safe(text).into_owned()
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(err) => Err(err).context("cannot write to stdout"),
    }
}

fn pretty(value: &Value) -> String {
    let mut s = objectstack_spec::json::terminal::to_string_pretty(value)
        .unwrap_or_else(|_| "null".to_owned());
    s.push('\n');
    s
}

fn to_json(row: &PendingAction) -> String {
    pretty(&serde_json::to_value(row).unwrap_or(Value::Null))
}

fn error_json(e: &ApprovalError) -> Value {
    let (code, extra) = match e {
        ApprovalError::NotFound { id } => ("not_found", json!({"id": id})),
        ApprovalError::AlreadyDecided { id, state, by } => (
            "already_decided",
            json!({"id": id, "state": state, "by": by}),
        ),
        ApprovalError::NotApproved { id, state } => {
            ("not_approved", json!({"id": id, "state": state}))
        }
        ApprovalError::NotInDoubt { id, state } => {
            ("not_in_doubt", json!({"id": id, "state": state}))
        }
        ApprovalError::InputMismatch {
            id,
            expected,
            actual,
        } => (
            "input_mismatch",
            json!({"id": id, "expected": expected, "actual": actual}),
        ),
        ApprovalError::Corrupt { id, .. } => ("corrupt", json!({"id": id})),
        ApprovalError::InvalidRequest(_) => ("invalid_request", json!({})),
        ApprovalError::ToolCallConflict { existing, .. } => {
            ("tool_call_conflict", json!({"id": existing}))
        }
        ApprovalError::NoDispatcher { id, tool } => {
            ("no_dispatcher", json!({"id": id, "tool": tool}))
        }
        ApprovalError::SelfApproval { id, proposer } => {
            ("self_approval", json!({"id": id, "proposer": proposer}))
        }
        ApprovalError::InvalidEdits { id, tool, problems } => (
            "invalid_edits",
            json!({"id": id, "tool": tool, "problems": problems}),
        ),
        ApprovalError::NoQueue => ("no_queue", json!({})),
        ApprovalError::OutcomeNotRecorded { id, outcome, .. } => (
            "outcome_not_recorded",
            json!({"id": id, "outcome": outcome}),
        ),
        ApprovalError::Store(e) => store_error_json(e),
    };
    let mut out = json!({"code": code, "message": e.to_string()});
    if let (Some(out), Value::Object(extra)) = (out.as_object_mut(), extra) {
        out.extend(extra);
    }
    out
}

/// The `code` (and fields) of a store failure.
fn store_error_json(e: &StoreError) -> (&'static str, Value) {
    match e {
        StoreError::NotAQueue { path, .. } => ("not_a_queue", json!({"path": path})),
        StoreError::Missing { path } => ("missing", json!({"path": path})),
        StoreError::SchemaTooNew {
            path,
            found,
            supported,
        } => (
            "schema_too_new",
            json!({"path": path, "found": found, "supported": supported}),
        ),
        StoreError::ReadOnly { .. } => ("read_only", json!({})),
        StoreError::NeedsWriter { path, .. } => ("needs_writer", json!({"path": path})),
        StoreError::Busy { .. } => ("busy", json!({})),
        StoreError::CorruptRow { id, .. } => ("corrupt_row", json!({"id": id})),
        StoreError::Location { location, .. } => ("location", json!({"location": location})),
        StoreError::Backend { .. } => ("store_failed", json!({})),
    }
}

/// The listing, as a table or JSON. Rows that cannot be read are counted
/// in `unreadable` and reported (on stderr, or under `unreadable` in JSON)
/// without hiding the others.
fn list(
    queue: &ApprovalQueue,
    filter: &ListFilter,
    json: bool,
    unreadable: &mut usize,
) -> Result<String, ApprovalError> {
    let listing = queue.list(filter)?;
    *unreadable = listing.unreadable.len();
    let rows = listing.rows;
    if json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
            .collect();
        let unreadable: Vec<Value> = listing
            .unreadable
            .iter()
            .map(|e| match e {
                StoreError::CorruptRow { id, .. } => json!({"id": id, "message": e.to_string()}),
                _ => json!({"id": null, "message": e.to_string()}),
            })
            .collect();
        return Ok(pretty(
            &json!({"pendingActions": rows, "unreadable": unreadable}),
        ));
    }
    for e in &listing.unreadable {
        eprintln!(
            "warning: {}; it is left as it is: repair or delete that row in the queue file",
            line_safe(&e.to_string())
        );
    }
    if rows.is_empty() && *unreadable > 0 {
        return Ok("no readable pending actions\n".to_owned());
    }
    if rows.is_empty() {
        return Ok(match filter.state {
            Some(s) => format!("no pending actions in state {s}\n"),
            None => "no pending actions\n".to_owned(),
        });
    }
    let header = [
        "ID",
        "STATE",
        "TOOL",
        "OBJECT",
        "RECORD",
        "PROPOSED BY",
        "CREATED",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            [
                r.id.clone(),
                r.state.to_string(),
                r.tool_name.clone(),
                r.object_name.clone().unwrap_or_else(|| "-".into()),
                record_id(r).unwrap_or_else(|| "-".into()),
                r.proposer.id.clone(),
                format_timestamp(r.created_at),
            ]
            .map(|cell| line_safe(&cell))
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cols: &[String]| {
        let mut l = String::new();
        for (i, (c, w)) in cols.iter().zip(widths).enumerate() {
            if i + 1 == cols.len() {
                l.push_str(c);
            } else {
                l.push_str(&pad(c, w));
                l.push_str("  ");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&header.map(str::to_owned));
    for row in &cells {
        line(row);
    }
    let mut counts: Vec<(State, usize)> = Vec::new();
    for r in &rows {
        match counts.iter_mut().find(|(s, _)| *s == r.state) {
            Some((_, n)) => *n += 1,
            None => counts.push((r.state, 1)),
        }
    }
    counts.sort();
    let summary: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let _ = writeln!(
        out,
        "{} pending action{} ({})",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        summary.join(", ")
    );
    Ok(out)
}

fn record_id(row: &PendingAction) -> Option<String> {
    match row.input.get("recordId") {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    }
}

fn show(row: &PendingAction) -> String {
    let mut out = format!("pending action {}\n", line_safe(&row.id));
    // Every value is written on its field's line, escaped: a stored value
    // cannot start a line of its own.
    let mut field = |name: &str, value: String| {
        let _ = writeln!(out, "  {:<19}{}", format!("{name}:"), line_safe(&value));
    };
    let since = format!(
        "{} (since {}{})",
        row.state,
        format_timestamp(row.state_at),
        row.state_by
            .as_deref()
            .map(|b| format!(", by {b}"))
            .unwrap_or_default()
    );
    field("state", since);
    let on = row
        .object_name
        .as_deref()
        .map(|o| match record_id(row) {
            Some(id) => format!(" on {o} {id}"),
            None => format!(" on {o}"),
        })
        .unwrap_or_default();
    field(
        "action",
        format!("{} (tool {}){on}", row.action_name, row.tool_name),
    );
    let who = match &row.proposer.name {
        Some(name) => format!("{} ({name})", row.proposer.id),
        None => row.proposer.id.clone(),
    };
    field(
        "proposed",
        format!("by {who} at {}", format_timestamp(row.created_at)),
    );
    if let Some(at) = row.expires_at {
        field("deadline", format_timestamp(at));
    }
    let mut origin = Vec::new();
    for (label, value) in [
        ("conversation", &row.conversation_id),
        ("message", &row.message_id),
        ("tool call", &row.tool_call_id),
        ("trace", &row.trace_id),
    ] {
        if let Some(v) = value {
            origin.push(format!("{label} {v}"));
        }
    }
    if !origin.is_empty() {
        field("from", origin.join(", "));
    }
    if let (Some(by), Some(at)) = (&row.decided_by, row.decided_at) {
        field("decided", format!("by {by} at {}", format_timestamp(at)));
    }
    if let Some(reason) = &row.reason {
        field("reason", reason.clone());
    }
    if let (Some(by), Some(at)) = (&row.claimed_by, row.claimed_at) {
        let lease = row
            .lease_until
            .map(|l| format!(", lease until {}", format_timestamp(l)))
            .unwrap_or_default();
        field(
            "claimed",
            format!("by {by} at {}{lease}", format_timestamp(at)),
        );
    }
    if let Some(at) = row.finished_at {
        field("finished", format_timestamp(at));
    }
    // Errors and results are stored as the host's clients reported them;
    // the runtime redacts the URLs in them, and so does this view, for
    // rows another writer (or an older version) left.
    if let Some(error) = &row.error {
        field("error", redact::text(error).into_owned());
    }
    field(
        "executable sha256",
        match &row.executable_sha256 {
            Some(digest) => digest.clone(),
            None => "none: queued before definitions were bound, so it will not run; propose it \
                     again"
                .to_owned(),
        },
    );
    field("input sha256", row.input_sha256.clone());
    out.push_str("  input:\n");
    let input = serde_json::to_string_pretty(&row.input).unwrap_or_default();
    for l in input.lines() {
        let _ = writeln!(out, "    {}", line_safe(l));
    }
    if let Some(edited) = &row.approved_input {
        out.push_str("  approved input (edited by the approver):\n");
        let edited = serde_json::to_string_pretty(edited).unwrap_or_default();
        for l in edited.lines() {
            let _ = writeln!(out, "    {}", line_safe(l));
        }
    }
    if let Some(result) = &row.result {
        out.push_str("  result:\n");
        let result = serde_json::to_string_pretty(result).unwrap_or_default();
        for l in result.lines() {
            let _ = writeln!(out, "    {}", line_safe(&redact::text(l)));
        }
    }
    out
}

fn approve(
    queue: &ApprovalQueue,
    id: &str,
    by: &str,
    input_sha256: Option<&str>,
    json: bool,
) -> Result<String, ApprovalError> {
    let hash = match input_sha256 {
        Some(h) => h.trim().to_ascii_lowercase(),
        None => queue.get(id)?.input_sha256,
    };
    let row = queue.approve(id, by, &hash)?;
    if json {
        return Ok(to_json(&row));
    }
    Ok(format!(
        "approved {} by {} (action {}, input sha256 {}); the host that registers the tool executes \
         it on its next pass\n",
        line_safe(&row.id),
        line_safe(by),
        line_safe(&row.action_name),
        line_safe(&row.input_sha256)
    ))
}

fn expire(
    queue: &ApprovalQueue,
    older_than: Duration,
    by: &str,
    json: bool,
) -> Result<String, ApprovalError> {
    let expired = queue.expire_older_than(older_than, by)?;
    let in_doubt = queue.sweep_expired_leases()?;
    let ids = |rows: &[PendingAction]| rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    if json {
        return Ok(pretty(
            &json!({"expired": ids(&expired), "inDoubt": ids(&in_doubt)}),
        ));
    }
    let mut out = format!(
        "expired {} pending action{} older than {}",
        expired.len(),
        if expired.len() == 1 { "" } else { "s" },
        human_duration(older_than)
    );
    if !expired.is_empty() {
        let _ = write!(out, ": {}", line_safe(&ids(&expired).join(", ")));
    }
    out.push('\n');
    if !in_doubt.is_empty() {
        let _ = writeln!(
            out,
            "{} claim{} ran out of lease and {} now in_doubt (check the target system, then `resolve`): {}",
            in_doubt.len(),
            if in_doubt.len() == 1 { "" } else { "s" },
            if in_doubt.len() == 1 { "is" } else { "are" },
            line_safe(&ids(&in_doubt).join(", "))
        );
    }
    Ok(out)
}

fn human_duration(d: Duration) -> String {
    let mut secs = d.as_secs();
    if secs == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] {
        if secs >= size {
            let _ = write!(out, "{}{unit}", secs / size);
            secs %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_and_sums() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2w"), Ok(Duration::from_secs(1_209_600)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        for bad in ["", "24", "h", "3x", "1.5h", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(
            parse_duration("1.5h")
                .unwrap_err()
                .contains("1h30m, not 1.5h")
        );
        assert_eq!(human_duration(Duration::from_secs(5400)), "1h30m");
        assert_eq!(human_duration(Duration::from_secs(86_401)), "1d1s");
    }

    #[test]
    fn values_inside_a_line_stay_on_it() {
        assert_eq!(line_safe("a\tb\nc"), "a\\u0009b\\u000ac");
        assert_eq!(line_safe("x\r\u{85}\u{2028}y"), "x\\u000d\\u0085\\u2028y");
    }

    #[test]
    fn terminal_output_escapes_what_a_terminal_acts_on() {
        assert_eq!(terminal_safe("a\tb\nc"), "a\tb\nc");
        assert_eq!(terminal_safe("x\u{1b}[2Jy"), "x\\u001b[2Jy");
        assert_eq!(terminal_safe("\u{9b}31m"), "\\u009b31m");
        assert_eq!(terminal_safe("abc\u{202e}fed"), "abc\\u202efed");
        assert_eq!(terminal_safe("😀 é"), "😀 é");
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(pad(&"x".repeat(70_000), 2).len(), 70_000);
    }
}
