//! The outcome types: the call as it arrives, the stable error kinds, and the structured record of
//! what each stage did.

use serde::Serialize;

use super::coerce::Coercion;
use crate::output::Truncation;
use janua_permissions::Decision;
use janua_types::{DeferredCall, ErrorKind, ToolResultBlock};

/// Why a call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The stable kind.
    pub kind: ErrorKind,
    /// The message the model sees (after the kind).
    pub message: String,
    /// The tool's own error kind, when the tool reported the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_error_kind: Option<String>,
}

impl Failure {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            tool_error_kind: None,
        }
    }
}

/// An alias hop that was applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AliasHop {
    /// The name the model used.
    pub from: String,
    /// The canonical name it resolved to.
    pub to: String,
}

/// The structured record of one dispatch, for library callers and `--outcome`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outcome {
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// The name as requested.
    pub requested: String,
    /// The canonical tool, once resolved.
    pub tool: Option<String>,
    /// The alias hop applied, if any.
    pub alias: Option<AliasHop>,
    /// Every change coercion made.
    pub coercions: Vec<Coercion>,
    /// The input the tool received (or would have).
    pub input: Option<serde_json::Value>,
    /// The hook that rewrote the input, if any.
    pub input_rewritten_by: Option<String>,
    /// The permission decision and what made it.
    pub decision: Option<Decision>,
    /// The central decision as it stood before PermissionRequest hooks or a prompter answered,
    /// when it asked (what `janua check` reports for the same call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asked: Option<Decision>,
    /// The failure, for error results.
    pub error: Option<Failure>,
    /// The tool's structured result, for successes.
    pub structured: Option<serde_json::Value>,
    /// What truncation cut.
    pub truncation: Option<Truncation>,
    /// What text normalization changed (escape sequences, carriage returns, replacement
    /// characters, binary parts), when it changed anything.
    pub normalization: Option<crate::output::Normalization>,
    /// The result's size in estimated tokens (characters / 4).
    pub estimated_tokens: u64,
    /// The file in the session's `tool-results/` holding the whole output, when it was saved
    /// (too long inline, or moved by the batch budget).
    pub saved_to: Option<std::path::PathBuf>,
    /// Context hooks added next to the result.
    pub additional_context: Vec<String>,
    /// Progress messages the tool reported.
    pub progress: Vec<String>,
    /// Non-fatal problems (a post hook that failed, an unparsable structured result).
    pub warnings: Vec<String>,
    /// Wall-clock time of the dispatch in milliseconds.
    pub duration_ms: u64,
    /// The checkpoint saved before the tool changed a file (`janua rewind --to N`).
    pub checkpoint: Option<u64>,
    /// Messages hooks addressed to the user (`systemMessage`), never shown to the model.
    pub system_messages: Vec<String>,
    /// A hook or monitor asked to stop the agent after this call, with this reason.
    pub stop: Option<String>,
    /// The call a PreToolUse hook deferred, stored in the session for
    /// `janua call --resume-deferred ID`.
    pub deferred: Option<DeferredCall>,
}

/// What dispatch returns: the block for the model and the structured outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Dispatch {
    /// The `tool_result` block.
    pub block: ToolResultBlock,
    /// What happened, stage by stage.
    pub outcome: Outcome,
}

impl Dispatch {
    /// The error kind, for error results.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        self.outcome.error.as_ref().map(|failure| failure.kind)
    }
}
