//! The text format: a readable tree per agent, then its effective tools
//! and dead references, then a summary line. Written a line at a time;
//! each line is escaped for a terminal before it is written.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;

use super::{
    Capabilities, EffectiveTool, EffectiveWildcard, SkillRef, SkillStatus, Summary, Target, Tool,
    ToolRef, ToolSource, ToolStatus, View,
};

/// Lines, each built in one reused buffer and escaped on the way out.
struct Lines<W> {
    out: W,
    line: String,
}

impl<W: io::Write> Lines<W> {
    fn emit(&mut self, build: impl FnOnce(&mut String)) -> io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        build(&mut line);
        let result = self
            .out
            .write_all(safe(&line).as_bytes())
            .and_then(|()| self.out.write_all(b"\n"));
        self.line = line;
        result
    }

    fn blank(&mut self) -> io::Result<()> {
        self.out.write_all(b"\n")
    }
}

/// A line as a terminal may show it: control characters (newlines
/// included, since a name could forge a line), bidi overrides and other
/// invisible characters as `\u` escapes.
fn safe(line: &str) -> Cow<'_, str> {
    match objectstack_spec::text::terminal_safe(line) {
        Cow::Borrowed(s) if !s.contains('\n') => Cow::Borrowed(s),
        other => Cow::Owned(other.replace('\n', "\\u000a")),
    }
}

/// Appends `s`, escaped as a line is.
pub(super) fn escape_into(out: &mut String, s: &str) {
    out.push_str(&safe(s));
}

pub(super) fn write<W: io::Write>(view: &View<'_, '_>, out: W) -> io::Result<()> {
    let mut lines = Lines {
        out,
        line: String::new(),
    };
    let caps = view.caps;
    for agent in &view.agents {
        let mut head = format!("agent {}", agent.name);
        if let Some(label) = agent.label {
            let _ = write!(head, " \"{label}\"");
        }
        let _ = write!(head, " (surface {}", agent.surface);
        if !agent.active {
            head.push_str(", inactive");
        }
        head.push(')');
        section(&mut lines, caps, view.expand, &head, &agent.skills)?;
    }
    if let Some(skills) = view.unattached {
        let head = "unattached skills (no agent names them; the kernel agents `ask` and `build` \
                    bind skills of a matching surface)";
        section(&mut lines, caps, view.expand, head, skills)?;
    }
    let summary = Summary::of(view);
    lines.emit(|l| {
        let _ = write!(
            l,
            "{} · {} · {} granted · {} · {}",
            plural(summary.agents, "agent", "agents"),
            plural(summary.skills, "skill", "skills"),
            plural(summary.tools, "tool", "tools"),
            plural(summary.needs_approval, "needs approval", "need approval"),
            plural(summary.dead, "dead reference", "dead references"),
        );
    })
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One entry of a summarised effective tool list, in name order.
enum Entry<'g, 'a> {
    Tool(EffectiveTool<'a>),
    Wildcard(&'g EffectiveWildcard),
}

fn section<W: io::Write>(
    lines: &mut Lines<W>,
    caps: &Capabilities<'_>,
    expand: bool,
    head: &str,
    skills: &[SkillRef<'_>],
) -> io::Result<()> {
    lines.emit(|l| l.push_str(head))?;
    let count = skills.len();
    let earlier = super::earlier_namings(skills);
    for (i, skill_ref) in skills.iter().enumerate() {
        let again = earlier
            .get(i)
            .copied()
            .flatten()
            .and_then(|k| skills.get(k))
            .map(|first| first.path.as_str());
        skill_lines(lines, caps, expand, (skill_ref, again), i + 1 == count)?;
    }
    let grants = caps.grants(skills);
    lines.emit(|l| {
        let _ = write!(l, "  effective tools: {}", grants.tool_count);
        let approvals = grants.needs_approval;
        if approvals > 0 {
            let _ = write!(
                l,
                " ({approvals} {} approval)",
                if approvals == 1 { "needs" } else { "need" }
            );
        }
    })?;
    if expand {
        let width = grants
            .positions()
            .filter_map(|k| caps.tool_at(k).and_then(|t| caps.tools.get(t)))
            .map(|t| t.name.chars().count())
            .max()
            .unwrap_or(0);
        for effective in grants.expanded() {
            tool_line(lines, caps, &effective, width)?;
        }
    } else {
        let pattern =
            |w: &EffectiveWildcard| caps.wildcards.get(w.wildcard).map_or("", |w| w.pattern);
        let name = |t: usize| caps.tools.get(t).map_or("", |t| t.name.as_ref());
        let width = grants
            .named_tools()
            .map(|t| name(t).chars().count())
            .chain(grants.wildcards.iter().map(|w| pattern(w).chars().count()))
            .max()
            .unwrap_or(0);
        // Both lists are in name order: merge them.
        let mut tools = grants.named().peekable();
        let mut wildcards = grants.wildcards.iter().peekable();
        loop {
            let entry = match (tools.peek(), wildcards.peek()) {
                (Some(t), Some(w)) if pattern(w) < name(t.tool) => {
                    wildcards.next().map(Entry::Wildcard)
                }
                (Some(_), _) => tools.next().map(Entry::Tool),
                (None, Some(_)) => wildcards.next().map(Entry::Wildcard),
                (None, None) => None,
            };
            match entry {
                Some(Entry::Tool(t)) => tool_line(lines, caps, &t, width)?,
                Some(Entry::Wildcard(w)) => wildcard_line(lines, caps, w, width)?,
                None => break,
            }
        }
    }
    let dead = caps.dead(skills).count();
    if dead > 0 {
        lines.emit(|l| {
            let _ = write!(l, "  dead references: {dead}");
        })?;
        for dead in caps.dead(skills) {
            lines.emit(|l| {
                let _ = write!(
                    l,
                    "    {}  {} ({}): {}",
                    dead.path, dead.reference, dead.kind, dead.message
                );
            })?;
        }
    }
    lines.blank()
}

/// Pads a name to `width` characters by hand: a `{:<width$}` width above
/// `u16::MAX` panics, and a tool name can be that long.
fn padded(l: &mut String, name: &str, width: usize) {
    l.push_str(name);
    let fill = width.saturating_sub(name.chars().count());
    l.extend(std::iter::repeat_n(' ', fill));
}

fn tool_line<W: io::Write>(
    lines: &mut Lines<W>,
    caps: &Capabilities<'_>,
    effective: &EffectiveTool<'_>,
    width: usize,
) -> io::Result<()> {
    let Some(tool) = caps.tools.get(effective.tool) else {
        return Ok(());
    };
    lines.emit(|l| {
        l.push_str("    ");
        padded(l, &tool.name, width);
        l.push_str("  ");
        describe(l, caps, tool);
        l.push_str("; via ");
        let mut first = true;
        for g in &effective.granted_by {
            let Some(skill) = caps.skills.get(g.skill) else {
                continue;
            };
            if !first {
                l.push_str(", ");
            }
            first = false;
            l.push_str(&skill.name);
            if g.reference != tool.name {
                let _ = write!(l, " ({})", g.reference);
            }
        }
    })
}

fn wildcard_line<W: io::Write>(
    lines: &mut Lines<W>,
    caps: &Capabilities<'_>,
    effective: &EffectiveWildcard,
    width: usize,
) -> io::Result<()> {
    let Some(wildcard) = caps.wildcards.get(effective.wildcard) else {
        return Ok(());
    };
    lines.emit(|l| {
        l.push_str("    ");
        padded(l, wildcard.pattern, width);
        let _ = write!(l, "  → {}", plural(wildcard.len(), "tool", "tools"));
        if effective.needs_approval > 0 {
            let _ = write!(
                l,
                " ({} {} approval)",
                effective.needs_approval,
                if effective.needs_approval == 1 {
                    "needs"
                } else {
                    "need"
                }
            );
        }
        l.push_str("; via ");
        let names: Vec<&str> = effective
            .skills
            .iter()
            .filter_map(|&s| caps.skills.get(s).map(|s| s.name.as_ref()))
            .collect();
        l.push_str(&names.join(", "));
    })
}

fn branch(last: bool) -> (&'static str, &'static str) {
    if last {
        ("└── ", "    ")
    } else {
        ("├── ", "│   ")
    }
}

fn skill_lines<W: io::Write>(
    lines: &mut Lines<W>,
    caps: &Capabilities<'_>,
    expand: bool,
    (skill_ref, again): (&SkillRef<'_>, Option<&str>),
    last: bool,
) -> io::Result<()> {
    let (here, below) = branch(last);
    let skill = skill_ref.skill.and_then(|i| caps.skills.get(i));
    lines.emit(|l| {
        let _ = write!(l, "  {here}skill {}", skill_ref.name);
        if let Some(skill) = skill {
            if let Some(label) = skill.label {
                let _ = write!(l, " \"{label}\"");
            }
            let _ = write!(l, " (surface {}", skill.surface);
            if skill_ref.status == SkillStatus::Inactive && skill_ref.dead.is_none() {
                l.push_str(", inactive: grants nothing");
            }
            l.push(')');
        }
        if let Some(dead) = &skill_ref.dead {
            let _ = write!(l, ": DEAD {}: {}", dead.kind, dead.message);
        }
    })?;
    let Some(skill) = skill else { return Ok(()) };
    let prefix = format!("  {below}");
    if let Some(first) = again {
        // One skill for the agent: its tools are under its first naming.
        return lines.emit(|l| {
            let _ = write!(
                l,
                "{prefix}└── (named again: its tools are listed under {first})"
            );
        });
    }
    let count = skill.refs.len();
    if count == 0 {
        lines.emit(|l| {
            let _ = write!(l, "{prefix}└── (no tools)");
        })?;
    }
    for (i, tool_ref) in skill.refs.iter().enumerate() {
        ref_lines(lines, caps, expand, &prefix, tool_ref, i + 1 == count)?;
    }
    Ok(())
}

fn ref_lines<W: io::Write>(
    lines: &mut Lines<W>,
    caps: &Capabilities<'_>,
    expand: bool,
    prefix: &str,
    r: &ToolRef<'_>,
    last: bool,
) -> io::Result<()> {
    let (here, below) = branch(last);
    match r.target() {
        Target::Dead(_) => lines.emit(|l| {
            let _ = write!(l, "{prefix}{here}{}: DEAD", r.text());
            if let Some(dead) = caps.dead_of(r) {
                let _ = write!(l, " {}: {}", dead.kind, dead.message);
            }
        }),
        Target::Tool(t) => {
            let Some(tool) = caps.tools.get(t) else {
                return Ok(());
            };
            lines.emit(|l| {
                let _ = write!(l, "{prefix}{here}{}: ", tool.name);
                describe(l, caps, tool);
            })
        }
        Target::Wildcard(_) => {
            let n = caps.matches(r);
            lines.emit(|l| {
                let _ = write!(
                    l,
                    "{prefix}{here}{}: wildcard, {}",
                    r.text(),
                    plural(n, "tool", "tools")
                );
            })?;
            if !expand {
                return Ok(());
            }
            let inner = format!("{prefix}{below}");
            for (i, t) in caps.resolves(r).enumerate() {
                let Some(tool) = caps.tools.get(t) else {
                    continue;
                };
                let (h, _) = branch(i + 1 == n);
                lines.emit(|l| {
                    let _ = write!(l, "{inner}{h}{}: ", tool.name);
                    describe(l, caps, tool);
                })?;
            }
            Ok(())
        }
    }
}

/// What a tool is and runs, in a few words.
fn describe(s: &mut String, caps: &Capabilities<'_>, tool: &Tool<'_>) {
    match &tool.source {
        ToolSource::Platform { package } => {
            let _ = write!(s, "platform tool ({package})");
        }
        ToolSource::Action => s.push_str("runs"),
        ToolSource::Record { path } => {
            let _ = write!(s, "tool record {path}");
        }
    }
    if let Some(action) = tool.action.and_then(|i| caps.actions.get(i)) {
        if matches!(tool.source, ToolSource::Record { .. }) {
            s.push_str(", bound to");
        }
        let _ = write!(s, " action {}", action.name);
        if let Some(object) = action.object {
            let _ = write!(s, " on {object}");
        }
    } else if let Some(flow) = tool.flow {
        let _ = write!(s, ", bound to flow {flow}");
    }
    match &tool.status {
        ToolStatus::Ready => {}
        ToolStatus::Inert => s.push_str("; INERT: no binding, executes nothing"),
        ToolStatus::BindingUnresolved(why) => {
            let _ = write!(s, "; BINDING UNRESOLVED: {why}");
        }
        ToolStatus::NotRegistered { code, reason } => {
            let _ = write!(s, "; NOT REGISTERED [{code}]: {reason}");
        }
    }
    if let Some(approval) = tool.approval {
        let _ = write!(s, "; NEEDS APPROVAL ({approval})");
    }
}
