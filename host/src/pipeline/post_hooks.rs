//! Stage 8: PostToolUse after a success, PostToolUseFailure after a failed call (not after
//! unknown tools, invalid input or denials, as in Claude Code). Matching hooks run in parallel;
//! their answers add feedback (`decision: "block"` + `reason`) and context next to the result, in
//! load order, may replace what the model sees (`updatedToolOutput`, PostToolUse only, when it
//! fits the tool's output) and may stop the agent (`continue: false`). They cannot undo the call:
//! a failing post hook is reported as a warning and ignored.

use serde_json::Value;

use super::Stages;
use super::pre_hooks::EventBase;
use crate::hooks::{HookEvent, PostAnswer, Reply, cap_text};
use crate::registry::ToolSpec;

/// Characters of the error text given to PostToolUseFailure hooks; longer errors are cut in the
/// middle, as Claude Code does.
const MAX_ERROR_CHARS: usize = 10_000;

/// What the post hooks said together.
#[derive(Debug, Default)]
pub(crate) struct PostOutcome {
    /// Texts to append to the result.
    pub(crate) notes: Vec<String>,
    pub(crate) warnings: Vec<String>,
    pub(crate) system_messages: Vec<String>,
    /// `continue: false`: stop the agent, with this reason.
    pub(crate) stop: Option<String>,
    /// The first `updatedToolOutput` and its hook.
    pub(crate) updated_output: Option<(Value, String)>,
}

/// Runs PostToolUse hooks with the tool's response.
pub(crate) async fn after_success(
    stages: &Stages<'_>,
    base: &EventBase<'_>,
    spec: &ToolSpec,
    input: &Value,
    response: &Value,
    duration_ms: u64,
) -> PostOutcome {
    let mut event = base.event(HookEvent::PostToolUse, input);
    event["tool_response"] = response.clone();
    event["duration_ms"] = duration_ms.into();
    run(stages, HookEvent::PostToolUse, spec, input, base, &event).await
}

/// Runs PostToolUseFailure hooks with the error text.
pub(crate) async fn after_failure(
    stages: &Stages<'_>,
    base: &EventBase<'_>,
    spec: &ToolSpec,
    input: &Value,
    error: &str,
    interrupted: bool,
    duration_ms: u64,
) -> PostOutcome {
    let mut event = base.event(HookEvent::PostToolUseFailure, input);
    event["error"] = middle_cut(error).into();
    event["is_interrupt"] = interrupted.into();
    event["duration_ms"] = duration_ms.into();
    run(
        stages,
        HookEvent::PostToolUseFailure,
        spec,
        input,
        base,
        &event,
    )
    .await
}

/// `text`, cut in the middle past [`MAX_ERROR_CHARS`] with a marker saying how much.
fn middle_cut(text: &str) -> String {
    let length = text.chars().count();
    if length <= MAX_ERROR_CHARS {
        return text.to_owned();
    }
    let half = MAX_ERROR_CHARS / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(length - half).collect();
    format!(
        "{head}... [{} characters truncated] ...{tail}",
        length - 2 * half
    )
}

async fn run(
    stages: &Stages<'_>,
    kind: HookEvent,
    spec: &ToolSpec,
    input: &Value,
    base: &EventBase<'_>,
    event: &Value,
) -> PostOutcome {
    let mut outcome = PostOutcome::default();
    let ran = stages.tool_hooks(kind, base, spec, input, event).await;
    let label = kind.as_str();
    for ran in ran {
        let name = &ran.hook.name;
        let answer = match ran.reply {
            Reply::Answer(value) => PostAnswer::from_json(&value, kind),
            Reply::Plain(_) => continue,
            // Exit 2 on a post event: stderr goes to the model, as in Claude Code.
            Reply::Block(reason) => Ok(PostAnswer {
                feedback: Some(reason),
                ..PostAnswer::default()
            }),
            Reply::NonBlocking(problem) | Reply::Failed(problem) => Err(problem),
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(problem) => {
                outcome
                    .warnings
                    .push(format!("the {label} hook {name} failed: {problem}"));
                continue;
            }
        };
        for text in [answer.feedback, answer.additional_context]
            .into_iter()
            .flatten()
        {
            let text = cap_text(text, stages.session_dir, name);
            outcome.notes.push(format!("[{label} hook {name}] {text}"));
        }
        if let Some(message) = answer.common.system_message {
            outcome
                .system_messages
                .push(cap_text(message, stages.session_dir, name));
        }
        if outcome.stop.is_none()
            && let Some(reason) = answer.common.stop
        {
            outcome.stop = Some(format!("the {label} hook {name} stopped the run: {reason}"));
        }
        if let Some(output) = answer.updated_output {
            if kind != HookEvent::PostToolUse {
                outcome.warnings.push(format!(
                    "the {label} hook {name} returned updatedToolOutput, which only PostToolUse may"
                ));
            } else if outcome.updated_output.is_none() {
                outcome.updated_output = Some((output, name.clone()));
            } else {
                outcome.warnings.push(format!(
                    "the {label} hook {name}'s updatedToolOutput is ignored: an earlier hook already replaced the output"
                ));
            }
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_errors_are_cut_in_the_middle() {
        assert_eq!(middle_cut("short"), "short");
        let long = format!("{}{}", "a".repeat(8_000), "b".repeat(8_000));
        let cut = middle_cut(&long);
        assert!(cut.starts_with(&"a".repeat(5_000)));
        assert!(cut.ends_with(&"b".repeat(5_000)));
        assert!(cut.contains("... [6000 characters truncated] ..."));
    }
}
