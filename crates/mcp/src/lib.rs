//! MCP servers as tool sources: configured in Claude Code's `.mcp.json` format, approved by the
//! operator, started under the process sandbox, their tools registered as
//! `mcp__<server>__<tool>` and called through the same pipeline as every other tool.
//!
//! This crate starts servers and lists their tools; it does not decide permissions (rules such as
//! `mcp__server` and `mcp__server__*` are the policy's) or shape output (the output stage's, with
//! the MCP budget as the tools' limit).

#![warn(missing_docs, unreachable_pub)]

mod config;
mod connection;
mod http;
pub mod jsonrpc;
mod tools;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The MCP protocol revisions janua speaks, newest first, as a server and as a client.
pub const MCP_REVISIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub use config::Approvals;
pub use config::McpConfigError;
pub use connection::{Connection, RequestError, StartError};

/// Where an `https` server's TLS client configuration comes from: the runtime hands in the
/// sandbox's (one set of roots for every outgoing connection of janua).
pub type TlsConfig =
    fn() -> Result<Arc<tokio_rustls::rustls::ClientConfig>, tokio_rustls::rustls::Error>;
pub use tools::{Converted, Part};

use janua_confine::ChildSpec;
use janua_confine::{DEFAULT_PATH, INHERITED_ENV, ProcessSandbox};
use janua_types::ToolSpec;

/// How long a server has to start and list its tools (Claude Code's `MCP_TIMEOUT` default).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one call may take (Claude Code's `MCP_TOOL_TIMEOUT` is longer; a minute bounds a
/// hung server).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Estimated tokens an MCP result returns inline before the rest is saved to a file (Claude
/// Code's `MAX_MCP_OUTPUT_TOKENS` default).
pub const DEFAULT_OUTPUT_TOKENS: usize = 25_000;

/// What the operator's settings say about one server: its sandbox grants and limits. Only user
/// settings and `--settings` may say it; a project cannot widen its own servers.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct McpServerPolicy {
    /// Directories the server may read besides the system ones and the workspace.
    #[serde(default)]
    pub read: Vec<PathBuf>,
    /// Directories the server may write (a fresh temporary directory is always writable).
    #[serde(default)]
    pub write: Vec<PathBuf>,
    /// Keep the host's network (otherwise the server has only a private loopback).
    #[serde(default)]
    pub network: bool,
    /// Host environment variables passed to the server besides `PATH`, `HOME`, `LANG`, ...
    #[serde(default)]
    pub env: Vec<String>,
    /// Start-up timeout in milliseconds (default 30,000).
    pub startup_timeout_ms: Option<u64>,
    /// Per-call timeout in milliseconds (default 60,000).
    pub call_timeout_ms: Option<u64>,
    /// Estimated tokens returned inline (default 25,000).
    pub output_tokens: Option<usize>,
}

/// Everything needed to start the configured servers.
pub struct McpInput<'a> {
    /// `--mcp-config` files.
    pub operator_files: &'a [PathBuf],
    /// Read the workspace's `.mcp.json`.
    pub project: bool,
    /// The operator's approvals of project servers.
    pub approvals: &'a Approvals,
    /// Per-server sandbox and limits, by server name.
    pub policies: &'a BTreeMap<String, McpServerPolicy>,
    /// The workspace: where `.mcp.json` is read and servers start.
    pub workspace: &'a Path,
    /// Where each server's temporary directory goes (`<dir>/<server>`).
    pub temp_root: PathBuf,
    /// The operator's choice of confinement for stdio servers.
    pub sandbox: ProcessSandbox,
    /// The view every server's process gets (protected and deny-rule paths).
    pub view: janua_confine::ViewRules,
    /// The TLS configuration for `https` servers.
    pub tls: TlsConfig,
}

/// One MCP tool in the registry.
pub struct McpTool {
    /// The tool's server.
    pub connection: Arc<Connection>,
    /// The tool's name on its server.
    pub tool: String,
    /// How long one call may take.
    pub call_timeout: Duration,
    /// Inline characters (the token budget times four).
    pub output_chars: usize,
}

impl McpTool {
    /// Calls the tool on its server with the tool's timeout.
    pub async fn call(
        &self,
        arguments: &serde_json::Value,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Converted, RequestError> {
        let result = self
            .connection
            .call(&self.tool, arguments, self.call_timeout, cancel)
            .await?;
        Ok(tools::convert(&result))
    }
}

/// What starting the servers found.
#[derive(Default)]
pub struct Discovered {
    /// Every tool found, with its registry spec.
    pub tools: Vec<(ToolSpec, McpTool)>,
    /// Every server started (to stop them when the session ends).
    pub connections: Vec<Arc<Connection>>,
    /// Servers not started or not listed, and why.
    pub warnings: Vec<String>,
}

/// Reads the configuration, starts every approved server in parallel and lists its tools. A
/// server that cannot start or list its tools is a warning, never a start-up error: it must not
/// take the host down.
pub async fn discover(input: &McpInput<'_>) -> Result<Discovered, McpConfigError> {
    let mut discovered = Discovered::default();
    // The operator's servers first: a project server cannot take an operator server's name
    // (and with it the operator's rules and policy for that name).
    let mut servers = Vec::new();
    for path in input.operator_files {
        for server in config::read(path, config::Origin::Operator(path.clone()))? {
            servers.push(server?);
        }
    }
    let project_file = input.workspace.join(".mcp.json");
    if input.project && project_file.is_file() {
        // The repository's file must not stop janua: its problems are warnings.
        match config::read(&project_file, config::Origin::Project(project_file.clone())) {
            Ok(entries) => {
                for entry in entries {
                    match entry {
                        Ok(server) => servers.push(server),
                        Err(error) => discovered
                            .warnings
                            .push(format!("{error}; the server is not started")),
                    }
                }
            }
            Err(error) => discovered
                .warnings
                .push(format!("{error}; its servers are not started")),
        }
    }
    let mut seen: Vec<String> = Vec::new();
    let mut starting = Vec::new();
    for server in servers {
        if seen.contains(&server.name) {
            discovered.warnings.push(format!(
                "MCP server {} ({}) is configured twice; the first definition is used",
                server.name, server.origin
            ));
            continue;
        }
        seen.push(server.name.clone());
        if let Some(reason) = config::refusal(&server, input.approvals) {
            discovered.warnings.push(format!(
                "MCP server {} was not started: {reason}",
                server.name
            ));
            continue;
        }
        let policy = input
            .policies
            .get(&server.name)
            .cloned()
            .unwrap_or_default();
        let connection = match &server.transport {
            config::Transport::Http { url, headers } => {
                http_target(url, headers, &policy, input.tls)
                    .map(|target| Connection::http(server.name.clone(), target))
            }
            config::Transport::Stdio { .. } => launch(&server, &policy, input)
                .map(|launch| Connection::new(server.name.clone(), launch)),
        };
        match connection {
            Ok(connection) => starting.push((Arc::new(connection), policy)),
            Err(reason) => discovered.warnings.push(format!(
                "MCP server {} was not started: {reason}",
                server.name
            )),
        }
    }
    let listed = futures_util::future::join_all(
        starting
            .iter()
            .map(|(connection, _)| connection.list_tools()),
    )
    .await;
    let mut names: Vec<String> = Vec::new();
    for ((connection, policy), listed) in starting.into_iter().zip(listed) {
        let listed = match listed {
            Ok(listed) => listed,
            Err(error) => {
                discovered.warnings.push(format!(
                    "MCP server {} offers no tools: {}",
                    connection.name(),
                    error.message
                ));
                continue;
            }
        };
        let call_timeout = policy
            .call_timeout_ms
            .map_or(DEFAULT_CALL_TIMEOUT, Duration::from_millis);
        let output_chars = policy
            .output_tokens
            .unwrap_or(DEFAULT_OUTPUT_TOKENS)
            .saturating_mul(4);
        for tool in &listed {
            match tools::spec(connection.name(), tool) {
                Ok((spec, original)) if names.contains(&spec.name) => {
                    discovered.warnings.push(format!(
                        "MCP server {}: tool {original:?} is skipped, its name {} is taken by another tool",
                        connection.name(),
                        spec.name
                    ));
                }
                Ok((spec, original)) => {
                    names.push(spec.name.clone());
                    discovered.tools.push((
                        spec,
                        McpTool {
                            connection: Arc::clone(&connection),
                            tool: original,
                            call_timeout,
                            output_chars,
                        },
                    ));
                }
                Err(problem) => discovered.warnings.push(format!(
                    "MCP server {}: a tool is skipped: {problem}",
                    connection.name()
                )),
            }
        }
        discovered.connections.push(connection);
    }
    Ok(discovered)
}

/// Where a Streamable HTTP server is, with its configured headers.
fn http_target(
    url: &str,
    headers: &BTreeMap<String, String>,
    policy: &McpServerPolicy,
    tls: TlsConfig,
) -> Result<http::HttpTarget, StartError> {
    let url = url::Url::parse(url).map_err(|source| StartError::Url {
        url: url.to_owned(),
        source,
    })?;
    let headers = headers
        .iter()
        .map(|(name, value)| {
            let name = ::http::HeaderName::try_from(name.as_str())
                .map_err(|_| StartError::HeaderName(name.clone()))?;
            let value = ::http::HeaderValue::try_from(value.as_str())
                .map_err(|_| StartError::HeaderValue(name.to_string()))?;
            Ok((name, value))
        })
        .collect::<Result<_, StartError>>()?;
    Ok(http::HttpTarget {
        url,
        headers,
        startup_timeout: policy
            .startup_timeout_ms
            .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_millis),
        tls,
    })
}

/// How to start a stdio server under the process sandbox.
fn launch(
    server: &config::ServerConfig,
    policy: &McpServerPolicy,
    input: &McpInput<'_>,
) -> Result<connection::Launch, StartError> {
    let config::Transport::Stdio { command, args, env } = &server.transport else {
        return Err(StartError::NotStdio);
    };
    let host_env = |name: &str| std::env::var(name).ok();
    let path = host_env("PATH").unwrap_or_else(|| DEFAULT_PATH.to_owned());
    let program = resolve_program(command, &path, &server.base_dir, input.workspace)
        .ok_or_else(|| StartError::CommandNotFound(command.clone()))?;
    let temp = input.temp_root.join(sanitize_dir(&server.name));
    std::fs::create_dir_all(&temp).map_err(|source| StartError::TempDir {
        path: temp.clone(),
        source,
    })?;
    let mut environment: Vec<(String, String)> = INHERITED_ENV
        .iter()
        .copied()
        .chain(policy.env.iter().map(String::as_str))
        .filter_map(|name| host_env(name).map(|value| (name.to_owned(), value)))
        .collect();
    environment.push(("TMPDIR".to_owned(), temp.to_string_lossy().into_owned()));
    // The configuration's own variables are the server's: they may not be secrets of the host.
    for (name, value) in env {
        environment.retain(|(existing, _)| existing != name);
        environment.push((name.clone(), value.clone()));
    }
    let mut read_dirs = vec![input.workspace.to_path_buf()];
    read_dirs.extend(policy.read.iter().cloned());
    let mut write_dirs = vec![temp];
    write_dirs.extend(policy.write.iter().cloned());
    Ok(connection::Launch {
        spec: ChildSpec {
            program,
            args: args.clone(),
            cwd: input.workspace.to_path_buf(),
            env: environment,
            read_dirs,
            write_dirs,
            network: policy.network,
            syscalls: janua_confine::SyscallProfile::Command,
            sandbox: input.sandbox,
            view: input.view.clone(),
            own_proc_readable: false,
        },
        startup_timeout: policy
            .startup_timeout_ms
            .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_millis),
        workspace: input.workspace.to_path_buf(),
    })
}

/// A command with a `/` is a path, relative to its configuration file's directory; otherwise it
/// is looked up on `path`, skipping directories inside the workspace (a repository must not put
/// its own program under the name of one the operator configured).
fn resolve_program(
    command: &str,
    path: &str,
    base_dir: &Path,
    workspace: &Path,
) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let executable = |candidate: &Path| {
        std::fs::metadata(candidate)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        let candidate = base_dir.join(command);
        return executable(&candidate).then_some(candidate);
    }
    std::env::split_paths(path)
        .filter(|dir| {
            let resolved = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            dir.is_absolute() && !resolved.starts_with(workspace)
        })
        .map(|dir| dir.join(command))
        .find(|candidate| executable(candidate))
}

/// A server name as a directory name (names are checked to be `[A-Za-z0-9_-]` at load).
fn sanitize_dir(name: &str) -> String {
    tools::prefix(name)
        .trim_start_matches("mcp__")
        .trim_end_matches("__")
        .to_owned()
}
