//! An in-memory [`ApprovalStore`], for tests and demos. Nothing survives
//! the process.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::store::{ApprovalStore, Cas, ListFilter, StoreError};
use super::{PendingAction, State};

/// Pending actions in a map behind a mutex.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    rows: HashMap<String, PendingAction>,
    by_dedup: HashMap<String, String>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a half-written row:
        // every change is a single map insert. Carry on with the data.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ApprovalStore for MemoryStore {
    fn insert(&self, row: &PendingAction) -> Result<(PendingAction, bool), StoreError> {
        let mut inner = self.lock();
        let key = row.dedup_key();
        if let Some(key) = &key
            && let Some(existing) = inner.by_dedup.get(key).and_then(|id| inner.rows.get(id))
        {
            return Ok((existing.clone(), false));
        }
        if inner.rows.contains_key(&row.id) {
            return Err(StoreError::Backend {
                operation: "inserting a pending action",
                message: format!("id `{}` is already taken", row.id),
            });
        }
        if let Some(key) = key {
            inner.by_dedup.insert(key, row.id.clone());
        }
        inner.rows.insert(row.id.clone(), row.clone());
        Ok((row.clone(), true))
    }

    fn get(&self, id: &str) -> Result<Option<PendingAction>, StoreError> {
        Ok(self.lock().rows.get(id).cloned())
    }

    fn list(
        &self,
        filter: &ListFilter,
    ) -> Result<Vec<Result<PendingAction, StoreError>>, StoreError> {
        let inner = self.lock();
        let mut rows: Vec<PendingAction> = inner
            .rows
            .values()
            .filter(|r| filter.matches(r))
            .cloned()
            .collect();
        filter.order.sort(&mut rows);
        rows.drain(..filter.offset.unwrap_or(0).min(rows.len()));
        if let Some(limit) = filter.limit {
            rows.truncate(limit);
        }
        // Rows held in memory are always readable.
        Ok(rows.into_iter().map(Ok).collect())
    }

    fn compare_and_set(
        &self,
        expected_version: u64,
        next: &PendingAction,
    ) -> Result<Cas, StoreError> {
        let mut inner = self.lock();
        match inner.rows.get_mut(&next.id) {
            None => Ok(Cas::Missing),
            Some(current) if current.version != expected_version => {
                Ok(Cas::Conflict(Box::new(current.clone())))
            }
            Some(current) => {
                *current = next.clone();
                Ok(Cas::Applied)
            }
        }
    }
    fn claim_next(
        &self,
        tools: &[String],
        claim: &mut dyn FnMut(&PendingAction) -> Option<PendingAction>,
    ) -> Result<Option<PendingAction>, StoreError> {
        // Under the one lock, so no two callers see the same row.
        let mut inner = self.lock();
        let mut approved: Vec<&PendingAction> = inner
            .rows
            .values()
            .filter(|r| r.state == State::Approved && tools.contains(&r.tool_name))
            .collect();
        approved.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        let Some(next) = approved.into_iter().find_map(claim) else {
            return Ok(None);
        };
        inner.rows.insert(next.id.clone(), next.clone());
        Ok(Some(next))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use super::MemoryStore;
    use crate::actor::Actor;
    use crate::approval::{
        ApprovalQueue, ApprovalStore, ListFilter, ListOrder, ManualClock, Proposal,
    };

    fn proposal(n: usize, proposer: &str) -> Proposal {
        Proposal {
            tool_name: "action_archive".into(),
            action_name: "archive".into(),
            object_name: None,
            input: json!({ "n": n }).as_object().cloned().unwrap_or_default(),
            executable_sha256: "0".repeat(64),
            conversation_id: None,
            message_id: None,
            tool_call_id: None,
            trace_id: None,
            proposer: Actor::new(proposer),
        }
    }

    #[test]
    fn lists_in_each_order_with_pages_and_filters() {
        let clock = Arc::new(ManualClock::new(1_000));
        let store = Arc::new(MemoryStore::new());
        let q = ApprovalQueue::new(store.clone()).with_clock(clock.clone());
        let ids: Vec<String> = (0..4)
            .map(|n| {
                clock.advance(Duration::from_secs(1));
                let who = if n == 2 { "bob" } else { "ann" };
                q.propose(proposal(n, who)).unwrap().action.id
            })
            .collect();
        clock.advance(Duration::from_secs(1));
        q.reject(&ids[2], "carol", None).unwrap();
        clock.advance(Duration::from_secs(1));
        q.cancel(&ids[0], "ann").unwrap();
        let listed = |filter: ListFilter| -> Vec<String> {
            store
                .list(&filter)
                .unwrap()
                .into_iter()
                .map(|r| r.unwrap().id)
                .collect()
        };
        assert_eq!(listed(ListFilter::default()), ids);
        assert_eq!(
            listed(ListFilter {
                order: ListOrder::NewestFirst,
                offset: Some(1),
                limit: Some(2),
                ..ListFilter::default()
            }),
            [ids[2].clone(), ids[1].clone()]
        );
        assert_eq!(
            listed(ListFilter {
                terminal: Some(true),
                order: ListOrder::RecentlyChanged,
                ..ListFilter::default()
            }),
            [ids[0].clone(), ids[2].clone()]
        );
        assert_eq!(
            listed(ListFilter {
                terminal: Some(false),
                proposer_id: Some("ann".into()),
                ..ListFilter::default()
            }),
            [ids[1].clone(), ids[3].clone()]
        );
        assert!(
            listed(ListFilter {
                offset: Some(9),
                ..ListFilter::default()
            })
            .is_empty()
        );
        // Pages: in order, each row once, and nothing after the last.
        let pages: Vec<Vec<String>> = q
            .pages(&ListFilter::default(), 3)
            .map(|p| p.unwrap().rows.into_iter().map(|r| r.id).collect())
            .collect();
        assert_eq!(pages, [ids[..3].to_vec(), ids[3..].to_vec()]);
        let pages: Vec<usize> = q
            .pages(&ListFilter::default(), 2)
            .map(|p| p.unwrap().rows.len())
            .collect();
        assert_eq!(pages, [2, 2]);
        let live: Vec<String> = q
            .pages(
                &ListFilter {
                    terminal: Some(false),
                    limit: Some(1),
                    ..ListFilter::default()
                },
                0,
            )
            .flat_map(|p| p.unwrap().rows)
            .map(|r| r.id)
            .collect();
        assert_eq!(
            live,
            [ids[1].clone(), ids[3].clone()],
            "size 0 is 1; limit replaced"
        );
    }
}
