//! One package's registered tool names against its curated group.
//!
//! [`check_package`] sorts every registered name into the report's
//! categories; the report says what is wrong ([`PackageReport`]'s
//! `Display`), and the exact registry edits that fix it
//! ([`PackageReport::fixes`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use objectstack_registry as registry;
use objectstack_spec::text::line_safe;

/// The file that holds the curated groups, named in fixes.
pub const REGISTRY_SOURCE: &str = "registry/src/lib.rs";

/// The package is not one the registry curates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown package `{package}`: the registry curates {known}; pass one of them (or add a group for `{package}` in registry/src/lib.rs)",
    known = known_packages().join(", ")
)]
pub struct UnknownPackage {
    /// The package name given.
    pub package: String,
}

/// The packages the registry curates, in registry order.
pub fn known_packages() -> Vec<&'static str> {
    registry::GROUPS.iter().map(|g| g.package).collect()
}

/// A registered name the registry gives to another package.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct OwnedElsewhere {
    /// The tool name.
    pub name: String,
    /// The package whose group curates it.
    pub owner: &'static str,
}

/// A static name registered under a family prefix.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnderFamilyPrefix {
    /// The tool name.
    pub name: String,
    /// The family prefix it starts with (`action_`).
    pub prefix: &'static str,
}

/// A name registered more than once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RegisteredTwice {
    /// The tool name.
    pub name: String,
    /// How many times it was registered (at least 2).
    pub times: usize,
}

/// How one package's registered names compare with its curated group.
///
/// Every list is sorted by name and holds each name once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageReport {
    /// The package checked.
    pub package: &'static str,
    /// How many distinct static names the package registers (every name
    /// given to [`check_package`]; with a stack, [`crate::check`] leaves
    /// the materialised family out).
    pub registered: usize,
    /// How many names its group curates.
    pub curated: usize,
    /// Registered, in no group: the package must add them to its group.
    pub registered_not_curated: Vec<String>,
    /// In the package's group, not registered: stale registry entries.
    pub curated_not_registered: Vec<String>,
    /// Registered, but curated under another package.
    pub owned_by_another: Vec<OwnedElsewhere>,
    /// Registered as static names, yet under a family prefix that is
    /// reserved for tools materialised at run time.
    pub under_family_prefix: Vec<UnderFamilyPrefix>,
    /// Registered more than once.
    pub registered_twice: Vec<RegisteredTwice>,
}

impl PackageReport {
    /// Whether every category is empty.
    pub fn is_conformant(&self) -> bool {
        self.problem_count() == 0
    }

    /// How many entries the categories hold together.
    pub fn problem_count(&self) -> usize {
        self.registered_not_curated.len()
            + self.curated_not_registered.len()
            + self.owned_by_another.len()
            + self.under_family_prefix.len()
            + self.registered_twice.len()
    }

    /// The edits that make the package conform, one sentence each, in
    /// category order; when any edit touches the registry, the last one
    /// says to regenerate its JSON export.
    pub fn fixes(&self) -> Vec<String> {
        let package = self.package;
        let mut fixes = Vec::new();
        for name in &self.registered_not_curated {
            fixes.push(format!(
                "add `{name}` to the `{package}` group in {REGISTRY_SOURCE} (keep the group sorted)"
            ));
        }
        for name in &self.curated_not_registered {
            fixes.push(format!(
                "remove `{name}` from the `{package}` group in {REGISTRY_SOURCE} (`{package}` no longer registers it)"
            ));
        }
        for OwnedElsewhere { name, owner } in &self.owned_by_another {
            fixes.push(format!(
                "if `{package}` now owns `{name}`, move it from the `{owner}` group to the `{package}` group in {REGISTRY_SOURCE}; otherwise stop registering it in `{package}` (two packages registering one name collide at run time)"
            ));
        }
        for UnderFamilyPrefix { name, prefix } in &self.under_family_prefix {
            fixes.push(format!(
                "rename the static tool `{name}` in `{package}`: the `{prefix}` prefix is reserved for tools materialised at run time (if `{name}` is materialised from an action, check it against the stack instead)"
            ));
        }
        for RegisteredTwice { name, times } in &self.registered_twice {
            fixes.push(format!(
                "register `{name}` once in `{package}` (it is registered {times} times; every registration after the first collides)"
            ));
        }
        if self.touches_registry() {
            fixes.push(
                "then run `cargo xtask codegen` to refresh registry/platform-tools.json".to_owned(),
            );
        }
        fixes
    }

    /// Whether a fix edits the registry (rather than the package).
    fn touches_registry(&self) -> bool {
        !self.registered_not_curated.is_empty()
            || !self.curated_not_registered.is_empty()
            || !self.owned_by_another.is_empty()
    }

    /// Writes the categories as a diff against the registry (without the
    /// summary line or the fixes). Names come from the runtime's dump:
    /// each is escaped ([`line_safe`]), so none can drive a terminal or
    /// forge a line of the report.
    pub(crate) fn write_diff(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.registered_not_curated.is_empty() {
            writeln!(
                f,
                "  registered but not curated (missing from the `{}` group):",
                self.package
            )?;
            for name in &self.registered_not_curated {
                writeln!(f, "    + {}", line_safe(name))?;
            }
        }
        if !self.curated_not_registered.is_empty() {
            writeln!(
                f,
                "  curated but not registered (stale entries of the `{}` group):",
                self.package
            )?;
            for name in &self.curated_not_registered {
                writeln!(f, "    - {}", line_safe(name))?;
            }
        }
        if !self.owned_by_another.is_empty() {
            writeln!(f, "  registered here but curated under another package:")?;
            for OwnedElsewhere { name, owner } in &self.owned_by_another {
                writeln!(f, "    ~ {} (curated under `{owner}`)", line_safe(name))?;
            }
        }
        if !self.under_family_prefix.is_empty() {
            writeln!(f, "  static names under a family prefix:")?;
            for UnderFamilyPrefix { name, prefix } in &self.under_family_prefix {
                writeln!(f, "    ! {} (prefix `{prefix}`)", line_safe(name))?;
            }
        }
        if !self.registered_twice.is_empty() {
            writeln!(f, "  registered more than once:")?;
            for RegisteredTwice { name, times } in &self.registered_twice {
                writeln!(f, "    ! {} ({times} times)", line_safe(name))?;
            }
        }
        Ok(())
    }

    /// The one-line verdict.
    pub(crate) fn summary(&self) -> String {
        if self.is_conformant() {
            format!(
                "package `{}` conforms: its {} registered names match the {} curated names",
                self.package, self.registered, self.curated
            )
        } else {
            format!(
                "package `{}` does not conform to the platform tool registry ({} {}):",
                self.package,
                self.problem_count(),
                plural(self.problem_count(), "problem", "problems")
            )
        }
    }
}

impl fmt::Display for PackageReport {
    /// The verdict, the diff and the numbered fixes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.summary())?;
        self.write_diff(f)?;
        write_fixes(f, &self.fixes())
    }
}

/// Writes a numbered `fix:` list (nothing when there are none).
pub(crate) fn write_fixes(f: &mut fmt::Formatter<'_>, fixes: &[String]) -> fmt::Result {
    if fixes.is_empty() {
        return Ok(());
    }
    writeln!(f, "fix:")?;
    for (i, fix) in fixes.iter().enumerate() {
        writeln!(f, "  {}. {}", i + 1, line_safe(fix))?;
    }
    Ok(())
}

pub(crate) fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// Checks the names `package` registers against its curated group.
///
/// Every name under a family prefix counts as a static name here and is
/// reported in [`PackageReport::under_family_prefix`]; to check
/// materialised tools against a stack, use [`crate::check`] with a stack,
/// which routes them to the materialised check instead.
pub fn check_package(package: &str, registered: &[&str]) -> Result<PackageReport, UnknownPackage> {
    let (group, tally) = prepare(package, registered)?;
    Ok(report_for(group, &tally, |_| false))
}

/// How many times each name was registered, in name order.
pub(crate) type Tally<'a> = BTreeMap<&'a str, usize>;

/// Finds the group and counts the names.
pub(crate) fn prepare<'a>(
    package: &str,
    registered: &[&'a str],
) -> Result<(&'static registry::Group, Tally<'a>), UnknownPackage> {
    let group = registry::group(package).ok_or_else(|| UnknownPackage {
        package: package.to_owned(),
    })?;
    let mut tally = Tally::new();
    for name in registered {
        *tally.entry(*name).or_insert(0) += 1;
    }
    Ok((group, tally))
}

/// Builds the report; names for which `elsewhere` is true are checked by
/// someone else (the materialised check) and only counted.
pub(crate) fn report_for(
    group: &'static registry::Group,
    tally: &Tally<'_>,
    elsewhere: impl Fn(&str) -> bool,
) -> PackageReport {
    let package = group.package;
    let mut report = PackageReport {
        package,
        registered: 0,
        curated: group.names.len(),
        registered_not_curated: Vec::new(),
        curated_not_registered: Vec::new(),
        owned_by_another: Vec::new(),
        under_family_prefix: Vec::new(),
        registered_twice: Vec::new(),
    };
    for (&name, &times) in tally {
        if times > 1 {
            report.registered_twice.push(RegisteredTwice {
                name: name.to_owned(),
                times,
            });
        }
        if elsewhere(name) {
            continue;
        }
        report.registered += 1;
        match (registry::owner(name), registry::family(name)) {
            (Some(owner), _) if owner == package => {}
            (Some(owner), _) => report.owned_by_another.push(OwnedElsewhere {
                name: name.to_owned(),
                owner,
            }),
            (None, Some(prefix)) => report.under_family_prefix.push(UnderFamilyPrefix {
                name: name.to_owned(),
                prefix,
            }),
            (None, None) => report.registered_not_curated.push(name.to_owned()),
        }
    }
    let registered: BTreeSet<&str> = tally.keys().copied().collect();
    report.curated_not_registered = group
        .names
        .iter()
        .filter(|name| !registered.contains(*name))
        .map(|name| (*name).to_owned())
        .collect();
    report.curated_not_registered.sort();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curated(package: &str) -> Vec<&'static str> {
        registry::group(package).unwrap().names.to_vec()
    }

    fn studio_names() -> Vec<&'static str> {
        curated("service-ai-studio")
    }

    #[test]
    fn the_curated_list_conforms() {
        for g in registry::GROUPS {
            let report = check_package(g.package, g.names).unwrap();
            assert!(report.is_conformant(), "{report}");
            assert_eq!(report.registered, g.names.len());
            assert!(report.fixes().is_empty());
            assert!(report.to_string().contains("conforms"), "{report}");
        }
    }

    #[test]
    fn order_does_not_matter() {
        let mut names = studio_names();
        names.reverse();
        assert!(
            check_package("service-ai-studio", &names)
                .unwrap()
                .is_conformant()
        );
    }

    #[test]
    fn registered_but_not_curated() {
        let mut names = studio_names();
        names.push("zeta_tool");
        names.push("forecast_revenue");
        let r = check_package("service-ai-studio", &names).unwrap();
        assert_eq!(r.registered_not_curated, ["forecast_revenue", "zeta_tool"]);
        assert_eq!(r.problem_count(), 2);
        assert!(!r.is_conformant());
        assert_eq!(
            r.fixes()[0],
            "add `forecast_revenue` to the `service-ai-studio` group in registry/src/lib.rs (keep the group sorted)"
        );
        assert!(r.fixes().last().unwrap().contains("cargo xtask codegen"));
    }

    #[test]
    fn curated_but_not_registered() {
        let names: Vec<_> = studio_names()
            .into_iter()
            .filter(|n| *n != "load_tools" && *n != "add_field")
            .collect();
        let r = check_package("service-ai-studio", &names).unwrap();
        assert_eq!(r.curated_not_registered, ["add_field", "load_tools"]);
        assert_eq!(r.problem_count(), 2);
        assert!(r.fixes()[1].starts_with(
            "remove `load_tools` from the `service-ai-studio` group in registry/src/lib.rs"
        ));
    }

    #[test]
    fn registered_but_owned_by_another_package() {
        let mut names = registry::group("service-ai").unwrap().names.to_vec();
        names.push("list_objects");
        names.push("describe_object");
        let r = check_package("service-ai", &names).unwrap();
        assert_eq!(
            r.owned_by_another,
            [
                OwnedElsewhere {
                    name: "describe_object".into(),
                    owner: "service-ai-studio"
                },
                OwnedElsewhere {
                    name: "list_objects".into(),
                    owner: "service-ai-studio"
                }
            ]
        );
        assert!(r.registered_not_curated.is_empty());
        assert!(r.fixes()[0].contains(
            "move it from the `service-ai-studio` group to the `service-ai` group in registry/src/lib.rs"
        ));
    }

    #[test]
    fn static_names_under_a_family_prefix() {
        let mut names = registry::group("service-ai").unwrap().names.to_vec();
        names.push("action_send_invoice");
        names.push("action_archive");
        let r = check_package("service-ai", &names).unwrap();
        let found: Vec<_> = r
            .under_family_prefix
            .iter()
            .map(|u| (u.name.as_str(), u.prefix))
            .collect();
        assert_eq!(
            found,
            [
                ("action_archive", "action_"),
                ("action_send_invoice", "action_")
            ]
        );
        assert!(r.registered_not_curated.is_empty());
        assert!(
            !r.fixes().iter().any(|f| f.contains("codegen")),
            "no registry edit"
        );
    }

    #[test]
    fn registered_twice() {
        let mut names = registry::group("service-ai").unwrap().names.to_vec();
        names.push("query_data");
        names.push("query_data");
        names.push("get_record");
        let r = check_package("service-ai", &names).unwrap();
        assert_eq!(
            r.registered_twice,
            [
                RegisteredTwice {
                    name: "get_record".into(),
                    times: 2
                },
                RegisteredTwice {
                    name: "query_data".into(),
                    times: 3
                }
            ]
        );
        assert_eq!(r.registered, curated("service-ai").len());
        assert!(
            r.fixes()[1]
                .contains("register `query_data` once in `service-ai` (it is registered 3 times")
        );
    }

    #[test]
    fn every_category_at_once_is_sorted() {
        let names = [
            "zz_new",
            "aa_new",
            "describe_object",
            "action_b",
            "action_a",
            "query_data",
            "query_data",
            "aggregate_data",
        ];
        let r = check_package("service-ai", &names).unwrap();
        assert_eq!(r.registered_not_curated, ["aa_new", "zz_new"]);
        // The rest of the group, in its (sorted) order.
        let stale: Vec<&str> = curated("service-ai")
            .into_iter()
            .filter(|n| !["aggregate_data", "query_data"].contains(n))
            .collect();
        assert_eq!(r.curated_not_registered, stale);
        assert!(stale.contains(&"get_record"));
        assert_eq!(r.owned_by_another.len(), 1);
        assert_eq!(r.under_family_prefix.len(), 2);
        assert_eq!(r.registered_twice.len(), 1);
        let problems = 2 + stale.len() + 1 + 2 + 1;
        assert_eq!(r.problem_count(), problems);
        let text = r.to_string();
        let head = format!(
            "package `service-ai` does not conform to the platform tool registry ({problems} problems):\n"
        );
        assert!(text.starts_with(&head), "{text}");
        for line in [
            "    + aa_new\n",
            "    - get_record\n",
            "    ~ describe_object (curated under `service-ai-studio`)\n",
            "    ! action_a (prefix `action_`)\n",
            "    ! query_data (2 times)\n",
            "fix:\n  1. add `aa_new`",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
    }

    #[test]
    fn unknown_package_lists_the_known_ones() {
        let err = check_package("service-crm", &[]).unwrap_err();
        assert_eq!(err.package, "service-crm");
        let text = err.to_string();
        assert!(text.contains("unknown package `service-crm`"), "{text}");
        assert!(text.contains("service-ai, service-ai-studio"), "{text}");
    }

    #[test]
    fn an_empty_registration_is_all_stale() {
        let r = check_package("service-ai", &[]).unwrap();
        assert_eq!(r.curated_not_registered, curated("service-ai"));
        assert_eq!(r.registered, 0);
    }
}
