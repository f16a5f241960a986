//! The part of a [`Capabilities`] a renderer shows (one agent, or all),
//! and its summary counts.

use super::*;

/// The part of a [`Capabilities`] being rendered.
pub(super) struct View<'c, 'a> {
    pub(super) caps: &'c Capabilities<'a>,
    pub(super) agents: Vec<&'c Agent<'a>>,
    pub(super) unattached: Option<&'c [SkillRef<'a>]>,
    /// The agent asked for (an index into [`Capabilities::agents`]).
    pub(super) only: Option<usize>,
    pub(super) expand: bool,
}

impl<'c, 'a> View<'c, 'a> {
    pub(super) fn select(
        caps: &'c Capabilities<'a>,
        options: &RenderOptions,
    ) -> Result<Self, CapabilitiesError> {
        let (agents, unattached, only) = match options.agent.as_deref() {
            Some(name) => match caps.agents.iter().position(|a| a.name == name) {
                Some(i) => (caps.agents.get(i).into_iter().collect(), None, Some(i)),
                None => {
                    return Err(CapabilitiesError::UnknownAgent {
                        name: name.to_owned(),
                        known: caps
                            .agents
                            .iter()
                            .map(|a| a.name.clone().into_owned())
                            .collect(),
                    });
                }
            },
            None => (
                caps.agents.iter().collect(),
                Some(caps.unattached.as_slice()).filter(|s| !s.is_empty()),
                None,
            ),
        };
        Ok(View {
            caps,
            agents,
            unattached,
            only,
            expand: options.expand,
        })
    }

    /// The skill references of each shown section: agents, then the
    /// unattached skills.
    pub(super) fn sections(&self) -> impl Iterator<Item = &'c [SkillRef<'a>]> + '_ {
        self.agents
            .iter()
            .map(|a| a.skills.as_slice())
            .chain(self.unattached)
    }
}

/// Counts over what a [`View`] shows.
pub(super) struct Summary {
    pub(super) agents: usize,
    pub(super) skills: usize,
    pub(super) tools: usize,
    pub(super) needs_approval: usize,
    pub(super) dead: usize,
}

impl Summary {
    /// Over the distinct skills the sections name, not over the sections:
    /// linear in the stack, however many agents share a skill.
    pub(super) fn of(view: &View<'_, '_>) -> Self {
        let caps = view.caps;
        let mut shown = vec![false; caps.skills.len()];
        let mut granting = vec![false; caps.skills.len()];
        let mut dead = 0;
        for section in view.sections() {
            for skill_ref in section {
                dead += usize::from(skill_ref.dead.is_some());
                let Some(i) = skill_ref.skill else { continue };
                if let Some(s) = shown.get_mut(i) {
                    *s = true;
                }
                if skill_ref.status.grants_tools()
                    && let Some(g) = granting.get_mut(i)
                {
                    *g = true;
                }
            }
        }
        // The granted tools: exact ones as positions in name order, and
        // each distinct wildcard once.
        let mut exact = vec![false; caps.tools.len()];
        let mut wild = vec![false; caps.wildcards.len()];
        let mut skills = 0;
        for (i, skill) in caps.skills.iter().enumerate() {
            if !shown.get(i).copied().unwrap_or(false) {
                continue;
            }
            skills += 1;
            dead += skill.dead.len();
            if !granting.get(i).copied().unwrap_or(false) {
                continue;
            }
            for r in &skill.refs {
                let slot = match r.target() {
                    Target::Tool(t) => caps.rank.get(t).and_then(|&k| exact.get_mut(k)),
                    Target::Wildcard(w) => wild.get_mut(w),
                    Target::Dead(_) => None,
                };
                if let Some(slot) = slot {
                    *slot = true;
                }
            }
        }
        let ranges = caps
            .wildcards
            .iter()
            .zip(&wild)
            .filter(|(_, used)| **used)
            .map(|(w, _)| w.matches.clone())
            .collect();
        let mut positions = exact
            .iter()
            .enumerate()
            .filter(|(_, e)| **e)
            .map(|(k, _)| k);
        let (tools, needs_approval) = caps.union(merge(ranges), &mut positions);
        Summary {
            agents: view.agents.len(),
            skills,
            tools,
            needs_approval,
            dead,
        }
    }
}
