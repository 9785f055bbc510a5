//! The effective tool registry: built-in set -> `--tools` selection -> plugin directories -> bare-name
//! deny rules. Canonical names are unique; aliases are applied one hop only.
//!
//! This module loads and describes components and compiles each tool's schema once. It does not run
//! calls or decide permissions.

mod agent;
mod aliases;
mod approval;
mod builtin;
mod load;
mod manifest;
mod selection;
mod watch;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use janua_types::{CapabilityClass, ToolSpec};
use serde::Serialize;

pub use aliases::{Alias, AliasError};
pub use approval::PluginApproval;
pub(crate) use approval::{approval_key, grant_sentences};
pub use load::DescribeError;
pub(crate) use manifest::Manifest;
pub use manifest::ManifestError;
pub use selection::ToolSelection;

pub(crate) use aliases::Aliases;
pub(crate) use builtin::{compile_all, example_extensions};
pub(crate) use watch::fingerprint;

use janua_sandbox::{
    CallSetup, ComponentKind, GuestRequest, GuestRun, LoadedComponent, Sandbox, SandboxError, Wasm,
};
use janua_sandbox::{DeclaredLimits, Limits};
use janua_sandbox::{GrantContext, Grants};

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolSource {
    /// Embedded in the janua binary.
    BuiltIn,
    /// Loaded from a plugin directory.
    Plugin {
        /// The plugin's name from its manifest.
        name: String,
        /// The plugin directory.
        dir: PathBuf,
    },
    /// Offered by an MCP server.
    Mcp {
        /// The server's configured name.
        server: String,
    },
}

impl std::fmt::Display for ToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolSource::BuiltIn => f.write_str("built-in"),
            ToolSource::Plugin { name, .. } => write!(f, "plugin {name}"),
            ToolSource::Mcp { server } => write!(f, "MCP server {server}"),
        }
    }
}

/// A loaded component with its declared grants and effective limits.
pub(crate) struct ComponentEntry {
    pub(crate) loaded: LoadedComponent,
    pub(crate) grants: Grants,
    pub(crate) limits: Limits,
    pub(crate) source: ToolSource,
    /// `${PLUGIN_DATA}` for this component's plugin.
    pub(crate) plugin_data: Option<PathBuf>,
    /// The manifest's `keep_escape_sequences`: output normalization leaves terminal escapes.
    pub(crate) keep_escapes: bool,
}

/// A hook or monitor component from a plugin manifest, compiled and linked.
pub(crate) struct Extension {
    /// The plugin's name and directory.
    pub(crate) plugin: String,
    pub(crate) dir: PathBuf,
    /// Its position among the manifest's `[[hooks]]` or `[[monitors]]`, from 0.
    pub(crate) index: usize,
    /// The manifest entry.
    pub(crate) entry: ExtensionEntry,
    pub(crate) loaded: Arc<LoadedComponent>,
    /// The operator's limits narrowed by the entry's (the timeout is the entry's own).
    pub(crate) limits: Limits,
    /// `${PLUGIN_DATA}` of the plugin.
    pub(crate) plugin_data: PathBuf,
    /// Names the component file in messages.
    pub(crate) label: String,
}

/// What kind of extension, with its manifest entry.
pub(crate) enum ExtensionEntry {
    Hook(manifest::HookComponent),
    Monitor(manifest::MonitorComponent),
}

impl ExtensionEntry {
    /// The fields hooks and monitors share.
    pub(crate) fn common(&self) -> manifest::ExtensionCommon<'_> {
        match self {
            ExtensionEntry::Hook(hook) => hook.common(),
            ExtensionEntry::Monitor(monitor) => monitor.common(),
        }
    }

    /// The world its component targets.
    fn kind(&self) -> ComponentKind {
        match self {
            ExtensionEntry::Hook(_) => ComponentKind::Hook,
            ExtensionEntry::Monitor(_) => ComponentKind::Monitor,
        }
    }
}

/// One tool in the registry.
pub(crate) struct RegisteredTool {
    pub(crate) spec: ToolSpec,
    /// Its input schema, compiled at registration for schemas from outside (plugins, MCP
    /// servers: a broken one is reported at load), on first use for the built-ins, whose schemas
    /// ship in the binary: a start-up that never calls a tool compiles nothing.
    validator: std::sync::OnceLock<Result<jsonschema::Validator, DescribeError>>,
    pub(crate) backend: Backend,
}

impl RegisteredTool {
    /// A tool whose validator was compiled at registration.
    pub(crate) fn new(spec: ToolSpec, validator: jsonschema::Validator, backend: Backend) -> Self {
        Self {
            spec,
            validator: std::sync::OnceLock::from(Ok(validator)),
            backend,
        }
    }

    /// A tool whose validator is compiled when first used.
    pub(crate) fn compiled_on_use(spec: ToolSpec, backend: Backend) -> Self {
        Self {
            spec,
            validator: std::sync::OnceLock::new(),
            backend,
        }
    }

    /// The compiled input schema, or why it does not compile.
    pub(crate) fn validator(&self) -> Result<&jsonschema::Validator, &DescribeError> {
        self.validator
            .get_or_init(|| {
                jsonschema::validator_for(&self.spec.input_schema).map_err(|error| {
                    DescribeError::InvalidSchema {
                        tool: self.spec.name.clone(),
                        reason: error.to_string(),
                    }
                })
            })
            .as_ref()
    }
}

/// What runs a tool's calls.
pub(crate) enum Backend {
    /// A WebAssembly component in a fresh sandbox.
    Component(Arc<ComponentEntry>),
    /// An MCP server, with the limits its calls get.
    Mcp(Arc<janua_mcp::McpTool>, Limits),
    /// The Agent tool: the embedder's agent runner, with the limits its runs get.
    Agent(Limits),
}

/// The grants of a tool that holds none (an MCP tool: its server has its own process sandbox).
static NO_GRANTS: std::sync::LazyLock<Grants> = std::sync::LazyLock::new(Grants::default);

impl RegisteredTool {
    /// The tool's component, unless an MCP server runs it.
    pub(crate) fn component(&self) -> Option<&Arc<ComponentEntry>> {
        match &self.backend {
            Backend::Component(component) => Some(component),
            Backend::Mcp(..) | Backend::Agent(_) => None,
        }
    }

    /// The component's declared grants (none for MCP tools).
    pub(crate) fn grants(&self) -> &Grants {
        match &self.backend {
            Backend::Component(component) => &component.grants,
            Backend::Mcp(..) | Backend::Agent(_) => &NO_GRANTS,
        }
    }

    /// The effective limits of a call.
    pub(crate) fn limits(&self) -> Limits {
        match &self.backend {
            Backend::Component(component) => component.limits,
            Backend::Mcp(_, limits) | Backend::Agent(limits) => *limits,
        }
    }

    /// Where the tool comes from.
    pub(crate) fn source(&self) -> ToolSource {
        match &self.backend {
            Backend::Component(component) => component.source.clone(),
            Backend::Mcp(tool, _) => ToolSource::Mcp {
                server: tool.connection.name().to_owned(),
            },
            Backend::Agent(_) => ToolSource::BuiltIn,
        }
    }

    /// The manifest's `keep_escape_sequences` (never for MCP tools).
    pub(crate) fn keep_escapes(&self) -> bool {
        self.component()
            .is_some_and(|component| component.keep_escapes)
    }

    /// The input field holding a path: the rule field of a read or write tool.
    pub(crate) fn path_field(&self) -> Option<&str> {
        self.spec.path_field()
    }

    /// The grant context for this tool: the runtime's, with the tool's own `${PLUGIN_DATA}`.
    /// (`${TMP}` is added by the call that creates it.)
    pub(crate) fn grant_context(&self, runtime: &GrantContext) -> GrantContext {
        GrantContext {
            plugin_data: self
                .component()
                .and_then(|component| component.plugin_data.clone()),
            ..runtime.clone()
        }
    }

    /// True when the tool may read the session's externalized results: a read-class tool that can
    /// already read the workspace.
    pub(crate) fn reads_session_results(&self) -> bool {
        self.spec.class == CapabilityClass::Read && self.grants().reads_workspace()
    }

    /// Runs `request` against this tool's component in a fresh sandbox set up by `setup`.
    pub(crate) async fn run_guest(
        &self,
        component: &ComponentEntry,
        sandbox: &Sandbox,
        setup: CallSetup<'_>,
        request: GuestRequest,
    ) -> GuestRun {
        sandbox.run(&component.loaded, setup, request).await
    }
}

/// Errors building the registry; each names the file or setting to fix.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// A manifest could not be read or parsed.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A component could not be loaded.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// A component's `describe` failed or returned an invalid tool.
    #[error("{label}: {problem}")]
    Describe {
        /// Which component.
        label: String,
        /// What went wrong.
        problem: DescribeError,
    },
    /// Two sources define the same canonical name.
    #[error(
        "tool {name} is defined twice: by {first} and by {second}; canonical names must be unique"
    )]
    Duplicate {
        /// The name.
        name: String,
        /// The first definition.
        first: String,
        /// The second definition.
        second: String,
    },
    /// `--tools` named a tool that is not built in.
    #[error("--tools names unknown tool(s) {unknown}; built-in tools are: {available}")]
    UnknownSelection {
        /// The unknown names.
        unknown: String,
        /// The built-in names.
        available: String,
    },
    /// An alias is malformed, chained, cyclic or shadows a tool.
    #[error(transparent)]
    Alias(#[from] AliasError),
}

/// Everything needed to assemble the registry.
pub(crate) struct RegistryConfig<'a> {
    pub(crate) selection: &'a ToolSelection,
    pub(crate) plugin_dirs: &'a [PathBuf],
    pub(crate) aliases: &'a [Alias],
    pub(crate) operator_limits: Limits,
    pub(crate) plugin_data_root: PathBuf,
    /// Bare-name deny: true when the tool must be removed.
    pub(crate) removed: &'a (dyn Fn(&str) -> bool + Sync),
    /// The tools of the started MCP servers.
    pub(crate) mcp_tools: Vec<(ToolSpec, janua_mcp::McpTool)>,
    /// Offer the Agent tool (an agent runner is configured).
    pub(crate) agent: bool,
    /// Recorded plugin approvals, by canonical directory.
    pub(crate) approvals: &'a BTreeMap<PathBuf, PluginApproval>,
}

/// The tools a registry holds before its plugins load, and the names they may not take.
struct Base {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    /// Every name taken so far: built-in tools (selected or not), the Agent tool, MCP tools.
    all_names: Vec<String>,
    /// The built-in names (the Agent tool's too), kept for reloads.
    builtin_names: Vec<String>,
}

/// Whether a registry keeps the hooks and monitors its plugins declare.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Extensions {
    /// A start: they are loaded for the session.
    Keep,
    /// A reload: the session keeps the ones it started with.
    Drop,
}

/// The effective registry.
pub(crate) struct Registry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    aliases: Aliases,
    extensions: Vec<Extension>,
    /// Why plugin directories were left out (an approval they outgrew).
    warnings: Vec<String>,
    /// Every built-in name, selected or not: no plugin may reuse one.
    builtin_names: Vec<String>,
}

impl Registry {
    /// Assembles the registry in the documented order: built-in tools (and the Agent tool), the
    /// MCP servers' tools, then the plugins' ([`Self::assemble`]).
    pub(crate) async fn build(
        sandbox: &Sandbox,
        mut config: RegistryConfig<'_>,
    ) -> Result<Self, RegistryError> {
        let mut all_names: Vec<String> = Vec::new();
        let mut tools: BTreeMap<String, Arc<RegisteredTool>> = BTreeMap::new();

        let builtins = builtin::load(sandbox, config.operator_limits).await?;
        let mut builtin_names: Vec<String> = builtins.iter().map(|t| t.spec.name.clone()).collect();
        if config.agent {
            builtin_names.push(janua_types::AGENT_TOOL.to_owned());
        }
        let selected = config.selection.choose(&builtin_names)?;
        if config.agent && selected.iter().any(|name| name == janua_types::AGENT_TOOL) {
            let spec = agent::agent_spec();
            let validator = jsonschema::validator_for(&spec.input_schema)
                .expect("the Agent tool's schema is valid");
            all_names.push(spec.name.clone());
            tools.insert(
                spec.name.clone(),
                Arc::new(RegisteredTool::new(
                    spec,
                    validator,
                    Backend::Agent(agent::agent_limits(config.operator_limits)),
                )),
            );
        }
        for tool in builtins {
            all_names.push(tool.spec.name.clone());
            if selected.contains(&tool.spec.name) {
                tools.insert(tool.spec.name.clone(), Arc::new(tool.register()));
            }
        }
        let builtin_names = all_names.clone();

        // Canonical MCP names are unique among themselves (`janua_mcp::discover`) and never a
        // built-in's; a plugin tool spelled like one is a clash `load_plugins` reports.
        for (spec, tool) in std::mem::take(&mut config.mcp_tools) {
            let validator = match jsonschema::validator_for(&spec.input_schema) {
                Ok(validator) => validator,
                Err(error) => {
                    tracing::warn!(
                        "MCP tool {} is skipped: its input schema is invalid: {error}",
                        spec.name
                    );
                    continue;
                }
            };
            let limits = Limits {
                timeout: tool.call_timeout,
                output_chars: tool.output_chars.clamp(
                    janua_sandbox::MIN_OUTPUT_CHARS,
                    janua_sandbox::MAX_OUTPUT_CHARS,
                ),
                ..config.operator_limits
            };
            all_names.push(spec.name.clone());
            tools.insert(
                spec.name.clone(),
                Arc::new(RegisteredTool::new(
                    spec,
                    validator,
                    Backend::Mcp(Arc::new(tool), limits),
                )),
            );
        }

        let base = Base {
            tools,
            all_names,
            builtin_names,
        };
        Self::assemble(sandbox, &config, base, Extensions::Keep).await
    }

    /// This registry with its plugin tools loaded afresh from `config.plugin_dirs`: built-in,
    /// MCP and Agent tools are kept as they are (their `Arc`s shared), and so are the hooks and
    /// monitors, which live for the session. Calls holding this registry finish on it.
    pub(crate) async fn reload_plugins(
        &self,
        sandbox: &Sandbox,
        config: RegistryConfig<'_>,
    ) -> Result<Self, RegistryError> {
        let tools: BTreeMap<String, Arc<RegisteredTool>> = self
            .tools
            .iter()
            .filter(|(_, tool)| !matches!(tool.source(), ToolSource::Plugin { .. }))
            .map(|(name, tool)| (name.clone(), Arc::clone(tool)))
            .collect();
        let mut all_names = self.builtin_names.clone();
        all_names.extend(
            tools
                .keys()
                .filter(|name| !self.builtin_names.contains(name))
                .cloned(),
        );
        let base = Base {
            tools,
            all_names,
            builtin_names: self.builtin_names.clone(),
        };
        Self::assemble(sandbox, &config, base, Extensions::Drop).await
    }

    /// What `build` and `reload_plugins` share: the plugins loaded on top of `base`, then the
    /// operator's bare-name removals, then the aliases checked against every name.
    async fn assemble(
        sandbox: &Sandbox,
        config: &RegistryConfig<'_>,
        base: Base,
        extensions_kept: Extensions,
    ) -> Result<Self, RegistryError> {
        let Base {
            mut tools,
            mut all_names,
            builtin_names,
        } = base;
        let mut extensions = Vec::new();
        let mut warnings = Vec::new();
        load_plugins(
            sandbox,
            config,
            &mut all_names,
            &mut tools,
            &mut extensions,
            &mut warnings,
        )
        .await?;
        tools.retain(|name, _| !(config.removed)(name));
        let aliases = Aliases::new(config.aliases, |name| {
            all_names.iter().any(|known| known == name)
        })?;
        if extensions_kept == Extensions::Drop {
            extensions.clear();
        }
        Ok(Self {
            tools,
            aliases,
            extensions,
            warnings,
            builtin_names,
        })
    }

    /// Why plugin directories were left out.
    pub(crate) fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The tool called `name`, if it is in the effective registry.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name)
    }

    /// The hook and monitor components of every plugin, in load order.
    pub(crate) fn extensions(&self) -> &[Extension] {
        &self.extensions
    }

    /// The configured aliases.
    pub(crate) fn aliases(&self) -> &Aliases {
        &self.aliases
    }

    /// Every tool, by name.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.tools.values()
    }

    /// Registered names closest to `name`, best first.
    pub(crate) fn close_matches(&self, name: &str) -> Vec<String> {
        let lower = name.to_lowercase();
        let mut scored: Vec<(f64, &String)> = self
            .tools
            .keys()
            .chain(self.aliases.names())
            .map(|candidate| {
                let score = strsim::jaro_winkler(&lower, &candidate.to_lowercase());
                (score, candidate)
            })
            .filter(|(score, _)| *score >= 0.8)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored
            .into_iter()
            .take(3)
            .map(|(_, name)| name.clone())
            .collect()
    }
}

/// The limits a component gets when its manifest declares none.
pub(crate) fn builtin_limits(operator: Limits) -> Limits {
    operator.narrowed_by(&DeclaredLimits::default())
}

/// Loads every plugin directory of `config` into `tools` and `extensions`; a directory that
/// outgrew its approval is left out with a warning.
async fn load_plugins(
    sandbox: &Sandbox,
    config: &RegistryConfig<'_>,
    all_names: &mut Vec<String>,
    tools: &mut BTreeMap<String, Arc<RegisteredTool>>,
    extensions: &mut Vec<Extension>,
    warnings: &mut Vec<String>,
) -> Result<(), RegistryError> {
    for dir in config.plugin_dirs {
        let manifest = manifest::Manifest::read(dir)?;
        if let Some(approved) = config.approvals.get(&approval_key(dir)) {
            let admitted = PluginApproval::of(dir, &manifest)
                .map_err(|problem| ManifestError::at(&manifest.path, problem.to_string()))
                .map(|current| approved.admits(&current))?;
            if let Err(difference) = admitted {
                warnings.push(format!(
                    "plugin {} ({}) is not loaded: {difference}",
                    manifest.plugin.name,
                    dir.display()
                ));
                continue;
            }
        }
        let read_component = |component: &std::path::Path| {
            let wasm_path = dir.join(component);
            std::fs::read(&wasm_path)
                .map(|wasm| (wasm, wasm_path.display().to_string()))
                .map_err(|error| {
                    ManifestError::at(
                        &manifest.path,
                        format!("cannot read component {}: {error}", wasm_path.display()),
                    )
                })
        };
        let entries = manifest
            .hooks
            .iter()
            .enumerate()
            .map(|(index, hook)| (index, ExtensionEntry::Hook(hook.clone())))
            .chain(
                manifest
                    .monitors
                    .iter()
                    .enumerate()
                    .map(|(index, monitor)| (index, ExtensionEntry::Monitor(monitor.clone()))),
            );
        for (index, entry) in entries {
            let common = entry.common();
            let (wasm, label) = read_component(common.component)?;
            let kind = entry.kind();
            let declared = common.limits;
            extensions.push(Extension {
                plugin: manifest.plugin.name.clone(),
                dir: dir.clone(),
                index,
                loaded: Arc::new(sandbox.load(&wasm, &label, kind)?),
                limits: config.operator_limits.narrowed_by(declared),
                plugin_data: config.plugin_data_root.join(&manifest.plugin.name),
                label,
                entry,
            });
        }
        for entry in &manifest.tools {
            let wasm_path = dir.join(&entry.component);
            let wasm = std::fs::read(&wasm_path).map_err(|error| {
                ManifestError::at(
                    &manifest.path,
                    format!("cannot read component {}: {error}", wasm_path.display()),
                )
            })?;
            let loaded = sandbox.lazy(
                Wasm::Read(wasm),
                None,
                &wasm_path.display().to_string(),
                ComponentKind::Tool,
            );
            let cached = load::cached_specs(sandbox, &loaded.digest);
            if cached.is_none() {
                builtin::compile_all(sandbox, &[&loaded])?;
            }
            let component = ComponentEntry {
                loaded,
                grants: entry.grants.clone(),
                limits: config.operator_limits.narrowed_by(&entry.limits),
                source: ToolSource::Plugin {
                    name: manifest.plugin.name.clone(),
                    dir: dir.clone(),
                },
                plugin_data: Some(config.plugin_data_root.join(&manifest.plugin.name)),
                keep_escapes: entry.keep_escape_sequences,
            };
            let label = wasm_path.display().to_string();
            for tool in load::describe(sandbox, Arc::new(component), &label, cached).await? {
                let name = tool.spec.name.clone();
                if let Some(existing) = tools.get(&name) {
                    return Err(RegistryError::Duplicate {
                        name,
                        first: existing.source().to_string(),
                        second: tool.source().to_string(),
                    });
                }
                if all_names.contains(&name) {
                    return Err(RegistryError::Duplicate {
                        name,
                        first: "built-in".to_owned(),
                        second: tool.source().to_string(),
                    });
                }
                all_names.push(name.clone());
                tools.insert(name, Arc::new(tool));
            }
        }
    }
    Ok(())
}
