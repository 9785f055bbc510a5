//! The external MCP peers the MCP suites use, none of them written here: the official Python SDK
//! (driven by `tests/mcp/client.py`) and the official reference servers from npm. They are
//! installed once by `tests/mcp/setup.sh` (which `.ci/run` also runs) into the target directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::{Fixture, cache_dir, janua_bin};

/// The installed tooling: `venv/bin/python`, `npm/node_modules/.bin/mcp-server-*`.
pub(crate) fn tools_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var_os("JANUA_MCP_TOOLS")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mcp-tools"));
        let script = repo().join("tests/mcp/setup.sh");
        let status = Command::new("bash")
            .arg(&script)
            .arg(&dir)
            .status()
            .expect("run tests/mcp/setup.sh");
        assert!(
            status.success(),
            "tests/mcp/setup.sh {} failed: the MCP suites need PyPI and npm",
            dir.display()
        );
        dir
    })
}

/// The repository root.
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_path_buf()
}

/// `mcp-server-<name>` from the installed reference servers.
pub(crate) fn reference_server(name: &str) -> PathBuf {
    tools_dir()
        .join("npm/node_modules/.bin")
        .join(format!("mcp-server-{name}"))
}

/// `janua` with a fixture's workspace, state and cache, no user settings, then `global`.
pub(crate) fn janua_command(fixture: &Fixture, global: &[&str]) -> Vec<String> {
    let mut args = vec![
        janua_bin().display().to_string(),
        "--cwd".into(),
        fixture.workspace().display().to_string(),
        "--state-dir".into(),
        fixture.state_dir().display().to_string(),
        "--cache-dir".into(),
        cache_dir().display().to_string(),
        "--no-user-settings".into(),
    ];
    args.extend(global.iter().map(|arg| (*arg).to_owned()));
    args
}

/// What the Python SDK client printed: one JSON value per step, the `initialize` answer first.
pub(crate) struct SdkRun {
    pub(crate) lines: Vec<Value>,
    pub(crate) stderr: String,
}

impl SdkRun {
    /// The output of step `index` (0 is `initialize`), after checking it raised nothing.
    pub(crate) fn step(&self, index: usize) -> &Value {
        let line = self
            .lines
            .get(index)
            .unwrap_or_else(|| panic!("no step {index}: {:?}\n{}", self.lines, self.stderr));
        assert!(
            line.get("exception").is_none(),
            "step {index} raised: {line}\n{}",
            self.stderr
        );
        line
    }
}

/// Runs the SDK client with `steps` against `server` (a command line), with `env` added to the
/// client's environment (the server inherits it).
pub(crate) fn drive(steps: &Value, server: &[String], env: &[(&str, &str)]) -> SdkRun {
    let mut target = vec!["--".to_owned()];
    target.extend(server.iter().cloned());
    run_client(steps, &target, env)
}

/// Runs the SDK client with `steps` against the Streamable HTTP server at `url`, sending
/// `Authorization: Bearer <token>`.
pub(crate) fn drive_http(steps: &Value, url: &str, token: &str) -> SdkRun {
    let target = [
        "--http".to_owned(),
        url.to_owned(),
        "--header".to_owned(),
        format!("Authorization: Bearer {token}"),
    ];
    run_client(steps, &target, &[])
}

fn run_client(steps: &Value, target: &[String], env: &[(&str, &str)]) -> SdkRun {
    let dir = tempfile::tempdir().expect("temp dir");
    let steps_file = dir.path().join("steps.json");
    std::fs::write(&steps_file, steps.to_string()).expect("write steps");
    let output = Command::new(tools_dir().join("venv/bin/python"))
        .arg("-B")
        .arg(repo().join("tests/mcp/client.py"))
        .arg(&steps_file)
        .args(target)
        .envs(env.iter().copied())
        .output()
        .expect("run the MCP SDK client");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "the SDK client failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let lines = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("not JSON ({error}): {line}\n{stderr}"))
        })
        .collect();
    SdkRun { lines, stderr }
}

/// The text parts of a `CallToolResult` dump, joined.
pub(crate) fn result_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// janua's `error_kind` of a `CallToolResult` dump (`None` for a success).
pub(crate) fn error_kind(result: &Value) -> Option<&str> {
    result["_meta"]["janua/error_kind"].as_str()
}
