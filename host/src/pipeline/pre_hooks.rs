//! Stage 5: PreToolUse hooks, in registration order. Each sees the input as rewritten by the hooks
//! before it. Votes combine most-restrictive-first (deny > defer > ask > allow) and the central
//! decision settles them (a defer becomes `deferred` only after grant and hook-deny checks);
//! `continue: false` stops the call at once (`hook_stopped`). A hook that fails or answers
//! malformed JSON counts as a deny vote: warden fails closed.

use serde_json::{Value, json};

use super::outcome::{ErrorKind, Failure};
use crate::hooks::{HookEvent, HookSet, PreAnswer};
use crate::permissions::{HookVote, VoteKind};

/// Characters kept of one hook's additional context.
pub(crate) const MAX_CONTEXT_CHARS: usize = 10_000;

/// What the PreToolUse hooks decided together.
#[derive(Debug, Default)]
pub(crate) struct PreOutcome {
    /// The rewritten input and the hook that rewrote it last.
    pub(crate) updated_input: Option<(Value, String)>,
    /// The combined vote.
    pub(crate) vote: Option<HookVote>,
    /// Context to add next to the result.
    pub(crate) additional_context: Vec<String>,
}

/// Identifies the call for hook events.
pub(crate) struct EventBase<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) cwd: &'a str,
    pub(crate) tool_use_id: &'a str,
    pub(crate) tool_name: &'a str,
}

impl EventBase<'_> {
    /// The common fields of every tool event.
    pub(crate) fn event(&self, event: HookEvent, tool_input: &Value) -> Value {
        json!({
            "session_id": self.session_id,
            "cwd": self.cwd,
            "permission_mode": "default",
            "hook_event_name": event.as_str(),
            "tool_name": self.tool_name,
            "tool_input": tool_input,
            "tool_use_id": self.tool_use_id,
        })
    }
}

/// Runs every matching PreToolUse hook.
pub(crate) fn run(
    hooks: &HookSet,
    base: &EventBase<'_>,
    input: &Value,
) -> Result<PreOutcome, Failure> {
    let mut outcome = PreOutcome::default();
    let mut current = input.clone();
    for hook in hooks.matching(HookEvent::PreToolUse, base.tool_name) {
        let event = base.event(HookEvent::PreToolUse, &current);
        let answer = hook
            .handle(&event)
            .and_then(|value| PreAnswer::from_json(&value));
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) => {
                combine(
                    &mut outcome.vote,
                    HookVote {
                        kind: VoteKind::Deny,
                        hook: hook.name().to_owned(),
                        reason: Some(format!(
                            "the PreToolUse hook {} failed ({error}); warden denies calls whose policy hooks fail",
                            hook.name()
                        )),
                    },
                );
                continue;
            }
        };
        if let Some(reason) = answer.stop {
            return Err(Failure::new(
                ErrorKind::HookStopped,
                format!(
                    "the PreToolUse hook {} stopped the run: {reason}",
                    hook.name()
                ),
            ));
        }
        if answer.defer {
            // A vote, not an exit: grant violations and other hooks' denials still take precedence.
            combine(
                &mut outcome.vote,
                HookVote {
                    kind: VoteKind::Defer,
                    hook: hook.name().to_owned(),
                    reason: None,
                },
            );
            continue;
        }
        if let Some(input) = answer.updated_input {
            current = input.clone();
            outcome.updated_input = Some((input, hook.name().to_owned()));
        }
        if let Some((kind, reason)) = answer.vote {
            combine(
                &mut outcome.vote,
                HookVote {
                    kind,
                    hook: hook.name().to_owned(),
                    reason,
                },
            );
        }
        if let Some(context) = answer.additional_context {
            outcome
                .additional_context
                .push(context.chars().take(MAX_CONTEXT_CHARS).collect());
        }
    }
    Ok(outcome)
}

/// Keeps the most restrictive vote; the first hook wins among equals.
fn combine(current: &mut Option<HookVote>, vote: HookVote) {
    let rank = |kind: VoteKind| match kind {
        VoteKind::Deny => 3,
        VoteKind::Defer => 2,
        VoteKind::Ask => 1,
        VoteKind::Allow => 0,
    };
    if current
        .as_ref()
        .is_none_or(|existing| rank(vote.kind) > rank(existing.kind))
    {
        *current = Some(vote);
    }
}
