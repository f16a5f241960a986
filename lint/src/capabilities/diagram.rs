//! The graph formats: Graphviz dot and Mermaid flowcharts.
//!
//! Both draw the nodes of the [`View`] (every node, or those reachable
//! from the chosen agent) with ids `n0, n1, ...` in graph order, so the
//! output is deterministic and names never need to be identifiers. Dead
//! references and the edges to them are red and dashed; tools that need
//! approval are orange with a thick border; inert or unbound tool records
//! are dashed and grey.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use petgraph::graph::NodeIndex;
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

/// The skills listed as unattached, looked up per skill node.
fn unattached(caps: &Capabilities) -> HashSet<usize> {
    caps.unattached
        .skills
        .iter()
        .filter_map(|r| r.skill)
        .collect()
}

fn draw(caps: &Capabilities, unattached: &HashSet<usize>, node: &Node) -> Drawn {
    let mut mark = Mark::Plain;
    let (shape, lines) = match node {
        Node::Agent(i) => {
            let mut lines = vec!["agent".to_owned()];
            if let Some(a) = caps.agents.get(*i) {
                lines.push(a.name.clone());
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
                lines.push(s.name.clone());
                if !s.active {
                    lines.push("inactive".to_owned());
                    mark = Mark::Inert;
                } else if unattached.contains(i) {
                    lines.push("unattached".to_owned());
                }
            }
            (Shape::Skill, lines)
        }
        Node::Tool(i) => {
            let mut lines = Vec::new();
            if let Some(t) = caps.tools.get(*i) {
                lines.push(match &t.source {
                    ToolSource::Platform { package } => format!("platform tool ({package})"),
                    ToolSource::Record { .. } => "tool record".to_owned(),
                    ToolSource::Action => "action tool".to_owned(),
                });
                lines.push(t.name.clone());
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
                lines.push(a.name.clone());
            }
            (Shape::Action, lines)
        }
        Node::Flow(name) => (Shape::Flow, vec!["flow".to_owned(), name.clone()]),
        Node::Object(name) => (Shape::Object, vec!["object".to_owned(), name.clone()]),
        Node::Dead {
            kind,
            reference,
            suggestion,
        } => {
            mark = Mark::Dead;
            let mut lines = vec![format!("dead: {kind}"), reference.clone()];
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
    label: Option<String>,
    dead: bool,
}

fn edges(view: &View<'_>, ids: &HashMap<NodeIndex, usize>) -> Vec<DrawnEdge> {
    let graph = &view.caps.graph;
    let mut out = Vec::new();
    for &n in &view.nodes {
        for e in graph.edges(n) {
            let (Some(&from), Some(&to)) = (ids.get(&e.source()), ids.get(&e.target())) else {
                continue;
            };
            let (label, dead) = match e.weight() {
                Edge::Uses(SkillStatus::SurfaceMismatch) => {
                    (Some("surface mismatch".to_owned()), true)
                }
                Edge::Uses(SkillStatus::Inactive) => (Some("inactive".to_owned()), true),
                Edge::Uses(_) | Edge::Runs | Edge::On => (None, false),
                Edge::Grants { via } => (via.clone(), false),
                Edge::Binds => (Some("binding".to_owned()), false),
                Edge::Dead => (None, true),
            };
            out.push(DrawnEdge {
                from,
                to,
                label,
                dead,
            });
        }
    }
    // petgraph lists a node's edges newest first; draw in insertion order.
    out.sort_by_key(|e| (e.from, e.to));
    out
}

fn ids(view: &View<'_>) -> HashMap<NodeIndex, usize> {
    view.nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| (n, i))
        .collect()
}

/// Graphviz dot.
pub(super) fn dot(view: &View<'_>) -> String {
    let ids = ids(view);
    let unattached = unattached(view.caps);
    let mut out = String::from(
        "digraph capabilities {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=11];\n  \
         edge [fontname=\"Helvetica\", fontsize=9];\n",
    );
    for (id, &n) in view.nodes.iter().enumerate() {
        let Some(node) = view.caps.graph.node_weight(n) else {
            continue;
        };
        let drawn = draw(view.caps, &unattached, node);
        let label: Vec<String> = drawn.lines.iter().map(|l| dot_escape(l)).collect();
        let shape = match drawn.shape {
            Shape::Agent => "shape=box, style=\"rounded,bold\"",
            Shape::Skill | Shape::Dead => "shape=box",
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
        let shape = if drawn.shape == Shape::Agent && drawn.mark == Mark::Inert {
            "shape=box"
        } else {
            shape
        };
        let _ = writeln!(
            out,
            "  n{id} [label=\"{}\", {shape}{mark}];",
            label.join("\\n")
        );
    }
    for e in edges(view, &ids) {
        let mut attrs = Vec::new();
        if let Some(label) = &e.label {
            attrs.push(format!("label=\"{}\"", dot_escape(label)));
        }
        if e.dead {
            attrs.push("color=red, fontcolor=red, style=dashed".to_owned());
        }
        if attrs.is_empty() {
            let _ = writeln!(out, "  n{} -> n{};", e.from, e.to);
        } else {
            let _ = writeln!(out, "  n{} -> n{} [{}];", e.from, e.to, attrs.join(", "));
        }
    }
    out.push_str("}\n");
    out
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
pub(super) fn mermaid(view: &View<'_>) -> String {
    let ids = ids(view);
    let unattached = unattached(view.caps);
    let mut out = String::from("flowchart LR\n");
    let mut classes: Vec<(Mark, Vec<usize>)> = vec![
        (Mark::Approval, Vec::new()),
        (Mark::Dead, Vec::new()),
        (Mark::Inert, Vec::new()),
    ];
    for (id, &n) in view.nodes.iter().enumerate() {
        let Some(node) = view.caps.graph.node_weight(n) else {
            continue;
        };
        let drawn = draw(view.caps, &unattached, node);
        let label: Vec<String> = drawn.lines.iter().map(|l| mermaid_escape(l)).collect();
        let label = label.join("<br/>");
        let (open, close) = match drawn.shape {
            Shape::Agent => ("([", "])"),
            Shape::Skill | Shape::Dead => ("[", "]"),
            Shape::Tool => ("(", ")"),
            Shape::Action => ("{{", "}}"),
            Shape::Flow => ("[[", "]]"),
            Shape::Object => ("[(", ")]"),
        };
        let _ = writeln!(out, "  n{id}{open}\"{label}\"{close}");
        if let Some((_, members)) = classes.iter_mut().find(|(m, _)| *m == drawn.mark) {
            members.push(id);
        }
    }
    let mut red_links = Vec::new();
    for (i, e) in edges(view, &ids).into_iter().enumerate() {
        let arrow = if e.dead { "-.->" } else { "-->" };
        match &e.label {
            Some(label) => {
                let _ = writeln!(
                    out,
                    "  n{} {arrow}|\"{}\"| n{}",
                    e.from,
                    mermaid_escape(label),
                    e.to
                );
            }
            None => {
                let _ = writeln!(out, "  n{} {arrow} n{}", e.from, e.to);
            }
        }
        if e.dead {
            red_links.push(i.to_string());
        }
    }
    out.push_str(
        "  classDef approval stroke:#d97706,stroke-width:3px\n  \
         classDef dead fill:#fee2e2,stroke:#dc2626,color:#b91c1c,stroke-dasharray:4 3\n  \
         classDef inert stroke:#6b7280,color:#6b7280,stroke-dasharray:4 3\n",
    );
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
        let _ = writeln!(out, "  class {} {name}", list.join(","));
    }
    if !red_links.is_empty() {
        let _ = writeln!(
            out,
            "  linkStyle {} stroke:#dc2626,color:#dc2626",
            red_links.join(",")
        );
    }
    out
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
