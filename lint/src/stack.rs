//! The lenient view of one stack, or of several composed into one, that
//! every rule reads.
//!
//! Each collection is read with [`objectstack_spec::collection`] (arrays
//! keep only their records, maps are keyed by name). Every entry remembers
//! which source file it came from, its *lenient* path (what findings print,
//! `skills[2]`) and its *raw* path (what the source index locates,
//! `skills[3]` or `skills.case_triage`).
//!
//! Composition concatenates each collection in file order, which is what
//! upstream's `composeStacks` does for the collections the rules read; paths
//! stay relative to the entry's own file so a finding points at the file
//! the author must edit.

use objectstack_spec::collection::{Origin, Record, records};
use objectstack_spec::json::Arena;
use objectstack_spec::json::{Map, Value};
use objectstack_spec::path::{JsonPath, Segment};
use std::sync::{Arc, OnceLock};

use crate::anchor::{Anchor, Step};

/// One record of a collection, with its provenance.
///
/// A large stack holds a hundred thousand of these side by side with its
/// tree, so an entry is kept small: 48 bytes (a collection's key as one
/// byte, the source as 32 bits, and an object's action pointing at what
/// its object's actions share).
#[derive(Debug, Clone)]
pub(crate) struct Entry<'a> {
    /// The record itself.
    pub(crate) record: Record<'a>,
    /// Index of the source document it came from.
    source: u32,
    /// The collection's key (`skills`, `actions`, ...).
    collection: Collection,
    /// For an object's action, the object.
    owner: Option<Arc<Owner<'a>>>,
}

/// What an object's actions share: where the object is, and its label.
#[derive(Debug)]
pub(crate) struct Owner<'a> {
    /// The object's place in `objects`.
    origin: Origin<'a>,
    /// The object's name, or `#<index>` (see [`Entry::label`]).
    label: String,
}

/// The collections a stack view reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Collection {
    Skills,
    Tools,
    Agents,
    Flows,
    Actions,
    Objects,
}

impl Collection {
    /// The path of the collection at the top of a document (`skills`),
    /// built once and shared: every entry's paths start from it, and a
    /// large stack builds a path for each of tens of thousands of findings.
    fn top(self) -> JsonPath {
        static TOP: OnceLock<[JsonPath; 6]> = OnceLock::new();
        let all = TOP.get_or_init(|| Collection::ALL.map(|c| JsonPath::root().key(c.key())));
        // `ALL` lists the collections in declaration order.
        all.get(self as usize)
            .cloned()
            .unwrap_or_else(|| JsonPath::root().key(self.key()))
    }

    /// Every collection, in declaration order.
    const ALL: [Collection; 6] = [
        Collection::Skills,
        Collection::Tools,
        Collection::Agents,
        Collection::Flows,
        Collection::Actions,
        Collection::Objects,
    ];

    fn key(self) -> &'static str {
        match self {
            Collection::Skills => "skills",
            Collection::Tools => "tools",
            Collection::Agents => "agents",
            Collection::Flows => "flows",
            Collection::Actions => "actions",
            Collection::Objects => "objects",
        }
    }
}

impl<'a> Entry<'a> {
    /// The record's `name` when it is a non-empty string.
    pub(crate) fn name(&self) -> Option<&'a str> {
        self.record.name().filter(|n| !n.is_empty())
    }

    /// The record's name, or `#<index>` when it has none (upstream's label).
    pub(crate) fn label(&self) -> String {
        match self.name() {
            Some(n) => n.to_owned(),
            None => format!("#{}", self.record.index()),
        }
    }

    /// The record's fields.
    pub(crate) fn fields(&self) -> &'a Map<'a> {
        self.record.fields
    }

    /// Index of the source document it came from.
    pub(crate) fn source(&self) -> usize {
        self.source as usize
    }

    /// The lenient path (`skills[2]`), built on demand: only findings need
    /// it, and a stack has many more records than findings.
    pub(crate) fn path(&self) -> JsonPath {
        let base = match &self.owner {
            None => self.collection.top(),
            Some(o) => Collection::Objects
                .top()
                .index(o.origin.index())
                .key(self.collection.key()),
        };
        base.index(self.record.index())
    }

    /// The raw path (`skills[3]`, `skills.case_triage`), built on demand.
    pub(crate) fn raw(&self) -> JsonPath {
        let base = match &self.owner {
            None => self.collection.top(),
            Some(o) => raw_child(&Collection::Objects.top(), o.origin.raw_segment())
                .key(self.collection.key()),
        };
        raw_child(&base, self.record.raw_segment())
    }

    /// The raw path of item `item` of the list at `key` under this record,
    /// without an allocation for a record of an array at the top of its
    /// document (see [`Anchor`]).
    pub(crate) fn item_anchor(&self, key: &'static str, item: usize) -> Anchor {
        match (&self.owner, self.record.origin) {
            (None, Origin::Array { raw_index, .. }) => {
                Anchor::item(self.collection.top(), raw_index as usize, key, item)
            }
            _ => self.raw().key(key).index(item).into(),
        }
    }

    /// Lenient and raw paths of a key under this record.
    pub(crate) fn key(&self, key: &str) -> (JsonPath, JsonPath) {
        (self.path().key(key), self.raw().key(key))
    }
}

/// An action, stack-level or declared on an object.
#[derive(Debug, Clone)]
pub(crate) struct ActionEntry<'a> {
    /// The action record (for an object's action, with the object).
    pub(crate) entry: Entry<'a>,
    /// The object whose actions it belongs to, as an index into
    /// [`Stack::objects`]: where it is written, or for a stack-level action
    /// the object its `objectName` names (as `defineStack` joins it).
    owner: Option<u32>,
}

impl ActionEntry<'_> {
    /// `action "x"` or `object "o" · action "x"`.
    pub(crate) fn where_text(&self) -> String {
        match &self.entry.owner {
            Some(o) => format!(
                "object \"{}\" \u{b7} action \"{}\"",
                o.label,
                self.entry.label()
            ),
            None => format!("action \"{}\"", self.entry.label()),
        }
    }

    /// The object it belongs to, as an index into [`Stack::objects`] (see
    /// the field).
    pub(crate) fn owner(&self) -> Option<usize> {
        self.owner.map(|o| o as usize)
    }
}

/// The collections the rules read, across one or more source documents.
#[derive(Debug, Default)]
pub(crate) struct Stack<'a> {
    /// `skills`.
    pub(crate) skills: Vec<Entry<'a>>,
    /// `tools` (tool records).
    pub(crate) tools: Vec<Entry<'a>>,
    /// Stack-level `actions`, then every object's `actions`, each group in
    /// source order: the order upstream scans them.
    pub(crate) actions: Vec<ActionEntry<'a>>,
    /// How many of `actions` are stack-level (they come first).
    pub(crate) stack_actions: usize,
    /// `agents`.
    pub(crate) agents: Vec<Entry<'a>>,
    /// `flows`.
    pub(crate) flows: Vec<Entry<'a>>,
    /// `objects`.
    pub(crate) objects: Vec<Entry<'a>>,
}

fn collection<'a>(
    source: u32,
    root: &'a Map<'a>,
    collection: Collection,
    arena: &'a Arena,
) -> impl Iterator<Item = Entry<'a>> {
    records(root.get(collection.key()), arena)
        .into_iter()
        .map(move |record| Entry {
            record,
            source,
            collection,
            owner: None,
        })
}

/// An index as 32 bits (saturated: no stack has four billion files or
/// objects).
fn small(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

fn raw_child(base: &JsonPath, segment: Segment) -> JsonPath {
    match segment {
        Segment::Index(i) => base.index(i),
        Segment::Key(k) => base.key(&k),
    }
}

impl<'a> Stack<'a> {
    /// Reads the collections of each document, concatenated in order.
    /// Records of map-shaped collections are built in `arena`.
    pub(crate) fn new(roots: &[&'a Map<'a>], arena: &'a Arena) -> Self {
        let mut stack = Stack::default();
        for (source, root) in roots.iter().enumerate() {
            let source = small(source);
            let read = |c| collection(source, root, c, arena);
            stack.skills.extend(read(Collection::Skills));
            stack.tools.extend(read(Collection::Tools));
            stack.agents.extend(read(Collection::Agents));
            stack.flows.extend(read(Collection::Flows));
            stack
                .actions
                .extend(read(Collection::Actions).map(|entry| ActionEntry { entry, owner: None }));
        }
        stack.stack_actions = stack.actions.len();
        for (source, root) in roots.iter().enumerate() {
            let source = small(source);
            for object in collection(source, root, Collection::Objects, arena) {
                let owner = Some(small(stack.objects.len()));
                let shared = Arc::new(Owner {
                    origin: object.record.origin,
                    label: object.label(),
                });
                for record in records(object.record.get("actions"), arena) {
                    stack.actions.push(ActionEntry {
                        entry: Entry {
                            record,
                            source,
                            collection: Collection::Actions,
                            owner: Some(Arc::clone(&shared)),
                        },
                        owner,
                    });
                }
                stack.objects.push(object);
            }
        }
        // Grown one by one: give back what doubling left unused (the
        // actions of a large stack are tens of megabytes).
        stack.skills.shrink_to_fit();
        stack.tools.shrink_to_fit();
        stack.actions.shrink_to_fit();
        stack.objects.shrink_to_fit();
        // A stack-level action whose `objectName` names an object belongs
        // to it (the last object of a name, as the bridge indexes them).
        let by_name: std::collections::HashMap<&str, usize> = stack
            .objects
            .iter()
            .enumerate()
            .filter_map(|(i, o)| Some((o.record.name()?, i)))
            .collect();
        for action in stack.actions.iter_mut().take(stack.stack_actions) {
            action.owner = action
                .entry
                .record
                .str("objectName")
                .and_then(|n| by_name.get(n).copied())
                .map(small);
        }
        stack
    }

    /// Object-level actions.
    #[cfg(test)]
    pub(crate) fn object_actions(&self) -> &[ActionEntry<'a>] {
        self.actions.get(self.stack_actions..).unwrap_or_default()
    }

    /// Stack-level actions.
    #[cfg(test)]
    pub(crate) fn top_actions(&self) -> &[ActionEntry<'a>] {
        self.actions.get(..self.stack_actions).unwrap_or_default()
    }
}

/// The value at a raw path of a document.
pub(crate) fn lookup<'a>(root: &'a Map<'a>, raw: &Anchor) -> Option<&'a Value<'a>> {
    let steps = raw.steps();
    let mut steps = steps.into_iter();
    let mut value = match steps.next()? {
        Step::Key(k) => root.get(k)?,
        Step::Index(_) => return None,
    };
    for step in steps {
        value = match (step, value) {
            (Step::Key(k), Value::Object(m)) => m.get(k)?,
            (Step::Index(i), Value::Array(a)) => a.get(i)?,
            _ => return None,
        };
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::testing::doc;

    #[test]
    fn lenient_and_raw_paths() {
        let d = doc(json!({
            "skills": [null, {"name": "a"}],
            "objects": {"task": {"actions": [1, {"name": "done"}]}},
            "actions": {"go": {}}
        }));
        let arena = objectstack_spec::json::Arena::new();
        let s = Stack::new(&[d], &arena);
        assert_eq!(s.skills[0].path().to_string(), "skills[0]");
        assert_eq!(s.skills[0].raw().to_string(), "skills[1]");
        assert_eq!(s.stack_actions, 1);
        assert_eq!(s.top_actions()[0].entry.raw().to_string(), "actions.go");
        let obj = &s.object_actions()[0];
        assert_eq!(obj.entry.path().to_string(), "objects[0].actions[0]");
        assert_eq!(obj.entry.raw().to_string(), "objects.task.actions[1]");
        assert_eq!(obj.where_text(), "object \"task\" \u{b7} action \"done\"");
    }

    #[test]
    fn composition_keeps_per_file_paths() {
        let a = doc(
            json!({"actions": [{"name": "x"}], "objects": [{"name": "o", "actions": [{"name": "y"}]}]}),
        );
        let b = doc(json!({"actions": [{"name": "z"}]}));
        let arena = objectstack_spec::json::Arena::new();
        let s = Stack::new(&[a, b], &arena);
        let names: Vec<_> = s.actions.iter().filter_map(|a| a.entry.name()).collect();
        assert_eq!(names, ["x", "z", "y"]);
        assert_eq!(s.actions[1].entry.source(), 1);
        assert_eq!(s.actions[1].entry.path().to_string(), "actions[0]");
    }

    #[test]
    fn each_collection_has_its_shared_top_path() {
        for c in Collection::ALL {
            assert_eq!(c.top().to_string(), c.key());
            assert_eq!(c.top(), JsonPath::root().key(c.key()));
        }
    }

    #[test]
    fn entries_stay_small() {
        // A large stack holds one per record beside its tree (see `Entry`).
        assert!(std::mem::size_of::<Entry<'_>>() <= 48);
        assert!(std::mem::size_of::<ActionEntry<'_>>() <= 56);
    }

    #[test]
    fn junk_shapes_are_empty() {
        let d = doc(json!({"skills": 3, "objects": [{"actions": "x"}, 5], "tools": null}));
        let arena = objectstack_spec::json::Arena::new();
        let s = Stack::new(&[d], &arena);
        assert!(s.skills.is_empty() && s.tools.is_empty() && s.actions.is_empty());
    }
}
