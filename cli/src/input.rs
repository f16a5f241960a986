//! Reading input files for every command, with errors that say where.
//!
//! A file that cannot be read, is not UTF-8, is not JSON or is not an
//! object at the top level is *unusable input*: commands report it and exit
//! with code 2. So is a file of more than 1 GiB ([`MAX_BYTES`]; the
//! `OBJECTSTACK_AI_MAX_INPUT_BYTES` environment variable lowers it): the
//! limit counts the bytes read, so a pipe or `/dev/zero` cannot make a
//! command read without end.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// A stack file, read and parsed.
#[derive(Debug)]
pub(crate) struct Document {
    /// The parsed top-level object.
    pub(crate) root: Map<String, Value>,
}

/// The largest input read (1 GiB), whatever the file is: a regular file,
/// a pipe, process substitution or a device such as `/dev/zero`.
pub(crate) const MAX_BYTES: u64 = 1 << 30;

/// The environment variable that lowers [`MAX_BYTES`] (a number of bytes;
/// values above the default are the default).
pub(crate) const MAX_BYTES_VAR: &str = "OBJECTSTACK_AI_MAX_INPUT_BYTES";

/// The input size limit in force: [`MAX_BYTES`], or less if
/// [`MAX_BYTES_VAR`] says so.
pub(crate) fn max_bytes() -> u64 {
    std::env::var(MAX_BYTES_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(MAX_BYTES, |n| n.min(MAX_BYTES))
}

/// A size limit for people: `1 GiB`, `64 MiB`, or a number of bytes.
fn human_size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b => format!("{b} bytes"),
    }
}

/// "more than 1 GiB, ...": what a file over `limit` bytes is.
fn too_large(limit: u64) -> String {
    format!(
        "more than {}, the largest input read: check that it is the file you meant",
        human_size(limit)
    )
}

/// Why a file could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The operating system refused.
    Io(std::io::Error),
    /// The path is a directory.
    Directory,
    /// More bytes than the limit (in bytes) came.
    TooLarge(u64),
}

impl std::fmt::Display for ReadError {
    /// Said of the file ("it"), for messages that name the path first.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(err) => write!(f, "cannot read it: {err}"),
            ReadError::Directory => f.write_str("it is a directory"),
            ReadError::TooLarge(limit) => write!(f, "it is {}", too_large(*limit)),
        }
    }
}

/// Reads at most [`max_bytes`] from `path`, counting the bytes that really
/// come (file metadata says 0 for pipes and devices, and a file can grow
/// while it is read), so memory stays bounded whatever the path is.
pub(crate) fn read_bounded(path: &Path) -> Result<Vec<u8>, ReadError> {
    use std::io::Read as _;
    let limit = max_bytes();
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_dir() {
        return Err(ReadError::Directory);
    }
    // A regular file's size is a good first allocation (and saves the
    // doubling copies of a many-megabyte read); it is not trusted further.
    let hint = if meta.is_file() {
        meta.len().min(limit).saturating_add(1)
    } else {
        0
    };
    let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        return Err(ReadError::TooLarge(limit));
    }
    Ok(bytes)
}

/// [`read_bounded`], with errors that name the path; `what` is what the
/// file should be ("a stack file"), for a directory given instead.
pub(crate) fn read_limited(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    read_bounded(path).map_err(|err| match err {
        ReadError::Io(e) => anyhow::anyhow!("cannot read {}: {e}", path.display()),
        ReadError::Directory => anyhow::anyhow!("{} is a directory, not {what}", path.display()),
        ReadError::TooLarge(limit) => {
            anyhow::anyhow!("{} is {}", path.display(), too_large(limit))
        }
    })
}

/// A UTF-8 text file of at most [`max_bytes`] (a configuration file, a
/// baseline), with errors that name the path.
pub(crate) fn read_string(path: &Path, what: &str) -> anyhow::Result<String> {
    let bytes = read_limited(path, what)?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: the file is not valid UTF-8 (at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// A stack file's text, read and decoded but not parsed yet.
#[derive(Debug)]
pub(crate) struct Text {
    /// The path as the user gave it.
    pub(crate) path: PathBuf,
    /// The file, checked to be UTF-8 once when read.
    content: String,
    /// Where the text starts in `content` (after a byte-order mark).
    start: usize,
}

impl Text {
    /// The file's text (UTF-8, without a byte-order mark).
    pub(crate) fn text(&self) -> &str {
        // `start` is 0 or 3 (after a byte-order mark), a char boundary.
        self.content.get(self.start..).unwrap_or("")
    }

    /// Parses the text into the borrowed tree the lint reads, allocated in
    /// `arena`; errors as [`read_document`]'s.
    pub(crate) fn tree<'a>(
        &'a self,
        arena: &'a objectstack_spec::json::Arena,
    ) -> anyhow::Result<&'a objectstack_spec::json::Map<'a>> {
        // Checked to be UTF-8 when read: not again.
        objectstack_spec::json::parse_object(self.text(), arena)
            .map_err(|e| located(&self.path, self.content.as_bytes(), &e))
    }
}

/// Reads a stack file and checks that it is UTF-8, without parsing it.
pub(crate) fn read_text(path: &Path) -> anyhow::Result<Text> {
    let bytes = read_bytes(path)?;
    // One UTF-8 check, and no copy: the bytes become the `String`.
    let start = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let content = String::from_utf8(bytes).map_err(|err| {
        let bytes = err.as_bytes();
        match objectstack_spec::parse::decode_utf8(bytes) {
            Err(e) => located(path, bytes, &e),
            Ok(_) => anyhow::anyhow!("{}: the file is not valid UTF-8", path.display()),
        }
    })?;
    Ok(Text {
        path: path.to_owned(),
        content,
        start,
    })
}

/// Reads and parses a stack file.
pub(crate) fn read_document(path: &Path) -> anyhow::Result<Document> {
    let bytes = read_bytes(path)?;
    let root =
        objectstack_spec::parse::parse_document(&bytes).map_err(|e| located(path, &bytes, &e))?;
    Ok(Document { root })
}

/// Reads a stack file of at most [`max_bytes`].
fn read_bytes(path: &Path) -> anyhow::Result<Vec<u8>> {
    read_limited(path, "a stack file")
}

/// A parse error as `path:line:column: message`, saying so when the bytes
/// look like a binary file (a NUL in the first 8 KiB).
pub(crate) fn located(
    path: &Path,
    bytes: &[u8],
    err: &objectstack_spec::parse::ParseError,
) -> anyhow::Error {
    if bytes.iter().take(8192).any(|&b| b == 0) {
        anyhow::anyhow!(
            "{}:{err} (this looks like a binary file, not JSON)",
            path.display()
        )
    } else {
        anyhow::anyhow!("{}:{err}", path.display())
    }
}
