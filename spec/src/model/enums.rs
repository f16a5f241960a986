//! The string enums of the model: each value's wire spelling, a list of
//! every value and (with the `schema` feature) a JSON Schema `enum`.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

string_enum! {
    /// How an action is dispatched (its `type`).
    ActionType {
        /// Runs a handler on the server (`target` or `body`).
        Script = "script",
        /// Opens a URL in the browser; UI-only.
        Url = "url",
        /// Opens a modal; UI-only.
        Modal = "modal",
        /// Starts a flow named by `target`.
        Flow = "flow",
        /// Calls an HTTP endpoint named by `target`.
        Api = "api",
        /// Opens a form; UI-only.
        Form = "form",
    }
}

string_enum! {
    /// Where an action appears in the UI (`locations[]`).
    ActionLocation {
        /// The list view's toolbar.
        ListToolbar = "list_toolbar",
        /// Each row of a list (row context).
        ListItem = "list_item",
        /// A record page's header (row context).
        RecordHeader = "record_header",
        /// A record page's overflow menu (row context).
        RecordMore = "record_more",
        /// A related list on a record page (row context).
        RecordRelated = "record_related",
        /// A section of a record page.
        RecordSection = "record_section",
    }
}

string_enum! {
    /// An action's visual emphasis (`variant`); `danger` marks it destructive.
    ActionVariant {
        /// The main call to action.
        Primary = "primary",
        /// A secondary button.
        Secondary = "secondary",
        /// Destructive: an AI call needs confirmation unless the `ai` block says otherwise.
        Danger = "danger",
        /// A borderless button.
        Ghost = "ghost",
        /// A link-styled button.
        Link = "link",
    }
}

string_enum! {
    /// What an action does to a record (`mode`); `delete` marks it destructive.
    ActionMode {
        /// Creates a record.
        Create = "create",
        /// Edits a record.
        Edit = "edit",
        /// Deletes a record: an AI call needs confirmation unless the `ai` block says otherwise.
        Delete = "delete",
        /// Anything else.
        Custom = "custom",
    }
}

string_enum! {
    /// The HTTP method of an `api` action (`method`, POST when absent).
    HttpMethod {
        /// POST.
        Post = "POST",
        /// PATCH.
        Patch = "PATCH",
        /// PUT.
        Put = "PUT",
        /// DELETE (sends no body).
        Delete = "DELETE",
    }
}

string_enum! {
    /// A declarative write (`operation`).
    ActionOperation {
        /// Writes the action's `patch` to the record in context.
        Update = "update",
    }
}

string_enum! {
    /// The tool category of an exposed action (`ai.category`).
    AiCategory {
        /// Reads data.
        Data = "data",
        /// Has side effects (the default).
        Action = "action",
        /// Starts an automation.
        Flow = "flow",
        /// Talks to an external system.
        Integration = "integration",
        /// Searches embeddings.
        VectorSearch = "vector_search",
        /// Aggregates data.
        Analytics = "analytics",
        /// A helper.
        Utility = "utility",
    }
}

string_enum! {
    /// Which agent surface a skill binds to (`surface`, `ask` when absent).
    SkillSurface {
        /// Data agents.
        Ask = "ask",
        /// Authoring agents.
        Build = "build",
        /// Either.
        Both = "both",
    }
}

string_enum! {
    /// The product surface an agent is (`surface`, `ask` when absent).
    AgentSurface {
        /// The data product.
        Ask = "ask",
        /// The authoring product.
        Build = "build",
    }
}

string_enum! {
    /// What a tool record's `binding` refines.
    BindingType {
        /// An action, by name.
        Action = "action",
        /// A flow, by name.
        Flow = "flow",
    }
}

string_enum! {
    /// How a skill trigger condition compares (`operator`).
    TriggerOperator {
        /// Equal to one string.
        Eq = "eq",
        /// Not equal to one string.
        Neq = "neq",
        /// One of a list of strings.
        In = "in",
        /// None of a list of strings.
        NotIn = "not_in",
        /// Contains a string.
        Contains = "contains",
    }
}
