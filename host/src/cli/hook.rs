//! `janua hook claude`: janua's decision as a Claude Code command hook (docs/HOSTS.md).
//!
//! Fail closed: whatever goes wrong before an answer (unreadable input, a broken settings file, a
//! panic) ends with exit code 2 and the reason on stderr, which Claude Code treats as a block.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use janua::RuntimeConfig;
use janua::claude::{
    ClaudeHookEvent, ClaudeHookOptions, ClaudeScope, answer_claude_hook, claude_block,
    install_claude_hook, parse_claude_hook, registered_claude_hooks,
};
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
    /// Register `janua hook claude` in a Claude Code settings file (or remove it), printing the diff.
    Install(InstallArgs),
    /// Say whether Claude Code will run janua's hook, and try a decision through it.
    Doctor(DoctorArgs),
}

/// Which agent `install` and `doctor` are about; only Claude Code so far.
#[derive(Debug, Args)]
struct AgentChoice {
    /// Claude Code.
    #[arg(long, required = true)]
    claude: bool,
}

/// Arguments of `janua hook install`.
#[derive(Debug, Args)]
struct InstallArgs {
    #[command(flatten)]
    agent: AgentChoice,
    /// The settings file: user (~/.claude/settings.json), project (.claude/settings.json) or
    /// local (.claude/settings.local.json).
    #[arg(long, value_enum, default_value_t = Scope::User)]
    scope: Scope,
    /// Install the hook with --authoritative (janua's allow skips Claude Code's prompts).
    #[arg(long)]
    authoritative: bool,
    /// Install the hook with --sandbox-bash (Bash commands run under `janua sandbox`), also for
    /// PostToolUse of Bash.
    #[arg(long = "sandbox-bash")]
    sandbox_bash: bool,
    /// Remove janua's hook instead.
    #[arg(long)]
    uninstall: bool,
}

/// Arguments of `janua hook doctor`.
#[derive(Debug, Args)]
struct DoctorArgs {
    #[command(flatten)]
    agent: AgentChoice,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Scope {
    User,
    Project,
    Local,
}

impl Scope {
    fn claude(self) -> ClaudeScope {
        match self {
            Scope::User => ClaudeScope::User,
            Scope::Project => ClaudeScope::Project,
            Scope::Local => ClaudeScope::Local,
        }
    }
}

/// Arguments of `janua hook claude`.
#[derive(Debug, Args)]
struct ClaudeArgs {
    /// janua's allow is Claude Code's allow (its own prompts are skipped); without it janua only
    /// denies and asks, and Claude Code decides what janua allows.
    #[arg(long)]
    authoritative: bool,
    /// Rewrite the Bash commands janua lets through to run under `janua sandbox`, and report a
    /// Bash call that ran without it (Claude Code dropped the rewrite).
    #[arg(long = "sandbox-bash")]
    sandbox_bash: bool,
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
    let claude = match args.command {
        HookCommand::Claude(claude) => claude,
        HookCommand::Install(install) => return run_install(&install, base),
        HookCommand::Doctor(_) => return run_doctor(base),
    };
    // A panic would exit 101, which Claude Code reads as a non-blocking error: the call would run.
    std::panic::set_hook(Box::new(|info| {
        use std::io::Write as _;
        // Not `eprintln!`, which would panic again with standard error closed.
        let _ = writeln!(
            std::io::stderr(),
            "janua hook: internal error ({info}); the call is blocked"
        );
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
    let workspace = config.workspace.clone();
    let runtime = match janua::Runtime::new(config).await {
        Ok(runtime) => runtime,
        Err(error) => return block(Some(&request.event), &error.to_string()),
    };
    // Standard error of a hook that exits 0 goes to Claude Code's debug log.
    for warning in runtime.warnings() {
        eprintln!("janua hook: warning: {warning}");
    }
    if let Some(cwd) = &request.cwd {
        // Relative paths in a command line are read from where Claude Code's shell is.
        runtime.set_shell_directory(cwd);
    }
    let options = ClaudeHookOptions {
        authoritative: claude.authoritative,
        sandbox_prefix: if claude.sandbox_bash {
            match sandbox_prefix(&workspace) {
                Ok(prefix) => Some(prefix),
                Err(error) => return block(Some(&request.event), &format!("{error:#}")),
            }
        } else {
            None
        },
    };
    let answer = answer_claude_hook(&runtime, &request, &options).await;
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

/// The project directory of `base` (its workspace), or the current directory.
fn project_dir(base: &anyhow::Result<RuntimeConfig>) -> PathBuf {
    match base {
        Ok(config) => config.workspace.clone(),
        Err(_) => std::env::current_dir().unwrap_or_default(),
    }
}

/// `text` as one shell word.
fn shell_word(text: &str) -> anyhow::Result<String> {
    Ok(shlex::try_quote(text)
        .map_err(|_| anyhow::anyhow!("{text:?} cannot be written as a shell word"))?
        .into_owned())
}

/// This janua as a shell word.
fn this_janua() -> anyhow::Result<String> {
    shell_word(&std::env::current_exe()?.to_string_lossy())
}

/// The installed command: this janua's `hook claude` with `flags`.
fn janua_command(flags: &[&str]) -> anyhow::Result<String> {
    let mut command = format!("{} hook claude", this_janua()?);
    for flag in flags {
        command.push(' ');
        command.push_str(flag);
    }
    Ok(command)
}

/// What a Bash command janua lets through is rewritten to run under (the command follows as
/// one shell word).
fn sandbox_prefix(project: &std::path::Path) -> anyhow::Result<String> {
    let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    Ok(format!(
        "{} --cwd {} sandbox -- /bin/bash -c",
        this_janua()?,
        shell_word(&project.to_string_lossy())?
    ))
}

fn run_install(args: &InstallArgs, base: anyhow::Result<RuntimeConfig>) -> ExitCode {
    let _ = args.agent.claude;
    let project = project_dir(&base);
    let Some(path) = args.scope.claude().path(&project) else {
        eprintln!(
            "janua hook install: no home directory for the user settings file (set HOME or CLAUDE_CONFIG_DIR)"
        );
        return ExitCode::from(2);
    };
    let flags: Vec<&str> = [
        (args.authoritative, "--authoritative"),
        (args.sandbox_bash, "--sandbox-bash"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect();
    let command = match janua_command(&flags) {
        Ok(command) => command,
        Err(error) => {
            eprintln!("janua hook install: {error:#}");
            return ExitCode::from(2);
        }
    };
    match install_claude_hook(&path, &command, args.uninstall) {
        Ok(change) if change.unchanged() => {
            println!(
                "{}: already {}; unchanged",
                path.display(),
                if args.uninstall {
                    "without janua's hook"
                } else {
                    "has janua's hook"
                }
            );
            ExitCode::SUCCESS
        }
        Ok(change) => {
            let diff = similar::TextDiff::from_lines(&change.before, &change.after);
            let name = path.display().to_string();
            print!("{}", diff.unified_diff().header(&name, &name));
            println!(
                "{}: janua's hook {} for {}",
                path.display(),
                if args.uninstall {
                    "removed"
                } else {
                    "installed"
                },
                janua::claude::CLAUDE_HOOK_EVENTS.join(" and ")
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("janua hook install: {error}");
            ExitCode::from(2)
        }
    }
}

/// The first Claude Code version whose hooks honour `"onFailure": "block"`.
const ON_FAILURE_SINCE: [u64; 3] = [2, 1, 295];

fn run_doctor(base: anyhow::Result<RuntimeConfig>) -> ExitCode {
    let project = project_dir(&base);
    let mut healthy = true;
    // Claude Code's version: `"onFailure": "block"` is what blocks a call when the hook cannot run.
    match std::process::Command::new("claude")
        .arg("--version")
        .output()
    {
        Ok(output) if output.status.success() => {
            let text = String::from_utf8_lossy(&output.stdout);
            let version: Option<Vec<u64>> = text.split_whitespace().next().map(|word| {
                word.split('.')
                    .filter_map(|part| part.parse().ok())
                    .collect()
            });
            match version.filter(|parts| parts.len() == 3) {
                Some(parts) if parts.as_slice() >= ON_FAILURE_SINCE.as_slice() => {
                    println!(
                        "claude {}: honours \"onFailure\": \"block\" (a hook that cannot run blocks the call)",
                        text.trim()
                    );
                }
                Some(_) => {
                    healthy = false;
                    println!(
                        "claude {}: too old for \"onFailure\" (needs 2.1.295 or later): if janua cannot run, Claude Code runs the call",
                        text.trim()
                    );
                }
                None => println!("claude: version {:?} not understood", text.trim()),
            }
        }
        _ => println!(
            "claude: not found on PATH (janua cannot say whether \"onFailure\" is honoured)"
        ),
    }
    // Where the hook is registered.
    let mut commands = Vec::new();
    for (label, scope) in [
        ("user", ClaudeScope::User),
        ("project", ClaudeScope::Project),
        ("local", ClaudeScope::Local),
    ] {
        let Some(path) = scope.path(&project) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let found = registered_claude_hooks(&text);
        if found.is_empty() {
            println!(
                "{label} settings {}: janua's hook not registered",
                path.display()
            );
            continue;
        }
        for (event, command) in &found {
            println!(
                "{label} settings {}: {event} runs {command}",
                path.display()
            );
            commands.push(command.clone());
        }
    }
    if commands.is_empty() {
        healthy = false;
        println!("janua's hook is not registered: run `janua hook install --claude`");
    }
    match claude_trust(&project) {
        Some(true) => println!("Claude Code trusts {}: its hooks run", project.display()),
        Some(false) => {
            println!(
                "Claude Code has not trusted {} yet: hooks run once its trust dialog is accepted",
                project.display()
            );
        }
        None => println!(
            "Claude Code's trust for {}: unknown (no record in ~/.claude.json)",
            project.display()
        ),
    }
    // A decision through the registered command, as Claude Code would run it.
    let command = commands
        .first()
        .cloned()
        .or_else(|| janua_command(&[]).ok());
    if let Some(command) = command {
        let event = serde_json::json!({
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf ~"}, "cwd": project, "permission_mode": "default",
        });
        match self_test(&command, &event.to_string(), &project) {
            Ok(decision) if decision == "ask" || decision == "deny" => {
                println!("self-test: `rm -rf ~` through `{command}` answered {decision}");
            }
            Ok(decision) => {
                healthy = false;
                println!(
                    "self-test: `rm -rf ~` through `{command}` answered {decision:?}, expected ask or deny"
                );
            }
            Err(problem) => {
                healthy = false;
                println!("self-test: `{command}` failed: {problem}");
            }
        }
    }
    if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs `command` as Claude Code runs a command hook (`sh -c`) with `event` on stdin; the
/// `permissionDecision` it printed.
fn self_test(command: &str, event: &str, project: &std::path::Path) -> Result<String, String> {
    use std::io::Write as _;
    let mut child = std::process::Command::new("/bin/sh")
        .args(["-c", command])
        .current_dir(project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|error| error.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(event.as_bytes())
            .map_err(|error| error.to_string())?;
    }
    let output = child
        .wait_with_output()
        .map_err(|error| error.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|_| {
        format!(
            "no answer on stdout ({:?})",
            String::from_utf8_lossy(&output.stdout)
        )
    })?;
    Ok(answer["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

/// Whether Claude Code recorded its trust dialog as accepted for `project` (`~/.claude.json`,
/// best effort: `None` when there is no record).
fn claude_trust(project: &std::path::Path) -> Option<bool> {
    let home = std::env::var_os("HOME")?;
    let text = std::fs::read_to_string(PathBuf::from(home).join(".claude.json")).ok()?;
    let state: serde_json::Value = serde_json::from_str(&text).ok()?;
    state["projects"][project.to_string_lossy().as_ref()]["hasTrustDialogAccepted"].as_bool()
}
