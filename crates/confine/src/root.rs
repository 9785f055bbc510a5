//! The root a sandboxed command sees (issue 31, point 2): a fresh, read-only `tmpfs` holding
//! only what its grants let it reach, made in its own mount namespace between fork and exec:
//!
//! - read-only binds of the system directories, `/etc` (whose secrets Landlock refuses), the readable
//!   directories (workspace when only read, additional directories, toolchains under `HOME`);
//! - read-write binds of the writable directories (workspace, the session's temporary directory);
//! - a `/dev` with only the device files programs open (`null`, `zero`, `full`, `tty`,
//!   `random`, `urandom`), `/dev/fd` links and a private `/dev/shm`.
//!
//! Everything else does not exist there: the names, contents, metadata and inotify events of
//! the host's other files are unreachable, and `chmod`, `chown`, `utime` or `setxattr` on a
//! read-only bind fail with `EROFS`. `/proc` is the command's own PID namespace's (Landlock
//! still refuses opening it; `readlink /proc/self/exe`, which rustup needs, works); `/sys` is
//! absent. Landlock stays on top.
//!
//! Built like bubblewrap's: a `tmpfs` on a scratch directory becomes the root with the old one
//! under it, the binds are made from there, then the old root is detached and the new root
//! pivoted to. Paths keep their host names, so the rules' paths (and the view's mounts,
//! `view.rs`, applied after this) mean the same inside.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

use super::confine::{DEVICE_FILES, DEVICE_READ_FILES, SYSTEM_READ_DIRS};

/// Where the new root is assembled before it is pivoted to; the first that is a directory. Its
/// contents are covered only inside the command's mount namespace, and only until the pivot.
const SCRATCH: &[&CStr] = &[c"/tmp", c"/mnt", c"/dev", c"/usr"];
/// The old root, inside the scratch `tmpfs`, while the binds are made.
const OLD: &str = "/oldroot";
/// The new root, inside the scratch `tmpfs`.
const NEW: &str = "/newroot";

/// The steps that make one command's root, prepared before fork.
#[derive(Debug)]
pub struct RootPlan {
    scratch: &'static CStr,
    steps: Vec<Step>,
    /// The command's directory, entered again inside the new root.
    cwd: CString,
    /// The device and inode of each bind's source, when [`KeptPlan`] looked them up just now.
    sources: Option<Sources>,
}

/// The device and inode of every bind's source, in order; `None` for one that is gone.
type Sources = Vec<Option<(u64, u64)>>;

/// One step, on paths already prefixed with [`OLD`] or [`NEW`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A directory in the new root (a mount point); one that exists already is fine.
    Directory(CString),
    /// An empty file in the new root (a file's mount point).
    File(CString),
    /// A bind of `source` (under the old root) on `target`; `read_only` carries the flags a
    /// remount in a user namespace must keep.
    Bind {
        source: CString,
        target: CString,
        read_only: Option<libc::c_ulong>,
    },
    /// A symbolic link, as the host has it (`/bin -> usr/bin`).
    Symlink { target: CString, link: CString },
    /// A fresh `tmpfs`.
    Tmpfs {
        target: CString,
        flags: libc::c_ulong,
        options: &'static CStr,
    },
    /// Remount a `tmpfs` made above read-only.
    Seal(CString),
    /// A `proc` of the command's own PID namespace, else (where the kernel refuses one inside a
    /// user namespace) the host's.
    Proc { target: CString, host: CString },
}

/// A readable or writable directory of the command.
#[derive(Debug, Clone)]
struct Reachable {
    path: PathBuf,
    writable: bool,
}

/// What makes two roots the same: the same steps over the same directories (device and inode of
/// each bind's source, so a directory removed and made again gets a new root) and the same
/// host mounts (binds are recursive: a volume mounted or unmounted below a directory since is
/// seen, or let go, only by a new root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootIdentity {
    steps: Vec<Step>,
    sources: Vec<Option<(u64, u64)>>,
    mounts: Vec<u8>,
}

impl RootIdentity {
    /// Whether the root binds `dir` writable.
    pub fn writes(&self, dir: &Path) -> bool {
        let Some(target) = new(dir) else {
            return false;
        };
        self.steps.iter().any(|step| {
            matches!(step, Step::Bind { target: bound, read_only: None, .. } if *bound == target)
        })
    }
}

/// The host's mount table (`/proc/self/mountinfo`), read again only when it changed. The file
/// is pollable (proc(5)): a mount or unmount in the host's namespace marks a descriptor open on
/// it with `POLLPRI`, so an unchanged table costs one `poll` instead of a read of the whole table
/// for every command.
fn host_mounts() -> Vec<u8> {
    use std::io::{Read as _, Seek as _};
    use std::os::fd::AsRawFd as _;
    static TABLE: std::sync::Mutex<Option<(std::fs::File, Vec<u8>)>> = std::sync::Mutex::new(None);
    let mut table = TABLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((file, bytes)) = table.as_mut() {
        let mut watch = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLPRI,
            revents: 0,
        };
        // SAFETY: one `pollfd` on a descriptor the table owns, no waiting.
        let ready = unsafe { libc::poll(&mut watch, 1, 0) };
        // A change (`POLLPRI`), or a failed `poll`: read it again.
        if ready == 0 {
            return bytes.clone();
        }
        bytes.clear();
        if file.rewind().is_ok() && file.read_to_end(bytes).is_ok() {
            return bytes.clone();
        }
        *table = None;
        return std::fs::read("/proc/self/mountinfo").unwrap_or_default();
    }
    let Ok(mut file) = std::fs::File::open("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    *table = Some((file, bytes.clone()));
    bytes
}

/// The device and inode of every directory or file a plan binds, `None` for one that is gone.
fn bind_sources(steps: &[Step]) -> Sources {
    use std::os::unix::fs::MetadataExt as _;
    steps
        .iter()
        .filter_map(|step| match step {
            Step::Bind { source, .. } => Some(source),
            _ => None,
        })
        .map(|source| {
            let host = &source.as_bytes()[OLD.len()..];
            std::fs::metadata(std::ffi::OsStr::from_bytes(host))
                .ok()
                .map(|meta| (meta.dev(), meta.ino()))
        })
        .collect()
}

/// Where `/etc/resolv.conf` leads now (the plan binds its directory when that lies outside
/// `/etc`).
fn resolver() -> Option<PathBuf> {
    std::fs::canonicalize(RESOLV_CONF).ok()
}

/// The name server file a child granted the network reads.
const RESOLV_CONF: &str = "/etc/resolv.conf";

/// The root plan of the last directories a session's command got, kept for the next command
/// with the same directories: building one looks at about sixty host paths (≈0.1 ms of every
/// `Bash` call, issue 33). The kept plan is used only while every directory it binds is the same
/// one (device and inode), the host's mount table is unchanged (as [`RootIdentity`] compares
/// them) and `/etc/resolv.conf` leads where it did, and only when every asked-for directory
/// existed when it was built (one made since is bound by a fresh plan). What else a plan reads
/// (which system directories are links, which device files exist) is the machine's make-up, not
/// something a session sees change.
#[derive(Debug, Default)]
pub struct KeptPlan(std::sync::Mutex<Option<Kept>>);

/// A plan kept by [`KeptPlan`], with what it was built from.
#[derive(Debug)]
struct Kept {
    read_dirs: Vec<PathBuf>,
    write_dirs: Vec<PathBuf>,
    plan: RootPlan,
    sources: Sources,
    mounts: Vec<u8>,
    /// Where `/etc/resolv.conf` led: a network manager may point it elsewhere at any time.
    resolver: Option<PathBuf>,
}

impl KeptPlan {
    /// The plan for a child that may read `read_dirs` and write `write_dirs`, starting in
    /// `cwd`: the kept one when it still holds, else a new one (kept when it may be).
    pub fn plan(&self, read_dirs: &[PathBuf], write_dirs: &[PathBuf], cwd: &Path) -> RootPlan {
        let mut kept = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(kept) = kept.as_ref()
            && kept.read_dirs == read_dirs
            && kept.write_dirs == write_dirs
            && kept.mounts == host_mounts()
            && kept.resolver == resolver()
        {
            let sources = bind_sources(&kept.plan.steps);
            if kept.sources == sources {
                return RootPlan {
                    scratch: kept.plan.scratch,
                    steps: kept.plan.steps.clone(),
                    cwd: c_path(cwd).unwrap_or_else(|| c"/".to_owned()),
                    // Looked up just now: the identity need not look again.
                    sources: Some(sources),
                };
            }
        }
        let mounts = host_mounts();
        let mut plan = RootPlan::build(read_dirs, write_dirs, cwd);
        let sources = bind_sources(&plan.steps);
        plan.sources = Some(sources.clone());
        *kept = read_dirs
            .iter()
            .chain(write_dirs)
            .all(|dir| dir.is_dir())
            .then(|| Kept {
                read_dirs: read_dirs.to_vec(),
                write_dirs: write_dirs.to_vec(),
                plan: RootPlan {
                    scratch: plan.scratch,
                    steps: plan.steps.clone(),
                    cwd: plan.cwd.clone(),
                    sources: None,
                },
                sources,
                mounts,
                resolver: resolver(),
            });
        plan
    }
}

impl RootPlan {
    /// What identifies this root apart from the directory the command starts in.
    pub fn identity(&self) -> RootIdentity {
        RootIdentity {
            steps: self.steps.clone(),
            sources: self
                .sources
                .clone()
                .unwrap_or_else(|| bind_sources(&self.steps)),
            mounts: host_mounts(),
        }
    }

    /// The directory the command starts in, as given to [`RootPlan::build`].
    pub fn cwd(&self) -> &CStr {
        &self.cwd
    }

    /// The root for a child that may read `read_dirs` and write `write_dirs`, starting in `cwd`.
    pub fn build(read_dirs: &[PathBuf], write_dirs: &[PathBuf], cwd: &Path) -> Self {
        let scratch = SCRATCH
            .iter()
            .copied()
            .find(|path| {
                std::fs::symlink_metadata(std::ffi::OsStr::from_bytes(path.to_bytes()))
                    .is_ok_and(|meta| meta.is_dir())
            })
            .unwrap_or(c"/tmp");
        let mut plan = Self {
            scratch,
            steps: Vec::new(),
            cwd: c_path(cwd).unwrap_or_else(|| c"/".to_owned()),
            sources: None,
        };
        for dir in SYSTEM_READ_DIRS {
            plan.system(Path::new(dir));
        }
        plan.system(Path::new("/etc"));
        plan.resolver(Path::new(RESOLV_CONF));
        plan.devices();
        if let (Some(target), Some(host)) = (new(Path::new("/proc")), old(Path::new("/proc"))) {
            plan.steps.push(Step::Directory(target.clone()));
            plan.steps.push(Step::Proc { target, host });
        }
        for reachable in reachable(read_dirs, write_dirs) {
            // A readable directory inside a system one is shown, read-only, already.
            let shown = !reachable.writable
                && SYSTEM_READ_DIRS
                    .iter()
                    .chain(&["/etc"])
                    .any(|dir| reachable.path.starts_with(dir) && is_real_directory(dir));
            if !shown {
                plan.bind(&reachable.path, reachable.writable);
            }
        }
        plan
    }

    /// A system directory: bound read-only, or its symlink recreated.
    fn system(&mut self, path: &Path) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            if let (Ok(target), Some(link)) = (std::fs::read_link(path), new(path)) {
                self.parents(path);
                if let Some(target) = c_path(&target) {
                    self.steps.push(Step::Symlink { target, link });
                }
            }
        } else if meta.is_dir() {
            self.bind(path, false);
        }
    }

    /// Where `/etc/resolv.conf` links out of `/etc` (systemd-resolved's
    /// `/run/systemd/resolve/stub-resolv.conf`), the directory it links to, read-only: a child
    /// granted the host's network must still find its name server.
    fn resolver(&mut self, resolv_conf: &Path) {
        let Ok(target) = std::fs::canonicalize(resolv_conf) else {
            return;
        };
        let shown = SYSTEM_READ_DIRS
            .iter()
            .chain(&["/etc"])
            .any(|dir| target.starts_with(dir) && is_real_directory(dir));
        if let (false, Some(directory)) = (shown, target.parent())
            && directory != Path::new("/")
        {
            self.bind(directory, false);
        }
    }

    /// A `/dev` of its own: the device files programs open, the `fd` links, a private `shm`.
    fn devices(&mut self) {
        let dev = Path::new("/dev");
        let Some(target) = new(dev) else {
            return;
        };
        self.steps.push(Step::Directory(target.clone()));
        self.steps.push(Step::Tmpfs {
            target: target.clone(),
            flags: libc::MS_NOSUID | libc::MS_NOEXEC,
            options: c"size=64k,mode=0755",
        });
        for device in DEVICE_FILES.iter().chain(DEVICE_READ_FILES) {
            let device = Path::new(device);
            if device.exists()
                && let (Some(source), Some(file)) = (old(device), new(device))
            {
                self.steps.push(Step::File(file.clone()));
                self.steps.push(Step::Bind {
                    source,
                    target: file,
                    read_only: None,
                });
            }
        }
        for (name, points_to) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
        ] {
            if let (Some(link), Some(target)) = (new(&dev.join(name)), c_path(Path::new(points_to)))
            {
                self.steps.push(Step::Symlink { target, link });
            }
        }
        if let Some(shm) = new(&dev.join("shm")) {
            self.steps.push(Step::Directory(shm.clone()));
            self.steps.push(Step::Tmpfs {
                target: shm,
                flags: libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                options: c"size=64m,mode=1777",
            });
        }
        self.steps.push(Step::Seal(target));
    }

    /// Binds `path` at its own name, with the directories above it made first.
    fn bind(&mut self, path: &Path, writable: bool) {
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        // The source by its canonical name: a link on the way (`~/.cargo` -> `/data/cargo`)
        // would be followed inside the new root, where its target may not be yet.
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let (Some(source), Some(target)) = (old(&canonical), new(path)) else {
            return;
        };
        self.parents(path);
        self.steps.push(if meta.is_dir() {
            Step::Directory(target.clone())
        } else {
            Step::File(target.clone())
        });
        self.steps.push(Step::Bind {
            source,
            target,
            read_only: (!writable).then(|| locked_flags(path)),
        });
    }

    /// The directories above `path` in the new root, each once.
    fn parents(&mut self, path: &Path) {
        let mut above = PathBuf::from("/");
        let components: Vec<Component<'_>> = path.components().collect();
        for component in components.iter().take(components.len().saturating_sub(1)) {
            above.push(component);
            if above == Path::new("/") {
                continue;
            }
            if let Some(directory) = new(&above) {
                let step = Step::Directory(directory);
                if !self.steps.contains(&step) {
                    self.steps.push(step);
                }
            }
        }
    }

    /// Makes the root and enters it. Runs in the child, in a fresh mount namespace, between fork
    /// and exec: only system calls on data prepared above. A bind whose source vanished since is
    /// skipped; any other failure fails the spawn (never a wider view than planned).
    pub fn apply(&self) -> std::io::Result<()> {
        let fail = std::io::Error::last_os_error;
        let none = std::ptr::null::<libc::c_char>();
        let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        // SAFETY: system calls on NUL-terminated buffers owned by `self` and static strings.
        unsafe {
            let ok = |result: libc::c_int| if result == -1 { Err(fail()) } else { Ok(()) };
            ok(libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            ok(libc::mount(
                c"tmpfs".as_ptr(),
                self.scratch.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                c"size=64k,mode=0755".as_ptr().cast(),
            ))?;
            ok(libc::chdir(self.scratch.as_ptr()))?;
            ok(libc::mkdir(c"newroot".as_ptr(), 0o755))?;
            ok(libc::mkdir(c"oldroot".as_ptr(), 0o755))?;
            ok(libc::mount(
                c"tmpfs".as_ptr(),
                c"newroot".as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                c"size=1m,mode=0755".as_ptr().cast(),
            ))?;
            ok(pivot_root(c".", c"oldroot"))?;
            ok(libc::chdir(c"/".as_ptr()))?;
            for step in &self.steps {
                match step {
                    Step::Directory(path) => {
                        // Under a read-only bind the directory exists already (`EEXIST`,
                        // `EROFS`), or the bind below finds no mount point and is skipped.
                        libc::mkdir(path.as_ptr(), 0o755);
                    }
                    Step::File(path) => {
                        let fd = libc::open(
                            path.as_ptr(),
                            libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                            0o644,
                        );
                        if fd != -1 {
                            libc::close(fd);
                        }
                    }
                    Step::Bind {
                        source,
                        target,
                        read_only,
                    } => {
                        if libc::mount(
                            source.as_ptr(),
                            target.as_ptr(),
                            none,
                            libc::MS_BIND | libc::MS_REC,
                            std::ptr::null(),
                        ) == -1
                        {
                            if errno() == libc::ENOENT {
                                continue;
                            }
                            return Err(fail());
                        }
                        if let Some(locked) = read_only {
                            seal_read_only(target, *locked)?;
                        }
                    }
                    Step::Symlink { target, link } => {
                        if libc::symlink(target.as_ptr(), link.as_ptr()) == -1
                            && errno() != libc::EEXIST
                        {
                            return Err(fail());
                        }
                    }
                    Step::Tmpfs {
                        target,
                        flags,
                        options,
                    } => {
                        if libc::mount(
                            c"tmpfs".as_ptr(),
                            target.as_ptr(),
                            c"tmpfs".as_ptr(),
                            *flags,
                            options.as_ptr().cast(),
                        ) == -1
                            && errno() != libc::ENOENT
                        {
                            return Err(fail());
                        }
                    }
                    Step::Proc { target, host } => {
                        if !super::procfs::mount(target) {
                            ok(libc::mount(
                                host.as_ptr(),
                                target.as_ptr(),
                                none,
                                libc::MS_BIND | libc::MS_REC,
                                std::ptr::null(),
                            ))?;
                        }
                    }
                    Step::Seal(target) => ok(libc::mount(
                        none,
                        target.as_ptr(),
                        none,
                        libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NOEXEC,
                        std::ptr::null(),
                    ))?,
                }
            }
            ok(libc::umount2(c"/oldroot".as_ptr(), libc::MNT_DETACH))?;
            ok(libc::chdir(c"/newroot".as_ptr()))?;
            ok(pivot_root(c".", c"."))?;
            ok(libc::umount2(c".".as_ptr(), libc::MNT_DETACH))?;
            ok(libc::chdir(c"/".as_ptr()))?;
            ok(libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
                std::ptr::null(),
            ))?;
            ok(libc::chdir(self.cwd.as_ptr()))?;
        }
        Ok(())
    }
}

/// Makes the mount at `target` and every mount below it read-only (`mount_setattr` with
/// `AT_RECURSIVE`, Linux 5.12: a remount alone would leave submounts of a bound directory
/// writable); where the kernel lacks it, remounts the top one keeping `locked`, the flags a
/// user namespace does not let a remount drop. Async-signal-safe.
pub(super) fn seal_read_only(target: &CStr, locked: libc::c_ulong) -> std::io::Result<()> {
    /// `struct mount_attr` of `<linux/mount.h>`.
    #[repr(C)]
    struct MountAttributes {
        set: u64,
        clear: u64,
        propagation: u64,
        user_namespace_fd: u64,
    }
    const MOUNT_ATTR_RDONLY: u64 = 0x1;
    const AT_RECURSIVE: libc::c_int = 0x8000;
    let attributes = MountAttributes {
        set: MOUNT_ATTR_RDONLY,
        clear: 0,
        propagation: 0,
        user_namespace_fd: 0,
    };
    // SAFETY: a NUL-terminated path and a struct of the size passed.
    unsafe {
        if libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            target.as_ptr(),
            AT_RECURSIVE,
            &attributes,
            std::mem::size_of::<MountAttributes>(),
        ) == 0
        {
            return Ok(());
        }
        if *libc::__errno_location() != libc::ENOSYS {
            return Err(std::io::Error::last_os_error());
        }
        let none = std::ptr::null::<libc::c_char>();
        if libc::mount(
            none,
            target.as_ptr(),
            none,
            libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | locked,
            std::ptr::null(),
        ) == -1
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `pivot_root(2)`, which libc does not wrap.
///
/// # Safety
/// Both arguments are NUL-terminated paths.
unsafe fn pivot_root(new_root: &CStr, put_old: &CStr) -> libc::c_int {
    // SAFETY: the caller passes NUL-terminated paths.
    let result =
        unsafe { libc::syscall(libc::SYS_pivot_root, new_root.as_ptr(), put_old.as_ptr()) };
    libc::c_int::try_from(result).unwrap_or(-1)
}

/// The directories to bind, canonical and parents first: the writable ones, and the readable
/// ones not inside a writable one (which the writable bind already shows, writable). A
/// directory reached through a symlink is bound at its symlink's name as well, so a `PATH` entry
/// that names the link still finds its programs.
fn reachable(read_dirs: &[PathBuf], write_dirs: &[PathBuf]) -> Vec<Reachable> {
    let canonical = |paths: &[PathBuf]| -> Vec<(PathBuf, PathBuf)> {
        paths
            .iter()
            .filter_map(|path| Some((path.clone(), std::fs::canonicalize(path).ok()?)))
            .collect()
    };
    let writable = canonical(write_dirs);
    let readable = canonical(read_dirs);
    let inside_writable = |path: &Path| writable.iter().any(|(_, dir)| path.starts_with(dir));
    let mut all: Vec<Reachable> = Vec::new();
    for (given, path) in &writable {
        for name in [path, given] {
            all.push(Reachable {
                path: name.clone(),
                writable: true,
            });
        }
    }
    for (given, path) in &readable {
        for name in [path, given] {
            if !inside_writable(name) {
                all.push(Reachable {
                    path: name.clone(),
                    writable: false,
                });
            }
        }
    }
    all.sort_by_key(|reachable| reachable.path.components().count());
    let mut seen = std::collections::HashSet::new();
    all.retain(|reachable| seen.insert(reachable.path.clone()));
    all
}

/// The flags of the mount holding `path` that a remount in a user namespace must keep.
pub fn locked_flags(path: &Path) -> libc::c_ulong {
    let Some(path) = c_path(path) else {
        return 0;
    };
    // SAFETY: statvfs fills the zeroed struct from a NUL-terminated path.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut stats) } == -1 {
        return 0;
    }
    [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(statvfs_flag, _)| stats.f_flag & statvfs_flag != 0)
    .fold(0, |flags, (_, mount_flag)| flags | mount_flag)
}

fn is_real_directory(path: &str) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

/// `path` under the old root.
fn old(path: &Path) -> Option<CString> {
    prefixed(OLD, path)
}

/// `path` under the new root.
fn new(path: &Path) -> Option<CString> {
    prefixed(NEW, path)
}

fn prefixed(prefix: &str, path: &Path) -> Option<CString> {
    let mut bytes = prefix.as_bytes().to_vec();
    bytes.extend_from_slice(path.as_os_str().as_bytes());
    CString::new(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(path: &CString) -> String {
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn a_resolver_configuration_linked_out_of_etc_brings_its_directory() {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let run = base.join("run/systemd/resolve");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("stub-resolv.conf"), "nameserver 127.0.0.53\n").unwrap();
        let link = base.join("resolv.conf");
        std::os::unix::fs::symlink(run.join("stub-resolv.conf"), &link).unwrap();
        let mut plan = RootPlan::build(&[], &[], Path::new("/"));
        plan.resolver(&link);
        let target = new(&run).unwrap();
        assert!(
            plan.steps.iter().any(|step| matches!(
                step,
                Step::Bind { target: bound, read_only: Some(_), .. } if *bound == target
            )),
            "{:?}",
            plan.steps
        );
        let mut plain = RootPlan::build(&[], &[], Path::new("/"));
        let before = plain.steps.len();
        plain.resolver(Path::new("/etc/hostname"));
        assert_eq!(
            plain.steps.len(),
            before,
            "a file in /etc needs nothing more"
        );
    }

    #[test]
    fn a_root_is_the_same_only_over_the_same_directories_and_knows_what_it_writes() {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let (tools, work) = (base.join("tools"), base.join("work"));
        for dir in [&tools, &work] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let plan = |cwd: &Path| {
            RootPlan::build(
                std::slice::from_ref(&tools),
                std::slice::from_ref(&work),
                cwd,
            )
        };
        let first = plan(&work).identity();
        assert_eq!(
            first,
            plan(&base).identity(),
            "the directory entered does not count"
        );
        assert!(first.writes(&work));
        assert!(!first.writes(&tools), "read-only");
        assert!(!first.writes(&base.join("elsewhere")));
        // Kept under another name, as a bind of it would keep it: its inode cannot be reused.
        std::fs::rename(&tools, base.join("tools-before")).unwrap();
        std::fs::create_dir(&tools).unwrap();
        assert_ne!(
            first,
            plan(&work).identity(),
            "a directory made again is another root"
        );
        let wider = RootPlan::build(
            &[tools.clone(), base.join("tools")],
            &[work.clone(), base.clone()],
            &work,
        );
        assert_ne!(plan(&work).identity(), wider.identity());
    }

    /// A kept plan is the plan built afresh, whatever the directory entered, until a directory
    /// it binds is made again; a plan over a directory that did not exist is never kept.
    #[test]
    fn a_kept_plan_is_the_fresh_plan_until_a_bound_directory_changes() {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let (tools, work, later) = (base.join("tools"), base.join("work"), base.join("later"));
        for dir in [&tools, &work] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let kept = KeptPlan::default();
        let same = |kept: &RootPlan, fresh: &RootPlan| {
            kept.steps == fresh.steps && kept.cwd == fresh.cwd && kept.scratch == fresh.scratch
        };
        let reads = [tools.clone(), later.clone()];
        let writes = std::slice::from_ref(&work);
        let fresh = |cwd: &Path| RootPlan::build(&reads, writes, cwd);
        assert!(same(&kept.plan(&reads, writes, &work), &fresh(&work)));
        assert!(kept.0.lock().unwrap().is_none(), "kept without `later`");
        std::fs::create_dir(&later).unwrap();
        let first = kept.plan(&reads, writes, &work);
        assert!(
            same(&first, &fresh(&work)),
            "`later` is bound once it exists"
        );
        assert!(kept.0.lock().unwrap().is_some());
        assert!(same(&kept.plan(&reads, writes, &base), &fresh(&base)));
        assert_eq!(
            kept.plan(&reads, writes, &base).identity(),
            fresh(&base).identity(),
            "a kept plan is the same root as a fresh one"
        );
        let before = bind_sources(&first.steps);
        std::fs::rename(&tools, base.join("tools-before")).unwrap();
        std::fs::create_dir(&tools).unwrap();
        let again = kept.plan(&reads, writes, &work);
        assert!(same(&again, &fresh(&work)));
        assert_ne!(
            before,
            bind_sources(&again.steps),
            "a directory made again is another root"
        );
        assert_eq!(
            kept.0
                .lock()
                .unwrap()
                .as_ref()
                .map(|kept| kept.sources.clone()),
            Some(bind_sources(&again.steps)),
            "the new plan is kept"
        );
        // Other directories: a plan of their own.
        let other = kept.plan(std::slice::from_ref(&tools), writes, &work);
        assert!(same(
            &other,
            &RootPlan::build(std::slice::from_ref(&tools), writes, &work)
        ));
    }

    #[test]
    fn the_mount_table_is_the_hosts() {
        let read = std::fs::read("/proc/self/mountinfo").unwrap();
        assert_eq!(host_mounts(), read);
        assert_eq!(host_mounts(), read, "kept while nothing was mounted");
    }

    #[test]
    fn readable_directories_inside_writable_ones_stay_writable_and_parents_come_first() {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        for dir in ["ws/sub", "tools/bin", "tmp"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        std::os::unix::fs::symlink(base.join("tools"), base.join("link")).unwrap();
        let found = reachable(
            &[base.join("ws/sub"), base.join("link/bin"), base.join("ws")],
            &[base.join("tmp"), base.join("ws")],
        );
        let listed: Vec<(PathBuf, bool)> = found
            .iter()
            .map(|reachable| (reachable.path.clone(), reachable.writable))
            .collect();
        assert!(listed.contains(&(base.join("ws"), true)), "{listed:?}");
        assert!(!listed.contains(&(base.join("ws"), false)), "{listed:?}");
        assert!(!listed.iter().any(|(path, _)| path == &base.join("ws/sub")));
        assert!(
            listed.contains(&(base.join("tools/bin"), false)),
            "{listed:?}"
        );
        assert!(
            listed.contains(&(base.join("link/bin"), false)),
            "{listed:?}"
        );
        let depths: Vec<usize> = listed
            .iter()
            .map(|(path, _)| path.components().count())
            .collect();
        assert!(depths.is_sorted(), "{listed:?}");
    }

    #[test]
    fn a_plan_binds_what_is_reachable_and_makes_its_own_dev() {
        let root = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(root.path()).unwrap();
        let plan = RootPlan::build(&[ws.join("missing")], std::slice::from_ref(&ws), &ws);
        let binds: Vec<(String, String, bool)> = plan
            .steps
            .iter()
            .filter_map(|step| match step {
                Step::Bind {
                    source,
                    target,
                    read_only,
                } => Some((text(source), text(target), read_only.is_some())),
                _ => None,
            })
            .collect();
        let workspace = ws.to_string_lossy();
        assert!(
            binds.contains(&(
                format!("/oldroot{workspace}"),
                format!("/newroot{workspace}"),
                false
            )),
            "{binds:?}"
        );
        assert!(
            binds.contains(&("/oldroot/usr".into(), "/newroot/usr".into(), true)),
            "{binds:?}"
        );
        assert!(
            binds.contains(&("/oldroot/etc".into(), "/newroot/etc".into(), true)),
            "{binds:?}"
        );
        assert!(
            binds.contains(&(
                "/oldroot/dev/null".into(),
                "/newroot/dev/null".into(),
                false
            )),
            "{binds:?}"
        );
        assert!(
            !binds
                .iter()
                .any(|(source, _, _)| source.contains("missing"))
        );
        assert!(
            !binds
                .iter()
                .any(|(source, _, _)| source == "/oldroot/root" || source == "/oldroot/proc"),
            "{binds:?}"
        );
        // Every mount point is made before it is used.
        for (index, step) in plan.steps.iter().enumerate() {
            if let Step::Bind { target, .. } = step {
                let made = plan.steps[..index].iter().any(|earlier| {
                    matches!(earlier, Step::Directory(path) | Step::File(path) if path == target)
                });
                assert!(made, "{target:?} has no mount point before its bind");
            }
        }
        assert_eq!(text(&plan.cwd), ws.to_string_lossy());
    }
}
