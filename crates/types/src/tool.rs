//! What a tool is and how a call to it arrives: its spec and side-effect class, the model's
//! `tool_use` block, a deferred call, and the names janua gives special meaning.

use serde::Serialize;

/// The Agent tool's canonical name.
pub const AGENT_TOOL: &str = "Agent";

/// Side-effect class of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityClass {
    /// Reads and discloses workspace data.
    Read,
    /// Mutates files.
    Write,
    /// Runs processes.
    Process,
    /// Talks to the network.
    Network,
    /// Proxies an MCP server.
    Mcp,
    /// Delegates work.
    Agent,
    /// Controls an external application.
    External,
}

impl CapabilityClass {
    /// The lower-case name used in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            CapabilityClass::Read => "read",
            CapabilityClass::Write => "write",
            CapabilityClass::Process => "process",
            CapabilityClass::Network => "network",
            CapabilityClass::Mcp => "mcp",
            CapabilityClass::Agent => "agent",
            CapabilityClass::External => "external",
        }
    }
}

/// What the model and the permission engine know about a tool.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ToolSpec {
    /// Canonical name.
    pub name: String,
    /// Description shown to the model.
    pub description: String,
    /// JSON Schema of the input object.
    pub input_schema: serde_json::Value,
    /// Side-effect class.
    pub class: CapabilityClass,
    /// True when the tool never mutates anything.
    pub read_only: bool,
    /// True when calls may run in parallel.
    pub concurrency_safe: bool,
    /// Input field that rule specifiers match; a path for read and write tools.
    pub rule_field: Option<String>,
    /// True when the component's `validate-input` checks this tool; false skips that call.
    #[serde(default = "validates_by_default")]
    pub validates_input: bool,
}

/// A spec that does not say is validated: skipping a check the tool wanted is the worse mistake.
fn validates_by_default() -> bool {
    true
}

impl ToolSpec {
    /// The rule field when it names a path: read and write tools' rule fields are paths.
    #[inline]
    pub fn path_field(&self) -> Option<&str> {
        matches!(self.class, CapabilityClass::Read | CapabilityClass::Write)
            .then_some(self.rule_field.as_deref())
            .flatten()
    }
}

/// A `tool_use` block from the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// The block's id; the result answers it.
    pub id: String,
    /// The tool name as the model wrote it.
    pub name: String,
    /// The input object.
    pub input: serde_json::Value,
}

/// A deferred call: what the caller needs to resume it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct DeferredCall {
    /// The `tool_use` id.
    pub id: String,
    /// The tool name as requested.
    pub name: String,
    /// The input as requested.
    pub input: serde_json::Value,
}
