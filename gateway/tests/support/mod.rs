//! Shared test support.
#![allow(dead_code, unreachable_pub)]

pub mod fake;
pub mod inbox;

/// A proposal made elsewhere on the gateway's store (not through a tool
/// call): `tool` on `object`'s record `record`, by `proposer`.
pub fn proposal_on(
    tool: &str,
    object: &str,
    record: &str,
    proposer: &str,
) -> objectstack_bridge::approval::Proposal {
    let action = tool.strip_prefix("action_").unwrap_or(tool);
    objectstack_bridge::approval::Proposal {
        tool_name: tool.into(),
        action_name: action.into(),
        object_name: Some(object.into()),
        input: serde_json::json!({ "recordId": record })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        // Listing and deciding never check it; executing would.
        executable_sha256: "0".repeat(64),
        conversation_id: None,
        message_id: None,
        tool_call_id: None,
        trace_id: None,
        proposer: objectstack_bridge::runtime::Actor::new(proposer),
    }
}
