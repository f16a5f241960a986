//! Where an approval queue lives, from the text a person gives
//! (`serve --approvals`, `approvals --db`): a `postgres://` (or
//! `postgresql://`) URL is a PostgreSQL database; `sqlite:PATH` and a plain
//! path are an SQLite file. Any other `scheme://` is refused rather than
//! taken for a file name.

use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use super::store::{ApprovalStore, StoreError};

/// A parsed queue location.
#[derive(Clone, PartialEq, Eq)]
pub enum QueueLocation {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database.
    Postgres(PostgresUrl),
}

/// A PostgreSQL connection URL. It shows (`Display`, `Debug`) with its
/// password redacted; only the store reads the URL itself.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(String);

impl PostgresUrl {
    /// The URL with its password redacted.
    pub fn redacted(&self) -> String {
        redact(&self.0)
    }
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PostgresUrl({})", self.redacted())
    }
}

impl fmt::Display for QueueLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueLocation::Sqlite(path) => write!(f, "{}", path.display()),
            QueueLocation::Postgres(url) => url.fmt(f),
        }
    }
}

impl fmt::Debug for QueueLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueLocation::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            QueueLocation::Postgres(url) => f.debug_tuple("Postgres").field(url).finish(),
        }
    }
}

/// How a queue is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// For a host: created when missing, upgraded when older.
    Create,
    /// For an operator's decision: it must exist; an older one is upgraded.
    Existing,
    /// For a listing: it must exist, and nothing is written.
    ReadOnly,
}

impl QueueLocation {
    /// Reads a location as a person wrote it.
    pub fn parse(text: &OsStr) -> Result<Self, StoreError> {
        let Some(s) = text.to_str() else {
            // Not UTF-8, so not a URL: a file name.
            return Ok(QueueLocation::Sqlite(PathBuf::from(text)));
        };
        let refused = |detail: String| StoreError::Location {
            location: redact(s),
            detail,
        };
        let scheme = s.split_once(':').map(|(scheme, _)| scheme);
        match scheme.map(str::to_ascii_lowercase).as_deref() {
            Some("postgres" | "postgresql") if s.contains("://") => {
                Ok(QueueLocation::Postgres(PostgresUrl(s.to_owned())))
            }
            Some("sqlite") => {
                let path = s["sqlite:".len()..].trim_start_matches("//");
                if path.is_empty() {
                    return Err(refused(
                        "`sqlite:` names no file; write sqlite:PATH (or just the path)".to_owned(),
                    ));
                }
                Ok(QueueLocation::Sqlite(PathBuf::from(path)))
            }
            Some(other)
                if other.len() > 1
                    && s.contains("://")
                    && other
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
            {
                Err(refused(format!(
                    "`{other}://` is not a queue store; give a file path, sqlite:PATH or a \
                     postgres:// URL"
                )))
            }
            _ if looks_like_conninfo(s) => Err(StoreError::Location {
                // Never echoed: such a string carries its password in clear.
                location: "a key=value connection string".to_owned(),
                detail: "libpq's `host=… dbname=…` form is not read (it would have been taken \
                         for a file name); give a postgres:// URL, for example \
                         postgres://USER:PASSWORD@HOST:5432/DB?sslmode=require"
                    .to_owned(),
            }),
            _ => Ok(QueueLocation::Sqlite(PathBuf::from(s))),
        }
    }

    /// Opens the store (see [`OpenMode`]).
    pub fn open(&self, mode: OpenMode) -> Result<Arc<dyn ApprovalStore>, StoreError> {
        match self {
            QueueLocation::Sqlite(path) => open_sqlite(path, mode),
            QueueLocation::Postgres(url) => open_postgres(url, mode),
        }
    }
}

#[cfg(feature = "sqlite")]
fn open_sqlite(
    path: &std::path::Path,
    mode: OpenMode,
) -> Result<Arc<dyn ApprovalStore>, StoreError> {
    use super::SqliteStore;
    Ok(Arc::new(match mode {
        OpenMode::Create => SqliteStore::open(path)?,
        OpenMode::Existing => SqliteStore::open_existing(path)?,
        OpenMode::ReadOnly => SqliteStore::open_read_only(path)?,
    }))
}

#[cfg(not(feature = "sqlite"))]
fn open_sqlite(
    path: &std::path::Path,
    _mode: OpenMode,
) -> Result<Arc<dyn ApprovalStore>, StoreError> {
    Err(StoreError::Location {
        location: path.display().to_string(),
        detail: "this build has no SQLite store (the `sqlite` feature of objectstack-bridge)"
            .to_owned(),
    })
}

#[cfg(feature = "postgres")]
fn open_postgres(url: &PostgresUrl, mode: OpenMode) -> Result<Arc<dyn ApprovalStore>, StoreError> {
    use super::PostgresStore;
    Ok(Arc::new(match mode {
        OpenMode::Create => PostgresStore::open(&url.0)?,
        OpenMode::Existing => PostgresStore::open_existing(&url.0)?,
        OpenMode::ReadOnly => PostgresStore::open_read_only(&url.0)?,
    }))
}

#[cfg(not(feature = "postgres"))]
fn open_postgres(url: &PostgresUrl, _mode: OpenMode) -> Result<Arc<dyn ApprovalStore>, StoreError> {
    Err(StoreError::Location {
        location: url.redacted(),
        detail: "this build has no PostgreSQL store (the `postgres` feature of \
                 objectstack-bridge); use an SQLite file, or a build with the feature"
            .to_owned(),
    })
}

/// `url` with its password (userinfo, and a `password=` parameter) hidden.
/// Whether `s` reads as libpq's `key=value` connection string: one of its
/// keywords followed by `=`, at the start or after a space.
fn looks_like_conninfo(s: &str) -> bool {
    const KEYWORDS: [&str; 8] = [
        "host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "service",
    ];
    s.split_whitespace().any(|word| {
        word.split_once('=')
            .is_some_and(|(key, _)| KEYWORDS.contains(&key.to_ascii_lowercase().as_str()))
    })
}

pub(crate) fn redact(url: &str) -> String {
    let shown = crate::redact::url(url).into_owned();
    let Some((base, query)) = shown.split_once('?') else {
        return shown;
    };
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
            _ => p.to_owned(),
        })
        .collect();
    format!("{base}?{}", params.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<QueueLocation, StoreError> {
        QueueLocation::parse(OsStr::new(s))
    }

    #[test]
    fn urls_and_paths_go_to_their_stores() {
        assert!(matches!(
            parse("postgres://app@db/queue").unwrap(),
            QueueLocation::Postgres(_)
        ));
        assert!(matches!(
            parse("PostgreSQL://app@db/queue").unwrap(),
            QueueLocation::Postgres(_)
        ));
        assert_eq!(
            parse("sqlite:q.db").unwrap(),
            QueueLocation::Sqlite("q.db".into())
        );
        assert_eq!(
            parse("sqlite:///var/q.db").unwrap(),
            QueueLocation::Sqlite("/var/q.db".into())
        );
        assert_eq!(
            parse("objectstack-approvals.sqlite").unwrap(),
            QueueLocation::Sqlite("objectstack-approvals.sqlite".into())
        );
        assert_eq!(
            parse("C:\\queues\\q.db").unwrap(),
            QueueLocation::Sqlite("C:\\queues\\q.db".into())
        );
        assert_eq!(
            parse("postgres-backup.db").unwrap(),
            QueueLocation::Sqlite("postgres-backup.db".into())
        );
    }

    #[test]
    fn a_libpq_key_value_string_is_refused_not_taken_for_a_file_and_not_echoed() {
        for text in [
            "host=db dbname=queue user=app password=hunter2",
            "dbname=queue",
            "HOST=db password=hunter2",
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains("give a postgres:// URL"), "{err}");
            assert!(
                !err.contains("hunter2") && !err.contains("dbname=queue"),
                "{err}"
            );
        }
        // A file name with `=` in it that names no keyword stays a file.
        assert_eq!(
            parse("queue=1.sqlite").unwrap(),
            QueueLocation::Sqlite("queue=1.sqlite".into())
        );
    }

    #[test]
    fn other_schemes_and_empty_sqlite_are_refused_without_the_password() {
        let err = parse("mysql://root:hunter2@db/q").unwrap_err().to_string();
        assert!(err.contains("`mysql://` is not a queue store"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert!(
            parse("sqlite:")
                .unwrap_err()
                .to_string()
                .contains("sqlite:PATH")
        );
    }

    #[test]
    fn a_postgres_url_never_shows_its_password() {
        let loc = parse("postgres://app:s3cret@db:5432/queue?password=other").unwrap();
        for shown in [loc.to_string(), format!("{loc:?}")] {
            assert!(
                !shown.contains("s3cret") && !shown.contains("other"),
                "{shown}"
            );
            assert!(
                shown.contains("postgres://***@db:5432/queue?password=***"),
                "{shown}"
            );
        }
    }

    #[cfg(not(feature = "postgres"))]
    #[test]
    fn a_build_without_postgres_says_so() {
        let err = parse("postgres://app:s3cret@db/queue")
            .unwrap()
            .open(OpenMode::Create)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("no PostgreSQL store"), "{err}");
        assert!(!err.contains("s3cret"), "{err}");
    }
}
