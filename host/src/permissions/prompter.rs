//! Prompters: who answers an `ask`. With none available, `ask` becomes a denial that says what
//! would allow the call.

use serde::Serialize;

/// What a prompter is asked.
#[derive(Debug, Clone, Serialize)]
pub struct PermissionRequest {
    /// Canonical tool name.
    pub tool: String,
    /// The input the tool would receive.
    pub input: serde_json::Value,
    /// Why the engine asks.
    pub reason: String,
}

/// A prompter's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptAnswer {
    /// Allow this call.
    Allow,
    /// Deny this call, with a message for the model.
    Deny(String),
    /// Nobody can answer (headless).
    Unavailable,
}

/// Answers permission requests (a TTY, a stream-json peer, a hook).
pub trait Prompter: Send + Sync {
    /// Answers `request`.
    fn ask(&self, request: &PermissionRequest) -> PromptAnswer;
}

/// The headless prompter: nobody can answer, so every `ask` is denied.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPrompter;

impl Prompter for NoPrompter {
    fn ask(&self, _request: &PermissionRequest) -> PromptAnswer {
        PromptAnswer::Unavailable
    }
}
