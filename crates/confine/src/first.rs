//! The command in its own PID namespace (issue 31, points 2 and 5).
//!
//! `unshare(CLONE_NEWPID)` only places the caller's next child in the new namespace, so the
//! child that made the namespaces starts the namespace's first process itself and stays outside
//! as the waiter: it waits and ends as the command ended, so the host's `wait` sees the
//! command's own status. The first process is a minimal init (as bubblewrap keeps one): it
//! confines itself, starts the command as process 2, reaps what is orphaned, and ends when the
//! command ends, whereupon the kernel kills every process left in the namespace (a command's
//! leftovers die with its call). The command is not the init, so the signals it sends itself
//! act as outside a namespace (`kill $$` ends it, `abort` aborts it).
//!
//! Both are made with `clone(CLONE_VM)`, not `fork`: a fork would copy the page tables of the
//! whole host, which costs milliseconds for a host with a few hundred MiB resident. Sharing
//! memory, they may not return into `std`'s exec, so the command calls `execve` with the program,
//! arguments and environment prepared here before fork. A failure before or at `execve` is sent
//! back to the waiter as an `errno`, which returns it to its caller, so the host's spawn fails
//! with it as it would for any other confinement step. A signal that ended the command reaches
//! the waiter on a second pipe (the init cannot die of it).

use std::ffi::{CString, c_void};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

/// What the first process executes, prepared before fork.
#[derive(Debug)]
pub struct Image {
    program: CString,
    /// Owns what `argv` points into.
    _arguments: Vec<CString>,
    /// Owns what `envp` points into.
    _environment: Vec<CString>,
    argv: Pointers,
    envp: Pointers,
}

/// A NUL-terminated array of pointers into the strings its [`Image`] owns.
#[derive(Debug)]
struct Pointers(Vec<*const libc::c_char>);

// SAFETY: the pointers point into `CString`s owned by the same `Image`, whose heap buffers never
// move or change; nothing writes through them.
unsafe impl Send for Pointers {}
// SAFETY: as above; shared reads only.
unsafe impl Sync for Pointers {}

impl Image {
    /// `program` run with `args` (after `argv[0]`, the program itself) and exactly `env`.
    pub fn new(
        program: &Path,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<Self, super::ConfineError> {
        let nul = super::ConfineError::Nul;
        let program_text =
            CString::new(program.as_os_str().as_bytes()).map_err(|_| nul("the program path"))?;
        let arguments = std::iter::once(Ok(program_text.clone()))
            .chain(
                args.iter()
                    .map(|arg| CString::new(arg.as_bytes()).map_err(|_| nul("an argument"))),
            )
            .collect::<Result<Vec<_>, _>>()?;
        let environment = env
            .iter()
            .map(|(name, value)| {
                CString::new(format!("{name}={value}")).map_err(|_| nul("an environment variable"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pointers = |strings: &[CString]| {
            Pointers(
                strings
                    .iter()
                    .map(|text| text.as_ptr())
                    .chain([std::ptr::null()])
                    .collect(),
            )
        };
        Ok(Self {
            argv: pointers(&arguments),
            envp: pointers(&environment),
            program: program_text,
            _arguments: arguments,
            _environment: environment,
        })
    }
}

/// What the namespace's init and the command need, on the waiter's stack: the waiter stays in
/// [`launch`] until the init ends.
struct Start<'a> {
    image: &'a Image,
    /// The init's own steps (limits, root, view), before it starts the command.
    confine: &'a dyn Fn() -> std::io::Result<()>,
    /// The command's last steps before it executes (capabilities, seccomp, Landlock).
    restrict: &'a dyn Fn() -> std::io::Result<()>,
    /// Where a failure before the command executes is sent (close-on-exec).
    error_fd: libc::c_int,
    /// Where the init reports the signal that ended the command (close-on-exec).
    status_fd: libc::c_int,
    /// The top of the command's stack, mapped by the waiter: the init, under the command's
    /// address-space limit, could not map one in a host's address space.
    command_stack: *mut c_void,
}

/// Runs in the child that made the namespaces (after `unshare(CLONE_NEWPID)`): starts the
/// namespace's first process, a minimal init that confines itself, starts the command as
/// process 2 and reaps whatever is orphaned until the command ends, so the command behaves as
/// outside a namespace (`kill $$` ends it, `abort` aborts it); this process waits outside and
/// ends as the command ended. Returns only when the command could not be started, confined or
/// executed, with the error then reported to the host. Async-signal-safe: system calls only.
///
/// `confine` runs in the init, `restrict` in the command only: the init shares the host's memory
/// (or the waiter's copy of it), so it must stay outside the command's Landlock domain, where
/// the kernel refuses the command `ptrace`, `process_vm_writev` and `pidfd_getfd` on it.
pub fn launch(
    image: &Image,
    confine: &dyn Fn() -> std::io::Result<()>,
    restrict: &dyn Fn() -> std::io::Result<()>,
) -> std::io::Error {
    let last = std::io::Error::last_os_error;
    // SAFETY: system calls on memory this function owns. The init runs on `init_stack` and
    // reads `start` until it ends; this function returns or exits only after reaping it. The
    // command runs on `command_stack` while the init is suspended (`CLONE_VFORK`) and leaves it
    // at `execve` or `_exit`.
    unsafe {
        let mut errors = [0; 2];
        let mut statuses = [0; 2];
        if libc::pipe2(errors.as_mut_ptr(), libc::O_CLOEXEC) == -1
            || libc::pipe2(statuses.as_mut_ptr(), libc::O_CLOEXEC) == -1
        {
            return last();
        }
        let (init_stack, command_stack) =
            match (super::spawn::Stack::map(), super::spawn::Stack::map()) {
                (Ok(init), Ok(command)) => (init, command),
                (Err(error), _) | (_, Err(error)) => return error,
            };
        let start = Start {
            image,
            confine,
            restrict,
            error_fd: errors[1],
            status_fd: statuses[1],
            command_stack: command_stack.top(),
        };
        let init = libc::clone(
            init_process,
            init_stack.top(),
            libc::CLONE_VM | libc::SIGCHLD,
            std::ptr::from_ref(&start).cast_mut().cast(),
        );
        if init == -1 {
            let error = last();
            init_stack.unmap();
            command_stack.unmap();
            return error;
        }
        libc::close(errors[1]);
        libc::close(statuses[1]);
        // Until the command executed (its copy closes) and the init closed its own.
        let mut code = [0u8; 4];
        let failed = libc::read(errors[0], code.as_mut_ptr().cast(), code.len()) == 4;
        if failed {
            let mut status = 0;
            libc::waitpid(init, &mut status, 0);
            // Both stacks are free (in `spawn.rs`'s case they lie in the host's memory).
            init_stack.unmap();
            command_stack.unmap();
            return std::io::Error::from_raw_os_error(i32::from_ne_bytes(code));
        }
        command_stack.unmap();
        // The waiter holds nothing the command's readers wait on: not its output pipes, not
        // the pipe on which the host learns that the command was executed.
        close_all_but(statuses[0]);
        // Nothing of the host's memory (which the waiter shares when `spawn.rs` made it) may
        // ever reach a core dump: a signal that would dump the waiter ends it plainly instead.
        // (Not `PR_SET_DUMPABLE`, which belongs to the memory, so it would make the host itself
        // non-dumpable: its `/proc/self` files then belong to root, and a host that is not root
        // could write no user namespace's id maps after its first command.)
        for signal in DUMPS_CORE {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = end_plainly as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigfillset(&mut action.sa_mask);
            libc::sigaction(*signal, &action, std::ptr::null_mut());
        }
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        let mut status = 0;
        while libc::waitpid(init, &mut status, 0) == -1 {
            if *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        init_stack.unmap();
        let mut signal = [0u8; 4];
        if libc::read(statuses[0], signal.as_mut_ptr().cast(), signal.len()) == 4 {
            let signal = libc::c_int::from_ne_bytes(signal);
            // A signal whose default action dumps core is reported as a shell would (128 +
            // its number), never raised here, where a dump would hold the host.
            if !DUMPS_CORE.contains(&signal) {
                libc::signal(signal, libc::SIG_DFL);
                libc::kill(libc::getpid(), signal);
            }
            libc::_exit(128 + signal);
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        libc::_exit(128 + libc::WTERMSIG(status))
    }
}

/// The waiter's handler for a signal that would dump it: ends it as a shell reports a signal.
extern "C" fn end_plainly(signal: libc::c_int) {
    // SAFETY: `_exit` is async-signal-safe and touches no shared memory.
    unsafe { libc::_exit(128 + signal) }
}

/// Signals whose default action dumps core.
const DUMPS_CORE: &[libc::c_int] = &[
    libc::SIGQUIT,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGSEGV,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGSYS,
];

/// Closes every descriptor but `keep`: `close_range` around it, else each below the open-file
/// limit (a host whose seccomp profile refuses `close_range` must not keep a pipe open that the
/// host waits on). Async-signal-safe.
fn close_all_but(keep: libc::c_int) {
    let keep = libc::c_uint::try_from(keep).unwrap_or(libc::c_uint::MAX);
    // SAFETY: system calls on descriptor numbers only.
    unsafe {
        let below = keep == 0 || libc::syscall(libc::SYS_close_range, 0u32, keep - 1, 0u32) == 0;
        let above = keep == libc::c_uint::MAX
            || libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0u32) == 0;
        if below && above {
            return;
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let last = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            libc::c_uint::try_from(limit.rlim_cur.min(1 << 20)).unwrap_or(1 << 20)
        } else {
            1 << 20
        };
        for fd in (0..last).filter(|fd| *fd != keep) {
            libc::close(libc::c_int::try_from(fd).unwrap_or(-1));
        }
    }
}

/// Executes `image`; returns only on failure, with its error. Async-signal-safe.
pub fn execute(image: &Image) -> std::io::Error {
    // SAFETY: NUL-terminated strings and NULL-terminated pointer arrays owned by `image`.
    unsafe {
        libc::execve(
            image.program.as_ptr(),
            image.argv.0.as_ptr(),
            image.envp.0.as_ptr(),
        );
    }
    std::io::Error::last_os_error()
}

/// The namespace's init: dies with its waiter, confines itself, starts the command, then reaps
/// every child until the command ends and ends with it (the kernel then kills what is left),
/// reporting a signal that ended the command on the status pipe. On failure it sends the
/// `errno` to the waiter.
extern "C" fn init_process(argument: *mut c_void) -> libc::c_int {
    // SAFETY: `argument` is the `Start` on the waiter's stack, which outlives this process.
    let start = unsafe { &*argument.cast_const().cast::<Start<'_>>() };
    let status_fd = start.status_fd;
    // SAFETY: system calls on data prepared before fork.
    unsafe {
        let started = if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == -1 {
            Err(std::io::Error::last_os_error())
        } else {
            (start.confine)().and_then(|()| {
                let command = libc::clone(
                    command_process,
                    start.command_stack,
                    libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                    argument,
                );
                if command == -1 {
                    Err(std::io::Error::last_os_error())
                } else {
                    Ok(command)
                }
            })
        };
        let command = match started {
            Ok(command) => command,
            Err(error) => {
                let code = error.raw_os_error().unwrap_or(libc::EINVAL).to_ne_bytes();
                libc::write(start.error_fd, code.as_ptr().cast(), code.len());
                libc::_exit(127)
            }
        };
        // The command executed (or sent its error and exited): from here on nothing of
        // `start` is read, and nothing the command's readers wait on is held.
        close_all_but(status_fd);
        loop {
            let mut status = 0;
            let ended = libc::waitpid(-1, &mut status, 0);
            if ended == -1 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                libc::_exit(127);
            }
            if ended != command {
                continue;
            }
            if libc::WIFSIGNALED(status) {
                let signal = libc::WTERMSIG(status).to_ne_bytes();
                libc::write(status_fd, signal.as_ptr().cast(), signal.len());
                libc::_exit(0);
            }
            libc::_exit(libc::WEXITSTATUS(status));
        }
    }
}

/// The command: executes; on failure sends the `errno` to the waiter.
extern "C" fn command_process(argument: *mut c_void) -> libc::c_int {
    // SAFETY: `argument` is the `Start` on the waiter's stack; the init that made this process
    // is suspended until it executes or exits.
    let start = unsafe { &*argument.cast_const().cast::<Start<'_>>() };
    let error = match (start.restrict)() {
        Ok(()) => execute(start.image),
        Err(error) => error,
    };
    let code = error.raw_os_error().unwrap_or(libc::EINVAL).to_ne_bytes();
    // SAFETY: write and _exit on our own descriptor.
    unsafe {
        libc::write(start.error_fd, code.as_ptr().cast(), code.len());
        libc::_exit(127)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_holds_the_program_as_argv0_and_refuses_nul_bytes() {
        let image = Image::new(
            Path::new("/bin/bash"),
            &["-c".into(), "true".into()],
            &[("PATH".into(), "/usr/bin".into())],
        )
        .unwrap();
        assert_eq!(image.argv.0.len(), 4);
        assert!(image.argv.0[3].is_null() && image.envp.0[1].is_null());
        // SAFETY: the pointers point into strings `image` owns.
        let first = unsafe { std::ffi::CStr::from_ptr(image.argv.0[0]) };
        assert_eq!(first.to_bytes(), b"/bin/bash");
        // SAFETY: as above.
        let variable = unsafe { std::ffi::CStr::from_ptr(image.envp.0[0]) };
        assert_eq!(variable.to_bytes(), b"PATH=/usr/bin");
        let error = Image::new(Path::new("/bin/sh"), &["a\0b".into()], &[]).unwrap_err();
        assert!(error.to_string().contains("NUL"), "{error}");
    }
}
