//! What the gateway serves: the stack files read and composed, checked,
//! materialised with the wiring the configuration implies, registered in
//! the bridge's [`ToolRegistry`], and projected as MCP tools and prompts.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use objectstack_bridge::materialise::{Materialised, Wiring, materialise};
use objectstack_bridge::projection::mcp;
use objectstack_bridge::runtime::{HostServices, ToolRegistry};
use objectstack_spec::materialise::Route;
use objectstack_spec::validate::Severity;
use rmcp::model::{Prompt, Tool, ToolAnnotations};
use serde_json::{Map, Value};

use crate::GatewayError;

/// The largest stack file read by default (1 GiB), as the CLI reads them.
pub(crate) const MAX_STACK_BYTES: u64 = 1 << 30;

/// The name of the gateway's own read-only tool: how a model looks up its
/// pending actions. Skill tool names are `^[a-z_][a-z0-9_]*` and action
/// tools `action_<name>`, so a name with hyphens can never be, or be
/// mistaken for, a platform or action tool a skill names.
pub const PENDING_TOOL: &str = "gateway-pending-actions";

/// One tool as served.
#[derive(Debug, Clone)]
pub(crate) struct Served {
    /// Whether a call needs a person's confirmation.
    pub(crate) needs_confirmation: bool,
    /// Whether results carry `structuredContent` (the tool has an
    /// `outputSchema`).
    pub(crate) structured: bool,
}

/// A skill served as an MCP prompt.
#[derive(Debug, Clone)]
pub(crate) struct SkillPrompt {
    pub(crate) prompt: Prompt,
    pub(crate) instructions: String,
}

/// Everything one version of the stack serves.
pub(crate) struct Catalog {
    pub(crate) registry: ToolRegistry,
    /// The tools in `tools/list` order, the gateway's own last.
    pub(crate) tools: Vec<Tool>,
    pub(crate) served: std::collections::HashMap<String, Served>,
    pub(crate) prompts: Vec<SkillPrompt>,
    /// What was not served, and why (logged at start and on reload).
    pub(crate) notes: Vec<String>,
    /// The object a caller's key is verified against: that of the first
    /// tool served on one (see `verify`).
    pub(crate) probe_object: Option<String>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("tools", &self.tools.len())
            .field("prompts", &self.prompts.len())
            .finish()
    }
}

/// Reads the stack files and composes them (one file is used as it is).
/// Each file is read up to `limit` bytes ([`crate::Config::max_stack_bytes`]).
pub(crate) fn read_stack(
    paths: &[PathBuf],
    limit: u64,
) -> Result<Map<String, Value>, GatewayError> {
    let mut stacks = Vec::with_capacity(paths.len());
    for path in paths {
        stacks.push(read_one(path, limit)?);
    }
    if stacks.len() == 1 {
        return stacks.pop().ok_or(GatewayError::NoStack);
    }
    if stacks.is_empty() {
        return Err(GatewayError::NoStack);
    }
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let sources: Vec<objectstack_spec::compose::Source<'_>> = names
        .iter()
        .zip(&stacks)
        .map(|(name, stack)| objectstack_spec::compose::Source { name, stack })
        .collect();
    let composition = objectstack_spec::compose::compose(&sources);
    let errors: Vec<String> = composition
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| shown(&d.to_string()))
        .collect();
    if !errors.is_empty() {
        return Err(GatewayError::InvalidStack {
            diagnostics: errors,
        });
    }
    Ok(composition.stack)
}

/// Reads one stack file, refusing it past `limit` bytes. The limit counts
/// the bytes read, not the file's metadata: a pipe, process substitution
/// or `/dev/zero` reports no length and would be read without end.
fn read_one(path: &Path, limit: u64) -> Result<Map<String, Value>, GatewayError> {
    let unreadable = |why: String| GatewayError::Read {
        path: path.to_owned(),
        why,
    };
    let meta = std::fs::metadata(path).map_err(|e| unreadable(e.to_string()))?;
    if meta.is_dir() {
        return Err(unreadable("it is a directory, not a stack file".into()));
    }
    let too_big = || {
        unreadable(format!(
            "it is more than {limit} bytes, the largest stack read: check that it is the file \
             you meant"
        ))
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        return Err(too_big());
    }
    objectstack_spec::parse::parse_document(&bytes).map_err(|e| unreadable(e.to_string()))
}

/// The schema errors of a stack, each as `path: message (fix)`.
pub(crate) fn errors(stack: &Map<String, Value>) -> Vec<String> {
    let arena = objectstack_spec::json::Arena::new();
    objectstack_spec::validate::validate(objectstack_spec::json::Map::from_serde(stack, &arena))
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| shown(&d.to_string()))
        .collect()
}

/// A diagnostic as it is printed and logged: on one line, with nothing a
/// terminal would act on (it quotes names from the stack).
fn shown(diagnostic: &str) -> String {
    objectstack_spec::text::line_safe(diagnostic).into_owned()
}

/// Builds the catalog of `stack` for `services` (and, with `agent`, only
/// what that agent may invoke).
pub(crate) fn build(
    stack: &Map<String, Value>,
    services: HostServices,
    agent: Option<&str>,
) -> Result<Catalog, GatewayError> {
    let diagnostics = errors(stack);
    if !diagnostics.is_empty() {
        return Err(GatewayError::InvalidStack { diagnostics });
    }
    let allowed = match agent {
        Some(name) => Some(agent_scope(stack, name)?),
        None => None,
    };
    let mut registry = ToolRegistry::new(services);
    let wiring = Wiring {
        approval: registry.services().approvals.is_some(),
        ..registry.wiring()
    };
    let arena = objectstack_spec::json::Arena::new();
    let document = objectstack_spec::json::Map::from_serde(stack, &arena);
    let materialised = materialise(document, &arena, Some(&wiring), &|_| false);
    let mut notes = Vec::new();
    for skipped in &materialised.skipped {
        notes.push(format!(
            "{} not served [{}]: {}",
            skipped.tool.as_deref().unwrap_or(&skipped.action),
            skipped.code,
            skipped.reason
        ));
    }
    for warning in &materialised.warnings {
        notes.push(format!("{}: {}", warning.action, warning.warning));
    }
    let mut kept = Materialised {
        registered: Vec::new(),
        skipped: Vec::new(),
        warnings: Vec::new(),
    };
    for r in materialised.registered {
        let name = &r.definition.name;
        if let Some(allowed) = &allowed
            && !allowed.tools.contains(name)
        {
            continue;
        }
        if r.object.is_none() && r.route != Route::Api {
            notes.push(format!(
                "{name} not served: the action belongs to no object, and ObjectStack runs actions at /api/v1/actions/{{object}}/{{action}}"
            ));
            continue;
        }
        kept.registered.push(r);
    }
    for refused in registry.register_materialised(&kept) {
        notes.push(format!("not served: {refused}"));
    }
    let projected = mcp::tools(&kept.registered);
    let mut served = std::collections::HashMap::new();
    let mut tools = Vec::with_capacity(projected.tools.len() + 1);
    for warning in projected.warnings {
        notes.push(format!("{}: {}", warning.tool, warning.warning));
    }
    for (entry, r) in projected.tools.into_iter().zip(&kept.registered) {
        if !registry.contains(&entry.name) {
            continue;
        }
        let tool = to_rmcp(entry);
        served.insert(
            tool.name.to_string(),
            Served {
                structured: tool.output_schema.is_some(),
                needs_confirmation: r.confirmation.is_some(),
            },
        );
        tools.push(tool);
    }
    if served.values().any(|s| s.needs_confirmation) {
        tools.push(pending_tool());
    }
    let prompts = skill_prompts(stack, allowed.as_ref().map(|a| &a.skills));
    let probe_object = kept.registered.iter().find_map(|r| r.object.clone());
    Ok(Catalog {
        registry,
        tools,
        served,
        prompts,
        notes,
        probe_object,
    })
}

/// What one agent may use: its skills' tools (wildcards expanded as the
/// `capabilities` view expands them) and its skills.
struct Scope {
    tools: HashSet<String>,
    skills: HashSet<String>,
}

fn agent_scope(stack: &Map<String, Value>, name: &str) -> Result<Scope, GatewayError> {
    let arena = objectstack_spec::json::Arena::new();
    let document = objectstack_spec::json::Map::from_serde(stack, &arena);
    let caps = objectstack_lint::capabilities::build(document, &arena);
    let Some(agent) = caps.agent(name) else {
        return Err(GatewayError::UnknownAgent {
            name: name.to_owned(),
            known: caps.agents.iter().map(|a| a.name.to_string()).collect(),
        });
    };
    let tools = caps
        .grants(&agent.skills)
        .expanded()
        .filter_map(|t| caps.tools.get(t.tool).map(|t| t.name.to_string()))
        .collect();
    let skills = agent
        .skills
        .iter()
        .filter(|s| s.status.grants_tools())
        .filter_map(|s| s.skill.and_then(|i| caps.skills.get(i)))
        .map(|s| s.name.to_string())
        .collect();
    Ok(Scope { tools, skills })
}

/// Active skills with instructions, as prompts (only `only`'s, when given).
fn skill_prompts(stack: &Map<String, Value>, only: Option<&HashSet<String>>) -> Vec<SkillPrompt> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let arena = objectstack_spec::json::Arena::new();
    let skills = stack
        .get("skills")
        .map(|s| objectstack_spec::json::Value::from_serde(s, &arena));
    for record in objectstack_spec::collection::records(skills.as_ref(), &arena) {
        let Some(name) = record.name() else { continue };
        let Some(instructions) = record.str("instructions").filter(|i| !i.trim().is_empty()) else {
            continue;
        };
        if record
            .get("active")
            .and_then(objectstack_spec::json::Value::as_bool)
            == Some(false)
            || only.is_some_and(|only| !only.contains(name))
            || !seen.insert(name.to_owned())
        {
            continue;
        }
        let mut prompt = Prompt::new(name, record.str("description"), None);
        if let Some(label) = record.str("label") {
            prompt = prompt.with_title(label);
        }
        out.push(SkillPrompt {
            prompt,
            instructions: instructions.to_owned(),
        });
    }
    out
}

fn to_rmcp(entry: mcp::McpTool) -> Tool {
    let mut tool = Tool::new(entry.name, entry.description, Arc::new(entry.input_schema));
    if let Some(title) = entry.title {
        tool = tool.with_title(title);
    }
    if let Some(schema) = entry.output_schema {
        tool = tool.with_raw_output_schema(Arc::new(schema));
    }
    if let Some(a) = entry.annotations {
        tool = tool.with_annotations(
            ToolAnnotations::new()
                .read_only(a.read_only_hint)
                .destructive(a.destructive_hint)
                .open_world(a.open_world_hint),
        );
    }
    tool
}

/// The gateway's own tool: a model's pending actions and their outcome.
fn pending_tool() -> Tool {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "pendingActionId": {
                "type": "string",
                "description": "The id a call returned with `status: pending_approval` (`pa_…`). Leave it out to list your recent pending actions."
            }
        },
        "additionalProperties": false
    });
    let schema = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    Tool::new(
        PENDING_TOOL,
        "Look up actions you proposed that wait for (or got) a person's approval: their state \
         (pending, approved, rejected, executed, failed, ...) and, once run, their result or \
         error. Read-only: it never runs or retries anything. Only your own proposals are shown.",
        Arc::new(schema),
    )
    .with_title("Pending actions")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_quote_stack_names_on_one_line_and_escaped() {
        let stack: Map<String, Value> = serde_json::from_str(
            r#"{"objects": [{"name": "o", "actions": [{"name": "a\u001b]0;x\u0007\nFORGED",
                "type": "script", "target": "t"}]}]}"#,
        )
        .unwrap_or_default();
        let found = errors(&stack);
        assert!(!found.is_empty());
        for d in &found {
            assert!(!d.contains(['\u{1b}', '\u{7}', '\n']), "{d:?}");
        }
        assert!(
            found
                .iter()
                .any(|d| d.contains("a\\u001b]0;x\\u0007\\u000aFORGED")),
            "{found:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_never_ending_stack_is_refused_at_the_limit() {
        // `/dev/zero` has no length: the limit counts what is read.
        let err = read_stack(&[PathBuf::from("/dev/zero")], 4096)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert_eq!(
            err,
            "/dev/zero: it is more than 4096 bytes, the largest stack read: check that it is \
             the file you meant"
        );
    }

    #[test]
    fn a_stack_at_the_limit_is_read() {
        let dir = std::env::temp_dir().join(format!("objectstack-gw-limit-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("at-limit.json");
        let mut text = br#"{"objects": []}"#.to_vec();
        text.resize(4096, b' ');
        let _ = std::fs::write(&path, &text);
        assert!(read_stack(std::slice::from_ref(&path), 4096).is_ok());
        assert!(read_stack(std::slice::from_ref(&path), 4095).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
