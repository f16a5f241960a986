//! Serde types for the modelled parts of a stack.
//!
//! The types name every key this workspace reasons about, with upstream's
//! camelCase spelling, and keep every other key in an `extra` map so that
//! serialising a parsed [`Stack`] gives back every key it was given.
//!
//! These types are *typed*: a modelled key with the wrong JSON type (or
//! `null`, which upstream's optional keys do not accept either) fails
//! [`Stack::from_json`]. Tools that must read any document use the raw
//! JSON with [`crate::collection`] and report problems with
//! [`crate::validate`], which never fails.
//!
//! Collections ([`Collection`]) may be written as arrays or as maps keyed by
//! name; both parse to the same list of records, a map entry's key becoming
//! its `name` (a map is read in JavaScript's property order, as
//! [`crate::collection`] reads it), and each serialises back in the form it
//! was written.
//!
//! The strict shapes (the `ai` block, params, param hints, tool records,
//! skills, tool bindings) still keep unknown keys here, so nothing is lost,
//! but their JSON Schema ([`crate::schema`]) forbids them and
//! [`crate::validate`] reports them.
//!
//! One module per shape, re-exported here: [`Stack`] with its objects and
//! fields, [`Action`] with its params and `ai` block, [`Tool`], [`Skill`],
//! [`Agent`]; the shared [`Collection`], the string enums and the value
//! types ([`Text`], [`Keyed`], ...).

/// Defines a string enum with its wire spelling, a list of every value and
/// a JSON Schema `enum`.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(JsonSchema))]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every value's spelling, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The value as written in JSON.
            pub fn as_str(&self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the JSON spelling.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($text => Some($name::$variant),)+ _ => None }
            }
        }
    };
}

mod action;
mod agent;
mod collection;
mod de;
mod enums;
mod skill;
mod stack;
mod tool;
mod values;

pub use action::{Action, ActionAi, ActionParam, BodyShape, Flat, ParamHint, Wrapped};
pub use agent::{Agent, AgentSkillName};
pub use collection::Collection;
pub use enums::{
    ActionLocation, ActionMode, ActionOperation, ActionType, ActionVariant, AgentSurface,
    AiCategory, BindingType, HttpMethod, SkillSurface, TriggerOperator,
};
pub use skill::{Skill, SkillToolName, TriggerCondition};
pub use stack::{Field, ModelError, Object, Stack};
pub use tool::{Tool, ToolBinding};
pub use values::{Keyed, Scalar, Text, TriggerValue};

#[cfg(test)]
mod tests;
