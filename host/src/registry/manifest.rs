//! `janua.toml`: a plugin directory's manifest. Parsed strictly (unknown fields are errors) and every
//! error names the file and, where the parser knows it, the line.
//!
//! ```toml
//! [plugin]
//! name = "example"
//!
//! [[tool]]
//! component = "example.wasm"
//! grants = { fs = [{ path = "${WORKSPACE}", access = "read" }], env = ["LANG"], net = ["https://api.example.com"] }
//! limits = { memory_mib = 64, timeout_ms = 5000 }
//!
//! [[hooks]]
//! component = "guard.wasm"
//! events = ["PreToolUse"]
//! matcher = "Bash"
//! if = "Bash(rm *)"
//! timeout = 5
//! on-error = "deny"
//! config = { protect = ["/srv"] }
//!
//! [[monitors]]
//! component = "audit.wasm"
//! events = ["tool_started", "tool_finished"]
//! config = { path = "${PLUGIN_DATA}/audit.jsonl" }
//! grants = { fs = [{ path = "${PLUGIN_DATA}", access = "read-write" }] }
//! ```
//!
//! Hooks and monitors may be granted files and environment variables, never `process` or `net`:
//! their worlds import neither, and a policy hook that could act would be a tool without a
//! permission decision.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use janua_sandbox::DeclaredLimits;
use janua_sandbox::Grants;

/// The manifest file name in a plugin directory.
pub(crate) const MANIFEST_FILE: &str = "janua.toml";

/// The longest timeout a hook or monitor may declare, in seconds (Claude Code's hook ceiling).
const MAX_EXTENSION_TIMEOUT_SECONDS: f64 = 600.0;

/// A manifest that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ManifestError {
    /// The manifest file.
    pub path: PathBuf,
    /// What is wrong, with the line when known.
    pub message: String,
}

impl ManifestError {
    pub(crate) fn at(path: &Path, message: String) -> Self {
        Self {
            path: path.to_path_buf(),
            message,
        }
    }
}

/// A parsed manifest.
#[derive(Debug)]
pub(crate) struct Manifest {
    pub(crate) path: PathBuf,
    pub(crate) plugin: PluginMeta,
    pub(crate) tools: Vec<ToolComponent>,
    pub(crate) hooks: Vec<HookComponent>,
    pub(crate) monitors: Vec<MonitorComponent>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    plugin: PluginMeta,
    #[serde(default, rename = "tool")]
    tools: Vec<ToolComponent>,
    #[serde(default)]
    hooks: Vec<HookComponent>,
    #[serde(default)]
    monitors: Vec<MonitorComponent>,
}

/// `[[hooks]]`: one hook component, the events it handles and how its failures count.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct HookComponent {
    /// Path of the `.wasm` file, relative to the plugin directory.
    pub(crate) component: PathBuf,
    /// A name for listings and decisions (default: the plugin name and the entry's position).
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// Hook event names (`PreToolUse`, ...).
    pub(crate) events: Vec<String>,
    /// Which tools (Claude Code's matcher syntax); absent means all.
    #[serde(default)]
    pub(crate) matcher: Option<String>,
    /// One permission rule the call must touch for the hook to run, e.g. `Bash(git *)`.
    #[serde(default, rename = "if")]
    pub(crate) condition: Option<String>,
    /// Seconds the hook may take (default 30).
    #[serde(default)]
    pub(crate) timeout: Option<f64>,
    /// What a failure counts as for policy events: `deny` (default) or `ignore`.
    #[serde(default)]
    pub(crate) on_error: Option<String>,
    /// Passed to the hook as `config` in every event.
    #[serde(default)]
    pub(crate) config: Option<toml::Value>,
    /// What the hook may touch (files and environment only).
    #[serde(default)]
    pub(crate) grants: Grants,
    /// Limits that lower the operator's.
    #[serde(default)]
    pub(crate) limits: DeclaredLimits,
}

/// What `[[hooks]]` and `[[monitors]]` entries have in common: checked, loaded and named by
/// one path (the entries stay two flat tables, since serde's `flatten` cannot be strict).
pub(crate) struct ExtensionCommon<'a> {
    /// `hook` or `monitor`, for messages.
    pub(crate) kind: &'static str,
    /// The manifest table it is listed in (`hooks`, `monitors`), for default names.
    pub(crate) table: &'static str,
    /// Path of the `.wasm` file, relative to the plugin directory.
    pub(crate) component: &'a PathBuf,
    /// The name it was given, if any.
    pub(crate) name: Option<&'a String>,
    /// Seconds one event may take, if given.
    pub(crate) timeout: Option<f64>,
    /// Passed as `config` in every event.
    pub(crate) config: Option<&'a toml::Value>,
    /// What it may touch.
    pub(crate) grants: &'a Grants,
    /// Limits that lower the operator's.
    pub(crate) limits: &'a DeclaredLimits,
}

impl HookComponent {
    /// The fields every extension has.
    pub(crate) fn common(&self) -> ExtensionCommon<'_> {
        ExtensionCommon {
            kind: "hook",
            table: "hooks",
            component: &self.component,
            name: self.name.as_ref(),
            timeout: self.timeout,
            config: self.config.as_ref(),
            grants: &self.grants,
            limits: &self.limits,
        }
    }
}

impl MonitorComponent {
    /// The fields every extension has.
    pub(crate) fn common(&self) -> ExtensionCommon<'_> {
        ExtensionCommon {
            kind: "monitor",
            table: "monitors",
            component: &self.component,
            name: self.name.as_ref(),
            timeout: self.timeout,
            config: self.config.as_ref(),
            grants: &self.grants,
            limits: &self.limits,
        }
    }
}

/// `[[monitors]]`: one monitor component and the lifecycle events it observes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct MonitorComponent {
    /// Path of the `.wasm` file, relative to the plugin directory.
    pub(crate) component: PathBuf,
    /// A name for listings (default: the plugin name and the entry's position).
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// Lifecycle event kinds to deliver (`tool_started`, ...); absent means all.
    #[serde(default)]
    pub(crate) events: Option<Vec<String>>,
    /// Seconds one event may take (default 5).
    #[serde(default)]
    pub(crate) timeout: Option<f64>,
    /// Events that may wait for the monitor before new ones are dropped (default 1024).
    #[serde(default)]
    pub(crate) queue: Option<usize>,
    /// Passed to the monitor as `config` in every event.
    #[serde(default)]
    pub(crate) config: Option<toml::Value>,
    /// What the monitor may touch (files and environment only).
    #[serde(default)]
    pub(crate) grants: Grants,
    /// Limits that lower the operator's.
    #[serde(default)]
    pub(crate) limits: DeclaredLimits,
}

/// `[plugin]`: who the plugin is.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PluginMeta {
    /// Lower-case name; also names the plugin's data directory.
    pub(crate) name: String,
    #[serde(default)]
    #[expect(dead_code, reason = "shown by later listing commands")]
    pub(crate) version: Option<String>,
    #[serde(default)]
    #[expect(dead_code, reason = "shown by later listing commands")]
    pub(crate) description: Option<String>,
}

/// `[[tool]]`: one tool component and its declared grants and limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolComponent {
    /// Path of the `.wasm` file, relative to the plugin directory.
    pub(crate) component: PathBuf,
    /// What the component may touch (its ceiling).
    #[serde(default)]
    pub(crate) grants: Grants,
    /// Limits that lower the operator's.
    #[serde(default)]
    pub(crate) limits: DeclaredLimits,
    /// Keep terminal escape sequences in the tool's text output (they are stripped by default).
    #[serde(default)]
    pub(crate) keep_escape_sequences: bool,
}

impl Manifest {
    /// Every component file the manifest names, tools first, each once.
    pub(crate) fn component_paths(&self) -> Vec<&Path> {
        let mut paths: Vec<&Path> = Vec::new();
        let all = self
            .tools
            .iter()
            .map(|tool| tool.component.as_path())
            .chain(self.hooks.iter().map(|hook| hook.component.as_path()))
            .chain(
                self.monitors
                    .iter()
                    .map(|monitor| monitor.component.as_path()),
            );
        for path in all {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths
    }

    /// Reads and checks `dir/janua.toml`.
    pub(crate) fn read(dir: &Path) -> Result<Self, ManifestError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|error| {
            ManifestError::at(&path, format!("cannot read the plugin manifest: {error}"))
        })?;
        Self::parse(&path, &text)
    }

    /// Parses manifest `text`; `path` names it in messages and anchors its relative paths.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Self, ManifestError> {
        let raw: RawManifest = toml::from_str(text).map_err(|error| {
            let location = error
                .span()
                .map(|span| {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}: ")
                })
                .unwrap_or_default();
            ManifestError::at(path, format!("{location}{}", error.message()))
        })?;
        let name_ok = !raw.plugin.name.is_empty()
            && raw.plugin.name.len() <= 64
            && raw
                .plugin
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !name_ok {
            return Err(ManifestError::at(
                path,
                format!(
                    "plugin name {:?} must be 1-64 lower-case letters, digits, '-' or '_'",
                    raw.plugin.name
                ),
            ));
        }
        if raw.tools.is_empty() && raw.hooks.is_empty() && raw.monitors.is_empty() {
            return Err(ManifestError::at(
                path,
                "the manifest lists no [[tool]], [[hooks]] or [[monitors]] components".to_owned(),
            ));
        }
        let extensions: Vec<ExtensionCommon<'_>> = raw
            .hooks
            .iter()
            .map(HookComponent::common)
            .chain(raw.monitors.iter().map(MonitorComponent::common))
            .collect();
        let components = raw
            .tools
            .iter()
            .map(|tool| (&tool.component, &tool.limits))
            .chain(
                extensions
                    .iter()
                    .map(|entry| (entry.component, entry.limits)),
            );
        for (component, limits) in components {
            if let Some(problem) = limits.problem() {
                return Err(ManifestError::at(
                    path,
                    format!("component {}: {problem}", component.display()),
                ));
            }
            let inside = component
                .components()
                .all(|part| matches!(part, Component::Normal(_)));
            if !inside {
                return Err(ManifestError::at(
                    path,
                    format!(
                        "component path {} must be relative to the plugin directory, without '..'",
                        component.display()
                    ),
                ));
            }
        }
        for entry in &extensions {
            let ExtensionCommon {
                kind,
                component,
                grants,
                timeout,
                ..
            } = entry;
            let at = |message: String| {
                ManifestError::at(path, format!("{kind} {}: {message}", component.display()))
            };
            if !grants.process.is_empty() || !grants.net.is_empty() || !grants.delegate.is_empty() {
                return Err(at(
                    "hooks and monitors may be granted fs and env only, not process, net or delegate"
                        .to_owned(),
                ));
            }
            // Every change to the workspace goes through a permission decision; a hook or
            // monitor writing there would make changes no decision saw.
            if let Some(grant) = grants.fs.iter().find(|grant| {
                grant.is_workspace() && grant.access() == janua_sandbox::FsAccess::ReadWrite
            }) {
                return Err(at(format!(
                    "fs grant {grant}: hooks and monitors may only read the workspace; they may write ${{PLUGIN_DATA}} and ${{TMP}}"
                )));
            }
            if let Some(seconds) = *timeout
                && !(seconds > 0.0 && seconds <= MAX_EXTENSION_TIMEOUT_SECONDS)
            {
                return Err(at(format!(
                    "timeout must be more than 0 and at most {MAX_EXTENSION_TIMEOUT_SECONDS} seconds, not {seconds}"
                )));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for entry in &extensions {
            let (component, Some(name)) = (entry.component, entry.name) else {
                continue;
            };
            let valid = !name.is_empty()
                && name.chars().count() <= 64
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':'));
            if !valid {
                return Err(ManifestError::at(
                    path,
                    format!(
                        "{}: name {name:?} must be 1-64 letters, digits, '-', '_', '.', '/' or ':'",
                        component.display()
                    ),
                ));
            }
            if !seen.insert(name) {
                return Err(ManifestError::at(
                    path,
                    format!("{}: the name {name:?} is used twice", component.display()),
                ));
            }
        }
        for hook in &raw.hooks {
            let at = |message: String| {
                ManifestError::at(
                    path,
                    format!("hook {}: {message}", hook.component.display()),
                )
            };
            if hook.events.is_empty() {
                return Err(at("events must name at least one hook event".to_owned()));
            }
            for event in &hook.events {
                if janua_types::HookEvent::parse(event).is_none() {
                    return Err(at(format!(
                        "unknown hook event {event:?}; janua's events are {}",
                        janua_types::HookEvent::names()
                    )));
                }
            }
            if let Some(on_error) = &hook.on_error
                && !matches!(on_error.as_str(), "deny" | "ignore")
            {
                return Err(at(format!(
                    "on-error must be \"deny\" or \"ignore\", not {on_error:?}"
                )));
            }
            if let Some(matcher) = &hook.matcher {
                janua_types::Matcher::parse(matcher).map_err(|error| at(error.to_string()))?;
            }
        }
        for monitor in &raw.monitors {
            for event in monitor.events.iter().flatten() {
                if !janua_types::MONITOR_EVENTS.contains(&event.as_str()) {
                    return Err(ManifestError::at(
                        path,
                        format!(
                            "monitor {}: unknown lifecycle event {event:?}; the kinds are {}",
                            monitor.component.display(),
                            janua_types::MONITOR_EVENTS.join(", ")
                        ),
                    ));
                }
            }
            if let Some(queue) = monitor.queue
                && !(1..=janua_types::MAX_QUEUE).contains(&queue)
            {
                return Err(ManifestError::at(
                    path,
                    format!(
                        "monitor {}: queue must be from 1 to {}, not {queue}",
                        monitor.component.display(),
                        janua_types::MAX_QUEUE
                    ),
                ));
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            plugin: raw.plugin,
            tools: raw.tools,
            hooks: raw.hooks,
            monitors: raw.monitors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse(Path::new("/p/janua.toml"), text)
    }

    #[test]
    fn parses_a_full_manifest() {
        let manifest = parse(
            r#"
[plugin]
name = "demo"

[[tool]]
component = "demo.wasm"
grants = { fs = [{ path = "${WORKSPACE}", access = "read-write" }], env = ["LANG"], net = ["https://*.example.com", "http://127.0.0.1:8080"] }
limits = { memory_mib = 64 }
"#,
        )
        .unwrap();
        assert_eq!(manifest.tools.len(), 1);
        assert_eq!(manifest.tools[0].grants.fs.len(), 1);
        assert_eq!(manifest.tools[0].grants.net.len(), 2);
        assert_eq!(manifest.tools[0].limits.memory_mib, Some(64));
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let cases: &[(&str, &str)] = &[
            ("[plugin]\nname = \"demo\"\nbogus = 1\n", "line 3"),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"x.wasm\"\ngrants = { fs = [{ path = \"/etc\", access = \"read\" }] }\n",
                "line 5",
            ),
            (
                "[plugin]\nname = \"Demo!\"\n[[tool]]\ncomponent = \"x.wasm\"\n",
                "plugin name",
            ),
            (
                "[plugin]\nname = \"demo\"\n",
                "no [[tool]], [[hooks]] or [[monitors]]",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[hooks]]\ncomponent = \"h.wasm\"\nevents = [\"Stop\"]\n",
                "unknown hook event \"Stop\"",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[hooks]]\ncomponent = \"h.wasm\"\nevents = [\"PreToolUse\"]\non-error = \"allow\"\n",
                "on-error must be",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[hooks]]\ncomponent = \"h.wasm\"\nevents = [\"PreToolUse\"]\nmatcher = \"Edit(\"\n",
                "not a valid regular expression",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[hooks]]\ncomponent = \"h.wasm\"\nevents = [\"PreToolUse\"]\ngrants = { process = [{ program = \"/bin/sh\" }] }\n",
                "fs and env only",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[monitors]]\ncomponent = \"m.wasm\"\ngrants = { fs = [{ path = \"${WORKSPACE}/logs\", access = \"read-write\" }] }\n",
                "may only read the workspace",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[hooks]]\ncomponent = \"h.wasm\"\nevents = [\"PreToolUse\"]\ntimeout = 0\n",
                "timeout must be",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[monitors]]\ncomponent = \"m.wasm\"\nevents = [\"tool_begun\"]\n",
                "unknown lifecycle event",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[hooks]]\ncomponent = \"h.wasm\"\nevents = [\"PreToolUse\"]\nbogus = 1\n",
                "line 6",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"../x.wasm\"\n",
                "relative",
            ),
            ("[plugin\n", "line 1"),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"x.wasm\"\ngrants = { net = [\"ftp://x.com\"] }\n",
                "net grant \"ftp://x.com\"",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"x.wasm\"\nlimits = { output_chars = 10 }\n",
                "output_chars must be at least 1000",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"x.wasm\"\nlimits = { timeout_ms = 0 }\n",
                "timeout_ms must be at least 1",
            ),
        ];
        for (text, expected) in cases {
            let message = parse(text).unwrap_err().to_string();
            assert!(message.starts_with("/p/janua.toml: "), "{message}");
            assert!(message.contains(expected), "{text:?}: {message}");
        }
    }
}
