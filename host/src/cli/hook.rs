//! `janua hook claude`: janua's decision as a Claude Code command hook (docs/HOSTS.md).
//!
//! Fail closed: whatever goes wrong before an answer (unreadable input, a broken settings file, a
//! panic) ends with exit code 2 and the reason on stderr, which Claude Code treats as a block.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

mod doctor;

use janua::RuntimeConfig;
use janua::claude::{
    ClaudeHandler, ClaudeHookEvent, ClaudeHookOptions, ClaudeHookServer, ClaudeScope, claude_block,
    install_claude_hook, parse_claude_hook, respond_to_claude_hook,
};

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
    /// Answer Claude Code's `http` hooks from a warm process on loopback (token in JANUA_HOOK_TOKEN).
    Serve(ServeArgs),
}

/// Arguments of `janua hook serve`.
#[derive(Debug, Args)]
struct ServeArgs {
    /// The loopback address to listen on, such as 127.0.0.1:8765.
    #[arg(long, value_name = "ADDRESS")]
    listen: std::net::SocketAddr,
    /// Decide every event for this project (as the global --cwd does); without it, each
    /// session's project is fixed at its first event, from Claude Code's transcript path.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    #[command(flatten)]
    claude: ClaudeArgs,
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
    /// The settings file: user (~/.claude/settings.json), project (.claude/settings.json),
    /// local (.claude/settings.local.json) or managed (janua's drop-in
    /// /etc/claude-code/managed-settings.d/janua.json, which needs root).
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
    /// With --scope managed: also set allowManagedHooksOnly, so that only managed hooks (janua's
    /// among them) run and no user or project settings add hooks of their own.
    #[arg(long = "allow-managed-hooks-only")]
    allow_managed_hooks_only: bool,
    /// Where Claude Code's managed settings live (default /etc/claude-code).
    #[arg(long = "managed-dir", value_name = "DIR", default_value = MANAGED_DIR)]
    managed_dir: PathBuf,
    /// Register an `http` hook posting to `janua hook serve` at this loopback address (token in
    /// JANUA_HOOK_TOKEN) instead of a command hook.
    #[arg(long, value_name = "ADDRESS")]
    http: Option<std::net::SocketAddr>,
}

/// Arguments of `janua hook doctor`.
#[derive(Debug, Args)]
struct DoctorArgs {
    #[command(flatten)]
    agent: AgentChoice,
    /// Where Claude Code's managed settings live (default /etc/claude-code).
    #[arg(long = "managed-dir", value_name = "DIR", default_value = MANAGED_DIR)]
    managed_dir: PathBuf,
}

/// Claude Code's managed settings directory on Linux.
const MANAGED_DIR: &str = "/etc/claude-code";

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Scope {
    User,
    Project,
    Local,
    /// janua's drop-in in Claude Code's managed settings: no repository can switch it off.
    Managed,
}

impl Scope {
    fn claude(self) -> ClaudeScope {
        match self {
            Scope::User => ClaudeScope::User,
            Scope::Project => ClaudeScope::Project,
            Scope::Local => ClaudeScope::Local,
            Scope::Managed => ClaudeScope::Managed,
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

/// Reads one event on stdin, decides it, prints Claude Code's answer.
pub(crate) async fn run(
    args: HookArgs,
    base: anyhow::Result<RuntimeConfig>,
    explicit_cwd: bool,
) -> ExitCode {
    let claude = match args.command {
        HookCommand::Claude(claude) => claude,
        HookCommand::Install(install) => return run_install(&install, base),
        HookCommand::Doctor(args) => {
            let _ = args.agent.claude;
            return doctor::run(
                &project_dir(&base),
                &args.managed_dir,
                janua_command(&[]).ok(),
            );
        }
        HookCommand::Serve(serve) => return run_serve(serve, base, explicit_cwd).await,
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
    let base = match base {
        Ok(base) => base,
        Err(error) => {
            let event = parse_claude_hook(&text).ok().map(|request| request.event);
            return block(event.as_ref(), &format!("{error:#}"));
        }
    };
    let options = match claude.options(explicit_cwd) {
        Ok(options) => options,
        Err(error) => return block(None, &format!("{error:#}")),
    };
    let reply = respond_to_claude_hook(&base, &text, &options).await;
    for note in &reply.notes {
        eprintln!("janua hook: {note}");
    }
    if let Some(output) = &reply.output {
        println!("{output}");
    }
    match reply.blocked {
        Some(reason) => {
            eprintln!("janua hook: {reason}");
            ExitCode::from(2)
        }
        None => ExitCode::SUCCESS,
    }
}

impl ClaudeArgs {
    fn options(&self, explicit_cwd: bool) -> anyhow::Result<ClaudeHookOptions> {
        Ok(ClaudeHookOptions {
            authoritative: self.authoritative,
            sandbox_janua: if self.sandbox_bash {
                Some(this_janua()?)
            } else {
                None
            },
            keep_workspace: explicit_cwd,
            session_projects: None,
        })
    }
}

/// `janua hook serve`: binds, says where, answers until stopped.
async fn run_serve(
    args: ServeArgs,
    base: anyhow::Result<RuntimeConfig>,
    explicit_cwd: bool,
) -> ExitCode {
    let fail = |reason: String| {
        eprintln!("janua hook serve: {reason}");
        ExitCode::from(2)
    };
    let mut base = match base {
        Ok(base) => base,
        Err(error) => return fail(format!("{error:#}")),
    };
    if let Some(project) = &args.project {
        match std::fs::canonicalize(project) {
            Ok(project) if project.is_dir() => base.workspace = project,
            _ => return fail(format!("--project {}: not a directory", project.display())),
        }
    }
    let options = match args.claude.options(explicit_cwd || args.project.is_some()) {
        Ok(options) => options,
        Err(error) => return fail(format!("{error:#}")),
    };
    let token = std::env::var(TOKEN_VARIABLE).unwrap_or_default();
    let server = match ClaudeHookServer::bind(args.listen, token).await {
        Ok(server) => server,
        Err(error) => return fail(error.to_string()),
    };
    match server.local_addr() {
        Ok(address) => eprintln!(
            "janua hook serve: answering Claude Code's http hooks at http://{address}/claude (bearer token from {TOKEN_VARIABLE})"
        ),
        Err(error) => return fail(error.to_string()),
    }
    let stop = match super::shutdown_signal() {
        Ok(stop) => stop,
        Err(error) => return fail(error.to_string()),
    };
    tokio::select! {
        () = server.serve(base, options) => {}
        () = stop => {}
    }
    ExitCode::SUCCESS
}

/// The environment variable holding `janua hook serve`'s bearer token (and Claude Code's, for
/// the `Authorization` header it sends).
const TOKEN_VARIABLE: &str = janua::claude::HTTP_TOKEN_VARIABLE;

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

fn run_install(args: &InstallArgs, base: anyhow::Result<RuntimeConfig>) -> ExitCode {
    let _ = args.agent.claude;
    let project = project_dir(&base);
    if args.allow_managed_hooks_only && !matches!(args.scope, Scope::Managed) {
        eprintln!("janua hook install: --allow-managed-hooks-only needs --scope managed");
        return ExitCode::from(2);
    }
    let Some(path) = args.scope.claude().path(&project, &args.managed_dir) else {
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
    let handler = match args.http {
        Some(address) if !address.ip().is_loopback() => {
            eprintln!("janua hook install: {address} is not a loopback address");
            return ExitCode::from(2);
        }
        Some(address) => ClaudeHandler::Http(format!("http://{address}/claude")),
        None => ClaudeHandler::Command(command),
    };
    let managed_hooks_only = match (args.uninstall, args.allow_managed_hooks_only) {
        (true, _) if matches!(args.scope, Scope::Managed) => Some(false),
        (false, true) => Some(true),
        _ => None,
    };
    match install_claude_hook(&path, &handler, args.uninstall, managed_hooks_only) {
        Ok((change, _)) if change.unchanged() => {
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
        Ok((change, added)) => {
            let diff = similar::TextDiff::from_lines(&change.before, &change.after);
            let name = path.display().to_string();
            print!("{}", diff.unified_diff().header(&name, &name));
            if args.uninstall {
                println!("{}: janua's hook removed", path.display());
            } else {
                println!(
                    "{}: janua's hook installed for {}{}",
                    path.display(),
                    added.join(", "),
                    if managed_hooks_only == Some(true) {
                        "; allowManagedHooksOnly set"
                    } else {
                        ""
                    }
                );
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("janua hook install: {error}");
            ExitCode::from(2)
        }
    }
}
