//! Serde types for the modelled parts of a stack.
//!
//! (Filled in by the spec model work; see ARCHITECTURE.md.)
