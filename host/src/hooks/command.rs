//! Command hooks, compatible with Claude Code's: the event as JSON on stdin; exit 0 with a JSON
//! object on stdout answers; exit 2 blocks with stderr as the reason; other exit codes are
//! non-blocking errors. Unlike Claude Code's, they run under the process sandbox: `/bin/sh -c`
//! with a scrubbed environment, read access to the workspace (and the system directories) only,
//! no writes and no network unless the settings grant them.
//!
//! A command that cannot start (exit 126 or 127), times out or prints malformed JSON is a *failed*
//! hook, which denies the call on policy events unless the hook says `"onError": "ignore"`:
//! Claude Code treats a missing script as non-blocking, which silently disables a policy gate.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::load::CommandGrants;
use super::run::{HookEnv, Reply};
use janua_confine::ChildSpec;
use janua_confine::oneshot::{self, OneShot};
use janua_confine::{DEFAULT_PATH, INHERITED_ENV};
use janua_types::HookEvent;

/// Bytes kept of a command hook's stdout and of its stderr.
const OUTPUT_CAP: usize = 1 << 20;
/// The shell command hooks run under, as Claude Code's shell form does (`sh -c`).
const SHELL: &str = "/bin/sh";

/// A command hook from a settings file.
pub(crate) struct CommandHook {
    /// The shell command line.
    pub(crate) command: String,
    /// What it may touch, resolved to host paths.
    pub(crate) grants: CommandGrants,
}

impl CommandHook {
    /// Runs the command with `payload` on stdin.
    pub(crate) async fn run(
        &self,
        env: &HookEnv<'_>,
        event: HookEvent,
        payload: &Value,
        timeout: Duration,
    ) -> Reply {
        let workspace = env.grant_context.workspace.clone();
        let spec = OneShot {
            child: ChildSpec {
                program: PathBuf::from(SHELL),
                args: vec!["-c".to_owned(), self.command.clone()],
                cwd: workspace.clone(),
                env: self.environment(&workspace, event),
                read_dirs: self.grants.read.clone(),
                write_dirs: self.grants.write.clone(),
                network: self.grants.network,
                syscalls: janua_confine::SyscallProfile::Command,
                sandbox: env.process_sandbox,
                view: env.view.clone(),
                own_proc_readable: false,
            },
            stdin: payload.to_string().into_bytes(),
            timeout,
            output_cap: OUTPUT_CAP,
            stop: std::sync::Arc::default(),
        };
        let _stop = oneshot::StopOnDrop(std::sync::Arc::clone(&spec.stop));
        let output = match tokio::task::spawn_blocking(move || oneshot::run(spec)).await {
            Ok(Ok(output)) => output,
            Ok(Err(error)) => {
                return Reply::Failed(format!("the command could not start: {error}"));
            }
            Err(error) => return Reply::Failed(format!("the command's thread failed: {error}")),
        };
        if output.timed_out {
            return Reply::Failed(format!(
                "the command timed out after {} ms",
                timeout.as_millis()
            ));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stderr = stderr.trim();
        let json_stdout = stdout.trim_start().starts_with('{');
        let parsed = || serde_json::from_str::<Value>(stdout.trim());
        match output.exit_code {
            None => Reply::Failed("the command was killed by a signal".to_owned()),
            Some(0) if json_stdout => match parsed() {
                Ok(answer) => Reply::Answer(answer),
                Err(error) => Reply::Failed(format!(
                    "stdout starts with '{{' but is not valid JSON ({error})"
                )),
            },
            Some(0) => Reply::Plain(stdout.trim().to_owned()),
            Some(2) if stderr.is_empty() => {
                Reply::Block("the hook blocked the call (exit code 2)".to_owned())
            }
            Some(2) => Reply::Block(super::capped::clip(stderr)),
            Some(code @ (126 | 127)) => Reply::Failed(format!(
                "the command could not run (exit code {code}): {}",
                first_line(stderr)
            )),
            // Claude Code honours a JSON answer whatever the exit code; an answer that starts as
            // JSON and breaks is a failed hook, not "no objection".
            Some(_) if json_stdout => match parsed() {
                Ok(answer) if answer.is_object() => Reply::Answer(answer),
                _ => Reply::Failed(
                    "stdout starts with '{' but is not a valid JSON object".to_owned(),
                ),
            },
            Some(code) => Reply::NonBlocking(format!(
                "Failed with non-blocking status code {code}: {}",
                first_line(stderr)
            )),
        }
    }

    /// The scrubbed environment, the granted names and the project directory.
    fn environment(&self, workspace: &std::path::Path, event: HookEvent) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .filter(|(name, _)| {
                INHERITED_ENV.contains(&name.as_str())
                    || name.starts_with("LC_")
                    || self.grants.env.iter().any(|granted| granted == name)
            })
            .collect();
        if !env.iter().any(|(name, _)| name == "PATH") {
            env.push(("PATH".to_owned(), DEFAULT_PATH.to_owned()));
        }
        let project = workspace.to_string_lossy().into_owned();
        env.push(("JANUA_PROJECT_DIR".to_owned(), project.clone()));
        // Scripts written for Claude Code find the project the same way.
        env.push(("CLAUDE_PROJECT_DIR".to_owned(), project));
        env.push(("JANUA_HOOK_EVENT".to_owned(), event.as_str().to_owned()));
        env
    }
}

fn first_line(text: &str) -> String {
    match text.lines().next() {
        None | Some("") => "(no stderr)".to_owned(),
        Some(line) => super::capped::clip(line),
    }
}
