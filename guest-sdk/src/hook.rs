//! Write hooks: policy code the host runs at lifecycle events (`PreToolUse`, `PostToolUse`, ...).
//!
//! A hook is a type implementing [`Hook`], exported with [`export_hook!`](crate::export_hook). It
//! receives the JSON a Claude Code command hook reads on stdin (`hook_event_name`, `session_id`,
//! `cwd`, `tool_name`, `tool_input`, ...), plus `config`, the table of the manifest's `[[hooks]]`
//! entry, and answers with the JSON such a hook prints. The functions here build the common
//! answers; any other Claude-Code-shaped object works too. The [crate documentation](crate) has an
//! example.

use serde_json::{Map, Value, json};

/// A hook a component exports. Implement it, then name the type in
/// [`export_hook!`](crate::export_hook).
pub trait Hook {
    /// Handles one event and returns the answer; [`no_objection`] when the hook has nothing to
    /// say. `Err` is a hook failure: for `PreToolUse` and `PermissionRequest` the host denies the
    /// call unless the manifest says `on-error = "ignore"`.
    fn handle(event: Value) -> Result<Value, String>;

    /// The raw export: event text in, answer text out. The default parses the event, calls
    /// [`Hook::handle`] and serializes the answer; only host tests that need an answer which is
    /// not JSON override it.
    #[doc(hidden)]
    fn handle_text(event: String) -> Result<String, String> {
        crate::__private::handle::<Self>(&event)
    }
}

/// A `PreToolUse` answer that allows the call without asking, for `reason`.
pub fn allow(reason: impl Into<String>) -> Value {
    decision("allow", reason.into())
}

/// A `PreToolUse` answer that denies the call; `reason` is shown to the model.
pub fn deny(reason: impl Into<String>) -> Value {
    decision("deny", reason.into())
}

/// A `PreToolUse` answer that asks the user, showing `reason`.
pub fn ask(reason: impl Into<String>) -> Value {
    decision("ask", reason.into())
}

/// A `PreToolUse` answer that hands the call back to the caller instead of deciding it.
pub fn defer() -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "defer",
        }
    })
}

/// A `PreToolUse` answer that replaces the call's input with `updated_input`, which must be the
/// whole new input object (fields left out are gone). It takes no permission decision; the host
/// checks the new input against the tool's schema again.
pub fn rewrite(updated_input: Value) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": updated_input,
        }
    })
}

/// An answer that adds `text` for the model to read, for the event named `event_name`
/// (`PreToolUse`, `PostToolUse`, `SessionStart`, ...).
pub fn context(event_name: &str, text: impl Into<String>) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": event_name,
            "additionalContext": text.into(),
        }
    })
}

/// Adds `additionalContext` to an answer built by the other functions, e.g. to explain a
/// [`rewrite`]. `event_name` is used only when `answer` has no `hookEventName` yet; an answer that
/// is not an object is replaced.
pub fn with_context(answer: Value, event_name: &str, text: impl Into<String>) -> Value {
    let mut answer = match answer {
        Value::Object(answer) => answer,
        _ => Map::new(),
    };
    let specific = answer
        .entry("hookSpecificOutput")
        .or_insert_with(|| Value::Object(Map::new()));
    if !specific.is_object() {
        *specific = Value::Object(Map::new());
    }
    if let Value::Object(specific) = specific {
        specific
            .entry("hookEventName")
            .or_insert_with(|| Value::String(event_name.to_owned()));
        specific.insert("additionalContext".to_owned(), Value::String(text.into()));
    }
    Value::Object(answer)
}

/// The empty answer, `{}`: the hook does not object and changes nothing.
pub fn no_objection() -> Value {
    Value::Object(Map::new())
}

fn decision(decision: &str, reason: String) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_have_claude_code_shape() {
        let cases = [
            (
                allow("fine"),
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "fine"}}),
            ),
            (
                deny("no"),
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}}),
            ),
            (
                ask("sure?"),
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "sure?"}}),
            ),
            (
                defer(),
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer"}}),
            ),
            (
                rewrite(json!({"command": "ls"})),
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls"}}}),
            ),
            (
                context("PostToolUse", "note"),
                json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "note"}}),
            ),
            (no_objection(), json!({})),
        ];
        for (answer, expected) in cases {
            assert_eq!(answer, expected);
        }
    }

    #[test]
    fn with_context_keeps_the_answer_and_its_event_name() {
        let answer = with_context(rewrite(json!({"a": 1})), "Ignored", "changed a");
        assert_eq!(
            answer,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"a": 1}, "additionalContext": "changed a"}})
        );
        assert_eq!(
            with_context(no_objection(), "SessionStart", "hello"),
            context("SessionStart", "hello")
        );
        assert_eq!(
            with_context(json!("junk"), "PostToolUse", "x"),
            context("PostToolUse", "x")
        );
    }
}
