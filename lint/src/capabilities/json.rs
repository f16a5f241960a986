//! The JSON format; its shape is documented in the module docs of
//! [`super`] and is stable. Written straight to the writer, one section,
//! skill and tool at a time: nothing is built as a JSON value.

use std::io;

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::{
    Agent, Capabilities, DeadReference, EffectiveTool, EffectiveWildcard, SkillRef, Summary,
    Target, Tool, ToolRef, ToolSource, View,
};

/// The format version written as `version`.
const VERSION: u32 = 2;

/// One stack's view, or several one by one.
pub(super) enum Shape<'s, 'c, 'a> {
    One(&'s View<'c, 'a>),
    Each(&'s [(&'s str, &'s View<'c, 'a>)]),
}

pub(super) fn write<W: io::Write>(
    shape: Shape<'_, '_, '_>,
    expand: bool,
    mut out: W,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        objectstack_spec::json::terminal::TerminalSafe(serde_json::ser::PrettyFormatter::new()),
    );
    Document { shape, expand }
        .serialize(&mut ser)
        .map_err(io::Error::from)?;
    out.write_all(b"\n")
}

struct Document<'s, 'c, 'a> {
    shape: Shape<'s, 'c, 'a>,
    expand: bool,
}

impl Serialize for Document<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("version", &VERSION)?;
        map.serialize_entry("expandWildcards", &self.expand)?;
        match &self.shape {
            Shape::One(view) => view_entries(&mut map, view)?,
            Shape::Each(files) => map.serialize_entry(
                "files",
                &Elements(|| files.iter().map(|(file, view)| FileView { file, view })),
            )?,
        }
        map.end()
    }
}

/// One file's view, under `files`.
struct FileView<'s, 'c, 'a> {
    file: &'s str,
    view: &'s View<'c, 'a>,
}

impl Serialize for FileView<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("file", self.file)?;
        view_entries(&mut map, self.view)?;
        map.end()
    }
}

/// `agents`, `unattached` and `summary`.
fn view_entries<M: SerializeMap>(map: &mut M, view: &View<'_, '_>) -> Result<(), M::Error> {
    let caps = view.caps;
    map.serialize_entry(
        "agents",
        &Elements(|| {
            view.agents.iter().map(|agent| Section {
                caps,
                expand: view.expand,
                head: Some(agent),
                skills: &agent.skills,
            })
        }),
    )?;
    let unattached = view.unattached.map(|skills| Section {
        caps,
        expand: view.expand,
        head: None,
        skills,
    });
    map.serialize_entry("unattached", &unattached)?;
    let summary = Summary::of(view);
    map.serialize_entry(
        "summary",
        &SummaryJson {
            agents: summary.agents,
            skills: summary.skills,
            tools: summary.tools,
            needs_approval: summary.needs_approval,
            dead_references: summary.dead,
        },
    )
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct SummaryJson {
    agents: usize,
    skills: usize,
    tools: usize,
    needs_approval: usize,
    dead_references: usize,
}

/// An agent (its own keys, then its grants) or the unattached skills (the
/// grants alone).
struct Section<'c, 'a> {
    caps: &'c Capabilities<'a>,
    expand: bool,
    head: Option<&'c Agent<'a>>,
    skills: &'c [SkillRef<'a>],
}

impl Serialize for Section<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (caps, expand, skills) = (self.caps, self.expand, self.skills);
        let mut map = serializer.serialize_map(None)?;
        if let Some(agent) = self.head {
            map.serialize_entry("name", &agent.name)?;
            map.serialize_entry("label", &agent.label)?;
            map.serialize_entry("surface", agent.surface)?;
            map.serialize_entry("active", &agent.active)?;
            map.serialize_entry("path", &agent.path)?;
        }
        let earlier = super::earlier_namings(skills);
        map.serialize_entry(
            "skills",
            &Elements(|| {
                skills.iter().zip(&earlier).map(|(s, again)| SkillJson {
                    caps,
                    expand,
                    skill_ref: s,
                    again: again.is_some(),
                })
            }),
        )?;
        let grants = caps.grants(skills);
        if expand {
            map.serialize_entry(
                "tools",
                &Elements(|| grants.expanded().filter_map(|e| granted(caps, e))),
            )?;
        } else {
            map.serialize_entry(
                "tools",
                &Elements(|| grants.named().filter_map(|e| granted(caps, e))),
            )?;
        }
        map.serialize_entry(
            "wildcards",
            &Elements(|| {
                grants
                    .wildcards
                    .iter()
                    .map(|w| WildcardJson { caps, effective: w })
            }),
        )?;
        map.serialize_entry("toolCount", &grants.tool_count)?;
        map.serialize_entry("needsApproval", &grants.needs_approval)?;
        map.serialize_entry(
            "deadReferences",
            &Elements(|| caps.dead(skills).map(DeadJson)),
        )?;
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

/// A skill reference with its tool references.
struct SkillJson<'c, 'a> {
    caps: &'c Capabilities<'a>,
    expand: bool,
    skill_ref: &'c SkillRef<'a>,
    /// An earlier reference of the section names the same skill: its
    /// tools are listed there, once.
    again: bool,
}

impl Serialize for SkillJson<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (caps, r) = (self.caps, self.skill_ref);
        let def = r.skill.and_then(|i| caps.skills.get(i));
        let mut map = serializer.serialize_map(Some(8))?;
        map.serialize_entry("name", &r.name)?;
        map.serialize_entry("path", &r.path)?;
        map.serialize_entry("status", r.status.code())?;
        map.serialize_entry("definition", &def.map(|s| s.path.as_str()))?;
        map.serialize_entry("label", &def.and_then(|s| s.label))?;
        map.serialize_entry("surface", &def.map(|s| s.surface))?;
        map.serialize_entry("dead", &r.dead.as_deref().map(DeadJson))?;
        let refs = def.filter(|_| !self.again).map(|s| (s, s.refs.as_slice()));
        map.serialize_entry(
            "tools",
            &Elements(|| {
                refs.into_iter().flat_map(|(skill, refs)| {
                    refs.iter().map(move |tool_ref| RefJson {
                        caps,
                        expand: self.expand,
                        path: tool_ref.path(skill),
                        tool_ref,
                    })
                })
            }),
        )?;
        map.end()
    }
}

/// One entry of a skill's `tools`.
struct RefJson<'c, 'a> {
    caps: &'c Capabilities<'a>,
    expand: bool,
    path: String,
    tool_ref: &'c ToolRef<'a>,
}

impl Serialize for RefJson<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (caps, r) = (self.caps, self.tool_ref);
        let mut map = serializer.serialize_map(Some(6))?;
        map.serialize_entry("ref", r.text())?;
        map.serialize_entry("path", &self.path)?;
        map.serialize_entry("wildcard", &r.is_wildcard())?;
        map.serialize_entry("matches", &caps.matches(r))?;
        let names = || {
            caps.resolves(r)
                .filter_map(|t| caps.tools.get(t).map(|t| t.name.as_ref()))
        };
        match r.target() {
            Target::Wildcard(_) if !self.expand => map.serialize_entry("resolves", &None::<()>)?,
            _ => map.serialize_entry("resolves", &Elements(names))?,
        }
        map.serialize_entry("dead", &caps.dead_of(r).map(DeadJson))?;
        map.end()
    }
}

/// An effective tool with the references that grant it.
fn granted<'c, 'a>(caps: &'c Capabilities<'a>, e: EffectiveTool<'a>) -> Option<Granted<'c, 'a>> {
    let tool = caps.tools.get(e.tool)?;
    Some(Granted {
        caps,
        tool,
        effective: e,
    })
}

struct Granted<'c, 'a> {
    caps: &'c Capabilities<'a>,
    tool: &'c Tool<'a>,
    effective: EffectiveTool<'a>,
}

impl Serialize for Granted<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (caps, t) = (self.caps, self.tool);
        let (package, path) = match &t.source {
            ToolSource::Platform { package } => (Some(*package), None),
            ToolSource::Record { path } => (None, Some(path.as_str())),
            ToolSource::Action => (None, None),
        };
        let mut map = serializer.serialize_map(Some(11))?;
        map.serialize_entry("name", &t.name)?;
        map.serialize_entry("source", t.source.code())?;
        map.serialize_entry("package", &package)?;
        map.serialize_entry("path", &path)?;
        map.serialize_entry("status", t.status.code())?;
        map.serialize_entry("statusReason", &t.status.reason())?;
        let action = t
            .action
            .and_then(|i| caps.actions.get(i))
            .map(|a| ActionJson {
                name: a.name,
                object: a.object,
                path: a.path(),
            });
        map.serialize_entry("action", &action)?;
        map.serialize_entry("flow", &t.flow)?;
        map.serialize_entry("needsApproval", &t.approval.is_some())?;
        map.serialize_entry("approvalReason", &t.approval.map(|a| a.as_source()))?;
        let grants = || {
            self.effective.granted_by.iter().filter_map(|g| {
                let skill = caps.skills.get(g.skill)?;
                Some(GrantedBy {
                    skill: &skill.name,
                    reference: g.reference,
                })
            })
        };
        map.serialize_entry("grantedBy", &Elements(grants))?;
        map.end()
    }
}

#[derive(serde::Serialize)]
struct ActionJson<'s> {
    name: &'s str,
    object: Option<&'s str>,
    path: String,
}

/// One `grantedBy` entry.
#[derive(serde::Serialize)]
struct GrantedBy<'s> {
    skill: &'s str,
    #[serde(rename = "ref")]
    reference: &'s str,
}

/// A wildcard of a section, once.
struct WildcardJson<'c, 'a> {
    caps: &'c Capabilities<'a>,
    effective: &'c EffectiveWildcard,
}

impl Serialize for WildcardJson<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (caps, w) = (self.caps, self.effective);
        let wildcard = caps.wildcards.get(w.wildcard);
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("ref", wildcard.map_or("", |w| w.pattern))?;
        map.serialize_entry("matches", &wildcard.map_or(0, |w| w.len()))?;
        map.serialize_entry("needsApproval", &w.needs_approval)?;
        map.serialize_entry(
            "skills",
            &Elements(|| {
                w.skills
                    .iter()
                    .filter_map(|&s| caps.skills.get(s).map(|s| s.name.as_ref()))
            }),
        )?;
        map.end()
    }
}

struct DeadJson<'d, 'a>(&'d DeadReference<'a>);

impl Serialize for DeadJson<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        let mut map = serializer.serialize_map(Some(6))?;
        map.serialize_entry("kind", d.kind.code())?;
        map.serialize_entry("ref", d.reference)?;
        map.serialize_entry("path", &d.path)?;
        map.serialize_entry("skill", &d.skill)?;
        map.serialize_entry("message", &d.message)?;
        map.serialize_entry("suggestion", &d.suggestion)?;
        map.end()
    }
}
