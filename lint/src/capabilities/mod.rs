//! What each agent may invoke: the governance view ADR-0011 asks for.
//!
//! [`build`] reads a stack leniently (the same reading as the lint rules:
//! arrays keep their object entries, maps are keyed by name, junk is
//! skipped) and returns [`Capabilities`]: agents, skills, tools, actions and
//! the wildcards skills use; [`Capabilities::grants`] adds up, for an agent
//! (or the unattached skills), its effective tool set, the tools that need
//! human approval and its dead references; [`Capabilities::graph`] is the
//! [`petgraph`] graph of all of it. [`write()`] streams the view as text,
//! JSON, Graphviz dot or a Mermaid flowchart; [`build_composed`] reads
//! several stacks as one.
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
//!   nothing. A bound record's status is the refinement predicate's
//!   ([`objectstack_spec::materialise::refine::judge`]): ready when it
//!   refines, else not registered with the predicate's code. An action a
//!   record binds has no `action_<name>` tool here (it is superseded, as a
//!   runtime does not register it), and a skill naming it has a dead
//!   `tool_superseded` reference suggesting the refinement.
//! - **Skills** grant tools through `skills[i].tools[j]`: an exact name, or
//!   a family wildcard `prefix*` that grants every tool whose name starts
//!   with `prefix`.
//! - **Agents** name skills in `agents[i].skills[j]`; an agent's tools are
//!   exactly the union of its skills' tools (ADR-0064). A skill binds only
//!   when it exists, is active (`active` is not `false`) and its `surface`
//!   (`ask` when missing or empty) is the agent's `surface` (the same) or
//!   `both`, as the lint's `ai-skill-surface-mismatch` reads them. A skill an agent names more than once is one skill for it:
//!   its tools, and their dead references, are shown and counted once,
//!   under its first naming (a later naming shows only where that is);
//!   a problem of the naming itself (a missing, inactive or mismatched
//!   skill) is a dead reference at each place it is written.
//! - **Unattached skills**: skills no agent names. Upstream, the kernel's
//!   own agents (`ask` and `build`) pick skills up by surface; this view
//!   lists them under a pseudo-section so a stack without agents is still
//!   useful.
//! - A tool **needs approval** when its backing action needs confirmation
//!   ([`objectstack_spec::materialise::needs_confirmation`]): calls wait in
//!   the approval queue, and the tool exists only where that queue is wired.
//! - **Composed** ([`build_composed`]): each collection is read from every
//!   stack in order, as `lint --compose` reads them (stack-level actions of
//!   every file before the objects' actions), and every path is prefixed
//!   with its file (`b.json:skills[0]`).
//!
//! # Wildcards are summarised
//!
//! A wildcard is shown once, with the number of tools it matches
//! (`action_* → 90,000 tools`), in every format; [`RenderOptions::expand`]
//! lists the tools as well. Each distinct pattern is resolved once, to a
//! range of the tool names in sorted order, so a wildcard costs the same
//! whether it matches two tools or ninety thousand.
//!
//! # Dead references
//!
//! Each [`DeadReference`] has a stable [`DeadKind`] code:
//! `skill_missing` (an agent names a skill the stack does not define),
//! `skill_surface_mismatch`, `skill_inactive`, `tool_unresolved` (a tool
//! name that resolves to nothing), `action_not_materialised` (`action_x`
//! where action `x` exists but does not become a tool), `tool_superseded`
//! (`action_x` where a tool record binds `x`) and `wildcard_empty` (a
//! wildcard matching nothing). Dot and Mermaid draw them in red.
//!
//! # The JSON shape (stable, version 2)
//!
//! ```text
//! {
//!   "version": 2,
//!   "expandWildcards": false,        // whether wildcards list their tools
//!   "agents": [{
//!     "name": "support_desk", "label": "Support Desk" | null,
//!     "surface": "ask", "active": true, "path": "agents[0]",
//!     SECTION...
//!   }],
//!   "unattached": null | {SECTION...},
//!   "summary": {"agents": N, "skills": N, "tools": N,
//!               "needsApproval": N, "deadReferences": N}
//! }
//! SECTION = "skills": [SKILL...],
//!           "tools": [TOOL...],          // the tools named exactly, by name;
//!                                        // with expandWildcards, the whole
//!                                        // effective tool set
//!           "wildcards": [WILDCARD...],  // each distinct wildcard, by pattern
//!           "toolCount": N,              // the effective tool set's size
//!           "needsApproval": N,          // how many of those need approval
//!           "deadReferences": [DEAD...]
//! SKILL = {"name", "path",           // where it is named (agents[0].skills[1])
//!          "status": "attached" | "unattached" | "missing"
//!                  | "surface_mismatch" | "inactive",
//!          "definition": "skills[2]" | null, "label", "surface",
//!          "dead": DEAD | null,
//!          // [] when an earlier entry of the section names the same
//!          // skill (the same "definition"): its tools are listed there
//!          "tools": [{"ref", "path", "wildcard": bool,
//!                     "matches": N,  // tools it grants (0 when dead)
//!                     "resolves": ["tool name", ...]
//!                               | null,  // a wildcard, unless expanded
//!                     "dead": DEAD | null}]}
//! TOOL  = {"name", "source": "platform" | "record" | "action",
//!          "package": "service-ai" | null,   // platform tools
//!          "path": "tools[0]" | null,        // tool records
//!          "status": "ready" | "inert" | "binding_unresolved"
//!                  | CODE,  // a record the refinement predicate skips
//!                           // (binding_widens, binding_not_exposed, ...)
//!          "statusReason": string | null,
//!          "action": {"name", "object", "path"} | null,
//!          "flow": "flow name" | null,
//!          "needsApproval": bool, "approvalReason": "mode: delete" | null,
//!          "grantedBy": [{"skill", "ref"}]}  // exact references; with
//!                                            // expandWildcards, wildcards too
//! WILDCARD = {"ref": "action_*", "matches": N, "needsApproval": N,
//!             "skills": ["skill name", ...]}
//! DEAD  = {"kind", "ref", "path", "skill": "skill name" | null, "message",
//!          "suggestion": "name it probably meant" | null}
//! ```
//!
//! Summary counts cover what is shown: `tools` counts distinct tool names
//! over every section (through wildcards too), `skills` distinct skill
//! definitions. Version 1 (before wildcards were summarised) had no
//! `version`, `expandWildcards`, `wildcards`, `toolCount`, `needsApproval`
//! or `matches`, and always listed every tool a wildcard matched.
//!
//! When [`write_each`] shows several stacks one by one, the JSON is
//! `{"version": 2, "expandWildcards": bool, "files": [{"file": "a.json",
//! "agents", "unattached", "summary"}, ...]}`.
//!
//! # Cost
//!
//! With `R` tool references, `T` tools, `W` distinct wildcard patterns and
//! `D` the size of the document:
//!
//! - [`build`] is `O(D + R + T log T + W log T)`: each exact reference is a
//!   hash lookup, each distinct wildcard two binary searches over the sorted
//!   names; suggestions for dead references go through the lint's
//!   suggestion index (made and freed before the references are built). It
//!   keeps `O(R + T)` memory, 16 bytes a reference; nothing is expanded.
//! - A section's grants ([`Capabilities::grants`]) cost `O(S log S)` time
//!   and 8 bytes a reference for the `S` references of the skills it
//!   names: counts through wildcards come from merged ranges and a prefix
//!   sum of the tools that need approval. The summary works over the
//!   distinct skills shown, in a bit per tool.
//! - [`write()`] holds one section's grants at a time and writes straight to
//!   its writer. Summarised, its time and output are linear in the
//!   references each section shows (a skill named by many agents is shown
//!   under each); no count is multiplied by a wildcard's matches.
//!   Expanded, the output also has every tool of every section's effective
//!   set, which is the size of what was asked for.
//! - [`Capabilities::graph`] has one node per wildcard pattern; its edges to
//!   the tools it matches total at most the length of all tool names (a
//!   name has one prefix per character), and only expanded diagrams draw
//!   them. The diagrams do not build that graph: they lay out the same node
//!   order in a few 32-bit words per node and write each node's edges as
//!   they are found.
//!
//! On the 1,000,000-reference benchmark stack (61 MB), every format peaks
//! at 3.9 times the file (docs/performance.md has the figures).
//!
//! Invariant: building and rendering never panic, whatever the JSON.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;
use std::hash::BuildHasher as _;
use std::io;
use std::ops::Range;

use objectstack_spec::collection::Record;
use objectstack_spec::json::{Arena, Map, Value};
use objectstack_spec::materialise::refine::{self, Binding, RecordSkip};
use objectstack_spec::materialise::{self, ConfirmationReason, StaticSkip};
use objectstack_spec::path::JsonPath;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::stack::{Entry, Stack};
use crate::universe::Universe;

mod build;
mod diagram;
mod grants;
mod json;
mod text;
mod view;

use grants::merge;
use view::{Summary, View};

/// A fast hasher for names from the document: every table here is built
/// and read in one linear pass, so flooding resistance buys nothing.
type FastHash = foldhash::fast::RandomState;
type FastMap<K, V> = std::collections::HashMap<K, V, FastHash>;
type FastSet<K> = std::collections::HashSet<K, FastHash>;

/// The capability view of one stack (see the module docs). It borrows
/// names from the document it was built from.
#[derive(Debug, Clone)]
pub struct Capabilities<'a> {
    /// The agents, in document order.
    pub agents: Vec<Agent<'a>>,
    /// The skills no agent names, as skill references (status
    /// `unattached`, or `inactive` for an inactive skill).
    pub unattached: Vec<SkillRef<'a>>,
    /// Every skill, in document order.
    pub skills: Vec<Skill<'a>>,
    /// Every tool of the resolution universe, first name wins, in scan
    /// order (platform, tool records, stack actions, object actions).
    pub tools: Vec<Tool<'a>>,
    /// Every named action: stack-level first, then each object's.
    pub actions: Vec<Action<'a>>,
    /// Every distinct wildcard pattern a skill uses, in first-use order.
    pub wildcards: Vec<Wildcard<'a>>,
    /// Every dead tool reference of every skill, in document order.
    pub dead_references: Vec<DeadReference<'a>>,
    /// Tool indices in name order (byte order).
    by_name: Vec<usize>,
    /// `rank[tool]`: the tool's position in `by_name`.
    rank: Vec<usize>,
    /// `approvals_before[k]`: how many of `by_name[..k]` need approval.
    approvals_before: Vec<usize>,
}

/// One agent and the skills it names.
#[derive(Debug, Clone)]
pub struct Agent<'a> {
    /// The agent's name, or `#<i>` when it has none.
    pub name: Cow<'a, str>,
    /// The agent's `label`, when it is a string.
    pub label: Option<&'a str>,
    /// The product surface (`ask` when absent).
    pub surface: &'a str,
    /// Whether the agent is active (`active` is not `false`).
    pub active: bool,
    /// Where it is defined (`agents[0]`).
    pub path: String,
    /// Its skill references, in order.
    pub skills: Vec<SkillRef<'a>>,
}

/// A reference to a skill, and whether it binds.
#[derive(Debug, Clone)]
pub struct SkillRef<'a> {
    /// The name as written (or the skill's name, when unattached).
    pub name: Cow<'a, str>,
    /// Where it is written (`agents[0].skills[1]`), or the skill's own path.
    pub path: String,
    /// The index into [`Capabilities::skills`], when the skill exists.
    pub skill: Option<usize>,
    /// Whether it binds.
    pub status: SkillStatus,
    /// Why it is dead, when it is.
    pub dead: Option<Box<DeadReference<'a>>>,
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
pub struct Skill<'a> {
    /// The skill's name, or `#<i>` when it has none.
    pub name: Cow<'a, str>,
    /// The skill's `label`, when it is a string.
    pub label: Option<&'a str>,
    /// The skill's surface (`ask` when absent).
    pub surface: &'a str,
    /// Whether the skill is active (`active` is not `false`).
    pub active: bool,
    /// Where it is defined (`skills[2]`).
    pub path: String,
    /// Its tool references, in order.
    pub refs: Vec<ToolRef<'a>>,
    /// Its dead references, in [`Capabilities::dead_references`].
    dead: Range<usize>,
}

/// One entry of a skill's `tools`, resolved. Kept to 16 bytes: a large
/// stack has a million of them.
#[derive(Debug, Clone, Copy)]
pub struct ToolRef<'a> {
    /// The entry in the document (a string).
    entry: &'a Value<'a>,
    /// The entry's position in the skill's `tools`; the top bit says that
    /// an earlier entry of the same skill has the same text.
    index: u32,
    /// What it grants: the kind in the top two bits, an index below.
    slot: u32,
}

const REPEAT: u32 = 1 << 31;
const KIND: u32 = 0b11 << 30;
const TOOL: u32 = 0;
const WILDCARD: u32 = 1 << 30;
const DEAD: u32 = 2 << 30;

/// An index as stored in a [`ToolRef`] (30 bits; 31 for an entry's
/// position). The view cannot hold anywhere near 2^30 of anything (a
/// million references take 16 MB), so saturating is only a guard: an index
/// that does not fit finds nothing.
fn small(n: usize) -> u32 {
    u32::try_from(n).map_or(!KIND, |n| n.min(!KIND))
}

fn wide(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// What a tool reference grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// One tool (an index into [`Capabilities::tools`]).
    Tool(usize),
    /// Every tool a wildcard matches (an index into
    /// [`Capabilities::wildcards`]); it matches at least one.
    Wildcard(usize),
    /// Nothing; why is in [`Capabilities::dead_references`] at this index.
    Dead(usize),
}

impl<'a> ToolRef<'a> {
    fn new(entry: &'a Value<'a>, index: usize, repeat: bool, target: Target) -> Self {
        let slot = match target {
            Target::Tool(i) => TOOL | small(i),
            Target::Wildcard(i) => WILDCARD | small(i),
            Target::Dead(i) => DEAD | small(i),
        };
        let index = u32::try_from(index).map_or(!REPEAT, |i| i.min(!REPEAT));
        ToolRef {
            entry,
            index: if repeat { index | REPEAT } else { index },
            slot,
        }
    }

    /// The entry as written.
    pub fn text(&self) -> &'a str {
        self.entry.as_str().unwrap_or_default()
    }

    /// Its position in the skill's `tools` array (see [`ToolRef::path`]).
    pub fn index(&self) -> usize {
        wide(self.index & !REPEAT)
    }

    /// Whether an earlier entry of the same skill has the same text.
    fn repeat(&self) -> bool {
        self.index & REPEAT != 0
    }

    /// What it grants.
    pub fn target(&self) -> Target {
        let i = wide(self.slot & !KIND);
        match self.slot & KIND {
            TOOL => Target::Tool(i),
            WILDCARD => Target::Wildcard(i),
            _ => Target::Dead(i),
        }
    }

    /// Whether it is a family wildcard (trailing `*`).
    pub fn is_wildcard(&self) -> bool {
        self.text().ends_with('*')
    }

    /// Whether it grants nothing ([`Capabilities::dead_of`] says why).
    pub fn is_dead(&self) -> bool {
        matches!(self.target(), Target::Dead(_))
    }

    /// Where it is written (`skills[0].tools[3]`).
    pub fn path(&self, skill: &Skill<'_>) -> String {
        format!("{}.tools[{}]", skill.path, self.index())
    }
}

/// A wildcard pattern, resolved once however many skills use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wildcard<'a> {
    /// The pattern as written (`action_case_*`).
    pub pattern: &'a str,
    /// The tools it matches, as positions in name order (see
    /// [`Capabilities::wildcard_tools`]).
    pub matches: Range<usize>,
}

impl Wildcard<'_> {
    /// How many tools it matches.
    pub fn len(&self) -> usize {
        self.matches.len()
    }

    /// Whether it matches no tool.
    pub fn is_empty(&self) -> bool {
        self.matches.is_empty()
    }
}

/// A tool of the resolution universe.
#[derive(Debug, Clone)]
pub struct Tool<'a> {
    /// The tool name.
    pub name: Cow<'a, str>,
    /// Where the name comes from.
    pub source: ToolSource,
    /// Whether calling it would execute something.
    pub status: ToolStatus,
    /// The backing action, when there is one.
    pub action: Option<usize>,
    /// The bound flow, when the tool record binds one.
    pub flow: Option<&'a str>,
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
    /// A bound tool record the refinement predicate skips
    /// ([`objectstack_spec::materialise::refine::judge`]): not registered.
    NotRegistered {
        /// The predicate's code (`binding_widens`, `binding_not_exposed`,
        /// `shadows_platform`, ...).
        code: &'static str,
        /// Why.
        reason: String,
    },
}

impl ToolStatus {
    /// The stable code (`ready`, `inert`, `binding_unresolved`).
    pub fn code(&self) -> &'static str {
        match self {
            ToolStatus::Ready => "ready",
            ToolStatus::Inert => "inert",
            ToolStatus::BindingUnresolved(_) => "binding_unresolved",
            ToolStatus::NotRegistered { code, .. } => code,
        }
    }

    /// A sentence saying what is wrong, when something is.
    pub fn reason(&self) -> Option<&str> {
        match self {
            ToolStatus::Ready => None,
            ToolStatus::Inert => Some(
                "a tool record without a `binding` executes nothing; bind it to an action or \
                 flow, or name the action's `action_<name>` tool instead",
            ),
            ToolStatus::BindingUnresolved(why) => Some(why),
            ToolStatus::NotRegistered { reason, .. } => Some(reason),
        }
    }
}

/// A named action (stack-level or object-level).
#[derive(Debug, Clone)]
pub struct Action<'a> {
    /// The action name.
    pub name: &'a str,
    /// The action's `label`, when it is a string.
    pub label: Option<&'a str>,
    /// Its object: `objectName`, else the object it is declared in.
    pub object: Option<&'a str>,
    /// Why it does not materialise, or `None` when it does.
    pub skip: Option<Box<StaticSkip>>,
    /// Why it needs confirmation, when it does.
    pub approval: Option<ConfirmationReason>,
    /// Where it is (see [`Action::path`]): its file when composing, the
    /// index of its object, its own index.
    file: Option<&'a str>,
    owner: Option<u32>,
    index: u32,
}

impl Action<'_> {
    /// Where it is defined (`objects[0].actions[1]`, or `actions[2]` for a
    /// stack-level action).
    pub fn path(&self) -> String {
        let path = match self.owner {
            Some(o) => path_of("objects", wide(o)).key("actions"),
            None => JsonPath::root().key("actions"),
        };
        located(self.file, &path.index(wide(self.index)))
    }
}

/// A dead reference: a name that grants nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadReference<'a> {
    /// What kind of dead reference it is.
    pub kind: DeadKind,
    /// The name as written.
    pub reference: &'a str,
    /// Where it is written.
    pub path: String,
    /// The skill holding a dead tool reference.
    pub skill: Option<Cow<'a, str>>,
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
    /// `action_x` where a tool record binds action `x`: the refinement is
    /// registered instead (ADR-0109 Phase 2).
    ToolSuperseded,
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
            DeadKind::ToolSuperseded => "tool_superseded",
        }
    }
}

impl fmt::Display for DeadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// What a list of skill references adds up to (an agent's, or the
/// unattached skills'): see [`Capabilities::grants`].
#[derive(Debug, Clone)]
pub struct Grants<'c, 'a> {
    caps: &'c Capabilities<'a>,
    /// Where each granting skill's entries start in grant order, and the
    /// skill: a grant's place in grant order says which entry it is.
    spans: Vec<(u32, u32)>,
    /// The exact grants, by position in name order, then grant order.
    exact: Vec<Exact>,
    /// The wildcard grants, by first position, then grant order.
    wild: Vec<Granting>,
    /// Each distinct wildcard, in pattern order, with the skills using it.
    pub wildcards: Vec<EffectiveWildcard>,
    /// The size of the effective tool set (distinct tools, through
    /// wildcards too).
    pub tool_count: usize,
    /// How many tools of the effective set need approval.
    pub needs_approval: usize,
}

/// An exact grant: the tool's position in name order and its place in
/// grant order (8 bytes: a section can have a million).
#[derive(Debug, Clone, Copy)]
struct Exact {
    position: u32,
    seq: u32,
}

/// A wildcard grant: the positions in name order it grants and its place
/// in grant order.
#[derive(Debug, Clone, Copy)]
struct Granting {
    start: u32,
    end: u32,
    seq: u32,
}

impl Granting {
    fn range(&self) -> Range<usize> {
        wide(self.start)..wide(self.end)
    }
}

/// A tool in an effective tool set, and the references that grant it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveTool<'a> {
    /// The index into [`Capabilities::tools`].
    pub tool: usize,
    /// The skill references that grant it, in order.
    pub granted_by: Vec<Grant<'a>>,
}

/// One skill reference granting a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant<'a> {
    /// The index into [`Capabilities::skills`].
    pub skill: usize,
    /// The entry of the skill's `tools` that grants it (a name or a
    /// wildcard).
    pub reference: &'a str,
}

/// A wildcard in an effective tool set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveWildcard {
    /// The index into [`Capabilities::wildcards`].
    pub wildcard: usize,
    /// The skills that use it (indices into [`Capabilities::skills`]), in
    /// order.
    pub skills: Vec<usize>,
    /// How many of the tools it matches need approval.
    pub needs_approval: usize,
}

/// A node of the capability graph; indices point into [`Capabilities`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node<'a> {
    /// An agent ([`Capabilities::agents`]).
    Agent(usize),
    /// A skill ([`Capabilities::skills`]).
    Skill(usize),
    /// A wildcard pattern ([`Capabilities::wildcards`]), shared by every
    /// skill that uses it.
    Wildcard(usize),
    /// A tool ([`Capabilities::tools`]).
    Tool(usize),
    /// An action ([`Capabilities::actions`]).
    Action(usize),
    /// A flow a tool record binds, by name.
    Flow(&'a str),
    /// An object, by name.
    Object(&'a str),
    /// A dead reference: the name as written and why it is dead.
    Dead {
        /// The kind of dead reference.
        kind: DeadKind,
        /// The name as written.
        reference: &'a str,
        /// The name it probably meant, if any.
        suggestion: Option<&'a str>,
    },
}

/// An edge of the capability graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// Agent to skill; dead unless the status binds.
    Uses(SkillStatus),
    /// Skill to a tool it names, or to a wildcard it uses.
    Grants,
    /// Wildcard to a tool it matches (drawn only when expanded).
    Matches,
    /// Materialised tool to the action it runs.
    Runs,
    /// Tool record to the action or flow its binding names.
    Binds,
    /// Action to its object.
    On,
    /// Agent or skill to a dead reference node.
    Dead,
}

/// Output formats of [`write()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// A readable tree per agent. Anything a terminal would act on
    /// (control characters, newlines, bidi overrides) in a name is written
    /// as a `\u` escape.
    #[default]
    Text,
    /// The stable JSON shape of the module docs.
    Json,
    /// Graphviz dot.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
}

/// What [`write()`] prints.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// The output format.
    pub format: Format,
    /// Show only this agent (by name); `None` shows every agent and the
    /// unattached skills.
    pub agent: Option<String>,
    /// List every tool a wildcard matches, not only how many.
    pub expand: bool,
}

/// Errors of [`write()`] and [`render`].
#[derive(Debug, thiserror::Error)]
pub enum CapabilitiesError {
    /// `--agent` names no agent of the stack.
    #[error("no agent named \"{name}\" in this stack; {}", known_agents(.known))]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents the stack defines, in order.
        known: Vec<String>,
    },
    /// The writer failed.
    #[error("cannot write the capability view: {0}")]
    Write(#[from] io::Error),
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
/// Map-shaped collections are read into `arena`.
pub fn build<'a>(stack: &'a Map<'a>, arena: &'a Arena) -> Capabilities<'a> {
    build::Builder::new(vec![None], Stack::new(&[stack], arena)).build()
}

/// Reads several stacks as their composition (see the module docs): a
/// skill in one file may name an action of another. With more than one
/// source, every path starts with its source's `file` and a colon.
pub fn build_composed<'a>(sources: &[crate::Source<'a>], arena: &'a Arena) -> Capabilities<'a> {
    let many = sources.len() > 1;
    let files = sources.iter().map(|s| many.then_some(s.file)).collect();
    let roots: Vec<&'a Map<'a>> = sources.iter().map(|s| s.root).collect();
    build::Builder::new(files, Stack::new(&roots, arena)).build()
}

/// Streams the capability view in the chosen format to `out`.
///
/// Fails when `options.agent` names no agent (before anything is written)
/// or when `out` fails.
pub fn write<W: io::Write>(
    caps: &Capabilities<'_>,
    options: &RenderOptions,
    out: W,
) -> Result<(), CapabilitiesError> {
    let view = View::select(caps, options)?;
    match options.format {
        Format::Text => text::write(&view, out)?,
        Format::Json => json::write(json::Shape::One(&view), options.expand, out)?,
        Format::Dot => diagram::dot(&[(None, &view)], out)?,
        Format::Mermaid => diagram::mermaid(&[(None, &view)], out)?,
    }
    Ok(())
}

/// Streams the capability views of several stacks, one after the other,
/// each under its file name: text views under a `== FILE ==` line, JSON as
/// one document with a `files` array (see the module docs), and diagrams as
/// one graph with a cluster (dot) or subgraph (Mermaid) per file.
///
/// With `options.agent`, only the stacks that define that agent are shown;
/// it fails when none does.
pub fn write_each<W: io::Write>(
    views: &[(&str, &Capabilities<'_>)],
    options: &RenderOptions,
    mut out: W,
) -> Result<(), CapabilitiesError> {
    let mut selected = Vec::new();
    for (file, caps) in views {
        if let Some(name) = &options.agent
            && caps.agent(name).is_none()
        {
            continue;
        }
        selected.push((*file, View::select(caps, options)?));
    }
    if selected.is_empty()
        && let Some(name) = &options.agent
    {
        let known = views
            .iter()
            .flat_map(|(_, c)| c.agents.iter().map(|a| a.name.clone().into_owned()))
            .collect();
        return Err(CapabilitiesError::UnknownAgent {
            name: name.clone(),
            known,
        });
    }
    match options.format {
        Format::Text => {
            for (i, (file, view)) in selected.iter().enumerate() {
                if i > 0 {
                    out.write_all(b"\n")?;
                }
                let mut line = String::new();
                text::escape_into(&mut line, &format!("== {file} =="));
                line.push_str("\n\n");
                out.write_all(line.as_bytes())?;
                text::write(view, &mut out)?;
            }
        }
        Format::Json => {
            let files: Vec<(&str, &View<'_, '_>)> = selected.iter().map(|(f, v)| (*f, v)).collect();
            json::write(json::Shape::Each(&files), options.expand, out)?;
        }
        Format::Dot | Format::Mermaid => {
            let views: Vec<(Option<&str>, &View<'_, '_>)> =
                selected.iter().map(|(f, v)| (Some(*f), v)).collect();
            if options.format == Format::Dot {
                diagram::dot(&views, out)?;
            } else {
                diagram::mermaid(&views, out)?;
            }
        }
    }
    Ok(())
}

/// [`write()`] into a `String`.
pub fn render(
    caps: &Capabilities<'_>,
    options: &RenderOptions,
) -> Result<String, CapabilitiesError> {
    let mut out = Vec::new();
    write(caps, options, &mut out)?;
    // Every writer writes UTF-8 text.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

impl<'a> Capabilities<'a> {
    /// The first agent with this name.
    pub fn agent(&self, name: &str) -> Option<&Agent<'a>> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// A tool by name (a linear scan).
    pub fn tool(&self, name: &str) -> Option<&Tool<'a>> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The tools a wildcard matches (indices into [`Capabilities::tools`]),
    /// in name order.
    pub fn wildcard_tools(&self, wildcard: &Wildcard<'_>) -> impl Iterator<Item = usize> + '_ {
        self.by_name
            .get(wildcard.matches.clone())
            .unwrap_or_default()
            .iter()
            .copied()
    }

    /// The tools a reference grants (indices into
    /// [`Capabilities::tools`]): one, a wildcard's matches in name order,
    /// or none.
    pub fn resolves<'s>(&'s self, r: &ToolRef<'_>) -> impl Iterator<Item = usize> + 's {
        let range = self.range_of(r).unwrap_or(0..0);
        self.by_name.get(range).unwrap_or_default().iter().copied()
    }

    /// How many tools a reference grants.
    pub fn matches(&self, r: &ToolRef<'_>) -> usize {
        self.range_of(r).map_or(0, |r| r.len())
    }

    /// Why a reference grants nothing, when it does not.
    pub fn dead_of(&self, r: &ToolRef<'_>) -> Option<&DeadReference<'a>> {
        match r.target() {
            Target::Dead(i) => self.dead_references.get(i),
            _ => None,
        }
    }

    /// The positions in name order a reference grants.
    fn range_of(&self, r: &ToolRef<'_>) -> Option<Range<usize>> {
        match r.target() {
            Target::Tool(t) => self.rank.get(t).map(|&k| k..k + 1),
            Target::Wildcard(w) => self.wildcards.get(w).map(|w| w.matches.clone()),
            Target::Dead(_) => None,
        }
    }

    /// How many tools at these positions in name order need approval.
    fn approvals_in(&self, range: &Range<usize>) -> usize {
        let at = |k: usize| self.approvals_before.get(k).copied().unwrap_or(0);
        at(range.end).saturating_sub(at(range.start))
    }

    /// The tool at a position in name order.
    fn tool_at(&self, position: usize) -> Option<usize> {
        self.by_name.get(position).copied()
    }

    /// Adds up a list of skill references (an agent's
    /// [`Agent::skills`], or [`Capabilities::unattached`]): the tools
    /// named exactly, the wildcards, and the size of the effective tool
    /// set and how many of it need approval. A skill's tools count only
    /// when its status grants them; a (skill, entry text) pair counts once.
    ///
    /// `O(S log S)` time and `O(S)` memory (16 bytes each) for the `S`
    /// references of the named skills; nothing is expanded
    /// ([`Grants::expanded`] does that, one tool at a time).
    pub fn grants<'c>(&'c self, skills: &[SkillRef<'a>]) -> Grants<'c, 'a> {
        let mut seen: FastSet<usize> = FastSet::default();
        let mut spans: Vec<(u32, u32)> = Vec::new();
        let mut exact: Vec<Exact> = Vec::new();
        let mut wild: Vec<Granting> = Vec::new();
        let mut wildcard_ids: Vec<(usize, usize)> = Vec::new();
        let mut next = 0u32;
        for skill_ref in skills {
            if !skill_ref.status.grants_tools() {
                continue;
            }
            let Some((index, skill)) = skill_ref
                .skill
                .and_then(|i| self.skills.get(i).map(|s| (i, s)))
            else {
                continue;
            };
            // A skill named twice grants nothing more.
            if !seen.insert(index) {
                continue;
            }
            spans.push((next, small(index)));
            for (j, r) in skill.refs.iter().enumerate() {
                let seq = next.saturating_add(small(j));
                if r.repeat() {
                    continue;
                }
                let Some(range) = self.range_of(r) else {
                    continue;
                };
                match r.target() {
                    Target::Tool(_) => exact.push(Exact {
                        position: small(range.start),
                        seq,
                    }),
                    Target::Wildcard(w) => {
                        wildcard_ids.push((w, index));
                        wild.push(Granting {
                            start: small(range.start),
                            end: small(range.end),
                            seq,
                        });
                    }
                    Target::Dead(_) => {}
                }
            }
            next = next.saturating_add(small(skill.refs.len()));
        }
        // In place: no scratch room for a million entries.
        exact.sort_unstable_by_key(|e| (e.position, e.seq));
        wild.sort_unstable_by_key(|g| (g.start, g.seq));

        // Each distinct wildcard once, by pattern, its skills in order.
        wildcard_ids.sort_by(|a, b| {
            let pattern = |w: usize| self.wildcards.get(w).map_or("", |w| w.pattern);
            pattern(a.0).cmp(pattern(b.0))
        });
        let mut wildcards: Vec<EffectiveWildcard> = Vec::new();
        for (w, skill) in wildcard_ids {
            match wildcards.last_mut() {
                Some(e) if e.wildcard == w => {
                    if !e.skills.contains(&skill) {
                        e.skills.push(skill);
                    }
                }
                _ => wildcards.push(EffectiveWildcard {
                    wildcard: w,
                    skills: vec![skill],
                    needs_approval: self
                        .wildcards
                        .get(w)
                        .map_or(0, |w| self.approvals_in(&w.matches)),
                }),
            }
        }
        let ranges = wildcards
            .iter()
            .filter_map(|w| self.wildcards.get(w.wildcard))
            .map(|w| w.matches.clone())
            .collect();
        let mut positions = exact.iter().map(|e| wide(e.position)).peekable();
        let (tool_count, needs_approval) = self.union(merge(ranges), &mut positions);
        Grants {
            caps: self,
            spans,
            exact,
            wild,
            wildcards,
            tool_count,
            needs_approval,
        }
    }

    /// The size of the union of disjoint sorted `ranges` and sorted
    /// `positions`, and how many of it need approval.
    fn union(
        &self,
        ranges: Vec<Range<usize>>,
        positions: &mut dyn Iterator<Item = usize>,
    ) -> (usize, usize) {
        let mut count: usize = ranges.iter().map(Range::len).sum();
        let mut approvals: usize = ranges.iter().map(|r| self.approvals_in(r)).sum();
        let mut covering = ranges.iter().peekable();
        let mut last = None;
        for position in positions {
            if last == Some(position) {
                continue;
            }
            last = Some(position);
            while covering.next_if(|r| r.end <= position).is_some() {}
            if covering.peek().is_some_and(|r| r.start <= position) {
                continue;
            }
            count += 1;
            approvals += self.approvals_in(&(position..position + 1));
        }
        (count, approvals)
    }

    /// The dead references of a skill, in order.
    pub fn skill_dead(&self, skill: &Skill<'_>) -> &[DeadReference<'a>] {
        self.dead_references
            .get(skill.dead.clone())
            .unwrap_or_default()
    }

    /// The dead references of a list of skill references, in order: each
    /// reference's own, then those of the skill it names (whatever its
    /// status). A skill named more than once is one skill for the list:
    /// its tool references are listed once, after its first naming; each
    /// naming's own dead reference (where it is written) is listed.
    pub fn dead<'s>(
        &'s self,
        skills: &'s [SkillRef<'a>],
    ) -> impl Iterator<Item = &'s DeadReference<'a>> + 's {
        let mut seen: FastSet<usize> = FastSet::default();
        skills.iter().flat_map(move |skill_ref| {
            let own = skill_ref.dead.as_deref();
            let of_skill = skill_ref
                .skill
                .filter(|&i| seen.insert(i))
                .and_then(|i| self.skills.get(i))
                .map(|s| self.skill_dead(s))
                .unwrap_or_default();
            own.into_iter().chain(of_skill)
        })
    }
}

/// For each of a list of skill references, the earlier one that names the
/// same skill, if any (an index into the list): a skill named twice is one
/// skill for the agent, its tools shown and counted under its first naming.
pub(super) fn earlier_namings(skills: &[SkillRef<'_>]) -> Vec<Option<usize>> {
    let mut first: FastMap<usize, usize> = FastMap::default();
    skills
        .iter()
        .enumerate()
        .map(|(j, r)| {
            r.skill
                .map(|i| *first.entry(i).or_insert(j))
                .filter(|&k| k != j)
        })
        .collect()
}

impl<'a> Capabilities<'a> {
    /// The capability graph: agents, skills, wildcards and whatever their
    /// references reach, in the order the skills and then the agents are
    /// read (the order the diagrams number their nodes in, agents first).
    /// Each wildcard pattern is one node, linked to the tools it matches by
    /// [`Edge::Matches`]; a tool reached only that way is drawn only in an
    /// expanded diagram. Node `i` is the `i`-th created; an agent's or a
    /// skill's repeated reference adds no second edge.
    ///
    /// The diagrams do not build it: they lay out the same order in a few
    /// words per node.
    pub fn graph(&self) -> DiGraph<Node<'_>, Edge> {
        let order = diagram::Order::new(self);
        let mut graph = DiGraph::with_capacity(order.items.len(), order.items.len());
        for &item in &order.items {
            graph.add_node(order.node(self, item));
        }
        let mut edges = Vec::new();
        for (n, &item) in order.items.iter().enumerate() {
            order.edges(self, item, &mut edges);
            for &(to, edge) in &edges {
                graph.add_edge(NodeIndex::new(n), NodeIndex::new(to), edge);
            }
        }
        graph
    }
}

/// A path in one input, prefixed with its file when composing.
fn located(file: Option<&str>, path: &JsonPath) -> String {
    match file {
        Some(f) => format!("{f}:{path}"),
        None => path.to_string(),
    }
}

fn path_of(collection: &str, index: usize) -> JsonPath {
    JsonPath::root().key(collection).index(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(v: serde_json::Value) -> Capabilities<'static> {
        let arena: &'static Arena = Box::leak(Box::default());
        build(crate::testing::doc(v), arena)
    }

    fn tool_names(caps: &Capabilities<'_>, skills: &[SkillRef<'_>]) -> Vec<String> {
        caps.grants(skills)
            .expanded()
            .map(|t| caps.tools[t.tool].name.to_string())
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
        assert_eq!(c.matches(&c.skills[0].refs[0]), c.tools.len());
        assert_eq!(c.grants(&c.unattached).tool_count, c.tools.len());
        assert_eq!(tool_names(&c, &c.unattached).len(), c.tools.len());
    }

    #[test]
    fn non_array_tools_and_non_string_refs_are_skipped() {
        let c = caps(json!({"skills": [
            {"name": "a", "tools": "query_data"},
            {"name": "b", "tools": [null, 3, "", "query_data"]}
        ]}));
        assert!(c.skills[0].refs.is_empty());
        assert_eq!(c.skills[1].refs.len(), 1);
        assert_eq!(c.skills[1].refs[0].path(&c.skills[1]), "skills[1].tools[3]");
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
                {"name": "bound_flow", "binding": {"type": "flow", "name": "nightly"},
                 "description": "Runs the nightly clean-up of stale carts and old sessions."},
                {"name": "short_flow", "binding": {"type": "flow", "name": "nightly"}},
                {"name": "bad_flow", "binding": {"type": "flow", "name": "nope"}},
                {"name": "bad_kind", "binding": {"type": "job", "name": "ship"}},
                {"name": "bad_shape", "binding": "ship"}
            ]
        }));
        assert_eq!(c.tool("inert_tool").unwrap().status, ToolStatus::Inert);
        assert_eq!(c.tool("bound").unwrap().status, ToolStatus::Ready);
        assert_eq!(c.tool("bound").unwrap().action, Some(0));
        assert_eq!(c.tool("bound_flow").unwrap().status, ToolStatus::Ready);
        // A flow's record is its opt-in: without a description it is not
        // registered.
        assert_eq!(
            c.tool("short_flow").unwrap().status.code(),
            "missing_description"
        );
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
        let g = c.graph();
        let kinds: Vec<&Node<'_>> = g.node_weights().collect();
        assert!(kinds.contains(&&Node::Object("order")));
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
        assert_eq!(g.node_count(), 5);
    }

    #[test]
    fn a_reference_is_sixteen_bytes_and_keeps_its_parts() {
        assert_eq!(std::mem::size_of::<ToolRef<'_>>(), 16);
        let entry = Value::String("x*");
        for target in [Target::Tool(7), Target::Wildcard(0), Target::Dead(1 << 29)] {
            for repeat in [false, true] {
                let r = ToolRef::new(&entry, 41, repeat, target);
                assert_eq!(
                    (r.target(), r.index(), r.repeat(), r.text()),
                    (target, 41, repeat, "x*")
                );
            }
        }
        // Out of range: saturated, so it finds nothing rather than
        // something else.
        let r = ToolRef::new(&entry, usize::MAX, false, Target::Tool(usize::MAX));
        assert_eq!(r.target(), Target::Tool((1 << 30) - 1));
        assert_eq!(r.index(), (1 << 31) - 1);
    }

    #[test]
    fn merge_joins_overlapping_and_touching_ranges() {
        assert_eq!(merge(vec![5..7, 0..2, 1..3, 3..4, 9..9]), vec![0..4, 5..7]);
    }

    #[test]
    fn the_sweep_lists_every_grant_in_order() {
        let c = caps(json!({"skills": [
            {"name": "a", "tools": ["query_*", "query_data", "query_*"]},
            {"name": "b", "tools": ["query_data", "q*"]}
        ]}));
        let grants = c.grants(&c.unattached);
        let expanded: Vec<(String, Vec<(usize, &str)>)> = grants
            .expanded()
            .map(|t| {
                (
                    c.tools[t.tool].name.to_string(),
                    t.granted_by
                        .iter()
                        .map(|g| (g.skill, g.reference))
                        .collect(),
                )
            })
            .collect();
        let query: Vec<&str> = c
            .tools
            .iter()
            .map(|t| t.name.as_ref())
            .filter(|n| n.starts_with('q'))
            .collect();
        assert_eq!(expanded.len(), query.len());
        let data = expanded.iter().find(|(n, _)| n == "query_data").unwrap();
        assert_eq!(
            data.1,
            [
                (0, "query_*"),
                (0, "query_data"),
                (1, "query_data"),
                (1, "q*")
            ]
        );
        assert_eq!(grants.tool_count, query.len());
        assert_eq!(grants.wildcards.len(), 2);
        assert_eq!(grants.named_count(), 1);
        assert_eq!(grants.named().next().unwrap().granted_by.len(), 2);
    }
}
