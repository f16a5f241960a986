//! The approval store behind [`Gateway::new`](crate::Gateway::new)'s queue,
//! each call announced to Tokio as a blocking wait.
//!
//! The stores are synchronous, and the gateway calls its queue from async
//! handlers on a few Tokio workers (two on two cores). A call that waits
//! (SQLite's busy timeout while another process writes the file, a slow
//! PostgreSQL) would hold its worker for as long, and two such calls would
//! stall every session. On a multi-threaded runtime each call runs inside
//! `block_in_place`, so the runtime hands the worker's other tasks to
//! another thread first; elsewhere (a current-thread runtime, no runtime)
//! the call runs as it is.

use std::sync::Arc;

use objectstack_bridge::approval::{
    ApprovalStore, Cas, ListFilter, PendingAction, StoreError, Wake,
};

/// A store whose every call is announced as a blocking wait.
pub(crate) struct Announced(pub(crate) Arc<dyn ApprovalStore>);

/// Runs `f`, a call that may block, without holding a worker's other tasks.
fn announced<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(host) if host.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

impl ApprovalStore for Announced {
    fn insert(&self, row: &PendingAction) -> Result<(PendingAction, bool), StoreError> {
        announced(|| self.0.insert(row))
    }

    fn get(&self, id: &str) -> Result<Option<PendingAction>, StoreError> {
        announced(|| self.0.get(id))
    }

    fn list(
        &self,
        filter: &ListFilter,
    ) -> Result<Vec<Result<PendingAction, StoreError>>, StoreError> {
        announced(|| self.0.list(filter))
    }

    fn compare_and_set(
        &self,
        expected_version: u64,
        next: &PendingAction,
    ) -> Result<Cas, StoreError> {
        announced(|| self.0.compare_and_set(expected_version, next))
    }

    fn claim_next(
        &self,
        tools: &[String],
        claim: &mut dyn FnMut(&PendingAction) -> Option<PendingAction>,
    ) -> Result<Option<PendingAction>, StoreError> {
        announced(|| self.0.claim_next(tools, claim))
    }

    fn watch_approved(&self, wake: Wake) -> Result<bool, StoreError> {
        self.0.watch_approved(wake)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use objectstack_bridge::approval::{ApprovalQueue, SqliteStore};

    use super::*;

    #[test]
    fn a_call_waiting_on_the_file_does_not_stall_the_other_tasks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.sqlite");
        let store: Arc<dyn ApprovalStore> = Arc::new(SqliteStore::open(&path).unwrap());
        let queue = ApprovalQueue::new(Arc::new(Announced(store)));
        // Another process's writer holds the file for a while.
        let holder = rusqlite::Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            holder.execute_batch("COMMIT").unwrap();
        });
        let host = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (expired, ticked) = host.block_on(async move {
            let started = Instant::now();
            // A write: waits for the lock, on the only worker.
            let waiting = tokio::spawn(async move { (queue.expire_due(), started.elapsed()) });
            tokio::time::sleep(Duration::from_millis(200)).await;
            let ticker = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                started.elapsed()
            });
            let ticked = ticker.await.unwrap();
            (waiting.await.unwrap(), ticked)
        });
        release.join().unwrap();
        let (result, _) = expired;
        assert!(result.is_ok(), "{result:?}");
        assert!(
            ticked < Duration::from_millis(1000),
            "another task ran after {ticked:?}, behind the waiting call"
        );
    }
}
