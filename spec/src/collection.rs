//! The lenient reading of stack collections, shared by every consumer.
//!
//! Any collection (`objects`, `actions`, `tools`, `skills`, `agents`, an
//! object's `actions`) may be written as an array of records or as a map
//! keyed by name. Upstream reads them leniently, and so does every crate
//! in this workspace:
//!
//! - an array keeps only its entries that are JSON objects; other entries are
//!   dropped *before* indexing, so `[null, {..}]` yields one record with
//!   index 0;
//! - a map yields one record per entry, in JavaScript's property order
//!   ([`crate::json::order::js_order`]: integer-like keys first, then
//!   document order): `name`
//!   is the key, then the entry's own keys are laid over it (an inner
//!   `name` wins); an entry that is not an object becomes `{name: key}`;
//! - anything else (a string, a number, `null`, absent) is empty.
//!
//! [`records`] reads the borrowed document ([`crate::json`]): records of an
//! array are its entries, and records of a map are built in the caller's
//! [`Arena`]. A caller holding a `serde_json` document borrows it first
//! ([`Value::from_serde`]); there is no second reading.

use crate::json::order::js_order;
use crate::json::{Arena, Map, Value};
use crate::path::Segment;

/// Where a [`Record`] came from inside its collection.
///
/// Indexes are 32-bit (a collection of four billion entries could not be
/// held in memory), so an origin is 24 bytes: a large stack keeps one per
/// record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin<'a> {
    /// The `n`-th entry of an array (counting the entries that are objects).
    Array {
        /// Index among the kept entries (what lenient paths use).
        index: u32,
        /// Index in the raw array, counting dropped entries too.
        raw_index: u32,
    },
    /// A map entry under this key; `index` counts entries in document order.
    Map {
        /// Position among the map's entries.
        index: u32,
        /// The entry's key.
        key: &'a str,
    },
}

impl Origin<'_> {
    /// The index lenient paths use (`skills[i]`).
    pub fn index(&self) -> usize {
        match self {
            Origin::Array { index, .. } | Origin::Map { index, .. } => *index as usize,
        }
    }

    /// The record's segment in a *raw* path (the position in the raw array,
    /// or the map key), as [`crate::source::SourceIndex`] locates it.
    pub fn raw_segment(&self) -> Segment {
        match self {
            Origin::Array { raw_index, .. } => Segment::Index(*raw_index as usize),
            Origin::Map { key, .. } => Segment::Key((*key).to_owned()),
        }
    }
}

/// One record of a collection, read leniently.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// The record's keys (the entry itself for arrays, built for maps).
    pub fields: &'a Map<'a>,
    /// Where it came from.
    pub origin: Origin<'a>,
}

impl<'a> Record<'a> {
    /// The lenient index (see the module docs).
    pub fn index(&self) -> usize {
        self.origin.index()
    }

    /// The record's segment in a raw path (see [`Origin::raw_segment`]).
    pub fn raw_segment(&self) -> Segment {
        self.origin.raw_segment()
    }

    /// A key's value.
    pub fn get(&self, key: &str) -> Option<&'a Value<'a>> {
        self.fields.get(key)
    }

    /// A key's value when it is a string.
    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.fields.get(key).and_then(Value::as_str)
    }

    /// The record's `name` when it is a string.
    pub fn name(&self) -> Option<&'a str> {
        self.str("name")
    }
}

/// Reads a collection leniently (see the module docs). Map-shaped
/// collections build their records in `arena`.
pub fn records<'a>(value: Option<&'a Value<'a>>, arena: &'a Arena) -> Vec<Record<'a>> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(raw_index, item)| item.as_object().map(|m| (raw_index, m)))
            .enumerate()
            .map(|(index, (raw_index, map))| Record {
                fields: map,
                origin: Origin::Array {
                    index: small(index),
                    raw_index: small(raw_index),
                },
            })
            .collect(),
        Some(Value::Object(entries)) => js_order(entries.iter().collect())
            .into_iter()
            .enumerate()
            .map(|(index, (key, entry))| {
                let mut fields: Vec<(&'a str, Value<'a>)> = vec![("name", Value::String(key))];
                if let Value::Object(inner) = entry {
                    fields.extend(inner.iter().map(|(k, v)| (k, *v)));
                }
                Record {
                    fields: Map::from_entries(arena, &fields),
                    origin: Origin::Map {
                        index: small(index),
                        key,
                    },
                }
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// An index in 32 bits (see [`Origin`]; saturated, never reached).
fn small(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}

/// Reads the collection under `key` of a record or document.
pub fn records_of<'a>(parent: &'a Map<'a>, key: &str, arena: &'a Arena) -> Vec<Record<'a>> {
    records(parent.get(key), arena)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The reading of a `serde_json` value, borrowed. Leaks, as tests may.
    fn records(v: Option<&serde_json::Value>) -> Vec<Record<'static>> {
        let arena: &'static Arena = Box::leak(Box::default());
        let Some(v) = v else {
            return super::records(None, arena);
        };
        let v: &'static serde_json::Value = Box::leak(Box::new(v.clone()));
        let doc: &'static Value<'static> = Box::leak(Box::new(Value::from_serde(v, arena)));
        super::records(Some(doc), arena)
    }

    #[test]
    fn arrays_drop_non_objects_before_indexing() {
        let v = json!([null, 3, {"name": "a"}, "x", {"name": "b"}]);
        let r = records(Some(&v));
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].name(), Some("a"));
        assert_eq!(r[0].index(), 0);
        assert_eq!(r[1].index(), 1);
        assert_eq!(
            r[1].origin,
            Origin::Array {
                index: 1,
                raw_index: 4
            }
        );
        assert_eq!(r[1].raw_segment(), Segment::Index(4));
    }

    #[test]
    fn maps_use_key_as_name_and_inner_name_wins() {
        let v = json!({"a": {"label": "A"}, "b": {"name": "bee"}, "c": 5});
        let r = records(Some(&v));
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].name(), Some("a"));
        assert_eq!(r[0].str("label"), Some("A"));
        assert_eq!(r[1].name(), Some("bee"));
        assert_eq!(r[2].name(), Some("c"));
        assert_eq!(r[2].fields.len(), 1);
        assert_eq!(r[1].raw_segment(), Segment::Key("b".to_owned()));
    }

    #[test]
    fn maps_list_integer_like_keys_first_as_javascript_does() {
        let v = json!({"b": {}, "10": {}, "a": {}, "2": {}, "01": {}, "4294967295": {}});
        let names: Vec<_> = records(Some(&v))
            .iter()
            .map(|r| r.name().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(names, ["2", "10", "b", "a", "01", "4294967295"]);
    }

    #[test]
    fn other_shapes_are_empty() {
        assert!(records(None).is_empty());
        assert!(records(Some(&json!("skills"))).is_empty());
        assert!(records(Some(&json!(null))).is_empty());
        assert!(records(Some(&json!(42))).is_empty());
    }
}
