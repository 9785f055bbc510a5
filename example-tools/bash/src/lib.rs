//! The default `Bash` tool and its background-task companions `TaskOutput` and `TaskStop`.
//!
//! Commands run as `/bin/bash -c <script>` through the host's `process` interface, which confines
//! them (scrubbed environment, Landlock, no network, resource limits, process-group kill): this
//! component itself has no files and no environment. Nothing in a call's input can turn that
//! confinement off; leaving it is the operator's decision (`--unsandboxed-process`).

// Natively only the unit tests use the crate; the Tool impls are reached through the wasm export.
#![cfg_attr(not(target_family = "wasm"), allow(dead_code))]

mod render;

use janua_sdk::process::{self, Command};
use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// The shell every command runs in (what the built-in grant names).
const SHELL: &str = "/bin/bash";
/// Default command timeout in milliseconds.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest command timeout in milliseconds; larger values are clamped, as Claude Code does.
const MAX_TIMEOUT_MS: u64 = 600_000;
/// Default wait of `TaskOutput` in milliseconds.
const DEFAULT_WAIT_MS: u64 = 30_000;

/// Input of `Bash`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BashInput {
    /// The command to run with `bash -c`.
    command: String,
    /// Timeout in milliseconds (default 120000, at most 600000; larger values are clamped).
    #[serde(default)]
    timeout: Option<u64>,
    /// A short description of what the command does, for the user.
    #[serde(default)]
    description: Option<String>,
    /// Run in the background and return a task id at once; read its output with TaskOutput and
    /// stop it with TaskStop.
    #[serde(default)]
    run_in_background: bool,
}

struct Bash;

impl Tool for Bash {
    type Input = BashInput;
    const NAME: &'static str = "Bash";
    const DESCRIPTION: &'static str = "Runs a bash command in the workspace and returns its \
        output (stdout and stderr interleaved) and exit code. The working directory persists \
        between commands while it stays inside the workspace; environment changes do not. \
        Commands run in a sandbox: they can read system directories and the workspace, write only \
        the workspace and $TMPDIR, have no network, and are killed with everything they started \
        at the timeout (default 120000 ms, at most 600000). Output over 30000 characters is saved \
        to a file whose path is returned with a preview; read it with Read. Use \
        run_in_background for servers and other long-running commands, then TaskOutput and \
        TaskStop.";
    const CLASS: CapabilityClass = CapabilityClass::Process;
    const READ_ONLY: bool = false;
    const CONCURRENCY_SAFE: bool = false;
    const RULE_FIELD: Option<&'static str> = Some("command");

    fn call(input: BashInput, _ctx: &Context) -> Result<Output, ToolError> {
        let timeout_ms = input
            .timeout
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .clamp(1, MAX_TIMEOUT_MS);
        if input.run_in_background {
            let command = Command {
                program: SHELL.to_owned(),
                args: vec!["-c".to_owned(), input.command.clone()],
                env: Vec::new(),
                cwd: None,
                timeout_ms: 0,
                report_cwd: false,
            };
            let id = process::start(&command)?;
            return Ok(Output::text(format!(
                "Command running in the background with ID: {id}. Read its output with TaskOutput \
                 (task_id \"{id}\") and stop it with TaskStop."
            ))
            .with_structured(serde_json::json!({ "backgroundTaskId": id })));
        }
        let command = Command {
            program: SHELL.to_owned(),
            args: vec!["-c".to_owned(), with_cwd_report(&input.command)],
            env: Vec::new(),
            cwd: None,
            timeout_ms,
            report_cwd: true,
        };
        let finished = process::run(&command)?;
        render::finished(&input.command, timeout_ms, &finished)
    }
}

impl janua_sdk::Validate for Bash {
    fn validate(input: &BashInput, _ctx: &Context) -> Result<(), String> {
        if input.command.trim().is_empty() {
            return Err("command is empty".to_owned());
        }
        Ok(())
    }
}

/// `command` preceded by an EXIT trap that reports the final directory on fd 3, so `cd` persists
/// even when the command ends with `exit`.
fn with_cwd_report(command: &str) -> String {
    format!("trap 'pwd -P >&3 2>/dev/null' EXIT\n{command}")
}

/// Input of `TaskOutput`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskOutputInput {
    /// The id Bash returned for the background task.
    task_id: String,
    /// Wait for the task to finish (up to `timeout`) before answering; default true.
    #[serde(default = "default_true")]
    block: bool,
    /// Longest wait in milliseconds (default 30000, at most 600000).
    #[serde(default)]
    timeout: Option<u64>,
}

fn default_true() -> bool {
    true
}

struct TaskOutput;

impl Tool for TaskOutput {
    type Input = TaskOutputInput;
    const NAME: &'static str = "TaskOutput";
    const DESCRIPTION: &'static str = "Returns the new output of a background task started by \
        Bash with run_in_background, and whether it is still running or how it ended. With block \
        (the default) it first waits up to timeout ms for the task to finish.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;
    const CONCURRENCY_SAFE: bool = true;
    const RULE_FIELD: Option<&'static str> = None;

    fn call(input: TaskOutputInput, _ctx: &Context) -> Result<Output, ToolError> {
        let wait = if input.block {
            input.timeout.unwrap_or(DEFAULT_WAIT_MS).min(MAX_TIMEOUT_MS)
        } else {
            0
        };
        let status = process::task_output(&input.task_id, wait)?;
        Ok(render::task(&status))
    }
}

/// Input of `TaskStop`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskStopInput {
    /// The id of the background task to stop.
    task_id: String,
}

struct TaskStop;

impl Tool for TaskStop {
    type Input = TaskStopInput;
    const NAME: &'static str = "TaskStop";
    const DESCRIPTION: &'static str = "Stops a background task started by Bash with \
        run_in_background, killing every process it started, and returns its last output.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;
    const CONCURRENCY_SAFE: bool = false;
    const RULE_FIELD: Option<&'static str> = None;

    fn call(input: TaskStopInput, _ctx: &Context) -> Result<Output, ToolError> {
        let status = process::task_stop(&input.task_id)?;
        Ok(render::task(&status))
    }
}

#[cfg(target_family = "wasm")]
janua_sdk::export!(Bash, TaskOutput, TaskStop);
