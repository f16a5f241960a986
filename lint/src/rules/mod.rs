//! The reference-integrity suite: one file per rule, one line per rule in
//! [`RULES`].
//!
//! To add a rule: copy an existing file, give it a new kebab-case id, a
//! default severity and its four doc sections, add its fixtures under
//! `lint/tests/data/`, and add one line below.

use crate::rule::Rule;

pub mod ai_agent_skill_unresolved;
pub mod ai_destructive_asserted_safe;
pub mod ai_destructive_exposure_undecided;
pub mod ai_skill_surface_mismatch;
pub mod ai_skill_tool_needs_approval;
pub mod ai_skill_tool_superseded;
pub mod ai_skill_tool_unresolved;
pub mod ai_tool_binding_relaxes_confirmation;
pub mod ai_tool_binding_unexposed;
pub mod ai_tool_binding_unresolved;
pub mod ai_tool_binding_widens;
pub mod ai_tool_parameters_malformed;
pub mod ai_tool_record_inert;
pub mod ai_tool_record_shadows_platform;

/// Every rule, in the order they run and are listed.
pub static RULES: &[&Rule] = &[
    &ai_skill_tool_unresolved::RULE,
    &ai_skill_tool_needs_approval::RULE,
    &ai_destructive_exposure_undecided::RULE,
    &ai_destructive_asserted_safe::RULE,
    &ai_tool_record_inert::RULE,
    &ai_tool_record_shadows_platform::RULE,
    &ai_tool_binding_unresolved::RULE,
    &ai_tool_binding_unexposed::RULE,
    &ai_tool_binding_widens::RULE,
    &ai_tool_parameters_malformed::RULE,
    &ai_tool_binding_relaxes_confirmation::RULE,
    &ai_skill_tool_superseded::RULE,
    &ai_agent_skill_unresolved::RULE,
    &ai_skill_surface_mismatch::RULE,
];

/// The rule with this id.
pub fn find(id: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.id() == id)
}
