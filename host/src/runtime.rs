//! The runtime: assembles sandbox, registry, policy, hooks and session from a [`RuntimeConfig`] and
//! dispatches calls through the pipeline.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

mod batch;
mod lifecycle;
mod runner;

pub use batch::{BatchOptions, DEFAULT_MAX_CONCURRENCY};
pub use lifecycle::{SessionEndReport, SessionStartReport};
pub use runner::CommandRunner;

use crate::Error;
use crate::hooks::{
    Controls, ExtensionsReport, Handler, Hook, HookEntry, HookSet, MonitorInfo, Monitors,
    SkippedExtension,
};
use crate::pipeline::{self, CheckReport, Dispatch, SubSession};
use crate::registry::{Alias, Backend, Registry, RegistryConfig, ToolSelection, ToolSource};
use crate::session::Session;
use crate::settings::{self, SettingsInput};
use janua_confine::{DEFAULT_OUTPUT_CAP, ProcessSandbox};
use janua_permissions::{
    Family, NoPrompter, PermissionMode, Policy, Prompter, Rule, RuleError, RuleKind, RuleSource,
};
use janua_sandbox::GrantContext;
use janua_sandbox::Limits;
use janua_sandbox::{FileAccess, Sandbox};
use janua_sandbox::{NetRuntime, NetSettings};
use janua_sandbox::{Shell, ShellConfig};
use janua_types::ToolSpec;
use janua_types::ToolUse;
use janua_types::{HookEvent, Matcher, MatcherError, OnError};

/// Everything that configures a runtime; the CLI fills it from flags.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// The workspace (`${WORKSPACE}`); canonicalized at start.
    pub workspace: PathBuf,
    /// `--tools`.
    pub tools: ToolSelection,
    /// `--plugins` directories, in order.
    pub plugin_dirs: Vec<PathBuf>,
    /// `--alias` entries.
    pub aliases: Vec<Alias>,
    /// `--allowedTools` values (each may hold several rules).
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools` values.
    pub disallowed_tools: Vec<String>,
    /// `--settings FILE` values.
    pub settings_files: Vec<PathBuf>,
    /// `--settings JSON` values.
    pub settings_json: Vec<String>,
    /// The user settings file (`None`: no user scope). The CLI uses
    /// [`user_settings_path`](crate::config::user_settings_path).
    pub user_settings: Option<PathBuf>,
    /// Read the project's `.janua/settings.json` and `.janua/settings.local.json`.
    pub project_settings: bool,
    /// `--permission-mode` (overrides every settings file's `defaultMode`).
    pub permission_mode: Option<PermissionMode>,
    /// `--trust-workspace`: use the project's allow rules, additional directories and mode.
    pub trust_workspace: bool,
    /// `--save-approvals`: "allow always" answers are also written to the local settings file.
    pub save_approvals: bool,
    /// Operator limits (`--timeout`, ...); manifests can only lower them.
    pub limits: Limits,
    /// `--session`.
    pub session_id: Option<String>,
    /// `--state-dir`.
    pub state_dir: Option<PathBuf>,
    /// Compiled-component cache; `None` disables it.
    pub cache_dir: Option<PathBuf>,
    /// Save a checkpoint before every change a write-class tool makes (`--no-checkpoints` turns
    /// it off).
    pub checkpoints: bool,
    /// How child processes are confined (`--unsandboxed-process` chooses
    /// [`ProcessSandbox::Unsandboxed`]).
    pub process_sandbox: ProcessSandbox,
    /// Whether the Bash commands the decision judges run inside janua's kernel view, which holds
    /// them to the Read and Edit deny rules it can enforce and to the protected paths (the
    /// decision then need not refuse what only the view could stop). `None` (the default): they
    /// do exactly when this runtime runs them itself under [`ProcessSandbox::Required`]. A hook
    /// in front of another agent's shell sets `Some(false)`, `--sandbox-bash` `Some(true)`.
    pub commands_confined: Option<bool>,
    /// Output bytes one command may print before it is killed (default 64 MiB).
    pub process_output_cap: u64,
    /// Outgoing HTTP: size cap, timeout, proxies and the hosts that may be private. Settings
    /// files' `allowPrivateNetworkHosts` add to `allow_private_hosts`.
    pub net: NetSettings,
    /// `--mcp-config` files: the operator's MCP servers (they need no approval).
    pub mcp_config_files: Vec<PathBuf>,
    /// `--approve-mcp` names: project `.mcp.json` servers approved for this run.
    pub approve_mcp: Vec<String>,
    /// Start the workspace's `.mcp.json` servers that are approved (default true).
    pub project_mcp: bool,
    /// How deeply delegated calls and sub-sessions may nest (default 3).
    pub max_delegation_depth: u32,
    /// Offer the Agent tool. Its runner is `agent_command` when given, else the one the embedder
    /// sets with [`Runtime::set_agent_runner`].
    pub agent_tool: bool,
    /// `--agent-runner`: the external command that runs sub-agents (implies `agent_tool`).
    pub agent_command: Option<Vec<String>>,
    /// Environment variables the agent runner receives by name (`--agent-runner-env`).
    pub agent_env: Vec<String>,
    /// Give the agent runner the host's network (`--agent-runner-network`).
    pub agent_network: bool,
    /// The Chromium the Browser tool starts; `None` looks for one at the first browser call
    /// ([`find_browser`](crate::sandbox::find_browser): `JANUA_BROWSER`, else Debian's `chromium`).
    pub browser: Option<PathBuf>,
    /// Claude Code's own settings files, read beside janua's (`janua hook claude`); `None` reads
    /// only janua's.
    pub claude_code: Option<settings::ClaudeCodeSettings>,
    /// Make the WebAssembly engine on another thread as the runtime starts (default true).
    /// Without it the engine is made when a component is first compiled or called, and a runtime
    /// that only decides (`janua hook claude`) never makes one.
    pub warm_engine: bool,
}

impl RuntimeConfig {
    /// Defaults for `workspace`: every built-in tool, no plugins, no rules, default limits, the
    /// default session, and the compile cache in `JANUA_CACHE_DIR` or the user's cache directory.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            tools: ToolSelection::Default,
            plugin_dirs: Vec::new(),
            aliases: Vec::new(),
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            settings_files: Vec::new(),
            settings_json: Vec::new(),
            user_settings: None,
            project_settings: true,
            permission_mode: None,
            trust_workspace: false,
            save_approvals: false,
            limits: Limits::default(),
            session_id: None,
            state_dir: None,
            cache_dir: default_cache_dir(),
            checkpoints: true,
            process_sandbox: ProcessSandbox::Required,
            commands_confined: None,
            process_output_cap: DEFAULT_OUTPUT_CAP,
            net: NetSettings::default(),
            mcp_config_files: Vec::new(),
            approve_mcp: Vec::new(),
            project_mcp: true,
            max_delegation_depth: crate::delegation::DEFAULT_MAX_DELEGATION_DEPTH,
            agent_tool: false,
            agent_command: None,
            agent_env: Vec::new(),
            agent_network: false,
            browser: None,
            claude_code: None,
            warm_engine: true,
        }
    }
}

/// The default compile cache: `$JANUA_CACHE_DIR`, else `$XDG_CACHE_HOME/janua/components`, else
/// `~/.cache/janua/components`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(dir) = non_empty("JANUA_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = non_empty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("janua/components"));
    }
    non_empty("HOME").map(|home| PathBuf::from(home).join(".cache/janua/components"))
}

/// What the compile cache under `cache_dir` holds (see [`default_cache_dir`]).
pub fn cache_info(cache_dir: &Path) -> Result<crate::sandbox::CacheInfo, Error> {
    Ok(Sandbox::engine_on_demand(Some(cache_dir)).cache_info()?)
}

/// Removes every compiled component and cached description under `cache_dir`; returns how many
/// files went. The next start compiles again.
pub fn clear_cache(cache_dir: &Path) -> Result<usize, Error> {
    Sandbox::engine_on_demand(Some(cache_dir))
        .cache()
        .clear()
        .map_err(|source| Error::Cache {
            path: cache_dir.to_path_buf(),
            source,
        })
}

/// A tool as listed by `janua tools`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ToolInfo {
    /// The spec.
    pub spec: ToolSpec,
    /// Where it comes from.
    pub source: ToolSource,
    /// Its declared grants, in words.
    pub grants: String,
    /// SHA-256 of its component.
    pub digest: String,
}

/// What [`Runtime::reload_plugins`] loaded.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PluginReload {
    /// Every tool name in the new registry, sorted.
    pub tools: Vec<String>,
    /// Why plugin directories were left out, and rule warnings against the new registry.
    pub warnings: Vec<String>,
}

/// The registry inputs a plugin reload reuses.
struct ReloadInputs {
    selection: ToolSelection,
    aliases: Vec<Alias>,
    limits: Limits,
    plugin_data_root: PathBuf,
    agent: bool,
    /// Where approvals are read again from: `--settings` files and JSON, user settings.
    settings_files: Vec<PathBuf>,
    settings_json: Vec<String>,
    user_settings: Option<PathBuf>,
}

/// A configured runtime.
pub struct Runtime {
    sandbox: Sandbox,
    /// Swapped whole by [`Runtime::reload_plugins`]; each call holds the registry it started with.
    registry: std::sync::RwLock<Arc<Registry>>,
    /// What reloading the plugin directories needs again.
    reload: ReloadInputs,
    policy: Policy,
    hooks: HookSet,
    prompter: Arc<dyn Prompter>,
    session: Arc<Session>,
    grant_context: GrantContext,
    home: Option<PathBuf>,
    warnings: Vec<String>,
    trusted: bool,
    /// Records "allow always" rules (the session's, and the local settings file's with
    /// `--save-approvals`).
    on_approval: Box<pipeline::OnApproval>,
    files: FileAccess,
    checkpoints: bool,
    input_defaults: crate::pipeline::InputDefaults,
    shell: Arc<Shell>,
    /// The session's headless browser, started by the first browser call.
    browser: Arc<janua_sandbox::BrowserService>,
    net: NetRuntime,
    monitors: Monitors,
    controls: Arc<Controls>,
    plugin_dirs: Vec<PathBuf>,
    output_limits: std::collections::BTreeMap<String, usize>,
    monitor_infos: Vec<MonitorInfo>,
    skipped_extensions: Vec<SkippedExtension>,
    hooks_disabled_by: Option<String>,
    /// True when the session existed before this runtime opened it (SessionStart `resume`).
    resumed: bool,
    started: std::sync::atomic::AtomicBool,
    ended: std::sync::atomic::AtomicBool,
    /// The MCP servers whose tools are registered; stopped when the session ends.
    mcp_servers: Vec<Arc<janua_mcp::Connection>>,
    /// The root session's scope (nothing narrowed).
    root_scope: Arc<crate::delegation::Scope>,
    max_delegation_depth: u32,
    agent_runner: Option<Arc<dyn pipeline::AgentRunner>>,
}

/// Starts the JSON Schema compiler's one-time set-up (the meta-schemas and what compiling a schema
/// first builds) on another worker while start-up reads settings and starts the engine; otherwise
/// the first tool schema compiled waits for it. Once per process, and nothing waits for it: the
/// registry's first compile either finds the work done or shares it (BENCHMARKS.md, issue 33
/// step 5: an MCP server's start-up 6.0–6.2 ms → 5.6–5.7 ms).
fn warm_schema_compiler() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    STARTED.call_once(|| {
        drop(runtime.spawn(async {
            let sample = serde_json::json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
            });
            jsonschema::validator_for(&sample).is_ok()
        }));
    });
}

impl Runtime {
    /// Loads everything `config` names. Any configuration problem (bad rule, alias chain, broken
    /// manifest, unknown `--tools` name) is an error here, before any call runs.
    pub async fn new(config: RuntimeConfig) -> Result<Self, Error> {
        warm_schema_compiler();
        let sandbox = Sandbox::engine_on_demand(config.cache_dir.as_deref());
        if config.warm_engine {
            sandbox.warm_in_background();
        }
        let workspace =
            std::fs::canonicalize(&config.workspace).map_err(|source| Error::Workspace {
                path: config.workspace.clone(),
                source,
            })?;
        if !workspace.is_dir() {
            return Err(Error::Workspace {
                path: config.workspace.clone(),
                source: std::io::Error::other("not a directory"),
            });
        }
        let home = std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from);
        let loaded = settings::load(
            &SettingsInput {
                user_file: config.user_settings.clone(),
                project: config.project_settings,
                files: config.settings_files.clone(),
                inline: config.settings_json.clone(),
                allowed_tools: config.allowed_tools.clone(),
                disallowed_tools: config.disallowed_tools.clone(),
                mode: config.permission_mode,
                trust_workspace: config.trust_workspace,
                claude_code: config.claude_code.clone(),
            },
            &workspace,
            home.as_deref(),
        )?;
        let mut warnings = loaded.warnings;
        if config.save_approvals && !loaded.trusted && config.project_settings {
            warnings.push(
                "--save-approvals writes to .janua/settings.local.json, whose allow rules apply only once this workspace is trusted (--trust-workspace or trustedWorkspaces)".to_owned(),
            );
        }
        let mut policy = loaded.policy;
        policy.commands_confined = config
            .commands_confined
            .unwrap_or(config.process_sandbox == ProcessSandbox::Required);
        let mut aliases = config.aliases.clone();
        for (from, to) in loaded.aliases {
            aliases.push(format!("{from}={to}").parse()?);
        }

        let hooks_disabled_by = loaded.hooks_disabled_by.clone();
        let output_limits = loaded.tool_output_chars.clone();
        let settings_hooks = loaded.hooks.clone();
        let (session, session_warnings) = Session::open(
            config.state_dir.as_deref(),
            &workspace,
            config.session_id.as_deref(),
        )?;
        let session = Arc::new(session);
        warnings.extend(session_warnings);
        for text in session.approved_rules() {
            match Rule::parse(
                &text,
                RuleKind::Allow,
                RuleSource::Session,
                policy.context(),
            ) {
                Ok(rule) => policy.add_session_rule(rule),
                Err(error) => warnings.push(format!("session rule ignored: {error}")),
            }
        }

        let mut approvals = loaded.mcp_approvals.clone();
        approvals.explicit.clone_from(&config.approve_mcp);
        approvals.trusted = loaded.trusted;
        let discovered = janua_mcp::discover(&janua_mcp::McpInput {
            operator_files: &config.mcp_config_files,
            project: config.project_mcp,
            approvals: &approvals,
            policies: &loaded.mcp_policies,
            workspace: &workspace,
            temp_root: session.dir().join("mcp"),
            sandbox: config.process_sandbox,
            view: janua_confine::ViewRules {
                roots: std::iter::once(workspace.clone())
                    .chain(policy.additional_dirs.iter().cloned())
                    .collect(),
                enforceable: policy.enforceable(),
            },
            tls: janua_sandbox::tls_config,
        })
        .await?;
        warnings.extend(discovered.warnings);
        let plugin_data_root = session
            .dir()
            .parent()
            .map_or_else(|| session.dir().to_path_buf(), Path::to_path_buf)
            // A session id cannot start with '.', so no session directory can be this one.
            .join(".plugin-data");
        let registry = Registry::build(
            &sandbox,
            RegistryConfig {
                selection: &config.tools,
                plugin_dirs: &config.plugin_dirs,
                aliases: &aliases,
                operator_limits: config.limits,
                plugin_data_root: plugin_data_root.clone(),
                removed: &|name| policy.removes(name),
                mcp_tools: discovered.tools,
                agent: config.agent_tool || config.agent_command.is_some(),
                approvals: &loaded.plugin_approvals,
            },
        )
        .await?;
        warnings.extend(registry.warnings().iter().cloned());
        check_rules(&policy, &registry, &mut warnings)?;
        let grant_context = GrantContext {
            workspace,
            plugin_data: None,
            tmp: None,
            session_results: Some(session.results_dir()),
            additional_dirs: policy.additional_dirs.clone(),
        };
        let files = FileAccess {
            hidden: policy.hidden_paths(),
            reads: Some(Arc::clone(session.reads())),
            write_scope: None,
        };
        let shell = Arc::new(Shell::new(ShellConfig {
            workspace: grant_context.workspace.clone(),
            additional_dirs: grant_context.additional_dirs.clone(),
            temp_dir: session.dir().join("tmp"),
            spool_dir: session.results_dir(),
            sandbox: config.process_sandbox,
            output_cap: config.process_output_cap,
            cwd: session.shell_cwd(),
            view: janua_confine::ViewRules {
                roots: std::iter::once(grant_context.workspace.clone())
                    .chain(grant_context.additional_dirs.iter().cloned())
                    .collect(),
                enforceable: policy.enforceable(),
            },
        }));
        let browser = Arc::new(janua_sandbox::BrowserService::new(
            janua_sandbox::BrowserConfig {
                session_dir: session.dir().to_path_buf(),
                file_roots: std::iter::once(grant_context.workspace.clone())
                    .chain(grant_context.additional_dirs.iter().cloned())
                    .collect(),
                enforceable: policy.enforceable(),
                sandbox: config.process_sandbox,
                executable: config.browser.clone(),
            },
        ));
        let mut input_defaults = crate::pipeline::InputDefaults::new();
        if !loaded.respect_gitignore {
            let mut glob = serde_json::Map::new();
            glob.insert("no_ignore".to_owned(), serde_json::Value::Bool(true));
            input_defaults.insert("Glob".to_owned(), glob);
        }
        let mut net = config.net.clone();
        // The embedder's proxy wins; otherwise the operator's `networkProxy` setting.
        if net.proxy == crate::sandbox::ProxySettings::default()
            && let Some(proxy) = loaded.network_proxy
        {
            net.proxy = proxy;
        }
        for host in loaded.allow_private_hosts {
            if !net.allow_private_hosts.contains(&host) {
                net.allow_private_hosts.push(host);
            }
        }
        let net = NetRuntime::new(net).map_err(Error::Net)?;
        let resumed = session.calls() > 0;
        let extensions = crate::hooks::load(&crate::hooks::LoadInput {
            sandbox: &sandbox,
            extensions: registry.extensions(),
            settings_hooks: &settings_hooks,
            disabled_by: hooks_disabled_by.as_deref(),
            rules: policy.context(),
            grant_context: &grant_context,
            files: &files,
            process_sandbox: config.process_sandbox,
        })?;
        warnings.extend(extensions.warnings);
        for skipped in &extensions.skipped {
            warnings.push(format!(
                "{} ({}) was not loaded: {}",
                skipped.what, skipped.source, skipped.reason
            ));
        }
        let controls = Arc::new(Controls::default());
        let monitors = Monitors::start(extensions.monitors, session.id(), &controls);
        let agent_runner = config.agent_command.as_ref().map(|command| {
            Arc::new(CommandRunner {
                command: command.clone(),
                temp_dir: session.dir().join("tmp"),
                env: config.agent_env.clone(),
                network: config.agent_network,
                sandbox: config.process_sandbox,
            }) as Arc<dyn pipeline::AgentRunner>
        });
        let on_approval = approval_recorder(
            Arc::clone(&session),
            Arc::clone(&shell),
            grant_context.workspace.clone(),
            config.save_approvals,
        );
        Ok(Self {
            root_scope: Arc::new(crate::delegation::Scope::root()),
            max_delegation_depth: config.max_delegation_depth,
            agent_runner,
            mcp_servers: discovered.connections,
            monitors,
            controls,
            plugin_dirs: config.plugin_dirs.clone(),
            output_limits,
            monitor_infos: extensions.monitor_infos,
            skipped_extensions: extensions.skipped,
            hooks_disabled_by,
            resumed,
            started: Default::default(),
            ended: Default::default(),
            net,
            input_defaults,
            shell,
            browser,
            files,
            checkpoints: config.checkpoints,
            sandbox,
            registry: std::sync::RwLock::new(Arc::new(registry)),
            reload: ReloadInputs {
                selection: config.tools.clone(),
                aliases,
                limits: config.limits,
                plugin_data_root,
                agent: config.agent_tool || config.agent_command.is_some(),
                settings_files: config.settings_files.clone(),
                settings_json: config.settings_json.clone(),
                user_settings: config.user_settings.clone(),
            },
            policy,
            hooks: extensions.hooks,
            prompter: Arc::new(NoPrompter),
            session,
            grant_context,
            home,
            warnings,
            trusted: loaded.trusted,
            on_approval,
        })
    }

    /// The registry new calls start with.
    pub(crate) fn registry(&self) -> Arc<Registry> {
        Arc::clone(
            &self
                .registry
                .read()
                .unwrap_or_else(|poison| poison.into_inner()),
        )
    }

    /// Loads the plugin directories again and makes their current tools the registry new calls
    /// start with; calls already running finish on the components they started with. Built-in,
    /// MCP and Agent tools, hooks and monitors stay as they are. Plugin approvals are read again
    /// from the operator's settings. On an error (a broken manifest or settings file, a
    /// component that does not describe) the registry is left unchanged.
    pub async fn reload_plugins(&self) -> Result<PluginReload, Error> {
        let current = self.registry();
        let inputs = &self.reload;
        let approvals = settings::plugin_approvals(
            &inputs.settings_files,
            &inputs.settings_json,
            inputs.user_settings.as_deref(),
        )?;
        let next = current
            .reload_plugins(
                &self.sandbox,
                RegistryConfig {
                    selection: &inputs.selection,
                    plugin_dirs: &self.plugin_dirs,
                    aliases: &inputs.aliases,
                    operator_limits: inputs.limits,
                    plugin_data_root: inputs.plugin_data_root.clone(),
                    removed: &|name| self.policy.removes(name),
                    mcp_tools: Vec::new(),
                    agent: inputs.agent,
                    approvals: &approvals,
                },
            )
            .await?;
        let mut warnings = next.warnings().to_vec();
        check_rules(&self.policy, &next, &mut warnings)?;
        let tools = next.tools().map(|tool| tool.spec.name.clone()).collect();
        *self
            .registry
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = Arc::new(next);
        Ok(PluginReload { tools, warnings })
    }

    /// Registers an in-process hook for `event` on tools matching `matcher` (Claude Code's
    /// matcher syntax: `*`, `Read`, `Read|Write`, or a regular expression). It runs after the
    /// configured hooks, fails closed on policy events, and has no timeout of its own.
    pub fn add_hook(
        &mut self,
        event: HookEvent,
        matcher: &str,
        hook: Arc<dyn Hook>,
    ) -> Result<(), MatcherError> {
        let matcher = Matcher::parse(matcher)?;
        self.hooks.push(HookEntry {
            name: hook.name().to_owned(),
            source: "library".to_owned(),
            events: vec![event],
            matcher,
            condition: None,
            timeout: crate::hooks::DEFAULT_HOOK_TIMEOUT,
            on_error: OnError::Deny,
            grants: "the embedding program's own".to_owned(),
            handler: Handler::InProcess(hook),
        });
        Ok(())
    }

    /// Every loaded hook and monitor, what each matcher selects among the registered tools, and
    /// every configured one that was not loaded, with the reason (`janua hooks`).
    pub fn extensions(&self) -> ExtensionsReport {
        let registry = self.registry();
        let tools: Vec<&str> = registry
            .tools()
            .map(|tool| tool.spec.name.as_str())
            .collect();
        ExtensionsReport {
            hooks: self
                .hooks
                .entries()
                .iter()
                .map(|entry| crate::hooks::describe(entry, &tools))
                .collect(),
            monitors: self.monitor_infos.clone(),
            skipped: self.skipped_extensions.clone(),
            disabled_by: self.hooks_disabled_by.clone(),
        }
    }

    /// Gives every lifecycle event (the monitors' events: `hook_started`, `tool_started`, ...)
    /// to `sink` as well, on the emitting thread; `janua run` writes hook events with it.
    pub fn set_event_sink(&self, sink: Arc<dyn Fn(&serde_json::Value) + Send + Sync>) {
        self.monitors.set_sink(Some(sink));
    }

    /// Gives every progress message a tool reports (`host.progress`) to `listener` with the
    /// call's `tool_use_id`, as it is reported, on the guest's thread; `janua mcp serve` turns
    /// them into progress notifications.
    pub fn set_progress_listener(&self, listener: crate::extensions::ProgressListener) {
        self.monitors.set_progress_listener(Some(listener));
    }

    /// Sets who runs the Agent tool's sub-agents (replacing `--agent-runner`'s command). The
    /// Agent tool is offered only when [`RuntimeConfig::agent_tool`] or `agent_command` is set.
    pub fn set_agent_runner(&mut self, runner: Arc<dyn pipeline::AgentRunner>) {
        self.agent_runner = Some(runner);
    }

    /// A sub-session of this session whose tools, rules and grants are `narrowing`'s subset of
    /// the session's; anything that would widen them is an error here.
    pub fn fork(
        &self,
        narrowing: crate::delegation::Narrowing,
    ) -> Result<SubSession<'_>, crate::delegation::ForkError> {
        SubSession::root(
            self.services(),
            Arc::clone(&self.root_scope),
            &self.registry,
        )
        .fork(narrowing)
    }

    /// Sets who answers `ask` decisions (default: nobody, so `ask` denies).
    pub fn set_prompter(&mut self, prompter: Arc<dyn Prompter>) {
        self.prompter = prompter;
    }

    /// The plugin directories in use, in load order.
    pub fn plugin_dirs(&self) -> &[PathBuf] {
        &self.plugin_dirs
    }

    /// Problems found while loading that did not stop it.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The session calls are recorded in.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The canonical workspace directory.
    pub fn workspace(&self) -> &Path {
        &self.grant_context.workspace
    }

    /// The effective registry, sorted by name.
    pub fn tools(&self) -> Vec<ToolInfo> {
        self.registry()
            .tools()
            .map(|tool| ToolInfo {
                spec: tool.spec.clone(),
                source: tool.source(),
                grants: match &tool.backend {
                    Backend::Component(component) => component.grants.describe(),
                    Backend::Mcp(mcp, _) => format!(
                        "runs in the MCP server {}'s process sandbox",
                        mcp.connection.name()
                    ),
                    Backend::Agent(_) => {
                        "none of its own: the agent runner calls tools through a narrowed sub-session"
                            .to_owned()
                    }
                },
                digest: tool
                    .component()
                    .map(|component| component.loaded.digest.clone())
                    .unwrap_or_default(),
            })
            .collect()
    }

    /// Compiles (or loads from the cache) every tool component not loaded yet, on every core, so
    /// that no first call waits for it; returns how many were loaded. Without it a component is
    /// loaded when first called.
    pub fn prewarm(&self) -> Result<usize, Error> {
        let mut seen = std::collections::HashSet::new();
        let registry = self.registry();
        let pending: Vec<&janua_sandbox::LoadedComponent> = registry
            .tools()
            .filter_map(|tool| tool.component())
            .map(|component| &component.loaded)
            .filter(|loaded| !loaded.is_linked() && seen.insert(loaded.digest.clone()))
            .collect();
        crate::registry::compile_all(&self.sandbox, &pending)?;
        Ok(pending.len())
    }

    /// The merged permission policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// True when the project's own allow rules, directories and mode are in use.
    pub fn workspace_trusted(&self) -> bool {
        self.trusted
    }

    /// Reports the decision for `call` without running the tool; PreToolUse hooks vote when
    /// `run_hooks`.
    pub async fn check(&self, call: ToolUse, run_hooks: bool) -> CheckReport {
        let services = self.services();
        let stages = pipeline::CheckStages {
            hooks: run_hooks,
            validate_input: true,
        };
        pipeline::check(&services, call, stages).await
    }

    /// Makes `dir` the session shell's directory, where the next command runs and relative paths
    /// in command lines are read from (an agent whose own shell moved, `janua hook claude`);
    /// false, and unchanged, when `dir` is outside the workspace and additional directories.
    pub fn set_shell_directory(&self, dir: &Path) -> bool {
        self.shell.move_to(dir)
    }

    /// Runs `program` with `args` confined exactly as a `Bash` command of this session, with this
    /// process's standard input, output and error (`janua sandbox`); `on_start` gets the
    /// command's process group. No rule is consulted: the operator chose the command.
    pub fn run_sandboxed(
        &self,
        program: &str,
        args: &[String],
        on_start: impl FnOnce(i32),
    ) -> Result<janua_sandbox::Foreground, janua_sandbox::ForegroundError> {
        self.shell.run_foreground(program, args, on_start)
    }

    /// Reports the decision for `call` from the stages that run neither a guest nor a hook
    /// (resolve, coercion, schema, absolute paths, the decision): what another agent's hook needs
    /// (`janua hook claude`), whose own tool validates its input. No WebAssembly engine is made.
    pub async fn decide_only(&self, call: ToolUse) -> CheckReport {
        let services = self.services();
        let stages = pipeline::CheckStages {
            hooks: false,
            validate_input: false,
        };
        pipeline::check(&services, call, stages).await
    }

    /// The session's services, as every call of the root session sees them.
    fn services(&self) -> pipeline::Services<'_> {
        pipeline::Services {
            sandbox: &self.sandbox,
            registry: self.registry(),
            policy: &self.policy,
            hooks: &self.hooks,
            prompter: self.prompter.as_ref(),
            grant_context: &self.grant_context,
            session_id: self.session.id(),
            home: self.home.as_deref(),
            on_approval: &*self.on_approval,
            files: &self.files,
            checkpoints: self.checkpoints.then(|| &**self.session.checkpoints()),
            input_defaults: &self.input_defaults,
            shell: &self.shell,
            browser: &self.browser,
            net: &self.net,
            monitors: &self.monitors,
            controls: &self.controls,
            session: &self.session,
            session_dir: self.session.dir(),
            output_limits: &self.output_limits,
            scope: &self.root_scope,
            max_delegation_depth: self.max_delegation_depth,
            agent_runner: self.agent_runner.as_deref(),
        }
    }

    /// Dispatches one call through the whole pipeline.
    pub async fn dispatch(&self, call: ToolUse) -> Dispatch {
        self.dispatch_cancellable(call, Arc::default()).await
    }

    /// Dispatches one call; setting `cancel` interrupts it (result `cancelled`).
    pub async fn dispatch_cancellable(&self, call: ToolUse, cancel: Arc<AtomicBool>) -> Dispatch {
        self.dispatch_in_batch(call, cancel, true).await
    }

    async fn dispatch_in_batch(
        &self,
        call: ToolUse,
        cancel: Arc<AtomicBool>,
        alone: bool,
    ) -> Dispatch {
        self.dispatch_interruptible(call, cancel, alone, None, false)
            .await
    }

    async fn dispatch_interruptible(
        &self,
        call: ToolUse,
        cancel: Arc<AtomicBool>,
        alone: bool,
        interrupt: Option<&AtomicBool>,
        beside_others: bool,
    ) -> Dispatch {
        let services = self.services();
        let placement = pipeline::Placement {
            allow_defer: alone,
            batch_interrupt: interrupt,
            beside_others,
        };
        let call_id = call.id.clone();
        let dispatch = pipeline::dispatch(&services, placement, call, cancel).await;
        self.session.record_call(&call_id);
        self.session.set_shell_cwd(&self.shell.cwd());
        dispatch
    }
}

/// Records "allow always" rules in the session and, with `--save-approvals`, in the local
/// settings file of `workspace`.
fn approval_recorder(
    session: Arc<Session>,
    shell: Arc<Shell>,
    workspace: PathBuf,
    save_approvals: bool,
) -> Box<pipeline::OnApproval> {
    Box::new(move |rules| {
        session.add_approved_rules(rules);
        if save_approvals {
            // Noted first: a command running meanwhile must not have janua's own file set
            // aside as a protected path it planted.
            shell.note_made_by_host(settings::local_settings_path(&workspace));
            if let Err(error) = settings::save_local_approvals(&workspace, rules) {
                tracing::warn!("{error}");
            }
        }
    })
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // Monitors get a moment to finish what is queued (an audit log should not lose its
        // tail); `end_session` is the orderly way.
        self.monitors.close(std::time::Duration::from_secs(2));
        self.browser.shutdown();
    }
}

/// Checks rules against the registry: a specifier for a tool that has no rule field is an error;
/// a deny or ask rule naming no known tool, and a parameter-style allow rule, are warnings.
fn check_rules(
    policy: &Policy,
    registry: &Registry,
    warnings: &mut Vec<String>,
) -> Result<(), Error> {
    for kind in [RuleKind::Deny, RuleKind::Ask, RuleKind::Allow] {
        for rule in policy.rules(kind) {
            let name = rule.tool();
            let literal = !name.contains('*') && !name.starts_with("mcp__");
            let tool = registry.tools().find(|tool| tool.spec.name == name);
            match tool {
                Some(tool) => {
                    let takes_specifier = tool.spec.rule_field.is_some()
                        || Family::of(name).is_some()
                        || matches!(name, "Bash" | "Monitor" | "WebFetch" | "Browser");
                    if kind == RuleKind::Allow
                        && let Some(name) = rule.param_name()
                        && tool.spec.input_schema["properties"].get(name).is_some()
                    {
                        warnings.push(format!(
                            "the allow rule {:?} ({}) matches the parameter {name:?}, which only deny and ask rules may do; it allows nothing",
                            rule.text(),
                            rule.source()
                        ));
                    }
                    let param_rule = rule.param_name().is_some_and(|name| {
                        tool.spec.input_schema["properties"].get(name).is_some()
                    });
                    if let Some(param) = rule.param_name()
                        && tool.spec.name == janua_types::AGENT_TOOL
                        && tool.spec.input_schema["properties"].get(param).is_none()
                    {
                        warnings.push(format!(
                            "the rule {:?} ({}) names the parameter {param:?}, which the Agent tool does not have: it matches nothing (it is not read as a sub-agent name)",
                            rule.text(),
                            rule.source()
                        ));
                    }
                    if let Some(name) = rule.param_name()
                        && tool.spec.rule_field.as_deref() == Some(name)
                    {
                        warnings.push(format!(
                            "the rule {:?} ({}) names {name:?}, {tool_name}'s own rule field: it is read as a pattern over that field",
                            rule.text(),
                            rule.source(),
                            tool_name = tool.spec.name,
                        ));
                    }
                    if !rule.is_bare() && !takes_specifier && !param_rule {
                        return Err(Error::Rule(RuleError {
                            rule: rule.text().to_owned(),
                            source_name: rule.source().to_string(),
                            position: None,
                            reason: format!(
                                "{name} declares no rule field, so its rules cannot have a specifier; use the bare name {name}"
                            ),
                        }));
                    }
                }
                None if literal && kind != RuleKind::Allow && Family::of(name).is_none() => {
                    warnings.push(format!(
                        "the {} rule {:?} ({}) names no known tool",
                        kind.as_str(),
                        rule.text(),
                        rule.source()
                    ));
                }
                None => {}
            }
        }
    }
    Ok(())
}
