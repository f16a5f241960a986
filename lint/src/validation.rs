//! The `spec` validation diagnostics, reported as findings under their own
//! ids (`spec-wrong-type`, `spec-unknown-key`, ...) so one `lint` run tells
//! an author everything.
//!
//! Their `path` is the *raw* path `spec` reports (real array positions and
//! map keys), not the lenient one the lint rules print.

use objectstack_spec::json::{Map, Value};
use objectstack_spec::path::{JsonPath, Segment};
use objectstack_spec::validate::{Anchor, Diagnostic, DiagnosticId, Join, validate_with};

use crate::finding::{Finding, Severity};
use crate::rule::{Hit, Site};

/// Validation findings for one source document.
///
/// A large document's two halves run as two tasks of the thread pool the
/// rules use, not on a thread of their own: beside the rules' context that
/// would be three threads on two cores.
pub(crate) fn hits(source: usize, root: &Map<'_>) -> Vec<Hit> {
    validate_with(root, &Pool)
        .into_iter()
        .map(|d| hit(d.source.unwrap_or(source), root, d))
        .collect()
}

/// [`Join`] on rayon's pool.
struct Pool;

impl Join for Pool {
    fn join(&self, a: &mut (dyn FnMut() + Send), b: &mut (dyn FnMut() + Send)) {
        rayon::join(a, b);
    }
}

/// Cross-file diagnostics of a composition (names two files define,
/// top-level values they disagree on).
pub(crate) fn compose_hits(files: &[&str], roots: &[&Map<'_>]) -> Vec<Hit> {
    if roots.len() < 2 {
        return Vec::new();
    }
    // Composition works on owned documents; only `--compose` pays for it.
    let owned: Vec<serde_json::Map<String, serde_json::Value>> =
        roots.iter().map(|r| r.to_serde()).collect();
    let sources: Vec<objectstack_spec::compose::Source<'_>> = files
        .iter()
        .zip(&owned)
        .map(|(name, stack)| objectstack_spec::compose::Source { name, stack })
        .collect();
    objectstack_spec::compose::compose(&sources)
        .diagnostics
        .into_iter()
        .filter_map(|d| {
            let source = d.source.unwrap_or(0);
            let root = roots.get(source)?;
            Some(hit(source, root, d))
        })
        .collect()
}

fn hit(source: usize, root: &Map<'_>, d: Diagnostic) -> Hit {
    let path = if d.path.is_root() {
        "(top level)".to_owned()
    } else {
        d.path.to_string()
    };
    let anchor_key = d.anchor == Anchor::Key;
    let finding = Finding {
        rule: std::borrow::Cow::Borrowed(d.id.as_str()),
        severity: match d.severity {
            objectstack_spec::validate::Severity::Error => Severity::Error,
            objectstack_spec::validate::Severity::Warning => Severity::Warning,
        },
        where_: where_of(root, &d.path),
        path,
        message: d.message.into(),
        hint: d.fix.into(),
        reference: None,
        suggestion: None,
        location: None,
    };
    Hit {
        site: Site {
            source,
            anchor: d.path.into(),
            anchor_key,
        },
        finding,
    }
}

/// `skill "x"`, `object "o" · action "a"`, or `stack` for a raw path.
fn where_of(root: &Map<'_>, path: &JsonPath) -> String {
    let segments = path.segments();
    let Some((noun, label)) = record_label(root.get(key_of(segments.first())), &segments, 0) else {
        return "stack".to_owned();
    };
    let mut text = format!("{noun} \"{label}\"");
    if noun == "object" && key_of(segments.get(2)) == "actions" {
        let object = crate::stack::lookup(
            root,
            &JsonPath::from(segments.get(..2).unwrap_or_default().to_vec()).into(),
        );
        let actions = object.and_then(|o| o.get("actions"));
        if let Some((_, action)) = record_label(actions, &segments, 2) {
            text.push_str(&format!(" \u{b7} action \"{action}\""));
        }
    }
    text
}

fn key_of(segment: Option<&Segment>) -> &str {
    match segment {
        Some(Segment::Key(k)) => k,
        _ => "",
    }
}

/// The noun and label of the record that `segments[at..at + 2]` names in
/// `collection`.
fn record_label(
    collection: Option<&Value>,
    segments: &[Segment],
    at: usize,
) -> Option<(&'static str, String)> {
    let noun = match key_of(segments.get(at)) {
        "objects" => "object",
        "actions" => "action",
        "tools" => "tool",
        "skills" => "skill",
        "agents" => "agent",
        "flows" => "flow",
        _ => return None,
    };
    let segment = segments.get(at + 1)?;
    // Read the one record directly: scanning the collection per diagnostic
    // would be quadratic.
    let name_of = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
    };
    let label = match (collection, segment) {
        (Some(Value::Array(items)), Segment::Index(i)) => match items.get(*i).and_then(name_of) {
            Some(name) => name,
            None => {
                let lenient = items
                    .get(..*i)
                    .unwrap_or_default()
                    .iter()
                    .filter(|v| v.is_object())
                    .count();
                format!("#{lenient}")
            }
        },
        (Some(Value::Object(entries)), Segment::Key(k)) => entries
            .get(k)
            .and_then(name_of)
            .unwrap_or_else(|| k.clone()),
        (_, Segment::Key(k)) => k.clone(),
        (_, Segment::Index(i)) => format!("#{i}"),
    };
    Some((noun, label))
}

/// Ids of the validation diagnostics.
pub(crate) fn ids() -> Vec<&'static str> {
    DiagnosticId::ALL.iter().map(|d| d.as_str()).collect()
}

/// The default severity, one-line summary and documentation of a
/// validation id.
pub(crate) fn describe(id: &str) -> Option<(Severity, String, String)> {
    let d = DiagnosticId::from_id(id)?;
    let severity = match d.default_severity() {
        objectstack_spec::validate::Severity::Error => Severity::Error,
        objectstack_spec::validate::Severity::Warning => Severity::Warning,
    };
    let doc = format!(
        "{}\n\nReported by the metadata validation (`spec`), which `lint` runs too.\n\n{}",
        capitalise_first(d.summary()),
        d.explanation()
    );
    Some((severity, d.summary().to_owned(), doc))
}

fn capitalise_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::doc;
    use serde_json::json;

    #[test]
    fn diagnostics_become_findings_with_a_place() {
        let d = doc(json!({
            "objects": [{"name": "case", "label": "Case", "actions": [
                {"name": "close", "label": "Close", "type": "script", "target": "t",
                 "ai": {"exposed": "yes"}}]}],
            "skills": [{"name": "s", "label": "S", "tools": "query_data"}]
        }));
        let hits = hits(0, d);
        assert!(!hits.is_empty());
        let wheres: Vec<_> = hits.iter().map(|h| h.finding.where_.as_str()).collect();
        assert!(
            wheres.contains(&"object \"case\" \u{b7} action \"close\""),
            "{wheres:?}"
        );
        assert!(wheres.contains(&"skill \"s\""), "{wheres:?}");
        assert!(hits.iter().all(|h| h.finding.rule.starts_with("spec-")));
    }

    #[test]
    fn every_id_is_described() {
        for id in ids() {
            let (_, summary, doc) = describe(id).unwrap();
            assert!(!summary.is_empty());
            assert!(doc.len() > summary.len(), "{id}");
        }
        assert!(describe("nope").is_none());
    }
}
