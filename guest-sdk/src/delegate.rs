//! Call other tools through the host's whole pipeline. Only components whose manifest grants
//! `delegate` (the tool names they may call) may use it. Each call runs in the same session with
//! the caller's rules, mode and hooks, and with at most the caller's own grants: delegating never
//! reaches further than the delegating tool itself could.

pub use crate::__private::bindings::janua::plugin::delegate::Delegated;

use crate::__private::bindings::janua::plugin::delegate as host;

/// Calls `tool` with `input` and returns its `tool_result`: a failure of any stage (unknown
/// tool, schema, hooks, permission, timeout, `delegation_depth_exceeded`) is an error result,
/// never a trap.
pub fn call(tool: &str, input: &serde_json::Value) -> Delegated {
    host::call(tool, &input.to_string())
}

impl Delegated {
    /// The structured result parsed, when the callee gave one.
    pub fn structured_json(&self) -> Option<serde_json::Value> {
        self.structured
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
    }
}
