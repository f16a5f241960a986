//! Calling tools safely: a registry of tool definitions and their handlers,
//! argument validation, and dispatch of materialised actions to the host.
//!
//! The flow of one call ([`ToolRegistry::call`]):
//!
//! 1. the tool is looked up by name (an unknown name is an error to the
//!    model);
//! 2. the arguments are checked against size and nesting limits, then
//!    validated against the tool's `parameters` schema with a validator
//!    compiled once at registration; every violation is listed with its
//!    path and nothing runs;
//! 3. the actor is resolved: the caller's identity, else the configured
//!    principal, else the synthetic `ai_agent` ("AI Assistant");
//! 4. the handler runs. For a materialised action (see [`ToolRegistry::register_action`])
//!    that means: `recordId` is required for a row-context action or a
//!    field write (as its schema says) and is removed from the params; the record is loaded first through the
//!    host's [`DataEngine`] under the actor ("not found" is an error, never
//!    a leak); an action that needs confirmation is queued in the
//!    [`ApprovalQueue`] instead of running;
//!    otherwise it is dispatched by its route (script and field write to
//!    the data engine, flow to the [`AutomationService`], api to the
//!    [`ApiClient`]) and the result is wrapped in upstream's envelope
//!    `{ok, action, objectName, recordId?, message?, result?, error?}`.
//!
//! Approved actions run through the same dispatcher, bypassing the queue:
//! [`ToolRegistry::execute_approved`], in the host process that registers
//! the tools. Before dispatching one, it checks that the tool registered
//! now is the one that was approved (its executable digest) and that the
//! stored input still validates against the tool's current schema.
//!
//! The host traits are `async` (via `async-trait`) and the library uses no
//! particular executor. The default HTTP client (feature `http`) is built
//! on `reqwest` and therefore needs a Tokio runtime.

mod action;
mod execute;
mod host;
#[cfg(feature = "http")]
mod http;
mod name_index;
mod validate;

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use objectstack_spec::AIToolDefinition;

use crate::approval::ApprovalQueue;
use crate::materialise::{Materialised, Refines, Registered, SkipCode, Wiring, materialise};

pub use action::{
    DEFAULT_SUCCESS_MESSAGE, OUTCOME_UNKNOWN, build_api_body, build_api_target, pending_message,
};
pub use execute::{ExecuteOptions, ExecutionReport};
pub use host::{
    ApiClient, ApiRequest, AutomationService, DataEngine, FieldWriteRequest, FlowRequest,
    HostError, ScriptRequest,
};
#[cfg(feature = "http")]
pub use http::{HttpApiClient, HttpClientOptions, resolve_target};
pub use validate::{ArgumentLimits, Violation};

pub use crate::actor::Actor;

use action::ActionTool;
use name_index::{NameIndex, Named};
use validate::{ArgumentValidator, SchemaPool};

/// What a call carries besides its arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallContext {
    /// The caller's identity, when known.
    pub actor: Option<Actor>,
    /// The conversation the call belongs to.
    pub conversation_id: Option<String>,
    /// The message that carried the call.
    pub message_id: Option<String>,
    /// The model's id for this tool call (proposals are idempotent per id).
    pub tool_call_id: Option<String>,
    /// A trace id for correlation.
    pub trace_id: Option<String>,
}

/// One call as a handler sees it: the context with the actor resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The tool being called.
    pub tool: String,
    /// Who the call runs for (never missing).
    pub actor: Actor,
    /// The caller's context.
    pub context: CallContext,
}

/// A tool implementation the host registers (platform tools and the like).
#[async_trait::async_trait]
pub trait ToolHandler: Send + Sync {
    /// Runs the tool with validated arguments; the value goes to the model.
    async fn call(
        &self,
        arguments: Map<String, Value>,
        invocation: &Invocation,
    ) -> Result<Value, HostError>;
}

/// The host's services a registry dispatches to. Every field is optional;
/// registering an action whose route needs a missing service is refused.
#[derive(Clone, Default)]
pub struct HostServices {
    /// Records and script actions (and declarative field writes).
    pub data_engine: Option<Arc<dyn DataEngine>>,
    /// Flows.
    pub automation: Option<Arc<dyn AutomationService>>,
    /// HTTP APIs.
    pub api_client: Option<Arc<dyn ApiClient>>,
    /// The approval queue for actions that need confirmation. Its store is
    /// synchronous: a proposal is one short transaction run on the calling
    /// task.
    pub approvals: Option<Arc<ApprovalQueue>>,
    /// The identity calls run under when the caller gives none (before the
    /// synthetic `ai_agent`).
    pub principal: Option<Actor>,
    /// Size and nesting limits for arguments.
    pub limits: ArgumentLimits,
}

impl HostServices {
    /// What these services wire, as the materialiser asks for it (the API
    /// client's [`scope`](ApiClient::scope) included). A registry over
    /// them reports the same ([`ToolRegistry::wiring`]).
    pub fn wiring(&self) -> Wiring<'_> {
        Wiring {
            automation: self.automation.is_some(),
            api_client: self.api_client.is_some(),
            approval: self.approvals.is_some(),
            api_scope: self
                .api_client
                .as_ref()
                .map(|c| c.scope())
                .unwrap_or_default(),
        }
    }
}

impl fmt::Debug for HostServices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostServices")
            .field("data_engine", &self.data_engine.is_some())
            .field("automation", &self.automation.is_some())
            .field("api_client", &self.api_client.is_some())
            .field("approvals", &self.approvals.is_some())
            .field("principal", &self.principal)
            .field("limits", &self.limits)
            .finish()
    }
}

/// Why a registration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The name is taken (first registration wins: platform tools first).
    #[error(
        "a tool named `{0}` is already registered; the first registration wins (platform tools are registered first)"
    )]
    Duplicate(String),
    /// The `parameters` schema does not compile.
    #[error("tool `{tool}` has a `parameters` schema that is not valid JSON Schema: {message}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What the compiler said.
        message: String,
    },
    /// The action does not materialise (not exposed, UI-only, no target, ...).
    #[error("action tool `{tool}` cannot be registered: {reason}")]
    NotMaterialisable {
        /// The tool.
        tool: String,
        /// The reason, as the materialisation predicate states it.
        reason: String,
    },
    /// The action is refused for a reason [`materialise`] reports as a
    /// skip code (an `api` target outside the client's scope, `api` data a
    /// query string cannot carry).
    #[error("action tool `{tool}` is not registered [{code}]: {reason}")]
    Skipped {
        /// The tool.
        tool: String,
        /// The code, as in [`Materialised::skipped`].
        code: SkipCode,
        /// What is wrong and how to change it.
        reason: String,
    },
    /// A refined tool's name is reserved: a platform tool's, or under a
    /// family prefix (`action_`). A record never shadows the platform.
    #[error("refined tool `{tool}` is refused: {reason}")]
    Reserved {
        /// The tool.
        tool: String,
        /// Whose name it is.
        reason: String,
    },
    /// The action needs a host service that is not wired.
    #[error("action tool `{tool}` needs {service}, which is not wired into the registry")]
    MissingService {
        /// The tool.
        tool: String,
        /// The service, described.
        service: String,
    },
}

struct Entry {
    /// The definition, without its `parameters` (the schema is the
    /// validator's, one shared copy) and with its text held compactly: a
    /// host may register tens of thousands of tools.
    described: Described,
    /// Shared by every tool whose schema is the same ([`SchemaPool`]).
    validator: Arc<ArgumentValidator>,
    kind: Kind,
}

/// The parts of a [`Described`] few definitions have.
struct RareDescribed {
    label: Option<Box<str>>,
    category: Option<Box<str>>,
    output_schema: Option<Map<String, Value>>,
}

/// An [`AIToolDefinition`] less its `parameters`, each string boxed to its
/// length (a `String` carries a capacity, and a `serde_json` map an
/// `IndexMap`'s header, even when empty).
struct Described {
    /// Shared with the index and, for an action, its [`ActionTool`].
    name: Arc<str>,
    description: Box<str>,
    /// The `label`, `category` and `outputSchema`, when any is set (a
    /// materialised action's definition has none of them).
    rare: Option<Box<RareDescribed>>,
    /// Shared by every tool of the object.
    object_name: Option<Arc<str>>,
    requires_confirmation: Option<bool>,
}

impl Described {
    fn label(&self) -> Option<&str> {
        self.rare.as_ref()?.label.as_deref()
    }

    fn new(definition: AIToolDefinition, name: Arc<str>, object_name: Option<Arc<str>>) -> Self {
        Described {
            name,
            description: definition.description.into_boxed_str(),
            rare: (definition.label.is_some()
                || definition.category.is_some()
                || definition.output_schema.is_some())
            .then(|| {
                Box::new(RareDescribed {
                    label: definition.label.map(String::into_boxed_str),
                    category: definition.category.map(String::into_boxed_str),
                    output_schema: definition.output_schema,
                })
            }),
            object_name,
            requires_confirmation: definition.requires_confirmation,
        }
    }
}

impl Named for Entry {
    fn name(&self) -> &str {
        &self.described.name
    }
}

impl Entry {
    /// The definition, whole.
    fn definition(&self) -> AIToolDefinition {
        let d = &self.described;
        AIToolDefinition {
            name: d.name.to_string(),
            label: d.label().map(str::to_owned),
            description: d.description.to_string(),
            parameters: (**self.validator.schema()).clone(),
            category: d
                .rare
                .as_ref()
                .and_then(|r| r.category.as_deref().map(str::to_owned)),
            output_schema: d.rare.as_ref().and_then(|r| r.output_schema.clone()),
            object_name: d.object_name.as_deref().map(str::to_owned),
            requires_confirmation: d.requires_confirmation,
        }
    }

    fn listed(&self) -> Listed<'_> {
        Listed {
            name: &self.described.name,
            label: self.described.label(),
            description: &self.described.description,
            parameters: self.validator.schema(),
        }
    }
}

/// A registered tool as a host lists it, borrowed from the registry: what
/// an MCP server needs for `tools/list` without holding a copy of every
/// tool ([`ToolRegistry::listed`]).
#[derive(Debug, Clone, Copy)]
pub struct Listed<'r> {
    /// The tool name.
    pub name: &'r str,
    /// Its human label, when the definition has one.
    pub label: Option<&'r str>,
    /// Its LLM-facing description.
    pub description: &'r str,
    /// Its `parameters` schema: the very copy calls are validated against,
    /// shared by every tool whose schema is the same JSON.
    pub parameters: &'r Arc<Map<String, Value>>,
}

enum Kind {
    Handler(Arc<dyn ToolHandler>),
    Action(Arc<ActionTool>),
}

/// The tools a model may call, with their handlers.
pub struct ToolRegistry {
    services: HostServices,
    entries: Vec<Entry>,
    /// Each entry's position, found by its name (the entries hold the
    /// names): four bytes a tool where a map from names would hold a
    /// second pointer to each name and a `usize`.
    index: NameIndex,
    schemas: SchemaPool,
    /// The object names the tools name, each held once.
    objects: std::collections::HashSet<Arc<str>>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("services", &self.services)
            .field(
                "tools",
                &self
                    .entries
                    .iter()
                    .map(|e| &*e.described.name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry dispatching to `services`.
    pub fn new(services: HostServices) -> Self {
        ToolRegistry {
            services,
            entries: Vec::new(),
            index: NameIndex::default(),
            schemas: SchemaPool::default(),
            objects: std::collections::HashSet::new(),
        }
    }

    /// The services calls dispatch to.
    pub fn services(&self) -> &HostServices {
        &self.services
    }

    /// Registers a tool with its handler. A name registered before is
    /// refused (register platform tools first: they win).
    pub fn register(
        &mut self,
        definition: AIToolDefinition,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), RegisterError> {
        self.insert(definition, Kind::Handler(handler))
    }

    /// Registers a materialised action: `definition` is its tool definition
    /// and `action` the action's metadata (a JSON object, `objectName`
    /// filled in). Refused when the action does not materialise, when its
    /// route needs a service that is not wired, or when it needs
    /// confirmation and no approval queue is wired (it never runs
    /// unattended).
    pub fn register_action(
        &mut self,
        definition: AIToolDefinition,
        action: Map<String, Value>,
    ) -> Result<(), RegisterError> {
        if self.contains(&definition.name) {
            return Err(RegisterError::Duplicate(definition.name));
        }
        let tool = ActionTool::new(&definition, action, &self.services)?;
        self.insert_action(definition, tool)
    }

    /// Registers a refined tool (a bound tool record, ADR-0109 Phase 2):
    /// `definition` is the record's tool, `action` the action it refines
    /// (for a flow, the flow as a `type: flow` action) and `refines` what
    /// the materialiser found. A call is validated against the record's
    /// schema, completed with the pinned values, checked against the
    /// action's own schema, then dispatched exactly as the raw action tool
    /// would be (record loaded first, confirmation, route, an envelope
    /// naming the action). A name that is a platform tool's, or under a
    /// family prefix, is refused.
    pub fn register_refinement(
        &mut self,
        definition: AIToolDefinition,
        action: Map<String, Value>,
        refines: &Refines,
    ) -> Result<(), RegisterError> {
        let name = definition.name.as_str();
        let reserved = objectstack_registry::owner(name)
            .map(|package| format!("it is a platform tool registered by `{package}`"))
            .or_else(|| {
                objectstack_registry::FAMILY_PREFIXES
                    .iter()
                    .find(|p| name.starts_with(**p))
                    .map(|p| format!("it is under the family prefix `{p}`"))
            });
        if let Some(reason) = reserved {
            return Err(RegisterError::Reserved {
                tool: definition.name,
                reason,
            });
        }
        if self.contains(&definition.name) {
            return Err(RegisterError::Duplicate(definition.name));
        }
        let mut tool = ActionTool::new(&definition, action, &self.services)?;
        tool.refine(&definition.name, refines)?;
        self.insert_action(definition, tool)
    }

    /// What this registry has wired, as the materialiser asks for it (the
    /// API client's [`scope`](ApiClient::scope) included).
    pub fn wiring(&self) -> Wiring<'_> {
        self.services.wiring()
    }

    /// Registers every action a [`materialise`]
    /// call produced; returns the registrations that were refused (a name
    /// already taken, a service missing). Nothing else is registered twice.
    pub fn register_materialised(&mut self, materialised: &Materialised<'_>) -> Vec<RegisterError> {
        materialised
            .registered
            .iter()
            .filter_map(|registered| self.register_materialised_tool(registered.clone()).err())
            .collect()
    }

    /// Registers one action a [`materialise`] call produced, taking it by
    /// value: its definition and action move into the registry, so a host
    /// registering a large stack as it is materialised
    /// ([`materialise_each`](crate::materialise::materialise_each)) never
    /// holds a second copy. Refused as [`register_materialised`]
    /// refuses.
    ///
    /// [`register_materialised`]: ToolRegistry::register_materialised
    pub fn register_materialised_tool(
        &mut self,
        registered: Registered<'_>,
    ) -> Result<(), RegisterError> {
        let mut action = registered.action.into_owned();
        if let Some(object) = registered.object {
            action
                .entry("objectName")
                .or_insert_with(|| Value::String(object));
        }
        match &registered.refines {
            Some(refines) => self.register_refinement(registered.definition, action, refines),
            None => self.register_action(registered.definition, action),
        }
    }

    /// Materialises a stack's actions against this registry's wiring (tools
    /// already registered win name collisions) and registers them all.
    /// Returns the materialisation (skipped actions and warnings included)
    /// and the registrations that were refused.
    pub fn register_stack<'a>(
        &mut self,
        stack: &'a Map<String, Value>,
    ) -> (Materialised<'a>, Vec<RegisterError>) {
        let wiring = self.wiring();
        let taken: std::collections::HashSet<String> = self
            .entries
            .iter()
            .map(|e| e.described.name.to_string())
            .collect();
        let arena = objectstack_spec::json::Arena::new();
        let document = objectstack_spec::json::Map::from_serde(stack, &arena);
        let materialised = materialise(document, &arena, Some(&wiring), &|name| {
            taken.contains(name)
        })
        .into_owned();
        let refused = self.register_materialised(&materialised);
        (materialised, refused)
    }

    /// An action tool's entry: its name and object name are held once,
    /// shared by the entry, the index and the tool.
    fn insert_action(
        &mut self,
        definition: AIToolDefinition,
        mut tool: ActionTool,
    ) -> Result<(), RegisterError> {
        tool.object_name = tool.object_name.take().map(|o| self.intern(&o));
        let name = tool.tool.clone();
        self.insert_named(name, definition, Kind::Action(Arc::new(tool)))
    }

    fn insert(&mut self, definition: AIToolDefinition, kind: Kind) -> Result<(), RegisterError> {
        let name = Arc::from(definition.name.as_str());
        self.insert_named(name, definition, kind)
    }

    /// `name` is `definition.name`, as the registry will hold it.
    fn insert_named(
        &mut self,
        name: Arc<str>,
        mut definition: AIToolDefinition,
        kind: Kind,
    ) -> Result<(), RegisterError> {
        if self.contains(&name) {
            return Err(RegisterError::Duplicate(definition.name));
        }
        let parameters = std::mem::take(&mut definition.parameters);
        let validator = self.schemas.validator(&definition.name, parameters)?;
        let object_name = definition.object_name.take().map(|o| self.intern(&o));
        if self.index.insert(&name, &self.entries).is_err() {
            return Err(RegisterError::NotMaterialisable {
                tool: definition.name,
                reason: format!("the registry holds {} tools, its most", u32::MAX),
            });
        }
        self.entries.push(Entry {
            described: Described::new(definition, name, object_name),
            validator,
            kind,
        });
        Ok(())
    }

    /// The one shared copy of an object name.
    fn intern(&mut self, object: &str) -> Arc<str> {
        if let Some(shared) = self.objects.get(object) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(object);
        self.objects.insert(shared.clone());
        shared
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A tool's position in registration order (the order of
    /// [`listed`](Self::listed) and [`definitions`](Self::definitions)).
    pub fn position(&self, name: &str) -> Option<usize> {
        self.index.position(name, &self.entries)
    }

    /// Every tool, in registration order, borrowed: name, label,
    /// description and the shared `parameters` schema.
    pub fn listed(&self) -> impl ExactSizeIterator<Item = Listed<'_>> {
        self.entries.iter().map(Entry::listed)
    }

    /// The tool at `position` in registration order, as
    /// [`listed`](Self::listed) lists it.
    pub fn listed_at(&self, position: usize) -> Option<Listed<'_>> {
        self.entries.get(position).map(Entry::listed)
    }

    /// One tool as [`listed`](Self::listed) lists it.
    pub fn listed_tool(&self, name: &str) -> Option<Listed<'_>> {
        self.entry(name).map(Entry::listed)
    }

    /// Makes room for `additional` more tools, so that registering a large
    /// stack does not copy the registry as it grows.
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve_exact(additional);
        self.index.reserve(additional, &self.entries);
    }

    /// Gives back the room [`reserve`](Self::reserve) (or growth) left
    /// unused, once every tool is registered.
    pub fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
        self.index.shrink_to_fit(&self.entries);
    }

    /// Whether a tool of this name is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// The definitions to offer a model, in registration order (copies:
    /// the registry holds each tool's schema once, shared, see
    /// [`parameters`](Self::parameters)).
    pub fn definitions(&self) -> Vec<AIToolDefinition> {
        self.entries.iter().map(Entry::definition).collect()
    }

    /// The definition of one tool (a copy, as [`definitions`](Self::definitions)).
    pub fn definition(&self, name: &str) -> Option<AIToolDefinition> {
        self.entry(name).map(Entry::definition)
    }

    /// One tool's `parameters` schema, the very copy its calls are
    /// validated against: a host serving many tools (an MCP server's
    /// `inputSchema`) shares it rather than holding another. Tools whose
    /// schemas are the same JSON (key order included) share one copy.
    pub fn parameters(&self, name: &str) -> Option<&Arc<Map<String, Value>>> {
        self.entry(name).map(|e| e.validator.schema())
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.position(name).and_then(|i| self.entries.get(i))
    }

    /// The executable digest of a registered action tool: what an approval
    /// of a call to it is bound to ([`PendingAction::executable_sha256`]).
    /// `None` for an unknown name or a host tool (those are never queued).
    ///
    /// [`PendingAction::executable_sha256`]: crate::approval::PendingAction::executable_sha256
    pub fn executable_sha256(&self, name: &str) -> Option<String> {
        self.action(name).map(|a| a.executable_sha256.to_string())
    }

    /// The names of the registered action tools, in registration order.
    pub(crate) fn action_names(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| matches!(e.kind, Kind::Action(_)))
            .map(|e| e.described.name.to_string())
            .collect()
    }

    pub(crate) fn action(&self, name: &str) -> Option<&Arc<ActionTool>> {
        match &self.entry(name)?.kind {
            Kind::Action(a) => Some(a),
            Kind::Handler(_) => None,
        }
    }

    /// The actor a call runs under: the caller's, else the configured
    /// principal, else the synthetic `ai_agent`.
    pub fn resolve_actor(&self, context: &CallContext) -> Actor {
        context
            .actor
            .clone()
            .or_else(|| self.services.principal.clone())
            .unwrap_or_else(Actor::ai_agent)
    }

    /// Calls a tool with arguments from the model (a JSON object; `null`
    /// counts as no arguments). Returns what to hand back to the model:
    /// the handler's value, an action's result envelope, or an error
    /// value `{ok: false, tool, error, violations?}` when the call was
    /// refused before anything ran.
    pub async fn call(&self, name: &str, arguments: Value, context: &CallContext) -> Value {
        let Some(entry) = self.entry(name) else {
            return refusal(name, &unknown_tool_message(name, self.entries.len()), None);
        };
        let mut arguments = match arguments {
            Value::Null => Map::new(),
            Value::Object(map) => map,
            other => {
                return refusal(
                    name,
                    &format!(
                        "the arguments of `{name}` must be a JSON object, found {}",
                        objectstack_spec::json::kind(&other)
                    ),
                    None,
                );
            }
        };
        if let Err(message) = self.services.limits.check(&arguments) {
            return refusal(name, &message, None);
        }
        // `null` for an optional parameter means "not given" (OpenAI strict).
        entry.validator.drop_absent_nulls(&mut arguments);
        if let Err(violations) = entry.validator.validate(&arguments) {
            let message = validate::describe(name, &violations);
            return refusal(name, &message, Some(&violations));
        }
        if let Kind::Action(tool) = &entry.kind
            && let Err((message, violations)) = tool.complete(&mut arguments)
        {
            return refusal(name, &message, violations.as_deref());
        }
        let invocation = Invocation {
            tool: name.to_owned(),
            actor: self.resolve_actor(context),
            context: context.clone(),
        };
        match &entry.kind {
            Kind::Handler(handler) => match handler.call(arguments, &invocation).await {
                Ok(value) => value,
                Err(e) => json!({"ok": false, "tool": name, "error": e.to_string()}),
            },
            Kind::Action(tool) => tool.call(arguments, &invocation, &self.services).await,
        }
    }

    /// [`call`](Self::call) with the arguments as the model sent them: JSON
    /// text. Text longer than the size limit is refused before parsing;
    /// empty text counts as no arguments.
    pub async fn call_json(&self, name: &str, arguments: &str, context: &CallContext) -> Value {
        if arguments.len() > self.services.limits.max_bytes {
            return refusal(
                name,
                &format!(
                    "the arguments of `{name}` are {} bytes; at most {} are accepted",
                    arguments.len(),
                    self.services.limits.max_bytes
                ),
                None,
            );
        }
        if arguments.trim().is_empty() {
            return self.call(name, Value::Null, context).await;
        }
        match serde_json::from_str::<Value>(arguments) {
            Ok(value) => self.call(name, value, context).await,
            Err(e) => refusal(
                name,
                &format!("the arguments of `{name}` are not valid JSON: {e}"),
                None,
            ),
        }
    }
}

fn unknown_tool_message(name: &str, count: usize) -> String {
    format!(
        "no tool named `{name}` is registered ({count} tools are); call one of the tools you were given"
    )
}

/// The value handed to the model when a call is refused before anything ran.
fn refusal(tool: &str, message: &str, violations: Option<&[Violation]>) -> Value {
    let mut out = Map::new();
    out.insert("ok".into(), Value::Bool(false));
    out.insert("tool".into(), Value::String(tool.to_owned()));
    out.insert("error".into(), Value::String(message.to_owned()));
    if let Some(violations) = violations {
        out.insert(
            "violations".into(),
            Value::Array(
                violations
                    .iter()
                    .map(|v| json!({"path": v.path, "message": v.message}))
                    .collect(),
            ),
        );
    }
    Value::Object(out)
}
