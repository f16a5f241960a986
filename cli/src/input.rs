//! Reading input files for every command, with errors that say where.
//!
//! A file that cannot be read, is not UTF-8, is not JSON or is not an
//! object at the top level is *unusable input*: commands report it and exit
//! with code 2. So is a file of more than 1 GiB ([`MAX_BYTES`]; the
//! `OBJECTSTACK_AI_MAX_INPUT_BYTES` environment variable lowers it): the
//! limit counts the bytes read, so a pipe or `/dev/zero` cannot make a
//! command read without end.
//!
//! A path of `-` ([`STDIN`]) is standard input, as in most command-line
//! tools, wherever a command reads a file (a stack, a configuration file,
//! a baseline, a registry dump); it can be named once a run (it can be
//! read only once). A file that is really called `-` is `./-`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

mod buffer;

pub(crate) use buffer::{Bytes, Utf8};

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
/// A value that is not a number of bytes is said once, on stderr, and the
/// default stays.
pub(crate) fn max_bytes() -> u64 {
    static SAID: std::sync::Once = std::sync::Once::new();
    let Some(value) = std::env::var_os(MAX_BYTES_VAR) else {
        return MAX_BYTES;
    };
    let text = value.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(n) => n.min(MAX_BYTES),
        Err(_) => {
            SAID.call_once(|| {
                eprintln!(
                    "warning: {MAX_BYTES_VAR} is `{}`, not a number of bytes; the input limit \
                     stays {}",
                    objectstack_spec::text::line_safe(&text),
                    human_size(MAX_BYTES)
                );
            });
            MAX_BYTES
        }
    }
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

/// The path that names standard input.
pub(crate) const STDIN: &str = "-";

/// Whether `path` names standard input ([`STDIN`]).
pub(crate) fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// Set once standard input has been taken: a second `-` would read
/// nothing and report the empty text as broken JSON.
static STDIN_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Why a file could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The operating system refused.
    Io(std::io::Error),
    /// `-` was named a second time.
    StdinAgain,
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
            ReadError::StdinAgain => f.write_str(STDIN_AGAIN),
            ReadError::TooLarge(limit) => write!(f, "it is {}", too_large(*limit)),
        }
    }
}

/// What a second `-` is told (the first may have been another argument's:
/// a configuration file, a baseline).
const STDIN_AGAIN: &str = "standard input (`-`) was already read for another argument, and can \
                           be read only once; name `-` once";

/// Reads at most [`max_bytes`] from `path` (standard input for `-`),
/// counting the bytes that really come (file metadata says 0 for pipes and
/// devices, and a file can grow while it is read), so memory stays bounded
/// whatever the path is.
pub(crate) fn read_bounded(path: &Path) -> Result<Bytes, ReadError> {
    read_bounded_into(path, true)
}

/// [`read_bounded`]; a large file goes into a mapping only if `mapped`
/// (else into a vector, for a caller that turns the bytes into a `String`
/// and would otherwise copy them out of the mapping).
fn read_bounded_into(path: &Path, mapped: bool) -> Result<Bytes, ReadError> {
    let limit = max_bytes();
    if is_stdin(path) {
        if STDIN_TAKEN.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Err(ReadError::StdinAgain);
        }
        return read_to_limit(std::io::stdin().lock(), 0, limit).map(Bytes::Heap);
    }
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_dir() {
        return Err(ReadError::Directory);
    }
    if meta.is_file() && meta.len() >= PARALLEL_READ_FROM {
        if meta.len() > limit {
            return Err(ReadError::TooLarge(limit));
        }
        if let Some(bytes) = usize::try_from(meta.len())
            .ok()
            .and_then(|len| read_in_parallel(&file, len, mapped))
        {
            return Ok(bytes);
        }
        // The file changed size while it was read: read it again, in
        // order, by the limit (positioned reads left the offset at 0).
    }
    // A regular file's size is a good first allocation (and saves the
    // doubling copies of a many-megabyte read); it is not trusted further.
    let hint = if meta.is_file() {
        meta.len().min(limit).saturating_add(1)
    } else {
        0
    };
    read_to_limit(file, hint, limit).map(Bytes::Heap)
}

/// Reads `source` to its end, or to one byte past `limit` (then
/// [`ReadError::TooLarge`]); `hint` is the first allocation.
fn read_to_limit(source: impl std::io::Read, hint: u64, limit: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read as _;
    let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
    source
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        return Err(ReadError::TooLarge(limit));
    }
    Ok(bytes)
}

/// Regular files at least this large are read by several threads at once.
/// Copying a large stack out of the page cache into a fresh buffer (and
/// faulting that buffer in) is most of the time a command spends reading
/// it, and it divides: a 57 MiB file takes about 55 ms on two threads
/// against 85 ms to 125 ms on one.
const PARALLEL_READ_FROM: u64 = 8 << 20;

/// Reads the `len` bytes of `file` in one piece per thread (positioned
/// reads, so the pieces do not share an offset). `None` when the file
/// turns out shorter or longer than `len` (it changed while read) or a
/// read fails: the caller then reads it in order.
#[cfg(unix)]
fn read_in_parallel(file: &std::fs::File, len: usize, mapped: bool) -> Option<Bytes> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt as _;
    // A mapping advised for huge pages on Linux (see `buffer`), when the
    // caller keeps the bytes; a vector when they become a `String`.
    let mut bytes = if mapped {
        Bytes::zeroed(len)
    } else {
        Bytes::Heap(vec![0; len])
    };
    let chunk = len.div_ceil(rayon::current_num_threads().max(1)).max(1);
    let complete = bytes.par_chunks_mut(chunk).enumerate().all(|(i, piece)| {
        u64::try_from(i.saturating_mul(chunk))
            .is_ok_and(|offset| file.read_exact_at(piece, offset).is_ok())
    });
    // It must end where its size said: a byte past the end means it grew.
    let mut past_end = [0u8; 1];
    let ended =
        u64::try_from(len).is_ok_and(|end| matches!(file.read_at(&mut past_end, end), Ok(0)));
    (complete && ended).then_some(bytes)
}

#[cfg(not(unix))]
fn read_in_parallel(_file: &std::fs::File, _len: usize, _mapped: bool) -> Option<Bytes> {
    None
}

/// [`read_bounded`], with errors that name the path; `what` is what the
/// file should be ("a stack file"), for a directory given instead.
pub(crate) fn read_limited(path: &Path, what: &str) -> anyhow::Result<Bytes> {
    read_limited_into(path, what, true)
}

/// [`read_limited`], into a mapping only if `mapped` (see
/// [`read_bounded_into`]).
fn read_limited_into(path: &Path, what: &str, mapped: bool) -> anyhow::Result<Bytes> {
    read_bounded_into(path, mapped).map_err(|err| match err {
        ReadError::Io(e) => anyhow::anyhow!("cannot read {}: {e}", path.display()),
        ReadError::Directory => anyhow::anyhow!("{} is a directory, not {what}", path.display()),
        ReadError::StdinAgain => anyhow::anyhow!("{STDIN_AGAIN}"),
        ReadError::TooLarge(limit) => {
            anyhow::anyhow!("{} is {}", path.display(), too_large(limit))
        }
    })
}

/// A UTF-8 text file of at most [`max_bytes`] (a configuration file, a
/// baseline), with errors that name the path.
pub(crate) fn read_string(path: &Path, what: &str) -> anyhow::Result<String> {
    // Into a vector, which becomes the `String` without a copy.
    let bytes = read_limited_into(path, what, false)?.into_vec();
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
    content: Utf8,
}

impl Text {
    /// The file's text (UTF-8, without a byte-order mark).
    pub(crate) fn text(&self) -> &str {
        self.content.text()
    }

    /// Parses the text into the borrowed tree the lint reads, allocated in
    /// `arena`; errors as [`read_document`]'s.
    ///
    /// A large file's last top-level entry is read on a second thread,
    /// into `side` (see [`objectstack_spec::json::parse_object_on_two_threads`]).
    pub(crate) fn tree<'a>(
        &'a self,
        arena: &'a objectstack_spec::json::Arena,
        side: &'a mut objectstack_spec::json::Arena,
    ) -> anyhow::Result<&'a objectstack_spec::json::Map<'a>> {
        // Checked to be UTF-8 when read: not again.
        objectstack_spec::json::parse_object_on_two_threads(self.text(), arena, side)
            .map_err(|e| located(&self.path, self.content.bytes(), &e))
    }
}

/// An arena for the trees of texts of `bytes` bytes in all, reserved up
/// front: a tree takes about as many bytes as its text, and an arena that
/// grows while two threads parse makes them wait on each other's page
/// faults (see `objectstack_spec::json::Arena::with_capacity`). Each
/// file's second arena, for the part [`Text::tree`] reads on a second
/// thread, is reserved at the file's size too: that part is the last
/// top-level entry, nearly all of a large stack (its skills). Only what
/// is written is used.
pub(crate) fn tree_arena(bytes: usize) -> objectstack_spec::json::Arena {
    objectstack_spec::json::Arena::with_capacity(bytes.saturating_add(bytes / 16))
}

/// Reads a stack file and checks that it is UTF-8, without parsing it.
pub(crate) fn read_text(path: &Path) -> anyhow::Result<Text> {
    read_text_into(path, true)
}

/// [`read_text`], a large file into a mapping only if `mapped` (the
/// benchmarks compare the two).
pub(crate) fn read_text_into(path: &Path, mapped: bool) -> anyhow::Result<Text> {
    let bytes = read_limited_into(path, "a stack file", mapped)?;
    // One UTF-8 check, and no copy: the bytes are kept with their text.
    let content = Utf8::check(bytes).map_err(|(bytes, _)| {
        match objectstack_spec::parse::decode_utf8(&bytes) {
            Err(e) => located(path, &bytes, &e),
            Ok(_) => anyhow::anyhow!("{}: the file is not valid UTF-8", path.display()),
        }
    })?;
    Ok(Text {
        path: path.to_owned(),
        content,
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
fn read_bytes(path: &Path) -> anyhow::Result<Bytes> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_file_reads_back_byte_for_byte() {
        let dir = std::env::temp_dir().join(format!("osk-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        // Larger than the parallel threshold, and not a multiple of any
        // thread count, so the last piece is short.
        let len = usize::try_from(PARALLEL_READ_FROM).unwrap_or(1 << 23) + 12_345;
        let expected: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let path = dir.join("large.bin");
        std::fs::write(&path, &expected).unwrap_or_default();
        let read = read_bounded(&path).unwrap_or_else(|e| panic!("{e}"));
        // On Linux a large file is read into a mapping of its own (in huge
        // pages where the system has them).
        #[cfg(target_os = "linux")]
        assert!(matches!(read, Bytes::Mapped(_)), "{read:?}");
        let read = read.into_vec();
        assert!(read == expected, "{} bytes read of {len}", read.len());
        // Bytes that become a `String` are read into a vector (no copy out
        // of a mapping), to the same bytes.
        let heap = read_bounded_into(&path, false).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(heap, Bytes::Heap(_)), "{heap:?}");
        assert!(heap.into_vec() == expected);
        // A small file takes the sequential path, to the same effect.
        let small = dir.join("small.bin");
        std::fs::write(&small, b"{}").unwrap_or_default();
        let read = read_bounded(&small)
            .map(Bytes::into_vec)
            .unwrap_or_default();
        assert_eq!(read, b"{}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_file_that_is_not_the_size_it_said_is_not_taken_from_the_parallel_read() {
        let dir = std::env::temp_dir().join(format!("osk-input-grow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let path = dir.join("grown.bin");
        std::fs::write(&path, vec![7u8; 4096]).unwrap_or_default();
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{e}"));
        // Told it is shorter than it is (it grew), or longer (it shrank).
        assert!(read_in_parallel(&file, 4000, true).is_none());
        assert!(read_in_parallel(&file, 5000, true).is_none());
        let read = read_in_parallel(&file, 4096, true).map(Bytes::into_vec);
        assert_eq!(read, Some(vec![7u8; 4096]));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
