//! Claude Code's command-hook protocol (`janua hook claude`, docs/HOSTS.md): one `PreToolUse` or
//! `PermissionRequest` event in, Claude Code's hook answer out, decided by the stages `janua
//! check` runs (resolve, coercion, schema, absolute paths, the central decision) over the
//! settings files Claude Code reads plus janua's own.
//!
//! It reads leniently and answers strictly: unknown fields are ignored, an unknown
//! `permission_mode` decides as `default` (never as something wider), and a tool janua does not
//! know is decided by the deny and ask rules that name it. What it cannot read is an error the
//! caller turns into a block ([`ClaudeHookError`]). It runs no hook of its own: Claude Code runs
//! the hooks of its settings files itself, and one of them is this one.

mod decide;
mod install;
mod project;
mod serve;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

pub use crate::settings::SettingsChange;
pub use decide::answer_claude_hook;
pub use install::{
    CLAUDE_HOOK_EVENTS, ClaudeHandler, ClaudeScope, HTTP_TOKEN_VARIABLE, HookShapeError,
    RegisteredHook, edit_claude_hooks, install_claude_hook, registered_claude_hooks,
};
pub use project::SessionProjects;
pub use serve::{ClaudeHookServer, HookServeError};

use crate::Runtime;
use janua_permissions::{PermissionMode, Verdict};
use janua_types::ToolUse;

/// The hook events janua decides; any other event gets no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaudeHookEvent {
    /// Before a tool call: janua's deny and ask become Claude Code's.
    PreToolUse,
    /// Claude Code is about to ask the user: janua may deny (or, when authoritative, allow).
    PermissionRequest,
    /// After a tool ran (`PostToolUse`, or `PostToolUseFailure` when it failed): with
    /// `--sandbox-bash`, janua reports a command that ran without its sandbox.
    PostToolUse,
    /// An event janua does not decide, by its name.
    Other(String),
}

impl ClaudeHookEvent {
    fn name(&self) -> &str {
        match self {
            ClaudeHookEvent::PreToolUse => "PreToolUse",
            ClaudeHookEvent::PermissionRequest => "PermissionRequest",
            ClaudeHookEvent::PostToolUse => "PostToolUse",
            ClaudeHookEvent::Other(name) => name,
        }
    }
}

/// One hook event as Claude Code sent it, read leniently.
#[derive(Debug, Clone)]
pub struct ClaudeHookRequest {
    /// `hook_event_name`.
    pub event: ClaudeHookEvent,
    /// `tool_name`, `tool_input` and `tool_use_id` as a call.
    pub call: ToolUse,
    /// `cwd`, when given: where Claude Code's shell is, which the model's `cd` moves.
    pub cwd: Option<PathBuf>,
    /// `session_id`, when given.
    pub session_id: Option<String>,
    /// `transcript_path`, when given: its directory's name records the session's project.
    pub transcript_path: Option<PathBuf>,
    /// The mode janua decides in: `permission_mode` when janua has it, else `default`.
    pub mode: PermissionMode,
    /// What was read differently from how it was written (an unknown mode), for stderr.
    pub notes: Vec<String>,
}

/// A hook event janua cannot read; the caller blocks the call (exit 2) with this reason.
#[derive(Debug, thiserror::Error)]
pub enum ClaudeHookError {
    /// Standard input is not one JSON object.
    #[error("the hook input is not a JSON object: {0}")]
    NotJson(String),
    /// A decided event without the tool it is about.
    #[error("the {event} event has no tool_name")]
    NoToolName {
        /// The event.
        event: String,
    },
}

/// Reads one hook event from `text`.
pub fn parse_claude_hook(text: &str) -> Result<ClaudeHookRequest, ClaudeHookError> {
    let value: Value =
        serde_json::from_str(text).map_err(|error| ClaudeHookError::NotJson(error.to_string()))?;
    let Value::Object(fields) = value else {
        return Err(ClaudeHookError::NotJson(
            "it is JSON, but not an object".to_owned(),
        ));
    };
    let text_field = |name: &str| fields.get(name).and_then(Value::as_str);
    let event = match text_field("hook_event_name") {
        Some("PreToolUse") => ClaudeHookEvent::PreToolUse,
        Some("PermissionRequest") => ClaudeHookEvent::PermissionRequest,
        Some("PostToolUse" | "PostToolUseFailure") => ClaudeHookEvent::PostToolUse,
        Some(other) => ClaudeHookEvent::Other(other.to_owned()),
        // Installed for tool events only: an event that does not name itself is read as the one
        // that can block, so a changed protocol fails closed.
        None => ClaudeHookEvent::PreToolUse,
    };
    let mut notes = Vec::new();
    let mode = match text_field("permission_mode") {
        None => PermissionMode::Default,
        Some(name) => name.parse().unwrap_or_else(|_| {
            notes.push(format!(
                "permission_mode {name:?} is not one janua has; decided as in default mode"
            ));
            PermissionMode::Default
        }),
    };
    let name = text_field("tool_name").unwrap_or_default().to_owned();
    if name.is_empty() && !matches!(event, ClaudeHookEvent::Other(_)) {
        return Err(ClaudeHookError::NoToolName {
            event: event.name().to_owned(),
        });
    }
    let input = match fields.get("tool_input") {
        Some(Value::Object(input)) => Value::Object(input.clone()),
        _ => json!({}),
    };
    Ok(ClaudeHookRequest {
        call: ToolUse {
            id: text_field("tool_use_id")
                .unwrap_or("toolu_janua_hook")
                .to_owned(),
            name,
            input,
        },
        cwd: text_field("cwd").map(PathBuf::from),
        session_id: text_field("session_id").map(str::to_owned),
        transcript_path: text_field("transcript_path").map(PathBuf::from),
        event,
        mode,
        notes,
    })
}

/// What janua answers one event: the JSON for stdout (`None`: print nothing, Claude Code decides
/// as it would without janua) and the verdict it came from.
#[derive(Debug, Clone)]
pub struct ClaudeHookAnswer {
    /// Claude Code's hook JSON, if janua has something to say.
    pub output: Option<Value>,
    /// janua's verdict (`None`: janua does not know the tool and no rule names it).
    pub verdict: Option<Verdict>,
    /// The reason janua gave (empty without a verdict).
    pub reason: String,
}

/// How janua answers Claude Code's hook events.
#[derive(Debug, Clone, Default)]
pub struct ClaudeHookOptions {
    /// janua's allow is Claude Code's allow; otherwise Claude Code's own rules and prompts still
    /// decide what janua allows.
    pub authoritative: bool,
    /// `--sandbox-bash`: this janua as a shell word. A Bash command janua lets through is
    /// rewritten to run under `JANUA --cwd PROJECT sandbox -- /bin/bash -c`; a `PostToolUse` for
    /// a Bash command without that prefix is reported to the user and the model.
    pub sandbox_janua: Option<String>,
    /// `--cwd` was given: the workspace stays the configured one, whatever the event says.
    pub keep_workspace: bool,
    /// Each session's project, fixed at the first event janua sees of it (`janua hook serve`,
    /// whose process outlives sessions; a command hook has `$CLAUDE_PROJECT_DIR`).
    pub session_projects: Option<Arc<SessionProjects>>,
}

/// Session janua's hook decisions are checked in unless `--session` names another: it never
/// holds approvals, so what Claude Code's user approved stays Claude Code's.
const HOOK_SESSION: &str = "claude-code-hook";

/// What janua replies to one hook event.
#[derive(Debug, Clone)]
pub struct ClaudeHookReply {
    /// Claude Code's hook JSON, if janua has something to say.
    pub output: Option<Value>,
    /// Why the call is blocked, when janua could not decide it (a command hook then exits 2).
    pub blocked: Option<String>,
    /// Notes and warnings for standard error (Claude Code's debug log).
    pub notes: Vec<String>,
}

impl ClaudeHookReply {
    fn block(event: Option<&ClaudeHookEvent>, reason: &str, notes: Vec<String>) -> Self {
        let reason = format!("{reason}; the call is blocked");
        Self {
            output: claude_block(event, &reason),
            blocked: Some(reason),
            notes,
        }
    }
}

/// Reads one hook event `text` and replies to it, deciding in a runtime made from `base` for the
/// event's project: Claude Code's settings beside janua's, the event's mode, nothing that starts
/// a process, no WebAssembly engine. Whatever cannot be read or loaded is a block.
pub async fn respond_to_claude_hook(
    base: &crate::RuntimeConfig,
    text: &str,
    options: &ClaudeHookOptions,
) -> ClaudeHookReply {
    let request = match parse_claude_hook(text) {
        Ok(request) => request,
        Err(error) => return ClaudeHookReply::block(None, &error.to_string(), Vec::new()),
    };
    let mut notes = request.notes.clone();
    if let ClaudeHookEvent::Other(name) = &request.event {
        notes.push(format!(
            "the {name} event is not one janua decides; no answer"
        ));
        return ClaudeHookReply {
            output: None,
            blocked: None,
            notes,
        };
    }
    let project = match project::session_project(&base.workspace, &request, options) {
        Ok(project) => project,
        Err(unplaced) => {
            return ClaudeHookReply::block(Some(&request.event), &unplaced.to_string(), notes);
        }
    };
    let config = hook_config(base.clone(), &request, project, options);
    let project =
        std::fs::canonicalize(&config.workspace).unwrap_or_else(|_| config.workspace.clone());
    let runtime = match Runtime::new(config).await {
        Ok(runtime) => runtime,
        Err(error) => {
            return ClaudeHookReply::block(Some(&request.event), &error.to_string(), notes);
        }
    };
    notes.extend(
        runtime
            .warnings()
            .iter()
            .map(|warning| format!("warning: {warning}")),
    );
    if let Some(cwd) = &request.cwd {
        // Relative paths in a command line are read from where Claude Code's shell is.
        runtime.set_shell_directory(cwd);
    }
    let prefix = match &options.sandbox_janua {
        None => None,
        Some(janua) => match shlex::try_quote(&project.to_string_lossy()) {
            Ok(project) => Some(format!("{janua} --cwd {project} sandbox -- /bin/bash -c")),
            Err(_) => {
                return ClaudeHookReply::block(
                    Some(&request.event),
                    "the project's path cannot be written as a shell word",
                    notes,
                );
            }
        },
    };
    let unread = tools::unread_fields(&tools::rows_for(&request.call.name), &request.call.input);
    if !unread.is_empty() && !matches!(request.event, ClaudeHookEvent::PostToolUse) {
        notes.push(format!(
            "{} was decided without the field(s) {} janua does not read",
            request.call.name,
            unread.join(", ")
        ));
    }
    let answer = answer_claude_hook(&runtime, &request, options, prefix.as_deref()).await;
    ClaudeHookReply {
        output: answer.output,
        blocked: None,
        notes,
    }
}

/// The runtime a hook event is decided in: the session's `project` (see [`session_project`]),
/// the event's mode, Claude Code's settings beside janua's, and nothing that starts a process
/// or makes the engine.
fn hook_config(
    mut config: crate::RuntimeConfig,
    request: &ClaudeHookRequest,
    project: PathBuf,
    options: &ClaudeHookOptions,
) -> crate::RuntimeConfig {
    config.workspace = project;
    config.permission_mode = Some(request.mode);
    // Claude Code runs the command, not janua: only `--sandbox-bash` puts it in janua's view.
    config.commands_confined = Some(options.sandbox_janua.is_some());
    // What the project's files allow only turns janua's answer from "ask" into "no answer"
    // unless janua is authoritative; then janua's own workspace trust is needed. The files
    // themselves are Claude Code's on this machine unless the caller named others.
    let trust_project = !options.authoritative;
    let mut claude = config
        .claude_code
        .take()
        .unwrap_or_else(|| crate::settings::ClaudeCodeSettings::of_this_machine(trust_project));
    claude.project = true;
    claude.trust_project = trust_project;
    config.claude_code = Some(claude);
    config.project_mcp = false;
    config.mcp_config_files.clear();
    config.agent_command = None;
    config.agent_tool = false;
    config.checkpoints = false;
    // Deciding runs no guest: no engine is made (docs/HOSTS.md, BENCHMARKS.md).
    config.warm_engine = false;
    if config.session_id.is_none() {
        config.session_id = Some(HOOK_SESSION.to_owned());
    }
    config
}

/// Claude Code's hook JSON for janua's `verdict` on `event`; `None` leaves the decision to
/// Claude Code.
pub fn claude_answer(
    event: &ClaudeHookEvent,
    verdict: Verdict,
    reason: &str,
    authoritative: bool,
) -> Option<Value> {
    let reason = format!("janua: {reason}");
    match event {
        ClaudeHookEvent::PreToolUse => {
            let decision = match verdict {
                Verdict::Deny => "deny",
                Verdict::Ask => "ask",
                // A hook's defer is janua's; Claude Code honours it only in `-p` with one call,
                // so the user is asked instead.
                Verdict::Defer => "ask",
                Verdict::Allow if authoritative => "allow",
                Verdict::Allow => return None,
            };
            Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": decision,
                    "permissionDecisionReason": reason,
                }
            }))
        }
        ClaudeHookEvent::PermissionRequest => match verdict {
            Verdict::Deny => Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "deny", "message": reason },
                }
            })),
            Verdict::Allow if authoritative => Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "allow" },
                }
            })),
            // The user is about to be asked, which is what janua's ask wants.
            _ => None,
        },
        ClaudeHookEvent::PostToolUse | ClaudeHookEvent::Other(_) => None,
    }
}

/// The answer that blocks a call janua could not decide (printed with exit code 2): Claude Code
/// blocks a `PreToolUse` on exit 2 whatever stdout says, and honours a `PermissionRequest` deny
/// only as JSON.
pub fn claude_block(event: Option<&ClaudeHookEvent>, reason: &str) -> Option<Value> {
    match event {
        Some(ClaudeHookEvent::Other(_) | ClaudeHookEvent::PostToolUse) => None,
        Some(event) => claude_answer(event, Verdict::Deny, reason, false),
        None => claude_answer(&ClaudeHookEvent::PreToolUse, Verdict::Deny, reason, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_table() {
        use ClaudeHookEvent::{PermissionRequest, PreToolUse};
        let decision = |value: Option<Value>| {
            value.map(|value| {
                let specific = &value["hookSpecificOutput"];
                specific["permissionDecision"]
                    .as_str()
                    .or_else(|| specific["decision"]["behavior"].as_str())
                    .unwrap_or("?")
                    .to_owned()
            })
        };
        let cases = [
            (PreToolUse, Verdict::Deny, false, Some("deny")),
            (PreToolUse, Verdict::Ask, false, Some("ask")),
            (PreToolUse, Verdict::Defer, false, Some("ask")),
            (PreToolUse, Verdict::Allow, false, None),
            (PreToolUse, Verdict::Allow, true, Some("allow")),
            (PermissionRequest, Verdict::Deny, false, Some("deny")),
            (PermissionRequest, Verdict::Ask, true, None),
            (PermissionRequest, Verdict::Allow, false, None),
            (PermissionRequest, Verdict::Allow, true, Some("allow")),
        ];
        for (event, verdict, authoritative, expected) in cases {
            let answer = claude_answer(&event, verdict, "because", authoritative);
            assert_eq!(
                decision(answer.clone()).as_deref(),
                expected,
                "{event:?} {verdict:?} authoritative={authoritative}"
            );
            if let Some(answer) = answer {
                assert_eq!(answer["hookSpecificOutput"]["hookEventName"], event.name());
            }
        }
        let denied = claude_answer(&PreToolUse, Verdict::Deny, "rule X", false).unwrap();
        assert_eq!(
            denied["hookSpecificOutput"]["permissionDecisionReason"],
            "janua: rule X"
        );
        let denied = claude_answer(&PermissionRequest, Verdict::Deny, "rule X", false).unwrap();
        assert_eq!(
            denied["hookSpecificOutput"]["decision"]["message"],
            "janua: rule X"
        );
    }

    #[test]
    fn reads_leniently_and_fails_closed() {
        let request = parse_claude_hook(
            r#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash",
                "tool_input":{"command":"ls","description":"list"},"tool_use_id":"toolu_1",
                "permission_mode":"auto","effort":{"level":"high"},"future_field":[1,2]}"#,
        )
        .unwrap();
        assert_eq!(request.event, ClaudeHookEvent::PreToolUse);
        assert_eq!(request.call.name, "Bash");
        assert_eq!(request.call.id, "toolu_1");
        assert_eq!(request.call.input["command"], "ls");
        assert_eq!(request.mode, PermissionMode::Default);
        assert!(request.notes[0].contains("auto"), "{:?}", request.notes);

        let request = parse_claude_hook(
            r#"{"hook_event_name":"PermissionRequest","tool_name":"Edit","permission_mode":"acceptEdits"}"#,
        )
        .unwrap();
        assert_eq!(request.event, ClaudeHookEvent::PermissionRequest);
        assert_eq!(request.mode, PermissionMode::AcceptEdits);
        assert_eq!(request.call.input, json!({}));

        // No event name: read as the event that can block.
        let request = parse_claude_hook(r#"{"tool_name":"Read"}"#).unwrap();
        assert_eq!(request.event, ClaudeHookEvent::PreToolUse);

        for bad in [
            "",
            "not json",
            "[1]",
            "\"text\"",
            r#"{"hook_event_name":"PreToolUse"}"#,
        ] {
            assert!(parse_claude_hook(bad).is_err(), "{bad:?} was read");
        }
        let other = parse_claude_hook(r#"{"hook_event_name":"Stop"}"#).unwrap();
        assert_eq!(other.event, ClaudeHookEvent::Other("Stop".to_owned()));
        assert_eq!(claude_block(Some(&other.event), "x"), None);
        let blocked = claude_block(None, "unreadable").unwrap();
        assert_eq!(blocked["hookSpecificOutput"]["permissionDecision"], "deny");
    }
}
