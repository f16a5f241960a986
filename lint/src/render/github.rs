//! The `github` format: GitHub Actions workflow commands that annotate the
//! pull request diff.

use crate::finding::{Finding, Summary};
use crate::render::summary_line;

/// One `::warning ...::message` or `::error ...::message` line per finding,
/// then a `::notice::` summary.
pub fn github(findings: &[Finding], files: usize) -> String {
    let mut out = String::new();
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
        out.push_str(&format!(
            "::{} {}::{}\n",
            f.severity,
            props.join(","),
            data(&text)
        ));
    }
    out.push_str(&format!(
        "::notice title=objectstack-ai lint::{}\n",
        data(&summary_line(&Summary::of(findings, files)))
    ));
    out
}

/// Escapes a workflow command's message.
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
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
        assert_eq!(data("a%b\nc"), "a%25b%0Ac");
        assert_eq!(property("a:b,c"), "a%3Ab%2Cc");
    }
}
