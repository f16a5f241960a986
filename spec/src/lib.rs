//! The ObjectStack AI metadata model.
//!
//! This crate sits at the bottom of the workspace. It knows the shape of a
//! *stack* (one application's compiled metadata) as far as the AI tool
//! authoring model cares about it: objects and their actions, stack-level
//! actions, tool records, skills and agents.
//!
//! What it offers:
//! - [`parse`]: turning bytes into a JSON document with precise errors
//!   (line and column, UTF-8 faults, nesting depth).
//! - [`json`]: the borrowed, arena-allocated document the readers below
//!   take (much cheaper than a `serde_json::Value` tree).
//! - [`collection`]: the lenient reading of collections that every consumer
//!   shares (arrays keep only their object entries; maps keyed by name).
//! - [`materialise`]: the one predicate that says whether an action becomes
//!   an AI tool, and the "needs confirmation" rule.
//! - [`model`]: serde types for the modelled parts of a stack, which keep
//!   every key they do not model.
//! - [`path`]: JSON paths such as `objects[2].actions[0].ai.description`.
//! - [`text`]: string measures that match upstream JavaScript (UTF-16).
//! - [`source`]: mapping JSON paths back to line and column in the text.
//! - [`validate`]: every problem of a stack at once, each with a stable id,
//!   a raw JSON path, a message and a fix.
//! - [`compose`]: several stacks (packages) concatenated into one, with
//!   names defined twice reported against both sources.
//! - `schema` (with the `schema` feature): the JSON Schema (draft 2020-12)
//!   of the model.
//!
//! Architecture invariant: `spec` knows nothing about model APIs, lint
//! rules, the platform tool registry or how actions are executed.
#![deny(missing_docs)]

pub mod collection;
pub mod compose;
pub mod json;
pub mod materialise;
pub mod model;
pub mod parse;
pub mod path;
#[cfg(feature = "schema")]
pub mod schema;
pub mod source;
pub mod text;
pub mod tool_definition;
pub mod validate;

pub use tool_definition::AIToolDefinition;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
