//! The command as the first process of its own PID namespace (issue 31, points 2 and 5).
//!
//! `unshare(CLONE_NEWPID)` only places the caller's next child in the new namespace, so the
//! child `std` forked (which made the namespaces) starts the command's first process itself and
//! stays outside as its waiter: it waits for it and ends as it ended, so the host's `wait` sees
//! the command's own status. When the first process ends, the kernel kills every process left in
//! the namespace: a command's leftovers die with its call.
//!
//! The first process is made with `clone(CLONE_VM | CLONE_VFORK)`, not `fork`: a fork would copy
//! the page tables of the whole host (a copy of which `std`'s child still holds), which costs
//! milliseconds for a host with a few hundred MiB resident. Sharing the waiter's memory, it may
//! not return into `std`'s exec, so it confines itself and calls `execve` with the program,
//! arguments and environment prepared here before fork. A failure before or at `execve` is sent
//! back to the waiter as an `errno`, which returns it to `std`, so the host's `spawn` fails with
//! it as it would for any other confinement step.

use std::ffi::{CString, c_void};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

/// What the first process executes, prepared before fork.
#[derive(Debug)]
pub(crate) struct Image {
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
    pub(crate) fn new(
        program: &Path,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<Self, String> {
        let nul = |what: &str| format!("{what} holds a NUL byte");
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

/// What the first process needs, on the waiter's stack while the waiter is suspended.
struct Start<'a> {
    image: &'a Image,
    confine: &'a dyn Fn() -> std::io::Result<()>,
    error_fd: libc::c_int,
}

/// Runs in `std`'s child after `unshare(CLONE_NEWPID)`: starts the first process, which runs
/// `confine` and then executes `image`, and waits for it outside the namespace, ending as it
/// ended. Returns only when the first process could not be started, confined or executed, with
/// the error `std` then reports to the host. Async-signal-safe: system calls only.
pub(crate) fn launch(image: &Image, confine: &dyn Fn() -> std::io::Result<()>) -> std::io::Error {
    let last = std::io::Error::last_os_error;
    // SAFETY: system calls on memory this function owns; the first process uses `start` and
    // `stack` only while this process is suspended (`CLONE_VFORK`) and leaves both at `execve`
    // or `_exit`.
    unsafe {
        let mut pipe = [0; 2];
        if libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) == -1 {
            return last();
        }
        let stack = match super::spawn::Stack::map() {
            Ok(stack) => stack,
            Err(error) => return error,
        };
        let start = Start {
            image,
            confine,
            error_fd: pipe[1],
        };
        let first = libc::clone(
            first_process,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::from_ref(&start).cast_mut().cast(),
        );
        if first == -1 {
            let error = last();
            stack.unmap();
            return error;
        }
        libc::close(pipe[1]);
        let mut code = [0u8; 4];
        let failed = libc::read(pipe[0], code.as_mut_ptr().cast(), code.len()) == 4;
        if failed {
            let mut status = 0;
            libc::waitpid(first, &mut status, 0);
        }
        // The first process executed or was reaped: its stack is free (in `spawn.rs`'s case
        // it lies in the host's memory, so it must not leak).
        stack.unmap();
        if failed {
            return std::io::Error::from_raw_os_error(i32::from_ne_bytes(code));
        }
        // The waiter holds nothing the command's readers wait on: not its output pipes, not
        // the pipe on which the host learns that the command was executed.
        close_all();
        // Nothing of the host's memory (which the waiter shares when `spawn.rs` made it) may
        // ever reach a core dump.
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        loop {
            let mut status = 0;
            if libc::waitpid(first, &mut status, 0) == -1 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                libc::_exit(127);
            }
            if libc::WIFEXITED(status) {
                libc::_exit(libc::WEXITSTATUS(status));
            }
            if libc::WIFSIGNALED(status) {
                let signal = libc::WTERMSIG(status);
                // A signal whose default action dumps core is reported as a shell would
                // (128 + its number), never raised here, where a dump would hold the host.
                if !DUMPS_CORE.contains(&signal) {
                    libc::signal(signal, libc::SIG_DFL);
                    libc::kill(libc::getpid(), signal);
                }
                libc::_exit(128 + signal);
            }
        }
    }
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

/// Closes every descriptor: one `close_range`, else each below the open-file limit (a host
/// whose seccomp profile refuses `close_range` must not keep a pipe open that the host waits
/// on). Async-signal-safe.
fn close_all() {
    // SAFETY: system calls on descriptor numbers only.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, libc::c_uint::MAX, 0u32) == 0 {
            return;
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let last = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            libc::c_int::try_from(limit.rlim_cur.min(1 << 20)).unwrap_or(1 << 20)
        } else {
            1 << 20
        };
        for fd in 0..last {
            libc::close(fd);
        }
    }
}

/// Executes `image`; returns only on failure, with its error. Async-signal-safe.
pub(crate) fn execute(image: &Image) -> std::io::Error {
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

/// The first process: dies with its waiter, confines itself, executes the command; on failure
/// sends the `errno` to the waiter.
extern "C" fn first_process(argument: *mut c_void) -> libc::c_int {
    // SAFETY: `argument` is the `Start` on the suspended waiter's stack (see `launch`).
    let start = unsafe { &*argument.cast_const().cast::<Start<'_>>() };
    // SAFETY: system calls on data prepared before fork.
    unsafe {
        let error = if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == -1 {
            std::io::Error::last_os_error()
        } else {
            match (start.confine)() {
                Err(error) => error,
                Ok(()) => execute(start.image),
            }
        };
        let code = error.raw_os_error().unwrap_or(libc::EINVAL).to_ne_bytes();
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
        assert!(error.contains("NUL"), "{error}");
    }
}
