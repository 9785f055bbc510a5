//! The store of one call: its data (`CallState`: the WASI context built from the grants, the
//! resource table, the limiter, the deadline and cancel flag, the per-interface links), the
//! memory and table limiter, and `new_store`, which arms the epoch deadline before any guest code
//! runs. The host interfaces are implemented on `CallState` in the sibling files, one per WIT
//! interface.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::{Engine, ResourceLimiter, Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::{CallSetup, GuestFailure, ProgressSink, far_deadline};
use crate::hidden::{HidingFs, PathView};
use crate::http::HttpHooks;
use crate::pipe::CappedPipe;
use crate::wasi;

/// The store's data for one call.
pub(crate) struct CallState {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limiter: CallLimiter,
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) deadline: Instant,
    pub(super) stopped: Option<Stop>,
    pub(super) log_lines: u32,
    pub(super) progress: Vec<String>,
    pub(super) on_progress: Option<ProgressSink>,
    pub(super) label: String,
    pub(super) fs_view: PathView,
    pub(super) reads: Option<Arc<crate::ReadLedger>>,
    /// Granted directories a recorded (or looked-up) read must lie in.
    pub(super) read_roots: Vec<std::path::PathBuf>,
    /// False during `validate-input`, which must leave no trace.
    pub(super) may_record: bool,
    /// What the `process` import may run (only during `call`).
    pub(super) process: Option<crate::process::ProcessAccess>,
    /// The `browser` import's page (only during `call`); dropping it closes the page.
    pub(super) browser: Option<crate::browser::BrowserAccess>,
    pub(super) http: WasiHttpCtx,
    pub(super) http_hooks: HttpHooks,
    /// Where the guest's `delegate` calls go (only during `call`, with a delegator).
    pub(super) delegate: Option<crate::delegate::DelegateLink>,
}

impl CallState {
    /// The channel to the call's task, when the guest may delegate.
    pub(crate) fn delegate_link(&self) -> Option<&crate::delegate::DelegateLink> {
        self.delegate.as_ref()
    }

    /// True once the call was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// When the call's time runs out.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Gives a resident instance a fresh deadline and a clean slate of per-event counters.
    pub(crate) fn rearm(&mut self, timeout: Duration) {
        self.deadline = far_deadline(timeout);
        self.stopped = None;
        self.log_lines = 0;
        self.progress.clear();
    }

    /// True when `path` is absolute, without `..`, inside the call's granted directories and not
    /// hidden: the only paths the read record answers about or takes records for.
    pub(super) fn visible(&self, path: &str) -> bool {
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
pub(super) enum Stop {
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

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_hooks,
        }
    }
}

/// Memory and table limits; remembers a refusal so that the resulting trap is reported as
/// `resource_exhausted` instead of a crash. The memory cap covers all of a call's linear memories
/// together, not each one.
pub(super) struct CallLimiter {
    pub(super) memory_bytes: u64,
    pub(super) memory_in_use: u64,
    pub(super) refused: Option<String>,
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

/// A fresh store for one guest under `setup`, with its epoch deadline armed, and the guest's stderr
/// capture. `may_record`: the guest may take read records and use `process` (only `call` may).
/// `inline`: the store runs async on the calling task (see [`run`]), so guest code yields at every
/// epoch tick and WASI never blocks the thread.
pub(crate) fn new_store(
    engine: &Engine,
    setup: CallSetup<'_>,
    may_record: bool,
    inline: bool,
) -> Result<(Store<CallState>, CappedPipe), GuestFailure> {
    let stdout = CappedPipe::new(setup.limits.stdio_bytes);
    let stderr = CappedPipe::new(setup.limits.stdio_bytes);
    let wasi = wasi::build_context(setup.grants, &stdout, &stderr, !inline)
        .map_err(|error| GuestFailure::Setup(error.to_string()))?;
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
