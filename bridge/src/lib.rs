//! The `bridge` crate (filled in by its issue; see ARCHITECTURE.md).
#![deny(missing_docs)]
