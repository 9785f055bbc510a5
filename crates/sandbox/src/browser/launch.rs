//! Starting Chromium: finding it, its flags, and the process sandbox around it.
//!
//! The browser is a confined child like a Bash command (`janua-confine`): scrubbed
//! environment, its own mount, IPC and PID namespaces with a root of its grants (system
//! directories, the workspace read-only with the rules' masks on top, its profile and scratch
//! directory writable, its own `/proc`, no `/sys`), Landlock, seccomp, resource limits, its own
//! process group, and a fresh network namespace, so it has no network at all. Its only way out
//! is the DevTools pipe (its descriptors 3 and 4), over which the host answers every request it
//! makes (`intercept.rs`). Chromium's own sandbox needs namespaces and setuid helpers that
//! janua's seccomp filter refuses, so it runs with `--no-sandbox`: janua's confinement is the
//! boundary around the whole browser instead of around each renderer.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cdp::Connection;
use janua_confine::{
    ChildSpec, DEFAULT_PATH, ProcessSandbox, ResourceLimits, Spawned, SyscallProfile, ViewRules,
    spawn_with,
};
use janua_types::Enforceable;

/// Where Chromium is looked for when `JANUA_BROWSER` does not name it. Debian's `/usr/bin/chromium`
/// is a shell wrapper; the binary behind it comes first.
const CANDIDATES: &[&str] = &[
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
];

/// Time the browser has to answer its first command.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Viewport of every page, in CSS pixels (screenshots have this size).
pub(crate) const VIEWPORT: (u32, u32) = (1280, 800);

/// Largest file the browser may write (its caches included).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// The browser executable: `JANUA_BROWSER` when set, else the first present of Debian's
/// `/usr/lib/chromium/chromium`, `/usr/bin/chromium`, `chromium-browser` and Google Chrome.
pub fn find_browser() -> Result<PathBuf, NoBrowser> {
    if let Some(path) = std::env::var_os("JANUA_BROWSER").filter(|path| !path.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(NoBrowser::NotAFile(path))
        };
    }
    CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
        .ok_or(NoBrowser::NotInstalled)
}

/// Why no browser can be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoBrowser {
    /// `JANUA_BROWSER` names something that is not a file.
    #[error("JANUA_BROWSER names {}, which is not a file", .0.display())]
    NotAFile(PathBuf),
    /// None of the standard paths holds a browser.
    #[error(
        "no Chromium found (looked for {}); install it (Debian: `apt-get install chromium`) or set JANUA_BROWSER",
        CANDIDATES.join(", ")
    )]
    NotInstalled,
}

/// Everything a browser start needs.
#[derive(Debug, Clone)]
pub(crate) struct LaunchConfig {
    /// The executable.
    pub executable: PathBuf,
    /// The fresh profile directory (created here, removed by the caller).
    pub profile: PathBuf,
    /// A short scratch directory for `TMPDIR`: the browser binds a Unix socket there, and a
    /// socket path may not pass 107 bytes, which a session directory can.
    pub scratch: PathBuf,
    /// Directories the browser may read besides the system ones (workspace, additional dirs).
    pub read_dirs: Vec<PathBuf>,
    /// The deny rules' paths, masked or made read-only in the browser's view of `read_dirs`.
    pub enforceable: Enforceable,
    /// The operator's process-sandbox mode.
    pub sandbox: ProcessSandbox,
    /// The latest the browser may take to answer its first command (at most [`START_TIMEOUT`]).
    pub until: Instant,
}

/// A running browser process: its group is killed when this is dropped.
pub(crate) struct BrowserProcess {
    pid: i32,
    child: Spawned,
}

impl BrowserProcess {
    /// The browser's process id (also its process group).
    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// True while the browser process has not exited. Once it has, nothing of it is left: its
    /// PID namespace died with it.
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the browser's whole process group (unless it ended) and reaps the browser.
    pub(crate) fn kill(&mut self) {
        self.child.kill_group();
        let _ = self.child.wait();
    }
}

impl Drop for BrowserProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The flags every browser starts with: headless, no first-run work, nothing phoning home, no
/// site-per-process (every frame of a page then shares its page's request interception), no
/// `/dev/shm` (its shared memory lives in the profile, which Landlock lets it write), and no name
/// resolution of its own: every request is paused and sent by janua, which checks the host
/// before it resolves it (issue 31, point 6), so the browser's resolver answers "not found" to
/// anything and never prefetches (defence in depth: its network namespace has no route and its
/// seccomp profile refuses `connect`).
fn flags(profile: &Path) -> Vec<String> {
    let (width, height) = VIEWPORT;
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--disable-site-isolation-trials",
        "--disable-features=site-per-process,IsolateOrigins,Translate,MediaRouter,OptimizationHints,DialMediaRouteProvider,AutofillServerCommunication",
        "--mute-audio",
        "--hide-scrollbars",
        "--password-store=basic",
        "--use-mock-keychain",
        "--remote-debugging-pipe",
        "--dns-prefetch-disable",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([
        format!("--window-size={width},{height}"),
        format!("--user-data-dir={}", profile.display()),
        "about:blank".to_owned(),
    ])
    .collect()
}

/// Why the browser did not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LaunchError {
    #[error("cannot create the browser profile {}: {error}", path.display())]
    Profile {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot create a pipe: {0}")]
    Pipe(std::io::Error),
    #[error("cannot create the browser's log: {0}")]
    Log(std::io::Error),
    #[error("cannot open /dev/null: {0}")]
    DevNull(std::io::Error),
    #[error("cannot start the browser {}: {error}", executable.display())]
    Spawn {
        executable: PathBuf,
        error: janua_confine::ConfineError,
    },
    #[error("cannot start the browser's reader thread: {0}")]
    ReaderThread(std::io::Error),
    /// The browser started but did not answer; `status` is its exit status if it ended, `log`
    /// the tail of its stderr.
    #[error("the browser {} did not start{status}: {error}{log}", executable.display())]
    NoAnswer {
        executable: PathBuf,
        status: String,
        error: super::cdp::CdpError,
        log: String,
    },
}

/// Starts the browser under the process sandbox and waits until it answers.
pub(crate) fn launch(
    config: &LaunchConfig,
) -> Result<(BrowserProcess, Arc<Connection>), LaunchError> {
    let tmp = &config.scratch;
    std::fs::create_dir_all(&config.profile).map_err(|error| LaunchError::Profile {
        path: config.profile.clone(),
        error,
    })?;
    let profile = config.profile.to_string_lossy().into_owned();
    let spec = ChildSpec {
        view: ViewRules {
            roots: config.read_dirs.clone(),
            enforceable: config.enforceable.clone(),
        },
        own_proc_readable: true,
        program: config.executable.clone(),
        args: flags(&config.profile),
        env: vec![
            ("PATH".to_owned(), DEFAULT_PATH.to_owned()),
            ("HOME".to_owned(), profile.clone()),
            ("TMPDIR".to_owned(), tmp.to_string_lossy().into_owned()),
            ("XDG_CONFIG_HOME".to_owned(), profile.clone()),
            ("XDG_CACHE_HOME".to_owned(), profile.clone()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
        ],
        cwd: config.profile.clone(),
        read_dirs: config
            .read_dirs
            .iter()
            .cloned()
            .chain(install_dir(&config.executable))
            .collect(),
        write_dirs: vec![config.profile.clone(), config.scratch.clone()],
        network: false,
        syscalls: SyscallProfile::Browser,
        sandbox: config.sandbox,
    };
    let pipe = || std::io::pipe().map_err(LaunchError::Pipe);
    let (browser_reads, to_browser) = pipe()?;
    let (from_browser, browser_writes) = pipe()?;
    let stderr =
        std::fs::File::create(config.profile.join("stderr.log")).map_err(LaunchError::Log)?;
    let null = || {
        std::fs::File::options()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(LaunchError::DevNull)
    };
    // Chromium's `--remote-debugging-pipe` reads commands on descriptor 3 and writes on 4.
    let child = spawn_with(
        &spec,
        ResourceLimits {
            // V8 and PartitionAlloc reserve far more address space than they use; an address-space
            // limit stops the browser from starting rather than bounding its memory.
            address_space: libc::RLIM_INFINITY,
            cpu_seconds: libc::RLIM_INFINITY,
            file_size: MAX_FILE_BYTES,
            ..ResourceLimits::default()
        },
        [null()?.into(), null()?.into(), stderr.into()],
        vec![OwnedFd::from(browser_reads), OwnedFd::from(browser_writes)],
    )
    .map_err(|error| LaunchError::Spawn {
        executable: config.executable.clone(),
        error,
    })?;
    let pid = i32::try_from(child.id()).unwrap_or(0);
    let mut process = BrowserProcess { pid, child };
    let connection = Connection::start(
        OwnedFd::from(to_browser).into(),
        OwnedFd::from(from_browser).into(),
    )
    .map_err(LaunchError::ReaderThread)?;
    if let Err(error) = connection.call(
        None,
        "Browser.getVersion",
        serde_json::json!({}),
        config.until.min(Instant::now() + START_TIMEOUT),
    ) {
        let status = match process.child.try_wait() {
            Ok(Some(status)) => format!(" ({status})"),
            _ => String::new(),
        };
        process.kill();
        return Err(LaunchError::NoAnswer {
            executable: config.executable.clone(),
            status,
            error,
            log: log_tail(&config.profile),
        });
    }
    Ok((process, connection))
}

/// The directory the browser executable really lives in (links followed), which it reads its
/// libraries and resources from: a browser outside the system directories (`JANUA_BROWSER`, a
/// provisioned one) needs it readable; for Debian's it is already under `/usr`.
///
/// Never a directory that would open much more than a browser: the root, a top-level directory or
/// the home directory (a browser kept directly there must be moved into a directory of its own).
fn install_dir(executable: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(executable).ok()?;
    let dir = real.parent()?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let too_wide = dir.components().count() <= 2 || home.as_deref() == Some(dir);
    (!too_wide).then(|| dir.to_path_buf())
}

/// The last lines of the browser's log, for a start-up failure.
fn log_tail(profile: &Path) -> String {
    let text = std::fs::read_to_string(profile.join("stderr.log")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(8).collect();
    if lines.is_empty() {
        String::new()
    } else {
        let lines: Vec<&str> = lines.into_iter().rev().collect();
        format!("; its log ends: {}", lines.join(" | "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// The browser may read the directory its executable really lives in, never one that opens
    /// much more than the browser.
    #[test]
    fn the_install_directory_is_granted_only_when_it_is_narrow() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("chromium").join("chrome");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, "").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let expected = std::fs::canonicalize(real.parent().unwrap()).unwrap();
        assert_eq!(install_dir(&link), Some(expected.clone()));
        assert_eq!(install_dir(&real), Some(expected));
        assert_eq!(
            install_dir(Path::new("/etc/passwd")),
            None,
            "a top-level directory"
        );
        assert_eq!(install_dir(&dir.path().join("missing")), None);
    }

    /// A stand-in browser (a Python script, run exactly as Chromium would be) reports what its
    /// confinement lets it do, then exits; `launch` returns its report in the error.
    #[test]
    fn the_browser_sees_only_its_grants_and_processes_and_connects_nowhere() {
        let dir = tempfile::tempdir().unwrap();
        let socket_path = dir.path().join("host.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
        listener.set_nonblocking(true).unwrap();
        let secret = dir.path().join("outside.txt");
        std::fs::write(&secret, "outside").unwrap();
        let workspace = dir.path().join("workspace");
        std::fs::create_dir(&workspace).unwrap();
        let script = workspace.join("fake-browser");
        std::fs::write(
            &script,
            format!(
                r#"#!/usr/bin/python3
import errno, os, socket, sys
report = []
def attempt(name, action):
    try:
        report.append(f"{{name}}=ok:{{action()}}")
    except OSError as error:
        report.append(f"{{name}}={{errno.errorcode.get(error.errno, error.errno)}}")
attempt("unix_socket", lambda: socket.socket(socket.AF_UNIX).fileno() > 0)
attempt("unix_connect", lambda: socket.socket(socket.AF_UNIX).connect({socket:?}))
attempt("tcp_connect", lambda: socket.create_connection(("1.1.1.1", 80), timeout=2))
attempt("setsid", lambda: os.setsid())
attempt("group", lambda: os.getpgid(0))
attempt("read_outside", lambda: open({secret:?}).read())
attempt("write_profile", lambda: open(os.environ["HOME"] + "/probe", "w").write("x"))
attempt("processes", lambda: sorted(int(name) for name in os.listdir("/proc") if name.isdigit()))
attempt("own_status", lambda: "Pid:" in open("/proc/self/status").read())
attempt("init_maps", lambda: open("/proc/1/maps").read())
attempt("init_cmdline", lambda: open("/proc/1/cmdline").read())
attempt("sys", lambda: os.listdir("/sys"))
# One line: the launch error quotes the log's last lines.
print(" ".join(report), file=sys.stderr)
sys.exit(3)
"#,
                socket = socket_path.to_str().unwrap(),
                secret = secret.to_str().unwrap(),
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let scratch = dir.path().join("scratch");
        std::fs::create_dir(&scratch).unwrap();
        let error = launch(&LaunchConfig {
            executable: script,
            profile: dir.path().join("profile"),
            scratch,
            read_dirs: vec![workspace],
            enforceable: Enforceable::default(),
            sandbox: ProcessSandbox::Required,
            until: Instant::now() + Duration::from_secs(20),
        })
        .err()
        .expect("the stand-in never answers the protocol");
        assert!(matches!(error, LaunchError::NoAnswer { .. }), "{error}");
        let error = error.to_string();
        for expected in [
            "unix_socket=ok:True",
            "unix_connect=EACCES",
            "tcp_connect=EACCES",
            // `setsid` pretends; it stays in the group the host kills, whose leader (0: outside
            // its PID namespace) waits for it.
            "setsid=ok:None",
            "group=ok:0",
            "read_outside=ENOENT",
            "write_profile=ok:1",
            // Its own PID namespace: itself, no host process, and not the init, which shares the
            // host's memory (its command line is the host's) and stays outside the browser's
            // Landlock domain.
            "processes=ok:[2]",
            "own_status=ok:True",
            "init_maps=ENOENT",
            "init_cmdline=ENOENT",
            "sys=ENOENT",
        ] {
            assert!(error.contains(expected), "{expected}: {error}");
        }
        assert_eq!(
            listener.accept().err().map(|error| error.kind()),
            Some(std::io::ErrorKind::WouldBlock),
            "nothing reached the host's socket"
        );
    }
}
