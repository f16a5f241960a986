//! The curated platform tool-name registry (ADR-0109 decision 2).
//!
//! Every statically named tool the cloud AI runtime registers, grouped by
//! the package that owns it, plus the prefixes of the families of tools the
//! runtime materialises at run time (today exactly `action_`).
//!
//! Order is part of the API: [`all_names`] yields names in package order,
//! then list order, and the lint's suggestion tie-breaking depends on it.
#![deny(missing_docs)]

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

/// Whether `name` is a curated platform tool (binary search per group).
pub fn is_platform_tool(name: &str) -> bool {
    owner(name).is_some()
}

/// The package that registers `name`, if it is a curated platform tool.
pub fn owner(name: &str) -> Option<&'static str> {
    GROUPS
        .iter()
        .find(|g| g.names.binary_search(&name).is_ok())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_35_names() {
        assert_eq!(all_names().count(), 35);
    }

    #[test]
    fn lookups() {
        assert!(is_platform_tool("describe_object"));
        assert!(!is_platform_tool("forecast_revenue"));
        assert_eq!(owner("query_data"), Some("service-ai"));
        assert_eq!(owner("load_tools"), Some("service-ai-studio"));
        assert_eq!(family("action_complete_task"), Some("action_"));
        assert_eq!(family("query_data"), None);
        assert_eq!(action_tool_name("x"), "action_x");
    }
}
