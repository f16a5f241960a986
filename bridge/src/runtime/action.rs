//! One materialised action as a callable tool: record loading, the
//! confirmation gate, dispatch by route, and the result envelope.

use std::sync::Arc;

use serde_json::{Map, Value};

use objectstack_spec::AIToolDefinition;
use objectstack_spec::json::truthy as is_truthy;
use objectstack_spec::materialise::{
    ConfirmationReason, Route, acts_on_one_record, needs_confirmation, route_or_skip, static_skip,
};

use super::host::{ApiRequest, FieldWriteRequest, FlowRequest, HostError, ScriptRequest};
use super::validate::{self, ArgumentValidator, Violation};
use super::{Actor, CallContext, HostServices, Invocation, RegisterError};
use crate::approval::{PendingAction, Proposal, State};
use crate::materialise::{Refines, SkipCode, api};

/// The envelope member (`true`) of a call whose request was sent and got no
/// answer ([`HostError::Unanswered`]): it may have run.
pub const OUTCOME_UNKNOWN: &str = "outcomeUnknown";

/// The message of a successful call when the action has no
/// `successMessage`; `{name}` is the action's name.
pub const DEFAULT_SUCCESS_MESSAGE: &str = "Action '{name}' executed successfully.";

/// The message handed to the model when a call is queued for approval.
pub fn pending_message(action: &str, pending_id: &str) -> String {
    format!(
        "Action '{action}' needs a person's approval before it runs, so it has NOT run yet. It is \
         queued as pending action {pending_id}. Do not call this tool again for this request: tell \
         the user it is waiting for approval."
    )
}

/// A materialised action, ready to call.
#[derive(Debug)]
pub(crate) struct ActionTool {
    /// The tool name: the registry's own copy, shared.
    pub(crate) tool: Arc<str>,
    /// Shared by every tool of the same object (the registry interns it).
    pub(crate) object_name: Option<Arc<str>>,
    /// The action's [`DISPATCH_KEYS`], as compact JSON text: read back on
    /// each dispatch, since a served stack's tools are many and a small
    /// `serde_json` map costs several times its text.
    action: Box<str>,
    route: Route,
    row_context: bool,
    confirmation: Option<ConfirmationReason>,
    /// What an approval of a call to this tool is bound to (see
    /// [`crate::approval::PendingAction::executable_sha256`]).
    pub(crate) executable_sha256: crate::approval::ExecutableDigest,
    /// What few tools have, boxed (a served stack's tools are many): eight
    /// bytes a tool for the most common case, which has none of it.
    rare: Option<Box<Rare>>,
}

/// The parts of an [`ActionTool`] most tools do not have.
#[derive(Debug, Default)]
struct Rare {
    /// The action's name, when the tool's is not `action_<name>` (a
    /// refinement's record name): most tools derive it from `tool`.
    own_action_name: Option<Box<str>>,
    /// The action's `successMessage`, when it is a non-empty string.
    success_message: Option<Box<str>>,
    /// For a refined tool only.
    refined: Option<Refined>,
}

/// What a refined tool adds to the action it refines.
#[derive(Debug)]
struct Refined {
    /// The values pinned with `const`, sent whatever the call says.
    pins: Map<String, Value>,
    /// The action's own schema, which a call must also meet.
    action_schema: Option<ArgumentValidator>,
}

/// The arguments split into what the executor gets and what it acts on.
struct Prepared {
    record_id: Option<String>,
    record: Option<Value>,
    params: Map<String, Value>,
}

/// A failure the model is told about, with the record id when known.
struct Failure {
    record_id: Option<String>,
    message: String,
}

impl ActionTool {
    /// The action's name.
    pub(crate) fn action_name(&self) -> &str {
        match self.rare.as_ref().and_then(|r| r.own_action_name.as_ref()) {
            Some(own) => own,
            None => self
                .tool
                .strip_prefix(objectstack_registry::ACTION_PREFIX)
                .unwrap_or(&self.tool),
        }
    }

    pub(crate) fn new(
        definition: &AIToolDefinition,
        mut action: Map<String, Value>,
        services: &HostServices,
    ) -> Result<Self, RegisterError> {
        let tool = definition.name.clone();
        let refuse = |reason: String| RegisterError::NotMaterialisable {
            tool: tool.clone(),
            reason,
        };
        let arena = objectstack_spec::json::Arena::new();
        let dom = objectstack_spec::json::Map::from_serde(&action, &arena);
        if let Some(skip) = static_skip(dom) {
            return Err(refuse(skip.reason()));
        }
        let route = route_or_skip(dom).map_err(|skip| refuse(skip.reason()))?;
        // Read before `objectName` is filled in below (neither reads it).
        let on_one_record = acts_on_one_record(dom);
        let needs_confirmation_of_action = needs_confirmation(dom);
        let action_name = match action.get("name") {
            Some(Value::String(n)) if !n.is_empty() => n.clone(),
            _ => return Err(refuse("the action has no `name`".to_owned())),
        };
        let object_name = match action.get("objectName") {
            Some(Value::String(o)) if !o.is_empty() => Some(o.clone()),
            _ => definition.object_name.clone(),
        };
        // Read from the action as written, before it changes below.
        let unsendable = (route == Route::Api)
            .then(|| api::unsendable(dom, on_one_record && object_name.is_some()))
            .flatten();
        if let Some(object) = &object_name {
            action
                .entry("objectName")
                .or_insert_with(|| Value::String(object.clone()));
        }
        // As the definition's required `recordId` (a field write without
        // an object is refused below).
        let row_context = on_one_record && object_name.is_some();
        let confirmation = needs_confirmation_of_action
            .or((definition.requires_confirmation == Some(true))
                .then_some(ConfirmationReason::AiRequiresConfirmation));
        let missing = |service: &str| RegisterError::MissingService {
            tool: tool.clone(),
            service: service.to_owned(),
        };
        match route {
            Route::Script | Route::FieldWrite if services.data_engine.is_none() => {
                return Err(missing(
                    "a data engine (script actions and field writes run there)",
                ));
            }
            Route::Flow if services.automation.is_none() => {
                return Err(missing("an automation service (flow actions run there)"));
            }
            Route::Api if services.api_client.is_none() => {
                return Err(missing("an API client (api actions call it)"));
            }
            _ => {}
        }
        if route == Route::Api
            && let Some(client) = &services.api_client
        {
            let skipped = |code: SkipCode, reason: String| RegisterError::Skipped {
                tool: tool.clone(),
                code,
                reason,
            };
            let target = match action.get("target") {
                Some(Value::String(t)) => t.as_str(),
                _ => "",
            };
            client
                .scope()
                .check(target)
                .map_err(|reason| skipped(SkipCode::UnsafeApiTarget, reason))?;
            let method = api::method_of(action.get("method").and_then(Value::as_str));
            if let Some(reason) = unsendable.or_else(|| {
                api::sends_query(&method)
                    .then(|| api::unsendable_parameters(&definition.parameters))
                    .flatten()
            }) {
                return Err(skipped(SkipCode::UnsendableApiData, reason));
            }
        }
        if route == Route::FieldWrite && object_name.is_none() {
            return Err(refuse(
                "a field write (`operation: \"update\"`) needs an `objectName` to know which record it writes"
                    .to_owned(),
            ));
        }
        if row_context && services.data_engine.is_none() {
            return Err(missing(
                "a data engine (the record is loaded before the action runs)",
            ));
        }
        if let Some(reason) = confirmation
            && services.approvals.is_none()
        {
            return Err(missing(&format!(
                "an approval queue (it needs confirmation because of `{reason}` and never runs unattended)"
            )));
        }
        let executable_sha256 = crate::approval::executable_sha256(
            definition,
            &action_name,
            object_name.as_deref(),
            route,
            row_context,
            &action,
        )
        .map_err(refuse)?;
        let success_message = non_empty_str(&action, "successMessage").map(String::into_boxed_str);
        let own_action_name = (tool.strip_prefix(objectstack_registry::ACTION_PREFIX)
            != Some(action_name.as_str()))
        .then(|| action_name.into_boxed_str());
        Ok(ActionTool {
            tool: tool.into(),
            object_name: object_name.map(Arc::from),
            action: dispatch_keys(action),
            route,
            row_context,
            confirmation,
            executable_sha256,
            rare: (own_action_name.is_some() || success_message.is_some()).then(|| {
                Box::new(Rare {
                    own_action_name,
                    success_message,
                    refined: None,
                })
            }),
        })
    }

    /// Makes this the tool of a refinement: its pins and the action's own
    /// schema (compiled now, so a bad one is refused at registration).
    pub(crate) fn refine(&mut self, tool: &str, refines: &Refines) -> Result<(), RegisterError> {
        let action_schema = refines
            .action_parameters
            .as_ref()
            .map(|schema| ArgumentValidator::compile(tool, std::sync::Arc::new(schema.clone())))
            .transpose()?;
        self.rare.get_or_insert_default().refined = Some(Refined {
            pins: refines.pins.clone(),
            action_schema,
        });
        Ok(())
    }

    /// Completes a call's validated arguments before anything runs: the
    /// pinned values are set, and a refined tool's arguments must then
    /// meet the action's own schema (a refinement only narrows, and this
    /// holds it to that at run time too).
    pub(crate) fn complete(
        &self,
        arguments: &mut Map<String, Value>,
    ) -> Result<(), (String, Option<Vec<Violation>>)> {
        let Some(refined) = self.rare.as_ref().and_then(|r| r.refined.as_ref()) else {
            return Ok(());
        };
        for (key, value) in &refined.pins {
            arguments.insert(key.clone(), value.clone());
        }
        if let Some(schema) = &refined.action_schema
            && let Err(violations) = schema.validate(arguments)
        {
            let message = format!(
                "the arguments of `{}` do not meet action '{}''s parameters: {}",
                self.tool,
                self.action_name(),
                validate::describe(&self.tool, &violations)
            );
            return Err((message, Some(violations)));
        }
        Ok(())
    }

    /// A direct call from the model: validated arguments in, envelope out.
    pub(crate) async fn call(
        &self,
        arguments: Map<String, Value>,
        invocation: &Invocation,
        services: &HostServices,
    ) -> Value {
        if self.confirmation.is_some() {
            return self.propose(arguments, invocation, services).await;
        }
        self.run(
            arguments,
            &invocation.actor,
            &invocation.context,
            None,
            services,
        )
        .await
    }

    /// Queues the call for approval instead of running it.
    async fn propose(
        &self,
        arguments: Map<String, Value>,
        invocation: &Invocation,
        services: &HostServices,
    ) -> Value {
        // Load the record now so a wrong id is reported at once, not after
        // someone approved it.
        let prepared = match self
            .prepare(arguments.clone(), &invocation.actor, services)
            .await
        {
            Ok(p) => p,
            Err(f) => return self.error_envelope(f.record_id.as_deref(), &f.message),
        };
        let Some(queue) = &services.approvals else {
            return self.error_envelope(
                prepared.record_id.as_deref(),
                "this action needs a person's approval and no approval queue is wired; it was not run",
            );
        };
        let ctx = &invocation.context;
        let proposal = Proposal {
            tool_name: self.tool.to_string(),
            action_name: self.action_name().to_owned(),
            object_name: self.object_name.as_deref().map(str::to_owned),
            input: arguments,
            executable_sha256: self.executable_sha256.to_string(),
            conversation_id: ctx.conversation_id.clone(),
            message_id: ctx.message_id.clone(),
            tool_call_id: ctx.tool_call_id.clone(),
            trace_id: ctx.trace_id.clone(),
            proposer: invocation.actor.clone(),
        };
        match queue.propose(proposal) {
            Ok(proposed) => self.proposed_envelope(&proposed.action, prepared.record_id.as_deref()),
            Err(e) => self.error_envelope(
                prepared.record_id.as_deref(),
                &format!("the action could not be queued for approval: {e}"),
            ),
        }
    }

    /// Runs the action now: used for direct calls and, bypassing the
    /// queue, for approved pending actions (with their id as idempotency key).
    pub(crate) async fn run(
        &self,
        arguments: Map<String, Value>,
        actor: &Actor,
        context: &CallContext,
        idempotency_key: Option<&str>,
        services: &HostServices,
    ) -> Value {
        let prepared = match self.prepare(arguments, actor, services).await {
            Ok(p) => p,
            Err(f) => return self.error_envelope(f.record_id.as_deref(), &f.message),
        };
        let record_id = prepared.record_id.clone();
        match self
            .dispatch(prepared, actor, context, idempotency_key, services)
            .await
        {
            Ok(result) => self.success_envelope(record_id.as_deref(), result),
            Err(e) => {
                let mut envelope = self.error_envelope(record_id.as_deref(), &e.to_string());
                if e.outcome_unknown()
                    && let Value::Object(out) = &mut envelope
                {
                    out.insert(OUTCOME_UNKNOWN.into(), Value::Bool(true));
                }
                envelope
            }
        }
    }

    async fn prepare(
        &self,
        mut params: Map<String, Value>,
        actor: &Actor,
        services: &HostServices,
    ) -> Result<Prepared, Failure> {
        let record_id = match params.remove("recordId") {
            None | Some(Value::Null) => None,
            // Any string the schema accepts, the empty one included, is
            // looked up: the data engine says whether such a record exists.
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                return Err(Failure {
                    record_id: None,
                    message: "`recordId` must be a string: the id of the record to act on"
                        .to_owned(),
                });
            }
        };
        if self.row_context && record_id.is_none() {
            let object = self.object_name.as_deref().unwrap_or("record");
            return Err(Failure {
                record_id: None,
                message: format!(
                    "`recordId` is required: action '{}' acts on one {object} record; pass that record's id",
                    self.action_name()
                ),
            });
        }
        let mut record = None;
        if let (Some(id), Some(object)) = (&record_id, &self.object_name) {
            let Some(engine) = &services.data_engine else {
                return Err(Failure {
                    record_id: record_id.clone(),
                    message: "no data engine is wired to load the record".to_owned(),
                });
            };
            match engine.find_record(object, id, actor).await {
                Ok(Some(r)) => record = Some(r),
                Ok(None) => {
                    return Err(Failure {
                        record_id: record_id.clone(),
                        message: format!("{object} record '{id}' was not found"),
                    });
                }
                Err(e) => {
                    return Err(Failure {
                        record_id: record_id.clone(),
                        message: format!("loading {object} record '{id}' failed: {e}"),
                    });
                }
            }
        }
        Ok(Prepared {
            record_id,
            record,
            params,
        })
    }

    async fn dispatch(
        &self,
        prepared: Prepared,
        actor: &Actor,
        context: &CallContext,
        idempotency_key: Option<&str>,
        services: &HostServices,
    ) -> Result<Value, HostError> {
        let key = idempotency_key.map(str::to_owned);
        let not_wired = |what: &str| HostError::failed(format!("no {what} is wired"));
        let mut action = self.dispatch_keys();
        match self.route {
            Route::Script => {
                let engine = services
                    .data_engine
                    .as_ref()
                    .ok_or_else(|| not_wired("data engine"))?;
                engine
                    .execute_action(ScriptRequest {
                        action: self.action_name().to_owned(),
                        object: self.object_name.as_deref().map(str::to_owned),
                        target: non_empty_str(&action, "target"),
                        body: action.remove("body").filter(|b| is_truthy(Some(b))),
                        record: prepared.record,
                        params: prepared.params,
                        actor: actor.clone(),
                        context: context.clone(),
                        idempotency_key: key,
                    })
                    .await
            }
            Route::FieldWrite => {
                let engine = services
                    .data_engine
                    .as_ref()
                    .ok_or_else(|| not_wired("data engine"))?;
                let (Some(object), Some(record_id)) = (&self.object_name, prepared.record_id)
                else {
                    return Err(HostError::failed(
                        "a field write needs an object and a record id",
                    ));
                };
                let patch = match action.remove("patch") {
                    Some(Value::Object(p)) => p,
                    _ => {
                        return Err(HostError::failed(format!(
                            "action '{}' declares `operation: \"update\"` but no `patch` object to write",
                            self.action_name()
                        )));
                    }
                };
                engine
                    .update_record(FieldWriteRequest {
                        action: self.action_name().to_owned(),
                        object: object.to_string(),
                        record_id,
                        patch,
                        actor: actor.clone(),
                        context: context.clone(),
                        idempotency_key: key,
                    })
                    .await
            }
            Route::Flow => {
                let automation = services
                    .automation
                    .as_ref()
                    .ok_or_else(|| not_wired("automation service"))?;
                let flow = non_empty_str(&action, "target").unwrap_or_default();
                let result = automation
                    .execute(FlowRequest {
                        flow: flow.clone(),
                        action: self.action_name().to_owned(),
                        object: self.object_name.as_deref().map(str::to_owned),
                        record: prepared.record,
                        params: prepared.params,
                        actor: actor.clone(),
                        context: context.clone(),
                        idempotency_key: key,
                    })
                    .await?;
                if result.get("success") == Some(&Value::Bool(false)) {
                    let why = result
                        .get("error")
                        .or_else(|| result.get("message"))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| "it reported `success: false`".to_owned());
                    return Err(HostError::failed(format!("flow '{flow}' failed: {why}")));
                }
                Ok(result)
            }
            Route::Api => {
                let client = services
                    .api_client
                    .as_ref()
                    .ok_or_else(|| not_wired("API client"))?;
                let method = api::method_of(action.get("method").and_then(Value::as_str));
                let (record, record_id) = (prepared.record.as_ref(), prepared.record_id.as_deref());
                let body = build_api_body(&action, &prepared.params, record, record_id);
                let target = build_api_target(&action, &prepared.params, record, record_id)
                    .map_err(|why| {
                        HostError::failed(format!(
                            "action '{}' was not sent: {why}",
                            self.action_name()
                        ))
                    })?;
                client
                    .request(ApiRequest {
                        action: self.action_name().to_owned(),
                        method,
                        target,
                        body,
                        headers: Vec::new(),
                        actor: actor.clone(),
                        context: context.clone(),
                        idempotency_key: key,
                    })
                    .await
            }
        }
    }

    /// The action's keys read at dispatch ([`DISPATCH_KEYS`]).
    fn dispatch_keys(&self) -> Map<String, Value> {
        // Written from a map at registration, so it reads back as one.
        serde_json::from_str(&self.action).unwrap_or_default()
    }

    fn base_envelope(&self, ok: bool, record_id: Option<&str>) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert("ok".into(), Value::Bool(ok));
        out.insert(
            "action".into(),
            Value::String(self.action_name().to_owned()),
        );
        if let Some(object) = &self.object_name {
            out.insert("objectName".into(), Value::String(object.to_string()));
        }
        if let Some(id) = record_id {
            out.insert("recordId".into(), Value::String(id.to_owned()));
        }
        out
    }

    fn success_envelope(&self, record_id: Option<&str>, result: Value) -> Value {
        let mut out = self.base_envelope(true, record_id);
        let message = self
            .rare
            .as_ref()
            .and_then(|r| r.success_message.as_deref())
            .map_or_else(
                || DEFAULT_SUCCESS_MESSAGE.replace("{name}", self.action_name()),
                str::to_owned,
            );
        out.insert("message".into(), Value::String(message));
        out.insert("result".into(), result);
        Value::Object(out)
    }

    /// A failure as the model reads it (and the queue stores it). Whatever
    /// a host's client reported, a URL in it loses its userinfo here.
    pub(crate) fn error_envelope(&self, record_id: Option<&str>, error: &str) -> Value {
        let mut out = self.base_envelope(false, record_id);
        let error = crate::redact::text(error).into_owned();
        out.insert("error".into(), Value::String(error));
        Value::Object(out)
    }

    /// The envelope for a proposal: waiting, or (for a repeated tool call
    /// already decided) what became of it.
    fn proposed_envelope(&self, pending: &PendingAction, record_id: Option<&str>) -> Value {
        let decided = |verb: &str| {
            let by = pending
                .decided_by
                .as_deref()
                .map(|b| format!(" by {b}"))
                .unwrap_or_default();
            let reason = pending
                .reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            let mut out = self.base_envelope(false, record_id);
            out.insert(
                "status".into(),
                Value::String(pending.state.as_str().to_owned()),
            );
            out.insert("pendingActionId".into(), Value::String(pending.id.clone()));
            out.insert(
                "error".into(),
                Value::String(format!(
                    "this request (pending action {}) was {verb}{by}{reason}; it did not run. Do not retry it.",
                    pending.id
                )),
            );
            Value::Object(out)
        };
        match pending.state {
            State::Executed | State::Failed if pending.result.is_some() => {
                pending.result.clone().unwrap_or(Value::Null)
            }
            State::Failed => self.error_envelope(
                record_id,
                pending
                    .error
                    .as_deref()
                    .unwrap_or("the approved action failed"),
            ),
            State::Executed => self.success_envelope(record_id, Value::Null),
            State::Rejected => decided("rejected"),
            State::Expired => decided("not approved in time and expired"),
            State::Cancelled => decided("cancelled"),
            State::Pending | State::Approved | State::Executing | State::InDoubt => {
                let mut out = self.base_envelope(true, record_id);
                out.insert("status".into(), Value::String("pending_approval".into()));
                out.insert("pendingActionId".into(), Value::String(pending.id.clone()));
                out.insert(
                    "message".into(),
                    Value::String(pending_message(self.action_name(), &pending.id)),
                );
                Value::Object(out)
            }
        }
    }
}

/// The JSON body of an `api` action, as upstream builds it: `None` for
/// `GET` and `DELETE`; otherwise the params, wrapped under
/// `bodyShape.wrap` when set, then `recordIdParam` set at the top level
/// from the record's `recordIdField` (default `id`) or else the record id,
/// then every `bodyExtra` constant (which wins).
pub fn build_api_body(
    action: &Map<String, Value>,
    params: &Map<String, Value>,
    record: Option<&Value>,
    record_id: Option<&str>,
) -> Option<Value> {
    let method = api::method_of(action.get("method").and_then(Value::as_str));
    if api::sends_query(&method) {
        return None;
    }
    let wrap = action
        .get("bodyShape")
        .and_then(|s| s.get("wrap"))
        .and_then(Value::as_str)
        .filter(|w| !w.is_empty());
    Some(Value::Object(api_data(
        action, params, record, record_id, wrap,
    )))
}

/// The URL target of an `api` action: its `target`, and for `GET` and
/// `DELETE` (which send no body) the data a body would carry in the query
/// string, so the request sent is the request approved. The pairs are
/// the params in order, then `recordIdParam` (from the record's
/// `recordIdField`, default `id`, else the record id), then the
/// `bodyExtra` constants, a later pair replacing an earlier one of the
/// same name, as in the body; appended to a query the target already
/// has. A string is sent as it is, a number or boolean as JSON writes it,
/// a list as one pair per item; `null` means "not given" and is left
/// out. Names and values are percent-encoded (everything but
/// `A-Z a-z 0-9 - . _ ~`).
///
/// An error says which value a query cannot carry (an object, a nested
/// list, or a `bodyShape.wrap`); the action is then not sent. Upstream
/// sends a `GET` or `DELETE` with neither body nor query, dropping the
/// data: a deliberate difference.
pub fn build_api_target(
    action: &Map<String, Value>,
    params: &Map<String, Value>,
    record: Option<&Value>,
    record_id: Option<&str>,
) -> Result<String, String> {
    let target = match action.get("target") {
        Some(Value::String(t)) => t.as_str(),
        _ => "",
    };
    let method = api::method_of(action.get("method").and_then(Value::as_str));
    if !api::sends_query(&method) {
        return Ok(target.to_owned());
    }
    if let Some(wrap) = action
        .get("bodyShape")
        .and_then(|s| s.get("wrap"))
        .and_then(Value::as_str)
        .filter(|w| !w.is_empty())
    {
        return Err(format!(
            "a query string cannot nest the params under `bodyShape.wrap` (`{wrap}`)"
        ));
    }
    let mut query = String::new();
    for (name, value) in api_data(action, params, record, record_id, None) {
        let mut pair = |v: &str| {
            if !query.is_empty() {
                query.push('&');
            }
            percent_encode(&name, &mut query);
            query.push('=');
            percent_encode(v, &mut query);
        };
        let scalar = |v: &Value| match v {
            Value::String(s) => Ok(Some(s.clone())),
            Value::Number(n) => Ok(Some(n.to_string())),
            Value::Bool(b) => Ok(Some(b.to_string())),
            Value::Null => Ok(None),
            _ => Err(format!(
                "`{name}` is {}, which a query string cannot carry",
                objectstack_spec::json::kind(v)
            )),
        };
        match &value {
            Value::Array(items) => {
                for item in items {
                    if let Some(v) = scalar(item)? {
                        pair(&v);
                    }
                }
            }
            other => {
                if let Some(v) = scalar(other)? {
                    pair(&v);
                }
            }
        }
    }
    if query.is_empty() {
        return Ok(target.to_owned());
    }
    let (head, fragment) = match target.find('#') {
        Some(i) => target.split_at(i),
        None => (target, ""),
    };
    let joiner = match head.find('?') {
        None => "?",
        Some(_) if head.ends_with('?') || head.ends_with('&') => "",
        Some(_) => "&",
    };
    Ok(format!("{head}{joiner}{query}{fragment}"))
}

/// The keys of an action that dispatch reads (the rest was read at
/// registration, into the tool's fields and its executable digest).
const DISPATCH_KEYS: [&str; 8] = [
    "body",
    "bodyExtra",
    "bodyShape",
    "method",
    "patch",
    "recordIdField",
    "recordIdParam",
    "target",
];

/// `key` of an action when it is a non-empty string.
fn non_empty_str(action: &Map<String, Value>, key: &str) -> Option<String> {
    match action.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// The action reduced to [`DISPATCH_KEYS`], as compact JSON text, so a
/// served tool does not keep a copy of everything its action says
/// (labels, params, `ai`).
fn dispatch_keys(action: Map<String, Value>) -> Box<str> {
    let kept: Map<String, Value> = action
        .into_iter()
        .filter(|(key, _)| DISPATCH_KEYS.contains(&key.as_str()))
        .collect();
    Value::Object(kept).to_string().into_boxed_str()
}

/// What an `api` action sends: the params (under `wrap` when given), then
/// `recordIdParam`, then the `bodyExtra` constants (which win).
fn api_data(
    action: &Map<String, Value>,
    params: &Map<String, Value>,
    record: Option<&Value>,
    record_id: Option<&str>,
    wrap: Option<&str>,
) -> Map<String, Value> {
    let mut body = match wrap {
        Some(key) => {
            let mut m = Map::new();
            m.insert(key.to_owned(), Value::Object(params.clone()));
            m
        }
        None => params.clone(),
    };
    if let Some(param) = action
        .get("recordIdParam")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
    {
        let field = action
            .get("recordIdField")
            .and_then(Value::as_str)
            .filter(|f| !f.is_empty())
            .unwrap_or("id");
        let from_record = record
            .and_then(|r| r.get(field))
            .filter(|v| !v.is_null())
            .cloned();
        if let Some(value) =
            from_record.or_else(|| record_id.map(|id| Value::String(id.to_owned())))
        {
            body.insert(param.to_owned(), value);
        }
    }
    if let Some(Value::Object(extra)) = action.get("bodyExtra") {
        for (k, v) in extra {
            body.insert(k.clone(), v.clone());
        }
    }
    body
}

/// Appends `s` percent-encoded: every byte but `A-Z a-z 0-9 - . _ ~`
/// becomes `%XX`.
fn percent_encode(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0x0f)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn body_is_params_then_record_id_then_extra() {
        let action = map(json!({
            "bodyShape": {"wrap": "data"},
            "recordIdParam": "invoiceId",
            "recordIdField": "number",
            "bodyExtra": {"source": "ai", "invoiceId": "overridden"}
        }));
        let params = map(json!({"amount": 5}));
        let record = json!({"id": "r1", "number": "INV-7"});
        assert_eq!(
            build_api_body(&action, &params, Some(&record), Some("r1")),
            Some(json!({"data": {"amount": 5}, "invoiceId": "overridden", "source": "ai"}))
        );
    }

    #[test]
    fn record_id_param_falls_back_to_id_then_record_id() {
        let action = map(json!({"recordIdParam": "rid"}));
        let params = map(json!({"a": 1}));
        assert_eq!(
            build_api_body(&action, &params, Some(&json!({"id": 42})), Some("x")),
            Some(json!({"a": 1, "rid": 42}))
        );
        assert_eq!(
            build_api_body(&action, &params, Some(&json!({"name": "n"})), Some("x")),
            Some(json!({"a": 1, "rid": "x"}))
        );
        assert_eq!(
            build_api_body(&action, &params, None, None),
            Some(json!({"a": 1}))
        );
    }

    #[test]
    fn get_and_delete_carry_their_data_in_the_query() {
        let action = map(json!({
            "method": "delete", "target": "tasks?v=1#top", "recordIdParam": "id",
            "recordIdField": "number", "bodyExtra": {"source": "a i", "n": null}
        }));
        let params = map(json!({"q": "é&=/", "tags": ["a", 2, true, null], "skip": null}));
        let record = json!({"id": "r1", "number": 7});
        assert_eq!(
            build_api_target(&action, &params, Some(&record), Some("r1")).unwrap(),
            "tasks?v=1&q=%C3%A9%26%3D%2F&tags=a&tags=2&tags=true&id=7&source=a%20i#top"
        );
        let plain = map(json!({"method": "GET", "target": "tasks"}));
        assert_eq!(
            build_api_target(&plain, &Map::new(), None, None).unwrap(),
            "tasks"
        );
        assert_eq!(
            build_api_target(&plain, &map(json!({"a": 1})), None, None).unwrap(),
            "tasks?a=1"
        );
        let open = map(json!({"method": "GET", "target": "tasks?"}));
        assert_eq!(
            build_api_target(&open, &map(json!({"a": 1})), None, None).unwrap(),
            "tasks?a=1"
        );
        // A POST keeps its target: the data goes in the body.
        let post = map(json!({"target": "tasks"}));
        assert_eq!(
            build_api_target(&post, &map(json!({"a": 1})), None, None).unwrap(),
            "tasks"
        );
    }

    #[test]
    fn what_a_query_cannot_carry_is_an_error_not_a_drop() {
        let get = map(json!({"method": "GET", "target": "t"}));
        for params in [
            json!({"f": {"a": 1}}),
            json!({"f": [[1]]}),
            json!({"f": [{"a": 1}]}),
        ] {
            let err = build_api_target(&get, &map(params.clone()), None, None).unwrap_err();
            assert!(err.contains("`f`"), "{params}: {err}");
        }
        let wrapped = map(json!({"method": "GET", "target": "t", "bodyShape": {"wrap": "d"}}));
        assert!(build_api_target(&wrapped, &Map::new(), None, None).is_err());
        let record = json!({"id": {"nested": true}});
        let by_record = map(json!({"method": "DELETE", "target": "t", "recordIdParam": "id"}));
        assert!(build_api_target(&by_record, &Map::new(), Some(&record), Some("x")).is_err());
    }

    #[test]
    fn get_and_delete_send_no_body_and_flat_is_unwrapped() {
        let params = map(json!({"a": 1}));
        for m in ["GET", "delete"] {
            assert_eq!(
                build_api_body(&map(json!({"method": m})), &params, None, None),
                None
            );
        }
        assert_eq!(
            build_api_body(
                &map(json!({"method": "put", "bodyShape": "flat"})),
                &params,
                None,
                None
            ),
            Some(json!({"a": 1}))
        );
    }
}
