//! The stack's collections and the records they hold: shapes, names,
//! duplicates, objects and their fields.

use crate::json::{Map, Value};

use super::check::{Cx, Expected, Grammar, child, fields, fold, name_grammar, wrong_type};
use super::join::Join;
use super::{Anchor, Diagnostic, DiagnosticId, Related, Severity, action, agent, skill, tool};
use crate::collection::{Origin, Record, records};
use crate::json::Arena;
use crate::path::JsonPath;
use crate::text::levenshtein_utf16;

/// The collections this workspace models, in the order they are checked.
pub(crate) const COLLECTIONS: &[&str] = &["objects", "actions", "tools", "skills", "agents"];

/// A record of a collection with its raw location.
pub(crate) struct Entry<'a> {
    pub(crate) record: Record<'a>,
    /// Raw path of the record.
    pub(crate) path: JsonPath,
}

impl Entry<'_> {
    /// Where the record's name is written: its `name` key, or the map key
    /// when the entry does not write one.
    pub(crate) fn name_location(&self, raw: &Map<'_>) -> NameAt {
        match self.record.origin {
            Origin::Map { .. } if !raw.contains_key("name") => NameAt {
                path: self.path.clone(),
                anchor: Anchor::Key,
                under_name: false,
            },
            _ => NameAt {
                path: self.path.clone(),
                anchor: Anchor::Value,
                under_name: true,
            },
        }
    }

    /// The record as written (without the name a map key supplies).
    pub(crate) fn raw<'b>(&self, parent: &'b Map<'b>, key: &str) -> Option<&'b Map<'b>> {
        let collection = parent.get(key)?;
        match self.record.origin {
            Origin::Array { raw_index, .. } => {
                collection.as_array()?.get(raw_index as usize)?.as_object()
            }
            Origin::Map { key, .. } => collection.get(key)?.as_object(),
        }
    }

    /// "skill `triage`", or "skill #2" when it has no usable name; written
    /// only when a message needs it.
    pub(crate) fn describe<'e>(&'e self, noun: &'e str) -> Described<'e> {
        Described {
            noun,
            record: &self.record,
            object: None,
        }
    }
}

/// Where a name is written, resolved to a path only when a diagnostic
/// needs it (a stack has many more names than duplicates).
#[derive(Clone)]
pub(crate) struct NameAt {
    path: JsonPath,
    anchor: Anchor,
    /// The name is the `name` key under `path`.
    under_name: bool,
}

impl NameAt {
    /// At `path` exactly.
    pub(crate) fn at(path: JsonPath, anchor: Anchor) -> Self {
        Self {
            path,
            anchor,
            under_name: false,
        }
    }

    /// The path and anchor of the name.
    pub(crate) fn resolve(&self) -> (JsonPath, Anchor) {
        let path = if self.under_name {
            self.path.key("name")
        } else {
            self.path.clone()
        };
        (path, self.anchor)
    }
}

/// A record as messages name it (see [`Entry::describe`]).
#[derive(Clone, Copy)]
pub(crate) struct Described<'e> {
    noun: &'e str,
    record: &'e Record<'e>,
    /// The owning object, for an object's action.
    object: Option<&'e str>,
}

impl<'e> Described<'e> {
    /// The same record, named as one of `object`'s.
    pub(crate) fn of_object(self, object: Option<&'e str>) -> Self {
        Self { object, ..self }
    }
}

impl std::fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.record.name() {
            Some(name) => write!(f, "{} `{name}`", self.noun)?,
            None => write!(f, "{} #{}", self.noun, self.record.index())?,
        }
        match self.object {
            Some(o) => write!(f, " of object `{o}`"),
            None => Ok(()),
        }
    }
}

/// Reads the collection under `key` of `parent` (at `parent_path`),
/// reporting a wrong shape and entries that are not objects.
pub(crate) fn collection<'a>(
    cx: &mut Cx,
    parent: &'a Map<'a>,
    key: &str,
    parent_path: &JsonPath,
    noun: &str,
    arena: &'a Arena,
) -> Vec<Entry<'a>> {
    let at = parent_path.key(key);
    let value = match parent.get(key) {
        None => return Vec::new(),
        Some(v @ (Value::Array(_) | Value::Object(_))) => v,
        Some(other) => {
            let mut d = wrong_type(at, format_args!("`{key}`"), Expected::Array, other);
            d.message = format!(
                "`{key}` must be a list of {noun} records or a map keyed by name, found {}",
                super::check::describe(other)
            );
            if !other.is_null() {
                d.fix = format!(
                    "write a list (`[{{\"name\": ...}}]`) or a map keyed by {noun} name (`{{\"<name>\": {{...}}}}`)"
                );
            }
            cx.push(d);
            return Vec::new();
        }
    };
    let not_object = |cx: &mut Cx, path: JsonPath, entry: &Value| {
        cx.push(Diagnostic::new(
            DiagnosticId::WrongType,
            path,
            format!(
                "each entry of `{key}` must be an object, found {}; readers skip it",
                super::check::describe(entry)
            ),
            format!("write the {noun} as an object (`{{\"name\": ...}}`) or delete the entry"),
        ));
    };
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if !item.is_object() {
                    not_object(cx, at.index(i), item);
                }
            }
        }
        Value::Object(entries) => {
            for (k, entry) in entries.iter() {
                if !entry.is_object() {
                    not_object(cx, at.key(k), entry);
                }
            }
        }
        _ => {}
    }
    records(Some(value), arena)
        .into_iter()
        .filter(|r| match r.origin {
            Origin::Map { key: k, .. } => value.get(k).is_some_and(Value::is_object),
            Origin::Array { .. } => true,
        })
        .map(|record| {
            let path = child(&at, record.raw_segment());
            Entry { record, path }
        })
        .collect()
}

/// Checks a record's `name`: present, a string, in `grammar` (if any).
/// Returns the name (even when it breaks the grammar) and where it is.
pub(crate) fn record_name<'a>(
    cx: &mut Cx,
    entry: &Entry<'a>,
    raw: &Map<'_>,
    noun: &str,
    grammar: Option<Grammar>,
) -> Option<(&'a str, NameAt)> {
    let at = entry.name_location(raw);
    match entry.record.get("name") {
        None => {
            cx.push(Diagnostic::new(
                DiagnosticId::MissingKey,
                entry.path.clone(),
                format!("{} has no `name`, which is required", entry.describe(noun)),
                format!("add `\"name\": \"<lowercase_snake_case>\"` to the {noun}"),
            ));
            None
        }
        Some(Value::String(name)) => {
            if let Some(grammar) = grammar
                && !grammar.accepts(name)
            {
                name_grammar(cx, name, at.resolve(), format_args!("{noun} name"), grammar);
            }
            Some((*name, at))
        }
        Some(other) => {
            cx.push(wrong_type(
                at.resolve().0,
                format_args!("the {noun}'s `name`"),
                Expected::String,
                other,
            ));
            None
        }
    }
}

/// Reports every name defined more than once, naming the first
/// definition.
pub(crate) fn duplicates(cx: &mut Cx, names: &[(&str, NameAt)], noun: &str, scope: &str) {
    duplicates_as(
        cx,
        names,
        noun,
        scope,
        DiagnosticId::DuplicateName.default_severity(),
    );
}

/// [`duplicates`] with a given severity (a duplicate param is only a
/// warning: upstream accepts it, and the bridge keeps one entry).
pub(crate) fn duplicates_as(
    cx: &mut Cx,
    names: &[(&str, NameAt)],
    noun: &str,
    scope: &str,
    severity: Severity,
) {
    // Only looked up, never iterated: a fast hasher changes no output.
    let mut first: std::collections::HashMap<&str, &NameAt, foldhash::fast::RandomState> =
        std::collections::HashMap::with_capacity_and_hasher(names.len(), Default::default());
    for (name, at) in names {
        // One hash a name: most names are new.
        match first.entry(name) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(at);
            }
            std::collections::hash_map::Entry::Occupied(slot) => {
                let earlier = *slot.get();
                let (path, anchor) = at.resolve();
                let earlier = earlier.resolve().0;
                let mut d = Diagnostic::new(
                    DiagnosticId::DuplicateName,
                    path.clone(),
                    format!("{noun} `{name}` is defined twice in {scope} (first at `{earlier}`)"),
                    format!(
                        "rename one of them or delete the copy; every {noun} needs a unique name"
                    ),
                )
                .with_related(Related {
                    source: None,
                    path: earlier.clone(),
                    message: format!("{noun} `{name}` is first defined here"),
                });
                d.anchor = anchor;
                cx.push(d.with_severity(severity));
            }
        }
    }
}

/// Records of the collections above which [`check`] runs its two halves
/// at once (below it, a thread or a task costs more than it saves).
const PARALLEL_RECORDS: usize = 4096;

/// Validates a whole stack document, in the order of [`COLLECTIONS`]
/// (near-miss top-level keys first). A large document is checked in two
/// halves run by `join`, objects and stack-level actions beside tools,
/// skills and agents; each half collects its own diagnostics, and they are
/// joined in the same order.
pub(crate) fn check(cx: &mut Cx, document: &Map<'_>, join: &dyn Join) {
    let records: usize = COLLECTIONS
        .iter()
        .filter_map(|key| match document.get(key)? {
            Value::Array(items) => Some(items.len()),
            Value::Object(entries) => Some(entries.len()),
            _ => None,
        })
        .sum();
    if records >= PARALLEL_RECORDS {
        let (mut first, mut second) = (Cx::default(), Cx::default());
        join.join(
            &mut || first_half(&mut first, document, &Arena::new()),
            &mut || second_half(&mut second, document, &Arena::new()),
        );
        cx.append(first);
        cx.append(second);
        return;
    }
    let arena = Arena::new();
    first_half(cx, document, &arena);
    second_half(cx, document, &arena);
}

/// Near-miss top-level keys, objects (with their fields and actions) and
/// the stack's actions.
fn first_half<'a>(cx: &mut Cx, document: &'a Map<'a>, arena: &'a Arena) {
    top_level_near_misses(cx, document);
    let root = JsonPath::root();

    let objects = collection(cx, document, "objects", &root, "object", arena);
    let mut names = Vec::new();
    for entry in &objects {
        let Some(raw) = entry.raw(document, "objects") else {
            continue;
        };
        if let Some(name) = record_name(cx, entry, raw, "object", Some(Grammar::Snake)) {
            names.push(name);
        }
        object(cx, entry, raw, arena);
    }
    duplicates(cx, &names, "object", "`objects`");

    let actions = collection(cx, document, "actions", &root, "action", arena);
    action::check_all(
        cx,
        document,
        "actions",
        &actions,
        None,
        "the stack's `actions`",
    );
}

/// Tools, skills and agents.
fn second_half<'a>(cx: &mut Cx, document: &'a Map<'a>, arena: &'a Arena) {
    let root = JsonPath::root();
    let tools = collection(cx, document, "tools", &root, "tool", arena);
    let mut names = Vec::new();
    for entry in &tools {
        let Some(raw) = entry.raw(document, "tools") else {
            continue;
        };
        if let Some(name) = tool::check(cx, entry, raw) {
            names.push(name);
        }
    }
    duplicates(cx, &names, "tool", "`tools`");

    let skills = collection(cx, document, "skills", &root, "skill", arena);
    let mut names = Vec::new();
    for entry in &skills {
        let Some(raw) = entry.raw(document, "skills") else {
            continue;
        };
        if let Some(name) = skill::check(cx, entry, raw) {
            names.push(name);
        }
    }
    duplicates(cx, &names, "skill", "`skills`");

    let agents = collection(cx, document, "agents", &root, "agent", arena);
    let mut names = Vec::new();
    for entry in &agents {
        let Some(raw) = entry.raw(document, "agents") else {
            continue;
        };
        if let Some(name) = agent::check(cx, entry, raw) {
            names.push(name);
        }
    }
    duplicates(cx, &names, "agent", "`agents`");
}

/// Warns about top-level keys one edit away from a modelled collection
/// (`skill`, `Tools`): the stack keeps them, but nothing reads them.
fn top_level_near_misses(cx: &mut Cx, document: &Map<'_>) {
    for key in document.keys() {
        if COLLECTIONS.contains(&key) {
            continue;
        }
        let folded = fold(key);
        let Some(near) = COLLECTIONS
            .iter()
            .find(|c| levenshtein_utf16(&folded, c) <= 1)
        else {
            continue;
        };
        cx.push(
            Diagnostic::new(
                DiagnosticId::UnknownKey,
                JsonPath::root().key(key),
                format!("top-level key `{key}` is not a collection this workspace reads"),
                format!("did you mean `{near}`? Rename `{key}` to `{near}`"),
            )
            .at_key()
            .with_severity(Severity::Warning),
        );
    }
}

/// An object: its label, fields and actions.
fn object<'a>(cx: &mut Cx, entry: &Entry<'_>, raw: &'a Map<'a>, arena: &'a Arena) {
    fields(cx, raw, &entry.path, &[("label", Expected::Text)]);
    let owner = entry.record.name().map(str::to_owned);
    for field in collection(cx, raw, "fields", &entry.path, "field", arena) {
        let Some(field_raw) = field.raw(raw, "fields") else {
            continue;
        };
        fields(
            cx,
            field_raw,
            &field.path,
            &[
                ("type", Expected::String),
                ("label", Expected::Text),
                ("required", Expected::Boolean),
                ("options", Expected::Array),
                ("description", Expected::String),
            ],
        );
    }
    let actions = collection(cx, raw, "actions", &entry.path, "action", arena);
    let scope = format!("{}'s `actions`", entry.describe("object"));
    action::check_all(cx, raw, "actions", &actions, owner.as_deref(), &scope);
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{ids, run};
    use serde_json::json;

    #[test]
    fn object_names_are_lowercase_snake_case() {
        assert_eq!(
            ids(json!({"objects": [{"name": "Bad Name", "label": "O", "fields": {}}]})),
            vec![("spec-invalid-name", "objects[0].name".to_owned())]
        );
        assert!(
            ids(json!({"objects": [{"name": "support_ticket", "label": "O", "fields": {}}]}))
                .is_empty()
        );
    }

    #[test]
    fn two_halves_give_what_one_thread_gives() {
        // Enough records for two threads, with problems in every
        // collection, so the joined order is checked.
        let bad = |i: usize| {
            if i.is_multiple_of(7) {
                json!(3)
            } else {
                json!(format!("Bad {i}"))
            }
        };
        let objects: Vec<_> = (0..1500)
            .map(|i| json!({"name": bad(i), "label": i, "actions": [{"name": bad(i)}]}))
            .collect();
        let actions: Vec<_> = (0..1500)
            .map(|i| json!({"name": bad(i), "type": 1}))
            .collect();
        let tools: Vec<_> = (0..1500)
            .map(|i| json!({"name": bad(i), "x": true}))
            .collect();
        let skills: Vec<_> = (0..1500)
            .map(|i| json!({"name": bad(i), "tools": [bad(i)]}))
            .collect();
        let document = json!({"objects": objects, "actions": actions, "tools": tools,
            "skills": skills, "agents": {"A": {"skills": 1}}, "skill": []});
        let serde_json::Value::Object(map) = &document else {
            unreachable!("an object")
        };
        let arena = crate::json::Arena::new();
        let document = crate::json::Map::from_serde(map, &arena);
        let mut parallel = super::Cx::default();
        super::check(&mut parallel, document, &super::super::Threads);
        // However a caller's pool runs the halves, they report in order.
        let mut reversed = super::Cx::default();
        super::check(&mut reversed, document, &Reversed);
        let mut serial = super::Cx::default();
        let arena = crate::json::Arena::new();
        super::first_half(&mut serial, document, &arena);
        super::second_half(&mut serial, document, &arena);
        let (parallel, serial) = (parallel.into_diagnostics(), serial.into_diagnostics());
        assert!(serial.len() > 6000, "{}", serial.len());
        assert_eq!(parallel, serial);
        assert_eq!(reversed.into_diagnostics(), serial);
    }

    /// Runs the second half, then the first, on the caller's thread.
    struct Reversed;

    impl super::Join for Reversed {
        fn join(&self, a: &mut (dyn FnMut() + Send), b: &mut (dyn FnMut() + Send)) {
            b();
            a();
        }
    }

    #[test]
    fn collection_shapes() {
        assert_eq!(
            ids(json!({"skills": "all", "tools": [null, 3], "agents": {"a": true}})),
            vec![
                ("spec-wrong-type", "tools[0]".to_owned()),
                ("spec-wrong-type", "tools[1]".to_owned()),
                ("spec-wrong-type", "skills".to_owned()),
                ("spec-wrong-type", "agents.a".to_owned()),
            ]
        );
    }

    #[test]
    fn raw_paths_count_dropped_entries_and_use_map_keys() {
        let d = ids(json!({
            "skills": [null, {"name": "Bad Name", "label": "x", "tools": []}],
            "agents": {"Agent One": {}}
        }));
        assert!(
            d.contains(&("spec-invalid-name", "skills[1].name".to_owned())),
            "{d:?}"
        );
        assert!(
            d.contains(&("spec-invalid-name", "agents[\"Agent One\"]".to_owned())),
            "{d:?}"
        );
    }

    #[test]
    fn missing_and_wrong_names() {
        let d = ids(json!({"objects": [{"label": "x"}, {"name": 3}]}));
        assert_eq!(
            d,
            vec![
                ("spec-missing-key", "objects[0]".to_owned()),
                ("spec-wrong-type", "objects[1].name".to_owned()),
            ]
        );
    }

    #[test]
    fn duplicates_name_the_first() {
        let d = run(json!({"objects": [{"name": "task"}, {"name": "task"}]}));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].id.as_str(), "spec-duplicate-name");
        assert_eq!(d[0].path.to_string(), "objects[1].name");
        assert_eq!(d[0].related[0].path.to_string(), "objects[0].name");
        assert!(d[0].message.contains("objects[0]"), "{}", d[0].message);
    }

    #[test]
    fn top_level_near_miss_is_a_warning() {
        let d = run(json!({"skill": [], "views": [], "Tools": []}));
        assert_eq!(d.len(), 2);
        assert!(d.iter().all(|d| d.severity == super::Severity::Warning));
        assert!(d[0].fix.contains("`skills`"));
        assert!(d[1].fix.contains("`tools`"));
    }

    #[test]
    fn object_fields_are_typed() {
        assert_eq!(
            ids(
                json!({"objects": [{"name": "t", "label": 5, "fields": {"a": {"required": "yes", "options": "x"}}}]})
            ),
            vec![
                ("spec-wrong-type", "objects[0].label".to_owned()),
                ("spec-wrong-type", "objects[0].fields.a.required".to_owned()),
                ("spec-wrong-type", "objects[0].fields.a.options".to_owned()),
            ]
        );
    }
}
