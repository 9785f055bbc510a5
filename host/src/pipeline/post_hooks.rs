//! Stage 8: PostToolUse after a success, PostToolUseFailure after a failed call (not after
//! unknown tools, invalid input or denials, as in Claude Code). Matching hooks run in parallel;
//! their answers add feedback (`decision: "block"` + `reason`) and context next to the result, in
//! load order, may replace what the model sees (`updatedToolOutput`, PostToolUse only, when it
//! fits the tool's output) and may stop the agent (`continue: false`). They cannot undo the call:
//! a failing post hook is reported as a warning and ignored.

use serde_json::Value;

use super::Services;
use super::frame::HookEffects;
use super::pre_hooks::EventBase;
use crate::hooks::{PostAnswer, Reply, cap_text};
use janua_types::HookEvent;
use janua_types::ToolSpec;

/// Characters of the error text given to PostToolUseFailure hooks; longer errors are cut in the
/// middle, as Claude Code does.
const MAX_ERROR_CHARS: usize = 10_000;

/// What the post hooks said together.
#[derive(Debug, Default)]
pub(crate) struct PostOutcome {
    /// Texts to append to the result.
    pub(crate) notes: Vec<String>,
    /// Warnings, messages for the user, and a stop (`continue: false`).
    pub(crate) effects: HookEffects,
    /// The first `updatedToolOutput` and its hook.
    pub(crate) updated_output: Option<(Value, String)>,
}

/// Runs PostToolUse hooks with the tool's response (built only when a hook is selected).
pub(crate) async fn after_success(
    services: &Services<'_>,
    base: &EventBase<'_>,
    spec: &ToolSpec,
    input: &Value,
    response: impl FnOnce() -> Value,
    duration_ms: u64,
) -> PostOutcome {
    let event = || {
        let mut event = base.event(HookEvent::PostToolUse, input);
        event["tool_response"] = response();
        event["duration_ms"] = duration_ms.into();
        event
    };
    run(services, HookEvent::PostToolUse, spec, input, base, event).await
}

/// Runs PostToolUseFailure hooks with the error text.
pub(crate) async fn after_failure(
    services: &Services<'_>,
    base: &EventBase<'_>,
    spec: &ToolSpec,
    input: &Value,
    error: &str,
    interrupted: bool,
    duration_ms: u64,
) -> PostOutcome {
    let event = || {
        let mut event = base.event(HookEvent::PostToolUseFailure, input);
        event["error"] = middle_cut(error).into();
        event["is_interrupt"] = interrupted.into();
        event["duration_ms"] = duration_ms.into();
        event
    };
    run(
        services,
        HookEvent::PostToolUseFailure,
        spec,
        input,
        base,
        event,
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
    services: &Services<'_>,
    kind: HookEvent,
    spec: &ToolSpec,
    input: &Value,
    base: &EventBase<'_>,
    event: impl FnOnce() -> Value,
) -> PostOutcome {
    let mut outcome = PostOutcome::default();
    let ran = services.tool_hooks(kind, base, spec, input, event).await;
    let label = kind.as_str();
    for ran in ran {
        let name = &ran.hook.name;
        let answer = match ran.reply {
            Reply::Answer(value) => {
                PostAnswer::from_json(&value, kind).map_err(|error| error.to_string())
            }
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
                    .effects
                    .warnings
                    .push(format!("the {label} hook {name} failed: {problem}"));
                continue;
            }
        };
        for text in [answer.feedback, answer.additional_context]
            .into_iter()
            .flatten()
        {
            let text = cap_text(text, services.session_dir, name);
            outcome.notes.push(format!("[{label} hook {name}] {text}"));
        }
        if let Some(message) = answer.common.system_message {
            outcome
                .effects
                .system_messages
                .push(cap_text(message, services.session_dir, name));
        }
        if outcome.effects.stop.is_none()
            && let Some(reason) = answer.common.stop
        {
            outcome.effects.stop =
                Some(format!("the {label} hook {name} stopped the run: {reason}"));
        }
        if let Some(output) = answer.updated_output {
            if kind != HookEvent::PostToolUse {
                outcome.effects.warnings.push(format!(
                    "the {label} hook {name} returned updatedToolOutput, which only PostToolUse may"
                ));
            } else if outcome.updated_output.is_none() {
                outcome.updated_output = Some((output, name.clone()));
            } else {
                outcome.effects.warnings.push(format!(
                    "the {label} hook {name}'s updatedToolOutput is ignored: an earlier hook already replaced the output"
                ));
            }
        }
    }
    outcome
}

/// Why a PostToolUse `updatedToolOutput` does not fit the tool's output.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UnfitOutput {
    #[error("the tool gave text output, so the replacement must be a string, not {0}")]
    NotText(&'static str),
    #[error("it does not have the shape of the tool's structured result (a {kind} with {keys})")]
    WrongShape {
        kind: &'static str,
        /// "the keys a, b" or "no keys".
        keys: String,
    },
}

/// The content (and structured result) a PostToolUse `updatedToolOutput` stands for, when it
/// fits the tool's output: a string when the tool gave no structured result, otherwise a value
/// of the structured result's shape (same JSON type; for objects the same keys, each of the same
/// type or null).
pub(crate) fn replace_output(
    structured: Option<&Value>,
    replacement: Value,
) -> Result<(Vec<janua_sandbox::WitContent>, Option<Value>), UnfitOutput> {
    match (structured, replacement) {
        (None, Value::String(text)) => Ok((vec![janua_sandbox::WitContent::Text(text)], None)),
        (None, other) => Err(UnfitOutput::NotText(json_type(&other))),
        (Some(shape), replacement) if fits(shape, &replacement) => Ok((
            vec![janua_sandbox::WitContent::Json(replacement.to_string())],
            Some(replacement),
        )),
        (Some(shape), _) => Err(UnfitOutput::WrongShape {
            kind: json_type(shape),
            keys: match shape {
                Value::Object(map) => format!(
                    "the keys {}",
                    map.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
                _ => "no keys".to_owned(),
            },
        }),
    }
}

fn fits(shape: &Value, candidate: &Value) -> bool {
    match (shape, candidate) {
        (Value::Object(shape), Value::Object(candidate)) => {
            shape.len() == candidate.len()
                && shape.iter().all(|(key, expected)| {
                    candidate.get(key).is_some_and(|value| {
                        value.is_null()
                            || expected.is_null()
                            || json_type(value) == json_type(expected)
                    })
                })
        }
        _ => json_type(shape) == json_type(candidate),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacement_fits_the_output_shape_table() {
        use serde_json::json;
        let shape = json!({"input": {"text": "x"}, "call_id": "c", "note": null});
        let cases = [
            (
                json!({"input": {"a": 1}, "call_id": "d", "note": "n"}),
                true,
            ),
            (json!({"input": {}, "call_id": null, "note": null}), true),
            (
                json!({"input": "flat", "call_id": "d", "note": null}),
                false,
            ),
            (json!({"input": {}, "call_id": "d"}), false),
            (
                json!({"input": {}, "call_id": "d", "note": null, "extra": 1}),
                false,
            ),
            (json!("text"), false),
        ];
        for (candidate, expected) in cases {
            assert_eq!(fits(&shape, &candidate), expected, "{candidate}");
        }
        assert!(replace_output(None, json!("plain")).is_ok());
        assert!(matches!(
            replace_output(None, json!({"a": 1})),
            Err(UnfitOutput::NotText("object"))
        ));
        assert!(matches!(
            replace_output(Some(&json!({"a": 1})), json!({"b": 1})),
            Err(UnfitOutput::WrongShape { kind: "object", .. })
        ));
    }

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
