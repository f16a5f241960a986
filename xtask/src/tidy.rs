//! `cargo xtask tidy`: repository hygiene, also run by a `#[test]`.
//!
//! Checks, each reported with the file and the fix:
//! - every `.rs` file under a workspace crate's `src/` starts with a `//!`
//!   module doc (test-only `tests.rs` files excepted);
//! - every lint rule has a doc page (`docs/rules/<id>.md`), a fixture (a
//!   file under `lint/tests/data/` whose name or contents, such as an
//!   expected-output file, names the id) and a test (a `#[test]` in the
//!   rule's own file `lint/src/rules/<id>.rs`, or the id named in a test
//!   under `lint/tests/` or in a `#[cfg(test)]` part of `lint/src/`);
//! - the platform registry passes its own invariant check and each group is
//!   sorted;
//! - no `todo!` or `unimplemented!` in library code (the non-test part of
//!   each publishable crate's `src/`);
//! - each publishable crate inherits the workspace version, has a
//!   `README.md`, and every version its README quotes for one of our crates
//!   (`objectstack-x = "V"`, or a heading `# objectstack-x V`) matches the
//!   workspace version;
//! - no crate's unique dependency count for its default features has grown
//!   more than 10 % over the one ARCHITECTURE.md's Dependencies table gives
//!   it, and the table has a line for every workspace crate (see [`deps`]
//!   for how the count is made).

mod deps;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::codegen::rule_docs;
use crate::util::{files_with_extension, project_root, read_to_string, relative};

/// A workspace member as its manifest describes it.
#[derive(Debug)]
struct Member {
    dir: PathBuf,
    name: String,
    publishable: bool,
    manifest: toml::Table,
}

/// Entry point of `cargo xtask tidy`.
pub(crate) fn run() -> Result<()> {
    check(&project_root())?;
    println!("tidy: no problems");
    Ok(())
}

/// Fails listing every hygiene problem under `root`.
pub(crate) fn check(root: &Path) -> Result<()> {
    let problems = problems(root)?;
    if problems.is_empty() {
        return Ok(());
    }
    bail!(
        "tidy found {} problem(s):\n  {}",
        problems.len(),
        problems.join("\n  ")
    )
}

fn problems(root: &Path) -> Result<Vec<String>> {
    let root_manifest: toml::Table = read_to_string(&root.join("Cargo.toml"))?
        .parse()
        .context("the root Cargo.toml is not valid TOML")?;
    let workspace_version = root_manifest
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("version"))
        .and_then(toml::Value::as_str)
        .context("the root Cargo.toml has no [workspace.package] version")?
        .to_owned();
    let members = members(root, &root_manifest)?;

    let mut problems = Vec::new();
    for member in &members {
        module_docs(root, member, &mut problems)?;
        if member.publishable {
            no_placeholders(root, member, &mut problems)?;
            crate_metadata(root, member, &workspace_version, &mut problems)?;
        }
    }
    registry_order(&mut problems);
    rule_coverage(root, &mut problems)?;
    dependency_counts(root, &mut problems)?;
    Ok(problems)
}

/// Each crate's dependency count against ARCHITECTURE.md's table.
fn dependency_counts(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    let doc = root.join("ARCHITECTURE.md");
    let Ok(text) = std::fs::read_to_string(&doc) else {
        problems
            .push("ARCHITECTURE.md: missing; it holds the crates' dependency counts".to_owned());
        return Ok(());
    };
    let recorded = deps::recorded(&text);
    let actual = deps::default_counts(&deps::metadata(root)?)?;
    problems.extend(deps::compare(&relative(root, &doc), &recorded, &actual));
    Ok(())
}

fn members(root: &Path, root_manifest: &toml::Table) -> Result<Vec<Member>> {
    let names = root_manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(toml::Value::as_array)
        .context("the root Cargo.toml has no [workspace] members")?;
    let mut out = Vec::new();
    for entry in names {
        let Some(dir) = entry.as_str() else {
            continue;
        };
        let dir = root.join(dir);
        let manifest: toml::Table = read_to_string(&dir.join("Cargo.toml"))?
            .parse()
            .with_context(|| format!("{}/Cargo.toml is not valid TOML", dir.display()))?;
        let package = manifest.get("package");
        let name = package
            .and_then(|p| p.get("name"))
            .and_then(toml::Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let publishable = !matches!(
            package.and_then(|p| p.get("publish")),
            Some(toml::Value::Boolean(false))
        ) && !package
            .and_then(|p| p.get("publish"))
            .and_then(toml::Value::as_array)
            .is_some_and(Vec::is_empty);
        out.push(Member {
            dir,
            name,
            publishable,
            manifest,
        });
    }
    Ok(out)
}

/// Every module starts with a `//!` doc.
fn module_docs(root: &Path, member: &Member, problems: &mut Vec<String>) -> Result<()> {
    for file in files_with_extension(&member.dir.join("src"), "rs")? {
        // A test-only module (`#[cfg(test)] mod tests;`) is not documentation.
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = read_to_string(&file)?;
        if !starts_with_module_doc(&text) {
            problems.push(format!(
                "{}: module has no `//!` documentation; start the file with a `//!` line \
                 saying what the module is for",
                relative(root, &file)
            ));
        }
    }
    Ok(())
}

pub(crate) fn starts_with_module_doc(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with("//!"))
}

/// The part of a source file that is library code: everything before the
/// first `#[cfg(test)]` (test modules sit at the end of a file).
fn library_part(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .map(|(i, l)| (i + 1, l))
}

/// `todo!` and `unimplemented!` outside tests and comments, by line.
pub(crate) fn placeholder_lines(text: &str) -> Vec<(usize, &'static str)> {
    // Spelled in two pieces so this file does not match itself.
    const MACROS: [&str; 2] = [concat!("todo", "!"), concat!("unimplemented", "!")];
    let mut out = Vec::new();
    for (line_no, line) in library_part(text) {
        let code = line.split("//").next().unwrap_or_default();
        for mac in MACROS {
            if code.contains(mac) {
                out.push((line_no, mac));
            }
        }
    }
    out
}

fn no_placeholders(root: &Path, member: &Member, problems: &mut Vec<String>) -> Result<()> {
    for file in files_with_extension(&member.dir.join("src"), "rs")? {
        let text = read_to_string(&file)?;
        for (line, mac) in placeholder_lines(&text) {
            problems.push(format!(
                "{}:{line}: `{mac}` in library code; implement it or return an error",
                relative(root, &file)
            ));
        }
    }
    Ok(())
}

/// README present, version inherited, README versions current.
fn crate_metadata(
    root: &Path,
    member: &Member,
    workspace_version: &str,
    problems: &mut Vec<String>,
) -> Result<()> {
    let manifest_path = relative(root, &member.dir.join("Cargo.toml"));
    let inherits = member
        .manifest
        .get("package")
        .and_then(|p| p.get("version"))
        .and_then(|v| v.get("workspace"))
        .and_then(toml::Value::as_bool)
        == Some(true);
    if !inherits {
        problems.push(format!(
            "{manifest_path}: `{}` does not use the workspace version; write \
             `version.workspace = true`",
            member.name
        ));
    }
    let readme = member.dir.join("README.md");
    if !readme.is_file() {
        problems.push(format!(
            "{}: missing; a publishable crate needs a short README (what it is, a usage \
             example)",
            relative(root, &readme)
        ));
        return Ok(());
    }
    let text = read_to_string(&readme)?;
    for (line, krate, quoted) in quoted_versions(&text) {
        if !version_matches(&quoted, workspace_version) {
            problems.push(format!(
                "{}:{line}: quotes `{krate}` at version {quoted}, but the workspace is at \
                 {workspace_version}; update the README",
                relative(root, &readme)
            ));
        }
    }
    Ok(())
}

/// `(line, crate, version)` for each `objectstack-x = "V"`,
/// `objectstack-x = { version = "V" ... }` or heading `# objectstack-x V`
/// in a README.
pub(crate) fn quoted_versions(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(start) = line.find("objectstack-") else {
            continue;
        };
        let rest = &line[start..];
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        let (name, after) = rest.split_at(name_len);
        // A heading such as `# objectstack-lint 0.1.0`.
        if line.starts_with('#') {
            let word = after.split_whitespace().next().unwrap_or_default();
            if word.starts_with(|c: char| c.is_ascii_digit()) && word.contains('.') {
                out.push((i + 1, name.to_owned(), word.to_owned()));
            }
            continue;
        }
        let after = after.trim_start();
        let Some(value) = after.strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        let value = match value.strip_prefix('{') {
            Some(table) => match table.find("version") {
                Some(pos) => table[pos + "version".len()..]
                    .trim_start()
                    .strip_prefix('=')
                    .unwrap_or_default()
                    .trim_start(),
                None => continue,
            },
            None => value,
        };
        let Some(quoted) = value.strip_prefix('"') else {
            continue;
        };
        let Some(end) = quoted.find('"') else {
            continue;
        };
        out.push((i + 1, name.to_owned(), quoted[..end].to_owned()));
    }
    out
}

/// `"0.1"`, `"0.1.0"` and `"=0.1.0"` all match workspace version 0.1.0.
pub(crate) fn version_matches(quoted: &str, workspace: &str) -> bool {
    let quoted = quoted.trim().trim_start_matches(['=', '^', '~']);
    workspace == quoted || workspace.starts_with(&format!("{quoted}."))
}

fn registry_order(problems: &mut Vec<String>) {
    use objectstack_registry::{FAMILY_PREFIXES, GROUPS};
    if let Err(violation) = objectstack_registry::check(GROUPS, FAMILY_PREFIXES) {
        problems.push(format!("registry/src/lib.rs: {violation}"));
    }
    for group in GROUPS {
        for pair in group.names.windows(2) {
            if let [a, b] = pair
                && a >= b
            {
                problems.push(format!(
                    "registry/src/lib.rs: group `{}` is not sorted: `{a}` comes before `{b}`; \
                     keep each group in ascending order",
                    group.package
                ));
            }
        }
    }
}

fn rule_coverage(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    let lint = root.join("lint");
    // Fixtures: every file under lint/tests/data, by path and contents (an
    // expected-output file names the rules its stack triggers).
    let mut fixtures = String::new();
    let mut pending = vec![lint.join("tests").join("data")];
    while let Some(dir) = pending.pop() {
        if !dir.is_dir() {
            continue;
        }
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("could not list {}", dir.display()))?
        {
            let path = entry?.path();
            fixtures.push_str(&relative(root, &path));
            fixtures.push('\n');
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                fixtures.push_str(&text);
                fixtures.push('\n');
            }
        }
    }
    // Tests: lint/tests/*.rs, and the test part of lint/src files.
    let mut tests = String::new();
    for file in files_with_extension(&lint.join("tests"), "rs")? {
        tests.push_str(&read_to_string(&file)?);
    }
    for file in files_with_extension(&lint.join("src"), "rs")? {
        let text = read_to_string(&file)?;
        if let Some(pos) = text.find("#[cfg(test)]") {
            tests.push_str(&text[pos..]);
        }
    }
    for rule in rule_docs::rules() {
        let id = &rule.id;
        let page = root.join(rule_docs::page_path(id));
        if !page.is_file() {
            problems.push(format!(
                "{}: rule `{id}` has no doc page; run `cargo xtask codegen`",
                relative(root, &page)
            ));
        }
        if !fixtures.contains(id.as_str()) {
            problems.push(format!(
                "lint/tests/data: no fixture exercises rule `{id}`; add a stack under \
                 lint/tests/data/ with an expected output that names `{id}`"
            ));
        }
        let source = lint
            .join("src")
            .join("rules")
            .join(format!("{}.rs", id.replace('-', "_")));
        let own_tests = std::fs::read_to_string(&source)
            .ok()
            .and_then(|text| {
                text.find("#[cfg(test)]")
                    .map(|pos| text[pos..].contains("#[test]"))
            })
            .unwrap_or(false);
        if !own_tests && !tests.contains(id.as_str()) {
            problems.push(format!(
                "lint: rule `{id}` has no test; add a #[cfg(test)] module with a #[test] to \
                 {} or a test under lint/tests/ that names `{id}`",
                relative(root, &source)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repository is tidy (what `cargo xtask tidy` checks).
    #[test]
    fn repository_is_tidy() {
        if let Err(err) = check(&project_root()) {
            panic!("{err:#}\nrun `cargo xtask tidy` after fixing");
        }
    }

    /// A small broken workspace: every check reports what it should.
    #[test]
    fn finds_problems_in_a_broken_workspace() {
        use crate::util::{TempDir, write_file};
        let tmp = TempDir::new("tidy-test").unwrap();
        let root = tmp.path();
        write_file(
            &root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"good\", \"bad\", \"tool\"]\n[workspace.package]\nversion = \"0.3.0\"\n",
        )
        .unwrap();
        write_file(
            &root.join("good/Cargo.toml"),
            "[package]\nname = \"objectstack-good\"\nversion.workspace = true\n",
        )
        .unwrap();
        write_file(&root.join("good/README.md"), "objectstack-good = \"0.3\"\n").unwrap();
        write_file(&root.join("good/src/lib.rs"), "//! Good.\n").unwrap();
        write_file(
            &root.join("bad/Cargo.toml"),
            "[package]\nname = \"objectstack-bad\"\nversion = \"0.2.0\"\n",
        )
        .unwrap();
        let placeholder = concat!("todo", "!()");
        write_file(
            &root.join("bad/src/lib.rs"),
            &format!("fn f() {{ {placeholder} }}\n"),
        )
        .unwrap();
        write_file(&root.join("bad/src/tests.rs"), "#[test]\nfn t() {}\n").unwrap();
        write_file(
            &root.join("tool/Cargo.toml"),
            "[package]\nname = \"tool\"\nversion = \"9.9.9\"\npublish = false\n",
        )
        .unwrap();
        write_file(
            &root.join("tool/src/main.rs"),
            &format!("//! Tool.\nfn main() {{ {placeholder} }}\n"),
        )
        .unwrap();

        let found = problems(root).unwrap();
        let has = |needle: &str| found.iter().any(|p| p.contains(needle));
        assert!(
            has("bad/src/lib.rs: module has no `//!` documentation"),
            "{found:#?}"
        );
        assert!(
            has("bad/src/lib.rs:1: `todo!` in library code"),
            "{found:#?}"
        );
        assert!(
            has("bad/Cargo.toml: `objectstack-bad` does not use the workspace version"),
            "{found:#?}"
        );
        assert!(has("bad/README.md: missing"), "{found:#?}");
        assert!(!has("tests.rs"), "test-only modules are exempt: {found:#?}");
        assert!(!has("good/"), "{found:#?}");
        assert!(
            !has("tool/"),
            "unpublishable crates skip the library checks: {found:#?}"
        );
        // No docs/rules and no lint/ here: every rule lacks its page, fixture and test.
        let rules = rule_docs::rules().len();
        assert_eq!(
            found
                .iter()
                .filter(|p| p.contains("has no doc page"))
                .count(),
            rules
        );
        assert_eq!(
            found
                .iter()
                .filter(|p| p.contains("no fixture exercises"))
                .count(),
            rules
        );
        assert_eq!(
            found.iter().filter(|p| p.contains("has no test")).count(),
            rules
        );
    }

    #[test]
    fn module_docs_must_come_first() {
        assert!(starts_with_module_doc("\n//! Docs.\nuse x;\n"));
        assert!(!starts_with_module_doc("use x;\n//! Docs.\n"));
        assert!(!starts_with_module_doc("/// Item doc.\nfn f() {}\n"));
        assert!(!starts_with_module_doc(""));
    }

    #[test]
    fn placeholders_outside_tests_and_comments() {
        let todo = concat!("todo", "!()");
        let text = format!(
            "//! m\nfn a() {{ {todo} }}\n// {todo} in a comment\nfn b() {{}}\n#[cfg(test)]\nmod t {{ fn c() {{ {todo} }} }}\n"
        );
        assert_eq!(placeholder_lines(&text), vec![(2, concat!("todo", "!"))]);
        let unimpl = concat!("unimplemented", "!()");
        assert_eq!(
            placeholder_lines(&format!("fn a() {{ {unimpl} }}")),
            vec![(1, concat!("unimplemented", "!"))]
        );
    }

    #[test]
    fn readme_versions() {
        let readme = "# objectstack-lint 0.1.0\n```toml\n[dependencies]\nobjectstack-lint = \"0.1\"\nobjectstack-spec = { version = \"0.2.0\", features = [] }\nserde = \"1\"\n```\n`objectstack-ai lint` = nothing\n";
        assert_eq!(
            quoted_versions(readme),
            vec![
                (1, "objectstack-lint".to_owned(), "0.1.0".to_owned()),
                (4, "objectstack-lint".to_owned(), "0.1".to_owned()),
                (5, "objectstack-spec".to_owned(), "0.2.0".to_owned()),
            ]
        );
        assert!(version_matches("0.1", "0.1.0"));
        assert!(version_matches("=0.1.0", "0.1.0"));
        assert!(!version_matches("0.2.0", "0.1.0"));
        assert!(!version_matches("0.1", "0.10.0"));
    }
}
