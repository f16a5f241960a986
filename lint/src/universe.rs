//! The resolution universe of `ai-skill-tool-unresolved`: exact membership,
//! trailing-`*` wildcards and upstream's "did you mean" suggestion, indexed
//! so that no per-reference cost grows with the number of names.
//!
//! Upstream (`@objectstack/lint` 17.4.0, `suggest2` over `nearestName`)
//! scans every name with a full edit-distance computation for every
//! unresolved reference. This module returns exactly the same answer,
//! ties included, from indexes:
//!
//! - **Membership**: an open-addressing hash table over the names' UTF-16
//!   units (built with the universe; 4 bytes per slot).
//! - **Wildcards**: binary search over the names sorted by UTF-16 units
//!   (built on the first wildcard or suggestion).
//! - **Suggestions** (built on the first suggestion; see [`Universe::suggest`]
//!   for the scoring):
//!   - names *inside* the reference: every window of the reference whose
//!     length is a name length is looked up in the hash table, with a
//!     rolling hash (cost bounded by reference length × longest name);
//!   - names *containing* the reference: posting lists of hashed trigrams,
//!     each sorted by (length, scan position), so the first verified entry
//!     of the reference's rarest trigram is the best containment candidate;
//!   - names within the edit-distance bound: a depth-first walk of the
//!     implicit trie of the sorted names with a banded Levenshtein row per
//!     depth, pruning a whole subtree as soon as every cell of its row
//!     exceeds the bound, and deepening the bound one step at a time from
//!     zero so the first hit is the nearest.
//!
//! Memory is proportional to the total length of the names. Lengths and
//! distances count UTF-16 code units, as JavaScript does. A naive
//! transliteration of upstream, [`nearest`], is kept as the reference the
//! indexed answer is tested against (and serves the rules that suggest
//! over small candidate lists).

use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

use objectstack_spec::text::{levenshtein_units, utf16_len};

/// Every tool name a skill may resolve to, in upstream's scan order.
#[derive(Clone)]
pub struct Universe {
    /// The names, deduplicated, in scan order; a name's id is its index.
    names: Vec<String>,
    /// The UTF-16 units of every name, concatenated.
    units: Vec<u16>,
    /// Name `i` is `units[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    /// Hash table of name ids.
    table: Table,
    /// Ids sorted by UTF-16 units (lazy).
    sorted: OnceLock<Vec<u32>>,
    /// The suggestion index (lazy).
    index: OnceLock<SuggestIndex>,
}

impl Universe {
    /// names in scan order: platform names (registry order), then
    /// stack.tools names, then stack-level action tools, then object action
    /// tools; duplicates keep their first position.
    pub fn new(names: Vec<String>) -> Self {
        let table = Table::with_capacity(names.len());
        let mut universe = Universe {
            names: Vec::with_capacity(names.len()),
            units: Vec::new(),
            starts: vec![0],
            table,
            sorted: OnceLock::new(),
            index: OnceLock::new(),
        };
        if universe.table.is_linear() {
            // More names than 32-bit ids can number: keep them unindexed.
            let mut seen = std::collections::HashSet::new();
            universe.names = names
                .into_iter()
                .filter(|n| seen.insert(n.clone()))
                .collect();
            return universe;
        }
        for name in names {
            let start = universe.units.len();
            universe.units.extend(name.encode_utf16());
            let new = universe.units.get(start..).unwrap_or_default();
            let hash = hash_units(new);
            let found = universe.table.find(hash, |id| {
                name_units(&universe.units, &universe.starts, id) == new
            });
            match found {
                Ok(_) => universe.units.truncate(start),
                Err(slot) => {
                    let id = universe.names.len();
                    universe.table.fill(slot, id);
                    universe.names.push(name);
                    universe.starts.push(universe.units.len());
                }
            }
        }
        universe
    }

    /// Whether `name` is in the universe.
    pub fn contains(&self, name: &str) -> bool {
        if self.table.is_linear() {
            return self.names.iter().any(|n| n == name);
        }
        let hash = name.encode_utf16().fold(SEED, step);
        self.table
            .find(hash, |id| self.name(id) == Some(name))
            .is_ok()
    }

    /// true when any name starts with prefix (a wildcard `foo*` resolves
    /// when matches_prefix("foo")).
    pub fn matches_prefix(&self, prefix: &str) -> bool {
        if prefix.is_empty() {
            return !self.names.is_empty();
        }
        if self.table.is_linear() {
            return self.names.iter().any(|n| n.starts_with(prefix));
        }
        let sorted = self.sorted();
        let first = sorted.partition_point(|&id| {
            self.units_of(id).iter().copied().cmp(prefix.encode_utf16()) == Ordering::Less
        });
        sorted.get(first).is_some_and(|&id| {
            let mut units = self.units_of(id).iter().copied();
            prefix.encode_utf16().all(|u| units.next() == Some(u))
        })
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
        if self.table.is_linear() {
            for prefix in objectstack_registry::FAMILY_PREFIXES {
                let candidate = format!("{prefix}{reference}");
                if let Some(found) = self.names.iter().find(|n| **n == candidate) {
                    return Some(found);
                }
            }
            return nearest(reference, self.names.iter().map(String::as_str));
        }
        for prefix in objectstack_registry::FAMILY_PREFIXES {
            let candidate: Vec<u16> = prefix.encode_utf16().chain(reference.encode_utf16()).collect();
            if let Some(id) = self.lookup(hash_units(&candidate), &candidate) {
                return self.name(id);
            }
        }
        let query: Vec<u16> = reference.encode_utf16().collect();
        let index = self
            .index
            .get_or_init(|| SuggestIndex::build(self));
        let (_, id) = index.best(self, self.sorted(), &query)?;
        self.name(id).filter(|n| !n.is_empty())
    }

    /// The names, in scan order without duplicates.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn name(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }

    fn units_of(&self, id: u32) -> &[u16] {
        name_units(&self.units, &self.starts, id)
    }

    /// The id of the name spelled `units`, whose hash is `hash`.
    fn lookup(&self, hash: u64, units: &[u16]) -> Option<u32> {
        self.table.find(hash, |id| self.units_of(id) == units).ok()
    }

    fn sorted(&self) -> &[u32] {
        self.sorted.get_or_init(|| {
            let mut ids: Vec<u32> = (0..self.names.len()).filter_map(id32).collect();
            ids.sort_unstable_by(|&a, &b| self.units_of(a).cmp(self.units_of(b)));
            ids
        })
    }
}

impl Default for Universe {
    fn default() -> Self {
        Universe::new(Vec::new())
    }
}

impl fmt::Debug for Universe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Universe")
            .field("names", &self.names)
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

// ---------------------------------------------------------------------------
// Hashing

const SEED: u64 = 0x243f_6a88_85a3_08d3;
const MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;

/// One step of the (incremental) hash of a unit sequence: the hash of a
/// sequence extended by `unit` is `step(hash(sequence), unit)`.
fn step(hash: u64, unit: u16) -> u64 {
    (hash.rotate_left(5) ^ u64::from(unit)).wrapping_mul(MULTIPLIER)
}

fn hash_units(units: &[u16]) -> u64 {
    units.iter().copied().fold(SEED, step)
}

fn id32(id: usize) -> Option<u32> {
    u32::try_from(id).ok()
}

fn name_units<'u>(units: &'u [u16], starts: &[usize], id: u32) -> &'u [u16] {
    let id = id as usize;
    match (starts.get(id), starts.get(id + 1)) {
        (Some(&a), Some(&b)) => units.get(a..b).unwrap_or_default(),
        _ => &[],
    }
}

/// Open addressing with linear probing; a slot holds `id + 1`, 0 is empty.
#[derive(Clone)]
struct Table {
    slots: Vec<u32>,
    /// `64 - log2(slots.len())`: the slot of a hash is its top bits.
    shift: u32,
}

impl Table {
    /// A table for up to `n` names at load factor at most 1/2, or an empty
    /// ("linear") table when `n` ids do not fit in 32 bits.
    fn with_capacity(n: usize) -> Self {
        if n >= u32::MAX as usize {
            return Table {
                slots: Vec::new(),
                shift: 0,
            };
        }
        let bits = (n.max(4) * 2).next_power_of_two().trailing_zeros();
        Table {
            slots: vec![0; 1 << bits],
            shift: 64 - bits,
        }
    }

    fn is_linear(&self) -> bool {
        self.slots.is_empty()
    }

    /// `Ok(id)` of the entry that `is` accepts along the probe sequence of
    /// `hash`, else `Err(empty slot)`.
    fn find(&self, hash: u64, is: impl Fn(u32) -> bool) -> Result<u32, usize> {
        let mask = self.slots.len().wrapping_sub(1);
        let mut slot = (hash >> self.shift) as usize & mask;
        // The load factor keeps an empty slot, so this loop ends; the bound
        // is a guard against a logic error, not a limit ever reached.
        for _ in 0..self.slots.len() {
            match self.slots.get(slot) {
                Some(0) | None => return Err(slot),
                Some(&v) => {
                    if is(v - 1) {
                        return Ok(v - 1);
                    }
                }
            }
            slot = (slot + 1) & mask;
        }
        Err(usize::MAX)
    }

    fn fill(&mut self, slot: usize, id: usize) {
        if let (Some(cell), Some(v)) = (self.slots.get_mut(slot), id32(id + 1)) {
            *cell = v;
        }
    }
}

// ---------------------------------------------------------------------------
// The suggestion index

/// A score and the id of the name that earns it; lower is better, ties go
/// to the lower id (the name scanned first).
type Scored = (usize, u32);

fn better(a: Option<Scored>, b: Option<Scored>) -> Option<Scored> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Cells above this many make one edit-distance walk fall back to a linear
/// scan (only for pathologically long references and names).
const MAX_BAND_CELLS: usize = 1 << 22;

#[derive(Clone)]
struct SuggestIndex {
    /// Length (UTF-16 units) of the longest name.
    max_len: usize,
    /// `has_len[l]`: some name is `l` units long.
    has_len: Vec<bool>,
    /// The empty name's id, if the universe has one.
    empty: Option<u32>,
    /// Ids ordered by (length, id): a name's *rank* is its position here.
    rank_to_id: Vec<u32>,
    /// Length of the name of each rank (ascending).
    rank_len: Vec<usize>,
    /// `64 - log2(bucket count)` for trigram hashes.
    bucket_shift: u32,
    /// Postings of bucket `b` are `postings[bucket_starts[b]..bucket_starts[b + 1]]`.
    bucket_starts: Vec<usize>,
    /// Ranks, ascending within each bucket, one per (bucket, name).
    postings: Vec<u32>,
}

impl SuggestIndex {
    fn build(universe: &Universe) -> Self {
        let n = universe.names.len();
        let mut lens = Vec::with_capacity(n);
        let mut max_len = 0;
        for id in (0..n).filter_map(id32) {
            let len = universe.units_of(id).len();
            max_len = max_len.max(len);
            lens.push((len, id));
        }
        lens.sort_unstable();
        let mut has_len = vec![false; max_len + 1];
        let mut empty = None;
        for &(len, id) in &lens {
            if let Some(slot) = has_len.get_mut(len) {
                *slot = true;
            }
            if len == 0 {
                empty = Some(id);
            }
        }
        let rank_to_id: Vec<u32> = lens.iter().map(|&(_, id)| id).collect();
        let rank_len: Vec<usize> = lens.iter().map(|&(len, _)| len).collect();

        let trigrams: usize = rank_len.iter().map(|l| l.saturating_sub(2)).sum();
        let bits = (trigrams / 16).next_power_of_two().trailing_zeros().clamp(8, 20);
        let buckets = 1usize << bits;
        let bucket_shift = 64 - bits;
        // Two passes, counting then filling; `last` drops a name's repeats
        // of a bucket, which are adjacent because ranks arrive in order.
        let mut counts = vec![0usize; buckets + 1];
        let mut last = vec![u32::MAX; buckets];
        for (rank, &id) in rank_to_id.iter().enumerate() {
            let Some(rank) = id32(rank) else { continue };
            for bucket in trigram_buckets(universe.units_of(id), bucket_shift) {
                if let (Some(l), Some(c)) = (last.get_mut(bucket), counts.get_mut(bucket + 1)) {
                    if *l != rank {
                        *l = rank;
                        *c += 1;
                    }
                }
            }
        }
        for b in 0..buckets {
            let prev = counts.get(b).copied().unwrap_or(0);
            if let Some(c) = counts.get_mut(b + 1) {
                *c += prev;
            }
        }
        let bucket_starts = counts.clone();
        let mut fill = counts;
        let mut postings = vec![0u32; bucket_starts.last().copied().unwrap_or(0)];
        last.fill(u32::MAX);
        for (rank, &id) in rank_to_id.iter().enumerate() {
            let Some(rank) = id32(rank) else { continue };
            for bucket in trigram_buckets(universe.units_of(id), bucket_shift) {
                if let (Some(l), Some(at)) = (last.get_mut(bucket), fill.get_mut(bucket)) {
                    if *l != rank {
                        *l = rank;
                        if let Some(p) = postings.get_mut(*at) {
                            *p = rank;
                        }
                        *at += 1;
                    }
                }
            }
        }
        SuggestIndex {
            max_len,
            has_len,
            empty,
            rank_to_id,
            rank_len,
            bucket_shift,
            bucket_starts,
            postings,
        }
    }

    /// The best (score, id) for `query`, as upstream's linear scan finds it.
    fn best(&self, universe: &Universe, sorted: &[u32], query: &[u16]) -> Option<Scored> {
        let len = query.len();
        let mut best = None;
        if len >= 3 {
            best = better(best, self.inside(universe, query));
            best = better(best, self.containing(universe, query, best));
            if let Some((score, _)) = best {
                if score <= 100 {
                    // No edit-distance score (100 + d) can beat it: an equal
                    // 100 would need d = 0, a name equal to the query, which
                    // contains it and scores 0.
                    return best;
                }
            }
        }
        let bound = 2.max(len / 3);
        let limit = match best {
            Some((score, _)) => bound.min(score - 100),
            None => bound,
        };
        let edit = self
            .nearest_edit(universe, sorted, query, limit)
            .map(|(d, id)| (100 + d, id));
        better(best, edit)
    }

    /// The best name inside the query (scored `len(query) - len(name)`).
    fn inside(&self, universe: &Universe, query: &[u16]) -> Option<Scored> {
        let len = query.len();
        let mut best = self.empty.map(|id| (len, id));
        for start in 0..len {
            let window = query.get(start..).unwrap_or_default();
            let mut hash = SEED;
            for (i, &unit) in window.iter().take(self.max_len).enumerate() {
                hash = step(hash, unit);
                let width = i + 1;
                if !self.has_len.get(width).copied().unwrap_or(false) {
                    continue;
                }
                let units = window.get(..width).unwrap_or_default();
                if let Some(id) = universe.lookup(hash, units) {
                    best = better(best, Some((len - width, id)));
                }
            }
        }
        best
    }

    /// The best name containing the query (scored `len(name) - len(query)`),
    /// unless it cannot beat `bound`.
    fn containing(
        &self,
        universe: &Universe,
        query: &[u16],
        bound: Option<Scored>,
    ) -> Option<Scored> {
        let len = query.len();
        // The rarest trigram's bucket: every name containing the query has
        // all its trigrams, so lists only this bucket's names.
        let list = trigram_buckets(query, self.bucket_shift)
            .map(|b| self.bucket(b))
            .min_by_key(|list| list.len())?;
        let first = list.partition_point(|&rank| self.len_of_rank(rank) < len);
        for &rank in list.get(first..).unwrap_or_default() {
            let score = self.len_of_rank(rank) - len;
            if bound.is_some_and(|(s, _)| score > s) {
                break;
            }
            let Some(&id) = self.rank_to_id.get(rank as usize) else {
                continue;
            };
            if universe.units_of(id).windows(len).any(|w| w == query) {
                // Ranks ascend by (length, id): the first hit is the best.
                return Some((score, id));
            }
        }
        None
    }

    fn bucket(&self, bucket: usize) -> &[u32] {
        match (
            self.bucket_starts.get(bucket),
            self.bucket_starts.get(bucket + 1),
        ) {
            (Some(&a), Some(&b)) => self.postings.get(a..b).unwrap_or_default(),
            _ => &[],
        }
    }

    fn len_of_rank(&self, rank: u32) -> usize {
        self.rank_len.get(rank as usize).copied().unwrap_or(0)
    }

    fn any_len_within(&self, len: usize, bound: usize) -> bool {
        let lo = len.saturating_sub(bound);
        let hi = (len + bound).min(self.max_len);
        lo <= hi && self.has_len.get(lo..=hi).is_some_and(|s| s.contains(&true))
    }

    /// The nearest name at edit distance at most `limit`, as (distance, id)
    /// with the lowest id among the nearest.
    fn nearest_edit(
        &self,
        universe: &Universe,
        sorted: &[u32],
        query: &[u16],
        limit: usize,
    ) -> Option<Scored> {
        if let Some(id) = universe.lookup(hash_units(query), query) {
            return Some((0, id));
        }
        // Deepen one error at a time: the first bound with a hit holds the
        // nearest names, all at exactly that distance.
        for bound in 1..=limit {
            if !self.any_len_within(query.len(), bound) {
                continue;
            }
            let depth = self.max_len.min(query.len() + bound + 1);
            let hit = if (depth + 1).saturating_mul(2 * bound + 1) > MAX_BAND_CELLS {
                self.scan_within(universe, query, bound)
            } else {
                walk_within(universe, sorted, query, bound, depth)
            };
            if let Some(id) = hit {
                return Some((bound, id));
            }
        }
        None
    }

    /// Linear fallback of [`walk_within`] for pathological sizes.
    fn scan_within(&self, universe: &Universe, query: &[u16], bound: usize) -> Option<u32> {
        (0..universe.names.len()).filter_map(id32).find(|&id| {
            let units = universe.units_of(id);
            units.len().abs_diff(query.len()) <= bound && levenshtein_units(query, units) <= bound
        })
    }
}

/// The trigram buckets of `units`, one per position (repeats included).
fn trigram_buckets(units: &[u16], shift: u32) -> impl Iterator<Item = usize> + '_ {
    units.windows(3).map(move |w| {
        let hash = w.iter().copied().fold(SEED, step);
        (hash >> shift) as usize
    })
}

/// The lowest id among names within edit distance `bound` of `query`: a
/// depth-first walk of the implicit trie of `sorted` (ids in UTF-16 order)
/// keeping one banded Levenshtein row per depth. Row `t` holds
/// `D[t][j] = distance(name[..t], query[..j])` for `|t - j| <= bound` at
/// offset `j + bound - t`; cells are capped at `bound + 1`. A row whose
/// every cell exceeds the bound kills its prefix: every name sharing it is
/// skipped with one binary search.
fn walk_within(
    universe: &Universe,
    sorted: &[u32],
    query: &[u16],
    bound: usize,
    depth: usize,
) -> Option<u32> {
    let len = query.len();
    let width = 2 * bound + 1;
    let cap = u32::try_from(bound + 1).unwrap_or(u32::MAX);
    let mut rows = vec![cap; (depth + 1) * width];
    for (offset, cell) in rows.iter_mut().take(width).enumerate() {
        if offset >= bound && offset - bound <= len {
            *cell = u32::try_from(offset - bound).unwrap_or(cap);
        }
    }
    let mut valid = 0;
    let mut path: &[u16] = &[];
    let mut best: Option<u32> = None;
    let mut i = 0;
    while let Some(&id) = sorted.get(i) {
        let name = universe.units_of(id);
        let shared = path.iter().zip(name).take_while(|(a, b)| a == b).count();
        let mut t = shared.min(valid);
        let mut dead = false;
        while let Some(&unit) = name.get(t) {
            if t + 1 > depth {
                dead = true;
                break;
            }
            let (head, tail) = rows.split_at_mut((t + 1) * width);
            let prev = head.get(t * width..).unwrap_or_default();
            let cur = tail.get_mut(..width).unwrap_or_default();
            let min = band_row(prev, cur, query, unit, t + 1, bound, cap);
            t += 1;
            if min > bound as u32 {
                dead = true;
                break;
            }
        }
        valid = t;
        path = name;
        if dead {
            let prefix = name.get(..t).unwrap_or_default();
            let rest = sorted.get(i + 1..).unwrap_or_default();
            i += 1 + rest.partition_point(|&other| universe.units_of(other).starts_with(prefix));
        } else {
            let n = name.len();
            if n + bound >= len && n <= len + bound {
                let cell = rows.get(n * width + (len + bound - n)).copied();
                if cell.is_some_and(|d| d <= bound as u32) && best.is_none_or(|b| id < b) {
                    best = Some(id);
                }
            }
            i += 1;
        }
    }
    best
}

/// Computes row `t` (for name unit `unit`) from row `t - 1`; returns its
/// minimum.
fn band_row(
    prev: &[u32],
    cur: &mut [u32],
    query: &[u16],
    unit: u16,
    t: usize,
    bound: usize,
    cap: u32,
) -> u32 {
    let mut min = cap;
    let mut left = cap;
    for (offset, cell) in cur.iter_mut().enumerate() {
        let value = match (t + offset).checked_sub(bound) {
            None => cap,
            Some(j) if j > query.len() => cap,
            Some(0) => u32::try_from(t).unwrap_or(cap).min(cap),
            Some(j) => {
                let same = query.get(j - 1) == Some(&unit);
                let diag = prev.get(offset).copied().unwrap_or(cap) + u32::from(!same);
                let up = prev.get(offset + 1).copied().unwrap_or(cap) + 1;
                diag.min(up).min(left + 1).min(cap)
            }
        };
        *cell = value;
        left = value;
        min = min.min(value);
    }
    min
}

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
            if universe.names().contains(&candidate) {
                return Some(candidate);
            }
        }
        nearest(reference, universe.names().iter().map(String::as_str)).map(str::to_owned)
    }

    fn check(names: &[&str], reference: &str, expected: Option<&str>) {
        let universe = u(names);
        assert_eq!(universe.suggest(reference), expected, "indexed, {reference:?}");
        assert_eq!(
            naive(&universe, reference).as_deref(),
            expected,
            "naive, {reference:?}"
        );
    }

    #[test]
    fn duplicates_keep_first_position() {
        let u = u(&["a", "b", "a"]);
        assert_eq!(u.names(), ["a", "b"]);
        assert!(u.contains("b") && !u.contains("c"));
    }

    #[test]
    fn membership_is_exact() {
        let u = u(&["action_close", "query_data", "é😀"]);
        assert!(u.contains("query_data") && u.contains("é😀"));
        assert!(!u.contains("query_dat") && !u.contains("query_data_") && !u.contains(""));
        assert!(Universe::default().names().is_empty());
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
        check(&["get_record", "action_triage", "triage"], "triage", Some("action_triage"));
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
    fn matches_the_naive_scan_on_a_generated_universe() {
        let (names, refs) = crate::synth::names_and_references(&crate::synth::SynthConfig {
            references: 4_000,
            miss_percent: 20.0,
            seed: 7,
        });
        let universe = Universe::new(names);
        let mut suggested = 0;
        for reference in refs.iter().filter(|r| !universe.contains(r)).take(300) {
            let got = universe.suggest(reference);
            assert_eq!(got, naive(&universe, reference).as_deref(), "{reference}");
            suggested += usize::from(got.is_some());
        }
        assert!(suggested > 100, "{suggested}");
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
        (pick, any::<prop::sample::Index>(), any::<prop::sample::Index>(), word(3), 0..5u8)
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
            let refs = prop::collection::vec(
                prop_oneof![word(14), derived(names.clone())],
                1..12,
            );
            (Just(names), refs)
        })
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
