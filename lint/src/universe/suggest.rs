//! The suggestion index: a compressed trie of the names, trigram posting
//! lists, the one-edit search and the banded edit-distance walk over the
//! trie.

use objectstack_spec::text::levenshtein_units;

use super::set::{Universe, id32};

/// What the index stores of a name: a byte when every name is ASCII (the
/// names' own text, with no copy), else a UTF-16 unit. Lengths and
/// distances count the same either way, one per UTF-16 unit.
pub(super) trait Unit: Copy + Ord + Default + Into<u64> + Send + Sync {
    /// The unit standing for a query's UTF-16 unit: itself, or for a byte
    /// index and a unit past ASCII, `0xFF`, which no ASCII name holds
    /// (every edit and comparison treats it as the unit it stands for
    /// would be treated: equal to no name's unit, in the class of every
    /// unit past ASCII).
    fn from_utf16(unit: u16) -> Self;
    /// Every name's units, end to end.
    fn all(universe: &Universe) -> &[Self];
    /// Where name `id` starts in [`Unit::all`].
    fn start(universe: &Universe, id: u32) -> Option<usize>;
    /// The units of name `id`.
    fn of(universe: &Universe, id: u32) -> &[Self];
    /// The id of the name spelled `units`.
    fn lookup(universe: &Universe, units: &[Self]) -> Option<u32>;
}

impl Unit for u8 {
    fn from_utf16(unit: u16) -> Self {
        u8::try_from(unit).ok().filter(u8::is_ascii).unwrap_or(0xFF)
    }
    fn all(universe: &Universe) -> &[Self] {
        universe.text().as_bytes()
    }
    fn start(universe: &Universe, id: u32) -> Option<usize> {
        universe.byte_start(id)
    }
    fn of(universe: &Universe, id: u32) -> &[Self] {
        universe.bytes_of(id)
    }
    fn lookup(universe: &Universe, units: &[Self]) -> Option<u32> {
        universe.lookup_name(std::str::from_utf8(units).ok()?)
    }
}

impl Unit for u16 {
    fn from_utf16(unit: u16) -> Self {
        unit
    }
    fn all(universe: &Universe) -> &[Self] {
        &universe.utf16().units
    }
    fn start(universe: &Universe, id: u32) -> Option<usize> {
        universe.utf16().starts.get(id as usize).copied()
    }
    fn of(universe: &Universe, id: u32) -> &[Self] {
        universe.units_of(id)
    }
    fn lookup(universe: &Universe, units: &[Self]) -> Option<u32> {
        universe.lookup(units)
    }
}

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

/// The suggestion index over the names' bytes when every name is ASCII
/// (half the memory, and no copy of the names), else over their UTF-16
/// units.
#[derive(Clone)]
pub(super) enum Index {
    Bytes(SuggestIndex<u8>),
    Units(SuggestIndex<u16>),
}

impl Index {
    /// `None` when an offset does not fit in 32 bits.
    pub(super) fn build(universe: &Universe) -> Option<Self> {
        if universe.text().is_ascii() {
            SuggestIndex::build(universe, universe.sorted()?).map(Index::Bytes)
        } else {
            // The two are independent, and both are needed.
            let (sorted, _) = rayon::join(|| universe.sorted(), || universe.utf16());
            SuggestIndex::build(universe, sorted?).map(Index::Units)
        }
    }

    /// The best (score, id) for `reference`, as upstream's linear scan
    /// finds it; the reference is read into the index's units once.
    pub(super) fn best(&self, universe: &Universe, reference: &str) -> Option<Scored> {
        let units = reference.encode_utf16();
        match self {
            Index::Bytes(index) => {
                let query: Vec<u8> = units.map(u8::from_utf16).collect();
                index.best(universe, &query)
            }
            Index::Units(index) => index.best(universe, &units.collect::<Vec<u16>>()),
        }
    }
}

/// "No name" in [`Node::terminal`].
const NONE: u32 = u32::MAX;

/// A band (one row of the edit-distance walk) wider than this many cells
/// makes the walk fall back to a linear scan: a reference millions of
/// units long.
const MAX_BAND_CELLS: usize = 1 << 22;

#[derive(Clone)]
pub(super) struct SuggestIndex<U> {
    trie: Vec<Node>,
    /// The trie's edge labels, in node order (siblings side by side).
    labels: Vec<U>,
    /// `has_len[l]`: some name is `l` units long.
    has_len: Vec<bool>,
    /// Ids ordered by (length, id): a name's *rank* is its position here.
    rank_to_id: Vec<u32>,
    /// Each length some name has, ascending, with the first rank of that
    /// length (one entry per length, not per name).
    lengths: Vec<(u32, u32)>,
    /// `64 - log2(bucket count)` for trigram hashes.
    bucket_shift: u32,
    /// Postings of bucket `b` are the bytes
    /// `postings[bucket_starts[b]..bucket_starts[b + 1]]`.
    bucket_starts: Vec<u32>,
    /// Ranks, ascending within each bucket, one per (bucket, name), each
    /// written as its gap from the one before (from 0 for the first) in
    /// LEB128: most lists are long, their gaps small, and a gap takes one
    /// byte where a rank took four.
    postings: Vec<u8>,
}

/// A place in the trie: `offset` units into the label of `node` (at its
/// end when `offset == label_len`).
#[derive(Clone, Copy, Debug)]
struct Cursor {
    node: u32,
    offset: u32,
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
    /// What the subtree's names hold from the start of the label on, as
    /// the two halves of a `u64` (kept beside the rest of the node, which
    /// the walk reads anyway): bits 0 to 39 are the set of the [`class`]es
    /// of their units, and the rest the least number of digits and of
    /// marks any of them holds, `RARE_BITS` each (see [`Node::rare`]).
    packed: [u32; 2],
}

/// The classes of each rare group: digits, then marks (`_`, `-`, `.`
/// and every unit outside the identifier classes). A name's units of a
/// group that the query lacks each cost an edit, which bounds the walk
/// from the names' side as absent classes bound it from the query's.
const RARE_GROUPS: [u64; 2] = [0x3FF << 26, 0xF << 36];

/// Bits of the class set in [`Node::packed`].
const CLASS_BITS: u32 = 40;

/// Bits of each rare group's count in [`Node::packed`]; a count is
/// stored capped at the largest that fits, which stays a lower bound.
const RARE_BITS: u32 = 12;

impl Node {
    fn word(&self) -> u64 {
        u64::from(self.packed[0]) | u64::from(self.packed[1]) << 32
    }

    /// The set of classes the subtree's names hold from the label on.
    fn classes(&self) -> u64 {
        self.word() & ((1 << CLASS_BITS) - 1)
    }

    /// For each of [`RARE_GROUPS`], the least number of units of that
    /// group a name of the subtree holds from the label on (capped).
    fn rare(&self) -> [u32; 2] {
        let word = self.word();
        let mask = (1 << RARE_BITS) - 1;
        #[allow(clippy::cast_possible_truncation)] // masked to RARE_BITS
        [0, 1].map(|g| ((word >> (CLASS_BITS + g * RARE_BITS)) & mask) as u32)
    }

    fn set_packed(&mut self, classes: u64, rare: [u32; 2]) {
        let cap = (1 << RARE_BITS) - 1;
        let mut word = classes & ((1 << CLASS_BITS) - 1);
        for (g, count) in (0u32..).zip(rare) {
            word |= u64::from(count.min(cap)) << (CLASS_BITS + g * RARE_BITS);
        }
        #[allow(clippy::cast_possible_truncation)] // the two halves
        {
            self.packed = [word as u32, (word >> 32) as u32];
        }
    }
}

/// Which of [`RARE_GROUPS`] a unit belongs to, if any.
fn rare_group<U: Unit>(unit: U) -> Option<usize> {
    let bit = 1u64 << class(unit);
    RARE_GROUPS.iter().position(|&group| group & bit != 0)
}

impl<U: Unit> SuggestIndex<U> {
    /// `None` when an offset does not fit in 32 bits.
    pub(super) fn build(universe: &Universe, sorted: &[u32]) -> Option<Self> {
        id32(U::all(universe).len())?;
        let n = universe.len();
        // Ranks: ids in (length, id) order, counted into place (ids are
        // visited in order, so each length's ids ascend with no sort).
        let mut lens: Vec<u32> = Vec::with_capacity(n);
        for id in (0..n).filter_map(id32) {
            lens.push(id32(U::of(universe, id).len())?);
        }
        let max_len = lens.iter().copied().max().unwrap_or(0) as usize;
        // How many names have each length; then each length's first rank,
        // and, while the ids are placed, its next one.
        let mut next = vec![0u32; max_len + 1];
        for &len in &lens {
            if let Some(count) = next.get_mut(len as usize) {
                *count += 1;
            }
        }
        let has_len: Vec<bool> = next.iter().map(|&count| count > 0).collect();
        let mut lengths: Vec<(u32, u32)> = Vec::new();
        let mut rank = 0u32;
        for (len, slot) in (0u32..).zip(next.iter_mut()) {
            let count = *slot;
            if count > 0 {
                lengths.push((len, rank));
            }
            *slot = rank;
            rank = rank.saturating_add(count);
        }
        let mut rank_to_id = vec![0u32; lens.len()];
        for (id, &len) in (0u32..).zip(&lens) {
            if let Some(at) = next.get_mut(len as usize) {
                if let Some(slot) = rank_to_id.get_mut(*at as usize) {
                    *slot = id;
                }
                *at += 1;
            }
        }
        drop(next);
        // Gone before the index's two halves are built: the build is the
        // run's peak.
        drop(lens);
        // Independent halves, built side by side.
        let (postings, trie) = rayon::join(
            || trigram_postings::<U>(universe, &rank_to_id),
            || {
                let (mut trie, labels) = build_trie::<U>(universe, sorted)?;
                set_subtree_summaries(&mut trie, &labels);
                Some((trie, labels))
            },
        );
        let (bucket_shift, bucket_starts, postings) = postings?;
        let (trie, labels) = trie?;
        Some(SuggestIndex {
            trie,
            labels,
            has_len,
            rank_to_id,
            lengths,
            bucket_shift,
            bucket_starts,
            postings,
        })
    }

    fn label(&self, node: &Node) -> &[U] {
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
    pub(super) fn best(&self, universe: &Universe, query: &[U]) -> Option<Scored> {
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
    fn inside(&self, query: &[U]) -> Option<Scored> {
        let len = query.len();
        let mut best: Option<Scored> = None;
        for start in 0..len {
            // A name from `start` on scores at least `start`.
            if best.is_some_and(|(score, _)| start > score) {
                break;
            }
            let mut at = start;
            let mut node = self.node(0);
            while let Some(n) = node {
                // No name of the subtree fits in what is left of the query.
                if n.min_len as usize > len - start {
                    break;
                }
                let label = self.label(n);
                if !query.get(at..).is_some_and(|rest| rest.starts_with(label)) {
                    break;
                }
                at += label.len();
                if n.terminal != NONE {
                    best = better(best, Some((len - (at - start), n.terminal)));
                }
                let Some(&unit) = query.get(at) else { break };
                node = self.child(n, unit).map(|(_, child)| child);
            }
        }
        best
    }

    /// The child of `node` whose label starts with `unit`, and its index.
    fn child(&self, node: &Node, unit: U) -> Option<(u32, &Node)> {
        let children = self.children(node);
        let first = |c: &Node| self.labels.get(c.label as usize).copied();
        let i = children.partition_point(|c| first(c) < Some(unit));
        let child = children.get(i).filter(|c| first(c) == Some(unit))?;
        Some((node.first_child + id32(i)?, child))
    }

    /// The best name containing the query (scored `len(name) - len(query)`),
    /// unless it cannot beat `bound`.
    fn containing(
        &self,
        universe: &Universe,
        query: &[U],
        bound: Option<Scored>,
    ) -> Option<Scored> {
        let len = query.len();
        let first_unit = *query.first()?;
        // The rarest trigram's bucket: every name containing the query has
        // all its trigrams, so lists only this bucket's names.
        let list = trigram_buckets(query, self.bucket_shift)
            .map(|b| self.bucket(b))
            .min_by_key(|list| list.len())?;
        // Ranks ascend by (length, id): skip the names shorter than the
        // query, and the first that contains it is the best.
        let at = self.lengths.partition_point(|&(l, _)| (l as usize) < len);
        let shorter = self
            .lengths
            .get(at)
            .map_or(self.rank_to_id.len(), |&(_, first)| first as usize);
        for rank in Ranks::new(list).skip_while(|&rank| (rank as usize) < shorter) {
            let score = (self.len_of_rank(rank) as usize).saturating_sub(len);
            if bound.is_some_and(|(s, _)| score > s) {
                break;
            }
            let Some(&id) = self.rank_to_id.get(rank as usize) else {
                continue;
            };
            let found = U::of(universe, id)
                .windows(len)
                .any(|w| w.first() == Some(&first_unit) && w == query);
            if found {
                return Some((score, id));
            }
        }
        None
    }

    /// The encoded postings of `bucket` (see [`SuggestIndex::postings`]).
    fn bucket(&self, bucket: usize) -> &[u8] {
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
        let at = self.lengths.partition_point(|&(_, first)| first <= rank);
        at.checked_sub(1)
            .and_then(|i| self.lengths.get(i))
            .map_or(0, |&(len, _)| len)
    }

    fn any_len_within(&self, len: usize, bound: usize) -> bool {
        let lo = len.saturating_sub(bound);
        let hi = (len + bound).min(self.has_len.len().saturating_sub(1));
        lo <= hi && self.has_len.get(lo..=hi).is_some_and(|s| s.contains(&true))
    }

    /// The nearest name at edit distance at most `limit`, as (distance, id)
    /// with the lowest id among the nearest.
    fn nearest_edit(&self, universe: &Universe, query: &[U], limit: usize) -> Option<Scored> {
        if let Some(id) = U::lookup(universe, query) {
            return Some((0, id));
        }
        let max_len = self.has_len.len().saturating_sub(1);
        // One error (typos), two, then everything up to the limit with the
        // bound tightening as names are found: small bounds prune hardest,
        // and a bound that finds nothing is not walked twice.
        // A distance above `limit` cannot win, so no stage goes past it.
        let schedule = [1, 2, limit].map(|bound| bound.min(limit));
        let mut last_done = 0;
        for bound in schedule {
            if bound <= last_done {
                continue;
            }
            if !self.any_len_within(query.len(), bound) {
                continue;
            }
            let depth = max_len.min(query.len() + bound + 1);
            let hit = if bound == 1 {
                // No name equals the query (looked up above), so the
                // nearest within 1 are exactly one edit away.
                self.one_edit(query).map(|id| (1, id))
            } else if 2 * bound + 1 > MAX_BAND_CELLS {
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

    /// The lowest id among the names one edit (an inserted, deleted or
    /// substituted unit) away from `query`, which no name equals.
    ///
    /// Each such name starts with a prefix `query[..i]` that is a path of
    /// the trie, so the search follows the query down the trie and, at
    /// each position, tries the three edits there, each followed by an
    /// exact descent. It visits the nodes along the query and the first
    /// units of their children, with no edit-distance rows: for a typo,
    /// a fraction of what the banded walk at bound 1 computes.
    fn one_edit(&self, query: &[U]) -> Option<u32> {
        let mut best = NONE;
        let mut at = Cursor { node: 0, offset: 0 };
        // The unit before position `i`. Within a run of equal units, one
        // deletion, or one insertion of that unit, spells the same name
        // wherever it is made, so each is tried at the run's start only:
        // a long run (`aaa…a`) is never descended once per unit.
        let mut before = None;
        for (i, &unit) in query.iter().enumerate() {
            let (here, rest) = (
                query.get(i..).unwrap_or_default(),
                query.get(i + 1..).unwrap_or_default(),
            );
            // Deleted: the name skips `unit`.
            if before != Some(unit) {
                best = best.min(self.exact(at, rest, best));
            }
            // Substituted (another unit in its place) or inserted (any
            // unit before it).
            self.each_next(at, &mut best, |next, u, best| {
                let substituted = if u == unit {
                    NONE
                } else {
                    self.exact(next, rest, best)
                };
                let inserted = if before == Some(u) {
                    NONE
                } else {
                    self.exact(next, here, best.min(substituted))
                };
                substituted.min(inserted)
            });
            match self.step(at, unit) {
                Some(next) => at = next,
                None => return (best != NONE).then_some(best),
            }
            before = Some(unit);
        }
        // Inserted after the last unit.
        self.each_next(at, &mut best, |next, u, best| {
            if before == Some(u) {
                NONE
            } else {
                self.exact(next, &[], best)
            }
        });
        (best != NONE).then_some(best)
    }

    /// Calls `f` with each cursor one unit past `at` (and that unit) whose
    /// subtree holds an id below `best`, and lowers `best` to what it
    /// returns (an id, or [`NONE`]).
    fn each_next(&self, at: Cursor, best: &mut u32, f: impl Fn(Cursor, U, u32) -> u32) {
        let Some(node) = self.node(at.node) else {
            return;
        };
        if at.offset < node.label_len {
            if node.min_id < *best
                && let Some(&u) = self.labels.get((node.label + at.offset) as usize)
            {
                let next = Cursor {
                    node: at.node,
                    offset: at.offset + 1,
                };
                *best = (*best).min(f(next, u, *best));
            }
            return;
        }
        for (index, child) in (node.first_child..).zip(self.children(node)) {
            if child.min_id >= *best {
                continue;
            }
            if let Some(&u) = self.labels.get(child.label as usize) {
                let next = Cursor {
                    node: index,
                    offset: 1,
                };
                *best = (*best).min(f(next, u, *best));
            }
        }
    }

    /// The cursor one unit past `at` along `unit`.
    fn step(&self, at: Cursor, unit: U) -> Option<Cursor> {
        let node = self.node(at.node)?;
        if at.offset < node.label_len {
            let here = self.labels.get((node.label + at.offset) as usize)?;
            return (*here == unit).then_some(Cursor {
                node: at.node,
                offset: at.offset + 1,
            });
        }
        let (index, _) = self.child(node, unit)?;
        Some(Cursor {
            node: index,
            offset: 1,
        })
    }

    /// The id of the name spelled by `at` and then exactly `rest`, when
    /// there is one below `best`; else [`NONE`].
    fn exact(&self, mut at: Cursor, rest: &[U], best: u32) -> u32 {
        // The length of the name it would spell, which every subtree it
        // enters must hold (else it stops there, as the walk prunes by
        // length).
        let Some(length) = self
            .node(at.node)
            .map(|n| (n.depth - n.label_len + at.offset) as usize + rest.len())
        else {
            return NONE;
        };
        for &unit in rest {
            let hopeless = self.node(at.node).is_none_or(|n| {
                n.min_id >= best || length < n.min_len as usize || length > n.max_len as usize
            });
            if hopeless {
                return NONE;
            }
            match self.step(at, unit) {
                Some(next) => at = next,
                None => return NONE,
            }
        }
        match self.node(at.node) {
            Some(n) if at.offset == n.label_len && n.terminal < best => n.terminal,
            _ => NONE,
        }
    }

    /// The nearest name within edit distance `bound` of `query`, as
    /// (distance, id) with the lowest id among the nearest: a depth-first
    /// walk of the trie computing one banded Levenshtein row per name unit.
    /// Row `t` holds `D[t][j] = distance(name[..t], query[..j])` for
    /// `|t - j| <= bound` at offset `j + bound - t`, capped at `bound + 1`.
    /// Only the rows at the ends of the nodes whose children still wait
    /// are kept (a child starts from its parent's last row), so memory
    /// grows with the branching nodes on the path, not with the names'
    /// length. A subtree is abandoned when no name of its lengths can
    /// finish within the bound (tightened to the best distance found) from
    /// any cell of the current row, or when it could only tie the best with
    /// higher ids. No name is nearer than `floor` (the caller has ruled
    /// those out).
    fn walk_within(&self, query: &[U], bound: usize, depth: usize, floor: usize) -> Option<Scored> {
        let len = query.len();
        let floor = id32(floor).unwrap_or(NONE);
        let width = 2 * bound + 1;
        let positions = class_positions(query);
        let rare_after = rare_suffixes(query);
        let cap = id32(bound + 1).unwrap_or(NONE);
        // Saved rows end to end; row 0 is the empty prefix's.
        let mut saved = vec![cap; width];
        for (offset, cell) in saved.iter_mut().enumerate() {
            if offset >= bound && offset - bound <= len {
                *cell = id32(offset - bound).unwrap_or(cap);
            }
        }
        let mut prev = vec![cap; width];
        let mut cur = vec![cap; width];
        // The best (distance, id) so far, (cap, NONE) for none; a subtree
        // whose distances are at least `lower` and ids at least `min_id`
        // can improve on it only if (lower, min_id) is less.
        let mut best: (u32, u32) = (cap, NONE);
        let hopeless = |lower: u32, min_id: u32, best: (u32, u32)| {
            lower >= cap || (lower.max(floor), min_id) >= best
        };
        // (node, the lower bound its parent reached, the saved row it starts from).
        let mut stack = vec![(0u32, 0u32, 0usize)];
        while let Some((index, parent_lower, row)) = stack.pop() {
            // Rows saved after this one belong to subtrees walked already
            // (the stack is depth-first).
            saved.truncate((row + 1) * width);
            let Some(node) = self.node(index) else {
                continue;
            };
            if hopeless(parent_lower, node.min_id, best) {
                continue;
            }
            let Some(from) = saved.get(row * width..(row + 1) * width) else {
                continue;
            };
            prev.copy_from_slice(from);
            let start = (node.depth - node.label_len) as usize;
            // The query's units that no name of the subtree holds from
            // here on: each costs an edit wherever it is aligned.
            let held = node.classes();
            let absent = positions
                .iter()
                .filter(|&&(class, _)| held & class == 0)
                .fold(0, |absent, &(_, at)| absent | at);
            // The least number of each rare group's units the subtree's
            // names hold past the current unit.
            let mut rare = node.rare();
            let mut lower = parent_lower;
            let mut alive = true;
            for (k, &unit) in self.label(node).iter().enumerate() {
                let t = start + k + 1;
                if t > depth {
                    alive = false;
                    break;
                }
                if let Some(count) = rare_group(unit).and_then(|g| rare.get_mut(g)) {
                    *count = count.saturating_sub(1);
                }
                let reach = Reach {
                    t,
                    bound,
                    len,
                    min_len: node.min_len as usize,
                    max_len: node.max_len as usize,
                    absent,
                    rare,
                };
                lower = band_row(&prev, &mut cur, query, &rare_after, unit, &reach, cap);
                std::mem::swap(&mut prev, &mut cur);
                if hopeless(lower, node.min_id, best) {
                    alive = false;
                    break;
                }
            }
            if !alive {
                continue;
            }
            // `prev` is the row at the node's depth.
            let n = node.depth as usize;
            if node.terminal != NONE
                && n + bound >= len
                && n <= len + bound
                && let Some(&d) = prev.get(len + bound - n)
                && d < cap
            {
                best = best.min((d, node.terminal));
            }
            if node.children > 0 {
                // The saved rows are this node's ancestors' and its own
                // start row, `0..=row`: this one is next.
                let at = row + 1;
                saved.extend_from_slice(&prev);
                let first = node.first_child;
                stack.extend((first..first + node.children).rev().map(|c| (c, lower, at)));
            }
        }
        (best.0 < cap).then_some((best.0 as usize, best.1))
    }
}

/// Linear fallback of [`SuggestIndex::walk_within`] for pathological sizes.
fn scan_within<U: Unit>(universe: &Universe, query: &[U], bound: usize) -> Option<Scored> {
    (0..universe.len())
        .filter_map(id32)
        .filter_map(|id| {
            let units = U::of(universe, id);
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
    /// Bit `i` set: query unit `i` is of a class no name of the subtree
    /// holds (see [`class_positions`]).
    absent: u64,
    /// The least number of units of each of [`RARE_GROUPS`] a name of the
    /// subtree holds past unit `t`.
    rare: [u32; 2],
}

/// Computes row `t` (for name unit `unit`) from row `t - 1` and returns a
/// lower bound on the distance of any name of the subtree: the least, over
/// the row's cells, of the cell plus what aligning the rest of the query
/// with the rest of a name must cost at least. That is the largest of the
/// length gap between them, the number of the rest's units whose class
/// no name of the subtree holds (each is deleted or replaced), and the
/// number of units of rare groups the rest of a name holds beyond the
/// rest of the query's (each is deleted or replaced too; groups are
/// disjoint, so those add up). `rare_after[j]` counts the query's units
/// of each rare group from `j` on.
fn band_row<U: Unit>(
    prev: &[u32],
    cur: &mut [u32],
    query: &[U],
    rare_after: &[[u32; 2]],
    unit: U,
    reach: &Reach,
    cap: u32,
) -> u32 {
    let Reach {
        t,
        bound,
        len,
        min_len,
        max_len,
        absent,
        rare: [digits, marks],
    } = *reach;
    let rest_lo = min_len.saturating_sub(t);
    let rest_hi = max_len.saturating_sub(t);
    let mut lower = cap;
    let mut left = cap;
    // Cell `offset` is column `j = t + offset - bound`; the columns that
    // exist (0..=len) are a run of cells, the rest hold `cap`. The run is
    // walked with slices, not an index per cell.
    let end = (len + bound)
        .checked_sub(t)
        .map_or(0, |last| (last + 1).min(cur.len()));
    let first = bound.saturating_sub(t).min(end);
    let (before, rest) = cur.split_at_mut(first);
    before.fill(cap);
    let (run_cells, after) = rest.split_at_mut(end - first);
    after.fill(cap);
    // `prev[offset]` is the diagonal and `prev[offset + 1]` the cell above.
    let diagonals = prev.get(first..).unwrap_or_default();
    let ups = prev.get(first + 1..).unwrap_or_default();
    let mut diagonals = diagonals.iter().copied();
    let mut ups = ups.iter().copied();
    let j0 = (t + first).saturating_sub(bound);
    // The absent units from column `j` on, and how many: counted once,
    // then one bit dropped per column.
    let mut absent_rest = u32::try_from(j0)
        .ok()
        .and_then(|j| absent.checked_shr(j))
        .unwrap_or(0);
    let mut missing = absent_rest.count_ones();
    let mut rare_rest = rare_after.get(j0..).unwrap_or_default().iter();
    // No branch on a cell's value: which cells are within the bound is as
    // good as random, and a mispredicted branch per cell cost more than
    // the arithmetic (a cell at the cap adds at least the cap, which
    // leaves `lower` as it is).
    for (j, cell) in (j0..).zip(run_cells.iter_mut()) {
        let [query_digits, query_marks] = rare_rest.next().copied().unwrap_or_default();
        let diag = diagonals.next().unwrap_or(cap);
        let up = ups.next().unwrap_or(cap);
        let value = if j == 0 {
            id32(t).unwrap_or(cap).min(cap)
        } else {
            let same = query.get(j - 1) == Some(&unit);
            (diag + u32::from(!same)).min(up + 1).min(left + 1).min(cap)
        };
        *cell = value;
        left = value;
        // The rest of the query is `len - j` units, the rest of a name
        // `rest_lo..=rest_hi`: at most one of the two differences is
        // positive.
        let rest = len - j;
        let gap = rest_lo.saturating_sub(rest) | rest.saturating_sub(rest_hi);
        let gap = id32(gap).unwrap_or(cap);
        let extra = digits
            .saturating_sub(query_digits)
            .saturating_add(marks.saturating_sub(query_marks));
        lower = lower.min(value.saturating_add(gap.max(missing).max(extra)));
        missing -= (absent_rest & 1) as u32;
        absent_rest >>= 1;
    }
    lower
}

/// A unit's class: each ASCII letter (both cases in one class), each
/// digit, `_`, `-` and `.` has its own (classes 0 to 38), and every other
/// unit falls in class 39. A set of classes is a `u64` with bit `class`.
fn class<U: Unit>(unit: U) -> u32 {
    match u8::try_from(unit.into()).map(char::from) {
        Ok(c @ 'a'..='z') => u32::from(c as u8 - b'a'),
        Ok(c @ 'A'..='Z') => u32::from(c as u8 - b'A'),
        Ok(c @ '0'..='9') => 26 + u32::from(c as u8 - b'0'),
        Ok('_') => 36,
        Ok('-') => 37,
        Ok('.') => 38,
        _ => 39,
    }
}

/// The query's classes, each once, with the positions (bit `i` for unit
/// `i`) of its units of that class; empty for a query longer than 64
/// units, which then gets no bound from classes.
fn class_positions<U: Unit>(query: &[U]) -> Vec<(u64, u64)> {
    let mut found: Vec<(u64, u64)> = Vec::new();
    if query.len() > 64 {
        return found;
    }
    for (i, &unit) in query.iter().enumerate() {
        let class = 1u64 << class(unit);
        let at = 1u64 << i;
        match found.iter_mut().find(|(c, _)| *c == class) {
            Some((_, positions)) => *positions |= at,
            None => found.push((class, at)),
        }
    }
    found
}

/// For each `j` in `0..=query.len()`, the number of the query's units of
/// each of [`RARE_GROUPS`] from `j` on.
fn rare_suffixes<U: Unit>(query: &[U]) -> Vec<[u32; 2]> {
    let mut after = vec![[0u32; 2]; query.len() + 1];
    let mut counts = [0u32; 2];
    for (&unit, slot) in query.iter().zip(after.iter_mut()).rev() {
        if let Some(count) = rare_group(unit).and_then(|g| counts.get_mut(g)) {
            *count = count.saturating_add(1);
        }
        *slot = counts;
    }
    after
}

/// Sets what each node says of its subtree's names: the lowest id and the
/// shortest and longest length (of the name ending there, if any, and its
/// children's), the classes (its label's units' and its children's) and
/// rare counts (its label's plus the least of its children's, or none
/// past a name that ends here). Children come after their parent in the
/// node order, so one pass from the last node back suffices.
fn set_subtree_summaries<U: Unit>(trie: &mut [Node], labels: &[U]) {
    for index in (0..trie.len()).rev() {
        let Some(node) = trie.get(index).copied() else {
            continue;
        };
        let start = node.label as usize;
        let label = labels
            .get(start..start + node.label_len as usize)
            .unwrap_or_default();
        let own = label
            .iter()
            .fold(0u64, |set, &unit| set | 1u64 << class(unit));
        let mut in_label = [0u32; 2];
        for group in label.iter().filter_map(|&unit| rare_group(unit)) {
            if let Some(count) = in_label.get_mut(group) {
                *count = count.saturating_add(1);
            }
        }
        let first = node.first_child as usize;
        let children = trie
            .get(first..first + node.children as usize)
            .unwrap_or_default();
        let below = children
            .iter()
            .fold(0u64, |set, child| set | child.classes());
        // A name ending here holds none past the label.
        let past = if node.terminal != NONE || children.is_empty() {
            [0, 0]
        } else {
            children
                .iter()
                .fold([u32::MAX; 2], |[digits, marks], child| {
                    let [d, m] = child.rare();
                    [digits.min(d), marks.min(m)]
                })
        };
        let ([d, m], [past_d, past_m]) = (in_label, past);
        let rare = [d.saturating_add(past_d), m.saturating_add(past_m)];
        // The name ending here (`depth` units long), then the children's.
        let here = (node.terminal != NONE).then_some((node.terminal, node.depth, node.depth));
        let (min_id, min_len, max_len) = here
            .into_iter()
            .chain(children.iter().map(|c| (c.min_id, c.min_len, c.max_len)))
            .fold((NONE, NONE, 0), |(id, lo, hi), (i, l, h)| {
                (id.min(i), lo.min(l), hi.max(h))
            });
        if let Some(slot) = trie.get_mut(index) {
            slot.set_packed(own | below, rare);
            slot.min_id = min_id;
            slot.min_len = min_len;
            slot.max_len = max_len;
        }
    }
}

/// The trigram buckets of `units`, one per position (repeats included).
fn trigram_buckets<U: Unit>(units: &[U], shift: u32) -> impl Iterator<Item = usize> + '_ {
    units.windows(3).map(move |w| {
        // The three units side by side, times one odd constant; the
        // bucket is the product's top bits.
        let packed = w
            .iter()
            .fold(0u64, |packed, &unit| packed << 21 | unit.into());
        (packed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
    })
}

/// Posting lists of trigram buckets, each listing ranks in ascending order
/// once, gap-coded (see [`SuggestIndex::postings`]): `(shift, bucket
/// starts, postings)`; `None` when the postings pass 4 GiB.
fn trigram_postings<U: Unit>(
    universe: &Universe,
    rank_to_id: &[u32],
) -> Option<(u32, Vec<u32>, Vec<u8>)> {
    let trigrams: usize = rank_to_id
        .iter()
        .map(|&id| U::of(universe, id).len().saturating_sub(2))
        .sum();
    id32(trigrams)?;
    let bits = (trigrams / 16)
        .next_power_of_two()
        .trailing_zeros()
        .clamp(8, 20);
    let buckets = 1usize << bits;
    let shift = 64 - bits;
    // Two passes, sizing then filling. Each bucket's slot holds its last
    // rank (the gap's base; it also drops a name's repeats of a bucket,
    // which are adjacent because ranks arrive in order) beside its size,
    // then its start: one place in memory per trigram, not two.
    fn each<U: Unit>(
        universe: &Universe,
        rank_to_id: &[u32],
        slots: &mut [(u32, u32)],
        shift: u32,
        mut visit: impl FnMut(&mut u32, u32),
    ) {
        for slot in slots.iter_mut() {
            slot.0 = NONE;
        }
        for (rank, &id) in rank_to_id.iter().enumerate() {
            let Some(rank) = id32(rank) else { return };
            for bucket in trigram_buckets(U::of(universe, id), shift) {
                if let Some((last, at)) = slots.get_mut(bucket)
                    && *last != rank
                {
                    let gap = if *last == NONE { rank } else { rank - *last };
                    *last = rank;
                    visit(at, gap);
                }
            }
        }
    }
    let mut slots = vec![(NONE, 0u32); buckets];
    let mut fits = true;
    each::<U>(
        universe,
        rank_to_id,
        &mut slots,
        shift,
        |size, gap| match size.checked_add(gap_len(gap)) {
            Some(grown) => *size = grown,
            None => fits = false,
        },
    );
    if !fits {
        return None;
    }
    // Sizes into starts.
    let mut total = 0u32;
    for (_, at) in &mut slots {
        let size = *at;
        *at = total;
        total = total.checked_add(size)?;
    }
    let mut postings = vec![0u8; total as usize];
    each::<U>(universe, rank_to_id, &mut slots, shift, |at, gap| {
        *at = put_gap(&mut postings, *at, gap);
    });
    // Each bucket's cursor ended at the next one's start (collected in
    // the slots' own buffer).
    let mut starts: Vec<u32> = slots.into_iter().map(|(_, end)| end).collect();
    starts.insert(0, 0);
    starts.shrink_to_fit();
    Some((shift, starts, postings))
}

/// The bytes `gap` takes in LEB128.
fn gap_len(gap: u32) -> u32 {
    (32 - gap.leading_zeros()).max(1).div_ceil(7)
}

/// Writes `gap` in LEB128 at `postings[at..]` and returns where it ends
/// (bytes past the end are dropped: the sizing pass sized the buffer).
fn put_gap(postings: &mut [u8], mut at: u32, mut gap: u32) -> u32 {
    loop {
        let low = (gap & 0x7f) as u8;
        gap >>= 7;
        let byte = if gap == 0 { low } else { low | 0x80 };
        if let Some(slot) = postings.get_mut(at as usize) {
            *slot = byte;
        }
        at += 1;
        if gap == 0 {
            return at;
        }
    }
}

/// The ranks of one gap-coded posting list, in order.
struct Ranks<'p> {
    bytes: std::slice::Iter<'p, u8>,
    rank: u32,
}

impl<'p> Ranks<'p> {
    fn new(list: &'p [u8]) -> Self {
        Ranks {
            bytes: list.iter(),
            rank: 0,
        }
    }
}

impl Iterator for Ranks<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let mut gap = 0u32;
        let mut shift = 0u32;
        loop {
            let &byte = self.bytes.next()?;
            gap |= u32::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        self.rank = self.rank.wrapping_add(gap);
        Some(self.rank)
    }
}

/// The compressed trie of the names, from their sorted ids, and its labels;
/// node 0 is the root. Built with an explicit work queue (no recursion, so
/// long names cannot exhaust the stack); each name is scanned once per
/// ancestor, so the work is bounded by the total length of the names.
fn build_trie<U: Unit>(universe: &Universe, sorted: &[u32]) -> Option<(Vec<Node>, Vec<U>)> {
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
    // In 32 bits (as the nodes are): the queue holds a whole level.
    let mut work = std::collections::VecDeque::from([(0u32, 0u32, id32(sorted.len())?, 0u32)]);
    while let Some((index, lo, hi, d)) = work.pop_front() {
        let (index, lo, hi, d) = (index as usize, lo as usize, hi as usize, d as usize);
        let range = sorted.get(lo..hi).unwrap_or_default();
        let (Some(&first_id), Some(&last_id)) = (range.first(), range.last()) else {
            continue;
        };
        let first = U::of(universe, first_id);
        let last = U::of(universe, last_id);
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
        let first_child = trie.len();
        let mut children = 0u32;
        let mut k = 0;
        // The names past the one ending here (the names are distinct) all
        // go on past `end`, in the order of their unit there: each child's
        // run is found by a binary search.
        let unit_at = |id: u32| U::of(universe, id).get(end).copied();
        while let Some(&id) = rest.get(k) {
            let unit = unit_at(id);
            let group = rest
                .get(k..)
                .unwrap_or_default()
                .partition_point(|&other| unit_at(other) <= unit);
            let child_lo = lo + (range.len() - rest.len()) + k;
            work.push_back((
                id32(trie.len())?,
                id32(child_lo)?,
                id32(child_lo + group)?,
                id32(end)?,
            ));
            trie.push(Node::default());
            children += 1;
            k += group;
        }
        // An offset into the names' units until the labels are copied out.
        let label = U::start(universe, first_id)? + d;
        let node = Node {
            label: id32(label)?,
            label_len: id32(shared)?,
            depth: id32(end)?,
            first_child: id32(first_child)?,
            children,
            terminal,
            // Set from the children up (`set_subtree_summaries`).
            min_id: NONE,
            min_len: NONE,
            max_len: 0,
            packed: [0; 2],
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
        let label = U::all(universe)
            .get(start..start + node.label_len as usize)
            .unwrap_or_default();
        node.label = id32(labels.len())?;
        labels.extend_from_slice(label);
    }
    Some((trie, labels))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::set::{Universe, id32};
    use super::{SuggestIndex, Unit};

    /// The index over UTF-16 units and, when every name is ASCII, the one
    /// over bytes.
    fn indexes(universe: &Universe) -> Option<(Option<SuggestIndex<u8>>, SuggestIndex<u16>)> {
        let sorted = universe.sorted()?;
        let bytes = if universe.text().is_ascii() {
            Some(SuggestIndex::build(universe, sorted)?)
        } else {
            None
        };
        Some((bytes, SuggestIndex::build(universe, sorted)?))
    }

    /// A query as a byte index reads it.
    fn as_bytes(units: &[u16]) -> Vec<u8> {
        units.iter().map(|&u| u8::from_utf16(u)).collect()
    }
    use objectstack_spec::text::levenshtein_units;

    /// The lowest id one edit away, by scanning every name.
    fn scanned(universe: &Universe, query: &[u16]) -> Option<u32> {
        (0..universe.len())
            .filter_map(id32)
            .find(|&id| levenshtein_units(query, universe.units_of(id)) == 1)
    }

    fn word(max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(vec!['a', 'b', 'c', '😀']), 0..=max)
            .prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        /// A gap-coded list reads back as the ranks written, whatever
        /// their gaps (one byte to five).
        #[test]
        fn postings_read_back(mut ranks in prop::collection::vec(prop_oneof![0..300u32, any::<u32>()], 0..50)) {
            ranks.sort_unstable();
            ranks.dedup();
            let sizes: u32 = ranks
                .iter()
                .scan(None, |last: &mut Option<u32>, &r| {
                    let gap = last.map_or(r, |l| r - l);
                    *last = Some(r);
                    Some(super::gap_len(gap))
                })
                .sum();
            let mut bytes = vec![0u8; sizes as usize];
            let mut at = 0;
            let mut last = None;
            for &r in &ranks {
                at = super::put_gap(&mut bytes, at, last.map_or(r, |l| r - l));
                last = Some(r);
            }
            prop_assert_eq!(at as usize, bytes.len());
            prop_assert_eq!(super::Ranks::new(&bytes).collect::<Vec<_>>(), ranks);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn one_edit_finds_the_first_name_one_edit_away(
            names in prop::collection::vec(word(7), 0..60),
            queries in prop::collection::vec(word(8), 1..10),
        ) {
            let universe = Universe::new(names);
            let Some((bytes, units16)) = indexes(&universe) else {
                return Ok(());
            };
            for query in &queries {
                let units: Vec<u16> = query.encode_utf16().collect();
                let wanted = scanned(&universe, &units);
                prop_assert_eq!(units16.one_edit(&units), wanted, "query {:?}", query);
                if let Some(bytes) = &bytes {
                    prop_assert_eq!(bytes.one_edit(&as_bytes(&units)), wanted, "query {:?} in bytes", query);
                }
            }
        }
    }

    /// Names over a few letters, so that a subtree often lacks a class the
    /// query holds, and queries up to 80 units, past the 64 that classes
    /// cover.
    fn letters(min: usize, max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec!['a', 'b', 'c', 'x', '_', '7']),
            min..=max,
        )
        .prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn the_walk_with_class_bounds_finds_what_a_scan_finds(
            names in prop::collection::vec(letters(0, 12), 1..80),
            repeat in 1..8usize,
            queries in prop::collection::vec(letters(0, 12), 1..6),
            limit in 0..7usize,
        ) {
            let universe = Universe::new(names);
            let Some((bytes, units16)) = indexes(&universe) else {
                return Ok(());
            };
            for query in &queries {
                for query in [query.clone(), query.repeat(repeat)] {
                    let units: Vec<u16> = query.encode_utf16().collect();
                    let wanted = super::scan_within(&universe, &units, limit);
                    prop_assert_eq!(
                        units16.nearest_edit(&universe, &units, limit),
                        wanted,
                        "query {:?}, limit {}", query, limit
                    );
                    if let Some(bytes) = &bytes {
                        prop_assert_eq!(
                            bytes.nearest_edit(&universe, &as_bytes(&units), limit),
                            wanted,
                            "query {:?}, limit {} in bytes", query, limit
                        );
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Every node's rare counts are the least, over the names below
        /// it, of their digits and marks from the node's label on.
        #[test]
        fn rare_counts_are_the_least_below_each_node(
            names in prop::collection::vec(letters(0, 12), 1..40),
        ) {
            let universe = Universe::new(names);
            let Some((_, index)) = indexes(&universe) else {
                return Ok(());
            };
            let count = |units: &[u16], group: usize| {
                let counted = units
                    .iter()
                    .filter(|&&u| super::rare_group(u) == Some(group))
                    .count();
                u32::try_from(counted).unwrap_or(u32::MAX)
            };
            for node in &index.trie {
                let start = (node.depth - node.label_len) as usize;
                let least = |group| {
                    (0..universe.len())
                        .filter_map(id32)
                        .map(|id| universe.units_of(id))
                        .filter(|units| below(&index, node, units))
                        .map(|units| count(units.get(start..).unwrap_or_default(), group))
                        .min()
                        .unwrap_or(0)
                };
                prop_assert_eq!(node.rare(), [least(0), least(1)]);
            }
        }
    }

    /// Whether the name spelled `units` is in the subtree of `node`: it
    /// starts with the path to the node's label's end.
    fn below(index: &SuggestIndex<u16>, node: &super::Node, units: &[u16]) -> bool {
        let mut path: Vec<u16> = Vec::new();
        let mut at = 0u32;
        // Walk down from the root along `units` to the node's depth.
        while let Some(n) = index.node(at) {
            path.extend_from_slice(index.label(n));
            if !units.starts_with(&path) {
                return false;
            }
            if n.depth >= node.depth {
                return std::ptr::eq(n, node);
            }
            let Some((next, _)) = units.get(path.len()).and_then(|&u| index.child(n, u)) else {
                return false;
            };
            at = next;
        }
        false
    }

    #[test]
    fn classes_tell_identifier_units_apart() {
        let units: Vec<u16> = "azAZ09_-.é😀".encode_utf16().collect();
        let classes: Vec<u32> = units.iter().map(|&u| super::class(u)).collect();
        assert_eq!(classes, [0, 25, 0, 25, 26, 35, 36, 37, 38, 39, 39, 39]);
        // One entry per class, with every position of its units.
        let query: Vec<u16> = "abca".encode_utf16().collect();
        assert_eq!(
            super::class_positions(&query),
            [(1 << 0, 0b1001), (1 << 1, 0b0010), (1 << 2, 0b0100)]
        );
        let long = vec![u16::from(b'a'); 65];
        assert!(super::class_positions(&long).is_empty());
    }

    #[test]
    fn one_edit_takes_the_first_of_several_and_none_for_an_exact_name() {
        let universe = Universe::new(
            ["abd", "xbc", "abcd", "ab", "abc"]
                .map(str::to_owned)
                .to_vec(),
        );
        let Some((Some(bytes), units16)) = indexes(&universe) else {
            panic!("a small ASCII universe has both indexes");
        };
        let query: Vec<u16> = "abc".encode_utf16().collect();
        // "abd" (substituted) comes first; "abc" itself is not one edit away.
        assert_eq!(units16.one_edit(&query), Some(0));
        assert_eq!(bytes.one_edit(&as_bytes(&query)), Some(0));
        let far: Vec<u16> = "zzzz".encode_utf16().collect();
        assert_eq!(units16.one_edit(&far), None);
        assert_eq!(bytes.one_edit(&as_bytes(&far)), None);
    }
}
