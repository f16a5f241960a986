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

/// One record of a collection, with its provenance.
#[derive(Debug, Clone)]
pub(crate) struct Entry<'a> {
    /// Index of the source document it came from.
    pub(crate) source: usize,
    /// The record itself.
    pub(crate) record: Record<'a>,
    /// The collection's key (`skills`, `actions`, ...).
    collection: &'static str,
    /// For an object's action, the object's place in `objects`.
    owner: Option<Origin<'a>>,
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

    /// The lenient path (`skills[2]`), built on demand: only findings need
    /// it, and a stack has many more records than findings.
    pub(crate) fn path(&self) -> JsonPath {
        let base = match &self.owner {
            None => JsonPath::root(),
            Some(o) => JsonPath::root().key("objects").index(o.index()),
        };
        base.key(self.collection).index(self.record.index())
    }

    /// The raw path (`skills[3]`, `skills.case_triage`), built on demand.
    pub(crate) fn raw(&self) -> JsonPath {
        let base = match &self.owner {
            None => JsonPath::root(),
            Some(o) => raw_child(&JsonPath::root().key("objects"), o.raw_segment()),
        };
        raw_child(&base.key(self.collection), self.record.raw_segment())
    }

    /// Lenient and raw paths of a key under this record.
    pub(crate) fn key(&self, key: &str) -> (JsonPath, JsonPath) {
        (self.path().key(key), self.raw().key(key))
    }
}

/// An action, stack-level or declared on an object.
#[derive(Debug, Clone)]
pub(crate) struct ActionEntry<'a> {
    /// The action record.
    pub(crate) entry: Entry<'a>,
    /// The owning object's label (name or `#i`), `None` at stack level;
    /// shared by the object's actions.
    pub(crate) object: Option<std::sync::Arc<str>>,
    /// The object whose actions it belongs to, as an index into
    /// [`Stack::objects`]: where it is written, or for a stack-level action
    /// the object its `objectName` names (as `defineStack` joins it).
    pub(crate) owner: Option<usize>,
}

impl ActionEntry<'_> {
    /// `action "x"` or `object "o" · action "x"`.
    pub(crate) fn where_text(&self) -> String {
        match &self.object {
            Some(o) => format!("object \"{o}\" \u{b7} action \"{}\"", self.entry.label()),
            None => format!("action \"{}\"", self.entry.label()),
        }
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
    source: usize,
    root: &'a Map<'a>,
    key: &'static str,
    arena: &'a Arena,
) -> impl Iterator<Item = Entry<'a>> {
    records(root.get(key), arena)
        .into_iter()
        .map(move |record| Entry {
            source,
            record,
            collection: key,
            owner: None,
        })
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
            stack
                .skills
                .extend(collection(source, root, "skills", arena));
            stack.tools.extend(collection(source, root, "tools", arena));
            stack
                .agents
                .extend(collection(source, root, "agents", arena));
            stack.flows.extend(collection(source, root, "flows", arena));
            stack
                .actions
                .extend(
                    collection(source, root, "actions", arena).map(|entry| ActionEntry {
                        entry,
                        object: None,
                        owner: None,
                    }),
                );
        }
        stack.stack_actions = stack.actions.len();
        for (source, root) in roots.iter().enumerate() {
            for object in collection(source, root, "objects", arena) {
                let owner = Some(stack.objects.len());
                let label: std::sync::Arc<str> = object.label().into();
                for record in records(object.record.get("actions"), arena) {
                    stack.actions.push(ActionEntry {
                        entry: Entry {
                            source,
                            record,
                            collection: "actions",
                            owner: Some(object.record.origin),
                        },
                        object: Some(label.clone()),
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
                .and_then(|n| by_name.get(n).copied());
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
pub(crate) fn lookup<'a>(root: &'a Map<'a>, raw: &JsonPath) -> Option<&'a Value<'a>> {
    let segments = raw.segments();
    let mut segments = segments.iter();
    let mut value = match segments.next()? {
        Segment::Key(k) => root.get(k)?,
        Segment::Index(_) => return None,
    };
    for segment in segments {
        value = match (segment, value) {
            (Segment::Key(k), Value::Object(m)) => m.get(k)?,
            (Segment::Index(i), Value::Array(a)) => a.get(*i)?,
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
        assert_eq!(s.actions[1].entry.source, 1);
        assert_eq!(s.actions[1].entry.path().to_string(), "actions[0]");
    }

    #[test]
    fn junk_shapes_are_empty() {
        let d = doc(json!({"skills": 3, "objects": [{"actions": "x"}, 5], "tools": null}));
        let arena = objectstack_spec::json::Arena::new();
        let s = Stack::new(&[d], &arena);
        assert!(s.skills.is_empty() && s.tools.is_empty() && s.actions.is_empty());
    }
}
