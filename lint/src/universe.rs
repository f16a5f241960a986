//! The resolution universe of `ai-skill-tool-unresolved`: exact membership,
//! trailing-`*` wildcards and upstream's "did you mean" suggestion, indexed
//! so that no per-reference cost grows with the number of names.
//!
//! Upstream (`@objectstack/lint` 17.4.0, `suggest2` over `nearestName`)
//! scans every name with a full edit-distance computation for every
//! unresolved reference. This module returns exactly the same answer,
//! ties included, from indexes:
//!
//! - **Membership**: a hash map from name to scan position, built with the
//!   universe.
//! - **Wildcards**: binary search over the names sorted by UTF-16 units
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
//!   - names within the edit-distance bound: a depth-first walk of the trie
//!     with one banded Levenshtein row per depth, abandoning a subtree as
//!     soon as no name of its lengths can come within the bound or beat the
//!     best found, at bound 1, then 2, then the full bound (small bounds
//!     prune hardest, and typos are one edit away).
//!
//! Memory is proportional to the total length of the names. Lengths and
//! distances count UTF-16 code units, as JavaScript does. A transliteration
//! of upstream's linear scan, `nearest`, is kept as the reference the
//! indexed answer is tested against (and serves the rules that suggest
//! over short candidate lists).

use std::cmp::Ordering;
use std::collections::HashSet;
use std::hash::BuildHasher;

/// A fast hasher for names from the document (not attacker-sensitive: a
/// lint run ends with the process).
type FastHash = foldhash::fast::RandomState;
use std::fmt;
use std::sync::OnceLock;

use objectstack_spec::text::{levenshtein_units, utf16_len};
use rayon::slice::ParallelSliceMut;

/// Every tool name a skill may resolve to, in upstream's scan order.
#[derive(Clone)]
pub struct Universe {
    /// The names, deduplicated, in scan order; a name's id is its index.
    names: Vec<String>,
    /// The UTF-16 units of every name, concatenated.
    units: Vec<u16>,
    /// Name `i` is `units[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    /// Name to id; `None` when ids do not fit in 32 bits (then every
    /// question is answered by a linear scan).
    ids: Option<Ids>,
    /// Ids sorted by UTF-16 units (lazy).
    sorted: OnceLock<Vec<u32>>,
    /// The suggestion index (lazy); `None` when the names are too many or
    /// too long for 32-bit offsets, and suggestions scan linearly.
    index: OnceLock<Option<SuggestIndex>>,
}

/// Name to id, as a table of ids hashed by the name they stand for, so the
/// names are stored once (in `Universe::names`).
#[derive(Debug, Clone)]
struct Ids {
    table: hashbrown::HashTable<u32>,
    hasher: FastHash,
}

impl Ids {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            table: hashbrown::HashTable::with_capacity(capacity),
            hasher: FastHash::default(),
        }
    }

    /// The id of `name`, where `names[id]` spells each id.
    fn get(&self, names: &[String], name: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(name);
        self.table
            .find(hash, |&id| {
                names.get(id as usize).is_some_and(|n| n == name)
            })
            .copied()
    }

    /// Records that `names[id]` (about to be pushed) is `name`.
    fn insert(&mut self, names: &[String], name: &str, id: u32) {
        let hasher = &self.hasher;
        self.table
            .insert_unique(hasher.hash_one(name), id, |&other| {
                names
                    .get(other as usize)
                    .map_or(0, |n| hasher.hash_one(n.as_str()))
            });
    }
}

impl Universe {
    /// names in scan order: platform names (registry order), then
    /// stack.tools names, then stack-level action tools, then object action
    /// tools; duplicates keep their first position.
    pub fn new(names: Vec<String>) -> Self {
        let mut universe = Universe {
            names: Vec::with_capacity(names.len()),
            units: Vec::new(),
            starts: vec![0],
            ids: None,
            sorted: OnceLock::new(),
            index: OnceLock::new(),
        };
        if names.len() >= u32::MAX as usize {
            // More names than 32-bit ids can number: keep them unindexed.
            let mut seen = HashSet::new();
            universe.names = names
                .into_iter()
                .filter(|n| seen.insert(n.clone()))
                .collect();
            return universe;
        }
        let mut ids = Ids::with_capacity(names.len());
        for name in names {
            if ids.get(&universe.names, &name).is_some() {
                continue;
            }
            let Some(id) = id32(universe.names.len()) else {
                continue;
            };
            ids.insert(&universe.names, &name, id);
            universe.units.extend(name.encode_utf16());
            universe.starts.push(universe.units.len());
            universe.names.push(name);
        }
        universe.ids = Some(ids);
        universe
    }

    /// Whether `name` is in the universe.
    pub fn contains(&self, name: &str) -> bool {
        match &self.ids {
            Some(ids) => ids.get(&self.names, name).is_some(),
            None => self.names.iter().any(|n| n == name),
        }
    }

    /// true when any name starts with prefix (a wildcard `foo*` resolves
    /// when matches_prefix("foo")).
    pub fn matches_prefix(&self, prefix: &str) -> bool {
        if prefix.is_empty() {
            return !self.names.is_empty();
        }
        if self.ids.is_none() {
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
        let Some(ids) = &self.ids else {
            return self.suggest_linear(reference);
        };
        for prefix in objectstack_registry::FAMILY_PREFIXES {
            if let Some(id) = ids.get(&self.names, &format!("{prefix}{reference}")) {
                return self.name(id);
            }
        }
        let index = self
            .index
            .get_or_init(|| SuggestIndex::build(self, self.sorted()));
        let Some(index) = index else {
            return nearest(reference, self.names.iter().map(String::as_str));
        };
        let query: Vec<u16> = reference.encode_utf16().collect();
        let (_, id) = index.best(self, &query)?;
        self.name(id).filter(|n| !n.is_empty())
    }

    /// The same answer as [`Universe::suggest`], computed as upstream does:
    /// the family-prefix lookup, then a scan of every name in order. It
    /// exists as the reference and baseline for tests and benchmarks; its
    /// cost grows with the universe, so use [`Universe::suggest`] otherwise.
    pub fn suggest_linear(&self, reference: &str) -> Option<&str> {
        for prefix in objectstack_registry::FAMILY_PREFIXES {
            let candidate = format!("{prefix}{reference}");
            if let Some(found) = self.names.iter().find(|n| **n == candidate) {
                return Some(found);
            }
        }
        nearest(reference, self.names.iter().map(String::as_str))
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

    /// The id of the name spelled `units`.
    fn lookup(&self, units: &[u16]) -> Option<u32> {
        let name = String::from_utf16(units).ok()?;
        self.ids.as_ref()?.get(&self.names, &name)
    }

    fn sorted(&self) -> &[u32] {
        self.sorted.get_or_init(|| {
            let mut ids: Vec<u32> = (0..self.names.len()).filter_map(id32).collect();
            ids.par_sort_unstable_by(|&a, &b| cmp_units(self.units_of(a), self.units_of(b)));
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
// Helpers

fn id32(id: usize) -> Option<u32> {
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

/// "No name" in [`Node::terminal`].
const NONE: u32 = u32::MAX;

/// Cells above this many make one edit-distance walk fall back to a linear
/// scan (only for pathologically long references and names).
const MAX_BAND_CELLS: usize = 1 << 22;

#[derive(Clone)]
struct SuggestIndex {
    trie: Vec<Node>,
    /// The trie's edge labels, in node order (siblings side by side).
    labels: Vec<u16>,
    /// `has_len[l]`: some name is `l` units long.
    has_len: Vec<bool>,
    /// Ids ordered by (length, id): a name's *rank* is its position here.
    rank_to_id: Vec<u32>,
    /// Length of the name of each rank (ascending).
    rank_len: Vec<u32>,
    /// `64 - log2(bucket count)` for trigram hashes.
    bucket_shift: u32,
    /// Postings of bucket `b` are `postings[bucket_starts[b]..bucket_starts[b + 1]]`.
    bucket_starts: Vec<u32>,
    /// Ranks, ascending within each bucket, one per (bucket, name).
    postings: Vec<u32>,
}

/// A node of the compressed trie of the names.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    /// The edge label is `labels[label..label + label_len]`.
    label: u32,
    label_len: u32,
    /// Prefix length at the end of the label.
    depth: u32,
    /// Children are `trie[first_child..first_child + children]`, ascending
    /// by the first unit of their labels.
    first_child: u32,
    children: u32,
    /// The name spelled by the path to here, or [`NONE`].
    terminal: u32,
    /// Lowest id, and shortest and longest name length, in the subtree.
    min_id: u32,
    min_len: u32,
    max_len: u32,
}

impl SuggestIndex {
    /// `None` when an offset does not fit in 32 bits.
    fn build(universe: &Universe, sorted: &[u32]) -> Option<Self> {
        id32(universe.units.len())?;
        let n = universe.names.len();
        let mut lens = Vec::with_capacity(n);
        let mut max_len = 0;
        for id in (0..n).filter_map(id32) {
            let len = universe.units_of(id).len();
            max_len = max_len.max(len);
            lens.push((id32(len)?, id));
        }
        lens.sort_unstable();
        let mut has_len = vec![false; max_len + 1];
        for &(len, _) in &lens {
            if let Some(slot) = has_len.get_mut(len as usize) {
                *slot = true;
            }
        }
        let rank_to_id: Vec<u32> = lens.iter().map(|&(_, id)| id).collect();
        let rank_len: Vec<u32> = lens.iter().map(|&(len, _)| len).collect();
        let (bucket_shift, bucket_starts, postings) = trigram_postings(universe, &rank_to_id)?;
        let (trie, labels) = build_trie(universe, sorted)?;
        Some(SuggestIndex {
            trie,
            labels,
            has_len,
            rank_to_id,
            rank_len,
            bucket_shift,
            bucket_starts,
            postings,
        })
    }

    fn label(&self, node: &Node) -> &[u16] {
        let start = node.label as usize;
        self.labels
            .get(start..start + node.label_len as usize)
            .unwrap_or_default()
    }

    fn node(&self, index: u32) -> Option<&Node> {
        self.trie.get(index as usize)
    }

    fn children(&self, node: &Node) -> &[Node] {
        let first = node.first_child as usize;
        self.trie
            .get(first..first + node.children as usize)
            .unwrap_or_default()
    }

    /// The best (score, id) for `query`, as upstream's linear scan finds it.
    fn best(&self, universe: &Universe, query: &[u16]) -> Option<Scored> {
        let len = query.len();
        let mut best = None;
        if len >= 3 {
            best = better(best, self.inside(query));
            best = better(best, self.containing(universe, query, best));
            if let Some((score, _)) = best
                && score <= 100
            {
                // No edit-distance score (100 + d) can beat it: an equal 100
                // would need d = 0, a name equal to the query, which contains
                // it and scores 0.
                return best;
            }
        }
        let bound = 2.max(len / 3);
        let limit = match best {
            Some((score, _)) => bound.min(score - 100),
            None => bound,
        };
        let edit = self
            .nearest_edit(universe, query, limit)
            .map(|(d, id)| (100 + d, id));
        better(best, edit)
    }

    /// The best name inside the query (scored `len(query) - len(name)`):
    /// from every start, walk down the trie along the query.
    fn inside(&self, query: &[u16]) -> Option<Scored> {
        let len = query.len();
        let mut best = None;
        for start in 0..len {
            let mut at = start;
            let mut node = self.node(0);
            while let Some(n) = node {
                let label = self.label(n);
                if !query.get(at..).is_some_and(|rest| rest.starts_with(label)) {
                    break;
                }
                at += label.len();
                if n.terminal != NONE {
                    best = better(best, Some((len - (at - start), n.terminal)));
                }
                let Some(&unit) = query.get(at) else { break };
                node = self.child(n, unit);
            }
        }
        best
    }

    /// The child of `node` whose label starts with `unit`.
    fn child(&self, node: &Node, unit: u16) -> Option<&Node> {
        let children = self.children(node);
        let first = |c: &Node| self.labels.get(c.label as usize).copied();
        let i = children.partition_point(|c| first(c) < Some(unit));
        children.get(i).filter(|c| first(c) == Some(unit))
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
        let first_unit = *query.first()?;
        // The rarest trigram's bucket: every name containing the query has
        // all its trigrams, so lists only this bucket's names.
        let list = trigram_buckets(query, self.bucket_shift)
            .map(|b| self.bucket(b))
            .min_by_key(|list| list.len())?;
        let first = list.partition_point(|&rank| (self.len_of_rank(rank) as usize) < len);
        for &rank in list.get(first..).unwrap_or_default() {
            let score = self.len_of_rank(rank) as usize - len;
            if bound.is_some_and(|(s, _)| score > s) {
                break;
            }
            let Some(&id) = self.rank_to_id.get(rank as usize) else {
                continue;
            };
            let found = universe
                .units_of(id)
                .windows(len)
                .any(|w| w.first() == Some(&first_unit) && w == query);
            if found {
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
            (Some(&a), Some(&b)) => self
                .postings
                .get(a as usize..b as usize)
                .unwrap_or_default(),
            _ => &[],
        }
    }

    fn len_of_rank(&self, rank: u32) -> u32 {
        self.rank_len.get(rank as usize).copied().unwrap_or(0)
    }

    fn any_len_within(&self, len: usize, bound: usize) -> bool {
        let lo = len.saturating_sub(bound);
        let hi = (len + bound).min(self.has_len.len().saturating_sub(1));
        lo <= hi && self.has_len.get(lo..=hi).is_some_and(|s| s.contains(&true))
    }

    /// The nearest name at edit distance at most `limit`, as (distance, id)
    /// with the lowest id among the nearest.
    fn nearest_edit(&self, universe: &Universe, query: &[u16], limit: usize) -> Option<Scored> {
        if let Some(id) = universe.lookup(query) {
            return Some((0, id));
        }
        let max_len = self.has_len.len().saturating_sub(1);
        // One error (typos), two, then everything up to the limit with the
        // bound tightening as names are found: small bounds prune hardest,
        // and a bound that finds nothing is not walked twice.
        let schedule = [1, 2, limit];
        let mut last_done = 0;
        for bound in schedule {
            if bound <= last_done {
                continue;
            }
            if !self.any_len_within(query.len(), bound) {
                continue;
            }
            let depth = max_len.min(query.len() + bound + 1);
            let hit = if (depth + 1).saturating_mul(2 * bound + 1) > MAX_BAND_CELLS {
                scan_within(universe, query, bound)
            } else {
                self.walk_within(query, bound, depth, last_done + 1)
            };
            if hit.is_some() {
                return hit;
            }
            last_done = bound;
        }
        None
    }

    /// The nearest name within edit distance `bound` of `query`, as
    /// (distance, id) with the lowest id among the nearest: a depth-first
    /// walk of the trie keeping one banded Levenshtein row per depth. Row
    /// `t` holds `D[t][j] = distance(name[..t], query[..j])` for
    /// `|t - j| <= bound` at offset `j + bound - t`, capped at `bound + 1`.
    /// A subtree is abandoned when no name of its lengths can finish within
    /// the bound (tightened to the best distance found) from any cell of
    /// the current row, or when it could only tie the best with higher ids.
    /// No name is nearer than `floor` (the caller has ruled those out).
    fn walk_within(
        &self,
        query: &[u16],
        bound: usize,
        depth: usize,
        floor: usize,
    ) -> Option<Scored> {
        let len = query.len();
        let floor = id32(floor).unwrap_or(NONE);
        let width = 2 * bound + 1;
        let cap = id32(bound + 1).unwrap_or(NONE);
        let mut rows = vec![cap; (depth + 1) * width];
        for (offset, cell) in rows.iter_mut().take(width).enumerate() {
            if offset >= bound && offset - bound <= len {
                *cell = id32(offset - bound).unwrap_or(cap);
            }
        }
        // The best (distance, id) so far, (cap, NONE) for none; a subtree
        // whose distances are at least `lower` and ids at least `min_id`
        // can improve on it only if (lower, min_id) is less.
        let mut best: (u32, u32) = (cap, NONE);
        let hopeless = |lower: u32, min_id: u32, best: (u32, u32)| {
            lower >= cap || (lower.max(floor), min_id) >= best
        };
        let mut stack = vec![(0u32, 0u32)];
        while let Some((index, parent_lower)) = stack.pop() {
            let Some(node) = self.node(index) else {
                continue;
            };
            if hopeless(parent_lower, node.min_id, best) {
                continue;
            }
            let start = (node.depth - node.label_len) as usize;
            let mut lower = parent_lower;
            let mut alive = true;
            for (k, &unit) in self.label(node).iter().enumerate() {
                let t = start + k + 1;
                if t > depth {
                    alive = false;
                    break;
                }
                let (head, tail) = rows.split_at_mut(t * width);
                let prev = head.get((t - 1) * width..).unwrap_or_default();
                let cur = tail.get_mut(..width).unwrap_or_default();
                let reach = Reach {
                    t,
                    bound,
                    len,
                    min_len: node.min_len as usize,
                    max_len: node.max_len as usize,
                };
                lower = band_row(prev, cur, query, unit, &reach, cap);
                if hopeless(lower, node.min_id, best) {
                    alive = false;
                    break;
                }
            }
            if !alive {
                continue;
            }
            let n = node.depth as usize;
            if node.terminal != NONE
                && n + bound >= len
                && n <= len + bound
                && let Some(&d) = rows.get(n * width + (len + bound - n))
                && d < cap
            {
                best = best.min((d, node.terminal));
            }
            let first = node.first_child;
            stack.extend((first..first + node.children).rev().map(|c| (c, lower)));
        }
        (best.0 < cap).then_some((best.0 as usize, best.1))
    }
}

/// Linear fallback of [`SuggestIndex::walk_within`] for pathological sizes.
fn scan_within(universe: &Universe, query: &[u16], bound: usize) -> Option<Scored> {
    (0..universe.names.len())
        .filter_map(id32)
        .filter_map(|id| {
            let units = universe.units_of(id);
            if units.len().abs_diff(query.len()) > bound {
                return None;
            }
            let d = levenshtein_units(query, units);
            (d <= bound).then_some((d, id))
        })
        .min()
}

/// What a row of the walk may still reach: it is row `t` of a subtree
/// whose names are `min_len..=max_len` units long.
struct Reach {
    t: usize,
    bound: usize,
    len: usize,
    min_len: usize,
    max_len: usize,
}

/// Computes row `t` (for name unit `unit`) from row `t - 1` and returns a
/// lower bound on the distance of any name of the subtree: the least, over
/// the row's cells, of the cell plus the length gap left between the rest
/// of the query and the rest of a name.
fn band_row(
    prev: &[u32],
    cur: &mut [u32],
    query: &[u16],
    unit: u16,
    reach: &Reach,
    cap: u32,
) -> u32 {
    let Reach {
        t,
        bound,
        len,
        min_len,
        max_len,
    } = *reach;
    let rest_lo = min_len.saturating_sub(t);
    let rest_hi = max_len.saturating_sub(t);
    let mut lower = cap;
    let mut left = cap;
    for (offset, cell) in cur.iter_mut().enumerate() {
        let value = match (t + offset).checked_sub(bound) {
            None => cap,
            Some(j) if j > len => cap,
            Some(0) => id32(t).unwrap_or(cap).min(cap),
            Some(j) => {
                let same = query.get(j - 1) == Some(&unit);
                let diag = prev.get(offset).copied().unwrap_or(cap) + u32::from(!same);
                let up = prev.get(offset + 1).copied().unwrap_or(cap) + 1;
                diag.min(up).min(left + 1).min(cap)
            }
        };
        *cell = value;
        left = value;
        if value < cap
            && let Some(j) = (t + offset).checked_sub(bound)
        {
            let rest = len - j;
            let gap = if rest < rest_lo {
                rest_lo - rest
            } else {
                rest.saturating_sub(rest_hi)
            };
            lower = lower.min(value.saturating_add(id32(gap).unwrap_or(cap)));
        }
    }
    lower
}

/// The trigram buckets of `units`, one per position (repeats included).
fn trigram_buckets(units: &[u16], shift: u32) -> impl Iterator<Item = usize> + '_ {
    units.windows(3).map(move |w| {
        // A multiplicative hash; the bucket is its top bits.
        let hash = w.iter().fold(0x243f_6a88_85a3_08d3_u64, |h, &unit| {
            (h.rotate_left(5) ^ u64::from(unit)).wrapping_mul(0x517c_c1b7_2722_0a95)
        });
        (hash >> shift) as usize
    })
}

/// Posting lists of trigram buckets, each listing ranks in ascending order
/// once: `(shift, bucket starts, postings)`.
fn trigram_postings(universe: &Universe, rank_to_id: &[u32]) -> Option<(u32, Vec<u32>, Vec<u32>)> {
    let trigrams: usize = rank_to_id
        .iter()
        .map(|&id| universe.units_of(id).len().saturating_sub(2))
        .sum();
    id32(trigrams)?;
    let bits = (trigrams / 16)
        .next_power_of_two()
        .trailing_zeros()
        .clamp(8, 20);
    let buckets = 1usize << bits;
    let shift = 64 - bits;
    // Two passes, counting then filling; `last` drops a name's repeats of
    // a bucket, which are adjacent because ranks arrive in order.
    let mut starts = vec![0u32; buckets + 1];
    let mut last = vec![NONE; buckets];
    for (rank, &id) in rank_to_id.iter().enumerate() {
        let rank = id32(rank)?;
        for bucket in trigram_buckets(universe.units_of(id), shift) {
            if let (Some(l), Some(c)) = (last.get_mut(bucket), starts.get_mut(bucket + 1))
                && *l != rank
            {
                *l = rank;
                *c += 1;
            }
        }
    }
    for b in 0..buckets {
        let prev = starts.get(b).copied().unwrap_or(0);
        if let Some(c) = starts.get_mut(b + 1) {
            *c += prev;
        }
    }
    let mut fill = starts.clone();
    let mut postings = vec![0u32; starts.last().copied().unwrap_or(0) as usize];
    last.fill(NONE);
    for (rank, &id) in rank_to_id.iter().enumerate() {
        let rank = id32(rank)?;
        for bucket in trigram_buckets(universe.units_of(id), shift) {
            if let (Some(l), Some(at)) = (last.get_mut(bucket), fill.get_mut(bucket))
                && *l != rank
            {
                *l = rank;
                if let Some(p) = postings.get_mut(*at as usize) {
                    *p = rank;
                }
                *at += 1;
            }
        }
    }
    Some((shift, starts, postings))
}

/// The compressed trie of the names, from their sorted ids, and its labels;
/// node 0 is the root. Built with an explicit work queue (no recursion, so
/// long names cannot exhaust the stack); each name is scanned once per
/// ancestor, so the work is bounded by the total length of the names.
fn build_trie(universe: &Universe, sorted: &[u32]) -> Option<(Vec<Node>, Vec<u16>)> {
    let mut trie = vec![Node {
        terminal: NONE,
        min_id: NONE,
        min_len: NONE,
        ..Node::default()
    }];
    // (node, lo, hi, d): node covers sorted[lo..hi], which share a prefix of
    // d units (the depth where the node's label starts).
    // Breadth first: nodes are numbered level by level, so the top of the
    // trie, which every walk visits, sits in one stretch of memory.
    let mut work = std::collections::VecDeque::from([(0usize, 0usize, sorted.len(), 0usize)]);
    while let Some((index, lo, hi, d)) = work.pop_front() {
        let range = sorted.get(lo..hi).unwrap_or_default();
        let (Some(&first_id), Some(&last_id)) = (range.first(), range.last()) else {
            continue;
        };
        let first = universe.units_of(first_id);
        let last = universe.units_of(last_id);
        let shared = first
            .iter()
            .zip(last)
            .skip(d)
            .take_while(|(a, b)| a == b)
            .count();
        let end = d + shared;
        let mut rest = range;
        let mut terminal = NONE;
        if first.len() == end {
            terminal = first_id;
            rest = range.get(1..).unwrap_or_default();
        }
        let (mut min_id, mut min_len, mut max_len) = (NONE, usize::MAX, 0);
        for &id in range {
            let len = universe.units_of(id).len();
            min_id = min_id.min(id);
            min_len = min_len.min(len);
            max_len = max_len.max(len);
        }
        let first_child = trie.len();
        let mut children = 0u32;
        let mut k = 0;
        let unit_at = |id: u32| universe.units_of(id).get(end).copied();
        while let Some(&id) = rest.get(k) {
            let unit = unit_at(id);
            let group = rest
                .get(k..)
                .unwrap_or_default()
                .iter()
                .take_while(|&&other| unit_at(other) == unit)
                .count();
            let child_lo = lo + (range.len() - rest.len()) + k;
            work.push_back((trie.len(), child_lo, child_lo + group, end));
            trie.push(Node::default());
            children += 1;
            k += group;
        }
        // An offset into the names' units until the labels are copied out.
        let label = universe.starts.get(first_id as usize)? + d;
        let node = Node {
            label: id32(label)?,
            label_len: id32(shared)?,
            depth: id32(end)?,
            first_child: id32(first_child)?,
            children,
            terminal,
            min_id,
            min_len: id32(min_len)?,
            max_len: id32(max_len)?,
        };
        if let Some(slot) = trie.get_mut(index) {
            *slot = node;
        }
    }
    // Copy the labels out of the names, in node order, so a walk over
    // siblings reads one stretch of memory.
    let mut labels = Vec::new();
    for node in &mut trie {
        let start = node.label as usize;
        let label = universe
            .units
            .get(start..start + node.label_len as usize)
            .unwrap_or_default();
        node.label = id32(labels.len())?;
        labels.extend_from_slice(label);
    }
    Some((trie, labels))
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
        #![proptest_config(ProptestConfig::with_cases(150))]

        #[test]
        fn indexed_answers_equal_the_naive_scan_on_dense_tries((names, refs) in dense_case()) {
            let universe = Universe::new(names);
            for reference in &refs {
                prop_assert_eq!(
                    universe.suggest(reference).map(str::to_owned),
                    naive(&universe, reference),
                    "reference {:?}", reference
                );
            }
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
