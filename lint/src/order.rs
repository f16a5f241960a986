//! The order findings are listed in: the order in which upstream walks a
//! stack, which is `JSON.parse`'s. A finding's place is its anchor's path,
//! each step ranked as JavaScript orders it: an array's elements by index,
//! an object's keys with the integer-like ones first in numeric order and
//! the rest in document order (a key written twice at its first position).
//! For a document without integer-like keys or repeated keys that is the
//! order of the findings' positions in the file; a collection written as a
//! map `{"b": {...}, "1": {...}}` lists `"1"`'s findings first, as upstream
//! does, and so do its paths (`skills[0]` is `"1"`).

use std::collections::HashMap;

use objectstack_spec::json::order::{is_array_index_key, js_order};
use objectstack_spec::json::{Map, Value};

use crate::anchor::{Anchor, Step};

/// Ranks anchors, remembering the JavaScript order of each object that has
/// integer-like keys (an object without any ranks its keys by position).
#[derive(Default)]
pub(crate) struct Ranker {
    /// By the object's address: each entry's rank, or `None` when the
    /// ranks are the positions.
    reordered: HashMap<usize, Option<Vec<u32>>>,
}

impl Ranker {
    /// [`Ranker::rank_into`], as a vector.
    #[cfg(test)]
    pub(crate) fn rank(&mut self, root: &Map<'_>, anchor: &Anchor) -> Vec<u32> {
        let mut ranks = Vec::new();
        self.rank_into(root, anchor, &mut ranks);
        ranks
    }

    /// Appends to `ranks` the rank of each step of `anchor` from `root`, as
    /// far as it resolves (a missing key ends it: such a finding is located
    /// at the nearest ancestor, and sorts with it).
    pub(crate) fn rank_into(&mut self, root: &Map<'_>, anchor: &Anchor, ranks: &mut Vec<u32>) {
        let steps = anchor.steps();
        let mut value: Option<&Value<'_>> = None;
        for step in steps {
            let next = match (step, value) {
                (Step::Key(key), None) => self.key(root, key, ranks),
                (Step::Key(key), Some(Value::Object(map))) => self.key(map, key, ranks),
                (Step::Index(i), Some(Value::Array(items))) => {
                    ranks.push(u32::try_from(i).unwrap_or(u32::MAX));
                    items.get(i)
                }
                _ => None,
            };
            let Some(next) = next else { break };
            value = Some(next);
        }
    }

    fn key<'a>(
        &mut self,
        map: &'a Map<'a>,
        key: &str,
        ranks: &mut Vec<u32>,
    ) -> Option<&'a Value<'a>> {
        let position = map.position(key)?;
        let rank = if map.len() <= SMALL {
            small_rank(map, position, key)
        } else {
            let order = self
                .reordered
                .entry(std::ptr::from_ref(map) as usize)
                .or_insert_with(|| js_ranks(map));
            match order {
                Some(order) => order.get(position).copied().unwrap_or(u32::MAX),
                None => u32::try_from(position).unwrap_or(u32::MAX),
            }
        };
        ranks.push(rank);
        map.get(key)
    }
}

/// Objects with at most this many keys are ranked by counting, without
/// remembering them (most records are small).
const SMALL: usize = 16;

/// The rank of the key at `position` in a small object, counted: an
/// integer-like key after the smaller ones; any other after every
/// integer-like key and the other keys before it.
fn small_rank(map: &Map<'_>, position: usize, key: &str) -> u32 {
    let rank = match is_array_index_key(key) {
        Some(n) => map
            .keys()
            .filter(|k| is_array_index_key(k).is_some_and(|m| m < n))
            .count(),
        None => {
            let indices = map
                .keys()
                .filter(|k| is_array_index_key(k).is_some())
                .count();
            let before = map
                .keys()
                .take(position)
                .filter(|k| is_array_index_key(k).is_none())
                .count();
            indices + before
        }
    };
    u32::try_from(rank).unwrap_or(u32::MAX)
}

/// Each entry's rank in JavaScript's order, when it differs from the
/// entries' own (the object has an integer-like key).
fn js_ranks(map: &Map<'_>) -> Option<Vec<u32>> {
    if !map.keys().any(|k| is_array_index_key(k).is_some()) {
        return None;
    }
    let order = js_order(map.keys().enumerate().map(|(at, k)| (k, at)).collect());
    let mut ranks = vec![0u32; map.len()];
    for (rank, (_, position)) in order.into_iter().enumerate() {
        if let Some(slot) = ranks.get_mut(position) {
            *slot = u32::try_from(rank).unwrap_or(u32::MAX);
        }
    }
    Some(ranks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use objectstack_spec::json::{Arena, parse_document};
    use objectstack_spec::path::JsonPath;

    fn ranks(text: &str, paths: &[JsonPath]) -> Vec<Vec<u32>> {
        let arena = Arena::new();
        let Ok(root) = parse_document(text.as_bytes(), &arena) else {
            panic!("{text}");
        };
        let mut ranker = Ranker::default();
        paths
            .iter()
            .map(|p| ranker.rank(root, &p.clone().into()))
            .collect()
    }

    #[test]
    fn integer_like_keys_rank_first_in_numeric_order() {
        let skills = || JsonPath::root().key("skills");
        let found = ranks(
            r#"{"skills": {"b": {"tools": ["x"]}, "10": {"tools": ["y"]}, "2": {}}}"#,
            &[
                skills().key("b").key("tools").index(0),
                skills().key("10").key("tools").index(0),
                skills().key("2"),
            ],
        );
        assert_eq!(found, [vec![0, 2, 0, 0], vec![0, 1, 0, 0], vec![0, 0]]);
    }

    #[test]
    fn counting_and_remembering_give_the_same_ranks() {
        let arena = Arena::new();
        for text in [
            r#"{"b": 1, "10": 2, "a": 3, "2": 4, "0": 5, "b": 6}"#,
            r#"{"x": 1}"#,
            r#"{"4294967295": 1, "4294967294": 2, "01": 3, "1": 4}"#,
        ] {
            let Ok(map) = parse_document(text.as_bytes(), &arena) else {
                panic!("{text}");
            };
            let remembered =
                js_ranks(map).unwrap_or_else(|| (0..map.len()).map(|i| i as u32).collect());
            let counted: Vec<u32> = map
                .keys()
                .enumerate()
                .map(|(at, key)| small_rank(map, at, key))
                .collect();
            assert_eq!(counted, remembered, "{text}");
        }
        // An object past the small size is remembered, with the same ranks.
        let mut text = String::from("{");
        for i in 0..20 {
            text.push_str(&format!("\"k{i}\": 0, \"{}\": 0, ", 40 - i));
        }
        text.push_str("\"end\": 0}");
        let mut ranker = Ranker::default();
        let Ok(root) = parse_document(text.as_bytes(), &arena) else {
            panic!("{text}");
        };
        assert_eq!(ranker.rank(root, &JsonPath::root().key("21").into()), [0]);
        assert_eq!(ranker.rank(root, &JsonPath::root().key("k0").into()), [20]);
        assert_eq!(ranker.rank(root, &JsonPath::root().key("end").into()), [40]);
    }

    #[test]
    fn a_repeated_key_ranks_at_its_first_position_and_a_missing_one_stops() {
        let found = ranks(
            r#"{"a": {"x": 1}, "b": [0, {"c": 2}], "a": {"y": 3}}"#,
            &[
                JsonPath::root().key("a").key("y"),
                JsonPath::root().key("b").index(1).key("c"),
                JsonPath::root().key("b").index(1).key("missing"),
                JsonPath::root().key("nope"),
            ],
        );
        assert_eq!(found, [vec![0, 0], vec![1, 1, 0], vec![1, 1], vec![]]);
    }
}
