//! The name set: names in scan order, membership by hash, wildcards by a
//! binary search over the names sorted by UTF-16 units.

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

use super::suggest::SuggestIndex;

/// Every tool name a skill may resolve to, in upstream's scan order.
#[derive(Clone)]
pub struct Universe {
    /// The names, deduplicated, in scan order; a name's id is its index.
    pub(super) names: Vec<String>,
    /// The UTF-16 units of every name, concatenated.
    pub(super) units: Vec<u16>,
    /// Name `i` is `units[starts[i]..starts[i + 1]]`.
    pub(super) starts: Vec<usize>,
    /// Name to id; `None` when ids do not fit in 32 bits (then every
    /// question is answered by a linear scan).
    pub(super) ids: Option<Ids>,
    /// Ids sorted by UTF-16 units (lazy).
    sorted: OnceLock<Vec<u32>>,
    /// The suggestion index (lazy); `None` when the names are too many or
    /// too long for 32-bit offsets, and suggestions scan linearly.
    index: OnceLock<Option<SuggestIndex>>,
}

/// Name to id, as a table of ids hashed by the name they stand for, so the
/// names are stored once (in `Universe::names`).
#[derive(Debug, Clone)]
pub(super) struct Ids {
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
    pub(super) fn get(&self, names: &[String], name: &str) -> Option<u32> {
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

    pub(super) fn name(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }

    pub(super) fn units_of(&self, id: u32) -> &[u16] {
        name_units(&self.units, &self.starts, id)
    }

    /// The id of the name spelled `units`.
    pub(super) fn lookup(&self, units: &[u16]) -> Option<u32> {
        let name = String::from_utf16(units).ok()?;
        self.ids.as_ref()?.get(&self.names, &name)
    }

    pub(super) fn sorted(&self) -> &[u32] {
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
