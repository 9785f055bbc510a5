//! `janua hook claude`: janua's decision as a Claude Code command hook (docs/HOSTS.md).
//!
//! Fail closed: whatever goes wrong before an answer (unreadable input, a broken settings file, a
//! panic) ends with exit code 2 and the reason on stderr, which Claude Code treats as a block.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use janua::RuntimeConfig;
use janua::claude::{ClaudeHookEvent, answer_claude_hook, claude_block, parse_claude_hook};
use janua::config::{CLAUDE_MANAGED_SETTINGS, ClaudeCodeSettings, claude_user_settings_path};

/// Arguments of `janua hook`.
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Debug, Subcommand)]
enum HookCommand {
    /// Answer one Claude Code hook event (PreToolUse, PermissionRequest) read on stdin.
    Claude(ClaudeArgs),
}

/// Arguments of `janua hook claude`.
#[derive(Debug, Args)]
struct ClaudeArgs {
    /// janua's allow is Claude Code's allow (its own prompts are skipped); without it janua only
    /// denies and asks, and Claude Code decides what janua allows.
    #[arg(long)]
    authoritative: bool,
}

/// Session janua's hook decisions are checked in unless `--session` names another: it never
/// holds approvals, so what Claude Code's user approved stays Claude Code's.
const HOOK_SESSION: &str = "claude-code-hook";

/// Reads one event on stdin, decides it, prints Claude Code's answer.
pub(crate) async fn run(
    args: HookArgs,
    base: anyhow::Result<RuntimeConfig>,
    explicit_cwd: bool,
) -> ExitCode {
    let HookCommand::Claude(claude) = args.command;
    // A panic would exit 101, which Claude Code reads as a non-blocking error: the call would run.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("janua hook: internal error ({info}); the call is blocked");
        std::process::exit(2);
    }));
    let mut text = String::new();
    if let Err(error) = std::io::stdin().read_to_string(&mut text) {
        return block(None, &format!("cannot read the hook input: {error}"));
    }
    let request = match parse_claude_hook(&text) {
        Ok(request) => request,
        Err(error) => return block(None, &error.to_string()),
    };
    if let ClaudeHookEvent::Other(name) = &request.event {
        eprintln!("janua hook: the {name} event is not one janua decides; no answer");
        return ExitCode::SUCCESS;
    }
    for note in &request.notes {
        eprintln!("janua hook: {note}");
    }
    let config = match base {
        Ok(config) => hook_config(config, &request, claude.authoritative, explicit_cwd),
        Err(error) => return block(Some(&request.event), &format!("{error:#}")),
    };
    let runtime = match janua::Runtime::new(config).await {
        Ok(runtime) => runtime,
        Err(error) => return block(Some(&request.event), &error.to_string()),
    };
    let answer = answer_claude_hook(&runtime, &request, claude.authoritative).await;
    if let Some(output) = answer.output {
        println!("{output}");
    }
    ExitCode::SUCCESS
}

/// The runtime a hook event is decided in: the project's directory, the event's mode, Claude
/// Code's settings beside janua's, and nothing that starts a process.
fn hook_config(
    mut config: RuntimeConfig,
    request: &janua::claude::ClaudeHookRequest,
    authoritative: bool,
    explicit_cwd: bool,
) -> RuntimeConfig {
    let project = std::env::var_os("CLAUDE_PROJECT_DIR")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| request.cwd.clone());
    if let Some(project) = project.filter(|_| !explicit_cwd) {
        config.workspace = project;
    }
    config.permission_mode = Some(request.mode);
    config.claude_code = Some(ClaudeCodeSettings {
        managed: Some(PathBuf::from(CLAUDE_MANAGED_SETTINGS)),
        user: claude_user_settings_path(),
        project: true,
        // What the project's files allow only turns janua's answer from "ask" into "no answer"
        // unless janua is authoritative; then janua's own workspace trust is needed.
        trust_project: !authoritative,
    });
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

/// Blocks the call: Claude Code's deny on stdout (what `PermissionRequest` honours), the reason on
/// stderr, exit code 2 (what `PreToolUse` honours whatever stdout holds).
fn block(event: Option<&ClaudeHookEvent>, reason: &str) -> ExitCode {
    let reason = format!("{reason}; the call is blocked");
    if let Some(output) = claude_block(event, &reason) {
        println!("{output}");
    }
    eprintln!("janua hook: {reason}");
    ExitCode::from(2)
}
