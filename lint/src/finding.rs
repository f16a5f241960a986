//! What a rule reports: a [`Finding`], its [`Severity`] and where it is.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How serious a finding is once configuration has been applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth fixing; does not fail the run.
    Warning,
    /// Fails the run (exit code 1).
    Error,
}

impl Severity {
    /// `"warning"` or `"error"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "warning" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            other => Err(format!(
                "unknown severity `{other}`: write `warning` or `error`"
            )),
        }
    }
}

/// Where the offending value sits in its file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    /// The file, as reported (relative to the working directory when the
    /// input was given that way).
    pub file: std::sync::Arc<str>,
    /// 1-based line of the value's first byte.
    pub line: usize,
    /// 1-based column of the value's first byte, counted in characters.
    pub column: usize,
    /// Byte offset of the value's first byte.
    pub byte_start: usize,
    /// Byte offset just past the value's last byte.
    pub byte_end: usize,
}

/// One problem found in a stack.
///
/// Serialises to the stable JSON shape documented at the crate root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The rule's stable kebab-case id (or a `spec` validation id).
    pub rule: std::borrow::Cow<'static, str>,
    /// The severity after configuration.
    pub severity: Severity,
    /// A short human description of the place, e.g.
    /// `skill "case_triage" · tools`.
    #[serde(rename = "where")]
    pub where_: String,
    /// The lenient JSON path of the offending value, e.g.
    /// `skills[2].tools[0]` (indices count only the entries that are
    /// records, as upstream does).
    pub path: String,
    /// What is wrong and what it means at run time.
    pub message: Text,
    /// How to fix it.
    pub hint: Text,
    /// The name that did not resolve, where there is one.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// The name it probably meant, if any.
    pub suggestion: Option<String>,
    /// Where the offending value is in its file (absent when the stack was
    /// not read from text).
    pub location: Option<Location>,
}

impl Finding {
    /// The file the finding is in, or `""` when it has no location.
    pub fn file(&self) -> &str {
        self.location.as_ref().map_or("", |l| &l.file)
    }
}

/// A finding's message or hint: read it as a string (`Display`,
/// [`Text::to_cow`], `to_string()`; serialised as a JSON string; equal
/// when the texts are).
///
/// Most rules write their text when they report. A rule that can report
/// tens of thousands of findings on one stack (`ai-skill-tool-unresolved`
/// on a large stack with many misses) keeps instead the few names its text
/// is made of, shared by the message and the hint, and writes the text
/// each time it is read: a report of 50,000 findings then holds names, not
/// 50 MB of prose.
///
/// ```
/// use objectstack_lint::Text;
/// let text = Text::from("Rename the record.");
/// assert_eq!(text.to_cow(), "Rename the record.");
/// assert_eq!(text.to_string(), "Rename the record.");
/// ```
#[derive(Clone)]
pub struct Text(Repr);

/// Writes a deferred text from its parts.
pub(crate) type WriteText = fn(&Parts, &mut fmt::Formatter<'_>) -> fmt::Result;

#[derive(Clone)]
enum Repr {
    Written(Box<str>),
    Deferred { parts: Parts, write: WriteText },
}

/// The parts a deferred text is written from, in one shared allocation
/// (a part a line: its length in decimal, `:`, the part), not one per
/// part: a report can hold tens of thousands of them.
#[derive(Clone)]
pub(crate) struct Parts(Arc<str>);

impl Parts {
    /// The parts, in order.
    pub(crate) fn new(parts: &[&str]) -> Self {
        use std::fmt::Write as _;
        let mut joined = String::with_capacity(parts.iter().map(|p| p.len() + 8).sum());
        for part in parts {
            // Writing into a `String` cannot fail.
            let _ = write!(joined, "{}:{part}", part.len());
        }
        Parts(joined.into())
    }

    /// The parts, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let mut rest: &str = &self.0;
        std::iter::from_fn(move || {
            let (len, tail) = rest.split_once(':')?;
            let len: usize = len.parse().ok()?;
            let part = tail.get(..len)?;
            rest = tail.get(len..).unwrap_or_default();
            Some(part)
        })
    }

    /// Part `i`, if there is one.
    pub(crate) fn get(&self, i: usize) -> Option<&str> {
        self.iter().nth(i)
    }
}

impl Text {
    /// A text written in full.
    pub fn new(text: impl Into<String>) -> Self {
        Text(Repr::Written(text.into().into_boxed_str()))
    }

    /// A text `write` makes from `parts` whenever it is read. Parts can be
    /// shared by several texts (a finding's message and hint).
    pub(crate) fn deferred(parts: Parts, write: WriteText) -> Self {
        Text(Repr::Deferred { parts, write })
    }

    /// The text, borrowed when it is written in full.
    pub fn to_cow(&self) -> Cow<'_, str> {
        match &self.0 {
            Repr::Written(text) => Cow::Borrowed(text),
            Repr::Deferred { .. } => Cow::Owned(self.to_string()),
        }
    }
}

impl Default for Text {
    fn default() -> Self {
        Text::new(String::new())
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Written(text) => f.write_str(text),
            Repr::Deferred { parts, write } => write(parts, f),
        }
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.to_cow(), f)
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.to_cow() == other.to_cow()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.to_cow() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.to_cow() == *other
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text::new(text)
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text::new(text)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Written(text) => serializer.serialize_str(text),
            Repr::Deferred { .. } => serializer.collect_str(self),
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Text::from)
    }
}

/// Counts of a set of findings, as the JSON `summary` reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Findings with severity `error`.
    pub errors: usize,
    /// Findings with severity `warning`.
    pub warnings: usize,
    /// Files linted.
    pub files: usize,
}

impl Summary {
    /// Counts `findings` over `files` linted files.
    pub fn of(findings: &[Finding], files: usize) -> Self {
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        Summary {
            errors,
            warnings: findings.len() - errors,
            files,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn parts_read_back(parts in proptest::collection::vec(".{0,12}", 0..6)) {
            let borrowed: Vec<&str> = parts.iter().map(String::as_str).collect();
            let joined = Parts::new(&borrowed);
            let read: Vec<&str> = joined.iter().collect();
            proptest::prop_assert_eq!(read, borrowed);
        }
    }

    #[test]
    fn parts_that_look_like_the_encoding_read_back() {
        let parts = Parts::new(&["3:abc", "", "12:", "\u{e9}:\u{202e}"]);
        assert_eq!(parts.get(0), Some("3:abc"));
        assert_eq!(parts.get(1), Some(""));
        assert_eq!(parts.get(2), Some("12:"));
        assert_eq!(parts.get(3), Some("\u{e9}:\u{202e}"));
        assert_eq!(parts.get(4), None);
    }

    #[test]
    fn severity_round_trips() {
        assert_eq!("warning".parse::<Severity>(), Ok(Severity::Warning));
        assert_eq!("error".parse::<Severity>(), Ok(Severity::Error));
        assert!("fatal".parse::<Severity>().is_err());
        assert!(Severity::Error > Severity::Warning);
    }

    #[test]
    fn deferred_text_reads_as_its_written_form() {
        fn write(parts: &Parts, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let name = parts.get(0).unwrap_or_default();
            write!(
                f,
                "Skill \"{name}\" needs \"{}\".",
                parts.get(1).unwrap_or_default()
            )
        }
        let parts = Parts::new(&["triage", "send_\u{1b}mail"]);
        let text = Text::deferred(parts, write);
        let written = Text::new("Skill \"triage\" needs \"send_\u{1b}mail\".");
        assert_eq!(text, written);
        assert_eq!(text.to_string(), written.to_string());
        assert_eq!(text.to_cow(), written.to_cow());
        assert_eq!(format!("{text:?}"), format!("{written:?}"));
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            serde_json::to_string(&written).unwrap()
        );
        let back: Text = serde_json::from_str(&serde_json::to_string(&text).unwrap()).unwrap();
        assert_eq!(back, text);
        assert_eq!(text, "Skill \"triage\" needs \"send_\u{1b}mail\".");
    }

    #[test]
    fn summary_counts() {
        let f = |severity| Finding {
            rule: "r".into(),
            severity,
            where_: String::new(),
            path: String::new(),
            message: Text::default(),
            hint: Text::default(),
            reference: None,
            suggestion: None,
            location: None,
        };
        let s = Summary::of(
            &[
                f(Severity::Error),
                f(Severity::Warning),
                f(Severity::Warning),
            ],
            2,
        );
        assert_eq!(
            s,
            Summary {
                errors: 1,
                warnings: 2,
                files: 2
            }
        );
    }
}
