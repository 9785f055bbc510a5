//! Stage 8: PostToolUse after a success, PostToolUseFailure after a failed call. Their answers add
//! feedback and context next to the result; they cannot undo the call. A failing post hook is
//! recorded as a warning.

use serde_json::Value;

use super::pre_hooks::{EventBase, MAX_CONTEXT_CHARS};
use crate::hooks::{HookEvent, HookSet, PostAnswer};

/// Texts to append to the result, and warnings.
#[derive(Debug, Default)]
pub(crate) struct PostOutcome {
    pub(crate) notes: Vec<String>,
    pub(crate) warnings: Vec<String>,
}

/// Runs PostToolUse hooks with the tool's response.
pub(crate) fn after_success(
    hooks: &HookSet,
    base: &EventBase<'_>,
    input: &Value,
    response: &Value,
    duration_ms: u64,
) -> PostOutcome {
    let mut event = base.event(HookEvent::PostToolUse, input);
    event["tool_response"] = response.clone();
    event["duration_ms"] = duration_ms.into();
    run(hooks, HookEvent::PostToolUse, base.tool_name, &event)
}

/// Runs PostToolUseFailure hooks with the error text.
pub(crate) fn after_failure(
    hooks: &HookSet,
    base: &EventBase<'_>,
    input: &Value,
    error: &str,
    interrupted: bool,
    duration_ms: u64,
) -> PostOutcome {
    let mut event = base.event(HookEvent::PostToolUseFailure, input);
    event["error"] = error.into();
    event["is_interrupt"] = interrupted.into();
    event["duration_ms"] = duration_ms.into();
    run(hooks, HookEvent::PostToolUseFailure, base.tool_name, &event)
}

fn run(hooks: &HookSet, kind: HookEvent, tool: &str, event: &Value) -> PostOutcome {
    let mut outcome = PostOutcome::default();
    for hook in hooks.matching(kind, tool) {
        match hook
            .handle(event)
            .and_then(|value| PostAnswer::from_json(&value))
        {
            Ok(answer) => {
                for text in [answer.feedback, answer.additional_context]
                    .into_iter()
                    .flatten()
                {
                    let text: String = text.chars().take(MAX_CONTEXT_CHARS).collect();
                    outcome
                        .notes
                        .push(format!("[{} hook {}] {text}", kind.as_str(), hook.name()));
                }
            }
            Err(error) => outcome.warnings.push(format!(
                "{} hook {} failed: {error}",
                kind.as_str(),
                hook.name()
            )),
        }
    }
    outcome
}
