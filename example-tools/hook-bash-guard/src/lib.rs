//! Example `PreToolUse` hook for Bash: denies `rm` with recursive and force options aimed at a
//! critical path (`/`, system directories, the home directory, the workspace root, the paths in
//! `config.protect`, or anything containing one of them). See `guard` for exactly what is
//! recognized; everything else gets no objection.
//!
//! A quoted command is an argument, not a command: `echo 'rm -rf /'` and `git commit -m "rm -rf /"`
//! are allowed, while `bash -c 'rm -rf /'`, `eval` and `$(...)` are looked into and denied.

// Native builds exist only for unit tests and do not export the component (see below).
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

mod guard;
mod shell;

use janua_sdk::hook::{self, Hook};
use serde::Deserialize;
use serde_json::Value;

use crate::guard::Protected;

/// The fields of a hook event this hook reads; the host sends more.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    hook_event_name: String,
    tool_name: String,
    tool_input: Option<Value>,
    cwd: Option<String>,
    /// Absent or `null` when the manifest gives no table.
    config: Option<Config>,
}

/// `config`, the manifest's table. Unknown keys are errors, so a misspelt `protect` does not
/// silently protect nothing.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Config {
    /// Paths protected besides the built-in ones, absolute or `~/...`.
    protect: Vec<String>,
}

/// The part of the Bash input this hook reads.
#[derive(Debug, Deserialize)]
struct BashInput {
    command: String,
}

struct BashGuard;

impl Hook for BashGuard {
    fn handle(event: Value) -> Result<Value, String> {
        answer(event)
    }
}

#[cfg(target_arch = "wasm32")]
janua_sdk::export_hook!(BashGuard);

fn answer(event: Value) -> Result<Value, String> {
    let event: Event =
        serde_json::from_value(event).map_err(|error| format!("bash-guard: {error}"))?;
    if event.hook_event_name != "PreToolUse" || event.tool_name != "Bash" {
        return Ok(hook::no_objection());
    }
    let input: BashInput = event
        .tool_input
        .map(serde_json::from_value)
        .transpose()
        .map_err(|error| format!("bash-guard: unexpected Bash input: {error}"))?
        .ok_or_else(|| "bash-guard: the event has no tool_input".to_owned())?;
    let config = event.config.unwrap_or_default();
    let protected = Protected::new(event.cwd.as_deref(), &config.protect);
    Ok(match guard::check(&input.command, &protected) {
        Some(violation) => hook::deny(violation.reason()),
        None => hook::no_objection(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(tool: &str, command: &str, config: Value) -> Value {
        json!({
            "session_id": "s",
            "cwd": "/work/project",
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": {"command": command, "description": "d"},
            "tool_use_id": "toolu_1",
            "config": config,
        })
    }

    #[test]
    fn denies_with_a_reason_and_otherwise_has_no_objection() {
        let denied = answer(event("Bash", "rm -rf /", json!({}))).expect("answer");
        assert_eq!(
            denied.pointer("/hookSpecificOutput/permissionDecision"),
            Some(&json!("deny"))
        );
        let reason = denied
            .pointer("/hookSpecificOutput/permissionDecisionReason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(reason.contains("\"/\""), "{reason}");
        assert_eq!(
            answer(event("Bash", "ls", json!({}))).expect("answer"),
            json!({})
        );
        assert_eq!(
            answer(event("Read", "rm -rf /", json!({}))).expect("answer"),
            json!({})
        );
    }

    #[test]
    fn config_protect_adds_paths() {
        let config = json!({"protect": ["/srv/data/"]});
        let denied = answer(event("Bash", "rm -rf /srv/data", config.clone())).expect("answer");
        assert_eq!(
            denied.pointer("/hookSpecificOutput/permissionDecision"),
            Some(&json!("deny"))
        );
        assert_eq!(
            answer(event("Bash", "rm -rf /srv/other", config)).expect("answer"),
            json!({})
        );
    }

    #[test]
    fn bad_config_or_input_is_an_error() {
        assert!(answer(event("Bash", "ls", json!({"protekt": ["/x"]}))).is_err());
        let mut no_command = event("Bash", "ls", json!({}));
        no_command["tool_input"] = json!({"cmd": "ls"});
        assert!(answer(no_command).is_err());
    }
}
