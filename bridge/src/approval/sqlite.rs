//! The embedded default [`ApprovalStore`]: one SQLite file.
//!
//! The file runs in WAL mode with `synchronous=FULL` (a committed decision
//! survives power loss), every write is a `BEGIN IMMEDIATE` transaction
//! (writers queue on the file lock instead of failing half-way), and a busy
//! timeout lets many threads and processes share the file. The schema is
//! versioned with `PRAGMA user_version` and the file is marked as an
//! approval queue with `PRAGMA application_id`. Triggers refuse any change
//! to a terminal row and any state change the state machine does not have,
//! whatever code issues it.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Row, TransactionBehavior};
use serde_json::{Map, Value};

use super::store::{ApprovalStore, Cas, ListFilter, StoreError};
use super::{PendingAction, State};
use crate::runtime::Actor;

/// `PRAGMA application_id` of an approval queue file ("OSAQ").
const APPLICATION_ID: i64 = 0x4F53_4151;

/// The schema version this build writes and reads.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
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
    finished_at     INTEGER
);
CREATE INDEX pending_actions_by_state ON pending_actions (state, created_at, id);
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
BEFORE UPDATE OF input, input_sha256, tool_name, action_name, object_name, proposer, created_at
ON pending_actions
WHEN NEW.input IS NOT OLD.input OR NEW.input_sha256 IS NOT OLD.input_sha256
  OR NEW.tool_name IS NOT OLD.tool_name OR NEW.action_name IS NOT OLD.action_name
  OR NEW.object_name IS NOT OLD.object_name OR NEW.proposer IS NOT OLD.proposer
  OR NEW.created_at IS NOT OLD.created_at
BEGIN
    SELECT RAISE(ABORT, 'what was proposed never changes');
END;
";

const COLUMNS: &str = "id, tool_name, action_name, object_name, input, input_sha256, \
    conversation_id, message_id, tool_call_id, trace_id, proposer, created_at, state, version, \
    state_by, state_at, decided_by, decided_at, reason, approved_sha256, claimed_by, claimed_at, \
    lease_until, result, error, finished_at";

/// How to open a queue file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Create the file (and its schema) when it does not exist.
    pub create: bool,
    /// How long a writer waits for the file lock before giving up.
    pub busy_timeout: Duration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            create: true,
            busy_timeout: Duration::from_secs(30),
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

    /// Opens the queue at `path` with `options`.
    pub fn open_with(path: &Path, options: &SqliteOptions) -> Result<Self, StoreError> {
        let shown = path.display().to_string();
        if !options.create && !path.exists() {
            return Err(StoreError::Missing { path: shown });
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if options.create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        if path.is_dir() {
            return Err(StoreError::NotAQueue {
                path: shown,
                detail: "it is a directory; name the queue file inside it".to_owned(),
            });
        }
        let op = "opening the queue file";
        let mut conn =
            Connection::open_with_flags(path, flags).map_err(|e| open_error(&shown, op, &e))?;
        conn.busy_timeout(options.busy_timeout)
            .map_err(|e| backend(op, &e))?;
        // Refuse a file that is not ours before writing anything to it:
        // switching to WAL rewrites the header of any SQLite file.
        check_identity(&conn, &shown, options.create)?;
        let journal: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(|e| open_error(&shown, op, &e))?;
        if !journal.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Backend {
                operation: op,
                message: format!("the file refused WAL mode (journal_mode is {journal})"),
            });
        }
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(|e| backend(op, &e))?;
        migrate(&mut conn, &shown, options.create)?;
        Ok(SqliteStore {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    /// The file this store writes.
    pub fn path(&self) -> &Path {
        &self.path
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
            return tx.commit().map_err(|e| backend(op, &e));
        }
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
    tx.execute_batch(SCHEMA).map_err(|e| backend(op, &e))?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(|e| backend(op, &e))?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(|e| backend(op, &e))?;
    tx.commit().map_err(|e| backend(op, &e))
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
                "{e}: check that {path} and its directory are writable (the queue keeps its \
                 -wal and -shm files beside it)"
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
    })
}

fn select_one(
    conn: &Connection,
    id: &str,
    op: &'static str,
) -> Result<Option<PendingAction>, StoreError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM pending_actions WHERE id = ?1"),
        [id],
        read_row,
    )
    .optional()
    .map_err(|e| backend(op, &e))?
    .transpose()
}

impl ApprovalStore for SqliteStore {
    fn insert(&self, row: &PendingAction) -> Result<(PendingAction, bool), StoreError> {
        let op = "queueing a pending action";
        let input = json_text(&row.input, &row.id)?;
        let proposer = json_text(&row.proposer, &row.id)?;
        let result = row
            .result
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
                 ?24, ?25, ?26, ?27)"
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
            ],
        )
        .map_err(|e| backend(op, &e))?;
        tx.commit().map_err(|e| backend(op, &e))?;
        Ok((row.clone(), true))
    }

    fn get(&self, id: &str) -> Result<Option<PendingAction>, StoreError> {
        let conn = self.lock();
        select_one(&conn, id, "reading a pending action")
    }

    fn list(
        &self,
        filter: &ListFilter,
    ) -> Result<Vec<Result<PendingAction, StoreError>>, StoreError> {
        let op = "listing pending actions";
        let mut sql = format!("SELECT {COLUMNS} FROM pending_actions WHERE 1 = 1");
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
        sql.push_str(" ORDER BY created_at, id");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {}", to_i64(limit as u64)));
        }
        let conn = self.lock();
        let mut stmt = conn.prepare(&sql).map_err(|e| backend(op, &e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), read_row)
            .map_err(|e| backend(op, &e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(|e| backend(op, &e))?);
        }
        Ok(out)
    }

    fn compare_and_set(
        &self,
        expected_version: u64,
        next: &PendingAction,
    ) -> Result<Cas, StoreError> {
        let op = "recording a decision";
        let result = next
            .result
            .as_ref()
            .map(|r| json_text(r, &next.id))
            .transpose()?;
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| backend(op, &e))?;
        let changed = tx
            .execute(
                "UPDATE pending_actions SET state = ?1, version = ?2, state_by = ?3, state_at = ?4, \
                 decided_by = ?5, decided_at = ?6, reason = ?7, approved_sha256 = ?8, \
                 claimed_by = ?9, claimed_at = ?10, lease_until = ?11, result = ?12, error = ?13, \
                 finished_at = ?14 WHERE id = ?15 AND version = ?16",
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
                    to_i64(expected_version),
                ],
            )
            .map_err(|e| backend(op, &e))?;
        let outcome = if changed == 1 {
            Cas::Applied
        } else {
            match select_one(&tx, &next.id, op)? {
                Some(current) => Cas::Conflict(Box::new(current)),
                None => Cas::Missing,
            }
        };
        tx.commit().map_err(|e| backend(op, &e))?;
        Ok(outcome)
    }
}
