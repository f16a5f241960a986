//! The name set: names in scan order, kept in one buffer; membership by a
//! hash table of their spans; wildcards by a binary search over the names
//! in byte order.

use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

use objectstack_spec::text::{levenshtein_units, utf16_len};
use rayon::iter::ParallelIterator;
use rayon::slice::ParallelSliceMut;

use super::ids::Ids;
use super::suggest::Index;

/// Every tool name a skill may resolve to, in upstream's scan order.
///
/// The names are stored once, end to end in one string, and the membership
/// table holds their spans: a lookup hashes the name, probes the table and
/// compares against the buffer, with no allocation per name to chase.
#[derive(Clone)]
pub struct Universe {
    /// The names, deduplicated, in scan order, end to end.
    text: String,
    /// Name `i` (its id) is `text[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    /// Name to span, for the names whose spans fit in 32 bits: the first
    /// `indexed` names (all of them, unless the names pass 4 GiB).
    ids: Ids,
    indexed: usize,
    /// No name has a character at or above U+E000, so the names' byte
    /// order is their UTF-16 order (UTF-8 orders by code point, UTF-16
    /// puts surrogates below U+E000..=U+FFFF).
    utf16_is_byte_order: bool,
    /// The UTF-16 units of every name (lazy: only suggestions need them).
    utf16: OnceLock<Units>,
    /// Ids sorted by the names' bytes (lazy).
    by_bytes: OnceLock<Vec<u32>>,
    /// Ids sorted by UTF-16 units, when that is not byte order (lazy).
    by_units: OnceLock<Vec<u32>>,
    /// The suggestion index (lazy); `None` when the names are too many or
    /// too long for 32-bit offsets, and suggestions scan linearly.
    index: OnceLock<Option<Index>>,
}

/// The UTF-16 units of every name, concatenated: name `i` is
/// `units[starts[i]..starts[i + 1]]`.
#[derive(Clone, Debug, Default)]
pub(super) struct Units {
    pub(super) units: Vec<u16>,
    pub(super) starts: Vec<usize>,
}

impl Universe {
    /// names in scan order: platform names (registry order), then
    /// stack.tools names, then stack-level action tools, then object action
    /// tools; duplicates keep their first position.
    pub fn new(names: Vec<String>) -> Self {
        let capacity = names.len();
        Self::from_parts(names.iter().map(|n| ("", n.as_str())), capacity)
    }

    /// [`Universe::new`] over names given as two parts each (`("action_",
    /// "close")` is the name `action_close`), so a caller need not allocate
    /// each name; `capacity` is how many names to expect.
    pub fn from_parts<'n>(
        names: impl IntoIterator<Item = (&'n str, &'n str)>,
        capacity: usize,
    ) -> Self {
        let mut text = String::new();
        let mut starts = Vec::with_capacity(capacity + 1);
        starts.push(0);
        let mut ids = Ids::with_capacity(capacity);
        let mut indexed = 0;
        for (head, tail) in names {
            let start = text.len();
            text.push_str(head);
            text.push_str(tail);
            let end = text.len();
            let new = match (u32::try_from(start), u32::try_from(end)) {
                // Every name so far is in the table: one lookup that
                // inserts the name when it is not there.
                (Ok(s), Ok(e)) if indexed + 1 == starts.len() => {
                    let new = ids.insert_new(&text, s, e);
                    indexed += usize::from(new);
                    new
                }
                // Past 4 GiB of names: the rest are found by a scan.
                _ => {
                    let name = text.get(start..end).unwrap_or_default();
                    ids.get(&text, name).is_none()
                        && !unindexed(&text, &starts, indexed).any(|n| n == name)
                }
            };
            if !new {
                text.truncate(start);
                continue;
            }
            starts.push(end);
        }
        text.shrink_to_fit();
        starts.shrink_to_fit();
        // Continuation bytes are below 0xC0 and lead bytes of characters
        // below U+E000 below 0xEE.
        let utf16_is_byte_order = !text.bytes().any(|b| b >= 0xEE);
        Universe {
            text,
            starts,
            ids,
            indexed,
            utf16_is_byte_order,
            utf16: OnceLock::new(),
            by_bytes: OnceLock::new(),
            by_units: OnceLock::new(),
            index: OnceLock::new(),
        }
    }

    /// Whether `name` is in the universe.
    #[inline]
    pub fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// [`Universe::contains`] for each of `names`: `each(i, found)` for
    /// the name at `i`, in order. Faster than one call per name when the
    /// names are many, as the lookups are made a group at a time and the
    /// memory they read is fetched for the group at once.
    pub fn contains_each(&self, names: &[&str], mut each: impl FnMut(usize, bool)) {
        self.place_each(names, |i, place| each(i, place.is_some()));
    }

    /// Where `name` is stored: the byte offset of its copy in the names'
    /// buffer, which no other non-empty name shares (so a caller can mark
    /// names by place, and test a looked-up name's mark without hashing
    /// it again); `None` when it is not a name.
    pub(crate) fn place(&self, name: &str) -> Option<usize> {
        self.find(name).and_then(|found| self.offset_of(found))
    }

    /// [`Universe::place`] for each of `names`, as [`Universe::contains_each`]
    /// looks them up: `each(i, place)` for the name at `i`, in order.
    pub(crate) fn place_each(&self, names: &[&str], mut each: impl FnMut(usize, Option<usize>)) {
        self.ids.get_each(&self.text, names, |i, found| {
            let place = match found {
                Some((start, _)) => Some(start),
                None => names
                    .get(i)
                    .and_then(|name| self.past_table(name))
                    .and_then(|found| self.offset_of(found)),
            };
            each(i, place);
        });
    }

    /// The offset in `text` of `found`, a slice of it.
    fn offset_of(&self, found: &str) -> Option<usize> {
        found.as_ptr().addr().checked_sub(self.text.as_ptr().addr())
    }

    /// true when any name starts with prefix (a wildcard `foo*` resolves
    /// when matches_prefix("foo")).
    pub fn matches_prefix(&self, prefix: &str) -> bool {
        if prefix.is_empty() {
            return !self.is_empty();
        }
        let Some(sorted) = self.by_bytes() else {
            return self.names().any(|n| n.starts_with(prefix));
        };
        // In byte order the names that start with `prefix` follow one
        // another, from the first name not below it.
        let wanted = prefix.as_bytes();
        let first = sorted.partition_point(|&id| self.bytes_of(id) < wanted);
        sorted
            .get(first)
            .is_some_and(|&id| self.bytes_of(id).starts_with(wanted))
    }

    /// upstream 17.4.0 suggestion exactly as behaviour.md states it.
    ///
    /// If `<prefix><reference>` is a name for a family prefix (`action_`),
    /// that name. Otherwise every name is scored, lengths and distances in
    /// UTF-16 units: when the reference has at least 3 units and one string
    /// contains the other (case-sensitively), the difference of their
    /// lengths; else `100 +` their Levenshtein distance, and the name is
    /// skipped when the distance exceeds `max(2, floor(len(reference) / 3))`.
    /// The lowest score wins, ties to the name scanned first. `None` when
    /// no name qualifies (or, as upstream's truthiness test has it, when
    /// the winner is the empty string).
    pub fn suggest(&self, reference: &str) -> Option<&str> {
        for prefix in objectstack_registry::FAMILY_PREFIXES {
            if let Some(found) = self.find(&format!("{prefix}{reference}")) {
                return Some(found);
            }
        }
        let Some(index) = self.suggest_index() else {
            return nearest(reference, self.names());
        };
        let (_, id) = index.best(self, reference)?;
        self.name(id).filter(|n| !n.is_empty())
    }

    /// Builds what [`Universe::suggest`] reads, now rather than on the
    /// first suggestion, using the thread pool: a caller about to ask for
    /// suggestions from many threads calls this first, so that none of
    /// them waits while one builds.
    pub fn prepare_suggestions(&self) {
        self.suggest_index();
    }

    pub(super) fn suggest_index(&self) -> Option<&Index> {
        self.index.get_or_init(|| Index::build(self)).as_ref()
    }

    /// The same answer as [`Universe::suggest`], computed as upstream does:
    /// the family-prefix lookup, then a scan of every name in order. It
    /// exists as the reference and baseline for tests and benchmarks; its
    /// cost grows with the universe, so use [`Universe::suggest`] otherwise.
    pub fn suggest_linear(&self, reference: &str) -> Option<&str> {
        for prefix in objectstack_registry::FAMILY_PREFIXES {
            let candidate = format!("{prefix}{reference}");
            if let Some(found) = self.names().find(|n| *n == candidate) {
                return Some(found);
            }
        }
        nearest(reference, self.names())
    }

    /// The names, in scan order without duplicates.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.name_at(i))
    }

    /// How many names there are.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The stored copy of `name`, if it is one.
    fn find(&self, name: &str) -> Option<&str> {
        match self.ids.get(&self.text, name) {
            Some((start, end)) => self.text.get(start..end),
            None => self.past_table(name),
        }
    }

    /// The stored copy of `name` among the names past the table (those
    /// beyond 4 GiB of names), found by a scan; `None` at once when every
    /// name is in the table.
    fn past_table(&self, name: &str) -> Option<&str> {
        if self.indexed >= self.len() {
            return None;
        }
        unindexed(&self.text, &self.starts, self.indexed).find(|n| *n == name)
    }

    fn name_at(&self, id: usize) -> &str {
        match (self.starts.get(id), self.starts.get(id + 1)) {
            (Some(&a), Some(&b)) => self.text.get(a..b).unwrap_or_default(),
            _ => "",
        }
    }

    pub(super) fn bytes_of(&self, id: u32) -> &[u8] {
        self.name_at(id as usize).as_bytes()
    }

    /// The names, end to end.
    pub(super) fn text(&self) -> &str {
        &self.text
    }

    /// Where name `id` starts in [`Universe::text`].
    pub(super) fn byte_start(&self, id: u32) -> Option<usize> {
        self.starts.get(id as usize).copied()
    }

    pub(super) fn name(&self, id: u32) -> Option<&str> {
        (id as usize)
            .lt(&self.len())
            .then(|| self.name_at(id as usize))
    }

    /// The names' UTF-16 units, encoded on first use.
    pub(super) fn utf16(&self) -> &Units {
        self.utf16.get_or_init(|| {
            let mut units = Vec::with_capacity(self.text.len());
            let mut starts = Vec::with_capacity(self.starts.len());
            starts.push(0);
            for name in self.names() {
                units.extend(name.encode_utf16());
                starts.push(units.len());
            }
            units.shrink_to_fit();
            Units { units, starts }
        })
    }

    pub(super) fn units_of(&self, id: u32) -> &[u16] {
        let utf16 = self.utf16();
        name_units(&utf16.units, &utf16.starts, id)
    }

    /// The id of the name spelled `units`.
    pub(super) fn lookup(&self, units: &[u16]) -> Option<u32> {
        self.lookup_name(&String::from_utf16(units).ok()?)
    }

    /// The id of the name `name`.
    pub(super) fn lookup_name(&self, name: &str) -> Option<u32> {
        let found = self.find(name)?;
        let start = self.offset_of(found)?;
        let end = start + found.len();
        // Starts ascend; an empty name shares its start with the next name.
        let first = self.starts.partition_point(|&x| x < start);
        (first..first + 2)
            .find(|&i| self.starts.get(i) == Some(&start) && self.starts.get(i + 1) == Some(&end))
            .and_then(id32)
    }

    /// Ids in byte order; `None` when ids do not fit in 32 bits.
    fn by_bytes(&self) -> Option<&[u32]> {
        id32(self.len())?;
        Some(self.by_bytes.get_or_init(|| sort_by_bytes(self)))
    }

    /// Ids sorted by UTF-16 units; `None` when ids do not fit in 32 bits.
    pub(super) fn sorted(&self) -> Option<&[u32]> {
        if self.utf16_is_byte_order {
            return self.by_bytes();
        }
        id32(self.len())?;
        Some(self.by_units.get_or_init(|| {
            let mut ids: Vec<u32> = (0..self.len()).filter_map(id32).collect();
            ids.par_sort_unstable_by(|&a, &b| cmp_units(self.units_of(a), self.units_of(b)));
            ids
        }))
    }
}

/// The names from id `from` on, in `text` cut at `starts`.
fn unindexed<'t>(text: &'t str, starts: &'t [usize], from: usize) -> impl Iterator<Item = &'t str> {
    starts
        .get(from..)
        .unwrap_or_default()
        .windows(2)
        .map(|w| match w {
            [a, b] => text.get(*a..*b).unwrap_or_default(),
            _ => "",
        })
}

/// The ids of `universe` in the byte order of their names.
///
/// Sorted eight bytes at a time: by each name's first eight bytes read as
/// one integer (big-endian, zero padded, which keeps byte order where they
/// differ, zero being the least byte), then each run of equal keys by the
/// next eight bytes, and so on; a short run, or one past [`KEYED_BYTES`],
/// by the names themselves. An entry is a key and an id, 16 bytes: the
/// sort runs while the rules' context is alive, when a large stack's run
/// holds the most memory, and a wider key (32 bytes read at once) made the
/// sort alone hold about 6 MB for 120,000 names.
fn sort_by_bytes(universe: &Universe) -> Vec<u32> {
    let mut keyed: Vec<(u64, u32)> = (0..universe.len())
        .filter_map(id32)
        .map(|id| (word_at(universe.bytes_of(id), 0), id))
        .collect();
    keyed.par_sort_unstable();
    keyed
        .par_chunk_by_mut(|a, b| a.0 == b.0)
        .for_each(|run| settle(universe, run, 8));
    keyed.into_iter().map(|(_, id)| id).collect()
}

/// Bytes of the names that [`sort_by_bytes`] reads as keys; runs that tie
/// past them are sorted by comparing the names.
const KEYED_BYTES: usize = 64;

/// Runs this short are sorted by comparing the names.
const SHORT_RUN: usize = 16;

/// Sorts `run`, whose names agree (zero padded) on their first `offset`
/// bytes, by byte order.
fn settle(universe: &Universe, run: &mut [(u64, u32)], offset: usize) {
    if run.len() < 2 {
        return;
    }
    if run.len() <= SHORT_RUN || offset >= KEYED_BYTES {
        run.sort_unstable_by(|a, b| universe.bytes_of(a.1).cmp(universe.bytes_of(b.1)));
        return;
    }
    for entry in run.iter_mut() {
        entry.0 = word_at(universe.bytes_of(entry.1), offset);
    }
    run.sort_unstable();
    for tied in run.chunk_by_mut(|a, b| a.0 == b.0) {
        settle(universe, tied, offset + 8);
    }
}

/// The eight bytes of `name` from `from` as a big-endian integer, zero
/// padded past its end.
fn word_at(name: &[u8], from: usize) -> u64 {
    let mut word = [0u8; 8];
    for (slot, &b) in word.iter_mut().zip(name.get(from..).unwrap_or_default()) {
        *slot = b;
    }
    u64::from_be_bytes(word)
}

impl Default for Universe {
    fn default() -> Self {
        Universe::new(Vec::new())
    }
}

impl fmt::Debug for Universe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Universe")
            .field("names", &self.names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Upstream's `suggestName` over `candidates` in order (no family-prefix
/// step): the plain linear scan that [`Universe::suggest`] must agree with.
pub(crate) fn nearest<'c>(
    target: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let target_len = utf16_len(target);
    let target_units: Vec<u16> = target.encode_utf16().collect();
    let bound = 2.max(target_len / 3);
    let mut best: Option<(&str, usize)> = None;
    for candidate in candidates {
        let score = if target_len >= 3 && (candidate.contains(target) || target.contains(candidate))
        {
            utf16_len(candidate).abs_diff(target_len)
        } else {
            let candidate_units: Vec<u16> = candidate.encode_utf16().collect();
            let d = levenshtein_units(&target_units, &candidate_units);
            if d > bound {
                continue;
            }
            100 + d
        };
        if best.is_none_or(|(_, s)| score < s) {
            best = Some((candidate, score));
        }
    }
    // Upstream prints a suggestion only when the winner is truthy.
    best.map(|(c, _)| c).filter(|c| !c.is_empty())
}

pub(super) fn id32(id: usize) -> Option<u32> {
    u32::try_from(id).ok()
}

/// `a.cmp(b)`, four units at a time.
fn cmp_units(a: &[u16], b: &[u16]) -> Ordering {
    let pack = |w: &[u16]| w.iter().fold(0u64, |k, &u| (k << 16) | u64::from(u));
    let mut at = 0;
    while let (Some(x), Some(y)) = (a.get(at..at + 4), b.get(at..at + 4)) {
        match pack(x).cmp(&pack(y)) {
            Ordering::Equal => at += 4,
            other => return other,
        }
    }
    a.get(at..)
        .unwrap_or_default()
        .cmp(b.get(at..).unwrap_or_default())
}

fn name_units<'u>(units: &'u [u16], starts: &[usize], id: u32) -> &'u [u16] {
    let id = id as usize;
    match (starts.get(id), starts.get(id + 1)) {
        (Some(&a), Some(&b)) => units.get(a..b).unwrap_or_default(),
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Names that tie on long prefixes, end inside and past the eight-byte
    /// words, and hold NUL bytes (which zero padding must not confuse
    /// with a name's end).
    fn names() -> impl Strategy<Value = Vec<String>> {
        let stem = prop_oneof![
            Just(String::new()),
            Just("action_approve_account_".to_owned()),
            Just("x".repeat(70)),
            Just("ab\0".to_owned()),
        ];
        prop::collection::vec(
            (stem, "[ab\0_é]{0,12}").prop_map(|(stem, tail)| stem + &tail),
            0..120,
        )
    }

    #[test]
    fn names_sharing_a_long_prefix_are_compared_past_the_keys() {
        let stem = "n".repeat(10_000);
        let names: Vec<String> = (0..40).rev().map(|i| format!("{stem}{i:03}")).collect();
        let universe = Universe::new(names.clone());
        let sorted: Vec<&str> = sort_by_bytes(&universe)
            .into_iter()
            .filter_map(|id| universe.name(id))
            .collect();
        let mut wanted: Vec<&str> = names.iter().map(String::as_str).collect();
        wanted.sort_unstable();
        assert_eq!(sorted, wanted);
    }

    proptest! {
        /// The keyed sort puts the names in the order comparing them does.
        #[test]
        fn sorts_as_the_names_compare(names in names()) {
            let universe = Universe::new(names);
            let sorted = sort_by_bytes(&universe);
            let mut wanted: Vec<u32> = (0..universe.len()).filter_map(id32).collect();
            wanted.sort_by(|&a, &b| universe.bytes_of(a).cmp(universe.bytes_of(b)));
            prop_assert_eq!(sorted, wanted);
        }
    }
}
