//! Stage 5: PreToolUse hooks. Every matching hook runs in parallel, each in its own sandbox, and
//! sees the same input. Their answers combine deterministically, in load order:
//!
//! - `continue: false` stops the call at once (`hook_stopped`), whatever else was said;
//! - votes: deny > defer > ask > allow, the first hook winning among equals; the central decision
//!   settles them (a hook `allow` never beats a deny or ask rule);
//! - `updatedInput`: applied when every rewriting hook returned the same input; two different
//!   rewrites deny the call (`hook_conflict`) rather than pick one;
//! - `additionalContext`: all kept, in load order, each capped at 10,000 characters.
//!
//! A hook that fails (trap, timeout, malformed answer, a command that cannot start) votes deny
//! unless it is declared `on-error = "ignore"`; a command's exit 2 votes deny with its stderr.

use serde_json::{Value, json};

use super::Services;
use super::frame::HookEffects;
use super::outcome::Failure;
use crate::hooks::{PreAnswer, Reply, cap_text};
use janua_permissions::{HookVote, VoteKind};
use janua_types::ErrorKind;
use janua_types::ToolSpec;
use janua_types::{HookEvent, OnError};

/// What the PreToolUse hooks decided together.
#[derive(Debug, Default)]
pub(crate) struct PreOutcome {
    /// The rewritten input and the hooks that rewrote it.
    pub(crate) updated_input: Option<(Value, String)>,
    /// The combined vote.
    pub(crate) vote: Option<HookVote>,
    /// Context to add next to the result, in load order, with the hook that gave it.
    pub(crate) additional_context: Vec<(String, String)>,
    /// Warnings and messages for the user (a PreToolUse stop ends the call instead).
    pub(crate) effects: HookEffects,
}

/// Identifies the call for hook events.
pub(crate) struct EventBase<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) cwd: &'a str,
    pub(crate) permission_mode: &'a str,
    pub(crate) tool_use_id: &'a str,
    pub(crate) tool_name: &'a str,
    /// The call's scope: nested calls add `parent_tool_use_id` and `agent_id`.
    pub(crate) scope: &'a crate::delegation::Scope,
}

impl EventBase<'_> {
    /// The common fields of every tool event.
    pub(crate) fn event(&self, event: HookEvent, tool_input: &Value) -> Value {
        let mut fields = json!({
            "session_id": self.session_id,
            "cwd": self.cwd,
            "permission_mode": self.permission_mode,
            "hook_event_name": event.as_str(),
            "tool_name": self.tool_name,
            "tool_input": tool_input,
            "tool_use_id": self.tool_use_id,
        });
        self.scope.annotate(&mut fields);
        fields
    }
}

/// Runs every matching PreToolUse hook. `allow_defer` is false when the call is one of several in
/// its batch: a defer vote is then ignored with a warning.
pub(crate) async fn run(
    services: &Services<'_>,
    base: &EventBase<'_>,
    spec: &ToolSpec,
    input: &Value,
    allow_defer: bool,
) -> Result<PreOutcome, Failure> {
    let mut outcome = PreOutcome::default();
    let event = || base.event(HookEvent::PreToolUse, input);
    let ran = services
        .tool_hooks(HookEvent::PreToolUse, base, spec, input, event)
        .await;
    let mut rewrites: Vec<(String, Value)> = Vec::new();
    for ran in &ran {
        let hook = ran.hook;
        let name = &hook.name;
        let failed = |problem: String, outcome: &mut PreOutcome| {
            match hook.on_error {
            OnError::Deny => combine(
                &mut outcome.vote,
                HookVote {
                    kind: VoteKind::Deny,
                    hook: name.clone(),
                    reason: Some(format!(
                        "the PreToolUse hook {name} failed ({problem}); janua denies calls whose policy hooks fail (declare the hook on-error = \"ignore\" to let such calls through)"
                    )),
                },
            ),
            OnError::Ignore => outcome.effects.warnings.push(format!(
                "the PreToolUse hook {name} failed and is ignored (on-error = \"ignore\"): {problem}"
            )),
        }
        };
        let answer = match &ran.reply {
            Reply::Answer(value) => match PreAnswer::from_json(value) {
                Ok(answer) => answer,
                Err(problem) => {
                    failed(problem.to_string(), &mut outcome);
                    continue;
                }
            },
            Reply::Failed(problem) => {
                failed(problem.clone(), &mut outcome);
                continue;
            }
            Reply::Block(reason) => {
                combine(
                    &mut outcome.vote,
                    HookVote {
                        kind: VoteKind::Deny,
                        hook: name.clone(),
                        reason: Some(cap_text(reason.clone(), services.session_dir, name)),
                    },
                );
                continue;
            }
            Reply::NonBlocking(problem) => {
                outcome
                    .effects
                    .warnings
                    .push(format!("the PreToolUse hook {name}: {problem}"));
                continue;
            }
            Reply::Plain(_) => continue,
        };
        if let Some(reason) = answer.common.stop {
            let reason = cap_text(reason, services.session_dir, name);
            return Err(Failure::new(
                ErrorKind::HookStopped,
                format!("the PreToolUse hook {name} stopped the run: {reason}"),
            ));
        }
        if let Some(message) = answer.common.system_message {
            outcome
                .effects
                .system_messages
                .push(cap_text(message, services.session_dir, name));
        }
        if let Some((kind, reason)) = answer.vote {
            if kind == VoteKind::Defer && !allow_defer {
                outcome.effects.warnings.push(format!(
                    "the PreToolUse hook {name} deferred the call, which is ignored: only a batch of one call can be deferred"
                ));
            } else {
                combine(
                    &mut outcome.vote,
                    HookVote {
                        kind,
                        hook: name.clone(),
                        reason: reason.map(|reason| cap_text(reason, services.session_dir, name)),
                    },
                );
            }
        }
        if let Some(input) = answer.updated_input {
            rewrites.push((name.clone(), input));
        }
        if let Some(context) = answer.additional_context {
            outcome
                .additional_context
                .push((name.clone(), cap_text(context, services.session_dir, name)));
        }
    }
    if let Some((first, input)) = rewrites.first() {
        if let Some((other, _)) = rewrites.iter().find(|(_, other)| other != input) {
            return Err(Failure::new(
                ErrorKind::HookConflict,
                format!(
                    "the PreToolUse hooks {first} and {other} rewrote the input differently; janua denies the call rather than choose one"
                ),
            ));
        }
        let names: Vec<&str> = rewrites.iter().map(|(name, _)| name.as_str()).collect();
        outcome.updated_input = Some((input.clone(), names.join(", ")));
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
