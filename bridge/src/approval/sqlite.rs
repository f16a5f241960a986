//! The embedded default [`ApprovalStore`]: one SQLite file.
//!
//! The file keeps a rollback journal (`journal_mode=DELETE`) with
//! `synchronous=EXTRA` (a committed decision survives power loss, the
//! journal's removal included), every write is a `BEGIN IMMEDIATE`
//! transaction (writers queue on the file lock instead of failing
//! half-way), and a busy timeout lets many threads and processes share the
//! file. The schema is versioned with `PRAGMA user_version` and the file is
//! marked as an approval queue with `PRAGMA application_id`. Triggers
//! refuse any change to a terminal row, any state change the state machine
//! does not have, and any change to what was proposed, whatever code
//! issues it.
//!
//! Not WAL: a reader of a WAL file must create its `-wal` and `-shm` files
//! when no writer has them open, so a read-only listing by another user
//! would leave files the owner's host then cannot write. A rollback-journal
//! file is read under a shared lock on the file itself, creating nothing.
//! [`SqliteStore::open_read_only`] (what `approvals list` and `show` use)
//! opens it `SQLITE_OPEN_READONLY`, sets no pragma and migrates nothing.
//!
//! # Schema versions
//!
//! - 1 (objectstack-bridge 0.1): WAL mode; proposals deduplicated per
//!   (conversation, tool call); no executable digest.
//! - 2: adds `executable_sha256`, re-keys `dedup_key` as (conversation,
//!   tool call, tool name, proposer), guards both with the immutability
//!   trigger, and leaves WAL mode.
//! - 3: adds `approved_input` (approve with edits; set only by the
//!   `pending -> approved` transition, a trigger refuses any other change)
//!   and `expires_at` (the deadline, immutable like what was proposed).
//!
//! Indexes come without a version (they change no reader): every write
//! open adds the ones missing, so a file an older build wrote gains them
//! and an older build still opens the file.
//!
//! A file is upgraded by the first *write* open (the host, or an
//! `approvals` command that decides), in one transaction; a read-only open
//! reads every version as it is. Rows from version 1 keep
//! `executable_sha256` empty, and the executor refuses them; rows from
//! versions 1 and 2 have no deadline (a queue with a TTL expires them by
//! age).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Row, TransactionBehavior};
use serde_json::{Map, Value};

use super::store::{ApprovalStore, Cas, ListFilter, ListOrder, StoreError, states_sql};
use super::{PendingAction, State};
use crate::actor::Actor;

/// `PRAGMA application_id` of an approval queue file ("OSAQ").
const APPLICATION_ID: i64 = 0x4F53_4151;

/// The schema version this build writes; it reads this one and version 1.
const SCHEMA_VERSION: i64 = 3;

const TABLE: &str = "
CREATE TABLE pending_actions (
    id              TEXT PRIMARY KEY NOT NULL,
    dedup_key       TEXT UNIQUE,
    tool_name       TEXT NOT NULL,
    action_name     TEXT NOT NULL,
    object_name     TEXT,
    input           TEXT NOT NULL,
    input_sha256    TEXT NOT NULL,
    conversation_id TEXT,
    message_id      TEXT,
    tool_call_id    TEXT,
    trace_id        TEXT,
    proposer        TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'expired',
                        'cancelled', 'executing', 'executed', 'failed', 'in_doubt')),
    version         INTEGER NOT NULL,
    state_by        TEXT,
    state_at        INTEGER NOT NULL,
    decided_by      TEXT,
    decided_at      INTEGER,
    reason          TEXT,
    approved_sha256 TEXT,
    claimed_by      TEXT,
    claimed_at      INTEGER,
    lease_until     INTEGER,
    result          TEXT,
    error           TEXT,
    finished_at     INTEGER,
    executable_sha256 TEXT,
    approved_input  TEXT,
    expires_at      INTEGER
);
CREATE INDEX pending_actions_by_state ON pending_actions (state, created_at, id);
";

/// Indexes that change no reader, so they come without a schema version:
/// every write open adds the missing ones (a file an older build wrote,
/// or one upgraded from an older version). They let a listing in an
/// order stop after its limit instead of sorting the whole queue:
/// `by_change` serves a history (the most recently changed rows first),
/// `by_creation` the newest rows first, and `by_proposer` one proposer's
/// newest (the model's lookup), over the very expression
/// [`list_sql`] filters by, so a caller with few proposals does not walk
/// everyone's.
const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS pending_actions_by_change ON pending_actions (state_at, id);
CREATE INDEX IF NOT EXISTS pending_actions_by_creation ON pending_actions (created_at, id);
CREATE INDEX IF NOT EXISTS pending_actions_by_proposer ON pending_actions
    ((CASE WHEN json_valid(proposer) THEN json_extract(proposer, '$.id') END), created_at, id);
";

/// The guards of schema version 3 (versions 1 and 2 had the first three,
/// with fewer columns immutable).
const TRIGGERS: &str = "
CREATE TRIGGER pending_actions_terminal_is_final
BEFORE UPDATE ON pending_actions
WHEN OLD.state IN ('rejected', 'expired', 'cancelled', 'executed', 'failed')
BEGIN
    SELECT RAISE(ABORT, 'a pending action in a terminal state never changes');
END;
CREATE TRIGGER pending_actions_transitions
BEFORE UPDATE OF state ON pending_actions
WHEN NOT (
       (OLD.state = 'pending' AND NEW.state IN ('approved', 'rejected', 'expired', 'cancelled'))
    OR (OLD.state = 'approved' AND NEW.state = 'executing')
    OR (OLD.state = 'executing' AND NEW.state IN ('executed', 'failed', 'in_doubt'))
    OR (OLD.state = 'in_doubt' AND NEW.state IN ('in_doubt', 'executed', 'failed'))
)
BEGIN
    SELECT RAISE(ABORT, 'not a transition of the approval state machine');
END;
CREATE TRIGGER pending_actions_input_is_immutable
BEFORE UPDATE OF input, input_sha256, executable_sha256, dedup_key, tool_name, action_name,
    object_name, proposer, created_at, expires_at
ON pending_actions
WHEN NEW.input IS NOT OLD.input OR NEW.input_sha256 IS NOT OLD.input_sha256
  OR NEW.executable_sha256 IS NOT OLD.executable_sha256 OR NEW.dedup_key IS NOT OLD.dedup_key
  OR NEW.tool_name IS NOT OLD.tool_name OR NEW.action_name IS NOT OLD.action_name
  OR NEW.object_name IS NOT OLD.object_name OR NEW.proposer IS NOT OLD.proposer
  OR NEW.created_at IS NOT OLD.created_at OR NEW.expires_at IS NOT OLD.expires_at
BEGIN
    SELECT RAISE(ABORT, 'what was proposed never changes');
END;
CREATE TRIGGER pending_actions_approved_input_once
BEFORE UPDATE OF approved_input ON pending_actions
WHEN NEW.approved_input IS NOT OLD.approved_input
  AND NOT (OLD.state = 'pending' AND NEW.state = 'approved')
BEGIN
    SELECT RAISE(ABORT, 'the approved input is set by the approval and never changes');
END;
";

/// Version 1 to 2, after the old triggers are dropped and before the
/// dedup keys are recomputed and [`TRIGGERS`] created.
const UPGRADE_FROM_1: &str = "
DROP TRIGGER IF EXISTS pending_actions_terminal_is_final;
DROP TRIGGER IF EXISTS pending_actions_transitions;
DROP TRIGGER IF EXISTS pending_actions_input_is_immutable;
ALTER TABLE pending_actions ADD COLUMN executable_sha256 TEXT;
";

/// Version 2 to 3, after the old triggers are dropped and before
/// [`TRIGGERS`] are created.
const UPGRADE_FROM_2: &str = "
DROP TRIGGER IF EXISTS pending_actions_terminal_is_final;
DROP TRIGGER IF EXISTS pending_actions_transitions;
DROP TRIGGER IF EXISTS pending_actions_input_is_immutable;
ALTER TABLE pending_actions ADD COLUMN approved_input TEXT;
ALTER TABLE pending_actions ADD COLUMN expires_at INTEGER;
";

/// The columns a row is read from, in [`decode_row`]'s order.
const COLUMNS: &str = "id, tool_name, action_name, object_name, input, input_sha256, \
    conversation_id, message_id, tool_call_id, trace_id, proposer, created_at, state, version, \
    state_by, state_at, decided_by, decided_at, reason, approved_sha256, claimed_by, claimed_at, \
    lease_until, result, error, finished_at, executable_sha256, approved_input, expires_at";

/// [`COLUMNS`] from a version 2 file, which has no edits or deadlines.
const COLUMNS_V2: &str = "id, tool_name, action_name, object_name, input, input_sha256, \
    conversation_id, message_id, tool_call_id, trace_id, proposer, created_at, state, version, \
    state_by, state_at, decided_by, decided_at, reason, approved_sha256, claimed_by, claimed_at, \
    lease_until, result, error, finished_at, executable_sha256, NULL AS approved_input, \
    NULL AS expires_at";

/// [`COLUMNS`] from a version 1 file, which has no digest either.
const COLUMNS_V1: &str = "id, tool_name, action_name, object_name, input, input_sha256, \
    conversation_id, message_id, tool_call_id, trace_id, proposer, created_at, state, version, \
    state_by, state_at, decided_by, decided_at, reason, approved_sha256, claimed_by, claimed_at, \
    lease_until, result, error, finished_at, NULL AS executable_sha256, NULL AS approved_input, \
    NULL AS expires_at";

/// How to open a queue file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Create the file (and its schema) when it does not exist (ignored
    /// when `read_only`).
    pub create: bool,
    /// How long a writer waits for the file lock before giving up (and a
    /// reader for a commit in progress).
    pub busy_timeout: Duration,
    /// Open for reading only (`SQLITE_OPEN_READONLY`): no pragma is set,
    /// the schema is not migrated, nothing is created beside the file, and
    /// every write ([`ApprovalStore::insert`],
    /// [`ApprovalStore::compare_and_set`]) is refused with
    /// [`StoreError::ReadOnly`].
    pub read_only: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            create: true,
            busy_timeout: Duration::from_secs(30),
            read_only: false,
        }
    }
}

/// An approval queue in one SQLite file.
///
/// One connection per store, behind a mutex; open one store per thread (or
/// share one) and as many processes as you like on the same file.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// The column list rows are read with (it depends on the version of a
    /// file opened read-only).
    columns: &'static str,
    /// Set when the store is read-only.
    read_only: Option<ReadOnly>,
}

/// How a read-only store reads.
#[derive(Debug)]
struct ReadOnly {
    /// Set when a version 1 file (WAL mode) with no `-wal` file is read as
    /// an immutable snapshot: what the file looked like when it was
    /// opened, so that every read can check that no writer has touched it
    /// since.
    snapshot: Option<FileStamp>,
}

/// Enough of a file to tell that it was written: its size, its
/// modification time and its 100-byte header (which holds the change
/// counter a rollback-journal commit increments, the page count and the
/// schema cookie).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    header: Vec<u8>,
}

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        use std::io::Read;
        let mut file = std::fs::File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        let mut header = Vec::with_capacity(100);
        file.by_ref().take(100).read_to_end(&mut header).ok()?;
        Some(FileStamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            header,
        })
    }
}

impl SqliteStore {
    /// Opens the queue at `path`, creating it when missing.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, &SqliteOptions::default())
    }

    /// Opens an existing queue; a missing file is an error.
    pub fn open_existing(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(
            path,
            &SqliteOptions {
                create: false,
                ..SqliteOptions::default()
            },
        )
    }

    /// Opens an existing queue for reading only (see
    /// [`SqliteOptions::read_only`]): for listings by anyone who can read
    /// the file, while hosts write it.
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(
            path,
            &SqliteOptions {
                create: false,
                read_only: true,
                ..SqliteOptions::default()
            },
        )
    }

    /// Opens the queue at `path` with `options`.
    pub fn open_with(path: &Path, options: &SqliteOptions) -> Result<Self, StoreError> {
        let shown = path.display().to_string();
        if (options.read_only || !options.create) && !path.exists() {
            return Err(StoreError::Missing { path: shown });
        }
        if path.is_dir() {
            return Err(StoreError::NotAQueue {
                path: shown,
                detail: "it is a directory; name the queue file inside it".to_owned(),
            });
        }
        if options.read_only {
            return Self::open_reader(path, &shown, options);
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if options.create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let op = "opening the queue file";
        let mut conn =
            Connection::open_with_flags(path, flags).map_err(|e| open_error(&shown, op, &e))?;
        conn.busy_timeout(options.busy_timeout)
            .map_err(|e| backend(op, &e))?;
        // Refuse a file that is not ours before writing anything to it:
        // changing the journal mode rewrites the header of any SQLite file.
        check_identity(&conn, &shown, options.create)?;
        leave_wal(&conn, &shown, options.busy_timeout)?;
        conn.pragma_update(None, "synchronous", "EXTRA")
            .map_err(|e| backend(op, &e))?;
        migrate(&mut conn, &shown, options.create)?;
        Ok(SqliteStore {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            columns: COLUMNS,
            read_only: None,
        })
    }

    /// The read-only open: no pragma written, no migration, nothing
    /// created beside the file.
    fn open_reader(path: &Path, shown: &str, options: &SqliteOptions) -> Result<Self, StoreError> {
        let op = "opening the queue file for reading";
        let needs_writer = |detail: &str| StoreError::NeedsWriter {
            path: shown.to_owned(),
            detail: detail.to_owned(),
        };
        let sidecar = |suffix: &str| {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        };
        let mut snapshot = None;
        let conn = if is_wal_file(path) && !sidecar("-wal").exists() {
            // A version 1 file in WAL mode that no process has open: all of
            // it is in the file, and reading it through WAL would create
            // the -wal and -shm files. Read it as an immutable snapshot,
            // and check before every answer that nobody wrote it since.
            let Some(uri) = file_uri(path) else {
                return Err(needs_writer(
                    "it is in WAL mode (written by objectstack-bridge 0.1) and its name cannot be \
                     written as an SQLite URI; open it once for writing (start the host, or run \
                     an `approvals` command that decides) to convert it",
                ));
            };
            snapshot = Some(FileStamp::of(path).ok_or_else(|| StoreError::Backend {
                operation: op,
                message: format!("cannot read {shown}: check that it is readable"),
            })?);
            Connection::open_with_flags(
                format!("{uri}?mode=ro&immutable=1"),
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_URI
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|e| read_error(shown, op, &e))?
        } else if is_wal_file(path) && !sidecar("-shm").exists() {
            return Err(needs_writer(
                "it is in WAL mode and its -wal file is there without its -shm file (a writer \
                 stopped abruptly); open it once for writing (start the host, or run an \
                 `approvals` command that decides) to recover it",
            ));
        } else {
            Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|e| read_error(shown, op, &e))?
        };
        conn.busy_timeout(options.busy_timeout)
            .map_err(|e| backend(op, &e))?;
        // The first read: a file that is not a database, or a journal left
        // by a writer that stopped, shows here.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(|e| read_error(shown, op, &e))?;
        check_identity(&conn, shown, false)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| read_error(shown, op, &e))?;
        let columns = match version {
            SCHEMA_VERSION => COLUMNS,
            2 => COLUMNS_V2,
            1 => COLUMNS_V1,
            v if v > SCHEMA_VERSION => {
                return Err(StoreError::SchemaTooNew {
                    path: shown.to_owned(),
                    found: v,
                    supported: SCHEMA_VERSION,
                });
            }
            v => {
                return Err(StoreError::NotAQueue {
                    path: shown.to_owned(),
                    detail: format!(
                        "it has schema version {v}, which no version of this library wrote"
                    ),
                });
            }
        };
        let store = SqliteStore {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            columns,
            read_only: Some(ReadOnly { snapshot }),
        };
        store.check_snapshot("opening the queue file for reading")?;
        Ok(store)
    }

    /// For a store reading an immutable snapshot: that the file is still
    /// what it was when opened, and no writer has opened it since.
    fn check_snapshot(&self, operation: &'static str) -> Result<(), StoreError> {
        let Some(ReadOnly {
            snapshot: Some(stamp),
        }) = &self.read_only
        else {
            return Ok(());
        };
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        if FileStamp::of(&self.path).as_ref() != Some(stamp) || Path::new(&wal).exists() {
            return Err(StoreError::Backend {
                operation,
                message: format!(
                    "{} changed while it was being read (a host opened it); run the command again",
                    self.path.display()
                ),
            });
        }
        Ok(())
    }

    /// `Err` when this store is read-only.
    fn writable(&self, operation: &'static str) -> Result<(), StoreError> {
        match self.read_only {
            Some(_) => Err(StoreError::ReadOnly { operation }),
            None => Ok(()),
        }
    }

    /// A read's error, with a hot journal (a writer that stopped mid-way)
    /// explained for a read-only store.
    fn read_failed(&self, operation: &'static str, e: &rusqlite::Error) -> StoreError {
        if self.read_only.is_some() && e.sqlite_error_code() == Some(ErrorCode::ReadOnly) {
            return StoreError::NeedsWriter {
                path: self.path.display().to_string(),
                detail: HOT_JOURNAL.to_owned(),
            };
        }
        backend(operation, e)
    }

    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the store was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only.is_some()
    }

    /// Runs SQLite's `PRAGMA integrity_check`; `Ok(())` when the file is
    /// sound, else the problems it reports.
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        let conn = self.lock();
        let mut problems = Vec::new();
        conn.pragma_query(None, "integrity_check", |row| {
            problems.push(row.get::<_, String>(0)?);
            Ok(())
        })
        .map_err(|e| backend("checking integrity", &e))?;
        if problems.len() == 1 && problems.first().map(String::as_str) == Some("ok") {
            Ok(())
        } else {
            Err(StoreError::Backend {
                operation: "checking integrity",
                message: problems.join("; "),
            })
        }
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // SQLite rolls back an unfinished transaction when its guard drops,
        // so a poisoned connection is still consistent.
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Read-only check that the file is a queue (or, when creating, an empty
/// database), so that a refused file is left exactly as it was.
fn check_identity(conn: &Connection, path: &str, create: bool) -> Result<(), StoreError> {
    let op = "opening the queue file";
    let app_id: i64 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(|e| open_error(path, op, &e))?;
    if app_id == APPLICATION_ID {
        return Ok(());
    }
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(|e| open_error(path, op, &e))?;
    if app_id != 0 || tables > 0 {
        return Err(StoreError::NotAQueue {
            path: path.to_owned(),
            detail: format!(
                "it is an SQLite database of something else (application_id {app_id}, {tables} schema objects)"
            ),
        });
    }
    if !create {
        return Err(StoreError::NotAQueue {
            path: path.to_owned(),
            detail: "the file is empty".to_owned(),
        });
    }
    Ok(())
}

/// Why a read-only store cannot read a file a writer left mid-transaction.
const HOT_JOURNAL: &str = "a writer stopped in the middle of a transaction and left its journal; \
    the next write (the host, or an `approvals` command that decides) rolls it back";

/// Takes a file out of WAL mode (version 1 files ran in it). Only possible
/// while no other connection has the file open; otherwise it stays in WAL
/// mode, which is as safe, until a later open converts it.
fn leave_wal(conn: &Connection, path: &str, busy_timeout: Duration) -> Result<(), StoreError> {
    let op = "opening the queue file";
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .map_err(|e| open_error(path, op, &e))?;
    if mode.eq_ignore_ascii_case("delete") {
        return Ok(());
    }
    // Do not wait for other connections to go away: try once.
    conn.busy_timeout(Duration::ZERO)
        .map_err(|e| backend(op, &e))?;
    let switched = conn.pragma_update_and_check(None, "journal_mode", "DELETE", |row| {
        row.get::<_, String>(0)
    });
    conn.busy_timeout(busy_timeout)
        .map_err(|e| backend(op, &e))?;
    match switched {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(open_error(path, op, &e)),
    }
}

/// Whether the file's header says WAL mode (bytes 18 and 19 are 2).
fn is_wal_file(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok()
        && header.starts_with(b"SQLite format 3\0")
        && (header[18] == 2 || header[19] == 2)
}

/// `path` as an SQLite `file:` URI (without a query), or `None` when it is
/// not UTF-8.
fn file_uri(path: &Path) -> Option<String> {
    let text = path.to_str()?;
    let mut uri = String::from("file:");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'~') {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    Some(uri)
}

fn read_error(path: &str, op: &'static str, e: &rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotAQueue {
            path: path.to_owned(),
            detail: "it is not an SQLite database".to_owned(),
        },
        Some(ErrorCode::ReadOnly) => StoreError::NeedsWriter {
            path: path.to_owned(),
            detail: HOT_JOURNAL.to_owned(),
        },
        Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => StoreError::Backend {
            operation: op,
            message: format!("{e}: check that {path} is readable"),
        },
        _ => backend(op, e),
    }
}

/// The `SELECT` of [`ApprovalStore::list`] over `columns`, and its
/// arguments.
fn list_sql(columns: &str, filter: &ListFilter) -> (String, Vec<rusqlite::types::Value>) {
    let mut sql = format!("SELECT {} FROM pending_actions WHERE 1 = 1", columns);
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    let mut push = |clause: &str, value: rusqlite::types::Value| {
        args.push(value);
        sql.push_str(&format!(" AND {clause} ?{}", args.len()));
    };
    if let Some(state) = filter.state {
        push("state =", state.as_str().to_owned().into());
    }
    if let Some(t) = filter.created_before {
        push("created_at <", t.into());
    }
    if let Some(t) = filter.lease_expired_at {
        push("lease_until <=", t.into());
    }
    if let Some(tool) = &filter.tool_name {
        push("tool_name =", tool.clone().into());
    }
    if let Some(c) = &filter.conversation_id {
        push("conversation_id =", c.clone().into());
    }
    if let Some(p) = &filter.proposer_id {
        // A damaged proposer is not JSON, and `json_extract` would fail
        // the whole listing on it; such a row passes no proposer filter.
        push(
            "CASE WHEN json_valid(proposer) THEN json_extract(proposer, '$.id') END =",
            p.clone().into(),
        );
    }
    if let Some(cursor) = &filter.after {
        args.push(cursor.at.into());
        args.push(cursor.id.clone().into());
        let (at, id) = (args.len() - 1, args.len());
        sql.push_str(" AND ");
        sql.push_str(&filter.order.after_sql(&format!("?{at}"), &format!("?{id}")));
    }
    if let Some(terminal) = filter.terminal {
        // In another order than the oldest first, the order's index
        // should drive the scan (stopping at the limit) rather than
        // the state index and a sort of every match: `+state` keeps
        // SQLite's planner, which has no statistics, off the latter.
        let column = match filter.order {
            ListOrder::OldestFirst => "state",
            ListOrder::NewestFirst | ListOrder::RecentlyChanged => "+state",
        };
        sql.push_str(&format!(" AND {column} IN ({})", states_sql(terminal)));
    }
    sql.push_str(" ORDER BY ");
    sql.push_str(filter.order.sql());
    // SQLite takes an OFFSET only after a LIMIT; -1 is none.
    if filter.limit.is_some() || filter.offset.is_some() {
        let limit = filter.limit.map_or(-1, |l| to_i64(l as u64));
        sql.push_str(&format!(" LIMIT {limit}"));
    }
    if let Some(offset) = filter.offset {
        sql.push_str(&format!(" OFFSET {}", to_i64(offset as u64)));
    }
    (sql, args)
}

fn migrate(conn: &mut Connection, path: &str, create: bool) -> Result<(), StoreError> {
    let op = "preparing the queue schema";
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| open_error(path, op, &e))?;
    let app_id: i64 = tx
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(|e| open_error(path, op, &e))?;
    let version: i64 = tx
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| open_error(path, op, &e))?;
    if app_id == APPLICATION_ID {
        if version > SCHEMA_VERSION {
            return Err(StoreError::SchemaTooNew {
                path: path.to_owned(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version == SCHEMA_VERSION {
            tx.execute_batch(INDEXES).map_err(|e| backend(op, &e))?;
            return tx.commit().map_err(|e| backend(op, &e));
        }
        if version == 1 || version == 2 {
            if version == 1 {
                upgrade_from_1(&tx)?;
            }
            upgrade_from_2(&tx)?;
            tx.execute_batch(INDEXES).map_err(|e| backend(op, &e))?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(|e| backend(op, &e))?;
            return tx.commit().map_err(|e| backend(op, &e));
        }
        return Err(StoreError::NotAQueue {
            path: path.to_owned(),
            detail: format!(
                "it has schema version {version}, which no version of this library wrote"
            ),
        });
    }
    let tables: i64 = tx
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(|e| open_error(path, op, &e))?;
    if app_id != APPLICATION_ID && (app_id != 0 || tables > 0) {
        return Err(StoreError::NotAQueue {
            path: path.to_owned(),
            detail: format!(
                "it is an SQLite database of something else (application_id {app_id}, {tables} schema objects)"
            ),
        });
    }
    if !create {
        return Err(StoreError::NotAQueue {
            path: path.to_owned(),
            detail: "the file is empty".to_owned(),
        });
    }
    tx.execute_batch(TABLE).map_err(|e| backend(op, &e))?;
    tx.execute_batch(INDEXES).map_err(|e| backend(op, &e))?;
    tx.execute_batch(TRIGGERS).map_err(|e| backend(op, &e))?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(|e| backend(op, &e))?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(|e| backend(op, &e))?;
    tx.commit().map_err(|e| backend(op, &e))
}

/// Schema version 2 to 3, inside the migration's transaction: the
/// approved-input and deadline columns (empty for the rows already there)
/// and the version 3 guards.
fn upgrade_from_2(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    let op = "upgrading the queue schema from version 2";
    tx.execute_batch(UPGRADE_FROM_2)
        .map_err(|e| backend(op, &e))?;
    tx.execute_batch(TRIGGERS).map_err(|e| backend(op, &e))
}

/// Schema version 1 to 2, inside the migration's transaction: the digest
/// column (left empty: nothing recorded what version 1 rows were approved
/// for), the dedup keys recomputed with the tool name and the proposer.
/// The guards come back with [`upgrade_from_2`].
fn upgrade_from_1(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    let op = "upgrading the queue schema from version 1";
    tx.execute_batch(UPGRADE_FROM_1)
        .map_err(|e| backend(op, &e))?;
    let mut keys: Vec<(String, Option<String>)> = Vec::new();
    {
        let mut stmt = tx
            .prepare(
                "SELECT id, conversation_id, tool_call_id, tool_name, proposer FROM pending_actions",
            )
            .map_err(|e| backend(op, &e))?;
        let mut rows = stmt.query([]).map_err(|e| backend(op, &e))?;
        while let Some(row) = rows.next().map_err(|e| backend(op, &e))? {
            // A row whose columns cannot be read gets no key (it can no
            // longer be matched by a repeated proposal); it is reported as
            // unreadable when listed, as before.
            let Ok(id) = row.get::<_, String>(0) else {
                continue;
            };
            let conversation = row.get::<_, Option<String>>(1).ok().flatten();
            let tool_call = row.get::<_, Option<String>>(2).ok().flatten();
            let tool = row.get::<_, String>(3).ok();
            let proposer = row
                .get::<_, String>(4)
                .ok()
                .and_then(|p| serde_json::from_str::<Actor>(&p).ok());
            let key = match (tool, proposer) {
                (Some(tool), Some(proposer)) => super::id::dedup_key(
                    conversation.as_deref(),
                    tool_call.as_deref(),
                    &tool,
                    &proposer.id,
                ),
                _ => None,
            };
            keys.push((id, key));
        }
    }
    // Clear every key first, so that no new key ever meets an old one.
    tx.execute("UPDATE pending_actions SET dedup_key = NULL", [])
        .map_err(|e| backend(op, &e))?;
    for (id, key) in keys {
        if key.is_some() {
            tx.execute(
                "UPDATE pending_actions SET dedup_key = ?1 WHERE id = ?2",
                rusqlite::params![key, id],
            )
            .map_err(|e| backend(op, &e))?;
        }
    }
    Ok(())
}

fn open_error(path: &str, op: &'static str, e: &rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotAQueue {
            path: path.to_owned(),
            detail: "it is not an SQLite database".to_owned(),
        },
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly) => StoreError::Backend {
            operation: op,
            message: format!(
                "{e}: check that {path} and its directory are writable (a write keeps its \
                 journal beside the file while it runs)"
            ),
        },
        _ => backend(op, e),
    }
}

fn backend(operation: &'static str, e: &rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy { operation },
        _ => StoreError::Backend {
            operation,
            message: e.to_string(),
        },
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn json_text(value: &impl serde::Serialize, id: &str) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::CorruptRow {
        id: id.to_owned(),
        detail: format!("cannot serialise: {e}"),
    })
}

/// Reads one row. Only an unreadable `id` fails the statement; anything
/// else wrong with the row (a column of the wrong type, JSON that does not
/// parse, an unknown state) is that row's [`StoreError::CorruptRow`], so
/// a listing can report it in its place and go on.
fn read_row(row: &Row<'_>) -> rusqlite::Result<Result<PendingAction, StoreError>> {
    let id: String = row.get(0)?;
    Ok(
        decode_row(row, &id).map_err(|detail| StoreError::CorruptRow {
            id: id.clone(),
            detail,
        }),
    )
}

/// The columns of a row whose id is `id`, or what is wrong with them.
fn decode_row(row: &Row<'_>, id: &str) -> Result<PendingAction, String> {
    fn col<T: rusqlite::types::FromSql>(row: &Row<'_>, i: usize) -> Result<T, String> {
        row.get(i).map_err(|e| {
            let name = COLUMNS.split(',').nth(i).map_or("?", str::trim);
            format!("its `{name}` column is unreadable: {e}")
        })
    }
    let input: String = col(row, 4)?;
    let input = serde_json::from_str::<Map<String, Value>>(&input)
        .map_err(|e| format!("its input is not a JSON object: {e}"))?;
    let proposer: String = col(row, 10)?;
    let proposer = serde_json::from_str::<Actor>(&proposer)
        .map_err(|e| format!("its proposer is unreadable: {e}"))?;
    let state: String = col(row, 12)?;
    let state = state.parse::<State>().map_err(|e| e.to_string())?;
    let version: i64 = col(row, 13)?;
    let result: Option<String> = col(row, 23)?;
    let result = result
        .map(|r| serde_json::from_str::<Value>(&r))
        .transpose()
        .map_err(|e| format!("its result is not JSON: {e}"))?;
    let approved_input: Option<String> = col(row, 27)?;
    let approved_input = approved_input
        .map(|r| serde_json::from_str::<Map<String, Value>>(&r))
        .transpose()
        .map_err(|e| format!("its approved input is not a JSON object: {e}"))?;
    Ok(PendingAction {
        id: id.to_owned(),
        tool_name: col(row, 1)?,
        action_name: col(row, 2)?,
        object_name: col(row, 3)?,
        input,
        input_sha256: col(row, 5)?,
        conversation_id: col(row, 6)?,
        message_id: col(row, 7)?,
        tool_call_id: col(row, 8)?,
        trace_id: col(row, 9)?,
        proposer,
        created_at: col(row, 11)?,
        state,
        version: u64::try_from(version).unwrap_or(0),
        state_by: col(row, 14)?,
        state_at: col(row, 15)?,
        decided_by: col(row, 16)?,
        decided_at: col(row, 17)?,
        reason: col(row, 18)?,
        approved_sha256: col(row, 19)?,
        claimed_by: col(row, 20)?,
        claimed_at: col(row, 21)?,
        lease_until: col(row, 22)?,
        result,
        error: col(row, 24)?,
        finished_at: col(row, 25)?,
        executable_sha256: col(row, 26)?,
        approved_input,
        expires_at: col(row, 28)?,
    })
}

fn select_one(
    conn: &Connection,
    columns: &str,
    id: &str,
) -> rusqlite::Result<Option<Result<PendingAction, StoreError>>> {
    conn.query_row(
        &format!("SELECT {columns} FROM pending_actions WHERE id = ?1"),
        [id],
        read_row,
    )
    .optional()
}

impl ApprovalStore for SqliteStore {
    fn insert(&self, row: &PendingAction) -> Result<(PendingAction, bool), StoreError> {
        let op = "queueing a pending action";
        self.writable(op)?;
        let input = json_text(&row.input, &row.id)?;
        let proposer = json_text(&row.proposer, &row.id)?;
        let result = row
            .result
            .as_ref()
            .map(|r| json_text(r, &row.id))
            .transpose()?;
        let approved_input = row
            .approved_input
            .as_ref()
            .map(|r| json_text(r, &row.id))
            .transpose()?;
        let dedup = row.dedup_key();
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| backend(op, &e))?;
        if let Some(key) = &dedup {
            let existing = tx
                .query_row(
                    &format!("SELECT {COLUMNS} FROM pending_actions WHERE dedup_key = ?1"),
                    [key],
                    read_row,
                )
                .optional()
                .map_err(|e| backend(op, &e))?;
            if let Some(existing) = existing {
                return Ok((existing?, false));
            }
        }
        tx.execute(
            &format!(
                "INSERT INTO pending_actions (dedup_key, {COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
                 ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, \
                 ?24, ?25, ?26, ?27, ?28, ?29, ?30)"
            ),
            rusqlite::params![
                dedup,
                row.id,
                row.tool_name,
                row.action_name,
                row.object_name,
                input,
                row.input_sha256,
                row.conversation_id,
                row.message_id,
                row.tool_call_id,
                row.trace_id,
                proposer,
                row.created_at,
                row.state.as_str(),
                to_i64(row.version),
                row.state_by,
                row.state_at,
                row.decided_by,
                row.decided_at,
                row.reason,
                row.approved_sha256,
                row.claimed_by,
                row.claimed_at,
                row.lease_until,
                result,
                row.error,
                row.finished_at,
                row.executable_sha256,
                approved_input,
                row.expires_at,
            ],
        )
        .map_err(|e| backend(op, &e))?;
        tx.commit().map_err(|e| backend(op, &e))?;
        Ok((row.clone(), true))
    }

    fn get(&self, id: &str) -> Result<Option<PendingAction>, StoreError> {
        let op = "reading a pending action";
        let row = {
            let conn = self.lock();
            select_one(&conn, self.columns, id).map_err(|e| self.read_failed(op, &e))?
        };
        self.check_snapshot(op)?;
        row.transpose()
    }

    fn list(
        &self,
        filter: &ListFilter,
    ) -> Result<Vec<Result<PendingAction, StoreError>>, StoreError> {
        let op = "listing pending actions";
        let (sql, args) = list_sql(self.columns, filter);
        let mut out = Vec::new();
        {
            let conn = self.lock();
            let mut stmt = conn.prepare(&sql).map_err(|e| self.read_failed(op, &e))?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(args), read_row)
                .map_err(|e| self.read_failed(op, &e))?;
            for row in rows {
                out.push(row.map_err(|e| self.read_failed(op, &e))?);
            }
        }
        self.check_snapshot(op)?;
        Ok(out)
    }

    fn compare_and_set(
        &self,
        expected_version: u64,
        next: &PendingAction,
    ) -> Result<Cas, StoreError> {
        let op = "recording a decision";
        self.writable(op)?;
        let result = next
            .result
            .as_ref()
            .map(|r| json_text(r, &next.id))
            .transpose()?;
        let approved_input = next
            .approved_input
            .as_ref()
            .map(|r| json_text(r, &next.id))
            .transpose()?;
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| backend(op, &e))?;
        let changed = update_row(
            &tx,
            expected_version,
            next,
            result.as_deref(),
            approved_input.as_deref(),
        )
        .map_err(|e| backend(op, &e))?;
        let outcome = if changed == 1 {
            Cas::Applied
        } else {
            match select_one(&tx, COLUMNS, &next.id)
                .map_err(|e| backend(op, &e))?
                .transpose()?
            {
                Some(current) => Cas::Conflict(Box::new(current)),
                None => Cas::Missing,
            }
        };
        tx.commit().map_err(|e| backend(op, &e))?;
        Ok(outcome)
    }
    fn claim_next(
        &self,
        tools: &[String],
        claim: &mut dyn FnMut(&PendingAction) -> Option<PendingAction>,
    ) -> Result<Option<PendingAction>, StoreError> {
        // One write transaction: claimers queue on the file lock, so no
        // two see the same approved row, and nobody loses a race.
        let op = "claiming an approved action";
        self.writable(op)?;
        let tools = json_text(&tools, "")?;
        let mut passed: Vec<String> = Vec::new();
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| backend(op, &e))?;
        let claimed = loop {
            let skip = json_text(&passed, "")?;
            let candidate = tx
                .query_row(
                    &format!(
                        "SELECT {COLUMNS} FROM pending_actions WHERE state = 'approved' \
                         AND tool_name IN (SELECT value FROM json_each(?1)) \
                         AND id NOT IN (SELECT value FROM json_each(?2)) \
                         ORDER BY created_at, id LIMIT 1"
                    ),
                    [&tools, &skip],
                    read_row,
                )
                .optional()
                .map_err(|e| backend(op, &e))?;
            let row = match candidate {
                None => break None,
                Some(Err(StoreError::CorruptRow { id, .. })) => {
                    passed.push(id);
                    continue;
                }
                Some(Err(e)) => return Err(e),
                Some(Ok(row)) => row,
            };
            let Some(next) = claim(&row) else {
                passed.push(row.id);
                continue;
            };
            let result = next
                .result
                .as_ref()
                .map(|r| json_text(r, &next.id))
                .transpose()?;
            let approved_input = next
                .approved_input
                .as_ref()
                .map(|r| json_text(r, &next.id))
                .transpose()?;
            let changed = update_row(
                &tx,
                row.version,
                &next,
                result.as_deref(),
                approved_input.as_deref(),
            )
            .map_err(|e| backend(op, &e))?;
            if changed == 1 {
                break Some(next);
            }
            passed.push(row.id);
        };
        tx.commit().map_err(|e| backend(op, &e))?;
        Ok(claimed)
    }
}

/// The compare-and-set write: `next` over the row `next.id` if its version
/// is still `expected`; the number of rows changed (0 or 1).
fn update_row(
    conn: &Connection,
    expected: u64,
    next: &PendingAction,
    result: Option<&str>,
    approved_input: Option<&str>,
) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE pending_actions SET state = ?1, version = ?2, state_by = ?3, state_at = ?4, \
         decided_by = ?5, decided_at = ?6, reason = ?7, approved_sha256 = ?8, \
         claimed_by = ?9, claimed_at = ?10, lease_until = ?11, result = ?12, error = ?13, \
         finished_at = ?14, approved_input = ?17 WHERE id = ?15 AND version = ?16",
        rusqlite::params![
            next.state.as_str(),
            to_i64(next.version),
            next.state_by,
            next.state_at,
            next.decided_by,
            next.decided_at,
            next.reason,
            next.approved_sha256,
            next.claimed_by,
            next.claimed_at,
            next.lease_until,
            result,
            next.error,
            next.finished_at,
            next.id,
            to_i64(expected),
            approved_input,
        ],
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::approval::store::ListOrder;

    /// How SQLite plans the store's own listing for `filter` over a fresh
    /// file's schema (no statistics, as in a real file).
    fn plan(filter: &ListFilter) -> String {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(TABLE).unwrap();
        conn.execute_batch(INDEXES).unwrap();
        let (sql, args) = list_sql(COLUMNS, filter);
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let steps: Vec<String> = stmt
            .query_map(rusqlite::params_from_iter(args), |r| r.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        steps.join("; ")
    }

    #[test]
    fn ordered_limited_listings_walk_an_index_and_stop_at_the_limit() {
        // The inbox's history page.
        let history = plan(&ListFilter {
            terminal: Some(true),
            order: ListOrder::RecentlyChanged,
            offset: Some(100),
            limit: Some(100),
            ..ListFilter::default()
        });
        assert!(history.contains("pending_actions_by_change"), "{history}");
        assert!(!history.contains("TEMP B-TREE"), "{history}");
        // The model's lookup.
        let lookup = plan(&ListFilter {
            proposer_id: Some("osk:abc".into()),
            order: ListOrder::NewestFirst,
            limit: Some(20),
            ..ListFilter::default()
        });
        assert!(lookup.contains("pending_actions_by_proposer"), "{lookup}");
        assert!(!lookup.contains("TEMP B-TREE"), "{lookup}");
        // Its next page, after the last row of the first.
        let next = plan(&ListFilter {
            proposer_id: Some("osk:abc".into()),
            order: ListOrder::NewestFirst,
            after: Some(crate::approval::ListCursor {
                at: 1,
                id: "pa_1".into(),
            }),
            limit: Some(20),
            ..ListFilter::default()
        });
        assert!(next.contains("pending_actions_by_proposer"), "{next}");
        assert!(!next.contains("TEMP B-TREE"), "{next}");
        // A history page deep in the history, after a cursor.
        let deep = plan(&ListFilter {
            terminal: Some(true),
            order: ListOrder::RecentlyChanged,
            after: Some(crate::approval::ListCursor {
                at: 1,
                id: "pa_1".into(),
            }),
            limit: Some(100),
            ..ListFilter::default()
        });
        assert!(deep.contains("pending_actions_by_change"), "{deep}");
        assert!(!deep.contains("TEMP B-TREE"), "{deep}");
        // The rows that may still change: few, through the state index.
        let live = plan(&ListFilter {
            terminal: Some(false),
            ..ListFilter::default()
        });
        assert!(live.contains("pending_actions_by_state"), "{live}");
    }

    #[test]
    fn an_offset_alone_still_gets_a_limit() {
        let (sql, _) = list_sql(
            COLUMNS,
            &ListFilter {
                offset: Some(3),
                ..ListFilter::default()
            },
        );
        assert!(
            sql.ends_with("ORDER BY created_at, id LIMIT -1 OFFSET 3"),
            "{sql}"
        );
    }
}
