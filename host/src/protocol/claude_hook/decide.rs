//! One Claude Code hook event decided: each of the tool's rows in `tools.tsv` judged (as one of
//! janua's tools, by the rules naming it, or as a tool janua cannot classify), the strictest
//! answer kept, then turned into Claude Code's hook JSON, with `--sandbox-bash`'s rewrite. It
//! reads no settings and parses no event (`claude_hook.rs` does both).

use serde_json::{Value, json};

use super::tools::{self, DecidedAs, ToolRow};
use super::{
    ClaudeHookAnswer, ClaudeHookEvent, ClaudeHookOptions, ClaudeHookRequest, claude_answer,
};
use crate::Runtime;
use janua_permissions::{PermissionMode, RuleKind, Verdict};
use janua_types::{ErrorKind, ToolUse};

/// Decides `request` in `runtime` (which must not run hooks: see the module docs).
/// `sandbox_prefix` is what `--sandbox-bash` runs commands under (see
/// [`ClaudeHookOptions::sandbox_janua`]).
///
/// Claude Code's tool is decided by its rows in `claude_hook/tools.tsv`: as janua's tool with the
/// input the row builds, by the rules naming it, or (a tool janua cannot classify) asked when a
/// deny rule is set. A tool with several rows (`Monitor` runs a command or opens a socket) gets
/// the strictest answer of those that apply.
pub async fn answer_claude_hook(
    runtime: &Runtime,
    request: &ClaudeHookRequest,
    options: &ClaudeHookOptions,
    sandbox_prefix: Option<&str>,
) -> ClaudeHookAnswer {
    let nothing = ClaudeHookAnswer {
        output: None,
        verdict: None,
        reason: String::new(),
    };
    let rows = tools::rows_for(&request.call.name);
    match request.event {
        ClaudeHookEvent::Other(_) => return nothing,
        ClaudeHookEvent::PostToolUse => {
            return ClaudeHookAnswer {
                output: sandbox_prefix
                    .and_then(|prefix| unsandboxed_report(request, &rows, prefix)),
                ..nothing
            };
        }
        ClaudeHookEvent::PreToolUse | ClaudeHookEvent::PermissionRequest => {}
    }
    let mut judged = Vec::new();
    let mut applied = false;
    for row in &rows {
        match &row.decided_as {
            DecidedAs::Tool(tool) => {
                if let Some(call) = row.janua_call(&request.call.id, &request.call.input) {
                    applied = true;
                    judged.push(judge_as_janua_tool(runtime, request, call).await);
                }
                // Rules naming Claude Code's own tool (`Monitor`, `MultiEdit`) hold too.
                if *tool != request.call.name {
                    judged.push(named_by_rules(runtime, &request.call.name));
                }
            }
            DecidedAs::Named => {
                applied = true;
                judged.push(named_by_rules(runtime, &request.call.name));
            }
            DecidedAs::Unclassified => {
                applied = true;
                judged.push(unclassified(runtime, &request.call.name));
            }
        }
        // A tool that runs commands janua cannot put in its sandbox (PowerShell): with
        // `--sandbox-bash` every command is to run confined, so a person decides this one.
        if row.unconfined && sandbox_prefix.is_some() {
            judged.push(Judged {
                verdict: Some(Verdict::Ask),
                reason: format!(
                    "Claude Code's {} runs commands janua cannot run in its sandbox (--sandbox-bash): a person decides",
                    request.call.name
                ),
                person_only: true,
            });
        }
    }
    // No row applies (a tool janua does not know, or input none of its rows can read).
    if !applied {
        judged.push(unclassified(runtime, &request.call.name));
    }
    let Judged {
        mut verdict,
        mut reason,
        person_only,
    } = judged
        .into_iter()
        .max_by_key(Judged::strictness)
        .unwrap_or_default();
    // Claude Code's bypassPermissions accepts every ask unasked, and dontAsk refuses it without
    // saying why: an ask only a person may answer (a protected path, a critical removal, what
    // janua cannot analyze) becomes janua's denial, with its reason.
    if verdict == Some(Verdict::Ask)
        && person_only
        && matches!(
            request.mode,
            PermissionMode::BypassPermissions | PermissionMode::DontAsk
        )
    {
        verdict = Some(Verdict::Deny);
        reason = format!(
            "{reason} (Claude Code's {} mode would not ask a person, so janua denies it; run it yourself if you want it)",
            request.mode.as_str()
        );
    }
    let sandboxed = match (sandbox_prefix, &request.event, verdict) {
        (Some(prefix), ClaudeHookEvent::PreToolUse, None | Some(Verdict::Allow | Verdict::Ask)) => {
            sandboxed_input(&request.call.input, &rows, prefix)
        }
        _ => None,
    };
    let output = match sandboxed {
        // The command runs confined: what janua allows runs without a prompt (as Claude Code's
        // own sandbox auto-allows), what it asks about, or could not read, is asked; both
        // rewritten.
        Some((input, stripped)) => {
            let decision = if verdict == Some(Verdict::Allow) {
                "allow"
            } else {
                "ask"
            };
            let mut said = if reason.is_empty() {
                "janua could not read every field of the input".to_owned()
            } else {
                reason.clone()
            };
            said.push_str("; runs under janua sandbox");
            for field in stripped {
                said.push_str(&format!(
                    " ({field} removed: the command runs in janua's sandbox instead)"
                ));
            }
            Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": decision,
                    "permissionDecisionReason": format!("janua: {said}"),
                    "updatedInput": input,
                }
            }))
        }
        None => verdict.and_then(|verdict| {
            claude_answer(&request.event, verdict, &reason, options.authoritative)
        }),
    };
    ClaudeHookAnswer {
        output,
        verdict,
        reason,
    }
}

/// One row's answer: janua's verdict (`None`: no answer), why, and whether only a person may
/// turn an ask into allow.
#[derive(Debug, Default)]
struct Judged {
    verdict: Option<Verdict>,
    reason: String,
    person_only: bool,
}

impl Judged {
    /// Deny, then ask (a person-only ask first), then no answer, then allow.
    fn strictness(&self) -> u8 {
        match self.verdict {
            Some(Verdict::Deny) => 5,
            Some(Verdict::Ask | Verdict::Defer) if self.person_only => 4,
            Some(Verdict::Ask | Verdict::Defer) => 3,
            None => 2,
            Some(Verdict::Allow) => 1,
        }
    }
}

/// `call`, janua's version of Claude Code's call, decided by janua's stages.
async fn judge_as_janua_tool(
    runtime: &Runtime,
    request: &ClaudeHookRequest,
    call: ToolUse,
) -> Judged {
    let tool = call.name.clone();
    let report = runtime.decide_only(call).await;
    // The tool the row names is the tool janua must judge: an alias (which a project's settings
    // may declare) would have janua decide for another tool.
    let aliased = report
        .tool
        .as_deref()
        .is_some_and(|decided| decided != tool);
    let unknown = report
        .stage_error
        .as_ref()
        .is_some_and(|failure| failure.kind == ErrorKind::UnknownTool);
    match report.decision {
        _ if aliased || unknown => unclassified(runtime, &request.call.name),
        // A stage failed (the input does not match janua's schema): janua still denies and
        // asks, but never allows what it could not read.
        Some(decision) if decision.verdict == Verdict::Allow && report.stage_error.is_some() => {
            Judged::default()
        }
        Some(decision) => Judged {
            verdict: Some(decision.verdict),
            person_only: decision.decided_by.needs_a_person(),
            reason: decision.reason,
        },
        None => {
            let why = report.stage_error.map_or_else(
                || "the call did not reach the decision".to_owned(),
                |failure| failure.message,
            );
            Judged {
                verdict: Some(Verdict::Deny),
                reason: format!("janua could not decide: {why}"),
                person_only: false,
            }
        }
    }
}

/// A tool janua cannot classify: a bare deny or ask rule naming it decides; otherwise, with any
/// deny rule set, a person is asked (whatever the tool touches might be what the rule guards),
/// and without one, no answer.
fn unclassified(runtime: &Runtime, tool: &str) -> Judged {
    let named = named_by_rules(runtime, tool);
    if named.verdict.is_some() {
        return named;
    }
    let policy = runtime.policy();
    let Some(rule) = policy.rules(RuleKind::Deny).first() else {
        return named;
    };
    Judged {
        verdict: Some(Verdict::Ask),
        reason: format!(
            "janua cannot tell what Claude Code's {tool} tool reads, writes or runs, and deny rules are set (such as {:?}, {}): a person decides",
            rule.text(),
            rule.source()
        ),
        person_only: true,
    }
}

/// The input with its command run under `prefix` and the fields that would turn Claude Code's
/// own sandbox off removed, every other field kept (Claude Code replaces the whole input), with
/// the removed fields that were set; `None` when no row of the tool runs a command, the command
/// already runs under the prefix, or there is no command.
fn sandboxed_input(input: &Value, rows: &[&ToolRow], prefix: &str) -> Option<(Value, Vec<String>)> {
    let row = rows.iter().find(|row| {
        row.wrap
            .as_deref()
            .is_some_and(|field| input.get(field).is_some_and(Value::is_string))
    })?;
    let field = row.wrap.as_deref()?;
    let command = input[field].as_str()?;
    let mut rewritten = input.clone();
    let mut stripped = Vec::new();
    if let Some(fields) = rewritten.as_object_mut() {
        for strip in &row.strip {
            if fields
                .remove(strip)
                .is_some_and(|value| value != Value::Bool(false) && !value.is_null())
            {
                stripped.push(strip.clone());
            }
        }
    }
    if runs_sandboxed(command, prefix) {
        return (!stripped.is_empty()).then_some((rewritten, stripped));
    }
    let quoted = shlex::try_quote(command).ok()?;
    rewritten[field] = Value::String(format!("{prefix} {quoted}"));
    Some((rewritten, stripped))
}

/// True when `command` is exactly `prefix` and one shell word: all of it runs in the sandbox.
/// A command that merely starts with the prefix (`PREFIX 'true'; curl …`, which a model can
/// write) would run its tail outside it, so it is neither left unwrapped nor reported as
/// sandboxed.
fn runs_sandboxed(command: &str, prefix: &str) -> bool {
    command
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix(' '))
        .and_then(|rest| match shlex::split(rest).as_deref() {
            Some([word]) => shlex::try_quote(word).ok().map(|quoted| quoted == rest),
            _ => None,
        })
        .unwrap_or(false)
}

/// Claude Code's answer to a `PostToolUse` of a command that did not run under `prefix`:
/// feedback for the model beside the result and a message for the user.
fn unsandboxed_report(
    request: &ClaudeHookRequest,
    rows: &[&ToolRow],
    prefix: &str,
) -> Option<Value> {
    let command = rows
        .iter()
        .filter_map(|row| row.wrap.as_deref())
        .find_map(|field| request.call.input.get(field).and_then(Value::as_str))?;
    if runs_sandboxed(command, prefix) {
        return None;
    }
    let message = format!(
        "janua: this {} command ran WITHOUT janua's sandbox (Claude Code did not apply the rewrite janua asked for): {command}",
        request.call.name
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
fn named_by_rules(runtime: &Runtime, tool: &str) -> Judged {
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
            return Judged {
                verdict: Some(verdict),
                reason: format!(
                    "{tool} is matched by the {} rule {:?} ({})",
                    kind.as_str(),
                    rule.text(),
                    rule.source()
                ),
                person_only: false,
            };
        }
    }
    Judged::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_command_under_the_prefix_counts_as_sandboxed() {
        let prefix = "/usr/bin/janua --cwd /p sandbox -- /bin/bash -c";
        let rows = tools::rows_for("Bash");
        let (wrapped, _) =
            sandboxed_input(&json!({"command": "ls -la; echo 'a b'"}), &rows, prefix).unwrap();
        let command = wrapped["command"].as_str().unwrap();
        assert!(runs_sandboxed(command, prefix), "{command}");
        assert_eq!(
            sandboxed_input(&wrapped, &rows, prefix),
            None,
            "wrapped twice"
        );
        for smuggled in [
            format!("{prefix} true; curl https://example.com"),
            format!("{prefix} 'true' && rm -rf build"),
            format!("{prefix}true"),
            format!("{prefix} a b"),
            prefix.to_owned(),
        ] {
            assert!(!runs_sandboxed(&smuggled, prefix), "{smuggled}");
            let (rewritten, _) =
                sandboxed_input(&json!({"command": smuggled}), &rows, prefix).unwrap();
            assert!(runs_sandboxed(
                rewritten["command"].as_str().unwrap(),
                prefix
            ));
        }
        let (rewritten, stripped) = sandboxed_input(
            &json!({"command": "ls", "dangerouslyDisableSandbox": true, "timeout": 5}),
            &rows,
            prefix,
        )
        .unwrap();
        assert_eq!(stripped, ["dangerouslyDisableSandbox"]);
        assert_eq!(rewritten["timeout"], 5);
        assert!(rewritten.get("dangerouslyDisableSandbox").is_none());
        let (_, stripped) = sandboxed_input(
            &json!({"command": "ls", "dangerouslyDisableSandbox": false}),
            &rows,
            prefix,
        )
        .unwrap();
        assert!(stripped.is_empty());
        assert!(
            sandboxed_input(&json!({"command": "ls"}), &tools::rows_for("Read"), prefix).is_none()
        );
        let monitor = tools::rows_for("Monitor");
        let (rewritten, _) = sandboxed_input(
            &json!({"command": "tail -f x", "persistent": true}),
            &monitor,
            prefix,
        )
        .unwrap();
        assert!(runs_sandboxed(
            rewritten["command"].as_str().unwrap(),
            prefix
        ));
        assert!(sandboxed_input(&json!({"ws": {"url": "wss://h"}}), &monitor, prefix).is_none());
    }
}
