//! The stable diagnostic ids, one documented variant each.
//!
//! An id never changes meaning once published: tools filter on it, and
//! `explain` prints its documentation. Add new ids at the end of
//! [`DiagnosticId::ALL`].

use std::fmt;

use super::Severity;

/// What kind of problem a [`super::Diagnostic`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiagnosticId {
    /// `spec-wrong-type`
    WrongType,
    /// `spec-unknown-key`
    UnknownKey,
    /// `spec-retired-key`
    RetiredKey,
    /// `spec-missing-key`
    MissingKey,
    /// `spec-invalid-name`
    InvalidName,
    /// `spec-invalid-enum`
    InvalidEnum,
    /// `spec-ai-description-required`
    AiDescriptionRequired,
    /// `spec-ai-description-too-short`
    AiDescriptionTooShort,
    /// `spec-param-hint-unknown-param`
    ParamHintUnknownParam,
    /// `spec-duplicate-name`
    DuplicateName,
    /// `spec-compose-conflict`
    ComposeConflict,
    /// `spec-duplicate-key`
    DuplicateKey,
}

impl DiagnosticId {
    /// Every id, in a stable order.
    pub const ALL: &'static [DiagnosticId] = &[
        DiagnosticId::WrongType,
        DiagnosticId::UnknownKey,
        DiagnosticId::RetiredKey,
        DiagnosticId::MissingKey,
        DiagnosticId::InvalidName,
        DiagnosticId::InvalidEnum,
        DiagnosticId::AiDescriptionRequired,
        DiagnosticId::AiDescriptionTooShort,
        DiagnosticId::ParamHintUnknownParam,
        DiagnosticId::DuplicateName,
        DiagnosticId::ComposeConflict,
        DiagnosticId::DuplicateKey,
    ];

    /// The kebab-case id, as printed and as filtered on.
    pub fn as_str(&self) -> &'static str {
        match self {
            DiagnosticId::WrongType => "spec-wrong-type",
            DiagnosticId::UnknownKey => "spec-unknown-key",
            DiagnosticId::RetiredKey => "spec-retired-key",
            DiagnosticId::MissingKey => "spec-missing-key",
            DiagnosticId::InvalidName => "spec-invalid-name",
            DiagnosticId::InvalidEnum => "spec-invalid-enum",
            DiagnosticId::AiDescriptionRequired => "spec-ai-description-required",
            DiagnosticId::AiDescriptionTooShort => "spec-ai-description-too-short",
            DiagnosticId::ParamHintUnknownParam => "spec-param-hint-unknown-param",
            DiagnosticId::DuplicateName => "spec-duplicate-name",
            DiagnosticId::ComposeConflict => "spec-compose-conflict",
            DiagnosticId::DuplicateKey => "spec-duplicate-key",
        }
    }

    /// Looks an id up by its kebab-case spelling.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|d| d.as_str() == id)
    }

    /// The severity diagnostics with this id usually carry (a few cases
    /// are documented exceptions, such as near-miss top-level keys).
    pub fn default_severity(&self) -> Severity {
        match self {
            DiagnosticId::ComposeConflict | DiagnosticId::DuplicateKey => Severity::Warning,
            _ => Severity::Error,
        }
    }

    /// One line saying what the id reports.
    pub fn summary(&self) -> &'static str {
        match self {
            DiagnosticId::WrongType => "a value has the wrong JSON type",
            DiagnosticId::UnknownKey => "a key is not declared on a strict shape",
            DiagnosticId::RetiredKey => "a key that was removed from the model is still written",
            DiagnosticId::MissingKey => "a required key is absent",
            DiagnosticId::InvalidName => "a name does not follow its grammar",
            DiagnosticId::InvalidEnum => "a value is not one of the allowed values",
            DiagnosticId::AiDescriptionRequired => "an exposed action has no `ai.description`",
            DiagnosticId::AiDescriptionTooShort => {
                "an `ai.description` is shorter than 40 UTF-16 code units"
            }
            DiagnosticId::ParamHintUnknownParam => "an `ai.paramHints` key names no declared param",
            DiagnosticId::DuplicateName => "two records of one collection share a name",
            DiagnosticId::ComposeConflict => {
                "composed stacks give one top-level key different values"
            }
            DiagnosticId::DuplicateKey => "an object writes the same key more than once",
        }
    }

    /// The full documentation: what it reports, why it matters, an
    /// example and the fix.
    pub fn explanation(&self) -> &'static str {
        match self {
            DiagnosticId::WrongType => {
                "What it reports: a modelled key holds the wrong kind of JSON value: a string where a \
                 list belongs (`tools: \"query_data\"`), a string where a boolean belongs \
                 (`exposed: \"true\"`), `null` for an optional key, or a collection entry that is not \
                 an object.\n\n\
                 Why it matters: readers skip values they cannot use, so the metadata silently does \
                 nothing: a skill whose `tools` is a string gives its agent no tools, and a \
                 collection entry that is not an object is dropped.\n\n\
                 Example: `\"tools\": \"query_data\"` -> `\"tools\": [\"query_data\"]`.\n\n\
                 Fix: write the type named in the message; leave an optional key out rather than \
                 writing `null`."
            }
            DiagnosticId::UnknownKey => {
                "What it reports: a key that the `ai` block, a param, a param hint, a tool record, a \
                 skill or a tool binding does not declare. These shapes are strict: upstream rejects \
                 such a key rather than ignoring it. The message names the declared key you probably \
                 meant (a known synonym such as `enabled` for `exposed`, or the nearest declared key \
                 by edit distance), or explains why the key does not exist (`ai.permissions`). On an \
                 action (which carries many UI keys) only `llm` and `tool` are reported (they mean \
                 `ai`); at the top level a near miss of a collection name (`skill`) is a warning.\n\n\
                 Why it matters: a misspelt key is configuration that does nothing. `enabled: true` \
                 in an `ai` block does not expose the action.\n\n\
                 Example: `ai: { enabled: true }` -> `ai: { exposed: true, description: \"...\" }`.\n\n\
                 Fix: rename the key as suggested, or delete it."
            }
            DiagnosticId::RetiredKey => {
                "What it reports: a key the model used to accept and removed because nothing \
                 enforced it, or because it moved: `aiExposed`, and top-level `exposed` or \
                 `requiresConfirmation` on an action (they live under `ai`); `permissions`, `active`, \
                 `category`, `builtIn` and `requiresConfirmation` on a tool record; `triggerPhrases` \
                 on a skill; `tools` and `knowledge` on an agent.\n\n\
                 Why it matters: each of these reads like a control (a gate, a switch, a safety \
                 flag) and controls nothing, so leaving it in misleads every reader.\n\n\
                 Example: a tool record with `requiresConfirmation: true` never paused a call; put \
                 the operation behind an action with `ai.requiresConfirmation: true` instead.\n\n\
                 Fix: follow the explanation in the message; usually delete the key or move it."
            }
            DiagnosticId::MissingKey => {
                "What it reports: a key the shape requires is absent: `name` on every record; \
                 `label`, `description` and `parameters` on a tool record; `label` and `tools` on a \
                 skill; `name` or `field` on a param; `type` and `name` on a tool binding; `field`, \
                 `operator` and `value` on a trigger condition.\n\n\
                 Why it matters: upstream refuses the record, and references to it cannot resolve.\n\n\
                 Fix: add the key (a map-shaped collection supplies `name` from the entry's key)."
            }
            DiagnosticId::InvalidName => {
                "What it reports: a name that does not follow its grammar. Tool, skill and agent \
                 names, an agent's skill references, `objectName` and param `field` are \
                 `^[a-z_][a-z0-9_]*$`; a skill's tool entries may end in one `*` (a family \
                 wildcard such as `action_*`); action names are lowercase snake_case starting with \
                 a letter, at least two characters.\n\n\
                 Why it matters: tool names reach model APIs, which accept a narrow alphabet, and an \
                 action `Close-Deal` could never be referenced as `action_Close-Deal`.\n\n\
                 Example: `\"tools\": [\"Query Data\"]` -> `\"tools\": [\"query_data\"]`.\n\n\
                 Fix: rename to lowercase snake_case (and update every reference)."
            }
            DiagnosticId::InvalidEnum => {
                "What it reports: a value outside its closed list: `ai.category`, a skill's or an \
                 agent's `surface`, an action's `type`, `locations`, `variant`, `mode`, `method` and \
                 `operation`, a param's `type`, a tool binding's `type`, a trigger condition's \
                 `operator`.\n\n\
                 Why it matters: an unknown value is ignored or refused, and some drive behaviour: \
                 `variant: \"Danger\"` (capitalised) does not mark the action destructive, so an AI \
                 call would run without confirmation.\n\n\
                 Fix: use one of the values the message lists (they are case-sensitive)."
            }
            DiagnosticId::AiDescriptionRequired => {
                "What it reports: `ai.exposed` is `true` but `ai.description` is missing or \
                 empty.\n\n\
                 Why it matters: the description is the contract a model reads to decide when to \
                 call the tool; the UI label is not enough. Without it the action never becomes a \
                 tool.\n\n\
                 Example: `ai: { exposed: true, description: \"Close the support case the user is \
                 viewing once the issue is resolved.\" }`.\n\n\
                 Fix: write an LLM-facing description of at least 40 characters, or set `exposed` \
                 to `false`."
            }
            DiagnosticId::AiDescriptionTooShort => {
                "What it reports: an `ai.description` shorter than 40 characters, counted as \
                 upstream counts them: in UTF-16 code units (an emoji outside the Basic \
                 Multilingual Plane counts twice; bytes never matter).\n\n\
                 Why it matters: a model picks tools by their descriptions; a few words (\"Closes \
                 a case\") do not say when to call it or what it changes.\n\n\
                 Fix: say when to call the tool, what it changes and what it needs."
            }
            DiagnosticId::ParamHintUnknownParam => {
                "What it reports: a key of `ai.paramHints` that is neither a declared param (its \
                 `name`, or its `field` when it has no name) nor `recordId`.\n\n\
                 Why it matters: a hint for a parameter that does not exist invents a tool argument \
                 the action never reads.\n\n\
                 Fix: rename the hint to the param it describes (the message suggests the nearest \
                 one), or declare the param."
            }
            DiagnosticId::DuplicateName => {
                "What it reports: two records of one collection (objects, stack actions, an \
                 object's actions, tools, skills, agents, an action's params) with the same name, \
                 in one stack or across the stacks being composed. The message names both \
                 definitions.\n\n\
                 Why it matters: consumers key records by name: the second definition is ignored, \
                 collides (`action_<name>` registered twice) or is refused when stacks are \
                 composed. Two params of one action with the same name are only a warning \
                 (upstream accepts them; the later one wins).\n\n\
                 Fix: rename one of them, or delete the copy."
            }
            DiagnosticId::ComposeConflict => {
                "What it reports: stacks being composed give a top-level key that is not a list \
                 (a configuration value) different values. Composition keeps the first and \
                 reports the others.\n\n\
                 Why it matters: only one value can win, and which one is an accident of the \
                 order the files were given in.\n\n\
                 Fix: make the values agree, or keep the key in one stack only."
            }
            DiagnosticId::DuplicateKey => {
                "What it reports: one JSON object that writes a key more than once, anywhere in \
                 the document (modelled or not). The message names the key, the object's path and \
                 the line and column of every occurrence; the diagnostic points at the last one.\n\n\
                 Why it matters: `JSON.parse`, and so upstream, keeps the last value without a \
                 word, while a reader sees the first. In an `ai` block, `requiresConfirmation: \
                 true` followed further down by `requiresConfirmation: false` runs the action \
                 without a human in the loop.\n\n\
                 Example: `\"ai\": { \"requiresConfirmation\": true, \"description\": \"...\", \
                 \"requiresConfirmation\": false }` -> keep one `requiresConfirmation`.\n\n\
                 Fix: remove one; the last one wins, as JSON.parse does. It is a warning: the \
                 document is still read, with the last value."
            }
        }
    }
}

impl fmt::Display for DiagnosticId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_documented() {
        let mut seen = std::collections::HashSet::new();
        for id in DiagnosticId::ALL {
            let s = id.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(s.starts_with("spec-"), "{s}");
            assert!(
                s.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{s} is not kebab-case"
            );
            assert_eq!(DiagnosticId::from_id(s), Some(*id));
            assert!(!id.summary().is_empty());
            assert!(id.explanation().contains("Why it matters"), "{s}");
        }
        assert_eq!(DiagnosticId::from_id("spec-nope"), None);
    }
}
