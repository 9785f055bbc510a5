//! Batches and cancellation: scheduling the calls of one assistant message (concurrency-safe
//! runs in parallel, the rest alone, results in call order), resuming deferred calls, and
//! cancelling calls that run or wait.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::Runtime;
use crate::pipeline::{self, BatchDispatch, ToolUse};

/// How [`Runtime::dispatch_batch_with`] schedules a batch.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Most calls running at once within a run of consecutive concurrency-safe calls
    /// (default 10).
    pub max_concurrency: usize,
    /// Set to stop the batch: calls that have not started yet end `cancelled` at once (set it
    /// together with [`Runtime::cancel_all`] for the ones running).
    pub interrupt: Arc<AtomicBool>,
    /// Estimated tokens of results the batch returns inline; later successful results are saved
    /// to files (default 100,000).
    pub token_budget: u64,
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self {
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            interrupt: Arc::default(),
            token_budget: pipeline::DEFAULT_BATCH_TOKENS,
        }
    }
}

/// The default width of a parallel run within a batch.
pub const DEFAULT_MAX_CONCURRENCY: usize = 10;

impl Runtime {
    /// Dispatches the `tool_use` blocks of one assistant message (see [`BatchOptions`] for how
    /// they are scheduled), then runs the PostToolBatch hooks over all of their results, which
    /// come back in the order of the calls. A PreToolUse `defer` counts only in a batch of one.
    pub async fn dispatch_batch(&self, calls: Vec<ToolUse>) -> BatchDispatch {
        self.dispatch_batch_with(calls, &BatchOptions::default())
            .await
    }

    /// [`Runtime::dispatch_batch`] with explicit scheduling and an interrupt flag.
    pub async fn dispatch_batch_with(
        &self,
        calls: Vec<ToolUse>,
        options: &BatchOptions,
    ) -> BatchDispatch {
        use futures_util::StreamExt as _;
        let alone = calls.len() == 1;
        let width = options.max_concurrency.max(1);
        let mut results = Vec::with_capacity(calls.len());
        let mut seen = std::collections::HashSet::new();
        let mut calls = calls.into_iter().peekable();
        while let Some(first) = calls.next() {
            // Consecutive concurrency-safe calls run together; any other call runs alone.
            let mut group = vec![first];
            if self.concurrency_safe(&group[0].name) {
                while let Some(next) = calls.next_if(|call| self.concurrency_safe(&call.name)) {
                    group.push(next);
                }
            }
            let beside_others = group.len() > 1 && width > 1;
            let runs = group.into_iter().map(|call| {
                let repeated = !seen.insert(call.id.clone());
                let cancel = Arc::new(AtomicBool::new(
                    options.interrupt.load(std::sync::atomic::Ordering::Relaxed),
                ));
                async move {
                    if repeated {
                        // Two calls with one id would share a cancel handle and a result slot.
                        return pipeline::refused(
                            &call,
                            pipeline::Failure::new(
                                pipeline::ErrorKind::InvalidInput,
                                format!(
                                    "the tool_use id {:?} appears more than once in this batch; each call needs its own id",
                                    call.id
                                ),
                            ),
                        );
                    }
                    self.dispatch_interruptible(
                        call,
                        cancel,
                        alone,
                        Some(&options.interrupt),
                        beside_others,
                    )
                    .await
                }
            });
            let mut finished = futures_util::stream::iter(runs).buffered(width);
            while let Some(result) = finished.next().await {
                results.push(result);
            }
        }
        let on_approval = |_: &[String]| {};
        let stages = self.stages(&on_approval, alone);
        pipeline::finish_batch(&stages, results, options.token_budget).await
    }

    /// True when `name` (or the tool an alias of it names) may run in parallel with other
    /// concurrency-safe calls. An unknown name counts as safe: its call fails at once.
    pub fn concurrency_safe(&self, name: &str) -> bool {
        let tool = self.registry.get(name).or_else(|| {
            let target = self.registry.aliases().target(name)?;
            self.registry.get(target)
        });
        tool.is_none_or(|tool| tool.spec.concurrency_safe)
    }

    /// Cancels call `id` now if it runs, or as soon as it starts (a call still queued in a
    /// batch).
    pub fn cancel_when_started(&self, id: &str, reason: &str) {
        self.controls.cancel_when_started(id, reason);
    }

    /// Cancels every in-flight call (an interrupt); calls of a batch that have not started yet
    /// see `options.interrupt` instead.
    pub fn cancel_all(&self, reason: &str) {
        self.controls.cancel_all(reason);
    }

    /// Resumes the deferred call `id` of this session: it goes through the whole pipeline again,
    /// PreToolUse hooks included. `None` when the session holds no such deferred call.
    pub async fn resume_deferred(&self, id: &str) -> Option<BatchDispatch> {
        let deferred = self.session.take_deferred(id)?;
        Some(
            self.dispatch_batch(vec![ToolUse {
                id: deferred.id,
                name: deferred.name,
                input: deferred.input,
            }])
            .await,
        )
    }

    /// Cancels the in-flight call `id`; false when no such call is running.
    pub fn cancel(&self, id: &str, reason: &str) -> bool {
        self.controls.cancel(id, reason.to_owned())
    }
}
