//! The JSON format; its shape is documented in the module docs of
//! [`super`] and is stable.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

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
        let unattached = view.unattached.map(|g| {
            let mut m = Map::new();
            grants(&mut m, view.caps, g);
            Value::Object(m)
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
        let mut seq = serializer.serialize_seq(Some(view.agents.len()))?;
        for agent in &view.agents {
            let mut m = Map::new();
            m.insert("name".into(), json!(agent.name));
            m.insert("label".into(), json!(agent.label));
            m.insert("surface".into(), json!(agent.surface));
            m.insert("active".into(), json!(agent.active));
            m.insert("path".into(), json!(agent.path));
            grants(&mut m, view.caps, &agent.grants);
            seq.serialize_element(&Value::Object(m))?;
        }
        seq.end()
    }
}

fn grants(m: &mut Map<String, Value>, caps: &Capabilities, grants: &Grants) {
    let skills: Vec<Value> = grants.skills.iter().map(|s| skill(caps, s)).collect();
    let tools: Vec<Value> = grants
        .tools
        .iter()
        .filter_map(|e| {
            let t = caps.tools.get(e.tool)?;
            let granted_by: Vec<Value> = e
                .granted_by
                .iter()
                .filter_map(|g| {
                    let s = caps.skills.get(g.skill)?;
                    Some(json!({"skill": s.name, "ref": g.reference}))
                })
                .collect();
            let mut v = tool(caps, t);
            if let Value::Object(obj) = &mut v {
                obj.insert("grantedBy".into(), Value::Array(granted_by));
            }
            Some(v)
        })
        .collect();
    m.insert("skills".into(), Value::Array(skills));
    m.insert("tools".into(), Value::Array(tools));
    m.insert(
        "deadReferences".into(),
        Value::Array(grants.dead.iter().map(dead).collect()),
    );
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

fn tool(caps: &Capabilities, t: &Tool) -> Value {
    let (package, path) = match &t.source {
        super::ToolSource::Platform { package } => (Some(*package), None),
        super::ToolSource::Record { path } => (None, Some(path.as_str())),
        super::ToolSource::Action => (None, None),
    };
    let action = t
        .action
        .and_then(|i| caps.actions.get(i))
        .map(|a| json!({"name": a.name, "object": a.object, "path": a.path}));
    json!({
        "name": t.name,
        "source": t.source.code(),
        "package": package,
        "path": path,
        "status": t.status.code(),
        "statusReason": t.status.reason(),
        "action": action,
        "flow": t.flow,
        "needsApproval": t.approval.is_some(),
        "approvalReason": t.approval.map(|a| a.as_source()),
    })
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
