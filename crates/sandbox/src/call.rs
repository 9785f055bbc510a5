//! One guest invocation: a fresh store from the cached `InstancePre`, the WASI context built from the
//! call's grants, memory limits, an epoch deadline, and classification of every way it can end.
//!
//! A store is never reused: after a trap it is poisoned, and a fresh one per call also means no state
//! leaks between calls.
//!
//! Where each interface a guest may import is implemented (as wasmtime's `p2/host/` does, one
//! file per interface):
//!
//! | interface | file |
//! |---|---|
//! | the store itself (`CallState`, limiter, deadline) | `call/store.rs` |
//! | `janua:plugin/host` (log, progress, cancel, read record) | `call/host.rs` |
//! | `janua:plugin/process` | `call/process.rs`, over the session's shell in `process.rs` |
//! | `janua:plugin/browser` | `call/browser.rs`, over the session's browser in `browser.rs` |
//! | `janua:plugin/delegate` | `delegate.rs` |
//! | `wasi:filesystem` (behind the hidden paths) | `hidden.rs` |
//! | `wasi:http/outgoing-handler` (the URL policy and janua's sender) | `http.rs` |
//! | the rest of WASI (context from the grants only) | `wasi.rs` |

mod browser;
mod host;
mod process;
mod store;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wasmtime::{Engine, PoolConcurrencyLimitError, Store, Trap};

pub(crate) use store::{CallState, new_store};

use super::ComponentPre;
use super::bindings::{CallContext, WitToolError, WitToolOutput, WitToolSpec};
use super::engine::EPOCH_TICK;
use super::grants::ResolvedGrants;
use super::hidden::HiddenPaths;
use super::http::NetPolicy;
use super::limits::Limits;
use super::pipe::CappedPipe;
use store::Stop;

/// Extra wall-clock time past the deadline (or past a cancellation) before the host abandons a
/// guest stuck in a host call.
const BACKSTOP: Duration = Duration::from_secs(1);
/// Abandoned guests (threads still blocked in host calls) tolerated before new calls are refused;
/// well under the pooling allocator's instance slots.
pub(crate) const MAX_ABANDONED: usize = 16;
/// Characters of guest stderr quoted in a crash report.
const STDERR_TAIL_CHARS: usize = 2000;

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
    Validated(Result<(), GuestError>),
    /// What `call` returned: the guest's own error is data.
    Called(Result<WitToolOutput, WitToolError>),
    /// A hook's or monitor's answer: JSON text, or its own error.
    Answered(Result<String, GuestError>),
}

/// The text a guest returned as its own error (a WIT `result<_, string>`): untrusted data the
/// guest wrote, which the host bounds before a model sees it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GuestError(pub String);

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

/// Per-call limits and controls: what one guest run may touch. Built with [`CallSetup::new`],
/// which turns every capability off; each method turns one on.
pub struct CallSetup<'a> {
    pub(crate) grants: &'a ResolvedGrants,
    pub(crate) limits: Limits,
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) label: &'a str,
    pub(crate) files: &'a FileAccess,
    pub(crate) process: Option<super::process::ProcessAccess>,
    pub(crate) net: Option<Arc<NetPolicy>>,
    pub(crate) browser: Option<super::browser::BrowserAccess>,
    pub(crate) on_progress: Option<ProgressSink>,
    pub(crate) delegator: Option<&'a dyn super::delegate::Delegator>,
    pub(crate) own_thread: bool,
}

impl<'a> CallSetup<'a> {
    /// A run that may touch only `grants` (its preopened directories, environment and the like),
    /// under `limits`, named `label` in logs and errors, with the session's `files` (hidden paths
    /// and the read record). Everything else is off, and each default denies:
    ///
    /// - **cancel**: a flag nobody else holds, so the run ends only at its deadline
    ///   ([`Self::cancel`]).
    /// - **process**: none; the `process` import refuses every command ([`Self::process`]).
    /// - **net**: none; every outgoing HTTP request is refused ([`Self::net`]).
    /// - **browser**: none; the `browser` import refuses ([`Self::browser`]).
    /// - **on_progress**: none; progress messages are only kept with the result
    ///   ([`Self::on_progress`]).
    /// - **delegator**: none; `delegate` calls are refused ([`Self::delegator`]).
    /// - **own thread**: no; the guest may run on the calling task or in place
    ///   ([`Self::own_thread`]).
    ///
    /// Only `call` ever uses process, browser and delegation: `describe`, `validate-input` and
    /// hooks get none of them whatever the setup says.
    pub fn new(
        grants: &'a ResolvedGrants,
        limits: Limits,
        label: &'a str,
        files: &'a FileAccess,
    ) -> Self {
        Self {
            grants,
            limits,
            cancel: Arc::default(),
            label,
            files,
            process: None,
            net: None,
            browser: None,
            on_progress: None,
            delegator: None,
            own_thread: false,
        }
    }

    /// Stops the run when `flag` is set (the model or the operator cancelled the call).
    pub fn cancel(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = flag;
        self
    }

    /// The programs the run may start and the session's shell; `None` keeps `process` refused.
    pub fn process(mut self, access: Option<super::process::ProcessAccess>) -> Self {
        self.process = access;
        self
    }

    /// What outgoing HTTP requests may reach; `None` keeps every request refused.
    pub fn net(mut self, policy: Option<Arc<NetPolicy>>) -> Self {
        self.net = policy;
        self
    }

    /// The run's browser page; `None` keeps `browser` refused.
    pub fn browser(mut self, access: Option<super::browser::BrowserAccess>) -> Self {
        self.browser = access;
        self
    }

    /// Gets each progress message as the guest reports it (they are kept with the result too).
    pub fn on_progress(mut self, sink: Option<ProgressSink>) -> Self {
        self.on_progress = sink;
        self
    }

    /// Runs the guest's `delegate` calls; `None` keeps them refused.
    pub fn delegator(mut self, delegator: Option<&'a dyn super::delegate::Delegator>) -> Self {
        self.delegator = delegator;
        self
    }

    /// `true` when other calls of the same task run beside this one: the guest then takes a
    /// thread of its own instead of running on the task (see `run`).
    pub fn own_thread(mut self, own_thread: bool) -> Self {
        self.own_thread = own_thread;
        self
    }
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
                } => GuestReply::Validated(
                    tool.call_validate_input(&mut *store, &name, &input, &ctx)?
                        .map_err(GuestError),
                ),
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
            Ok(GuestReply::Answered(answer.map_err(GuestError)))
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
                        .await?
                        .map_err(GuestError),
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
            Ok(GuestReply::Answered(answer.map_err(GuestError)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_setup_denies_everything_it_does_not_name() {
        let grants = ResolvedGrants::default();
        let files = FileAccess::default();
        let setup = CallSetup::new(&grants, Limits::default(), "label", &files);
        assert!(setup.process.is_none(), "no process access");
        assert!(setup.net.is_none(), "no network");
        assert!(setup.browser.is_none(), "no browser");
        assert!(setup.delegator.is_none(), "no delegation");
        assert!(setup.on_progress.is_none());
        assert!(!setup.own_thread);
        assert!(!setup.cancel.load(Ordering::Relaxed));
        // Nobody else holds the flag: only the run's deadline ends it.
        assert_eq!(Arc::strong_count(&setup.cancel), 1);
    }
}
