//! One settings file: read leniently (unknown keys are warnings, so a `.claude/settings.json` with
//! hooks, env or model keys loads unchanged) but typed strictly (a wrong type is an error).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::SettingsError;

/// One settings file.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `permissions`.
    pub permissions: PermissionSettings,
    /// `aliases`, `from` -> `to`.
    pub aliases: BTreeMap<String, String>,
    /// `trustedWorkspaces` (honoured in user settings and `--settings` only).
    pub trusted_workspaces: Vec<PathBuf>,
    /// `respectGitignore`: whether Glob honours `.gitignore` when a call does not say.
    pub respect_gitignore: Option<bool>,
    /// `allowPrivateNetworkHosts`: hosts outgoing HTTP may reach at private or loopback
    /// addresses, spelled as URLs read them (`localhost`, `127.0.0.1`, `[::1]`).
    pub allow_private_network_hosts: Vec<String>,
    /// `networkProxy`: the proxy outgoing HTTP goes through (honoured in user settings and
    /// `--settings` only; the environment's `HTTP_PROXY` is never used).
    pub network_proxy: Option<crate::sandbox::ProxySettings>,
    /// `hooks`: command hooks (loaded only from trusted scopes).
    pub hooks: Vec<super::HookSetting>,
    /// `disableAllHooks`.
    pub disable_all_hooks: Option<bool>,
    /// `toolOutputChars`: inline output limit by tool name (1,000 to 150,000 characters).
    pub tool_output_chars: BTreeMap<String, usize>,
    /// `enabledMcpjsonServers`: project `.mcp.json` servers the operator approved (honoured in
    /// user settings and `--settings` only).
    pub enabled_mcpjson_servers: Vec<String>,
    /// `disabledMcpjsonServers`: servers that never start, whichever scope says so.
    pub disabled_mcpjson_servers: Vec<String>,
    /// `enableAllProjectMcpServers` (user settings and `--settings` only).
    pub enable_all_project_mcp_servers: Option<bool>,
    /// `mcpServerPolicy`: each server's sandbox grants and limits (user settings and `--settings`
    /// only).
    pub mcp_server_policy: BTreeMap<String, janua_mcp::McpServerPolicy>,
    /// `pluginApprovals`: what `janua plugin approve` recorded, by canonical plugin directory
    /// (honoured in user settings and `--settings` only).
    pub plugin_approvals: BTreeMap<PathBuf, crate::registry::PluginApproval>,
}

/// `permissions` in a settings file.
#[derive(Debug, Clone, Default)]
pub struct PermissionSettings {
    /// Allow rules.
    pub allow: Vec<RuleEntry>,
    /// Ask rules.
    pub ask: Vec<RuleEntry>,
    /// Deny rules.
    pub deny: Vec<RuleEntry>,
    /// `defaultMode`.
    pub default_mode: Option<String>,
    /// `additionalDirectories`.
    pub additional_directories: Vec<String>,
    /// `disableBypassPermissionsMode: "disable"`.
    pub disable_bypass: bool,
}

/// A rule with optional examples checked at load: `{"rule": ..., "match": [...],
/// "not_match": [...]}`, or just the rule text.
#[derive(Debug, Clone, Default)]
pub struct RuleEntry {
    /// The rule text.
    pub rule: String,
    /// Inputs the rule must match (a string is the rule field's value; an object is a whole
    /// input).
    pub matches: Vec<Value>,
    /// Inputs the rule must not match.
    pub not_matches: Vec<Value>,
}

const TOP_KEYS: &[&str] = &[
    "$schema",
    "permissions",
    "aliases",
    "trustedWorkspaces",
    "respectGitignore",
    "allowPrivateNetworkHosts",
    "networkProxy",
    "hooks",
    "disableAllHooks",
    "toolOutputChars",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "enableAllProjectMcpServers",
    "mcpServerPolicy",
    "pluginApprovals",
];
const PERMISSION_KEYS: &[&str] = &[
    "allow",
    "ask",
    "deny",
    "defaultMode",
    "additionalDirectories",
    "disableBypassPermissionsMode",
];

impl Settings {
    /// Reads and parses `path`; warnings (unknown keys) are appended to `warnings`.
    pub fn load(path: &Path, warnings: &mut Vec<String>) -> Result<Self, SettingsError> {
        let text = std::fs::read_to_string(path).map_err(|e| SettingsError {
            path: path.to_path_buf(),
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(&text, path, warnings)
    }

    /// Reads one of Claude Code's own settings files: only its `permissions`, which janua
    /// enforces beside Claude Code. Everything else in it is Claude Code's to apply (its hooks,
    /// which Claude Code runs, one of them janua's; `disableAllHooks`; its model, environment and
    /// so on), so none of it is read, and its keys janua does not know are not warned about.
    pub fn load_claude_code(path: &Path) -> Result<Self, SettingsError> {
        let text = std::fs::read_to_string(path).map_err(|e| SettingsError {
            path: path.to_path_buf(),
            message: format!("cannot read: {e}"),
        })?;
        let value: Value = serde_json::from_str(&text).map_err(|e| SettingsError {
            path: path.to_path_buf(),
            message: format!("not valid JSON: {e}"),
        })?;
        let Value::Object(mut top) = value else {
            return Err(SettingsError {
                path: path.to_path_buf(),
                message: "the settings must be a JSON object".to_owned(),
            });
        };
        let mut kept = serde_json::Map::new();
        if let Some(permissions) = top.remove("permissions") {
            kept.insert("permissions".to_owned(), permissions);
        }
        let mut unknown_keys = Vec::new();
        Self::parse(&Value::Object(kept).to_string(), path, &mut unknown_keys)
    }

    /// Parses settings `text`; `path` names it in messages.
    pub fn parse(
        text: &str,
        path: &Path,
        warnings: &mut Vec<String>,
    ) -> Result<Self, SettingsError> {
        let error = |message: String| SettingsError {
            path: path.to_path_buf(),
            message,
        };
        let value: Value =
            serde_json::from_str(text).map_err(|e| error(format!("not valid JSON: {e}")))?;
        let Value::Object(top) = value else {
            return Err(error("the settings must be a JSON object".to_owned()));
        };
        let mut settings = Settings::default();
        for (key, value) in &top {
            match key.as_str() {
                "permissions" => settings.permissions = permissions(value, path, warnings)?,
                "aliases" => {
                    let Value::Object(map) = value else {
                        return Err(error(
                            "\"aliases\" must be an object of name -> tool".into(),
                        ));
                    };
                    for (from, to) in map {
                        let to = to.as_str().ok_or_else(|| {
                            error(format!("aliases.{from} must be a string (invalid type)"))
                        })?;
                        settings.aliases.insert(from.clone(), to.to_owned());
                    }
                }
                "trustedWorkspaces" => {
                    settings.trusted_workspaces = strings(value, "trustedWorkspaces", path)?
                        .into_iter()
                        .map(PathBuf::from)
                        .collect();
                }
                "respectGitignore" => {
                    settings.respect_gitignore = Some(value.as_bool().ok_or_else(|| {
                        error("\"respectGitignore\" must be true or false".to_owned())
                    })?);
                }
                "allowPrivateNetworkHosts" => {
                    for (index, host) in strings(value, "allowPrivateNetworkHosts", path)?
                        .into_iter()
                        .enumerate()
                    {
                        let canonical = janua_types::url_host(&format!("http://{host}/"))
                            .filter(|canonical| {
                                let port = host.contains(':') && !host.starts_with('[');
                                !port && !host.contains(['/', '@', '?', '#']) && !canonical.is_empty()
                            })
                            .ok_or_else(|| {
                                error(format!(
                                    "allowPrivateNetworkHosts[{index}] {host:?} is not a host name or IP address"
                                ))
                            })?;
                        settings.allow_private_network_hosts.push(canonical);
                    }
                }
                "networkProxy" => settings.network_proxy = Some(network_proxy(value, path)?),
                "hooks" => settings.hooks = super::hooks::parse(value, path, warnings)?,
                "toolOutputChars" => {
                    let Value::Object(map) = value else {
                        return Err(error(
                            "\"toolOutputChars\" must be an object of tool name -> characters"
                                .into(),
                        ));
                    };
                    for (tool, chars) in map {
                        let chars = chars
                            .as_u64()
                            .and_then(|chars| usize::try_from(chars).ok())
                            .filter(|chars| {
                                (janua_sandbox::MIN_OUTPUT_CHARS
                                    ..=janua_sandbox::MAX_OUTPUT_CHARS)
                                    .contains(chars)
                            })
                            .ok_or_else(|| {
                                error(format!(
                                    "toolOutputChars.{tool} must be a number of characters from {} to {}",
                                    janua_sandbox::MIN_OUTPUT_CHARS,
                                    janua_sandbox::MAX_OUTPUT_CHARS
                                ))
                            })?;
                        settings.tool_output_chars.insert(tool.clone(), chars);
                    }
                }
                "enabledMcpjsonServers" => {
                    settings.enabled_mcpjson_servers =
                        strings(value, "enabledMcpjsonServers", path)?;
                }
                "disabledMcpjsonServers" => {
                    settings.disabled_mcpjson_servers =
                        strings(value, "disabledMcpjsonServers", path)?;
                }
                "enableAllProjectMcpServers" => {
                    settings.enable_all_project_mcp_servers =
                        Some(value.as_bool().ok_or_else(|| {
                            error("\"enableAllProjectMcpServers\" must be true or false".to_owned())
                        })?);
                }
                "pluginApprovals" => {
                    settings.plugin_approvals = serde_json::from_value(value.clone()).map_err(
                        |problem| {
                            error(format!(
                                "pluginApprovals: {problem} (each directory: {{\"plugin\", \"components\", \"grants\"}}, as `janua plugin approve` writes it)"
                            ))
                        },
                    )?;
                }
                "mcpServerPolicy" => {
                    settings.mcp_server_policy = serde_json::from_value(value.clone()).map_err(
                        |problem| {
                            error(format!(
                                "mcpServerPolicy: {problem} (each server: {{\"read\", \"write\", \"network\", \"env\", \"startupTimeoutMs\", \"callTimeoutMs\", \"outputTokens\"}})"
                            ))
                        },
                    )?;
                }
                "disableAllHooks" => {
                    settings.disable_all_hooks = Some(value.as_bool().ok_or_else(|| {
                        error("\"disableAllHooks\" must be true or false".to_owned())
                    })?);
                }
                "$schema" => {}
                other => warnings.push(format!(
                    "settings {}: unknown key {other:?} ignored (janua reads {})",
                    path.display(),
                    TOP_KEYS[1..].join(", ")
                )),
            }
        }
        Ok(settings)
    }
}

fn permissions(
    value: &Value,
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<PermissionSettings, SettingsError> {
    let error = |message: String| SettingsError {
        path: path.to_path_buf(),
        message,
    };
    let Value::Object(map) = value else {
        return Err(error("\"permissions\" must be an object".to_owned()));
    };
    let mut settings = PermissionSettings::default();
    for (key, value) in map {
        match key.as_str() {
            "allow" => settings.allow = entries(value, "allow", path)?,
            "ask" => settings.ask = entries(value, "ask", path)?,
            "deny" => settings.deny = entries(value, "deny", path)?,
            "defaultMode" => {
                settings.default_mode = Some(
                    value
                        .as_str()
                        .ok_or_else(|| error("permissions.defaultMode must be a string".into()))?
                        .to_owned(),
                );
            }
            "additionalDirectories" => {
                settings.additional_directories =
                    strings(value, "permissions.additionalDirectories", path)?;
            }
            "disableBypassPermissionsMode" => {
                settings.disable_bypass = value.as_str() == Some("disable");
            }
            other => warnings.push(format!(
                "settings {}: unknown key permissions.{other} ignored (janua reads {})",
                path.display(),
                PERMISSION_KEYS.join(", ")
            )),
        }
    }
    Ok(settings)
}

/// `networkProxy`: `{"http": URL, "https": URL, "noProxy": [HOST, ...]}`, every key optional.
fn network_proxy(
    value: &Value,
    path: &Path,
) -> Result<crate::sandbox::ProxySettings, SettingsError> {
    let error = |message: String| SettingsError {
        path: path.to_path_buf(),
        message,
    };
    let Value::Object(map) = value else {
        return Err(error(
            "\"networkProxy\" must be an object with \"http\", \"https\" and \"noProxy\"".into(),
        ));
    };
    let mut proxy = crate::sandbox::ProxySettings::default();
    for (key, item) in map {
        let url = || {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| error(format!("networkProxy.{key} must be a URL string")))
        };
        match key.as_str() {
            "http" => proxy.http = Some(url()?),
            "https" => proxy.https = Some(url()?),
            "noProxy" => {
                proxy.no_proxy = strings(item, "networkProxy.noProxy", path)?
                    .into_iter()
                    .map(|entry| entry.trim().to_ascii_lowercase())
                    .filter(|entry| !entry.is_empty())
                    .collect();
            }
            other => {
                return Err(error(format!(
                    "networkProxy has no key {other:?} (it takes http, https and noProxy)"
                )));
            }
        }
    }
    Ok(proxy)
}

fn strings(value: &Value, key: &str, path: &Path) -> Result<Vec<String>, SettingsError> {
    let error = |message: String| SettingsError {
        path: path.to_path_buf(),
        message,
    };
    let Value::Array(items) = value else {
        return Err(error(format!("{key} must be an array of strings")));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| error(format!("{key}[{index}] must be a string")))
        })
        .collect()
}

fn entries(value: &Value, list: &str, path: &Path) -> Result<Vec<RuleEntry>, SettingsError> {
    let error = |message: String| SettingsError {
        path: path.to_path_buf(),
        message,
    };
    let Value::Array(items) = value else {
        return Err(error(format!(
            "permissions.{list} must be an array of rules"
        )));
    };
    let mut entries = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let position = format!("permissions.{list}[{index}]");
        let entry = match item {
            Value::String(rule) => RuleEntry {
                rule: rule.clone(),
                ..RuleEntry::default()
            },
            Value::Object(map) => {
                let rule = map
                    .get("rule")
                    .and_then(Value::as_str)
                    .ok_or_else(|| error(format!("{position} must have a \"rule\" string")))?;
                let examples = |key: &str| -> Result<Vec<Value>, SettingsError> {
                    match map.get(key) {
                        None => Ok(Vec::new()),
                        Some(Value::Array(values)) => Ok(values.clone()),
                        Some(_) => Err(error(format!("{position}.{key} must be an array"))),
                    }
                };
                for key in map.keys() {
                    if !matches!(key.as_str(), "rule" | "match" | "not_match") {
                        return Err(error(format!(
                            "{position} has the unknown key {key:?} (expected rule, match, not_match)"
                        )));
                    }
                }
                RuleEntry {
                    rule: rule.to_owned(),
                    matches: examples("match")?,
                    not_matches: examples("not_match")?,
                }
            }
            _ => {
                return Err(error(format!(
                    "{position} must be a rule string or {{\"rule\": ...}}"
                )));
            }
        };
        entries.push(entry);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_proxy_reads_every_key() {
        let text = r#"{"networkProxy": {"http": "http://p:1", "https": "http://p:2", "noProxy": [" Internal.Example ", ""]}}"#;
        let settings = Settings::parse(text, Path::new("/s.json"), &mut Vec::new()).unwrap();
        let proxy = settings.network_proxy.expect("a proxy");
        assert_eq!(proxy.http.as_deref(), Some("http://p:1"));
        assert_eq!(proxy.https.as_deref(), Some("http://p:2"));
        assert_eq!(proxy.no_proxy, ["internal.example"]);
    }

    #[test]
    fn bad_files_are_errors_and_unknown_keys_warnings() {
        let path = Path::new("/ws/.janua/settings.json");
        let errors = [
            (r#"{"permissions": "#, "not valid JSON"),
            (r#"[]"#, "must be a JSON object"),
            (r#"{"aliases": {"Cat": 1}}"#, "invalid type"),
            (r#"{"permissions": {"allow": "Read"}}"#, "must be an array"),
            (r#"{"permissions": {"deny": [1]}}"#, "permissions.deny[0]"),
            (
                r#"{"permissions": {"allow": [{"rul": "x"}]}}"#,
                "\"rule\" string",
            ),
            (
                r#"{"permissions": {"defaultMode": 3}}"#,
                "defaultMode must be a string",
            ),
            (
                r#"{"allowPrivateNetworkHosts": ["localhost:8080"]}"#,
                "allowPrivateNetworkHosts[0] \"localhost:8080\" is not a host",
            ),
            (
                r#"{"allowPrivateNetworkHosts": "localhost"}"#,
                "must be an array",
            ),
            (
                r#"{"networkProxy": "http://proxy:3128"}"#,
                "\"networkProxy\" must be an object",
            ),
            (
                r#"{"networkProxy": {"socks": "socks5://proxy"}}"#,
                "networkProxy has no key \"socks\"",
            ),
            (
                r#"{"networkProxy": {"http": 3128}}"#,
                "networkProxy.http must be a URL string",
            ),
            (
                r#"{"toolOutputChars": {"Bash": 999999}}"#,
                "toolOutputChars.Bash must be a number of characters from 1000 to 150000",
            ),
        ];
        for (text, expected) in errors {
            let message = Settings::parse(text, path, &mut Vec::new())
                .unwrap_err()
                .to_string();
            assert!(message.contains(expected), "{text}: {message}");
            assert!(message.contains("settings.json"), "{message}");
        }
        let mut warnings = Vec::new();
        let settings = Settings::parse(
            r#"{"model": "x", "env": {}, "permissions": {"allow": ["Read"], "disableAutoMode": "disable"}}"#,
            path,
            &mut warnings,
        )
        .unwrap();
        assert_eq!(settings.permissions.allow[0].rule, "Read");
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("\"model\"")));
        let hosts = Settings::parse(
            r#"{"allowPrivateNetworkHosts": ["LocalHost.", "0x7f000001", "[0::1]"]}"#,
            path,
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(
            hosts.allow_private_network_hosts,
            ["localhost", "127.0.0.1", "[::1]"]
        );
    }
}
