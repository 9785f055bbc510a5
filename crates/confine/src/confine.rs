//! What confines a child: Landlock file rules, a fresh network namespace, resource limits, its own
//! session and process group, and death with the host. Everything that allocates happens in the
//! parent ([`Confinement::prepare`]); the child only makes system calls between `clone` and `exec`
//! ([`Prepared::apply_in_child`], run by `spawn.rs`), as a multithreaded parent requires.
//!
//! The raw calls (`setsid`, `setrlimit`, `unshare`, `ioctl`, `landlock_restrict_self`) go through
//! `libc` directly: they must run in the child, where no allocation or lock is allowed, and no
//! crate wraps that moment (`landlock` and `std`'s `pre_exec` allocate or run after a `fork`).

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::ConfineError;
use super::syscalls;
pub use super::syscalls::SyscallProfile;
use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, path_beneath_rules,
};

/// Directories every program needs to start (loader, libraries, shells); `/etc` is added entry
/// by entry, without [`ETC_SECRETS`].
pub(super) const SYSTEM_READ_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
];
/// Entries of `/etc` (and `/etc/ssl`) a command never needs and must not read: password hashes,
/// sudo rules, host keys, TLS private keys.
const ETC_SECRETS: &[&str] = &[
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssh",
    "private",
    "security",
    "ssl",
];
/// Device files programs commonly open for reading and writing.
pub(super) const DEVICE_FILES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];
/// The most descriptors a child is passed besides stdin, stdout and stderr: they become 3 to 9,
/// below the numbers (10 and up) the parent moves everything it hands over to.
pub const MAX_PASSED: usize = 7;
/// Device files programs commonly open for reading.
pub(super) const DEVICE_READ_FILES: &[&str] = &["/dev/urandom", "/dev/random"];

/// The oldest Landlock ABI the sandbox accepts: ABI 3 adds `truncate`, without which a command
/// could empty any file it can read.
const MIN_LANDLOCK_ABI: i64 = 3;

/// The newest Landlock ABI this host asks for; older kernels get what they support.
const LANDLOCK_ABI: ABI = ABI::V6;

/// What the kernel offers for confining children (`janua doctor` prints it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSupport {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: i64,
    /// Whether a child can be put in a fresh network namespace, or why not.
    pub network_namespace: Result<(), Unavailable>,
    /// Whether a child can also get its own mount, IPC and PID namespaces (the root of its
    /// grants and the view of the files the rules make), or why not.
    pub view_namespaces: Result<(), Unavailable>,
    /// Whether an unprivileged child can make a user namespace, under which a host that is not
    /// root makes all the others, or why not (a root host does not need one).
    pub user_namespace: Result<(), Unavailable>,
}

/// Why the probe found a kind of confinement unavailable on this host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// A system call of the probe failed (in the trial child: `unshare` or a mount).
    #[error("{call}: {}", std::io::Error::from_raw_os_error(*errno))]
    SystemCall {
        /// The call that failed.
        call: &'static str,
        /// Its error number.
        errno: i32,
    },
    /// There is no shell to start a trial child with.
    #[error("no /bin/sh to probe with")]
    NoShell,
    /// The trial child could not be prepared.
    #[error("cannot prepare the trial child: {0}")]
    Prepare(String),
    /// The trial child started but ended without success.
    #[error("a trial child ended with {0}")]
    TrialFailed(std::process::ExitStatus),
}

impl Unavailable {
    /// The last system call error of this thread, for `call`.
    fn last(call: &'static str) -> Self {
        Self::from_io(call, &std::io::Error::last_os_error())
    }

    fn from_io(call: &'static str, error: &std::io::Error) -> Self {
        match error.raw_os_error() {
            Some(errno) => Self::SystemCall { call, errno },
            None => Self::Prepare(format!("{call}: {error}")),
        }
    }
}

impl KernelSupport {
    /// Probes once per process: Landlock's ABI version and a trial `unshare` in a child.
    pub fn probe() -> &'static KernelSupport {
        static SUPPORT: OnceLock<KernelSupport> = OnceLock::new();
        SUPPORT.get_or_init(|| {
            // SAFETY: `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)` only
            // reads its arguments and returns a number.
            let abi = unsafe {
                libc::syscall(
                    libc::SYS_landlock_create_ruleset,
                    std::ptr::null::<u8>(),
                    0usize,
                    1u32,
                )
            };
            KernelSupport {
                landlock_abi: abi.max(0),
                network_namespace: probe_namespaces(false),
                view_namespaces: probe_namespaces(true),
                user_namespace: probe_user_namespace(),
            }
        })
    }

    /// Why children cannot be confined here, if they cannot.
    pub fn missing(&self) -> Option<String> {
        let mut missing = Vec::new();
        if self.landlock_abi < MIN_LANDLOCK_ABI {
            missing.push(format!(
                "Landlock ABI {} (needs {MIN_LANDLOCK_ABI}, Linux 6.2, so truncating files outside the workspace is refused too; see /sys/kernel/security/lsm)",
                self.landlock_abi
            ));
        }
        if let Err(error) = &self.network_namespace {
            missing.push(format!("network namespaces are unavailable: {error}"));
        } else if let Err(error) = &self.view_namespaces {
            missing.push(format!(
                "mount, IPC and PID namespaces are unavailable, so the root of the grants, Read and Edit deny rules and protected paths cannot be enforced by the kernel: {error}"
            ));
        }
        (!missing.is_empty()).then(|| missing.join("; "))
    }
}

/// `fd`, moved to 10 or above if it lies below: a descriptor the child still uses after it moved
/// stdin, stdout, stderr and the passed descriptors onto 0 to 9 (a ruleset, a namespace, a
/// descriptor it moves) must not be one of those, or a `dup2` would replace it. A host started
/// with few descriptors open hands out low numbers.
pub(super) fn above_passed(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    use std::os::fd::FromRawFd as _;
    if fd.as_raw_fd() >= 10 {
        return Ok(fd);
    }
    // SAFETY: duplicates a descriptor we own; the copy is owned by the result.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    if moved == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `moved` is a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

/// Marks every descriptor from `first` up close-on-exec. Async-signal-safe: one `close_range`
/// (Linux 5.11), else `fcntl` on each descriptor below the open-file limit.
pub fn close_on_exec_from(first: libc::c_int) -> std::io::Result<()> {
    let first = libc::c_uint::try_from(first).unwrap_or(3);
    // SAFETY: system calls on descriptor numbers only; nothing is allocated or locked.
    unsafe {
        let done = libc::syscall(
            libc::SYS_close_range,
            first,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );
        if done == 0 {
            return Ok(());
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == -1 {
            return Err(std::io::Error::last_os_error());
        }
        let last = libc::c_int::try_from(limit.rlim_cur.min(1 << 20)).unwrap_or(1 << 20);
        let first = libc::c_int::try_from(first).unwrap_or(3);
        for fd in first..last {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags != -1 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
    Ok(())
}

/// Marks every descriptor janua inherited above stdin, stdout and stderr close-on-exec, so no
/// program janua starts (sandboxed or not: `cargo` for `janua plugin build`, a browser's
/// `--version`) receives them. The binary calls it first thing; embedders may too.
pub fn close_inherited_descriptors() -> std::io::Result<()> {
    close_on_exec_from(3)
}

/// The error of a system call that returned -1, from `errno`. Async-signal-safe.
pub(super) fn check(result: libc::c_int) -> std::io::Result<()> {
    if result == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Makes a user namespace in a forked child (async-signal-safe: `unshare` and `_exit` only).
fn probe_user_namespace() -> Result<(), Unavailable> {
    // SAFETY: the child makes one system call and exits; the parent reaps it.
    unsafe {
        let child = libc::fork();
        if child == -1 {
            return Err(Unavailable::last("fork"));
        }
        if child == 0 {
            let errno = if libc::unshare(libc::CLONE_NEWUSER) == 0 {
                0
            } else {
                *libc::__errno_location()
            };
            libc::_exit(errno.clamp(0, 255));
        }
        let mut status = 0;
        if libc::waitpid(child, &mut status, 0) == -1 {
            return Err(Unavailable::last("waitpid"));
        }
        match libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)) {
            Some(0) => Ok(()),
            Some(errno) => Err(Unavailable::SystemCall {
                call: "unshare(CLONE_NEWUSER)",
                errno,
            }),
            None => Err(Unavailable::TrialFailed(
                std::os::unix::process::ExitStatusExt::from_raw(status),
            )),
        }
    }
}

/// Starts `/bin/sh -c true` (or any shell present) in a fresh network namespace, with its own
/// mount, IPC and PID namespaces and a root of the system directories too when `with_view`.
fn probe_namespaces(with_view: bool) -> Result<(), Unavailable> {
    let shell = ["/bin/sh", "/usr/bin/sh", "/bin/bash"]
        .into_iter()
        .find(|path| std::path::Path::new(path).exists())
        .ok_or(Unavailable::NoShell)?;
    let mut command = std::process::Command::new(shell);
    command
        .args(["-c", "exit 0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut prepared = Prepared {
        ruleset: None,
        namespaces: Some(Namespaces::new(true)),
        seccomp: None,
        limits: ResourceLimits::default(),
        passed: Vec::new(),
        own_proc: None,
        view: None,
        image: None,
    };
    if with_view {
        let image = super::first::Image::new(
            Path::new(shell),
            &["-c".to_owned(), "exit 0".to_owned()],
            &[],
        )
        .map_err(|error| Unavailable::Prepare(error.to_string()))?;
        prepared = prepared.with_view(
            super::root::RootPlan::build(&[], &[], Path::new("/")),
            super::view::MountPlan::default(),
            image,
        );
    }
    // SAFETY: `apply_in_child` makes only async-signal-safe system calls.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            prepared.apply_in_child()
        });
    }
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(Unavailable::TrialFailed(status)),
        Err(error) => Err(Unavailable::from_io("starting the trial child", &error)),
    }
}

/// Resource limits of a child, each applied as both soft and hard limit.
#[derive(Debug, Clone, Copy)]
pub struct ResourceLimits {
    /// Address space in bytes.
    pub address_space: u64,
    /// CPU seconds.
    pub cpu_seconds: u64,
    /// Open file descriptors.
    pub open_files: u64,
    /// Processes of the user (ineffective for root, whom the kernel exempts).
    pub processes: u64,
    /// Largest file the child may write, in bytes.
    pub file_size: u64,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        Self {
            address_space: 16 << 30,
            cpu_seconds: 660,
            open_files: 4096,
            processes: 4096,
            file_size: 4 << 30,
        }
    }
}

/// How children are confined.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// Directories readable (and executable).
    pub read_dirs: Vec<PathBuf>,
    /// Directories readable and writable.
    pub write_dirs: Vec<PathBuf>,
    /// A fresh network namespace (no network but a private loopback).
    pub isolate_network: bool,
    /// Resource limits.
    pub limits: ResourceLimits,
    /// False when the operator chose `--unsandboxed-process`: no Landlock, no namespace.
    pub sandboxed: bool,
    /// The seccomp filter's profile.
    pub syscalls: SyscallProfile,
    /// The child may read its own PID namespace's `/proc` (the browser: Chromium reads
    /// `/proc/self`); no other child may read any `/proc`.
    pub own_proc_readable: bool,
}

/// A confinement ready to apply in a forked child.
pub struct Prepared {
    ruleset: Option<Arc<OwnedFd>>,
    /// The child's own namespaces: network (unless the host's is granted), and with a view
    /// mount, IPC and PID; under a user namespace on a non-root host.
    namespaces: Option<Namespaces>,
    /// The seccomp program (with the capability drop), when sandboxed on a supported architecture.
    seccomp: Option<Vec<libc::sock_filter>>,
    limits: ResourceLimits,
    /// Descriptors passed on purpose: the first becomes the child's fd 3, the next 4, …
    passed: Vec<OwnedFd>,
    /// The Landlock access the child gets to its own PID namespace's `/proc`, added to its own
    /// ruleset once that `/proc` is mounted (its inode does not exist before).
    own_proc: Option<u64>,
    /// The child's root and view of the files, in its own mount, IPC and PID namespaces.
    view: Option<View>,
    /// What the child executes itself (the first process of a PID namespace, or a child started
    /// by `spawn.rs`, cannot return into `std`'s exec).
    image: Option<super::first::Image>,
}

/// A child's own namespaces beside the network one: its root and the rules' mounts on top.
struct View {
    root: Root,
    mounts: super::view::MountPlan,
}

/// Where a child's root comes from.
enum Root {
    /// Built by the child's own first process, in namespaces made for it alone.
    Own(super::root::RootPlan),
    /// Made once for its plan and joined (`shared.rs`); `cwd` is entered inside.
    Shared {
        namespaces: Arc<super::shared::SharedNamespaces>,
        cwd: CString,
    },
}

impl Prepared {
    /// Gives the child its own mount, IPC and PID namespaces, with `root` as its root and
    /// `mounts` on top, running `image` as the namespace's first process. Every sandboxed child
    /// gets them, in the same `unshare` as its network namespace, or alone where the host's
    /// network is granted (under the same user namespace on a non-root host).
    pub fn with_view(
        mut self,
        root: super::root::RootPlan,
        mounts: super::view::MountPlan,
        image: super::first::Image,
    ) -> Self {
        if self.ruleset.is_some() {
            self.namespaces
                .get_or_insert_with(|| Namespaces::new(false));
            self.view = Some(View {
                root: Root::Own(root),
                mounts,
            });
        }
        self.image = Some(image);
        self
    }

    /// Runs `image` with no root or view of its own: for a child the operator runs
    /// unsandboxed (a sandboxed one gets them with [`Prepared::with_view`]).
    pub fn with_image(mut self, image: super::first::Image) -> Self {
        self.image = Some(image);
        self
    }

    /// Joins the namespaces made once for this view's root plan (made now if this is the first
    /// child with that plan) instead of making them for this child alone: the same view at a
    /// fraction of the cost (`shared.rs`). Where they cannot be made, the child makes its own.
    pub fn share_root(mut self) -> Self {
        if let (Some(namespaces), Some(view)) = (&self.namespaces, &mut self.view)
            && let Root::Own(plan) = &view.root
        {
            match super::shared::for_plan(
                plan,
                namespaces.user_maps.as_ref(),
                namespaces.isolate_network,
            ) {
                Ok(namespaces) => {
                    view.root = Root::Shared {
                        namespaces,
                        cwd: plan.cwd().to_owned(),
                    };
                }
                Err(error) => {
                    tracing::debug!("cannot share the namespaces of a root: {error}");
                }
            }
        }
        self
    }

    /// What the child executes, when it executes itself.
    pub fn image(&self) -> Option<&super::first::Image> {
        self.image.as_ref()
    }
}

impl Confinement {
    /// Builds the Landlock ruleset and namespace set-up in the parent. The descriptors of
    /// `passed` become the child's 3, 4, … in order (at most `MAX_PASSED`, 7).
    pub fn prepare(&self, passed: Vec<OwnedFd>) -> Result<Prepared, ConfineError> {
        if passed.len() > MAX_PASSED {
            return Err(ConfineError::TooManyDescriptors {
                asked: passed.len(),
                max: MAX_PASSED,
            });
        }
        let passed = passed
            .into_iter()
            .map(|fd| {
                above_passed(fd).map_err(|error| {
                    ConfineError::host("move a descriptor passed to the child", error)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // A child that adds its own `/proc` to its rules needs a ruleset of its own: the cached
        // ones are shared by every child with the same directories.
        let ruleset = match (self.sandboxed, self.own_proc_readable) {
            (false, _) => None,
            (true, false) => Some(self.cached_ruleset()?),
            (true, true) => Some(Arc::new(self.landlock_ruleset()?)),
        };
        Ok(Prepared {
            own_proc: (self.sandboxed && self.own_proc_readable)
                .then(|| (AccessFs::ReadFile | AccessFs::ReadDir).bits()),
            ruleset,
            namespaces: (self.sandboxed && self.isolate_network).then(|| Namespaces::new(true)),
            seccomp: if self.sandboxed {
                syscalls::filter(self.syscalls)
            } else {
                None
            },
            limits: self.limits,
            passed,
            view: None,
            image: None,
        })
    }

    /// The ruleset for these directories, built once: a ruleset is reusable by any number of
    /// children, and building one opens every `/etc` entry (≈3 ms). Kept per directory set; the
    /// rules hold the directories' inodes, so a directory removed and recreated under the same
    /// name is refused (fail closed) until the process restarts.
    fn cached_ruleset(&self) -> Result<Arc<OwnedFd>, ConfineError> {
        type Key = (Vec<PathBuf>, Vec<PathBuf>);
        static RULESETS: OnceLock<Mutex<HashMap<Key, Arc<OwnedFd>>>> = OnceLock::new();
        let key = (self.read_dirs.clone(), self.write_dirs.clone());
        let cache = RULESETS.get_or_init(Mutex::default);
        if let Some(ruleset) = cache
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .get(&key)
        {
            return Ok(Arc::clone(ruleset));
        }
        let ruleset = Arc::new(self.landlock_ruleset()?);
        let mut cache = cache.lock().unwrap_or_else(|poison| poison.into_inner());
        if cache.len() >= 64 {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&ruleset));
        Ok(ruleset)
    }

    fn landlock_ruleset(&self) -> Result<OwnedFd, ConfineError> {
        let error = |error: landlock::RulesetError| ConfineError::Landlock(error.to_string());
        let abi = LANDLOCK_ABI;
        let read = AccessFs::from_read(abi);
        let all = AccessFs::from_all(abi);
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)
            .map_err(error)?
            .scope(Scope::from_all(abi))
            .map_err(error)?
            .create()
            .map_err(error)?
            .add_rules(path_beneath_rules(SYSTEM_READ_DIRS, read))
            .map_err(error)?
            .add_rules(path_beneath_rules(etc_entries(), read))
            .map_err(error)?
            .add_rules(path_beneath_rules(DEVICE_READ_FILES, read))
            .map_err(error)?
            .add_rules(path_beneath_rules(DEVICE_FILES, all))
            .map_err(error)?
            .add_rules(path_beneath_rules(&self.read_dirs, read))
            .map_err(error)?
            .add_rules(path_beneath_rules(&self.write_dirs, all))
            .map_err(error)?;
        let fd: Option<OwnedFd> = created.into();
        let fd = fd.ok_or_else(|| {
            ConfineError::Landlock("Landlock is not supported by this kernel".to_owned())
        })?;
        above_passed(fd).map_err(|error| ConfineError::host("move the Landlock ruleset", error))
    }
}

/// `/etc`'s entries without [`ETC_SECRETS`], plus `/etc/ssl`'s without `private`.
fn etc_entries() -> Vec<PathBuf> {
    let listed = |dir: &str| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|entry| {
                        !ETC_SECRETS.contains(&entry.file_name().to_string_lossy().as_ref())
                    })
                    .map(|entry| entry.path())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut entries = listed("/etc");
    entries.extend(listed("/etc/ssl"));
    entries
}

impl Prepared {
    /// Applies everything in the forked child, before `exec`. Only async-signal-safe system calls.
    pub fn apply_in_child(&self) -> std::io::Result<()> {
        // SAFETY: plain system calls on values owned by `self`; no allocation, no locks.
        unsafe {
            // Its own session and process group, so the whole group can be killed at once.
            check(libc::setsid())?;
            // Only stdin, stdout, stderr and what is passed on purpose (dup2'd below, which
            // clears the flag) survive exec: a descriptor the embedder or janua's parent left
            // inheritable (an outside file, a connected socket) never reaches the child.
            close_on_exec_from(3)?;
            // Dies with the thread that forked it (the host's spawner thread, which lives as long
            // as the host).
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            for (target, fd) in (3..).zip(&self.passed) {
                // `dup2` onto itself would keep the close-on-exec flag just set.
                if fd.as_raw_fd() == target {
                    check(libc::fcntl(target, libc::F_SETFD, 0))?;
                } else {
                    check(libc::dup2(fd.as_raw_fd(), target))?;
                }
            }
            match (&self.namespaces, &self.view) {
                (
                    Some(_),
                    Some(View {
                        root: Root::Shared { namespaces, .. },
                        ..
                    }),
                ) => namespaces.join()?,
                (Some(namespaces), view) => namespaces.enter(view.is_some())?,
                (None, _) => {}
            }
        }
        match (&self.view, &self.image) {
            (None, _) => {
                self.limit()?;
                self.restrict()
            }
            (Some(_), None) => Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
            // The limits bind the first process only: under the address-space limit the
            // waiter, a copy of the host, could not even map the first process's stack.
            // The command restricts itself, not the init: the init shares the host's memory
            // and must stay out of the command's reach (`first::launch`).
            (Some(view), Some(image)) => Err(super::first::launch(
                image,
                &|| {
                    self.limit()?;
                    match &view.root {
                        Root::Own(plan) => plan.apply()?,
                        Root::Shared { cwd, .. } => super::shared::enter(cwd)?,
                    }
                    view.mounts.apply()
                },
                &|| self.restrict(),
            )),
        }
    }

    /// The resource limits, each as soft and hard limit.
    fn limit(&self) -> std::io::Result<()> {
        // SAFETY: getrlimit/setrlimit on stack values.
        unsafe {
            let limits = self.limits;
            for (resource, value) in [
                (libc::RLIMIT_AS, limits.address_space),
                (libc::RLIMIT_CPU, limits.cpu_seconds),
                (libc::RLIMIT_NOFILE, limits.open_files),
                (libc::RLIMIT_NPROC, limits.processes),
                (libc::RLIMIT_FSIZE, limits.file_size),
                (libc::RLIMIT_CORE, 0),
            ] {
                // Never above the host's own hard limit, which the child could not raise anyway.
                let mut current = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                check(libc::getrlimit(resource, &mut current))?;
                let value = value.min(current.rlim_max);
                let limit = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                };
                check(libc::setrlimit(resource, &limit))?;
            }
        }
        Ok(())
    }

    /// The last steps, just before exec: capabilities, `no_new_privs`, seccomp, Landlock.
    fn restrict(&self) -> std::io::Result<()> {
        // SAFETY: plain system calls on values owned by `self`; no allocation, no locks.
        unsafe {
            if self.ruleset.is_some() {
                syscalls::drop_capabilities()?;
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(program) = &self.seccomp {
                syscalls::install(program)?;
            }
            if let Some(ruleset) = &self.ruleset {
                let own_proc = match self.own_proc {
                    Some(access) => super::procfs::allow_own(ruleset, access)?,
                    None => false,
                };
                let restricted =
                    libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32);
                if restricted == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                if own_proc {
                    super::procfs::check_init_hidden()?;
                }
            }
        }
        Ok(())
    }
}

/// Set-up for the child's own namespaces, prepared in the parent.
#[derive(Debug)]
struct Namespaces {
    /// A fresh network namespace with its loopback up (false: the host's network is granted).
    isolate_network: bool,
    /// For a non-root host: `/proc/self/{setgroups,uid_map,gid_map}` contents for a user namespace
    /// mapping the host's own ids.
    user_maps: Option<[(CString, CString); 3]>,
}

impl Namespaces {
    fn new(isolate_network: bool) -> Self {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let user_maps = (uid != 0).then(|| {
            let text = |value: String| CString::new(value).unwrap_or_default();
            [
                (text("/proc/self/setgroups".into()), text("deny".into())),
                (
                    text("/proc/self/uid_map".into()),
                    text(format!("{uid} {uid} 1")),
                ),
                (
                    text("/proc/self/gid_map".into()),
                    text(format!("{gid} {gid} 1")),
                ),
            ]
        });
        Self {
            isolate_network,
            user_maps,
        }
    }

    /// Unshares the network namespace (with a user namespace when not root) and brings its
    /// loopback up, and with a view the mount, IPC and PID namespaces. Async-signal-safe.
    fn enter(&self, with_view: bool) -> std::io::Result<()> {
        let mut flags = 0;
        if self.user_maps.is_some() {
            flags |= libc::CLONE_NEWUSER;
        }
        if self.isolate_network {
            flags |= libc::CLONE_NEWNET;
        }
        if with_view {
            // Its own mounts, System V IPC objects that die with it, and processes that
            // see (and signal, trace, open a pidfd on) only each other (`first.rs`).
            flags |= libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWPID;
        }
        // SAFETY: one system call on a flag set.
        check(unsafe { libc::unshare(flags) })?;
        if let Some(maps) = &self.user_maps {
            write_user_maps(maps)?;
        }
        if self.isolate_network {
            loopback_up()?;
        }
        Ok(())
    }
}

/// Writes a fresh user namespace's `setgroups`, `uid_map` and `gid_map` (path, content).
/// Async-signal-safe.
pub(super) fn write_user_maps(maps: &[(CString, CString); 3]) -> std::io::Result<()> {
    // SAFETY: system calls on owned, NUL-terminated buffers; no allocation.
    unsafe {
        for (path, content) in maps {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            check(fd)?;
            let bytes = content.as_bytes();
            let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
            let error = std::io::Error::last_os_error();
            libc::close(fd);
            if written == -1 {
                return Err(error);
            }
        }
    }
    Ok(())
}

/// Brings the loopback of a fresh network namespace up, so programs that talk to themselves
/// (test servers) still work. Async-signal-safe.
pub(super) fn loopback_up() -> std::io::Result<()> {
    // SAFETY: system calls on a zeroed `ifreq` and a socket closed before returning.
    unsafe {
        let socket = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check(socket)?;
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *slot = *byte as libc::c_char;
        }
        let up = libc::ioctl(socket, libc::SIOCGIFFLAGS, &mut request) != -1 && {
            request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(socket, libc::SIOCSIFFLAGS, &request) != -1
        };
        let error = std::io::Error::last_os_error();
        libc::close(socket);
        if !up {
            return Err(error);
        }
    }
    Ok(())
}

/// What a piped, confined child runs and may reach (command hooks, MCP servers).
#[derive(Debug, Clone)]
pub struct ChildSpec {
    /// Absolute program path.
    pub program: PathBuf,
    /// Its arguments (after `argv[0]`, the program itself).
    pub args: Vec<String>,
    /// The whole environment (nothing is inherited).
    pub env: Vec<(String, String)>,
    /// The directory it starts in.
    pub cwd: PathBuf,
    /// Directories readable besides the system ones.
    pub read_dirs: Vec<PathBuf>,
    /// Directories readable and writable.
    pub write_dirs: Vec<PathBuf>,
    /// Keep the host's network (otherwise a fresh namespace with only its own loopback).
    pub network: bool,
    /// The seccomp filter's profile (`SyscallProfile::Browser` only for the browser).
    pub syscalls: SyscallProfile,
    /// The operator's sandbox mode.
    pub sandbox: super::ProcessSandbox,
    /// The root of the child's grants and the view the rules ask for (protected and deny-rule
    /// paths), in the child's own mount, IPC and PID namespaces (also where the host's network is
    /// granted).
    pub view: super::view::ViewRules,
    /// The child may read its own PID namespace's `/proc` (see [`Confinement`]).
    pub own_proc_readable: bool,
}

/// A child started by [`spawn_piped`], with the host's ends of its stdin, stdout and stderr.
pub struct PipedChild {
    /// The started child (its pid is its process group).
    pub process: super::spawn::Spawned,
    /// The host's end of its stdin.
    pub stdin: std::io::PipeWriter,
    /// The host's end of its stdout.
    pub stdout: std::io::PipeReader,
    /// The host's end of its stderr.
    pub stderr: std::io::PipeReader,
}

/// Starts `spec` confined, with stdin, stdout and stderr piped and nothing else inherited, by
/// `clone(CLONE_VM)` on the spawner thread (`spawn.rs`): no copy of the host's memory. `Err`
/// when the operator's sandbox mode requires a sandbox this kernel cannot give.
pub fn spawn_piped(spec: &ChildSpec, limits: ResourceLimits) -> Result<PipedChild, ConfineError> {
    let pipe =
        |what: &'static str| std::io::pipe().map_err(|error| ConfineError::host(what, error));
    let (stdin_reader, stdin_writer) = pipe("make the stdin pipe")?;
    let (stdout_reader, stdout_writer) = pipe("make the stdout pipe")?;
    let (stderr_reader, stderr_writer) = pipe("make the stderr pipe")?;
    let process = spawn_with(
        spec,
        limits,
        [
            stdin_reader.into(),
            stdout_writer.into(),
            stderr_writer.into(),
        ],
        Vec::new(),
    )?;
    Ok(PipedChild {
        process,
        stdin: stdin_writer,
        stdout: stdout_reader,
        stderr: stderr_reader,
    })
}

/// Starts `spec` confined, with `stdio` as its stdin, stdout and stderr and `passed` as its
/// descriptors 3, 4, … (`clone(CLONE_VM)` on the spawner thread, as [`spawn_piped`]).
pub fn spawn_with(
    spec: &ChildSpec,
    limits: ResourceLimits,
    stdio: [OwnedFd; 3],
    passed: Vec<OwnedFd>,
) -> Result<super::spawn::Spawned, ConfineError> {
    let prepared = prepare_child(spec, limits, passed)?;
    let cwd = spec.cwd.clone();
    super::on_spawner(move || {
        let [stdin, stdout, stderr] = &stdio;
        super::spawn::spawn(&prepared, &cwd, [stdin, stdout, stderr])
    })
    .and_then(|spawned| spawned)
    .map_err(|source| ConfineError::Start {
        program: spec.program.clone(),
        source,
    })
}

/// The confinement of a piped child, with what it executes.
fn prepare_child(
    spec: &ChildSpec,
    limits: ResourceLimits,
    passed: Vec<OwnedFd>,
) -> Result<Prepared, ConfineError> {
    let sandboxed = match spec.sandbox {
        super::ProcessSandbox::Unsandboxed => false,
        super::ProcessSandbox::Unavailable => {
            return Err(ConfineError::Unavailable(
                "the process sandbox is unavailable (forced off)".to_owned(),
            ));
        }
        super::ProcessSandbox::Required => {
            if let Some(missing) = KernelSupport::probe().missing() {
                return Err(ConfineError::Unavailable(format!(
                    "{missing}; run `janua doctor`, or pass --unsandboxed-process"
                )));
            }
            true
        }
    };
    let confinement = Confinement {
        read_dirs: spec.read_dirs.clone(),
        write_dirs: spec.write_dirs.clone(),
        isolate_network: !spec.network,
        limits,
        sandboxed,
        syscalls: spec.syscalls,
        own_proc_readable: spec.own_proc_readable,
    };
    let prepared = confinement.prepare(passed)?;
    let image = super::first::Image::new(&spec.program, &spec.args, &spec.env)?;
    Ok(prepared
        .with_view(
            super::root::RootPlan::build(&spec.read_dirs, &spec.write_dirs, &spec.cwd),
            super::view::MountPlan::build(&spec.view),
            image,
        )
        .share_root())
}
