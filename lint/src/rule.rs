//! The rule framework: a [`Rule`] is an id, a default severity, its
//! documentation and a check over the stack's `Context`.
//!
//! A rule's documentation is written once, as the `///` comment on its
//! `static` in `rules/<id>.rs`; the `declare_rule!` macro both attaches it
//! as rustdoc and stores the same text in [`Rule::doc`], so what `explain`
//! prints and what rustdoc shows cannot drift apart.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use rayon::prelude::*;

/// A fast hasher for names from the document.
pub(crate) type FastHash = foldhash::fast::RandomState;

use objectstack_spec::json::{Map, Value};
use objectstack_spec::materialise::refine::{
    self, ActionAt, RecordSkip, Refinement, Reserved, Superseded,
};
use objectstack_spec::materialise::{
    ConfirmationReason, ai_block, destructive_signal, materialises,
};

use crate::action_names::ActionNames;
use crate::anchor::Anchor;
use crate::finding::{Finding, Severity, Text};
use crate::references::References;
use crate::stack::{ActionEntry, Entry, Stack};
use crate::universe::{Universe, nearest};

/// A lint rule.
pub struct Rule {
    pub(crate) id: &'static str,
    pub(crate) default_severity: Severity,
    pub(crate) doc: &'static str,
    pub(crate) check: for<'s, 'a> fn(&Context<'s, 'a>, &mut Vec<Pending<'a>>),
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("id", &self.id)
            .field("default_severity", &self.default_severity)
            .finish_non_exhaustive()
    }
}

impl Rule {
    /// The stable kebab-case id.
    pub fn id(&self) -> &'static str {
        self.id
    }

    /// The severity before configuration.
    pub fn default_severity(&self) -> Severity {
        self.default_severity
    }

    /// The rule's documentation (Markdown): a one-line summary, then
    /// *What it finds*, *Why it matters*, *Example* and *How to fix*.
    pub fn doc(&self) -> String {
        self.doc
            .lines()
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_owned()
    }

    /// The first paragraph of the documentation, on one line.
    pub fn summary(&self) -> String {
        self.doc
            .lines()
            .map(str::trim)
            .take_while(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Declares a rule `static` whose `///` comment is also its [`Rule::doc`].
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])+
        pub static $name:ident = {
            id: $id:literal,
            severity: $severity:expr,
            check: $check:path $(,)?
        };
    ) => {
        $(#[doc = $doc])+
        pub static $name: $crate::rule::Rule = $crate::rule::Rule {
            id: $id,
            default_severity: $severity,
            doc: concat!($($doc, "\n"),+),
            check: $check,
        };
    };
}
pub(crate) use declare_rule;

/// A finding as a rule reports it: the finding plus where to locate it.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    /// Where to locate it.
    pub(crate) site: Site,
    /// The finding (severity is the rule's default until configured).
    pub(crate) finding: Finding,
}

/// Where a hit's finding is to be located. The engine keeps it beside the
/// findings, not in them, so that the findings are made straight into the
/// vector the run returns (a large stack has tens of thousands).
#[derive(Debug, Clone)]
pub(crate) struct Site {
    /// Index of the source document.
    pub(crate) source: usize,
    /// Raw path of the value to point at (located later).
    pub(crate) anchor: Anchor,
    /// Point at the key of the anchor's last segment, not its value.
    pub(crate) anchor_key: bool,
}

/// Hits as a rule reports them: one finished, or a batch [`Later`].
#[derive(Debug)]
pub(crate) enum Pending<'a> {
    /// A finished hit (boxed: most rules report few, and a batch is a
    /// fraction of a `Hit`'s size).
    Done(Box<Hit>),
    /// Hits to finish once every rule has run, in order. A rule that puts
    /// hits off reports them a batch at a time (a parallel task's worth),
    /// so that each batch is freed as soon as its hits are made, into the
    /// room the findings then take.
    Later(Vec<Later<'a>>),
}

impl Pending<'_> {
    /// How many hits it stands for.
    pub(crate) fn len(&self) -> usize {
        match self {
            Pending::Done(_) => 1,
            Pending::Later(batch) => batch.len(),
        }
    }

    /// Appends the finished hits' sites and findings to `sites` and
    /// `findings`, in order, making those put off on every core (a hit that
    /// cannot be made is left out).
    pub(crate) fn finish_into(self, sites: &mut Vec<Site>, findings: &mut Vec<Finding>) {
        let mut push = |hit: Hit| {
            sites.push(hit.site);
            findings.push(hit.finding);
        };
        match self {
            Pending::Done(hit) => push(*hit),
            Pending::Later(batch) => {
                // A batch is a parallel task's worth: made on every core,
                // then moved into place.
                let made: Vec<Option<Hit>> = batch.into_par_iter().map(Later::finish).collect();
                made.into_iter().flatten().for_each(push);
            }
        }
    }

    /// Whether a hit waits for a suggestion ([`Pending::suggest`]).
    pub(crate) fn wants_suggestion(&self) -> bool {
        matches!(self, Pending::Later(batch) if batch.iter().any(|later| later.suggests))
    }

    /// Looks up the suggestions put-off hits wait for, from the universe
    /// of tool names, on every core, and keeps each as its hit's detail.
    pub(crate) fn suggest(&mut self, universe: &Universe) {
        if let Pending::Later(batch) = self {
            batch
                .par_iter_mut()
                .filter(|later| later.suggests)
                .for_each(|later| {
                    later.detail = universe.suggest(later.name).map(Box::from);
                    later.suggests = false;
                });
        }
    }
}

/// A hit kept as a few numbers and names borrowed from the document, to be
/// made into a finding after the rules have run, when their shared indexes
/// have been dropped: a rule that can report tens of thousands of findings
/// reports them this way, so the findings and the indexes are never in
/// memory together. A hit can wait for a suggestion from the universe of
/// tool names: the engine keeps the universe when the rules' other indexes
/// go, builds its suggestion index in the room they leave, looks the
/// suggestions up, and drops it before any hit is made.
#[derive(Debug)]
pub(crate) struct Later<'a> {
    /// The entry the offending value is under (a copy: the stack view is
    /// dropped before put-off hits are made).
    pub(crate) entry: Entry<'a>,
    /// Position of the offending value under the entry.
    pub(crate) at: u32,
    /// The offending name, borrowed from the document.
    pub(crate) name: &'a str,
    /// What the rule found, in its own terms.
    pub(crate) code: u8,
    /// A name or a reason the rule found with it, if any.
    pub(crate) detail: Option<Box<str>>,
    /// Whether it waits for a suggestion for `name`, which becomes its
    /// `detail` (see [`Pending::suggest`]).
    pub(crate) suggests: bool,
    /// Makes the hit.
    pub(crate) finish: fn(Later<'_>) -> Option<Hit>,
}

impl Later<'_> {
    /// The finished hit; `None` if it cannot be made.
    fn finish(self) -> Option<Hit> {
        (self.finish)(self)
    }
}

/// The parts of a finding a rule fills in.
pub(crate) struct Report<'r> {
    pub(crate) rule: &'r Rule,
    pub(crate) source: usize,
    pub(crate) anchor: Anchor,
    pub(crate) where_: String,
    pub(crate) path: String,
    pub(crate) message: Text,
    pub(crate) hint: Text,
    pub(crate) reference: Option<String>,
    pub(crate) suggestion: Option<String>,
}

impl Report<'_> {
    /// Turns it into a finished [`Pending`] hit.
    pub(crate) fn hit<'a>(self) -> Pending<'a> {
        Pending::Done(Box::new(self.into_hit()))
    }

    /// Turns it into a [`Hit`].
    pub(crate) fn into_hit(self) -> Hit {
        // `format!` reserves about twice its literal text (and a path's
        // `to_string` doubles as it writes), and a large stack can have
        // tens of thousands of findings: keep only what the text needs.
        let tight = |mut s: String| {
            s.shrink_to_fit();
            s
        };
        Hit {
            site: Site {
                source: self.source,
                anchor: self.anchor,
                anchor_key: false,
            },
            finding: Finding {
                rule: std::borrow::Cow::Borrowed(self.rule.id),
                severity: self.rule.default_severity,
                where_: tight(self.where_),
                path: tight(self.path),
                message: self.message,
                hint: self.hint,
                reference: self.reference,
                suggestion: self.suggestion,
                location: None,
            },
        }
    }
}

/// "No next action" in `Context::next_same_name`.
const NO_ACTION: u32 = u32::MAX;

/// What every rule may read: the stack and indexes built once per run.
pub(crate) struct Context<'s, 'a> {
    pub(crate) stack: &'s Stack<'a>,
    pub(crate) universe: Universe,
    /// The first action of each name (an index into `stack.actions`), and
    /// its last (what the map is built with; kept, rather than copying a
    /// hundred thousand entries into a map of firsts).
    first_action: ActionNames,
    /// For each action, the next action of the same name, if any: with
    /// `first_action`, the actions of a name in scan order, without a
    /// vector per name.
    /// ([`NO_ACTION`] for none; indexes are 32 bits, as no stack in memory
    /// has four billion actions).
    next_same_name: Vec<u32>,
    /// What the rules ask of each action (by index into `stack.actions`),
    /// read once while the context is built.
    pub(crate) action_facts: Vec<ActionFacts>,
    /// Names of actions that do not materialise.
    pub(crate) unexposed: HashSet<&'s str, FastHash>,
    /// For each action name, the first action of that name (in scan order)
    /// that materialises and needs confirmation, with the reason; decided
    /// once per action, so rules pay one lookup per reference.
    pub(crate) needs_approval: HashMap<&'s str, (usize, ConfirmationReason), FastHash>,
    /// The actions tool records bind (their `action_<name>` is superseded).
    pub(crate) superseded: Superseded<'a>,
    /// What the predicate says of each tool record (by index into
    /// `stack.tools`): `Ok(None)` for an unbound record.
    pub(crate) refinements: Vec<Result<Option<Refinement<'a>>, RecordSkip>>,
    /// Indexed candidate lists for "did you mean" over action, flow and
    /// skill names, built on first use.
    action_names: OnceLock<Universe>,
    flow_names: OnceLock<Universe>,
    skill_names: OnceLock<Universe>,
    /// Every skill reference, resolved once for the rules that read them
    /// (see [`Context::references`]).
    references: OnceLock<References<'a>>,
}

/// What the rules ask of every action, read once while the context is
/// built: the rules that ask then scan these few bytes an action rather
/// than reading a hundred thousand actions again each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ActionFacts {
    /// Its destructive signal (`materialise::destructive_signal`).
    pub(crate) signal: Option<ConfirmationReason>,
    /// `ai.exposed`, when it is a boolean.
    pub(crate) exposed: Option<bool>,
    /// `ai.requiresConfirmation`, when it is a boolean
    /// (`materialise::explicit_confirmation`).
    pub(crate) explicit_confirmation: Option<bool>,
}

impl ActionFacts {
    /// Reads them from the action's fields.
    pub(crate) fn of(fields: &Map<'_>) -> Self {
        let ai = ai_block(fields);
        ActionFacts {
            signal: destructive_signal(fields),
            exposed: ai.and_then(|ai| ai.get("exposed")).and_then(Value::as_bool),
            explicit_confirmation: ai
                .and_then(|ai| ai.get("requiresConfirmation"))
                .and_then(Value::as_bool),
        }
    }

    /// `materialise::needs_confirmation`, from the facts.
    pub(crate) fn needs_confirmation(self) -> Option<ConfirmationReason> {
        match self.explicit_confirmation {
            Some(true) => Some(ConfirmationReason::AiRequiresConfirmation),
            Some(false) => None,
            None => self.signal,
        }
    }
}

/// Which names a suggestion is drawn from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Names {
    /// Every action's name (stack-level, then object-level).
    Actions,
    /// Every flow's name.
    Flows,
    /// Every skill's name.
    Skills,
}

impl std::fmt::Debug for Context<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("universe", &self.universe.len())
            .finish_non_exhaustive()
    }
}

impl<'s, 'a> Context<'s, 'a> {
    /// Builds the indexes for `stack`.
    pub(crate) fn new(stack: &'s Stack<'a>) -> Self {
        let actions = stack.actions.len();
        // Each name's first action, and (while reading) its last one.
        let mut first_last = ActionNames::with_capacity(actions);
        let mut next_same_name = vec![NO_ACTION; actions];
        let mut unexposed = HashSet::default();
        let mut needs_approval = HashMap::default();
        // Which actions materialise: their tools, as `action_` and the
        // action's name, go into the universe's one buffer.
        let mut materialised = vec![false; actions];
        let mut action_facts = Vec::with_capacity(actions);
        // Their names, as indexes into `first_last`'s copy (made while
        // each action is read), so that the universe reads the names there
        // rather than chasing each through the document again.
        let mut tool_names: Vec<u32> = Vec::new();
        for ((i, action), materialises_at) in
            (0u32..).zip(&stack.actions).zip(materialised.iter_mut())
        {
            let facts = ActionFacts::of(action.entry.fields());
            action_facts.push(facts);
            let Some(name) = action.entry.name() else {
                continue;
            };
            let (index, before) = first_last.note(name, i);
            if let Some(next) = before.and_then(|last| next_same_name.get_mut(last as usize)) {
                *next = i;
            }
            if materialises(action.entry.fields()) {
                if let Some(reason) = facts.needs_confirmation() {
                    needs_approval.entry(name).or_insert((i as usize, reason));
                }
                *materialises_at = true;
                tool_names.extend(index);
            } else {
                unexposed.insert(name);
            }
        }
        let platform = objectstack_registry::all_names();
        let capacity = platform.size_hint().0 + stack.tools.len() + tool_names.len();
        let names = platform
            .map(|n| ("", n))
            .chain(stack.tools.iter().filter_map(|t| t.name()).map(|n| ("", n)))
            .chain(
                tool_names
                    .iter()
                    .map(|&i| (objectstack_registry::ACTION_PREFIX, first_last.name(i))),
            );
        let universe = Universe::from_parts(names, capacity);
        drop(tool_names);
        let superseded = Superseded::of(stack.tools.iter().map(|t| t.fields()));
        // The actions records bind are looked up in the name index just
        // built, not found by reading every action again.
        let bound_action = BoundAction {
            stack,
            first_last: &first_last,
            next_same_name: &next_same_name,
            materialised: &materialised,
            chosen: Default::default(),
        };
        let refinements = judge(stack, Some(&|name| bound_action.get(name)));
        drop(bound_action);
        drop(materialised);
        Context {
            stack,
            universe,
            first_action: first_last,
            next_same_name,
            action_facts,
            unexposed,
            needs_approval,
            superseded,
            refinements,
            action_names: OnceLock::new(),
            flow_names: OnceLock::new(),
            skill_names: OnceLock::new(),
            references: OnceLock::new(),
        }
    }

    /// The skills' references, resolved (on first use: the suite asks
    /// before its rules run, so that no rule waits while another resolves
    /// them on one thread).
    pub(crate) fn references(&self) -> &References<'a> {
        self.references
            .get_or_init(|| References::resolve(self.stack, &self.universe, &self.superseded))
    }

    /// The universe, kept for [`Pending::suggest`] when the rest is
    /// dropped.
    pub(crate) fn into_universe(self) -> Universe {
        self.universe
    }

    /// The tool names a runtime registers from this stack with everything
    /// wired: each materialised `action_<name>` no record supersedes, then
    /// each refined tool (platform names excluded, each name once). Only
    /// [`crate::materialised_names`] asks, so the rules do not pay for it.
    pub(crate) fn materialised(&self) -> Vec<String> {
        let mut materialised = Vec::new();
        let mut seen: HashSet<&str, FastHash> = HashSet::default();
        for action in &self.stack.actions {
            if let Some(name) = action.entry.name()
                && !self.superseded.contains(name)
                && !seen.contains(name)
                && materialises(action.entry.fields())
            {
                seen.insert(name);
                let tool = objectstack_registry::action_tool_name(name);
                if !objectstack_registry::is_platform_tool(&tool) {
                    materialised.push(tool);
                }
            }
        }
        // Each name once: a refined tool may carry a materialised name.
        let mut listed: HashSet<String, FastHash> = materialised.iter().cloned().collect();
        for outcome in &self.refinements {
            if let Ok(Some(r)) = outcome
                && !listed.contains(r.name)
            {
                listed.insert(r.name.to_owned());
                materialised.push(r.name.to_owned());
            }
        }
        materialised
    }

    /// The indexed list of action, flow or skill names.
    pub(crate) fn names(&self, names: Names) -> &Universe {
        let stack = self.stack;
        match names {
            Names::Actions => self
                .action_names
                .get_or_init(|| index(stack.actions.iter().filter_map(|a| a.entry.name()))),
            Names::Flows => self
                .flow_names
                .get_or_init(|| index(stack.flows.iter().filter_map(|f| f.name()))),
            Names::Skills => self
                .skill_names
                .get_or_init(|| index(stack.skills.iter().filter_map(|s| s.name()))),
        }
    }

    /// Upstream's `nearestName` of `target` over a list of names, in
    /// document order, answered from an index (so a stack with many
    /// unresolved names over many candidates stays linear).
    pub(crate) fn nearest(&self, names: Names, target: &str) -> Option<&str> {
        let universe = self.names(names);
        // `Universe::suggest` first tries `<family prefix><target>`; when such
        // a name exists here, fall back to the plain scan to stay exact.
        let prefixed = objectstack_registry::FAMILY_PREFIXES
            .iter()
            .any(|p| universe.contains(&format!("{p}{target}")));
        if prefixed {
            nearest(target, universe.names())
        } else {
            universe.suggest(target)
        }
    }

    /// The actions named `name`, in scan order.
    pub(crate) fn actions_named(&self, name: &str) -> impl Iterator<Item = &'s ActionEntry<'a>> {
        let stack = self.stack;
        let next = &self.next_same_name;
        std::iter::successors(
            self.first_action.get(name).map(|(first, _)| first),
            move |&i| next.get(i as usize).copied().filter(|&n| n != NO_ACTION),
        )
        .filter_map(move |i| stack.actions.get(i as usize))
    }
}

/// Appends to `out`, in the items' order, the hit `hit` makes of each of
/// `items` that has one, made in parallel tasks of [`ITEMS_PER_TASK`]
/// items: a rule that reads every action or record of a large stack then
/// never runs on alone, one core busy, after the others are done.
pub(crate) fn hits_in_order<'a, T: Sync>(
    items: &[T],
    out: &mut Vec<Pending<'a>>,
    hit: impl Fn(&T) -> Option<Pending<'a>> + Sync,
) {
    let per_task: Vec<Vec<Pending<'a>>> = items
        .par_chunks(ITEMS_PER_TASK)
        .map(|items| items.iter().filter_map(&hit).collect())
        .collect();
    out.reserve(per_task.iter().map(Vec::len).sum());
    for hits in per_task {
        out.extend(hits);
    }
}

/// Items a task of [`hits_in_order`] reads.
const ITEMS_PER_TASK: usize = 1024;

/// The predicate's answer for every tool record
/// ([`refine::judge_all`]), over the composed collections.
pub(crate) fn judge_records<'a>(stack: &Stack<'a>) -> Vec<refine::Judgement<'a>> {
    judge(stack, None)
}

/// The action a record binding a name binds, found through
/// [`Context`]'s index of actions by name: the first action of the name
/// that materialises, else the first of the name. Each name's answer is
/// kept, so that many records binding one much repeated name walk its
/// actions once.
struct BoundAction<'c, 's, 'a> {
    stack: &'s Stack<'a>,
    first_last: &'c ActionNames,
    next_same_name: &'c [u32],
    materialised: &'c [bool],
    /// The answer by the name's first action.
    chosen: std::cell::RefCell<HashMap<u32, u32, FastHash>>,
}

impl<'a> BoundAction<'_, '_, 'a> {
    fn get(&self, name: &str) -> Option<ActionAt<'a>> {
        let (first, last) = self.first_last.get(name)?;
        // One action of the name, or a first one that materialises, needs
        // no walk (nor a place in the cache).
        let settled = first == last || self.materialised.get(first as usize) == Some(&true);
        let cached = if settled {
            Some(first)
        } else {
            self.chosen.borrow().get(&first).copied()
        };
        let chosen = match cached {
            Some(i) => i,
            None => {
                let mut at = first;
                let i = loop {
                    if self.materialised.get(at as usize) == Some(&true) {
                        break at;
                    }
                    match self.next_same_name.get(at as usize) {
                        Some(&next) if next != NO_ACTION => at = next,
                        _ => break first,
                    }
                };
                self.chosen.borrow_mut().insert(first, i);
                i
            }
        };
        let action = self.stack.actions.get(chosen as usize)?;
        Some(ActionAt {
            action: action.entry.fields(),
            owner: action.owner(),
        })
    }
}

/// [`judge_records`], with the bound actions looked up by `bound_action`
/// when given, else found by reading the actions.
fn judge<'a>(
    stack: &Stack<'a>,
    bound_action: Option<refine::FindAction<'_, 'a>>,
) -> Vec<refine::Judgement<'a>> {
    // Map-shaped `params` of bound actions are read into this arena while
    // the surfaces are judged; the judgements borrow only the records.
    let arena = objectstack_spec::json::Arena::new();
    let tools: Vec<_> = stack.tools.iter().map(|t| t.fields()).collect();
    let actions = stack.actions.iter().map(|a| ActionAt {
        action: a.entry.fields(),
        owner: a.owner(),
    });
    let objects: Vec<_> = stack.objects.iter().map(|o| o.record).collect();
    let flows: HashSet<&str, FastHash> = stack.flows.iter().filter_map(|f| f.name()).collect();
    let reserved = Reserved {
        platform: &objectstack_registry::owner,
        family_prefixes: objectstack_registry::FAMILY_PREFIXES,
    };
    match bound_action {
        Some(bound_action) => refine::judge_each(
            &tools,
            bound_action,
            &objects,
            &|f| flows.contains(f),
            &arena,
            reserved,
        ),
        None => refine::judge_all(
            &tools,
            actions,
            &objects,
            &|f| flows.contains(f),
            &arena,
            reserved,
        ),
    }
}

fn index<'n>(names: impl Iterator<Item = &'n str>) -> Universe {
    let capacity = names.size_hint().0;
    Universe::from_parts(names.map(|n| ("", n)), capacity)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The context judges records looking actions up by name; that must
    /// bind the same action `refine::judge_all` finds by reading them all:
    /// the first of a name that materialises, else the first.
    #[test]
    fn records_judged_through_the_name_index_as_by_reading_every_action() {
        let exposed = |desc: &str| serde_json::json!({"exposed": true, "description": desc});
        let mut docs = vec![crate::testing::doc(serde_json::json!({
            "actions": [
                // A name whose first action does not materialise.
                {"name": "close", "type": "script", "target": "a"},
                {"name": "close", "type": "script", "target": "b", "mode": "delete",
                 "ai": exposed("Close it for good, with its history.")},
                {"name": "close", "type": "script", "target": "c", "ai": exposed("Close it.")},
                // A name none of whose actions materialises.
                {"name": "hidden", "type": "script", "target": "d"},
                {"name": "hidden", "type": "script", "target": "e", "mode": "delete"},
                {"name": "", "type": "script", "target": "f", "ai": exposed("No name.")}
            ],
            "objects": [{"name": "ticket", "actions": [
                {"name": "close", "type": "script", "target": "g", "ai": exposed("Close one.")},
                {"name": "reopen", "type": "script", "target": "h", "ai": exposed("Reopen one.")}
            ]}],
            "flows": [{"name": "renew"}],
            "tools": [
                {"name": "t1", "binding": {"type": "action", "name": "close"},
                 "requiresConfirmation": false,
                 "parameters": {"type": "object", "properties": {"recordId": {"type": "string"}}}},
                {"name": "t2", "binding": {"type": "action", "name": "hidden"}},
                {"name": "t3", "binding": {"type": "action", "name": "reopen"},
                 "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}},
                {"name": "t4", "binding": {"type": "action", "name": "missing"}},
                {"name": "t5", "binding": {"type": "flow", "name": "renew"}},
                {"name": "t6", "binding": {"type": "action", "name": ""}},
                {"name": "t7", "binding": {"type": "action", "name": "close"}},
                {"name": "t8"}
            ]
        }))];
        docs.extend(fixture_docs());
        let mut bound = 0;
        for d in docs {
            let arena = objectstack_spec::json::Arena::new();
            let stack = Stack::new(&[d], &arena);
            let cx = Context::new(&stack);
            let read = judge_records(&stack);
            assert_eq!(format!("{:?}", cx.refinements), format!("{read:?}"));
            bound += read.iter().filter(|j| matches!(j, Ok(Some(_)))).count();
        }
        assert!(bound > 5, "{bound} records were judged to refine a tool");
    }

    /// Every lint fixture, parsed.
    fn fixture_docs() -> Vec<&'static objectstack_spec::json::Map<'static>> {
        let mut docs = Vec::new();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lint");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.sort();
        for file in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "json"))
        {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            if let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&text) {
                docs.push(crate::testing::doc(serde_json::Value::Object(m)));
            }
        }
        assert!(
            docs.len() > 10,
            "the fixtures are read from {}",
            dir.display()
        );
        docs
    }

    /// The facts the context reads of each action answer as the `spec`
    /// predicates the rules asked before.
    #[test]
    fn action_facts_answer_as_the_spec_predicates() {
        use objectstack_spec::materialise::{
            asserted_safe_despite_destructive, destructive_signal, needs_confirmation,
        };
        let mut destructive = 0;
        for d in fixture_docs() {
            let arena = objectstack_spec::json::Arena::new();
            let stack = Stack::new(&[d], &arena);
            let cx = Context::new(&stack);
            assert_eq!(cx.action_facts.len(), stack.actions.len());
            for (action, facts) in stack.actions.iter().zip(&cx.action_facts) {
                let fields = action.entry.fields();
                let ai = ai_block(fields);
                let exposed = ai.and_then(|ai| ai.get("exposed"));
                assert_eq!(facts.signal, destructive_signal(fields));
                assert_eq!(facts.needs_confirmation(), needs_confirmation(fields));
                assert_eq!(
                    facts.exposed.is_some(),
                    matches!(exposed, Some(Value::Bool(_)))
                );
                assert_eq!(
                    facts.exposed == Some(true)
                        && facts.explicit_confirmation == Some(false)
                        && facts.signal.is_some(),
                    exposed == Some(&Value::Bool(true))
                        && asserted_safe_despite_destructive(fields)
                );
                destructive += usize::from(facts.signal.is_some());
            }
        }
        assert!(destructive > 5, "{destructive} actions look destructive");
    }

    #[test]
    fn indexed_nearest_equals_the_plain_scan() {
        let d = crate::testing::doc(serde_json::json!({
            "actions": [{"name": "close_case"}, {"name": "action_open"}, {"name": "open"},
                        {"name": "close_cases"}],
            "flows": [{"name": "renew"}],
            "skills": [{"name": "triage"}]
        }));
        let arena = objectstack_spec::json::Arena::new();
        let stack = Stack::new(&[d], &arena);
        let cx = Context::new(&stack);
        let actions: Vec<&str> = stack
            .actions
            .iter()
            .filter_map(|a| a.entry.name())
            .collect();
        for target in ["close_cse", "open", "clos", "close_case_x", "zzz", "opn"] {
            assert_eq!(
                cx.nearest(Names::Actions, target),
                nearest(target, actions.iter().copied()),
                "{target}"
            );
        }
        assert_eq!(cx.nearest(Names::Flows, "renw"), Some("renew"));
        assert_eq!(cx.nearest(Names::Skills, "triag"), Some("triage"));
    }

    #[test]
    fn every_rule_doc_has_the_four_sections() {
        for rule in crate::rules::RULES {
            let doc = rule.doc();
            for section in [
                "## What it finds",
                "## Why it matters",
                "## Example",
                "## How to fix",
            ] {
                assert!(doc.contains(section), "{} lacks {section}", rule.id());
            }
            assert!(!rule.summary().is_empty(), "{}", rule.id());
            assert!(!rule.summary().starts_with('#'), "{}", rule.id());
        }
    }

    #[test]
    fn ids_are_unique_kebab_case() {
        let mut seen = HashSet::new();
        for rule in crate::rules::RULES {
            let id = rule.id();
            assert!(seen.insert(id), "duplicate {id}");
            assert!(
                id.split('-')
                    .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())),
                "{id}"
            );
        }
    }
}
