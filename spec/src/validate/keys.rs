//! Key checks for strict (and a few loose) shapes: unknown keys with a
//! "did you mean", retired keys with their explanation.
//!
//! For an undeclared key the checks run in this order, and the first that
//! applies answers:
//! 1. a *retired* key gets [`DiagnosticId::RetiredKey`] and its story;
//! 2. a key with *guidance* (a key people reach for that never existed,
//!    such as `ai.permissions`) gets [`DiagnosticId::UnknownKey`] and the
//!    explanation;
//! 3. a known *synonym* (compared case-insensitively, ignoring `_`, `-` and
//!    spaces: `Enabled`, `ai_enabled`) gets "did you mean" its canonical key;
//! 4. on a strict shape, the nearest declared key by edit distance
//!    (case- and separator-insensitive, within max(2, len/3) UTF-16 code
//!    units) is suggested; with none close, the declared keys are listed.
//!
//! Loose shapes (actions, agents) only report steps 1 to 3.

use crate::json::Map;
use std::fmt;

use super::check::{Cx, closest};
use super::{Diagnostic, DiagnosticId};
use crate::path::JsonPath;

/// The metadata-protection keys upstream accepts on tools and skills.
pub(crate) const PROTECTION_KEYS: &[&str] = &[
    "protection",
    "_lock",
    "_lockReason",
    "_lockSource",
    "_provenance",
    "_packageId",
    "_packageVersion",
    "_lockDocsUrl",
];

/// The key rules of one shape.
#[derive(Debug)]
pub(crate) struct Shape {
    /// Declared keys, in the order they are listed to people.
    pub(crate) known: &'static [&'static str],
    /// Further declared keys that are not suggested (protection metadata).
    pub(crate) also_known: &'static [&'static str],
    /// Whether any other key is an error.
    pub(crate) strict: bool,
    /// Synonym -> canonical key.
    pub(crate) aliases: &'static [(&'static str, &'static str)],
    /// Key that never existed -> explanation.
    pub(crate) guidance: &'static [(&'static str, &'static str)],
    /// Removed key -> explanation.
    pub(crate) retired: &'static [(&'static str, &'static str)],
}

/// Case-, underscore-, dash- and space-insensitive form for synonyms.
fn probe(key: &str) -> String {
    key.chars()
        .filter(|c| !(*c == '_' || *c == '-' || c.is_whitespace()))
        .flat_map(char::to_lowercase)
        .collect()
}

fn lookup(table: &[(&str, &'static str)], key: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

impl Shape {
    fn is_known(&self, key: &str) -> bool {
        self.known.contains(&key) || self.also_known.contains(&key)
    }

    fn synonym(&self, key: &str) -> Option<&'static str> {
        let p = probe(key);
        self.aliases
            .iter()
            .find(|(alias, _)| probe(alias) == p)
            .map(|(_, canonical)| *canonical)
    }
}

/// Checks every key of `fields` (at `path`) against `shape`; `surface`
/// names the shape for messages ("the `ai` block of action `close`").
pub(crate) fn check_keys(
    cx: &mut Cx,
    shape: &'static Shape,
    fields: &Map<'_>,
    path: &JsonPath,
    surface: impl fmt::Display,
) {
    // Whether a key is known depends on the keys alone: once every key of
    // a layout is known, its other objects are not checked again.
    let (layout, at) = (fields.layout_id(), std::ptr::from_ref(shape) as usize);
    if cx.all_known(layout, at) {
        return;
    }
    if fields.keys().all(|key| shape.is_known(key)) {
        cx.note_all_known(layout, at);
        return;
    }
    for key in fields.keys() {
        if shape.is_known(key) {
            continue;
        }
        let at = path.key(key);
        if let Some(story) = lookup(shape.retired, key) {
            cx.push(
                Diagnostic::new(
                    DiagnosticId::RetiredKey,
                    at,
                    format!("`{key}` was removed from {surface}"),
                    story,
                )
                .at_key(),
            );
            continue;
        }
        if let Some(story) = lookup(shape.guidance, key) {
            cx.push(
                Diagnostic::new(
                    DiagnosticId::UnknownKey,
                    at,
                    format!("{surface} has no key `{key}`"),
                    story,
                )
                .at_key(),
            );
            continue;
        }
        let suggestion = shape.synonym(key).or_else(|| {
            if shape.strict {
                closest(key, shape.known)
            } else {
                None
            }
        });
        let fix = match suggestion {
            Some(canonical) if fields.contains_key(canonical) => {
                format!("did you mean `{canonical}`? It is already set, so delete `{key}`")
            }
            Some(canonical) => {
                format!("did you mean `{canonical}`? Rename `{key}` to `{canonical}`")
            }
            None if shape.strict => format!(
                "delete it; {surface} accepts only {}",
                shape
                    .known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => continue,
        };
        cx.push(
            Diagnostic::new(
                DiagnosticId::UnknownKey,
                at,
                format!("{surface} has no key `{key}`"),
                fix,
            )
            .at_key(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SHAPE: Shape = Shape {
        known: &["exposed", "description", "category"],
        also_known: &["_lock"],
        strict: true,
        aliases: &[("enabled", "exposed"), ("aiEnabled", "exposed")],
        guidance: &[("permissions", "no gate here")],
        retired: &[("old", "it was removed")],
    };

    fn run(shape: &'static Shape, v: serde_json::Value) -> Vec<Diagnostic> {
        let mut cx = Cx::default();
        let arena = crate::json::Arena::new();
        check_keys(
            &mut cx,
            shape,
            crate::json::Value::from_serde(&v, &arena)
                .as_object()
                .unwrap(),
            &JsonPath::root().key("ai"),
            "the block",
        );
        cx.into_diagnostics()
    }

    #[test]
    fn each_route_answers() {
        let d = run(
            &SHAPE,
            json!({"exposed": true, "_lock": "x", "old": 1, "permissions": [], "AI_Enabled": true,
                   "descripton": "x", "zzzzzz": 1}),
        );
        let got: Vec<_> = d
            .iter()
            .map(|d| (d.id.as_str(), d.path.to_string(), d.fix.clone()))
            .collect();
        assert_eq!(
            got[0],
            ("spec-retired-key", "ai.old".into(), "it was removed".into())
        );
        assert_eq!(
            got[1],
            (
                "spec-unknown-key",
                "ai.permissions".into(),
                "no gate here".into()
            )
        );
        assert_eq!(
            got[2].2,
            "did you mean `exposed`? It is already set, so delete `AI_Enabled`"
        );
        assert_eq!(
            got[3].2,
            "did you mean `description`? Rename `descripton` to `description`"
        );
        assert!(
            got[4]
                .2
                .starts_with("delete it; the block accepts only `exposed`"),
            "{}",
            got[4].2
        );
        assert_eq!(d.len(), 5);
        assert!(d.iter().all(|d| d.anchor == super::super::Anchor::Key));
    }

    #[test]
    fn synonym_of_a_present_key_says_delete() {
        let d = run(&SHAPE, json!({"exposed": true, "enabled": true}));
        assert_eq!(
            d[0].fix,
            "did you mean `exposed`? It is already set, so delete `enabled`"
        );
    }

    #[test]
    fn loose_shapes_ignore_other_keys() {
        const LOOSE: Shape = Shape {
            strict: false,
            ..SHAPE
        };
        let d = run(
            &LOOSE,
            json!({"icon": "x", "descripton": "y", "enabled": true}),
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path.to_string(), "ai.enabled");
    }

    #[test]
    fn objects_of_a_layout_whose_keys_are_all_known_are_skipped_only_then() {
        // The first two share a layout whose keys are all known; the last
        // two share one with an unknown key, reported for each of them.
        let arena = crate::json::Arena::new();
        let text = r#"[{"exposed": true}, {"exposed": false}, {"exposed": true, "zz": 1},
            {"exposed": true, "zz": 2}]"#;
        let parsed = crate::json::parse(text, &arena).unwrap();
        let mut cx = Cx::default();
        for (i, item) in parsed.as_array().unwrap().iter().enumerate() {
            let map = item.as_object().unwrap();
            check_keys(&mut cx, &SHAPE, map, &JsonPath::root().index(i), "it");
        }
        let paths: Vec<String> = cx
            .into_diagnostics()
            .iter()
            .map(|d| d.path.to_string())
            .collect();
        assert_eq!(paths, ["[2].zz", "[3].zz"]);
    }
}
