//! JSON paths in the notation diagnostics use: `skills[3].tools[1]`,
//! `objects[0].actions[2].ai.description`.
//!
//! A path is a list of segments; it prints keys that are plain identifiers
//! with a dot and any other key as a quoted bracket (`fields["due date"]`).

use std::fmt;

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A location inside a JSON document, from its root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsonPath {
    segments: Vec<Segment>,
}

impl JsonPath {
    /// The document root (prints as the empty string).
    pub fn root() -> Self {
        Self::default()
    }

    /// This path extended by an object key.
    pub fn key(&self, key: &str) -> Self {
        self.with(Segment::Key(key.to_owned()))
    }

    /// This path extended by an array index.
    pub fn index(&self, index: usize) -> Self {
        self.with(Segment::Index(index))
    }

    /// This path and one more segment, in one allocation of the right size.
    fn with(&self, last: Segment) -> Self {
        let mut segments = Vec::with_capacity(self.segments.len() + 1);
        segments.extend_from_slice(&self.segments);
        segments.push(last);
        Self { segments }
    }

    /// The segments, root first.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Whether this is the root path.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }
}

impl From<Vec<Segment>> for JsonPath {
    fn from(segments: Vec<Segment>) -> Self {
        Self { segments }
    }
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Index(n) => write!(f, "[{n}]")?,
                Segment::Key(k) if is_identifier(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                Segment::Key(k) => {
                    let quoted = serde_json::to_string(k).map_err(|_| fmt::Error)?;
                    write!(f, "[{quoted}]")?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_dotted_and_indexed() {
        let p = JsonPath::root()
            .key("skills")
            .index(3)
            .key("tools")
            .index(1);
        assert_eq!(p.to_string(), "skills[3].tools[1]");
    }

    #[test]
    fn quotes_non_identifier_keys() {
        let p = JsonPath::root().key("fields").key("due date");
        assert_eq!(p.to_string(), "fields[\"due date\"]");
        assert_eq!(JsonPath::root().to_string(), "");
    }
}
