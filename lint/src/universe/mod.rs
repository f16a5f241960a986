//! The resolution universe of `ai-skill-tool-unresolved`: exact membership,
//! trailing-`*` wildcards and upstream's "did you mean" suggestion, indexed
//! so that no per-reference cost grows with the number of names.
//!
//! Upstream (`@objectstack/lint` 17.4.0, `suggest2` over `nearestName`)
//! scans every name with a full edit-distance computation for every
//! unresolved reference. This module returns exactly the same answer,
//! ties included, from indexes:
//!
//! - **Membership**: the names end to end in one string, and an
//!   open-addressing table of their spans in it, built with the universe;
//!   many names can be looked up a group at a time, which overlaps the
//!   waits on memory of a group's lookups.
//! - **Wildcards**: binary search over the names sorted by their bytes
//!   (sorted on the first wildcard or suggestion).
//! - **Suggestions** (indexes built on the first suggestion; see
//!   [`Universe::suggest`] for the scoring):
//!   - a compressed trie of the names, each node knowing the lowest scan
//!     position and the shortest and longest name below it;
//!   - names *inside* the reference: a walk down the trie from every
//!     position of the reference;
//!   - names *containing* the reference: posting lists of hashed trigrams,
//!     each sorted by (length, scan position), so the first verified entry
//!     of the reference's rarest trigram is the best such name;
//!   - names within the edit-distance bound: first the names one edit away
//!     (typos), found by following the reference down the trie with one
//!     deletion, substitution or insertion, each followed by an exact
//!     descent; then a depth-first walk of the trie with one banded
//!     Levenshtein row per depth at bound 2, then the full bound. Both
//!     abandon a subtree as soon as no name of its lengths can come within
//!     the bound or beat the best found (small bounds prune hardest).
//!
//! Memory is proportional to the total length of the names. Lengths and
//! distances count UTF-16 code units, as JavaScript does. A transliteration
//! of upstream's linear scan, `nearest`, is kept as the reference the
//! indexed answer is tested against (and serves the rules that suggest
//! over short candidate lists).
//!
//! The name set and its wildcard answers are in `set`, the membership
//! table in `ids`, and the suggestion index in `suggest`.

mod ids;
mod set;
mod suggest;

pub use set::Universe;
pub(crate) use set::nearest;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn u(names: &[&str]) -> Universe {
        Universe::new(names.iter().map(|s| s.to_string()).collect())
    }

    /// Upstream's `suggest2`, transliterated: the family-prefix step, then
    /// the linear scan.
    fn naive(universe: &Universe, reference: &str) -> Option<String> {
        for prefix in objectstack_registry::FAMILY_PREFIXES {
            let candidate = format!("{prefix}{reference}");
            if universe.names().any(|n| n == candidate) {
                return Some(candidate);
            }
        }
        nearest(reference, universe.names()).map(str::to_owned)
    }

    fn check(names: &[&str], reference: &str, expected: Option<&str>) {
        let universe = u(names);
        assert_eq!(
            universe.suggest(reference),
            expected,
            "indexed, {reference:?}"
        );
        assert_eq!(
            naive(&universe, reference).as_deref(),
            expected,
            "naive, {reference:?}"
        );
    }

    #[test]
    fn duplicates_keep_first_position() {
        let u = u(&["a", "b", "a"]);
        assert_eq!(u.names().collect::<Vec<_>>(), ["a", "b"]);
        assert!(u.contains("b") && !u.contains("c"));
    }

    #[test]
    fn an_empty_name_shares_its_start_with_the_next() {
        for names in [&["", "x", "y"][..], &["x", "", "y"], &["x", "y", ""]] {
            let universe = u(names);
            for (id, name) in names.iter().enumerate() {
                let units: Vec<u16> = name.encode_utf16().collect();
                assert_eq!(
                    universe.lookup(&units),
                    Some(id as u32),
                    "{names:?} {name:?}"
                );
                assert!(universe.contains(name));
            }
            assert_eq!(universe.lookup(&[u16::from(b'z')]), None);
        }
    }

    #[test]
    fn long_names_with_a_long_shared_prefix_get_the_scans_answer() {
        // Bands hundreds of cells wide, on names a thousand units long: the
        // walk keeps rows only at branching nodes.
        let stem = "a".repeat(1200);
        let names: Vec<String> = (0..12).map(|i| format!("{stem}{i:02}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let universe = u(&refs);
        for reference in [
            format!("{stem}1"),
            format!("{}x{stem}07", "a"),
            format!("{}{}", "a".repeat(800), "b".repeat(400)),
            "b".repeat(1202),
        ] {
            assert_eq!(
                universe.suggest(&reference).map(str::to_owned),
                naive(&universe, &reference),
                "{}",
                reference.len()
            );
        }
    }

    #[test]
    fn byte_order_answers_wildcards_past_the_basic_plane() {
        // U+FF01 sorts after U+1F600 in UTF-16 units but before it in bytes.
        let u = u(&["a\u{ff01}b", "a\u{1f600}c", "ab"]);
        assert!(u.matches_prefix("a\u{ff01}") && u.matches_prefix("a\u{1f600}"));
        assert!(u.matches_prefix("a") && !u.matches_prefix("a\u{1f601}"));
        assert_eq!(u.suggest("a\u{ff01}"), Some("a\u{ff01}b"));
    }

    #[test]
    fn membership_is_exact() {
        let u = u(&["action_close", "query_data", "é😀"]);
        assert!(u.contains("query_data") && u.contains("é😀"));
        assert!(!u.contains("query_dat") && !u.contains("query_data_") && !u.contains(""));
        assert!(Universe::default().is_empty());
        assert!(!Universe::default().contains(""));
    }

    #[test]
    fn prefix_matching() {
        let u = u(&["action_close", "query_data", "😀x"]);
        assert!(u.matches_prefix("action_"));
        assert!(u.matches_prefix("action_close"));
        assert!(u.matches_prefix(""));
        assert!(u.matches_prefix("😀"));
        assert!(!u.matches_prefix("actions_"));
        assert!(!u.matches_prefix("action_closed"));
        assert!(!u.matches_prefix("zz"));
        assert!(!Universe::default().matches_prefix(""));
    }

    #[test]
    fn family_prefix_comes_first() {
        check(
            &["get_record", "action_triage", "triage"],
            "triage",
            Some("action_triage"),
        );
    }

    #[test]
    fn containment_beats_edit_distance() {
        check(
            &["get_record", "action_triage", "query_records"],
            "record",
            Some("get_record"),
        );
        check(&["query_records"], "query_recrds", Some("query_records"));
        check(&["a", "zzzz"], "zzzzzzzz", Some("zzzz"));
        check(&["abcdefgh"], "zzzzzzzz", None);
    }

    #[test]
    fn a_far_containing_name_loses_to_a_near_typo() {
        // Containment of a 200-unit name scores 197; the typo scores 101.
        let long = format!("{}abc", "x".repeat(200));
        check(&[&long, "abd"], "abc", Some("abd"));
        // ... but a containing name 100 units longer ties 100 + 0 only in
        // theory; at 99 longer it wins over any typo.
        let near = format!("{}abc", "x".repeat(99));
        check(&["abd", &near], "abc", Some(near.as_str()));
    }

    #[test]
    fn short_references_never_use_containment() {
        check(&["get_record"], "ge", None);
        check(&["gex", "g"], "ge", Some("gex"));
        check(&["abcd", "g"], "g", Some("g"));
    }

    #[test]
    fn ties_go_to_first_scanned() {
        check(&["abcx", "abcy"], "abcz", Some("abcx"));
        check(&["abcy", "abcx"], "abcz", Some("abcy"));
        check(&["xabcd", "abcdx"], "abcd", Some("xabcd"));
        check(&["abcdx", "xabcd"], "abcd", Some("abcdx"));
    }

    #[test]
    fn lengths_and_distances_count_utf16_units() {
        // One astral character is two units: "a😀" is 3 units long, so
        // containment applies.
        check(&["xa😀y"], "a😀", Some("xa😀y"));
        // Distance "😀" → "😁" is 1 (one unit differs); "😀" → "ab" is 2.
        check(&["ab", "😁"], "😀", Some("😁"));
        // In code units "😁x" is 2 edits from "😀" and ties "q", scanned
        // first; counted in characters "q" would be nearer.
        check(&["😁x", "q"], "😀", Some("😁x"));
    }

    #[test]
    fn an_empty_winner_is_no_suggestion() {
        check(&["", "abcdefghij"], "xyz", None);
        check(&["", "q"], "x", None);
        check(&["xyz1", ""], "xyz", Some("xyz1"));
    }

    #[test]
    fn the_bound_scales_with_the_reference() {
        // 12 units: bound 4.
        check(&["abcdwxyzijkl"], "abcdefghijkl", Some("abcdwxyzijkl"));
        check(&["abcdvwxyzjkl"], "abcdefghijkl", None);
    }

    #[test]
    fn a_trie_whose_root_has_a_label() {
        // Every name shares "same_", so the root's label is not empty.
        let names = ["same_alpha", "same_alps", "same_beta"];
        check(&names, "same_alpx", Some("same_alps"));
        check(&names, "xsame_betax", Some("same_beta"));
        check(&names, "sxme_beta", Some("same_beta"));
        // Contained in all three; two tie at 6 and the first scanned wins.
        check(&names, "sam", Some("same_alps"));
        check(&names, "zzzzzzzzz", None);
        // The root itself names "same_".
        check(&["same_alpha", "same_"], "sam", Some("same_"));
        check(&["same_alpha", "same_"], "same_alpx", Some("same_"));
    }

    #[test]
    fn pathological_lengths_fall_back_to_a_scan() {
        // Bound 1000 over 3000-unit names: too many band cells for a walk.
        let long = "ab".repeat(1500);
        let near = format!("{}zz{}", "ab".repeat(700), "ab".repeat(799));
        let far = "cd".repeat(1500);
        let names = [far.as_str(), near.as_str()];
        check(&names, &long, Some(near.as_str()));
    }

    #[test]
    fn matches_the_naive_scan_on_a_generated_universe() {
        let (names, refs) = crate::synth::names_and_references(&crate::synth::SynthConfig {
            references: 4_000,
            miss_percent: 20.0,
            seed: 7,
        });
        let universe = Universe::new(names);
        let mut suggested = 0;
        for reference in refs.iter().filter(|r| !universe.contains(r)).take(120) {
            let got = universe.suggest(reference);
            assert_eq!(got, naive(&universe, reference).as_deref(), "{reference}");
            suggested += usize::from(got.is_some());
        }
        assert!(suggested > 40, "{suggested}");
    }

    fn unit_char() -> impl Strategy<Value = char> {
        prop::sample::select(vec!['a', 'b', 'c', '_', 'é', '😀', '😁', '𝒳'])
    }

    fn word(max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(unit_char(), 0..=max).prop_map(|cs| cs.into_iter().collect())
    }

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => word(8),
            1 => word(6).prop_map(|w| format!("action_{w}")),
            1 => word(30),
        ]
    }

    /// A reference derived from a name: a substring, an edited copy, or a
    /// copy with a prefix or suffix.
    fn derived(names: Vec<String>) -> impl Strategy<Value = String> {
        let pick = prop::sample::select(if names.is_empty() {
            vec![String::new()]
        } else {
            names
        });
        (
            pick,
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
            word(3),
            0..5u8,
        )
            .prop_map(|(name, a, b, extra, how)| {
                let chars: Vec<char> = name.chars().collect();
                let (x, y) = if chars.is_empty() {
                    (0, 0)
                } else {
                    let (x, y) = (a.index(chars.len() + 1), b.index(chars.len() + 1));
                    (x.min(y), x.max(y))
                };
                let slice: String = chars.get(x..y).unwrap_or_default().iter().collect();
                match how {
                    0 => slice,
                    1 => format!("{extra}{name}"),
                    2 => format!("{name}{extra}"),
                    3 => {
                        let mut c = chars.clone();
                        if x < c.len() {
                            c.remove(x);
                        }
                        c.into_iter().collect()
                    }
                    _ => {
                        let mut c = chars.clone();
                        for (k, e) in extra.chars().enumerate() {
                            if let Some(slot) = c.get_mut((x + k * 3) % chars.len().max(1)) {
                                *slot = e;
                            }
                        }
                        c.into_iter().collect()
                    }
                }
            })
    }

    fn case() -> impl Strategy<Value = (Vec<String>, Vec<String>)> {
        prop::collection::vec(name(), 0..40).prop_flat_map(|names| {
            let refs = prop::collection::vec(prop_oneof![word(14), derived(names.clone())], 1..12);
            (Just(names), refs)
        })
    }

    /// Every reference's suggestion is the naive scan's.
    fn agrees_with_naive(names: Vec<String>, refs: &[String]) -> Result<(), TestCaseError> {
        let universe = Universe::new(names);
        for reference in refs {
            prop_assert_eq!(
                universe.suggest(reference).map(str::to_owned),
                naive(&universe, reference),
                "reference {:?}",
                reference
            );
        }
        Ok(())
    }

    /// ASCII names (the index is over bytes) and references that mix in
    /// units past ASCII, which no name holds.
    fn ascii_case() -> impl Strategy<Value = (Vec<String>, Vec<String>)> {
        let chars = |set: Vec<char>, max: usize| {
            prop::collection::vec(prop::sample::select(set), 0..=max)
                .prop_map(|cs| cs.into_iter().collect::<String>())
        };
        let ascii = vec!['a', 'b', 'c', '_'];
        let mixed = vec!['a', 'b', 'c', '_', 'é', '😀'];
        prop::collection::vec(chars(ascii, 10), 0..60).prop_flat_map(move |names| {
            let refs = prop::collection::vec(
                prop_oneof![chars(mixed.clone(), 14), derived(names.clone())],
                1..12,
            );
            (Just(names), refs)
        })
    }

    /// Dense tries: many names over two letters and one astral character,
    /// so walks branch everywhere and bounds reach 6.
    fn dense_case() -> impl Strategy<Value = (Vec<String>, Vec<String>)> {
        let letter = || prop::sample::select(vec!['a', 'b', '😀']);
        let word = move |max: usize| {
            prop::collection::vec(letter(), 0..=max)
                .prop_map(|cs| cs.into_iter().collect::<String>())
        };
        (
            prop::collection::vec(word(12), 0..150),
            prop::collection::vec(word(20), 1..8),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn byte_indexes_answer_as_the_naive_scan((names, refs) in ascii_case()) {
            agrees_with_naive(names, &refs)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]

        #[test]
        fn indexed_answers_equal_the_naive_scan_on_dense_tries((names, refs) in dense_case()) {
            agrees_with_naive(names, &refs)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn indexed_answers_equal_the_naive_scan((names, refs) in case()) {
            let universe = Universe::new(names.clone());
            for reference in &refs {
                prop_assert_eq!(
                    universe.suggest(reference).map(str::to_owned),
                    naive(&universe, reference),
                    "reference {:?}", reference
                );
                prop_assert_eq!(
                    universe.contains(reference),
                    names.contains(reference)
                );
                prop_assert_eq!(
                    universe.matches_prefix(reference),
                    names.iter().any(|n| n.starts_with(reference.as_str()))
                );
            }
        }
    }
}
