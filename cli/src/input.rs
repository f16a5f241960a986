//! Reading input files for every command, with errors that say where.
//!
//! A file that cannot be read, is not UTF-8, is not JSON or is not an
//! object at the top level is *unusable input*: commands report it and exit
//! with code 2.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{Map, Value};

/// A stack file, read and parsed.
#[derive(Debug)]
pub(crate) struct Document {
    /// The path as the user gave it.
    pub(crate) path: PathBuf,
    /// The file's text (UTF-8, without a byte-order mark).
    pub(crate) text: String,
    /// The parsed top-level object.
    pub(crate) root: Map<String, Value>,
}

/// The largest file read (1 GiB); anything larger is refused up front.
const MAX_BYTES: u64 = 1 << 30;

/// Reads and parses a stack file.
pub(crate) fn read_document(path: &Path) -> anyhow::Result<Document> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.is_dir() {
        anyhow::bail!("{} is a directory, not a stack file", path.display());
    }
    if meta.len() > MAX_BYTES {
        anyhow::bail!(
            "{} is {} bytes, larger than the {} byte limit",
            path.display(),
            meta.len(),
            MAX_BYTES
        );
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = objectstack_spec::parse::decode_utf8(&bytes)
        .map_err(|e| located(path, &bytes, &e))?
        .to_owned();
    let root = objectstack_spec::parse::parse_document(text.as_bytes())
        .map_err(|e| located(path, &bytes, &e))?;
    Ok(Document {
        path: path.to_owned(),
        text,
        root,
    })
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
