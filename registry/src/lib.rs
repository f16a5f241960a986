//! The curated platform tool-name registry (ADR-0109 decision 2).
//!
//! Every statically named tool the cloud AI runtime registers, grouped by
//! the package that owns it, plus the prefixes of the families of tools the
//! runtime materialises at run time (today exactly `action_`). A static
//! check uses it to tell `describe_object` (real, registered at boot) from
//! `forecast_revenue` (fictional).
//!
//! Order is part of the API: [`all_names`] yields names in package order,
//! then list order, and the lint's suggestion tie-breaking depends on it.
//!
//! # Invariants
//!
//! [`check`] is a `const fn`, and this crate evaluates it on [`GROUPS`] and
//! [`FAMILY_PREFIXES`] at compile time, so an edit that breaks one of these
//! does not compile; the compiler error names the offending entry and the
//! fix:
//! - every package name is non-empty and has exactly one group;
//! - no group is empty;
//! - every name is snake_case (`[a-z][a-z0-9]*(_[a-z0-9]+)*`);
//! - each group is sorted ascending (byte order) with no name listed twice;
//! - no name is in two groups;
//! - no static name starts with a family prefix;
//! - every family prefix is a snake_case word followed by `_`.
//!
//! ```compile_fail,E0080
//! use objectstack_registry::{Group, assert_valid};
//! // `apply_edit` sorts after `add_field`, not before: this does not compile.
//! const BAD: &[Group] = &[Group { package: "service-ai-studio", names: &["apply_edit", "add_field"] }];
//! const _: () = assert_valid(BAD, &["action_"]);
//! ```
//!
//! # Lookups
//!
//! [`is_platform_tool`] and [`owner`] binary-search one sorted index of all
//! names built at compile time (O(log n), no allocation); [`family`] and
//! [`group`] scan the handful of prefixes and packages.
//!
//! # The JSON export
//!
//! [`render_json`] renders the registry for non-Rust consumers; the result
//! is committed as `registry/platform-tools.json` (`cargo xtask codegen`
//! writes it, a test fails when it is stale). Its shape, keys in this
//! order, pretty-printed with two-space indentation and a final newline:
//!
//! ```json
//! // shown compactly; the file puts every array item on its own line
//! {
//!   "$comment": "...",
//!   "formatVersion": 1,
//!   "upstream": { "package": "@objectstack/spec", "version": "17.4.0" },
//!   "total": N, // N = TOTAL, the number of names over every group
//!   "familyPrefixes": ["action_"],
//!   "groups": [
//!     { "package": "service-ai", "names": ["aggregate_data", "..."] },
//!     { "package": "service-ai-studio", "names": ["add_field", "..."] }
//!   ]
//! }
//! ```
//!
//! `formatVersion` changes only when the shape does; `groups` is in package
//! order and each `names` list in registry order, as [`all_names`] yields.
#![deny(missing_docs)]

use std::cmp::Ordering;
use std::fmt;

/// One owning package and the tool names it registers, sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    /// The owning package (`service-ai`, `service-ai-studio`).
    pub package: &'static str,
    /// The names it registers, sorted ascending.
    pub names: &'static [&'static str],
}

/// The prefix of the family of tools materialised from actions.
pub const ACTION_PREFIX: &str = "action_";

/// Prefixes of the dynamically materialised tool families.
pub const FAMILY_PREFIXES: &[&str] = &[ACTION_PREFIX];

/// The `@objectstack/spec` release this registry matches.
pub const UPSTREAM_VERSION: &str = "17.4.0";

/// The curated groups, in package order (as published in
/// `@objectstack/spec` 17.4.0).
pub const GROUPS: &[Group] = &[
    Group {
        package: "service-ai",
        names: &[
            "aggregate_data",
            "get_record",
            "query_data",
            "query_records",
            "search_knowledge",
            "visualize_data",
        ],
    },
    Group {
        package: "service-ai-studio",
        names: &[
            "add_field",
            "apply_blueprint",
            "apply_edit",
            "create_metadata",
            "create_object",
            "create_package",
            "create_seed",
            "delete_field",
            "describe_metadata",
            "describe_object",
            "get_active_package",
            "get_authoring_rules",
            "get_metadata_schema",
            "get_package",
            "list_metadata",
            "list_objects",
            "list_packages",
            "load_tools",
            "modify_field",
            "open_record",
            "propose_blueprint",
            "set_active_package",
            "suggest_builder",
            "test_flow",
            "todo_write",
            "toggle_flow",
            "update_metadata",
            "validate_expression",
            "verify_build",
        ],
    },
];

/// How many names the registry curates, over every group.
pub const TOTAL: usize = count_names(GROUPS);

// The registry's invariants, checked when this crate compiles.
const _: () = assert_valid(GROUPS, FAMILY_PREFIXES);

/// Whether `name` is a curated platform tool (O(log n), no allocation).
pub fn is_platform_tool(name: &str) -> bool {
    lookup(name).is_some()
}

/// The package that registers `name`, if it is a curated platform tool
/// (O(log n), no allocation).
pub fn owner(name: &str) -> Option<&'static str> {
    lookup(name)
        .and_then(|entry| GROUPS.get(entry.group))
        .map(|g| g.package)
}

/// The family prefix `name` falls under (`action_`), if any.
pub fn family(name: &str) -> Option<&'static str> {
    FAMILY_PREFIXES
        .iter()
        .copied()
        .find(|p| name.starts_with(p))
}

/// The group of a package.
pub fn group(package: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.package == package)
}

/// Every curated name, in package order then list order.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    GROUPS.iter().flat_map(|g| g.names.iter().copied())
}

/// The tool name an action materialises as: `action_<name>`.
pub fn action_tool_name(action_name: &str) -> String {
    let mut s = String::with_capacity(ACTION_PREFIX.len() + action_name.len());
    s.push_str(ACTION_PREFIX);
    s.push_str(action_name);
    s
}

/// The action a materialised tool name stands for: `send_invoice` for
/// `action_send_invoice`; `None` for a name outside the family (or the bare
/// prefix).
pub fn action_name(tool_name: &str) -> Option<&str> {
    tool_name
        .strip_prefix(ACTION_PREFIX)
        .filter(|rest| !rest.is_empty())
}

/// A broken registry invariant, found by [`check`].
///
/// Its [`Display`](fmt::Display) names the offending entry and the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Violation {
    /// The group at this position has an empty package name.
    EmptyPackage {
        /// The group's position in the list (0-based).
        group: usize,
    },
    /// Two groups name the same package.
    DuplicatePackage {
        /// The package.
        package: &'static str,
    },
    /// A group lists no names.
    EmptyGroup {
        /// The package.
        package: &'static str,
    },
    /// A name is not snake_case.
    NotSnakeCase {
        /// The package whose group lists it.
        package: &'static str,
        /// The name.
        name: &'static str,
    },
    /// A name sorts before the name listed just above it.
    Unsorted {
        /// The package whose group lists it.
        package: &'static str,
        /// The name that is out of place.
        name: &'static str,
        /// The name just above it, which should come after it.
        previous: &'static str,
    },
    /// A group lists a name twice.
    ListedTwice {
        /// The package whose group lists it.
        package: &'static str,
        /// The name.
        name: &'static str,
    },
    /// A name is in two groups.
    InTwoGroups {
        /// The name.
        name: &'static str,
        /// The package whose group lists it first.
        first: &'static str,
        /// The package whose group lists it again.
        second: &'static str,
    },
    /// A static name starts with a family prefix.
    UnderFamilyPrefix {
        /// The package whose group lists it.
        package: &'static str,
        /// The name.
        name: &'static str,
        /// The family prefix it starts with.
        prefix: &'static str,
    },
    /// A family prefix is not a snake_case word followed by `_`.
    BadPrefix {
        /// The prefix.
        prefix: &'static str,
    },
}

impl Violation {
    /// A stable machine-readable code for the invariant broken.
    pub const fn code(&self) -> &'static str {
        match self {
            Violation::EmptyPackage { .. } => "empty_package",
            Violation::DuplicatePackage { .. } => "duplicate_package",
            Violation::EmptyGroup { .. } => "empty_group",
            Violation::NotSnakeCase { .. } => "not_snake_case",
            Violation::Unsorted { .. } => "unsorted",
            Violation::ListedTwice { .. } => "listed_twice",
            Violation::InTwoGroups { .. } => "in_two_groups",
            Violation::UnderFamilyPrefix { .. } => "under_family_prefix",
            Violation::BadPrefix { .. } => "bad_prefix",
        }
    }

    /// The entry at fault: the name, package or prefix the message names
    /// first (for [`Violation::EmptyPackage`], the empty string).
    pub const fn entry(&self) -> &'static str {
        match self {
            Violation::EmptyPackage { .. } => "",
            Violation::DuplicatePackage { package } | Violation::EmptyGroup { package } => package,
            Violation::NotSnakeCase { name, .. }
            | Violation::Unsorted { name, .. }
            | Violation::ListedTwice { name, .. }
            | Violation::InTwoGroups { name, .. }
            | Violation::UnderFamilyPrefix { name, .. } => name,
            Violation::BadPrefix { prefix } => prefix,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(message(self).as_str())
    }
}

impl std::error::Error for Violation {}

/// Checks the registry invariants (see the crate docs) on any list of
/// groups and prefixes; `Err` carries the first violation found.
///
/// Prefixes are checked first, then each group in order: its package name,
/// emptiness, then each name (snake_case, family prefix, another group,
/// order within the group).
pub const fn check(groups: &[Group], prefixes: &[&'static str]) -> Result<(), Violation> {
    let mut p = 0;
    while p < prefixes.len() {
        let prefix = prefixes[p];
        if !is_family_prefix(prefix) {
            return Err(Violation::BadPrefix { prefix });
        }
        p += 1;
    }
    let mut g = 0;
    while g < groups.len() {
        let group = groups[g];
        let package = group.package;
        if package.is_empty() {
            return Err(Violation::EmptyPackage { group: g });
        }
        let mut earlier = 0;
        while earlier < g {
            if bytes_eq(groups[earlier].package.as_bytes(), package.as_bytes()) {
                return Err(Violation::DuplicatePackage { package });
            }
            earlier += 1;
        }
        if group.names.is_empty() {
            return Err(Violation::EmptyGroup { package });
        }
        let mut n = 0;
        while n < group.names.len() {
            let name = group.names[n];
            if !is_snake_case(name) {
                return Err(Violation::NotSnakeCase { package, name });
            }
            let mut p = 0;
            while p < prefixes.len() {
                if starts_with(name.as_bytes(), prefixes[p].as_bytes()) {
                    return Err(Violation::UnderFamilyPrefix {
                        package,
                        name,
                        prefix: prefixes[p],
                    });
                }
                p += 1;
            }
            let mut earlier = 0;
            while earlier < g {
                if contains(groups[earlier].names, name) {
                    return Err(Violation::InTwoGroups {
                        name,
                        first: groups[earlier].package,
                        second: package,
                    });
                }
                earlier += 1;
            }
            if n > 0 {
                let previous = group.names[n - 1];
                match compare(previous.as_bytes(), name.as_bytes()) {
                    Ordering::Less => {}
                    Ordering::Equal => return Err(Violation::ListedTwice { package, name }),
                    Ordering::Greater => {
                        return Err(Violation::Unsorted {
                            package,
                            name,
                            previous,
                        });
                    }
                }
            }
            n += 1;
        }
        g += 1;
    }
    Ok(())
}

/// Panics with the violation's message when [`check`] fails. Evaluated in a
/// `const` item, the panic is a compile error (E0080) that names the
/// offending entry and the fix.
///
/// # Panics
///
/// When the groups or prefixes break an invariant.
///
/// # Examples
///
/// Each invariant, broken in a `const` item, fails to compile:
///
/// ```compile_fail,E0080
/// # use objectstack_registry::{Group, assert_valid};
/// // not snake_case
/// const _: () = assert_valid(&[Group { package: "p", names: &["getRecord"] }], &["action_"]);
/// ```
///
/// ```compile_fail,E0080
/// # use objectstack_registry::{Group, assert_valid};
/// // listed twice in one group
/// const _: () = assert_valid(&[Group { package: "p", names: &["a", "a"] }], &["action_"]);
/// ```
///
/// ```compile_fail,E0080
/// # use objectstack_registry::{Group, assert_valid};
/// // in two groups
/// const _: () = assert_valid(
///     &[Group { package: "p", names: &["a"] }, Group { package: "q", names: &["a"] }],
///     &["action_"],
/// );
/// ```
///
/// ```compile_fail,E0080
/// # use objectstack_registry::{Group, assert_valid};
/// // a static name under a family prefix
/// const _: () = assert_valid(&[Group { package: "p", names: &["action_x"] }], &["action_"]);
/// ```
///
/// ```compile_fail,E0080
/// # use objectstack_registry::{Group, assert_valid};
/// // an empty group
/// const _: () = assert_valid(&[Group { package: "p", names: &[] }], &["action_"]);
/// ```
///
/// A valid list compiles:
///
/// ```
/// # use objectstack_registry::{Group, assert_valid};
/// const _: () = assert_valid(&[Group { package: "p", names: &["a", "b_c"] }], &["action_"]);
/// ```
pub const fn assert_valid(groups: &[Group], prefixes: &[&'static str]) {
    if let Err(violation) = check(groups, prefixes) {
        let message = message(&violation);
        panic!("{}", message.as_str());
    }
}

/// Renders the registry as JSON (the committed `registry/platform-tools.json`;
/// the shape is documented in the crate docs). Pure and deterministic.
pub fn render_json() -> String {
    let mut out = String::with_capacity(64 * TOTAL + 512);
    out.push_str("{\n");
    out.push_str("  \"$comment\": ");
    push_json_string(
        &mut out,
        "The curated platform tool names (ADR-0109). Generated from registry/src/lib.rs by `cargo xtask codegen`; do not edit.",
    );
    out.push_str(",\n  \"formatVersion\": 1,\n");
    out.push_str("  \"upstream\": {\n    \"package\": \"@objectstack/spec\",\n    \"version\": ");
    push_json_string(&mut out, UPSTREAM_VERSION);
    out.push_str("\n  },\n");
    out.push_str("  \"total\": ");
    out.push_str(&TOTAL.to_string());
    out.push_str(",\n  \"familyPrefixes\": ");
    push_string_array(&mut out, FAMILY_PREFIXES, 1);
    out.push_str(",\n  \"groups\": [");
    for (i, group) in GROUPS.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        out.push_str("    {\n      \"package\": ");
        push_json_string(&mut out, group.package);
        out.push_str(",\n      \"names\": ");
        push_string_array(&mut out, group.names, 3);
        out.push_str("\n    }");
    }
    if !GROUPS.is_empty() {
        out.push_str("\n  ");
    }
    out.push_str("]\n}\n");
    out
}

/// Writes `items` as a JSON array, one item per line, the closing bracket
/// at `depth` levels of indentation (the layout of `serde_json`'s pretty
/// printer, so the file reads the same either way).
fn push_string_array(out: &mut String, items: &[&str], depth: usize) {
    if items.is_empty() {
        out.push_str("[]");
        return;
    }
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        push_indent(out, depth + 1);
        push_json_string(out, item);
    }
    out.push('\n');
    push_indent(out, depth);
    out.push(']');
}

fn push_indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// Writes `s` as a JSON string literal: `"` and `\` are escaped, control
/// characters use their short escape or `\u00XX`; everything else is
/// written as is (JSON text is UTF-8).
fn push_json_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => {
                let code = u32::from(c) as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[code >> 4]));
                out.push(char::from(HEX[code & 0xf]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A name's place in the sorted index: the name and its group's position.
#[derive(Debug, Clone, Copy)]
struct Entry {
    name: &'static str,
    group: usize,
}

/// Every curated name, sorted by byte order, built at compile time.
static INDEX: [Entry; TOTAL] = build_index(GROUPS);

fn lookup(name: &str) -> Option<&'static Entry> {
    INDEX
        .binary_search_by(|entry| entry.name.cmp(name))
        .ok()
        .and_then(|i| INDEX.get(i))
}

const fn count_names(groups: &[Group]) -> usize {
    let mut total = 0;
    let mut g = 0;
    while g < groups.len() {
        total += groups[g].names.len();
        g += 1;
    }
    total
}

/// Collects every name with its group, then insertion-sorts by byte order
/// (the order `str::cmp` uses, so binary search agrees).
const fn build_index<const N: usize>(groups: &[Group]) -> [Entry; N] {
    let mut index = [Entry { name: "", group: 0 }; N];
    let mut len = 0;
    let mut g = 0;
    while g < groups.len() {
        let names = groups[g].names;
        let mut n = 0;
        while n < names.len() && len < N {
            let entry = Entry {
                name: names[n],
                group: g,
            };
            let mut at = len;
            while at > 0
                && matches!(
                    compare(index[at - 1].name.as_bytes(), entry.name.as_bytes()),
                    Ordering::Greater
                )
            {
                index[at] = index[at - 1];
                at -= 1;
            }
            index[at] = entry;
            len += 1;
            n += 1;
        }
        g += 1;
    }
    index
}

const fn compare(a: &[u8], b: &[u8]) -> Ordering {
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] < b[i] {
            return Ordering::Less;
        }
        if a[i] > b[i] {
            return Ordering::Greater;
        }
        i += 1;
    }
    if a.len() < b.len() {
        Ordering::Less
    } else if a.len() > b.len() {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    matches!(compare(a, b), Ordering::Equal)
}

const fn starts_with(s: &[u8], prefix: &[u8]) -> bool {
    if prefix.len() > s.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if s[i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn contains(names: &[&str], name: &str) -> bool {
    let mut i = 0;
    while i < names.len() {
        if bytes_eq(names[i].as_bytes(), name.as_bytes()) {
            return true;
        }
        i += 1;
    }
    false
}

/// `[a-z][a-z0-9]*(_[a-z0-9]+)*`: lowercase words joined by single
/// underscores, starting with a letter.
const fn is_snake_case(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_lowercase() {
        return false;
    }
    let mut i = 1;
    while i < b.len() {
        let c = b[i];
        if c == b'_' {
            if b[i - 1] == b'_' || i + 1 == b.len() {
                return false;
            }
        } else if !(c.is_ascii_lowercase() || c.is_ascii_digit()) {
            return false;
        }
        i += 1;
    }
    true
}

/// A snake_case word followed by one `_` (`action_`).
const fn is_family_prefix(prefix: &str) -> bool {
    match prefix.as_bytes().split_last() {
        Some((b'_', word)) => match std::str::from_utf8(word) {
            Ok(word) => is_snake_case(word),
            Err(_) => false,
        },
        _ => false,
    }
}

/// The file a maintainer edits to fix a violation.
const SOURCE: &str = "registry/src/lib.rs";

/// Builds the message of a violation (usable at compile time).
const fn message(v: &Violation) -> Message {
    let mut m = Message::new();
    m.push("registry invariant broken in ");
    m.push(SOURCE);
    m.push(": ");
    match *v {
        Violation::EmptyPackage { group } => {
            m.push("group #");
            m.push_usize(group);
            m.push(" has an empty package name; write the name of the package that registers its tools");
        }
        Violation::DuplicatePackage { package } => {
            m.push("the package `");
            m.push(package);
            m.push("` has two groups; merge them into one sorted group");
        }
        Violation::EmptyGroup { package } => {
            m.push("the `");
            m.push(package);
            m.push("` group has no names; list the tools `");
            m.push(package);
            m.push("` registers, or remove the group");
        }
        Violation::NotSnakeCase { package, name } => {
            m.push("`");
            m.push(name);
            m.push("` in the `");
            m.push(package);
            m.push("` group is not snake_case; rename it to lowercase words joined by single underscores ([a-z][a-z0-9]*(_[a-z0-9]+)*), as the runtime registers it");
        }
        Violation::Unsorted {
            package,
            name,
            previous,
        } => {
            m.push("the `");
            m.push(package);
            m.push("` group is not sorted: `");
            m.push(name);
            m.push("` comes after `");
            m.push(previous);
            m.push("`; move `");
            m.push(name);
            m.push("` above `");
            m.push(previous);
            m.push("` (each group is sorted ascending)");
        }
        Violation::ListedTwice { package, name } => {
            m.push("`");
            m.push(name);
            m.push("` is listed twice in the `");
            m.push(package);
            m.push("` group; delete one of the two entries");
        }
        Violation::InTwoGroups {
            name,
            first,
            second,
        } => {
            m.push("`");
            m.push(name);
            m.push("` is in both the `");
            m.push(first);
            m.push("` and the `");
            m.push(second);
            m.push("` groups; a tool has one owning package, so keep it only in the group of the package that registers it");
        }
        Violation::UnderFamilyPrefix {
            package,
            name,
            prefix,
        } => {
            m.push("`");
            m.push(name);
            m.push("` in the `");
            m.push(package);
            m.push("` group starts with the family prefix `");
            m.push(prefix);
            m.push("`, which is reserved for tools materialised at run time; rename the tool, or remove it from the group");
        }
        Violation::BadPrefix { prefix } => {
            m.push("the family prefix `");
            m.push(prefix);
            m.push("` is not a snake_case word followed by `_`; write it like `action_`");
        }
    }
    m
}

/// A fixed-capacity text buffer, so messages can be built in `const`
/// context (an over-long message is cut at a character boundary).
struct Message {
    bytes: [u8; Message::CAPACITY],
    len: usize,
}

impl Message {
    const CAPACITY: usize = 1024;

    const fn new() -> Self {
        Self {
            bytes: [0; Message::CAPACITY],
            len: 0,
        }
    }

    const fn push(&mut self, s: &str) {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && self.len < Message::CAPACITY {
            self.bytes[self.len] = b[i];
            self.len += 1;
            i += 1;
        }
    }

    const fn push_usize(&mut self, mut n: usize) {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            if self.len < Message::CAPACITY {
                self.bytes[self.len] = digits[count];
                self.len += 1;
            }
        }
    }

    const fn as_str(&self) -> &str {
        let (text, _) = self.bytes.split_at(self.len);
        match std::str::from_utf8(text) {
            Ok(s) => s,
            Err(e) => {
                let (valid, _) = text.split_at(e.valid_up_to());
                match std::str::from_utf8(valid) {
                    Ok(s) => s,
                    Err(_) => "",
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
