//! Batches and cancellation: scheduling the calls of one assistant message (concurrency-safe
//! runs in parallel, the rest alone, results in call order), resuming deferred calls, and
//! cancelling calls that run or wait.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::Runtime;
use crate::pipeline::{self, BatchDispatch};
use janua_types::ToolUse;

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

/// One call of a batch, started.
type CallRun<'r> =
    std::pin::Pin<Box<dyn std::future::Future<Output = pipeline::Dispatch> + Send + 'r>>;

/// One call of a batch with its place in the group, so results can finish in any order.
type PlacedRun<'r> =
    std::pin::Pin<Box<dyn std::future::Future<Output = (usize, pipeline::Dispatch)> + Send + 'r>>;

/// A spawned call that stops when the batch waiting for it is dropped (a session shutting down),
/// rather than running on unobserved.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(context)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The `internal` result of a call that janua itself failed to finish (a panic).
fn failed_call(call: &ToolUse, error: impl std::fmt::Display) -> pipeline::Dispatch {
    pipeline::refused(
        call,
        pipeline::Failure::new(
            janua_types::ErrorKind::Internal,
            format!("janua failed while running this call: {error}"),
        ),
    )
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

    /// [`Runtime::dispatch_batch`] with explicit scheduling and an interrupt flag. The calls of
    /// a parallel group run as futures of this one task, each guest on a thread of its own; see
    /// [`Runtime::dispatch_batch_spread`] for a runtime that can be shared.
    pub async fn dispatch_batch_with(
        &self,
        calls: Vec<ToolUse>,
        options: &BatchOptions,
    ) -> BatchDispatch {
        self.schedule(calls, options, |call, cancel, alone, beside_others| {
            Box::pin(self.dispatch_interruptible(
                call,
                cancel,
                alone,
                Some(&options.interrupt),
                beside_others,
            ))
        })
        .await
    }

    /// [`Runtime::dispatch_batch_with`] for a shared runtime: every call of a parallel group is
    /// a task of its own, so the whole pipeline of each (not only its guest) spreads over the
    /// worker threads; a call alone in its group runs on the calling task. Either way a call
    /// that panics ends with an `internal` result and the batch goes on. `janua run` dispatches
    /// this way.
    pub async fn dispatch_batch_spread(
        self: &Arc<Self>,
        calls: Vec<ToolUse>,
        options: &BatchOptions,
    ) -> BatchDispatch {
        self.schedule(calls, options, |call, cancel, alone, beside_others| {
            use futures_util::FutureExt as _;
            let unanswered = ToolUse {
                id: call.id.clone(),
                name: call.name.clone(),
                input: serde_json::Value::Null,
            };
            if !beside_others {
                // Nothing runs beside it: a task of its own would only move it to another
                // thread and back.
                let run = std::panic::AssertUnwindSafe(self.dispatch_interruptible(
                    call,
                    cancel,
                    alone,
                    Some(&options.interrupt),
                    false,
                ))
                .catch_unwind();
                return Box::pin(async move {
                    run.await.unwrap_or_else(|panic| {
                        let message = panic
                            .downcast_ref::<&str>()
                            .map(|text| (*text).to_owned())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_default();
                        failed_call(&unanswered, format!("it panicked: {message}"))
                    })
                });
            }
            let runtime = Arc::clone(self);
            let interrupt = Arc::clone(&options.interrupt);
            // A task is already beside the others: its guest may run on the task's own worker.
            let task = AbortOnDrop(tokio::spawn(async move {
                runtime
                    .dispatch_interruptible(call, cancel, alone, Some(&interrupt), false)
                    .await
            }));
            Box::pin(async move {
                match task.await {
                    Ok(dispatch) => dispatch,
                    Err(error) => failed_call(&unanswered, error),
                }
            })
        })
        .await
    }

    /// The scheduling both batch entry points share: consecutive concurrency-safe calls run
    /// together, at most `options.max_concurrency` at once, any other call alone, and results
    /// come back in call order. `run` starts one call: (call, its cancel flag, whether the batch
    /// is a single call, whether it runs beside others).
    async fn schedule<'r>(
        &'r self,
        calls: Vec<ToolUse>,
        options: &'r BatchOptions,
        run: impl Fn(ToolUse, Arc<AtomicBool>, bool, bool) -> CallRun<'r>,
    ) -> BatchDispatch {
        use futures_util::StreamExt as _;
        let alone = calls.len() == 1;
        let width = options.max_concurrency.max(1);
        let mut results = Vec::with_capacity(calls.len());
        let mut seen = std::collections::HashSet::new();
        let mut calls = calls.into_iter().peekable();
        while let Some(first) = calls.next() {
            let mut group = vec![first];
            if self.concurrency_safe(&group[0].name) {
                while let Some(next) = calls.next_if(|call| self.concurrency_safe(&call.name)) {
                    group.push(next);
                }
            }
            let beside_others = group.len() > 1 && width > 1;
            let runs = group.into_iter().enumerate().map(|(at, call)| {
                let repeated = !seen.insert(call.id.clone());
                let cancel = Arc::new(AtomicBool::new(
                    options.interrupt.load(std::sync::atomic::Ordering::Relaxed),
                ));
                if repeated {
                    // Two calls with one id would share a cancel handle and a result slot.
                    let failure = pipeline::Failure::new(
                        janua_types::ErrorKind::InvalidInput,
                        format!(
                            "the tool_use id {:?} appears more than once in this batch; each call needs its own id",
                            call.id
                        ),
                    );
                    let refused = pipeline::refused(&call, failure);
                    return Box::pin(std::future::ready((at, refused))) as PlacedRun<'r>;
                }
                let started = run(call, cancel, alone, beside_others);
                Box::pin(async move { (at, started.await) }) as PlacedRun<'r>
            });
            // `buffer_unordered` takes the next call from `runs` only when one of its `width`
            // slots is free, so `run` (and with it any spawned task) happens at most `width`
            // times at once. Unordered, a slow call holds only its own slot: ordered buffering
            // would keep every finished call behind it in a slot too, and leave cores idle.
            let mut finished = futures_util::stream::iter(runs).buffer_unordered(width);
            let mut group = Vec::new();
            while let Some(result) = finished.next().await {
                group.push(result);
            }
            group.sort_unstable_by_key(|(at, _)| *at);
            results.extend(group.into_iter().map(|(_, result)| result));
        }
        let services = self.services();
        pipeline::finish_batch(&services, results, options.token_budget).await
    }

    /// True when `name` (or the tool an alias of it names) may run in parallel with other
    /// concurrency-safe calls. An unknown name counts as safe: its call fails at once.
    pub fn concurrency_safe(&self, name: &str) -> bool {
        let registry = self.registry();
        let tool = registry.get(name).or_else(|| {
            let target = registry.aliases().target(name)?;
            registry.get(target)
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
