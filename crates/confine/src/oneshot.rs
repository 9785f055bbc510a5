//! One confined program run with its own stdin, stdout and stderr: what a command hook needs
//! (JSON in on stdin, JSON out on stdout, a reason on stderr, meaning in the exit code).
//!
//! It uses the same confinement as Bash's commands (`confine.rs`: Landlock, a network namespace,
//! seccomp, rlimits, its own process group) with the directories the caller names, is started as
//! they are (`spawn.rs`: no copy of the host's memory, since hooks run on every call), and kills
//! the whole group at the deadline, when its caller gives up on it, and when the program ends.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::confine::{ChildSpec, PipedChild, ResourceLimits, spawn_piped};
use super::kill_group;

/// How long to wait for the pipes to drain after the program's group is gone.
const DRAIN: Duration = Duration::from_millis(500);
/// How often a waiting run looks at its `stop` flag.
const POLL: Duration = Duration::from_millis(20);

/// One program to run.
pub struct OneShot {
    /// The program, its environment and what it may reach.
    pub child: ChildSpec,
    /// Written to the program's stdin, which is then closed.
    pub stdin: Vec<u8>,
    /// The longest it may run; then its group is killed.
    pub timeout: Duration,
    /// Bytes kept of stdout and of stderr each; the rest is read and dropped.
    pub output_cap: usize,
    /// Set when nobody waits for the result any more (see [`StopOnDrop`]): the group is killed.
    pub stop: Arc<AtomicBool>,
}

/// Sets its flag when dropped: held by the future awaiting a run, so that dropping that future
/// (its caller timed out or was cancelled) kills the program instead of leaving it running.
pub struct StopOnDrop(pub Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// How the run ended.
#[derive(Debug, Default)]
pub struct OneShotOutput {
    /// The exit status; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// It ran past its timeout (or was stopped) and was killed.
    pub timed_out: bool,
    /// Its stdout, up to the cap.
    pub stdout: Vec<u8>,
    /// Its stderr, up to the cap.
    pub stderr: Vec<u8>,
}

/// Runs `spec` to completion (or its deadline). `Err` means it could not start.
pub fn run(spec: OneShot) -> Result<OneShotOutput, super::ConfineError> {
    let PipedChild {
        mut process,
        mut stdin,
        stdout,
        stderr,
    } = spawn_piped(
        &spec.child,
        ResourceLimits {
            cpu_seconds: spec.timeout.as_secs().saturating_add(5),
            ..ResourceLimits::default()
        },
    )?;
    let group = i32::try_from(process.id()).unwrap_or(0);
    let input = spec.stdin;
    // A program that never reads must not block the host: the writer has its own thread.
    let _ = super::workers::run(move || {
        let _ = stdin.write_all(&input);
    });
    let stdout = reader(stdout, spec.output_cap);
    let stderr = reader(stderr, spec.output_cap);
    let (sender, exited) = mpsc::channel();
    let waiter = super::workers::run(move || {
        let _ = sender.send(process.wait());
    });
    if let Err(error) = waiter {
        kill_group(group);
        return Err(super::ConfineError::host(
            "start a thread to wait for the program",
            error,
        ));
    }
    let until = Instant::now().checked_add(spec.timeout);
    let (status, timed_out) = loop {
        let left = until.map_or(POLL, |until| {
            until.saturating_duration_since(Instant::now())
        });
        match exited.recv_timeout(left.min(POLL)) {
            Ok(status) => break (status.ok(), false),
            Err(mpsc::RecvTimeoutError::Timeout)
                if !left.is_zero() && !spec.stop.load(Ordering::Relaxed) => {}
            Err(_) => {
                kill_group(group);
                break (exited.recv_timeout(DRAIN).ok().and_then(Result::ok), true);
            }
        }
    };
    // Leftovers of the program die with it.
    kill_group(group);
    Ok(OneShotOutput {
        exit_code: status.and_then(|status| status.code()),
        timed_out,
        stdout: stdout.recv_timeout(DRAIN).unwrap_or_default(),
        stderr: stderr.recv_timeout(DRAIN).unwrap_or_default(),
    })
}

/// Reads `pipe` to its end on a thread, keeping at most `cap` bytes.
fn reader<R: std::io::Read + Send + 'static>(mut pipe: R, cap: usize) -> mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
    let _ = super::workers::run(move || {
        let mut kept = Vec::new();
        let mut buffer = [0u8; 8192];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buffer[..read.min(room)]);
                }
            }
        }
        let _ = sender.send(kept);
    });
    receiver
}
