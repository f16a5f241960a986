//! Composing several stacks (packages) into one.
//!
//! [`compose`] concatenates every collection in source order, `tools`
//! included (ADR-0109 decision 5): the five modelled collections
//! (`objects`, `actions`, `tools`, `skills`, `agents`) are read leniently
//! (a map becomes records named by their keys) and always compose to
//! arrays; any other top-level key whose values are arrays is concatenated
//! too. A top-level key with a non-array value keeps the first source's
//! value; a different value in a later source is a
//! [`DiagnosticId::ComposeConflict`] warning.
//!
//! A name that two *different* sources define in the same modelled
//! collection is a [`DiagnosticId::DuplicateName`] error that names both
//! sources; duplicates inside one source are [`crate::validate`]'s to
//! report. Diagnostics carry raw paths *into their source* (with
//! [`Diagnostic::source`] set), so they can be located in the files.
//! Everything else about each source is checked by validating it alone:
//! composition adds no other rule.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::collection::{self, Origin};
use crate::json::{self, Arena};
use crate::path::{JsonPath, Segment};
use crate::validate::{Anchor, Diagnostic, DiagnosticId, Related};

/// The collections that compose record by record and must have unique
/// names across sources.
const MODELLED: &[(&str, &str)] = &[
    ("objects", "object"),
    ("actions", "action"),
    ("tools", "tool"),
    ("skills", "skill"),
    ("agents", "agent"),
];

/// One stack to compose, with the name messages use for it (a file path).
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// How messages refer to this stack.
    pub name: &'a str,
    /// The stack document.
    pub stack: &'a Map<String, Value>,
}

/// Where an entry of a composed array came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryOrigin {
    /// Index of the source in the slice given to [`compose`].
    pub source: usize,
    /// The entry's raw segment in its source collection (an array index
    /// or a map key).
    pub segment: Segment,
}

/// The result of [`compose`].
#[derive(Debug, Clone, Default)]
pub struct Composition {
    /// The composed stack.
    pub stack: Map<String, Value>,
    /// Cross-source duplicate names and conflicting top-level values.
    pub diagnostics: Vec<Diagnostic>,
    entries: HashMap<String, Vec<EntryOrigin>>,
    values: HashMap<String, usize>,
}

impl Composition {
    /// Maps a path in the composed stack to its source and raw path there.
    pub fn origin(&self, path: &JsonPath) -> Option<(usize, JsonPath)> {
        let segments = path.segments();
        let Some(Segment::Key(key)) = segments.first() else {
            return None;
        };
        if let Some(origins) = self.entries.get(key) {
            let Some(Segment::Index(i)) = segments.get(1) else {
                return origins
                    .first()
                    .map(|o| (o.source, JsonPath::root().key(key)));
            };
            let origin = origins.get(*i)?;
            let mut raw = vec![Segment::Key(key.clone()), origin.segment.clone()];
            raw.extend(segments.iter().skip(2).cloned());
            return Some((origin.source, JsonPath::from(raw)));
        }
        self.values.get(key).map(|&source| (source, path.clone()))
    }

    /// Where each entry of the composed array under `key` came from.
    pub fn entry_origins(&self, key: &str) -> &[EntryOrigin] {
        self.entries.get(key).map_or(&[], Vec::as_slice)
    }
}

/// Composes `sources` into one stack (see the module docs).
pub fn compose(sources: &[Source<'_>]) -> Composition {
    let mut out = Composition::default();
    for (s, source) in sources.iter().enumerate() {
        for (key, value) in source.stack {
            if MODELLED.iter().any(|(k, _)| k == key) {
                let composed = out
                    .stack
                    .entry(key.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                let origins = out.entries.entry(key.clone()).or_default();
                if let Value::Array(items) = composed {
                    append_records(items, origins, s, value);
                }
                continue;
            }
            match (out.stack.get_mut(key), value) {
                (None, Value::Array(items)) => {
                    out.stack.insert(key.clone(), Value::Array(items.clone()));
                    out.entries.insert(key.clone(), origins_of(s, items));
                }
                (None, other) => {
                    out.stack.insert(key.clone(), other.clone());
                    out.values.insert(key.clone(), s);
                }
                (Some(Value::Array(composed)), Value::Array(items))
                    if out.entries.contains_key(key) =>
                {
                    composed.extend(items.iter().cloned());
                    out.entries
                        .entry(key.clone())
                        .or_default()
                        .extend(origins_of(s, items));
                }
                (Some(existing), other) if existing == other => {}
                (Some(_), _) => {
                    let first = out
                        .values
                        .get(key)
                        .copied()
                        .or_else(|| {
                            out.entries
                                .get(key)
                                .and_then(|o| o.first())
                                .map(|o| o.source)
                        })
                        .unwrap_or(0);
                    let first_name = sources.get(first).map_or("?", |f| f.name);
                    let mut d = Diagnostic::new(
                        DiagnosticId::ComposeConflict,
                        JsonPath::root().key(key),
                        format!(
                            "top-level `{key}` differs between `{first_name}` and `{}`; the composition keeps the value from `{first_name}`",
                            source.name
                        ),
                        format!("make the values agree, or keep `{key}` in one stack only"),
                    )
                    .at_key()
                    .with_related(Related {
                        source: Some(first),
                        path: JsonPath::root().key(key),
                        message: format!("the value kept, from `{first_name}`"),
                    });
                    d.source = Some(s);
                    out.diagnostics.push(d);
                }
            }
        }
    }
    duplicate_names(&mut out, sources);
    out
}

fn origins_of(source: usize, items: &[Value]) -> Vec<EntryOrigin> {
    (0..items.len())
        .map(|i| EntryOrigin {
            source,
            segment: Segment::Index(i),
        })
        .collect()
}

/// Appends a modelled collection's records (read leniently).
fn append_records(
    items: &mut Vec<Value>,
    origins: &mut Vec<EntryOrigin>,
    source: usize,
    value: &Value,
) {
    let arena = Arena::new();
    let value = json::Value::from_serde(value, &arena);
    for record in collection::records(Some(&value), &arena) {
        origins.push(EntryOrigin {
            source,
            segment: record.raw_segment(),
        });
        items.push(Value::Object(record.fields.to_serde()));
    }
}

/// Reports names defined by two different sources.
fn duplicate_names(out: &mut Composition, sources: &[Source<'_>]) {
    for (key, noun) in MODELLED {
        let mut first: HashMap<String, (usize, JsonPath)> = HashMap::new();
        for (s, source) in sources.iter().enumerate() {
            let Some(raw) = source.stack.get(*key) else {
                continue;
            };
            let arena = Arena::new();
            let raw = json::Value::from_serde(raw, &arena);
            for record in collection::records(Some(&raw), &arena) {
                let Some(name) = record.name() else { continue };
                let entry =
                    JsonPath::from(vec![Segment::Key((*key).to_owned()), record.raw_segment()]);
                let raw_has_name = match record.origin {
                    Origin::Map { key: k, .. } => raw
                        .get(k)
                        .and_then(json::Value::as_object)
                        .is_some_and(|m| m.contains_key("name")),
                    Origin::Array { .. } => true,
                };
                let (path, anchor) = if raw_has_name {
                    (entry.key("name"), Anchor::Value)
                } else {
                    (entry, Anchor::Key)
                };
                match first.get(name) {
                    None => {
                        first.insert(name.to_owned(), (s, path));
                    }
                    Some((f, _)) if *f == s => {}
                    Some((f, first_path)) => {
                        let first_name = sources.get(*f).map_or("?", |x| x.name);
                        let extra = if *key == "objects" {
                            "; objects are not merged"
                        } else {
                            "; the composed stack would keep both"
                        };
                        let mut d = Diagnostic::new(
                            DiagnosticId::DuplicateName,
                            path,
                            format!(
                                "{noun} `{name}` is defined in both `{first_name}` and `{}`",
                                source.name
                            ),
                            format!("rename one of them or keep a single copy{extra}"),
                        )
                        .with_related(Related {
                            source: Some(*f),
                            path: first_path.clone(),
                            message: format!(
                                "{noun} `{name}` is first defined here, in `{first_name}`"
                            ),
                        });
                        d.anchor = anchor;
                        d.source = Some(s);
                        out.diagnostics.push(d);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("test documents are objects"),
        }
    }

    #[test]
    fn concatenates_every_collection_including_tools() {
        let a =
            doc(json!({"tools": [{"name": "t1"}], "skills": {"s1": {"tools": []}}, "views": [1]}));
        let b = doc(
            json!({"tools": {"t2": {"label": "T"}}, "skills": [null, {"name": "s2"}], "views": [2]}),
        );
        let c = compose(&[
            Source {
                name: "a.json",
                stack: &a,
            },
            Source {
                name: "b.json",
                stack: &b,
            },
        ]);
        assert_eq!(
            c.stack["tools"],
            json!([{"name": "t1"}, {"name": "t2", "label": "T"}])
        );
        assert_eq!(
            c.stack["skills"],
            json!([{"name": "s1", "tools": []}, {"name": "s2"}])
        );
        assert_eq!(c.stack["views"], json!([1, 2]));
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        assert_eq!(
            c.origin(&JsonPath::root().key("skills").index(1).key("name")),
            Some((1, JsonPath::root().key("skills").index(1).key("name")))
        );
        assert_eq!(
            c.origin(&JsonPath::root().key("tools").index(1).key("label")),
            Some((1, JsonPath::root().key("tools").key("t2").key("label")))
        );
        assert_eq!(
            c.origin(&JsonPath::root().key("views").index(1)),
            Some((1, JsonPath::root().key("views").index(0)))
        );
        assert_eq!(c.entry_origins("tools").len(), 2);
    }

    #[test]
    fn duplicate_names_name_both_sources() {
        let a = doc(
            json!({"skills": [{"name": "triage"}], "objects": [{"name": "case"}, {"name": "case"}]}),
        );
        let b = doc(json!({"skills": {"triage": {}}, "objects": [{"name": "case"}]}));
        let c = compose(&[
            Source {
                name: "a.json",
                stack: &a,
            },
            Source {
                name: "b.json",
                stack: &b,
            },
        ]);
        let d: Vec<_> = c
            .diagnostics
            .iter()
            .map(|d| (d.id.as_str(), d.source, d.path.to_string()))
            .collect();
        assert_eq!(
            d,
            vec![
                ("spec-duplicate-name", Some(1), "objects[0].name".to_owned()),
                ("spec-duplicate-name", Some(1), "skills.triage".to_owned()),
            ]
        );
        assert!(c.diagnostics[1].message.contains("`a.json` and `b.json`"));
        assert_eq!(c.diagnostics[1].anchor, Anchor::Key);
        assert_eq!(c.diagnostics[1].related[0].source, Some(0));
        assert_eq!(
            c.diagnostics[1].related[0].path.to_string(),
            "skills[0].name"
        );
        assert!(c.diagnostics[0].fix.contains("not merged"));
    }

    #[test]
    fn conflicting_values_keep_the_first() {
        let a = doc(json!({"api": {"v": 1}, "name": "x"}));
        let b = doc(json!({"api": {"v": 2}, "name": "x"}));
        let c = compose(&[
            Source {
                name: "a",
                stack: &a,
            },
            Source {
                name: "b",
                stack: &b,
            },
        ]);
        assert_eq!(c.stack["api"], json!({"v": 1}));
        assert_eq!(c.diagnostics.len(), 1);
        assert_eq!(c.diagnostics[0].id, DiagnosticId::ComposeConflict);
        assert_eq!(c.diagnostics[0].source, Some(1));
        assert_eq!(
            c.origin(&JsonPath::root().key("api").key("v")),
            Some((0, JsonPath::root().key("api").key("v")))
        );
    }

    #[test]
    fn junk_collections_compose_to_nothing() {
        let a = doc(json!({"skills": "all", "tools": 3}));
        let c = compose(&[Source {
            name: "a",
            stack: &a,
        }]);
        assert_eq!(c.stack["skills"], json!([]));
        assert!(c.diagnostics.is_empty());
        assert_eq!(compose(&[]).stack.len(), 0);
    }
}
