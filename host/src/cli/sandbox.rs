//! `janua sandbox -- CMD ARGS…`: any command under the process sandbox a `Bash` command gets
//! (docs/HOSTS.md, docs/PROCESS.md), its exit code passed through.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use clap::Args;

use janua::RuntimeConfig;

/// Exit code when janua itself could not run the command (as `docker run` and `podman run`
/// do), so it differs from the command's own failures.
const NOT_RUN: u8 = 125;

/// Arguments of `janua sandbox`.
#[derive(Debug, Args)]
pub(crate) struct SandboxArgs {
    /// The command and its arguments, after `--`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<String>,
}

/// Runs the command; its exit code, 128 + the signal that ended it, or 125 when it did not run.
pub(crate) async fn run(args: SandboxArgs, config: anyhow::Result<RuntimeConfig>) -> ExitCode {
    let not_run = |reason: String| {
        eprintln!("janua sandbox: {reason}");
        ExitCode::from(NOT_RUN)
    };
    let mut config = match config {
        Ok(config) => config,
        Err(error) => return not_run(format!("{error:#}")),
    };
    // One rule set for the hook and the sandbox: the deny rules of Claude Code's files shape the
    // view too (a Read deny masks, an Edit deny is read-only), whichever file holds them. Their
    // allow rules, directories and mode are not used here.
    if config.claude_code.is_none() {
        config.claude_code = Some(janua::config::ClaudeCodeSettings::of_this_machine(false));
    }
    // No guest runs here: no engine is made.
    config.warm_engine = false;
    config.project_mcp = false;
    let runtime = match janua::Runtime::new(config).await {
        Ok(runtime) => Arc::new(runtime),
        Err(error) => return not_run(error.to_string()),
    };
    // The command runs where janua was started, when that is inside the workspace (`--cwd` may
    // name the project above it).
    if let Ok(here) = std::env::current_dir() {
        runtime.set_shell_directory(&here);
    }
    let group = Arc::new(AtomicI32::new(0));
    let stopping = Arc::new(AtomicBool::new(false));
    let running = {
        let runtime = Arc::clone(&runtime);
        let group = Arc::clone(&group);
        let stopping = Arc::clone(&stopping);
        let (program, rest) = args.command.split_first().map_or_else(
            || (String::new(), Vec::new()),
            |(program, rest)| (program.clone(), rest.to_vec()),
        );
        tokio::task::spawn_blocking(move || {
            runtime.run_sandboxed(&program, &rest, |started| {
                group.store(started, Ordering::SeqCst);
                // A stop that came while it was starting ends it now.
                if stopping.load(Ordering::SeqCst) {
                    janua::sandbox::kill_group(started);
                }
            })
        })
    };
    // The command has its own process group: a terminal's Ctrl-C reaches janua alone, and is
    // passed on as the end of the command.
    let stop = super::shutdown_signal();
    let finished = match stop {
        Ok(stop) => {
            tokio::pin!(running);
            tokio::select! {
                finished = &mut running => finished,
                () = stop => {
                    stopping.store(true, Ordering::SeqCst);
                    janua::sandbox::kill_group(group.load(Ordering::SeqCst));
                    running.await
                }
            }
        }
        Err(_) => running.await,
    };
    match finished {
        Ok(Ok(foreground)) => {
            if let Some(set_aside) = foreground.set_aside {
                eprintln!("janua sandbox: {set_aside}");
            }
            use std::os::unix::process::ExitStatusExt as _;
            let code = foreground
                .status
                .code()
                .unwrap_or_else(|| 128 + foreground.status.signal().unwrap_or(0));
            ExitCode::from(u8::try_from(code).unwrap_or(NOT_RUN))
        }
        Ok(Err(error)) => not_run(error.to_string()),
        Err(error) => not_run(format!("the command's thread failed: {error}")),
    }
}
