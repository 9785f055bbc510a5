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

mod install;

use std::path::PathBuf;

use serde_json::{Value, json};

pub use install::{
    CLAUDE_HOOK_EVENTS, ClaudeScope, HookShapeError, SettingsChange, edit_claude_hooks,
    install_claude_hook, registered_claude_hooks,
};

use crate::Runtime;
use janua_permissions::{PermissionMode, RuleKind, Verdict};
use janua_types::{ErrorKind, ToolUse};

/// The hook events janua decides; any other event gets no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaudeHookEvent {
    /// Before a tool call: janua's deny and ask become Claude Code's.
    PreToolUse,
    /// Claude Code is about to ask the user: janua may deny (or, when authoritative, allow).
    PermissionRequest,
    /// After a tool ran: with `--sandbox-bash`, janua reports a Bash command that ran without
    /// its sandbox.
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
    /// `cwd`, when given.
    pub cwd: Option<PathBuf>,
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
        Some("PostToolUse") => ClaudeHookEvent::PostToolUse,
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
    /// `--sandbox-bash`: the command prefix (`'…/janua' --cwd '…' sandbox -- /bin/bash -c`) a
    /// Bash command janua lets through is rewritten to run under; a `PostToolUse` for a Bash
    /// command without it is reported to the user and the model.
    pub sandbox_prefix: Option<String>,
}

/// Decides `request` in `runtime` (which must not run hooks: see the module docs).
pub async fn answer_claude_hook(
    runtime: &Runtime,
    request: &ClaudeHookRequest,
    options: &ClaudeHookOptions,
) -> ClaudeHookAnswer {
    let nothing = ClaudeHookAnswer {
        output: None,
        verdict: None,
        reason: String::new(),
    };
    match request.event {
        ClaudeHookEvent::Other(_) => return nothing,
        ClaudeHookEvent::PostToolUse => {
            return ClaudeHookAnswer {
                output: options
                    .sandbox_prefix
                    .as_deref()
                    .and_then(|prefix| unsandboxed_report(request, prefix)),
                ..nothing
            };
        }
        ClaudeHookEvent::PreToolUse | ClaudeHookEvent::PermissionRequest => {}
    }
    let report = runtime.decide_only(request.call.clone()).await;
    // The name Claude Code runs is the name janua must judge: an alias (which a project's
    // settings may declare) would have janua decide for another tool.
    let aliased = report
        .tool
        .as_deref()
        .is_some_and(|tool| tool != request.call.name);
    let unknown = report
        .stage_error
        .as_ref()
        .is_some_and(|failure| failure.kind == ErrorKind::UnknownTool);
    let (verdict, reason) = match report.decision {
        _ if aliased || unknown => named_by_rules(runtime, &request.call.name),
        // A stage failed (the input does not match janua's schema): janua still denies and
        // asks, but never allows what it could not read.
        Some(decision) if decision.verdict == Verdict::Allow && report.stage_error.is_some() => {
            (None, String::new())
        }
        Some(decision) => (Some(decision.verdict), decision.reason),
        None => {
            let why = report.stage_error.map_or_else(
                || "the call did not reach the decision".to_owned(),
                |failure| failure.message,
            );
            (
                Some(Verdict::Deny),
                format!("janua could not decide: {why}"),
            )
        }
    };
    let sandboxed = match (&options.sandbox_prefix, &request.event, verdict) {
        (Some(prefix), ClaudeHookEvent::PreToolUse, Some(Verdict::Allow | Verdict::Ask))
            if request.call.name == "Bash" =>
        {
            sandboxed_input(&request.call.input, prefix)
        }
        _ => None,
    };
    let output = match (sandboxed, verdict) {
        // The command runs confined: what janua allows runs without a prompt (as Claude Code's
        // own sandbox auto-allows), what it asks about is asked, both rewritten.
        (Some(input), Some(verdict)) => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": if verdict == Verdict::Allow { "allow" } else { "ask" },
                "permissionDecisionReason": format!("janua: {reason}; runs under janua sandbox"),
                "updatedInput": input,
            }
        })),
        _ => verdict.and_then(|verdict| {
            claude_answer(&request.event, verdict, &reason, options.authoritative)
        }),
    };
    ClaudeHookAnswer {
        output,
        verdict,
        reason,
    }
}

/// The Bash input with its command run under `prefix`, every other field kept (Claude Code
/// replaces the whole input); `None` when it already is, or has no command.
fn sandboxed_input(input: &Value, prefix: &str) -> Option<Value> {
    let command = input["command"].as_str()?;
    if command.starts_with(prefix) {
        return None;
    }
    let quoted = shlex::try_quote(command).ok()?;
    let mut rewritten = input.clone();
    rewritten["command"] = Value::String(format!("{prefix} {quoted}"));
    Some(rewritten)
}

/// Claude Code's answer to a `PostToolUse` of a Bash command that did not run under `prefix`:
/// feedback for the model beside the result and a message for the user.
fn unsandboxed_report(request: &ClaudeHookRequest, prefix: &str) -> Option<Value> {
    if request.call.name != "Bash" {
        return None;
    }
    let command = request.call.input["command"].as_str()?;
    if command.starts_with(prefix) {
        return None;
    }
    let message = format!(
        "janua: this Bash command ran WITHOUT janua's sandbox (Claude Code did not apply the rewrite janua asked for): {command}"
    );
    Some(json!({
        "decision": "block",
        "reason": message,
        "systemMessage": message,
    }))
}

/// A tool janua does not have (`TodoWrite`, `mcp__…`): a bare deny or ask rule naming it decides;
/// rules with a specifier cannot be read for an input janua has no schema for, and Claude Code
/// applies those itself.
fn named_by_rules(runtime: &Runtime, tool: &str) -> (Option<Verdict>, String) {
    let policy = runtime.policy();
    for (kind, verdict) in [
        (RuleKind::Deny, Verdict::Deny),
        (RuleKind::Ask, Verdict::Ask),
    ] {
        if let Some(rule) = policy
            .rules(kind)
            .iter()
            .find(|rule| rule.is_bare() && rule.matches_name(tool))
        {
            return (
                Some(verdict),
                format!(
                    "{tool} is matched by the {} rule {:?} ({})",
                    kind.as_str(),
                    rule.text(),
                    rule.source()
                ),
            );
        }
    }
    (None, String::new())
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
