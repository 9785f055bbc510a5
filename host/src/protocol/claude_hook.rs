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
mod project;
mod serve;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

pub use crate::settings::SettingsChange;
pub use install::{
    CLAUDE_HOOK_EVENTS, ClaudeHandler, ClaudeScope, HTTP_TOKEN_VARIABLE, HookShapeError,
    RegisteredHook, edit_claude_hooks, install_claude_hook, registered_claude_hooks,
};
pub use project::SessionProjects;
pub use serve::{ClaudeHookServer, HookServeError};

use crate::Runtime;
use janua_permissions::{PermissionMode, RuleKind, Verdict};
use janua_types::{ErrorKind, ToolUse};
use tools::{DecidedAs, ToolRow};

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
