//! The text format: a readable tree per agent, then its effective tools
//! and dead references, then a summary line.

use std::fmt::Write as _;

use super::{
    Capabilities, Grants, SkillRef, SkillStatus, Summary, Tool, ToolRef, ToolSource, ToolStatus,
    View,
};

pub(super) fn render(view: &View<'_>) -> String {
    let mut out = String::new();
    let caps = view.caps;
    for agent in &view.agents {
        let mut head = format!("agent {}", agent.name);
        if let Some(label) = &agent.label {
            let _ = write!(head, " \"{label}\"");
        }
        let _ = write!(head, " (surface {}", agent.surface);
        if !agent.active {
            head.push_str(", inactive");
        }
        head.push(')');
        section(&mut out, caps, &head, &agent.grants);
    }
    if let Some(grants) = view.unattached {
        let head = "unattached skills (no agent names them; the kernel agents `ask` and `build` \
                    bind skills of a matching surface)";
        section(&mut out, caps, head, grants);
    }
    let summary = Summary::of(view);
    let _ = writeln!(
        out,
        "{} · {} · {} granted · {} · {}",
        plural(summary.agents, "agent", "agents"),
        plural(summary.skills, "skill", "skills"),
        plural(summary.tools, "tool", "tools"),
        plural(summary.needs_approval, "needs approval", "need approval"),
        plural(summary.dead, "dead reference", "dead references"),
    );
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn section(out: &mut String, caps: &Capabilities, head: &str, grants: &Grants) {
    let _ = writeln!(out, "{head}");
    let count = grants.skills.len();
    for (i, skill_ref) in grants.skills.iter().enumerate() {
        let last = i + 1 == count;
        skill_line(out, caps, skill_ref, last);
    }
    let approvals = grants
        .tools
        .iter()
        .filter(|t| caps.tools.get(t.tool).is_some_and(|t| t.approval.is_some()))
        .count();
    let _ = write!(out, "  effective tools: {}", grants.tools.len());
    if approvals > 0 {
        let _ = write!(
            out,
            " ({approvals} {} approval)",
            if approvals == 1 { "needs" } else { "need" }
        );
    }
    out.push('\n');
    let width = grants
        .tools
        .iter()
        .filter_map(|t| caps.tools.get(t.tool))
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0);
    for effective in &grants.tools {
        let Some(tool) = caps.tools.get(effective.tool) else {
            continue;
        };
        let via: Vec<String> = effective
            .granted_by
            .iter()
            .filter_map(|g| {
                let skill = caps.skills.get(g.skill)?;
                Some(if g.reference == tool.name {
                    skill.name.clone()
                } else {
                    format!("{} ({})", skill.name, g.reference)
                })
            })
            .collect();
        // Padded by hand: a `{:<width$}` width above u16::MAX panics, and
        // a tool name can be that long.
        let fill = width.saturating_sub(tool.name.chars().count());
        let _ = writeln!(
            out,
            "    {}{}  {}; via {}",
            tool.name,
            " ".repeat(fill),
            describe(caps, tool),
            via.join(", ")
        );
    }
    if !grants.dead.is_empty() {
        let _ = writeln!(out, "  dead references: {}", grants.dead.len());
        for dead in &grants.dead {
            let _ = writeln!(
                out,
                "    {}  {} ({}): {}",
                dead.path, dead.reference, dead.kind, dead.message
            );
        }
    }
    out.push('\n');
}

fn branch(last: bool) -> (&'static str, &'static str) {
    if last {
        ("└── ", "    ")
    } else {
        ("├── ", "│   ")
    }
}

fn skill_line(out: &mut String, caps: &Capabilities, skill_ref: &SkillRef, last: bool) {
    let (here, below) = branch(last);
    let skill = skill_ref.skill.and_then(|i| caps.skills.get(i));
    let mut line = format!("  {here}skill {}", skill_ref.name);
    if let Some(skill) = skill {
        if let Some(label) = &skill.label {
            let _ = write!(line, " \"{label}\"");
        }
        let _ = write!(line, " (surface {}", skill.surface);
        if skill_ref.status == SkillStatus::Inactive && skill_ref.dead.is_none() {
            line.push_str(", inactive: grants nothing");
        }
        line.push(')');
    }
    if let Some(dead) = &skill_ref.dead {
        let _ = write!(line, ": DEAD {}: {}", dead.kind, dead.message);
    }
    let _ = writeln!(out, "{line}");
    let Some(skill) = skill else { return };
    let prefix = format!("  {below}");
    let count = skill.refs.len();
    if count == 0 {
        let _ = writeln!(out, "{prefix}└── (no tools)");
    }
    for (i, tool_ref) in skill.refs.iter().enumerate() {
        tool_ref_line(out, caps, &prefix, tool_ref, i + 1 == count);
    }
}

fn tool_ref_line(out: &mut String, caps: &Capabilities, prefix: &str, r: &ToolRef, last: bool) {
    let (here, below) = branch(last);
    if let Some(dead) = &r.dead {
        let _ = writeln!(
            out,
            "{prefix}{here}{}: DEAD {}: {}",
            r.text, dead.kind, dead.message
        );
        return;
    }
    if !r.wildcard {
        let Some(tool) = r.resolves.first().and_then(|&i| caps.tools.get(i)) else {
            return;
        };
        let _ = writeln!(out, "{prefix}{here}{}: {}", tool.name, describe(caps, tool));
        return;
    }
    let n = r.resolves.len();
    let _ = writeln!(
        out,
        "{prefix}{here}{}: wildcard, {}",
        r.text,
        plural(n, "tool", "tools")
    );
    let inner = format!("{prefix}{below}");
    for (i, &t) in r.resolves.iter().enumerate() {
        let Some(tool) = caps.tools.get(t) else {
            continue;
        };
        let (h, _) = branch(i + 1 == n);
        let _ = writeln!(out, "{inner}{h}{}: {}", tool.name, describe(caps, tool));
    }
}

/// What a tool is and runs, in a few words.
fn describe(caps: &Capabilities, tool: &Tool) -> String {
    let mut s = match &tool.source {
        ToolSource::Platform { package } => format!("platform tool ({package})"),
        ToolSource::Action => "runs".to_owned(),
        ToolSource::Record { path } => format!("tool record {path}"),
    };
    if let Some(action) = tool.action.and_then(|i| caps.actions.get(i)) {
        if matches!(tool.source, ToolSource::Record { .. }) {
            s.push_str(", bound to");
        }
        let _ = write!(s, " action {}", action.name);
        if let Some(object) = &action.object {
            let _ = write!(s, " on {object}");
        }
    } else if let Some(flow) = &tool.flow {
        let _ = write!(s, ", bound to flow {flow}");
    }
    match &tool.status {
        ToolStatus::Ready => {}
        ToolStatus::Inert => s.push_str("; INERT: no binding, executes nothing"),
        ToolStatus::BindingUnresolved(why) => {
            let _ = write!(s, "; BINDING UNRESOLVED: {why}");
        }
    }
    if let Some(approval) = tool.approval {
        let _ = write!(s, "; NEEDS APPROVAL ({approval})");
    }
    s
}
