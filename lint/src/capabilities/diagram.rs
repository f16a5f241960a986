//! The graph formats: Graphviz dot and Mermaid flowcharts, and the order
//! of the nodes [`Capabilities::graph`] and both formats share.
//!
//! Both draw the nodes of the [`View`] (every node, or those reachable
//! from the chosen agent) with ids `n0, n1, ...`, agents first, then in
//! the order the graph creates them, so the output is deterministic and
//! names never need to be identifiers. A wildcard is one node with its
//! count; its edges to the tools it matches (and the tools reached only
//! through them) are drawn only when expanded. Dead references and the
//! edges to them are red and dashed; tools that need approval (and
//! wildcards matching any) are orange with a thick border; inert or
//! unbound tool records are dashed and grey. Several views share one
//! graph, each in a cluster (dot) or subgraph (Mermaid) named by its file,
//! with ids numbered on across them.
//!
//! The drawing is laid out from the view itself, a few 32-bit words per
//! node, and edges are written as they are found: a stack with a million
//! references draws without a million-edge graph in memory.

use std::fmt::Write as _;
use std::io;

use super::{
    Capabilities, DeadKind, Edge, FastMap, Node, SkillStatus, Target, ToolSource, ToolStatus, View,
    small, wide,
};

/// A node, by what it stands for (indices into [`Capabilities`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Item {
    Agent(u32),
    Skill(u32),
    Wildcard(u32),
    Tool(u32),
    Action(u32),
    /// An index into [`Order::flows`].
    Flow(u32),
    /// An index into [`Order::objects`].
    Object(u32),
    /// A dead tool reference ([`Capabilities::dead_references`]).
    DeadRef(u32),
    /// An agent's reference to a missing skill: the agent, the entry of
    /// its `skills`.
    DeadSkill(u32, u32),
}

const NONE: u32 = u32::MAX;

/// Every node in creation order: each skill, then what its references
/// reach as they are first reached (a wildcard's matches right after it),
/// then each agent and its missing skills.
pub(super) struct Order<'c> {
    pub(super) items: Vec<Item>,
    tools: Vec<u32>,
    actions: Vec<u32>,
    wildcards: Vec<u32>,
    skills: Vec<u32>,
    agents: Vec<u32>,
    dead: Vec<u32>,
    /// Where each agent's entries start in `dead_skills`.
    agent_refs: Vec<u32>,
    dead_skills: Vec<u32>,
    /// Each flow and object by name, with its creation index.
    flows: Vec<(&'c str, u32)>,
    objects: Vec<(&'c str, u32)>,
    flow_ids: FastMap<&'c str, u32>,
    object_ids: FastMap<&'c str, u32>,
}

fn slot(v: &[u32], i: usize) -> Option<usize> {
    v.get(i).copied().filter(|&n| n != NONE).map(wide)
}

impl<'c> Order<'c> {
    pub(super) fn new(caps: &'c Capabilities<'_>) -> Self {
        let named: usize = caps.agents.iter().map(|a| a.skills.len()).sum();
        let mut order = Order {
            items: Vec::new(),
            tools: vec![NONE; caps.tools.len()],
            actions: vec![NONE; caps.actions.len()],
            wildcards: vec![NONE; caps.wildcards.len()],
            skills: vec![NONE; caps.skills.len()],
            agents: vec![NONE; caps.agents.len()],
            dead: vec![NONE; caps.dead_references.len()],
            agent_refs: Vec::with_capacity(caps.agents.len() + 1),
            dead_skills: vec![NONE; named],
            flows: Vec::new(),
            objects: Vec::new(),
            flow_ids: FastMap::default(),
            object_ids: FastMap::default(),
        };
        for (i, skill) in caps.skills.iter().enumerate() {
            order.add(Item::Skill(small(i)), |o| &mut o.skills, i);
            for r in &skill.refs {
                match r.target() {
                    Target::Dead(d) => {
                        order.add(Item::DeadRef(small(d)), |o| &mut o.dead, d);
                    }
                    Target::Tool(t) => order.tool(caps, t),
                    Target::Wildcard(w) => {
                        if order.add(Item::Wildcard(small(w)), |o| &mut o.wildcards, w)
                            && let Some(wildcard) = caps.wildcards.get(w)
                        {
                            for t in caps.wildcard_tools(wildcard) {
                                order.tool(caps, t);
                            }
                        }
                    }
                }
            }
        }
        let mut at = 0usize;
        for (a, agent) in caps.agents.iter().enumerate() {
            order.agent_refs.push(small(at));
            order.add(Item::Agent(small(a)), |o| &mut o.agents, a);
            for (j, skill_ref) in agent.skills.iter().enumerate() {
                if skill_ref.skill.is_none() {
                    let item = Item::DeadSkill(small(a), small(j));
                    order.add(item, |o| &mut o.dead_skills, at + j);
                }
            }
            at += agent.skills.len();
        }
        order.agent_refs.push(small(at));
        order
    }

    /// Adds a node unless `slots[i]` has one; whether it was added.
    fn add(&mut self, item: Item, slots: fn(&mut Self) -> &mut Vec<u32>, i: usize) -> bool {
        let next = small(self.items.len());
        match slots(self).get_mut(i) {
            Some(s) if *s == NONE => *s = next,
            _ => return false,
        }
        self.items.push(item);
        true
    }

    fn tool(&mut self, caps: &'c Capabilities<'_>, t: usize) {
        if !self.add(Item::Tool(small(t)), |o| &mut o.tools, t) {
            return;
        }
        let Some(tool) = caps.tools.get(t) else {
            return;
        };
        if let Some(a) = tool.action {
            if self.add(Item::Action(small(a)), |o| &mut o.actions, a)
                && let Some(object) = caps.actions.get(a).and_then(|a| a.object)
                && !self.object_ids.contains_key(object)
            {
                let id = small(self.objects.len());
                self.objects.push((object, small(self.items.len())));
                self.object_ids.insert(object, id);
                self.items.push(Item::Object(id));
            }
        } else if let Some(flow) = tool.flow
            && !self.flow_ids.contains_key(flow)
        {
            let id = small(self.flows.len());
            self.flows.push((flow, small(self.items.len())));
            self.flow_ids.insert(flow, id);
            self.items.push(Item::Flow(id));
        }
    }

    /// The creation index of a node.
    fn index(&self, item: Item) -> Option<usize> {
        let w = |n: u32| wide(n);
        match item {
            Item::Agent(i) => slot(&self.agents, w(i)),
            Item::Skill(i) => slot(&self.skills, w(i)),
            Item::Wildcard(i) => slot(&self.wildcards, w(i)),
            Item::Tool(i) => slot(&self.tools, w(i)),
            Item::Action(i) => slot(&self.actions, w(i)),
            Item::DeadRef(i) => slot(&self.dead, w(i)),
            Item::DeadSkill(a, j) => {
                let start = self.agent_refs.get(w(a)).copied().map(wide)?;
                slot(&self.dead_skills, start + w(j))
            }
            Item::Flow(i) => self.flows.get(w(i)).map(|&(_, n)| wide(n)),
            Item::Object(i) => self.objects.get(w(i)).map(|&(_, n)| wide(n)),
        }
    }

    /// The edges out of a node, as (target creation index, edge), in the
    /// order the graph adds them; an agent's or skill's repeats dropped.
    pub(super) fn edges(&self, caps: &Capabilities<'_>, item: Item, out: &mut Vec<(usize, Edge)>) {
        out.clear();
        match item {
            Item::Agent(a) => {
                let Some(agent) = caps.agents.get(wide(a)) else {
                    return;
                };
                for (j, skill_ref) in agent.skills.iter().enumerate() {
                    let target = match skill_ref.skill {
                        Some(s) => slot(&self.skills, s),
                        None => self.index(Item::DeadSkill(a, small(j))),
                    };
                    let edge = match skill_ref.status {
                        SkillStatus::Missing => Edge::Dead,
                        status => Edge::Uses(status),
                    };
                    out.extend(target.map(|t| (t, edge)));
                }
            }
            Item::Skill(s) => {
                let Some(skill) = caps.skills.get(wide(s)) else {
                    return;
                };
                for r in &skill.refs {
                    let target = match r.target() {
                        Target::Dead(d) => slot(&self.dead, d).map(|t| (t, Edge::Dead)),
                        Target::Tool(t) => slot(&self.tools, t).map(|t| (t, Edge::Grants)),
                        Target::Wildcard(w) => slot(&self.wildcards, w).map(|t| (t, Edge::Grants)),
                    };
                    out.extend(target);
                }
            }
            Item::Wildcard(w) => {
                if let Some(wildcard) = caps.wildcards.get(wide(w)) {
                    out.extend(
                        caps.wildcard_tools(wildcard)
                            .filter_map(|t| slot(&self.tools, t))
                            .map(|t| (t, Edge::Matches)),
                    );
                }
            }
            Item::Tool(t) => {
                let Some(tool) = caps.tools.get(wide(t)) else {
                    return;
                };
                let link = if tool.source == ToolSource::Action {
                    Edge::Runs
                } else {
                    Edge::Binds
                };
                if let Some(a) = tool.action {
                    out.extend(slot(&self.actions, a).map(|n| (n, link)));
                } else if let Some(flow) = tool.flow
                    && let Some(&id) = self.flow_ids.get(flow)
                {
                    out.extend(self.index(Item::Flow(id)).map(|n| (n, link)));
                }
            }
            Item::Action(a) => {
                let object = caps.actions.get(wide(a)).and_then(|a| a.object);
                if let Some(&id) = object.and_then(|o| self.object_ids.get(o)) {
                    out.extend(self.index(Item::Object(id)).map(|n| (n, Edge::On)));
                }
            }
            Item::Flow(_) | Item::Object(_) | Item::DeadRef(_) | Item::DeadSkill(..) => {}
        }
        // A repeated target keeps its first edge.
        if out.len() > 1 {
            let mut seen: super::FastSet<usize> = super::FastSet::default();
            out.retain(|&(t, _)| seen.insert(t));
        }
    }

    /// The node as [`Capabilities::graph`] has it.
    pub(super) fn node(&self, caps: &'c Capabilities<'_>, item: Item) -> Node<'c> {
        match item {
            Item::Agent(i) => Node::Agent(wide(i)),
            Item::Skill(i) => Node::Skill(wide(i)),
            Item::Wildcard(i) => Node::Wildcard(wide(i)),
            Item::Tool(i) => Node::Tool(wide(i)),
            Item::Action(i) => Node::Action(wide(i)),
            Item::Flow(i) => Node::Flow(self.flows.get(wide(i)).map_or("", |&(f, _)| f)),
            Item::Object(i) => Node::Object(self.objects.get(wide(i)).map_or("", |&(o, _)| o)),
            Item::DeadRef(d) => {
                let dead = caps.dead_references.get(wide(d));
                Node::Dead {
                    kind: dead.map_or(DeadKind::ToolUnresolved, |d| d.kind),
                    reference: dead.map_or("", |d| d.reference),
                    suggestion: dead.and_then(|d| d.suggestion.as_deref()),
                }
            }
            Item::DeadSkill(a, j) => {
                let skill_ref = caps
                    .agents
                    .get(wide(a))
                    .and_then(|agent| agent.skills.get(wide(j)));
                Node::Dead {
                    kind: DeadKind::SkillMissing,
                    reference: skill_ref.map_or("", |r| r.name.as_ref()),
                    suggestion: skill_ref
                        .and_then(|r| r.dead.as_ref())
                        .and_then(|d| d.suggestion.as_deref()),
                }
            }
        }
    }
}

/// How a node is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Plain,
    Approval,
    Dead,
    Inert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Agent,
    Skill,
    Wildcard,
    Tool,
    Action,
    Flow,
    Object,
    Dead,
}

/// A node ready to draw: lines of its label, shape and mark.
struct Drawn {
    lines: Vec<String>,
    shape: Shape,
    mark: Mark,
}

fn draw(caps: &Capabilities<'_>, unattached: &[bool], node: &Node<'_>) -> Drawn {
    let mut mark = Mark::Plain;
    let (shape, lines) = match node {
        Node::Agent(i) => {
            let mut lines = vec!["agent".to_owned()];
            if let Some(a) = caps.agents.get(*i) {
                lines.push(a.name.to_string());
                if !a.active {
                    lines.push("inactive".to_owned());
                    mark = Mark::Inert;
                }
            }
            (Shape::Agent, lines)
        }
        Node::Skill(i) => {
            let mut lines = vec!["skill".to_owned()];
            if let Some(s) = caps.skills.get(*i) {
                lines.push(s.name.to_string());
                if !s.active {
                    lines.push("inactive".to_owned());
                    mark = Mark::Inert;
                } else if unattached.get(*i).copied().unwrap_or(false) {
                    lines.push("unattached".to_owned());
                }
            }
            (Shape::Skill, lines)
        }
        Node::Wildcard(i) => {
            let mut lines = vec!["wildcard".to_owned()];
            if let Some(w) = caps.wildcards.get(*i) {
                lines.push(w.pattern.to_owned());
                let n = w.len();
                lines.push(format!("{n} {}", if n == 1 { "tool" } else { "tools" }));
                let approvals = caps.approvals_in(&w.matches);
                if approvals > 0 {
                    lines.push(format!(
                        "{approvals} {} approval",
                        if approvals == 1 { "needs" } else { "need" }
                    ));
                    mark = Mark::Approval;
                }
            }
            (Shape::Wildcard, lines)
        }
        Node::Tool(i) => {
            let mut lines = Vec::new();
            if let Some(t) = caps.tools.get(*i) {
                lines.push(match &t.source {
                    ToolSource::Platform { package } => format!("platform tool ({package})"),
                    ToolSource::Record { .. } => "tool record".to_owned(),
                    ToolSource::Action => "action tool".to_owned(),
                });
                lines.push(t.name.to_string());
                match &t.status {
                    ToolStatus::Ready => {}
                    ToolStatus::Inert => {
                        lines.push("inert: no binding".to_owned());
                        mark = Mark::Inert;
                    }
                    ToolStatus::BindingUnresolved(_) => {
                        lines.push("binding unresolved".to_owned());
                        mark = Mark::Inert;
                    }
                    ToolStatus::NotRegistered { code, .. } => {
                        lines.push(format!("not registered: {code}"));
                        mark = Mark::Inert;
                    }
                }
                if let Some(reason) = t.approval {
                    lines.push(format!("needs approval ({reason})"));
                    mark = Mark::Approval;
                }
            }
            (Shape::Tool, lines)
        }
        Node::Action(i) => {
            let mut lines = vec!["action".to_owned()];
            if let Some(a) = caps.actions.get(*i) {
                lines.push(a.name.to_owned());
            }
            (Shape::Action, lines)
        }
        Node::Flow(name) => (Shape::Flow, vec!["flow".to_owned(), (*name).to_owned()]),
        Node::Object(name) => (Shape::Object, vec!["object".to_owned(), (*name).to_owned()]),
        Node::Dead {
            kind,
            reference,
            suggestion,
        } => {
            mark = Mark::Dead;
            let mut lines = vec![format!("dead: {kind}"), (*reference).to_owned()];
            if let Some(name) = suggestion {
                lines.push(format!("did you mean {name}?"));
            }
            (Shape::Dead, lines)
        }
    };
    Drawn { lines, shape, mark }
}

/// An edge ready to draw.
struct DrawnEdge {
    from: usize,
    to: usize,
    label: Option<&'static str>,
    dead: bool,
}

/// One view laid out: the nodes drawn, in id order, and each node's id.
struct Layout<'c> {
    order: Order<'c>,
    /// Creation indices of the drawn nodes, in id order.
    drawn: Vec<u32>,
    /// Creation index to id (`NONE` when not drawn).
    ids: Vec<u32>,
    /// The first id.
    offset: usize,
    unattached: Vec<bool>,
    expand: bool,
}

impl<'c> Layout<'c> {
    fn new(view: &View<'c, '_>, offset: usize) -> Self {
        let caps = view.caps;
        let order = Order::new(caps);
        let expand = view.expand;
        // Reached from the agent asked for, or from every agent and skill;
        // through a wildcard's matches only when expanded.
        let mut seen = vec![false; order.items.len()];
        let mut stack: Vec<usize> = order
            .items
            .iter()
            .enumerate()
            .filter(|(_, item)| match item {
                Item::Agent(i) => view.only.is_none_or(|only| only == wide(*i)),
                Item::Skill(_) => view.only.is_none(),
                _ => false,
            })
            .map(|(n, _)| n)
            .collect();
        let mut edges = Vec::new();
        while let Some(n) = stack.pop() {
            match seen.get_mut(n) {
                Some(s) if !*s => *s = true,
                _ => continue,
            }
            let Some(&item) = order.items.get(n) else {
                continue;
            };
            order.edges(caps, item, &mut edges);
            stack.extend(
                edges
                    .iter()
                    .filter(|(_, e)| expand || *e != Edge::Matches)
                    .map(|&(t, _)| t),
            );
        }
        // Agents first, then everything else in creation order.
        let is_agent = |n: usize| matches!(order.items.get(n), Some(Item::Agent(_)));
        let reached = |n: &usize| seen.get(*n).copied().unwrap_or(false);
        let drawn: Vec<u32> = (0..order.items.len())
            .filter(reached)
            .filter(|&n| is_agent(n))
            .chain(
                (0..order.items.len())
                    .filter(reached)
                    .filter(|&n| !is_agent(n)),
            )
            .map(small)
            .collect();
        let mut ids = vec![NONE; order.items.len()];
        for (id, &n) in drawn.iter().enumerate() {
            if let Some(slot) = ids.get_mut(wide(n)) {
                *slot = small(offset + id);
            }
        }
        let mut unattached = vec![false; caps.skills.len()];
        for r in &caps.unattached {
            if let Some(u) = r.skill.and_then(|i| unattached.get_mut(i)) {
                *u = true;
            }
        }
        Layout {
            order,
            drawn,
            ids,
            offset,
            unattached,
            expand,
        }
    }

    fn id(&self, n: usize) -> Option<usize> {
        slot(&self.ids, n)
    }

    /// The drawn nodes with their ids, one at a time.
    fn nodes<'s>(
        &'s self,
        caps: &'c Capabilities<'_>,
    ) -> impl Iterator<Item = (usize, Drawn)> + 's {
        self.drawn.iter().enumerate().filter_map(move |(i, &n)| {
            let item = *self.order.items.get(wide(n))?;
            let node = self.order.node(caps, item);
            Some((self.offset + i, draw(caps, &self.unattached, &node)))
        })
    }

    /// A drawn node's edges to drawn nodes, by target id.
    fn edges_of(
        &self,
        caps: &Capabilities<'_>,
        n: u32,
        buffer: &mut Vec<(usize, Edge)>,
    ) -> Vec<DrawnEdge> {
        let (Some(from), Some(&item)) = (self.id(wide(n)), self.order.items.get(wide(n))) else {
            return Vec::new();
        };
        self.order.edges(caps, item, buffer);
        let mut out: Vec<DrawnEdge> = buffer
            .iter()
            .filter(|(_, e)| self.expand || *e != Edge::Matches)
            .filter_map(|&(target, edge)| {
                let to = self.id(target)?;
                let (label, dead) = match edge {
                    Edge::Uses(SkillStatus::SurfaceMismatch) => (Some("surface mismatch"), true),
                    Edge::Uses(SkillStatus::Inactive) => (Some("inactive"), true),
                    Edge::Uses(_) | Edge::Runs | Edge::On | Edge::Grants | Edge::Matches => {
                        (None, false)
                    }
                    Edge::Binds => (Some("binding"), false),
                    Edge::Dead => (None, true),
                };
                Some(DrawnEdge {
                    from,
                    to,
                    label,
                    dead,
                })
            })
            .collect();
        out.sort_by_key(|e| e.to);
        out
    }
}

/// Graphviz dot.
pub(super) fn dot<W: io::Write>(
    views: &[(Option<&str>, &View<'_, '_>)],
    mut out: W,
) -> io::Result<()> {
    out.write_all(
        b"digraph capabilities {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=11];\n  \
          edge [fontname=\"Helvetica\", fontsize=9];\n",
    )?;
    let mut offset = 0;
    let mut line = String::new();
    let mut buffer = Vec::new();
    for (cluster, (file, view)) in views.iter().enumerate() {
        let caps = view.caps;
        let layout = Layout::new(view, offset);
        offset += layout.drawn.len();
        let indent = if file.is_some() { "    " } else { "  " };
        if let Some(file) = file {
            writeln!(
                out,
                "  subgraph cluster_{cluster} {{\n    label=\"{}\";",
                dot_escape(file)
            )?;
        }
        for (id, drawn) in layout.nodes(caps) {
            line.clear();
            let label: Vec<String> = drawn.lines.iter().map(|l| dot_escape(l)).collect();
            let shape = match drawn.shape {
                Shape::Agent if drawn.mark == Mark::Inert => "shape=box",
                Shape::Agent => "shape=box, style=\"rounded,bold\"",
                Shape::Skill | Shape::Dead => "shape=box",
                Shape::Wildcard => "shape=folder",
                Shape::Tool => "shape=ellipse",
                Shape::Action => "shape=hexagon",
                Shape::Flow => "shape=cds",
                Shape::Object => "shape=cylinder",
            };
            let mark = match drawn.mark {
                Mark::Plain => "",
                Mark::Approval => ", color=\"#d97706\", penwidth=2.5",
                Mark::Dead => ", style=dashed, color=red, fontcolor=red",
                Mark::Inert => ", style=dashed, color=grey40, fontcolor=grey40",
            };
            let _ = writeln!(
                line,
                "{indent}n{id} [label=\"{}\", {shape}{mark}];",
                label.join("\\n")
            );
            out.write_all(line.as_bytes())?;
        }
        for &n in &layout.drawn {
            for e in layout.edges_of(caps, n, &mut buffer) {
                line.clear();
                let mut attrs = Vec::new();
                if let Some(label) = e.label {
                    attrs.push(format!("label=\"{}\"", dot_escape(label)));
                }
                if e.dead {
                    attrs.push("color=red, fontcolor=red, style=dashed".to_owned());
                }
                if attrs.is_empty() {
                    let _ = writeln!(line, "{indent}n{} -> n{};", e.from, e.to);
                } else {
                    let _ = writeln!(
                        line,
                        "{indent}n{} -> n{} [{}];",
                        e.from,
                        e.to,
                        attrs.join(", ")
                    );
                }
                out.write_all(line.as_bytes())?;
            }
        }
        if file.is_some() {
            out.write_all(b"  }\n")?;
        }
    }
    out.write_all(b"}\n")
}

fn dot_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            // Controls, bidirectional overrides and zero-width marks.
            c if objectstack_spec::text::is_terminal_unsafe(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A Mermaid flowchart.
pub(super) fn mermaid<W: io::Write>(
    views: &[(Option<&str>, &View<'_, '_>)],
    mut out: W,
) -> io::Result<()> {
    out.write_all(b"flowchart LR\n")?;
    let mut classes: Vec<(Mark, Vec<usize>)> = vec![
        (Mark::Approval, Vec::new()),
        (Mark::Dead, Vec::new()),
        (Mark::Inert, Vec::new()),
    ];
    let mut red_links = Vec::new();
    let mut link = 0usize;
    let mut offset = 0;
    let mut line = String::new();
    let mut buffer = Vec::new();
    for (i, (file, view)) in views.iter().enumerate() {
        let caps = view.caps;
        let layout = Layout::new(view, offset);
        offset += layout.drawn.len();
        let indent = if file.is_some() { "    " } else { "  " };
        if let Some(file) = file {
            writeln!(out, "  subgraph f{i}[\"{}\"]", mermaid_escape(file))?;
        }
        for (id, drawn) in layout.nodes(caps) {
            line.clear();
            let label: Vec<String> = drawn.lines.iter().map(|l| mermaid_escape(l)).collect();
            let label = label.join("<br/>");
            let (open, close) = match drawn.shape {
                Shape::Agent => ("([", "])"),
                Shape::Skill | Shape::Dead => ("[", "]"),
                Shape::Wildcard => ("[/", "/]"),
                Shape::Tool => ("(", ")"),
                Shape::Action => ("{{", "}}"),
                Shape::Flow => ("[[", "]]"),
                Shape::Object => ("[(", ")]"),
            };
            let _ = writeln!(line, "{indent}n{id}{open}\"{label}\"{close}");
            out.write_all(line.as_bytes())?;
            if let Some((_, members)) = classes.iter_mut().find(|(m, _)| *m == drawn.mark) {
                members.push(id);
            }
        }
        for &n in &layout.drawn {
            for e in layout.edges_of(caps, n, &mut buffer) {
                line.clear();
                let arrow = if e.dead { "-.->" } else { "-->" };
                match e.label {
                    Some(label) => {
                        let _ = writeln!(
                            line,
                            "{indent}n{} {arrow}|\"{}\"| n{}",
                            e.from,
                            mermaid_escape(label),
                            e.to
                        );
                    }
                    None => {
                        let _ = writeln!(line, "{indent}n{} {arrow} n{}", e.from, e.to);
                    }
                }
                out.write_all(line.as_bytes())?;
                if e.dead {
                    red_links.push(link.to_string());
                }
                link += 1;
            }
        }
        if file.is_some() {
            out.write_all(b"  end\n")?;
        }
    }
    out.write_all(
        b"  classDef approval stroke:#d97706,stroke-width:3px\n  \
          classDef dead fill:#fee2e2,stroke:#dc2626,color:#b91c1c,stroke-dasharray:4 3\n  \
          classDef inert stroke:#6b7280,color:#6b7280,stroke-dasharray:4 3\n",
    )?;
    for (mark, members) in &classes {
        if members.is_empty() {
            continue;
        }
        let name = match mark {
            Mark::Approval => "approval",
            Mark::Dead => "dead",
            Mark::Inert | Mark::Plain => "inert",
        };
        let list: Vec<String> = members.iter().map(|m| format!("n{m}")).collect();
        writeln!(out, "  class {} {name}", list.join(","))?;
    }
    if !red_links.is_empty() {
        writeln!(
            out,
            "  linkStyle {} stroke:#dc2626,color:#dc2626",
            red_links.join(",")
        )?;
    }
    Ok(())
}

/// Escapes a label for a quoted Mermaid string (entity codes).
fn mermaid_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '|' => out.push_str("#124;"),
            '`' => out.push_str("#96;"),
            // Controls, bidirectional overrides and zero-width marks.
            c if objectstack_spec::text::is_terminal_unsafe(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{dot_escape, mermaid_escape};

    #[test]
    fn labels_keep_no_control_bidi_override_or_zero_width_mark() {
        // ESC, BEL, an 8-bit CSI, a right-to-left override, an isolate, a
        // zero-width space and a newline: each becomes a space.
        let evil = "a\u{1b}]0;x\u{7}\u{9b}\u{202e}\u{2066}\u{200b}\nb";
        assert_eq!(dot_escape(evil), "a ]0;x      b");
        assert_eq!(mermaid_escape(evil), "a ]0;x      b");
        assert_eq!(dot_escape("é \"q\""), "é \\\"q\\\"");
    }
}
