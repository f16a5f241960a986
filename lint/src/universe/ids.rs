//! Membership: an open-addressing table of the names' spans in the
//! universe's buffer, probed linearly, with lookups that can be made a
//! group at a time.
//!
//! A lint of a million references makes a million lookups at random places
//! in a table and a buffer of a few megabytes, and each lookup waits on
//! memory twice: for its slot, then for the name the slot points at. Made
//! one after another those waits add up; made a group at a time, the slots
//! of the whole group are read first, then the first byte of each name
//! they point at, and the processor fetches a group's memory at once.
//! Both reads are ordinary loads whose values are used, so no `unsafe`
//! prefetch is needed.

use std::hash::BuildHasher;

/// A fast hasher for names from the document (not attacker-sensitive: a
/// lint run ends with the process, and a probe sequence stays short at
/// the table's load of at most one half).
type FastHash = foldhash::fast::RandomState;

/// A slot: `start << 32 | end` of a name in the buffer. No name ends
/// before it starts, so this marks an empty slot.
const EMPTY: u64 = 1 << 32;

/// How many lookups [`Ids::get_each`] makes together.
const GROUP: usize = 16;

/// Name to span, for names whose spans fit in 32 bits.
#[derive(Debug, Clone)]
pub(super) struct Ids {
    /// A power of two many slots, at most half of them full.
    slots: Vec<u64>,
    len: usize,
    hasher: FastHash,
}

fn span(slot: u64) -> (usize, usize) {
    ((slot >> 32) as usize, (slot & u64::from(u32::MAX)) as usize)
}

fn slots_for(names: usize) -> usize {
    names.saturating_mul(2).max(16).next_power_of_two()
}

impl Ids {
    /// A table that holds `capacity` names without growing.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        Self {
            slots: vec![EMPTY; slots_for(capacity)],
            len: 0,
            hasher: FastHash::default(),
        }
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Whether `slot` holds `wanted`, a name of `text`.
    #[inline]
    fn holds(text: &[u8], slot: u64, wanted: &[u8]) -> bool {
        let (start, end) = span(slot);
        end.wrapping_sub(start) == wanted.len() && text.get(start..end) == Some(wanted)
    }

    /// The span of `name` in `text`, probing from slot `at`.
    #[inline]
    fn probe(&self, text: &[u8], mut at: usize, wanted: &[u8]) -> Option<(usize, usize)> {
        loop {
            let slot = self.slots.get(at).copied().unwrap_or(EMPTY);
            if slot == EMPTY {
                return None;
            }
            if Self::holds(text, slot, wanted) {
                return Some(span(slot));
            }
            at = (at + 1) & self.mask();
        }
    }

    fn home(&self, name: &[u8]) -> usize {
        self.hasher.hash_one(name) as usize & self.mask()
    }

    /// The span of `name` in `text`.
    #[inline]
    pub(super) fn get(&self, text: &str, name: &str) -> Option<(usize, usize)> {
        let wanted = name.as_bytes();
        self.probe(text.as_bytes(), self.home(wanted), wanted)
    }

    /// [`Ids::get`] for each of `names`, in order, passed to `each` with
    /// the name's index in `names`; made [`GROUP`] at a time (see the
    /// module's documentation).
    pub(super) fn get_each(
        &self,
        text: &str,
        names: &[&str],
        mut each: impl FnMut(usize, Option<(usize, usize)>),
    ) {
        let bytes = text.as_bytes();
        for (g, group) in names.chunks(GROUP).enumerate() {
            let mut home = [0usize; GROUP];
            let mut slot = [EMPTY; GROUP];
            let mut first = [0u8; GROUP];
            // The slots first, then the first byte each points at: loads
            // that do not depend on one another, so they overlap.
            for ((name, home), slot) in group.iter().zip(&mut home).zip(&mut slot) {
                *home = self.home(name.as_bytes());
                *slot = self.slots.get(*home).copied().unwrap_or(EMPTY);
            }
            for (slot, first) in slot.iter().zip(&mut first) {
                *first = bytes.get(span(*slot).0).copied().unwrap_or(0);
            }
            let read = home.iter().zip(&slot).zip(&first);
            for (i, (name, ((&home, &slot), &first))) in group.iter().zip(read).enumerate() {
                let wanted = name.as_bytes();
                let found = if slot == EMPTY {
                    None
                } else if wanted.first().is_none_or(|&b| b == first)
                    && Self::holds(bytes, slot, wanted)
                {
                    Some(span(slot))
                } else {
                    self.probe(bytes, (home + 1) & self.mask(), wanted)
                };
                each(g * GROUP + i, found);
            }
        }
    }

    /// Inserts the name `text[start..end]` unless the table holds it
    /// already; whether it was new. One hash and one probe, where a lookup
    /// then an insert take two of each.
    pub(super) fn insert_new(&mut self, text: &str, start: u32, end: u32) -> bool {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow(text);
        }
        let bytes = text.as_bytes();
        let wanted = bytes.get(start as usize..end as usize).unwrap_or_default();
        let mask = self.mask();
        let mut at = self.home(wanted);
        while let Some(slot) = self.slots.get_mut(at) {
            if *slot == EMPTY {
                *slot = u64::from(start) << 32 | u64::from(end);
                self.len += 1;
                return true;
            }
            if Self::holds(bytes, *slot, wanted) {
                return false;
            }
            at = (at + 1) & mask;
        }
        false
    }

    fn place(&mut self, text: &[u8], slot: u64) {
        let (start, end) = span(slot);
        let mut at = self.home(text.get(start..end).unwrap_or_default());
        let mask = self.mask();
        while let Some(place) = self.slots.get_mut(at) {
            if *place == EMPTY {
                *place = slot;
                return;
            }
            at = (at + 1) & mask;
        }
    }

    fn grow(&mut self, text: &str) {
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; slots_for(self.len + 1)]);
        for slot in old.into_iter().filter(|&s| s != EMPTY) {
            self.place(text.as_bytes(), slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(names: &[&str]) -> (String, Ids) {
        let mut text = String::new();
        let mut ids = Ids::with_capacity(1);
        for name in names {
            let start = text.len() as u32;
            text.push_str(name);
            assert!(ids.insert_new(&text, start, text.len() as u32));
        }
        (text, ids)
    }

    /// A name the table holds is not inserted again, wherever its copy is.
    #[test]
    fn a_name_is_inserted_once() {
        let (mut text, mut ids) = table(&["open", "close", ""]);
        let len = ids.len;
        for name in ["close", "open", ""] {
            let start = text.len() as u32;
            text.push_str(name);
            assert!(!ids.insert_new(&text, start, text.len() as u32), "{name}");
        }
        assert_eq!(ids.len, len);
        assert_eq!(ids.get(&text, "close"), Some((4, 9)));
    }

    #[test]
    fn finds_each_name_and_no_other() {
        let names: Vec<String> = (0..1000).map(|i| format!("name_{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (text, ids) = table(&refs);
        for name in &refs {
            let (start, end) = ids.get(&text, name).unwrap();
            assert_eq!(&text[start..end], *name);
        }
        assert_eq!(ids.get(&text, "name_1000"), None);
        assert_eq!(ids.get(&text, ""), None);
    }

    #[test]
    fn the_empty_name_is_a_name() {
        let (text, ids) = table(&["a", "", "b"]);
        assert_eq!(ids.get(&text, ""), Some((1, 1)));
    }

    #[test]
    fn grouped_lookups_answer_as_single_ones() {
        let names: Vec<String> = (0..300).map(|i| format!("n{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (text, ids) = table(&refs);
        // Hits, misses that share a first byte, the empty string, and a
        // count that is not a multiple of the group.
        let queries: Vec<String> = (0..611)
            .map(|i| match i % 3 {
                0 => format!("n{}", i / 2),
                1 => format!("n{}x", i),
                _ => String::new(),
            })
            .collect();
        let queries: Vec<&str> = queries.iter().map(String::as_str).collect();
        let mut seen = Vec::new();
        ids.get_each(&text, &queries, |i, found| seen.push((i, found)));
        let single: Vec<_> = queries
            .iter()
            .enumerate()
            .map(|(i, q)| (i, ids.get(&text, q)))
            .collect();
        assert_eq!(seen, single);
        assert!(seen.iter().any(|(_, f)| f.is_some()));
        assert!(seen.iter().any(|(_, f)| f.is_none()));
    }
}
