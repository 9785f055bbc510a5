//! The CLI's agent runner: a configured external command, started per Agent call under the
//! process sandbox, speaking newline-delimited JSON (docs/DELEGATION.md):
//!
//! - janua writes one `{"type":"agent_request", ...}` line (an [`AgentRequest`]);
//! - the runner writes `{"type":"tool_use","id","name","input"}` lines; each is dispatched through
//!   the sub-session and answered with a `{"type":"tool_result","tool_use_id","content",
//!   "is_error","error_kind"}` line;
//! - the runner ends with `{"type":"result","result":"..."}` (or `"is_error": true`).
//!
//! Lines are bounded (4 MiB); anything else on stdout is a protocol error that ends the run.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::pipeline::{AgentError, AgentReport, AgentRequest, AgentRunner, SubSession};
use janua_confine::{ChildSpec, DEFAULT_PATH, INHERITED_ENV, ProcessSandbox};
use janua_sandbox::BoxFuture;
use janua_types::ToolUse;

/// The longest line a runner may write.
const MAX_LINE: usize = 4 << 20;
/// Lines queued in either direction between janua and the runner.
const QUEUED_LINES: usize = 16;
/// Characters of the runner's stderr quoted when it fails.
const STDERR_TAIL: usize = 2000;

/// How the external runner is started.
#[derive(Debug, Clone)]
pub struct CommandRunner {
    /// The program (absolute, or found on `PATH`) and its arguments.
    pub command: Vec<String>,
    /// A directory the runner may write (scratch).
    pub temp_dir: PathBuf,
    /// Environment variables passed through by name (API keys), besides the basic ones.
    pub env: Vec<String>,
    /// Keep the host's network (a runner usually calls a model API).
    pub network: bool,
    /// How child processes are confined.
    pub sandbox: ProcessSandbox,
}

impl CommandRunner {
    fn spec(&self) -> Result<ChildSpec, AgentError> {
        let (program, args) = self
            .command
            .split_first()
            .ok_or_else(|| AgentError("the agent runner command is empty".to_owned()))?;
        let program = find_program(program)
            .ok_or_else(|| AgentError(format!("the agent runner {program:?} was not found")))?;
        std::fs::create_dir_all(&self.temp_dir).map_err(|error| {
            AgentError(format!(
                "cannot create {}: {error}",
                self.temp_dir.display()
            ))
        })?;
        let mut env: Vec<(String, String)> = INHERITED_ENV
            .iter()
            .chain(
                self.env
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .iter(),
            )
            .filter_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?)))
            .collect();
        if !env.iter().any(|(name, _)| name == "PATH") {
            env.push(("PATH".to_owned(), DEFAULT_PATH.to_owned()));
        }
        env.push((
            "TMPDIR".to_owned(),
            self.temp_dir.to_string_lossy().into_owned(),
        ));
        // The runner reads the system, its scratch directory and the files its command names
        // (its script): never the workspace, whose files reach it only through tool calls that
        // the sub-session's rules decide.
        let mut read_dirs = vec![program.clone()];
        read_dirs.extend(
            args.iter()
                .map(PathBuf::from)
                .filter(|path| path.is_absolute() && path.is_file()),
        );
        Ok(ChildSpec {
            // A root of its grants, with nothing of the workspace in it to protect.
            view: janua_confine::ViewRules::default(),
            own_proc_readable: false,
            program,
            args: args.to_vec(),
            env,
            cwd: self.temp_dir.clone(),
            read_dirs,
            write_dirs: vec![self.temp_dir.clone()],
            network: self.network,
            syscalls: janua_confine::SyscallProfile::Command,
            sandbox: self.sandbox,
        })
    }
}

fn find_program(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(name);
    if path.is_absolute() {
        return path.is_file().then_some(path);
    }
    let search = std::env::var("PATH").unwrap_or_else(|_| DEFAULT_PATH.to_owned());
    search
        .split(':')
        .map(|dir| PathBuf::from(dir).join(name))
        .find(|candidate| candidate.is_file())
}

/// What the runner's stdout reader hands the async side.
enum Said {
    Line(Value),
    Bad(String),
    End,
}

impl AgentRunner for CommandRunner {
    fn run<'s>(
        &'s self,
        request: AgentRequest,
        session: &'s SubSession<'s>,
    ) -> BoxFuture<'s, Result<AgentReport, AgentError>> {
        Box::pin(async move {
            let spec = self.spec()?;
            let (process, pipes) = janua_confine::server::start(spec)
                .map_err(|error| AgentError(format!("the agent runner did not start: {error}")))?;
            let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
            {
                let stderr = std::sync::Arc::clone(&stderr);
                let mut pipe = pipes.stderr;
                std::thread::spawn(move || {
                    let mut text = String::new();
                    let mut limited = std::io::Read::take(&mut pipe, 1 << 20);
                    let _ = std::io::Read::read_to_string(&mut limited, &mut text);
                    *stderr.lock().unwrap_or_else(|poison| poison.into_inner()) = text;
                    let _ = std::io::copy(&mut pipe, &mut std::io::sink());
                });
            }
            // Bounded both ways: a runner that floods requests waits for their answers, and one
            // that stops reading its answers fails the call instead of growing janua's memory.
            let (lines, mut said) = tokio::sync::mpsc::channel(QUEUED_LINES);
            let stdout = pipes.stdout;
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(stdout);
                let mut line = Vec::new();
                loop {
                    let message =
                        match janua_mcp::jsonrpc::read_line(&mut reader, &mut line, MAX_LINE) {
                            Ok(janua_mcp::jsonrpc::Line::Complete) => {
                                if line.iter().all(u8::is_ascii_whitespace) {
                                    continue;
                                }
                                match serde_json::from_slice::<Value>(&line) {
                                    Ok(value) => Said::Line(value),
                                    Err(error) => Said::Bad(format!("a line is not JSON: {error}")),
                                }
                            }
                            Ok(janua_mcp::jsonrpc::Line::TooLong) => {
                                Said::Bad(format!("a line is longer than {MAX_LINE} bytes"))
                            }
                            Ok(janua_mcp::jsonrpc::Line::End) | Err(_) => Said::End,
                        };
                    let last = !matches!(message, Said::Line(_));
                    if lines.blocking_send(message).is_err() || last {
                        break;
                    }
                }
            });
            // Lines go out through a thread of their own: a runner that stops reading must not
            // block an async worker (the Agent call's timeout and cancel still fire).
            let stdin = spawn_writer(pipes.stdin);
            let mut first = serde_json::to_value(&request).unwrap_or_default();
            first["type"] = "agent_request".into();
            send(&stdin, first)?;
            let failed = |message: String| {
                let tail = stderr_tail(&stderr);
                AgentError(if tail.is_empty() {
                    message
                } else {
                    format!("{message}; its stderr: {tail}")
                })
            };
            let outcome = loop {
                let Some(message) = said.recv().await else {
                    break Err(failed("the agent runner ended without a result".to_owned()));
                };
                let value = match message {
                    Said::Line(value) => value,
                    Said::Bad(problem) => {
                        break Err(failed(format!(
                            "the agent runner broke the protocol: {problem}"
                        )));
                    }
                    Said::End => {
                        // Give the stderr reader a moment to collect the last words.
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        break Err(failed("the agent runner ended without a result".to_owned()));
                    }
                };
                match value["type"].as_str() {
                    Some("tool_use") => {
                        let id = value["id"].as_str().unwrap_or_default().to_owned();
                        let name = value["name"].as_str().unwrap_or_default().to_owned();
                        let input = value.get("input").cloned().unwrap_or_else(|| json!({}));
                        let dispatch = session
                            .dispatch_nested(ToolUse {
                                id: String::new(),
                                name,
                                input,
                            })
                            .await;
                        let block = serde_json::to_value(&dispatch.block).unwrap_or_default();
                        let answer = json!({
                            "type": "tool_result",
                            "tool_use_id": id,
                            "content": block["content"],
                            "is_error": dispatch.block.is_error,
                            "error_kind": dispatch.outcome.error.as_ref().map(|failure| failure.kind.as_str()),
                        });
                        if let Err(error) = send(&stdin, answer) {
                            break Err(failed(error.0));
                        }
                    }
                    Some("result") => {
                        let text = value["result"].as_str().unwrap_or_default().to_owned();
                        if value["is_error"].as_bool() == Some(true) {
                            break Err(AgentError(format!("the sub-agent failed: {text}")));
                        }
                        break Ok(AgentReport { result: text });
                    }
                    other => {
                        break Err(failed(format!(
                            "the agent runner sent an unknown message type {other:?}"
                        )));
                    }
                }
            };
            drop(stdin);
            drop(process);
            outcome
        })
    }
}

/// A thread writing each line it is sent to the runner's stdin; dropping the sender closes it.
fn spawn_writer(mut stdin: std::io::PipeWriter) -> std::sync::mpsc::SyncSender<Value> {
    let (lines, pending) = std::sync::mpsc::sync_channel::<Value>(QUEUED_LINES);
    std::thread::spawn(move || {
        for line in pending {
            if writeln!(stdin, "{line}")
                .and_then(|()| stdin.flush())
                .is_err()
            {
                break;
            }
        }
    });
    lines
}

fn send(stdin: &std::sync::mpsc::SyncSender<Value>, line: Value) -> Result<(), AgentError> {
    stdin
        .try_send(line)
        .map_err(|_| AgentError("the agent runner stopped reading its input".to_owned()))
}

fn stderr_tail(stderr: &std::sync::Mutex<String>) -> String {
    let text = stderr.lock().unwrap_or_else(|poison| poison.into_inner());
    let trimmed = text.trim_end();
    let count = trimmed.chars().count();
    trimmed
        .chars()
        .skip(count.saturating_sub(STDERR_TAIL))
        .collect()
}
