//! An [`ApprovalStore`] in a PostgreSQL database, so several hosts (gateway
//! replicas) share one queue.
//!
//! The same rows, state machine and guards as the SQLite file (see
//! [`schema`]): every transition is one compare-and-set
//! (`UPDATE ... WHERE id = $1 AND version = $2`), proposals are
//! deduplicated by a unique key (`INSERT ... ON CONFLICT DO NOTHING`), and
//! triggers refuse any change the state machine does not have. Executors
//! claim with `SELECT ... FOR UPDATE SKIP LOCKED` (a row another executor
//! is claiming is skipped, not waited for), and an approval is announced
//! with `NOTIFY objectstack_approvals`, which [`ApprovalStore::watch_approved`]
//! turns into wake-ups, so executors need not poll often.
//!
//! # Connections
//!
//! The trait is synchronous and is called from plain threads and from
//! inside Tokio tasks alike, so the store runs its own small Tokio runtime
//! (two threads) for `tokio-postgres`, and every call hands its work to it
//! and waits: the caller's thread blocks as it would on an SQLite file, and
//! nothing tries to start a runtime inside another one (which the
//! synchronous `postgres` crate does, and panics in a Tokio task).
//!
//! Connections are pooled (up to [`PostgresOptions::max_connections`]),
//! opened lazily with [`PostgresOptions::connect_timeout`], given TCP
//! keepalives, and every statement runs under
//! [`PostgresOptions::statement_timeout`] (also the lock timeout). A
//! connection that failed or timed out is dropped and the next call opens
//! a new one, so the store reconnects by itself. A write is never retried
//! behind the caller's back: a claim whose connection is lost before the
//! outcome is recorded stays `executing` until its lease runs out and it
//! becomes `in_doubt`, never a second dispatch.
//!
//! The URL is the libpq one (`postgres://user@host:port/db?options=...`);
//! `PGPASSWORD` is used when it carries no password, as libpq does. The
//! URL's password never appears in an error, a log line or a stored row:
//! the store names itself by its URL with the credentials redacted.
//!
//! TLS follows libpq's `sslmode` (the `tls` module has the table): `prefer` (the
//! default) encrypts when the server offers TLS, `require` insists,
//! `verify-ca` and `verify-full` also check the server's certificate, and
//! `sslrootcert` names the PEM file of the CA to trust (else the system's
//! roots and Mozilla's).

mod schema;
mod tls;

use std::collections::HashMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{AsyncMessage, Client, Row, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::store::{ApprovalStore, Cas, ListFilter, StoreError, Wake, states_sql};
use super::{PendingAction, State};
use crate::actor::Actor;

/// The columns a row is read from, in [`decode_row`]'s order.
const COLUMNS: &str = "id, tool_name, action_name, object_name, input::text, input_sha256, \
    conversation_id, message_id, tool_call_id, trace_id, proposer::text, created_at, state, \
    version, state_by, state_at, decided_by, decided_at, reason, approved_sha256, claimed_by, \
    claimed_at, lease_until, result::text, error, finished_at, executable_sha256, \
    approved_input::text, expires_at";

/// The compare-and-set write.
const UPDATE: &str = "UPDATE pending_actions SET state = $1, version = $2, state_by = $3, \
    state_at = $4, decided_by = $5, decided_at = $6, reason = $7, approved_sha256 = $8, \
    claimed_by = $9, claimed_at = $10, lease_until = $11, result = $12::text::json, error = $13, \
    finished_at = $14, approved_input = $17::text::json WHERE id = $15 AND version = $16";

/// How to reach and use the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// Create the queue's tables when the database has none (a host does;
    /// an operator's command does not). Ignored when `read_only`.
    pub create: bool,
    /// Read only: no migration, every session read-only
    /// (`default_transaction_read_only`), and every write refused with
    /// [`StoreError::ReadOnly`].
    pub read_only: bool,
    /// How long opening one connection may take.
    pub connect_timeout: Duration,
    /// How long one statement (or a wait for a row lock) may take before
    /// the call fails; also bounds waiting for a free pooled connection.
    pub statement_timeout: Duration,
    /// The most connections this store opens (the `LISTEN` connection of
    /// [`ApprovalStore::watch_approved`] aside).
    pub max_connections: usize,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            create: true,
            read_only: false,
            connect_timeout: Duration::from_secs(10),
            statement_timeout: Duration::from_secs(30),
            max_connections: 8,
        }
    }
}

/// An approval queue in a PostgreSQL database (see the module docs).
pub struct PostgresStore {
    inner: Arc<Inner>,
    /// The runtime the connections live on; shut down without blocking
    /// when the store is dropped (which may happen inside a Tokio task).
    runtime: Option<tokio::runtime::Runtime>,
}

struct Inner {
    config: tokio_postgres::Config,
    /// TLS as the URL's `sslmode` asks (`disable` never uses it).
    tls: MakeRustlsConnect,
    /// The URL with its credentials redacted: how the store names itself.
    shown: String,
    options: PostgresOptions,
    pool: Mutex<Pool>,
    freed: Condvar,
    watchers: Arc<Mutex<Vec<Wake>>>,
    listening: Mutex<bool>,
}

#[derive(Default)]
struct Pool {
    idle: Vec<Arc<Conn>>,
    open: usize,
}

/// One connection and the statements prepared on it.
struct Conn {
    client: Client,
    prepared: Mutex<HashMap<&'static str, Statement>>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("url", &self.inner.shown)
            .field("read_only", &self.inner.options.read_only)
            .finish_non_exhaustive()
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Why a piece of work on a connection failed.
enum Fail {
    Db(tokio_postgres::Error),
    Store(StoreError),
    Timeout,
}

impl From<tokio_postgres::Error> for Fail {
    fn from(e: tokio_postgres::Error) -> Self {
        Fail::Db(e)
    }
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Self {
        Fail::Store(e)
    }
}

impl PostgresStore {
    /// Opens the queue at `url`, creating its tables when the database has
    /// none.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with(url, &PostgresOptions::default())
    }

    /// Opens an existing queue; a database without one is an error.
    pub fn open_existing(url: &str) -> Result<Self, StoreError> {
        Self::open_with(
            url,
            &PostgresOptions {
                create: false,
                ..PostgresOptions::default()
            },
        )
    }

    /// Opens an existing queue for reading only (see
    /// [`PostgresOptions::read_only`]).
    pub fn open_read_only(url: &str) -> Result<Self, StoreError> {
        Self::open_with(
            url,
            &PostgresOptions {
                create: false,
                read_only: true,
                ..PostgresOptions::default()
            },
        )
    }

    /// Opens the queue at `url` with `options`: connects once, checks the
    /// schema version and (unless read-only) applies the migrations this
    /// build has and the database lacks.
    pub fn open_with(url: &str, options: &PostgresOptions) -> Result<Self, StoreError> {
        let shown = redact_url(url);
        let op = "opening the approval queue";
        let split = tls::split(url);
        let mut config =
            tokio_postgres::Config::from_str(&split.url).map_err(|e| StoreError::Location {
                location: shown.clone(),
                detail: format!(
                    "not a PostgreSQL connection URL ({}); write it as \
                     postgres://USER@HOST:PORT/DATABASE",
                    crate::redact::text(&e.to_string())
                ),
            })?;
        let tls = tls::connector(split.verify, split.root_cert.as_deref()).map_err(|detail| {
            StoreError::Location {
                location: shown.clone(),
                detail,
            }
        })?;
        if config.get_password().is_none()
            && let Some(password) = std::env::var_os("PGPASSWORD")
        {
            config.password(password.as_encoded_bytes());
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("objectstack-approvals");
        }
        config.keepalives(true);
        config.keepalives_idle(Duration::from_secs(30));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("objectstack-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Backend {
                operation: op,
                message: format!("cannot start the connection threads: {e}"),
            })?;
        let store = PostgresStore {
            inner: Arc::new(Inner {
                config,
                tls,
                shown,
                options: PostgresOptions {
                    max_connections: options.max_connections.max(1),
                    ..options.clone()
                },
                pool: Mutex::new(Pool::default()),
                freed: Condvar::new(),
                watchers: Arc::new(Mutex::new(Vec::new())),
                listening: Mutex::new(false),
            }),
            runtime: Some(runtime),
        };
        store.prepare_schema()?;
        Ok(store)
    }

    /// The URL the store was opened with, credentials redacted.
    pub fn url(&self) -> &str {
        &self.inner.shown
    }

    /// Whether the store was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.inner.options.read_only
    }

    fn writable(&self, operation: &'static str) -> Result<(), StoreError> {
        if self.inner.options.read_only {
            return Err(StoreError::ReadOnly { operation });
        }
        Ok(())
    }

    /// Checks the schema version, and migrates when writing.
    fn prepare_schema(&self) -> Result<(), StoreError> {
        let op = "opening the approval queue";
        let shown = self.inner.shown.clone();
        let options = self.inner.options.clone();
        self.with_conn(op, move |conn| async move {
            let client = &conn.client;
            client.batch_execute("BEGIN").await?;
            let outcome = migrate(client, &shown, &options).await;
            finish(client, outcome).await
        })
    }

    /// Runs `work` on a pooled connection, on the store's runtime, and
    /// waits for it.
    fn with_conn<T, F, Fut>(&self, op: &'static str, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Arc<Conn>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, Fail>> + Send + 'static,
    {
        let mut lease = self.checkout(op)?;
        let conn = lease.conn();
        let result = self.block(work(conn));
        lease.settle(&result);
        result.map_err(|f| self.error(op, f))
    }

    /// Runs `fut` on the store's runtime under the statement timeout (and
    /// a margin), blocking the calling thread while it waits on a channel.
    /// On a worker of a multi-threaded Tokio runtime (a gateway's), the
    /// wait is announced with `block_in_place`, so the runtime hands the
    /// worker's other tasks to another thread: a slow or unreachable
    /// database stalls only the calls that use the queue, never every
    /// session of the host.
    fn block<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, Fail>> + Send + 'static,
    ) -> Result<T, Fail> {
        let Some(runtime) = &self.runtime else {
            return Err(Fail::Timeout);
        };
        let limit = self.inner.options.statement_timeout + Duration::from_secs(5);
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            let out = match tokio::time::timeout(limit, fut).await {
                Ok(out) => out,
                Err(_) => Err(Fail::Timeout),
            };
            let _ = tx.send(out);
        });
        let wait = move || rx.recv().unwrap_or(Err(Fail::Timeout));
        match tokio::runtime::Handle::try_current() {
            // `block_in_place` panics on a current-thread runtime, which
            // has no other thread to hand its tasks to.
            Ok(host) if host.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        }
    }

    /// A connection from the pool, or a new one, waiting at most the
    /// statement timeout for one to be free.
    fn checkout(&self, op: &'static str) -> Result<Lease<'_>, StoreError> {
        let inner = &self.inner;
        let deadline = Instant::now() + inner.options.statement_timeout;
        let mut pool = inner.lock_pool();
        loop {
            while let Some(conn) = pool.idle.pop() {
                if conn.client.is_closed() {
                    pool.open = pool.open.saturating_sub(1);
                    continue;
                }
                return Ok(Lease::new(self, conn));
            }
            if pool.open < inner.options.max_connections {
                pool.open += 1;
                drop(pool);
                let connected = self.connect();
                return match connected {
                    Ok(conn) => Ok(Lease::new(self, conn)),
                    Err(fail) => {
                        inner.release(None);
                        Err(self.error(op, fail))
                    }
                };
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(StoreError::Busy { operation: op });
            }
            pool = match inner.freed.wait_timeout(pool, deadline - now) {
                Ok((pool, _)) => pool,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Opens one connection and sets up its session.
    fn connect(&self) -> Result<Arc<Conn>, Fail> {
        let Some(runtime) = &self.runtime else {
            return Err(Fail::Timeout);
        };
        let inner = self.inner.clone();
        let handle = runtime.handle().clone();
        self.block(async move {
            let (client, connection) = inner.config.connect(inner.tls.clone()).await?;
            handle.spawn(async move {
                // Ends when the connection closes; the client then reports
                // itself closed and the pool drops it.
                let _ = connection.await;
            });
            let timeout = inner.options.statement_timeout.as_millis();
            let mut setup = format!(
                "SET statement_timeout = {timeout}; SET lock_timeout = {timeout}; \
                 SET idle_in_transaction_session_timeout = {};",
                timeout.saturating_mul(2)
            );
            if inner.options.read_only {
                setup.push_str(" SET default_transaction_read_only = on;");
            }
            client.batch_execute(&setup).await?;
            Ok(Arc::new(Conn {
                client,
                prepared: Mutex::new(HashMap::new()),
            }))
        })
    }

    /// A failure as a [`StoreError`], credentials redacted.
    fn error(&self, operation: &'static str, fail: Fail) -> StoreError {
        match fail {
            Fail::Store(e) => e,
            Fail::Timeout => StoreError::Backend {
                operation,
                message: format!(
                    "{} did not answer within {} s (the connection was dropped; the next call \
                     reconnects)",
                    self.inner.shown,
                    self.inner.options.statement_timeout.as_secs()
                ),
            },
            Fail::Db(e) => db_error(operation, &self.inner.shown, &e),
        }
    }

    /// Starts the `LISTEN` task once.
    fn start_listening(&self) {
        let mut started = match self.inner.listening.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if *started {
            return;
        }
        let Some(runtime) = &self.runtime else { return };
        *started = true;
        let config = self.inner.config.clone();
        let watchers = self.inner.watchers.clone();
        runtime.spawn(listen(config, self.inner.tls.clone(), watchers));
    }

    /// The first readable approved row of `tools` not in `passed`, locked
    /// for this transaction (skipping rows locked by other claimers).
    fn claim_candidate(
        &self,
        lease: &mut Lease<'_>,
        tools: &[String],
        passed: &[String],
        begin: bool,
    ) -> Result<Option<Result<PendingAction, StoreError>>, Fail> {
        let conn = lease.conn();
        let (tools, passed) = (tools.to_vec(), passed.to_vec());
        let result = self.block(async move {
            if begin {
                conn.client.batch_execute("BEGIN").await?;
            }
            let sql = "SELECT {COLUMNS} FROM pending_actions WHERE state = 'approved' \
                 AND tool_name = ANY($1) AND NOT (id = ANY($2)) ORDER BY created_at, id \
                 LIMIT 1 FOR UPDATE SKIP LOCKED";
            let stmt = conn
                .prepare(CLAIM_SELECT_KEY, &sql.replace("{COLUMNS}", COLUMNS))
                .await?;
            let row = conn.client.query_opt(&stmt, &[&tools, &passed]).await?;
            Ok(row.map(|r| read_row(&r)))
        });
        if begin {
            lease.in_transaction = true;
        }
        result
    }
}

/// The key under which the claim query is prepared.
const CLAIM_SELECT_KEY: &str = "claim-select";

impl Inner {
    fn lock_pool(&self) -> MutexGuard<'_, Pool> {
        match self.pool.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Gives a connection back (or, `None`, forgets a broken one).
    fn release(&self, conn: Option<Arc<Conn>>) {
        let mut pool = self.lock_pool();
        match conn {
            Some(conn) if !conn.client.is_closed() => pool.idle.push(conn),
            _ => pool.open = pool.open.saturating_sub(1),
        }
        drop(pool);
        self.freed.notify_one();
    }
}

impl Conn {
    /// `sql` prepared on this connection, once.
    async fn prepare(&self, key: &'static str, sql: &str) -> Result<Statement, Fail> {
        let cached = match self.prepared.lock() {
            Ok(map) => map.get(key).cloned(),
            Err(p) => p.into_inner().get(key).cloned(),
        };
        if let Some(stmt) = cached {
            return Ok(stmt);
        }
        let stmt = self.client.prepare(sql).await?;
        if let Ok(mut map) = self.prepared.lock() {
            map.insert(key, stmt.clone());
        }
        Ok(stmt)
    }
}

/// A checked-out connection; given back when dropped, unless it failed
/// (or was left inside a transaction), in which case it is closed.
struct Lease<'a> {
    store: &'a PostgresStore,
    conn: Option<Arc<Conn>>,
    broken: bool,
    in_transaction: bool,
}

impl<'a> Lease<'a> {
    fn new(store: &'a PostgresStore, conn: Arc<Conn>) -> Self {
        Lease {
            store,
            conn: Some(conn),
            broken: false,
            in_transaction: false,
        }
    }

    fn conn(&self) -> Arc<Conn> {
        match &self.conn {
            Some(conn) => conn.clone(),
            // Not reached: the connection is taken only when dropped.
            None => unreachable_conn(),
        }
    }

    /// Marks the connection broken when `result` says it may be.
    fn settle<T>(&mut self, result: &Result<T, Fail>) {
        match result {
            Ok(_) | Err(Fail::Store(_)) => {}
            Err(Fail::Timeout) => self.broken = true,
            Err(Fail::Db(e)) => {
                if e.is_closed() || e.as_db_error().is_none() {
                    self.broken = true;
                }
            }
        }
    }
}

#[allow(clippy::panic)]
fn unreachable_conn() -> Arc<Conn> {
    // A lease always holds its connection until it is dropped.
    panic!("a lease's connection was used after it was given back")
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let conn = self.conn.take();
        let keep = !self.broken && !self.in_transaction;
        self.store.inner.release(conn.filter(|_| keep));
    }
}

/// Commits on success, rolls back on failure (a failed rollback is the
/// connection's problem, and the pool drops it).
async fn finish<T>(client: &Client, outcome: Result<T, Fail>) -> Result<T, Fail> {
    match outcome {
        Ok(value) => {
            client.batch_execute("COMMIT").await?;
            Ok(value)
        }
        Err(e) => {
            let _ = client.batch_execute("ROLLBACK").await;
            Err(e)
        }
    }
}

/// Checks the version table and applies the missing migrations, inside
/// the caller's transaction.
async fn migrate(client: &Client, shown: &str, options: &PostgresOptions) -> Result<(), Fail> {
    if !options.read_only {
        client
            .execute(
                "SELECT pg_advisory_xact_lock($1)",
                &[&schema::MIGRATION_LOCK],
            )
            .await?;
    }
    let found = client
        .query_one(
            "SELECT to_regclass('objectstack_approvals_schema') IS NOT NULL, \
             to_regclass('pending_actions') IS NOT NULL",
            &[],
        )
        .await?;
    let (has_versions, has_table): (bool, bool) = (found.try_get(0)?, found.try_get(1)?);
    let not_a_queue = |detail: String| {
        Fail::Store(StoreError::NotAQueue {
            path: shown.to_owned(),
            detail,
        })
    };
    let version: i32 = if has_versions {
        let row = client
            .query_one(
                "SELECT coalesce(max(version), 0) FROM objectstack_approvals_schema",
                &[],
            )
            .await?;
        row.try_get(0)?
    } else if has_table {
        return Err(not_a_queue(
            "it has a `pending_actions` table that this library did not create (no \
             objectstack_approvals_schema table); use another database or schema \
             (`?options=-csearch_path%3DNAME`)"
                .to_owned(),
        ));
    } else {
        0
    };
    if version > schema::CURRENT {
        return Err(Fail::Store(StoreError::SchemaTooNew {
            path: shown.to_owned(),
            found: i64::from(version),
            supported: i64::from(schema::CURRENT),
        }));
    }
    if version == schema::CURRENT {
        if !options.read_only {
            add_indexes(client, options.statement_timeout).await?;
        }
        return Ok(());
    }
    if version == 0 && (options.read_only || !options.create) {
        return Err(not_a_queue(
            "the database has no approval queue yet (a gateway creates it when it starts with \
             `--approvals` set to this URL)"
                .to_owned(),
        ));
    }
    if options.read_only {
        return Err(Fail::Store(StoreError::NeedsWriter {
            path: shown.to_owned(),
            detail: format!(
                "its schema version is {version}, older than this build's {}; start a gateway \
                 (or run an `approvals` command that decides) to upgrade it",
                schema::CURRENT
            ),
        }));
    }
    let applied_by = format!("objectstack-bridge {}", env!("CARGO_PKG_VERSION"));
    for next in (version + 1)..=schema::CURRENT {
        let Some(sql) = usize::try_from(next - 1)
            .ok()
            .and_then(|i| schema::MIGRATIONS.get(i))
        else {
            break;
        };
        client.batch_execute(sql).await?;
        client
            .execute(
                "INSERT INTO objectstack_approvals_schema (version, applied_by) VALUES ($1, $2)",
                &[&next, &applied_by],
            )
            .await?;
    }
    add_indexes(client, options.statement_timeout).await
}

/// Adds the listing indexes ([`schema::INDEXES`]) that are missing, inside
/// the migration's transaction. They only speed listings up, so nothing
/// about them keeps the queue from opening: a role that may not create
/// them (it does not own the table), a read-only server, another writer's
/// lock held past a third of `timeout`, or a table too large to index in
/// that time each leave the queue opened without them (a savepoint keeps
/// the failure from aborting the transaction), and the next writer's open
/// tries again. A table that large is best indexed by hand, with `CREATE
/// INDEX CONCURRENTLY` and the statements of [`schema::INDEXES`].
async fn add_indexes(client: &Client, timeout: Duration) -> Result<(), Fail> {
    // `CREATE INDEX IF NOT EXISTS` locks the table against writes even when
    // the index is there, so every gateway's start would wait on the
    // others' writes: look first.
    let present: bool = client
        .query_one(schema::INDEXES_PRESENT, &[])
        .await?
        .try_get(0)?;
    if present {
        return Ok(());
    }
    // Within the savepoint, so rolling back to it restores the session's
    // own timeouts; on success the transaction ends right after.
    let bound = (timeout / 3).as_millis().max(1);
    client
        .batch_execute(&format!(
            "SAVEPOINT objectstack_indexes; SET LOCAL lock_timeout = {bound}; \
             SET LOCAL statement_timeout = {bound}"
        ))
        .await?;
    match client.batch_execute(schema::INDEXES).await {
        Ok(()) => Ok(client
            .batch_execute("RELEASE SAVEPOINT objectstack_indexes")
            .await?),
        // Refused by the server (a code): open without them. A lost
        // connection has no code, and fails the open as any other would.
        Err(e) if e.code().is_some() => Ok(client
            .batch_execute("ROLLBACK TO SAVEPOINT objectstack_indexes")
            .await?),
        Err(e) => Err(e.into()),
    }
}

/// Listens for approvals until the runtime stops, reconnecting with a
/// backoff; wakes every watcher on each notification, and once after
/// every (re)connection (approvals made while not listening).
async fn listen(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    watchers: Arc<Mutex<Vec<Wake>>>,
) {
    let wake_all = |watchers: &Mutex<Vec<Wake>>| {
        let list: Vec<Wake> = match watchers.lock() {
            Ok(w) => w.clone(),
            Err(p) => p.into_inner().clone(),
        };
        for wake in list {
            wake();
        }
    };
    let mut backoff = Duration::from_millis(200);
    loop {
        if let Ok((client, mut connection)) = config.connect(tls.clone()).await {
            backoff = Duration::from_millis(200);
            let forward = watchers.clone();
            let driver = tokio::spawn(async move {
                while let Some(message) =
                    std::future::poll_fn(|cx| connection.poll_message(cx)).await
                {
                    match message {
                        Ok(AsyncMessage::Notification(_)) => wake_all(&forward),
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
            });
            if client
                .batch_execute(&format!("LISTEN {}", schema::CHANNEL))
                .await
                .is_ok()
            {
                wake_all(&watchers);
                let _ = driver.await;
            } else {
                driver.abort();
            }
            drop(client);
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(10));
    }
}

/// A driver error as a [`StoreError`].
fn db_error(operation: &'static str, shown: &str, e: &tokio_postgres::Error) -> StoreError {
    let code = e.code();
    if code == Some(&SqlState::LOCK_NOT_AVAILABLE)
        || code == Some(&SqlState::QUERY_CANCELED)
        || code == Some(&SqlState::T_R_DEADLOCK_DETECTED)
        || code == Some(&SqlState::T_R_SERIALIZATION_FAILURE)
    {
        return StoreError::Busy { operation };
    }
    if code == Some(&SqlState::READ_ONLY_SQL_TRANSACTION) {
        return StoreError::ReadOnly { operation };
    }
    let message = match e.as_db_error() {
        Some(db) => {
            let mut m = db.message().to_owned();
            if let Some(detail) = db.detail() {
                m.push_str(": ");
                m.push_str(detail);
            }
            if code == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
                m.push_str(" (grant this role the privilege, or use a role that has it)");
            }
            m
        }
        None if e.is_closed() => {
            format!("the connection to {shown} was lost (the next call reconnects): {e}")
        }
        None => {
            let mut m = format!("cannot reach {shown}: {e}");
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                let text = cause.to_string();
                if !m.contains(&text) {
                    m.push_str(": ");
                    m.push_str(&text);
                }
                source = cause.source();
            }
            if m.contains("UnknownIssuer") || m.contains("unknown issuer") {
                m.push_str(
                    " (if a private CA signed the server's certificate, name its PEM file \
                     with sslrootcert=PATH in the URL)",
                );
            } else if m.contains("NotValidForName") || m.contains("not valid for name") {
                m.push_str(
                    " (the certificate does not name the host in the URL: connect by a name \
                     it holds)",
                );
            }
            m
        }
    };
    StoreError::Backend {
        operation,
        message: crate::redact::text(&message).into_owned(),
    }
}

fn redact_url(url: &str) -> String {
    super::location::redact(url)
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

/// One row read back; anything wrong with it but its id is that row's
/// [`StoreError::CorruptRow`].
fn read_row(row: &Row) -> Result<PendingAction, StoreError> {
    let id: String = match row.try_get(0) {
        Ok(id) => id,
        Err(e) => {
            return Err(StoreError::CorruptRow {
                id: "?".to_owned(),
                detail: format!("its id is unreadable: {e}"),
            });
        }
    };
    decode_row(row, &id).map_err(|detail| StoreError::CorruptRow { id, detail })
}

fn decode_row(row: &Row, id: &str) -> Result<PendingAction, String> {
    fn col<'a, T: tokio_postgres::types::FromSql<'a>>(row: &'a Row, i: usize) -> Result<T, String> {
        row.try_get(i).map_err(|e| {
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
    let approved_input: Option<String> = col(row, 27)?;
    let approved_input = approved_input
        .map(|i| serde_json::from_str::<Map<String, Value>>(&i))
        .transpose()
        .map_err(|e| format!("its approved input is not a JSON object: {e}"))?;
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
        executable_sha256: col(row, 26)?,
        approved_input,
        expires_at: col(row, 28)?,
    })
}

/// The owned values of a compare-and-set write.
struct Update {
    row: PendingAction,
    result: Option<String>,
    approved_input: Option<String>,
    expected: i64,
}

impl Update {
    fn new(expected: u64, next: &PendingAction) -> Result<Self, StoreError> {
        Ok(Update {
            result: next
                .result
                .as_ref()
                .map(|r| json_text(r, &next.id))
                .transpose()?,
            approved_input: next
                .approved_input
                .as_ref()
                .map(|i| json_text(i, &next.id))
                .transpose()?,
            row: next.clone(),
            expected: to_i64(expected),
        })
    }

    async fn run(&self, conn: &Conn) -> Result<u64, Fail> {
        let stmt = conn.prepare("update", UPDATE).await?;
        let r = &self.row;
        let version = to_i64(r.version);
        let state = r.state.as_str();
        Ok(conn
            .client
            .execute(
                &stmt,
                &[
                    &state,
                    &version,
                    &r.state_by,
                    &r.state_at,
                    &r.decided_by,
                    &r.decided_at,
                    &r.reason,
                    &r.approved_sha256,
                    &r.claimed_by,
                    &r.claimed_at,
                    &r.lease_until,
                    &self.result,
                    &r.error,
                    &r.finished_at,
                    &r.id,
                    &self.expected,
                    &self.approved_input,
                ],
            )
            .await?)
    }
}

async fn select_one(
    conn: &Conn,
    id: &str,
) -> Result<Option<Result<PendingAction, StoreError>>, Fail> {
    let stmt = conn
        .prepare(
            "select-one",
            &format!("SELECT {COLUMNS} FROM pending_actions WHERE id = $1"),
        )
        .await?;
    Ok(conn
        .client
        .query_opt(&stmt, &[&id])
        .await?
        .map(|r| read_row(&r)))
}

impl ApprovalStore for PostgresStore {
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
            .map(|i| json_text(i, &row.id))
            .transpose()?;
        let dedup = row.dedup_key();
        let row = row.clone();
        self.with_conn(op, move |conn| async move {
            let stmt = conn
                .prepare(
                    "insert",
                    &format!(
                        "INSERT INTO pending_actions (dedup_key, {}) VALUES ($1, $2, $3, $4, $5, \
                         $6::text::json, $7, $8, $9, $10, $11, $12::text::json, $13, $14, $15, \
                         $16, $17, $18, $19, $20, $21, $22, $23, $24, $25::text::json, $26, $27, \
                         $28, $29::text::json, $30) ON CONFLICT (dedup_key) DO NOTHING \
                         RETURNING id",
                        COLUMNS.replace("::text", "")
                    ),
                )
                .await?;
            let version = to_i64(row.version);
            let state = row.state.as_str();
            let inserted = conn
                .client
                .query_opt(
                    &stmt,
                    &[
                        &dedup,
                        &row.id,
                        &row.tool_name,
                        &row.action_name,
                        &row.object_name,
                        &input,
                        &row.input_sha256,
                        &row.conversation_id,
                        &row.message_id,
                        &row.tool_call_id,
                        &row.trace_id,
                        &proposer,
                        &row.created_at,
                        &state,
                        &version,
                        &row.state_by,
                        &row.state_at,
                        &row.decided_by,
                        &row.decided_at,
                        &row.reason,
                        &row.approved_sha256,
                        &row.claimed_by,
                        &row.claimed_at,
                        &row.lease_until,
                        &result,
                        &row.error,
                        &row.finished_at,
                        &row.executable_sha256,
                        &approved_input,
                        &row.expires_at,
                    ],
                )
                .await;
            match inserted {
                Ok(Some(_)) => return Ok((row, true)),
                Ok(None) => {}
                Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                    return Err(Fail::Store(StoreError::Backend {
                        operation: op,
                        message: format!("id `{}` is already taken", row.id),
                    }));
                }
                Err(e) => return Err(e.into()),
            }
            // A duplicate of an earlier proposal: that one is the answer.
            let stmt = conn
                .prepare(
                    "select-dedup",
                    &format!("SELECT {COLUMNS} FROM pending_actions WHERE dedup_key = $1"),
                )
                .await?;
            match conn.client.query_opt(&stmt, &[&dedup]).await? {
                Some(existing) => Ok((read_row(&existing)?, false)),
                None => Err(Fail::Store(StoreError::Backend {
                    operation: op,
                    message: "the proposal conflicted with a row that is gone".to_owned(),
                })),
            }
        })
    }

    fn get(&self, id: &str) -> Result<Option<PendingAction>, StoreError> {
        let id = id.to_owned();
        self.with_conn("reading a pending action", move |conn| async move {
            select_one(&conn, &id).await
        })?
        .transpose()
    }

    fn list(
        &self,
        filter: &ListFilter,
    ) -> Result<Vec<Result<PendingAction, StoreError>>, StoreError> {
        let filter = filter.clone();
        self.with_conn("listing pending actions", move |conn| async move {
            let mut sql = format!("SELECT {COLUMNS} FROM pending_actions WHERE true");
            let mut args: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
            let mut push = |clause: &str, value: Box<dyn ToSql + Sync + Send>| {
                args.push(value);
                sql.push_str(&format!(" AND {clause} ${}", args.len()));
            };
            if let Some(state) = filter.state {
                push("state =", Box::new(state.as_str().to_owned()));
            }
            if let Some(t) = filter.created_before {
                push("created_at <", Box::new(t));
            }
            if let Some(t) = filter.lease_expired_at {
                push("lease_until <=", Box::new(t));
            }
            if let Some(tool) = filter.tool_name.clone() {
                push("tool_name =", Box::new(tool));
            }
            if let Some(c) = filter.conversation_id.clone() {
                push("conversation_id =", Box::new(c));
            }
            if let Some(p) = filter.proposer_id.clone() {
                // `->>` of a proposer that is not an object is NULL.
                push("proposer ->> 'id' =", Box::new(p));
            }
            if let Some(terminal) = filter.terminal {
                sql.push_str(&format!(" AND state IN ({})", states_sql(terminal)));
            }
            if let Some(cursor) = filter.after.clone() {
                args.push(Box::new(cursor.at));
                args.push(Box::new(cursor.id));
                let (at, id) = (args.len() - 1, args.len());
                sql.push_str(" AND ");
                sql.push_str(&filter.order.after_sql(&format!("${at}"), &format!("${id}")));
            }
            sql.push_str(" ORDER BY ");
            sql.push_str(filter.order.sql());
            if let Some(limit) = filter.limit {
                sql.push_str(&format!(" LIMIT {}", to_i64(limit as u64)));
            }
            if let Some(offset) = filter.offset {
                sql.push_str(&format!(" OFFSET {}", to_i64(offset as u64)));
            }
            let params: Vec<&(dyn ToSql + Sync)> = args
                .iter()
                .map(|a| a.as_ref() as &(dyn ToSql + Sync))
                .collect();
            let rows = conn.client.query(&sql, &params).await?;
            Ok(rows.iter().map(read_row).collect())
        })
    }

    fn compare_and_set(
        &self,
        expected_version: u64,
        next: &PendingAction,
    ) -> Result<Cas, StoreError> {
        let op = "recording a decision";
        self.writable(op)?;
        let update = Update::new(expected_version, next)?;
        self.with_conn(op, move |conn| async move {
            if update.run(&conn).await? == 1 {
                return Ok(Cas::Applied);
            }
            Ok(match select_one(&conn, &update.row.id).await? {
                Some(current) => Cas::Conflict(Box::new(current?)),
                None => Cas::Missing,
            })
        })
    }

    fn claim_next(
        &self,
        tools: &[String],
        claim: &mut dyn FnMut(&PendingAction) -> Option<PendingAction>,
    ) -> Result<Option<PendingAction>, StoreError> {
        let op = "claiming an approved action";
        self.writable(op)?;
        let mut lease = self.checkout(op)?;
        let mut passed: Vec<String> = Vec::new();
        let mut begin = true;
        let outcome = loop {
            let candidate = match self.claim_candidate(&mut lease, tools, &passed, begin) {
                Ok(c) => c,
                Err(fail) => break Err(fail),
            };
            begin = false;
            let row = match candidate {
                None => break Ok(None),
                Some(Err(StoreError::CorruptRow { id, .. })) => {
                    passed.push(id);
                    continue;
                }
                Some(Err(e)) => break Err(Fail::Store(e)),
                Some(Ok(row)) => row,
            };
            let Some(next) = claim(&row) else {
                passed.push(row.id);
                continue;
            };
            let update = match Update::new(row.version, &next) {
                Ok(u) => u,
                Err(e) => break Err(Fail::Store(e)),
            };
            let conn = lease.conn();
            match self.block(async move { update.run(&conn).await }) {
                Ok(1) => break Ok(Some(next)),
                Ok(_) => passed.push(row.id),
                Err(fail) => break Err(fail),
            }
        };
        // Commit the claim (or give the locks back) before answering: the
        // claim is durable before anything is dispatched.
        let conn = lease.conn();
        let outcome = self.block(async move { finish(&conn.client, outcome).await });
        lease.in_transaction = false;
        lease.settle(&outcome);
        outcome.map_err(|f| self.error(op, f))
    }

    fn watch_approved(&self, wake: Wake) -> Result<bool, StoreError> {
        match self.inner.watchers.lock() {
            Ok(mut w) => w.push(wake),
            Err(p) => p.into_inner().push(wake),
        }
        self.start_listening();
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_url_is_refused_without_repeating_its_password() {
        let err = PostgresStore::open("postgres://app:s3cret@db:notaport/queue").unwrap_err();
        let text = err.to_string();
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("postgres://***@db:notaport/queue"), "{text}");
        let err = PostgresStore::open(
            "postgres://app:s3cret@127.0.0.1/queue?sslmode=verify-full&sslrootcert=%2Fnonexistent%2Fca.pem",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("sslrootcert `/nonexistent/ca.pem`"), "{err}");
        assert!(!err.contains("s3cret"), "{err}");
    }

    #[test]
    fn an_unreachable_server_is_a_clear_error_within_the_connect_timeout() {
        // A port nothing listens on (bound, then closed).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let started = Instant::now();
        let err = PostgresStore::open_with(
            &format!("postgres://app:s3cret@127.0.0.1:{port}/queue"),
            &PostgresOptions {
                connect_timeout: Duration::from_secs(2),
                ..PostgresOptions::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            err.contains("cannot reach postgres://***@127.0.0.1"),
            "{err}"
        );
        assert!(!err.contains("s3cret"), "{err}");
    }
}
