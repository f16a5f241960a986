//! Bound tool records: which records refine which executable, which raw
//! `action_<name>` tools they supersede, and whether each refinement only
//! narrows (ADR-0109 decisions 4 and 5).
//!
//! This is the one predicate over tool records. The bridge's registration,
//! the lint's universe and rules, the capabilities view and the conformance
//! kit all call it:
//!
//! - [`binding`] reads a record's `binding`;
//! - [`Superseded`] says which actions a record binds: when ANY record binds
//!   action `x`, `action_x` is not registered (a broken refinement hides the
//!   raw tool too, so the surface the author narrowed never leaks);
//! - [`judge`] says whether one bound record refines its executable, and if
//!   not, the first reason, in this order: the binding is malformed
//!   (`invalid_binding`), the record has no usable name (`missing_name`),
//!   the name is reserved (`shadows_platform`: a platform tool, or under a
//!   family prefix such as `action_`), the executable is not declared
//!   (`binding_unresolved`), the action does not materialise
//!   (`binding_not_exposed`, or the action's own static reason), a flow's
//!   record has no description of 40 characters (`missing_description`),
//!   the record's own keys are malformed (`invalid_record`), the record's
//!   parameters widen the action's (`binding_widens`).
//!
//! Narrowing: every property of the record's `parameters` must exist in the
//! action's materialised [`Surface`], with the same JSON type (`integer`
//! narrows `number`); an `enum` may only keep values the action allows, or
//! be added where the action has none; a parameter the action requires
//! stays required, or is pinned with `const` (the runtime then sends the
//! pinned value); `additionalProperties`, when written, is `false`. A record
//! without `parameters` takes the action's.
//!
//! Confirmation: `requiresConfirmation: true` gates the tool; `false` never
//! relaxes an action that needs confirmation ([`Refinement::relaxes_confirmation`]
//! says so, and the tool stays gated).

use std::collections::HashMap;
use std::fmt;

use super::StaticSkip;
use super::surface::Surface;
use crate::json::{Map, Value, kind};
use crate::text::{is_snake_name, utf16_len};

/// The least description a flow-bound record needs: it is the flow's
/// opt-in, and the model decides from it alone when to call the flow.
pub const MIN_FLOW_DESCRIPTION: usize = 40;

/// What a well-formed `binding` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding<'a> {
    /// An action, by name.
    Action(&'a str),
    /// A flow, by name.
    Flow(&'a str),
}

impl<'a> Binding<'a> {
    /// The action or flow's name.
    pub fn name(self) -> &'a str {
        match self {
            Binding::Action(n) | Binding::Flow(n) => n,
        }
    }

    /// `action` or `flow`.
    pub fn kind(self) -> &'static str {
        match self {
            Binding::Action(_) => "action",
            Binding::Flow(_) => "flow",
        }
    }
}

impl fmt::Display for Binding<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}`", self.kind(), self.name())
    }
}

/// A record's binding: `None` when it has none (or `null`: an unbound,
/// inert record), `Some(Err(fault))` when it is malformed.
pub fn binding<'a>(record: &Map<'a>) -> Option<Result<Binding<'a>, String>> {
    let value = match record.get("binding") {
        None | Some(Value::Null) => return None,
        Some(v) => v,
    };
    let Value::Object(b) = value else {
        return Some(Err(format!(
            "`binding` must be an object `{{type, name}}`, found {}",
            kind(value)
        )));
    };
    let name = match b.get("name") {
        Some(Value::String(n)) if !n.is_empty() => *n,
        Some(other) => {
            return Some(Err(format!(
                "`binding.name` must be a non-empty string, found {}",
                crate::json::kind(other)
            )));
        }
        None => return Some(Err("`binding` has no `name`".to_owned())),
    };
    Some(match b.get("type").and_then(Value::as_str) {
        Some("action") => Ok(Binding::Action(name)),
        Some("flow") => Ok(Binding::Flow(name)),
        _ => Err("`binding.type` must be \"action\" or \"flow\"".to_owned()),
    })
}

/// The action a record binds, when its binding is well formed and names one.
pub fn bound_action<'a>(record: &Map<'a>) -> Option<&'a str> {
    match binding(record) {
        Some(Ok(Binding::Action(name))) => Some(name),
        _ => None,
    }
}

/// The actions some record binds, with the names of the records that bind
/// each (in record order): their raw `action_<name>` tools are superseded.
#[derive(Debug, Clone, Default)]
pub struct Superseded<'a> {
    by_action: HashMap<&'a str, Vec<&'a str>, foldhash::fast::RandomState>,
}

impl<'a> Superseded<'a> {
    /// Reads the records (the `tools` collection, leniently).
    pub fn of<'r>(records: impl IntoIterator<Item = &'r Map<'a>>) -> Self
    where
        'a: 'r,
    {
        let mut by_action: HashMap<&'a str, Vec<&'a str>, _> = HashMap::default();
        for record in records {
            if let Some(action) = bound_action(record) {
                let names = by_action.entry(action).or_default();
                if let Some(name) = record.get("name").and_then(Value::as_str)
                    && !name.is_empty()
                    && !names.contains(&name)
                {
                    names.push(name);
                }
            }
        }
        Superseded { by_action }
    }

    /// Whether a record binds the action `name`.
    pub fn contains(&self, action: &str) -> bool {
        self.by_action.contains_key(action)
    }

    /// The names of the records that bind the action `name` (empty when
    /// none does, or when none of those has a name).
    pub fn refined_by(&self, action: &str) -> &[&'a str] {
        self.by_action.get(action).map_or(&[], Vec::as_slice)
    }

    /// Whether no record binds an action.
    pub fn is_empty(&self) -> bool {
        self.by_action.is_empty()
    }

    /// The bound action names (in no particular order).
    pub fn actions(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.by_action.keys().copied()
    }
}

/// Names a record may not take.
#[derive(Clone, Copy)]
pub struct Reserved<'r> {
    /// The package that owns a platform tool of this name, if any.
    pub platform: &'r dyn Fn(&str) -> Option<&'r str>,
    /// The prefixes of the families the runtime materialises (`action_`).
    pub family_prefixes: &'r [&'r str],
}

impl fmt::Debug for Reserved<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reserved")
            .field("family_prefixes", &self.family_prefixes)
            .finish_non_exhaustive()
    }
}

/// The executable a bound record names, as the caller resolved it.
#[derive(Debug, Clone, Copy)]
pub enum Target<'t, 'a> {
    /// Nothing of that name is declared.
    Missing,
    /// The action (the first of its name); `surface` is its materialised
    /// surface when it materialises statically.
    Action {
        /// The action.
        action: &'a Map<'a>,
        /// Its surface (`None` when it does not materialise).
        surface: Option<&'t Surface<'a>>,
    },
    /// A declared flow.
    Flow,
}

/// Why a bound record does not refine its executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordSkip {
    /// The `binding` is malformed.
    InvalidBinding(String),
    /// The record has no snake_case string `name`.
    MissingName,
    /// The name is a platform tool's (the package), or under a family
    /// prefix (`None`, the prefix in the reason).
    ShadowsPlatform {
        /// The owning package, for a platform tool.
        package: Option<String>,
        /// The family prefix, for a name under one.
        prefix: Option<String>,
    },
    /// No action or flow of that name is declared.
    BindingUnresolved,
    /// The bound action is not opted in (`ai.exposed` is not true).
    BindingNotExposed,
    /// The bound action does not materialise for another static reason.
    ActionSkipped(StaticSkip),
    /// A flow-bound record's description is missing or shorter than
    /// [`MIN_FLOW_DESCRIPTION`].
    MissingDescription,
    /// A key of the record is malformed (`parameters`,
    /// `requiresConfirmation`).
    InvalidRecord(String),
    /// The record's parameters would widen the action's.
    Widens {
        /// The exact property (or schema key) at fault.
        property: String,
        /// Why.
        reason: String,
    },
}

impl RecordSkip {
    /// The stable code (the bridge's skip code for it).
    pub fn code(&self) -> &'static str {
        match self {
            RecordSkip::InvalidBinding(_) => "invalid_binding",
            RecordSkip::MissingName => "missing_name",
            RecordSkip::ShadowsPlatform { .. } => "shadows_platform",
            RecordSkip::BindingUnresolved => "binding_unresolved",
            RecordSkip::BindingNotExposed => "binding_not_exposed",
            RecordSkip::ActionSkipped(skip) => skip.code(),
            RecordSkip::MissingDescription => "missing_description",
            RecordSkip::InvalidRecord(_) => "invalid_record",
            RecordSkip::Widens { .. } => "binding_widens",
        }
    }

    /// A sentence for a person: what is wrong and how to change it.
    /// `binding` is what the record binds, when well formed.
    pub fn reason(&self, binding: Option<Binding<'_>>) -> String {
        let what = binding.map_or_else(|| "its executable".to_owned(), |b| b.to_string());
        match self {
            RecordSkip::InvalidBinding(fault) => format!(
                "the record's binding is malformed ({fault}): write `{{\"type\": \"action\" | \
                 \"flow\", \"name\": \"...\"}}`"
            ),
            RecordSkip::MissingName => "the record has no snake_case `name`, so it has no tool \
                                        name: give it one"
                .to_owned(),
            RecordSkip::ShadowsPlatform {
                package: Some(package),
                ..
            } => format!(
                "the record's name is a platform tool registered by `{package}`, and a record \
                 never shadows a platform tool: rename the record"
            ),
            RecordSkip::ShadowsPlatform { prefix, .. } => format!(
                "the record's name is under the family prefix `{}`, which the runtime fills from \
                 actions: rename the record",
                prefix.as_deref().unwrap_or_default()
            ),
            RecordSkip::BindingUnresolved => format!(
                "the record binds {what}, which the stack does not declare: fix the name or \
                 declare it"
            ),
            RecordSkip::BindingNotExposed => format!(
                "the record binds {what}, which is not opted in to AI (`ai.exposed` is not \
                 true): a record refines an exposed action and never bypasses the opt-in, so set \
                 `ai: {{ exposed: true, description: \"...\" }}` on the action"
            ),
            RecordSkip::ActionSkipped(skip) => format!(
                "the record binds {what}, which does not materialise: {}",
                skip.reason()
            ),
            RecordSkip::MissingDescription => format!(
                "a record bound to a flow is that flow's opt-in and needs a `description` of at \
                 least {MIN_FLOW_DESCRIPTION} characters telling the model when to call it"
            ),
            RecordSkip::InvalidRecord(fault) => format!("the record is malformed: {fault}"),
            RecordSkip::Widens { property, reason } => format!(
                "the record's parameters widen {what} at `{property}`: {reason}; a refinement \
                 only narrows"
            ),
        }
    }
}

/// A record that refines its executable.
#[derive(Debug, Clone, PartialEq)]
pub struct Refinement<'a> {
    /// The tool name the model sees (the record's `name`).
    pub name: &'a str,
    /// What it refines.
    pub binding: Binding<'a>,
    /// The record's own `parameters`; `None`: it takes the action's.
    pub parameters: Option<&'a Map<'a>>,
    /// Properties pinned with `const`, with the value the runtime sends.
    pub pins: Vec<(&'a str, &'a Value<'a>)>,
    /// The record's `requiresConfirmation`, when it sets one.
    pub requires_confirmation: Option<bool>,
    /// The record sets `requiresConfirmation: false` on an action that
    /// needs confirmation: the tool stays gated, and the author is warned.
    pub relaxes_confirmation: bool,
}

/// Whether one bound record refines `target`, or the first reason it does
/// not (see the module docs for the order). `Ok(None)`: the record has no
/// binding (it is inert, not a refinement).
pub fn judge<'a>(
    record: &'a Map<'a>,
    target: Target<'_, '_>,
    reserved: Reserved<'_>,
) -> Result<Option<Refinement<'a>>, RecordSkip> {
    let binding = match binding(record) {
        None => return Ok(None),
        Some(Err(fault)) => return Err(RecordSkip::InvalidBinding(fault)),
        Some(Ok(b)) => b,
    };
    let name = match record.get("name") {
        Some(Value::String(n)) if is_snake_name(n) => *n,
        _ => return Err(RecordSkip::MissingName),
    };
    if let Some(prefix) = reserved
        .family_prefixes
        .iter()
        .find(|p| name.starts_with(**p))
    {
        return Err(RecordSkip::ShadowsPlatform {
            package: None,
            prefix: Some((*prefix).to_owned()),
        });
    }
    if let Some(package) = (reserved.platform)(name) {
        return Err(RecordSkip::ShadowsPlatform {
            package: Some(package.to_owned()),
            prefix: None,
        });
    }
    let surface = match (target, binding) {
        (Target::Missing, _)
        | (Target::Flow, Binding::Action(_))
        | (Target::Action { .. }, Binding::Flow(_)) => {
            return Err(RecordSkip::BindingUnresolved);
        }
        (Target::Action { action, surface }, Binding::Action(_)) => {
            if let Some(skip) = super::static_skip(action) {
                return Err(match skip {
                    StaticSkip::NotExposed => RecordSkip::BindingNotExposed,
                    other => RecordSkip::ActionSkipped(other),
                });
            }
            surface
        }
        (Target::Flow, Binding::Flow(_)) => {
            let described = record
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| utf16_len(d.trim()) >= MIN_FLOW_DESCRIPTION);
            if !described {
                return Err(RecordSkip::MissingDescription);
            }
            None
        }
    };
    let requires_confirmation = match record.get("requiresConfirmation") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            return Err(RecordSkip::InvalidRecord(format!(
                "`requiresConfirmation` must be a boolean, found {}",
                kind(other)
            )));
        }
    };
    let parameters = match record.get("parameters") {
        None | Some(Value::Null) => None,
        Some(Value::Object(p)) => Some(*p),
        Some(other) => {
            return Err(RecordSkip::InvalidRecord(format!(
                "`parameters` must be a JSON Schema object, found {}",
                kind(other)
            )));
        }
    };
    let pins = match (parameters, surface) {
        (Some(p), Some(surface)) => narrows(p, surface)?,
        (Some(p), None) => {
            let properties = object_schema(p)?;
            // Nothing narrows a flow's parameters, so each is checked here
            // to be a schema, as `narrows` checks an action's.
            if let Some((name, schema)) = properties
                .into_iter()
                .flat_map(Map::iter)
                .find(|(_, schema)| !schema.is_object())
            {
                return Err(RecordSkip::InvalidRecord(format!(
                    "`parameters.properties.{name}` must be a schema object, found {}",
                    kind(schema)
                )));
            }
            required_of(p, properties)?;
            properties.map(pins_of).unwrap_or_default()
        }
        (None, _) => Vec::new(),
    };
    let relaxes_confirmation = match (requires_confirmation, target) {
        (Some(false), Target::Action { action, .. }) => {
            super::explicit_confirmation(action) != Some(false)
                && super::needs_confirmation(action).is_some()
        }
        _ => false,
    };
    Ok(Some(Refinement {
        name,
        binding,
        parameters,
        pins,
        requires_confirmation,
        relaxes_confirmation,
    }))
}

/// An action as [`judge_all`] reads it: the action and the object whose
/// actions it belongs to (an index into the objects given).
#[derive(Debug, Clone, Copy)]
pub struct ActionAt<'a> {
    /// The action.
    pub action: &'a Map<'a>,
    /// Its owning object, by index.
    pub owner: Option<usize>,
}

/// What [`judge`] says of one record.
pub type Judgement<'a> = Result<Option<Refinement<'a>>, RecordSkip>;

/// [`judge`] for every record of a stack (or of several composed). The
/// action a record binds is the first of its name in `actions` (read once,
/// in order) that materialises, else the first of its name; `flows` says
/// whether a flow is declared. Map-shaped `params` build their records in
/// `arena`.
pub fn judge_all<'a, 'b>(
    tools: &[&'a Map<'a>],
    actions: impl IntoIterator<Item = ActionAt<'b>>,
    objects: &[crate::collection::Record<'_>],
    flows: &dyn Fn(&str) -> bool,
    arena: &crate::json::Arena,
    reserved: Reserved<'_>,
) -> Vec<Judgement<'a>> {
    // Only the actions a record binds are ever looked up, and a stack's
    // records bind a fraction of its actions: only those are indexed (and
    // none are read when no record binds one).
    let bound: std::collections::HashSet<&str, foldhash::fast::RandomState> = tools
        .iter()
        .filter_map(|record| match binding(record) {
            Some(Ok(Binding::Action(name))) => Some(name),
            _ => None,
        })
        .collect();
    let mut by_name: HashMap<&str, ActionAt<'b>, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(bound.len(), Default::default());
    if !bound.is_empty() {
        for at in actions {
            let Some(name) = at.action.get("name").and_then(Value::as_str) else {
                continue;
            };
            if !bound.contains(name) {
                continue;
            }
            match by_name.get(name) {
                Some(first)
                    if super::materialises(first.action) || !super::materialises(at.action) => {}
                _ => {
                    by_name.insert(name, at);
                }
            }
        }
    }
    judge_each(
        tools,
        &|name| by_name.get(name).copied(),
        objects,
        flows,
        arena,
        reserved,
    )
}

/// How [`judge_each`] finds the action a record binds by name.
pub type FindAction<'f, 'b> = &'f dyn Fn(&str) -> Option<ActionAt<'b>>;

/// [`judge_all`] for a caller that has its actions indexed by name
/// already: `bound_action(name)` is the action a record binding `name`
/// binds (the first action of that name that materialises, else the first
/// of that name, else `None`). It is asked once per record that binds an
/// action, and never for a name that is empty.
pub fn judge_each<'a, 'b>(
    tools: &[&'a Map<'a>],
    bound_action: FindAction<'_, 'b>,
    objects: &[crate::collection::Record<'_>],
    flows: &dyn Fn(&str) -> bool,
    arena: &crate::json::Arena,
    reserved: Reserved<'_>,
) -> Vec<Judgement<'a>> {
    if tools.iter().all(|t| binding(t).is_none()) {
        return vec![Ok(None); tools.len()];
    }
    let index = std::cell::OnceCell::new();
    tools
        .iter()
        .map(|record| {
            let bound = match binding(record) {
                Some(Ok(Binding::Action(name))) => bound_action(name),
                _ => None,
            };
            // Only a record's `parameters` are compared with the action's
            // surface: a record without them does not pay for it.
            let compared = matches!(record.get("parameters"), Some(Value::Object(_)));
            let surface = bound
                .filter(|b| compared && super::materialises(b.action))
                .map(|b| {
                    let index = index.get_or_init(|| super::surface::ObjectIndex::build(objects));
                    let owner = b.owner.and_then(|i| objects.get(i));
                    let object = super::surface::object_of(b.action, owner.and_then(|o| o.name()));
                    let row_context = object.is_some() && super::acts_on_one_record(b.action);
                    super::surface::surface(
                        b.action,
                        b.owner.and_then(|i| index.at(i)),
                        index,
                        arena,
                        row_context,
                    )
                });
            let target = match (binding(record), bound) {
                (Some(Ok(Binding::Action(_))), Some(b)) => Target::Action {
                    action: b.action,
                    surface: surface.as_ref(),
                },
                (Some(Ok(Binding::Flow(name))), _) if flows(name) => Target::Flow,
                _ => Target::Missing,
            };
            judge(record, target, reserved)
        })
        .collect()
}

/// [`judge_all`] over one or more stack documents, read leniently and
/// composed as `composeStacks` does: each collection concatenated in
/// order, every stack-level action before the objects' actions (a
/// stack-level action belongs to the object its `objectName` names). One
/// judgement per record of the composed `tools`.
pub fn judge_stacks<'a>(
    roots: &[&'a Map<'a>],
    arena: &'a crate::json::Arena,
    reserved: Reserved<'_>,
) -> Vec<Judgement<'a>> {
    use crate::collection::records_of;
    let tools: Vec<&'a Map<'a>> = roots
        .iter()
        .flat_map(|r| records_of(r, "tools", arena))
        .map(|t| t.fields)
        .collect();
    if tools.iter().all(|t| binding(t).is_none()) {
        return vec![Ok(None); tools.len()];
    }
    let objects: Vec<crate::collection::Record<'a>> = roots
        .iter()
        .flat_map(|r| records_of(r, "objects", arena))
        .collect();
    let by_name: HashMap<&str, usize, foldhash::fast::RandomState> = objects
        .iter()
        .enumerate()
        .filter_map(|(i, o)| Some((o.name()?, i)))
        .collect();
    let mut actions: Vec<ActionAt<'a>> = roots
        .iter()
        .flat_map(|r| records_of(r, "actions", arena))
        .map(|a| ActionAt {
            action: a.fields,
            owner: a.str("objectName").and_then(|n| by_name.get(n).copied()),
        })
        .collect();
    for (i, object) in objects.iter().enumerate() {
        actions.extend(
            records_of(object.fields, "actions", arena)
                .into_iter()
                .map(|a| ActionAt {
                    action: a.fields,
                    owner: Some(i),
                }),
        );
    }
    let flows: std::collections::HashSet<&str, foldhash::fast::RandomState> = roots
        .iter()
        .flat_map(|r| records_of(r, "flows", arena))
        .filter_map(|f| f.name())
        .collect();
    judge_all(
        &tools,
        actions,
        &objects,
        &|f| flows.contains(f),
        arena,
        reserved,
    )
}

/// The `properties` of an object schema (`None` when it has none), or why
/// it is not one.
fn object_schema<'a>(parameters: &'a Map<'a>) -> Result<Option<&'a Map<'a>>, RecordSkip> {
    match parameters.get("type") {
        None | Some(Value::String("object")) => {}
        Some(other) => {
            return Err(RecordSkip::InvalidRecord(format!(
                "`parameters.type` must be \"object\", found {other}"
            )));
        }
    }
    match parameters.get("properties") {
        None => Ok(None),
        Some(Value::Object(p)) => Ok(Some(*p)),
        Some(other) => Err(RecordSkip::InvalidRecord(format!(
            "`parameters.properties` must be an object, found {}",
            kind(other)
        ))),
    }
}

/// The record's `required`: unique names of its own properties, as JSON
/// Schema has them (a tool whose schema is not valid cannot register).
fn required_of<'a>(
    parameters: &'a Map<'a>,
    properties: Option<&Map<'a>>,
) -> Result<Vec<&'a str>, RecordSkip> {
    let Some(listed) = parameters.get("required") else {
        return Ok(Vec::new());
    };
    let Value::Array(listed) = listed else {
        return Err(RecordSkip::InvalidRecord(format!(
            "`parameters.required` must be an array of parameter names, found {}",
            kind(listed)
        )));
    };
    let mut names = Vec::with_capacity(listed.len());
    for (i, item) in listed.iter().enumerate() {
        let Value::String(name) = item else {
            return Err(RecordSkip::InvalidRecord(format!(
                "`parameters.required[{i}]` must be a parameter name, found {}",
                kind(item)
            )));
        };
        if names.contains(name) {
            return Err(RecordSkip::InvalidRecord(format!(
                "`parameters.required` lists `{name}` twice; list each parameter once"
            )));
        }
        if !properties.is_some_and(|p| p.contains_key(name)) {
            return Err(RecordSkip::InvalidRecord(format!(
                "`parameters.required` lists `{name}`, which `parameters.properties` does not \
                 define; define it or leave it out"
            )));
        }
        names.push(*name);
    }
    Ok(names)
}

fn pins_of<'a>(properties: &'a Map<'a>) -> Vec<(&'a str, &'a Value<'a>)> {
    properties
        .iter()
        .filter_map(|(k, p)| Some((k, p.as_object()?.get("const")?)))
        .collect()
}

/// Checks that `parameters` only narrow `surface`; returns the pins.
fn narrows<'a>(
    parameters: &'a Map<'a>,
    surface: &Surface<'_>,
) -> Result<Vec<(&'a str, &'a Value<'a>)>, RecordSkip> {
    let widens = |property: &str, reason: String| RecordSkip::Widens {
        property: property.to_owned(),
        reason,
    };
    let properties = object_schema(parameters)?;
    match parameters.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(_) => {
            return Err(widens(
                "additionalProperties",
                "it must be `false` (or left out): the tool takes exactly the parameters it names"
                    .to_owned(),
            ));
        }
    }
    let properties = properties.unwrap_or(&Map::EMPTY);
    for (name, schema) in properties.iter() {
        let Some(action) = surface.get(name) else {
            return Err(widens(
                name,
                "the action has no such parameter, so the tool would take what the action never \
                 does"
                    .to_owned(),
            ));
        };
        let Value::Object(schema) = schema else {
            return Err(RecordSkip::InvalidRecord(format!(
                "`parameters.properties.{name}` must be a schema object, found {}",
                kind(schema)
            )));
        };
        match schema.get("type") {
            None => {}
            Some(Value::String(t)) if *t == action.kind => {}
            Some(Value::String("integer")) if action.kind == "number" => {}
            Some(other) => {
                return Err(widens(
                    name,
                    format!(
                        "its `type` is {other}, and the action's parameter is a {}",
                        action.kind
                    ),
                ));
            }
        }
        let values = if action.kind == "array" {
            schema
                .get("items")
                .and_then(Value::as_object)
                .and_then(|i| i.get("enum"))
        } else {
            schema.get("enum")
        };
        if let (Some(allowed), Some(values)) = (action.allowed, values) {
            let Value::Array(values) = values else {
                return Err(RecordSkip::InvalidRecord(format!(
                    "the `enum` of `{name}` must be an array"
                )));
            };
            if let Some(v) = values.iter().find(|v| !allowed.allows(v)) {
                return Err(widens(
                    name,
                    format!("its `enum` adds {v}, which the action does not allow"),
                ));
            }
        }
        if let (Some(allowed), Some(pinned)) = (action.allowed, schema.get("const"))
            && action.kind != "array"
            && !allowed.allows(pinned)
        {
            return Err(widens(
                name,
                format!("it is pinned to {pinned}, which the action does not allow"),
            ));
        }
    }
    let required = required_of(parameters, Some(properties))?;
    for &name in &surface.required {
        let Some(schema) = properties.get(name) else {
            return Err(widens(
                name,
                "the action requires it, so the refinement keeps it (required) or pins it with \
                 `const`"
                    .to_owned(),
            ));
        };
        let pinned = schema.as_object().is_some_and(|s| s.contains_key("const"));
        if !pinned && !required.contains(&name) {
            return Err(widens(
                name,
                "the action requires it, so list it in `required` or pin it with `const`"
                    .to_owned(),
            ));
        }
    }
    Ok(pins_of(properties))
}

#[cfg(test)]
mod tests {
    use super::super::surface::{ObjectIndex, surface};
    use super::*;
    use crate::json::{Arena, parse_object};

    const DESC: &str = "Closes a ticket whose work is done, with a resolution.";

    fn reserved() -> Reserved<'static> {
        Reserved {
            platform: &|n| (n == "query_records").then_some("service-ai"),
            family_prefixes: &["action_"],
        }
    }

    fn judge_text(action: &str, record: &str) -> Result<Option<Refinement<'static>>, RecordSkip> {
        let arena: &'static Arena = Box::leak(Box::default());
        let action: &'static str = Box::leak(action.to_owned().into_boxed_str());
        let record: &'static str = Box::leak(record.to_owned().into_boxed_str());
        let action = parse_object(action, arena).unwrap();
        let record = parse_object(record, arena).unwrap();
        let index: &'static ObjectIndex<'static> = Box::leak(Box::default());
        let s: &'static Surface<'static> =
            Box::leak(Box::new(surface(action, None, index, arena, false)));
        judge(
            record,
            Target::Action {
                action,
                surface: Some(s),
            },
            reserved(),
        )
    }

    fn action() -> String {
        format!(
            r#"{{"name": "close", "type": "script", "target": "t",
                "params": [{{"name": "resolution", "type": "text", "required": true,
                             "options": ["fixed", "wontfix", "duplicate"]}},
                           {{"name": "note", "type": "text"}},
                           {{"name": "hours", "type": "number"}}],
                "ai": {{"exposed": true, "description": "{DESC}"}}}}"#
        )
    }

    fn code(r: Result<Option<Refinement<'_>>, RecordSkip>) -> &'static str {
        match r {
            Ok(Some(_)) => "ok",
            Ok(None) => "unbound",
            Err(e) => e.code(),
        }
    }

    #[test]
    fn narrowing_is_accepted_and_pins_are_read() {
        let r = judge_text(
            &action(),
            r#"{"name": "close_fixed", "binding": {"type": "action", "name": "close"},
                "parameters": {"type": "object", "properties": {
                    "resolution": {"type": "string", "const": "fixed"},
                    "hours": {"type": "integer"}}}}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.name, "close_fixed");
        assert_eq!(r.pins.len(), 1);
        assert_eq!(r.pins[0].0, "resolution");
    }

    #[test]
    fn every_widening_names_its_property() {
        let cases = [
            (
                r#"{"properties": {"resolution": {"type": "string"}, "extra": {}}, "required": ["resolution"]}"#,
                "extra",
            ),
            (
                r#"{"properties": {"resolution": {"type": "number"}}, "required": ["resolution"]}"#,
                "resolution",
            ),
            (
                r#"{"properties": {"resolution": {"enum": ["fixed", "other"]}}, "required": ["resolution"]}"#,
                "resolution",
            ),
            (r#"{"properties": {"note": {}}}"#, "resolution"),
            (r#"{"properties": {"resolution": {}}}"#, "resolution"),
            (
                r#"{"properties": {"resolution": {}}, "required": ["resolution"], "additionalProperties": true}"#,
                "additionalProperties",
            ),
            (
                r#"{"properties": {"resolution": {"const": "nope"}}}"#,
                "resolution",
            ),
        ];
        for (params, property) in cases {
            let record = format!(
                r#"{{"name": "r", "binding": {{"type": "action", "name": "close"}}, "parameters": {params}}}"#
            );
            match judge_text(&action(), &record) {
                Err(RecordSkip::Widens { property: p, .. }) => assert_eq!(p, property, "{params}"),
                other => panic!("{params}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_required_list_that_is_not_valid_json_schema_is_an_invalid_record() {
        for required in [
            r#"["resolution", "resolution"]"#,
            r#"["resolution", "ghost"]"#,
            r#"["resolution", 3]"#,
            r#""resolution""#,
        ] {
            let record = format!(
                r#"{{"name": "r", "binding": {{"type": "action", "name": "close"}},
                    "parameters": {{"properties": {{"resolution": {{}}}}, "required": {required}}}}}"#
            );
            match judge_text(&action(), &record) {
                Err(RecordSkip::InvalidRecord(why)) => {
                    assert!(why.contains("parameters.required"), "{required}: {why}");
                }
                other => panic!("{required}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_order_of_reasons() {
        let a = action();
        let bound = r#""binding": {"type": "action", "name": "close"}"#;
        assert_eq!(code(judge_text(&a, r#"{"name": "r"}"#)), "unbound");
        assert_eq!(
            code(judge_text(
                &a,
                r#"{"name": "r", "binding": {"type": "job", "name": "x"}}"#
            )),
            "invalid_binding"
        );
        assert_eq!(
            code(judge_text(&a, &format!(r#"{{"name": "R x", {bound}}}"#))),
            "missing_name"
        );
        assert_eq!(
            code(judge_text(
                &a,
                &format!(r#"{{"name": "action_close", {bound}}}"#)
            )),
            "shadows_platform"
        );
        assert_eq!(
            code(judge_text(
                &a,
                &format!(r#"{{"name": "query_records", {bound}}}"#)
            )),
            "shadows_platform"
        );
        assert_eq!(
            code(judge_text(&a, &format!(r#"{{"name": "r", {bound}}}"#))),
            "ok"
        );
        let hidden = a.replace(r#""exposed": true"#, r#""exposed": false"#);
        assert_eq!(
            code(judge_text(&hidden, &format!(r#"{{"name": "r", {bound}}}"#))),
            "binding_not_exposed"
        );
        let modal = a.replace(r#""type": "script""#, r#""type": "modal""#);
        assert_eq!(
            code(judge_text(&modal, &format!(r#"{{"name": "r", {bound}}}"#))),
            "ui_only_type"
        );
        assert_eq!(
            code(judge_text(
                &a,
                &format!(r#"{{"name": "r", {bound}, "requiresConfirmation": "yes"}}"#)
            )),
            "invalid_record"
        );
    }

    #[test]
    fn false_never_relaxes_a_gated_action() {
        let gated = action().replace(
            r#""type": "script""#,
            r#""type": "script", "mode": "delete""#,
        );
        let r = judge_text(
            &gated,
            r#"{"name": "r", "binding": {"type": "action", "name": "close"}, "requiresConfirmation": false}"#,
        )
        .unwrap()
        .unwrap();
        assert!(r.relaxes_confirmation);
        let r = judge_text(
            &action(),
            r#"{"name": "r", "binding": {"type": "action", "name": "close"}, "requiresConfirmation": false}"#,
        )
        .unwrap()
        .unwrap();
        assert!(!r.relaxes_confirmation);
    }

    #[test]
    fn flows_need_a_description() {
        let arena = Arena::new();
        let short = parse_object(
            r#"{"name": "renew", "description": "Renews.", "binding": {"type": "flow", "name": "renew"}}"#,
            &arena,
        )
        .unwrap();
        assert_eq!(
            judge(short, Target::Flow, reserved()).map(|_| ()),
            Err(RecordSkip::MissingDescription)
        );
        let long = parse_object(
            r#"{"name": "renew", "description": "Renews a contract for another year at today's price.",
                "binding": {"type": "flow", "name": "renew"}}"#,
            &arena,
        )
        .unwrap();
        assert!(judge(long, Target::Flow, reserved()).unwrap().is_some());
        assert_eq!(
            judge(long, Target::Missing, reserved()).map(|_| ()),
            Err(RecordSkip::BindingUnresolved)
        );
    }

    #[test]
    fn a_flow_records_required_list_must_be_valid_json_schema_too() {
        let arena = Arena::new();
        let describe = "Renews a contract for another year at today's price.";
        for (parameters, ok) in [
            (
                r#"{"properties": {"years": {}}, "required": ["years"]}"#,
                true,
            ),
            (r#"{"properties": {}, "required": ["p2", "p2"]}"#, false),
            (
                r#"{"properties": {"a": {}}, "required": ["a", "a"]}"#,
                false,
            ),
            (r#"{"required": ["years"]}"#, false),
            (r#"{"required": []}"#, true),
            (r#"{"required": "years"}"#, false),
            // Each property must be a schema object.
            (r#"{"properties": {"p1": 0, "recordId": {}}}"#, false),
            (r#"{"properties": {"p1": true}}"#, false),
            (r#"{"properties": {"p1": {"type": "string"}}}"#, true),
        ] {
            let text = format!(
                r#"{{"name": "renew", "description": "{describe}",
                    "binding": {{"type": "flow", "name": "renew"}}, "parameters": {parameters}}}"#
            );
            let record = parse_object(&text, &arena).unwrap();
            let judged = judge(record, Target::Flow, reserved());
            assert_eq!(judged.is_ok(), ok, "{parameters}: {judged:?}");
            if !ok {
                assert!(
                    matches!(judged, Err(RecordSkip::InvalidRecord(_))),
                    "{parameters}"
                );
            }
        }
    }

    #[test]
    fn superseded_lists_the_records_of_each_action() {
        let arena = Arena::new();
        let tools = parse_object(
            r#"{"t": [{"name": "a", "binding": {"type": "action", "name": "x"}},
                      {"name": "b", "binding": {"type": "action", "name": "x"}},
                      {"name": "c", "binding": {"type": "flow", "name": "x"}},
                      {"name": "d"}]}"#,
            &arena,
        )
        .unwrap();
        let records: Vec<&Map<'_>> = tools
            .get("t")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .filter_map(Value::as_object)
            .collect();
        let s = Superseded::of(records.iter().copied());
        assert!(s.contains("x"));
        assert_eq!(s.refined_by("x"), ["a", "b"]);
        assert!(!s.contains("c") && !s.contains("d"));
    }
}
