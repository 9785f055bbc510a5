//! One guest invocation: a fresh store from the cached `InstancePre`, the WASI context built from the
//! call's grants, memory limits, an epoch deadline, and classification of every way it can end.
//!
//! A store is never reused: after a trap it is poisoned, and a fresh one per call also means no state
//! leaks between calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::{Engine, PoolConcurrencyLimitError, ResourceLimiter, Store, Trap, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::ComponentPre;
use super::bindings::{
    BrowserHost, CallContext, Host, LogLevel, ProcessCommand, ProcessError, ProcessFinished,
    ProcessHost, TaskStatus, WitBrowserError, WitPageInfo, WitToolError, WitToolOutput,
    WitToolSpec,
};
use super::engine::EPOCH_TICK;
use super::grants::ResolvedGrants;
use super::hidden::{HiddenPaths, HidingFs, PathView};
use super::http::{HttpHooks, NetPolicy};
use super::limits::Limits;
use super::pipe::CappedPipe;
use super::wasi;

/// Extra wall-clock time past the deadline (or past a cancellation) before the host abandons a
/// guest stuck in a host call.
const BACKSTOP: Duration = Duration::from_secs(1);
/// Abandoned guests (threads still blocked in host calls) tolerated before new calls are refused;
/// well under the pooling allocator's instance slots.
pub(crate) const MAX_ABANDONED: usize = 16;
/// Characters of guest stderr quoted in a crash report.
const STDERR_TAIL_CHARS: usize = 2000;
/// Log lines a guest may write per call; more are counted and dropped.
const MAX_LOG_LINES: u32 = 1000;
/// Characters kept of one guest log line.
const MAX_LOG_CHARS: usize = 2000;

/// What to ask the guest. Owned, because the guest runs on its own thread.
pub enum GuestRequest {
    /// `describe()`.
    Describe,
    /// `validate-input(tool, input, ctx)`.
    Validate {
        /// The tool's name.
        tool: String,
        /// The input, as JSON text.
        input: String,
        /// Who calls, from where.
        ctx: CallContext,
    },
    /// `call(tool, input, ctx)`.
    Call {
        /// The tool's name.
        tool: String,
        /// The input, as JSON text.
        input: String,
        /// Who calls, from where.
        ctx: CallContext,
    },
    /// A hook's `handle(event)`.
    Hook {
        /// The event, as JSON text.
        event: String,
    },
}

/// What the guest answered.
pub enum GuestReply {
    /// What `describe()` returned.
    Specs(Vec<WitToolSpec>),
    /// What `validate-input` returned: the guest's own refusal is data.
    Validated(Result<(), String>),
    /// What `call` returned: the guest's own error is data.
    Called(Result<WitToolOutput, WitToolError>),
    /// A hook's or monitor's answer: JSON text, or its own error.
    Answered(Result<String, String>),
}

/// Why a guest invocation did not produce an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestFailure {
    /// The guest trapped (panic, unreachable, bad memory access, ...).
    Trap(String),
    /// The deadline passed.
    Timeout(Duration),
    /// The call was cancelled.
    Cancelled,
    /// A memory or table limit was hit.
    ResourceExhausted(String),
    /// The sandbox could not be set up (e.g. a granted directory vanished).
    Setup(String),
}

/// Everything that came out of one invocation.
pub struct GuestRun {
    /// The guest's answer, or why there is none.
    pub reply: Result<GuestReply, GuestFailure>,
    /// Progress messages the guest reported.
    pub progress: Vec<String>,
    /// What the outgoing-request policy refused or stopped.
    pub net: NetOutcome,
}

impl GuestRun {
    /// A run that never reached the guest's answer.
    pub(super) fn failed(failure: GuestFailure) -> Self {
        Self {
            reply: Err(failure),
            progress: Vec::new(),
            net: NetOutcome::default(),
        }
    }

    /// The run's record once the guest returned (or trapped), taken from its store, which is
    /// then dropped here: giving its pool slot back resets the instance's memory, and that work
    /// belongs to the thread that ran the guest.
    fn finished(
        mut store: Store<CallState>,
        result: wasmtime::Result<GuestReply>,
        timeout: Duration,
        stderr: &CappedPipe,
    ) -> Self {
        let reply = result.map_err(|error| classify(store.data(), &error, timeout, stderr));
        let progress = std::mem::take(&mut store.data_mut().progress);
        let (mut refused, mut timed_out) = store.data().http_hooks.report();
        if let Some(browser) = &store.data().browser {
            let (blocked, browser_timed_out) = browser.outcome();
            refused.extend(blocked);
            timed_out |= browser_timed_out;
        }
        drop(store);
        Self {
            reply,
            progress,
            net: NetOutcome { refused, timed_out },
        }
    }
}

/// What happened to a call's outgoing HTTP requests, for mapping the tool's error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetOutcome {
    /// Why requests were refused by the policy (the first few).
    pub refused: Vec<String>,
    /// A request was stopped at its deadline.
    pub timed_out: bool,
}

/// Per-call limits and controls.
pub struct CallSetup<'a> {
    /// The component's effective grants: all it may touch.
    pub grants: &'a ResolvedGrants,
    /// Time, memory and output limits.
    pub limits: Limits,
    /// Set to stop the call (the model or the operator cancelled it).
    pub cancel: Arc<AtomicBool>,
    /// How the component is named in logs and errors.
    pub label: &'a str,
    /// The session's files: its read record and what the rules hide.
    pub files: &'a FileAccess,
    /// The programs the call may run and the session's shell; `None`: no `process` access.
    pub process: Option<super::process::ProcessAccess>,
    /// What outgoing HTTP requests may reach; `None` refuses every request.
    pub net: Option<Arc<NetPolicy>>,
    /// The call's browser page; `None`: no `browser` access.
    pub browser: Option<super::browser::BrowserAccess>,
    /// Gets each progress message as the guest reports it (the messages are kept as well).
    pub on_progress: Option<ProgressSink>,
    /// Runs the guest's `delegate` calls; `None` refuses them (only `call` ever gets one).
    pub delegator: Option<&'a dyn super::delegate::Delegator>,
    /// Other calls run beside this one on the same task: the guest takes a blocking-pool
    /// thread, so they run in parallel (see `run` in `call.rs`).
    pub own_thread: bool,
}

/// Receives a call's progress messages as they come.
pub type ProgressSink = Arc<dyn Fn(&str) + Send + Sync>;

/// What the session adds to a guest's file access: paths hidden from its view (Read deny rules)
/// and the read record behind `record-read` and `read-digest`.
#[derive(Clone, Default)]
pub struct FileAccess {
    /// Paths the guest must not see, whatever its grants.
    pub hidden: Option<HiddenPaths>,
    /// The session's read record; without it `read-digest` answers nothing.
    pub reads: Option<Arc<crate::ReadLedger>>,
    /// The one file a write-class call may create or change (see `hidden.rs`).
    pub write_scope: Option<std::path::PathBuf>,
}

/// The store's data for one call.
pub(crate) struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: CallLimiter,
    cancel: Arc<AtomicBool>,
    deadline: Instant,
    stopped: Option<Stop>,
    log_lines: u32,
    progress: Vec<String>,
    on_progress: Option<ProgressSink>,
    label: String,
    fs_view: PathView,
    reads: Option<Arc<crate::ReadLedger>>,
    /// Granted directories a recorded (or looked-up) read must lie in.
    read_roots: Vec<std::path::PathBuf>,
    /// False during `validate-input`, which must leave no trace.
    may_record: bool,
    /// What the `process` import may run (only during `call`).
    process: Option<super::process::ProcessAccess>,
    /// The `browser` import's page (only during `call`); dropping it closes the page.
    browser: Option<super::browser::BrowserAccess>,
    http: WasiHttpCtx,
    http_hooks: HttpHooks,
    /// Where the guest's `delegate` calls go (only during `call`, with a delegator).
    delegate: Option<super::delegate::DelegateLink>,
}

impl CallState {
    /// The channel to the call's task, when the guest may delegate.
    pub(super) fn delegate_link(&self) -> Option<&super::delegate::DelegateLink> {
        self.delegate.as_ref()
    }

    /// True once the call was cancelled.
    pub(super) fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// When the call's time runs out.
    pub(super) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Gives a resident instance a fresh deadline and a clean slate of per-event counters.
    pub(super) fn rearm(&mut self, timeout: Duration) {
        self.deadline = far_deadline(timeout);
        self.stopped = None;
        self.log_lines = 0;
        self.progress.clear();
    }

    /// True when `path` is absolute, without `..`, inside the call's granted directories and not
    /// hidden: the only paths the read record answers about or takes records for.
    fn visible(&self, path: &str) -> bool {
        let path = std::path::Path::new(path);
        path.is_absolute()
            && !path
                .components()
                .any(|part| matches!(part, std::path::Component::ParentDir))
            && self.read_roots.iter().any(|root| path.starts_with(root))
            && !self.fs_view.hides(path)
    }

    /// The filesystem host: wasmtime-wasi's, behind the hidden-path checks.
    pub(crate) fn hiding_fs(&mut self) -> HidingFs<'_> {
        HidingFs {
            inner: wasmtime_wasi::filesystem::WasiFilesystemCtxView {
                ctx: self.wasi.filesystem(),
                table: &mut self.table,
            },
            view: &mut self.fs_view,
        }
    }
}

#[derive(Clone, Copy)]
enum Stop {
    Timeout,
    Cancelled,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl ProcessHost for CallState {
    fn run(&mut self, command: ProcessCommand) -> Result<ProcessFinished, ProcessError> {
        self.process_link().run(command)
    }

    fn start(&mut self, command: ProcessCommand) -> Result<String, ProcessError> {
        self.process_link().start(command)
    }

    fn task_output(&mut self, id: String, wait_ms: u64) -> Result<TaskStatus, ProcessError> {
        self.process_link().task_output(&id, wait_ms)
    }

    fn task_stop(&mut self, id: String) -> Result<TaskStatus, ProcessError> {
        self.process_link().task_stop(&id)
    }
}

impl BrowserHost for CallState {
    fn open(&mut self, url: String, timeout_ms: u64) -> Result<WitPageInfo, WitBrowserError> {
        self.browser_link()
            .open(&url, timeout_ms)
            .map(|info| WitPageInfo {
                url: info.url,
                title: info.title,
                status: info.status,
            })
            .map_err(wit_browser_error)
    }

    fn wait_for_selector(
        &mut self,
        selector: String,
        timeout_ms: u64,
    ) -> Result<(), WitBrowserError> {
        self.browser_link()
            .wait_for_selector(&selector, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn wait_for_network_idle(
        &mut self,
        idle_ms: u64,
        timeout_ms: u64,
    ) -> Result<(), WitBrowserError> {
        self.browser_link()
            .wait_for_network_idle(idle_ms, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn text(
        &mut self,
        selector: Option<String>,
        timeout_ms: u64,
    ) -> Result<String, WitBrowserError> {
        self.browser_link()
            .text(selector.as_deref(), timeout_ms)
            .map_err(wit_browser_error)
    }

    fn accessibility_tree(&mut self, timeout_ms: u64) -> Result<String, WitBrowserError> {
        self.browser_link()
            .accessibility_tree(timeout_ms)
            .map_err(wit_browser_error)
    }

    fn click(&mut self, selector: String, timeout_ms: u64) -> Result<(), WitBrowserError> {
        self.browser_link()
            .click(&selector, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn type_text(
        &mut self,
        selector: String,
        text: String,
        timeout_ms: u64,
    ) -> Result<(), WitBrowserError> {
        self.browser_link()
            .type_text(&selector, &text, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn evaluate(&mut self, expression: String, timeout_ms: u64) -> Result<String, WitBrowserError> {
        self.browser_link()
            .evaluate(&expression, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn screenshot(&mut self, timeout_ms: u64) -> Result<Vec<u8>, WitBrowserError> {
        self.browser_link()
            .screenshot(timeout_ms)
            .map_err(wit_browser_error)
    }

    fn refused(&mut self) -> Vec<String> {
        self.browser_link().refused()
    }
}

fn wit_browser_error(error: super::browser::BrowserError) -> WitBrowserError {
    use super::browser::BrowserError;
    match error {
        BrowserError::NotGranted(message) => WitBrowserError::NotGranted(message),
        BrowserError::Unavailable(message) => WitBrowserError::Unavailable(message),
        BrowserError::Blocked(message) => WitBrowserError::Blocked(message),
        BrowserError::Timeout(message) => WitBrowserError::Timeout(message),
        BrowserError::NoElement(message) => WitBrowserError::NoElement(message),
        BrowserError::ScriptError(message) => WitBrowserError::ScriptError(message),
        BrowserError::NoPage(message) => WitBrowserError::NoPage(message),
        BrowserError::Failed(message) => WitBrowserError::Failed(message),
    }
}

impl CallState {
    fn browser_link(&mut self) -> super::browser::BrowserLink<'_> {
        super::browser::BrowserLink {
            access: self.browser.as_mut(),
            cancel: &self.cancel,
            deadline: self.deadline,
        }
    }

    fn process_link(&self) -> super::process::CallLink<'_> {
        super::process::CallLink {
            access: self.process.as_ref(),
            cancel: &self.cancel,
            deadline: self.deadline,
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_hooks,
        }
    }
}

impl Host for CallState {
    fn log(&mut self, level: LogLevel, message: String) {
        self.log_lines = self.log_lines.saturating_add(1);
        if self.log_lines > MAX_LOG_LINES {
            return;
        }
        let message = printable(&message);
        let label = &self.label;
        match level {
            LogLevel::Trace => {
                tracing::trace!(target: "janua::guest", component = %label, "{message}")
            }
            LogLevel::Debug => {
                tracing::debug!(target: "janua::guest", component = %label, "{message}")
            }
            LogLevel::Info => {
                tracing::info!(target: "janua::guest", component = %label, "{message}")
            }
            LogLevel::Warn => {
                tracing::warn!(target: "janua::guest", component = %label, "{message}")
            }
            LogLevel::Error => {
                tracing::error!(target: "janua::guest", component = %label, "{message}")
            }
        }
    }

    fn progress(&mut self, message: String) {
        if self.progress.len() < MAX_LOG_LINES as usize {
            let message: String = message.chars().take(MAX_LOG_CHARS).collect();
            if let Some(sink) = &self.on_progress {
                sink(&message);
            }
            self.progress.push(message);
        }
    }

    fn cancelled(&mut self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    fn record_read(&mut self, path: String, digest: String) {
        if let Some(reads) = &self.reads
            && self.may_record
            && self.visible(&path)
        {
            reads.record(&path, &digest);
        }
    }

    fn read_digest(&mut self, path: String) -> Option<String> {
        let reads = self.reads.as_ref()?;
        self.visible(&path).then(|| reads.digest(&path)).flatten()
    }
}

/// At most [`MAX_LOG_CHARS`] characters of `message`, with control characters escaped so a guest
/// cannot drive the operator's terminal.
fn printable(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(MAX_LOG_CHARS));
    for c in message.chars().take(MAX_LOG_CHARS) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Memory and table limits; remembers a refusal so that the resulting trap is reported as
/// `resource_exhausted` instead of a crash. The memory cap covers all of a call's linear memories
/// together, not each one.
struct CallLimiter {
    memory_bytes: u64,
    memory_in_use: u64,
    refused: Option<String>,
}

const MAX_TABLE_ELEMENTS: usize = 100_000;

impl ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let growth = (desired as u64).saturating_sub(current as u64);
        let total = self.memory_in_use.saturating_add(growth);
        if total > self.memory_bytes {
            self.refused = Some(format!(
                "memory limit of {} MiB reached (the guest asked for {} MiB in all)",
                self.memory_bytes >> 20,
                total.div_ceil(1 << 20)
            ));
            return Ok(false);
        }
        self.memory_in_use = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > MAX_TABLE_ELEMENTS {
            self.refused = Some(format!(
                "table limit of {MAX_TABLE_ELEMENTS} elements reached"
            ));
            return Ok(false);
        }
        Ok(true)
    }

    fn instances(&self) -> usize {
        32
    }

    fn tables(&self) -> usize {
        64
    }

    fn memories(&self) -> usize {
        4
    }
}

/// Runs `request` in a fresh instance of `pre` under `setup`, in one of three places (the thread
/// hand-off to the blocking pool was most of a small call's cost, so it is the last resort):
///
/// - **Inline, on the calling task**, when the guest can reach no file, process or delegator:
///   no preopened directory, no `process` access, no delegation. Such a guest's host calls never
///   block (clocks, streams and `wasi:http` are async), so it runs with wasmtime's async support
///   and yields to other tasks at every epoch tick. At the backstop its future is dropped.
/// - **In place** ([`run_in_place`]), synchronously on this thread, when it has files or
///   processes but no delegator and the runtime is multi-thread.
/// - **On a thread of tokio's blocking pool** otherwise (a delegating guest, whose task must serve
///   its nested calls meanwhile; a current-thread runtime; a call that runs beside others on the
///   same task, `own_thread`, which would otherwise wait for them), synchronously: WASI file calls run
///   inline on that thread (3x faster than bouncing each one through the pool) and `process`
///   calls wait there. The epoch deadline stops guest code; if the guest is stuck inside a host
///   call instead (a hung mount), the backstop abandons the thread and the call ends with
///   `timeout` while the host keeps serving.
pub(crate) async fn run(
    engine: &Engine,
    pre: &ComponentPre,
    abandoned: &Arc<AtomicUsize>,
    setup: CallSetup<'_>,
    request: GuestRequest,
) -> GuestRun {
    if abandoned.load(Ordering::Relaxed) >= MAX_ABANDONED {
        return GuestRun::failed(GuestFailure::ResourceExhausted(format!(
            "{MAX_ABANDONED} earlier calls are still stuck in host calls; no new guest starts until they end"
        )));
    }
    let cancel = Arc::clone(&setup.cancel);
    let timeout = setup.limits.timeout;
    let may_record = matches!(request, GuestRequest::Call { .. });
    let delegator = setup.delegator.filter(|_| may_record);
    let (delegate_link, mut delegated) = match delegator {
        Some(_) => {
            let (link, requests) = tokio::sync::mpsc::unbounded_channel();
            (Some(link), Some(requests))
        }
        None => (None, None),
    };
    let inline = !setup.own_thread
        && setup.grants.dirs.is_empty()
        && ((setup.process.is_none() && setup.browser.is_none()) || !may_record)
        && delegator.is_none();
    if inline {
        return run_inline(engine, pre, setup, request, may_record).await;
    }
    if !setup.own_thread && delegator.is_none() && may_block_in_place() {
        return run_in_place(engine, pre, setup, request, may_record);
    }
    let (store, stderr) = match new_store(engine, setup, may_record, false) {
        Ok(built) => built,
        Err(failure) => return GuestRun::failed(failure),
    };
    let mut store = store;
    store.data_mut().delegate = delegate_link;
    let pre = pre.clone();
    // The store is dropped on the guest's thread too: giving its pool slot back resets the
    // instance's memory (page-table work), which must not take an async worker's time.
    let mut guest = tokio::task::spawn_blocking(move || {
        let result = invoke(&mut store, &pre, request);
        GuestRun::finished(store, result, timeout, &stderr)
    });
    let backstop = far_deadline(timeout.saturating_add(BACKSTOP));
    let mut cancel_seen: Option<Instant> = None;
    loop {
        tokio::select! {
            joined = &mut guest => {
                return match joined {
                    Ok(run) => run,
                    Err(join_error) => GuestRun::failed(GuestFailure::Setup(format!(
                        "the guest thread failed: {join_error}"
                    ))),
                };
            }
            Some(request) = next_request(&mut delegated) => {
                if let Some(delegator) = delegator {
                    let answer = delegator
                        .delegate(request.tool, request.input, request.deadline)
                        .await;
                    // A guest that stopped waiting (trapped, timed out) just drops it.
                    let _ = request.reply.send(answer);
                }
                continue;
            }
            () = tokio::time::sleep(EPOCH_TICK) => {}
        }
        // Still running: the epoch callback stops guest code, so a guest here past its deadline
        // (or a grace period after cancellation) is stuck in a host call. Abandon its thread.
        let now = Instant::now();
        if cancel.load(Ordering::Relaxed) {
            let seen = *cancel_seen.get_or_insert(now);
            if now.duration_since(seen) >= BACKSTOP {
                return abandon(guest, abandoned, GuestFailure::Cancelled);
            }
        }
        if now >= backstop {
            return abandon(guest, abandoned, GuestFailure::Timeout(timeout));
        }
    }
}

/// [`run`] for a guest that can reach no file, process or delegator: on this task, async.
async fn run_inline(
    engine: &Engine,
    pre: &ComponentPre,
    setup: CallSetup<'_>,
    request: GuestRequest,
    may_record: bool,
) -> GuestRun {
    let cancel = Arc::clone(&setup.cancel);
    let timeout = setup.limits.timeout;
    let (mut store, stderr) = match new_store(engine, setup, may_record, true) {
        Ok(built) => built,
        Err(failure) => return GuestRun::failed(failure),
    };
    let pre = pre.clone();
    let guest = async move {
        let result = invoke_inline(&mut store, &pre, request).await;
        GuestRun::finished(store, result, timeout, &stderr)
    };
    let mut guest = std::pin::pin!(guest);
    let backstop = far_deadline(timeout.saturating_add(BACKSTOP));
    let mut cancel_seen: Option<Instant> = None;
    loop {
        tokio::select! {
            run = &mut guest => return run,
            () = tokio::time::sleep(EPOCH_TICK) => {}
        }
        // Guest code yields at every tick and stops itself at its deadline; a guest still here
        // past the backstop is waiting in a host call (a long sleep), and dropping its future
        // ends that call and frees its instance.
        let now = Instant::now();
        let stopped = if cancel.load(Ordering::Relaxed) {
            let seen = *cancel_seen.get_or_insert(now);
            (now.duration_since(seen) >= BACKSTOP).then_some(GuestFailure::Cancelled)
        } else {
            None
        };
        if let Some(failure) =
            stopped.or_else(|| (now >= backstop).then_some(GuestFailure::Timeout(timeout)))
        {
            return GuestRun::failed(failure);
        }
    }
}

/// True on a worker (or `block_on` thread) of tokio's multi-thread runtime, where
/// `block_in_place` hands the worker's other tasks to another thread; a current-thread runtime
/// has nobody to hand them to.
fn may_block_in_place() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// [`run`] for a guest with files or processes but no delegator, on this thread with the
/// synchronous bindings: tokio moves this worker's other tasks to another thread while it runs
/// (`block_in_place`), which only costs a wake-up when it does, where `spawn_blocking` costs a
/// round trip to another thread on every call. File calls cannot wait on another process (the
/// filesystem layer opens only regular files and directories) and `process` calls keep their
/// deadline, so only a filesystem that stops answering can hold the call past its deadline.
fn run_in_place(
    engine: &Engine,
    pre: &ComponentPre,
    setup: CallSetup<'_>,
    request: GuestRequest,
    may_record: bool,
) -> GuestRun {
    let timeout = setup.limits.timeout;
    let (mut store, stderr) = match new_store(engine, setup, may_record, false) {
        Ok(built) => built,
        Err(failure) => return GuestRun::failed(failure),
    };
    tokio::task::block_in_place(move || {
        let result = invoke(&mut store, pre, request);
        GuestRun::finished(store, result, timeout, &stderr)
    })
}

/// The guest's next `delegate` request; pending forever for a guest that cannot delegate.
async fn next_request(
    requests: &mut Option<tokio::sync::mpsc::UnboundedReceiver<super::delegate::DelegateRequest>>,
) -> Option<super::delegate::DelegateRequest> {
    match requests {
        Some(requests) => requests.recv().await,
        None => std::future::pending().await,
    }
}

/// A fresh store for one guest under `setup`, with its epoch deadline armed, and the guest's stderr
/// capture. `may_record`: the guest may take read records and use `process` (only `call` may).
/// `inline`: the store runs async on the calling task (see [`run`]), so guest code yields at every
/// epoch tick and WASI never blocks the thread.
pub(super) fn new_store(
    engine: &Engine,
    setup: CallSetup<'_>,
    may_record: bool,
    inline: bool,
) -> Result<(Store<CallState>, CappedPipe), GuestFailure> {
    let stdout = CappedPipe::new(setup.limits.stdio_bytes);
    let stderr = CappedPipe::new(setup.limits.stdio_bytes);
    let wasi = wasi::build_context(setup.grants, &stdout, &stderr, !inline)
        .map_err(GuestFailure::Setup)?;
    let timeout = setup.limits.timeout;
    let read_roots = setup
        .grants
        .dirs
        .iter()
        .map(|(dir, _)| dir.clone())
        .collect();
    let deadline = far_deadline(timeout);
    let state = CallState {
        wasi,
        table: ResourceTable::new(),
        limiter: CallLimiter {
            memory_bytes: setup.limits.memory_bytes,
            memory_in_use: 0,
            refused: None,
        },
        cancel: setup.cancel,
        deadline,
        stopped: None,
        log_lines: 0,
        progress: Vec::new(),
        on_progress: setup.on_progress,
        label: setup.label.to_owned(),
        fs_view: PathView::new(setup.files.hidden.clone(), setup.files.write_scope.clone()),
        reads: setup.files.reads.clone(),
        read_roots,
        may_record,
        process: if may_record { setup.process } else { None },
        browser: if may_record { setup.browser } else { None },
        http: WasiHttpCtx::new(),
        http_hooks: HttpHooks::new(setup.net, deadline),
        delegate: None,
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limiter);
    // The deadline must be set before instantiation, which already runs guest code.
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |mut context| {
        let state = context.data_mut();
        if state.cancel.load(Ordering::Relaxed) {
            state.stopped = Some(Stop::Cancelled);
            return Ok(UpdateDeadline::Interrupt);
        }
        if Instant::now() >= state.deadline {
            state.stopped = Some(Stop::Timeout);
            return Ok(UpdateDeadline::Interrupt);
        }
        Ok(if inline {
            // tokio's own yield: it lets the worker poll its timers and I/O before the guest
            // resumes, where a plain wake-up would run a spinning guest again at once and leave
            // other tasks' timers waiting for tokio's periodic driver check.
            UpdateDeadline::YieldCustom(1, Box::pin(tokio::task::yield_now()))
        } else {
            UpdateDeadline::Continue(1)
        })
    });
    Ok((store, stderr))
}

/// Gives up on a guest stuck in a host call. Its thread (and pool slot) are freed when the call
/// returns; until then it counts against [`MAX_ABANDONED`].
fn abandon(
    guest: tokio::task::JoinHandle<GuestRun>,
    abandoned: &Arc<AtomicUsize>,
    failure: GuestFailure,
) -> GuestRun {
    abandoned.fetch_add(1, Ordering::Relaxed);
    let counter = Arc::clone(abandoned);
    tokio::spawn(async move {
        let _ = guest.await;
        counter.fetch_sub(1, Ordering::Relaxed);
    });
    GuestRun::failed(failure)
}

/// `now + timeout`, or about a century from now when that overflows.
pub fn far_deadline(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
        .unwrap_or(now)
}

/// Runs `request` in a fresh instance on this thread: the benchmarks' floor (`floor.rs`).
pub(super) fn run_here(
    engine: &Engine,
    pre: &ComponentPre,
    setup: CallSetup<'_>,
    request: GuestRequest,
) -> wasmtime::Result<GuestReply> {
    let may_record = matches!(request, GuestRequest::Call { .. });
    let (mut store, _stderr) = new_store(engine, setup, may_record, false)
        .map_err(|failure| wasmtime::format_err!("{failure:?}"))?;
    invoke(&mut store, pre, request)
}

fn invoke(
    store: &mut Store<CallState>,
    pre: &ComponentPre,
    request: GuestRequest,
) -> wasmtime::Result<GuestReply> {
    match pre {
        ComponentPre::Tool { sync: pre, .. } => {
            let instance = pre.instantiate(&mut *store)?;
            let tool = instance.janua_plugin_tool();
            Ok(match request {
                GuestRequest::Describe => GuestReply::Specs(tool.call_describe(&mut *store)?),
                GuestRequest::Validate {
                    tool: name,
                    input,
                    ctx,
                } => GuestReply::Validated(tool.call_validate_input(
                    &mut *store,
                    &name,
                    &input,
                    &ctx,
                )?),
                GuestRequest::Call {
                    tool: name,
                    input,
                    ctx,
                } => GuestReply::Called(tool.call_call(&mut *store, &name, &input, &ctx)?),
                GuestRequest::Hook { .. } => {
                    wasmtime::bail!("a tool component has no hook export")
                }
            })
        }
        ComponentPre::Hook { sync: pre, .. } => {
            let GuestRequest::Hook { event } = request else {
                wasmtime::bail!("a hook component only handles hook events");
            };
            let instance = pre.instantiate(&mut *store)?;
            let answer = instance
                .janua_plugin_hook()
                .call_handle(&mut *store, &event)?;
            Ok(GuestReply::Answered(answer))
        }
        ComponentPre::Monitor(_) => {
            wasmtime::bail!("a monitor runs resident, one instance per session (see resident.rs)")
        }
    }
}

/// [`invoke`] through the async exports, on the calling task.
async fn invoke_inline(
    store: &mut Store<CallState>,
    pre: &ComponentPre,
    request: GuestRequest,
) -> wasmtime::Result<GuestReply> {
    match pre {
        ComponentPre::Tool { inline: pre, .. } => {
            let instance = pre.instantiate_async(&mut *store).await?;
            let tool = instance.janua_plugin_tool();
            Ok(match request {
                GuestRequest::Describe => GuestReply::Specs(tool.call_describe(&mut *store).await?),
                GuestRequest::Validate {
                    tool: name,
                    input,
                    ctx,
                } => GuestReply::Validated(
                    tool.call_validate_input(&mut *store, &name, &input, &ctx)
                        .await?,
                ),
                GuestRequest::Call {
                    tool: name,
                    input,
                    ctx,
                } => GuestReply::Called(tool.call_call(&mut *store, &name, &input, &ctx).await?),
                GuestRequest::Hook { .. } => {
                    wasmtime::bail!("a tool component has no hook export")
                }
            })
        }
        ComponentPre::Hook { inline: pre, .. } => {
            let GuestRequest::Hook { event } = request else {
                wasmtime::bail!("a hook component only handles hook events");
            };
            let instance = pre.instantiate_async(&mut *store).await?;
            let answer = instance
                .janua_plugin_hook()
                .call_handle(&mut *store, &event)
                .await?;
            Ok(GuestReply::Answered(answer))
        }
        ComponentPre::Monitor(_) => {
            wasmtime::bail!("a monitor runs resident, one instance per session (see resident.rs)")
        }
    }
}

pub(super) fn classify(
    state: &CallState,
    error: &wasmtime::Error,
    timeout: Duration,
    stderr: &CappedPipe,
) -> GuestFailure {
    match state.stopped {
        Some(Stop::Timeout) => return GuestFailure::Timeout(timeout),
        Some(Stop::Cancelled) => return GuestFailure::Cancelled,
        None => {}
    }
    if let Some(refused) = &state.limiter.refused {
        return GuestFailure::ResourceExhausted(refused.clone());
    }
    if error.downcast_ref::<PoolConcurrencyLimitError>().is_some() {
        return GuestFailure::ResourceExhausted(
            "too many calls are running at once; retry when others finish".to_owned(),
        );
    }
    let cause = match error.downcast_ref::<Trap>() {
        Some(trap) => trap.to_string(),
        None => format!("{error:#}")
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned(),
    };
    let (stderr_text, dropped) = stderr.contents();
    let trimmed = stderr_text.trim_end();
    let length = trimmed.chars().count();
    let tail: String = trimmed
        .chars()
        .skip(length.saturating_sub(STDERR_TAIL_CHARS))
        .collect();
    if tail.is_empty() {
        GuestFailure::Trap(cause)
    } else if length > STDERR_TAIL_CHARS || dropped > 0 {
        GuestFailure::Trap(format!(
            "{cause}; guest stderr (last {} characters shown; the capture dropped {dropped} bytes): {tail}",
            tail.chars().count()
        ))
    } else {
        GuestFailure::Trap(format!("{cause}; guest stderr: {tail}"))
    }
}
