//! `cargo xtask release VERSION [--dry-run] [--skip-tests]`.
//!
//! In order, stopping at the first failure:
//! 1. every publishable crate is at VERSION (the workspace version) and the
//!    `[workspace.dependencies]` entries of our crates require VERSION;
//!    `CHANGELOG.md` has a `## [VERSION]` section;
//! 2. the change since the last release tag (`vX.Y.Z`) is classified and
//!    VERSION must not under-state it (see [`classify_registry`],
//!    [`classify_rules`], [`check_version`]);
//! 3. `cargo test --workspace` (unless `--skip-tests`), then the codegen
//!    check and tidy, in process;
//! 4. the publishable crates are ordered by their dependencies (from
//!    `cargo metadata`, with petgraph; a cycle is an error) and packaged
//!    with one `cargo package` call listing them in that order, so Cargo
//!    resolves each crate's unpublished workspace dependencies from the
//!    packages it has just built;
//! 5. `--dry-run` prints the plan and stops; otherwise the release is
//!    tagged locally (`vVERSION`) and the `cargo publish` commands are
//!    printed in order. Publishing needs credentials and is left to a
//!    person.
//!
//! Under 0.x the rules follow Cargo's reading of semver: the minor position
//! is the breaking one (0.1.0 to 0.2.0 is "major") and the patch position
//! carries additions (0.1.0 to 0.1.1 is "minor").

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use petgraph::algo::toposort;
use petgraph::graphmap::DiGraphMap;
use serde_json::Value;

use crate::codegen::{self, rule_docs};
use crate::tidy;
use crate::util::{project_root, read_to_string, run_output, run_status};

/// Where the registry's generated JSON lives (read at the last tag).
const REGISTRY_JSON: &str = "registry/platform-tools.json";

/// Arguments of `cargo xtask release`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The version to release, e.g. `0.2.0`.
    version: String,
    /// Check, test and package, print the plan, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Skip `cargo test --workspace` (the codegen and tidy checks still
    /// run). For exercising the release logic itself.
    #[arg(long)]
    skip_tests: bool,
}

/// A semantic version `MAJOR.MINOR.PATCH[-PRE]` (build metadata is not
/// used in this workspace), ordered by semver precedence: a pre-release
/// sorts before its release, and pre-release identifiers compare
/// numerically when numeric (`rc.2 < rc.10`), by the `semver` crate.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Version(semver::Version);

impl std::ops::Deref for Version {
    type Target = semver::Version;

    fn deref(&self) -> &semver::Version {
        &self.0
    }
}

impl Version {
    pub(crate) fn parse(text: &str) -> Result<Version> {
        let bad = || {
            anyhow::anyhow!(
                "`{text}` is not a version: write MAJOR.MINOR.PATCH, e.g. 0.2.0 (no leading `v`)"
            )
        };
        let version = semver::Version::parse(text).map_err(|_| bad())?;
        if !version.build.is_empty() {
            return Err(bad());
        }
        Ok(Version(version))
    }

    /// The smallest version after `self` that is a `bump` in Cargo's
    /// reading of semver.
    pub(crate) fn next(&self, bump: Bump) -> Version {
        let (major, minor, patch) = match (bump, self.major, self.minor) {
            (Bump::Major, 0, 0) => (0, 0, self.patch + 1),
            (Bump::Major, 0, _) => (0, self.minor + 1, 0),
            (Bump::Major, _, _) => (self.major + 1, 0, 0),
            (Bump::Minor, 0, 0) => (0, 0, self.patch + 1),
            (Bump::Minor, 0, _) => (0, self.minor, self.patch + 1),
            (Bump::Minor, _, _) => (self.major, self.minor + 1, 0),
            (Bump::Patch, _, _) => (self.major, self.minor, self.patch + 1),
        };
        Version(semver::Version::new(major, minor, patch))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// How big a version step is, or how big a change requires it to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Bump {
    Patch,
    Minor,
    Major,
}

impl fmt::Display for Bump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        })
    }
}

/// The size of the step from `prev` to `next` (which must be greater), in
/// Cargo's reading of semver: under 0.x the minor position breaks.
pub(crate) fn bump_between(prev: &Version, next: &Version) -> Bump {
    if next.major != prev.major {
        return Bump::Major;
    }
    if prev.major == 0 {
        if next.minor != prev.minor || prev.minor == 0 {
            return Bump::Major;
        }
        return Bump::Minor;
    }
    if next.minor != prev.minor {
        Bump::Minor
    } else {
        Bump::Patch
    }
}

/// One change since the last release and the version step it requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) needs: Bump,
    pub(crate) what: String,
}

impl Change {
    fn new(needs: Bump, what: impl Into<String>) -> Change {
        Change {
            needs,
            what: what.into(),
        }
    }
}

/// The parts of `registry/platform-tools.json` a release compares.
#[derive(Debug, Default)]
struct RegistrySnapshot {
    /// name -> owning package.
    owners: BTreeMap<String, String>,
    prefixes: BTreeSet<String>,
}

impl RegistrySnapshot {
    fn from_json(json: &Value) -> Result<RegistrySnapshot> {
        let mut snap = RegistrySnapshot::default();
        let groups = json
            .get("groups")
            .and_then(Value::as_array)
            .context("registry JSON has no `groups` array")?;
        for group in groups {
            let package = group
                .get("package")
                .and_then(Value::as_str)
                .context("registry JSON: a group has no `package` string")?;
            let names = group
                .get("names")
                .and_then(Value::as_array)
                .with_context(|| {
                    format!("registry JSON: group `{package}` has no `names` array")
                })?;
            for name in names {
                let name = name.as_str().with_context(|| {
                    format!("registry JSON: group `{package}` has a non-string name")
                })?;
                snap.owners.insert(name.to_owned(), package.to_owned());
            }
        }
        if let Some(prefixes) = json.get("familyPrefixes").and_then(Value::as_array) {
            snap.prefixes
                .extend(prefixes.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        Ok(snap)
    }
}

/// Classifies the registry change from `old` to `new` (both the JSON of
/// `registry/platform-tools.json`): a name removed or moved to another
/// package, or a family prefix removed, needs a major release (a skill that
/// named it stops resolving); a name or prefix added needs at least a minor.
pub(crate) fn classify_registry(old: &Value, new: &Value) -> Result<Vec<Change>> {
    let old = RegistrySnapshot::from_json(old)?;
    let new = RegistrySnapshot::from_json(new)?;
    let mut changes = Vec::new();
    for (name, old_pkg) in &old.owners {
        match new.owners.get(name) {
            None => changes.push(Change::new(
                Bump::Major,
                format!("registry: `{name}` was removed from `{old_pkg}`"),
            )),
            Some(new_pkg) if new_pkg != old_pkg => changes.push(Change::new(
                Bump::Major,
                format!("registry: `{name}` moved from `{old_pkg}` to `{new_pkg}`"),
            )),
            Some(_) => {}
        }
    }
    for (name, pkg) in &new.owners {
        if !old.owners.contains_key(name) {
            changes.push(Change::new(
                Bump::Minor,
                format!("registry: `{name}` was added to `{pkg}`"),
            ));
        }
    }
    for prefix in old.prefixes.difference(&new.prefixes) {
        changes.push(Change::new(
            Bump::Major,
            format!("registry: family prefix `{prefix}` was removed"),
        ));
    }
    for prefix in new.prefixes.difference(&old.prefixes) {
        changes.push(Change::new(
            Bump::Minor,
            format!("registry: family prefix `{prefix}` was added"),
        ));
    }
    Ok(changes)
}

/// The rank of a severity name: `off` < `warning` < `error`.
fn severity_rank(severity: &str) -> Option<u8> {
    match severity {
        "off" | "allow" => Some(0),
        "info" | "note" => Some(1),
        "warning" | "warn" => Some(2),
        "error" | "deny" => Some(3),
        _ => None,
    }
}

fn rule_severities(json: &Value) -> Result<BTreeMap<String, String>> {
    let rules = json
        .get("rules")
        .and_then(Value::as_array)
        .context("rule record has no `rules` array")?;
    let mut out = BTreeMap::new();
    for rule in rules {
        let id = rule
            .get("id")
            .and_then(Value::as_str)
            .context("rule record: a rule has no `id` string")?;
        let severity = rule
            .get("defaultSeverity")
            .and_then(Value::as_str)
            .with_context(|| format!("rule record: `{id}` has no `defaultSeverity` string"))?;
        out.insert(id.to_owned(), severity.to_owned());
    }
    Ok(out)
}

/// Classifies the lint rule change from `old` to `new` (both the JSON of
/// `docs/rules/rules.json`): a default severity that rose needs a major
/// release (the ADR-0078 ratchet fails CI runs that passed); so does a new
/// rule that is an error by default, and a removed rule (configurations
/// that name it stop loading). A new rule at `warning` needs a minor.
pub(crate) fn classify_rules(old: &Value, new: &Value) -> Result<Vec<Change>> {
    let old = rule_severities(old)?;
    let new = rule_severities(new)?;
    let rank = |s: &str| {
        severity_rank(s).with_context(|| {
            format!("rule record: unknown severity `{s}` (expected off, warning or error)")
        })
    };
    let mut changes = Vec::new();
    for (id, old_sev) in &old {
        match new.get(id) {
            None => changes.push(Change::new(
                Bump::Major,
                format!("lint: rule `{id}` was removed (configurations that name it break)"),
            )),
            Some(new_sev) if rank(new_sev)? > rank(old_sev)? => changes.push(Change::new(
                Bump::Major,
                format!(
                    "lint: rule `{id}` default severity rose from {old_sev} to {new_sev} \
                     (ADR-0078 ratchet: CI runs that passed now fail)"
                ),
            )),
            Some(new_sev) if new_sev != old_sev => changes.push(Change::new(
                Bump::Patch,
                format!("lint: rule `{id}` default severity fell from {old_sev} to {new_sev}"),
            )),
            Some(_) => {}
        }
    }
    for (id, sev) in &new {
        if old.contains_key(id) {
            continue;
        }
        if rank(sev)? >= 3 {
            changes.push(Change::new(
                Bump::Major,
                format!(
                    "lint: new rule `{id}` is an error by default (CI runs that passed may fail)"
                ),
            ));
        } else {
            changes.push(Change::new(
                Bump::Minor,
                format!("lint: new rule `{id}` ({sev} by default)"),
            ));
        }
    }
    Ok(changes)
}

/// Refuses `next` when it under-states `changes` since `prev` (the last
/// release; `None` before the first release, when any version goes). The
/// error says which change requires what.
pub(crate) fn check_version(
    prev: Option<&Version>,
    next: &Version,
    changes: &[Change],
) -> Result<(), String> {
    let Some(prev) = prev else {
        return Ok(());
    };
    if next <= prev {
        return Err(format!(
            "{next} is not greater than the last release {prev}: choose a later version"
        ));
    }
    let step = bump_between(prev, next);
    let under: Vec<&Change> = changes.iter().filter(|c| c.needs > step).collect();
    if under.is_empty() {
        return Ok(());
    }
    let mut msg = format!("{next} is a {step} release after {prev}, but:\n");
    for change in &under {
        msg.push_str(&format!(
            "  - {} needs a {} release (at least {})\n",
            change.what,
            change.needs,
            prev.next(change.needs)
        ));
    }
    let needed = under.iter().map(|c| c.needs).max().unwrap_or(Bump::Major);
    msg.push_str(&format!("release {} or later instead", prev.next(needed)));
    Err(msg)
}

/// A workspace package as `cargo metadata` describes it.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) publishable: bool,
    /// Names of the workspace packages it depends on (normal and build
    /// dependencies; dev-dependencies do not constrain publishing order).
    pub(crate) deps: Vec<String>,
}

/// The workspace packages in `cargo metadata --no-deps` output.
pub(crate) fn workspace_packages(metadata: &Value) -> Result<Vec<Package>> {
    let packages = metadata
        .get("packages")
        .and_then(Value::as_array)
        .context("`cargo metadata` printed no `packages` array")?;
    let names: BTreeSet<&str> = packages
        .iter()
        .filter_map(|p| p.get("name").and_then(Value::as_str))
        .collect();
    let mut out = Vec::new();
    for p in packages {
        let name = p
            .get("name")
            .and_then(Value::as_str)
            .context("`cargo metadata`: a package has no name")?;
        let version = p
            .get("version")
            .and_then(Value::as_str)
            .with_context(|| format!("`cargo metadata`: package {name} has no version"))?;
        // `publish`: null means any registry; an empty list means none.
        let publishable = match p.get("publish") {
            None | Some(Value::Null) => true,
            Some(Value::Array(registries)) => !registries.is_empty(),
            Some(_) => true,
        };
        let mut deps = Vec::new();
        for dep in p
            .get("dependencies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let kind = dep.get("kind").and_then(Value::as_str);
            if kind == Some("dev") {
                continue;
            }
            let Some(dep_name) = dep.get("name").and_then(Value::as_str) else {
                continue;
            };
            if names.contains(dep_name) && dep_name != name && !deps.iter().any(|d| d == dep_name) {
                deps.push(dep_name.to_owned());
            }
        }
        out.push(Package {
            name: name.to_owned(),
            version: version.to_owned(),
            publishable,
            deps,
        });
    }
    Ok(out)
}

/// The publishable packages, each after every package it depends on (ties
/// broken by name, so the order is stable). A dependency cycle is an error,
/// and so is a publishable package that depends on an unpublishable one.
pub(crate) fn publish_order(packages: &[Package]) -> Result<Vec<String>> {
    let publishable: HashMap<&str, &Package> = packages
        .iter()
        .filter(|p| p.publishable)
        .map(|p| (p.name.as_str(), p))
        .collect();
    let mut sorted_names: Vec<&str> = publishable.keys().copied().collect();
    sorted_names.sort_unstable();
    let mut graph: DiGraphMap<&str, ()> = DiGraphMap::new();
    for name in &sorted_names {
        graph.add_node(name);
    }
    for name in &sorted_names {
        let Some(pkg) = publishable.get(name) else {
            continue;
        };
        for dep in &pkg.deps {
            if !publishable.contains_key(dep.as_str()) {
                bail!(
                    "`{name}` is publishable but depends on `{dep}`, which is not \
                     (`publish = false`): publish `{dep}` too or drop the dependency"
                );
            }
            graph.add_edge(dep.as_str(), name, ());
        }
    }
    let order = toposort(&graph, None).map_err(|cycle| {
        anyhow::anyhow!(
            "the publishable crates have a dependency cycle through `{}`: \
             crates.io cannot publish a cycle; break it",
            cycle.node_id()
        )
    })?;
    // toposort's order among independent nodes depends on insertion; make
    // it canonical: repeatedly take the alphabetically first ready crate.
    let mut placed: Vec<String> = Vec::new();
    let mut remaining: BTreeSet<&str> = order.into_iter().collect();
    while !remaining.is_empty() {
        let ready = remaining.iter().copied().find(|n| {
            publishable
                .get(n)
                .is_none_or(|p| p.deps.iter().all(|d| placed.iter().any(|x| x == d)))
        });
        let Some(next) = ready else {
            bail!("internal error: no crate is ready to publish");
        };
        remaining.remove(next);
        placed.push(next.to_owned());
    }
    Ok(placed)
}

/// Whether `changelog` has a section for `version`: a heading
/// `## [VERSION]` or `## VERSION`, optionally followed by a date.
pub(crate) fn changelog_has_section(changelog: &str, version: &Version) -> bool {
    let v = version.to_string();
    changelog.lines().any(|line| {
        let Some(rest) = line.strip_prefix("## ") else {
            return false;
        };
        let rest = rest.trim();
        let rest = rest.strip_prefix('[').unwrap_or(rest);
        rest.strip_prefix(v.as_str())
            .is_some_and(|after| after.is_empty() || after.starts_with([']', ' ']))
    })
}

/// The latest `vX.Y.Z` tag below `version`, if any.
pub(crate) fn previous_release(tags: &str, version: &Version) -> Option<(String, Version)> {
    tags.lines()
        .filter_map(|tag| {
            let tag = tag.trim();
            let v = Version::parse(tag.strip_prefix('v')?).ok()?;
            Some((tag.to_owned(), v))
        })
        .filter(|(_, v)| v < version)
        .max_by(|a, b| a.1.cmp(&b.1))
}

fn git(root: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(root);
    cmd
}

fn cargo(root: &Path) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root);
    cmd
}

/// Checks that the workspace's own entries in `[workspace.dependencies]`
/// require exactly `version` (the version dependents will be published
/// against).
fn check_workspace_dependency_versions(
    root: &Path,
    names: &[String],
    version: &Version,
) -> Result<()> {
    let manifest: toml::Table = read_to_string(&root.join("Cargo.toml"))?
        .parse()
        .context("the root Cargo.toml is not valid TOML")?;
    let deps = manifest
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table);
    let mut wrong = Vec::new();
    for name in names {
        let Some(entry) = deps.and_then(|d| d.get(name)) else {
            continue;
        };
        let req = entry.get("version").and_then(toml::Value::as_str);
        let ok = req.is_some_and(|r| {
            let r = r.trim().trim_start_matches(['=', '^']);
            r == version.to_string()
        });
        if !ok {
            wrong.push(format!(
                "  [workspace.dependencies] {name} requires {}, not {version}",
                req.unwrap_or("no version")
            ));
        }
    }
    if !wrong.is_empty() {
        bail!(
            "workspace dependency versions do not match the release:\n{}\nset each to \
             `version = \"{version}\"` in the root Cargo.toml",
            wrong.join("\n")
        );
    }
    Ok(())
}

/// Entry point of `cargo xtask release`.
pub(crate) fn run(args: &Args) -> Result<()> {
    let root = project_root();
    let version = Version::parse(&args.version)?;
    let tag = format!("v{version}");
    let mode = if args.dry_run { "dry run" } else { "release" };
    println!("==> {mode} of {version}");

    if !args.dry_run {
        let status = run_output(git(&root).args(["status", "--porcelain"]))?;
        if !status.trim().is_empty() {
            bail!(
                "the working tree has uncommitted changes; commit them first (or use --dry-run):\n{}",
                crate::util::tail(&status, 20)
            );
        }
    }

    // 1. versions and changelog.
    let metadata: Value = serde_json::from_str(&run_output(cargo(&root).args([
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
    ]))?)
    .context("`cargo metadata` printed invalid JSON")?;
    let packages = workspace_packages(&metadata)?;
    let publishable: Vec<&Package> = packages.iter().filter(|p| p.publishable).collect();
    let off: Vec<String> = publishable
        .iter()
        .filter(|p| p.version != version.to_string())
        .map(|p| format!("  {} is at {}", p.name, p.version))
        .collect();
    if !off.is_empty() {
        bail!(
            "every publishable crate must be at {version}:\n{}\nset `version = \"{version}\"` \
             under [workspace.package] in the root Cargo.toml (each crate inherits it)",
            off.join("\n")
        );
    }
    let names: Vec<String> = publishable.iter().map(|p| p.name.clone()).collect();
    check_workspace_dependency_versions(&root, &names, &version)?;
    let changelog = read_to_string(&root.join("CHANGELOG.md"))?;
    if !changelog_has_section(&changelog, &version) {
        bail!(
            "CHANGELOG.md has no section for {version}: add `## [{version}] - YYYY-MM-DD` \
             describing the release"
        );
    }
    println!(
        "    {} publishable crates at {version}; CHANGELOG.md has its section",
        publishable.len()
    );

    // 2. classify the change since the last release.
    let tags = run_output(git(&root).args(["tag", "--list", "v*"]))?;
    if tags.lines().any(|t| t.trim() == tag) {
        if args.dry_run {
            println!("    note: tag {tag} already exists; a real release would stop here");
        } else {
            bail!("tag {tag} already exists: {version} has been released");
        }
    }
    let previous = previous_release(&tags, &version);
    let changes = match &previous {
        None => {
            println!("    no earlier release tag: this is the first release, any version goes");
            Vec::new()
        }
        Some((prev_tag, _)) => changes_since(&root, prev_tag)?,
    };
    print_changes(previous.as_ref(), &changes);
    if let Err(msg) = check_version(previous.as_ref().map(|(_, v)| v), &version, &changes) {
        bail!("version {version} under-states the change:\n{msg}");
    }

    // 3. tests and generated files.
    if args.skip_tests {
        println!("==> skipping `cargo test --workspace` (--skip-tests)");
    } else {
        println!("==> cargo test --workspace");
        run_status(cargo(&root).args(["test", "--workspace", "--quiet"]))?;
    }
    println!("==> codegen --check and tidy");
    codegen::check(&root)?;
    tidy::check(&root)?;

    // 4. package in dependency order.
    let order = publish_order(&packages)?;
    println!("==> cargo package ({})", order.join(" -> "));
    let mut package = cargo(&root);
    package.arg("package");
    for name in &order {
        package.args(["-p", name]);
    }
    if args.dry_run {
        // The tree may be dirty while a release is being prepared; the
        // tests above already built every crate, so skip the rebuild.
        package.args(["--allow-dirty", "--no-verify"]);
    }
    run_status(&mut package)?;

    // 5. the plan, or the tag.
    println!();
    println!("Release plan for {version}:");
    match &previous {
        Some((prev_tag, _)) => println!("  previous release: {prev_tag}"),
        None => println!("  previous release: none"),
    }
    let needed = changes.iter().map(|c| c.needs).max();
    let classified = match (&previous, needed) {
        (None, _) => "first release (nothing to compare with)".to_owned(),
        (Some(_), None) => "no registry or rule change".to_owned(),
        (Some(_), Some(bump)) => format!("{bump}"),
    };
    println!("  change classified as: {classified}");
    let package_dir = metadata
        .get("target_directory")
        .and_then(Value::as_str)
        .map_or_else(|| root.join("target"), std::path::PathBuf::from)
        .join("package");
    println!("  packages ({}):", package_dir.display());
    for name in &order {
        println!("    {name}-{version}.crate");
    }
    if args.dry_run {
        println!("  would tag: {tag}");
    } else {
        run_status(git(&root).args(["tag", "-a", &tag, "-m", &format!("Release {version}")]))?;
        println!("  tagged: {tag} (push it with `git push origin {tag}`)");
    }
    println!("  then publish, in this order:");
    for name in &order {
        println!("    cargo publish -p {name}");
    }
    if args.dry_run {
        println!("dry run: nothing was tagged or published");
    }
    Ok(())
}

/// The classified registry and rule changes since `prev_tag`, comparing
/// the files at the tag with what the code renders now.
fn changes_since(root: &Path, prev_tag: &str) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    let now_registry: Value = serde_json::from_str(&objectstack_registry::render_json())
        .context("the registry renders invalid JSON")?;
    match file_at(root, prev_tag, REGISTRY_JSON)? {
        Some(old) => changes.extend(classify_registry(&old, &now_registry)?),
        None => {
            println!("    note: {REGISTRY_JSON} did not exist at {prev_tag}; registry not compared")
        }
    }
    let now_rules: Value = serde_json::from_str(&rule_docs::rules_json())
        .context("the rule record renders invalid JSON")?;
    match file_at(root, prev_tag, rule_docs::RULES_JSON)? {
        Some(old) => changes.extend(classify_rules(&old, &now_rules)?),
        None => println!(
            "    note: {} did not exist at {prev_tag}; rule severities not compared",
            rule_docs::RULES_JSON
        ),
    }
    Ok(changes)
}

/// A JSON file as committed at `rev`, or `None` when it did not exist.
fn file_at(root: &Path, rev: &str, path: &str) -> Result<Option<Value>> {
    let spec = format!("{rev}:{path}");
    let exists = git(root)
        .args(["cat-file", "-e", &spec])
        .stderr(std::process::Stdio::null())
        .status()
        .context("could not run git")?
        .success();
    if !exists {
        return Ok(None);
    }
    let text = run_output(git(root).args(["show", &spec]))?;
    let json = serde_json::from_str(&text).with_context(|| format!("{spec} is not valid JSON"))?;
    Ok(Some(json))
}

fn print_changes(previous: Option<&(String, Version)>, changes: &[Change]) {
    let Some((prev_tag, _)) = previous else {
        return;
    };
    if changes.is_empty() {
        println!("    no registry or rule change since {prev_tag}");
        return;
    }
    println!("    changes since {prev_tag}:");
    for change in changes {
        println!("      [{}] {}", change.needs, change.what);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn registry(groups: &[(&str, &[&str])], prefixes: &[&str]) -> Value {
        json!({
            "formatVersion": 1,
            "familyPrefixes": prefixes,
            "groups": groups.iter().map(|(p, n)| json!({"package": p, "names": n})).collect::<Vec<_>>(),
        })
    }

    fn rules(rules: &[(&str, &str)]) -> Value {
        json!({"rules": rules.iter().map(|(id, s)| json!({"id": id, "defaultSeverity": s})).collect::<Vec<_>>()})
    }

    #[test]
    fn parses_and_orders_versions() {
        assert_eq!(
            (v("1.2.3").major, v("1.2.3").minor, v("1.2.3").patch),
            (1, 2, 3)
        );
        assert_eq!(v("1.0.0-rc.1").pre.as_str(), "rc.1");
        assert!(v("1.0.0-rc.1") < v("1.0.0"));
        assert!(v("0.10.0") > v("0.9.9"));
        for bad in ["v1.0.0", "1.0", "1.0.0.0", "01.0.0", "1.x.0", "", "1.0.0-"] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(v("2.0.0-beta").to_string(), "2.0.0-beta");
    }

    #[test]
    fn orders_pre_releases_by_semver_precedence() {
        // Numeric identifiers compare as numbers, not as strings.
        assert!(v("1.0.0-rc.2") < v("1.0.0-rc.10"));
        assert!(v("1.0.0-alpha") < v("1.0.0-alpha.1"));
        assert!(v("1.0.0-alpha.1") < v("1.0.0-alpha.beta"));
        assert!(v("1.0.0-alpha.beta") < v("1.0.0-beta"));
        assert!(v("1.0.0-beta.11") < v("1.0.0-rc.1"));
        assert!(v("1.0.0-rc.10") < v("1.0.0"));
        let tags = "v1.0.0-rc.2\nv1.0.0-rc.10\nv1.0.0-rc.9\n";
        let (tag, _) = previous_release(tags, &v("1.0.0")).unwrap();
        assert_eq!(tag, "v1.0.0-rc.10");
        // Build metadata is not used in this workspace.
        assert!(Version::parse("1.0.0+build.5").is_err());
    }

    #[test]
    fn steps_follow_cargo_semver() {
        assert_eq!(bump_between(&v("1.2.3"), &v("2.0.0")), Bump::Major);
        assert_eq!(bump_between(&v("1.2.3"), &v("1.3.0")), Bump::Minor);
        assert_eq!(bump_between(&v("1.2.3"), &v("1.2.4")), Bump::Patch);
        assert_eq!(bump_between(&v("0.1.0"), &v("0.2.0")), Bump::Major);
        assert_eq!(bump_between(&v("0.1.0"), &v("0.1.1")), Bump::Minor);
        assert_eq!(bump_between(&v("0.0.1"), &v("0.0.2")), Bump::Major);
        assert_eq!(v("1.2.3").next(Bump::Major), v("2.0.0"));
        assert_eq!(v("1.2.3").next(Bump::Minor), v("1.3.0"));
        assert_eq!(v("0.1.3").next(Bump::Major), v("0.2.0"));
        assert_eq!(v("0.1.3").next(Bump::Minor), v("0.1.4"));
    }

    #[test]
    fn removed_registry_name_refuses_a_minor_version() {
        let old = registry(
            &[("service-ai", &["get_record", "query_data"])],
            &["action_"],
        );
        let new = registry(&[("service-ai", &["get_record"])], &["action_"]);
        let changes = classify_registry(&old, &new).unwrap();
        assert_eq!(
            changes,
            vec![Change::new(
                Bump::Major,
                "registry: `query_data` was removed from `service-ai`"
            )]
        );
        let err = check_version(Some(&v("1.4.2")), &v("1.5.0"), &changes).unwrap_err();
        assert!(
            err.contains("1.5.0 is a minor release after 1.4.2"),
            "{err}"
        );
        assert!(
            err.contains(
                "`query_data` was removed from `service-ai` needs a major release (at least 2.0.0)"
            ),
            "{err}"
        );
        assert!(check_version(Some(&v("1.4.2")), &v("2.0.0"), &changes).is_ok());
        // Under 0.x the minor position is the breaking one.
        let err = check_version(Some(&v("0.1.0")), &v("0.1.1"), &changes).unwrap_err();
        assert!(err.contains("at least 0.2.0"), "{err}");
        assert!(check_version(Some(&v("0.1.0")), &v("0.2.0"), &changes).is_ok());
    }

    #[test]
    fn moved_name_needs_major_and_added_name_needs_minor() {
        let old = registry(
            &[
                ("service-ai", &["get_record"]),
                ("service-ai-studio", &["add_field"]),
            ],
            &["action_"],
        );
        let new = registry(
            &[
                (
                    "service-ai",
                    &["add_field", "get_record", "search_knowledge"],
                ),
                ("service-ai-studio", &[]),
            ],
            &["action_", "flow_"],
        );
        let changes = classify_registry(&old, &new).unwrap();
        assert_eq!(
            changes,
            vec![
                Change::new(
                    Bump::Major,
                    "registry: `add_field` moved from `service-ai-studio` to `service-ai`"
                ),
                Change::new(
                    Bump::Minor,
                    "registry: `search_knowledge` was added to `service-ai`"
                ),
                Change::new(Bump::Minor, "registry: family prefix `flow_` was added"),
            ]
        );

        let added_only = classify_registry(
            &old,
            &registry(
                &[
                    ("service-ai", &["get_record", "query_data"]),
                    ("service-ai-studio", &["add_field"]),
                ],
                &["action_"],
            ),
        )
        .unwrap();
        assert_eq!(added_only.len(), 1);
        let err = check_version(Some(&v("1.0.0")), &v("1.0.1"), &added_only).unwrap_err();
        assert!(
            err.contains("needs a minor release (at least 1.1.0)"),
            "{err}"
        );
        assert!(check_version(Some(&v("1.0.0")), &v("1.1.0"), &added_only).is_ok());
        assert!(check_version(Some(&v("1.0.0")), &v("1.0.1"), &[]).is_ok());
    }

    #[test]
    fn unchanged_registry_has_no_changes_and_bad_json_is_an_error() {
        let reg = registry(&[("service-ai", &["get_record"])], &["action_"]);
        assert!(classify_registry(&reg, &reg).unwrap().is_empty());
        assert!(classify_registry(&json!({"groups": 3}), &reg).is_err());
        assert!(classify_registry(&json!({"groups": [{"names": []}]}), &reg).is_err());
    }

    #[test]
    fn the_committed_registry_classifies_against_itself() {
        let now: Value = serde_json::from_str(&objectstack_registry::render_json()).unwrap();
        assert!(classify_registry(&now, &now).unwrap().is_empty());
        let mut fewer = now.clone();
        fewer["groups"][0]["names"]
            .as_array_mut()
            .unwrap()
            .remove(0);
        let changes = classify_registry(&now, &fewer).unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].needs, Bump::Major);
    }

    #[test]
    fn rule_severity_rise_needs_major() {
        let old = rules(&[
            ("ai-skill-tool-unresolved", "warning"),
            ("old-rule", "warning"),
        ]);
        let new = rules(&[
            ("ai-skill-tool-unresolved", "error"),
            ("fresh-warning", "warning"),
            ("fresh-error", "error"),
        ]);
        let changes = classify_rules(&old, &new).unwrap();
        let needs: Vec<(Bump, bool)> = changes
            .iter()
            .map(|c| (c.needs, c.what.contains("rose from warning to error")))
            .collect();
        assert_eq!(
            needs,
            vec![
                (Bump::Major, true),
                (Bump::Major, false),
                (Bump::Major, false),
                (Bump::Minor, false)
            ]
        );
        let err = check_version(Some(&v("1.0.0")), &v("1.1.0"), &changes).unwrap_err();
        assert!(
            err.contains("rule `ai-skill-tool-unresolved` default severity rose"),
            "{err}"
        );

        let lowered = classify_rules(
            &new,
            &rules(&[
                ("ai-skill-tool-unresolved", "warning"),
                ("fresh-warning", "warning"),
                ("fresh-error", "error"),
            ]),
        )
        .unwrap();
        assert_eq!(lowered.len(), 1);
        assert_eq!(lowered[0].needs, Bump::Patch);
        assert!(classify_rules(&old, &rules(&[("x", "fatal")])).is_err());
    }

    #[test]
    fn first_release_accepts_anything_but_later_ones_must_grow() {
        let changes = vec![Change::new(Bump::Major, "anything")];
        assert!(check_version(None, &v("0.1.0"), &changes).is_ok());
        let err = check_version(Some(&v("0.2.0")), &v("0.1.0"), &[]).unwrap_err();
        assert!(
            err.contains("not greater than the last release 0.2.0"),
            "{err}"
        );
    }

    #[test]
    fn finds_the_previous_release_tag() {
        let tags = "v0.1.0\nv0.2.0\nv1.0.0-rc.1\nnot-a-tag\nv0.10.0\n";
        let (tag, ver) = previous_release(tags, &v("1.0.0")).unwrap();
        assert_eq!((tag.as_str(), ver), ("v1.0.0-rc.1", v("1.0.0-rc.1")));
        assert_eq!(previous_release(tags, &v("0.2.0")).unwrap().0, "v0.1.0");
        assert!(previous_release(tags, &v("0.1.0")).is_none());
        assert!(previous_release("", &v("0.1.0")).is_none());
    }

    #[test]
    fn changelog_sections() {
        let log = "# Changelog\n\n## [Unreleased]\n\n## [0.1.0] - 2026-07-30\n\n- first\n";
        assert!(changelog_has_section(log, &v("0.1.0")));
        assert!(!changelog_has_section(log, &v("0.1.1")));
        assert!(!changelog_has_section("## [0.1.01]\n", &v("0.1.0")));
        assert!(changelog_has_section("## 0.1.0\n", &v("0.1.0")));
    }

    /// `(name, publish, [(dependency, kind)])` for each package.
    type FakePackage<'a> = (&'a str, Option<&'a [&'a str]>, &'a [(&'a str, &'a str)]);

    fn metadata(pkgs: &[FakePackage<'_>]) -> Value {
        json!({"packages": pkgs.iter().map(|(name, publish, deps)| json!({
            "name": name,
            "version": "0.1.0",
            "publish": publish,
            "dependencies": deps.iter().map(|(d, kind)| json!({
                "name": d,
                "kind": if kind.is_empty() { Value::Null } else { json!(kind) },
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>()})
    }

    #[test]
    fn publish_order_follows_dependencies() {
        let meta = metadata(&[
            ("cli", None, &[("lint", ""), ("spec", ""), ("anyhow", "")]),
            (
                "lint",
                None,
                &[("spec", ""), ("registry", ""), ("cli", "dev")],
            ),
            ("registry", None, &[]),
            ("spec", None, &[("proptest", "dev")]),
            ("xtask", Some(&[]), &[("cli", "")]),
        ]);
        let packages = workspace_packages(&meta).unwrap();
        assert!(!packages.iter().any(|p| p.name == "xtask" && p.publishable));
        assert_eq!(
            publish_order(&packages).unwrap(),
            ["registry", "spec", "lint", "cli"]
        );
    }

    #[test]
    fn publish_order_rejects_cycles_and_unpublishable_dependencies() {
        let cyclic = metadata(&[("a", None, &[("b", "")]), ("b", None, &[("a", "build")])]);
        let err = publish_order(&workspace_packages(&cyclic).unwrap()).unwrap_err();
        assert!(err.to_string().contains("dependency cycle"), "{err}");

        let private = metadata(&[("a", None, &[("b", "")]), ("b", Some(&[]), &[])]);
        let err = publish_order(&workspace_packages(&private).unwrap()).unwrap_err();
        assert!(
            err.to_string().contains("depends on `b`, which is not"),
            "{err}"
        );
    }
}
