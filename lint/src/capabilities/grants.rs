//! Answering [`Grants`]: which tools a set of skill references grants,
//! exactly and through wildcards, in grant order.

use super::*;

/// Sorts and merges ranges into disjoint ones, in order.
pub(super) fn merge(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.retain(|r| !r.is_empty());
    ranges.sort_unstable_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

impl<'c, 'a> Grants<'c, 'a> {
    /// The grant at this place in grant order.
    pub(super) fn grant(&self, seq: u32) -> Option<Grant<'a>> {
        let span = self.spans.partition_point(|&(start, _)| start <= seq);
        let &(start, skill) = self.spans.get(span.checked_sub(1)?)?;
        let skill = wide(skill);
        let r = self
            .caps
            .skills
            .get(skill)?
            .refs
            .get(wide(seq.checked_sub(start)?))?;
        Some(Grant {
            skill,
            reference: r.text(),
        })
    }

    /// The exact grants, one group per tool.
    pub(super) fn groups(&self) -> impl Iterator<Item = &[Exact]> + '_ {
        self.exact.chunk_by(|a, b| a.position == b.position)
    }

    /// The tools named exactly, in name order, each with the exact
    /// references that name it, one at a time.
    pub fn named(&self) -> impl Iterator<Item = EffectiveTool<'a>> + '_ {
        let caps = self.caps;
        self.groups().filter_map(move |group| {
            let tool = caps.tool_at(wide(group.first()?.position))?;
            let granted_by = group.iter().filter_map(|e| self.grant(e.seq)).collect();
            Some(EffectiveTool { tool, granted_by })
        })
    }

    /// How many distinct tools are named exactly.
    pub fn named_count(&self) -> usize {
        self.groups().count()
    }

    /// The tools named exactly, without their grants.
    pub(super) fn named_tools(&self) -> impl Iterator<Item = usize> + '_ {
        self.groups()
            .filter_map(|group| self.caps.tool_at(wide(group.first()?.position)))
    }

    /// The whole effective tool set, in name order, each tool with every
    /// reference that grants it (wildcards included), one tool at a time:
    /// a sweep over the grants, so the cost is the size of what it yields.
    pub fn expanded(&self) -> impl Iterator<Item = EffectiveTool<'a>> + '_ {
        Sweep {
            grants: self,
            exact: 0,
            wild: 0,
            active: std::collections::BTreeMap::new(),
            ends: std::collections::BinaryHeap::new(),
            position: 0,
        }
    }

    /// The positions (in name order) of the effective tool set, some more
    /// than once.
    pub(super) fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        let ranges = merge(self.wild.iter().map(Granting::range).collect());
        ranges
            .into_iter()
            .flatten()
            .chain(self.exact.iter().map(|e| wide(e.position)))
    }
}

/// The sweep behind [`Grants::expanded`]: the exact grants and the
/// wildcard grants are both sorted by position; the wildcards covering the
/// current position are kept by grant order.
pub(super) struct Sweep<'g, 'c, 'a> {
    grants: &'g Grants<'c, 'a>,
    /// The next exact grant.
    exact: usize,
    /// The next wildcard grant to start.
    wild: usize,
    /// The wildcard grants covering the current position, by grant order.
    active: std::collections::BTreeMap<u32, &'g Granting>,
    /// (end, seq) of the active wildcard grants, smallest end first.
    ends: std::collections::BinaryHeap<std::cmp::Reverse<(u32, u32)>>,
    position: u32,
}

impl<'a> Iterator for Sweep<'_, '_, 'a> {
    type Item = EffectiveTool<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let (exact, wild, caps) = (&self.grants.exact, &self.grants.wild, self.grants.caps);
        loop {
            // Drop the wildcards that end at or before this position.
            while let Some(std::cmp::Reverse((end, seq))) = self.ends.peek().copied() {
                if end > self.position {
                    break;
                }
                self.ends.pop();
                self.active.remove(&seq);
            }
            if self.active.is_empty() {
                // Jump to the next grant.
                let next_exact = exact.get(self.exact).map(|e| e.position);
                let next_wild = wild.get(self.wild).map(|g| g.start);
                let next = match (next_exact, next_wild) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => return None,
                };
                self.position = self.position.max(next);
            }
            while let Some(g) = wild.get(self.wild) {
                if g.start > self.position {
                    break;
                }
                if g.end > self.position {
                    self.active.insert(g.seq, g);
                    self.ends.push(std::cmp::Reverse((g.end, g.seq)));
                }
                self.wild += 1;
            }
            let position = self.position;
            self.position = self.position.saturating_add(1);
            // The exact grants here, merged with the active wildcards by
            // grant order. (No exact grant lies behind: each visited position
            // takes its own. Skipping is only a guard against looping.)
            while exact.get(self.exact).is_some_and(|e| e.position < position) {
                self.exact += 1;
            }
            let from = self.exact;
            while exact
                .get(self.exact)
                .is_some_and(|e| e.position == position)
            {
                self.exact += 1;
            }
            let here = exact.get(from..self.exact).unwrap_or_default();
            if here.is_empty() && self.active.is_empty() {
                continue;
            }
            let Some(tool) = caps.tool_at(wide(position)) else {
                continue;
            };
            let mut granted_by = Vec::with_capacity(here.len() + self.active.len());
            let mut here = here.iter().peekable();
            let mut active = self.active.values().peekable();
            loop {
                let seq = match (here.peek(), active.peek()) {
                    (Some(e), Some(g)) if g.seq < e.seq => active.next().map(|g| g.seq),
                    (Some(_), _) => here.next().map(|e| e.seq),
                    (None, Some(_)) => active.next().map(|g| g.seq),
                    (None, None) => None,
                };
                let Some(seq) = seq else { break };
                granted_by.extend(self.grants.grant(seq));
            }
            return Some(EffectiveTool { tool, granted_by });
        }
    }
}
