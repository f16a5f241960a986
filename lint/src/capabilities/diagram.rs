//! The graph formats: Graphviz dot and Mermaid flowcharts.
//!
//! Both draw the nodes of the [`View`] (every node, or those reachable
//! from the chosen agent) with ids `n0, n1, ...` in graph order, so the
//! output is deterministic and names never need to be identifiers. A
//! wildcard is one node with its count; its edges to the tools it matches
//! (and the tools reached only through them) are drawn only when expanded.
//! Dead references and the edges to them are red and dashed; tools that
//! need approval (and wildcards matching any) are orange with a thick
//! border; inert or unbound tool records are dashed and grey. Several views
//! share one graph, each in a cluster (dot) or subgraph (Mermaid) named by
//! its file, with ids numbered on across them.

use std::fmt::Write as _;
use std::io;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use super::{Capabilities, Edge, Node, SkillStatus, ToolSource, ToolStatus, View};

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

/// One view laid out: its graph, the nodes drawn (with their ids) and
/// the skills shown as unattached.
struct Layout<'c> {
    graph: DiGraph<Node<'c>, Edge>,
    /// The drawn nodes in id order (the first id is `offset`).
    nodes: Vec<NodeIndex>,
    /// Node index to id, for drawn nodes.
    ids: Vec<Option<usize>>,
    unattached: Vec<bool>,
    expand: bool,
}

impl<'c> Layout<'c> {
    fn new(view: &View<'c, '_>, offset: usize) -> Self {
        let caps = view.caps;
        let graph = caps.graph();
        let expand = view.expand;
        // Roots: the agent asked for, or every agent and skill.
        let roots: Vec<NodeIndex> = graph
            .node_indices()
            .filter(|&n| match graph.node_weight(n) {
                Some(Node::Agent(i)) => view.only.is_none_or(|only| only == *i),
                Some(Node::Skill(_)) => view.only.is_none(),
                _ => false,
            })
            .collect();
        let mut seen = vec![false; graph.node_count()];
        let mut stack = roots;
        while let Some(n) = stack.pop() {
            match seen.get_mut(n.index()) {
                Some(s) if !*s => *s = true,
                _ => continue,
            }
            for e in graph.edges(n) {
                if expand || *e.weight() != Edge::Matches {
                    stack.push(e.target());
                }
            }
        }
        let mut nodes: Vec<NodeIndex> = graph
            .node_indices()
            .filter(|n| seen.get(n.index()).copied().unwrap_or(false))
            .collect();
        // Agents first, then everything else in the order it was reached.
        nodes.sort_by_key(|&n| !matches!(graph.node_weight(n), Some(Node::Agent(_))));
        let mut ids = vec![None; graph.node_count()];
        for (i, n) in nodes.iter().enumerate() {
            if let Some(slot) = ids.get_mut(n.index()) {
                *slot = Some(offset + i);
            }
        }
        let mut unattached = vec![false; caps.skills.len()];
        for r in &caps.unattached {
            if let Some(u) = r.skill.and_then(|i| unattached.get_mut(i)) {
                *u = true;
            }
        }
        Layout {
            graph,
            nodes,
            ids,
            unattached,
            expand,
        }
    }

    fn id(&self, n: NodeIndex) -> Option<usize> {
        self.ids.get(n.index()).copied().flatten()
    }

    /// The drawn nodes with their ids.
    fn drawn<'s>(
        &'s self,
        caps: &'s Capabilities<'_>,
    ) -> impl Iterator<Item = (usize, Drawn)> + 's {
        self.nodes.iter().filter_map(move |&n| {
            let node = self.graph.node_weight(n)?;
            Some((self.id(n)?, draw(caps, &self.unattached, node)))
        })
    }

    /// A drawn node's edges to drawn nodes, by target id.
    fn edges_of(&self, n: NodeIndex) -> Vec<DrawnEdge> {
        let Some(from) = self.id(n) else {
            return Vec::new();
        };
        let mut out: Vec<DrawnEdge> = self
            .graph
            .edges(n)
            .filter(|e| self.expand || *e.weight() != Edge::Matches)
            .filter_map(|e| {
                let to = self.id(e.target())?;
                let (label, dead) = match e.weight() {
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
    for (cluster, (file, view)) in views.iter().enumerate() {
        let layout = Layout::new(view, offset);
        offset += layout.nodes.len();
        let indent = if file.is_some() { "    " } else { "  " };
        if let Some(file) = file {
            writeln!(
                out,
                "  subgraph cluster_{cluster} {{\n    label=\"{}\";",
                dot_escape(file)
            )?;
        }
        for (id, drawn) in layout.drawn(view.caps) {
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
        for &n in &layout.nodes {
            for e in layout.edges_of(n) {
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
            c if c.is_control() => out.push(' '),
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
    for (i, (file, view)) in views.iter().enumerate() {
        let layout = Layout::new(view, offset);
        offset += layout.nodes.len();
        let indent = if file.is_some() { "    " } else { "  " };
        if let Some(file) = file {
            writeln!(out, "  subgraph f{i}[\"{}\"]", mermaid_escape(file))?;
        }
        for (id, drawn) in layout.drawn(view.caps) {
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
        for &n in &layout.nodes {
            for e in layout.edges_of(n) {
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
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
