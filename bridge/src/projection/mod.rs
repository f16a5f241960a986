//! The same tool definitions rendered for the model APIs they are sent to.
//!
//! - [`mcp`]: entries of an MCP `tools/list` result, with annotations
//!   derived from the action itself;
//! - [`openai`]: OpenAI function tools with `strict: true`;
//! - [`anthropic`]: Anthropic Messages API tools, optionally strict.
//!
//! Each projection is valid by construction for the rules it can enforce
//! (schema shapes, keywords the API rejects). Limits it cannot enforce
//! without dropping information (name patterns, enum sizes, tools per
//! request) are reported as [`ProjectionWarning`]s naming the tool, and the
//! tool is still rendered.

pub mod anthropic;
pub mod mcp;
pub mod openai;
mod schema;

use std::fmt;

use serde::Serialize;

/// Tools rendered for one API, with what the API would reject.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Projected<T> {
    /// The rendered tools, in the order given.
    pub tools: Vec<T>,
    /// Limits the tools break, each naming the tool.
    pub warnings: Vec<ProjectionWarning>,
}

impl<T> Default for Projected<T> {
    fn default() -> Self {
        Projected {
            tools: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// A documented limit of a model API that a tool breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectionWarning {
    /// The tool's name.
    pub tool: String,
    /// A stable machine-readable code (`invalid_name`, `too_many_tools`,
    /// ...).
    pub code: &'static str,
    /// What the API would reject, and how to change it.
    pub warning: String,
}

impl ProjectionWarning {
    pub(crate) fn new(tool: &str, code: &'static str, warning: String) -> Self {
        ProjectionWarning {
            tool: tool.to_owned(),
            code,
            warning,
        }
    }
}

impl fmt::Display for ProjectionWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} [{}]", self.tool, self.warning, self.code)
    }
}

/// Whether `name` is 1..=`max` characters, each an ASCII letter, digit,
/// `_`, `-` or one of `extra`.
pub(crate) fn name_matches(name: &str, max: usize, extra: &[u8]) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || extra.contains(&b))
}
