//! Where a hit points before it is located: the raw path of the offending
//! value, kept without an allocation for the findings a rule can report
//! tens of thousands of.
//!
//! A [`JsonPath`] allocates a node per segment and a string per key. A
//! reference in a skill's `tools` list, `skills[3].tools[1]`, would be
//! three nodes and a `"tools"` string below the shared `skills`: about
//! 220 bytes a finding, 11 MB for the 50,000 misses of a large stack. An
//! [`Anchor`] holds the shared base and the three last steps inline.

use objectstack_spec::path::{JsonPath, Segment};

/// One step of an [`Anchor`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step<'a> {
    /// An object key.
    Key(&'a str),
    /// An array index.
    Index(usize),
}

impl<'a> From<&'a Segment> for Step<'a> {
    fn from(segment: &'a Segment) -> Self {
        match segment {
            Segment::Key(key) => Step::Key(key),
            Segment::Index(i) => Step::Index(*i),
        }
    }
}

/// The raw path of the value a hit points at.
#[derive(Debug, Clone)]
pub(crate) struct Anchor {
    /// The path, or the part of it that [`Tail`] extends.
    base: JsonPath,
    tail: Tail,
}

/// The last steps of an anchor, inline.
#[derive(Debug, Clone, Copy)]
enum Tail {
    /// The base is the whole path.
    None,
    /// Item `item` of the list at `key` of entry `record` of the array at
    /// the base: `base[record].key[item]`.
    Item {
        record: u32,
        key: &'static str,
        item: u32,
    },
}

impl Anchor {
    /// `base[record].key[item]`, stored without an allocation when both
    /// indices fit in 32 bits (else as a path).
    pub(crate) fn item(base: JsonPath, record: usize, key: &'static str, item: usize) -> Self {
        match (u32::try_from(record), u32::try_from(item)) {
            (Ok(record), Ok(item)) => Anchor {
                base,
                tail: Tail::Item { record, key, item },
            },
            _ => base.index(record).key(key).index(item).into(),
        }
    }

    /// The steps from the document's root.
    pub(crate) fn steps(&self) -> Vec<Step<'_>> {
        let mut steps: Vec<Step<'_>> = Vec::with_capacity(8);
        let mut at = &self.base;
        while let (Some(segment), Some(parent)) = (at.last(), at.parent()) {
            steps.push(segment.into());
            at = parent;
        }
        steps.reverse();
        if let Tail::Item { record, key, item } = self.tail {
            steps.extend([
                Step::Index(record as usize),
                Step::Key(key),
                Step::Index(item as usize),
            ]);
        }
        steps
    }

    /// The anchor as a path (it allocates: for the few hits located by a
    /// path rather than by a string's address).
    pub(crate) fn to_path(&self) -> JsonPath {
        match self.tail {
            Tail::None => self.base.clone(),
            Tail::Item { record, key, item } => self
                .base
                .index(record as usize)
                .key(key)
                .index(item as usize),
        }
    }
}

impl From<JsonPath> for Anchor {
    fn from(base: JsonPath) -> Self {
        Anchor {
            base,
            tail: Tail::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_reads_as_the_path_it_stands_for() {
        let skills = JsonPath::root().key("skills");
        let anchor = Anchor::item(skills.clone(), 3, "tools", 1);
        let path = skills.index(3).key("tools").index(1);
        assert_eq!(anchor.to_path(), path);
        assert_eq!(anchor.to_path().to_string(), "skills[3].tools[1]");
        let steps: Vec<Step<'_>> = path.segment_refs().into_iter().map(Step::from).collect();
        assert_eq!(anchor.steps(), steps);
    }

    #[test]
    fn a_path_is_its_own_steps() {
        let path = JsonPath::root().key("tools").index(2).key("binding");
        let anchor = Anchor::from(path.clone());
        assert_eq!(anchor.to_path(), path);
        assert_eq!(
            anchor.steps(),
            vec![Step::Key("tools"), Step::Index(2), Step::Key("binding")]
        );
        assert!(Anchor::from(JsonPath::root()).steps().is_empty());
    }

    #[test]
    fn indices_past_32_bits_fall_back_to_a_path() {
        let base = JsonPath::root().key("skills");
        let big = usize::try_from(u64::from(u32::MAX) + 1).unwrap_or(usize::MAX);
        let anchor = Anchor::item(base.clone(), big, "tools", 0);
        assert_eq!(anchor.to_path(), base.index(big).key("tools").index(0));
        assert_eq!(anchor.steps().len(), 4);
    }

    #[test]
    fn is_small() {
        // The point of the type: a path and a few words, not a chain of
        // nodes.
        assert!(std::mem::size_of::<Anchor>() <= 32);
    }
}
