//! Every skill's tool references, resolved once for the rules that read
//! them: which resolve to nothing (`ai-skill-tool-unresolved`) and which
//! name a raw action tool a record supersedes (`ai-skill-tool-superseded`).
//!
//! A large stack has a million references. Each is looked up in the
//! universe once; a reference found there is superseded exactly when the
//! name stored at its place is marked (the `action_<x>` of each action a
//! record binds is marked by place before the pass), so the second
//! question costs a bit test, not a second hash of every name.

use objectstack_registry::ACTION_PREFIX;
use objectstack_spec::json::Value;
use objectstack_spec::materialise::refine::Superseded;
use rayon::prelude::*;

use crate::stack::{Entry, Stack};
use crate::universe::Universe;

/// A reference that resolves to nothing: skill `skill` (an index into
/// [`Stack::skills`]), position `at` in its `tools`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Miss<'a> {
    pub(crate) skill: usize,
    pub(crate) at: usize,
    pub(crate) reference: &'a str,
}

/// A reference to `action_<action>` where a record binds `action`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SupersededRef<'a> {
    pub(crate) skill: usize,
    pub(crate) at: usize,
    pub(crate) action: &'a str,
}

/// The references of [`Stack::skills`], resolved: per task of
/// [`SKILLS_PER_TASK`] skills, in document order within each, the tasks
/// in order.
#[derive(Debug, Default)]
pub(crate) struct References<'a> {
    pub(crate) misses: Vec<Vec<Miss<'a>>>,
    pub(crate) superseded: Vec<Vec<SupersededRef<'a>>>,
}

/// Skills a task reads.
const SKILLS_PER_TASK: usize = 512;

/// Skills whose names are looked up together: enough for the lookups to
/// overlap, few enough that the buffers stay small.
const SKILLS_PER_LOOKUP: usize = 32;

impl<'a> References<'a> {
    /// Resolves every reference of `stack`'s skills against `universe`, in
    /// parallel chunks of skills.
    pub(crate) fn resolve(
        stack: &Stack<'a>,
        universe: &Universe,
        superseded: &Superseded<'_>,
    ) -> Self {
        let marks = (!superseded.is_empty()).then(|| Marks::of(universe, superseded));
        let lookups = Lookups {
            universe,
            superseded,
            marks: marks.as_ref(),
        };
        let (misses, superseded): (Vec<_>, Vec<_>) = stack
            .skills
            .par_chunks(SKILLS_PER_TASK)
            .enumerate()
            .map(|(chunk, skills)| lookups.chunk(chunk * SKILLS_PER_TASK, skills))
            .unzip();
        References { misses, superseded }
    }
}

/// The `action_<x>` names, by place in the universe, of the actions `x`
/// records bind: one bit per byte of the universe's names.
struct Marks {
    bits: Vec<u64>,
}

impl Marks {
    fn of(universe: &Universe, superseded: &Superseded<'_>) -> Self {
        let mut marks = Marks { bits: Vec::new() };
        let mut name = String::new();
        for action in superseded.actions() {
            name.clear();
            name.push_str(ACTION_PREFIX);
            name.push_str(action);
            if let Some(place) = universe.place(&name) {
                marks.set(place);
            }
        }
        marks
    }

    fn set(&mut self, place: usize) {
        let word = place / 64;
        if self.bits.len() <= word {
            self.bits.resize(word + 1, 0);
        }
        if let Some(bits) = self.bits.get_mut(word) {
            *bits |= 1 << (place % 64);
        }
    }

    fn get(&self, place: usize) -> bool {
        self.bits
            .get(place / 64)
            .is_some_and(|bits| bits & (1 << (place % 64)) != 0)
    }
}

/// What one pass over the references reads.
struct Lookups<'u, 's> {
    universe: &'u Universe,
    superseded: &'s Superseded<'s>,
    /// `None` when no record binds an action (nothing is superseded).
    marks: Option<&'u Marks>,
}

impl Lookups<'_, '_> {
    /// The misses and superseded references of `skills`, the first of
    /// which is skill `first`.
    fn chunk<'a>(
        &self,
        first: usize,
        skills: &[Entry<'a>],
    ) -> (Vec<Miss<'a>>, Vec<SupersededRef<'a>>) {
        let mut misses = Vec::new();
        let mut superseded = Vec::new();
        let mut exact = Vec::new();
        let mut places = Vec::new();
        // A wildcard's findings are made while the group is read, before
        // the group's exact names are looked up: then the lists are sorted
        // back into document order.
        let mut unordered = false;
        for (group, skills) in skills.chunks(SKILLS_PER_LOOKUP).enumerate() {
            exact.clear();
            places.clear();
            for (k, skill) in skills.iter().enumerate() {
                let Some(Value::Array(refs)) = skill.record.get("tools") else {
                    continue;
                };
                let skill = first + group * SKILLS_PER_LOOKUP + k;
                for (at, value) in refs.iter().enumerate() {
                    let Some(reference) = value.as_str().filter(|s| !s.is_empty()) else {
                        continue;
                    };
                    if !reference.ends_with('*') {
                        exact.push(reference);
                        places.push((skill, at));
                        continue;
                    }
                    if !self.wildcard_resolves(reference) {
                        unordered = true;
                        misses.push(Miss {
                            skill,
                            at,
                            reference,
                        });
                    }
                    if let Some(action) = self.binds(reference) {
                        unordered = true;
                        superseded.push(SupersededRef { skill, at, action });
                    }
                }
            }
            self.universe.place_each(&exact, |i, place| {
                let (Some(&(skill, at)), Some(&reference)) = (places.get(i), exact.get(i)) else {
                    return;
                };
                let action = match place {
                    // The name stored there is the reference itself: it is
                    // superseded exactly when that place is marked.
                    Some(place) => self
                        .marks
                        .filter(|marks| marks.get(place))
                        .and_then(|_| reference.strip_prefix(ACTION_PREFIX)),
                    None => {
                        misses.push(Miss {
                            skill,
                            at,
                            reference,
                        });
                        self.binds(reference)
                    }
                };
                if let Some(action) = action {
                    superseded.push(SupersededRef { skill, at, action });
                }
            });
        }
        if unordered {
            misses.sort_by_key(|m| (m.skill, m.at));
            superseded.sort_by_key(|s| (s.skill, s.at));
        }
        (misses, superseded)
    }

    /// Whether a trailing-`*` family wildcard matches some name.
    fn wildcard_resolves(&self, reference: &str) -> bool {
        let prefix = reference.strip_suffix('*').unwrap_or(reference);
        self.universe.matches_prefix(prefix)
    }

    /// The action `reference` names as `action_<action>`, when a record
    /// binds it.
    fn binds<'r>(&self, reference: &'r str) -> Option<&'r str> {
        self.marks?;
        reference
            .strip_prefix(ACTION_PREFIX)
            .filter(|action| self.superseded.contains(action))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Skill, position and name (or action) of each reference found.
    type Found = Vec<(usize, usize, String)>;

    /// The misses and superseded references of a stack, resolved as the
    /// lint resolves them.
    fn resolve(stack: serde_json::Value) -> (Found, Found) {
        let text = stack.to_string();
        let arena = objectstack_spec::json::Arena::new();
        let root = objectstack_spec::json::parse_object(&text, &arena).unwrap();
        let roots = [root];
        let view_arena = objectstack_spec::json::Arena::new();
        let view = Stack::new(&roots, &view_arena);
        let cx = crate::rule::Context::new(&view);
        let refs = cx.references();
        let misses = refs
            .misses
            .iter()
            .flatten()
            .map(|m| (m.skill, m.at, m.reference.to_owned()))
            .collect();
        let superseded = refs
            .superseded
            .iter()
            .flatten()
            .map(|s| (s.skill, s.at, s.action.to_owned()))
            .collect();
        (misses, superseded)
    }

    const D: &str = "Does the thing this action does, described for a model.";

    /// The marks agree with asking the records of every reference: found
    /// or not, exact or wildcard, named by a record, a platform tool or an
    /// action, and in document order across many chunks.
    #[test]
    fn marks_find_what_asking_every_reference_finds() {
        let action = |name: &str| {
            json!({"name": name, "type": "script", "target": "t",
                   "ai": {"exposed": true, "description": D}})
        };
        let tools = [
            "action_close",
            "action_open",
            "action_hidden",
            "action_shadowed",
            "action_*",
            "action_clo*",
            "action_nothing",
            "close_fixed",
            "query_data",
            "action_open",
        ];
        let skills: Vec<_> = (0..1100)
            .map(|i| json!({"name": format!("s{i}"), "tools": tools}))
            .collect();
        let stack = json!({
            "actions": [action("close"), action("open"), action("shadowed"), {"name": "hidden"}],
            "tools": [
                {"name": "close_fixed", "binding": {"type": "action", "name": "close"}},
                {"name": "hidden_bound", "binding": {"type": "action", "name": "hidden"}},
                // A record that takes the raw tool's name binds another
                // action: its name is not superseded by place.
                {"name": "action_shadowed", "binding": {"type": "action", "name": "open"}},
                {"name": "star", "binding": {"type": "action", "name": "clo*"}}
            ],
            "skills": skills
        });
        let (misses, superseded) = resolve(stack);
        let per_skill_misses = [(2, "action_hidden"), (6, "action_nothing")];
        let per_skill_superseded = [
            (0, "close"),
            (1, "open"),
            (2, "hidden"),
            (5, "clo*"),
            (9, "open"),
        ];
        let want = |list: &[(usize, &str)], prefix: &str| -> Vec<(usize, usize, String)> {
            (0..1100)
                .flat_map(|s| {
                    list.iter()
                        .map(move |&(at, r)| (s, at, format!("{prefix}{r}")))
                })
                .collect()
        };
        assert_eq!(misses, want(&per_skill_misses, ""));
        assert_eq!(superseded, want(&per_skill_superseded, ""));
    }

    #[test]
    fn nothing_is_superseded_without_a_binding_record() {
        let stack = json!({
            "actions": [{"name": "close", "type": "script", "target": "t",
                         "ai": {"exposed": true, "description": D}}],
            "tools": [{"name": "loose"}],
            "skills": [{"name": "s", "tools": ["action_close", "ghost", 7, "", "loose"]}]
        });
        let (misses, superseded) = resolve(stack);
        assert_eq!(misses, [(0, 1, "ghost".to_owned())]);
        assert!(superseded.is_empty());
    }
}
