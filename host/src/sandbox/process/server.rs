//! A long-lived confined program with pipes on stdin, stdout and stderr: what an MCP stdio server
//! needs.
//!
//! It uses the same confinement as Bash's commands and command hooks (`confine.rs`: Landlock, a
//! network namespace unless the network is granted, seccomp, rlimits, its own process group, death
//! with the host), minus the CPU-seconds limit a server that lives for the session cannot have.
//! Dropping the [`ServerProcess`] kills the whole group.

use std::path::PathBuf;

use super::confine::{Piped, ResourceLimits, piped_command};
use super::{ProcessSandbox, kill_group, spawn_on_spawner};

/// Address space a server may map. JavaScript engines reserve tens of GiB of address space
/// without touching it, so the Bash limit (16 GiB) would stop `node` from starting.
const SERVER_ADDRESS_SPACE: u64 = 256 << 30;

/// One program to start.
#[derive(Debug, Clone)]
pub(crate) struct ServerSpec {
    /// Absolute program path.
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) cwd: PathBuf,
    /// The whole environment (nothing is inherited).
    pub(crate) env: Vec<(String, String)>,
    /// Directories readable besides the system ones.
    pub(crate) read_dirs: Vec<PathBuf>,
    /// Directories readable and writable.
    pub(crate) write_dirs: Vec<PathBuf>,
    /// Keep the host's network (otherwise a fresh namespace with only its own loopback).
    pub(crate) network: bool,
    pub(crate) sandbox: ProcessSandbox,
}

/// A running program; its group is killed when this is dropped.
pub(crate) struct ServerProcess {
    /// Its process id (and group id).
    pub(crate) pid: i32,
    child: std::process::Child,
}

/// The program's standard streams.
pub(crate) struct Pipes {
    pub(crate) stdin: std::process::ChildStdin,
    pub(crate) stdout: std::process::ChildStdout,
    pub(crate) stderr: std::process::ChildStderr,
}

impl ServerProcess {
    /// Kills the program's whole group and reaps it.
    pub(crate) fn kill(&mut self) {
        kill_group(self.pid);
        let _ = self.child.wait();
    }

    /// The exit status once it has ended.
    pub(crate) fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `spec`. `Err` says why it could not start.
pub(crate) fn start(spec: ServerSpec) -> Result<(ServerProcess, Pipes), String> {
    let command = piped_command(&Piped {
        program: &spec.program,
        args: &spec.args,
        env: &spec.env,
        cwd: &spec.cwd,
        read_dirs: &spec.read_dirs,
        write_dirs: &spec.write_dirs,
        network: spec.network,
        sandbox: spec.sandbox,
        limits: ResourceLimits {
            address_space: SERVER_ADDRESS_SPACE,
            cpu_seconds: libc::RLIM_INFINITY,
            ..ResourceLimits::default()
        },
    })?;
    let mut child = spawn_on_spawner(command)
        .map_err(|error| format!("cannot start {}: {error}", spec.program.display()))?;
    let pid = i32::try_from(child.id()).unwrap_or(0);
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        kill_group(pid);
        let _ = child.wait();
        return Err("the server's pipes could not be opened".to_owned());
    };
    Ok((
        ServerProcess { pid, child },
        Pipes {
            stdin,
            stdout,
            stderr,
        },
    ))
}
