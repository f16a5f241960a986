//! What the gateway serves: the stack files read and composed, checked,
//! materialised with the wiring the configuration implies, registered in
//! the bridge's [`ToolRegistry`], and projected as MCP tools and prompts.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use objectstack_bridge::materialise::{Event, materialise_each};
use objectstack_bridge::projection::mcp;
use objectstack_bridge::runtime::{HostServices, ToolRegistry};
use objectstack_spec::materialise::Route;
use objectstack_spec::validate::Severity;
use rmcp::model::{Prompt, Tool, ToolAnnotations};
use serde_json::{Map, Value};

use crate::GatewayError;
use crate::output::{OutputCheck, served_schema};

/// The largest stack file read by default (1 GiB), as the CLI reads them.
pub(crate) const MAX_STACK_BYTES: u64 = 1 << 30;

/// The name of the gateway's own read-only tool: how a model looks up its
/// pending actions. Skill tool names are `^[a-z_][a-z0-9_]*` and action
/// tools `action_<name>`, so a name with hyphens can never be, or be
/// mistaken for, a platform or action tool a skill names.
pub const PENDING_TOOL: &str = "gateway-pending-actions";

/// What the gateway adds to a registered tool to serve it. The tool's
/// name, label, description and parameters stay in the registry: `tools/list`
/// answers are built from both when asked, so a served stack holds no copy
/// of every MCP tool between listings.
#[derive(Debug, Clone)]
pub(crate) struct Served {
    /// Whether a call needs a person's confirmation.
    pub(crate) needs_confirmation: bool,
    annotations: Option<mcp::McpAnnotations>,
    /// The title, when it is not the registry's label (the action's own
    /// label: a materialised definition has none).
    title: Option<Box<str>>,
    /// What few tools have, boxed: a served stack's tools are many, and
    /// these cost most of them nothing.
    rare: Option<Box<Rare>>,
}

/// The parts of a [`Served`] most tools do not have.
#[derive(Debug, Clone)]
struct Rare {
    /// The tool's `outputSchema`, when it has one: results then carry a
    /// `structuredContent` it accepts.
    output: Option<Arc<OutputCheck>>,
    /// The `inputSchema`, when it is not the registry's shared copy of the
    /// parameters (which it is whenever they say `type: object`).
    input_schema: Option<Arc<Map<String, Value>>>,
}

impl Served {
    /// The check of the tool's `outputSchema`, when it has one.
    pub(crate) fn output(&self) -> Option<&OutputCheck> {
        self.rare.as_ref()?.output.as_deref()
    }

    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    fn input_schema(&self) -> Option<&Arc<Map<String, Value>>> {
        self.rare.as_ref()?.input_schema.as_ref()
    }
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
    /// One for each registered tool, in registration order, which is the
    /// `tools/list` order.
    served: Vec<Served>,
    /// Whether the gateway's own lookup tool is served (listed last).
    pending_tool: bool,
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
            .field("tools", &self.tool_count())
            .field("prompts", &self.prompts.len())
            .finish()
    }
}

impl Catalog {
    /// How the action tool `name` is served, when it is.
    pub(crate) fn served(&self, name: &str) -> Option<&Served> {
        self.registry
            .position(name)
            .and_then(|i| self.served.get(i))
    }

    /// Whether `name` is served: an action tool, or the gateway's own
    /// lookup tool when it is listed.
    pub(crate) fn serves(&self, name: &str) -> bool {
        self.served(name).is_some() || self.serves_pending(name)
    }

    /// Whether `name` is the gateway's own lookup tool and it is listed.
    pub(crate) fn serves_pending(&self, name: &str) -> bool {
        self.pending_tool && name == PENDING_TOOL
    }

    /// How many tools `tools/list` lists.
    pub(crate) fn tool_count(&self) -> usize {
        self.served.len() + usize::from(self.pending_tool)
    }

    /// The names `tools/list` lists, in its order.
    pub(crate) fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.registry.listed().map(|t| t.name.to_owned()).collect();
        if self.pending_tool {
            names.push(PENDING_TOOL.to_owned());
        }
        names
    }

    /// The title an action tool is listed with.
    pub(crate) fn title(&self, name: &str) -> Option<String> {
        let served = self.served(name)?;
        let listed = self.registry.listed_tool(name)?;
        served.title().or(listed.label).map(str::to_owned)
    }

    /// The `tools/list` answer, built from the registry and what the
    /// gateway adds: the schemas are shared, the text is copied. (The
    /// transports write the same tools one at a time: see `listing`.)
    #[cfg(test)]
    pub(crate) fn tools(&self) -> Vec<Tool> {
        (0..self.tool_count())
            .filter_map(|i| self.tool(i))
            .collect()
    }

    /// The tool at position `i` of the `tools/list` answer: an action
    /// tool from the registry and what the gateway adds, or last, the
    /// gateway's lookup tool.
    pub(crate) fn tool(&self, i: usize) -> Option<Tool> {
        let (Some(listed), Some(served)) = (self.registry.listed_at(i), self.served.get(i)) else {
            return (self.pending_tool && i == self.served.len()).then(pending_tool);
        };
        let input = served.input_schema().unwrap_or(listed.parameters).clone();
        let mut tool = Tool::new(listed.name.to_owned(), listed.description.to_owned(), input);
        if let Some(title) = served.title().or(listed.label) {
            tool = tool.with_title(title);
        }
        if let Some(output) = served.output() {
            tool = tool.with_raw_output_schema(output.schema().clone());
        }
        if let Some(a) = served.annotations {
            tool = tool.with_annotations(
                ToolAnnotations::new()
                    .read_only(a.read_only_hint)
                    .destructive(a.destructive_hint)
                    .open_world(a.open_world_hint),
            );
        }
        Some(tool)
    }
}

/// The stack as read: one file's text, parsed when the catalog is built,
/// or several files composed (composition works on owned values).
pub(crate) enum Stack {
    /// One file: its bytes, checked to be UTF-8 when parsed.
    One {
        /// The file, for errors.
        path: PathBuf,
        /// Its bytes, until it is parsed (the tree does not borrow them).
        bytes: Vec<u8>,
    },
    /// Several files composed into one stack.
    Composed(Map<String, Value>),
}

impl Stack {
    /// The stack as the borrowed tree every check and the materialiser
    /// read, allocated in `arena`. One file is parsed straight into it, so
    /// the gateway never holds the stack as `serde_json` maps, and its
    /// bytes are freed once it is parsed: the tree keeps its own copy of
    /// the strings (a key or short value seen recently is shared), so the text is not
    /// held beside the tree and every tool while the tools are built.
    fn document<'a>(
        &'a mut self,
        arena: &'a objectstack_spec::json::Arena,
    ) -> Result<&'a objectstack_spec::json::Map<'a>, GatewayError> {
        match self {
            Stack::One { path, bytes } => {
                let bytes = std::mem::take(bytes);
                objectstack_spec::json::parse_document_detached(&bytes, arena).map_err(|e| {
                    GatewayError::Read {
                        path: path.clone(),
                        why: e.to_string(),
                    }
                })
            }
            Stack::Composed(map) => Ok(objectstack_spec::json::Map::from_serde(map, arena)),
        }
    }
}

/// Reads the stack files and composes them (one file is used as it is).
/// Each file is read up to `limit` bytes ([`crate::Config::max_stack_bytes`]).
pub(crate) fn read_stack(paths: &[PathBuf], limit: u64) -> Result<Stack, GatewayError> {
    match paths {
        [] => Err(GatewayError::NoStack),
        [path] => Ok(Stack::One {
            path: path.clone(),
            bytes: read_bytes(path, limit)?,
        }),
        _ => compose(paths, limit),
    }
}

fn compose(paths: &[PathBuf], limit: u64) -> Result<Stack, GatewayError> {
    let mut stacks = Vec::with_capacity(paths.len());
    for path in paths {
        let bytes = read_bytes(path, limit)?;
        let stack =
            objectstack_spec::parse::parse_document(&bytes).map_err(|e| GatewayError::Read {
                path: path.clone(),
                why: e.to_string(),
            })?;
        stacks.push(stack);
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
    Ok(Stack::Composed(composition.stack))
}

/// A stack file's bytes, refused past `limit` of them. The limit counts
/// the bytes read, not the file's metadata: a pipe, process substitution
/// or `/dev/zero` reports no length and would be read without end.
fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, GatewayError> {
    let unreadable = |why: String| GatewayError::Read {
        path: path.to_owned(),
        why,
    };
    let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let meta = file.metadata().map_err(|e| unreadable(e.to_string()))?;
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
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// The schema errors of a stack, each as `path: message (fix)`.
fn errors(document: &objectstack_spec::json::Map<'_>) -> Vec<String> {
    objectstack_spec::validate::validate(document)
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
///
/// Each action is registered as it is materialised, moved into the
/// registry, so the stack's tree and one copy of each tool are all that is
/// ever held at once.
pub(crate) fn build(
    stack: &mut Stack,
    services: HostServices,
    agent: Option<&str>,
) -> Result<Catalog, GatewayError> {
    let arena = objectstack_spec::json::Arena::new();
    let checked = check(stack, &arena, agent)?;
    Ok(build_checked(checked, &arena, services))
}

/// A stack that may be served: parsed, free of schema errors, and (with
/// an agent) scoped to what that agent may invoke.
pub(crate) struct Checked<'a> {
    document: &'a objectstack_spec::json::Map<'a>,
    allowed: Option<Scope>,
}

/// Parses `stack` into `arena` and refuses it when it has schema errors
/// or `agent` names no agent: everything that refuses a stack, before
/// anything is opened or built for it.
pub(crate) fn check<'a>(
    stack: &'a mut Stack,
    arena: &'a objectstack_spec::json::Arena,
    agent: Option<&str>,
) -> Result<Checked<'a>, GatewayError> {
    let document = stack.document(arena)?;
    let diagnostics = errors(document);
    if !diagnostics.is_empty() {
        return Err(GatewayError::InvalidStack { diagnostics });
    }
    let allowed = match agent {
        Some(name) => Some(agent_scope(document, arena, name)?),
        None => None,
    };
    Ok(Checked { document, allowed })
}

/// [`build`] of a stack [`check`] accepted.
pub(crate) fn build_checked(
    checked: Checked<'_>,
    arena: &objectstack_spec::json::Arena,
    services: HostServices,
) -> Catalog {
    let Checked { document, allowed } = checked;
    // The wiring the registry will report, read from a copy of the
    // services (handles only) so the registry stays free to take each tool
    // as it comes.
    let wired = services.clone();
    let wiring = wired.wiring();
    let mut registry = ToolRegistry::new(services);
    // Notes in the order they were always logged: skips, warnings, what
    // the gateway leaves out, refusals, then projection warnings.
    let mut skipped_notes = Vec::new();
    let mut warning_notes = Vec::new();
    let mut left_out = Vec::new();
    let mut refused = Vec::new();
    let mut projection_notes = Vec::new();
    let mut served = Vec::new();
    let mut probe_object = None;
    let hint = action_count(document);
    registry.reserve(hint);
    served.reserve_exact(hint);
    materialise_each(document, arena, Some(&wiring), &|_| false, &mut |event| {
        let registration = match event {
            Event::Skipped(skipped) => {
                // Where the action is written: for a name collision, the
                // copy that is not served while its namesake is.
                skipped_notes.push(format!(
                    "{} not served from {} [{}]: {}",
                    skipped.tool.as_deref().unwrap_or(&skipped.action),
                    skipped.location,
                    skipped.code,
                    skipped.reason
                ));
                return;
            }
            Event::Warning(warning) => {
                warning_notes.push(format!("{}: {}", warning.action, warning.warning));
                return;
            }
            Event::Registered(registration) => registration,
        };
        let name = registration.definition.name();
        if let Some(allowed) = &allowed
            && !allowed.tools.contains(name)
        {
            return;
        }
        if registration.object.is_none() && registration.route != Route::Api {
            left_out.push(format!(
                "{name} not served: the action belongs to no object, and ObjectStack runs actions at /api/v1/actions/{{object}}/{{action}}"
            ));
            return;
        }
        let registered = registration.to_registered();
        let (entry, warnings) = mcp::registered_tool(&registered);
        projection_notes.extend(
            warnings
                .into_iter()
                .map(|w| format!("{}: {}", w.tool, w.warning)),
        );
        let needs_confirmation = registered.confirmation.is_some();
        let object = registered.object.clone();
        let title = (entry.title != registered.definition.label)
            .then_some(entry.title)
            .flatten()
            .map(String::into_boxed_str);
        if let Err(e) = registry.register_materialised_tool(registered) {
            refused.push(format!("not served: {e}"));
            return;
        }
        if probe_object.is_none() {
            probe_object = object;
        }
        // The registry's copy of the schema is the one served: `inputSchema`
        // is the parameters as they are whenever they say `type: object`.
        let shares = registry
            .parameters(&entry.name)
            .is_some_and(|p| Map::eq(p, &entry.input_schema));
        let rare = Rare {
            output: entry.output_schema.map(|schema| {
                Arc::new(OutputCheck::new(Arc::new(served_schema(
                    schema,
                    needs_confirmation,
                ))))
            }),
            input_schema: (!shares).then(|| Arc::new(entry.input_schema)),
        };
        let is_rare = rare.output.is_some() || rare.input_schema.is_some();
        served.push(Served {
            needs_confirmation,
            annotations: entry.annotations,
            title,
            rare: is_rare.then(|| Box::new(rare)),
        });
    });
    registry.shrink_to_fit();
    served.shrink_to_fit();
    let pending_tool = served.iter().any(|s| s.needs_confirmation);
    let prompts = skill_prompts(document, arena, allowed.as_ref().map(|a| &a.skills));
    let mut notes = skipped_notes;
    notes.extend(warning_notes);
    notes.extend(left_out);
    notes.extend(refused);
    notes.extend(projection_notes);
    Catalog {
        registry,
        served,
        pending_tool,
        prompts,
        notes,
        probe_object,
    }
}

/// How many tools a stack may register at most (its actions and its tool
/// records): the room reserved, so that the registry never copies itself
/// as it grows while a large stack is registered.
fn action_count(document: &objectstack_spec::json::Map<'_>) -> usize {
    use objectstack_spec::json::Value;
    fn len(value: Option<&Value<'_>>) -> usize {
        match value {
            Some(Value::Array(items)) => items.len(),
            Some(Value::Object(map)) => map.len(),
            _ => 0,
        }
    }
    let actions = |object: &Value<'_>| len(object.get("actions"));
    let in_objects: usize = match document.get("objects") {
        Some(Value::Array(items)) => items.iter().map(actions).sum(),
        Some(Value::Object(map)) => map.values().map(actions).sum(),
        _ => 0,
    };
    in_objects
        .saturating_add(len(document.get("actions")))
        .saturating_add(len(document.get("tools")))
}

/// What one agent may use: its skills' tools (wildcards expanded as the
/// `capabilities` view expands them) and its skills.
struct Scope {
    tools: HashSet<String>,
    skills: HashSet<String>,
}

fn agent_scope(
    document: &objectstack_spec::json::Map<'_>,
    arena: &objectstack_spec::json::Arena,
    name: &str,
) -> Result<Scope, GatewayError> {
    let caps = objectstack_lint::capabilities::build(document, arena);
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
fn skill_prompts(
    document: &objectstack_spec::json::Map<'_>,
    arena: &objectstack_spec::json::Arena,
    only: Option<&HashSet<String>>,
) -> Vec<SkillPrompt> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for record in objectstack_spec::collection::records(document.get("skills"), arena) {
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
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// The catalog of `stack` with a data engine (never called) and a queue.
    pub(crate) fn catalog_of(stack: &Value) -> Catalog {
        let Value::Object(map) = stack else {
            panic!("a stack is an object");
        };
        let backend = crate::backend::ObjectStackBackend::new(
            "http://127.0.0.1:9",
            std::time::Duration::from_secs(1),
        )
        .map(Arc::new)
        .ok();
        let services = HostServices {
            approvals: Some(Arc::new(objectstack_bridge::approval::ApprovalQueue::new(
                Arc::new(objectstack_bridge::approval::MemoryStore::new()),
            ))),
            data_engine: backend.map(|b| b as Arc<dyn objectstack_bridge::runtime::DataEngine>),
            ..HostServices::default()
        };
        build(&mut Stack::Composed(map.clone()), services, None).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn tools_are_listed_from_the_registry_as_the_projection_renders_them() {
        let catalog = catalog_of(&json!({
            "objects": [{"name": "ticket", "actions": [
                {"name": "close_ticket", "label": "Close ticket", "type": "script",
                 "target": "closeTicket", "params": [{"name": "note"}],
                 "ai": {"exposed": true, "description": "Close a ticket the user names, with an optional note.",
                        "outputSchema": {"properties": {"closed": {"type": "boolean"}}}}},
                {"name": "delete_ticket", "label": "Delete ticket", "type": "script",
                 "target": "deleteTicket", "mode": "delete",
                 "ai": {"exposed": true, "description": "Delete a ticket for good, with its whole history."}},
                {"name": "note_ticket", "label": "Note ticket", "type": "script",
                 "target": "noteTicket", "params": [{"name": "note"}],
                 "ai": {"exposed": true, "description": "Add a note to a ticket the user names, as written."}}
            ]}],
            "tools": [{"name": "close_quick", "label": "Quick note",
                       "description": "Note on a ticket that it was handled quickly.",
                       "binding": {"type": "action", "name": "note_ticket"},
                       "parameters": {"properties": {"note": {"const": "quick"}}}}]
        }));
        let listed: Vec<Value> = catalog
            .tools()
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or_default())
            .collect();
        let names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(
            names,
            [
                "action_close_ticket",
                "action_delete_ticket",
                "close_quick",
                PENDING_TOOL
            ]
        );
        assert_eq!(catalog.tool_names(), names);
        assert_eq!(catalog.tool_count(), 4);
        let close = &listed[0];
        assert_eq!(close["title"], "Close ticket");
        assert_eq!(
            close["description"],
            "Close a ticket the user names, with an optional note.\n\nReturns an object with: closed."
        );
        assert_eq!(close["inputSchema"]["type"], "object");
        assert!(
            close["inputSchema"]["properties"]["note"].is_object(),
            "{close}"
        );
        assert_eq!(
            close["outputSchema"],
            json!({"type": "object", "properties": {"closed": {"type": "boolean"}}})
        );
        assert_eq!(
            close["annotations"],
            json!({"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false})
        );
        let delete = &listed[1];
        assert_eq!(delete["annotations"]["destructiveHint"], true);
        assert!(
            catalog
                .served("action_delete_ticket")
                .is_some_and(|s| s.needs_confirmation)
        );
        assert_eq!(listed[2]["title"], "Quick note");
        assert_eq!(catalog.title("close_quick").as_deref(), Some("Quick note"));
        // Parameters without `type: object` are listed with it.
        assert_eq!(listed[2]["inputSchema"]["type"], "object", "{}", listed[2]);
        // The schema listed is the registry's own copy, not another.
        let tools = catalog.tools();
        let shared = catalog.registry.parameters("action_close_ticket");
        assert!(shared.is_some_and(|p| Arc::ptr_eq(p, &tools[0].input_schema)));
        assert!(catalog.serves(PENDING_TOOL));
        assert!(!catalog.serves("action_nope"));
    }

    #[test]
    fn a_skip_note_says_which_copy_is_not_served() {
        let action = |label: &str| {
            json!({"name": "close", "label": label, "type": "script", "target": "close",
                "ai": {"exposed": true, "description": "Closes the ticket once the customer confirms it is solved."}})
        };
        let mut stack_copy = action("Close it");
        stack_copy["objectName"] = json!("ticket");
        let catalog = catalog_of(&json!({
            "objects": [{"name": "ticket", "actions": [action("Close")]}],
            "actions": [stack_copy]
        }));
        assert!(catalog.serves("action_close"));
        assert!(
            catalog
                .notes
                .iter()
                .any(|n| n.starts_with("close not served from actions[0] [name_collision]: ")),
            "{:?}",
            catalog.notes
        );
    }

    #[test]
    fn diagnostics_quote_stack_names_on_one_line_and_escaped() {
        let stack: Map<String, Value> = serde_json::from_str(
            r#"{"objects": [{"name": "o", "actions": [{"name": "a\u001b]0;x\u0007\nFORGED",
                "type": "script", "target": "t"}]}]}"#,
        )
        .unwrap_or_default();
        let arena = objectstack_spec::json::Arena::new();
        let found = errors(objectstack_spec::json::Map::from_serde(&stack, &arena));
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
