//! The stable error kinds every error result carries.

use serde::Serialize;

/// Stable error kinds; each error result carries one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No such tool in the effective registry.
    UnknownTool,
    /// The input does not match the schema (or is not JSON).
    InvalidInput,
    /// The tool's own `validate-input` rejected the input.
    ValidationFailed,
    /// A PreToolUse hook stopped the run.
    HookStopped,
    /// A PreToolUse hook deferred the call to the caller.
    Deferred,
    /// PreToolUse hooks rewrote the input in different ways; the call is denied.
    HookConflict,
    /// The permission decision refused the call.
    PermissionDenied,
    /// The tool reported an error or crashed.
    ToolFailed,
    /// The call ran past its deadline.
    Timeout,
    /// The call was cancelled.
    Cancelled,
    /// The call hit a memory or table limit.
    ResourceExhausted,
    /// A delegated call or sub-session would nest deeper than the delegation depth limit.
    DelegationDepthExceeded,
    /// janua itself failed.
    Internal,
}

impl ErrorKind {
    /// The stable snake_case string.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::ValidationFailed => "validation_failed",
            ErrorKind::HookStopped => "hook_stopped",
            ErrorKind::Deferred => "deferred",
            ErrorKind::HookConflict => "hook_conflict",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::ToolFailed => "tool_failed",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::ResourceExhausted => "resource_exhausted",
            ErrorKind::DelegationDepthExceeded => "delegation_depth_exceeded",
            ErrorKind::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
