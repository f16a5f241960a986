//! Writing to standard output and standard error without ever panicking.
//!
//! `std`'s `println!` and `eprintln!` panic when the stream is closed
//! (`objectstack-ai lint 2>&1 | head -c 100`), which is exit code 101 and a
//! panic message. This crate's `println!`, `print!`, `eprintln!` and
//! `eprint!` are the macros below instead: `lib.rs` declares this module
//! first, so every later module sees them in place of `std`'s.
//!
//! - Standard output closed by its reader (a broken pipe): the rest of the
//!   output is dropped, and the command still exits with the code its
//!   input decides (0, 1 or 2). Reading only the head of a report is the
//!   reader's choice, not a failure of the command.
//! - Standard output failing otherwise (a full disk): `error: cannot write
//!   to standard output` on stderr and exit code 2, as the commands' own
//!   buffered writers do.
//! - Standard error failing in any way: the message is dropped; there is
//!   nowhere else to say it.

use std::io::{self, Write};

/// Writes `text` to standard output; a closed pipe is not an error.
pub(crate) fn stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    ignore_broken_pipe(
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush()),
    )
    .map_err(|err| anyhow::Error::new(err).context("cannot write to standard output"))
}

/// `Ok` for a write that failed only because the reader went away.
pub(crate) fn ignore_broken_pipe(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// What the `print!` macros call. (The commands write their output through
/// [`stdout`] or their own writers; the macros are here so that a
/// `println!` added later cannot panic either.)
#[allow(dead_code)]
pub(crate) fn print_fmt(args: std::fmt::Arguments<'_>) {
    let written = io::stdout().lock().write_fmt(args);
    if let Err(err) = ignore_broken_pipe(written) {
        eprint_fmt(format_args!(
            "error: cannot write to standard output: {err}\n"
        ));
        std::process::exit(i32::from(crate::EXIT_UNUSABLE));
    }
}

/// What the `eprint!` macros call.
pub(crate) fn eprint_fmt(args: std::fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// `std::println!` that never panics (see the module docs).
#[allow(unused_macros)]
macro_rules! println {
    () => {
        $crate::out::print_fmt(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::print_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `std::print!` that never panics (see the module docs).
#[allow(unused_macros)]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::out::print_fmt(format_args!($($arg)*))
    };
}

/// `std::eprintln!` that never panics (see the module docs).
macro_rules! eprintln {
    () => {
        $crate::out::eprint_fmt(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::eprint_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `std::eprint!` that never panics (see the module docs).
#[allow(unused_macros)]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::out::eprint_fmt(format_args!($($arg)*))
    };
}
