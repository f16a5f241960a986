//! OpenAI function tools with `strict: true` (Chat Completions shape:
//! `{"type": "function", "function": {name, description, parameters,
//! strict}}`).
//!
//! Strict mode (Structured Outputs) accepts a subset of JSON Schema; the
//! parameters are rewritten into it:
//! - every object has `additionalProperties: false` and lists every
//!   property in `required`; a property that was optional becomes nullable
//!   (`type: [T, "null"]`, and `null` joins its `enum`), so the model
//!   passes `null` for "not given";
//! - keywords strict mode rejects are folded into the node's description
//!   (`default`, `examples`, `format`s other than date-time, time, date,
//!   duration, email, hostname, ipv4, ipv6 and uuid, length limits, ...);
//! - enum values that cannot match their node's type are dropped (with a
//!   warning).
//!
//! Limits checked, each violation a warning naming the tool: the name
//! matches `^[a-zA-Z0-9_-]{1,64}$`; at most 1000 enum values, 5000
//! properties, 10 levels of object nesting and 120,000 characters of
//! property names and enum values per schema; an enum of more than 250
//! values has at most 15,000 characters; at most 128 tools per request.

use objectstack_spec::AIToolDefinition;
use serde::Serialize;
use serde_json::{Map, Value};

use super::schema::{self, Dialect, LARGE_ENUM};
use super::{Projected, ProjectionWarning, name_matches};

/// The longest function name.
pub const MAX_NAME_LEN: usize = 64;
/// The most tools one request may carry.
pub const MAX_TOOLS: usize = 128;
/// The most enum values in one schema.
pub const MAX_ENUM_VALUES: usize = 1000;
/// The most characters of the values of one enum that has more than 250.
pub const MAX_LARGE_ENUM_CHARS: usize = 15_000;
/// The most object properties in one schema.
pub const MAX_PROPERTIES: usize = 5000;
/// The deepest object nesting in one schema.
pub const MAX_DEPTH: usize = 10;
/// The most characters of property names, definition names, enum and
/// const values in one schema.
pub const MAX_STRING_CHARS: usize = 120_000;

const DIALECT: Dialect = Dialect {
    kept: &[
        "type",
        "description",
        "title",
        "enum",
        "const",
        "$ref",
        "pattern",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    ],
    structural: &["items", "anyOf", "$defs", "definitions"],
    formats: &[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ],
    all_required: true,
    max_min_items: None,
    primitive_enums: false,
};

/// One function tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenAiTool {
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The function.
    pub function: OpenAiFunction,
}

/// The function of an [`OpenAiTool`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenAiFunction {
    /// The function name.
    pub name: String,
    /// The LLM-facing description.
    pub description: String,
    /// The strict-mode JSON Schema of the arguments.
    pub parameters: Map<String, Value>,
    /// Always `true`.
    pub strict: bool,
}

/// Renders definitions as strict function tools.
pub fn tools<'d>(
    definitions: impl IntoIterator<Item = &'d AIToolDefinition>,
) -> Projected<OpenAiTool> {
    let mut out = Projected::default();
    for (i, definition) in definitions.into_iter().enumerate() {
        if i == MAX_TOOLS {
            out.warnings.push(ProjectionWarning::new(
                &definition.name,
                "too_many_tools",
                format!(
                    "this is tool {} of the list, and OpenAI accepts at most {MAX_TOOLS} tools \
                     per request; it and the tools after it must go in another request (scope \
                     tools by skill or by object)",
                    i + 1
                ),
            ));
        }
        let (tool, warnings) = tool(definition);
        out.tools.push(tool);
        out.warnings.extend(warnings);
    }
    out
}

/// Renders one definition as a strict function tool.
pub fn tool(definition: &AIToolDefinition) -> (OpenAiTool, Vec<ProjectionWarning>) {
    let name = &definition.name;
    let mut warnings = Vec::new();
    let mut warn = |code: &'static str, warning: String| {
        warnings.push(ProjectionWarning::new(name, code, warning));
    };
    if !name_matches(name, MAX_NAME_LEN, b"") {
        warn(
            "invalid_name",
            format!(
                "OpenAI function names must match ^[a-zA-Z0-9_-]{{1,{MAX_NAME_LEN}}}$; rename the \
                 action"
            ),
        );
    }
    let (parameters, stats) = schema::rewrite(&definition.parameters, &DIALECT);
    for dropped in &stats.dropped_enum_values {
        warn(
            "enum_type_mismatch",
            format!("enum value {dropped} does not match its type, so strict mode drops it"),
        );
    }
    if stats.enum_values > MAX_ENUM_VALUES {
        warn(
            "too_many_enum_values",
            format!(
                "the parameters have {} enum values; strict mode accepts at most \
                 {MAX_ENUM_VALUES} per schema: narrow the options, or use a free string",
                stats.enum_values
            ),
        );
    }
    if stats.large_enum_chars > MAX_LARGE_ENUM_CHARS {
        warn(
            "enum_too_long",
            format!(
                "an enum of more than {LARGE_ENUM} values has {} characters; strict mode accepts \
                 at most {MAX_LARGE_ENUM_CHARS}",
                stats.large_enum_chars
            ),
        );
    }
    if stats.properties > MAX_PROPERTIES {
        warn(
            "too_many_properties",
            format!(
                "the parameters have {} properties; strict mode accepts at most {MAX_PROPERTIES}",
                stats.properties
            ),
        );
    }
    if stats.depth > MAX_DEPTH {
        warn(
            "too_deep",
            format!(
                "the parameters nest objects {} levels deep; strict mode accepts at most \
                 {MAX_DEPTH}",
                stats.depth
            ),
        );
    }
    if stats.string_chars > MAX_STRING_CHARS {
        warn(
            "schema_strings_too_long",
            format!(
                "property names and enum values add up to {} characters; strict mode accepts at \
                 most {MAX_STRING_CHARS}",
                stats.string_chars
            ),
        );
    }
    let tool = OpenAiTool {
        kind: "function",
        function: OpenAiFunction {
            name: name.clone(),
            description: definition.description.clone(),
            parameters,
            strict: true,
        },
    };
    (tool, warnings)
}
