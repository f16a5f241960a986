//! Building [`Capabilities`] from the lint's [`Stack`] (the collections
//! read once, as the rules read them, with the refinement predicate's
//! answers the rules get): one pass that collects actions, skills,
//! wildcards and tools, resolves every reference against the tool names,
//! and records each dead one.

use super::*;
use crate::rules::ai_skill_surface_mismatch::{binds, surface};

fn with_suggestion(mut message: String, suggestion: Option<&str>) -> String {
    if let Some(name) = suggestion {
        message.push_str(&format!(" Did you mean \"{name}\"?"));
    }
    message
}

fn display_name<'a>(record: &Record<'a>) -> Cow<'a, str> {
    match record.name() {
        Some(n) => Cow::Borrowed(n),
        None => Cow::Owned(format!("#{}", record.index())),
    }
}

fn active_of(record: &Record<'_>) -> bool {
    record.get("active") != Some(&Value::Bool(false))
}

/// Builds [`Capabilities`]; holds the inputs and lookup tables while it
/// does.
pub(super) struct Builder<'a> {
    /// Each source's file name, by source index (`None` for one stack).
    files: Vec<Option<&'a str>>,
    /// The collections, read once as the rules read them; the actions are
    /// taken out (and freed) once they are read.
    stack: Stack<'a>,
    actions: Vec<Action<'a>>,
    action_by_name: FastMap<&'a str, usize>,
    skills: Vec<Skill<'a>>,
    skill_by_name: FastMap<&'a str, usize>,
    wildcards: Vec<Wildcard<'a>>,
    wildcard_by_pattern: FastMap<&'a str, usize>,
    dead: Vec<DeadReference<'a>>,
    /// The actions tool records bind: their `action_<name>` tools are not
    /// registered (ADR-0109 Phase 2), so they are not tools here.
    superseded: refine::Superseded<'a>,
    /// The names of the records that refine their executable.
    refining: FastSet<&'a str>,
}

/// The tool names during the build: hashed, sorted, and the suggestions
/// for the references that miss.
struct Names<'t> {
    tools: &'t [Tool<'t>],
    /// Tool indices, hashed by name.
    table: hashbrown::HashTable<u32>,
    hasher: FastHash,
    /// Tool indices in name order.
    sorted: Vec<u32>,
    /// The suggestion for each distinct tool reference that misses.
    suggestions: FastMap<&'t str, Option<String>>,
    skill_names: OnceCell<Universe>,
    /// Every skill record's name, in document order.
    skill_list: Vec<&'t str>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(files: Vec<Option<&'a str>>, stack: Stack<'a>) -> Self {
        Builder {
            files,
            stack,
            actions: Vec::new(),
            action_by_name: FastMap::default(),
            skills: Vec::new(),
            skill_by_name: FastMap::default(),
            wildcards: Vec::new(),
            wildcard_by_pattern: FastMap::default(),
            dead: Vec::new(),
            superseded: refine::Superseded::default(),
            refining: FastSet::default(),
        }
    }

    /// The file a source index stands for.
    fn file(&self, source: usize) -> Option<&'a str> {
        self.files.get(source).copied().flatten()
    }

    /// A collection's records, each with its file.
    fn with_files(&self, entries: &[Entry<'a>]) -> Vec<(Option<&'a str>, Record<'a>)> {
        entries
            .iter()
            .map(|e| (self.file(e.source()), e.record))
            .collect()
    }

    pub(super) fn build(mut self) -> Capabilities<'a> {
        self.superseded = refine::Superseded::of(self.stack.tools.iter().map(Entry::fields));
        // The predicate's answer for every tool record, as the lint has it;
        // asked before the actions are taken out of the stack.
        let judged = crate::rule::judge_records(&self.stack);
        self.read_actions();
        // Vectors grown by doubling keep up to half their room unused; the
        // large ones are trimmed once they are complete.
        self.actions.shrink_to_fit();
        let flows: FastSet<&'a str> = std::mem::take(&mut self.stack.flows)
            .iter()
            .filter_map(Entry::name)
            .collect();
        let tools = self.read_tools(&flows, judged);
        let skills = std::mem::take(&mut self.stack.skills);
        let skill_records = self.with_files(&skills);
        drop(skills);
        let (by_name, rank, approvals_before, skills_done, agents, unattached) = {
            let names = Names::new(&tools, &skill_records);
            self.read_skills(&skill_records, &names);
            self.skills.shrink_to_fit();
            self.dead.shrink_to_fit();
            let agents = self.read_agents(&names);
            let by_name: Vec<usize> = names.sorted.iter().map(|&i| wide(i)).collect();
            let mut rank = vec![0; tools.len()];
            for (k, &i) in by_name.iter().enumerate() {
                if let Some(r) = rank.get_mut(i) {
                    *r = k;
                }
            }
            let mut approvals_before = Vec::with_capacity(by_name.len() + 1);
            let mut count = 0;
            approvals_before.push(0);
            for &i in &by_name {
                count += usize::from(tools.get(i).is_some_and(|t| t.approval.is_some()));
                approvals_before.push(count);
            }
            let mut unattached = self.unattached(&agents);
            unattached.shrink_to_fit();
            (
                by_name,
                rank,
                approvals_before,
                std::mem::take(&mut self.skills),
                agents,
                unattached,
            )
        };
        Capabilities {
            agents,
            unattached,
            skills: skills_done,
            tools,
            actions: self.actions,
            wildcards: self.wildcards,
            dead_references: self.dead,
            by_name,
            rank,
            approvals_before,
        }
    }

    fn unattached(&self, agents: &[Agent<'a>]) -> Vec<SkillRef<'a>> {
        let mut named = vec![false; self.skills.len()];
        for r in agents.iter().flat_map(|a| &a.skills) {
            if let Some(n) = r.skill.and_then(|i| named.get_mut(i)) {
                *n = true;
            }
        }
        self.skills
            .iter()
            .enumerate()
            .filter(|(i, _)| !named.get(*i).copied().unwrap_or(false))
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
            .collect()
    }

    fn read_actions(&mut self) {
        let actions = std::mem::take(&mut self.stack.actions);
        let stack_actions = self.stack.stack_actions;
        for (i, action) in actions.iter().enumerate() {
            let record = &action.entry.record;
            let file = self.file(action.entry.source());
            if i < stack_actions {
                // A stack-level action: no owner in its file's `objects`,
                // whatever object its `objectName` joins it to.
                self.push_action(record, (file, None), record.str("objectName"));
                continue;
            }
            let object = action.owner().and_then(|o| self.stack.objects.get(o));
            let owner = object.map(|o| small(o.record.index()));
            let name = record
                .str("objectName")
                .or_else(|| object.and_then(|o| o.record.name()));
            self.push_action(record, (file, owner), name);
        }
        // The objects were read for their actions only.
        self.stack.objects = Vec::new();
    }

    fn push_action(
        &mut self,
        record: &Record<'a>,
        (file, owner): (Option<&'a str>, Option<u32>),
        object: Option<&'a str>,
    ) {
        let Some(name) = record.name() else { return };
        let fields: &Map<'_> = record.fields;
        let index = self.actions.len();
        self.actions.push(Action {
            name,
            label: record.str("label"),
            object,
            skip: materialise::static_skip(fields).map(Box::new),
            approval: materialise::needs_confirmation(fields),
            file,
            owner,
            index: u32::try_from(record.index()).unwrap_or(u32::MAX),
        });
        self.action_by_name.entry(name).or_insert(index);
    }

    fn read_tools(
        &mut self,
        flows: &FastSet<&'a str>,
        judged: Vec<refine::Judgement<'a>>,
    ) -> Vec<Tool<'a>> {
        let mut tools = Vec::new();
        let mut taken: FastSet<&'a str> = FastSet::default();
        for group in objectstack_registry::GROUPS {
            for name in group.names {
                if taken.insert(name) {
                    tools.push(Tool {
                        name: Cow::Borrowed(*name),
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
        }
        let entries = std::mem::take(&mut self.stack.tools);
        let records = self.with_files(&entries);
        drop(entries);
        for ((file, record), judgement) in records.into_iter().zip(judged) {
            if let Ok(Some(r)) = &judgement {
                self.refining.insert(r.name);
            }
            let Some(name) = record.name() else { continue };
            if !taken.insert(name) {
                continue;
            }
            let mut tool = Tool {
                name: Cow::Borrowed(name),
                source: ToolSource::Record {
                    path: located(file, &path_of("tools", record.index())),
                },
                status: ToolStatus::Inert,
                action: None,
                flow: None,
                approval: None,
            };
            self.bind(&mut tool, record.get("binding"), flows);
            self.refine(&mut tool, record.fields, judgement);
            tools.push(tool);
        }
        let mut taken_actions: FastSet<&'a str> = FastSet::default();
        for (i, action) in self.actions.iter().enumerate() {
            if action.skip.is_some() || self.superseded.contains(action.name) {
                continue;
            }
            let name = objectstack_registry::action_tool_name(action.name);
            if taken.contains(name.as_str()) || !taken_actions.insert(action.name) {
                continue;
            }
            tools.push(Tool {
                name: Cow::Owned(name),
                source: ToolSource::Action,
                status: ToolStatus::Ready,
                action: Some(i),
                flow: None,
                approval: action.approval,
            });
        }
        tools.shrink_to_fit();
        tools
    }

    /// Applies the refinement predicate's answer to a record's tool: its
    /// status (a record the predicate skips is not registered, whatever
    /// its binding names) and, for a refinement, its approval.
    fn refine(&self, tool: &mut Tool<'a>, record: &'a Map<'a>, judgement: refine::Judgement<'a>) {
        match judgement {
            Ok(None) => {}
            Ok(Some(r)) => {
                tool.status = ToolStatus::Ready;
                let gate = (r.requires_confirmation == Some(true))
                    .then_some(ConfirmationReason::AiRequiresConfirmation);
                tool.approval = match r.binding {
                    Binding::Action(_) => tool.approval.or(gate),
                    Binding::Flow(_) => gate,
                };
            }
            Err(skip @ (RecordSkip::InvalidBinding(_) | RecordSkip::BindingUnresolved)) => {
                if tool.status == ToolStatus::Ready {
                    tool.status = ToolStatus::BindingUnresolved(
                        skip.reason(refine::binding(record).and_then(Result::ok)),
                    );
                }
            }
            Err(skip) => {
                tool.status = ToolStatus::NotRegistered {
                    code: skip.code(),
                    reason: skip.reason(refine::binding(record).and_then(Result::ok)),
                };
            }
        }
    }

    /// Resolves a tool record's Phase-2 `binding`.
    fn bind(&self, tool: &mut Tool<'a>, binding: Option<&'a Value<'a>>, flows: &FastSet<&'a str>) {
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
                tool.flow = Some(name);
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

    fn read_skills(&mut self, records: &[(Option<&'a str>, Record<'a>)], names: &Names<'_>) {
        for (file, record) in records {
            let index = self.skills.len();
            let name = display_name(record);
            let path = located(*file, &path_of("skills", record.index()));
            let entries = record
                .get("tools")
                .and_then(Value::as_array)
                .unwrap_or_default();
            // Sized once: a million references in vectors grown by
            // doubling would waste a third of their memory.
            let mut refs = Vec::with_capacity(entries.len());
            let dead_start = self.dead.len();
            let mut texts: FastSet<&'a str> = FastSet::default();
            for (j, entry) in entries.iter().enumerate() {
                let Some(text) = entry.as_str().filter(|t| !t.is_empty()) else {
                    continue;
                };
                let target = self.resolve(text, &path, j, &name, names);
                refs.push(ToolRef::new(entry, j, !texts.insert(text), target));
            }
            refs.shrink_to_fit();
            if let Some(n) = record.name() {
                self.skill_by_name.entry(n).or_insert(index);
            }
            self.skills.push(Skill {
                name,
                label: record.str("label"),
                surface: surface(record),
                active: active_of(record),
                path,
                refs,
                dead: dead_start..self.dead.len(),
            });
        }
    }

    /// Resolves one skill tool entry against the universe.
    // The skill's name is cloned into dead references only, still borrowed
    // from the document when it can be: a `&str` would lose that.
    #[allow(clippy::ptr_arg)]
    fn resolve(
        &mut self,
        text: &'a str,
        skill_path: &str,
        j: usize,
        skill: &Cow<'a, str>,
        names: &Names<'_>,
    ) -> Target {
        let dead = |kind: DeadKind, message: String, suggestion: Option<&str>| DeadReference {
            kind,
            reference: text,
            path: format!("{skill_path}.tools[{j}]"),
            skill: Some(skill.clone()),
            message: with_suggestion(message, suggestion),
            suggestion: suggestion.map(str::to_owned),
        };
        if let Some(prefix) = text.strip_suffix('*') {
            let id = match self.wildcard_by_pattern.get(text) {
                Some(&id) => id,
                None => {
                    let id = self.wildcards.len();
                    self.wildcards.push(Wildcard {
                        pattern: text,
                        matches: names.prefixed(prefix),
                    });
                    self.wildcard_by_pattern.insert(text, id);
                    id
                }
            };
            let empty = self.wildcards.get(id).is_none_or(Wildcard::is_empty);
            if !empty {
                return Target::Wildcard(id);
            }
            let d = dead(
                DeadKind::WildcardEmpty,
                format!("no tool name starts with \"{prefix}\", so the wildcard grants nothing."),
                None,
            );
            return self.push_dead(d);
        }
        if let Some(i) = names.get(text) {
            return Target::Tool(i);
        }
        if let Some(action) = text
            .strip_prefix(objectstack_registry::ACTION_PREFIX)
            .filter(|a| self.superseded.contains(a))
        {
            let all = self.superseded.refined_by(action);
            let refining: Vec<&str> = all
                .iter()
                .copied()
                .filter(|b| self.refining.contains(b))
                .collect();
            let named = refining
                .iter()
                .map(|b| format!("\"{b}\""))
                .collect::<Vec<_>>()
                .join(", ");
            let message = match refining.len() {
                0 => format!(
                    "a tool record binds action \"{action}\", so \"{text}\" is not registered, \
                     and no record refines it: fix the record or remove it."
                ),
                1 => format!(
                    "a tool record binds action \"{action}\", so its refinement {named} is \
                     registered instead of \"{text}\"."
                ),
                _ => format!(
                    "tool records bind action \"{action}\", so its refinements {named} are \
                     registered instead of \"{text}\"."
                ),
            };
            let d = dead(DeadKind::ToolSuperseded, message, refining.first().copied());
            return self.push_dead(d);
        }
        let not_materialised = text
            .strip_prefix(objectstack_registry::ACTION_PREFIX)
            .and_then(|name| self.action_by_name.get(name))
            .and_then(|&i| self.actions.get(i))
            .and_then(|a| a.skip.as_ref().map(|skip| (a, skip)));
        let d = match not_materialised {
            Some((action, skip)) => dead(
                DeadKind::ActionNotMaterialised,
                format!(
                    "action \"{}\" ({}) exists but does not become a tool: {skip}.",
                    action.name,
                    action.path()
                ),
                None,
            ),
            None => dead(
                DeadKind::ToolUnresolved,
                format!(
                    "no platform tool, tool record or AI-exposed action is named \"{text}\"; \
                     the model is told about a tool it cannot call."
                ),
                names.suggestion(text),
            ),
        };
        self.push_dead(d)
    }

    fn push_dead(&mut self, dead: DeadReference<'a>) -> Target {
        self.dead.push(dead);
        Target::Dead(self.dead.len() - 1)
    }

    fn read_agents(&self, names: &Names<'_>) -> Vec<Agent<'a>> {
        let mut agents = Vec::new();
        for (file, record) in self.with_files(&self.stack.agents) {
            let name = display_name(&record);
            let path = path_of("agents", record.index());
            let surface = surface(&record);
            let mut skills = Vec::new();
            if let Some(entries) = record.get("skills").and_then(Value::as_array) {
                for (j, entry) in entries.iter().enumerate() {
                    let Some(skill_name) = entry.as_str().filter(|s| !s.is_empty()) else {
                        continue;
                    };
                    let at = located(file, &path.key("skills").index(j));
                    skills.push(self.skill_ref(skill_name, at, &name, surface, names));
                }
            }
            agents.push(Agent {
                name,
                label: record.str("label"),
                surface,
                active: active_of(&record),
                path: located(file, &path),
                skills,
            });
        }
        agents
    }

    fn skill_ref(
        &self,
        name: &'a str,
        path: String,
        agent: &str,
        surface: &str,
        names: &Names<'_>,
    ) -> SkillRef<'a> {
        let dead = |kind: DeadKind, message: String, suggestion: Option<&str>| {
            Some(Box::new(DeadReference {
                kind,
                reference: name,
                path: path.clone(),
                skill: None,
                message: with_suggestion(message, suggestion),
                suggestion: suggestion.map(str::to_owned),
            }))
        };
        let Some((index, skill)) = self
            .skill_by_name
            .get(name)
            .and_then(|&i| self.skills.get(i).map(|s| (i, s)))
        else {
            let suggestion = names.skill_names().suggest(name);
            return SkillRef {
                name: Cow::Borrowed(name),
                path: path.clone(),
                skill: None,
                status: SkillStatus::Missing,
                dead: dead(
                    DeadKind::SkillMissing,
                    format!(
                        "agent \"{agent}\" names skill \"{name}\", which this stack does not \
                         define; it adds no tools."
                    ),
                    suggestion,
                ),
            };
        };
        let (status, dead) = if !skill.active {
            (
                SkillStatus::Inactive,
                dead(
                    DeadKind::SkillInactive,
                    format!(
                        "skill \"{name}\" is inactive (`active: false`), so the runtime drops \
                         it and agent \"{agent}\" gets none of its tools."
                    ),
                    None,
                ),
            )
        } else if !binds(surface, skill.surface) {
            (
                SkillStatus::SurfaceMismatch,
                dead(
                    DeadKind::SkillSurfaceMismatch,
                    format!(
                        "skill \"{name}\" has surface `{}` but agent \"{agent}\" has surface \
                         `{surface}`; the runtime refuses to bind it (use `{surface}` or \
                         `both`).",
                        skill.surface
                    ),
                    None,
                ),
            )
        } else {
            (SkillStatus::Attached, None)
        };
        SkillRef {
            name: Cow::Borrowed(name),
            path,
            skill: Some(index),
            status,
            dead,
        }
    }
}

impl<'t> Names<'t> {
    fn new(tools: &'t [Tool<'t>], skills: &[(Option<&'t str>, Record<'t>)]) -> Self {
        let hasher = FastHash::default();
        let mut table = hashbrown::HashTable::with_capacity(tools.len());
        let name = |i: u32| tools.get(wide(i)).map_or("", |t| t.name.as_ref());
        for (i, tool) in tools.iter().enumerate() {
            table.insert_unique(hasher.hash_one(tool.name.as_ref()), small(i), |&j| {
                hasher.hash_one(name(j))
            });
        }
        let mut sorted: Vec<u32> = (0..tools.len()).map(small).collect();
        sorted.sort_unstable_by(|&a, &b| name(a).cmp(name(b)));
        let mut names = Names {
            tools,
            table,
            hasher,
            sorted,
            suggestions: FastMap::default(),
            skill_names: OnceCell::new(),
            skill_list: skills.iter().filter_map(|(_, r)| r.name()).collect(),
        };
        names.suggest_misses(skills);
        names
    }

    fn name(&self, i: u32) -> &'t str {
        self.tools.get(wide(i)).map_or("", |t| t.name.as_ref())
    }

    /// The tool named so.
    fn get(&self, name: &str) -> Option<usize> {
        self.table
            .find(self.hasher.hash_one(name), |&i| self.name(i) == name)
            .map(|&i| wide(i))
    }

    /// Suggests a name for every distinct exact reference that misses,
    /// before the references are built: the suggestion index is then
    /// freed before the view's largest part exists.
    fn suggest_misses(&mut self, skills: &[(Option<&'t str>, Record<'t>)]) {
        let mut universe: Option<Universe> = None;
        for (_, record) in skills {
            let entries = record
                .get("tools")
                .and_then(Value::as_array)
                .unwrap_or_default();
            for text in entries.iter().filter_map(Value::as_str) {
                if text.is_empty()
                    || text.ends_with('*')
                    || self.suggestions.contains_key(text)
                    || self.get(text).is_some()
                {
                    continue;
                }
                // The lint's own universe, over this view's tool names (no
                // name copied).
                let universe = universe.get_or_insert_with(|| {
                    Universe::from_parts(
                        self.tools.iter().map(|t| ("", t.name.as_ref())),
                        self.tools.len(),
                    )
                });
                self.suggestions
                    .insert(text, universe.suggest(text).map(str::to_owned));
            }
        }
    }

    /// The suggestion for a reference that misses.
    fn suggestion(&self, text: &str) -> Option<&str> {
        self.suggestions.get(text).and_then(Option::as_deref)
    }

    /// The positions in name order of the names starting with `prefix`.
    fn prefixed(&self, prefix: &str) -> Range<usize> {
        let start = self.sorted.partition_point(|&i| self.name(i) < prefix);
        let end = self.sorted.partition_point(|&i| {
            let n = self.name(i);
            n < prefix || n.starts_with(prefix)
        });
        start..end.max(start)
    }

    /// The skill names in document order, for suggestions.
    fn skill_names(&self) -> &Universe {
        self.skill_names.get_or_init(|| {
            Universe::from_parts(
                self.skill_list.iter().map(|&n| ("", n)),
                self.skill_list.len(),
            )
        })
    }
}
