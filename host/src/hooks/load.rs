//! Loading hooks and monitors from their trusted sources, and saying why any configured one was not
//! loaded: plugin manifests' `[[hooks]]` and `[[monitors]]` (plugins the operator enabled with
//! `--plugins`), and the `hooks` blocks of settings files (`--settings` and user settings always;
//! project and local settings only in a trusted workspace). `disableAllHooks: true` in a trusted
//! scope turns every configured hook and monitor off (library hooks stay).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::command::CommandHook;
use super::monitors::{DEFAULT_QUEUE, MonitorSpec};
use super::wasm::WasmHook;
use super::{DEFAULT_HOOK_TIMEOUT, Handler, HookEntry, HookSet};
use crate::Error;
use crate::registry::{Extension, ExtensionEntry, ManifestError, RegistryError};
use crate::settings::SettingsError;
use janua_permissions::{Rule, RuleContext, RuleKind, RuleSource};
use janua_sandbox::GrantContext;
use janua_sandbox::{FileAccess, ResidentSetup, Sandbox};
use janua_types::{HookEvent, Matcher, OnError};

pub(crate) use crate::settings::ScopedHook as SettingsHook;

/// The default time a monitor may take per event.
const DEFAULT_MONITOR_TIMEOUT: Duration = Duration::from_secs(5);

/// What a command hook may touch, resolved to host paths. Reading the system directories is
/// always allowed (programs must start); the rest is what settings grant.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CommandGrants {
    /// Readable directories: the workspace plus `grants.read`.
    pub read: Vec<PathBuf>,
    /// Writable directories (`grants.write`); none by default.
    pub write: Vec<PathBuf>,
    /// Environment variables passed through (`grants.env`).
    pub env: Vec<String>,
    /// True when the command keeps the host's network (`grants.network`).
    pub network: bool,
}

impl CommandGrants {
    fn describe(&self) -> String {
        let paths = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|path| path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = vec![format!("read {}", paths(&self.read))];
        if !self.write.is_empty() {
            parts.push(format!("write {}", paths(&self.write)));
        }
        if !self.env.is_empty() {
            parts.push(format!("env {}", self.env.join(", ")));
        }
        parts.push(
            if self.network {
                "network"
            } else {
                "no network"
            }
            .to_owned(),
        );
        parts.join("; ")
    }
}

/// A loaded hook, as `janua hooks` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct HookInfo {
    /// Its name in decisions and warnings.
    pub name: String,
    /// `wasm`, `command` or `in-process`.
    pub kind: &'static str,
    /// Where it was configured.
    pub source: String,
    /// True: its source is trusted to run code (only trusted hooks load).
    pub trusted: bool,
    /// The events it handles.
    pub events: Vec<&'static str>,
    /// Its matcher as written (`*` for all).
    pub matcher: String,
    /// How the matcher is read: `all`, `names` or `regex`.
    pub matcher_kind: &'static str,
    /// The registered tools the matcher selects (for tool events).
    pub covers: Vec<String>,
    /// Its `if` rule.
    pub condition: Option<String>,
    /// Its timeout in milliseconds.
    pub timeout_ms: u64,
    /// What a failure counts as on policy events.
    pub on_error: OnError,
    /// What it may touch, in words.
    pub grants: String,
    /// The command line (command hooks).
    pub command: Option<String>,
}

/// A loaded monitor, as `janua hooks` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct MonitorInfo {
    /// Its name.
    pub name: String,
    /// Where it was configured.
    pub source: String,
    /// The event kinds it receives (`None`: all).
    pub events: Option<Vec<String>>,
    /// Events that may wait for it before new ones are dropped.
    pub queue: usize,
    /// Its timeout per event in milliseconds.
    pub timeout_ms: u64,
    /// What it may touch, in words.
    pub grants: String,
}

/// A configured hook or monitor that was not loaded, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedExtension {
    /// Where it is configured (file and position).
    pub source: String,
    /// What it is (`command hook PreToolUse`, `http hook`, ...).
    pub what: String,
    /// Why it was not loaded.
    pub reason: String,
}

/// Every hook and monitor: loaded, and configured but skipped.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExtensionsReport {
    /// Loaded hooks, in the order their contexts are reported.
    pub hooks: Vec<HookInfo>,
    /// Loaded monitors.
    pub monitors: Vec<MonitorInfo>,
    /// Configured hooks and monitors that were not loaded.
    pub skipped: Vec<SkippedExtension>,
    /// The scope whose `disableAllHooks: true` turned configured hooks off.
    pub disabled_by: Option<String>,
}

/// What loading reads.
pub(crate) struct LoadInput<'a> {
    pub(crate) sandbox: &'a Sandbox,
    pub(crate) extensions: &'a [Extension],
    pub(crate) settings_hooks: &'a [SettingsHook],
    pub(crate) disabled_by: Option<&'a str>,
    pub(crate) rules: &'a RuleContext,
    pub(crate) grant_context: &'a GrantContext,
    pub(crate) files: &'a FileAccess,
    /// How command hooks will be confined (the operator's `--unsandboxed-process` applies).
    pub(crate) process_sandbox: janua_confine::ProcessSandbox,
}

/// What loading produced.
pub(crate) struct Loaded {
    pub(crate) hooks: HookSet,
    pub(crate) monitors: Vec<MonitorSpec>,
    /// Monitors' descriptions, for the report.
    pub(crate) monitor_infos: Vec<MonitorInfo>,
    pub(crate) skipped: Vec<SkippedExtension>,
    /// Loaded hooks the operator should know about (command hooks without the process sandbox).
    pub(crate) warnings: Vec<String>,
}

/// Loads every hook and monitor `input` names. A malformed `if` rule or matcher is an error naming
/// its file; an untrusted, unsupported or disabled one is skipped with a reason.
pub(crate) fn load(input: &LoadInput<'_>) -> Result<Loaded, Error> {
    let mut loaded = Loaded {
        hooks: HookSet::default(),
        monitors: Vec::new(),
        monitor_infos: Vec::new(),
        skipped: Vec::new(),
        warnings: Vec::new(),
    };
    if let Some(scope) = input.disabled_by {
        let reason = format!("disableAllHooks is true in {scope}");
        for extension in input.extensions {
            loaded.skipped.push(SkippedExtension {
                source: extension_source(extension),
                what: extension_what(extension),
                reason: reason.clone(),
            });
        }
        for hook in input.settings_hooks {
            loaded.skipped.push(SkippedExtension {
                source: settings_source(hook),
                what: format!("{} hook {}", hook.setting.kind, hook.setting.event),
                reason: reason.clone(),
            });
        }
        return Ok(loaded);
    }
    // Names appear in decisions and conflict messages: each must point at one extension.
    let mut names: HashMap<String, String> = HashMap::new();
    let mut claim = |name: &str, extension: &Extension| match names.get(name) {
        Some(first) => Err(manifest_error(
            extension,
            format!(
                "the hook or monitor name {name:?} is already used by {first}; give one of them another `name`"
            ),
        )),
        None => {
            names.insert(name.to_owned(), extension_source(extension));
            Ok(())
        }
    };
    for extension in input.extensions {
        match &extension.entry {
            ExtensionEntry::Hook(_) => {
                let hook = plugin_hook(input, extension)?;
                claim(&hook.name, extension)?;
                loaded.hooks.push(hook);
            }
            ExtensionEntry::Monitor(_) => {
                let (spec, info) = plugin_monitor(input, extension)?;
                claim(&spec.name, extension)?;
                loaded.monitors.push(spec);
                loaded.monitor_infos.push(info);
            }
        }
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    for hook in input.settings_hooks {
        let setting = &hook.setting;
        let source = settings_source(hook);
        let what = format!("{} hook {}", setting.kind, setting.event);
        let skip = |reason: String| SkippedExtension {
            source: source.clone(),
            what: what.clone(),
            reason,
        };
        if !hook.trusted {
            loaded.skipped.push(skip(
                "this workspace has not been trusted, so its settings cannot run hooks (pass --trust-workspace, or list the workspace in trustedWorkspaces in your user settings)".to_owned(),
            ));
            continue;
        }
        let Some(event) = HookEvent::parse(&setting.event) else {
            loaded.skipped.push(skip(format!(
                "janua has no {} event; its hook events are {}",
                setting.event,
                HookEvent::names()
            )));
            continue;
        };
        if setting.kind != "command" {
            loaded.skipped.push(skip(format!(
                "janua runs command hooks (and WASM hooks from plugins), not {} hooks",
                setting.kind
            )));
            continue;
        }
        let command = setting.command.clone().unwrap_or_default();
        // The same handler, field for field: a copy that differs in any way (a laxer onError,
        // wider grants) is a different hook and runs too.
        let key = format!(
            "{:?}",
            crate::settings::HookSetting {
                position: String::new(),
                ..setting.clone()
            }
        );
        if let Some(first) = seen.get(&key) {
            loaded.skipped.push(skip(format!(
                "the same handler is configured in {first}; it runs once"
            )));
            continue;
        }
        seen.insert(key, source.clone());
        let entry = settings_hook(input, hook, event, command, &source)?;
        if input.process_sandbox != janua_confine::ProcessSandbox::Required {
            loaded.warnings.push(format!(
                "the command hook {} runs WITHOUT the process sandbox (--unsandboxed-process): it has your full rights",
                entry.name
            ));
        }
        loaded.hooks.push(entry);
    }
    Ok(loaded)
}

fn extension_source(extension: &Extension) -> String {
    format!("plugin {} ({})", extension.plugin, extension.dir.display())
}

fn extension_what(extension: &Extension) -> String {
    let common = extension.entry.common();
    format!("{} {}", common.kind, common.component.display())
}

/// What loading a hook and a monitor share: the error naming the entry, the expanded config,
/// the name (given, or `<plugin>/<table>[<index>]`) and the timeout, never past the operator's
/// limit (manifests can only lower it).
struct Shared {
    name: String,
    config: Option<Value>,
    timeout: Duration,
}

fn shared(
    input: &LoadInput<'_>,
    extension: &Extension,
    default_timeout: Duration,
) -> Result<Shared, Error> {
    let common = extension.entry.common();
    let config = expand_config(common.config, input, extension).map_err(|problem| {
        extension_error(
            extension,
            format!("config cannot be read as JSON: {problem}"),
        )
    })?;
    let name = common
        .name
        .cloned()
        .unwrap_or_else(|| format!("{}/{}[{}]", extension.plugin, common.table, extension.index));
    Ok(Shared {
        name,
        config,
        timeout: seconds(common.timeout, default_timeout).min(extension.limits.timeout),
    })
}

/// A problem with one hook or monitor entry, named in its manifest.
fn extension_error(extension: &Extension, message: String) -> Error {
    manifest_error(
        extension,
        format!("{}: {message}", extension_what(extension)),
    )
}

fn settings_source(hook: &SettingsHook) -> String {
    format!("{} {}", hook.source, hook.setting.position)
}

fn manifest_error(extension: &Extension, message: String) -> Error {
    Error::Registry(RegistryError::Manifest(ManifestError::at(
        &extension.dir.join("janua.toml"),
        message,
    )))
}

fn condition(
    text: Option<&str>,
    source: RuleSource,
    rules: &RuleContext,
) -> Result<Option<Rule>, janua_permissions::RuleError> {
    // Path patterns anchor as allow rules do (Claude Code 2.1.214: `Read(src/**)` means
    // `<workspace>/src/**`, never `lib/src/**`); the condition still holds when any part of the
    // call matches, and always when the command cannot be fully read (`permissions::touches`).
    text.map(|text| Rule::parse(text, RuleKind::Allow, source, rules))
        .transpose()
}

fn invalid_condition(problem: janua_permissions::RuleError) -> String {
    format!("the hook's `if` rule is invalid: {problem}")
}

fn seconds(value: Option<f64>, default: Duration) -> Duration {
    value.map_or(default, Duration::from_secs_f64)
}

fn plugin_hook(input: &LoadInput<'_>, extension: &Extension) -> Result<HookEntry, Error> {
    let ExtensionEntry::Hook(entry) = &extension.entry else {
        return Err(manifest_error(extension, "not a hook entry".to_owned()));
    };
    let error = |message: String| extension_error(extension, message);
    let Shared {
        name,
        config,
        timeout,
    } = shared(input, extension, DEFAULT_HOOK_TIMEOUT)?;
    let events = entry
        .events
        .iter()
        .map(|name| {
            HookEvent::parse(name).ok_or_else(|| error(format!("unknown hook event {name:?}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let matcher = match &entry.matcher {
        Some(text) => Matcher::parse(text).map_err(|problem| error(problem.to_string()))?,
        None => Matcher::all(),
    };
    // Anchored at the workspace, as the operator's own rules are: a plugin's `if = "Edit(/src/**)"`
    // means the workspace's `src`, not the plugin directory's.
    let condition = condition(
        entry.condition.as_deref(),
        RuleSource::CommandLine,
        input.rules,
    )
    .map_err(|problem| error(invalid_condition(problem)))?;
    let on_error = OnError::parse(entry.on_error.as_deref())
        .ok_or_else(|| error("on-error must be \"deny\" or \"ignore\"".to_owned()))?;
    Ok(HookEntry {
        name,
        source: extension_source(extension),
        events,
        matcher,
        condition,
        timeout,
        on_error,
        grants: entry.grants.describe(),
        handler: Handler::Wasm(Arc::new(WasmHook {
            component: Arc::clone(&extension.loaded),
            grants: entry.grants.clone(),
            limits: extension.limits,
            config,
            plugin_data: Some(extension.plugin_data.clone()),
            label: extension.label.clone(),
        })),
    })
}

fn plugin_monitor(
    input: &LoadInput<'_>,
    extension: &Extension,
) -> Result<(MonitorSpec, MonitorInfo), Error> {
    let ExtensionEntry::Monitor(entry) = &extension.entry else {
        return Err(manifest_error(extension, "not a monitor entry".to_owned()));
    };
    let error = |message: String| extension_error(extension, message);
    let Shared {
        name,
        config,
        timeout,
    } = shared(input, extension, DEFAULT_MONITOR_TIMEOUT)?;
    let context = GrantContext {
        plugin_data: Some(extension.plugin_data.clone()),
        tmp: None,
        session_results: None,
        ..input.grant_context.clone()
    };
    if entry.grants.uses_plugin_data() {
        std::fs::create_dir_all(&extension.plugin_data).map_err(|problem| {
            error(format!(
                "cannot create the plugin data directory {}: {problem}",
                extension.plugin_data.display()
            ))
        })?;
    }
    let mut limits = extension.limits;
    limits.timeout = timeout;
    let resident = input
        .sandbox
        .resident(
            &extension.loaded,
            ResidentSetup {
                grants: entry.grants.resolve(&context, false),
                limits,
                label: extension.label.clone(),
                files: input.files.clone(),
            },
        )
        .ok_or_else(|| error("the component is not a monitor".to_owned()))?;
    let queue = entry.queue.unwrap_or(DEFAULT_QUEUE);
    let info = MonitorInfo {
        name: name.clone(),
        source: extension_source(extension),
        events: entry.events.clone(),
        queue,
        timeout_ms: super::run::millis(timeout),
        grants: entry.grants.describe(),
    };
    Ok((
        MonitorSpec {
            name,
            resident,
            filter: entry.events.clone(),
            queue,
            config,
        },
        info,
    ))
}

fn settings_hook(
    input: &LoadInput<'_>,
    hook: &SettingsHook,
    event: HookEvent,
    command: String,
    source: &str,
) -> Result<HookEntry, Error> {
    let setting = &hook.setting;
    let file = match &hook.source {
        RuleSource::User(path)
        | RuleSource::Project(path)
        | RuleSource::Local(path)
        | RuleSource::Settings(Some(path)) => path.clone(),
        _ => PathBuf::from("--settings JSON"),
    };
    let error = |message: String| {
        Error::Settings(SettingsError {
            path: file.clone(),
            message: format!("{}: {message}", setting.position),
        })
    };
    let matcher = match &setting.matcher {
        Some(text) => Matcher::parse(text).map_err(|problem| error(problem.to_string()))?,
        None => Matcher::all(),
    };
    let condition = condition(
        setting.condition.as_deref(),
        hook.source.clone(),
        input.rules,
    )
    .map_err(|problem| error(invalid_condition(problem)))?;
    let workspace = &input.grant_context.workspace;
    let resolve = |list: &[String], name: &str| -> Result<Vec<PathBuf>, Error> {
        list.iter()
            .enumerate()
            .map(|(index, text)| {
                let path = resolve_path(text, workspace, input.rules.home.as_deref());
                std::fs::canonicalize(&path).map_err(|problem| {
                    error(format!(
                        "grants.{name}[{index}] {}: {problem}",
                        path.display()
                    ))
                })
            })
            .collect()
    };
    let mut read = vec![workspace.clone()];
    read.extend(resolve(&setting.read, "read")?);
    let grants = CommandGrants {
        read,
        write: resolve(&setting.write, "write")?,
        env: setting.env.clone(),
        network: setting.network,
    };
    let described = if input.process_sandbox == janua_confine::ProcessSandbox::Required {
        grants.describe()
    } else {
        format!(
            "UNSANDBOXED (--unsandboxed-process); would be: {}",
            grants.describe()
        )
    };
    Ok(HookEntry {
        name: format!("{}:{}", hook.source.label(), setting.position),
        source: source.to_owned(),
        events: vec![event],
        matcher,
        condition,
        timeout: seconds(setting.timeout, DEFAULT_HOOK_TIMEOUT),
        on_error: OnError::parse(setting.on_error.as_deref()).unwrap_or_default(),
        grants: described,
        handler: Handler::Command(Arc::new(CommandHook { command, grants })),
    })
}

/// `${WORKSPACE}`, `~` and relative paths, made absolute.
fn resolve_path(text: &str, workspace: &Path, home: Option<&Path>) -> PathBuf {
    if let Some(rest) = text.strip_prefix("${WORKSPACE}") {
        return workspace.join(rest.trim_start_matches('/'));
    }
    if let (Some(rest), Some(home)) = (text.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    if text == "~"
        && let Some(home) = home
    {
        return home.to_path_buf();
    }
    workspace.join(text)
}

/// The manifest's `config` as JSON, with `${WORKSPACE}` and `${PLUGIN_DATA}` in its strings
/// replaced by the host paths (the guest cannot know them otherwise).
fn expand_config(
    config: Option<&toml::Value>,
    input: &LoadInput<'_>,
    extension: &Extension,
) -> Result<Option<Value>, serde_json::Error> {
    let Some(config) = config else {
        return Ok(None);
    };
    let mut value = serde_json::to_value(config)?;
    let workspace = input.grant_context.workspace.to_string_lossy().into_owned();
    let data = extension.plugin_data.to_string_lossy().into_owned();
    fn walk(value: &mut Value, workspace: &str, data: &str) {
        match value {
            Value::String(text) => {
                *text = text
                    .replace("${WORKSPACE}", workspace)
                    .replace("${PLUGIN_DATA}", data);
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|item| walk(item, workspace, data)),
            Value::Object(map) => map
                .values_mut()
                .for_each(|item| walk(item, workspace, data)),
            _ => {}
        }
    }
    walk(&mut value, &workspace, &data);
    Ok(Some(value))
}

/// How `janua hooks` lists `entry`; `tools` are the registered tool names.
pub(crate) fn describe(entry: &HookEntry, tools: &[&str]) -> HookInfo {
    let command = match &entry.handler {
        Handler::Command(command) => Some(command.command.clone()),
        _ => None,
    };
    let tool_events = entry.events.iter().any(|event| event.is_tool_event());
    HookInfo {
        name: entry.name.clone(),
        kind: entry.handler.kind(),
        source: entry.source.clone(),
        trusted: true,
        events: entry.events.iter().map(|event| event.as_str()).collect(),
        matcher: entry.matcher.to_string(),
        matcher_kind: entry.matcher.kind(),
        covers: if tool_events {
            tools
                .iter()
                .filter(|tool| entry.matcher.matches(tool))
                .map(|tool| (*tool).to_owned())
                .collect()
        } else {
            Vec::new()
        },
        condition: entry.condition.as_ref().map(|rule| rule.text().to_owned()),
        timeout_ms: super::run::millis(entry.timeout),
        on_error: entry.on_error,
        grants: entry.grants.clone(),
        command,
    }
}

#[cfg(test)]
mod tests {
    use super::condition;
    use janua_permissions::{RuleContext, RuleSource, touches};
    use janua_types::{CapabilityClass, ToolSpec};

    fn tool(name: &str, field: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object", "properties": {field: {}}}),
            class: CapabilityClass::Read,
            read_only: true,
            concurrency_safe: true,
            rule_field: Some(field.into()),
            validates_input: false,
        }
    }

    /// Hook `if` conditions (issue 30, point 6; HOOKS §Common fields, allow-rule anchoring since
    /// Claude Code 2.1.214): path patterns anchor at the workspace; a command that cannot be fully
    /// read runs the guard whenever the condition names its tool with more than the name.
    #[test]
    fn if_conditions_anchor_paths_and_fail_towards_running_the_guard() {
        let context = RuleContext {
            cwd: "/ws".into(),
            home: Some("/home/u".into()),
        };
        let mut rows = 0;
        let mut failures = Vec::new();
        for (index, line) in include_str!("conditions.tsv").lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            rows += 1;
            let [text, name, value, expected, source] = line.split('\t').collect::<Vec<_>>()[..]
            else {
                panic!("conditions.tsv:{}: five fields expected", index + 1);
            };
            let spec = match name {
                "Bash" => tool("Bash", "command"),
                _ => tool(name, "file_path"),
            };
            let rule = condition(Some(text), RuleSource::CommandLine, &context)
                .expect("valid")
                .expect("a rule");
            let field = spec.rule_field.as_deref().expect("a field");
            let input = serde_json::json!({ field: value });
            if touches(&rule, &spec, &input, &context) != (expected == "yes") {
                failures.push(format!(
                    "conditions.tsv:{}: {text} on {value}: expected {expected} ({source})",
                    index + 1
                ));
            }
        }
        assert!(rows >= 10, "conditions.tsv: {rows} rows");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
