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
    pub(crate) name: String,
    pub(crate) transport: Transport,
    pub(crate) origin: Origin,
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "mcpServers", default)]
    servers: BTreeMap<String, Entry>,
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

/// Reads the servers of one configuration file.
pub(crate) fn read(path: &Path, origin: Origin) -> Result<Vec<ServerConfig>, McpConfigError> {
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
    file.servers
        .into_iter()
        .map(|(name, entry)| {
            let problem = |message: &str| error(format!("server {name:?}: {message}"));
            if name.is_empty() || name.chars().any(char::is_control) {
                return Err(problem("the name must be non-empty text"));
            }
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
                        "unknown type {other:?} (warden supports \"stdio\" and \"http\")"
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
            })
        })
        .collect()
}

/// The operator's choices about project servers, from user settings, `--settings` and
/// `--approve-mcp` (never from the project's own settings).
#[derive(Debug, Clone, Default)]
pub(crate) struct Approvals {
    pub(crate) approved: Vec<String>,
    pub(crate) approve_all: bool,
    /// `disabledMcpjsonServers` from every scope.
    pub(crate) rejected: Vec<String>,
}

/// Why a configured server does not start, or `None` when it may.
pub(crate) fn refusal(server: &ServerConfig, approvals: &Approvals) -> Option<String> {
    if approvals.rejected.contains(&server.name) {
        return Some(format!(
            "it is listed in disabledMcpjsonServers ({})",
            server.origin
        ));
    }
    match &server.origin {
        Origin::Operator(_) => None,
        Origin::Project(_)
            if approvals.approve_all || approvals.approved.contains(&server.name) =>
        {
            None
        }
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

    fn parse(text: &str) -> Result<Vec<ServerConfig>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(&path, text).unwrap();
        read(&path, Origin::Project(path.clone())).map_err(|error| error.message)
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
            ("not json", "expected"),
        ];
        for (text, expected) in bad {
            let message = parse(text).unwrap_err();
            assert!(message.contains(expected), "{text}: {message}");
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
        };
        let operator = |name: &str| ServerConfig {
            origin: Origin::Operator(PathBuf::from("/etc/mcp.json")),
            ..project(name)
        };
        let approvals = Approvals {
            approved: vec!["good".into()],
            approve_all: false,
            rejected: vec!["bad".into()],
        };
        let all = Approvals {
            approve_all: true,
            ..approvals.clone()
        };
        let cases = [
            (project("good"), &approvals, true),
            (project("other"), &approvals, false),
            (project("bad"), &approvals, false),
            (project("other"), &all, true),
            (project("bad"), &all, false),
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
