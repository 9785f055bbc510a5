//! The runtime: assembles sandbox, registry, policy, hooks and session from a [`RuntimeConfig`] and
//! dispatches calls through the pipeline.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::Error;
use crate::hooks::{Hook, HookEvent, HookSet, Matcher};
use crate::permissions::{NoPrompter, Policy, Prompter, Rule, RuleSource, split_rule_list};
use crate::pipeline::{self, Dispatch, ToolUse};
use crate::registry::{Alias, Registry, RegistryConfig, ToolSelection, ToolSource, ToolSpec};
use crate::sandbox::Sandbox;
use crate::sandbox::grants::GrantContext;
use crate::sandbox::limits::Limits;
use crate::session::Session;
use crate::settings::Settings;

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
    /// `--settings` files.
    pub settings_files: Vec<PathBuf>,
    /// Operator limits (`--timeout`, ...); manifests can only lower them.
    pub limits: Limits,
    /// `--session`.
    pub session_id: Option<String>,
    /// `--state-dir`.
    pub state_dir: Option<PathBuf>,
    /// Compiled-component cache; `None` disables it.
    pub cache_dir: Option<PathBuf>,
}

impl RuntimeConfig {
    /// Defaults for `workspace`: every built-in tool, no plugins, no rules, default limits, the
    /// default session, and the compile cache in `WARDEN_CACHE_DIR` or the user's cache directory.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            tools: ToolSelection::Default,
            plugin_dirs: Vec::new(),
            aliases: Vec::new(),
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            settings_files: Vec::new(),
            limits: Limits::default(),
            session_id: None,
            state_dir: None,
            cache_dir: default_cache_dir(),
        }
    }
}

/// The default compile cache: `$WARDEN_CACHE_DIR`, else `$XDG_CACHE_HOME/warden/components`, else
/// `~/.cache/warden/components`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(dir) = non_empty("WARDEN_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = non_empty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("warden/components"));
    }
    non_empty("HOME").map(|home| PathBuf::from(home).join(".cache/warden/components"))
}

/// A tool as listed by `warden tools`.
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

/// A configured runtime.
pub struct Runtime {
    sandbox: Sandbox,
    registry: Registry,
    policy: Policy,
    hooks: HookSet,
    prompter: Arc<dyn Prompter>,
    session: Session,
    grant_context: GrantContext,
    home: Option<PathBuf>,
    warnings: Vec<String>,
}

impl Runtime {
    /// Loads everything `config` names. Any configuration problem (bad rule, alias chain, broken
    /// manifest, unknown `--tools` name) is an error here, before any call runs.
    pub async fn new(config: RuntimeConfig) -> Result<Self, Error> {
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
        let mut warnings = Vec::new();
        let mut policy = Policy::default();
        let mut aliases = config.aliases.clone();
        for path in &config.settings_files {
            let settings = Settings::load(path)?;
            let source = RuleSource::Settings(path.clone());
            add_rules(
                &mut policy,
                &settings.permissions.allow,
                &settings.permissions.deny,
                &source,
                &mut warnings,
            )?;
            for (from, to) in settings.aliases {
                aliases.push(format!("{from}={to}").parse()?);
            }
        }
        let allowed: Vec<String> = config
            .allowed_tools
            .iter()
            .flat_map(|v| split_rule_list(v))
            .collect();
        let denied: Vec<String> = config
            .disallowed_tools
            .iter()
            .flat_map(|v| split_rule_list(v))
            .collect();
        add_rules(
            &mut policy,
            &allowed,
            &denied,
            &RuleSource::CommandLine,
            &mut warnings,
        )?;

        let (session, session_warnings) = Session::open(
            config.state_dir.as_deref(),
            &workspace,
            config.session_id.as_deref(),
        )?;
        warnings.extend(session_warnings);

        let sandbox = Sandbox::new(config.cache_dir.as_deref())?;
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
                plugin_data_root,
                removed: &|name| policy.removes(name),
            },
        )
        .await?;
        let grant_context = GrantContext {
            workspace,
            plugin_data: None,
            tmp: None,
            session_results: Some(session.results_dir()),
        };
        Ok(Self {
            sandbox,
            registry,
            policy,
            hooks: HookSet::default(),
            prompter: Arc::new(NoPrompter),
            session,
            grant_context,
            home: std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(PathBuf::from),
            warnings,
        })
    }

    /// Registers an in-process hook for `event` on tools matching `matcher` (`*`, `Read`, `A|B`).
    pub fn add_hook(&mut self, event: HookEvent, matcher: &str, hook: Arc<dyn Hook>) {
        self.hooks.add(event, Matcher::new(matcher), hook);
    }

    /// Sets who answers `ask` decisions (default: nobody, so `ask` denies).
    pub fn set_prompter(&mut self, prompter: Arc<dyn Prompter>) {
        self.prompter = prompter;
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
        self.registry
            .tools()
            .map(|tool| ToolInfo {
                spec: tool.spec.clone(),
                source: tool.component.source.clone(),
                grants: tool.component.grants.describe(),
                digest: tool.component.loaded.digest.clone(),
            })
            .collect()
    }

    /// Dispatches one call through the whole pipeline.
    pub async fn dispatch(&self, call: ToolUse) -> Dispatch {
        self.dispatch_cancellable(call, Arc::default()).await
    }

    /// Dispatches one call; setting `cancel` interrupts it (result `cancelled`).
    pub async fn dispatch_cancellable(&self, call: ToolUse, cancel: Arc<AtomicBool>) -> Dispatch {
        let stages = pipeline::Stages {
            sandbox: &self.sandbox,
            registry: &self.registry,
            policy: &self.policy,
            hooks: &self.hooks,
            prompter: self.prompter.as_ref(),
            grant_context: &self.grant_context,
            session_id: self.session.id(),
            home: self.home.as_deref(),
        };
        let call_id = call.id.clone();
        let dispatch = pipeline::dispatch(&stages, call, cancel).await;
        self.session.record_call(&call_id);
        dispatch
    }
}

fn add_rules(
    policy: &mut Policy,
    allow: &[String],
    deny: &[String],
    source: &RuleSource,
    warnings: &mut Vec<String>,
) -> Result<(), Error> {
    for text in allow {
        let rule = Rule::parse(text, source.clone())?;
        if rule.has_broad_name_glob() {
            warnings.push(format!(
                "ignored allow rule {text:?} ({source}): allow rules may use '*' in the tool name only after a literal mcp__<server>__ prefix"
            ));
            continue;
        }
        policy.allow.push(rule);
    }
    for text in deny {
        policy.deny.push(Rule::parse(text, source.clone())?);
    }
    Ok(())
}
