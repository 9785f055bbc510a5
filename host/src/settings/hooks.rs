//! The `hooks` block of a settings file, in Claude Code's schema:
//!
//! ```json
//! { "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [
//!     { "type": "command", "command": "$JANUA_PROJECT_DIR/.janua/guard.sh",
//!       "if": "Bash(rm *)", "timeout": 10, "onError": "deny",
//!       "grants": { "read": ["~/bin"], "write": [], "env": ["GITHUB_TOKEN"], "network": false } }
//! ] } ] },
//!   "disableAllHooks": false }
//! ```
//!
//! Wrong types are errors naming the position (`hooks.PreToolUse[0].hooks[1].timeout`). Handler
//! types janua does not run (`http`, `prompt`, `agent`, `mcp_tool`) and events it does not have
//! (`Stop`, `UserPromptSubmit`, ...) are kept as entries so `janua hooks` can say why they were
//! not loaded. `grants` is janua's own field: what the sandboxed command may touch beyond reading
//! the workspace.

use std::path::Path;

use serde_json::{Map, Value};

use super::SettingsError;

/// One handler of a settings file's `hooks` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookSetting {
    /// The event name as written (`PreToolUse`, ...).
    pub event: String,
    /// The group's `matcher`.
    pub matcher: Option<String>,
    /// The handler's `type` (`command`, `http`, ...).
    pub kind: String,
    /// `command`.
    pub command: Option<String>,
    /// `if`: one permission rule.
    pub condition: Option<String>,
    /// `timeout` in seconds.
    pub timeout: Option<f64>,
    /// `onError`: `deny` or `ignore`.
    pub on_error: Option<String>,
    /// `grants.read`: extra readable directories.
    pub read: Vec<String>,
    /// `grants.write`: writable directories.
    pub write: Vec<String>,
    /// `grants.env`: environment variable names passed through.
    pub env: Vec<String>,
    /// `grants.network`: keep the host's network.
    pub network: bool,
    /// Where it is in the file, e.g. `hooks.PreToolUse[0].hooks[1]`.
    pub position: String,
}

const HANDLER_KEYS: &[&str] = &[
    "type",
    "command",
    "if",
    "timeout",
    "onError",
    "grants",
    "statusMessage",
];

/// Parses the value of `hooks`.
pub(crate) fn parse(
    value: &Value,
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<HookSetting>, SettingsError> {
    let error = |message: String| SettingsError {
        path: path.to_path_buf(),
        message,
    };
    let Value::Object(events) = value else {
        return Err(error(
            "\"hooks\" must be an object of event name -> matcher groups".to_owned(),
        ));
    };
    let mut hooks = Vec::new();
    for (event, groups) in events {
        let Value::Array(groups) = groups else {
            return Err(error(format!(
                "hooks.{event} must be an array of matcher groups"
            )));
        };
        for (group_index, group) in groups.iter().enumerate() {
            let at = format!("hooks.{event}[{group_index}]");
            let Value::Object(group) = group else {
                return Err(error(format!("{at} must be an object with \"hooks\"")));
            };
            let matcher = optional_string(group, "matcher", &at, path)?;
            let Some(Value::Array(handlers)) = group.get("hooks") else {
                return Err(error(format!("{at}.hooks must be an array of handlers")));
            };
            for key in group.keys() {
                if !matches!(key.as_str(), "matcher" | "hooks") {
                    warnings.push(format!(
                        "settings {}: unknown key {at}.{key} ignored",
                        path.display()
                    ));
                }
            }
            for (index, handler) in handlers.iter().enumerate() {
                let at = format!("{at}.hooks[{index}]");
                let Value::Object(handler) = handler else {
                    return Err(error(format!("{at} must be an object")));
                };
                hooks.push(handler_setting(
                    event, &matcher, handler, &at, path, warnings,
                )?);
            }
        }
    }
    Ok(hooks)
}

fn handler_setting(
    event: &str,
    matcher: &Option<String>,
    handler: &Map<String, Value>,
    at: &str,
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<HookSetting, SettingsError> {
    let error = |message: String| SettingsError {
        path: path.to_path_buf(),
        message,
    };
    let kind = optional_string(handler, "type", at, path)?
        .ok_or_else(|| error(format!("{at}.type must be a string such as \"command\"")))?;
    let timeout = match handler.get("timeout") {
        None => None,
        Some(value) => Some(
            value
                .as_f64()
                .filter(|seconds| *seconds > 0.0 && *seconds <= 600.0)
                .ok_or_else(|| {
                    error(format!(
                        "{at}.timeout must be a number of seconds, more than 0 and at most 600"
                    ))
                })?,
        ),
    };
    let on_error = optional_string(handler, "onError", at, path)?;
    if let Some(on_error) = &on_error
        && !matches!(on_error.as_str(), "deny" | "ignore")
    {
        return Err(error(format!(
            "{at}.onError must be \"deny\" or \"ignore\", not {on_error:?}"
        )));
    }
    let mut setting = HookSetting {
        event: event.to_owned(),
        matcher: matcher.clone(),
        kind,
        command: optional_string(handler, "command", at, path)?,
        condition: optional_string(handler, "if", at, path)?,
        timeout,
        on_error,
        position: at.to_owned(),
        ..HookSetting::default()
    };
    if setting.kind == "command" && setting.command.as_deref().is_none_or(str::is_empty) {
        return Err(error(format!("{at}.command must be a non-empty string")));
    }
    if let Some(grants) = handler.get("grants") {
        let Value::Object(grants) = grants else {
            return Err(error(format!("{at}.grants must be an object")));
        };
        for (key, value) in grants {
            let list = |name: &str| -> Result<Vec<String>, SettingsError> {
                let Value::Array(items) = value else {
                    return Err(error(format!(
                        "{at}.grants.{name} must be an array of strings"
                    )));
                };
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| {
                        item.as_str().map(str::to_owned).ok_or_else(|| {
                            error(format!("{at}.grants.{name}[{index}] must be a string"))
                        })
                    })
                    .collect()
            };
            match key.as_str() {
                "read" => setting.read = list("read")?,
                "write" => setting.write = list("write")?,
                "env" => setting.env = list("env")?,
                "network" => {
                    setting.network = value.as_bool().ok_or_else(|| {
                        error(format!("{at}.grants.network must be true or false"))
                    })?;
                }
                other => {
                    return Err(error(format!(
                        "{at}.grants has the unknown key {other:?} (expected read, write, env, network)"
                    )));
                }
            }
        }
    }
    for key in handler.keys() {
        if !HANDLER_KEYS.contains(&key.as_str()) {
            warnings.push(format!(
                "settings {}: {at}.{key} is not supported by janua and is ignored",
                path.display()
            ));
        }
    }
    Ok(setting)
}

fn optional_string(
    map: &Map<String, Value>,
    key: &str,
    at: &str,
    path: &Path,
) -> Result<Option<String>, SettingsError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(SettingsError {
            path: path.to_path_buf(),
            message: format!("{at}.{key} must be a string"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_claude_code_hook_blocks() {
        let mut warnings = Vec::new();
        let hooks = parse(
            &json!({
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "./guard.sh", "if": "Bash(rm *)", "timeout": 5, "onError": "ignore",
                     "grants": {"read": ["~/bin"], "env": ["TOKEN"], "network": true}, "async": true},
                    {"type": "http", "url": "http://localhost"}
                ]}],
                "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]
            }),
            Path::new("/s.json"),
            &mut warnings,
        )
        .unwrap();
        assert_eq!(hooks.len(), 3);
        let guard = &hooks[0];
        assert_eq!(guard.event, "PreToolUse");
        assert_eq!(guard.matcher.as_deref(), Some("Bash"));
        assert_eq!(guard.condition.as_deref(), Some("Bash(rm *)"));
        assert_eq!(guard.timeout, Some(5.0));
        assert_eq!(guard.on_error.as_deref(), Some("ignore"));
        assert_eq!(guard.read, ["~/bin"]);
        assert!(guard.network);
        assert_eq!(guard.position, "hooks.PreToolUse[0].hooks[0]");
        assert_eq!(hooks[1].kind, "http");
        assert_eq!(hooks[2].event, "Stop");
        assert!(warnings.iter().any(|w| w.contains("async")), "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("url")), "{warnings:?}");
    }

    #[test]
    fn wrong_types_name_the_position() {
        let cases = [
            (json!([]), "\"hooks\" must be an object"),
            (
                json!({"PreToolUse": {}}),
                "hooks.PreToolUse must be an array",
            ),
            (
                json!({"PreToolUse": [{"hooks": {}}]}),
                "hooks.PreToolUse[0].hooks must be",
            ),
            (
                json!({"PreToolUse": [{"hooks": [{"type": "command"}]}]}),
                "hooks.PreToolUse[0].hooks[0].command must be",
            ),
            (
                json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}),
                "timeout must be a number",
            ),
            (
                json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "onError": "allow"}]}]}),
                "onError must be",
            ),
            (
                json!({"PreToolUse": [{"matcher": 3, "hooks": []}]}),
                "hooks.PreToolUse[0].matcher must be a string",
            ),
            (
                json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "grants": {"exec": []}}]}]}),
                "unknown key \"exec\"",
            ),
        ];
        for (value, expected) in cases {
            let message = parse(&value, Path::new("/s.json"), &mut Vec::new())
                .unwrap_err()
                .to_string();
            assert!(message.contains(expected), "{value}: {message}");
        }
    }
}
