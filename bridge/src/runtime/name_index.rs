//! The registry's index: each tool's position in registration order,
//! found by the tool's name, which the entries themselves hold. A served
//! stack may register tens of thousands of tools; a map from names would
//! hold a second pointer to every name and a `usize` beside it, where this
//! table holds four bytes a tool.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// What the index finds: something with a name.
pub(super) trait Named {
    /// The name it is found by.
    fn name(&self) -> &str;
}

/// Positions in a slice of [`Named`] entries, by name. The slice is passed
/// to every call: the index holds only positions into it.
#[derive(Default)]
pub(super) struct NameIndex {
    table: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

/// The index holds positions as `u32`: no more entries than that.
#[derive(Debug)]
pub(super) struct Full;

impl NameIndex {
    fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    /// The position of the entry named `name`.
    pub(super) fn position<E: Named>(&self, name: &str, entries: &[E]) -> Option<usize> {
        let found = self.table.find(self.hash(name), |&at| {
            entries.get(at as usize).is_some_and(|e| e.name() == name)
        })?;
        Some(*found as usize)
    }

    /// Indexes the entry about to be pushed onto `entries` (its position
    /// is `entries.len()`) under `name`, which no entry has yet.
    pub(super) fn insert<E: Named>(&mut self, name: &str, entries: &[E]) -> Result<(), Full> {
        let at = u32::try_from(entries.len()).map_err(|_| Full)?;
        let hash = self.hash(name);
        let hasher = &self.hasher;
        self.table
            .insert_unique(hash, at, |&i| rehash(hasher, entries, i));
        Ok(())
    }

    /// Makes room for `additional` more entries.
    pub(super) fn reserve<E: Named>(&mut self, additional: usize, entries: &[E]) {
        let hasher = &self.hasher;
        self.table
            .reserve(additional, |&i| rehash(hasher, entries, i));
    }

    /// Gives back room no entry uses.
    pub(super) fn shrink_to_fit<E: Named>(&mut self, entries: &[E]) {
        let hasher = &self.hasher;
        self.table.shrink_to_fit(|&i| rehash(hasher, entries, i));
    }
}

/// The hash of the entry at `at` (every position in the table is one of
/// `entries`: positions are only ever added for entries pushed after).
fn rehash<E: Named>(hasher: &foldhash::fast::RandomState, entries: &[E], at: u32) -> u64 {
    entries
        .get(at as usize)
        .map_or(0, |e| hasher.hash_one(e.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Named for String {
        fn name(&self) -> &str {
            self
        }
    }

    fn push(index: &mut NameIndex, entries: &mut Vec<String>, name: &str) {
        index.insert(name, entries).unwrap();
        entries.push(name.to_owned());
    }

    #[test]
    fn finds_every_entry_by_name_as_the_table_grows() {
        let mut index = NameIndex::default();
        let mut entries = Vec::new();
        for i in 0..5_000 {
            push(&mut index, &mut entries, &format!("action_{i}"));
        }
        for (at, name) in entries.iter().enumerate() {
            assert_eq!(index.position(name, &entries), Some(at));
        }
        assert_eq!(index.position("action_5000", &entries), None);
        assert_eq!(index.position("", &entries), None);
    }

    #[test]
    fn reserved_and_shrunk_it_still_finds_them() {
        let mut index = NameIndex::default();
        let mut entries = Vec::new();
        index.reserve(1_000, &entries);
        for i in 0..10 {
            push(&mut index, &mut entries, &format!("t{i}"));
        }
        index.shrink_to_fit(&entries);
        assert_eq!(index.position("t7", &entries), Some(7));
        push(&mut index, &mut entries, "later");
        assert_eq!(index.position("later", &entries), Some(10));
        assert_eq!(index.position("t0", &entries), Some(0));
    }
}
