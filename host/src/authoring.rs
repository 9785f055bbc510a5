//! What plugin authors and approvers run: `janua plugin check` (load every component of a plugin
//! directory, list what it offers and asks for, and lint it) and `janua plugin approve` (record
//! its digests and grants in user settings, which the registry then holds it to).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::extensions::{HookInfo, MonitorInfo};
use crate::plugins::ToolSelection;
use crate::registry::{self, Manifest, PluginApproval};
use crate::{Runtime, RuntimeConfig, ToolInfo};

/// How much a finding matters: errors make `janua plugin check` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The plugin does not load, or loads into a broken registry.
    Error,
    /// The plugin loads, but a model or a user will have a worse time with it.
    Warning,
}

/// One lint or load problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// What `janua plugin check` reports about a plugin directory.
#[derive(Debug, Clone, Serialize)]
pub struct PluginReport {
    /// The plugin's name, when its manifest parses.
    pub plugin: Option<String>,
    /// The tools its components describe.
    pub tools: Vec<ToolInfo>,
    /// Its hooks.
    pub hooks: Vec<HookInfo>,
    /// Its monitors.
    pub monitors: Vec<MonitorInfo>,
    /// Every grant its manifest asks for, in words.
    pub grants: Vec<String>,
    /// Lints and load problems, errors first.
    pub findings: Vec<Finding>,
}

impl PluginReport {
    /// True when some finding is an error.
    pub fn has_errors(&self) -> bool {
        self.findings
            .iter()
            .any(|finding| finding.severity == Severity::Error)
    }
}

/// Errors recording an approval; each names the file to fix.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// The plugin's manifest or a component cannot be read.
    #[error("{0}")]
    Plugin(String),
    /// The user settings file cannot be read or written.
    #[error(transparent)]
    Settings(#[from] crate::config::SettingsError),
}

/// The component files the manifest in `dir` names, each once.
pub fn manifest_components(dir: &Path) -> Result<Vec<PathBuf>, crate::plugins::ManifestError> {
    let manifest = Manifest::read(dir)?;
    Ok(manifest
        .component_paths()
        .into_iter()
        .map(Path::to_path_buf)
        .collect())
}

/// SHA-256 of a component's bytes, as approvals and `janua tools` show it.
pub fn component_digest(bytes: &[u8]) -> String {
    janua_sandbox::hex_digest(bytes)
}

/// The WIT package version this host implements, from `wit/plugin.wit`.
pub fn wit_version() -> &'static str {
    const WIT: &str = include_str!("../../wit/plugin.wit");
    WIT.lines()
        .find_map(|line| line.strip_prefix("package janua:plugin@"))
        .map_or("unknown", |rest| rest.trim_end_matches(';').trim())
}

/// Loads every component of the plugin in `dir` (with `base`'s workspace, cache and limits, no
/// other plugins, no settings) and lints it. Load failures are error findings, never `Err`.
pub async fn check_plugin(dir: &Path, base: RuntimeConfig) -> PluginReport {
    let mut report = PluginReport {
        plugin: None,
        tools: Vec::new(),
        hooks: Vec::new(),
        monitors: Vec::new(),
        grants: Vec::new(),
        findings: Vec::new(),
    };
    let manifest = match Manifest::read(dir) {
        Ok(manifest) => manifest,
        Err(error) => {
            report.error(error.to_string());
            return report;
        }
    };
    report.plugin = Some(manifest.plugin.name.clone());
    report.grants = registry::grant_sentences(&manifest).into_iter().collect();
    for component in manifest.component_paths() {
        let path = dir.join(component);
        match std::fs::read(&path) {
            Ok(bytes) => {
                for problem in wit_mismatches(&bytes) {
                    report.error(format!("{}: {problem}", path.display()));
                }
            }
            Err(error) => report.error(format!(
                "{}: cannot read the component: {error}; build it with `janua plugin build {}`",
                path.display(),
                dir.display()
            )),
        }
    }
    lint_grants(&manifest, &mut report);
    if report.has_errors() {
        return report;
    }

    // The registry refuses a tool named like a built-in (selected or not), so that clash is a
    // load error like any other.
    let mut config = isolated(base);
    config.tools = ToolSelection::None;
    config.plugin_dirs = vec![dir.to_path_buf()];
    match Runtime::new(config).await {
        Ok(runtime) => {
            report.tools = runtime.tools();
            let extensions = runtime.extensions();
            report.hooks = extensions.hooks;
            report.monitors = extensions.monitors;
            for skipped in extensions.skipped {
                report.error(format!(
                    "{} ({}) is not loaded: {}",
                    skipped.what, skipped.source, skipped.reason
                ));
            }
        }
        Err(error) => report.error(error.to_string()),
    }
    let problems: Vec<String> = report
        .tools
        .iter()
        .flat_map(|tool| {
            lint_spec(
                &tool.spec.name,
                &tool.spec.description,
                &tool.spec.input_schema,
            )
        })
        .collect();
    for problem in problems {
        report.warning(problem);
    }
    report
        .findings
        .sort_by_key(|finding| finding.severity != Severity::Error);
    report
}

/// Records the plugin in `dir` as approved in the settings file `settings_path`: its component
/// digests and grants, under its canonical directory. Returns what was recorded.
pub fn approve_plugin(dir: &Path, settings_path: &Path) -> Result<PluginApproval, ApprovalError> {
    let manifest = Manifest::read(dir).map_err(|error| ApprovalError::Plugin(error.to_string()))?;
    let approval = PluginApproval::of(dir, &manifest)
        .map_err(|problem| ApprovalError::Plugin(problem.to_string()))?;
    let record = serde_json::to_value(&approval).unwrap_or_default();
    let key = registry::approval_key(dir).display().to_string();
    crate::settings::update_settings_file(settings_path, |settings| -> Result<(), &'static str> {
        settings
            .entry("pluginApprovals")
            .or_insert_with(|| Value::Object(Default::default()))
            .as_object_mut()
            .ok_or("pluginApprovals must be an object")?
            .insert(key, record);
        Ok(())
    })?;
    Ok(approval)
}

impl PluginReport {
    fn error(&mut self, message: String) {
        self.findings.push(Finding {
            severity: Severity::Error,
            message,
        });
    }

    fn warning(&mut self, message: String) {
        self.findings.push(Finding {
            severity: Severity::Warning,
            message,
        });
    }
}

/// `base` without anything the operator configured beyond workspace, cache and limits: a check
/// reports the plugin, not the operator's settings.
fn isolated(base: RuntimeConfig) -> RuntimeConfig {
    let mut config = RuntimeConfig::new(base.workspace.clone());
    config.cache_dir = base.cache_dir;
    config.limits = base.limits;
    config.state_dir = base.state_dir;
    config.project_settings = false;
    config.project_mcp = false;
    config
}

/// Grants wider than any one tool needs.
fn lint_grants(manifest: &Manifest, report: &mut PluginReport) {
    let all = manifest
        .tools
        .iter()
        .map(|tool| (format!("tool {}", tool.component.display()), &tool.grants))
        .chain(
            manifest
                .hooks
                .iter()
                .map(|hook| (format!("hook {}", hook.component.display()), &hook.grants)),
        )
        .chain(manifest.monitors.iter().map(|monitor| {
            (
                format!("monitor {}", monitor.component.display()),
                &monitor.grants,
            )
        }));
    for (owner, grants) in all {
        for grant in &grants.net {
            if grant.any_host() {
                report.warning(format!(
                    "{owner}: net grant {grant} reaches every host; name the hosts the tool talks to"
                ));
            }
        }
        for grant in &grants.env {
            if grant.to_string() == "*" {
                report.warning(format!(
                    "{owner}: env grant \"*\" hands over every variable of the host, secrets included; list the names"
                ));
            }
        }
        for tool in &grants.delegate {
            if tool == "*" {
                report.warning(format!(
                    "{owner}: delegate grant \"*\" may call every tool; list the tools"
                ));
            }
        }
        if grants.browser && !owner.starts_with("tool ") {
            report.warning(format!(
                "{owner}: the browser grant has no effect: only tool components can import the browser interface"
            ));
        } else if grants.browser && grants.net.is_empty() {
            report.warning(format!(
                "{owner}: browser grant without net grants: its pages can show workspace files only; add the hosts they load from"
            ));
        }
        for grant in &grants.fs {
            if grant.access() == crate::sandbox::FsAccess::ReadWrite
                && grant.location() == "${WORKSPACE}"
            {
                report.warning(format!(
                    "{owner}: read-write on the whole ${{WORKSPACE}}; grant a subdirectory if the tool writes only there"
                ));
            }
        }
    }
}

/// Problems a model would trip over in one tool's spec.
pub(crate) fn lint_spec(name: &str, description: &str, schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if description.trim().chars().count() < 20 {
        problems.push(format!(
            "tool {name}: the description is missing or too short to tell a model when to use the tool"
        ));
    }
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        problems.push(format!(
            "tool {name}: the input schema allows unknown fields; set \"additionalProperties\": false (serde's deny_unknown_fields) so a misspelled field is an error, not ignored"
        ));
    }
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (field, property) in &properties {
        let typed = ["type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf"]
            .iter()
            .any(|key| property.get(key).is_some());
        if !typed {
            problems.push(format!(
                "tool {name}: field {field:?} has no type; the model can send anything"
            ));
        }
        let described = property
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|text| !text.trim().is_empty());
        if !described {
            problems.push(format!(
                "tool {name}: field {field:?} has no description (a doc comment on the field)"
            ));
        }
    }
    problems
}

/// `janua:plugin` imports or exports of the component `bytes` at another version than ours.
fn wit_mismatches(bytes: &[u8]) -> Vec<String> {
    let ours = wit_version();
    let mut problems = Vec::new();
    let mut check = |name: &str| {
        if let Some(rest) = name.strip_prefix("janua:plugin/")
            && let Some((interface, version)) = rest.split_once('@')
            && version != ours
        {
            let problem = format!(
                "built against janua:plugin@{version} ({interface}); this host implements janua:plugin@{ours}: rebuild it with a matching janua-sdk"
            );
            if !problems.contains(&problem) {
                problems.push(problem);
            }
        }
    };
    for (index, payload) in wasmparser::Parser::new(0).parse_all(bytes).enumerate() {
        match payload {
            Ok(wasmparser::Payload::ComponentImportSection(reader)) => {
                for import in reader.into_iter().flatten() {
                    check(import.name.name);
                }
            }
            Ok(wasmparser::Payload::ComponentExportSection(reader)) => {
                for export in reader.into_iter().flatten() {
                    check(export.name.name);
                }
            }
            // Only the outermost header says what the file is; nested modules have their own.
            Ok(wasmparser::Payload::Version { encoding, .. })
                if index == 0 && encoding != wasmparser::Encoding::Component =>
            {
                return vec![
                    "this is a core WebAssembly module, not a component: build for wasm32-wasip2 (or run `wasm-tools component new`)".to_owned(),
                ];
            }
            Err(error) => {
                return vec![format!("not a WebAssembly component: {error}")];
            }
            _ => {}
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_lints_name_each_weak_spot() {
        let strict = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"path": {"type": "string", "description": "File to count."}}
        });
        let cases: &[(&str, Value, &[&str])] = &[
            ("Counts the lines of a text file.", strict.clone(), &[]),
            ("", strict.clone(), &["description is missing"]),
            (
                "Counts the lines of a text file.",
                json!({"type": "object", "properties": {"path": {"type": "string", "description": "x"}}}),
                &["allows unknown fields"],
            ),
            (
                "Counts the lines of a text file.",
                json!({"type": "object", "additionalProperties": false, "properties": {"path": {}}}),
                &["\"path\" has no type", "\"path\" has no description"],
            ),
            (
                "Counts the lines of a text file.",
                json!({"type": "object", "additionalProperties": false, "properties": {"mode": {"enum": ["a"], "description": "How."}}}),
                &[],
            ),
        ];
        for (description, schema, expected) in cases {
            let problems = lint_spec("T", description, schema);
            assert_eq!(problems.len(), expected.len(), "{problems:?}");
            for (problem, needle) in problems.iter().zip(expected.iter()) {
                assert!(problem.contains(needle), "{problem} lacks {needle}");
            }
        }
    }

    #[test]
    fn wit_version_comes_from_the_contract() {
        assert_eq!(wit_version(), "0.1.0");
    }

    #[test]
    fn core_modules_and_garbage_are_not_components() {
        let core_module = b"\0asm\x01\0\0\0";
        assert!(wit_mismatches(core_module)[0].contains("core WebAssembly module"));
        assert!(wit_mismatches(b"not wasm")[0].contains("not a WebAssembly component"));
    }
}
