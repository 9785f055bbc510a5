//! A long-lived confined program with pipes on stdin, stdout and stderr: what an MCP stdio server
//! needs.
//!
//! It uses the same confinement as Bash's commands and command hooks (`confine.rs`: Landlock, a
//! network namespace unless the network is granted, seccomp, rlimits, its own process group, death
//! with the host), minus the CPU-seconds limit a server that lives for the session cannot have.
//! Dropping the [`ServerProcess`] kills the whole group.

use super::confine::{ChildSpec, PipedChild, ResourceLimits, spawn_piped};
use super::spawn::Spawned;

/// Address space a server may map. JavaScript engines reserve tens of GiB of address space
/// without touching it, so the Bash limit (16 GiB) would stop `node` from starting.
const SERVER_ADDRESS_SPACE: u64 = 256 << 30;

/// A running program; its group is killed when this is dropped.
pub struct ServerProcess {
    child: Spawned,
}

/// The program's standard streams.
pub struct Pipes {
    /// The host's end of its stdin.
    pub stdin: std::io::PipeWriter,
    /// The host's end of its stdout.
    pub stdout: std::io::PipeReader,
    /// The host's end of its stderr.
    pub stderr: std::io::PipeReader,
}

impl ServerProcess {
    /// Kills the program's whole group and reaps it.
    pub fn kill(&mut self) {
        self.child.kill_group();
        let _ = self.child.wait();
    }

    /// The exit status once it has ended.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `spec`. `Err` says why it could not start.
pub fn start(spec: ChildSpec) -> Result<(ServerProcess, Pipes), super::ConfineError> {
    let PipedChild {
        process,
        stdin,
        stdout,
        stderr,
    } = spawn_piped(
        &spec,
        ResourceLimits {
            address_space: SERVER_ADDRESS_SPACE,
            cpu_seconds: libc::RLIM_INFINITY,
            ..ResourceLimits::default()
        },
    )?;
    Ok((
        ServerProcess { child: process },
        Pipes {
            stdin,
            stdout,
            stderr,
        },
    ))
}
