//! Deserialisation helpers the model's types share.

use serde::{Deserialize, Deserializer};

/// Deserialises a key that is present as `Some`, so that `null` is refused
/// for typed keys (as upstream refuses it) and kept for untyped ones.
pub(super) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}
