//! Entries of an MCP `tools/list` result (Model Context Protocol,
//! revision 2025-06-18 and later).
//!
//! Each entry has `name`, `title` (the action's label), `description`,
//! `inputSchema` (the definition's `parameters`, an object schema),
//! `outputSchema` when the action declares one, and `annotations` derived
//! from the action itself rather than from a list of names:
//! - `destructiveHint`: the action needs confirmation (the same rule that
//!   sets `requiresConfirmation`);
//! - `readOnlyHint`: only for the `data`, `analytics` and `vector_search`
//!   categories, when the action carries no destructive signal, needs no
//!   confirmation and is not a declarative field write;
//! - `openWorldHint`: the action calls an external API (`type: api`).
//!
//! All three are always written, because MCP's defaults for absent hints
//! are the pessimistic ones (`destructiveHint` and `openWorldHint` default
//! to true).
//!
//! Checked: the tool name is 1 to 128 characters of `A-Z a-z 0-9 _ - .`;
//! an `outputSchema` must describe an object (an object schema without a
//! `type` gets `type: "object"`; any other is left out, with a warning).

use objectstack_spec::AIToolDefinition;
use objectstack_spec::materialise::Route;
use serde::Serialize;
use serde_json::{Map, Value};

use super::{Projected, ProjectionWarning, name_matches};
use crate::materialise::Registered;

/// The longest tool name MCP clients are asked to accept.
pub const MAX_NAME_LEN: usize = 128;

/// Tool categories whose actions only read.
const READ_ONLY_CATEGORIES: &[&str] = &["data", "analytics", "vector_search"];

/// One entry of `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    /// The tool name.
    pub name: String,
    /// A human title (the action's label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The LLM-facing description.
    pub description: String,
    /// The JSON Schema of the arguments (`type: object`).
    pub input_schema: Map<String, Value>,
    /// The JSON Schema of the structured result (`type: object`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// Behaviour hints for clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<McpAnnotations>,
}

/// MCP tool annotations, derived from the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpAnnotations {
    /// The tool does not modify its environment.
    pub read_only_hint: bool,
    /// The tool may perform destructive updates.
    pub destructive_hint: bool,
    /// The tool interacts with an open world of external entities.
    pub open_world_hint: bool,
}

/// The annotations of a registered action (see the module docs).
pub fn annotations(registered: &Registered<'_>) -> McpAnnotations {
    let destructive = registered.confirmation.is_some();
    let read_only_category = registered
        .definition
        .category
        .as_deref()
        .is_some_and(|c| READ_ONLY_CATEGORIES.contains(&c));
    McpAnnotations {
        read_only_hint: read_only_category
            && registered.destructive.is_none()
            && !destructive
            && registered.route != Route::FieldWrite,
        destructive_hint: destructive,
        open_world_hint: registered.route == Route::Api,
    }
}

/// Renders registered actions as `tools/list` entries.
pub fn tools(registered: &[Registered<'_>]) -> Projected<McpTool> {
    let mut out = Projected::default();
    for r in registered {
        let (tool, warnings) = registered_tool(r);
        out.tools.push(tool);
        out.warnings.extend(warnings);
    }
    out
}

/// One registered action as a `tools/list` entry, as [`tools`] renders
/// each: [`tool`] with the action's [`annotations`], titled by the
/// action's own label when the definition has none.
pub fn registered_tool(registered: &Registered<'_>) -> (McpTool, Vec<ProjectionWarning>) {
    let (mut tool, warnings) = tool(&registered.definition, Some(annotations(registered)));
    if tool.title.is_none() {
        // The upstream definition carries no label; the title is the
        // action's own label.
        tool.title = registered
            .action
            .get("label")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
    (tool, warnings)
}

/// Renders one definition as a `tools/list` entry.
pub fn tool(
    definition: &AIToolDefinition,
    annotations: Option<McpAnnotations>,
) -> (McpTool, Vec<ProjectionWarning>) {
    let mut warnings = Vec::new();
    let name = &definition.name;
    if !name_matches(name, MAX_NAME_LEN, b".") {
        warnings.push(ProjectionWarning::new(
            name,
            "invalid_name",
            format!(
                "MCP tool names are 1 to {MAX_NAME_LEN} characters of letters, digits, `_`, `-` \
                 and `.`; rename the action so clients accept it"
            ),
        ));
    }
    let mut input_schema = definition.parameters.clone();
    if input_schema.get("type").and_then(Value::as_str) != Some("object") {
        input_schema.insert("type".into(), "object".into());
    }
    let output_schema =
        definition
            .output_schema
            .as_ref()
            .and_then(|schema| match schema.get("type") {
                Some(Value::String(t)) if t == "object" => Some(schema.clone()),
                None => {
                    let mut with_type = Map::with_capacity(schema.len() + 1);
                    with_type.insert("type".into(), "object".into());
                    with_type.extend(schema.iter().map(|(k, v)| (k.clone(), v.clone())));
                    Some(with_type)
                }
                Some(other) => {
                    warnings.push(ProjectionWarning::new(
                        name,
                        "output_schema_not_object",
                        format!(
                            "`ai.outputSchema` has `type: {other}`, but an MCP outputSchema must \
                         describe an object, so it is left out; wrap the result in an object"
                        ),
                    ));
                    None
                }
            });
    let tool = McpTool {
        name: name.clone(),
        title: definition.label.clone(),
        description: definition.description.clone(),
        input_schema,
        output_schema,
        annotations,
    };
    (tool, warnings)
}
