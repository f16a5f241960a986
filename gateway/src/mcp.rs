//! The MCP server side: one [`Session`] per connected client (rmcp's
//! [`ServerHandler`]), serving the current catalog.

use std::sync::Arc;

use objectstack_bridge::approval::PendingAction;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, InitializeResult, InputRequest,
    InputRequests, InputResponses, ListPromptsResult, ListToolsResult, PaginatedRequestParams,
    PromptMessage, ProtocolVersion, Role, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::identity::{ApiKey, Caller, Transport};
use crate::{ConfirmMode, Shared};

/// One client's session.
#[derive(Clone)]
pub(crate) struct Session {
    shared: Arc<Shared>,
    /// The stdio caller (fixed for the process); `None` over HTTP, where
    /// each request carries its own key.
    stdio: Option<Caller>,
}

impl Session {
    pub(crate) fn new(shared: Arc<Shared>, stdio: Option<Caller>) -> Self {
        Session { shared, stdio }
    }

    /// The caller of one request: the stdio caller, or the bearer key and
    /// session id of the HTTP request that carried it.
    fn caller(&self, context: &RequestContext<RoleServer>) -> Caller {
        if let Some(caller) = &self.stdio {
            return caller.clone();
        }
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let header = |name: &str| {
            parts
                .and_then(|p| p.headers.get(name))
                .and_then(|v| v.to_str().ok())
        };
        Caller {
            key: header("authorization").and_then(ApiKey::from_bearer),
            transport: Transport::Http,
            session: header("mcp-session-id").map(str::to_owned),
        }
    }
}

impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        // Prompts are declared even while the stack has none: a reload may
        // add some, and every client is told of changes to both lists.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new(
                "objectstack-gateway",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(format!(
                "Tools run ObjectStack actions on the user's server under the user's own key. A \
                 call that needs a person's approval returns `status: pending_approval` and a \
                 `pendingActionId`: it has not run; do not call it again. Look its outcome up \
                 later with `{}`.",
                crate::PENDING_TOOL
            ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.shared.add_peer(context.peer.clone());
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The transports write the catalog's tools in its place as the
        // answer is sent (see `listing`), so the list is never held whole.
        let legacy = context
            .protocol_version()
            .is_none_or(|v| v.as_str() < rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
        Ok(self.shared.listing.placeholder(legacy))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&context);
        if self.shared.tracker.is_closed() {
            // Draining (SIGTERM): over HTTP such a request is answered 503
            // before it gets here; over stdio the call is refused here.
            let arguments = request.arguments.unwrap_or_default();
            self.shared
                .refuse_unknown(&caller, &request.name, &arguments);
            return Ok(
                rmcp::model::CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                    "The gateway is shutting down and did not run this call; nothing was changed. \
                 Call the tool again once it is back.",
                )])
                .into(),
            );
        }
        let elicit = if self.shared.config.confirm == ConfirmMode::Elicit {
            confirmation_channel(&context)
        } else {
            Confirm::Queue
        };
        let tool_call_id = Some(request_id(&context));
        let arguments = request.arguments.unwrap_or_default();
        let shared = self.shared.clone();
        let name = request.name.to_string();
        // Tracked, so SIGTERM waits for it.
        if let Some(state) = request.request_state.as_deref() {
            // The retry of a call that asked for confirmation (2026-07-28):
            // the user's answer is in `inputResponses`. Before the check
            // below: the proposal exists whatever a reload did to the tool
            // since, and a user's decline must still be recorded.
            let answer = answer_of(request.input_responses.as_ref());
            let resume = shared.resume(&caller, &name, arguments, state, answer);
            return Ok(self.shared.tracker.track_future(resume).await.into());
        }
        if !shared.serves(&name) {
            // A protocol error, as the MCP specification has it for an
            // unknown tool (a tool's own failures are tool results).
            shared.refuse_unknown(&caller, &name, &arguments);
            return Err(ErrorData::invalid_params(
                format!(
                    "Unknown tool: {}; tools/list names the tools served",
                    crate::shown_name(&name)
                ),
                None,
            ));
        }
        let call = shared.call(&caller, &name, arguments, tool_call_id, elicit);
        Ok(self.shared.tracker.track_future(call).await)
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // The SDK keeps only what was both requested and advertised.
        Some(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .build(),
        )
    }

    /// `subscriptions/listen` (2026-07-28): every reload of the stack is
    /// announced on the subscription until the client cancels it.
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.changes.subscribe();
        loop {
            tokio::select! {
                () = subscription.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        // The gateway is shutting down.
                        return Ok(());
                    }
                    let sink = subscription.sink();
                    if sink.accepted().tools_list_changed == Some(true)
                        && sink.notify_tool_list_changed().await.is_err()
                    {
                        return Ok(());
                    }
                    if sink.accepted().prompts_list_changed == Some(true)
                        && sink.notify_prompt_list_changed().await.is_err()
                    {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// A request rmcp could not read as one of MCP's: an unknown method, or
    /// a known one whose params do not have its shape (rmcp answers both
    /// "method not found" with the bare method name, on stdio too).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(unreadable(&request.method, request.params.as_ref()))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            self.shared
                .catalog()
                .prompts
                .iter()
                .map(|p| p.prompt.clone())
                .collect(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let catalog = self.shared.catalog();
        let Some(skill) = catalog
            .prompts
            .iter()
            .find(|p| p.prompt.name == request.name)
        else {
            return Err(ErrorData::invalid_params(
                format!(
                    "no prompt named `{}`; prompts/list names the skills served",
                    request.name
                ),
                None,
            ));
        };
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            skill.instructions.clone(),
        )]);
        if let Some(description) = &skill.prompt.description {
            result = result.with_description(description.clone());
        }
        Ok(result.into())
    }
}

/// The request methods of MCP's revisions that rmcp reads into typed
/// requests: one of them arrives as a custom request only when its params
/// do not fit.
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
];

/// The error for a request rmcp could not read: invalid params for a
/// method MCP has (a `tools/call` says what is wrong with it, as the HTTP
/// check in front of rmcp does), method not found for any other.
fn unreadable(method: &str, params: Option<&Value>) -> ErrorData {
    if method == "tools/call" {
        let object = params.and_then(Value::as_object);
        let fault = crate::jsonrpc::tool_call_fault(
            params
                .filter(|p| !p.is_object())
                .map(crate::jsonrpc::kind_of),
            object
                .and_then(|o| o.get("name"))
                .map(crate::jsonrpc::kind_of),
            object
                .and_then(|o| o.get("arguments"))
                .map(crate::jsonrpc::kind_of),
        );
        return ErrorData::invalid_params(
            fault.unwrap_or_else(|| {
                "Invalid params: a tool call takes `name` (a string), `arguments` (an object) \
                 and `_meta`"
                    .into()
            }),
            None,
        );
    }
    if MCP_METHODS.contains(&method) {
        return ErrorData::invalid_params(
            format!(
                "Invalid params: the params of `{method}` do not have the shape MCP gives them"
            ),
            None,
        );
    }
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: `{method}` is not a method this server offers"),
        None,
    )
}

fn request_id(context: &RequestContext<RoleServer>) -> String {
    match serde_json::to_value(&context.id) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// How a call that needs confirmation is confirmed.
pub(crate) enum Confirm<'a> {
    /// Proposed to the queue; someone decides later.
    Queue,
    /// The present user is asked with a server-to-client request (before
    /// 2026-07-28).
    Ask(&'a Peer<RoleServer>),
    /// The present user is asked by answering the call with
    /// `input_required` and an elicitation; the client retries with the
    /// answer (2026-07-28's multi round-trip requests).
    InputRequired,
}

/// How this request's client can be asked: by a request on revisions
/// before 2026-07-28, by an `input_required` result from then on, or not
/// at all when it declared no form elicitation.
fn confirmation_channel(context: &RequestContext<RoleServer>) -> Confirm<'_> {
    let legacy = context
        .protocol_version()
        .is_none_or(|v| v.as_str() < ProtocolVersion::V_2026_07_28.as_str());
    if legacy {
        // Capabilities were declared once, at `initialize`.
        if context
            .peer
            .supported_elicitation_modes()
            .contains(&rmcp::service::ElicitationMode::Form)
        {
            return Confirm::Ask(&context.peer);
        }
        return Confirm::Queue;
    }
    // Sessionless: every request declares its client's capabilities.
    let form = context
        .meta
        .client_capabilities()
        .and_then(|c| c.elicitation)
        // A capability naming neither mode means form (the SDK's reading).
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    if form {
        Confirm::InputRequired
    } else {
        Confirm::Queue
    }
}

/// The key of the one input request a confirmation asks.
pub(crate) const CONFIRM_INPUT: &str = "confirm";

/// The `input_required` answer that asks the user about `row`; the request
/// state is the pending action's id (the row stays server-side, so the
/// echoed state is only a handle, checked against the caller on retry).
pub(crate) fn input_required(row: &PendingAction) -> Option<rmcp::model::InputRequiredResult> {
    let params = question(row).ok()?;
    let mut requests = InputRequests::new();
    requests.insert(
        CONFIRM_INPUT.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    Some(rmcp::model::InputRequiredResult::new(
        Some(requests),
        Some(row.id.clone()),
    ))
}

/// The user's answer in a retried call's `inputResponses`.
fn answer_of(responses: Option<&InputResponses>) -> Answer {
    let Some(response) = responses.and_then(|r| r.get(CONFIRM_INPUT)) else {
        return Answer::Unavailable("the retry carried no answer to the confirmation".into());
    };
    match serde_json::from_value::<ElicitResult>(response.clone()) {
        Ok(result) => decision(&result.action),
        Err(e) => Answer::Unavailable(format!(
            "the confirmation answer is not an elicitation result: {e}"
        )),
    }
}

fn decision(action: &ElicitationAction) -> Answer {
    match action {
        ElicitationAction::Accept => Answer::Accept,
        ElicitationAction::Decline => Answer::Decline("declined"),
        ElicitationAction::Cancel => Answer::Decline("cancelled"),
        _ => Answer::Decline("did not accept"),
    }
}

/// What the user answered.
pub(crate) enum Answer {
    /// Run it.
    Accept,
    /// Do not run it ("declined" or "cancelled").
    Decline(&'static str),
    /// The question could not be asked or answered; the call stays queued.
    Unavailable(String),
}

/// Asks the present user whether to run a pending action: the form shows
/// the tool and its arguments; accept runs it, decline does not. When the
/// gateway starts shutting down (`stopping`) before the user answers, the
/// question is given up and the action stays queued, so the drain does
/// not wait for a person and the caller still gets its answer.
pub(crate) async fn ask(
    peer: &Peer<RoleServer>,
    row: &PendingAction,
    stopping: &tokio_util::sync::CancellationToken,
) -> Answer {
    let params = match question(row) {
        Ok(p) => p,
        Err(e) => return Answer::Unavailable(e),
    };
    tokio::select! {
        answer = peer.create_elicitation(params) => match answer {
            Ok(answer) => decision(&answer.action),
            Err(e) => Answer::Unavailable(e.to_string()),
        },
        () = stopping.cancelled() => Answer::Unavailable(
            "the gateway is shutting down, so it stopped waiting for the answer".into(),
        ),
    }
}

/// The confirmation form for a pending action: its action, object and
/// arguments, and nothing to fill in.
fn question(row: &PendingAction) -> Result<ElicitRequestParams, String> {
    let arguments = serde_json::to_string_pretty(&row.input).unwrap_or_default();
    let target = row
        .object_name
        .as_deref()
        .map(|o| format!(" on {o}"))
        .unwrap_or_default();
    let message = format!(
        "The assistant wants to run '{}'{target} (tool {}), which needs your confirmation.\n\
         Arguments:\n{arguments}\n\nAccept to run it now under your account, or decline.",
        row.action_name, row.tool_name
    );
    let params = json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": {}}
    });
    serde_json::from_value(params).map_err(|e| e.to_string())
}
