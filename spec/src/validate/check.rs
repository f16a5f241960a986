//! Shared helpers: the diagnostic sink, type checks with fixes, enum and
//! name checks.

use crate::json::{LayoutId, Map, Value};
use std::fmt;

use super::{Anchor, Diagnostic, DiagnosticId};
use crate::json::kind;
use crate::path::{JsonPath, Segment};
use crate::text::{is_snake_name, levenshtein_utf16, utf16_len};

/// Collects diagnostics.
#[derive(Debug, Default)]
pub(crate) struct Cx {
    out: Vec<Diagnostic>,
    /// Where each key of a list [`fields`] checks sits in objects of one
    /// layout, by (layout, list): objects of one kind share a handful of
    /// layouts and come one after another, so the keys are looked up once
    /// per layout rather than once per object. A small table with one
    /// entry per slot (a new pair takes its slot's place), so its memory
    /// does not grow with the document. The lists are `'static`, so an
    /// address names one list for the run; the trees outlive the sink.
    positions: Vec<Option<Positions>>,
    /// (layout, shape) pairs whose every key the shape knows, so objects
    /// of those layouts need no key check; a table like `positions`.
    known: Vec<Option<(LayoutId, usize)>>,
}

/// In [`Positions`]: a key absent from a layout.
const ABSENT: u8 = u8::MAX;
/// In [`Positions`]: a key at a position a byte does not hold below
/// [`ABSENT`], or not worked out: looked up for each object.
const FAR: u8 = u8::MAX - 1;

/// Slots of [`Cx::positions`] and [`Cx::known`] (a power of two).
const MEMO_SLOTS: usize = 64;

/// The longest list of fields whose positions are kept.
const MEMO_KEYS: usize = 24;

/// Where the keys of one list sit in one layout: [`ABSENT`], [`FAR`] or a
/// position.
#[derive(Debug, Clone, Copy)]
struct Positions {
    layout: LayoutId,
    list: usize,
    at: [u8; MEMO_KEYS],
}

/// The slot of a (layout, list or shape) pair in a memo table.
fn memo_slot(layout: LayoutId, other: usize) -> usize {
    let mixed = (layout.as_usize() ^ other.rotate_left(17)) as u64;
    (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % MEMO_SLOTS
}

impl Cx {
    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        self.out.push(diagnostic);
    }

    /// Appends another sink's diagnostics after these.
    pub(crate) fn append(&mut self, mut other: Cx) {
        if self.out.is_empty() {
            self.out = other.out;
        } else {
            self.out.append(&mut other.out);
        }
    }

    /// Whether the keys of objects of `layout` are all known to the shape
    /// at `shape` (an address; see [`Cx::known`]), as far as the table
    /// remembers.
    pub(crate) fn all_known(&self, layout: LayoutId, shape: usize) -> bool {
        self.known.get(memo_slot(layout, shape)).copied().flatten() == Some((layout, shape))
    }

    /// Notes that they are.
    pub(crate) fn note_all_known(&mut self, layout: LayoutId, shape: usize) {
        if self.known.is_empty() {
            self.known = vec![None; MEMO_SLOTS];
        }
        if let Some(slot) = self.known.get_mut(memo_slot(layout, shape)) {
            *slot = Some((layout, shape));
        }
    }

    /// Where the keys of `specs` (at most [`MEMO_KEYS`]) sit in objects of
    /// `parent`'s layout, from the table when it has them.
    fn positions_of(
        &mut self,
        parent: &Map<'_>,
        specs: &'static [(&'static str, Expected)],
    ) -> [u8; MEMO_KEYS] {
        let (layout, list) = (parent.layout_id(), specs.as_ptr() as usize);
        if self.positions.is_empty() {
            self.positions = vec![None; MEMO_SLOTS];
        }
        let slot = self.positions.get_mut(memo_slot(layout, list));
        if let Some(Some(kept)) = &slot
            && kept.layout == layout
            && kept.list == list
        {
            return kept.at;
        }
        let mut at = [FAR; MEMO_KEYS];
        for (position, &(key, _)) in at.iter_mut().zip(specs) {
            *position = match parent.position(key) {
                None => ABSENT,
                Some(p) => u8::try_from(p).ok().filter(|&p| p < FAR).unwrap_or(FAR),
            };
        }
        if let Some(slot) = slot {
            *slot = Some(Positions { layout, list, at });
        }
        at
    }

    pub(crate) fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.out
    }
}

/// `path` extended by one segment.
pub(crate) fn child(path: &JsonPath, segment: Segment) -> JsonPath {
    path.with(segment)
}

/// A value's type with a short preview for scalars: `a string ("yes")`.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let preview: String = s.chars().take(40).collect();
            let ellipsis = if preview.len() < s.len() { "..." } else { "" };
            format!("a string ({:?}{ellipsis})", preview)
        }
        Value::Number(n) => format!("a number ({n})"),
        Value::Bool(b) => format!("a boolean ({b})"),
        other => kind(other).to_owned(),
    }
}

/// The JSON type a key expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expected {
    String,
    Boolean,
    Number,
    PositiveInteger,
    Array,
    Object,
    /// A string, or an object of translations.
    Text,
}

impl Expected {
    fn noun(self) -> &'static str {
        match self {
            Expected::String => "a string",
            Expected::Boolean => "a boolean",
            Expected::Number => "a number",
            Expected::PositiveInteger => "a positive whole number",
            Expected::Array => "a list",
            Expected::Object => "an object",
            Expected::Text => "a string (or an object of translations)",
        }
    }

    pub(crate) fn accepts(self, value: &Value) -> bool {
        match self {
            Expected::String => value.is_string(),
            Expected::Boolean => value.is_boolean(),
            Expected::Number => value.is_number(),
            // A whole number, as JavaScript reads one: `1000.0` and `1e3` are
            // integers there (safe ones: up to 2^53 - 1).
            Expected::PositiveInteger => {
                value.as_u64().is_some_and(|n| n > 0)
                    || value.as_f64().is_some_and(|n| {
                        n >= 1.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0
                    })
            }
            Expected::Array => value.is_array(),
            Expected::Object => value.is_object(),
            Expected::Text => value.is_string() || value.is_object(),
        }
    }

    fn fix(self, found: &Value) -> String {
        if found.is_null() {
            return "leave the key out instead of writing `null`".to_owned();
        }
        match (self, found) {
            (Expected::Boolean, Value::String(s)) if *s == "true" || *s == "false" => {
                format!("write `{s}` without quotes")
            }
            (Expected::Boolean, _) => "write `true` or `false`".to_owned(),
            (Expected::String | Expected::Text, Value::Number(_) | Value::Bool(_)) => {
                format!("write it as a string: `\"{found}\"`")
            }
            (Expected::String | Expected::Text, _) => {
                "write it as a JSON string in double quotes".to_owned()
            }
            (Expected::Array, Value::String(_) | Value::Number(_) | Value::Bool(_)) => {
                format!("wrap it in a list: `[{found}]`")
            }
            (Expected::Array, _) => "write a JSON list: `[...]`".to_owned(),
            (Expected::Object, _) => "write a JSON object: `{...}`".to_owned(),
            (Expected::Number, Value::String(s)) if s.trim().parse::<f64>().is_ok() => {
                format!("write `{}` without quotes", s.trim())
            }
            (Expected::Number, _) => "write a number".to_owned(),
            (Expected::PositiveInteger, _) => "write a whole number greater than zero".to_owned(),
        }
    }
}

/// A wrong-type diagnostic for `label` (a key or a description of the
/// value) at `path`.
pub(crate) fn wrong_type(
    path: JsonPath,
    label: impl fmt::Display,
    expected: Expected,
    found: &Value,
) -> Diagnostic {
    Diagnostic::new(
        DiagnosticId::WrongType,
        path,
        format!(
            "{label} must be {}, found {}",
            expected.noun(),
            describe(found)
        ),
        expected.fix(found),
    )
}

/// The value of `key` in `parent` when present and of the expected type;
/// reports a wrong type (and returns `None`) otherwise.
pub(crate) fn field<'v>(
    cx: &mut Cx,
    parent: &'v Map<'v>,
    key: &str,
    parent_path: &JsonPath,
    expected: Expected,
) -> Option<&'v Value<'v>> {
    typed(cx, parent.get(key)?, key, parent_path, expected)
}

/// `value`, the value of `key`, when it is of the type `expected`; else
/// reports it and `None`.
fn typed<'v>(
    cx: &mut Cx,
    value: &'v Value<'v>,
    key: &str,
    parent_path: &JsonPath,
    expected: Expected,
) -> Option<&'v Value<'v>> {
    if expected.accepts(value) {
        Some(value)
    } else {
        cx.push(wrong_type(
            parent_path.key(key),
            format_args!("`{key}`"),
            expected,
            value,
        ));
        None
    }
}

/// Checks the types of several optional keys at once, in the order of
/// `specs`.
pub(crate) fn fields(
    cx: &mut Cx,
    parent: &Map<'_>,
    parent_path: &JsonPath,
    specs: &'static [(&'static str, Expected)],
) {
    // A list too long to keep stays all `FAR`: each key is looked up.
    let mut at = [FAR; MEMO_KEYS];
    if specs.len() <= MEMO_KEYS {
        at = cx.positions_of(parent, specs);
    }
    let positions = at.iter().chain(std::iter::repeat(&FAR));
    for (&(key, expected), &position) in specs.iter().zip(positions) {
        let value = match position {
            ABSENT => None,
            FAR => parent.get(key),
            p => parent.value_at(usize::from(p)),
        };
        if let Some(value) = value {
            typed(cx, value, key, parent_path, expected);
        }
    }
}

/// Reports a missing required key.
pub(crate) fn require(
    cx: &mut Cx,
    parent: &Map<'_>,
    key: &str,
    parent_path: &JsonPath,
    owner: impl fmt::Display,
    hint: &str,
) -> bool {
    if parent.contains_key(key) {
        return true;
    }
    cx.push(Diagnostic::new(
        DiagnosticId::MissingKey,
        parent_path.clone(),
        format!("{owner} has no `{key}`, which is required"),
        format!("add `\"{key}\": {hint}`"),
    ));
    false
}

/// The member of `allowed` closest to `value`, compared case-insensitively
/// (ties go to the earlier member), within a distance proportional to its
/// length.
pub(crate) fn closest<'a>(value: &str, allowed: &[&'a str]) -> Option<&'a str> {
    closest_within(value, allowed, 2.max(utf16_len(value) / 3))
}

/// [`closest`] with an explicit distance bound.
pub(crate) fn closest_within<'a>(value: &str, allowed: &[&'a str], max: usize) -> Option<&'a str> {
    let folded = fold(value);
    allowed
        .iter()
        .filter(|a| **a != value)
        .map(|a| {
            (
                levenshtein_utf16(&folded, &fold(a)),
                levenshtein_utf16(value, a),
                *a,
            )
        })
        .filter(|(d, _, _)| *d <= max)
        .min_by_key(|(d, cased, _)| (*d, *cased))
        .map(|(_, _, a)| a)
}

/// Case- and separator-insensitive form for scoring.
pub(crate) fn fold(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '-' || c.is_whitespace() {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Checks that `key` (when present) is a string in `allowed`; returns it.
pub(crate) fn enum_field<'v>(
    cx: &mut Cx,
    parent: &'v Map<'v>,
    key: &str,
    parent_path: &JsonPath,
    allowed: &[&str],
) -> Option<&'v str> {
    let value = field(cx, parent, key, parent_path, Expected::String)?.as_str()?;
    enum_value(
        cx,
        value,
        || parent_path.key(key),
        format_args!("`{key}`"),
        allowed,
    )
    .then_some(value)
}

/// Checks that a string is in `allowed`, reporting it otherwise at the
/// path `path` makes (only then: most values are allowed).
pub(crate) fn enum_value(
    cx: &mut Cx,
    value: &str,
    path: impl FnOnce() -> JsonPath,
    label: impl fmt::Display,
    allowed: &[&str],
) -> bool {
    if allowed.contains(&value) {
        return true;
    }
    let path = path();
    let list = allowed
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ");
    // Stricter than for keys: short enum values are too close to each
    // other for a distance of two to mean anything (`get` is not `PUT`).
    let fix = match closest_within(value, allowed, 1.max(utf16_len(value) / 3)) {
        Some(near) => {
            format!("did you mean `{near}`? (values are case-sensitive; allowed: {list})")
        }
        None => format!("use one of {list}"),
    };
    cx.push(Diagnostic::new(
        DiagnosticId::InvalidEnum,
        path,
        format!("{label} is `{value}`, which is not an allowed value"),
        fix,
    ));
    false
}

/// The grammars names follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grammar {
    /// `^[a-z_][a-z0-9_]*$` (tools, skills, agents, object names).
    Snake,
    /// `^[a-z_][a-z0-9_]*\*?$` (a skill's tool entries).
    SnakeWildcard,
    /// `^[a-z][a-z0-9_]*$`, two characters or more (actions, param fields).
    Identifier,
}

impl Grammar {
    pub(crate) fn accepts(self, name: &str) -> bool {
        match self {
            Grammar::Snake => is_snake_name(name),
            Grammar::SnakeWildcard => is_snake_name(name.strip_suffix('*').unwrap_or(name)),
            Grammar::Identifier => {
                name.len() >= 2
                    && name.starts_with(|c: char| c.is_ascii_lowercase())
                    && is_snake_name(name)
            }
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Grammar::Snake => "lowercase snake_case (`^[a-z_][a-z0-9_]*$`)",
            Grammar::SnakeWildcard => {
                "lowercase snake_case, optionally ending in one `*` (`^[a-z_][a-z0-9_]*\\*?$`)"
            }
            Grammar::Identifier => {
                "lowercase snake_case starting with a letter, at least two characters \
                 (`^[a-z][a-z0-9_]*$`)"
            }
        }
    }

    /// A name in this grammar close to `name`, when one can be derived.
    fn repair(self, name: &str) -> Option<String> {
        let (stem, star) = match self {
            Grammar::SnakeWildcard => match name.trim().strip_suffix('*') {
                Some(stem) => (stem, "*"),
                None => (name, ""),
            },
            _ => (name, ""),
        };
        let mut out = String::new();
        let mut prev_lower = false;
        for c in stem.trim().chars() {
            if c.is_ascii_uppercase() {
                if prev_lower {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
                prev_lower = false;
            } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
                out.push(c);
                prev_lower = true;
            } else if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
                prev_lower = false;
            }
        }
        let mut out = out.trim_end_matches('_').to_owned();
        if out.starts_with(|c: char| c.is_ascii_digit()) {
            out.insert(
                0,
                if self == Grammar::Identifier {
                    'n'
                } else {
                    '_'
                },
            );
        }
        out.push_str(star);
        (self.accepts(&out) && out != name).then_some(out)
    }
}

/// Reports `name` at `path` when it breaks the grammar.
pub(crate) fn name_grammar(
    cx: &mut Cx,
    name: &str,
    (path, anchor): (JsonPath, Anchor),
    label: impl fmt::Display,
    grammar: Grammar,
) -> bool {
    if grammar.accepts(name) {
        return true;
    }
    let fix = match grammar.repair(name) {
        Some(better) => {
            format!("rename it, for example to `{better}` (and update every reference)")
        }
        None => format!("rename it to {}", grammar.describe()),
    };
    let mut diagnostic = Diagnostic::new(
        DiagnosticId::InvalidName,
        path,
        format!("{label} `{name}` is not {}", grammar.describe()),
        fix,
    );
    diagnostic.anchor = anchor;
    cx.push(diagnostic);
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `serde_json` value as a leaked document value.
    fn dv(v: serde_json::Value) -> Value<'static> {
        let arena: &'static crate::json::Arena = Box::leak(Box::default());
        let v: &'static serde_json::Value = Box::leak(Box::new(v));
        Value::from_serde(v, arena)
    }

    #[test]
    fn describes_values_with_previews() {
        assert_eq!(describe(&dv(json!("yes"))), "a string (\"yes\")");
        assert_eq!(describe(&dv(json!(3))), "a number (3)");
        assert_eq!(describe(&dv(json!([1]))), "an array");
        let long = "x".repeat(100);
        assert!(describe(&dv(json!(long))).ends_with("...)"));
    }

    #[test]
    fn fixes_name_the_repair() {
        assert_eq!(
            Expected::Boolean.fix(&dv(json!("true"))),
            "write `true` without quotes"
        );
        assert_eq!(
            Expected::Array.fix(&dv(json!("a"))),
            "wrap it in a list: `[\"a\"]`"
        );
        assert_eq!(
            Expected::Number.fix(&dv(json!(" 4 "))),
            "write `4` without quotes"
        );
        assert!(
            Expected::Object
                .fix(&dv(json!(null)))
                .contains("leave the key out")
        );
    }

    #[test]
    fn closest_is_case_insensitive_and_bounded() {
        assert_eq!(closest("Danger", &["primary", "danger"]), Some("danger"));
        assert_eq!(closest("scirpt", &["script", "url"]), Some("script"));
        assert_eq!(closest("zzzzzzzz", &["script", "url"]), None);
        assert_eq!(closest_within("get", &["POST", "PUT"], 1), None);
        assert_eq!(closest_within("post", &["POST", "PUT"], 1), Some("POST"));
    }

    #[test]
    fn grammars_and_repairs() {
        assert!(Grammar::Snake.accepts("_x1"));
        assert!(!Grammar::Snake.accepts("X"));
        assert!(Grammar::SnakeWildcard.accepts("action_*"));
        assert!(!Grammar::SnakeWildcard.accepts("*"));
        assert!(!Grammar::SnakeWildcard.accepts("a**"));
        assert!(Grammar::Identifier.accepts("ab"));
        assert!(!Grammar::Identifier.accepts("a"));
        assert!(!Grammar::Identifier.accepts("_ab"));
        assert_eq!(
            Grammar::Snake.repair("Query Data"),
            Some("query_data".to_owned())
        );
        assert_eq!(
            Grammar::Snake.repair("closeDeal"),
            Some("close_deal".to_owned())
        );
        assert_eq!(
            Grammar::SnakeWildcard.repair("Action-*"),
            Some("action*".to_owned())
        );
        assert_eq!(Grammar::Identifier.repair("1st"), Some("n1st".to_owned()));
        assert_eq!(Grammar::Snake.repair("!!!"), None);
    }

    #[test]
    fn fields_checks_each_object_of_a_shared_layout_by_its_own_values() {
        // Three objects with the same keys in the same order share one
        // layout; the positions are worked out on the first, and each is
        // still checked by its own values. A fourth, with the keys in
        // another order, has a layout of its own.
        let arena = crate::json::Arena::new();
        let text = r#"[{"a": "x", "b": true}, {"a": 5, "b": true}, {"a": "y", "b": 1},
            {"b": "no", "a": "z"}]"#;
        let parsed = crate::json::parse(text, &arena).unwrap();
        let Value::Array(items) = parsed else {
            panic!("an array")
        };
        const SPECS: &[(&str, Expected)] = &[
            ("a", Expected::String),
            ("missing", Expected::Number),
            ("b", Expected::Boolean),
        ];
        let mut cx = Cx::default();
        for (i, item) in items.iter().enumerate() {
            let map = item.as_object().unwrap();
            fields(&mut cx, map, &JsonPath::root().index(i), SPECS);
        }
        let layouts = items
            .iter()
            .map(|v| v.as_object().unwrap().layout_id())
            .collect::<Vec<_>>();
        assert_eq!(layouts[0], layouts[1]);
        assert_eq!(layouts[0], layouts[2]);
        assert_ne!(layouts[0], layouts[3]);
        let paths: Vec<String> = cx
            .into_diagnostics()
            .iter()
            .map(|d| d.path.to_string())
            .collect();
        assert_eq!(paths, ["[1].a", "[2].b", "[3].b"]);
    }
}
