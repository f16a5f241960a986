//! Which actions of a stack become AI tools, and the tool definition of
//! each (ADR-0011).
//!
//! [`materialise`] walks the actions as upstream's runtime sees them after
//! `defineStack`: each object in document order with its `actions` (a
//! missing `objectName` is filled from the object), where a stack-level
//! action bound to the object (its `objectName` names it) joins the end of
//! the object's actions unless the object already holds an identical copy
//! (a built stack carries every bound action in both places); then the
//! remaining (global) stack-level actions. Each group is stable-sorted by
//! `order` when one of its actions sets it, as `defineStack` does (a no-op
//! on a built stack). Every action lands in exactly one of
//! [`Materialised::registered`] or [`Materialised::skipped`]; an action may
//! also produce a [`Warning`]. All three lists keep that walk order.
//!
//! For each action the FIRST reason that applies is reported:
//! 1. the static predicate of the `spec` crate
//!    ([`objectstack_spec::materialise::static_skip`]): `not_exposed`,
//!    `missing_description`, `invalid_ai_block`, `ui_only_type`,
//!    `unsupported_type`, `missing_target` — the lint calls the same
//!    function, so the two can never disagree;
//! 2. only when a [`Wiring`] is given: `no_automation` (a `flow` action and
//!    no automation service), `no_api_client` (an `api` action and neither
//!    an API client nor a base URL), `unsafe_api_target` (an `api` action
//!    whose target could send the request, and the client's credentials,
//!    elsewhere than below the base URL: see [`ApiScope`]),
//!    `unsendable_api_data` (a `GET` or `DELETE` `api` action whose data a
//!    query string cannot carry);
//! 3. only when a [`Wiring`] is given: `requires_confirmation` (the action
//!    needs a human's confirmation and the approval queue is not wired);
//! 4. `missing_name` (the action has no string `name`, so it has no tool
//!    name; upstream's schema makes `name` mandatory, so upstream never sees
//!    this case);
//! 5. `name_collision`: `action_<name>` is a curated platform tool, is
//!    already registered in the host (the `already_registered` callback) or
//!    was registered earlier in this walk. The name already taken wins.
//!
//! After every action, the walk visits the tool records in order
//! (ADR-0109 Phase 2; the semantics are in the crate README, "Refined
//! tools"): a bound record that the spec predicate
//! ([`objectstack_spec::materialise::refine::judge`]) says refines its
//! action or flow registers under its own name, after the action's wiring
//! checks and the name checks; one that does not is skipped with the
//! predicate's code. An action some record binds is skipped as
//! `superseded` where it would otherwise register.
//!
//! Each registered action's [`AIToolDefinition`] follows behaviour.md
//! "The tool definition" (see the crate README for the rules and the few
//! deliberate differences from the old bridge).

pub(crate) mod api;
mod definition;
mod schema;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use objectstack_spec::AIToolDefinition;
use objectstack_spec::materialise::refine::{
    self as spec_refine, Binding, RecordSkip, Reserved, Superseded, Target,
};
use objectstack_spec::materialise::surface::{object_of, surface};
use objectstack_spec::materialise::{
    ConfirmationReason, Route, StaticSkip, acts_on_one_record, asserted_safe_despite_destructive,
    destructive_signal, needs_confirmation, route_or_skip, static_skip,
};
use objectstack_spec::model::BindingType;
use objectstack_spec::{collection, json};
use serde::Serialize;
use serde::ser::SerializeStruct;
use serde_json::{Map, Value};

pub use api::ApiScope;
pub use definition::Definition;
use definition::{Fast, ObjectIndex, Owner, Refined};

/// The services a runtime has wired, which decide whether `flow` and `api`
/// actions can run and whether actions that need confirmation can be
/// queued for a human.
///
/// Pass `None` instead of a `Wiring` to apply the static checks only (what
/// the lint does).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Wiring<'a> {
    /// An automation service is present, so `flow` actions can run.
    pub automation: bool,
    /// An API client or a base URL is configured, so `api` actions can run.
    pub api_client: bool,
    /// The approval queue is wired (approval enabled and a queue that can
    /// take proposals), so actions that need confirmation can register.
    pub approval: bool,
    /// Where `api` actions may send requests (the API client's base URL and
    /// allowed origins), when `api_client` is set; the default knows no
    /// base URL and allows no other origin.
    pub api_scope: ApiScope<'a>,
}

impl Wiring<'static> {
    /// Nothing wired: a runtime with no services.
    pub const NONE: Wiring<'static> = Wiring {
        automation: false,
        api_client: false,
        approval: false,
        api_scope: ApiScope {
            base_url: None,
            allowed_origins: &[],
        },
    };

    /// Everything wired: automation, an API client (with the default
    /// [`ApiScope`]) and the approval queue.
    pub const ALL: Wiring<'static> = Wiring {
        automation: true,
        api_client: true,
        approval: true,
        api_scope: ApiScope {
            base_url: None,
            allowed_origins: &[],
        },
    };
}

/// Why an action did not become a tool: a stable machine-readable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipCode {
    /// `ai.exposed` is not `true`.
    NotExposed,
    /// Exposed, but `ai.description` is missing or empty.
    MissingDescription,
    /// The `ai` block is malformed.
    InvalidAiBlock,
    /// A UI-only type (`url`, `modal`, `form`).
    UiOnlyType,
    /// Any other type the bridge cannot dispatch, or no type.
    UnsupportedType,
    /// A `script` with neither `target` nor `body`, an `api`/`flow` with no
    /// `target`.
    MissingTarget,
    /// A `flow` action and no automation service is wired.
    NoAutomation,
    /// An `api` action and neither an API client nor a base URL is wired.
    NoApiClient,
    /// An `api` action whose `target` could send the request, and the API
    /// client's credentials, elsewhere than below the base URL (absolute,
    /// scheme-relative, backslashes, userinfo, another scheme, `..`); see
    /// [`ApiScope`].
    UnsafeApiTarget,
    /// A `GET` or `DELETE` `api` action whose data a query string cannot
    /// carry (`bodyShape.wrap`, a nested `bodyExtra` value, a row action
    /// without `recordIdParam`).
    UnsendableApiData,
    /// The action needs confirmation and the approval queue is not wired.
    RequiresConfirmation,
    /// The action has no string `name`, so it has no tool name.
    MissingName,
    /// The tool name is already taken (platform tools win).
    NameCollision,
    /// The action would register, but a tool record binds it: its
    /// refinements register instead of `action_<name>`.
    Superseded,
    /// A tool record's `binding` is malformed.
    InvalidBinding,
    /// A tool record is named like a platform tool, or under a family
    /// prefix (`action_`): a record never shadows the platform.
    ShadowsPlatform,
    /// A tool record binds an action or flow the stack does not declare.
    BindingUnresolved,
    /// A tool record binds an action that is not opted in (`ai.exposed`).
    BindingNotExposed,
    /// A tool record's own keys are malformed (`parameters`,
    /// `requiresConfirmation`).
    InvalidRecord,
    /// A tool record's `parameters` widen its action's.
    BindingWidens,
}

impl SkipCode {
    /// Every code, in the order the checks run.
    pub const ALL: &'static [SkipCode] = &[
        SkipCode::NotExposed,
        SkipCode::MissingDescription,
        SkipCode::InvalidAiBlock,
        SkipCode::UiOnlyType,
        SkipCode::UnsupportedType,
        SkipCode::MissingTarget,
        SkipCode::NoAutomation,
        SkipCode::NoApiClient,
        SkipCode::UnsafeApiTarget,
        SkipCode::UnsendableApiData,
        SkipCode::RequiresConfirmation,
        SkipCode::MissingName,
        SkipCode::NameCollision,
        SkipCode::Superseded,
        SkipCode::InvalidBinding,
        SkipCode::ShadowsPlatform,
        SkipCode::BindingUnresolved,
        SkipCode::BindingNotExposed,
        SkipCode::InvalidRecord,
        SkipCode::BindingWidens,
    ];

    /// The code as written in JSON output (`not_exposed`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SkipCode::NotExposed => "not_exposed",
            SkipCode::MissingDescription => "missing_description",
            SkipCode::InvalidAiBlock => "invalid_ai_block",
            SkipCode::UiOnlyType => "ui_only_type",
            SkipCode::UnsupportedType => "unsupported_type",
            SkipCode::MissingTarget => "missing_target",
            SkipCode::NoAutomation => "no_automation",
            SkipCode::NoApiClient => "no_api_client",
            SkipCode::UnsafeApiTarget => "unsafe_api_target",
            SkipCode::UnsendableApiData => "unsendable_api_data",
            SkipCode::RequiresConfirmation => "requires_confirmation",
            SkipCode::MissingName => "missing_name",
            SkipCode::NameCollision => "name_collision",
            SkipCode::Superseded => "superseded",
            SkipCode::InvalidBinding => "invalid_binding",
            SkipCode::ShadowsPlatform => "shadows_platform",
            SkipCode::BindingUnresolved => "binding_unresolved",
            SkipCode::BindingNotExposed => "binding_not_exposed",
            SkipCode::InvalidRecord => "invalid_record",
            SkipCode::BindingWidens => "binding_widens",
        }
    }

    /// The code of a tool record's skip reason.
    pub fn of_record(skip: &RecordSkip) -> SkipCode {
        match skip {
            RecordSkip::InvalidBinding(_) => SkipCode::InvalidBinding,
            RecordSkip::MissingName => SkipCode::MissingName,
            RecordSkip::ShadowsPlatform { .. } => SkipCode::ShadowsPlatform,
            RecordSkip::BindingUnresolved => SkipCode::BindingUnresolved,
            RecordSkip::BindingNotExposed => SkipCode::BindingNotExposed,
            RecordSkip::ActionSkipped(s) => SkipCode::of_static(s),
            RecordSkip::MissingDescription => SkipCode::MissingDescription,
            RecordSkip::InvalidRecord(_) => SkipCode::InvalidRecord,
            RecordSkip::Widens { .. } => SkipCode::BindingWidens,
        }
    }

    /// The code of a static skip reason.
    pub fn of_static(skip: &StaticSkip) -> SkipCode {
        match skip {
            StaticSkip::NotExposed => SkipCode::NotExposed,
            StaticSkip::MissingDescription => SkipCode::MissingDescription,
            StaticSkip::InvalidAiBlock(_) => SkipCode::InvalidAiBlock,
            StaticSkip::UiOnlyType(_) => SkipCode::UiOnlyType,
            StaticSkip::UnsupportedType(_) => SkipCode::UnsupportedType,
            StaticSkip::MissingTarget { .. } => SkipCode::MissingTarget,
        }
    }
}

impl fmt::Display for SkipCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for SkipCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The code of a [`Warning`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WarningCode {
    /// The action looks destructive (`confirmText`, `mode: delete` or
    /// `variant: danger`) but asserts `ai.requiresConfirmation: false`, so
    /// it registers and runs unattended.
    DestructiveUnattended,
    /// A tool record sets `requiresConfirmation: false` on an action that
    /// needs confirmation: `false` never relaxes it, and the tool stays
    /// gated.
    ConfirmationNotRelaxed,
}

impl WarningCode {
    /// The code as written in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::DestructiveUnattended => "destructive_unattended",
            WarningCode::ConfirmationNotRelaxed => "confirmation_not_relaxed",
        }
    }
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for WarningCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Where an action (or a tool record) sits in the stack, with its
/// position in the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// Position in the walk (0 for the first action visited; tool records
    /// come after every action).
    pub ordinal: usize,
    /// Lenient index of the owning object in `objects`, or `None` for a
    /// stack-level action or a tool record.
    pub object: Option<usize>,
    /// Lenient index of the action in its `actions` collection (of the
    /// record in `tools`, when `record` is set).
    pub action: usize,
    /// A tool record (`tools[action]`), not an action.
    pub record: bool,
}

impl fmt::Display for Location {
    /// The lenient JSON path: `objects[0].actions[2]`, `actions[1]` or
    /// `tools[0]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.object {
            _ if self.record => write!(f, "tools[{}]", self.action),
            Some(o) => write!(f, "objects[{o}].actions[{}]", self.action),
            None => write!(f, "actions[{}]", self.action),
        }
    }
}

/// What a refined tool refines: a bound tool record's facts, as a runtime
/// needs them to dispatch the tool as the raw one would run.
#[derive(Debug, Clone, PartialEq)]
pub struct Refines {
    /// The record's lenient index in `tools`.
    pub record: usize,
    /// Whether it binds an action or a flow.
    pub binding: BindingType,
    /// The action's or flow's name.
    pub target: String,
    /// The raw tool it supersedes (`action_<name>`; `None` for a flow).
    pub supersedes: Option<String>,
    /// Properties pinned with `const`: the runtime sends these values.
    pub pins: Map<String, Value>,
    /// The bound action's own materialised `parameters`, when the record
    /// narrows them: a call is checked against them too before it runs.
    pub action_parameters: Option<Map<String, Value>>,
}

/// [`Refines`], borrowed from the document.
#[derive(Debug, Clone)]
pub struct Refinement<'a> {
    /// The record's lenient index in `tools`.
    pub record: usize,
    /// What it binds.
    pub binding: Binding<'a>,
    /// Properties pinned with `const`.
    pub pins: Vec<(&'a str, &'a json::Value<'a>)>,
    /// The bound action's own definition, when the record narrows its
    /// parameters.
    pub action: Option<Definition<'a>>,
}

impl Refinement<'_> {
    /// An owned copy.
    pub fn to_refines(&self) -> Refines {
        Refines {
            record: self.record,
            binding: match self.binding {
                Binding::Action(_) => BindingType::Action,
                Binding::Flow(_) => BindingType::Flow,
            },
            target: self.binding.name().to_owned(),
            supersedes: match self.binding {
                Binding::Action(name) => Some(objectstack_registry::action_tool_name(name)),
                Binding::Flow(_) => None,
            },
            pins: self
                .pins
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.to_serde()))
                .collect(),
            action_parameters: self.action.as_ref().map(|d| d.to_definition().parameters),
        }
    }
}

/// An action that became a tool: its definition plus what a runtime needs
/// to dispatch it.
#[derive(Debug, Clone, PartialEq)]
pub struct Registered<'a> {
    /// The tool definition handed to an agent runtime.
    pub definition: AIToolDefinition,
    /// The action's `name`.
    pub action_name: String,
    /// The object the action acts on (its `objectName`, else the owning
    /// object's name).
    pub object: Option<String>,
    /// How the action is dispatched.
    pub route: Route,
    /// Why calls need a human's confirmation, if they do (the value behind
    /// `definition.requires_confirmation`).
    pub confirmation: Option<ConfirmationReason>,
    /// The destructive signal the action carries, whatever
    /// `ai.requiresConfirmation` says.
    pub destructive: Option<ConfirmationReason>,
    /// Whether the definition carries the injected (required) `recordId`
    /// parameter: the action has an object and a row-context location, or
    /// is a field write (`objectstack_spec::materialise::acts_on_one_record`).
    pub row_context: bool,
    /// Where the action sits in the stack (the record, for a refinement).
    pub location: Location,
    /// The action's JSON, copied out of the document. For a flow-bound
    /// record: the flow as an action (`type: flow`, `target`
    /// the flow), which is how it is dispatched.
    pub action: Cow<'a, Map<String, Value>>,
    /// Set when a bound tool record registered this tool (ADR-0109
    /// Phase 2): what it refines.
    pub refines: Option<Refines>,
}

impl Registered<'_> {
    /// Detaches the registration from the stack it was read from.
    pub fn into_owned(self) -> Registered<'static> {
        Registered {
            definition: self.definition,
            action_name: self.action_name,
            object: self.object,
            route: self.route,
            confirmation: self.confirmation,
            destructive: self.destructive,
            row_context: self.row_context,
            location: self.location,
            action: Cow::Owned(self.action.into_owned()),
            refines: self.refines,
        }
    }
}

/// An action that became a tool, borrowed from the document it was read
/// from, as [`materialise_each`] reports it: the same facts as a
/// [`Registered`], with nothing copied.
#[derive(Debug, Clone)]
pub struct Registration<'a> {
    /// The tool definition; it serialises as an [`AIToolDefinition`].
    pub definition: Definition<'a>,
    /// The action's `name`.
    pub action_name: &'a str,
    /// The object the action acts on (its `objectName`, else the owning
    /// object's name).
    pub object: Option<&'a str>,
    /// How the action is dispatched.
    pub route: Route,
    /// Why calls need a human's confirmation, if they do.
    pub confirmation: Option<ConfirmationReason>,
    /// The destructive signal the action carries, whatever
    /// `ai.requiresConfirmation` says.
    pub destructive: Option<ConfirmationReason>,
    /// Whether the definition carries the injected `recordId` parameter.
    pub row_context: bool,
    /// Where the action sits in the stack (the record, for a refinement).
    pub location: Location,
    /// The action in the document (for a flow-bound record, the flow as
    /// an action, built in the arena).
    pub action: &'a json::Map<'a>,
    /// Set when a bound tool record registered this tool.
    pub refinement: Option<Refinement<'a>>,
}

impl Registration<'_> {
    /// An owned [`Registered`], detached from the document.
    pub fn to_registered(&self) -> Registered<'static> {
        Registered {
            definition: self.definition.to_definition(),
            action_name: self.action_name.to_owned(),
            object: self.object.map(str::to_owned),
            route: self.route,
            confirmation: self.confirmation,
            destructive: self.destructive,
            row_context: self.row_context,
            location: self.location,
            action: Cow::Owned(self.action.to_serde()),
            refines: self.refinement.as_ref().map(Refinement::to_refines),
        }
    }
}

/// An action that did not become a tool, and why.
///
/// Serialises as `{"action", "tool"?, "object", "code", "reason"}` (`tool`
/// only for a tool record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The action's `name`, or `#<index>` in its collection when it has
    /// none; for a tool record, what it binds (or `#<index>`).
    pub action: String,
    /// For a tool record: its `name`, or `#<index>` in `tools`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The object the action acts on, when known.
    pub object: Option<String>,
    /// The machine-readable reason.
    pub code: SkipCode,
    /// What is wrong and how to change it, for a person.
    pub reason: String,
    /// Where the action sits in the stack.
    #[serde(skip)]
    pub location: Location,
}

/// Something a person should know about an action that did register.
///
/// Serialises as `{"action", "object", "code", "warning"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The action's `name`.
    pub action: String,
    /// The object the action acts on, when known.
    pub object: Option<String>,
    /// The machine-readable kind.
    pub code: WarningCode,
    /// The message.
    pub warning: String,
    /// Where the action sits in the stack.
    #[serde(skip)]
    pub location: Location,
}

/// The outcome of [`materialise`]: every action of the stack, sorted into
/// registered and skipped, in walk order.
///
/// Serialises as `{"registered": [AIToolDefinition...], "skipped": [...],
/// "warnings": [...]}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Materialised<'a> {
    /// The actions that became tools.
    pub registered: Vec<Registered<'a>>,
    /// The actions that did not, each with the first reason that applied.
    pub skipped: Vec<Skipped>,
    /// Warnings about registered actions.
    pub warnings: Vec<Warning>,
}

impl Materialised<'_> {
    /// Detaches the outcome from the stack it was read from.
    pub fn into_owned(self) -> Materialised<'static> {
        Materialised {
            registered: self
                .registered
                .into_iter()
                .map(Registered::into_owned)
                .collect(),
            skipped: self.skipped,
            warnings: self.warnings,
        }
    }

    /// The registered tool definitions, in walk order.
    pub fn definitions(&self) -> impl Iterator<Item = &AIToolDefinition> {
        self.registered.iter().map(|r| &r.definition)
    }
}

impl Serialize for Materialised<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Definitions<'s, 'a>(&'s [Registered<'a>]);
        impl Serialize for Definitions<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().map(|r| &r.definition))
            }
        }
        let mut s = serializer.serialize_struct("Materialised", 3)?;
        s.serialize_field("registered", &Definitions(&self.registered))?;
        s.serialize_field("skipped", &self.skipped)?;
        s.serialize_field("warnings", &self.warnings)?;
        s.end()
    }
}

/// The events of one walk, gathered into a [`Materialised`].
fn collect<'a>(walk: impl FnOnce(&mut dyn FnMut(Event<Registered<'a>>))) -> Materialised<'a> {
    let mut out = Materialised::default();
    walk(&mut |event| match event {
        Event::Registered(r) => out.registered.push(r),
        Event::Skipped(s) => out.skipped.push(s),
        Event::Warning(w) => out.warnings.push(w),
    });
    out
}

/// One outcome of the walk, as [`materialise_each`] reports it (with a
/// [`Registration`]; [`materialise`] collects them with a [`Registered`]).
// Events are moved once, never stored as events: boxing the large variant
// would cost an allocation per action for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Event<R> {
    /// An action became a tool.
    Registered(R),
    /// An action did not become a tool.
    Skipped(Skipped),
    /// A warning about the action reported next (registered, or skipped
    /// as a name collision).
    Warning(Warning),
}

/// Materialises a stack's actions as AI tools.
///
/// `stack` is the borrowed document ([`objectstack_spec::json`]); a caller
/// holding a `serde_json` value borrows it with
/// [`json::Map::from_serde`]. `wiring` is the runtime's services (`None`:
/// static checks only, see the module docs). `already_registered` says
/// whether the host already has a tool of that name; curated platform tool
/// names ([`objectstack_registry::is_platform_tool`]) are always taken,
/// whatever it says. Lookups of objects and fields are hashed, so the work
/// is linear in the size of the stack. Map-shaped collections build their
/// records in `arena`; the registrations are copied out of the document
/// ([`Registration::to_registered`]).
///
/// ```
/// use objectstack_bridge::materialise::{Wiring, materialise};
/// use objectstack_spec::json::{self, Arena};
/// let arena = Arena::new();
/// let stack = json::parse_document(br#"{"actions": [{"name": "ping", "type": "script",
///     "target": "ping", "ai": {"exposed": true, "description": "Pings."}}]}"#, &arena)?;
/// let m = materialise(stack, &arena, Some(&Wiring::ALL), &|_| false);
/// assert_eq!(m.registered[0].definition.name, "action_ping");
/// # Ok::<(), objectstack_spec::parse::ParseError>(())
/// ```
pub fn materialise<'a>(
    stack: &'a json::Map<'a>,
    arena: &'a json::Arena,
    wiring: Option<&Wiring>,
    already_registered: &dyn Fn(&str) -> bool,
) -> Materialised<'a> {
    collect(|on_event| {
        let mut forward = |event: Event<Registration<'a>>| {
            on_event(match event {
                Event::Registered(r) => Event::Registered(r.to_registered()),
                Event::Skipped(s) => Event::Skipped(s),
                Event::Warning(w) => Event::Warning(w),
            });
        };
        materialise_each(stack, arena, wiring, already_registered, &mut forward);
    })
}

/// Whether `own`, an action of object `object`, is the copy of the
/// stack-level action `bound` (bound to that object) that `defineStack`
/// puts there: equal to it once its missing (or `null`) `objectName` is
/// filled from the object, as both copies are by the time the runtime
/// walks them.
fn is_echo(own: &json::Map<'_>, bound: &json::Map<'_>, object: &str) -> bool {
    const OBJECT_NAME: &str = "objectName";
    let filled = match own.get(OBJECT_NAME) {
        None | Some(json::Value::Null) => Some(object),
        Some(value) => value.as_str(),
    };
    let others = |m: &json::Map<'_>| m.len() - usize::from(m.contains_key(OBJECT_NAME));
    filled.is_some()
        && filled == bound.get(OBJECT_NAME).and_then(json::Value::as_str)
        && others(own) == others(bound)
        && own
            .iter()
            .filter(|(key, _)| *key != OBJECT_NAME)
            .all(|(key, value)| bound.get(key) == Some(value))
}

/// [`materialise`], reporting each outcome as it is decided instead of
/// collecting them, so a caller can stream definitions out without holding
/// them all; each registration is borrowed from the document
/// ([`Registration`]), so a large stack's definitions can be written out
/// without copying anything. Events come in walk order; a
/// [`Event::Warning`] comes just before the [`Event::Registered`] of its
/// action, or before its [`Event::Skipped`] when the name then collides
/// (upstream warns before it checks the name). Map-shaped collections
/// build their records in `arena`.
pub fn materialise_each<'a>(
    stack: &'a json::Map<'a>,
    arena: &'a json::Arena,
    wiring: Option<&Wiring>,
    already_registered: &dyn Fn(&str) -> bool,
    on_event: &mut dyn FnMut(Event<Registration<'a>>),
) {
    let objects = collection::records(stack.get("objects"), arena);
    let stack_actions = collection::records(stack.get("actions"), arena);
    let index = ObjectIndex::build(&objects);
    // As `defineStack` does, a stack-level action bound to an object (its
    // `objectName` names one) joins that object's actions; the others
    // (global actions) are walked after every object.
    let mut bound: HashMap<&'a str, Vec<usize>, Fast> = HashMap::default();
    let mut global = Vec::new();
    for (i, action) in stack_actions.iter().enumerate() {
        match action.str("objectName").filter(|n| index.contains(n)) {
            Some(name) => bound.entry(name).or_default().push(i),
            None => global.push(i),
        }
    }
    let tools = collection::records(stack.get("tools"), arena);
    let superseded = Superseded::of(tools.iter().map(|t| t.fields));
    let mut walk = Walk {
        wiring,
        already_registered,
        index: &index,
        arena,
        taken: HashMap::default(),
        taken_records: HashMap::default(),
        emit: on_event,
        ordinal: 0,
        superseded: &superseded,
        bound: HashMap::default(),
    };
    for (object_index, object) in objects.iter().enumerate() {
        let object_name = object.name();
        let joining = object_name.and_then(|n| bound.get(n));
        // An object's own array of actions, none ordered and none joining
        // from the stack's: walked as written, with no list of them built
        // (a served stack may give one object tens of thousands).
        if let (None, Some(json::Value::Array(items))) = (joining, object.get("actions"))
            && !items
                .iter()
                .any(|a| a.as_object().is_some_and(|a| a.contains_key("order")))
        {
            for (at, action) in items.iter().filter_map(json::Value::as_object).enumerate() {
                walk.visit(
                    action,
                    Some(object_index),
                    at,
                    Some(object_index),
                    object_name,
                );
            }
            continue;
        }
        // Sized exactly and filled from the records, which are dropped: a
        // `collect` would keep the records' larger buffer, grown by
        // doubling, for the whole walk of the object.
        let records = collection::records(object.get("actions"), arena);
        let mut group: Vec<Member<'a>> =
            Vec::with_capacity(records.len() + joining.map_or(0, Vec::len));
        group.extend(records.iter().map(|a| Member {
            at: a.index(),
            own: true,
            action: a.fields,
        }));
        drop(records);
        if let Some(joining) = joining {
            let own = group.len();
            for &i in joining {
                let Some(action) = stack_actions.get(i) else {
                    continue;
                };
                // A built stack (`defineStack`'s output) carries each bound
                // action twice: in `actions` and in its object's `actions`.
                // The copy the object already holds is the same action.
                let name = action.name();
                let echo = group.get(..own).unwrap_or_default().iter().any(|m| {
                    m.action.get("name").and_then(json::Value::as_str) == name
                        && object_name.is_some_and(|o| is_echo(m.action, action.fields, o))
                });
                if !echo {
                    group.push(Member {
                        at: action.index(),
                        own: false,
                        action: action.fields,
                    });
                }
            }
        }
        sort_by_order(&mut group);
        for member in group {
            let location_object = member.own.then_some(object_index);
            walk.visit(
                member.action,
                location_object,
                member.at,
                Some(object_index),
                object_name,
            );
        }
    }
    let mut group: Vec<Member<'a>> = global
        .into_iter()
        .filter_map(|i| stack_actions.get(i))
        .map(|a| Member {
            at: a.index(),
            own: false,
            action: a.fields,
        })
        .collect();
    sort_by_order(&mut group);
    for member in group {
        walk.visit(member.action, None, member.at, None, None);
    }
    // The tool records, after every action: each bound record registers
    // its refinement, or is skipped with the first reason.
    if tools
        .iter()
        .any(|t| spec_refine::binding(t.fields).is_some())
    {
        let flows: std::collections::HashSet<&str, Fast> =
            collection::records(stack.get("flows"), arena)
                .iter()
                .filter_map(|f| f.name())
                .collect();
        for record in &tools {
            walk.refine(record, &flows);
        }
    }
}

/// Where an action the walk registered is written: a [`Location`] less its
/// ordinal, in eight bytes (the walk keeps one for every action it
/// registers, and a served stack may have tens of thousands).
#[derive(Debug, Clone, Copy)]
struct Place {
    /// The object's index, or `u32::MAX` for a stack-level action.
    object: u32,
    action: u32,
}

impl Place {
    /// An index past `u32::MAX - 1` (a stack of billions of actions, more
    /// than any file this reads) is shown as `u32::MAX - 1`.
    fn of(location: Location) -> Self {
        let narrow = |i: usize| u32::try_from(i).unwrap_or(u32::MAX - 1).min(u32::MAX - 1);
        Place {
            object: location.object.map_or(u32::MAX, narrow),
            action: narrow(location.action),
        }
    }

    fn object(self) -> Option<usize> {
        (self.object != u32::MAX).then_some(self.object as usize)
    }
}

impl fmt::Display for Place {
    /// As [`Location`] shows an action.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.object() {
            Some(o) => write!(f, "objects[{o}].actions[{}]", self.action),
            None => write!(f, "actions[{}]", self.action),
        }
    }
}

/// An action in the order of its group (one object's actions, or the
/// global stack-level actions).
struct Member<'a> {
    /// Its lenient index in the collection it was written in.
    at: usize,
    /// Written in the object's own `actions` (else in the stack's).
    own: bool,
    action: &'a json::Map<'a>,
}

/// Stable-sorts a group of actions by their `order` (a missing or
/// non-numeric `order` counts as 0), as `defineStack` does when any action
/// of the group sets one. A built stack is already in that order.
fn sort_by_order(group: &mut [Member<'_>]) {
    if !group.iter().any(|m| m.action.contains_key("order")) {
        return;
    }
    let key = |m: &Member<'_>| {
        m.action
            .get("order")
            .and_then(json::Value::as_f64)
            .unwrap_or(0.0)
    };
    group.sort_by(|a, b| {
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
}

/// The state of one walk over a stack.
struct Walk<'w, 'a> {
    wiring: Option<&'w Wiring<'w>>,
    already_registered: &'w dyn Fn(&str) -> bool,
    index: &'w ObjectIndex<'a>,
    arena: &'a json::Arena,
    /// The actions registered in this walk, by name (each took the tool
    /// name `action_<name>`), with where they came from.
    taken: HashMap<&'a str, Place, Fast>,
    /// The refinements registered in this walk, by record name.
    taken_records: HashMap<&'a str, Location, Fast>,
    emit: &'w mut dyn FnMut(Event<Registration<'a>>),
    ordinal: usize,
    /// The actions tool records bind.
    superseded: &'w Superseded<'a>,
    /// For each action a record binds, every action of that name the walk
    /// met (see [`Walk::bound_action`] for the one records refine).
    bound: HashMap<&'a str, Vec<Bound<'a>>, Fast>,
}

/// An action some tool record binds, as the walk met it.
#[derive(Debug, Clone, Copy)]
struct Bound<'a> {
    action: &'a json::Map<'a>,
    /// The object its tool acts on.
    object: Option<&'a str>,
    /// The object whose actions it belongs to.
    owner: Option<usize>,
    location: Location,
}

impl<'a> Walk<'_, 'a> {
    /// Judges one action. `object_index` is where it is written (`None`:
    /// the stack's `actions`); `owner` is the object whose actions it
    /// belongs to (where it is written, or the object a bound stack-level
    /// action joins), with its name.
    fn visit(
        &mut self,
        action: &'a json::Map<'a>,
        object_index: Option<usize>,
        action_index: usize,
        owner: Option<usize>,
        owner_name: Option<&'a str>,
    ) {
        let location = Location {
            ordinal: self.ordinal,
            object: object_index,
            action: action_index,
            record: false,
        };
        self.ordinal += 1;
        let name = action.get("name").and_then(json::Value::as_str);
        // `action.objectName ?? owner.name`: only a missing (or null)
        // `objectName` is filled; one that is empty or not a string names
        // no object and is not replaced.
        let object = object_of(action, owner_name);
        if let Some(name) = name
            && self.superseded.contains(name)
        {
            self.bound.entry(name).or_default().push(Bound {
                action,
                object,
                owner,
                location,
            });
        }
        let skip = |code: SkipCode, reason: String| Skipped {
            action: name.map_or_else(|| format!("#{action_index}"), str::to_owned),
            tool: None,
            object: object.map(str::to_owned),
            code,
            reason,
            location,
        };

        if let Some(reason) = static_skip(action) {
            let skipped = skip(SkipCode::of_static(&reason), reason.reason());
            (self.emit)(Event::Skipped(skipped));
            return;
        }
        let route = match route_or_skip(action) {
            Ok(route) => route,
            // Unreachable while `static_skip` agrees with `route_or_skip`;
            // reported rather than assumed.
            Err(reason) => {
                let skipped = skip(SkipCode::of_static(&reason), reason.reason());
                (self.emit)(Event::Skipped(skipped));
                return;
            }
        };
        let confirmation = needs_confirmation(action);
        let row_context = object.is_some() && acts_on_one_record(action);
        if let Some(wiring) = self.wiring
            && let Some((code, reason)) =
                wiring_skip(wiring, action, route, row_context, confirmation)
        {
            (self.emit)(Event::Skipped(skip(code, reason)));
            return;
        }
        let Some(name) = name else {
            let reason = "the action has no `name`, so it has no tool name: give it a snake_case \
                          `name`"
                .to_owned();
            (self.emit)(Event::Skipped(skip(SkipCode::MissingName, reason)));
            return;
        };
        let tool_name = objectstack_registry::action_tool_name(name);
        if self.superseded.contains(name) {
            let by = self.superseded.refined_by(name);
            let reason = if by.is_empty() {
                format!(
                    "`{tool_name}` is superseded: a tool record binds action `{name}`, so its \
                     refinements register instead (give the record a name to register it)"
                )
            } else {
                format!(
                    "`{tool_name}` is superseded: the tool {} {} {} action `{name}`, so the \
                     refinements among them register instead (a record that is itself skipped \
                     still supersedes it)",
                    if by.len() == 1 { "record" } else { "records" },
                    by.iter()
                        .map(|b| format!("`{b}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if by.len() == 1 { "binds" } else { "bind" },
                )
            };
            (self.emit)(Event::Skipped(skip(SkipCode::Superseded, reason)));
            return;
        }
        let destructive = destructive_signal(action);
        // As upstream, the warning is raised before the name is checked, so
        // an action that then collides is still warned about.
        if asserted_safe_despite_destructive(action) {
            let signal = destructive.map_or("a destructive signal", |d| d.as_source());
            (self.emit)(Event::Warning(Warning {
                action: name.to_owned(),
                object: object.map(str::to_owned),
                code: WarningCode::DestructiveUnattended,
                warning: format!(
                    "`{tool_name}` looks destructive (`{signal}`) but sets \
                     `ai.requiresConfirmation: false`, so the AI runs it without a human's \
                     approval; remove the override to route calls through the approval queue, \
                     or keep it if running unattended is intended"
                ),
                location,
            }));
        }
        // A stack-level copy of an action its object holds too (a built
        // stack lists each bound action in both places) that differs from
        // the object's copy.
        let stale_copy = object_index.is_none()
            && owner.is_some()
            && self
                .taken
                .get(name)
                .is_some_and(|first| first.object() == owner);
        if let Some(reason) = self.collision(name, &tool_name, stale_copy) {
            (self.emit)(Event::Skipped(skip(SkipCode::NameCollision, reason)));
            return;
        }

        let owner = Owner {
            name: object,
            object: owner.and_then(|i| self.index.at(i)),
        };
        let definition = definition::build(
            tool_name,
            action,
            &owner,
            self.index,
            self.arena,
            confirmation.is_some(),
            row_context,
        );
        self.taken.insert(name, Place::of(location));
        (self.emit)(Event::Registered(Registration {
            definition,
            action_name: name,
            object,
            route,
            confirmation,
            destructive,
            row_context,
            location,
            action,
            refinement: None,
        }));
    }

    /// The action a record bound to `name` refines: of the actions of that
    /// name, the first that materialises, else the first, in the order the
    /// lint scans them (stack-level actions, then each object's), so that
    /// both judge a record against the same action.
    fn bound_action(&self, name: &str) -> Option<Bound<'a>> {
        let candidates = self.bound.get(name)?;
        let scan = |b: &&Bound<'a>| {
            (
                b.location.object.is_some(),
                b.location.object,
                b.location.action,
            )
        };
        candidates
            .iter()
            .filter(|b| static_skip(b.action).is_none())
            .min_by_key(scan)
            .or_else(|| candidates.iter().min_by_key(scan))
            .copied()
    }

    /// Judges one tool record (a no-op for an unbound one).
    fn refine(
        &mut self,
        record: &collection::Record<'a>,
        flows: &std::collections::HashSet<&str, Fast>,
    ) {
        let fields = record.fields;
        let Some(binding) = spec_refine::binding(fields) else {
            return;
        };
        let location = Location {
            ordinal: self.ordinal,
            object: None,
            action: record.index(),
            record: true,
        };
        self.ordinal += 1;
        let binding = binding.ok();
        let bound = match binding {
            Some(Binding::Action(name)) => self.bound_action(name),
            _ => None,
        };
        let tool_label = record
            .name()
            .map_or_else(|| format!("#{}", record.index()), str::to_owned);
        let skip = |code: SkipCode, reason: String| Skipped {
            action: binding.map_or_else(|| format!("#{}", record.index()), |b| b.name().to_owned()),
            tool: Some(tool_label.clone()),
            object: bound.and_then(|b| b.object).map(str::to_owned),
            code,
            reason,
            location,
        };
        // The action's surface, when it materialises.
        let row_context = bound.is_some_and(|b| b.object.is_some() && acts_on_one_record(b.action));
        let owner_fields = bound.and_then(|b| b.owner).and_then(|i| self.index.at(i));
        let action_surface = bound
            .filter(|b| static_skip(b.action).is_none())
            .map(|b| surface(b.action, owner_fields, self.index, self.arena, row_context));
        let target = match (binding, bound) {
            (Some(Binding::Action(_)), Some(b)) => Target::Action {
                action: b.action,
                surface: action_surface.as_ref(),
            },
            (Some(Binding::Flow(name)), _) if flows.contains(name) => Target::Flow,
            _ => Target::Missing,
        };
        let reserved = Reserved {
            platform: &objectstack_registry::owner,
            family_prefixes: objectstack_registry::FAMILY_PREFIXES,
        };
        let refinement = match spec_refine::judge(fields, target, reserved) {
            Ok(Some(r)) => r,
            // Unreachable: the record has a binding.
            Ok(None) => return,
            Err(why) => {
                let skipped = skip(SkipCode::of_record(&why), why.reason(binding));
                (self.emit)(Event::Skipped(skipped));
                return;
            }
        };
        let gate = (refinement.requires_confirmation == Some(true))
            .then_some(ConfirmationReason::AiRequiresConfirmation);
        let (action, object, route, confirmation, raw) = match bound {
            Some(b) => {
                let Ok(route) = route_or_skip(b.action) else {
                    return;
                };
                let confirmation = needs_confirmation(b.action).or(gate);
                let owner = Owner {
                    name: b.object,
                    object: owner_fields,
                };
                let raw = definition::build(
                    objectstack_registry::action_tool_name(refinement.binding.name()),
                    b.action,
                    &owner,
                    self.index,
                    self.arena,
                    confirmation.is_some(),
                    row_context,
                );
                (b.action, b.object, route, confirmation, Some(raw))
            }
            None => {
                let object = fields
                    .get("objectName")
                    .and_then(json::Value::as_str)
                    .filter(|o| !o.is_empty());
                (
                    flow_action(self.arena, refinement.binding.name(), object),
                    object,
                    Route::Flow,
                    gate,
                    None,
                )
            }
        };
        if let Some(wiring) = self.wiring
            && let Some((code, reason)) =
                wiring_skip(wiring, action, route, row_context, confirmation)
        {
            (self.emit)(Event::Skipped(skip(code, reason)));
            return;
        }
        let name = refinement.name;
        if refinement.relaxes_confirmation {
            (self.emit)(Event::Warning(Warning {
                action: refinement.binding.name().to_owned(),
                object: object.map(str::to_owned),
                code: WarningCode::ConfirmationNotRelaxed,
                warning: format!(
                    "tool record `{name}` sets `requiresConfirmation: false`, but action `{}` \
                     needs confirmation (`{}`): a refinement never relaxes it, so calls to \
                     `{name}` still wait for a human; remove the key, or change the action",
                    refinement.binding.name(),
                    needs_confirmation(action).map_or("", |c| c.as_source())
                ),
                location,
            }));
        }
        if let Some(first) = self.taken_records.get(name) {
            let reason = format!(
                "`{name}` is already registered by the tool record at {first}: record names must \
                 be unique, so rename one of them"
            );
            (self.emit)(Event::Skipped(skip(SkipCode::NameCollision, reason)));
            return;
        }
        if (self.already_registered)(name) {
            let reason = format!(
                "`{name}` is already registered in this runtime, and the tool registered first \
                 wins: rename the record"
            );
            (self.emit)(Event::Skipped(skip(SkipCode::NameCollision, reason)));
            return;
        }
        let definition = definition::refined(
            fields,
            &Refined {
                action: raw.as_ref(),
                object_name: object,
                requires_confirmation: confirmation.is_some(),
            },
        );
        self.taken_records.insert(name, location);
        let narrowed = fields
            .get("parameters")
            .and_then(json::Value::as_object)
            .is_some();
        (self.emit)(Event::Registered(Registration {
            definition,
            action_name: match bound {
                Some(_) => action
                    .get("name")
                    .and_then(json::Value::as_str)
                    .unwrap_or_default(),
                None => refinement.binding.name(),
            },
            object,
            route,
            confirmation,
            destructive: destructive_signal(action),
            row_context,
            location,
            action,
            refinement: Some(Refinement {
                record: record.index(),
                binding: refinement.binding,
                pins: refinement.pins,
                action: raw.filter(|_| narrowed),
            }),
        }));
    }

    /// Why the action `name` cannot be registered as `tool_name`, if it
    /// cannot.
    /// `stale_copy`: the action is a stack-level copy of one its object
    /// already registered, and differs from it.
    fn collision(&self, name: &str, tool_name: &str, stale_copy: bool) -> Option<String> {
        if let Some(package) = objectstack_registry::owner(tool_name) {
            return Some(format!(
                "`{tool_name}` is a platform tool registered by `{package}`, and platform tools \
                 win: rename the action"
            ));
        }
        if let Some(first) = self.taken.get(name) {
            if stale_copy {
                return Some(format!(
                    "`{tool_name}` is registered from the object's copy of the action at \
                     {first}, and this copy in the stack's `actions` differs from it: a built \
                     stack lists each of an object's actions in both places, so the two must \
                     match. Edit both alike, or rebuild the stack (`os compile`); the object's \
                     copy is the one served"
                ));
            }
            return Some(format!(
                "`{tool_name}` is already registered by the action at {first}: action names must \
                 be unique across the stack, so rename one of them"
            ));
        }
        if (self.already_registered)(tool_name) {
            return Some(format!(
                "`{tool_name}` is already registered in this runtime, and the tool registered \
                 first wins: rename the action"
            ));
        }
        None
    }
}

/// A flow as the action that runs it: `{name, type: flow, target, ai}`
/// (built in `arena`), so a flow-bound record is dispatched, queued and
/// digested exactly as a `flow` action is.
fn flow_action<'a>(
    arena: &'a json::Arena,
    flow: &'a str,
    object: Option<&'a str>,
) -> &'a json::Map<'a> {
    let ai = json::Map::from_entries(
        arena,
        &[
            ("exposed", json::Value::Bool(true)),
            ("description", json::Value::String(flow)),
        ],
    );
    let mut entries = vec![
        ("name", json::Value::String(flow)),
        ("type", json::Value::String("flow")),
        ("target", json::Value::String(flow)),
        ("ai", json::Value::Object(ai)),
    ];
    if let Some(object) = object {
        entries.push(("objectName", json::Value::String(object)));
    }
    json::Map::from_entries(arena, &entries)
}

/// The wiring checks (steps 7 and 8 of behaviour.md, with the api checks
/// between them), in order.
fn wiring_skip(
    wiring: &Wiring<'_>,
    action: &json::Map<'_>,
    route: Route,
    row_context: bool,
    confirmation: Option<ConfirmationReason>,
) -> Option<(SkipCode, String)> {
    match route {
        Route::Flow if !wiring.automation => {
            return Some((
                SkipCode::NoAutomation,
                "a `flow` action runs through the automation service, and none is wired: \
                 register an automation service with the runtime"
                    .to_owned(),
            ));
        }
        Route::Api if !wiring.api_client => {
            return Some((
                SkipCode::NoApiClient,
                "an `api` action needs an API client or a base URL to resolve its target, and \
                 neither is configured: configure one in the runtime"
                    .to_owned(),
            ));
        }
        Route::Api => {
            let target = action
                .get("target")
                .and_then(json::Value::as_str)
                .unwrap_or_default();
            if let Err(reason) = wiring.api_scope.check(target) {
                return Some((SkipCode::UnsafeApiTarget, reason));
            }
            if let Some(reason) = api::unsendable(action, row_context) {
                return Some((SkipCode::UnsendableApiData, reason));
            }
        }
        _ => {}
    }
    if let Some(why) = confirmation
        && !wiring.approval
    {
        return Some((
            SkipCode::RequiresConfirmation,
            format!(
                "the action needs a human's confirmation (`{}`) and the approval queue is not \
                 wired, so it cannot run unattended: wire the approval queue, or set \
                 `ai.requiresConfirmation: false` if it is safe to run without one",
                why.as_source()
            ),
        ));
    }
    None
}

#[cfg(test)]
mod tests;
