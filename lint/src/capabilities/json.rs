//! The JSON format; its shape is documented in the module docs of
//! [`super`] and is stable.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Value, json};

use super::{Capabilities, DeadReference, Grants, SkillRef, Summary, Tool, ToolRef, View};

pub(super) fn render(view: &View<'_>) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::pretty(&mut out);
    // Serialising into memory fails only on a non-string map key, which
    // this shape never has.
    if Document(view).serialize(&mut ser).is_err() {
        return String::new();
    }
    let mut text = String::from_utf8(out).unwrap_or_default();
    text.push('\n');
    text
}

/// The whole document, serialised one agent at a time so a large stack
/// never holds more than one agent's tree in memory.
struct Document<'a, 'v>(&'a View<'v>);

impl Serialize for Document<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let view = self.0;
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("agents", &Agents(view))?;
        let unattached = view.unattached.map(|g| Section {
            caps: view.caps,
            head: None,
            grants: g,
        });
        map.serialize_entry("unattached", &unattached)?;
        let summary = Summary::of(view);
        map.serialize_entry(
            "summary",
            &json!({
                "agents": summary.agents,
                "skills": summary.skills,
                "tools": summary.tools,
                "needsApproval": summary.needs_approval,
                "deadReferences": summary.dead,
            }),
        )?;
        map.end()
    }
}

struct Agents<'a, 'v>(&'a View<'v>);

impl Serialize for Agents<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let view = self.0;
        serializer.collect_seq(view.agents.iter().map(|agent| Section {
            caps: view.caps,
            head: Some(agent),
            grants: &agent.grants,
        }))
    }
}

/// An agent (its own keys, then its grants) or the unattached skills (the
/// grants alone), written one skill and one tool at a time: a large stack's
/// wildcards can grant millions of tools, and they are never all in
/// memory as JSON values.
struct Section<'a> {
    caps: &'a Capabilities,
    head: Option<&'a super::Agent>,
    grants: &'a Grants,
}

impl Serialize for Section<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (caps, grants) = (self.caps, self.grants);
        let mut map = serializer.serialize_map(None)?;
        if let Some(agent) = self.head {
            map.serialize_entry("name", &agent.name)?;
            map.serialize_entry("label", &agent.label)?;
            map.serialize_entry("surface", &agent.surface)?;
            map.serialize_entry("active", &agent.active)?;
            map.serialize_entry("path", &agent.path)?;
        }
        map.serialize_entry(
            "skills",
            &Elements(|| grants.skills.iter().map(|s| skill(caps, s))),
        )?;
        map.serialize_entry(
            "tools",
            &Elements(|| grants.tools.iter().filter_map(|e| granted(caps, e))),
        )?;
        map.serialize_entry("deadReferences", &Elements(|| grants.dead.iter().map(dead)))?;
        map.end()
    }
}

/// A sequence written from an iterator, one element at a time.
struct Elements<F>(F);

impl<F, I> Serialize for Elements<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

/// An effective tool with the references that grant it, written without
/// building values (a tool can be granted by thousands of references).
fn granted<'a>(caps: &'a Capabilities, e: &'a super::EffectiveTool) -> Option<Granted<'a>> {
    let tool = caps.tools.get(e.tool)?;
    Some(Granted {
        caps,
        tool,
        effective: e,
    })
}

struct Granted<'a> {
    caps: &'a Capabilities,
    tool: &'a Tool,
    effective: &'a super::EffectiveTool,
}

impl Serialize for Granted<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (caps, t) = (self.caps, self.tool);
        let (package, path) = tool_origin(t);
        let mut map = serializer.serialize_map(Some(11))?;
        map.serialize_entry("name", &t.name)?;
        map.serialize_entry("source", t.source.code())?;
        map.serialize_entry("package", &package)?;
        map.serialize_entry("path", &path)?;
        map.serialize_entry("status", t.status.code())?;
        map.serialize_entry("statusReason", &t.status.reason())?;
        map.serialize_entry("action", &tool_action(caps, t))?;
        map.serialize_entry("flow", &t.flow)?;
        map.serialize_entry("needsApproval", &t.approval.is_some())?;
        map.serialize_entry("approvalReason", &t.approval.map(|a| a.as_source()))?;
        let grants = self.effective.granted_by.iter().filter_map(|g| {
            let skill = caps.skills.get(g.skill)?;
            Some(GrantedBy {
                skill: &skill.name,
                reference: &g.reference,
            })
        });
        map.serialize_entry("grantedBy", &Elements(|| grants.clone()))?;
        map.end()
    }
}

/// One `grantedBy` entry.
#[derive(serde::Serialize)]
struct GrantedBy<'a> {
    skill: &'a str,
    #[serde(rename = "ref")]
    reference: &'a str,
}

fn skill(caps: &Capabilities, r: &SkillRef) -> Value {
    let def = r.skill.and_then(|i| caps.skills.get(i));
    let refs: Vec<Value> = def
        .map(|s| s.refs.iter().map(|t| tool_ref(caps, t)).collect())
        .unwrap_or_default();
    json!({
        "name": r.name,
        "path": r.path,
        "status": r.status.code(),
        "definition": def.map(|s| s.path.as_str()),
        "label": def.and_then(|s| s.label.as_deref()),
        "surface": def.map(|s| s.surface.as_str()),
        "dead": r.dead.as_ref().map(dead),
        "tools": refs,
    })
}

fn tool_ref(caps: &Capabilities, r: &ToolRef) -> Value {
    let resolves: Vec<&str> = r
        .resolves
        .iter()
        .filter_map(|&i| caps.tools.get(i).map(|t| t.name.as_str()))
        .collect();
    json!({
        "ref": r.text,
        "path": r.path,
        "wildcard": r.wildcard,
        "resolves": resolves,
        "dead": r.dead.as_ref().map(dead),
    })
}

/// A tool's owning package and record path, by its source.
fn tool_origin(t: &Tool) -> (Option<&'static str>, Option<&str>) {
    match &t.source {
        super::ToolSource::Platform { package } => (Some(*package), None),
        super::ToolSource::Record { path } => (None, Some(path.as_str())),
        super::ToolSource::Action => (None, None),
    }
}

/// The action behind a tool, as `{name, object, path}`.
fn tool_action(caps: &Capabilities, t: &Tool) -> Option<Value> {
    t.action
        .and_then(|i| caps.actions.get(i))
        .map(|a| json!({"name": a.name, "object": a.object, "path": a.path}))
}

fn dead(d: &DeadReference) -> Value {
    json!({
        "kind": d.kind.code(),
        "ref": d.reference,
        "path": d.path,
        "skill": d.skill,
        "message": d.message,
        "suggestion": d.suggestion,
    })
}
