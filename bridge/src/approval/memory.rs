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
        rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
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
