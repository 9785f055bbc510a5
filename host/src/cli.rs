//! The `janua` command line: flags, subcommands, and the mapping to exit codes.
//!
//! Exit codes: 0 success, 1 an error result, 2 a usage or configuration error.

mod audit;
mod cache;
mod call;
mod check;
mod doctor;
mod example;
mod hook;
mod hooks;
mod mcp;
mod plugin;
mod rewind;
mod run;
mod sandbox;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand, ValueEnum};

use janua::{Limits, PermissionMode, Runtime, RuntimeConfig};

use janua::plugins::{Alias, ToolSelection};

use janua::sandbox::ProcessSandbox;

use janua::rules::TtyPrompter;

const AFTER_HELP: &str = "\
Exit codes: 0 success; 1 an error result (still printed as a tool_result); 2 a usage or
configuration error (bad rule, alias chain, broken manifest, unknown --tools name).

Examples:
  janua call Read --input '{\"file_path\":\"README.md\",\"limit\":5}'
  echo '{\"file_path\":\"notes.md\"}' | janua call Read --input -
  janua --plugins ./my-plugin --allowedTools MyTool call MyTool --input '{}'
  janua tools --format anthropic
  janua hooks --settings .claude/settings.json
  janua example hook-bash-guard ./guard && janua --plugins ./guard call Bash --input '{\"command\":\"rm -rf ~\"}'
  janua audit verify ~/.local/state/janua/<digest>/.plugin-data/audit/audit.jsonl
  janua check Read --input '{\"file_path\":\".env\"}' --disallowedTools 'Read(.env)'
  janua --permission-mode acceptEdits --settings .claude/settings.json call Echo --input '{}'";

/// janua runs an LLM agent's tool calls as sandboxed WebAssembly components.
///
/// Every call goes through one pipeline: alias hop, registry check, input coercion, JSON Schema,
/// the tool's own validation, PreToolUse hooks, the central permission decision, the call in a
/// fresh sandbox holding only the tool's grants, post-use hooks, and a bounded tool_result block.
#[derive(Debug, Parser)]
#[command(name = "janua", version, propagate_version = true, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one tool call and print its tool_result block as JSON.
    Call(call::CallArgs),
    /// Serve a session over newline-delimited JSON on stdin and stdout (docs/PROTOCOL.md).
    Run(run::RunArgs),
    /// Serve the tools to MCP clients (`janua mcp serve`, docs/MCP.md).
    Mcp(mcp::McpArgs),
    /// List the effective tool registry with each tool's input schema.
    Tools(tools::ToolsArgs),
    /// Report the permission decision for a call without running the tool.
    Check(check::CheckArgs),
    /// List the session's file checkpoints, or restore the workspace to one of them.
    Rewind(rewind::RewindArgs),
    /// Report what this machine supports for sandboxing child processes.
    Doctor(doctor::DoctorArgs),
    /// Show, clear or fill the cache of compiled components.
    Cache(cache::CacheArgs),
    /// List loaded hooks and monitors, what each matcher selects, and why any was not loaded.
    Hooks(hooks::HooksArgs),
    /// Verify the hash chain of an audit monitor's log.
    Audit(audit::AuditArgs),
    /// List the shipped example hooks and monitors, or write one as a plugin directory.
    Example(example::ExampleArgs),
    /// Create, build, check and approve plugins (docs/AUTHORING.md).
    Plugin(plugin::PluginArgs),
    /// Decide for another agent: `janua hook claude` answers Claude Code's hook events (docs/HOSTS.md).
    Hook(hook::HookArgs),
    /// Run any command under the process sandbox a Bash command gets: `janua sandbox -- CMD ARGS`.
    Sandbox(sandbox::SandboxArgs),
}

/// Flags accepted before or after the subcommand.
#[derive(Debug, Args)]
struct GlobalArgs {
    /// Workspace directory (${WORKSPACE}); default: the current directory.
    #[arg(long, global = true, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Built-in tools to register: "" for none, "default", or a comma list such as "Read".
    #[arg(long, global = true, value_name = "LIST")]
    tools: Option<String>,
    /// A plugin directory holding janua.toml and its components (repeatable).
    #[arg(long = "plugins", global = true, value_name = "DIR")]
    plugins: Vec<PathBuf>,
    /// Alias a tool name, applied one hop: --alias Cat=Read (repeatable).
    #[arg(long = "alias", global = true, value_name = "OLD=NEW")]
    aliases: Vec<String>,
    /// Allow rules, comma or space separated: "Read" or "Read(*.md),Echo" (repeatable).
    #[arg(
        long = "allowedTools",
        visible_alias = "allowed-tools",
        global = true,
        value_name = "RULES"
    )]
    allowed_tools: Vec<String>,
    /// Deny rules; a bare tool name removes the tool from the registry (repeatable).
    #[arg(
        long = "disallowedTools",
        visible_alias = "disallowed-tools",
        global = true,
        value_name = "RULES"
    )]
    disallowed_tools: Vec<String>,
    /// Settings in Claude Code's schema: a file path or inline JSON (repeatable). An existing
    /// .claude/settings.json is accepted unchanged.
    #[arg(long = "settings", global = true, value_name = "FILE-OR-JSON")]
    settings: Vec<String>,
    /// Permission mode: default, acceptEdits, plan, dontAsk or bypassPermissions.
    #[arg(long = "permission-mode", global = true, value_name = "MODE", value_parser = parse_mode)]
    permission_mode: Option<PermissionMode>,
    /// Use this project's own allow rules, additional directories and mode (.janua/settings*.json).
    #[arg(long = "trust-workspace", global = true)]
    trust_workspace: bool,
    /// Write "allow always" answers to .janua/settings.local.json as well as the session.
    #[arg(long = "save-approvals", global = true)]
    save_approvals: bool,
    /// Do not read the user settings file (~/.config/janua/settings.json).
    #[arg(long = "no-user-settings", global = true)]
    no_user_settings: bool,
    /// Wall-clock limit per call: seconds, or a number with ms, s or m (default 30s).
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration)]
    timeout: Option<Duration>,
    /// Memory limit per call in MiB (default 256, at most 2048).
    #[arg(long = "memory-mib", global = true, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=2048))]
    memory_mib: Option<u64>,
    /// Session id; consecutive calls in a workspace share the "default" session.
    #[arg(long, global = true, value_name = "ID")]
    session: Option<String>,
    /// Root of session state (default: $XDG_STATE_HOME/janua).
    #[arg(long = "state-dir", global = true, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Compiled-component cache (default: $JANUA_CACHE_DIR or the user cache directory).
    #[arg(
        long = "cache-dir",
        global = true,
        value_name = "DIR",
        conflicts_with = "no_cache"
    )]
    cache_dir: Option<PathBuf>,
    /// Do not cache compiled components on disk.
    #[arg(long = "no-cache", global = true)]
    no_cache: bool,
    /// Do not save a checkpoint before each file change by Write, Edit or NotebookEdit.
    #[arg(long = "no-checkpoints", global = true)]
    no_checkpoints: bool,
    /// Run child processes (Bash) without Landlock and network namespaces when the kernel lacks
    /// them. The environment is still scrubbed, limits and process-group kill still apply.
    #[arg(long = "unsandboxed-process", global = true)]
    unsandboxed_process: bool,
    /// Output one command may print before it is killed, in MiB (default 64); all of it is kept
    /// in the session's tool-results/ for Read.
    #[arg(long = "max-process-output-mib", global = true, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=65536))]
    max_process_output_mib: Option<u64>,
    /// An MCP configuration file in Claude Code's .mcp.json format; its servers are yours and
    /// start without approval (repeatable).
    #[arg(long = "mcp-config", global = true, value_name = "FILE")]
    mcp_config: Vec<PathBuf>,
    /// Approve the project .mcp.json server NAME for this run (repeatable).
    #[arg(long = "approve-mcp", global = true, value_name = "NAME")]
    approve_mcp: Vec<String>,
    /// Offer the Agent tool, run by COMMAND (split into words like a POSIX shell would): it is
    /// started per Agent call under the process sandbox and speaks docs/DELEGATION.md.
    #[arg(long = "agent-runner", global = true, value_name = "COMMAND")]
    agent_runner: Option<String>,
    /// An environment variable the agent runner receives by name (repeatable; e.g. an API key).
    #[arg(long = "agent-runner-env", global = true, value_name = "NAME")]
    agent_runner_env: Vec<String>,
    /// Give the agent runner the host's network (it usually calls a model API).
    #[arg(long = "agent-runner-network", global = true)]
    agent_runner_network: bool,
    /// How deeply delegated calls and sub-agents may nest (default 3).
    #[arg(long = "max-delegation-depth", global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=16))]
    max_delegation_depth: Option<u32>,
    /// Log verbosity for janua's own diagnostics on stderr.
    #[arg(long = "log", global = true, value_enum, default_value_t = LogLevel::Warn)]
    log: LogLevel,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl Cli {
    /// Runs the command and returns the process exit code; `Err` is a usage or configuration
    /// problem (exit code 2).
    pub(crate) fn run(self) -> anyhow::Result<ExitCode> {
        init_logging(self.global.log);
        // Guests run where their calls run, so async workers only sequence stages. The MCP server
        // takes one: most calls run on its input threads, and when every call crossed to a
        // worker a second one added ≈1.8 context switches and ≈15% CPU per call (BENCHMARKS.md,
        // MCP).
        let workers = if matches!(self.command, Command::Mcp(_)) {
            1
        } else {
            2
        };
        // A hook decides one call and exits: threads it would start cost more than they save.
        let mut builder = if matches!(self.command, Command::Hook(_)) {
            tokio::runtime::Builder::new_current_thread()
        } else {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(workers);
            builder
        };
        let runtime = builder
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let code = runtime.block_on(async move {
            match self.command {
                Command::Call(args) => {
                    let input = args.read_input()?;
                    let runtime = self.global.runtime().await?;
                    Ok(call::run(&runtime, args, input).await)
                }
                Command::Run(args) => {
                    let runtime = self.global.stream_runtime().await?;
                    run::run(runtime, &args).await
                }
                Command::Mcp(args) => {
                    // Warnings go to stderr from the server; stdout is the protocol's.
                    let runtime = self.global.stream_runtime().await?;
                    mcp::run(runtime, &args).await
                }
                Command::Tools(args) => {
                    let runtime = self.global.runtime().await?;
                    tools::run(&runtime, &args)
                }
                Command::Check(args) => {
                    let input = args.read_input()?;
                    let mut config = self.global.config()?;
                    config.commands_confined = Some(args.confined());
                    let runtime = self.global.runtime_from(config).await?;
                    Ok(check::run(&runtime, args, input).await)
                }
                Command::Doctor(args) => Ok(doctor::run(&args)),
                Command::Cache(args) if args.needs_runtime() => {
                    let runtime = self.global.runtime().await?;
                    cache::prewarm(&runtime, &args)
                }
                Command::Cache(args) => {
                    let config = self.global.config()?;
                    cache::run_offline(&args, config.cache_dir.as_deref())
                }
                Command::Hooks(args) => {
                    let runtime = self.global.runtime().await?;
                    hooks::run(&runtime, &args)
                }
                Command::Audit(args) => Ok(audit::run(&args)),
                Command::Sandbox(args) => Ok(sandbox::run(args, self.global.config()).await),
                Command::Hook(args) => {
                    Ok(hook::run(args, self.global.config(), self.global.cwd.is_some()).await)
                }
                Command::Example(args) => example::run(&args),
                Command::Plugin(args) => plugin::run(&args, || self.global.config()).await,
                Command::Rewind(args) => {
                    let workspace = self.global.workspace()?;
                    rewind::run(
                        &args,
                        &workspace,
                        self.global.state_dir.as_deref(),
                        self.global.session.as_deref(),
                    )
                }
            }
        });
        // A guest abandoned inside a blocking host call leaves a worker thread behind; do not wait
        // for it to exit.
        runtime.shutdown_timeout(Duration::from_millis(100));
        code
    }
}

impl GlobalArgs {
    fn workspace(&self) -> anyhow::Result<PathBuf> {
        match &self.cwd {
            Some(dir) => Ok(dir.clone()),
            None => std::env::current_dir().context("cannot read the current directory"),
        }
    }

    /// A runtime for `janua run`: warnings go into the init line, and permission questions
    /// go over the stream instead of to a terminal.
    async fn stream_runtime(&self) -> anyhow::Result<Runtime> {
        Ok(Runtime::new(self.config()?).await?)
    }

    async fn runtime(&self) -> anyhow::Result<Runtime> {
        self.runtime_from(self.config()?).await
    }

    /// [`GlobalArgs::runtime`] from a configuration the command adjusted.
    async fn runtime_from(&self, config: RuntimeConfig) -> anyhow::Result<Runtime> {
        let mut runtime = Runtime::new(config).await?;
        for warning in runtime.warnings() {
            eprintln!("janua: warning: {warning}");
        }
        if let Some(prompter) = TtyPrompter::from_terminal() {
            runtime.set_prompter(std::sync::Arc::new(prompter));
        }
        Ok(runtime)
    }

    fn config(&self) -> anyhow::Result<RuntimeConfig> {
        let mut config = RuntimeConfig::new(self.workspace()?);
        config.checkpoints = !self.no_checkpoints;
        if self.unsandboxed_process {
            config.process_sandbox = ProcessSandbox::Unsandboxed;
        }
        if let Some(mib) = self.max_process_output_mib {
            config.process_output_cap = mib << 20;
        }
        if let Some(tools) = &self.tools {
            config.tools = tools.parse::<ToolSelection>().unwrap_or_default();
        }
        config.plugin_dirs.clone_from(&self.plugins);
        config.aliases = self
            .aliases
            .iter()
            .map(|text| text.parse::<Alias>())
            .collect::<Result<_, _>>()?;
        config.allowed_tools.clone_from(&self.allowed_tools);
        config.disallowed_tools.clone_from(&self.disallowed_tools);
        for value in &self.settings {
            if value.trim_start().starts_with('{') {
                config.settings_json.push(value.clone());
            } else {
                config.settings_files.push(PathBuf::from(value));
            }
        }
        if !self.no_user_settings {
            config.user_settings = janua::config::user_settings_path();
        }
        config.permission_mode = self.permission_mode;
        config.trust_workspace = self.trust_workspace;
        config.save_approvals = self.save_approvals;
        let mut limits = Limits::default();
        if let Some(timeout) = self.timeout {
            limits.timeout = timeout;
        }
        if let Some(mib) = self.memory_mib {
            limits.memory_bytes = mib << 20;
        }
        config.limits = limits;
        config.mcp_config_files.clone_from(&self.mcp_config);
        config.approve_mcp.clone_from(&self.approve_mcp);
        if let Some(command) = &self.agent_runner {
            let words = shlex::split(command)
                .filter(|words| !words.is_empty())
                .ok_or_else(|| anyhow::anyhow!("--agent-runner {command:?}: not a command line"))?;
            config.agent_command = Some(words);
        }
        config.agent_env.clone_from(&self.agent_runner_env);
        config.agent_network = self.agent_runner_network;
        if let Some(depth) = self.max_delegation_depth {
            config.max_delegation_depth = depth;
        }
        config.session_id.clone_from(&self.session);
        config.state_dir.clone_from(&self.state_dir);
        if self.no_cache {
            config.cache_dir = None;
        } else if let Some(dir) = &self.cache_dir {
            config.cache_dir = Some(dir.clone());
        }
        Ok(config)
    }
}

/// Resolves at SIGINT or SIGTERM. The handlers are installed now, so a signal that arrives before
/// anyone awaits it still counts.
fn shutdown_signal()
-> anyhow::Result<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(Box::pin(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    }))
}

fn parse_mode(text: &str) -> Result<PermissionMode, janua::rules::UnknownMode> {
    text.parse()
}

/// Parses `30`, `1.5`, `500ms`, `30s` or `2m`.
fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    let (number, scale) = if let Some(ms) = text.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(s) = text.strip_suffix('s') {
        (s, 1.0)
    } else if let Some(m) = text.strip_suffix('m') {
        (m, 60.0)
    } else {
        (text, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("{text:?} is not a duration like 30, 500ms, 30s or 2m"))?;
    let seconds = value * scale;
    if !(seconds > 0.0 && seconds <= 24.0 * 3600.0) {
        anyhow::bail!("{text:?} must be more than 0 and at most 24 hours");
    }
    Ok(Duration::from_secs_f64(seconds))
}

fn init_logging(level: LogLevel) {
    let filter = match level {
        LogLevel::Error => "error",
        LogLevel::Warn => "warn",
        LogLevel::Info => "info",
        LogLevel::Debug => "debug",
        LogLevel::Trace => "trace",
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        // A log line that cannot be written (standard error closed: a server whose terminal went
        // away) is dropped; reporting it would print to that same stream and panic, and a
        // panicking `hook serve` answers nothing, which Claude Code reads as no decision.
        .log_internal_errors(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_table() {
        let cases = [
            ("30", Some(30_000)),
            ("1.5", Some(1_500)),
            ("500ms", Some(500)),
            ("2s", Some(2_000)),
            ("2m", Some(120_000)),
            ("0", None),
            ("-1", None),
            ("abc", None),
            ("99999999", None),
        ];
        for (text, expected) in cases {
            let got = parse_duration(text).ok().map(|d| d.as_millis() as u64);
            assert_eq!(got, expected, "{text}");
        }
    }

    #[test]
    fn global_flags_work_before_and_after_the_subcommand() {
        let before = Cli::try_parse_from(["janua", "--cwd", "x", "call", "Read"]).unwrap();
        let after = Cli::try_parse_from(["janua", "call", "Read", "--cwd", "x"]).unwrap();
        assert_eq!(before.global.cwd, after.global.cwd);
        assert_eq!(before.global.cwd, Some(PathBuf::from("x")));
    }
}
