//! What each agent may invoke: the governance view ADR-0011 asks for.
//!
//! [`build`] reads a stack leniently (the same reading as the lint rules:
//! arrays keep their object entries, maps are keyed by name, junk is
//! skipped) and returns [`Capabilities`]: a [`petgraph`] graph of agents,
//! skills, tools, actions, flows and objects, plus, for every agent, its
//! effective tool set, the tools that need human approval and its dead
//! references. [`render`] prints it as text, JSON, Graphviz dot or a
//! Mermaid flowchart.
//!
//! # How a stack is read
//!
//! - **Tools** (the resolution universe, as the lint's
//!   `ai-skill-tool-unresolved` rule sees it, first name wins in this
//!   order): the curated platform tools, the `stack.tools` records, then
//!   `action_<name>` for every stack-level and object-level action that
//!   materialises ([`objectstack_spec::materialise::static_skip`] is
//!   `None`). A tool record with a Phase-2 `binding: {type: action|flow,
//!   name}` is linked to that action or flow (ADR-0109 decision 4); one
//!   without a binding is *inert*: it resolves for the lint but executes
//!   nothing.
//! - **Skills** grant tools through `skills[i].tools[j]`: an exact name, or
//!   a family wildcard `prefix*` that grants every tool whose name starts
//!   with `prefix`.
//! - **Agents** name skills in `agents[i].skills[j]`; an agent's tools are
//!   exactly the union of its skills' tools (ADR-0064). A skill binds only
//!   when it exists, is active (`active` is not `false`) and its `surface`
//!   (`ask` by default) is the agent's `surface` (`ask` by default) or
//!   `both`.
//! - **Unattached skills**: skills no agent names. Upstream, the kernel's
//!   own agents (`ask` and `build`) pick skills up by surface; this view
//!   lists them under a pseudo-section so a stack without agents is still
//!   useful.
//! - A tool **needs approval** when its backing action needs confirmation
//!   ([`objectstack_spec::materialise::needs_confirmation`]): calls wait in
//!   the approval queue, and the tool exists only where that queue is wired.
//!
//! # Dead references
//!
//! Each [`DeadReference`] has a stable [`DeadKind`] code:
//! `skill_missing` (an agent names a skill the stack does not define),
//! `skill_surface_mismatch`, `skill_inactive`, `tool_unresolved` (a tool
//! name that resolves to nothing), `action_not_materialised` (`action_x`
//! where action `x` exists but does not become a tool) and `wildcard_empty`
//! (a wildcard matching nothing). Dot and Mermaid draw them in red.
//!
//! # The JSON shape (stable)
//!
//! ```text
//! {
//!   "agents": [{
//!     "name": "support_desk", "label": "Support Desk" | null,
//!     "surface": "ask", "active": true, "path": "agents[0]",
//!     "skills": [SKILL...],
//!     "tools": [TOOL...],            // the effective tool set, by name
//!     "deadReferences": [DEAD...]
//!   }],
//!   "unattached": null | {"skills": [SKILL...], "tools": [TOOL...],
//!                         "deadReferences": [DEAD...]},
//!   "summary": {"agents": N, "skills": N, "tools": N,
//!               "needsApproval": N, "deadReferences": N}
//! }
//! SKILL = {"name", "path",           // where it is named (agents[0].skills[1])
//!          "status": "attached" | "unattached" | "missing"
//!                  | "surface_mismatch" | "inactive",
//!          "definition": "skills[2]" | null, "label", "surface",
//!          "dead": DEAD | null,
//!          "tools": [{"ref", "path", "wildcard": bool,
//!                     "resolves": ["tool name", ...], "dead": DEAD | null}]}
//! TOOL  = {"name", "source": "platform" | "record" | "action",
//!          "package": "service-ai" | null,   // platform tools
//!          "path": "tools[0]" | null,        // tool records
//!          "status": "ready" | "inert" | "binding_unresolved",
//!          "statusReason": string | null,
//!          "action": {"name", "object", "path"} | null,
//!          "flow": "flow name" | null,
//!          "needsApproval": bool, "approvalReason": "mode: delete" | null,
//!          "grantedBy": [{"skill", "ref"}]}
//! DEAD  = {"kind", "ref", "path", "skill": "skill name" | null, "message",
//!          "suggestion": "name it probably meant" | null}
//! ```
//!
//! Summary counts cover what is shown: `tools` counts distinct tool names
//! over every section, `skills` distinct skill definitions.
//!
//! Invariant: building and rendering never panic, whatever the JSON.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use objectstack_spec::collection::{Record, records, records_of};
use objectstack_spec::json::Arena;
use objectstack_spec::json::{Map, Value};
use objectstack_spec::materialise::{self, ConfirmationReason, StaticSkip};
use objectstack_spec::path::JsonPath;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::universe::Universe;

mod diagram;
mod json;
mod text;

/// The capability view of one stack (see the module docs).
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// The agents, in document order.
    pub agents: Vec<Agent>,
    /// The skills no agent names (empty `skills` when there are none).
    pub unattached: Grants,
    /// Every skill, in document order.
    pub skills: Vec<Skill>,
    /// Every tool of the resolution universe, first name wins, in scan
    /// order (platform, tool records, stack actions, object actions).
    pub tools: Vec<Tool>,
    /// Every named action: stack-level first, then each object's.
    pub actions: Vec<Action>,
    /// Agents, skills and whatever their references reach.
    pub graph: DiGraph<Node, Edge>,
}

/// One agent and what it may invoke.
#[derive(Debug, Clone)]
pub struct Agent {
    /// The agent's name, or `#<i>` when it has none.
    pub name: String,
    /// The agent's `label`, when it is a string.
    pub label: Option<String>,
    /// The product surface (`ask` when absent).
    pub surface: String,
    /// Whether the agent is active (`active` is not `false`).
    pub active: bool,
    /// Where it is defined (`agents[0]`).
    pub path: String,
    /// Its skills, tools and dead references.
    pub grants: Grants,
    /// Its node in [`Capabilities::graph`].
    pub node: NodeIndex,
}

/// A set of skill references and what they add up to.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// The skills, as referenced (or, for the unattached section, listed).
    pub skills: Vec<SkillRef>,
    /// The effective tool set: every tool a bound skill grants, by name.
    pub tools: Vec<EffectiveTool>,
    /// Every dead reference, in document order.
    pub dead: Vec<DeadReference>,
}

/// A reference to a skill, and whether it binds.
#[derive(Debug, Clone)]
pub struct SkillRef {
    /// The name as written (or the skill's name, when unattached).
    pub name: String,
    /// Where it is written (`agents[0].skills[1]`), or the skill's own path.
    pub path: String,
    /// The index into [`Capabilities::skills`], when the skill exists.
    pub skill: Option<usize>,
    /// Whether it binds.
    pub status: SkillStatus,
    /// Why it is dead, when it is.
    pub dead: Option<DeadReference>,
}

/// Whether a skill reference binds to its agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkillStatus {
    /// It binds: its tools are the agent's.
    Attached,
    /// No agent names it (the pseudo-section).
    Unattached,
    /// The stack defines no skill of that name.
    Missing,
    /// The skill's surface does not fit the agent's.
    SurfaceMismatch,
    /// The skill is inactive and is dropped.
    Inactive,
}

impl SkillStatus {
    /// The stable code (`attached`, `missing`, ...).
    pub fn code(self) -> &'static str {
        match self {
            SkillStatus::Attached => "attached",
            SkillStatus::Unattached => "unattached",
            SkillStatus::Missing => "missing",
            SkillStatus::SurfaceMismatch => "surface_mismatch",
            SkillStatus::Inactive => "inactive",
        }
    }

    /// Whether the skill's tools count.
    pub fn grants_tools(self) -> bool {
        matches!(self, SkillStatus::Attached | SkillStatus::Unattached)
    }
}

/// A skill definition and its resolved tool references.
#[derive(Debug, Clone)]
pub struct Skill {
    /// The skill's name, or `#<i>` when it has none.
    pub name: String,
    /// The skill's `label`, when it is a string.
    pub label: Option<String>,
    /// The skill's surface (`ask` when absent).
    pub surface: String,
    /// Whether the skill is active (`active` is not `false`).
    pub active: bool,
    /// Where it is defined (`skills[2]`).
    pub path: String,
    /// Its tool references, in order.
    pub refs: Vec<ToolRef>,
    /// Its node in [`Capabilities::graph`].
    pub node: NodeIndex,
}

/// One entry of a skill's `tools`, resolved.
#[derive(Debug, Clone)]
pub struct ToolRef {
    /// The entry as written.
    pub text: String,
    /// Where it is written (`skills[0].tools[3]`).
    pub path: String,
    /// Whether it is a family wildcard (trailing `*`).
    pub wildcard: bool,
    /// The tools it grants (indices into [`Capabilities::tools`], by name).
    pub resolves: Vec<usize>,
    /// Why it grants nothing, when it does not.
    pub dead: Option<DeadReference>,
}

/// A tool of the resolution universe.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The tool name.
    pub name: String,
    /// Where the name comes from.
    pub source: ToolSource,
    /// Whether calling it would execute something.
    pub status: ToolStatus,
    /// The backing action, when there is one.
    pub action: Option<usize>,
    /// The bound flow, when the tool record binds one.
    pub flow: Option<String>,
    /// Why calls need a human's approval, when they do.
    pub approval: Option<ConfirmationReason>,
}

/// Where a tool name comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSource {
    /// A curated platform tool, registered by this package.
    Platform {
        /// The owning package (`service-ai`).
        package: &'static str,
    },
    /// A `stack.tools` record at this path.
    Record {
        /// Where the record is (`tools[0]`).
        path: String,
    },
    /// A materialised `action_<name>` tool.
    Action,
}

impl ToolSource {
    /// The stable code (`platform`, `record`, `action`).
    pub fn code(&self) -> &'static str {
        match self {
            ToolSource::Platform { .. } => "platform",
            ToolSource::Record { .. } => "record",
            ToolSource::Action => "action",
        }
    }
}

/// Whether calling a tool executes something.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolStatus {
    /// A platform tool, a materialised action, or a correctly bound record.
    Ready,
    /// A tool record with no `binding`: it executes nothing (ADR-0109).
    Inert,
    /// A tool record whose binding does not reach an executable; the
    /// string says why.
    BindingUnresolved(String),
}

impl ToolStatus {
    /// The stable code (`ready`, `inert`, `binding_unresolved`).
    pub fn code(&self) -> &'static str {
        match self {
            ToolStatus::Ready => "ready",
            ToolStatus::Inert => "inert",
            ToolStatus::BindingUnresolved(_) => "binding_unresolved",
        }
    }

    /// A sentence saying what is wrong, when something is.
    pub fn reason(&self) -> Option<String> {
        match self {
            ToolStatus::Ready => None,
            ToolStatus::Inert => Some(
                "a tool record without a `binding` executes nothing; bind it to an action or \
                 flow, or name the action's `action_<name>` tool instead"
                    .to_owned(),
            ),
            ToolStatus::BindingUnresolved(why) => Some(why.clone()),
        }
    }
}

/// A named action (stack-level or object-level).
#[derive(Debug, Clone)]
pub struct Action {
    /// The action name.
    pub name: String,
    /// The action's `label`, when it is a string.
    pub label: Option<String>,
    /// Its object: `objectName`, else the object it is declared in.
    pub object: Option<String>,
    /// Where it is defined (`objects[0].actions[1]`).
    pub path: String,
    /// Why it does not materialise, or `None` when it does.
    pub skip: Option<StaticSkip>,
    /// Why it needs confirmation, when it does.
    pub approval: Option<ConfirmationReason>,
}

/// A dead reference: a name that grants nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadReference {
    /// What kind of dead reference it is.
    pub kind: DeadKind,
    /// The name as written.
    pub reference: String,
    /// Where it is written.
    pub path: String,
    /// The skill holding a dead tool reference.
    pub skill: Option<String>,
    /// What it means at run time (ending with `Did you mean "x"?` when
    /// there is a suggestion).
    pub message: String,
    /// The name it probably meant: a tool for a tool reference, a skill
    /// for a skill reference (the lint's suggestion algorithm).
    pub suggestion: Option<String>,
}

/// The kinds of dead reference (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeadKind {
    /// An agent names a skill the stack does not define.
    SkillMissing,
    /// The named skill's surface does not fit the agent's.
    SkillSurfaceMismatch,
    /// The named skill is inactive.
    SkillInactive,
    /// A tool name that resolves to nothing.
    ToolUnresolved,
    /// `action_x` where action `x` exists but does not materialise.
    ActionNotMaterialised,
    /// A wildcard that matches no tool.
    WildcardEmpty,
}

impl DeadKind {
    /// The stable code (`skill_missing`, `tool_unresolved`, ...).
    pub fn code(self) -> &'static str {
        match self {
            DeadKind::SkillMissing => "skill_missing",
            DeadKind::SkillSurfaceMismatch => "skill_surface_mismatch",
            DeadKind::SkillInactive => "skill_inactive",
            DeadKind::ToolUnresolved => "tool_unresolved",
            DeadKind::ActionNotMaterialised => "action_not_materialised",
            DeadKind::WildcardEmpty => "wildcard_empty",
        }
    }
}

impl fmt::Display for DeadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A tool in an effective tool set, and the skills that grant it.
#[derive(Debug, Clone)]
pub struct EffectiveTool {
    /// The index into [`Capabilities::tools`].
    pub tool: usize,
    /// Every skill reference that grants it, in order.
    pub granted_by: Vec<Grant>,
}

/// One skill reference granting a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The index into [`Capabilities::skills`].
    pub skill: usize,
    /// The entry of the skill's `tools` that grants it (a name or a
    /// wildcard).
    pub reference: String,
}

/// A node of the capability graph; indices point into [`Capabilities`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// An agent ([`Capabilities::agents`]).
    Agent(usize),
    /// A skill ([`Capabilities::skills`]).
    Skill(usize),
    /// A tool ([`Capabilities::tools`]).
    Tool(usize),
    /// An action ([`Capabilities::actions`]).
    Action(usize),
    /// A flow a tool record binds, by name.
    Flow(String),
    /// An object, by name.
    Object(String),
    /// A dead reference: the name as written and why it is dead.
    Dead {
        /// The kind of dead reference.
        kind: DeadKind,
        /// The name as written.
        reference: String,
        /// The name it probably meant, if any.
        suggestion: Option<String>,
    },
}

/// An edge of the capability graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edge {
    /// Agent to skill; dead unless the status binds.
    Uses(SkillStatus),
    /// Skill to tool; `via` is the wildcard that granted it, if any.
    Grants {
        /// The wildcard entry, when the tool came through one.
        via: Option<String>,
    },
    /// Materialised tool to the action it runs.
    Runs,
    /// Tool record to the action or flow its binding names.
    Binds,
    /// Action to its object.
    On,
    /// Agent or skill to a dead reference node.
    Dead,
}

/// Output formats of [`render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// A readable tree per agent.
    #[default]
    Text,
    /// The stable JSON shape of the module docs.
    Json,
    /// Graphviz dot.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
}

/// What [`render`] prints.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// The output format.
    pub format: Format,
    /// Show only this agent (by name); `None` shows every agent and the
    /// unattached skills.
    pub agent: Option<String>,
}

/// Errors of [`render`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapabilitiesError {
    /// `--agent` names no agent of the stack.
    #[error("no agent named \"{name}\" in this stack; {}", known_agents(.known))]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents the stack defines, in order.
        known: Vec<String>,
    },
}

fn known_agents(known: &[String]) -> String {
    if known.is_empty() {
        "it defines no agents (leave out --agent to see its skills)".to_owned()
    } else if known.len() > KNOWN_SHOWN {
        let shown = known.get(..KNOWN_SHOWN).unwrap_or(known);
        format!(
            "known agents: {} and {} more",
            shown.join(", "),
            known.len() - KNOWN_SHOWN
        )
    } else {
        format!("known agents: {}", known.join(", "))
    }
}

/// How many agent names an unknown-agent message lists.
const KNOWN_SHOWN: usize = 20;

/// Reads a stack and builds its capability view (see the module docs).
pub fn build(stack: &Map<'_>) -> Capabilities {
    Builder::default().build(stack)
}

/// Renders the capability view in the chosen format.
///
/// Fails only when `options.agent` names no agent.
pub fn render(caps: &Capabilities, options: &RenderOptions) -> Result<String, CapabilitiesError> {
    let view = View::select(caps, options.agent.as_deref())?;
    Ok(match options.format {
        Format::Text => text::render(&view),
        Format::Json => json::render(&view),
        Format::Dot => diagram::dot(&view),
        Format::Mermaid => diagram::mermaid(&view),
    })
}

impl Capabilities {
    /// The first agent with this name.
    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// A tool by name.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// The part of a [`Capabilities`] being rendered.
struct View<'a> {
    caps: &'a Capabilities,
    agents: Vec<&'a Agent>,
    unattached: Option<&'a Grants>,
    /// The graph nodes to draw (reachable from the shown sections).
    nodes: Vec<NodeIndex>,
}

impl<'a> View<'a> {
    fn select(caps: &'a Capabilities, agent: Option<&str>) -> Result<Self, CapabilitiesError> {
        let (agents, unattached) = match agent {
            Some(name) => match caps.agent(name) {
                Some(a) => (vec![a], None),
                None => {
                    return Err(CapabilitiesError::UnknownAgent {
                        name: name.to_owned(),
                        known: caps.agents.iter().map(|a| a.name.clone()).collect(),
                    });
                }
            },
            None => (
                caps.agents.iter().collect(),
                Some(&caps.unattached).filter(|g| !g.skills.is_empty()),
            ),
        };
        let mut nodes = match agent {
            None => caps.graph.node_indices().collect(),
            Some(_) => {
                let roots: Vec<NodeIndex> = agents.iter().map(|a| a.node).collect();
                reachable(&caps.graph, &roots)
            }
        };
        // Agents first, then everything else in the order it was reached.
        nodes.sort_by_key(|&n| !matches!(caps.graph.node_weight(n), Some(Node::Agent(_))));
        Ok(View {
            caps,
            agents,
            unattached,
            nodes,
        })
    }

    /// The sections shown: agents, then the unattached skills.
    fn sections(&self) -> impl Iterator<Item = &'a Grants> + '_ {
        self.agents.iter().map(|a| &a.grants).chain(self.unattached)
    }
}

/// Counts over what a [`View`] shows.
struct Summary {
    agents: usize,
    skills: usize,
    tools: usize,
    needs_approval: usize,
    dead: usize,
}

impl Summary {
    fn of(view: &View<'_>) -> Self {
        let mut skills = HashSet::new();
        let mut tools = HashSet::new();
        let mut dead = HashSet::new();
        for grants in view.sections() {
            skills.extend(grants.skills.iter().filter_map(|s| s.skill));
            tools.extend(grants.tools.iter().map(|t| t.tool));
            dead.extend(grants.dead.iter().map(|d| (d.path.as_str(), d.kind)));
        }
        let needs_approval = tools
            .iter()
            .filter(|&&t| view.caps.tools.get(t).is_some_and(|t| t.approval.is_some()))
            .count();
        Summary {
            agents: view.agents.len(),
            skills: skills.len(),
            tools: tools.len(),
            needs_approval,
            dead: dead.len(),
        }
    }
}

/// Every node reachable from `roots`, in index order.
fn reachable(graph: &DiGraph<Node, Edge>, roots: &[NodeIndex]) -> Vec<NodeIndex> {
    let mut seen: HashSet<NodeIndex> = HashSet::new();
    for &root in roots {
        let mut bfs = petgraph::visit::Bfs::new(graph, root);
        while let Some(n) = bfs.next(graph) {
            seen.insert(n);
        }
    }
    let mut nodes: Vec<NodeIndex> = seen.into_iter().collect();
    nodes.sort_unstable();
    nodes
}

/// Builds [`Capabilities`]; holds the lookup tables while it does.
#[derive(Default)]
struct Builder {
    caps_tools: Vec<Tool>,
    actions: Vec<Action>,
    skills: Vec<Skill>,
    tool_by_name: HashMap<String, usize>,
    /// Tool names in sorted order, for wildcard prefix search.
    sorted_tools: BTreeMap<String, usize>,
    action_by_name: HashMap<String, usize>,
    skill_by_name: HashMap<String, usize>,
    /// The tool names in scan order, for suggestions.
    universe: Universe,
    /// The skill names in document order, for suggestions.
    skill_names: Universe,
    graph: DiGraph<Node, Edge>,
    tool_nodes: HashMap<usize, NodeIndex>,
    action_nodes: HashMap<usize, NodeIndex>,
    object_nodes: HashMap<String, NodeIndex>,
    flow_nodes: HashMap<String, NodeIndex>,
    edges: HashSet<(NodeIndex, NodeIndex)>,
}

fn with_suggestion(mut message: String, suggestion: Option<&str>) -> String {
    if let Some(name) = suggestion {
        message.push_str(&format!(" Did you mean \"{name}\"?"));
    }
    message
}

fn path_of(collection: &str, index: usize) -> JsonPath {
    JsonPath::root().key(collection).index(index)
}

fn str_field(record: &Record<'_>, key: &str) -> Option<String> {
    record.str(key).map(str::to_owned)
}

fn display_name(record: &Record<'_>) -> String {
    record
        .name()
        .map_or_else(|| format!("#{}", record.index()), str::to_owned)
}

fn surface_of(record: &Record<'_>) -> String {
    record.str("surface").unwrap_or("ask").to_owned()
}

fn active_of(record: &Record<'_>) -> bool {
    record.get("active") != Some(&Value::Bool(false))
}

impl Builder {
    fn build(mut self, stack: &Map<'_>) -> Capabilities {
        self.read_actions(stack);
        let flows: HashSet<String> = records_of(stack, "flows", &Arena::new())
            .iter()
            .filter_map(|r| r.name().map(str::to_owned))
            .collect();
        self.read_tools(stack, &flows);
        self.universe = Universe::new(self.caps_tools.iter().map(|t| t.name.clone()).collect());
        self.skill_names = Universe::new(
            records_of(stack, "skills", &Arena::new())
                .iter()
                .filter_map(|r| r.name().map(str::to_owned))
                .collect(),
        );
        self.read_skills(stack);
        let agents = self.read_agents(stack);

        let named: HashSet<usize> = agents
            .iter()
            .flat_map(|a| a.grants.skills.iter().filter_map(|r| r.skill))
            .collect();
        let unattached_refs: Vec<SkillRef> = self
            .skills
            .iter()
            .enumerate()
            .filter(|(i, _)| !named.contains(i))
            .map(|(i, s)| SkillRef {
                name: s.name.clone(),
                path: s.path.clone(),
                skill: Some(i),
                status: if s.active {
                    SkillStatus::Unattached
                } else {
                    SkillStatus::Inactive
                },
                dead: None,
            })
            .collect();
        let unattached = self.grants(unattached_refs);

        Capabilities {
            agents,
            unattached,
            skills: self.skills,
            tools: self.caps_tools,
            actions: self.actions,
            graph: self.graph,
        }
    }

    fn read_actions(&mut self, stack: &Map<'_>) {
        for record in records_of(stack, "actions", &Arena::new()) {
            let path = path_of("actions", record.index());
            let object = str_field(&record, "objectName");
            self.push_action(&record, path, object);
        }
        for object in records_of(stack, "objects", &Arena::new()) {
            let object_path = path_of("objects", object.index());
            let object_name = object.name().map(str::to_owned);
            for record in records(object.get("actions"), &Arena::new()) {
                let path = object_path.key("actions").index(record.index());
                let owner = str_field(&record, "objectName").or_else(|| object_name.clone());
                self.push_action(&record, path, owner);
            }
        }
    }

    fn push_action(&mut self, record: &Record<'_>, path: JsonPath, object: Option<String>) {
        let Some(name) = record.name() else { return };
        let fields: &Map<'_> = record.fields;
        let index = self.actions.len();
        self.actions.push(Action {
            name: name.to_owned(),
            label: str_field(record, "label"),
            object,
            path: path.to_string(),
            skip: materialise::static_skip(fields),
            approval: materialise::needs_confirmation(fields),
        });
        self.action_by_name.entry(name.to_owned()).or_insert(index);
    }

    fn push_tool(&mut self, tool: Tool) {
        if self.tool_by_name.contains_key(&tool.name) {
            return;
        }
        let index = self.caps_tools.len();
        self.tool_by_name.insert(tool.name.clone(), index);
        self.sorted_tools.insert(tool.name.clone(), index);
        self.caps_tools.push(tool);
    }

    fn read_tools(&mut self, stack: &Map<'_>, flows: &HashSet<String>) {
        for group in objectstack_registry::GROUPS {
            for name in group.names {
                self.push_tool(Tool {
                    name: (*name).to_owned(),
                    source: ToolSource::Platform {
                        package: group.package,
                    },
                    status: ToolStatus::Ready,
                    action: None,
                    flow: None,
                    approval: None,
                });
            }
        }
        for record in records_of(stack, "tools", &Arena::new()) {
            let Some(name) = record.name() else { continue };
            let path = path_of("tools", record.index()).to_string();
            let mut tool = Tool {
                name: name.to_owned(),
                source: ToolSource::Record { path },
                status: ToolStatus::Inert,
                action: None,
                flow: None,
                approval: None,
            };
            self.bind(&mut tool, record.get("binding"), flows);
            self.push_tool(tool);
        }
        let materialised: Vec<(String, usize)> = self
            .actions
            .iter()
            .enumerate()
            .filter(|(_, a)| a.skip.is_none())
            .map(|(i, a)| (objectstack_registry::action_tool_name(&a.name), i))
            .collect();
        for (name, action) in materialised {
            let approval = self.actions.get(action).and_then(|a| a.approval);
            self.push_tool(Tool {
                name,
                source: ToolSource::Action,
                status: ToolStatus::Ready,
                action: Some(action),
                flow: None,
                approval,
            });
        }
    }

    /// Resolves a tool record's Phase-2 `binding`.
    fn bind(&self, tool: &mut Tool, binding: Option<&Value>, flows: &HashSet<String>) {
        let binding = match binding {
            None | Some(Value::Null) => return,
            Some(Value::Object(b)) => b,
            Some(other) => {
                tool.status = ToolStatus::BindingUnresolved(format!(
                    "`binding` must be an object `{{type: action|flow, name}}`, found {}",
                    objectstack_spec::json::kind(other)
                ));
                return;
            }
        };
        let kind = binding.get("type").and_then(Value::as_str);
        let Some(name) = binding.get("name").and_then(Value::as_str) else {
            tool.status = ToolStatus::BindingUnresolved(
                "`binding.name` must name the action or flow to run".to_owned(),
            );
            return;
        };
        match kind {
            Some("action") => match self.action_by_name.get(name) {
                Some(&i) => {
                    tool.action = Some(i);
                    let action = self.actions.get(i);
                    tool.approval = action.and_then(|a| a.approval);
                    tool.status = match action.and_then(|a| a.skip.as_ref()) {
                        None => ToolStatus::Ready,
                        Some(skip) => ToolStatus::BindingUnresolved(format!(
                            "the bound action \"{name}\" does not materialise: {skip}"
                        )),
                    };
                }
                None => {
                    tool.status = ToolStatus::BindingUnresolved(format!(
                        "the binding names action \"{name}\", which this stack does not define"
                    ));
                }
            },
            Some("flow") => {
                tool.flow = Some(name.to_owned());
                tool.status = if flows.contains(name) {
                    ToolStatus::Ready
                } else {
                    ToolStatus::BindingUnresolved(format!(
                        "the binding names flow \"{name}\", which this stack does not define"
                    ))
                };
            }
            _ => {
                tool.status = ToolStatus::BindingUnresolved(
                    "`binding.type` must be `action` or `flow`".to_owned(),
                );
            }
        }
    }

    fn read_skills(&mut self, stack: &Map<'_>) {
        for record in records_of(stack, "skills", &Arena::new()) {
            let index = self.skills.len();
            let name = display_name(&record);
            let path = path_of("skills", record.index());
            let refs = match record.get("tools").and_then(Value::as_array) {
                Some(entries) => entries
                    .iter()
                    .enumerate()
                    .filter_map(|(j, entry)| match entry.as_str() {
                        Some(text) if !text.is_empty() => {
                            let at = path.key("tools").index(j).to_string();
                            Some(self.resolve(text, at, &name))
                        }
                        _ => None,
                    })
                    .collect(),
                None => Vec::new(),
            };
            let node = self.graph.add_node(Node::Skill(index));
            if let Some(n) = record.name() {
                self.skill_by_name.entry(n.to_owned()).or_insert(index);
            }
            self.skills.push(Skill {
                name,
                label: str_field(&record, "label"),
                surface: surface_of(&record),
                active: active_of(&record),
                path: path.to_string(),
                refs,
                node,
            });
            self.link_skill(index);
        }
    }

    /// Resolves one skill tool entry against the universe.
    fn resolve(&self, text: &str, path: String, skill: &str) -> ToolRef {
        let dead = |kind: DeadKind, message: String, suggestion: Option<&str>| DeadReference {
            kind,
            reference: text.to_owned(),
            path: path.clone(),
            skill: Some(skill.to_owned()),
            message: with_suggestion(message, suggestion),
            suggestion: suggestion.map(str::to_owned),
        };
        if let Some(prefix) = text.strip_suffix('*') {
            let resolves: Vec<usize> = self
                .sorted_tools
                .range::<str, _>((
                    std::ops::Bound::Included(prefix),
                    std::ops::Bound::Unbounded,
                ))
                .take_while(|(name, _)| name.starts_with(prefix))
                .map(|(_, &i)| i)
                .collect();
            let dead = resolves.is_empty().then(|| {
                dead(
                    DeadKind::WildcardEmpty,
                    format!(
                        "no tool name starts with \"{prefix}\", so the wildcard grants nothing."
                    ),
                    None,
                )
            });
            return ToolRef {
                text: text.to_owned(),
                path: path.clone(),
                wildcard: true,
                resolves,
                dead,
            };
        }
        if let Some(&i) = self.tool_by_name.get(text) {
            return ToolRef {
                text: text.to_owned(),
                path,
                wildcard: false,
                resolves: vec![i],
                dead: None,
            };
        }
        let not_materialised = text
            .strip_prefix(objectstack_registry::ACTION_PREFIX)
            .and_then(|name| self.action_by_name.get(name))
            .and_then(|&i| self.actions.get(i))
            .and_then(|a| a.skip.as_ref().map(|skip| (a, skip)));
        let dead = match not_materialised {
            Some((action, skip)) => dead(
                DeadKind::ActionNotMaterialised,
                format!(
                    "action \"{}\" ({}) exists but does not become a tool: {skip}.",
                    action.name, action.path
                ),
                None,
            ),
            None => dead(
                DeadKind::ToolUnresolved,
                format!(
                    "no platform tool, tool record or AI-exposed action is named \"{text}\"; \
                     the model is told about a tool it cannot call."
                ),
                self.universe.suggest(text),
            ),
        };
        ToolRef {
            text: text.to_owned(),
            path,
            wildcard: false,
            resolves: Vec::new(),
            dead: Some(dead),
        }
    }

    /// Adds a skill's edges: to each granted tool and to each dead ref.
    fn link_skill(&mut self, skill: usize) {
        let Some(s) = self.skills.get(skill) else {
            return;
        };
        let from = s.node;
        let refs = s.refs.clone();
        for r in refs {
            if let Some(dead) = &r.dead {
                let node = self.graph.add_node(Node::Dead {
                    kind: dead.kind,
                    reference: r.text.clone(),
                    suggestion: dead.suggestion.clone(),
                });
                self.graph.add_edge(from, node, Edge::Dead);
                continue;
            }
            let via = r.wildcard.then(|| r.text.clone());
            for &tool in &r.resolves {
                let to = self.tool_node(tool);
                self.edge(from, to, Edge::Grants { via: via.clone() });
            }
        }
    }

    fn edge(&mut self, from: NodeIndex, to: NodeIndex, edge: Edge) {
        if self.edges.insert((from, to)) {
            self.graph.add_edge(from, to, edge);
        }
    }

    /// The node of a tool, adding it (and what it runs) on first use.
    fn tool_node(&mut self, tool: usize) -> NodeIndex {
        if let Some(&n) = self.tool_nodes.get(&tool) {
            return n;
        }
        let node = self.graph.add_node(Node::Tool(tool));
        self.tool_nodes.insert(tool, node);
        let (action, flow, source) = match self.caps_tools.get(tool) {
            Some(t) => (t.action, t.flow.clone(), t.source.clone()),
            None => return node,
        };
        let link = if source == ToolSource::Action {
            Edge::Runs
        } else {
            Edge::Binds
        };
        if let Some(a) = action {
            let to = self.action_node(a);
            self.edge(node, to, link);
        } else if let Some(f) = flow {
            let to = match self.flow_nodes.get(&f) {
                Some(&n) => n,
                None => {
                    let n = self.graph.add_node(Node::Flow(f.clone()));
                    self.flow_nodes.insert(f, n);
                    n
                }
            };
            self.edge(node, to, link);
        }
        node
    }

    fn action_node(&mut self, action: usize) -> NodeIndex {
        if let Some(&n) = self.action_nodes.get(&action) {
            return n;
        }
        let node = self.graph.add_node(Node::Action(action));
        self.action_nodes.insert(action, node);
        if let Some(object) = self.actions.get(action).and_then(|a| a.object.clone()) {
            let to = match self.object_nodes.get(&object) {
                Some(&n) => n,
                None => {
                    let n = self.graph.add_node(Node::Object(object.clone()));
                    self.object_nodes.insert(object, n);
                    n
                }
            };
            self.edge(node, to, Edge::On);
        }
        node
    }

    fn read_agents(&mut self, stack: &Map<'_>) -> Vec<Agent> {
        let mut agents = Vec::new();
        for record in records_of(stack, "agents", &Arena::new()) {
            let index = agents.len();
            let name = display_name(&record);
            let path = path_of("agents", record.index());
            let surface = surface_of(&record);
            let node = self.graph.add_node(Node::Agent(index));
            let mut refs = Vec::new();
            if let Some(entries) = record.get("skills").and_then(Value::as_array) {
                for (j, entry) in entries.iter().enumerate() {
                    let Some(skill_name) = entry.as_str().filter(|s| !s.is_empty()) else {
                        continue;
                    };
                    let at = path.key("skills").index(j).to_string();
                    let skill_ref = self.skill_ref(skill_name, at, &name, &surface);
                    let to = match skill_ref.skill.and_then(|i| self.skills.get(i)) {
                        Some(s) => s.node,
                        None => self.graph.add_node(Node::Dead {
                            kind: DeadKind::SkillMissing,
                            reference: skill_name.to_owned(),
                            suggestion: skill_ref.dead.as_ref().and_then(|d| d.suggestion.clone()),
                        }),
                    };
                    let edge = match skill_ref.status {
                        SkillStatus::Missing => Edge::Dead,
                        status => Edge::Uses(status),
                    };
                    self.edge(node, to, edge);
                    refs.push(skill_ref);
                }
            }
            agents.push(Agent {
                name,
                label: str_field(&record, "label"),
                surface,
                active: active_of(&record),
                path: path.to_string(),
                grants: self.grants(refs),
                node,
            });
        }
        agents
    }

    fn skill_ref(&self, name: &str, path: String, agent: &str, surface: &str) -> SkillRef {
        let dead = |kind: DeadKind, message: String| DeadReference {
            kind,
            reference: name.to_owned(),
            path: path.clone(),
            skill: None,
            message,
            suggestion: None,
        };
        let Some((index, skill)) = self
            .skill_by_name
            .get(name)
            .and_then(|&i| self.skills.get(i).map(|s| (i, s)))
        else {
            return SkillRef {
                name: name.to_owned(),
                path: path.clone(),
                skill: None,
                status: SkillStatus::Missing,
                dead: Some({
                    let suggestion = self.skill_names.suggest(name);
                    let mut d = dead(
                        DeadKind::SkillMissing,
                        with_suggestion(
                            format!(
                                "agent \"{agent}\" names skill \"{name}\", which this stack \
                                 does not define; it adds no tools."
                            ),
                            suggestion,
                        ),
                    );
                    d.suggestion = suggestion.map(str::to_owned);
                    d
                }),
            };
        };
        let (status, dead) = if !skill.active {
            (
                SkillStatus::Inactive,
                Some(dead(
                    DeadKind::SkillInactive,
                    format!(
                        "skill \"{name}\" is inactive (`active: false`), so the runtime drops \
                         it and agent \"{agent}\" gets none of its tools."
                    ),
                )),
            )
        } else if skill.surface != "both" && skill.surface != surface {
            (
                SkillStatus::SurfaceMismatch,
                Some(dead(
                    DeadKind::SkillSurfaceMismatch,
                    format!(
                        "skill \"{name}\" has surface `{}` but agent \"{agent}\" has surface \
                         `{surface}`; the runtime refuses to bind it (use `{surface}` or \
                         `both`).",
                        skill.surface
                    ),
                )),
            )
        } else {
            (SkillStatus::Attached, None)
        };
        SkillRef {
            name: name.to_owned(),
            path,
            skill: Some(index),
            status,
            dead,
        }
    }

    /// Adds up a list of skill references: effective tools and dead refs.
    fn grants(&self, skills: Vec<SkillRef>) -> Grants {
        let mut tools: BTreeMap<&str, EffectiveTool> = BTreeMap::new();
        // (tool, skill, reference) already granted: a tool can be granted
        // by thousands of wildcard references, so not a scan per grant.
        let mut granted: HashSet<(usize, usize, &str)> = HashSet::new();
        let mut dead = Vec::new();
        for skill_ref in &skills {
            dead.extend(skill_ref.dead.iter().cloned());
            let Some((index, skill)) = skill_ref
                .skill
                .and_then(|i| self.skills.get(i).map(|s| (i, s)))
            else {
                continue;
            };
            for r in &skill.refs {
                dead.extend(r.dead.iter().cloned());
                if !skill_ref.status.grants_tools() {
                    continue;
                }
                for &tool in &r.resolves {
                    let Some(t) = self.caps_tools.get(tool) else {
                        continue;
                    };
                    let entry = tools
                        .entry(t.name.as_str())
                        .or_insert_with(|| EffectiveTool {
                            tool,
                            granted_by: Vec::new(),
                        });
                    if granted.insert((tool, index, r.text.as_str())) {
                        entry.granted_by.push(Grant {
                            skill: index,
                            reference: r.text.clone(),
                        });
                    }
                }
            }
        }
        Grants {
            skills,
            tools: tools.into_values().collect(),
            dead,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(v: serde_json::Value) -> Capabilities {
        build(crate::testing::doc(v))
    }

    fn tool_names(caps: &Capabilities, grants: &Grants) -> Vec<String> {
        grants
            .tools
            .iter()
            .map(|t| caps.tools[t.tool].name.clone())
            .collect()
    }

    #[test]
    fn universe_first_name_wins_in_scan_order() {
        let c = caps(json!({
            "tools": [{"name": "query_data"}, {"name": "mine"}, {"name": "mine"}],
        }));
        let t = c.tool("query_data").unwrap();
        assert_eq!(
            t.source,
            ToolSource::Platform {
                package: "service-ai"
            }
        );
        assert_eq!(c.tools.iter().filter(|t| t.name == "mine").count(), 1);
        assert_eq!(
            c.tool("mine").unwrap().source,
            ToolSource::Record {
                path: "tools[1]".to_owned()
            }
        );
    }

    #[test]
    fn unknown_agent_message_lists_at_most_twenty() {
        let known: Vec<String> = (0..25).map(|i| format!("a{i}")).collect();
        let msg = known_agents(&known);
        assert!(msg.starts_with("known agents: a0, a1,"), "{msg}");
        assert!(msg.ends_with("a19 and 5 more"), "{msg}");
    }

    #[test]
    fn wildcard_star_alone_matches_everything() {
        let c = caps(json!({"skills": [{"name": "s", "tools": ["*"]}]}));
        assert_eq!(c.skills[0].refs[0].resolves.len(), c.tools.len());
        assert_eq!(c.unattached.tools.len(), c.tools.len());
    }

    #[test]
    fn non_array_tools_and_non_string_refs_are_skipped() {
        let c = caps(json!({"skills": [
            {"name": "a", "tools": "query_data"},
            {"name": "b", "tools": [null, 3, "", "query_data"]}
        ]}));
        assert!(c.skills[0].refs.is_empty());
        assert_eq!(c.skills[1].refs.len(), 1);
        assert_eq!(c.skills[1].refs[0].path, "skills[1].tools[3]");
        assert_eq!(tool_names(&c, &c.unattached), ["query_data"]);
    }

    #[test]
    fn inert_and_bound_records() {
        let c = caps(json!({
            "actions": [{"name": "ship", "type": "script", "target": "t",
                         "ai": {"exposed": true, "description": "Ships the order now."}}],
            "flows": [{"name": "nightly"}],
            "tools": [
                {"name": "inert_tool"},
                {"name": "bound", "binding": {"type": "action", "name": "ship"}},
                {"name": "bound_flow", "binding": {"type": "flow", "name": "nightly"}},
                {"name": "bad_flow", "binding": {"type": "flow", "name": "nope"}},
                {"name": "bad_kind", "binding": {"type": "job", "name": "ship"}},
                {"name": "bad_shape", "binding": "ship"}
            ]
        }));
        assert_eq!(c.tool("inert_tool").unwrap().status, ToolStatus::Inert);
        assert_eq!(c.tool("bound").unwrap().status, ToolStatus::Ready);
        assert_eq!(c.tool("bound").unwrap().action, Some(0));
        assert_eq!(c.tool("bound_flow").unwrap().status, ToolStatus::Ready);
        for name in ["bad_flow", "bad_kind", "bad_shape"] {
            assert_eq!(
                c.tool(name).unwrap().status.code(),
                "binding_unresolved",
                "{name}"
            );
        }
    }

    #[test]
    fn graph_only_holds_what_skills_reach() {
        let c = caps(json!({
            "objects": [{"name": "order", "actions": [
                {"name": "ship", "type": "script", "target": "t",
                 "ai": {"exposed": true, "description": "Ships the order now."}},
                {"name": "hidden", "type": "script", "target": "t"}
            ]}],
            "skills": [{"name": "s", "tools": ["action_ship", "nope"]}]
        }));
        let kinds: Vec<&Node> = c.graph.node_weights().collect();
        assert!(kinds.contains(&&Node::Object("order".to_owned())));
        assert!(kinds.contains(&&Node::Action(0)));
        assert!(!kinds.contains(&&Node::Action(1)));
        assert!(kinds.iter().any(|n| matches!(
            n,
            Node::Dead {
                kind: DeadKind::ToolUnresolved,
                ..
            }
        )));
        // skill, tool, action, object, dead
        assert_eq!(c.graph.node_count(), 5);
    }
}
