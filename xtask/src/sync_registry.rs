//! `cargo xtask sync-registry [--npm-version V] [--write]`: compares the
//! platform tool registry with the one upstream publishes in
//! `@objectstack/spec` (`PLATFORM_TOOLS_BY_PACKAGE`,
//! `PLATFORM_PROVIDED_TOOL_NAMES`, `PLATFORM_TOOL_FAMILY_PREFIXES`), prints
//! the difference per package, and with `--write` rewrites the registry's
//! source (`GROUPS`, `FAMILY_PREFIXES`, `UPSTREAM_VERSION` in
//! `registry/src/lib.rs`). Without `--write`, a difference is an error, so
//! a scheduled job notices upstream drift.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::node::Upstream;
use crate::util::{project_root, read_to_string, write_file};

const PACKAGE: &str = "@objectstack/spec";
const REGISTRY_SOURCE: &str = "registry/src/lib.rs";

/// Arguments of `cargo xtask sync-registry`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The `@objectstack/spec` version to compare with (an npm version or
    /// tag).
    #[arg(long, value_name = "V", default_value = "latest")]
    npm_version: String,
    /// Use an existing npm install in this folder (it has
    /// `node_modules/@objectstack/spec`) instead of installing.
    #[arg(long, value_name = "DIR")]
    upstream_dir: Option<PathBuf>,
    /// Rewrite `registry/src/lib.rs` to match upstream.
    #[arg(long)]
    write: bool,
}

/// The registry as a list of `(package, names)` groups and the prefixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Registry {
    pub(crate) groups: Vec<(String, Vec<String>)>,
    pub(crate) prefixes: Vec<String>,
}

impl Registry {
    fn ours() -> Registry {
        Registry {
            groups: objectstack_registry::GROUPS
                .iter()
                .map(|g| {
                    (
                        g.package.to_owned(),
                        g.names.iter().map(|n| (*n).to_owned()).collect(),
                    )
                })
                .collect(),
            prefixes: objectstack_registry::FAMILY_PREFIXES
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
        }
    }

    fn owners(&self) -> BTreeMap<&str, &str> {
        self.groups
            .iter()
            .flat_map(|(pkg, names)| names.iter().map(move |n| (n.as_str(), pkg.as_str())))
            .collect()
    }
}

/// Reads upstream's registry from the JSON the node script prints.
pub(crate) fn upstream_registry(json: &Value) -> Result<(Registry, Vec<String>)> {
    let mut notes = Vec::new();
    let names: Vec<String> = json
        .get("names")
        .and_then(Value::as_array)
        .context("upstream has no PLATFORM_PROVIDED_TOOL_NAMES")?
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let prefixes: Vec<String> = json
        .get("prefixes")
        .and_then(Value::as_array)
        .context("upstream has no PLATFORM_TOOL_FAMILY_PREFIXES")?
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let groups = match json.get("byPackage").and_then(Value::as_object) {
        Some(by_package) => {
            let groups: Vec<(String, Vec<String>)> = by_package
                .iter()
                .map(|(pkg, names)| {
                    let names = names
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    (pkg.clone(), names)
                })
                .collect();
            let grouped: BTreeSet<&str> = groups
                .iter()
                .flat_map(|(_, n)| n.iter().map(String::as_str))
                .collect();
            let flat: BTreeSet<&str> = names.iter().map(String::as_str).collect();
            if grouped != flat {
                notes.push(format!(
                    "upstream's PLATFORM_TOOLS_BY_PACKAGE and PLATFORM_PROVIDED_TOOL_NAMES \
                     disagree (grouped only: {:?}; flat only: {:?}); using the groups",
                    grouped.difference(&flat).collect::<Vec<_>>(),
                    flat.difference(&grouped).collect::<Vec<_>>()
                ));
            }
            for (pkg, names) in &groups {
                if names.windows(2).any(|w| w[0] >= w[1]) {
                    notes.push(format!(
                        "upstream's `{pkg}` group is not sorted; it is compared as a set"
                    ));
                }
            }
            groups
        }
        None => {
            notes.push(
                "this upstream version has no PLATFORM_TOOLS_BY_PACKAGE; names are compared \
                 without their packages"
                    .to_owned(),
            );
            vec![("(ungrouped)".to_owned(), names)]
        }
    };
    Ok((Registry { groups, prefixes }, notes))
}

/// The differences between two registries, one line per package with a
/// difference; empty when they agree.
pub(crate) fn diff(ours: &Registry, theirs: &Registry) -> Vec<String> {
    let ungrouped = theirs.groups.len() == 1 && theirs.groups[0].0 == "(ungrouped)";
    let mut lines = Vec::new();
    if ungrouped {
        let our_names: BTreeSet<&str> = ours.owners().into_keys().collect();
        let their_names: BTreeSet<&str> = theirs.owners().into_keys().collect();
        let added: Vec<&&str> = their_names.difference(&our_names).collect();
        let removed: Vec<&&str> = our_names.difference(&their_names).collect();
        if !added.is_empty() || !removed.is_empty() {
            lines.push(format!("all packages: {}", describe(&added, &removed, &[])));
        }
    } else {
        let our_owner = ours.owners();
        let their_owner = theirs.owners();
        let mut packages: Vec<&str> = ours.groups.iter().map(|(p, _)| p.as_str()).collect();
        for (pkg, _) in &theirs.groups {
            if !packages.contains(&pkg.as_str()) {
                packages.push(pkg);
            }
        }
        for pkg in packages {
            let ours_here: BTreeSet<&str> = names_of(ours, pkg);
            let theirs_here: BTreeSet<&str> = names_of(theirs, pkg);
            let mut added = Vec::new();
            let mut moved_in = Vec::new();
            for name in theirs_here.difference(&ours_here) {
                match our_owner.get(name) {
                    Some(from) => moved_in.push(format!("{name} (from {from})")),
                    None => added.push(name),
                }
            }
            let removed: Vec<&&str> = ours_here
                .difference(&theirs_here)
                .filter(|n| !their_owner.contains_key(**n))
                .collect();
            let in_ours = ours.groups.iter().any(|(p, _)| p == pkg);
            let in_theirs = theirs.groups.iter().any(|(p, _)| p == pkg);
            let mut line = describe(&added, &removed, &moved_in);
            if !in_theirs {
                line = format!("package not in upstream; {line}");
            } else if !in_ours {
                line = format!("new package upstream; {line}");
            }
            if !added.is_empty()
                || !removed.is_empty()
                || !moved_in.is_empty()
                || !in_ours
                || !in_theirs
            {
                lines.push(format!("{pkg}: {line}"));
            }
        }
    }
    let our_prefixes: BTreeSet<&str> = ours.prefixes.iter().map(String::as_str).collect();
    let their_prefixes: BTreeSet<&str> = theirs.prefixes.iter().map(String::as_str).collect();
    let added: Vec<&&str> = their_prefixes.difference(&our_prefixes).collect();
    let removed: Vec<&&str> = our_prefixes.difference(&their_prefixes).collect();
    if !added.is_empty() || !removed.is_empty() {
        lines.push(format!(
            "family prefixes: {}",
            describe(&added, &removed, &[])
        ));
    }
    lines
}

fn names_of<'a>(registry: &'a Registry, package: &str) -> BTreeSet<&'a str> {
    registry
        .groups
        .iter()
        .filter(|(p, _)| p == package)
        .flat_map(|(_, n)| n.iter().map(String::as_str))
        .collect()
}

fn describe(added: &[&&str], removed: &[&&str], moved_in: &[String]) -> String {
    let mut parts = Vec::new();
    if !added.is_empty() {
        parts.push(format!(
            "added upstream: {}",
            added.iter().map(|s| **s).collect::<Vec<_>>().join(", ")
        ));
    }
    if !removed.is_empty() {
        parts.push(format!(
            "not upstream any more: {}",
            removed.iter().map(|s| **s).collect::<Vec<_>>().join(", ")
        ));
    }
    if !moved_in.is_empty() {
        parts.push(format!("moved here upstream: {}", moved_in.join(", ")));
    }
    if parts.is_empty() {
        "same names".to_owned()
    } else {
        parts.join("; ")
    }
}

/// Rewrites the registry source: the `GROUPS` block, `FAMILY_PREFIXES`,
/// `UPSTREAM_VERSION` and the version named in the doc comment above
/// `GROUPS`. Names are written sorted (the registry's invariant).
pub(crate) fn rewrite_source(source: &str, registry: &Registry, version: &str) -> Result<String> {
    let lines: Vec<&str> = source.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("pub const GROUPS: &[Group] = &["))
        .context("registry/src/lib.rs has no `pub const GROUPS: &[Group] = &[` line")?;
    let end = lines
        .iter()
        .skip(start)
        .position(|l| *l == "];")
        .map(|p| p + start)
        .context("the GROUPS block in registry/src/lib.rs has no closing `];` line")?;
    let old_version = objectstack_registry::UPSTREAM_VERSION;

    let mut out = String::with_capacity(source.len());
    // Doc comment lines directly above GROUPS get the new version.
    let doc_start = lines
        .get(..start)
        .unwrap_or_default()
        .iter()
        .rposition(|l| !l.trim_start().starts_with("///"))
        .map_or(0, |p| p + 1);
    for (i, line) in lines.iter().enumerate().take(start) {
        let line = if i >= doc_start {
            line.replace(old_version, version)
        } else if line.starts_with("pub const UPSTREAM_VERSION: &str = ") {
            format!("pub const UPSTREAM_VERSION: &str = \"{version}\";")
        } else if line.starts_with("pub const FAMILY_PREFIXES: &[&str] = ") {
            let items: Vec<String> = registry
                .prefixes
                .iter()
                .map(|p| {
                    if p == objectstack_registry::ACTION_PREFIX {
                        "ACTION_PREFIX".to_owned()
                    } else {
                        format!("{p:?}")
                    }
                })
                .collect();
            format!(
                "pub const FAMILY_PREFIXES: &[&str] = &[{}];",
                items.join(", ")
            )
        } else {
            (*line).to_owned()
        };
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("pub const GROUPS: &[Group] = &[\n");
    for (package, names) in &registry.groups {
        let mut names = names.clone();
        names.sort();
        names.dedup();
        let _ = writeln!(
            out,
            "    Group {{\n        package: {package:?},\n        names: &["
        );
        for name in names {
            let _ = writeln!(out, "            {name:?},");
        }
        out.push_str("        ],\n    },\n");
    }
    out.push_str("];\n");
    for line in lines.iter().skip(end + 1) {
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

/// The node script that prints upstream's registry as JSON.
const READ_REGISTRY_JS: &str = r#"
const s = require('@objectstack/spec/system');
const by = s.PLATFORM_TOOLS_BY_PACKAGE;
const out = {
  names: s.PLATFORM_PROVIDED_TOOL_NAMES ? [...s.PLATFORM_PROVIDED_TOOL_NAMES] : null,
  prefixes: s.PLATFORM_TOOL_FAMILY_PREFIXES ? [...s.PLATFORM_TOOL_FAMILY_PREFIXES] : null,
  byPackage: by ? Object.fromEntries(Object.entries(by).map(([k, v]) => [k, [...v]])) : null,
};
process.stdout.write(JSON.stringify(out));
"#;

/// Entry point of `cargo xtask sync-registry`.
pub(crate) fn run(args: &Args) -> Result<()> {
    let upstream = Upstream::obtain(args.upstream_dir.as_deref(), PACKAGE, &args.npm_version)?;
    let version = upstream.version_of(PACKAGE)?;
    let printed = upstream.run_script(READ_REGISTRY_JS).with_context(|| {
        format!("could not read the platform tool registry from {PACKAGE} {version}")
    })?;
    let json: Value =
        serde_json::from_str(&printed).context("the registry script printed invalid JSON")?;
    if json.get("names").is_none_or(Value::is_null) {
        bail!(
            "{PACKAGE} {version} does not export PLATFORM_PROVIDED_TOOL_NAMES (it predates the \
             platform tool registry); pick a later --npm-version"
        );
    }
    let (theirs, notes) = upstream_registry(&json)?;
    for note in notes {
        println!("note: {note}");
    }
    let ours = Registry::ours();
    println!(
        "comparing {PACKAGE} {version} with registry/src/lib.rs (curated from {})",
        objectstack_registry::UPSTREAM_VERSION
    );
    let differences = diff(&ours, &theirs);
    if differences.is_empty() {
        println!("no difference: every package has the same names, and the family prefixes match");
        if args.write && version != objectstack_registry::UPSTREAM_VERSION {
            write_source(&theirs, &version)?;
        }
        return Ok(());
    }
    for line in &differences {
        println!("  {line}");
    }
    if !args.write {
        bail!(
            "the registry differs from {PACKAGE} {version}: run `cargo xtask sync-registry \
             --npm-version {version} --write` to update registry/src/lib.rs"
        );
    }
    if theirs.groups.len() == 1 && theirs.groups[0].0 == "(ungrouped)" {
        bail!("--write needs upstream's packages (PLATFORM_TOOLS_BY_PACKAGE); update by hand");
    }
    write_source(&theirs, &version)?;
    println!(
        "next: run `cargo xtask codegen` (the registry JSON and the conformance vectors), \
         then `cargo test --workspace`, and add a CHANGELOG entry (an added name needs a \
         minor release; a removed or moved one a major)"
    );
    Ok(())
}

fn write_source(theirs: &Registry, version: &str) -> Result<()> {
    let path = project_root().join(REGISTRY_SOURCE);
    let source = read_to_string(&path)?;
    let rewritten = rewrite_source(&source, theirs, version)?;
    write_file(&path, &rewritten)?;
    println!("wrote {REGISTRY_SOURCE} (matching {PACKAGE} {version})");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reg(groups: &[(&str, &[&str])], prefixes: &[&str]) -> Registry {
        Registry {
            groups: groups
                .iter()
                .map(|(p, n)| ((*p).to_owned(), n.iter().map(|s| (*s).to_owned()).collect()))
                .collect(),
            prefixes: prefixes.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn identical_registries_have_no_difference() {
        let ours = Registry::ours();
        assert!(diff(&ours, &ours.clone()).is_empty());
    }

    #[test]
    fn differences_are_reported_per_package() {
        let ours = reg(
            &[
                ("service-ai", &["get_record", "query_data"]),
                ("service-ai-studio", &["add_field"]),
            ],
            &["action_"],
        );
        let theirs = reg(
            &[
                (
                    "service-ai",
                    &["add_field", "get_record", "search_knowledge"],
                ),
                ("service-ai-studio", &[]),
                ("service-ai-flow", &["run_flow"]),
            ],
            &["action_", "flow_"],
        );
        assert_eq!(
            diff(&ours, &theirs),
            vec![
                "service-ai: added upstream: search_knowledge; not upstream any more: query_data; \
                 moved here upstream: add_field (from service-ai-studio)",
                "service-ai-flow: new package upstream; added upstream: run_flow",
                "family prefixes: added upstream: flow_",
            ]
        );
    }

    #[test]
    fn reads_upstream_json_with_and_without_groups() {
        let json = json!({
            "names": ["b", "a"],
            "prefixes": ["action_"],
            "byPackage": {"p": ["b", "a"]},
        });
        let (registry, notes) = upstream_registry(&json).unwrap();
        assert_eq!(registry, reg(&[("p", &["b", "a"])], &["action_"]));
        assert_eq!(notes.len(), 1, "{notes:?}");
        let (flat, notes) =
            upstream_registry(&json!({"names": ["a"], "prefixes": [], "byPackage": null})).unwrap();
        assert_eq!(flat.groups[0].0, "(ungrouped)");
        assert_eq!(notes.len(), 1);
        assert_eq!(
            diff(&reg(&[("p", &["a", "c"])], &[]), &flat),
            vec!["all packages: not upstream any more: c"]
        );
    }

    #[test]
    fn rewrite_replaces_groups_prefixes_and_version_only() {
        let source = read_to_string(&project_root().join(REGISTRY_SOURCE)).unwrap();
        // Rewriting with our own registry and version changes nothing.
        let same = rewrite_source(
            &source,
            &Registry::ours(),
            objectstack_registry::UPSTREAM_VERSION,
        )
        .unwrap();
        assert_eq!(same, source);

        let mut theirs = Registry::ours();
        theirs.groups[0].1.push("aaa_new_tool".to_owned());
        theirs.prefixes.push("flow_".to_owned());
        let rewritten = rewrite_source(&source, &theirs, "99.0.0").unwrap();
        assert!(rewritten.contains("pub const UPSTREAM_VERSION: &str = \"99.0.0\";"));
        assert!(
            rewritten.contains("pub const FAMILY_PREFIXES: &[&str] = &[ACTION_PREFIX, \"flow_\"];")
        );
        let groups = &rewritten[rewritten.find("pub const GROUPS").unwrap()..];
        let new_at = groups.find("\"aaa_new_tool\",").unwrap();
        let first_at = groups.find("\"aggregate_data\",").unwrap();
        assert!(new_at < first_at, "sorted into place");
        assert_eq!(rewritten.lines().count(), source.lines().count() + 1);
    }
}
