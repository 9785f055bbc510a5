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
//! A child granted the host's network (an MCP server, the agent runner) gets the same without a
//! network namespace: its own root, view and processes, the host's network.
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
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::root::{RootIdentity, RootPlan};
use super::spawn::Stack;

/// Sets of namespaces kept at once; the oldest is dropped past this (its commands keep it alive).
const KEPT: usize = 16;

/// A user (on a non-root host), mount and network namespace holding one root of the grants; no
/// network namespace for a child granted the host's network.
#[derive(Debug)]
pub struct SharedNamespaces {
    user: Option<OwnedFd>,
    mount: OwnedFd,
    network: Option<OwnedFd>,
}

/// What namespaces are kept for: a root, with or without a network namespace of its own.
type Key = (RootIdentity, bool);

/// The namespaces kept, newest last.
type Kept = VecDeque<(Key, Arc<SharedNamespaces>)>;

fn kept() -> &'static Mutex<Kept> {
    static KEPT_NAMESPACES: OnceLock<Mutex<Kept>> = OnceLock::new();
    KEPT_NAMESPACES.get_or_init(Mutex::default)
}

/// The shared namespaces for `plan`, made now unless kept from an earlier command with the same
/// plan over the same directories. `user_maps` are the id maps of a non-root host; without
/// `isolate_network` the host's network is kept (granted to the child).
pub fn for_plan(
    plan: &RootPlan,
    user_maps: Option<&[(std::ffi::CString, std::ffi::CString); 3]>,
    isolate_network: bool,
) -> std::io::Result<Arc<SharedNamespaces>> {
    let identity = (plan.identity(), isolate_network);
    // Held while making, so two commands starting together make one set, not two.
    let mut kept = kept().lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some((_, shared)) = kept.iter().find(|(kept, _)| *kept == identity) {
        return Ok(Arc::clone(shared));
    }
    let shared = Arc::new(make(plan, user_maps, isolate_network)?);
    if kept.len() >= KEPT {
        kept.pop_front();
    }
    kept.push_back((identity, Arc::clone(&shared)));
    Ok(shared)
}

/// Drops the namespaces of every plan that writes `dir` (a session's temporary directory, when
/// the session ends).
pub fn forget(dir: &std::path::Path) {
    kept()
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .retain(|((identity, _), _)| !identity.writes(dir));
}

impl SharedNamespaces {
    /// Joins the namespaces, then unshares the command's own mount, IPC and PID namespaces
    /// beneath them; the working directory is then the shared root's `/` until [`enter`]. Runs
    /// in the child that waits for the command. Async-signal-safe.
    pub fn join(&self) -> std::io::Result<()> {
        // SAFETY: `setns` and `unshare` on descriptors this value owns.
        unsafe {
            if let Some(user) = &self.user {
                super::confine::check(libc::setns(user.as_raw_fd(), libc::CLONE_NEWUSER))?;
            }
            super::confine::check(libc::setns(self.mount.as_raw_fd(), libc::CLONE_NEWNS))?;
            if let Some(network) = &self.network {
                super::confine::check(libc::setns(network.as_raw_fd(), libc::CLONE_NEWNET))?;
            }
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
pub fn enter(cwd: &CStr) -> std::io::Result<()> {
    // SAFETY: system calls on NUL-terminated static strings and `cwd`.
    unsafe {
        super::procfs::mount(c"/proc");
        super::confine::check(libc::chdir(cwd.as_ptr()))
    }
}

/// What the maker and the first process of its PID namespace read and write, on the host's
/// stack until the maker ended.
struct Make<'a> {
    plan: &'a RootPlan,
    user_maps: Option<&'a [(std::ffi::CString, std::ffi::CString); 3]>,
    isolate_network: bool,
    init_stack: *mut c_void,
    /// 0 once made, else the `errno` of the step that failed; [`NOT_DONE`] until the maker ends.
    outcome: AtomicI32,
    /// The namespaces the maker opened, in the host's descriptor table it shares; -1 if not.
    user: AtomicI32,
    mount: AtomicI32,
    network: AtomicI32,
}

/// The outcome of a maker that ended before it could say.
const NOT_DONE: i32 = -1;

/// Makes the namespaces in a maker process cloned with `CLONE_VM` (no copy of the host's page
/// tables) and `CLONE_FILES` (the namespaces it opens are the host's descriptors, and it holds
/// no copy of any other), and waits for it to end.
fn make(
    plan: &RootPlan,
    user_maps: Option<&[(std::ffi::CString, std::ffi::CString); 3]>,
    isolate_network: bool,
) -> std::io::Result<SharedNamespaces> {
    let maker_stack = Stack::map()?;
    let init_stack = match Stack::map() {
        Ok(stack) => stack,
        Err(error) => {
            maker_stack.unmap();
            return Err(error);
        }
    };
    let make = Make {
        plan,
        user_maps,
        isolate_network,
        init_stack: init_stack.top(),
        outcome: AtomicI32::new(NOT_DONE),
        user: AtomicI32::new(-1),
        mount: AtomicI32::new(-1),
        network: AtomicI32::new(-1),
    };
    // SAFETY: the maker runs on `maker_stack` and uses `make` until it ends, which this
    // function waits for before both go away. Every signal stays blocked in this thread while
    // the maker shares it (the maker writes this thread's `errno`), and the maker keeps them
    // blocked: no host handler ever runs on shared memory.
    let status = unsafe {
        let blocked = super::spawn::SignalsBlocked::new();
        let maker = libc::clone(
            maker_process,
            maker_stack.top(),
            libc::CLONE_VM | libc::CLONE_FILES | libc::SIGCHLD,
            std::ptr::from_ref(&make).cast_mut().cast(),
        );
        let status = if maker == -1 {
            Err(std::io::Error::last_os_error())
        } else {
            let mut status = 0;
            while libc::waitpid(maker, &mut status, 0) == -1 {
                if *libc::__errno_location() != libc::EINTR {
                    break;
                }
            }
            Ok(())
        };
        drop(blocked);
        status
    };
    maker_stack.unmap();
    init_stack.unmap();
    let owned = |fd: &AtomicI32| {
        let fd = fd.load(Ordering::Acquire);
        // SAFETY: a descriptor the maker opened in this process's table, owned by nothing else.
        (fd >= 0).then(|| unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
    };
    let (user, mount, network) = (owned(&make.user), owned(&make.mount), owned(&make.network));
    status?;
    // A command joins them after it moved its own descriptors onto 0 to 9.
    let high = |fd: Option<OwnedFd>| fd.map(super::confine::above_passed).transpose();
    let (user, mount, network) = (high(user)?, high(mount)?, high(network)?);
    match make.outcome.load(Ordering::Acquire) {
        0 => Ok(SharedNamespaces {
            user,
            mount: mount.ok_or_else(|| std::io::Error::other("no mount namespace was opened"))?,
            network,
        }),
        NOT_DONE => Err(std::io::Error::other(
            "the process making the shared namespaces ended early",
        )),
        errno => Err(std::io::Error::from_raw_os_error(errno)),
    }
}

/// The maker: makes the namespaces, opens them, has the root built by the first process of a
/// new PID namespace, and reports in `make`.
extern "C" fn maker_process(argument: *mut c_void) -> libc::c_int {
    // SAFETY: `argument` is the `Make` on the host's stack, which outlives this process.
    let make = unsafe { &*argument.cast_const().cast::<Make<'_>>() };
    let outcome = match build(make) {
        Ok(()) => 0,
        Err(error) => error.raw_os_error().unwrap_or(libc::EINVAL),
    };
    make.outcome.store(outcome, Ordering::Release);
    // SAFETY: ends this process.
    unsafe { libc::_exit(0) }
}

/// The maker's steps. Async-signal-safe.
fn build(make: &Make<'_>) -> std::io::Result<()> {
    use super::confine::check;
    let open = |path: &CStr, into: &AtomicI32| -> std::io::Result<()> {
        // SAFETY: a NUL-terminated static path.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        check(fd)?;
        into.store(fd, Ordering::Release);
        Ok(())
    };
    // SAFETY: system calls on data prepared before the clone.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID;
        if make.isolate_network {
            flags |= libc::CLONE_NEWNET;
        }
        if make.user_maps.is_some() {
            flags |= libc::CLONE_NEWUSER;
        }
        check(libc::unshare(flags))?;
        if let Some(maps) = make.user_maps {
            super::confine::write_user_maps(maps)?;
        }
        if make.isolate_network {
            super::confine::loopback_up()?;
        }
        // Its own namespaces, opened as itself (a host another command made non-dumpable
        // could not open another process's).
        if make.user_maps.is_some() {
            open(c"/proc/self/ns/user", &make.user)?;
        }
        open(c"/proc/self/ns/mnt", &make.mount)?;
        if make.isolate_network {
            open(c"/proc/self/ns/net", &make.network)?;
        }
        let init = libc::clone(
            root_process,
            make.init_stack,
            libc::CLONE_VM | libc::CLONE_FILES | libc::SIGCHLD,
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
