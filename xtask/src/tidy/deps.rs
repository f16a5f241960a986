//! Each workspace crate's unique dependency count for its default features,
//! held against the table in ARCHITECTURE.md's Dependencies section.
//!
//! The count is what `cargo tree -p CRATE -e normal --target
//! x86_64-unknown-linux-gnu` lists, each package once, the crate itself
//! left out: normal dependencies only (no dev- or build-dependencies, at
//! any depth), with the features the crate's default features turn on.
//! It is computed from one `cargo metadata --offline` (the manifests and
//! the resolve that Cargo.lock pins), with the feature rules Cargo
//! applies: `dep:x`, `x/f` (which turns `x` on), `x?/f` (which does not),
//! default features unless a dependency says otherwise. Features are
//! unified per package, so a package reached both as a proc-macro's
//! dependency and as a normal one counts once, as in `cargo tree`.
//!
//! One target for everyone: the count must not depend on the machine that
//! runs the check, and CI is Linux.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::util::run_output;

/// The target whose dependencies are counted.
pub(crate) const TARGET: &str = "x86_64-unknown-linux-gnu";

/// What `rustc --print cfg --target x86_64-unknown-linux-gnu` says, for
/// the `cfg(...)` a dependency may be limited to.
const TARGET_CFG: &[(&str, Option<&str>)] = &[
    ("debug_assertions", None),
    ("panic", Some("unwind")),
    ("target_abi", Some("")),
    ("target_arch", Some("x86_64")),
    ("target_endian", Some("little")),
    ("target_env", Some("gnu")),
    ("target_family", Some("unix")),
    ("target_feature", Some("fxsr")),
    ("target_feature", Some("sse")),
    ("target_feature", Some("sse2")),
    ("target_has_atomic", Some("8")),
    ("target_has_atomic", Some("16")),
    ("target_has_atomic", Some("32")),
    ("target_has_atomic", Some("64")),
    ("target_has_atomic", Some("ptr")),
    ("target_os", Some("linux")),
    ("target_pointer_width", Some("64")),
    ("target_vendor", Some("unknown")),
    ("unix", None),
];

/// How much a count may grow over the recorded one before the check fails,
/// in percent.
pub(crate) const SLACK_PERCENT: usize = 10;

/// `cargo metadata` for the workspace at `root`, offline, filtered to
/// [`TARGET`].
pub(crate) fn metadata(root: &Path) -> Result<Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args([
        "metadata",
        "--format-version",
        "1",
        "--offline",
        "--locked",
        "--filter-platform",
        TARGET,
    ]);
    let text = run_output(&mut cmd).context(
        "could not read the dependency graph; run `cargo fetch` (the check itself stays offline)",
    )?;
    serde_json::from_str(&text).context("`cargo metadata` printed invalid JSON")
}

/// One `[dependencies]` entry of a package.
struct Dep<'a> {
    /// The package name it asks for.
    name: &'a str,
    /// The key it has in the manifest (its rename, else its name): what
    /// features call it.
    key: &'a str,
    optional: bool,
    default_features: bool,
    features: Vec<&'a str>,
    /// The `cfg(...)` or triple it is limited to.
    target: Option<&'a str>,
}

/// One package of the graph.
struct Package<'a> {
    name: &'a str,
    features: HashMap<&'a str, Vec<&'a str>>,
    /// Normal dependencies only.
    deps: Vec<Dep<'a>>,
}

/// A resolved edge: the dependency's package id, and how it is declared
/// (kind, target) for the platform metadata was filtered to.
struct Edge<'a> {
    pkg: &'a str,
    extern_name: &'a str,
    normal_targets: Vec<Option<&'a str>>,
}

/// What is turned on in one package.
#[derive(Default)]
struct On<'a> {
    features: BTreeSet<&'a str>,
    /// Optional dependencies turned on, by manifest key.
    deps: BTreeSet<&'a str>,
    /// Features asked of a dependency (by key) through `x/f` or `x?/f`.
    dep_features: BTreeSet<(&'a str, &'a str)>,
}

/// The unique dependency count of every workspace member, by name, for its
/// default features.
pub(crate) fn default_counts(metadata: &Value) -> Result<BTreeMap<String, usize>> {
    let packages = parse_packages(metadata)?;
    let edges = parse_edges(metadata)?;
    let members = metadata
        .get("workspace_members")
        .and_then(Value::as_array)
        .context("`cargo metadata` printed no `workspace_members`")?;
    let mut out = BTreeMap::new();
    for member in members {
        let id = member
            .as_str()
            .context("`cargo metadata`: a workspace member id is not a string")?;
        let name = packages
            .get(id)
            .with_context(|| format!("`cargo metadata`: no package `{id}`"))?
            .name;
        let reached = reach(id, &packages, &edges)?;
        out.insert(name.to_owned(), reached.len().saturating_sub(1));
    }
    Ok(out)
}

fn parse_packages(metadata: &Value) -> Result<HashMap<&str, Package<'_>>> {
    let mut out = HashMap::new();
    for p in metadata
        .get("packages")
        .and_then(Value::as_array)
        .context("`cargo metadata` printed no `packages`")?
    {
        let id = p
            .get("id")
            .and_then(Value::as_str)
            .context("`cargo metadata`: a package has no id")?;
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let features = p
            .get("features")
            .and_then(Value::as_object)
            .map(|f| {
                f.iter()
                    .map(|(k, v)| (k.as_str(), strings(v)))
                    .collect::<HashMap<_, _>>()
            })
            .unwrap_or_default();
        let mut deps = Vec::new();
        for d in p
            .get("dependencies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !d.get("kind").is_none_or(Value::is_null) {
                continue;
            }
            let Some(dep_name) = d.get("name").and_then(Value::as_str) else {
                continue;
            };
            deps.push(Dep {
                name: dep_name,
                key: d.get("rename").and_then(Value::as_str).unwrap_or(dep_name),
                optional: d.get("optional").and_then(Value::as_bool) == Some(true),
                default_features: d.get("uses_default_features").and_then(Value::as_bool)
                    != Some(false),
                features: d.get("features").map(strings).unwrap_or_default(),
                target: d.get("target").and_then(Value::as_str),
            });
        }
        out.insert(
            id,
            Package {
                name,
                features,
                deps,
            },
        );
    }
    Ok(out)
}

fn parse_edges(metadata: &Value) -> Result<HashMap<&str, Vec<Edge<'_>>>> {
    let mut out = HashMap::new();
    for node in metadata
        .get("resolve")
        .and_then(|r| r.get("nodes"))
        .and_then(Value::as_array)
        .context("`cargo metadata` printed no `resolve.nodes`")?
    {
        let Some(id) = node.get("id").and_then(Value::as_str) else {
            continue;
        };
        let mut edges = Vec::new();
        for d in node
            .get("deps")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(pkg) = d.get("pkg").and_then(Value::as_str) else {
                continue;
            };
            let normal_targets = d
                .get("dep_kinds")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|k| k.get("kind").is_none_or(Value::is_null))
                .map(|k| k.get("target").and_then(Value::as_str))
                .collect();
            edges.push(Edge {
                pkg,
                extern_name: d.get("name").and_then(Value::as_str).unwrap_or_default(),
                normal_targets,
            });
        }
        out.insert(id, edges);
    }
    Ok(out)
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Every package `root` needs with its default features, itself included.
fn reach<'a>(
    root: &'a str,
    packages: &HashMap<&'a str, Package<'a>>,
    edges: &HashMap<&'a str, Vec<Edge<'a>>>,
) -> Result<BTreeSet<&'a str>> {
    let mut on: BTreeMap<&'a str, On<'a>> = BTreeMap::new();
    on.entry(root).or_default().features.insert("default");
    // Features only ever get turned on, so this reaches a fixed point.
    loop {
        let mut asks: Vec<(&'a str, Vec<&'a str>)> = Vec::new();
        for (&id, state) in &mut on {
            let package = packages
                .get(id)
                .with_context(|| format!("`cargo metadata`: no package `{id}`"))?;
            expand(package, state);
            for dep in &package.deps {
                if dep.optional && !state.deps.contains(dep.key) {
                    continue;
                }
                let Some(target) = resolved(id, dep, packages, edges) else {
                    // Not on this platform.
                    continue;
                };
                let mut features = dep.features.clone();
                if dep.default_features {
                    features.push("default");
                }
                features.extend(
                    state
                        .dep_features
                        .iter()
                        .filter(|(key, _)| *key == dep.key)
                        .map(|(_, f)| *f),
                );
                asks.push((target, features));
            }
        }
        let mut changed = false;
        for (target, features) in asks {
            let state = on.entry(target).or_insert_with(|| {
                changed = true;
                On::default()
            });
            for f in features {
                changed |= state.features.insert(f);
            }
        }
        if !changed {
            return Ok(on.into_keys().collect());
        }
    }
}

/// Closes `state`'s features over `package`'s feature table.
fn expand<'a>(package: &Package<'a>, state: &mut On<'a>) {
    let mut pending: Vec<&'a str> = state.features.iter().copied().collect();
    while let Some(feature) = pending.pop() {
        for &entry in package.features.get(feature).into_iter().flatten() {
            if let Some(key) = entry.strip_prefix("dep:") {
                state.deps.insert(key);
            } else if let Some((key, dep_feature)) = entry.split_once('/') {
                match key.strip_suffix('?') {
                    Some(weak) => {
                        state.dep_features.insert((weak, dep_feature));
                    }
                    None => {
                        state.deps.insert(key);
                        state.dep_features.insert((key, dep_feature));
                    }
                }
            } else if package.features.contains_key(entry) {
                if state.features.insert(entry) {
                    pending.push(entry);
                }
            } else {
                // An optional dependency named as a feature (old style).
                state.deps.insert(entry);
            }
        }
    }
}

/// The package `dep` of `id` resolved to, if it is a dependency on this
/// platform.
fn resolved<'a>(
    id: &str,
    dep: &Dep<'a>,
    packages: &HashMap<&'a str, Package<'a>>,
    edges: &HashMap<&'a str, Vec<Edge<'a>>>,
) -> Option<&'a str> {
    let candidates: Vec<&Edge<'a>> = edges
        .get(id)?
        .iter()
        .filter(|e| packages.get(e.pkg).is_some_and(|p| p.name == dep.name))
        .filter(|e| e.normal_targets.contains(&dep.target))
        .filter(|_| dep.target.is_none_or(on_target))
        .collect();
    match candidates.as_slice() {
        [] => None,
        [one] => Some(one.pkg),
        several => {
            let extern_name = dep.key.replace('-', "_");
            several
                .iter()
                .find(|e| e.extern_name == extern_name)
                .or(several.first())
                .map(|e| e.pkg)
        }
    }
}

/// Whether a dependency's `target` (a triple, or `cfg(...)`) holds on
/// [`TARGET`]. A predicate this cannot read counts as false.
fn on_target(target: &str) -> bool {
    match target
        .trim()
        .strip_prefix("cfg(")
        .and_then(|t| t.strip_suffix(')'))
    {
        Some(expr) => {
            let tokens = cfg_tokens(expr);
            let mut at = 0;
            let holds = cfg_expr(&tokens, &mut at);
            holds == Some(true) && at == tokens.len()
        }
        None => target.trim() == TARGET,
    }
}

fn cfg_tokens(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if matches!(c, '(' | ')' | ',' | '=') {
            out.push(c.to_string());
            chars.next();
        } else if c == '"' {
            chars.next();
            let mut text = String::from('"');
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                text.push(c);
            }
            out.push(text);
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_alphanumeric() || c == '_' {
                    word.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            if word.is_empty() {
                // Not cfg syntax: an unreadable token.
                out.push(c.to_string());
                chars.next();
            } else {
                out.push(word);
            }
        }
    }
    out
}

/// One predicate from `tokens[*at..]`; `None` when it is malformed.
fn cfg_expr(tokens: &[String], at: &mut usize) -> Option<bool> {
    let word = tokens.get(*at)?.clone();
    *at += 1;
    match word.as_str() {
        "all" | "any" | "not" => {
            if tokens.get(*at)? != "(" {
                return None;
            }
            *at += 1;
            let mut values = Vec::new();
            while tokens.get(*at)? != ")" {
                values.push(cfg_expr(tokens, at)?);
                if tokens.get(*at)? == "," {
                    *at += 1;
                }
            }
            *at += 1;
            match word.as_str() {
                "all" => Some(values.iter().all(|v| *v)),
                "any" => Some(values.iter().any(|v| *v)),
                _ => match values.as_slice() {
                    [one] => Some(!one),
                    _ => None,
                },
            }
        }
        _ if tokens.get(*at).is_some_and(|t| t == "=") => {
            let value = tokens.get(*at + 1)?.strip_prefix('"')?.to_owned();
            *at += 2;
            Some(
                TARGET_CFG
                    .iter()
                    .any(|(k, v)| *k == word && *v == Some(value.as_str())),
            )
        }
        _ => Some(TARGET_CFG.iter().any(|(k, v)| *k == word && v.is_none())),
    }
}

/// A row of the Dependencies table: `| `crate` | count |`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Recorded {
    /// 1-based line in ARCHITECTURE.md.
    pub(crate) line: usize,
    pub(crate) krate: String,
    pub(crate) count: usize,
}

/// The rows of the table in the `## Dependencies` section of `text`.
pub(crate) fn recorded(text: &str) -> Vec<Recorded> {
    let mut out = Vec::new();
    let mut in_section = false;
    for (i, line) in text.lines().enumerate() {
        if let Some(heading) = line.strip_prefix("## ") {
            in_section = heading.trim() == "Dependencies";
            continue;
        }
        if !in_section {
            continue;
        }
        let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        let [_, name, count, ..] = cells.as_slice() else {
            continue;
        };
        let (Some(name), Ok(count)) = (
            name.strip_prefix('`').and_then(|n| n.strip_suffix('`')),
            count.parse::<usize>(),
        ) else {
            continue;
        };
        out.push(Recorded {
            line: i + 1,
            krate: name.to_owned(),
            count,
        });
    }
    out
}

/// Whether `actual` grew more than [`SLACK_PERCENT`] over `recorded`.
pub(crate) fn grew_too_much(recorded: usize, actual: usize) -> bool {
    actual * 100 > recorded * (100 + SLACK_PERCENT)
}

/// The problems of `actual` counts against the `recorded` table of
/// `doc` (a path, for the messages).
pub(crate) fn compare(
    doc: &str,
    recorded: &[Recorded],
    actual: &BTreeMap<String, usize>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for row in recorded {
        match actual.get(&row.krate) {
            None => problems.push(format!(
                "{doc}:{}: `{}` is not a workspace crate; remove its line from the \
                 dependency table",
                row.line, row.krate
            )),
            Some(&now) if grew_too_much(row.count, now) => problems.push(format!(
                "{doc}:{}: `{}` now has {now} unique dependencies with its default \
                 features, more than {SLACK_PERCENT} % over the {} written there; if that \
                 is what you want, write {now} on that line and say in the list below what \
                 the new dependency is for",
                row.line, row.krate, row.count
            )),
            Some(_) => {}
        }
    }
    for (krate, now) in actual {
        if !recorded.iter().any(|r| &r.krate == krate) {
            problems.push(format!(
                "{doc}: the dependency table has no line for `{krate}`; add \
                 `| `{krate}` | {now} |` to the Dependencies section"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_table_of_the_dependencies_section_only() {
        let text = "## Code map\n| `a` | 9 |\n## Dependencies\n\n| crate | count |\n| --- | ---: |\n| `objectstack-spec` | 24 |\n| `xtask` | 240 |\n## Next\n| `b` | 1 |\n";
        assert_eq!(
            recorded(text),
            vec![
                Recorded {
                    line: 7,
                    krate: "objectstack-spec".to_owned(),
                    count: 24
                },
                Recorded {
                    line: 8,
                    krate: "xtask".to_owned(),
                    count: 240
                },
            ]
        );
    }

    #[test]
    fn only_growth_past_the_slack_fails() {
        assert!(!grew_too_much(20, 22));
        assert!(grew_too_much(20, 23));
        assert!(!grew_too_much(20, 5));
        assert!(!grew_too_much(0, 0));
        assert!(grew_too_much(0, 1));
        let rows = vec![
            Recorded {
                line: 3,
                krate: "a".to_owned(),
                count: 20,
            },
            Recorded {
                line: 4,
                krate: "gone".to_owned(),
                count: 1,
            },
        ];
        let actual: BTreeMap<String, usize> = [("a".to_owned(), 30), ("new".to_owned(), 2)].into();
        let problems = compare("ARCHITECTURE.md", &rows, &actual);
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(problems[0].starts_with("ARCHITECTURE.md:3: `a` now has 30"));
        assert!(problems[0].contains("over the 20 written there"));
        assert!(problems[1].starts_with("ARCHITECTURE.md:4: `gone` is not"));
        assert!(problems[2].contains("no line for `new`"));
    }

    #[test]
    fn reads_target_predicates() {
        assert!(on_target("cfg(unix)"));
        assert!(on_target("x86_64-unknown-linux-gnu"));
        assert!(!on_target("x86_64-pc-windows-msvc"));
        assert!(!on_target("cfg(windows)"));
        assert!(on_target(
            r#"cfg(not(all(target_family = "wasm", target_os = "unknown")))"#
        ));
        assert!(!on_target(
            r#"cfg(all(target_family = "wasm", target_os = "unknown"))"#
        ));
        assert!(on_target(
            r#"cfg(any(target_os = "macos", target_os = "linux"))"#
        ));
        assert!(!on_target("cfg(uuid_unstable)"));
        assert!(!on_target("cfg(not(unix)"));
    }

    /// A hand-made graph: optional dependencies, `dep:`, `x/f`, `x?/f`,
    /// dev- and build-dependencies, and a target the platform filter left
    /// out.
    #[test]
    fn follows_features_as_cargo_does() {
        let dep = |name: &str, extra: Value| {
            let mut d = json!({"name": name, "rename": null, "kind": null, "optional": false,
                "uses_default_features": true, "features": [], "target": null});
            if let (Some(d), Some(extra)) = (d.as_object_mut(), extra.as_object()) {
                d.extend(extra.clone());
            }
            d
        };
        let edge = |pkg: &str, kind: Value| json!({"name": pkg, "pkg": pkg, "dep_kinds": [{"kind": kind, "target": null}]});
        let metadata = json!({
            "workspace_members": ["root"],
            "packages": [
                {"id": "root", "name": "root", "features": {"default": ["a/extra", "weak"], "weak": ["c?/x"]},
                 "dependencies": [
                    dep("a", json!({"optional": true})),
                    dep("b", json!({})),
                    dep("c", json!({"optional": true})),
                    dep("dev", json!({"kind": "dev"})),
                    dep("build", json!({"kind": "build"})),
                    dep("win", json!({"target": "cfg(windows)"})),
                 ]},
                {"id": "a", "name": "a", "features": {"extra": ["dep:a2"]},
                 "dependencies": [dep("a2", json!({"optional": true}))]},
                {"id": "a2", "name": "a2", "features": {}, "dependencies": []},
                {"id": "b", "name": "b", "features": {"default": [], "big": ["dep:b2"]},
                 "dependencies": [dep("b2", json!({"optional": true}))]},
                {"id": "b2", "name": "b2", "features": {}, "dependencies": []},
                {"id": "c", "name": "c", "features": {}, "dependencies": []},
                {"id": "dev", "name": "dev", "features": {}, "dependencies": []},
                {"id": "build", "name": "build", "features": {}, "dependencies": []},
                {"id": "win", "name": "win", "features": {}, "dependencies": []},
            ],
            "resolve": {"nodes": [
                {"id": "root", "deps": [edge("a", Value::Null), edge("b", Value::Null),
                    edge("c", Value::Null), edge("dev", json!("dev")), edge("build", json!("build"))]},
                {"id": "a", "deps": [edge("a2", Value::Null)]},
                {"id": "b", "deps": [edge("b2", Value::Null)]},
            ]},
        });
        let counts = default_counts(&metadata).unwrap();
        // a (turned on by `a/extra`), a2 (by `extra`), b; not b2 (`big` is
        // off), c (only weakly named), dev, build or win.
        assert_eq!(counts.get("root"), Some(&3), "{counts:?}");
    }
}
