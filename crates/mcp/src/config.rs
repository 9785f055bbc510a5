//! MCP server configuration files in Claude Code's format, and which servers may start.
//!
//! `{"mcpServers": {"name": {"command", "args", "env"}}}` for a stdio server,
//! `{"mcpServers": {"name": {"type": "http", "url", "headers"}}}` for a streamable HTTP one. The
//! project's `.mcp.json` is the repository's: its servers start only when the operator approved
//! them (`enabledMcpjsonServers` or `enableAllProjectMcpServers` in user settings or `--settings`,
//! or `--approve-mcp NAME`). A repository cannot approve its own servers, and
//! `disabledMcpjsonServers` in any scope always refuses. Files given with `--mcp-config` are the
//! operator's own and need no approval.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// An MCP configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("MCP configuration {}: {message}", path.display())]
pub struct McpConfigError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, naming the server.
    pub message: String,
}

/// Where a server's configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The workspace's `.mcp.json`: needs approval.
    Project(PathBuf),
    /// `--mcp-config FILE`.
    Operator(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Project(path) => write!(f, "project {}", path.display()),
            Origin::Operator(path) => write!(f, "--mcp-config {}", path.display()),
        }
    }
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    /// A child process speaking JSON-RPC lines on stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub origin: Origin,
    /// What a relative command is relative to: the configuration file's directory.
    pub base_dir: PathBuf,
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "mcpServers", default)]
    servers: BTreeMap<String, serde_json::Value>,
}

/// A server name that is its own canonical prefix: `[A-Za-z0-9_-]`, no `__` (which separates a
/// canonical name's parts, so `a__b` would fall under the rule `mcp__a`), no `_` at either end.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.contains("__")
        && !name.starts_with('_')
        && !name.ends_with('_')
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Reads the servers of one configuration file: `Err` when the file is unusable, else each
/// entry, or why it is not.
pub(crate) fn read(
    path: &Path,
    origin: Origin,
) -> Result<Vec<Result<ServerConfig, McpConfigError>>, McpConfigError> {
    let base_dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let error = |message: String| McpConfigError {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|problem| error(format!("cannot read: {problem}")))?;
    let file: File = serde_json::from_str(&text).map_err(|problem| {
        error(format!(
            "{problem} (expected {{\"mcpServers\": {{\"name\": {{\"command\", \"args\", \"env\"}} or {{\"type\": \"http\", \"url\", \"headers\"}}}}}})"
        ))
    })?;
    Ok(file
        .servers
        .into_iter()
        .map(|(name, entry)| {
            let problem = |message: &str| error(format!("server {name:?}: {message}"));
            if !valid_name(&name) {
                return Err(problem(
                    "a server name has at most 32 of the characters A-Z a-z 0-9 _ -, without \"__\" or a \"_\" at either end",
                ));
            }
            let entry: Entry =
                serde_json::from_value(entry).map_err(|bad| problem(&bad.to_string()))?;
            let transport = match (entry.kind.as_deref(), entry.command, entry.url) {
                (None | Some("stdio"), Some(command), None) => {
                    if command.trim().is_empty() {
                        return Err(problem("\"command\" is empty"));
                    }
                    if !entry.headers.is_empty() {
                        return Err(problem("\"headers\" belong to http servers"));
                    }
                    Transport::Stdio {
                        command,
                        args: entry.args,
                        env: entry.env,
                    }
                }
                (Some("http") | None, None, Some(url)) => {
                    let parsed = url::Url::parse(&url)
                        .map_err(|bad| problem(&format!("\"url\" {url:?}: {bad}")))?;
                    if !matches!(parsed.scheme(), "http" | "https") {
                        return Err(problem("\"url\" must be http:// or https://"));
                    }
                    if !entry.args.is_empty() || !entry.env.is_empty() {
                        return Err(problem("\"args\" and \"env\" belong to stdio servers"));
                    }
                    Transport::Http {
                        url,
                        headers: entry.headers,
                    }
                }
                (Some("sse"), _, _) => {
                    return Err(problem(
                        "the deprecated SSE transport is not supported; use \"type\": \"http\"",
                    ));
                }
                (Some(other), _, _) if !matches!(other, "stdio" | "http") => {
                    return Err(problem(&format!(
                        "unknown type {other:?} (janua supports \"stdio\" and \"http\")"
                    )));
                }
                _ => {
                    return Err(problem(
                        "give either \"command\" (stdio) or \"url\" (http), not both or neither",
                    ));
                }
            };
            Ok(ServerConfig {
                name,
                transport,
                origin: origin.clone(),
                base_dir: base_dir.clone(),
            })
        })
        .collect())
}

/// The operator's choices about project servers, from user settings, `--settings` and
/// `--approve-mcp` (never from the project's own settings).
#[derive(Debug, Clone, Default)]
pub struct Approvals {
    /// `enabledMcpjsonServers`: names, valid in trusted workspaces only (user settings hold them
    /// for every repository, and a name says nothing about what a repository runs under it).
    pub approved: Vec<String>,
    /// `enableAllProjectMcpServers`, likewise.
    pub approve_all: bool,
    /// `--approve-mcp`: this run, this workspace.
    pub explicit: Vec<String>,
    /// The workspace is trusted (`--trust-workspace` or `trustedWorkspaces`).
    pub trusted: bool,
    /// `disabledMcpjsonServers` from every scope.
    pub rejected: Vec<String>,
}

/// Why a configured server does not start, or `None` when it may.
pub(crate) fn refusal(server: &ServerConfig, approvals: &Approvals) -> Option<String> {
    if approvals.rejected.contains(&server.name) {
        return Some(format!(
            "it is listed in disabledMcpjsonServers ({})",
            server.origin
        ));
    }
    let by_settings = approvals.approve_all || approvals.approved.contains(&server.name);
    match &server.origin {
        Origin::Operator(_) => None,
        Origin::Project(_) if approvals.explicit.contains(&server.name) => None,
        Origin::Project(_) if by_settings && approvals.trusted => None,
        Origin::Project(path) if by_settings => Some(format!(
            "{} comes from the repository ({}); your settings approve it, but only in trusted workspaces (--trust-workspace or trustedWorkspaces), or pass --approve-mcp {}",
            server.name,
            path.display(),
            server.name
        )),
        Origin::Project(path) => Some(format!(
            "{} comes from the repository ({}) and has not been approved: add it to enabledMcpjsonServers in your user settings, or pass --approve-mcp {}",
            server.name,
            path.display(),
            server.name
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<ServerConfig>, McpConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(&path, text).unwrap();
        read(&path, Origin::Project(path.clone()))?
            .into_iter()
            .collect::<Result<_, _>>()
    }

    #[test]
    fn configuration_table() {
        let ok = [
            r#"{"mcpServers":{"fs":{"command":"npx","args":["-y","x"],"env":{"A":"1"}}}}"#,
            r#"{"mcpServers":{"fs":{"type":"stdio","command":"/bin/server"}}}"#,
            r#"{"mcpServers":{"web":{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer x"}}}}"#,
            r#"{"mcpServers":{}}"#,
            r#"{}"#,
        ];
        for text in ok {
            assert!(parse(text).is_ok(), "{text}: {:?}", parse(text));
        }
        let bad = [
            (r#"{"mcpServers":{"a":{}}}"#, "either"),
            (
                r#"{"mcpServers":{"a":{"command":"x","url":"http://h"}}}"#,
                "either",
            ),
            (r#"{"mcpServers":{"a":{"command":" "}}}"#, "empty"),
            (
                r#"{"mcpServers":{"a":{"type":"sse","url":"http://h"}}}"#,
                "SSE",
            ),
            (
                r#"{"mcpServers":{"a":{"type":"ws","url":"http://h"}}}"#,
                "unknown type",
            ),
            (
                r#"{"mcpServers":{"a":{"type":"http","url":"file:///etc"}}}"#,
                "http://",
            ),
            (
                r#"{"mcpServers":{"a":{"command":"x","cwd":"/"}}}"#,
                "unknown field",
            ),
            (r#"{"mcpServers":{"a":{"command":1}}}"#, "invalid type"),
            (
                r#"{"mcpServers":{"git__hub":{"command":"x"}}}"#,
                "server name",
            ),
            (r#"{"mcpServers":{"_x":{"command":"x"}}}"#, "server name"),
            (r#"{"mcpServers":{"a.b":{"command":"x"}}}"#, "server name"),
            (r#"{"mcpServers":{"":{"command":"x"}}}"#, "server name"),
            ("not json", "expected"),
        ];
        for (text, expected) in bad {
            let error = parse(text).unwrap_err();
            assert!(error.message.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn approval_table() {
        let project = |name: &str| ServerConfig {
            name: name.to_owned(),
            transport: Transport::Stdio {
                command: "x".into(),
                args: vec![],
                env: BTreeMap::new(),
            },
            origin: Origin::Project(PathBuf::from("/w/.mcp.json")),
            base_dir: PathBuf::from("/w"),
        };
        let operator = |name: &str| ServerConfig {
            origin: Origin::Operator(PathBuf::from("/etc/mcp.json")),
            ..project(name)
        };
        let approvals = Approvals {
            approved: vec!["good".into()],
            approve_all: false,
            explicit: vec!["asked".into()],
            trusted: true,
            rejected: vec!["bad".into(), "asked-bad".into()],
        };
        let all = Approvals {
            approve_all: true,
            ..approvals.clone()
        };
        let untrusted = Approvals {
            trusted: false,
            ..all.clone()
        };
        let cases = [
            (project("good"), &approvals, true),
            (project("other"), &approvals, false),
            (project("bad"), &approvals, false),
            (project("asked"), &approvals, true),
            (project("other"), &all, true),
            (project("bad"), &all, false),
            (project("good"), &untrusted, false),
            (project("other"), &untrusted, false),
            (project("asked"), &untrusted, true),
            (operator("other"), &approvals, true),
            (operator("bad"), &approvals, false),
        ];
        for (server, approvals, starts) in cases {
            assert_eq!(
                refusal(&server, approvals).is_none(),
                starts,
                "{} from {}",
                server.name,
                server.origin
            );
        }
    }
}
