//! `janua hook install --claude`: janua's hook entries in a Claude Code settings file, added or
//! removed idempotently, every other setting left as it was.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::settings::{SettingsChange, SettingsError};

/// The events janua's hook is registered for: the first two always, `PostToolUse` and
/// `PostToolUseFailure` (for the tools that run commands: Bash, Monitor) with `--sandbox-bash`.
pub const CLAUDE_HOOK_EVENTS: [&str; 4] = [
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
];

/// What marks a handler as janua's: its command runs `… hook claude` (any path to janua, any
/// flags after it), or it posts to a `…/claude` URL with janua's token variable
/// (`janua hook serve`).
fn is_janua_handler(handler: &Value) -> bool {
    let http = handler["type"] == "http"
        && handler["url"]
            .as_str()
            .is_some_and(|url| url.ends_with("/claude"))
        && handler["allowedEnvVars"]
            .as_array()
            .is_some_and(|names| names.iter().any(|name| name == HTTP_TOKEN_VARIABLE));
    http || handler["type"] == "command"
        && handler["command"].as_str().is_some_and(|command| {
            command
                .split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .any(|pair| pair == ["hook", "claude"])
                && command.contains("janua")
        })
}

/// The environment variable janua's `http` handlers take their bearer token from.
pub const HTTP_TOKEN_VARIABLE: &str = "JANUA_HOOK_TOKEN";

/// What janua's handler does: run a command (`janua hook claude …`) or post to `janua hook
/// serve` at a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaudeHandler {
    /// A `command` handler running this shell command.
    Command(String),
    /// An `http` handler posting to this URL with the bearer token from
    /// [`HTTP_TOKEN_VARIABLE`].
    Http(String),
}

impl ClaudeHandler {
    fn json(&self) -> Value {
        match self {
            ClaudeHandler::Command(command) => {
                json!({ "type": "command", "command": command, "onFailure": "block" })
            }
            ClaudeHandler::Http(url) => json!({
                "type": "http",
                "url": url,
                "headers": { "Authorization": format!("Bearer ${HTTP_TOKEN_VARIABLE}") },
                "allowedEnvVars": [HTTP_TOKEN_VARIABLE],
                "onFailure": "block",
            }),
        }
    }

    fn sandbox_bash(&self) -> bool {
        match self {
            ClaudeHandler::Command(command) => command
                .split_whitespace()
                .any(|word| word == "--sandbox-bash"),
            ClaudeHandler::Http(_) => false,
        }
    }
}

/// Which Claude Code settings file the hook goes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaudeScope {
    /// `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`): every project.
    User,
    /// The project's `.claude/settings.json`, shared with everyone who clones it.
    Project,
    /// The project's `.claude/settings.local.json`, this machine only.
    Local,
    /// janua's drop-in among the managed settings (`/etc/claude-code/managed-settings.d/janua.json`):
    /// every project, and no repository's `disableAllHooks` switches it off.
    Managed,
}

impl ClaudeScope {
    /// The file for this scope, for the project `project`, with Claude Code's managed settings
    /// in `managed_dir` (`/etc/claude-code` on Linux).
    pub fn path(self, project: &Path, managed_dir: &Path) -> Option<PathBuf> {
        match self {
            ClaudeScope::User => crate::settings::claude_user_settings_path(),
            ClaudeScope::Project => Some(project.join(".claude/settings.json")),
            ClaudeScope::Local => Some(project.join(".claude/settings.local.json")),
            ClaudeScope::Managed => Some(managed_dir.join("managed-settings.d/janua.json")),
        }
    }

    /// The scope's name as `--scope` takes it.
    pub fn name(self) -> &'static str {
        match self {
            ClaudeScope::User => "user",
            ClaudeScope::Project => "project",
            ClaudeScope::Local => "local",
            ClaudeScope::Managed => "managed",
        }
    }
}

/// One of janua's handlers as a settings file registers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredHook {
    /// The event (`PreToolUse`, …).
    pub event: String,
    /// The command it runs, or the URL it posts to.
    pub runs: String,
    /// Its group's matcher (`*` or empty: every tool).
    pub matcher: String,
    /// `"onFailure": "block"`: a hook that cannot run blocks the call instead of letting it run.
    pub blocks_on_failure: bool,
    /// `"async": true`: Claude Code does not wait for it, so its answer decides nothing.
    pub asynchronous: bool,
}

impl RegisteredHook {
    /// Whether the matcher reaches every tool.
    pub fn matches_every_tool(&self) -> bool {
        self.matcher.is_empty() || self.matcher == "*"
    }
}

/// Part of a settings file's `hooks` with a shape janua cannot edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{key}\" is not {expected}")]
pub struct HookShapeError {
    /// Where in the file (`hooks.PreToolUse[0].hooks`).
    pub key: String,
    /// What it should be: `an object` or `an array`.
    pub expected: &'static str,
}

/// Adds janua's `handler` for `PreToolUse` and `PermissionRequest` (and, when
/// `command` has `--sandbox-bash`, `PostToolUse` of the tools that run commands) to `settings`
/// (a settings file's top-level object), replacing any earlier janua handler, or with
/// `uninstall` removes every janua handler (and groups and events left empty). Other handlers,
/// groups and keys are kept as they are. `Ok` lists the events a handler was added for; `Err`
/// names what in the file has the wrong shape.
pub fn edit_claude_hooks(
    settings: &mut Map<String, Value>,
    handler: &ClaudeHandler,
    uninstall: bool,
) -> Result<Vec<&'static str>, HookShapeError> {
    let mut added = Vec::new();
    // `--sandbox-bash` also checks, after each Bash call, that the command ran sandboxed.
    let sandbox_bash = handler.sandbox_bash();
    let shape = |key: String, expected| HookShapeError { key, expected };
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(shape("hooks".to_owned(), "an object"));
    };
    for event in CLAUDE_HOOK_EVENTS {
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            return Err(shape(format!("hooks.{event}"), "an array"));
        };
        for (index, group) in groups.iter_mut().enumerate() {
            let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return Err(shape(format!("hooks.{event}[{index}].hooks"), "an array"));
            };
            handlers.retain(|handler| !is_janua_handler(handler));
        }
        groups.retain(|group| group["hooks"].as_array().is_some_and(|h| !h.is_empty()));
        let post = event.starts_with("PostToolUse");
        if !uninstall && (!post || sandbox_bash) {
            added.push(event);
            groups.push(json!({
                "matcher": if post { super::tools::command_tools_matcher() } else { "*".to_owned() },
                "hooks": [handler.json()],
            }));
        }
        if groups.is_empty() {
            hooks.remove(event);
        }
    }
    if hooks.is_empty() {
        settings.remove("hooks");
    }
    Ok(added)
}

/// Installs (or with `uninstall` removes) janua's `handler` in the settings file
/// `path`, written atomically and only if it changes; with `managed_hooks_only`, also sets
/// `allowManagedHooksOnly` (`Some(true)`) or removes it (`Some(false)`). The change, and the
/// events a handler was added for. A file that is not a JSON object is an error and left
/// untouched.
pub fn install_claude_hook(
    path: &Path,
    handler: &ClaudeHandler,
    uninstall: bool,
    managed_hooks_only: Option<bool>,
) -> Result<(SettingsChange, Vec<&'static str>), SettingsError> {
    let mut added = Vec::new();
    let change = crate::settings::update_settings_file(path, |settings| {
        added = edit_claude_hooks(settings, handler, uninstall)?;
        match managed_hooks_only {
            Some(true) => {
                settings.insert("allowManagedHooksOnly".to_owned(), Value::Bool(true));
            }
            Some(false) => {
                settings.remove("allowManagedHooksOnly");
            }
            None => {}
        }
        Ok::<_, HookShapeError>(())
    })?;
    Ok((change, added))
}

/// janua's handlers registered in the settings `text`.
pub fn registered_claude_hooks(text: &str) -> Vec<RegisteredHook> {
    let Ok(settings) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for event in CLAUDE_HOOK_EVENTS {
        for group in settings["hooks"][event].as_array().into_iter().flatten() {
            for handler in group["hooks"].as_array().into_iter().flatten() {
                if is_janua_handler(handler) {
                    let what = handler["command"]
                        .as_str()
                        .or_else(|| handler["url"].as_str())
                        .unwrap_or_default();
                    found.push(RegisteredHook {
                        event: event.to_owned(),
                        runs: what.to_owned(),
                        // A matcher that is not text reaches no tool janua can vouch for.
                        matcher: match &group["matcher"] {
                            Value::Null => String::new(),
                            Value::String(matcher) => matcher.clone(),
                            other => other.to_string(),
                        },
                        blocks_on_failure: handler["onFailure"] == "block",
                        asynchronous: handler["async"] == true,
                    });
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(text: &str) -> ClaudeHandler {
        ClaudeHandler::Command(text.to_owned())
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn installs_once_and_keeps_every_other_setting() {
        let mut settings = object(json!({
            "model": "opus",
            "permissions": {"allow": ["Bash(npm test)"]},
            "hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": "/old/janua hook claude"}]}
            ]}
        }));
        edit_claude_hooks(&mut settings, &command("/usr/bin/janua hook claude"), false).unwrap();
        let once = settings.clone();
        edit_claude_hooks(&mut settings, &command("/usr/bin/janua hook claude"), false).unwrap();
        assert_eq!(settings, once, "a second install changes nothing");
        let pre = settings["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2, "{pre:?}");
        assert_eq!(pre[0]["hooks"][0]["command"], "./guard.sh");
        assert_eq!(pre[1]["hooks"][0]["command"], "/usr/bin/janua hook claude");
        assert_eq!(pre[1]["hooks"][0]["onFailure"], "block");
        assert_eq!(
            settings["hooks"]["PermissionRequest"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert_eq!(settings["model"], "opus");
        assert_eq!(settings["permissions"]["allow"][0], "Bash(npm test)");

        edit_claude_hooks(&mut settings, &command(""), true).unwrap();
        assert_eq!(
            Value::Object(settings.clone()),
            json!({
                "model": "opus",
                "permissions": {"allow": ["Bash(npm test)"]},
                "hooks": {"PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
                ]}
            })
        );
        let mut empty = Map::new();
        edit_claude_hooks(&mut empty, &command("janua hook claude"), false).unwrap();
        edit_claude_hooks(&mut empty, &command("janua hook claude"), true).unwrap();
        assert!(empty.is_empty(), "{empty:?}");
        // An http handler replaces a command handler, and is removed as janua's.
        let url = ClaudeHandler::Http("http://127.0.0.1:8765/claude".to_owned());
        edit_claude_hooks(&mut settings, &command("janua hook claude"), false).unwrap();
        edit_claude_hooks(&mut settings, &url, false).unwrap();
        let pre = settings["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2, "{pre:?}");
        assert_eq!(pre[1]["hooks"][0]["type"], "http");
        assert_eq!(
            pre[1]["hooks"][0]["headers"]["Authorization"],
            "Bearer $JANUA_HOOK_TOKEN"
        );
        edit_claude_hooks(&mut settings, &url, true).unwrap();
        assert_eq!(settings["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn refuses_files_of_the_wrong_shape() {
        for bad in [
            json!({"hooks": []}),
            json!({"hooks": {"PreToolUse": {}}}),
            json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": "x"}]}}),
        ] {
            let mut settings = object(bad.clone());
            assert!(
                edit_claude_hooks(&mut settings, &command("janua hook claude"), false).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn finds_registered_handlers() {
        let text = r#"{"hooks":{"PermissionRequest":[{"hooks":[{"type":"command","command":"'/opt/janua' hook claude --authoritative"},{"type":"command","command":"hook claude"}]}]}}"#;
        assert_eq!(
            registered_claude_hooks(text),
            vec![RegisteredHook {
                event: "PermissionRequest".to_owned(),
                runs: "'/opt/janua' hook claude --authoritative".to_owned(),
                matcher: String::new(),
                blocks_on_failure: false,
                asynchronous: false,
            }]
        );
        assert!(registered_claude_hooks("not json").is_empty());
    }
}
