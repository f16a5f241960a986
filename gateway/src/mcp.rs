//! The MCP server side: one [`Session`] per connected client (rmcp's
//! [`ServerHandler`]), serving the current catalog.

use std::sync::Arc;

use objectstack_bridge::approval::PendingAction;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequestParams, ElicitationAction,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, InitializeResult,
    ListPromptsResult, ListToolsResult, PaginatedRequestParams, PromptMessage, ProtocolVersion,
    Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
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
        let catalog = self.shared.catalog();
        let capabilities = if catalog.prompts.is_empty() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .enable_prompts_list_changed()
                .build()
        };
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.shared.catalog().tools.clone(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&context);
        let elicit = (self.shared.config.confirm == ConfirmMode::Elicit && can_elicit(&context))
            .then_some(&context.peer);
        let tool_call_id = Some(request_id(&context));
        let arguments = request.arguments.unwrap_or_default();
        let shared = self.shared.clone();
        let name = request.name.to_string();
        let call = shared.call(&caller, &name, arguments, tool_call_id, elicit);
        // Tracked, so SIGTERM waits for it.
        let result = self.shared.tracker.track_future(call).await;
        Ok(result.into())
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

fn request_id(context: &RequestContext<RoleServer>) -> String {
    match serde_json::to_value(&context.id) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// Whether the client declared form elicitation on a revision that still
/// lets a server send it requests (before 2026-07-28).
fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    let legacy = context
        .protocol_version()
        .is_some_and(|v| v.as_str() < ProtocolVersion::V_2026_07_28.as_str());
    legacy
        && context
            .peer
            .supported_elicitation_modes()
            .contains(&rmcp::service::ElicitationMode::Form)
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
/// the tool and its arguments; accept runs it, decline does not.
pub(crate) async fn ask(peer: &Peer<RoleServer>, row: &PendingAction) -> Answer {
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
    let params: ElicitRequestParams = match serde_json::from_value(params) {
        Ok(p) => p,
        Err(e) => return Answer::Unavailable(e.to_string()),
    };
    match peer.create_elicitation(params).await {
        Ok(answer) => match answer.action {
            ElicitationAction::Accept => Answer::Accept,
            ElicitationAction::Decline => Answer::Decline("declined"),
            ElicitationAction::Cancel => Answer::Decline("cancelled"),
            _ => Answer::Decline("did not accept"),
        },
        Err(e) => Answer::Unavailable(e.to_string()),
    }
}
