//! `cargo xtask parity [--npm-version V] [--cases N] [--seed S]`: a
//! differential test of the `ai-skill-tool-unresolved` rule against
//! upstream's `validateAiToolReferences` from `@objectstack/lint`, run with
//! node.
//!
//! Each case is a random stack from [`generate`] (seeded: case `i` of seed
//! `S` is always the same stack). Both implementations lint it; their
//! findings are compared on rule, severity, `where`, path, the unresolved
//! name, the kind (wildcard, unexposed action, fictional) and the
//! suggestion (upstream writes it into the message as
//! ` Did you mean "<x>"?`). Messages and hints are not compared: ours are
//! written in our own words. Each disagreement is minimised (entries and
//! keys are removed while the same kind of disagreement remains) and
//! printed with the stack that reproduces it, which is also written to
//! `target/parity/`. Any disagreement exits 1.
//!
//! One difference is deliberate and never generated: an exposed action
//! whose `ai` block is malformed (a non-boolean `requiresConfirmation`, a
//! `category` outside the enum, `paramHints` that is not a map of objects,
//! an `outputSchema` that is not an object) materialises upstream but not
//! here (see `spec::materialise`). The generator only writes well-formed
//! optional `ai` keys.
//!
//! Not part of CI: it needs node and the npm registry.

mod generate;
mod minimise;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::node::{Upstream, Worker};
use crate::util::{project_root, write_file};

pub(crate) use generate::generate;

/// The rule under test.
pub(crate) const RULE: &str = "ai-skill-tool-unresolved";
const PACKAGE: &str = "@objectstack/lint";

/// Arguments of `cargo xtask parity`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The `@objectstack/lint` version to compare with (default: the
    /// upstream release the registry was curated from).
    #[arg(long, value_name = "V")]
    npm_version: Option<String>,
    /// Use an existing npm install in this folder (it has
    /// `node_modules/@objectstack/lint`) instead of installing.
    #[arg(long, value_name = "DIR")]
    upstream_dir: Option<PathBuf>,
    /// How many random stacks to compare.
    #[arg(long, value_name = "N", default_value_t = 500)]
    cases: u64,
    /// The seed; case `i` of seed `S` is always the same stack.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Print at most this many disagreements (all are counted).
    #[arg(long, value_name = "N", default_value_t = 10)]
    show: usize,
}

/// The kind of an unresolved reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Wildcard,
    Unexposed,
    Fictional,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Wildcard => "wildcard",
            Kind::Unexposed => "unexposed",
            Kind::Fictional => "fictional",
        })
    }
}

/// The compared parts of one finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compared {
    pub(crate) rule: String,
    pub(crate) severity: String,
    pub(crate) where_: String,
    pub(crate) path: String,
    pub(crate) reference: Option<String>,
    pub(crate) kind: Kind,
    pub(crate) suggestion: Option<String>,
}

impl Compared {
    /// `(skill index, tool index)` parsed from `skills[i].tools[j]`, for
    /// ordering.
    fn sort_key(&self) -> (usize, usize, String) {
        let nums: Vec<usize> = self
            .path
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|s| s.parse().ok())
            .collect();
        (
            nums.first().copied().unwrap_or(usize::MAX),
            nums.get(1).copied().unwrap_or(usize::MAX),
            self.path.clone(),
        )
    }
}

/// The kind, read from a message (both implementations start it the same
/// way) and the reference.
fn kind_of(where_: &str, reference: &str, message: &str) -> Kind {
    if reference.ends_with('*') {
        return Kind::Wildcard;
    }
    let skill = where_
        .strip_prefix("skill \"")
        .and_then(|s| s.strip_suffix("\" \u{b7} tools"))
        .unwrap_or_default();
    let unexposed = format!("Skill \"{skill}\" references tool \"{reference}\", but the action \"");
    if message.starts_with(&unexposed) {
        Kind::Unexposed
    } else {
        Kind::Fictional
    }
}

/// Our findings for the stack `text`, restricted to [`RULE`].
pub(crate) fn ours(text: &str) -> Result<Vec<Compared>> {
    let arena = objectstack_spec::json::Arena::new();
    let root = objectstack_spec::json::parse_document(text.as_bytes(), &arena)
        .map_err(|e| anyhow::anyhow!("generated stack does not parse: {e}"))?;
    let findings = objectstack_lint::lint(&objectstack_lint::Source {
        file: "parity.json",
        text: Some(text),
        root,
    });
    let mut out: Vec<Compared> = findings
        .into_iter()
        .filter(|f| f.rule == RULE)
        .map(|f| {
            let reference = f.reference.clone();
            let kind = kind_of(
                &f.where_,
                reference.as_deref().unwrap_or(""),
                &f.message.to_cow(),
            );
            Compared {
                rule: f.rule.into_owned(),
                severity: f.severity.to_string(),
                where_: f.where_,
                path: f.path,
                reference,
                kind,
                suggestion: f.suggestion,
            }
        })
        .collect();
    out.sort_by_key(Compared::sort_key);
    Ok(out)
}

/// Upstream's findings from the worker's JSON answer.
fn theirs(answer: &str) -> Result<Vec<Compared>> {
    let json: Value = serde_json::from_str(answer).context("the node worker answered non-JSON")?;
    if let Some(err) = json.get("error").and_then(Value::as_str) {
        bail!("upstream failed: {err}");
    }
    let findings = json
        .get("findings")
        .and_then(Value::as_array)
        .context("the node worker answered without findings")?;
    let s = |f: &Value, k: &str| f.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut out: Vec<Compared> = findings
        .iter()
        .filter(|f| f.get("rule").and_then(Value::as_str) == Some(RULE))
        .map(|f| {
            let where_ = s(f, "where").unwrap_or_default();
            let reference = s(f, "ref");
            let message = s(f, "message").unwrap_or_default();
            let kind = kind_of(&where_, reference.as_deref().unwrap_or(""), &message);
            let suggestion = match kind {
                Kind::Fictional => suggestion_in(&message),
                _ => None,
            };
            Compared {
                rule: s(f, "rule").unwrap_or_default(),
                severity: s(f, "severity").unwrap_or_default(),
                where_,
                path: s(f, "path").unwrap_or_default(),
                reference,
                kind,
                suggestion,
            }
        })
        .collect();
    out.sort_by_key(Compared::sort_key);
    Ok(out)
}

/// The `<x>` of a message ending in ` Did you mean "<x>"?`.
pub(crate) fn suggestion_in(message: &str) -> Option<String> {
    const OPEN: &str = " Did you mean \"";
    let body = message.strip_suffix("\"?")?;
    let start = body.rfind(OPEN)? + OPEN.len();
    body.get(start..).map(str::to_owned)
}

/// One difference between the two sides on one stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Difference {
    pub(crate) path: String,
    /// `only upstream`, `only ours`, or the differing field.
    pub(crate) what: String,
    pub(crate) ours: String,
    pub(crate) theirs: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: ours {}, upstream {}",
            self.path, self.what, self.ours, self.theirs
        )
    }
}

fn show(c: &Compared) -> String {
    format!(
        "{} {} ref {:?} kind {} suggestion {:?}",
        c.rule, c.severity, c.reference, c.kind, c.suggestion
    )
}

/// Compares the two sides' findings (each sorted by path).
pub(crate) fn compare(ours: &[Compared], theirs: &[Compared]) -> Vec<Difference> {
    let by_path = |v: &[Compared]| -> BTreeMap<String, Vec<Compared>> {
        let mut m: BTreeMap<String, Vec<Compared>> = BTreeMap::new();
        for c in v {
            m.entry(c.path.clone()).or_default().push(c.clone());
        }
        m
    };
    let ours_map = by_path(ours);
    let theirs_map = by_path(theirs);
    let mut out = Vec::new();
    let mut paths: Vec<&String> = ours_map.keys().chain(theirs_map.keys()).collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        let a = ours_map.get(path).map(Vec::as_slice).unwrap_or_default();
        let b = theirs_map.get(path).map(Vec::as_slice).unwrap_or_default();
        match (a, b) {
            ([x], [y]) => {
                let fields: [(&str, String, String); 6] = [
                    ("rule", x.rule.clone(), y.rule.clone()),
                    ("severity", x.severity.clone(), y.severity.clone()),
                    ("where", x.where_.clone(), y.where_.clone()),
                    (
                        "ref",
                        format!("{:?}", x.reference),
                        format!("{:?}", y.reference),
                    ),
                    ("kind", x.kind.to_string(), y.kind.to_string()),
                    (
                        "suggestion",
                        format!("{:?}", x.suggestion),
                        format!("{:?}", y.suggestion),
                    ),
                ];
                for (what, o, t) in fields {
                    if o != t {
                        out.push(Difference {
                            path: path.clone(),
                            what: what.to_owned(),
                            ours: o,
                            theirs: t,
                        });
                    }
                }
            }
            _ => {
                let list = |v: &[Compared]| {
                    if v.is_empty() {
                        "nothing".to_owned()
                    } else {
                        v.iter().map(show).collect::<Vec<_>>().join(" | ")
                    }
                };
                let what = match (a.is_empty(), b.is_empty()) {
                    (true, _) => "only upstream reports it",
                    (_, true) => "only ours reports it",
                    _ => "different number of findings",
                };
                out.push(Difference {
                    path: path.clone(),
                    what: what.to_owned(),
                    ours: list(a),
                    theirs: list(b),
                });
            }
        }
    }
    out
}

/// The kind of disagreement, stable while a stack is minimised (paths may
/// shift as entries are removed).
fn signature(diffs: &[Difference]) -> Vec<String> {
    let mut s: Vec<String> = diffs.iter().map(|d| d.what.clone()).collect();
    s.sort();
    s.dedup();
    s
}

/// The node program: one JSON stack per input line, one JSON answer per
/// output line. `ref` is read from the stack at the finding's path, with
/// JavaScript's own reading of collections.
const WORKER_JS: &str = r#"
const { validateAiToolReferences } = require('@objectstack/lint');
const isRec = (v) => !!v && typeof v === 'object' && !Array.isArray(v);
const recordsOf = (v) => Array.isArray(v) ? v.filter(isRec)
  : isRec(v) ? Object.entries(v).map(([name, def]) => ({ name, ...(isRec(def) ? def : {}) })) : [];
const rl = require('readline').createInterface({ input: process.stdin, terminal: false });
rl.on('line', (line) => {
  let answer;
  try {
    if (typeof validateAiToolReferences !== 'function') {
      throw new Error('this @objectstack/lint does not export validateAiToolReferences ' +
        '(it predates the rule); pick a later --npm-version');
    }
    const stack = JSON.parse(line);
    const findings = validateAiToolReferences(stack).map((f) => {
      const m = /^skills\[(\d+)\]\.tools\[(\d+)\]$/.exec(f.path || '');
      let ref = null;
      if (m) {
        const skill = recordsOf(stack.skills)[Number(m[1])];
        const v = skill && Array.isArray(skill.tools) ? skill.tools[Number(m[2])] : undefined;
        if (typeof v === 'string') ref = v;
      }
      return { rule: f.rule, severity: f.severity, where: f.where, path: f.path, message: f.message, ref };
    });
    answer = { findings };
  } catch (e) {
    answer = { error: String(e && e.stack || e) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
});
"#;

/// Both sides on one stack.
struct Judge {
    worker: Worker,
    /// Findings compared so far (ours).
    compared: usize,
}

impl Judge {
    fn differences(&mut self, stack: &Value) -> Result<Vec<Difference>> {
        let text = serde_json::to_string(stack)?;
        let ours = ours(&text)?;
        let theirs = theirs(&self.worker.ask(&text)?)?;
        self.compared += ours.len();
        Ok(compare(&ours, &theirs))
    }
}

/// Entry point of `cargo xtask parity`.
pub(crate) fn run(args: &Args) -> Result<()> {
    let version = args
        .npm_version
        .clone()
        .unwrap_or_else(|| objectstack_registry::UPSTREAM_VERSION.to_owned());
    let upstream = Upstream::obtain(args.upstream_dir.as_deref(), PACKAGE, &version)?;
    let installed = upstream.version_of(PACKAGE)?;
    let mut judge = Judge {
        worker: upstream.worker(WORKER_JS)?,
        compared: 0,
    };
    println!(
        "parity: {} cases, seed {}, against {PACKAGE} {installed}",
        args.cases, args.seed
    );
    let out_dir = project_root().join("target").join("parity");
    let mut coverage = generate::Coverage::default();
    let mut failing = 0usize;
    let mut compared = 0usize;
    for case in 0..args.cases {
        let stack = generate(args.seed, case, &mut coverage);
        let before = judge.compared;
        let diffs = judge
            .differences(&stack)
            .with_context(|| format!("case {case}"))?;
        compared += judge.compared - before;
        if diffs.is_empty() {
            continue;
        }
        failing += 1;
        if failing > args.show {
            continue;
        }
        let wanted = signature(&diffs);
        let minimal = minimise::minimise(&stack, &mut |candidate| {
            judge
                .differences(candidate)
                .map(|d| !d.is_empty() && signature(&d) == wanted)
                .unwrap_or(false)
        });
        let minimal_diffs = judge.differences(&minimal)?;
        let file = out_dir.join(format!("seed-{}-case-{case}.json", args.seed));
        let mut pretty = serde_json::to_string_pretty(&minimal)?;
        pretty.push('\n');
        write_file(&file, &pretty)?;
        println!("\ndisagreement in case {case} (seed {}):", args.seed);
        for d in &minimal_diffs {
            println!("  {d}");
        }
        println!("  minimised stack ({}):", file.display());
        println!("    {}", serde_json::to_string(&minimal)?);
    }
    println!("\n{}", coverage.summary());
    println!("{compared} findings compared");
    if failing > 0 {
        bail!(
            "{failing} of {} cases disagree with upstream {PACKAGE} {installed}{}",
            args.cases,
            if failing > args.show {
                format!(" (first {} shown; --show N for more)", args.show)
            } else {
                String::new()
            }
        );
    }
    println!("no disagreements");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn finding(path: &str, reference: &str, suggestion: Option<&str>) -> Compared {
        Compared {
            rule: RULE.to_owned(),
            severity: "warning".to_owned(),
            where_: "skill \"s\" \u{b7} tools".to_owned(),
            path: path.to_owned(),
            reference: Some(reference.to_owned()),
            kind: Kind::Fictional,
            suggestion: suggestion.map(str::to_owned),
        }
    }

    #[test]
    fn reads_the_suggestion_from_the_message() {
        assert_eq!(
            suggestion_in("... to use it. Did you mean \"query_data\"?").as_deref(),
            Some("query_data")
        );
        assert_eq!(suggestion_in("... to use it."), None);
        assert_eq!(
            suggestion_in("x Did you mean \"a\"? Did you mean \"b\"?").as_deref(),
            Some("b")
        );
    }

    #[test]
    fn kinds_from_messages() {
        let w = "skill \"s\" \u{b7} tools";
        assert_eq!(kind_of(w, "x_*", "anything"), Kind::Wildcard);
        assert_eq!(
            kind_of(
                w,
                "action_a",
                "Skill \"s\" references tool \"action_a\", but the action \"a\" ..."
            ),
            Kind::Unexposed
        );
        assert_eq!(
            kind_of(
                w,
                "action_a",
                "Skill \"s\" references tool \"action_a\", which ..."
            ),
            Kind::Fictional
        );
    }

    #[test]
    fn compares_field_by_field() {
        let a = vec![
            finding("skills[0].tools[0]", "x", Some("y")),
            finding("skills[0].tools[1]", "z", None),
        ];
        let b = vec![
            finding("skills[0].tools[0]", "x", Some("w")),
            finding("skills[0].tools[2]", "q", None),
        ];
        let diffs = compare(&a, &b);
        let whats: Vec<(&str, &str)> = diffs
            .iter()
            .map(|d| (d.path.as_str(), d.what.as_str()))
            .collect();
        assert_eq!(
            whats,
            [
                ("skills[0].tools[0]", "suggestion"),
                ("skills[0].tools[1]", "only ours reports it"),
                ("skills[0].tools[2]", "only upstream reports it"),
            ]
        );
        assert!(compare(&a, &a).is_empty());
    }

    #[test]
    fn upstream_answers_are_parsed() {
        let answer = json!({"findings": [
            {"rule": RULE, "severity": "warning", "where": "skill \"s\" \u{b7} tools",
             "path": "skills[0].tools[10]", "ref": "qery_data",
             "message": "Skill \"s\" references tool \"qery_data\", which ... Did you mean \"query_data\"?"},
            {"rule": RULE, "severity": "warning", "where": "skill \"s\" \u{b7} tools",
             "path": "skills[0].tools[9]", "ref": "a_*", "message": "Skill \"s\" subscribes ..."},
            {"rule": "other-rule", "severity": "error", "where": "", "path": "", "ref": null, "message": ""}
        ]});
        let parsed = theirs(&answer.to_string()).unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].path, "skills[0].tools[9]", "sorted numerically");
        assert_eq!(parsed[0].kind, Kind::Wildcard);
        assert_eq!(parsed[1].suggestion.as_deref(), Some("query_data"));
        assert!(theirs(&json!({"error": "boom"}).to_string()).is_err());
    }

    #[test]
    fn ours_reports_the_three_kinds() {
        let stack = json!({
            "actions": [
                {"name": "close_case", "type": "script", "target": "t",
                 "ai": {"exposed": true, "description": "Closes the case and records the reason for it."}},
                {"name": "open_form", "type": "modal"}
            ],
            "skills": [{"name": "s", "tools": ["nothing_*", "action_open_form", "close_case", "qery_data", "zzzzzzzzzzzz"]}]
        });
        let found = ours(&stack.to_string()).unwrap();
        let summary: Vec<(Kind, Option<&str>)> = found
            .iter()
            .map(|c| (c.kind, c.suggestion.as_deref()))
            .collect();
        assert_eq!(
            summary,
            [
                (Kind::Wildcard, None),
                (Kind::Unexposed, None),
                (Kind::Fictional, Some("action_close_case")),
                (Kind::Fictional, Some("query_data")),
                (Kind::Fictional, None),
            ]
        );
    }
}
