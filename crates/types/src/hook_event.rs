//! The vocabulary of hook and monitor configuration: the events hooks subscribe to, what a
//! failing hook counts as, and the event kinds and queue bound a monitor may ask for. Shared by
//! plugin manifests, settings and the hooks that run them.

/// Lifecycle events hooks can subscribe to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum HookEvent {
    /// After validation, before the permission decision.
    PreToolUse,
    /// The decision is `ask`: before the prompter.
    PermissionRequest,
    /// The decision denied the call.
    PermissionDenied,
    /// After a successful call.
    PostToolUse,
    /// After a failed call.
    PostToolUseFailure,
    /// After every call of a batch has finished.
    PostToolBatch,
    /// When a session starts (or resumes).
    SessionStart,
    /// When a session ends.
    SessionEnd,
}

impl HookEvent {
    /// Every event, in lifecycle order.
    pub const ALL: [HookEvent; 8] = [
        HookEvent::SessionStart,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PermissionDenied,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::PostToolBatch,
        HookEvent::SessionEnd,
    ];

    /// The `hook_event_name` value.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PermissionDenied => "PermissionDenied",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::PostToolBatch => "PostToolBatch",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The event called `name` (exact, case-sensitive, as in Claude Code's settings).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.as_str() == name)
    }

    /// Every event name, comma-separated, for error messages.
    pub fn names() -> String {
        Self::ALL
            .iter()
            .map(|event| event.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// True for events about one tool call: their matcher selects tool names and `if` applies.
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PermissionRequest
                | HookEvent::PermissionDenied
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
        )
    }

    /// True for the events whose answers gate a call: a failing hook denies it (fail closed)
    /// unless the hook is declared `on-error = "ignore"`.
    pub fn is_policy_gate(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PermissionRequest)
    }
}

/// What a failing hook counts as on a policy event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// The call is denied (the default).
    #[default]
    Deny,
    /// The failure is reported and the hook ignored.
    Ignore,
}

impl OnError {
    /// Reads `deny` or `ignore`.
    pub fn parse(text: Option<&str>) -> Option<Self> {
        match text {
            None | Some("deny") => Some(OnError::Deny),
            Some("ignore") => Some(OnError::Ignore),
            Some(_) => None,
        }
    }
}

/// The lifecycle event kinds a monitor may filter on.
pub const MONITOR_EVENTS: &[&str] = &[
    "session_start",
    "tool_started",
    "decision",
    "permission_request",
    "hook_started",
    "hook_response",
    "tool_finished",
    "batch_finished",
    "session_end",
];

/// The largest queue a manifest may ask for (each slot is allocated up front).
pub const MAX_QUEUE: usize = 65_536;
