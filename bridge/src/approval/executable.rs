//! The executable digest: what an approval is bound to besides its input.
//!
//! An operator approves "run this action on this input". The input is
//! bound by its own hash; this digest binds the action: every part of the
//! registered tool that decides what runs when it is dispatched. A host
//! that registers a different version of the action (another target,
//! method, patch or parameter schema) computes a different digest, and the
//! executor refuses the approval instead of running something nobody
//! approved.
//!
//! The digest is the SHA-256 of the canonical JSON (keys sorted by their
//! UTF-8 bytes at every level, no whitespace, integral floats written as
//! integers) of one object:
//!
//! - `digest`: the version of this layout (`objectstack.executable/1`);
//! - `tool`, `action`, `object`: the tool name, the action name, the
//!   object it acts on (or `null`);
//! - `route`: `script`, `field_write`, `api` or `flow`, and `rowContext`:
//!   whether the record is loaded and passed first;
//! - `parameters`: the tool's parameter schema, as registered;
//! - each action key the dispatch reads, as written in the action (`null`
//!   when absent): `type`, `operation`, `target`, `body`, `method`,
//!   `patch`, `bodyShape`, `bodyExtra`, `recordIdParam`, `recordIdField`.
//!
//! What only describes the action (labels, descriptions, messages, hints,
//! UI locations beyond row context) is left out, so rewording a
//! description does not invalidate pending approvals.

use objectstack_spec::AIToolDefinition;
use objectstack_spec::materialise::Route;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::canonical::{Canonical, CanonicalError, hex, write_object};

/// The layout version hashed into every digest.
const LAYOUT: &str = "objectstack.executable/1";

/// The action keys the dispatchers read, hashed as written.
const EXECUTABLE_KEYS: [&str; 10] = [
    "type",
    "operation",
    "target",
    "body",
    "method",
    "patch",
    "bodyShape",
    "bodyExtra",
    "recordIdParam",
    "recordIdField",
];

/// Deepest nesting hashed. Documents read through `spec::parse` nest at
/// most 128 levels, and the definition adds a few.
const MAX_DEPTH: usize = 256;

/// An executable digest, as its 32 bytes: every registered action tool
/// keeps one, so a served stack of many tools keeps them as bytes and
/// writes the hex only where it is stored or shown.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExecutableDigest([u8; 32]);

impl ExecutableDigest {
    /// Whether `hex` is this digest written as 64 lowercase hex digits (as
    /// rows store it).
    pub(crate) fn is(&self, hex: &str) -> bool {
        let hex = hex.as_bytes();
        hex.len() == 64
            && self.0.iter().zip(hex.chunks_exact(2)).all(|(b, pair)| {
                matches!(pair, [hi, lo] if Some(*hi) == digit(b >> 4) && Some(*lo) == digit(b & 0x0f))
            })
    }
}

fn digit(nibble: u8) -> Option<u8> {
    b"0123456789abcdef".get(usize::from(nibble)).copied()
}

impl std::fmt::Display for ExecutableDigest {
    /// The 64 lowercase hex digits rows store.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

impl std::fmt::Debug for ExecutableDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// The executable digest of a registered action tool (see the module
/// documentation), or why it has none (a value nested deeper than the
/// limit).
pub(crate) fn executable_sha256(
    definition: &AIToolDefinition,
    action_name: &str,
    object_name: Option<&str>,
    route: Route,
    row_context: bool,
    action: &Map<String, Value>,
) -> Result<ExecutableDigest, String> {
    let mut doc = Map::new();
    let text = |s: &str| Value::String(s.to_owned());
    doc.insert("digest".into(), text(LAYOUT));
    doc.insert("tool".into(), text(&definition.name));
    doc.insert("action".into(), text(action_name));
    doc.insert("object".into(), object_name.map_or(Value::Null, text));
    doc.insert("route".into(), text(route_name(route)));
    doc.insert("rowContext".into(), Value::Bool(row_context));
    doc.insert(
        "parameters".into(),
        Value::Object(definition.parameters.clone()),
    );
    for key in EXECUTABLE_KEYS {
        let value = action.get(key).cloned().unwrap_or(Value::Null);
        doc.insert(key.into(), value);
    }
    let rules = Canonical {
        max_bytes: usize::MAX,
        max_depth: MAX_DEPTH,
        integral_floats_as_integers: true,
    };
    let mut out = String::new();
    write_object(&doc, &mut out, 1, &rules).map_err(|e| match e {
        CanonicalError::TooDeep => {
            format!("its definition nests deeper than {MAX_DEPTH} levels, too deep to bind an approval to")
        }
        CanonicalError::TooLarge => "its definition is too large to bind an approval to".to_owned(),
    })?;
    Ok(ExecutableDigest(Sha256::digest(out.as_bytes()).into()))
}

fn route_name(route: Route) -> &'static str {
    match route {
        Route::Script => "script",
        Route::FieldWrite => "field_write",
        Route::Api => "api",
        Route::Flow => "flow",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn definition(parameters: Value) -> AIToolDefinition {
        AIToolDefinition {
            name: "action_purge".into(),
            label: None,
            description: "Purges.".into(),
            parameters: map(parameters),
            category: None,
            output_schema: None,
            object_name: Some("task".into()),
            requires_confirmation: Some(true),
        }
    }

    fn digest(definition: &AIToolDefinition, action: Value) -> String {
        executable_sha256(
            definition,
            "purge",
            Some("task"),
            Route::Api,
            true,
            &map(action),
        )
        .unwrap()
        .to_string()
    }

    #[test]
    fn the_digest_is_written_as_hex_and_matched_against_hex_only() {
        let d = definition(json!({"type": "object"}));
        let action = map(json!({"target": "x"}));
        let bytes =
            executable_sha256(&d, "purge", Some("task"), Route::Api, true, &action).unwrap();
        let hex = bytes.to_string();
        assert_eq!(hex, digest(&d, json!({"target": "x"})));
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
        assert_eq!(hex.len(), 64);
        assert!(bytes.is(&hex));
        assert!(!bytes.is(&hex.to_uppercase()));
        assert!(!bytes.is(&hex[..62]));
        assert!(!bytes.is(&format!("{hex}00")));
        let mut other = hex.clone().into_bytes();
        other[63] = if other[63] == b'0' { b'1' } else { b'0' };
        assert!(!bytes.is(std::str::from_utf8(&other).unwrap()));
        assert_eq!(format!("{bytes:?}"), hex);
    }

    #[test]
    fn the_digest_ignores_key_order_and_number_spelling() {
        let d = definition(
            json!({"type": "object", "properties": {"n": {"type": "number", "default": 1}}}),
        );
        let e = definition(
            json!({"properties": {"n": {"default": 1.0, "type": "number"}}, "type": "object"}),
        );
        let a = digest(
            &d,
            json!({"target": "x", "bodyExtra": {"a": 2, "b": [1, -0.0]}}),
        );
        let b = digest(
            &e,
            json!({"bodyExtra": {"b": [1.0, 0], "a": 2.0}, "target": "x"}),
        );
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        // A fraction is a different number.
        assert_ne!(
            a,
            digest(
                &d,
                json!({"target": "x", "bodyExtra": {"a": 2.5, "b": [1, 0]}})
            )
        );
    }

    #[test]
    fn every_executable_part_changes_the_digest_and_descriptions_do_not() {
        let d = definition(json!({"type": "object"}));
        let base = json!({"name": "purge", "target": "x", "method": "POST", "label": "Purge"});
        let reference = digest(&d, base.clone());
        for key in EXECUTABLE_KEYS {
            let mut changed = map(base.clone());
            changed.insert(key.into(), json!("changed"));
            assert_ne!(digest(&d, Value::Object(changed)), reference, "{key}");
        }
        let mut cosmetic = map(base.clone());
        cosmetic.insert("label".into(), json!("Purge it"));
        cosmetic.insert("successMessage".into(), json!("Gone."));
        cosmetic.insert("ai".into(), json!({"description": "Other words."}));
        assert_eq!(digest(&d, Value::Object(cosmetic)), reference);
        // Absent and null read the same.
        let mut null = map(base.clone());
        null.insert("patch".into(), Value::Null);
        assert_eq!(digest(&d, Value::Object(null)), reference);

        let other_schema = definition(json!({"type": "object", "required": ["x"]}));
        assert_ne!(digest(&other_schema, base.clone()), reference);
        let action = map(base);
        let variants = [
            executable_sha256(&d, "wipe", Some("task"), Route::Api, true, &action),
            executable_sha256(&d, "purge", None, Route::Api, true, &action),
            executable_sha256(&d, "purge", Some("task"), Route::Script, true, &action),
            executable_sha256(&d, "purge", Some("task"), Route::Api, false, &action),
        ];
        for v in variants {
            assert_ne!(v.unwrap().to_string(), reference);
        }
        let mut renamed = definition(json!({"type": "object"}));
        renamed.name = "action_wipe".into();
        assert_ne!(
            digest(
                &renamed,
                json!({"name": "purge", "target": "x", "method": "POST"})
            ),
            reference
        );
    }

    #[test]
    fn a_definition_too_deep_to_hash_is_refused_not_overflowed() {
        let mut deep = json!(1);
        for _ in 0..300 {
            deep = json!({"x": deep});
        }
        let d = definition(json!({"type": "object", "default": deep}));
        let err =
            executable_sha256(&d, "purge", None, Route::Script, false, &Map::new()).unwrap_err();
        assert!(err.contains("deeper than 256"), "{err}");
    }
}
