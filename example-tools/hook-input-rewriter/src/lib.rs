//! Example `PreToolUse` hook that rewrites Bash input instead of judging it: `git` commands get
//! `--no-pager` (see `git`), and a `timeout` above `config.max_timeout_ms` (default 120000) is
//! lowered to it. The answer's `updatedInput` holds the whole input object, unchanged fields
//! included, because the host replaces the input with it; `additionalContext` tells the model what
//! changed. It takes no permission decision, and answers `{}` when nothing changed or the tool is
//! not Bash.

// Native builds exist only for unit tests and do not export the component (see below).
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

mod git;

use janua_sdk::hook::{self, Hook};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The timeout cap when the manifest gives none: Claude Code's default Bash timeout.
const DEFAULT_MAX_TIMEOUT_MS: u64 = 120_000;

/// The fields of a hook event this hook reads; the host sends more.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    hook_event_name: String,
    tool_name: String,
    tool_input: Option<Map<String, Value>>,
    /// Absent or `null` when the manifest gives no table.
    config: Option<Config>,
}

/// `config`, the manifest's table. Unknown keys are errors, so a misspelt key is not ignored.
#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Config {
    /// The largest `timeout` a Bash call may ask for, in milliseconds.
    max_timeout_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_timeout_ms: DEFAULT_MAX_TIMEOUT_MS,
        }
    }
}

struct InputRewriter;

impl Hook for InputRewriter {
    fn handle(event: Value) -> Result<Value, String> {
        answer(event)
    }
}

#[cfg(target_arch = "wasm32")]
janua_sdk::export_hook!(InputRewriter);

fn answer(event: Value) -> Result<Value, String> {
    let event: Event =
        serde_json::from_value(event).map_err(|error| format!("input-rewriter: {error}"))?;
    if event.hook_event_name != "PreToolUse" || event.tool_name != "Bash" {
        return Ok(hook::no_objection());
    }
    let Some(mut input) = event.tool_input else {
        return Ok(hook::no_objection());
    };
    let changes = rewrite_bash(&mut input, &event.config.unwrap_or_default());
    if changes.is_empty() {
        return Ok(hook::no_objection());
    }
    let text = format!("input-rewriter changed this call: {}.", changes.join("; "));
    Ok(hook::with_context(
        hook::rewrite(Value::Object(input)),
        "PreToolUse",
        text,
    ))
}

/// Rewrites a Bash input in place and describes each change; no description means no change.
fn rewrite_bash(input: &mut Map<String, Value>, config: &Config) -> Vec<String> {
    let mut changes = Vec::new();
    if let Some(Value::String(command)) = input.get_mut("command")
        && let Some(rewritten) = git::add_no_pager(command)
    {
        changes.push(format!(
            "added --no-pager to git so it never waits on a pager (the command is now {rewritten:?})"
        ));
        *command = rewritten;
    }
    if let Some(timeout) = input.get_mut("timeout")
        && timeout
            .as_f64()
            .is_some_and(|timeout| timeout > config.max_timeout_ms as f64)
    {
        changes.push(format!(
            "lowered timeout from {timeout} ms to the allowed maximum of {} ms",
            config.max_timeout_ms
        ));
        *timeout = Value::from(config.max_timeout_ms);
    }
    changes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(tool: &str, input: Value, config: Value) -> Value {
        json!({
            "session_id": "s",
            "cwd": "/work/project",
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_use_id": "toolu_1",
            "config": config,
        })
    }

    fn specific(answer: &Value, field: &str) -> Value {
        answer
            .pointer(&format!("/hookSpecificOutput/{field}"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    #[test]
    fn rewrites_the_whole_input_and_says_what_changed() {
        let input = json!({"command": "git log", "timeout": 600000, "description": "history"});
        let answer = answer(event("Bash", input, json!({}))).expect("answer");
        assert_eq!(
            specific(&answer, "updatedInput"),
            json!({"command": "git --no-pager log", "timeout": 120000, "description": "history"})
        );
        assert_eq!(specific(&answer, "hookEventName"), json!("PreToolUse"));
        assert_eq!(specific(&answer, "permissionDecision"), Value::Null);
        let context = specific(&answer, "additionalContext");
        let context = context.as_str().unwrap_or_default();
        assert!(context.contains("--no-pager"), "{context}");
        assert!(
            context.contains("600000 ms to the allowed maximum of 120000 ms"),
            "{context}"
        );
    }

    #[test]
    fn answers_nothing_when_nothing_changes() {
        let cases = [
            event("Bash", json!({"command": "ls", "timeout": 1000}), json!({})),
            event("Bash", json!({"command": "git --no-pager log"}), json!({})),
            event(
                "Bash",
                json!({"command": "ls", "timeout": 120000}),
                json!({}),
            ),
            event(
                "Read",
                json!({"file_path": "/x", "command": "git log"}),
                json!({}),
            ),
        ];
        for event in cases {
            assert_eq!(answer(event.clone()).expect("answer"), json!({}), "{event}");
        }
        let mut post = event("Bash", json!({"command": "git log"}), json!({}));
        post["hook_event_name"] = json!("PostToolUse");
        assert_eq!(answer(post).expect("answer"), json!({}));
    }

    #[test]
    fn config_sets_the_timeout_cap() {
        let config = json!({"max_timeout_ms": 5000});
        let answer = answer(event(
            "Bash",
            json!({"command": "ls", "timeout": 6000}),
            config,
        ))
        .expect("answer");
        assert_eq!(
            specific(&answer, "updatedInput"),
            json!({"command": "ls", "timeout": 5000})
        );
        let context = specific(&answer, "additionalContext");
        assert!(!context.as_str().unwrap_or_default().contains("no-pager"));
    }

    #[test]
    fn misspelt_config_is_an_error() {
        let config = json!({"max_timeout": 5000});
        assert!(answer(event("Bash", json!({"command": "ls"}), config)).is_err());
    }
}
