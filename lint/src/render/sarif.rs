//! The `sarif` format: SARIF 2.1.0 for GitHub code scanning and other
//! static-analysis dashboards.

use std::io::{self, Write};

use objectstack_spec::json::terminal;
use serde_json::{Value, json};

use crate::finding::{Finding, Severity};
use crate::rules::RULES;

/// The SARIF schema this output follows.
const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// A SARIF 2.1.0 log with one run. Rules carry their documentation; results
/// carry the real severity, a relative URI (`uriBaseId: %SRCROOT%`), a
/// region in Unicode code points, the lenient JSON path as a logical
/// location, and a stable fingerprint of rule, file, path and name.
pub fn sarif(findings: &[Finding]) -> String {
    let mut out = Vec::new();
    // Writing JSON values to memory does not fail.
    if write_sarif(findings, &mut out).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// [`sarif`], written to `out` a result at a time: a stack with tens of
/// thousands of findings is not held as a JSON tree, nor as one string.
pub fn write_sarif(findings: &[Finding], out: &mut impl Write) -> io::Result<()> {
    let (rules, ids) = rules(findings);
    let tool = json!({"driver": {
        "name": "objectstack-ai",
        "semanticVersion": env!("CARGO_PKG_VERSION"),
        "informationUri": env!("CARGO_PKG_REPOSITORY"),
        "rules": rules,
    }});
    out.write_all(b"{\n  \"$schema\": ")?;
    nested(out, &json!(SCHEMA), 1)?;
    out.write_all(b",\n  \"version\": \"2.1.0\",\n  \"runs\": [\n    {\n      \"tool\": ")?;
    nested(out, &tool, 3)?;
    out.write_all(b",\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": ")?;
    let results = findings.iter().map(|f| result(f, &ids));
    terminal::to_writer_pretty_array_nested(&mut *out, results, 3).map_err(io::Error::other)?;
    out.write_all(b"\n    }\n  ]\n}\n")
}

/// Writes `value` `depth` levels deep in the log.
fn nested(out: &mut impl Write, value: &Value, depth: usize) -> io::Result<()> {
    terminal::to_writer_pretty_nested(out, value, depth).map_err(io::Error::other)
}

/// The rule descriptors (every lint rule, then each other id the findings
/// carry, in order of appearance) and their ids, in the same order.
fn rules(findings: &[Finding]) -> (Vec<Value>, Vec<String>) {
    let mut rules: Vec<Value> = RULES
        .iter()
        .map(|r| rule_descriptor(r.id(), &r.summary(), &r.doc(), r.default_severity()))
        .collect();
    let mut ids: Vec<String> = RULES.iter().map(|r| r.id().to_owned()).collect();
    for f in findings {
        if !ids.iter().any(|id| **id == *f.rule) {
            let descriptor = match crate::validation::describe(&f.rule) {
                Some((severity, summary, doc)) => {
                    rule_descriptor(&f.rule, &summary, &doc, severity)
                }
                None => rule_descriptor(&f.rule, &f.rule, &f.rule, f.severity),
            };
            rules.push(descriptor);
            ids.push(f.rule.to_string());
        }
    }
    (rules, ids)
}

/// One finding as a SARIF result; `ids` are the rules' ids in descriptor
/// order.
fn result(f: &Finding, ids: &[String]) -> Value {
    let rule_index = ids.iter().position(|id| *id == f.rule).unwrap_or(0);
    let mut result = json!({
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": level(f.severity),
        "message": {"text": format!("{}\n\nHint: {}", f.message, f.hint)},
        "partialFingerprints": {"objectstackFinding/v1": fingerprint(f)},
        "properties": {
            "where": f.where_,
            "path": f.path,
            "hint": f.hint,
            "ref": f.reference,
            "suggestion": f.suggestion,
        },
    });
    let mut location = json!({
        "logicalLocations": [{"fullyQualifiedName": f.path, "kind": "member"}],
    });
    if let Some(l) = &f.location {
        location["physicalLocation"] = json!({
            "artifactLocation": artifact(&l.file),
            "region": {
                "startLine": l.line,
                "startColumn": l.column,
                "byteOffset": l.byte_start,
                "byteLength": l.byte_end.saturating_sub(l.byte_start),
            },
        });
    }
    result["locations"] = json!([location]);
    result
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn rule_descriptor(id: &str, summary: &str, doc: &str, severity: Severity) -> Value {
    json!({
        "id": id,
        "name": pascal_case(id),
        "shortDescription": {"text": summary},
        "fullDescription": {"text": what_it_finds(doc).unwrap_or(summary)},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": level(severity)},
        "properties": {"tags": ["objectstack", "ai", "reference-integrity"]},
    })
}

/// The paragraph under `## What it finds`.
fn what_it_finds(doc: &str) -> Option<&str> {
    let rest = doc.split_once("## What it finds")?.1;
    let section = rest.split("\n## ").next()?;
    Some(section.trim())
}

fn pascal_case(id: &str) -> String {
    id.split(['-', '_', '.'])
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// A relative URI under `%SRCROOT%`, or a `file://` URI for an absolute path.
fn artifact(file: &str) -> Value {
    let file = file.replace('\\', "/");
    if file.starts_with('/') {
        return json!({"uri": format!("file://{}", encode(&file))});
    }
    let relative = file.trim_start_matches("./");
    json!({"uri": encode(relative), "uriBaseId": "%SRCROOT%"})
}

/// Percent-encodes everything but unreserved characters and `/`.
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// FNV-1a (64-bit) of rule, file, path and name: stable across runs and
/// line moves.
fn fingerprint(f: &Finding) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let parts = [
        &f.rule,
        f.file(),
        f.path.as_str(),
        f.reference.as_deref().unwrap_or(""),
    ];
    for part in parts {
        for b in part.bytes().chain(std::iter::once(0)) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The log as one JSON value, written whole: what [`write_sarif`] must
    /// write a result at a time.
    fn whole_log(findings: &[Finding]) -> String {
        let (rules, ids) = rules(findings);
        let results: Vec<Value> = findings.iter().map(|f| result(f, &ids)).collect();
        let log = json!({
            "$schema": SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "objectstack-ai",
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "informationUri": env!("CARGO_PKG_REPOSITORY"),
                    "rules": rules,
                }},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }],
        });
        let mut s = terminal::to_string_pretty(&log).unwrap();
        s.push('\n');
        s
    }

    #[test]
    fn the_streamed_log_is_the_whole_one() {
        let doc = crate::testing::doc(serde_json::json!({
            "actions": [{"name": "go", "type": "script", "target": "t",
                         "ai": {"exposed": "yes", "description": "Goes \u{7} somewhere the user names."}}],
            "skills": [{"name": "s", "tools": ["ghost", "action_go", "act_go"]},
                       {"name": "s", "tools": ["x*"]}],
            "tools": [{"name": "query_records"}]
        }));
        let located = crate::lint(&crate::Source {
            file: "stack.json",
            text: None,
            root: doc,
        });
        assert!(located.len() > 3, "{located:?}");
        for findings in [&located[..], &located[..1], &[]] {
            assert_eq!(sarif(findings), whole_log(findings));
        }
    }

    #[test]
    fn uris_are_relative_and_encoded() {
        assert_eq!(
            artifact("./my stacks/a.json"),
            json!({"uri": "my%20stacks/a.json", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact("/tmp/a.json"),
            json!({"uri": "file:///tmp/a.json"})
        );
    }

    #[test]
    fn names_and_sections() {
        assert_eq!(
            pascal_case("ai-skill-tool-unresolved"),
            "AiSkillToolUnresolved"
        );
        assert_eq!(
            what_it_finds("x\n## What it finds\n\nA.\n\n## Why\nB"),
            Some("A.")
        );
    }
}
