//! The stores the conformance suite runs against: a fresh SQLite file, or a
//! fresh schema in the PostgreSQL database named by
//! `OBJECTSTACK_TEST_POSTGRES_URL` (a throwaway cluster: `.ci/postgres.sh`).
//!
//! Without that variable the PostgreSQL tests say why and pass; with `CI`
//! set (or `OBJECTSTACK_TEST_POSTGRES_REQUIRED`), its absence fails them.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::sync::Arc;

use objectstack_bridge::approval::{ApprovalStore, OpenMode, QueueLocation, SqliteStore};

use crate::approval_support::{Scratch, scratch_dir};

/// The variable naming the test server.
pub(crate) const URL_VAR: &str = "OBJECTSTACK_TEST_POSTGRES_URL";

/// Which store a fixture is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Sqlite,
    Postgres,
}

/// One fresh, empty queue.
pub(crate) struct Fixture {
    pub(crate) kind: Kind,
    /// What a person would pass as `--approvals`: the file, or the URL
    /// (with the fixture's own schema on its search path).
    pub(crate) location: String,
    scratch: Scratch,
    #[cfg(feature = "postgres")]
    schema: Option<String>,
    /// This test's turn on the database's announcements (PostgreSQL only).
    #[cfg(feature = "postgres")]
    _turn: Option<Turn>,
}

/// PostgreSQL announces the approvals of every queue in a database on one
/// channel, so a test that asserts that nothing is announced, or that
/// kills the listeners, runs alone; the others share the database.
#[cfg(feature = "postgres")]
static ANNOUNCEMENTS: std::sync::RwLock<()> = std::sync::RwLock::new(());

#[cfg(feature = "postgres")]
enum Turn {
    Shared(#[allow(dead_code)] std::sync::RwLockReadGuard<'static, ()>),
    Alone(#[allow(dead_code)] std::sync::RwLockWriteGuard<'static, ()>),
}

impl Fixture {
    pub(crate) fn sqlite(name: &str) -> Option<Fixture> {
        let scratch = scratch_dir(name);
        Some(Fixture {
            kind: Kind::Sqlite,
            location: scratch.join("q.db").display().to_string(),
            scratch,
            #[cfg(feature = "postgres")]
            schema: None,
            #[cfg(feature = "postgres")]
            _turn: None,
        })
    }

    /// A fresh schema on the test server, or `None` (after saying why)
    /// when none is configured outside CI.
    pub(crate) fn postgres(name: &str) -> Option<Fixture> {
        Self::postgres_in(name, false)
    }

    /// [`Fixture::postgres`] for a test no other PostgreSQL test may run
    /// beside (see [`ANNOUNCEMENTS`]).
    #[allow(dead_code)]
    pub(crate) fn postgres_alone(name: &str) -> Option<Fixture> {
        Self::postgres_in(name, true)
    }

    fn postgres_in(name: &str, alone: bool) -> Option<Fixture> {
        let required = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
            || std::env::var_os("OBJECTSTACK_TEST_POSTGRES_REQUIRED").is_some();
        #[cfg(not(feature = "postgres"))]
        {
            let _ = alone;
            assert!(
                !required,
                "the PostgreSQL store tests must run here: build with `--features postgres`"
            );
            say(&format!(
                "skipping the PostgreSQL case of `{name}`: objectstack-bridge was built without \
                 its `postgres` feature"
            ));
            None
        }
        #[cfg(feature = "postgres")]
        {
            let Ok(url) = std::env::var(URL_VAR) else {
                assert!(
                    !required,
                    "{URL_VAR} is not set, and the PostgreSQL store tests must run here: start \
                     a server with `eval \"$(bash .ci/postgres.sh start)\"`"
                );
                say(&format!(
                    "skipping the PostgreSQL case of `{name}`: no server configured (set \
                     {URL_VAR}, e.g. with `eval \"$(bash .ci/postgres.sh start)\"`)"
                ));
                return None;
            };
            let turn = if alone {
                Turn::Alone(ANNOUNCEMENTS.write().unwrap_or_else(|e| e.into_inner()))
            } else {
                Turn::Shared(ANNOUNCEMENTS.read().unwrap_or_else(|e| e.into_inner()))
            };
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let schema = format!(
                "t_{}_{}_{}",
                name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            );
            pg::admin(&url, &format!("CREATE SCHEMA {schema}"));
            let sep = if url.contains('?') { '&' } else { '?' };
            Some(Fixture {
                kind: Kind::Postgres,
                location: format!("{url}{sep}options=-csearch_path%3D{schema}"),
                scratch: scratch_dir(name),
                schema: Some(schema),
                _turn: Some(turn),
            })
        }
    }

    /// The fixture's own PostgreSQL schema.
    #[cfg(feature = "postgres")]
    pub(crate) fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// A scratch directory of the test's own (ledgers, id lists).
    pub(crate) fn dir(&self) -> &std::path::Path {
        &self.scratch
    }

    pub(crate) fn parsed(&self) -> QueueLocation {
        QueueLocation::parse(OsStr::new(&self.location)).unwrap()
    }

    /// A new connection to the queue, as a host opens it.
    pub(crate) fn open(&self) -> Arc<dyn ApprovalStore> {
        self.parsed().open(OpenMode::Create).unwrap()
    }

    /// The queue as `approvals list` opens it.
    pub(crate) fn open_read_only(&self) -> Arc<dyn ApprovalStore> {
        self.parsed().open(OpenMode::ReadOnly).unwrap()
    }

    /// Runs SQL against the queue behind the store's back (tampering,
    /// fixtures). `$ID` in `sql` is replaced by `id`.
    pub(crate) fn raw(&self, sql: &str) -> Result<(), String> {
        match self.kind {
            Kind::Sqlite => {
                let conn = rusqlite::Connection::open(&self.location).unwrap();
                conn.execute_batch(sql).map_err(|e| e.to_string())
            }
            Kind::Postgres => {
                #[cfg(feature = "postgres")]
                {
                    pg::run(&self.location, sql)
                }
                #[cfg(not(feature = "postgres"))]
                unreachable!()
            }
        }
    }

    /// Whether the store's own consistency check passes.
    pub(crate) fn check(&self) {
        if self.kind == Kind::Sqlite {
            SqliteStore::open_existing(std::path::Path::new(&self.location))
                .unwrap()
                .integrity_check()
                .unwrap();
        }
    }
}

/// Straight to stderr, past the test harness's capture, so a skip is seen.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

impl Drop for Fixture {
    fn drop(&mut self) {
        #[cfg(feature = "postgres")]
        if let (Some(schema), Ok(url)) = (&self.schema, std::env::var(URL_VAR)) {
            let _ = pg::run(&url, &format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        }
    }
}

/// A few statements over a plain connection (on a runtime of their own).
#[cfg(feature = "postgres")]
pub(crate) mod pg {
    pub(crate) fn run(url: &str, sql: &str) -> Result<(), String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .map_err(|e| e.to_string())?;
            let driver = tokio::spawn(connection);
            let out = client.batch_execute(sql).await.map_err(|e| {
                e.as_db_error()
                    .map_or_else(|| e.to_string(), |d| d.message().to_owned())
            });
            drop(client);
            let _ = driver.await;
            out
        })
    }

    pub(crate) fn admin(url: &str, sql: &str) {
        run(url, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// One value of a query.
    pub(crate) fn value(url: &str, sql: &str) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .unwrap();
            let driver = tokio::spawn(connection);
            let rows = client.simple_query(sql).await.unwrap();
            drop(client);
            let _ = driver.await;
            rows.into_iter()
                .find_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => {
                        Some(r.get(0).unwrap_or("").to_owned())
                    }
                    _ => None,
                })
                .unwrap_or_default()
        })
    }
}
