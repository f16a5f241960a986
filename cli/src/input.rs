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
    /// The parsed top-level object.
    pub(crate) root: Map<String, Value>,
}

/// The largest file read (1 GiB); anything larger is refused up front.
const MAX_BYTES: u64 = 1 << 30;

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

/// Reads a file of at most [`MAX_BYTES`].
fn read_bytes(path: &Path) -> anyhow::Result<Vec<u8>> {
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
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
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
