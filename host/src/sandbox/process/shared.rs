//! The namespaces a set of grants makes once and its commands share (issue 31, point 2).
//!
//! A fresh network namespace costs about half a millisecond to make (and more to tear down,
//! in the kernel's background), and the root of the grants about thirty mounts. Both depend only
//! on the grants, not on the command, so they are made once per root plan (`root.rs`): a
//! short-lived maker process unshares a user namespace (on a host that is not root), a network
//! namespace with its loopback up and a mount namespace, builds the root there and hands the
//! host the three namespaces as descriptors. Each command then joins them with `setns` and
//! unshares its own mount, IPC and PID namespaces beneath (a copy of the shared root, cheap), so
//! the view of the rules (`view.rs`), its IPC objects and its processes stay its own and die
//! with it, as before.
//!
//! What the commands of one set of grants do share is the loopback: a server a background task
//! starts is reachable from the next command, as on the host. The plan holds the session's own
//! temporary directory, so two sessions never share one; a session drops its namespaces when it
//! ends ([`forget`]), and the kernel frees them when the last command in them is gone.
//!
//! The maker's root is built by the first process of a PID namespace of its own, so the root
//! holds a `proc` of that (empty) namespace: on a host that is not root, the kernel lets a command
//! mount its own `proc` only where one is visible already.

use std::collections::VecDeque;
use std::ffi::{CStr, c_void};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::sync::{Arc, Mutex, OnceLock};

use super::root::{RootIdentity, RootPlan};
use super::spawn::Stack;

/// Sets of namespaces kept at once; the oldest is dropped past this (its commands keep it alive).
const KEPT: usize = 16;

/// A user (on a non-root host), mount and network namespace holding one root of the grants.
#[derive(Debug)]
pub(crate) struct SharedNamespaces {
    user: Option<OwnedFd>,
    mount: OwnedFd,
    network: OwnedFd,
}

/// The namespaces kept, newest last.
type Kept = VecDeque<(RootIdentity, Arc<SharedNamespaces>)>;

fn kept() -> &'static Mutex<Kept> {
    static KEPT_NAMESPACES: OnceLock<Mutex<Kept>> = OnceLock::new();
    KEPT_NAMESPACES.get_or_init(Mutex::default)
}

/// The shared namespaces for `plan`, made now unless kept from an earlier command with the same
/// plan over the same directories. `user_maps` are the id maps of a non-root host.
pub(crate) fn for_plan(
    plan: &RootPlan,
    user_maps: Option<&[(std::ffi::CString, std::ffi::CString); 3]>,
) -> std::io::Result<Arc<SharedNamespaces>> {
    let identity = plan.identity();
    let lock = || kept().lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some((_, shared)) = lock().iter().find(|(kept, _)| *kept == identity) {
        return Ok(Arc::clone(shared));
    }
    let shared = Arc::new(make(plan, user_maps)?);
    let mut kept = lock();
    if kept.len() >= KEPT {
        kept.pop_front();
    }
    kept.push_back((identity, Arc::clone(&shared)));
    Ok(shared)
}

/// Drops the namespaces of every plan that writes `dir` (a session's temporary directory, when
/// the session ends).
pub(crate) fn forget(dir: &std::path::Path) {
    kept()
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .retain(|(identity, _)| !identity.writes(dir));
}

impl SharedNamespaces {
    /// Joins the namespaces, then unshares the command's own mount, IPC and PID namespaces
    /// beneath them; the working directory is then the shared root's `/` until [`enter`]. Runs
    /// in the child that waits for the command. Async-signal-safe.
    pub(crate) fn join(&self) -> std::io::Result<()> {
        // SAFETY: `setns` and `unshare` on descriptors this value owns.
        unsafe {
            if let Some(user) = &self.user {
                super::confine::check(libc::setns(user.as_raw_fd(), libc::CLONE_NEWUSER))?;
            }
            super::confine::check(libc::setns(self.mount.as_raw_fd(), libc::CLONE_NEWNS))?;
            super::confine::check(libc::setns(self.network.as_raw_fd(), libc::CLONE_NEWNET))?;
            super::confine::check(libc::unshare(
                libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWPID,
            ))
        }
    }
}

/// Gives the command's PID namespace its own `proc` and enters `cwd`. Runs in that namespace's
/// first process, after [`SharedNamespaces::join`]. Where the kernel refuses a fresh `proc` (a
/// container masking parts of the host's), the root's stays: the host's, as `root.rs` bound it,
/// which Landlock keeps the command from opening. (The root's `/dev/shm` is the session's, but
/// Landlock refuses it to every command.) Async-signal-safe.
pub(crate) fn enter(cwd: &CStr) -> std::io::Result<()> {
    // SAFETY: system calls on NUL-terminated static strings and `cwd`.
    unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        );
        super::confine::check(libc::chdir(cwd.as_ptr()))
    }
}

/// What the maker and the first process of its PID namespace read, on the host's stack until
/// the maker ended.
struct Make<'a> {
    plan: &'a RootPlan,
    user_maps: Option<&'a [(std::ffi::CString, std::ffi::CString); 3]>,
    /// The maker sends 0 or the `errno` of the step that failed here.
    result_write: libc::c_int,
    result_read: libc::c_int,
    /// The maker holds its namespaces until the host closes the other end.
    hold_read: libc::c_int,
    hold_write: libc::c_int,
    init_stack: *mut c_void,
}

/// Makes the namespaces in a maker process cloned with `CLONE_VM` (no copy of the host's page
/// tables), opens them from the host's side and lets the maker end.
fn make(
    plan: &RootPlan,
    user_maps: Option<&[(std::ffi::CString, std::ffi::CString); 3]>,
) -> std::io::Result<SharedNamespaces> {
    let last = std::io::Error::last_os_error;
    let maker_stack = Stack::map()?;
    let init_stack = match Stack::map() {
        Ok(stack) => stack,
        Err(error) => {
            maker_stack.unmap();
            return Err(error);
        }
    };
    let close_all = |fds: &[libc::c_int]| {
        for fd in fds {
            // SAFETY: descriptors made below, each closed once.
            unsafe { libc::close(*fd) };
        }
    };
    let mut result = [-1; 2];
    let mut hold = [-1; 2];
    // SAFETY: pipe2 fills the arrays.
    let piped = unsafe {
        libc::pipe2(result.as_mut_ptr(), libc::O_CLOEXEC) != -1
            && libc::pipe2(hold.as_mut_ptr(), libc::O_CLOEXEC) != -1
    };
    if !piped {
        let error = last();
        close_all(
            &[result, hold]
                .concat()
                .into_iter()
                .filter(|fd| *fd != -1)
                .collect::<Vec<_>>(),
        );
        maker_stack.unmap();
        init_stack.unmap();
        return Err(error);
    }
    let make = Make {
        plan,
        user_maps,
        result_write: result[1],
        result_read: result[0],
        hold_read: hold[0],
        hold_write: hold[1],
        init_stack: init_stack.top(),
    };
    // SAFETY: the maker runs on `maker_stack` and reads `make` until it ends, which this
    // function waits for before both go away. Every signal stays blocked in this thread while
    // the maker shares it (the maker writes this thread's `errno`), and the maker keeps them
    // blocked: no host handler ever runs on shared memory.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
        let maker = libc::clone(
            maker_process,
            maker_stack.top(),
            libc::CLONE_VM | libc::SIGCHLD,
            std::ptr::from_ref(&make).cast_mut().cast(),
        );
        let cloned = last();
        close_all(&[result[1], hold[0]]);
        let opened = if maker == -1 {
            Err(cloned)
        } else {
            let mut code = [0u8; 4];
            let got = libc::read(result[0], code.as_mut_ptr().cast(), code.len());
            match (got, i32::from_ne_bytes(code)) {
                (4, 0) => open(maker, user_maps.is_some()),
                (4, errno) => Err(std::io::Error::from_raw_os_error(errno)),
                _ => Err(std::io::Error::other(
                    "the process making the shared namespaces ended early",
                )),
            }
        };
        // The maker ends when it sees this end closed.
        close_all(&[result[0], hold[1]]);
        if maker != -1 {
            let mut status = 0;
            while libc::waitpid(maker, &mut status, 0) == -1
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
            }
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        maker_stack.unmap();
        init_stack.unmap();
        opened
    }
}

/// Opens the maker's namespaces, while it holds them.
fn open(maker: libc::pid_t, with_user: bool) -> std::io::Result<SharedNamespaces> {
    let namespace = |name: &str| -> std::io::Result<OwnedFd> {
        Ok(std::fs::File::open(format!("/proc/{maker}/ns/{name}"))?.into())
    };
    Ok(SharedNamespaces {
        user: with_user.then(|| namespace("user")).transpose()?,
        mount: namespace("mnt")?,
        network: namespace("net")?,
    })
}

/// The maker: unshares the namespaces, brings the loopback up, has the root built by the first
/// process of a new PID namespace, reports, then holds the namespaces until the host has them.
extern "C" fn maker_process(argument: *mut c_void) -> libc::c_int {
    // SAFETY: `argument` is the `Make` on the host's stack, which outlives this process.
    let make = unsafe { &*argument.cast_const().cast::<Make<'_>>() };
    // SAFETY: system calls on data prepared before the clone.
    unsafe {
        libc::close(make.result_read);
        libc::close(make.hold_write);
        let code = match build(make) {
            Ok(()) => 0,
            Err(error) => error.raw_os_error().unwrap_or(libc::EINVAL),
        };
        let code = code.to_ne_bytes();
        libc::write(make.result_write, code.as_ptr().cast(), code.len());
        let mut byte = 0u8;
        // Returns at end of file: the host opened the namespaces, or gave up.
        libc::read(make.hold_read, std::ptr::from_mut(&mut byte).cast(), 1);
        libc::_exit(0)
    }
}

/// The maker's steps. Async-signal-safe.
fn build(make: &Make<'_>) -> std::io::Result<()> {
    use super::confine::check;
    // SAFETY: system calls on data prepared before the clone.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWPID;
        if make.user_maps.is_some() {
            flags |= libc::CLONE_NEWUSER;
        }
        check(libc::unshare(flags))?;
        if let Some(maps) = make.user_maps {
            super::confine::write_user_maps(maps)?;
        }
        super::confine::loopback_up()?;
        let init = libc::clone(
            root_process,
            make.init_stack,
            libc::CLONE_VM | libc::SIGCHLD,
            std::ptr::from_ref(make).cast_mut().cast(),
        );
        if init == -1 {
            return Err(std::io::Error::last_os_error());
        }
        let mut status = 0;
        while libc::waitpid(init, &mut status, 0) == -1 {
            if *libc::__errno_location() != libc::EINTR {
                return Err(std::io::Error::last_os_error());
            }
        }
        match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
            (true, 0) => Ok(()),
            (true, errno) => Err(std::io::Error::from_raw_os_error(errno)),
            (false, _) => Err(std::io::Error::from_raw_os_error(libc::ECHILD)),
        }
    }
}

/// The first process of the maker's PID namespace: builds the root (with a `proc` of this
/// namespace) and exits with 0 or the `errno` of the step that failed.
extern "C" fn root_process(argument: *mut c_void) -> libc::c_int {
    // SAFETY: `argument` is the `Make` on the host's stack, which outlives the maker.
    let make = unsafe { &*argument.cast_const().cast::<Make<'_>>() };
    let code = match make.plan.apply() {
        Ok(()) => 0,
        Err(error) => error.raw_os_error().unwrap_or(libc::EINVAL).clamp(1, 255),
    };
    // SAFETY: ends this process.
    unsafe { libc::_exit(code) }
}
