//! The storage contract under the approval queue.
//!
//! The trait is deliberately small: insert-or-get, read, list, and one
//! compare-and-set that replaces a row when its version is still the one
//! read. All of the state machine lives above it, in
//! [`ApprovalQueue`](super::ApprovalQueue), so every backend enforces the
//! same rules. Each method is one short transaction.
//!
//! A PostgreSQL backend maps one-to-one onto it: a table with the columns
//! of [`PendingAction`] (JSON as `jsonb`, times as `bigint` milliseconds or
//! `timestamptz`, the input and executable digests as `text`, never
//! updated), a unique index on the dedup key
//! ([`PendingAction::dedup_key`]), `insert` as
//! `INSERT ... ON CONFLICT (dedup_key) DO NOTHING RETURNING *` followed by
//! a `SELECT` when nothing was returned, and `compare_and_set` as
//! `UPDATE ... WHERE id = $1 AND version = $2` (a conflict is zero rows
//! updated, then a `SELECT` reports the current row). The trait is
//! synchronous so it works from the CLI and from any async runtime alike;
//! a Postgres implementation would use a synchronous client or block on
//! its pool. A read-only store (a role with `SELECT` only, or a
//! `default_transaction_read_only` session) answers `get` and `list` and
//! refuses the two writes with [`StoreError::ReadOnly`], as
//! [`SqliteStore::open_read_only`](super::SqliteStore::open_read_only) does.

use std::sync::Arc;

use super::{PendingAction, State};

/// What a store calls when an action may have become ready to execute
/// (see [`ApprovalStore::watch_approved`]). It must return quickly: wake a
/// task, notify a condition variable.
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// Why the storage backend failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is not an approval queue (another database, or not SQLite).
    #[error("{path} is not an approval queue: {detail}")]
    NotAQueue {
        /// The file.
        path: String,
        /// What was found instead.
        detail: String,
    },
    /// The queue file does not exist (and was not to be created).
    #[error(
        "no approval queue at {path}: the file does not exist (the host creates it when it first queues an action)"
    )]
    Missing {
        /// The file.
        path: String,
    },
    /// The file was written by a newer version of this library.
    #[error(
        "{path} has schema version {found}, newer than the {supported} this build understands; upgrade objectstack-ai"
    )]
    SchemaTooNew {
        /// The file.
        path: String,
        /// Its schema version.
        found: i64,
        /// The newest this build reads.
        supported: i64,
    },
    /// The store was opened read-only, and this needs a write.
    #[error(
        "the approval queue was opened read-only, and {operation} writes to it; open it for writing"
    )]
    ReadOnly {
        /// What was being done.
        operation: &'static str,
    },
    /// The file cannot be read without writing to it first (a writer has
    /// to recover or convert it).
    #[error("{path} cannot be read without writing to it: {detail}")]
    NeedsWriter {
        /// The file.
        path: String,
        /// Why, and what to run.
        detail: String,
    },
    /// Other writers held the database longer than the busy timeout.
    #[error(
        "the approval queue stayed locked by other writers longer than the busy timeout ({operation})"
    )]
    Busy {
        /// What was being done.
        operation: &'static str,
    },
    /// A stored row cannot be read back.
    #[error("pending action `{id}` cannot be read: {detail}")]
    CorruptRow {
        /// The row's id.
        id: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The queue's location (a file path, `sqlite:PATH` or a
    /// `postgres://` URL) is unusable, or names a store this build lacks.
    #[error("approval queue `{location}`: {detail}")]
    Location {
        /// The location, credentials redacted.
        location: String,
        /// What is wrong, and how to fix it.
        detail: String,
    },
    /// Any other backend failure.
    #[error("approval store failed while {operation}: {message}")]
    Backend {
        /// What was being done.
        operation: &'static str,
        /// The backend's message.
        message: String,
    },
}

/// The outcome of [`ApprovalStore::compare_and_set`].
#[derive(Debug, Clone, PartialEq)]
pub enum Cas {
    /// The row had the expected version and now holds the new values.
    Applied,
    /// The row had moved on; this is its current value.
    Conflict(Box<PendingAction>),
    /// No row has that id.
    Missing,
}

/// Which rows [`ApprovalStore::list`] returns. Unset fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// Only rows in this state.
    pub state: Option<State>,
    /// Only rows created strictly before this time (ms since the epoch).
    pub created_before: Option<i64>,
    /// Only rows whose lease ends at or before this time.
    pub lease_expired_at: Option<i64>,
    /// Only rows of this tool.
    pub tool_name: Option<String>,
    /// Only rows of this conversation.
    pub conversation_id: Option<String>,
    /// Only rows in a terminal state (`Some(true)`: rejected, expired,
    /// cancelled, executed, failed), or only rows that may still change
    /// (`Some(false)`).
    pub terminal: Option<bool>,
    /// Only rows whose proposer has this id. A row whose proposer cannot
    /// be read passes no such filter.
    pub proposer_id: Option<String>,
    /// The order of the rows, and so which ones `after`, `offset` and
    /// `limit` keep.
    pub order: ListOrder,
    /// Only rows that come after this position in the order: the last row
    /// of the page before, for keyset paging. Unlike an offset, a row that
    /// does not change is never passed over or met twice while others
    /// change, and a page deep in a long listing costs what the first does.
    pub after: Option<ListCursor>,
    /// Pass over this many rows first, in that order (after `after`).
    pub offset: Option<usize>,
    /// At most this many rows.
    pub limit: Option<usize>,
}

/// A row's position in a listing's [`ListOrder`] ([`ListFilter::after`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ListCursor {
    /// The row's time in the order: its `created_at` for
    /// [`ListOrder::OldestFirst`] and [`ListOrder::NewestFirst`], its
    /// `state_at` for [`ListOrder::RecentlyChanged`].
    pub at: i64,
    /// The row's id, which breaks ties on the time.
    pub id: String,
}

impl ListCursor {
    /// The position of `row` in `order`.
    pub fn of(row: &PendingAction, order: ListOrder) -> Self {
        let (at, id) = order.key(row);
        ListCursor {
            at,
            id: id.to_owned(),
        }
    }
}

/// The order of [`ApprovalStore::list`]'s rows. Ties on the time are
/// broken by id, in the same direction, so every order is total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ListOrder {
    /// Oldest first, by creation time.
    #[default]
    OldestFirst,
    /// Newest first, by creation time.
    NewestFirst,
    /// Most recently changed first, by the time of the row's last state
    /// change (`state_at`): for a history of decisions.
    RecentlyChanged,
}

impl ListOrder {
    /// The SQL `ORDER BY` list of this order, over the stores' column names.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn sql(self) -> &'static str {
        match self {
            ListOrder::OldestFirst => "created_at, id",
            ListOrder::NewestFirst => "created_at DESC, id DESC",
            ListOrder::RecentlyChanged => "state_at DESC, id DESC",
        }
    }

    /// The SQL condition of rows after a cursor in this order, over the
    /// stores' column names, with the placeholders `at` and `id` (`?1`,
    /// `$1`, ...).
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn after_sql(self, at: &str, id: &str) -> String {
        match self {
            ListOrder::OldestFirst => format!("(created_at, id) > ({at}, {id})"),
            ListOrder::NewestFirst => format!("(created_at, id) < ({at}, {id})"),
            ListOrder::RecentlyChanged => format!("(state_at, id) < ({at}, {id})"),
        }
    }

    /// What `row` is ordered by in this order: its time (`created_at`,
    /// or `state_at` for [`ListOrder::RecentlyChanged`]), then its id.
    fn key(self, row: &PendingAction) -> (i64, &str) {
        match self {
            ListOrder::OldestFirst | ListOrder::NewestFirst => (row.created_at, &row.id),
            ListOrder::RecentlyChanged => (row.state_at, &row.id),
        }
    }

    /// Whether the order is descending (newest first).
    fn descending(self) -> bool {
        !matches!(self, ListOrder::OldestFirst)
    }

    /// Whether `row` comes after `cursor` in this order.
    pub fn comes_after(self, row: &PendingAction, cursor: &ListCursor) -> bool {
        let (key, there) = (self.key(row), (cursor.at, cursor.id.as_str()));
        if self.descending() {
            key < there
        } else {
            key > there
        }
    }

    /// Sorts rows held in memory into this order.
    pub(crate) fn sort(self, rows: &mut [PendingAction]) {
        if self.descending() {
            rows.sort_by(|a, b| self.key(b).cmp(&self.key(a)));
        } else {
            rows.sort_by(|a, b| self.key(a).cmp(&self.key(b)));
        }
    }
}

/// The SQL list of the terminal states (`terminal`) or of the others,
/// quoted: `'rejected', ...`. Always a positive list, so the stores'
/// `(state, created_at, id)` index serves either.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn states_sql(terminal: bool) -> String {
    State::ALL
        .iter()
        .filter(|s| s.is_terminal() == terminal)
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl ListFilter {
    /// Whether `row` passes the filter (`after` included; offset and limit
    /// aside).
    pub fn matches(&self, row: &PendingAction) -> bool {
        self.after
            .as_ref()
            .is_none_or(|c| self.order.comes_after(row, c))
            && self.state.is_none_or(|s| row.state == s)
            && self.created_before.is_none_or(|t| row.created_at < t)
            && self
                .lease_expired_at
                .is_none_or(|t| row.lease_until.is_some_and(|l| l <= t))
            && self.tool_name.as_deref().is_none_or(|t| row.tool_name == t)
            && self
                .conversation_id
                .as_deref()
                .is_none_or(|c| row.conversation_id.as_deref() == Some(c))
            && self.terminal.is_none_or(|t| row.state.is_terminal() == t)
            && self
                .proposer_id
                .as_deref()
                .is_none_or(|p| row.proposer.id == p)
    }
}

/// Durable storage of pending actions.
///
/// Implementations must make each method atomic and must never change a
/// row except through [`compare_and_set`](ApprovalStore::compare_and_set).
pub trait ApprovalStore: Send + Sync {
    /// Stores `row` unless a row with the same
    /// [`dedup_key`](PendingAction::dedup_key) exists. Returns the stored
    /// row (the existing one on a duplicate) and whether it was inserted.
    fn insert(&self, row: &PendingAction) -> Result<(PendingAction, bool), StoreError>;

    /// The row with this id.
    fn get(&self, id: &str) -> Result<Option<PendingAction>, StoreError>;

    /// Rows passing `filter`, in its [`order`](ListFilter::order). A
    /// row that cannot be read back is reported in its place as a
    /// [`StoreError::CorruptRow`] naming it, so one damaged row does not
    /// hide the others; the whole call fails only when the store does.
    fn list(
        &self,
        filter: &ListFilter,
    ) -> Result<Vec<Result<PendingAction, StoreError>>, StoreError>;

    /// Replaces the row `next.id` with `next` if its version is still
    /// `expected_version`; otherwise reports the current row.
    fn compare_and_set(
        &self,
        expected_version: u64,
        next: &PendingAction,
    ) -> Result<Cas, StoreError>;

    /// Claims the oldest readable `approved` row of one of `tools`:
    /// `claim` gets each candidate and returns the row to write in its
    /// place (or `None` to pass it over), and the first one written is
    /// returned. A row another executor is claiming at the same moment is
    /// skipped, not waited for, and never handed to two callers.
    ///
    /// The default lists the approved rows and compare-and-sets them one
    /// by one (losers move on to the next row); stores override it with
    /// one locked transaction (SQLite's write lock, PostgreSQL's
    /// `FOR UPDATE SKIP LOCKED`).
    fn claim_next(
        &self,
        tools: &[String],
        claim: &mut dyn FnMut(&PendingAction) -> Option<PendingAction>,
    ) -> Result<Option<PendingAction>, StoreError> {
        let approved = self.list(&ListFilter {
            state: Some(State::Approved),
            ..ListFilter::default()
        })?;
        for row in approved.into_iter().flatten() {
            if !tools.contains(&row.tool_name) {
                continue;
            }
            let Some(next) = claim(&row) else { continue };
            if let Cas::Applied = self.compare_and_set(row.version, &next)? {
                return Ok(Some(next));
            }
        }
        Ok(None)
    }

    /// Asks the store to call `wake` whenever an action is approved, by
    /// this process or any other (PostgreSQL's `LISTEN`/`NOTIFY`); returns
    /// whether it will. A store that cannot (the default, SQLite, memory)
    /// returns `false`, and executors poll. A wake-up is a hint: the
    /// executor still claims through the store, so a spurious or missed
    /// one costs latency, never correctness.
    fn watch_approved(&self, wake: Wake) -> Result<bool, StoreError> {
        let _ = wake;
        Ok(false)
    }
}
