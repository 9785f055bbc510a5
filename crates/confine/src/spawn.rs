//! Starting a confined command without copying the host (issue 31, point 7): the child is made
//! with `clone(CLONE_VM)`, sharing the host's memory until it executes, instead of `std`'s
//! `fork`, which copies the page tables of the whole host (milliseconds for a host with a few
//! hundred MiB resident, paid again when the copy is torn down).
//!
//! The child runs on a stack of its own in the host's memory, so it obeys the rules of a forked
//! child and more: only system calls on data prepared before (`Prepared`, `Image`), signals
//! blocked until every handler the host installed is reset (a host handler must never run on
//! shared memory), and nothing written that the host reads, except one pipe: it sends the
//! `errno` of a failed step there and exits, or executes the command, which closes the pipe.
//! Where the command is the first process of a PID namespace (`first.rs`), the child stays as
//! its waiter on that stack; the stack is unmapped only after the waiter is reaped.

use std::ffi::{CString, c_void};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::process::ExitStatusExt as _;

use super::confine::{Prepared, check};

/// The child's stack: its steps are system calls; a waiter only waits.
const STACK_BYTES: usize = 256 << 10;
/// The guard page at the stack's low end.
const GUARD_BYTES: usize = 4096;

/// A started child: its process id, the stack its waiter may still run on, and its status once
/// reaped (after which its id may be someone else's, so it is never waited on or signalled again).
#[derive(Debug)]
pub struct Spawned {
    pid: libc::pid_t,
    stack: Option<Stack>,
    status: Option<std::process::ExitStatus>,
}

/// An anonymous mapping a cloned process runs on, unmapped only by its owner once that process
/// no longer runs on it (reaped, or executed).
#[derive(Debug)]
pub(super) struct Stack(*mut c_void);

// SAFETY: the mapping is only unmapped by its owner, after the process using it stopped using it.
unsafe impl Send for Stack {}

impl Stack {
    /// Maps a stack of `STACK_BYTES` whose lowest page is a guard: an overflow faults instead
    /// of writing over the host's memory. Async-signal-safe.
    pub(super) fn map() -> std::io::Result<Self> {
        // SAFETY: an anonymous private mapping; nothing else refers to it yet.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                STACK_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            );
            if base == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            if libc::mprotect(base, GUARD_BYTES, libc::PROT_NONE) == -1 {
                let error = std::io::Error::last_os_error();
                libc::munmap(base, STACK_BYTES);
                return Err(error);
            }
            Ok(Self(base))
        }
    }

    /// Where a process starts using it (stacks grow down).
    pub(super) fn top(&self) -> *mut c_void {
        // SAFETY: one past the end of the mapping, which `clone` takes as the stack pointer.
        unsafe { self.0.cast::<u8>().add(STACK_BYTES).cast() }
    }

    /// Unmaps it; the caller knows no process runs on it any more. Async-signal-safe.
    pub(super) fn unmap(self) {
        // SAFETY: the mapping `map` made, used by nobody now.
        unsafe { libc::munmap(self.0, STACK_BYTES) };
    }
}

/// Every signal blocked in the calling thread until dropped (then the mask it had): a child
/// cloned with `CLONE_VM` shares the thread's memory and `errno`, so no host handler may run,
/// and no call the thread makes may be interrupted, while the child uses them.
pub(super) struct SignalsBlocked(libc::sigset_t);

impl SignalsBlocked {
    /// Blocks every signal in this thread.
    pub(super) fn new() -> Self {
        // SAFETY: the sets are plain values filled by the calls.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut before: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
            Self(before)
        }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `new`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
    }
}

impl Spawned {
    /// The child's process id (also its process group).
    pub fn id(&self) -> u32 {
        u32::try_from(self.pid).unwrap_or(0)
    }

    /// The child's status if it has ended (reaped now or before), `None` while it runs.
    pub fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let mut status = 0;
        // SAFETY: waitpid on our own child, not reaped yet, without blocking.
        match unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) } {
            -1 => Err(std::io::Error::last_os_error()),
            0 => Ok(None),
            _ => Ok(Some(self.reaped(status))),
        }
    }

    /// Waits for the child to end (at once if it was reaped before).
    pub fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let mut status = 0;
        loop {
            // SAFETY: waitpid on our own child, not reaped yet.
            if unsafe { libc::waitpid(self.pid, &mut status, 0) } != -1 {
                break;
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
        Ok(self.reaped(status))
    }

    /// Kills the child's whole process group, unless the child was reaped: then its group has
    /// ended (a PID namespace dies with its init) and its number may be someone else's.
    pub fn kill_group(&self) {
        if self.status.is_none() {
            super::kill_group(self.pid);
        }
    }

    /// Records the status of the reaped child and frees its stack (nobody runs on it now).
    fn reaped(&mut self, status: libc::c_int) -> std::process::ExitStatus {
        if let Some(stack) = self.stack.take() {
            stack.unmap();
        }
        let status = std::process::ExitStatus::from_raw(status);
        self.status = Some(status);
        status
    }
}

/// What the child needs, on the spawning thread's stack until the child executed.
struct Launch<'a> {
    prepared: &'a Prepared,
    cwd: &'a CString,
    stdio: [libc::c_int; 3],
    error_fd: libc::c_int,
}

/// Starts `prepared`'s command (its `image`) in `cwd` with `stdio` as stdin, stdout and
/// stderr; returns once it executed, or with the error of the step that failed. Call it on the
/// spawner thread (`on_spawner`): the child dies with the thread that made it.
pub fn spawn(
    prepared: &Prepared,
    cwd: &std::path::Path,
    stdio: [&OwnedFd; 3],
) -> std::io::Result<Spawned> {
    use std::os::unix::ffi::OsStrExt as _;
    if prepared.image().is_none() {
        return Err(std::io::Error::other("no program to execute"));
    }
    let cwd = CString::new(cwd.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("the directory holds a NUL byte"))?;
    let last = std::io::Error::last_os_error;
    // SAFETY: system calls on memory this function owns; the child uses `launch` and `stack`
    // only until it executes or exits, which the pipe's end tells.
    unsafe {
        let mut pipe = [0; 2];
        if libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) == -1 {
            return Err(last());
        }
        // Every descriptor the child moves lives above the numbers it moves them to: a host
        // started with stdin, stdout or stderr closed could otherwise hand out 0, 1 or 2, and
        // one `dup2` would close what another still needs.
        let high = |fd: libc::c_int| {
            let moved = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10);
            libc::close(fd);
            moved
        };
        pipe = [high(pipe[0]), high(pipe[1])];
        let stdio = stdio.map(|fd| libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10));
        let close_stdio = || {
            for fd in stdio {
                if fd != -1 {
                    libc::close(fd);
                }
            }
        };
        if pipe.contains(&-1) || stdio.contains(&-1) {
            let error = last();
            for fd in pipe {
                if fd != -1 {
                    libc::close(fd);
                }
            }
            close_stdio();
            return Err(error);
        }
        let stack = match Stack::map() {
            Ok(stack) => stack,
            Err(error) => {
                libc::close(pipe[0]);
                libc::close(pipe[1]);
                close_stdio();
                return Err(error);
            }
        };
        let launch = Launch {
            prepared,
            cwd: &cwd,
            stdio,
            error_fd: pipe[1],
        };
        // The child starts with every signal blocked, so no handler of the host runs in it
        // before it has reset them; this thread keeps them blocked until the child is done
        // with what it shares, so its `read` below is never interrupted (the child writes
        // this thread's `errno`, which an interrupted `read` would then misreport).
        let blocked = SignalsBlocked::new();
        let pid = libc::clone(
            child,
            stack.top(),
            libc::CLONE_VM | libc::SIGCHLD,
            std::ptr::from_ref(&launch).cast_mut().cast(),
        );
        let cloned = last();
        libc::close(pipe[1]);
        close_stdio();
        if pid == -1 {
            drop(blocked);
            libc::close(pipe[0]);
            stack.unmap();
            return Err(cloned);
        }
        let mut code = [0u8; 4];
        let mut got = 0;
        while got < code.len() {
            let read = libc::read(pipe[0], code.as_mut_ptr().add(got).cast(), code.len() - got);
            if read <= 0 {
                break;
            }
            got += usize::try_from(read).unwrap_or(0);
        }
        drop(blocked);
        libc::close(pipe[0]);
        let mut spawned = Spawned {
            pid,
            stack: Some(stack),
            status: None,
        };
        if got == code.len() {
            // It exits right after sending: reap it and free its stack.
            let _ = spawned.wait();
            return Err(std::io::Error::from_raw_os_error(i32::from_ne_bytes(code)));
        }
        Ok(spawned)
    }
}

/// The child: resets signals, takes its stdio and directory, confines itself and executes.
extern "C" fn child(argument: *mut c_void) -> libc::c_int {
    // SAFETY: `argument` is the `Launch` on the spawning thread's stack, which waits on the
    // pipe until this process executes or exits.
    let launch = unsafe { &*argument.cast_const().cast::<Launch<'_>>() };
    let error = prepare(launch)
        .err()
        .unwrap_or_else(|| match launch.prepared.apply_in_child() {
            Err(error) => error,
            Ok(()) => match launch.prepared.image() {
                Some(image) => super::first::execute(image),
                None => std::io::Error::from_raw_os_error(libc::EINVAL),
            },
        });
    let code = error.raw_os_error().unwrap_or(libc::EINVAL).to_ne_bytes();
    // SAFETY: write and _exit on our own descriptor.
    unsafe {
        libc::write(launch.error_fd, code.as_ptr().cast(), code.len());
        libc::_exit(127)
    }
}

/// Signal handlers reset (those the host ignores stay ignored, as `std` leaves them, except
/// `SIGPIPE`, which Rust ignores for itself) and unblocked; stdio and directory taken.
fn prepare(launch: &Launch<'_>) -> std::io::Result<()> {
    // SAFETY: system calls on this process's own signal state and descriptors.
    unsafe {
        for signal in 1..=libc::SIGRTMAX() {
            let mut action: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut action) == 0
                && (action.sa_sigaction != libc::SIG_IGN || signal == libc::SIGPIPE)
                && action.sa_sigaction != libc::SIG_DFL
            {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        check(libc::sigprocmask(
            libc::SIG_SETMASK,
            &none,
            std::ptr::null_mut(),
        ))?;
        for (target, fd) in launch.stdio.iter().enumerate() {
            let target = libc::c_int::try_from(target).unwrap_or(0);
            if *fd == target {
                check(libc::fcntl(*fd, libc::F_SETFD, 0))?;
            } else {
                check(libc::dup2(*fd, target))?;
            }
        }
        check(libc::chdir(launch.cwd.as_ptr()))?;
    }
    Ok(())
}
