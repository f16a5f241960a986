//! The actions of each name: every distinct action name copied end to end
//! into one buffer, with the first and last action of that name, found
//! through a table of indices.
//!
//! A lookup compares against the copy, a few megabytes written in order,
//! rather than against the name where the document holds it: a stack's
//! tool records bind tens of thousands of names, and each comparison with
//! a name in a 60 MB document is a wait on memory.

use std::hash::BuildHasher;

use crate::rule::FastHash;

/// Distinct action names and the first and last action (indexes into
/// `Stack::actions`) of each.
#[derive(Default)]
pub(crate) struct ActionNames {
    /// The names, end to end.
    text: String,
    /// Where name `i` ends in `text` (it starts where name `i - 1` ends).
    ends: Vec<usize>,
    /// The first and last action of name `i`.
    first_last: Vec<(u32, u32)>,
    /// Name indexes, hashed by name.
    table: hashbrown::HashTable<u32>,
    hasher: FastHash,
}

impl ActionNames {
    /// Room for `names` distinct names.
    pub(crate) fn with_capacity(names: usize) -> Self {
        ActionNames {
            ends: Vec::with_capacity(names),
            first_last: Vec::with_capacity(names),
            table: hashbrown::HashTable::with_capacity(names),
            ..ActionNames::default()
        }
    }

    /// Name `i` (the index [`ActionNames::note`] gave it).
    pub(crate) fn name(&self, i: u32) -> &str {
        name_at(&self.text, &self.ends, i)
    }

    /// The first and last action named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<(u32, u32)> {
        let i = self
            .table
            .find(self.hasher.hash_one(name), |&i| self.name(i) == name)?;
        self.first_last.get(*i as usize).copied()
    }

    /// Notes that action `action` is named `name` (actions come in scan
    /// order): the name's index (`None` past four billion distinct names,
    /// which are not indexed) and the last action of that name before
    /// this one, if any.
    pub(crate) fn note(&mut self, name: &str, action: u32) -> (Option<u32>, Option<u32>) {
        let hash = self.hasher.hash_one(name);
        let found = self
            .table
            .find(hash, |&i| name_at(&self.text, &self.ends, i) == name)
            .copied();
        if let Some(i) = found {
            let before = self
                .first_last
                .get_mut(i as usize)
                .map(|(_, last)| std::mem::replace(last, action));
            return (Some(i), before);
        }
        let Ok(i) = u32::try_from(self.ends.len()) else {
            return (None, None);
        };
        self.text.push_str(name);
        self.ends.push(self.text.len());
        self.first_last.push((action, action));
        let (hasher, text, ends) = (&self.hasher, &self.text, &self.ends);
        self.table
            .insert_unique(hash, i, |&j| hasher.hash_one(name_at(text, ends, j)));
        (Some(i), None)
    }
}

/// Name `i` of `text`, whose names end at `ends`.
fn name_at<'t>(text: &'t str, ends: &[usize], i: u32) -> &'t str {
    let i = i as usize;
    let start = i
        .checked_sub(1)
        .and_then(|before| ends.get(before))
        .copied()
        .unwrap_or(0);
    let end = ends.get(i).copied().unwrap_or(start);
    text.get(start..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_keeps_its_first_and_last_action() {
        let mut names = ActionNames::with_capacity(1);
        let order = ["close", "open", "", "close", "open_all", "close", ""];
        let noted: Vec<_> = (0u32..)
            .zip(order)
            .map(|(i, name)| names.note(name, i))
            .collect();
        assert_eq!(
            noted,
            [
                (Some(0), None),
                (Some(1), None),
                (Some(2), None),
                (Some(0), Some(0)),
                (Some(3), None),
                (Some(0), Some(3)),
                (Some(2), Some(2)),
            ]
        );
        assert_eq!(names.name(3), "open_all");
        assert_eq!(names.name(2), "");
        assert_eq!(names.get("close"), Some((0, 5)));
        assert_eq!(names.get("open"), Some((1, 1)));
        assert_eq!(names.get(""), Some((2, 6)));
        assert_eq!(names.get("open_all"), Some((4, 4)));
        assert_eq!(names.get("clos"), None);
        assert_eq!(names.get("opena"), None);
    }

    #[test]
    fn many_names_survive_the_table_growing() {
        let mut names = ActionNames::with_capacity(0);
        for i in 0..5000u32 {
            assert_eq!(names.note(&format!("action_{i}"), i), (Some(i), None));
        }
        for i in 0..5000u32 {
            assert_eq!(
                names.note(&format!("action_{i}"), 5000 + i),
                (Some(i), Some(i))
            );
        }
        for i in 0..5000u32 {
            assert_eq!(names.get(&format!("action_{i}")), Some((i, 5000 + i)));
        }
        assert_eq!(names.get("action_5000"), None);
    }
}
