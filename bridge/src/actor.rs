//! Who a call runs for, below both the runtime (which resolves it) and the
//! approval queue (which records who proposed and who decided).

use serde::{Deserialize, Serialize};

/// Who a call runs for. Permission checks, row-level security and audit
/// attribution are the host's, keyed on this identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// The user (or principal) id.
    pub id: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Roles (upstream calls them positions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Permission names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<String>,
}

impl Actor {
    /// An actor with an id and nothing else.
    pub fn new(id: impl Into<String>) -> Self {
        Actor {
            id: id.into(),
            name: None,
            roles: Vec::new(),
            permissions: Vec::new(),
        }
    }

    /// The synthetic principal calls fall back to: `ai_agent`, "AI Assistant".
    pub fn ai_agent() -> Self {
        Actor {
            id: "ai_agent".to_owned(),
            name: Some("AI Assistant".to_owned()),
            roles: Vec::new(),
            permissions: Vec::new(),
        }
    }
}
