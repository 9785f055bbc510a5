//! The host's `process` capability: runs programs for components whose grants name them, each under
//! the confinement in `confine.rs`, with output spooled to the session (`spool.rs`), a per-session
//! shell directory, and background tasks that die with the session.
//!
//! Permission rules decide whether a command may run; this module bounds what it can do once it
//! runs, and holds on its own: nothing in a tool's input can switch the confinement off.

use std::collections::BTreeMap;
use std::os::fd::AsRawFd as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use janua_confine::{
    Confinement, DEFAULT_PATH, INHERITED_ENV, KernelSupport, ProcessSandbox, ResourceLimits, Spool,
    first, home, kill_group, on_spawner, root, shared, spawn, spool, view,
};

use super::bindings::{ProcessCommand, ProcessError, ProcessFinished, TaskStatus};
use super::grants::ProcessGrant;

/// How long to wait for output to drain after a child's group is gone.
const DRAIN: Duration = Duration::from_secs(2);
/// How often a waiting run looks at cancellation.
const POLL: Duration = Duration::from_millis(20);
/// Room left before the call's own deadline, so the result still gets back to the guest.
const DEADLINE_MARGIN: Duration = Duration::from_millis(500);
/// Background tasks a session may have running at once.
const MAX_RUNNING_TASKS: usize = 16;
/// Bytes of new task output returned per `task-output`.
const TASK_OUTPUT_BYTES: usize = 128 << 10;

/// Where a session's children run and what they may touch.
#[derive(Debug, Clone)]
pub struct ShellConfig {
    /// The workspace: readable, writable, the first shell directory.
    pub workspace: PathBuf,
    /// Additional directories: readable, and valid shell directories.
    pub additional_dirs: Vec<PathBuf>,
    /// The session's temporary directory (`TMPDIR`): writable.
    pub temp_dir: PathBuf,
    /// Where output files go (the session's `tool-results/`).
    pub spool_dir: PathBuf,
    /// The operator's choice of confinement.
    pub sandbox: ProcessSandbox,
    /// Output bytes past which a command is killed.
    pub output_cap: u64,
    /// The shell directory a previous process of the session left, if any.
    pub cwd: Option<PathBuf>,
    /// What the rules ask of every command's view of the files (protected paths, deny rules).
    pub view: view::ViewRules,
}

/// The process state of one session: its shell directory and background tasks.
#[derive(Debug)]
pub struct Shell {
    config: ShellConfig,
    cwd: Mutex<PathBuf>,
    tasks: Mutex<BTreeMap<String, Task>>,
    next_task: AtomicU64,
    next_spool: AtomicU64,
    /// The operator's git identity, read from the host once, for each child's `.gitconfig`.
    identity: std::sync::OnceLock<home::GitIdentity>,
    /// The toolchains found on the last `PATH` a child got, kept while every entry resolves
    /// (finding them again was ≈0.1 ms of every `Bash` call).
    toolchains: Mutex<Option<(String, home::ChildHome)>>,
    /// The root plan of the last command, for the next one with the same directories.
    root_plan: root::KeptPlan,
    /// Protected paths janua itself made while commands ran (`--save-approvals` creating
    /// `.janua/`): never set aside as a command's.
    made_by_host: Arc<Mutex<Vec<PathBuf>>>,
}

/// What one call may do with processes.
#[derive(Debug, Clone)]
pub struct ProcessAccess {
    /// The component's process grants.
    pub grants: Vec<ProcessGrant>,
    /// The session's shell.
    pub shell: Arc<Shell>,
    /// The component's digest: only the component that started a background task may read or
    /// stop it.
    pub owner: String,
}

/// A background task.
#[derive(Debug)]
struct Task {
    owner: String,
    label: String,
    child: Arc<Child>,
    read_offset: u64,
}

/// Why a child's group was killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kill {
    Timeout,
    Cancel,
    Stop,
}

/// A started child: its process group, output and exit.
#[derive(Debug)]
struct Child {
    group: i32,
    spool: Arc<Spool>,
    cwd: PathBuf,
    exit: Mutex<Option<std::process::ExitStatus>>,
    exited: Condvar,
    killed: Mutex<Option<Kill>>,
    /// Protected paths that did not exist when the child started, set aside when it ends if it
    /// made them.
    absent: Vec<view::Guarded>,
    /// What was set aside (`view::set_aside`).
    set_aside: Mutex<Option<String>>,
    /// The shell's record of protected paths janua made itself.
    made_by_host: Arc<Mutex<Vec<PathBuf>>>,
}

impl Child {
    fn kill(&self, reason: Kill) {
        // An ended group's number may belong to someone else by now.
        if self.exit().is_some() {
            return;
        }
        let mut killed = self
            .killed
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        killed.get_or_insert(reason);
        kill_group(self.group);
    }

    fn exit(&self) -> Option<std::process::ExitStatus> {
        *self
            .exit
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Waits for the exit until `until`; the status, if it came.
    fn wait_until(&self, until: Instant) -> Option<std::process::ExitStatus> {
        let mut exit = self
            .exit
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        while exit.is_none() {
            let left = until.checked_duration_since(Instant::now())?;
            exit = self
                .exited
                .wait_timeout(exit, left.min(POLL))
                .unwrap_or_else(|poison| poison.into_inner())
                .0;
        }
        *exit
    }

    fn finished(&self, notice: Option<String>) -> Option<ProcessFinished> {
        let status = self.exit()?;
        let set_aside = self
            .set_aside
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone();
        let notice = lines(notice, set_aside);
        let killed = *self
            .killed
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let captured = self.spool.lock();
        let unsaved = captured
            .file_error
            .as_ref()
            .map(|error| format!("The output could not be saved to a file: {error}"));
        let notice = lines(notice, unsaved);
        let (output_head, output_tail) = captured.texts();
        Some(ProcessFinished {
            exit_code: status.code(),
            signal: status.signal(),
            timed_out: killed == Some(Kill::Timeout),
            cancelled: killed == Some(Kill::Cancel),
            output_capped: captured.capped,
            output_head,
            output_tail,
            output_bytes: captured.bytes,
            output_path: saved_path(&self.spool, &captured),
            cwd: self.cwd.to_string_lossy().into_owned(),
            notice,
        })
    }
}

impl Shell {
    /// A session's shell.
    pub fn new(config: ShellConfig) -> Self {
        let cwd = config
            .cwd
            .clone()
            .and_then(|cwd| std::fs::canonicalize(cwd).ok())
            .filter(|cwd| within(cwd, &config))
            .unwrap_or_else(|| config.workspace.clone());
        Self {
            cwd: Mutex::new(cwd),
            config,
            tasks: Mutex::default(),
            next_task: AtomicU64::new(1),
            next_spool: AtomicU64::new(1),
            identity: std::sync::OnceLock::new(),
            toolchains: Mutex::default(),
            root_plan: root::KeptPlan::default(),
            made_by_host: Arc::default(),
        }
    }

    /// Records that janua itself made `path` (a protected path a running command must not be
    /// blamed for).
    pub fn note_made_by_host(&self, path: PathBuf) {
        self.made_by_host
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .push(path);
    }

    /// The current shell directory.
    /// What the rules ask of every child's view of the files.
    pub fn view(&self) -> &view::ViewRules {
        &self.config.view
    }

    /// How children are confined: the operator's choice.
    pub fn sandbox_mode(&self) -> ProcessSandbox {
        self.config.sandbox
    }

    /// The session's shell directory now: where the next command starts.
    pub fn cwd(&self) -> PathBuf {
        self.cwd
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    /// The home and toolchains of a child whose `PATH` is `path`.
    fn toolchains(&self, path: &str) -> home::ChildHome {
        let mut kept = self
            .toolchains
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if let Some((kept_path, kept)) = kept.as_ref()
            && kept_path == path
        {
            return kept.clone();
        }
        let host_home = std::env::var_os("HOME").map(PathBuf::from);
        let mut found =
            home::toolchains(&self.config.temp_dir, host_home.as_deref(), path, &|name| {
                std::env::var(name).ok()
            });
        // A directory a command can write (a workspace `.venv/bin`) is readable through its
        // write grant already; kept by name here, a command could swap it for a link to any
        // directory before the next command, so it is never a read grant of its own.
        found.read_dirs.retain(|dir| {
            !dir.starts_with(&self.config.workspace) && !dir.starts_with(&self.config.temp_dir)
        });
        if found.complete {
            *kept = Some((path.to_owned(), found.clone()));
        }
        found
    }

    fn set_cwd(&self, cwd: PathBuf) {
        *self.cwd.lock().unwrap_or_else(|poison| poison.into_inner()) = cwd;
    }

    /// Moves the shell directory to `dir` (as a `cd` in an earlier command would) when it is
    /// inside the workspace or an additional directory; false, and unchanged, otherwise.
    pub fn move_to(&self, dir: &Path) -> bool {
        match std::fs::canonicalize(dir) {
            Ok(dir) if dir.is_dir() && within(&dir, &self.config) => {
                self.set_cwd(dir);
                true
            }
            _ => false,
        }
    }

    /// Where the next command runs: the shell directory, or the workspace when that is gone.
    fn current_dir(&self) -> PathBuf {
        let cwd = self.cwd();
        if cwd.is_dir() {
            cwd
        } else {
            self.set_cwd(self.config.workspace.clone());
            self.config.workspace.clone()
        }
    }

    /// Runs `program` with `args` in the shell directory, confined exactly as a `Bash` command
    /// (the environment cut to [`INHERITED_ENV`], a private home, the root of the workspace and
    /// additional directories, the rules' view, no network, Landlock, seccomp, limits), with this
    /// process's standard input, output and error (`janua sandbox`). `program` without a `/` is
    /// looked for on the child's `PATH`. Returns once the command and everything it left in its
    /// process group ended; `on_start` gets its process group (to forward a signal to it).
    pub fn run_foreground(
        &self,
        program: &str,
        args: &[String],
        on_start: impl FnOnce(i32),
    ) -> Result<Foreground, ForegroundError> {
        self.foreground(program, args, on_start)
            .map_err(|error| match error {
                ProcessError::SandboxUnavailable(reason) => ForegroundError::Unavailable(reason),
                ProcessError::NotGranted(reason)
                | ProcessError::SpawnFailed(reason)
                | ProcessError::UnknownTask(reason) => ForegroundError::Start(reason),
            })
    }

    fn foreground(
        &self,
        program: &str,
        args: &[String],
        on_start: impl FnOnce(i32),
    ) -> Result<Foreground, ProcessError> {
        let env = child_env(None, &[], &self.config.temp_dir);
        let path = env
            .iter()
            .find(|(name, _)| name == "PATH")
            .map_or(DEFAULT_PATH, |(_, value)| value.as_str());
        let program = find_program(program, path).ok_or_else(|| {
            ProcessError::SpawnFailed(format!("{program}: no such program on PATH ({path})"))
        })?;
        let stdio = [0, 1, 2].map(|fd| {
            // SAFETY: duplicating this process's own standard descriptors.
            let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
            if copy == -1 {
                Err(std::io::Error::last_os_error())
            } else {
                // SAFETY: `copy` is a fresh descriptor this function owns.
                Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(copy) })
            }
        });
        let [stdin, stdout, stderr] = stdio;
        let stdio = [stdin, stdout, stderr].map(|fd| {
            fd.map_err(|error| {
                ProcessError::SpawnFailed(format!("cannot pass standard input and output: {error}"))
            })
        });
        let [stdin, stdout, stderr] = stdio;
        let cwd = self.current_dir();
        let (mut process, absent) = launch(
            self,
            &Launch {
                program: &program,
                args,
                env,
                requested_env: &[],
                cwd: &cwd,
                cpu_seconds: libc::RLIM_INFINITY,
                passed: Vec::new(),
            },
            [stdin?, stdout?, stderr?],
        )?;
        let group = i32::try_from(process.id()).unwrap_or(0);
        on_start(group);
        let status = process.wait();
        kill_group(group);
        let set_aside = view::set_aside(&absent, u128::from(janua_types::unix_ms()));
        let status = status.map_err(|error| {
            ProcessError::SpawnFailed(format!("cannot wait for {}: {error}", program.display()))
        })?;
        Ok(Foreground { status, set_aside })
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Task>> {
        self.tasks
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl Shell {
    /// Kills every background task's process group (the session is ending).
    pub fn stop_all(&self) {
        for task in self.tasks().values() {
            task.child.kill(Kill::Stop);
        }
    }
}

impl Drop for Shell {
    /// Background tasks die with the session.
    fn drop(&mut self) {
        self.stop_all();
        shared::forget(&self.config.temp_dir);
    }
}

/// True when `dir` is the workspace or an additional directory, or lies inside one.
fn within(dir: &Path, config: &ShellConfig) -> bool {
    std::iter::once(&config.workspace)
        .chain(&config.additional_dirs)
        .any(|root| dir.starts_with(root))
}

/// A process request of one call, with the call's cancellation flag and deadline.
pub(crate) struct CallLink<'a> {
    pub access: Option<&'a ProcessAccess>,
    pub cancel: &'a AtomicBool,
    pub deadline: Instant,
}

impl CallLink<'_> {
    fn access(&self) -> Result<&ProcessAccess, ProcessError> {
        self.access.ok_or_else(|| {
            ProcessError::NotGranted(
                "this component has no process grant; its manifest must name the programs it runs"
                    .to_owned(),
            )
        })
    }

    /// The `process.run` import.
    pub(crate) fn run(&self, command: ProcessCommand) -> Result<ProcessFinished, ProcessError> {
        let access = self.access()?;
        let shell = &access.shell;
        let started = start_child(access, &command)?;
        let requested = Duration::from_millis(command.timeout_ms);
        let until = Instant::now()
            .checked_add(requested)
            .unwrap_or(self.deadline)
            .min(
                self.deadline
                    .checked_sub(DEADLINE_MARGIN)
                    .unwrap_or(self.deadline),
            );
        let child = &started.child;
        loop {
            if child.wait_until(Instant::now() + POLL).is_some() {
                break;
            }
            if self.cancel.load(Ordering::Relaxed) {
                child.kill(Kill::Cancel);
            } else if Instant::now() >= until {
                child.kill(Kill::Timeout);
            }
        }
        child.spool.wait_closed(Instant::now() + DRAIN);
        let notice = started.report.and_then(|report| {
            let reported = read_report(&report);
            settle_cwd(shell, reported.as_deref())
        });
        child
            .finished(notice)
            .ok_or_else(|| ProcessError::SpawnFailed("the child vanished".to_owned()))
    }

    /// The `process.start` import.
    pub(crate) fn start(&self, command: ProcessCommand) -> Result<String, ProcessError> {
        let access = self.access()?;
        let command = ProcessCommand {
            report_cwd: false,
            ..command
        };
        let label = command.args.last().cloned().unwrap_or_default();
        let shell = &access.shell;
        let running = shell
            .tasks()
            .values()
            .filter(|task| task.child.exit().is_none())
            .count();
        if running >= MAX_RUNNING_TASKS {
            return Err(ProcessError::SpawnFailed(format!(
                "{running} background tasks are running in this session; stop one with TaskStop first"
            )));
        }
        let started = start_child(access, &command)?;
        let id = format!("task-{}", shell.next_task.fetch_add(1, Ordering::Relaxed));
        shell.tasks().insert(
            id.clone(),
            Task {
                owner: access.owner.clone(),
                label,
                child: started.child,
                read_offset: 0,
            },
        );
        Ok(id)
    }

    /// The `process.task-output` import.
    pub(crate) fn task_output(&self, id: &str, wait_ms: u64) -> Result<TaskStatus, ProcessError> {
        let access = self.access()?;
        let shell = &access.shell;
        let child = task_child(shell, &access.owner, id)?;
        let until = Instant::now()
            .checked_add(Duration::from_millis(wait_ms))
            .unwrap_or(self.deadline)
            .min(
                self.deadline
                    .checked_sub(DEADLINE_MARGIN)
                    .unwrap_or(self.deadline),
            );
        while child.exit().is_none()
            && Instant::now() < until
            && !self.cancel.load(Ordering::Relaxed)
        {
            child.wait_until(Instant::now() + POLL);
        }
        if child.exit().is_some() {
            child.spool.wait_closed(Instant::now() + DRAIN);
        }
        Ok(task_status(shell, id))
    }

    /// The `process.task-stop` import.
    pub(crate) fn task_stop(&self, id: &str) -> Result<TaskStatus, ProcessError> {
        let access = self.access()?;
        let shell = &access.shell;
        let child = task_child(shell, &access.owner, id)?;
        child.kill(Kill::Stop);
        child.wait_until(Instant::now() + DRAIN);
        child.spool.wait_closed(Instant::now() + DRAIN);
        Ok(task_status(shell, id))
    }
}

/// Task `id`'s child when `owner` started it, or an error listing the tasks `owner` started.
fn task_child(shell: &Shell, owner: &str, id: &str) -> Result<Arc<Child>, ProcessError> {
    // One lock for both the lookup and the error (the mutex is not reentrant).
    let tasks = shell.tasks();
    if let Some(task) = tasks.get(id).filter(|task| task.owner == owner) {
        return Ok(Arc::clone(&task.child));
    }
    let known: Vec<String> = tasks
        .iter()
        .filter(|(_, task)| task.owner == owner)
        .map(|(id, _)| id.clone())
        .collect();
    Err(ProcessError::UnknownTask(if known.is_empty() {
        format!("no background task {id:?}: this session has none")
    } else {
        format!(
            "no background task {id:?}; the session has {}",
            known.join(", ")
        )
    }))
}

/// The status of task `id`, with its output since the last look (which this advances).
fn task_status(shell: &Shell, id: &str) -> TaskStatus {
    let mut tasks = shell.tasks();
    let Some(task) = tasks.get_mut(id) else {
        return TaskStatus {
            id: id.to_owned(),
            label: String::new(),
            finished: None,
            new_output: String::new(),
            output_bytes: 0,
            output_path: String::new(),
        };
    };
    let (bytes, output_path) = {
        let captured = task.child.spool.lock();
        (captured.bytes, saved_path(&task.child.spool, &captured))
    };
    // Only what was counted under the lock: a byte written since is the next look's.
    let new_output = if output_path.is_empty() {
        String::new()
    } else {
        let unread = usize::try_from(bytes.saturating_sub(task.read_offset)).unwrap_or(usize::MAX);
        spool::read_from(
            &task.child.spool.path,
            task.read_offset,
            TASK_OUTPUT_BYTES.min(unread),
        )
    };
    task.read_offset = (task.read_offset + new_output.len() as u64).min(bytes);
    TaskStatus {
        id: id.to_owned(),
        label: task.label.clone(),
        finished: task.child.finished(None),
        new_output,
        output_bytes: bytes,
        output_path,
    }
}

/// Both notices, one per line, or whichever there is.
fn lines(first: Option<String>, second: Option<String>) -> Option<String> {
    match (first, second) {
        (Some(first), Some(second)) => Some(format!("{first}\n{second}")),
        (first, second) => first.or(second),
    }
}

/// Where a child's output is kept, or nothing (`""`) while it printed nothing: the file is made
/// with the first byte.
fn saved_path(spool: &Spool, captured: &spool::Captured) -> String {
    if captured.file_made {
        spool.path.to_string_lossy().into_owned()
    } else {
        String::new()
    }
}

/// A child just started, with the read end of its directory report.
struct Started {
    child: Arc<Child>,
    report: Option<std::io::PipeReader>,
}

/// Checks `command` against the grants and starts it confined.
fn start_child(access: &ProcessAccess, command: &ProcessCommand) -> Result<Started, ProcessError> {
    let shell = &access.shell;
    let config = &shell.config;
    let grant = access
        .grants
        .iter()
        .find(|grant| grant.covers(&command.program, &command.args))
        .ok_or_else(|| {
            let granted: Vec<String> = access.grants.iter().map(ToString::to_string).collect();
            ProcessError::NotGranted(format!(
                "{} with these arguments is not granted (granted: {})",
                command.program,
                granted.join("; ")
            ))
        })?;
    for (name, _) in &command.env {
        let valid = name
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid || !grant.allows_env(name) {
            return Err(ProcessError::NotGranted(format!(
                "setting environment variable {name} is not granted"
            )));
        }
    }
    let cwd = match &command.cwd {
        Some(cwd) => {
            let cwd = std::fs::canonicalize(cwd).map_err(|error| {
                ProcessError::SpawnFailed(format!("cannot use directory {cwd}: {error}"))
            })?;
            if !within(&cwd, config) {
                return Err(ProcessError::SpawnFailed(format!(
                    "directory {} is outside the workspace and additional directories",
                    cwd.display()
                )));
            }
            cwd
        }
        None => shell.current_dir(),
    };
    let spawn_error = |what: &str, error: std::io::Error| {
        ProcessError::SpawnFailed(format!("cannot start {}: {what}: {error}", command.program))
    };
    let (output, output_writer) = std::io::pipe().map_err(|error| spawn_error("pipe", error))?;
    let (report, report_writer) = if command.report_cwd {
        let (reader, writer) = std::io::pipe().map_err(|error| spawn_error("pipe", error))?;
        (Some(reader), Some(std::os::fd::OwnedFd::from(writer)))
    } else {
        (None, None)
    };
    let env = child_env(Some(grant), &command.env, &config.temp_dir);
    let stdin =
        std::fs::File::open("/dev/null").map_err(|error| spawn_error("/dev/null", error))?;
    let stdout = std::os::fd::OwnedFd::from(
        output_writer
            .try_clone()
            .map_err(|error| spawn_error("pipe", error))?,
    );
    let stderr = std::os::fd::OwnedFd::from(output_writer);
    let (process, absent) = launch(
        shell,
        &Launch {
            program: Path::new(&command.program),
            args: &command.args,
            env,
            requested_env: &command.env,
            cwd: &cwd,
            // A background task (no timeout) may run as long as the session.
            cpu_seconds: match command.timeout_ms {
                0 => libc::RLIM_INFINITY,
                timeout => timeout.div_ceil(1000).saturating_add(60),
            },
            passed: report_writer.into_iter().collect(),
        },
        [std::os::fd::OwnedFd::from(stdin), stdout, stderr],
    )?;
    let group = i32::try_from(process.id()).unwrap_or(0);
    // The process id too: two `janua call` processes of one session count from 1 each.
    let spool_path = config.spool_dir.join(format!(
        "process-{}-{}-{}.log",
        janua_types::unix_ms(),
        std::process::id(),
        shell.next_spool.fetch_add(1, Ordering::Relaxed)
    ));
    let spool = match Spool::start(output, spool_path, config.output_cap, move || {
        kill_group(group)
    }) {
        Ok(spool) => spool,
        Err(error) => {
            kill_group(group);
            // Reap it, so no zombie is left behind.
            let mut process = process;
            let _ = janua_confine::workers::run(move || drop(process.wait()));
            return Err(spawn_error("output copier", error));
        }
    };
    let child = Arc::new(Child {
        group,
        spool,
        cwd,
        exit: Mutex::new(None),
        exited: Condvar::new(),
        killed: Mutex::new(None),
        absent,
        set_aside: Mutex::new(None),
        made_by_host: Arc::clone(&shell.made_by_host),
    });
    watch(process, Arc::clone(&child));
    Ok(Started { child, report })
}

/// Why a foreground command ([`Shell::run_foreground`]) did not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForegroundError {
    /// The kernel lacks what the process sandbox needs, and the operator did not allow
    /// unsandboxed runs.
    #[error("the process sandbox is unavailable: {0}")]
    Unavailable(String),
    /// The program was not found or could not be started.
    #[error("{0}")]
    Start(String),
}

/// How a foreground command ([`Shell::run_foreground`]) ended.
#[derive(Debug)]
pub struct Foreground {
    /// Its exit status.
    pub status: std::process::ExitStatus,
    /// What was set aside: protected paths the command created, said in words.
    pub set_aside: Option<String>,
}

/// `program` as given when it names a path, else the first executable file of that name on
/// `path`.
fn find_program(program: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    if program.is_empty() {
        return None;
    }
    path.split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// What [`launch`] starts: one program, confined as every `Bash` command is.
struct Launch<'a> {
    program: &'a Path,
    args: &'a [String],
    /// The child's whole environment before its private home is added.
    env: Vec<(String, String)>,
    /// What the caller asked for by name, which wins over the private home's variables.
    requested_env: &'a [(String, String)],
    cwd: &'a Path,
    cpu_seconds: u64,
    /// Descriptors the child keeps beyond stdio (fd 3 onwards).
    passed: Vec<std::os::fd::OwnedFd>,
}

/// Starts `launch` under the session's confinement with `stdio` as its standard input, output and
/// error: a private home, the root of the workspace, the additional and temporary directories and
/// the toolchains, the rules' view, no network, Landlock, seccomp and limits (nothing of it for
/// an unsandboxed session, the operator's choice). Returns the child and the protected paths that
/// were absent when it started.
fn launch(
    shell: &Shell,
    launch: &Launch<'_>,
    stdio: [std::os::fd::OwnedFd; 3],
) -> Result<(spawn::Spawned, Vec<view::Guarded>), ProcessError> {
    let config = &shell.config;
    let program = launch.program.display();
    let spawn_error = |what: &str, error: std::io::Error| {
        ProcessError::SpawnFailed(format!("cannot start {program}: {what}: {error}"))
    };
    let sandboxed = match config.sandbox {
        ProcessSandbox::Unsandboxed => false,
        ProcessSandbox::Unavailable => {
            return Err(ProcessError::SandboxUnavailable(
                "the process sandbox is unavailable (forced off); pass --unsandboxed-process to run without it".to_owned(),
            ));
        }
        ProcessSandbox::Required => {
            if let Some(missing) = KernelSupport::probe().missing() {
                return Err(ProcessError::SandboxUnavailable(format!(
                    "{missing}; run `janua doctor`, or pass --unsandboxed-process to run without the process sandbox"
                )));
            }
            true
        }
    };
    std::fs::create_dir_all(&config.temp_dir).map_err(|error| {
        ProcessError::SpawnFailed(format!(
            "cannot create the session's temporary directory {}: {error}",
            config.temp_dir.display()
        ))
    })?;
    let mut env = launch.env.clone();
    // A sandboxed child gets a private HOME and the toolchains on its PATH; an unsandboxed one
    // (the operator's explicit choice) keeps the host's.
    let home = if sandboxed {
        let path = env
            .iter()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| value.clone())
            .unwrap_or_default();
        let identity = shell.identity.get_or_init(home::GitIdentity::of_host);
        home::reset(&config.temp_dir, identity).map_err(|error| {
            ProcessError::SpawnFailed(format!("cannot prepare the command's home: {error}"))
        })?;
        let home = shell.toolchains(&path);
        for (name, value) in &home.env {
            // What the command itself asks for still wins.
            if !launch
                .requested_env
                .iter()
                .any(|(requested, _)| requested == name)
            {
                env.retain(|(existing, _)| existing != name);
                env.push((name.clone(), value.clone()));
            }
        }
        home.read_dirs
    } else {
        Vec::new()
    };
    let confinement = Confinement {
        read_dirs: std::iter::once(config.workspace.clone())
            .chain(config.additional_dirs.iter().cloned())
            .chain(home)
            .collect(),
        write_dirs: vec![config.workspace.clone(), config.temp_dir.clone()],
        isolate_network: true,
        syscalls: janua_confine::SyscallProfile::Command,
        own_proc_readable: false,
        limits: ResourceLimits {
            cpu_seconds: launch.cpu_seconds,
            ..ResourceLimits::default()
        },
        sandboxed,
    };
    let image = first::Image::new(launch.program, launch.args, &env)
        .map_err(|error| spawn_error("arguments", std::io::Error::other(error)))?;
    let passed = launch
        .passed
        .iter()
        .map(std::os::fd::OwnedFd::try_clone)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| spawn_error("descriptors", error))?;
    let prepared = confinement
        .prepare(passed)
        .map_err(|error| ProcessError::SandboxUnavailable(error.to_string()))?;
    // An unsandboxed child (the operator's choice) gets no root and no view: neither is
    // looked for.
    let (prepared, absent) = if sandboxed {
        let mounts = view::MountPlan::build(&config.view);
        let absent = mounts.guarded().to_vec();
        let root =
            shell
                .root_plan
                .plan(&confinement.read_dirs, &confinement.write_dirs, launch.cwd);
        (prepared.with_view(root, mounts, image).share_root(), absent)
    } else {
        (prepared.with_image(image), Vec::new())
    };
    // The command is started by `spawn.rs` (sharing the host's memory until it executes, not
    // copying it); `image` holds its program, arguments and environment.
    let cwd = launch.cwd.to_path_buf();
    let process = on_spawner(move || {
        let [stdin, stdout, stderr] = &stdio;
        spawn::spawn(&prepared, &cwd, [stdin, stdout, stderr])
    })
    .and_then(|spawned| spawned)
    .map_err(|error| spawn_error("spawn", error))?;
    Ok((process, absent))
}

/// Waits for `process` on a thread; records its exit, then kills what it left in its group (a
/// command's leftovers die with it; servers belong in background tasks).
fn watch(mut process: spawn::Spawned, child: Arc<Child>) {
    let waited = janua_confine::workers::run({
        let child = Arc::clone(&child);
        move || {
            let status = process.wait();
            kill_group(child.group);
            // Before anyone hears that it ended, so no later call finds what it made.
            let absent: Vec<view::Guarded> = {
                let made_by_host = child
                    .made_by_host
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner());
                child
                    .absent
                    .iter()
                    .filter(|guarded| {
                        !made_by_host
                            .iter()
                            .any(|made| made.starts_with(guarded.path()))
                    })
                    .cloned()
                    .collect()
            };
            *child
                .set_aside
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()) =
                view::set_aside(&absent, u128::from(janua_types::unix_ms()));
            let status = status.unwrap_or_else(|_| std::process::ExitStatus::from_raw(-1));
            *child
                .exit
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()) = Some(status);
            child.exited.notify_all();
        }
    });
    if waited.is_err() {
        kill_group(child.group);
        *child
            .exit
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) =
            Some(std::process::ExitStatus::from_raw(libc::SIGKILL));
        child.exited.notify_all();
    }
}

/// The scrubbed environment: the inherited names, `LC_*`, the grant's names, what the command
/// sets, and `TMPDIR`.
fn child_env(
    grant: Option<&ProcessGrant>,
    requested: &[(String, String)],
    temp_dir: &Path,
) -> Vec<(String, String)> {
    let mut env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| {
            INHERITED_ENV.contains(&name.as_str())
                || name.starts_with("LC_")
                || grant.is_some_and(|grant| grant.allows_env(name))
        })
        .collect();
    env.entry("PATH".to_owned())
        .or_insert_with(|| DEFAULT_PATH.to_owned());
    env.insert("TMPDIR".to_owned(), temp_dir.to_string_lossy().into_owned());
    env.extend(requested.iter().cloned());
    env.into_iter().collect()
}

/// The directory a child reported on fd 3 (never blocks: a leftover could hold the pipe).
fn read_report(report: &std::io::PipeReader) -> Option<PathBuf> {
    use std::io::Read as _;
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let fd = report.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    let mut bytes = Vec::new();
    let reader = report;
    let _ = reader.take(8192).read_to_end(&mut bytes);
    let text = String::from_utf8(bytes).ok()?;
    let line = text.lines().rfind(|line| !line.is_empty())?;
    Some(PathBuf::from(line))
}

/// Keeps `reported` as the shell directory when it is inside the workspace (or an additional
/// directory); otherwise resets to the workspace and says so.
fn settle_cwd(shell: &Shell, reported: Option<&Path>) -> Option<String> {
    let reported = reported?;
    let config = &shell.config;
    match std::fs::canonicalize(reported) {
        Ok(dir) if within(&dir, config) => {
            shell.set_cwd(dir);
            None
        }
        _ => {
            shell.set_cwd(config.workspace.clone());
            Some(format!(
                "Shell cwd was reset to {}: {} is outside the workspace and additional directories",
                config.workspace.display(),
                reported.display()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `PATH` entry a command can write is never a read grant of its own: kept by name for
    /// the session, it could be swapped for a link to a credential store.
    #[test]
    fn path_entries_commands_can_write_are_not_kept_as_read_grants() {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let (workspace, temp_dir, tools) = (base.join("ws"), base.join("tmp"), base.join("tools"));
        for dir in [
            workspace.join(".venv/bin"),
            temp_dir.join("bin"),
            tools.clone(),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let shell = Shell::new(ShellConfig {
            workspace: workspace.clone(),
            additional_dirs: Vec::new(),
            temp_dir: temp_dir.clone(),
            spool_dir: base.join("results"),
            sandbox: ProcessSandbox::Required,
            output_cap: 1 << 20,
            cwd: None,
            view: view::ViewRules::default(),
        });
        let path = std::env::join_paths([
            workspace.join(".venv/bin"),
            temp_dir.join("bin"),
            tools.clone(),
        ])
        .unwrap();
        let found = shell.toolchains(&path.to_string_lossy());
        assert_eq!(found.read_dirs, vec![tools]);
    }
}
