//! The `github` format: GitHub Actions workflow commands that annotate the
//! pull request diff.

use std::io::{self, Write};

use crate::finding::{Finding, Summary};
use crate::render::summary_line;

/// One `::warning ...::message` or `::error ...::message` line per finding,
/// then a `::notice::` summary.
pub fn github(findings: &[Finding], files: usize) -> String {
    let mut out = Vec::new();
    // Writing to memory does not fail.
    if write_github(findings, files, &mut out).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// [`github`], written to `out` a line at a time: a stack with tens of
/// thousands of findings is not held as one string.
pub fn write_github(findings: &[Finding], files: usize, out: &mut impl Write) -> io::Result<()> {
    for f in findings {
        let mut props = Vec::new();
        if let Some(l) = &f.location {
            props.push(format!("file={}", property(&l.file)));
            props.push(format!("line={}", l.line));
            props.push(format!("col={}", l.column));
        }
        props.push(format!(
            "title={}",
            property(&format!("{} ({})", f.rule, f.path))
        ));
        let text = format!("{}\n\nHint: {}", f.message, f.hint);
        writeln!(out, "::{} {}::{}", f.severity, props.join(","), data(&text))?;
    }
    writeln!(
        out,
        "::notice title=objectstack-ai lint::{}",
        data(&summary_line(&Summary::of(findings, files)))
    )
}

/// Escapes a workflow command's message. The log shows it to a person, so
/// what a terminal would act on (escape sequences, BEL, C1 controls,
/// bidirectional overrides) is written as `\uXXXX` first, as the human
/// report does.
fn data(s: &str) -> String {
    let s = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    objectstack_spec::text::terminal_safe(&s).into_owned()
}

/// Escapes a workflow command's property value.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(data("a%b\nc\rd"), "a%25b%0Ac%0Dd");
        assert_eq!(property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn nothing_a_terminal_acts_on_reaches_the_log() {
        let evil = "x\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}\nFORGED";
        assert_eq!(
            data(evil),
            "x\\u001b]0;pwned\\u0007\\u009b31m\\u202e%0AFORGED"
        );
        assert_eq!(property(evil), data(evil));
    }
}
