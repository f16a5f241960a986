//! JSON paths in the notation diagnostics use: `skills[3].tools[1]`,
//! `objects[0].actions[2].ai.description`.
//!
//! A path is a list of segments; it prints keys that are plain identifiers
//! with a dot and any other key as a quoted bracket (`fields["due date"]`).

use std::fmt;
use std::sync::Arc;

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A location inside a JSON document, from its root.
///
/// A path shares its prefix with the path it was extended from: `key` and
/// `index` allocate one small node and copy nothing, so building a path per
/// record of a large stack is cheap.
#[derive(Clone, Default)]
pub struct JsonPath {
    last: Option<Arc<Node>>,
}

struct Node {
    parent: JsonPath,
    segment: Segment,
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

    /// This path extended by one segment.
    pub fn with(&self, segment: Segment) -> Self {
        Self {
            last: Some(Arc::new(Node {
                parent: self.clone(),
                segment,
            })),
        }
    }

    /// The segments, from the root.
    pub fn segments(&self) -> Vec<Segment> {
        self.segment_refs().into_iter().cloned().collect()
    }

    /// The segments, from the root, borrowed: [`JsonPath::segments`]
    /// without a copy of each key.
    pub fn segment_refs(&self) -> Vec<&Segment> {
        let mut out: Vec<&Segment> = self.walk().collect();
        out.reverse();
        out
    }

    /// The last segment, `None` at the root.
    pub fn last(&self) -> Option<&Segment> {
        self.last.as_deref().map(|n| &n.segment)
    }

    /// The path without its last segment, `None` at the root.
    pub fn parent(&self) -> Option<&JsonPath> {
        self.last.as_deref().map(|n| &n.parent)
    }

    /// Whether this is the document root.
    pub fn is_root(&self) -> bool {
        self.last.is_none()
    }

    /// The segments from the last to the first.
    fn walk(&self) -> impl Iterator<Item = &Segment> {
        std::iter::successors(self.last.as_deref(), |n| n.parent.last.as_deref())
            .map(|n| &n.segment)
    }
}

impl From<Vec<Segment>> for JsonPath {
    fn from(segments: Vec<Segment>) -> Self {
        segments
            .into_iter()
            .fold(JsonPath::root(), |path, segment| path.with(segment))
    }
}

impl PartialEq for JsonPath {
    fn eq(&self, other: &Self) -> bool {
        match (&self.last, &other.last) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                Arc::ptr_eq(a, b) || (a.segment == b.segment && a.parent == b.parent)
            }
            _ => false,
        }
    }
}

impl Eq for JsonPath {}

impl std::hash::Hash for JsonPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // As the segments would hash: a length, then each segment.
        self.segment_refs().hash(state);
    }
}

impl PartialOrd for JsonPath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for JsonPath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.segment_refs().cmp(&other.segment_refs())
    }
}

impl fmt::Debug for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonPath")
            .field("segments", &self.segments())
            .finish()
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
        for (i, segment) in self.segment_refs().into_iter().enumerate() {
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
    fn paths_share_prefixes_and_compare_by_segments() {
        let base = JsonPath::root().key("objects").index(2);
        let a = base.key("actions").index(0);
        let b = JsonPath::from(vec![
            Segment::Key("objects".to_owned()),
            Segment::Index(2),
            Segment::Key("actions".to_owned()),
            Segment::Index(0),
        ]);
        assert_eq!(a, b);
        assert_eq!(a.segments().len(), 4);
        assert_eq!(a.last(), Some(&Segment::Index(0)));
        assert_eq!(
            a.parent().map(ToString::to_string),
            Some("objects[2].actions".to_owned())
        );
        assert!(base.key("x") < base.index(1));
        assert!(base < a);
        assert_ne!(a, base.key("actions").index(1));
        assert_eq!(JsonPath::root().parent(), None);
        let mut set = std::collections::HashSet::new();
        set.insert(a.clone());
        assert!(set.contains(&b));
    }

    #[test]
    fn quotes_non_identifier_keys() {
        let p = JsonPath::root().key("fields").key("due date");
        assert_eq!(p.to_string(), "fields[\"due date\"]");
        assert_eq!(JsonPath::root().to_string(), "");
    }

    mod borrowed {
        use super::super::*;
        use proptest::prelude::*;
        use std::hash::BuildHasher;

        fn segment() -> impl Strategy<Value = Segment> {
            prop_oneof![
                (0..5usize).prop_map(Segment::Index),
                "[a-z_$ .\"]{0,4}".prop_map(Segment::Key),
            ]
        }

        proptest! {
            /// Printing, ordering and hashing read the segments borrowed,
            /// and agree with the segments copied out.
            #[test]
            fn agree_with_the_copied_segments(
                a in prop::collection::vec(segment(), 0..6),
                b in prop::collection::vec(segment(), 0..6),
            ) {
                let (pa, pb) = (JsonPath::from(a.clone()), JsonPath::from(b.clone()));
                prop_assert_eq!(pa.segments(), a.clone());
                prop_assert_eq!(pa.cmp(&pb), a.cmp(&b));
                let hasher = std::collections::hash_map::RandomState::new();
                prop_assert_eq!(hasher.hash_one(&pa), hasher.hash_one(&a));
                let mut printed = String::new();
                for (i, s) in a.iter().enumerate() {
                    match s {
                        Segment::Index(n) => printed.push_str(&format!("[{n}]")),
                        Segment::Key(k) if is_identifier(k) => {
                            if i > 0 {
                                printed.push('.');
                            }
                            printed.push_str(k);
                        }
                        Segment::Key(k) => {
                            printed.push_str(&format!("[{}]", serde_json::to_string(k).unwrap()));
                        }
                    }
                }
                prop_assert_eq!(pa.to_string(), printed);
            }
        }
    }
}
