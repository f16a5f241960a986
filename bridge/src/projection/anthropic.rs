//! Anthropic Messages API tools: `{name, description, input_schema}`, plus
//! `strict: true` in strict mode.
//!
//! Without strict mode the definition's `parameters` are sent as they are
//! (the API accepts any JSON Schema whose root is an object). In strict
//! mode (structured outputs) the schema is rewritten into the supported
//! subset: every object closed with `additionalProperties: false`; kept
//! are `type`, `description`, `enum` (primitive values only), `const`,
//! `default`, `pattern`, `minItems` of 0 or 1, the `format`s date-time,
//! time, date, duration, email, hostname, uri, ipv4, ipv6 and uuid, and the
//! subschema keywords `items`, `anyOf`, `allOf`, `$defs`; everything else
//! (`examples`, numeric and length limits, other formats) is folded into
//! the description. Optional properties stay optional.
//!
//! Limits checked, each violation a warning naming the tool: the name
//! matches `^[a-zA-Z0-9_-]{1,128}$`; in strict mode, at most 20 strict
//! tools per request, 24 optional parameters and 16 parameters with union
//! types (`anyOf` or a list of types) across all strict tools of a request.

use objectstack_spec::AIToolDefinition;
use serde::Serialize;
use serde_json::{Map, Value};

use super::schema::{self, Dialect};
use super::{Projected, ProjectionWarning, name_matches};

/// The longest tool name.
pub const MAX_NAME_LEN: usize = 128;
/// The most strict tools one request may carry.
pub const MAX_STRICT_TOOLS: usize = 20;
/// The most optional parameters across a request's strict tools.
pub const MAX_OPTIONAL_PARAMS: usize = 24;
/// The most parameters with union types across a request's strict tools.
pub const MAX_UNION_PARAMS: usize = 16;

const STRICT_DIALECT: Dialect = Dialect {
    kept: &[
        "type",
        "description",
        "title",
        "enum",
        "const",
        "default",
        "$ref",
        "pattern",
    ],
    structural: &["items", "anyOf", "allOf", "$defs", "definitions"],
    formats: &[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "uri",
        "ipv4",
        "ipv6",
        "uuid",
    ],
    all_required: false,
    max_min_items: Some(1),
    primitive_enums: true,
};

/// One Anthropic tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnthropicTool {
    /// The tool name.
    pub name: String,
    /// The LLM-facing description.
    pub description: String,
    /// The JSON Schema of the input (`type: object`).
    pub input_schema: Map<String, Value>,
    /// `Some(true)` in strict mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// Options of the Anthropic projection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Render strict tools (`strict: true`, the supported schema subset).
    pub strict: bool,
}

/// Renders definitions as Anthropic tools.
pub fn tools<'d>(
    definitions: impl IntoIterator<Item = &'d AIToolDefinition>,
    options: Options,
) -> Projected<AnthropicTool> {
    let mut out = Projected::default();
    let mut optional = 0usize;
    let mut unions = 0usize;
    let mut optional_reported = false;
    let mut unions_reported = false;
    for (i, definition) in definitions.into_iter().enumerate() {
        let name = &definition.name;
        if !name_matches(name, MAX_NAME_LEN, b"") {
            out.warnings.push(ProjectionWarning::new(
                name,
                "invalid_name",
                format!(
                    "Anthropic tool names must match ^[a-zA-Z0-9_-]{{1,{MAX_NAME_LEN}}}$; rename \
                     the action"
                ),
            ));
        }
        let mut input_schema = definition.parameters.clone();
        if options.strict {
            if i == MAX_STRICT_TOOLS {
                out.warnings.push(ProjectionWarning::new(
                    name,
                    "too_many_tools",
                    format!(
                        "this is strict tool {} of the list, and Anthropic accepts at most \
                         {MAX_STRICT_TOOLS} strict tools per request; it and the tools after it \
                         must go in another request",
                        i + 1
                    ),
                ));
            }
            let (rewritten, stats) = schema::rewrite(&definition.parameters, &STRICT_DIALECT);
            input_schema = rewritten;
            for dropped in &stats.dropped_enum_values {
                out.warnings.push(ProjectionWarning::new(
                    name,
                    "enum_type_mismatch",
                    format!(
                        "enum value {dropped} is not a primitive of the node's type, so strict \
                         mode drops it"
                    ),
                ));
            }
            optional += stats.optional;
            unions += stats.unions;
            if optional > MAX_OPTIONAL_PARAMS && !optional_reported {
                optional_reported = true;
                out.warnings.push(ProjectionWarning::new(
                    name,
                    "too_many_optional_params",
                    format!(
                        "with this tool the request's strict tools have {optional} optional \
                         parameters, and Anthropic accepts at most {MAX_OPTIONAL_PARAMS}: send \
                         fewer strict tools, or make parameters required"
                    ),
                ));
            }
            if unions > MAX_UNION_PARAMS && !unions_reported {
                unions_reported = true;
                out.warnings.push(ProjectionWarning::new(
                    name,
                    "too_many_union_params",
                    format!(
                        "with this tool the request's strict tools have {unions} parameters with \
                         union types, and Anthropic accepts at most {MAX_UNION_PARAMS}"
                    ),
                ));
            }
        } else if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            input_schema.insert("type".into(), "object".into());
        }
        out.tools.push(AnthropicTool {
            name: name.clone(),
            description: definition.description.clone(),
            input_schema,
            strict: options.strict.then_some(true),
        });
    }
    out
}
