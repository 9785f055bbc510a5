//! Loads every settings scope and merges it into one policy.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::SettingsError;
use super::file::{RuleEntry, Settings};
use crate::Error;
use janua_permissions::{
    PermissionMode, Policy, Rule, RuleContext, RuleError, RuleKind, RuleSource, example_matches,
    split_rule_list,
};

/// What the operator configured, scope by scope.
#[derive(Debug, Clone, Default)]
pub struct SettingsInput {
    /// The user settings file (`None`: no user scope).
    pub user_file: Option<PathBuf>,
    /// Read the project's `.janua/settings.json` and `.janua/settings.local.json`.
    pub project: bool,
    /// `--settings FILE` values.
    pub files: Vec<PathBuf>,
    /// `--settings JSON` values.
    pub inline: Vec<String>,
    /// `--allowedTools` values (each may hold several rules).
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools` values.
    pub disallowed_tools: Vec<String>,
    /// `--permission-mode`.
    pub mode: Option<PermissionMode>,
    /// `--trust-workspace`.
    pub trust_workspace: bool,
    /// Claude Code's own settings files, read beside janua's (`janua hook claude`).
    pub claude_code: Option<ClaudeCodeSettings>,
}

/// Claude Code's settings files for one project, read beside janua's own when janua decides for
/// Claude Code (`janua hook claude`). Their rules are Claude Code's too, so a rule janua cannot
/// read is a warning there (Claude Code still applies it), never an error that would block every
/// call.
#[derive(Debug, Clone, Default)]
pub struct ClaudeCodeSettings {
    /// The managed policy file (`/etc/claude-code/managed-settings.json` on Linux), with the
    /// drop-ins in `managed-settings.d/` beside it ([`claude_managed_files`]); highest
    /// precedence.
    pub managed: Option<PathBuf>,
    /// The user file ([`claude_user_settings_path`]).
    pub user: Option<PathBuf>,
    /// Read the project's `.claude/settings.json` and `.claude/settings.local.json`.
    pub project: bool,
    /// Use those project files' allow rules, additional directories and mode without janua's
    /// workspace trust: Claude Code only runs hooks once its own trust dialog was accepted.
    pub trust_project: bool,
}

impl ClaudeCodeSettings {
    /// The files Claude Code reads on this machine for a project: the managed file and its
    /// drop-ins, the user's file (honouring `$CLAUDE_CONFIG_DIR`) and the project's, the
    /// project's allow rules used without janua's workspace trust when `trust_project`.
    pub fn of_this_machine(trust_project: bool) -> Self {
        Self {
            managed: Some(PathBuf::from(CLAUDE_MANAGED_SETTINGS)),
            user: claude_user_settings_path(),
            project: true,
            trust_project,
        }
    }
}

/// Claude Code's managed settings file on Linux.
pub const CLAUDE_MANAGED_SETTINGS: &str = "/etc/claude-code/managed-settings.json";

/// Claude Code's managed files for the base file `managed`, highest precedence first: the
/// drop-ins `managed-settings.d/*.json` beside it (Claude Code merges them over the base in name
/// order, so the last name wins; hidden files are skipped), then the base file itself. Files
/// that do not exist are left out.
pub fn claude_managed_files(managed: &Path) -> Vec<PathBuf> {
    let mut drop_ins: Vec<PathBuf> = managed
        .parent()
        .map(|dir| dir.join("managed-settings.d"))
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
                && path
                    .file_name()
                    .is_some_and(|name| !name.to_string_lossy().starts_with('.'))
                && path.is_file()
        })
        .collect();
    drop_ins.sort();
    drop_ins.reverse();
    drop_ins.extend(Some(managed.to_path_buf()).filter(|path| path.is_file()));
    drop_ins
}

/// Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else
/// `~/.claude/settings.json`.
pub fn claude_user_settings_path() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(dir) = non_empty("CLAUDE_CONFIG_DIR") {
        return Some(PathBuf::from(dir).join("settings.json"));
    }
    non_empty("HOME").map(|home| PathBuf::from(home).join(".claude/settings.json"))
}

/// The merged result.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) policy: Policy,
    pub(crate) aliases: Vec<(String, String)>,
    pub(crate) warnings: Vec<String>,
    pub(crate) trusted: bool,
    /// `respectGitignore` from the highest scope that sets it (default true).
    pub(crate) respect_gitignore: bool,
    /// `allowPrivateNetworkHosts` of every trusted scope.
    pub(crate) allow_private_hosts: Vec<String>,
    /// `networkProxy` of the highest operator scope that sets it.
    pub(crate) network_proxy: Option<crate::sandbox::ProxySettings>,
    /// Every scope's hooks, each with whether its scope is trusted to run code.
    pub(crate) hooks: Vec<ScopedHook>,
    /// The scope whose `disableAllHooks: true` turned configured hooks off.
    pub(crate) hooks_disabled_by: Option<String>,
    /// `toolOutputChars`, the highest scope's value per tool.
    pub(crate) tool_output_chars: std::collections::BTreeMap<String, usize>,
    /// The operator's approvals of project MCP servers, and every scope's refusals.
    pub(crate) mcp_approvals: janua_mcp::Approvals,
    /// `mcpServerPolicy` of the operator's scopes, the highest scope's per server.
    pub(crate) mcp_policies: std::collections::BTreeMap<String, janua_mcp::McpServerPolicy>,
    /// Plugin approvals from user settings and `--settings`, by canonical directory.
    pub(crate) plugin_approvals:
        std::collections::BTreeMap<PathBuf, crate::registry::PluginApproval>,
}

/// A settings hook and the scope it came from.
#[derive(Debug, Clone)]
pub(crate) struct ScopedHook {
    pub(crate) setting: super::HookSetting,
    pub(crate) source: RuleSource,
    /// `--settings` and user settings are the operator's own; project and local settings count
    /// only in a trusted workspace.
    pub(crate) trusted: bool,
}

/// `$XDG_CONFIG_HOME/janua/settings.json`, else `~/.config/janua/settings.json`.
pub fn user_settings_path() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(dir) = non_empty("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(dir).join("janua/settings.json"));
    }
    non_empty("HOME").map(|home| PathBuf::from(home).join(".config/janua/settings.json"))
}

/// The plugin approvals the operator's scopes hold now: `--settings` files, then inline
/// `--settings` JSON, then the user settings file (first wins, as in [`load`]). Read again for
/// each `--watch` reload, so an approval given while a session runs counts at its next reload.
pub(crate) fn plugin_approvals(
    files: &[PathBuf],
    inline: &[String],
    user_file: Option<&Path>,
) -> Result<std::collections::BTreeMap<PathBuf, crate::registry::PluginApproval>, SettingsError> {
    let mut ignored = Vec::new();
    let mut scopes = Vec::new();
    for file in files {
        scopes.push(Settings::load(file, &mut ignored)?);
    }
    for text in inline {
        scopes.push(Settings::parse(
            text,
            Path::new("--settings JSON"),
            &mut ignored,
        )?);
    }
    if let Some(file) = user_file.filter(|file| file.exists()) {
        scopes.push(Settings::load(file, &mut ignored)?);
    }
    let mut approvals = std::collections::BTreeMap::new();
    for scope in scopes {
        for (dir, approval) in scope.plugin_approvals {
            approvals.entry(dir).or_insert(approval);
        }
    }
    Ok(approvals)
}

/// The project's local settings file, where saved approvals go.
pub(crate) fn local_settings_path(workspace: &Path) -> PathBuf {
    workspace.join(".janua/settings.local.json")
}

struct Scope {
    source: RuleSource,
    settings: Settings,
    /// Project and local scopes need workspace trust for what they grant.
    needs_trust: bool,
    /// Claude Code's own file: a rule or mode janua cannot read is a warning, not an error.
    claude_code: bool,
}

impl Scope {
    fn janua(source: RuleSource, settings: Settings, needs_trust: bool) -> Self {
        Self {
            source,
            settings,
            needs_trust,
            claude_code: false,
        }
    }
}

/// Loads and merges every scope in `input` for `workspace` (canonical).
pub(crate) fn load(
    input: &SettingsInput,
    workspace: &Path,
    home: Option<&Path>,
) -> Result<Loaded, Error> {
    let mut warnings = Vec::new();
    let mut scopes: Vec<Scope> = Vec::new();
    let claude = input.claude_code.as_ref();
    let claude_file = |path: &Path, source: RuleSource, needs_trust: bool| {
        Settings::load_claude_code(path).map(|settings| Scope {
            source,
            settings,
            needs_trust,
            claude_code: true,
        })
    };
    if let Some(managed) = claude.and_then(|claude| claude.managed.as_ref()) {
        for path in claude_managed_files(managed) {
            scopes.push(claude_file(
                &path,
                RuleSource::Settings(Some(path.clone())),
                false,
            )?);
        }
    }
    for path in &input.files {
        scopes.push(Scope::janua(
            RuleSource::Settings(Some(path.clone())),
            Settings::load(path, &mut warnings)?,
            false,
        ));
    }
    for text in &input.inline {
        scopes.push(Scope::janua(
            RuleSource::Settings(None),
            Settings::parse(text, Path::new("--settings JSON"), &mut warnings)?,
            false,
        ));
    }
    let claude_project = claude.filter(|claude| claude.project);
    let needs_trust = claude_project.is_none_or(|claude| !claude.trust_project);
    for (janua_name, claude_name, local) in [
        ("settings.local.json", "settings.local.json", true),
        ("settings.json", "settings.json", false),
    ] {
        let path = workspace.join(".janua").join(janua_name);
        if input.project && path.is_file() {
            let source = if local {
                RuleSource::Local(path.clone())
            } else {
                RuleSource::Project(path.clone())
            };
            scopes.push(Scope::janua(
                source,
                Settings::load(&path, &mut warnings)?,
                true,
            ));
        }
        let path = workspace.join(".claude").join(claude_name);
        if claude_project.is_some() && path.is_file() {
            let source = if local {
                RuleSource::Local(path.clone())
            } else {
                RuleSource::Project(path.clone())
            };
            scopes.push(claude_file(&path, source, needs_trust)?);
        }
    }
    if let Some(path) = input.user_file.as_ref().filter(|path| path.is_file()) {
        scopes.push(Scope::janua(
            RuleSource::User(path.clone()),
            Settings::load(path, &mut warnings)?,
            false,
        ));
    }
    if let Some(path) = claude
        .and_then(|claude| claude.user.as_ref())
        .filter(|path| path.is_file())
    {
        scopes.push(claude_file(path, RuleSource::User(path.clone()), false)?);
    }

    let trusted = input.trust_workspace || trust_recorded(&scopes, workspace, &mut warnings);
    let context = RuleContext {
        cwd: workspace.to_path_buf(),
        home: home.map(Path::to_path_buf),
    };
    let mut policy = Policy::new(context);

    // Command-line rules first, so a decision names them when they match.
    for (values, kind) in [
        (&input.disallowed_tools, RuleKind::Deny),
        (&input.allowed_tools, RuleKind::Allow),
    ] {
        for (index, text) in values.iter().flat_map(|v| split_rule_list(v)).enumerate() {
            let rule = Rule::parse(&text, kind, RuleSource::CommandLine, policy.context())
                .map_err(|error| positioned(error, format!("{} rule {}", flag(kind), index + 1)))?;
            warnings.extend(policy.add(rule));
        }
    }

    let mut aliases = Vec::new();
    let mut mode = input.mode;
    let mut mode_origin = "--permission-mode".to_owned();
    let mut bypass_disabled_by = None;
    let mut respect_gitignore = None;
    let mut allow_private_hosts: Vec<String> = Vec::new();
    let mut network_proxy: Option<crate::sandbox::ProxySettings> = None;
    let mut hooks = Vec::new();
    let mut hooks_disabled: Option<(bool, String)> = None;
    let mut tool_output_chars = std::collections::BTreeMap::new();
    let mut mcp_approvals = janua_mcp::Approvals::default();
    let mut mcp_policies = std::collections::BTreeMap::new();
    let mut plugin_approvals = std::collections::BTreeMap::new();
    for scope in &scopes {
        // A repository cannot approve or widen its own MCP servers; it may always refuse one.
        let operator = matches!(scope.source, RuleSource::Settings(_) | RuleSource::User(_));
        mcp_approvals
            .rejected
            .extend(scope.settings.disabled_mcpjson_servers.iter().cloned());
        let approves = !scope.settings.enabled_mcpjson_servers.is_empty()
            || scope.settings.enable_all_project_mcp_servers.is_some()
            || !scope.settings.mcp_server_policy.is_empty();
        if operator {
            for (dir, approval) in &scope.settings.plugin_approvals {
                plugin_approvals
                    .entry(dir.clone())
                    .or_insert_with(|| approval.clone());
            }
        } else if !scope.settings.plugin_approvals.is_empty() {
            warnings.push(format!(
                "pluginApprovals in {} are not used: only user settings and --settings record plugin approvals",
                scope.source
            ));
        }
        if operator {
            mcp_approvals
                .approved
                .extend(scope.settings.enabled_mcpjson_servers.iter().cloned());
            mcp_approvals.approve_all |=
                scope.settings.enable_all_project_mcp_servers == Some(true);
            for (server, policy) in &scope.settings.mcp_server_policy {
                mcp_policies
                    .entry(server.clone())
                    .or_insert_with(|| policy.clone());
            }
        } else if approves {
            warnings.push(format!(
                "enabledMcpjsonServers, enableAllProjectMcpServers and mcpServerPolicy in {} are not used: only user settings and --settings may approve or widen MCP servers",
                scope.source
            ));
        }
        respect_gitignore = respect_gitignore.or(scope.settings.respect_gitignore);
        for (tool, chars) in &scope.settings.tool_output_chars {
            tool_output_chars.entry(tool.clone()).or_insert(*chars);
        }
        let scope_trusted = !scope.needs_trust || trusted;
        hooks.extend(scope.settings.hooks.iter().map(|setting| ScopedHook {
            setting: setting.clone(),
            source: scope.source.clone(),
            trusted: scope_trusted,
        }));
        // Only the operator's own scopes may turn hooks off: a project (trusted or not) must not
        // switch off the operator's guards and audit monitors.
        let operator_scope = matches!(scope.source, RuleSource::Settings(_) | RuleSource::User(_));
        // A proxy sees every request and resolves its names: only the operator chooses one.
        if let Some(proxy) = &scope.settings.network_proxy {
            if operator_scope {
                network_proxy.get_or_insert_with(|| proxy.clone());
            } else {
                warnings.push(format!(
                    "networkProxy in {} is not used: only --settings and user settings may choose a proxy",
                    scope.source
                ));
            }
        }
        if let Some(disabled) = scope.settings.disable_all_hooks {
            if !operator_scope {
                warnings.push(format!(
                    "disableAllHooks in {} is not used: only --settings and user settings may turn hooks off",
                    scope.source
                ));
            } else if hooks_disabled.is_none() {
                hooks_disabled = Some((disabled, scope.source.to_string()));
            }
        }
        let permissions = &scope.settings.permissions;
        let untrusted = scope.needs_trust && !trusted;
        // It widens what components may reach, so an untrusted workspace cannot set it.
        let private_hosts = &scope.settings.allow_private_network_hosts;
        if untrusted && !private_hosts.is_empty() {
            warnings.push(format!(
                "this workspace has not been trusted: allowPrivateNetworkHosts in {} is not used",
                scope.source
            ));
        } else {
            for host in private_hosts {
                if !allow_private_hosts.contains(host) {
                    allow_private_hosts.push(host.clone());
                }
            }
        }
        for (entries, kind) in [
            (&permissions.deny, RuleKind::Deny),
            (&permissions.ask, RuleKind::Ask),
            (&permissions.allow, RuleKind::Allow),
        ] {
            if untrusted && kind == RuleKind::Allow {
                if !entries.is_empty() {
                    warnings.push(format!(
                        "this workspace has not been trusted: {} allow rule(s) in {} are not used (pass --trust-workspace, or list the workspace in trustedWorkspaces in your user settings)",
                        entries.len(),
                        scope.source
                    ));
                }
                continue;
            }
            for (index, entry) in entries.iter().enumerate() {
                let position = format!("permissions.{}[{index}]", kind.as_str());
                let parsed = Rule::parse(&entry.rule, kind, scope.source.clone(), policy.context())
                    .map_err(|error| positioned(error, position.clone()));
                let rule = match parsed {
                    Ok(rule) => rule,
                    Err(error) if scope.claude_code => {
                        warnings.push(format!(
                            "{error} (in Claude Code's own settings: not used by janua, Claude Code still applies it)"
                        ));
                        continue;
                    }
                    Err(error) => return Err(error.into()),
                };
                check_examples(&rule, entry, &position, policy.context())?;
                warnings.extend(policy.add(rule));
            }
        }
        let default_mode = match permissions.default_mode.as_deref().map(str::parse) {
            None => None,
            Some(Ok(parsed)) => Some(parsed),
            // Claude Code has modes janua does not (`auto`); the mode a hook decides in comes with
            // each event anyway, so this is no news to the user.
            Some(Err(_)) if scope.claude_code => None,
            Some(Err(error)) => {
                return Err(Error::Settings(SettingsError {
                    path: source_path(&scope.source),
                    message: format!("permissions.defaultMode: {error}"),
                }));
            }
        };
        if let Some(parsed) = default_mode {
            let parsed: PermissionMode = parsed;
            if untrusted && parsed.widens() {
                warnings.push(format!(
                    "this workspace has not been trusted: defaultMode {parsed} in {} is not used",
                    scope.source
                ));
            } else if mode.is_none() {
                mode = Some(parsed);
                mode_origin = scope.source.to_string();
            }
        }
        if permissions.disable_bypass && bypass_disabled_by.is_none() {
            bypass_disabled_by = Some(scope.source.to_string());
        }
        if untrusted && !permissions.additional_directories.is_empty() {
            warnings.push(format!(
                "this workspace has not been trusted: additionalDirectories in {} are not used",
                scope.source
            ));
        } else {
            for dir in &permissions.additional_directories {
                match resolve_dir(dir, workspace, home) {
                    Some(dir) => {
                        if !policy.additional_dirs.contains(&dir) {
                            policy.additional_dirs.push(dir);
                        }
                    }
                    None => warnings.push(format!(
                        "additional directory {dir:?} ({}) does not exist; ignored",
                        scope.source
                    )),
                }
            }
        }
        aliases.extend(
            scope
                .settings
                .aliases
                .iter()
                .map(|(from, to)| (from.clone(), to.clone())),
        );
    }
    let mode = mode.unwrap_or_default();
    if mode == PermissionMode::BypassPermissions
        && let Some(source) = bypass_disabled_by
    {
        return Err(Error::Settings(SettingsError {
            path: PathBuf::from(&mode_origin),
            message: format!(
                "bypassPermissions mode is disabled by disableBypassPermissionsMode in {source}"
            ),
        }));
    }
    policy.mode = mode;
    Ok(Loaded {
        policy,
        aliases,
        warnings,
        trusted,
        respect_gitignore: respect_gitignore.unwrap_or(true),
        allow_private_hosts,
        network_proxy,
        hooks,
        hooks_disabled_by: hooks_disabled
            .filter(|(disabled, _)| *disabled)
            .map(|(_, source)| source),
        tool_output_chars,
        mcp_approvals,
        mcp_policies,
        plugin_approvals,
    })
}

fn flag(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Deny => "--disallowedTools",
        _ => "--allowedTools",
    }
}

fn positioned(mut error: RuleError, position: String) -> RuleError {
    error.position = Some(position);
    error
}

fn source_path(source: &RuleSource) -> PathBuf {
    match source {
        RuleSource::User(path)
        | RuleSource::Project(path)
        | RuleSource::Local(path)
        | RuleSource::Settings(Some(path)) => path.clone(),
        _ => PathBuf::from("--settings JSON"),
    }
}

/// True when user settings or `--settings` list the workspace in `trustedWorkspaces`. A project
/// cannot trust itself.
fn trust_recorded(scopes: &[Scope], workspace: &Path, warnings: &mut Vec<String>) -> bool {
    let mut trusted = false;
    for scope in scopes {
        if scope.settings.trusted_workspaces.is_empty() {
            continue;
        }
        // By source, not by `needs_trust`: a project whose own files count without janua's trust
        // (Claude Code's, for the hook) still cannot trust itself.
        if scope.needs_trust
            || matches!(scope.source, RuleSource::Project(_) | RuleSource::Local(_))
        {
            warnings.push(format!(
                "trustedWorkspaces in {} ignored: a project cannot trust itself",
                scope.source
            ));
            continue;
        }
        trusted |= scope
            .settings
            .trusted_workspaces
            .iter()
            .any(|dir| std::fs::canonicalize(dir).is_ok_and(|dir| dir == workspace));
    }
    trusted
}

fn resolve_dir(dir: &str, workspace: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let path = match (dir.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => workspace.join(dir),
    };
    std::fs::canonicalize(path)
        .ok()
        .filter(|path| path.is_dir())
}

/// Checks a rule against its inline examples, so a rule that does not mean what its author
/// thinks fails at start-up.
fn check_examples(
    rule: &Rule,
    entry: &RuleEntry,
    position: &str,
    context: &RuleContext,
) -> Result<(), RuleError> {
    let failure = |reason: String| RuleError {
        rule: rule.text().to_owned(),
        source_name: rule.source().to_string(),
        position: Some(position.to_owned()),
        reason,
    };
    for example in &entry.matches {
        if !example_matches(rule, example, context) {
            return Err(failure(format!(
                "it does not match its example {example} (listed under \"match\")"
            )));
        }
    }
    for example in &entry.not_matches {
        if example_matches(rule, example, context) {
            return Err(failure(format!(
                "it matches {example}, listed under \"not_match\""
            )));
        }
    }
    Ok(())
}

/// Adds `rules` to `permissions.allow` in the workspace's local settings file, keeping everything
/// else in it; written atomically.
pub(crate) fn save_local_approvals(
    workspace: &Path,
    rules: &[String],
) -> Result<(), SettingsError> {
    update_settings_file(
        &local_settings_path(workspace),
        |settings| -> Result<(), &'static str> {
            let allow = settings
                .entry("permissions")
                .or_insert_with(|| Value::Object(Default::default()))
                .as_object_mut()
                .ok_or("permissions must be an object")?
                .entry("allow")
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
                .ok_or("permissions.allow must be an array")?;
            for rule in rules {
                let value = Value::String(rule.clone());
                if !allow.contains(&value) {
                    allow.push(value);
                }
            }
            Ok(())
        },
    )
    .map(drop)
}

/// A settings file before and after an edit (pretty JSON, keys sorted).
#[derive(Debug, Clone)]
pub struct SettingsChange {
    /// The file.
    pub path: PathBuf,
    /// Its settings before (`{}` when it did not exist).
    pub before: String,
    /// Its settings after.
    pub after: String,
}

impl SettingsChange {
    /// True when nothing changed (the file was left alone).
    pub fn unchanged(&self) -> bool {
        self.before == self.after
    }
}

/// Rewrites the settings file at `path` (created if missing) with `change` applied to its top
/// object, atomically, and only if that changes it; every other key is kept as it was. Nothing
/// is written when the file is not a JSON object or `change` refuses (its error is the message).
pub(crate) fn update_settings_file<E: std::fmt::Display>(
    path: &Path,
    change: impl FnOnce(&mut serde_json::Map<String, Value>) -> Result<(), E>,
) -> Result<SettingsChange, SettingsError> {
    let error = |message: String| SettingsError {
        path: path.to_path_buf(),
        message,
    };
    let mut settings: Value = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| error(format!("not valid JSON, nothing changed: {e}")))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(Default::default()),
        Err(e) => return Err(error(format!("cannot read: {e}"))),
    };
    let pretty =
        |settings: &Value| serde_json::to_string_pretty(settings).unwrap_or_default() + "\n";
    let before = pretty(&settings);
    let object = settings
        .as_object_mut()
        .ok_or_else(|| error("must be a JSON object, nothing changed".to_owned()))?;
    change(object).map_err(|problem| error(format!("{problem}, nothing changed")))?;
    let change = SettingsChange {
        path: path.to_path_buf(),
        after: pretty(&settings),
        before,
    };
    if !change.unchanged() {
        use std::os::unix::fs::PermissionsExt as _;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| error(format!("cannot create: {e}")))?;
        }
        // The file keeps its mode; a new one is readable by all (a managed file is read by every
        // user's Claude Code, a project's is committed), never the temporary file's 0600.
        let mode = std::fs::metadata(path).map_or(0o644, |metadata| metadata.permissions().mode());
        janua_types::write_atomically(path, change.after.as_bytes())
            .map_err(|e| error(format!("cannot write: {e}")))?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o7777))
            .map_err(|e| error(format!("cannot set its mode: {e}")))?;
    }
    Ok(change)
}
