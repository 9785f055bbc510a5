//! The process sandbox (issue 31): how janua confines every child it starts (Bash commands,
//! command hooks, MCP servers, the agent runner, the browser). A child runs from a
//! `clone(CLONE_VM)` on one spawner thread (`spawn.rs`), in its own mount, IPC, PID and
//! (unless granted the host's) network namespaces, under a pivoted read-only root of its grants
//! (`root.rs`) with the rules' masks and read-only paths on top (`view.rs`), a minimal init
//! (`first.rs`), a private home (`home.rs`), seccomp (`syscalls.rs`), Landlock and resource
//! limits (`confine.rs`), its own `/proc` (`procfs.rs`); namespaces are made once per root and
//! joined (`shared.rs`). Output goes to a bounded spool (`spool.rs`); `server.rs` and
//! `oneshot.rs` run long-lived and one-shot piped children; `workers.rs` keeps the threads that
//! copy their output and wait for their exit.
//!
//! Architecture invariant: this crate confines and never decides. It depends on `janua-types`,
//! `libc`, `landlock` and `tempfile`: no wasmtime, no tokio, no permission engine. What the rules
//! mean for a child arrives as data (`janua_types::Enforceable` in [`view::ViewRules`]); which
//! commands may run at all is decided above it.
#![warn(missing_docs)]

mod confine;
mod error;
pub mod first;
pub mod home;
pub mod oneshot;
mod procfs;
pub mod root;
pub mod server;
pub mod shared;
pub mod spawn;
pub mod spool;
mod syscalls;
pub mod view;
pub mod workers;

use std::sync::{Mutex, OnceLock, mpsc};

pub use confine::{
    ChildSpec, Confinement, KernelSupport, PipedChild, ResourceLimits, SyscallProfile, Unavailable,
    close_inherited_descriptors, spawn_piped, spawn_with,
};
pub use error::ConfineError;
pub use spawn::Spawned;
pub use spool::{DEFAULT_OUTPUT_CAP, Spool};
pub use view::ViewRules;

/// Environment variables children inherit from the host (with `LC_*`); everything else is
/// dropped, so a secret in the host's environment never reaches a command.
pub const INHERITED_ENV: &[&str] = &["PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME"];
/// `PATH` when the host has none.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// How children are confined; the operator's choice, never a tool's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcessSandbox {
    /// Landlock and a fresh network namespace; without kernel support, refuse to run
    /// (`sandbox_unavailable`).
    #[default]
    Required,
    /// `--unsandboxed-process`: no Landlock and no namespace (environment scrubbing, limits and
    /// process-group kill still apply).
    Unsandboxed,
    /// Behave as on a kernel without Landlock or namespaces: every run is refused with
    /// `sandbox_unavailable`. For tests of that path.
    Unavailable,
}

/// Kills process group `group` (best effort: it may be gone).
pub fn kill_group(group: i32) {
    if group > 1 {
        // SAFETY: `kill` with a negative pid signals a process group; no memory is involved.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
}

/// Runs `job` on one long-lived thread, the spawner, and returns what it returned: children die
/// (`PR_SET_PDEATHSIG`) when the thread that made them ends, and this one lives as long as the
/// host.
pub fn on_spawner<T: Send + 'static>(
    job: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<T> {
    type Job = Box<dyn FnOnce() + Send>;
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let sender = SPAWNER.get_or_init(|| {
        let (sender, receiver) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("janua-spawner".into())
            .spawn(move || {
                for job in receiver {
                    job();
                }
            });
        if let Err(error) = spawned {
            tracing::error!("cannot start the process spawner thread: {error}");
        }
        Mutex::new(sender)
    });
    let (reply, answer) = mpsc::channel();
    let job: Job = Box::new(move || {
        let _ = reply.send(job());
    });
    sender
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .send(job)
        .map_err(|_| std::io::Error::other("the process spawner thread is gone"))?;
    answer
        .recv()
        .map_err(|_| std::io::Error::other("the process spawner thread is gone"))
}
