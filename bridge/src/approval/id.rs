//! The ids the queue makes: a fresh pending action id, and the dedup key
//! that makes a proposal idempotent per tool call.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use super::canonical::hex;

/// SHA-256 (hex) over the dedup fields, each length-prefixed (and an absent
/// conversation told apart from an empty one), so no two different tuples
/// share a key.
pub(crate) fn dedup_key(
    conversation_id: Option<&str>,
    tool_call_id: Option<&str>,
    tool_name: &str,
    proposer_id: &str,
) -> Option<String> {
    let tool_call_id = tool_call_id?;
    let mut h = Sha256::new();
    h.update(b"objectstack.dedup/2");
    for part in [
        conversation_id,
        Some(tool_call_id),
        Some(tool_name),
        Some(proposer_id),
    ] {
        match part {
            None => h.update([0u8]),
            Some(text) => {
                h.update([1u8]);
                h.update((text.len() as u64).to_be_bytes());
                h.update(text.as_bytes());
            }
        }
    }
    Some(hex(&h.finalize()))
}

/// A fresh pending action id: `pa_` and 24 hex digits, unique across
/// threads and processes (time, process id, thread, a counter).
pub(super) fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut thread = DefaultHasher::new();
    std::thread::current().id().hash(&mut thread);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = Sha256::new();
    h.update(nanos.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(thread.finish().to_le_bytes());
    h.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    h.update((&COUNTER as *const AtomicU64 as usize).to_le_bytes());
    let digest = h.finalize();
    format!("pa_{}", hex(digest.get(..12).unwrap_or(&[])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_shaped() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|i| i.len() == 27 && i.starts_with("pa_")));
    }
}
