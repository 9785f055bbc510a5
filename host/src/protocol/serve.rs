//! `janua run`: one session driven over newline-delimited JSON (docs/PROTOCOL.md).
//!
//! A thread reads the input: batches go to the batch worker in order, while `control_response`,
//! `cancel` and `interrupt` lines act at once (a batch waiting for a permission answer must not
//! wait behind itself). The worker, on a thread of its own, runs one batch at a time and writes
//! its `user` message and `result` line when the whole batch is done. A shutdown signal
//! interrupts the batch in flight, answers every queued batch with `cancelled` results, and ends
//! the session cleanly.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::messages::{Inbound, batch_lines, error_line, parse_line};
use super::prompter::{LineWriter, StreamPrompter};
use crate::runtime::{BatchOptions, DEFAULT_MAX_CONCURRENCY, Runtime, SessionEndReport};
use janua_types::ToolUse;

/// How `janua run` behaves.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Most concurrency-safe calls running at once (default 10).
    pub max_concurrency: usize,
    /// Write `system/hook_started` and `system/hook_response` lines.
    pub include_hook_events: bool,
    /// How often a running call gets a `tool_progress` line (default 5 s).
    pub progress_interval: Duration,
    /// Estimated tokens a batch returns inline before later results go to files (default
    /// 100,000).
    pub token_budget: u64,
    /// Poll the plugin directories this often and reload them when they change (`--watch`).
    pub watch_plugins: Option<Duration>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            include_hook_events: false,
            progress_interval: Duration::from_secs(5),
            token_budget: crate::pipeline::DEFAULT_BATCH_TOKENS,
            watch_plugins: None,
        }
    }
}

/// The batch in flight, so `interrupt` and shutdown can stop it.
#[derive(Default)]
struct Current {
    /// The line number of the latest `interrupt`: batches read before it are interrupted too.
    interrupted_at: AtomicU64,
    /// Ids of calls read and not yet finished, so a `cancel` can reach a call still queued.
    unfinished: Mutex<std::collections::HashSet<String>>,
    interrupt: Mutex<Option<Arc<AtomicBool>>>,
    stopping: AtomicBool,
    /// A batch is being dispatched (its lines not yet written).
    busy: AtomicBool,
    /// Batches read but not yet taken by the worker.
    queued: AtomicU64,
}

impl Current {
    fn interrupt(&self, runtime: &Runtime, reason: &str) {
        if let Some(flag) = self
            .interrupt
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .as_ref()
        {
            flag.store(true, Ordering::Relaxed);
        }
        runtime.cancel_all(reason);
    }
}

/// Serves one session over `input` and `output` until the input ends or `shutdown` resolves, and
/// returns what ending the session reported.
pub async fn serve_stream(
    mut runtime: Runtime,
    options: StreamOptions,
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
    shutdown: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
) -> SessionEndReport {
    let output = Arc::new(Mutex::new(output));
    let write: LineWriter = {
        let output = Arc::clone(&output);
        Arc::new(move |line: Value| {
            let mut output = output.lock().unwrap_or_else(|poison| poison.into_inner());
            // A closed stdout leaves nobody to tell; the session still ends cleanly.
            let _ = writeln!(output, "{line}").and_then(|()| output.flush());
        })
    };
    let prompter = Arc::new(StreamPrompter::new(Arc::clone(&write)));
    runtime.set_prompter(prompter.clone());
    let runtime = Arc::new(runtime);
    let running: Arc<Mutex<HashMap<String, (String, Instant)>>> = Arc::default();
    let current = Arc::new(Current::default());
    runtime.set_event_sink(event_sink(
        Arc::clone(&write),
        Arc::clone(&running),
        Arc::clone(&current),
        options.include_hook_events,
    ));

    let started = runtime.start_session().await;
    write(init_line(&runtime, &options, &started));

    let (batches, mut queued) = tokio::sync::mpsc::unbounded_channel::<(u64, Vec<ToolUse>)>();
    spawn_reader(
        input,
        batches,
        Arc::clone(&write),
        Arc::clone(&prompter),
        Arc::clone(&runtime),
        Arc::clone(&current),
    );
    let watcher = options.watch_plugins.map(|interval| {
        tokio::spawn(announce_reloads(
            Arc::clone(&runtime),
            Arc::clone(&write),
            interval,
        ))
    });
    let progress = tokio::spawn(progress_ticker(
        Arc::clone(&write),
        Arc::clone(&running),
        options.progress_interval,
    ));

    let stop_worker = Arc::new(tokio::sync::Notify::new());
    let worker = {
        let runtime = Arc::clone(&runtime);
        let current = Arc::clone(&current);
        let write = Arc::clone(&write);
        let stop = Arc::clone(&stop_worker);
        let width = options.max_concurrency;
        let token_budget = options.token_budget;
        async move {
            let mut number = 0u64;
            loop {
                let next = tokio::select! {
                    // A batch read before the stop is still answered (with `cancelled` results).
                    biased;
                    next = queued.recv() => next,
                    () = stop.notified() => None,
                };
                let Some((line, calls)) = next else { break };
                current.busy.store(true, Ordering::Relaxed);
                current.queued.fetch_sub(1, Ordering::Relaxed);
                number += 1;
                // The flag is published before the marks are read: an `interrupt` racing the
                // batch's start either is seen here or finds this flag to set.
                let interrupt = Arc::new(AtomicBool::new(false));
                *current
                    .interrupt
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner()) = Some(Arc::clone(&interrupt));
                if current.stopping.load(Ordering::SeqCst)
                    || current.interrupted_at.load(Ordering::SeqCst) > line
                {
                    interrupt.store(true, Ordering::SeqCst);
                }
                let began = Instant::now();
                let batch = runtime
                    .dispatch_batch_spread(
                        calls,
                        &BatchOptions {
                            max_concurrency: width,
                            interrupt,
                            token_budget,
                        },
                    )
                    .await;
                let elapsed = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
                let (user, result) = batch_lines(&batch, number, elapsed, runtime.session().id());
                write(user);
                write(result);
                current.busy.store(false, Ordering::Relaxed);
                if current.stopping.load(Ordering::Relaxed) && queued.is_empty() {
                    break;
                }
            }
        }
    };
    let mut worker = spawn_batch_thread(worker);
    let mut shutdown = shutdown;
    tokio::select! {
        _ = &mut worker => {}
        () = &mut shutdown => {
            current.stopping.store(true, Ordering::SeqCst);
            current.interrupt(&runtime, "the session was interrupted (signal)");
            prompter.close();
            // The batch in flight ends with cancelled results and queued batches are answered
            // the same way; an idle worker is simply left.
            tokio::select! {
                _ = &mut worker => {}
                () = async {
                    loop {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        if !current.busy.load(Ordering::Relaxed)
                            && current.queued.load(Ordering::Relaxed) == 0
                        {
                            break;
                        }
                        current.interrupt(&runtime, "the session was interrupted (signal)");
                    }
                } => {}
            }
        }
    }
    // An idle worker waits for the next batch; none comes now.
    stop_worker.notify_one();
    progress.abort();
    if let Some(watcher) = watcher {
        watcher.abort();
    }
    prompter.close();
    let ended = runtime.end_session("other").await;
    write(json!({
        "type": "system",
        "subtype": "session_end",
        "session_id": runtime.session().id(),
        "warnings": ended.warnings,
        "monitors": ended.monitors,
    }));
    ended
}

/// Runs the batch worker on a thread of its own, inside the runtime (`Handle::block_on`); the
/// receiver resolves when it has ended (or could not start).
///
/// Not on the runtime's workers: a guest with file grants runs synchronously where its call
/// runs, and on a worker that means `block_in_place`, which hands the worker's core to another
/// thread and back on every call (most of a small call's cost in `janua run`, BENCHMARKS.md);
/// outside the pool it runs right here. A call waiting for a permission answer blocks this
/// thread, never the signal handling of [`serve_stream`].
fn spawn_batch_thread(
    worker: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::sync::oneshot::Receiver<()> {
    let (done, finished) = tokio::sync::oneshot::channel();
    let runtime = tokio::runtime::Handle::current();
    // The worker is handed over once the thread runs, so a thread that cannot start leaves it
    // here to run as a task instead.
    let (worker_in, worker_out) = std::sync::mpsc::sync_channel(1);
    let run = move || {
        if let Ok(worker) = worker_out.recv() {
            runtime.block_on(worker);
        }
        let _ = done.send(());
    };
    match std::thread::Builder::new()
        .name("janua-stream-batches".into())
        .spawn(run)
    {
        Ok(_) => {
            let _ = worker_in.send(worker);
            finished
        }
        Err(error) => {
            tracing::warn!("cannot start the batch thread ({error}); batches run as a task");
            let (done, finished) = tokio::sync::oneshot::channel();
            tokio::spawn(async move {
                worker.await;
                let _ = done.send(());
            });
            finished
        }
    }
}

/// Writes `system/tools_changed` after each `--watch` reload, or `system/tools_reload_failed`
/// when a reload left the old tools in place.
fn announce_reloads(
    runtime: Arc<Runtime>,
    write: LineWriter,
    interval: Duration,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let announcer = Arc::clone(&runtime);
    super::watch::watch_plugins(runtime, interval, move |reload| {
        let session_id = announcer.session().id().to_owned();
        write(match reload {
            Ok(reload) => json!({
                "type": "system",
                "subtype": "tools_changed",
                "session_id": session_id,
                "tools": reload.tools,
                "warnings": reload.warnings,
            }),
            Err(error) => json!({
                "type": "system",
                "subtype": "tools_reload_failed",
                "session_id": session_id,
                "tools": announcer.tools().into_iter().map(|tool| tool.spec.name).collect::<Vec<_>>(),
                "warnings": [],
                "error": error.to_string(),
            }),
        });
    })
}

/// The first line: what this session offers.
fn init_line(
    runtime: &Runtime,
    options: &StreamOptions,
    started: &crate::runtime::SessionStartReport,
) -> Value {
    // Paths are written lossily: a directory name that is not UTF-8 must not stop the session.
    let lossy = |path: &std::path::Path| path.to_string_lossy().into_owned();
    let tools: Vec<Value> = runtime
        .tools()
        .iter()
        .map(|tool| {
            let source = match &tool.source {
                crate::registry::ToolSource::BuiltIn => json!({"kind": "built_in"}),
                crate::registry::ToolSource::Plugin { name, dir } => {
                    json!({"kind": "plugin", "name": name, "dir": lossy(dir)})
                }
                crate::registry::ToolSource::Mcp { server } => {
                    json!({"kind": "mcp", "server": server})
                }
            };
            json!({
                "name": tool.spec.name,
                "source": source,
                "read_only": tool.spec.read_only,
                "concurrency_safe": tool.spec.concurrency_safe,
            })
        })
        .collect();
    let plugins: Vec<String> = runtime.plugin_dirs().iter().map(|dir| lossy(dir)).collect();
    json!({
        "type": "system",
        "subtype": "init",
        "session_id": runtime.session().id(),
        "cwd": runtime.workspace().to_string_lossy(),
        "permission_mode": runtime.policy().mode.as_str(),
        "tools": tools,
        "plugins": plugins,
        "limits": {
            "max_concurrency": options.max_concurrency,
            "progress_interval_ms": u64::try_from(options.progress_interval.as_millis()).unwrap_or(u64::MAX),
            "output_chars": janua_sandbox::DEFAULT_OUTPUT_CHARS,
            "max_output_chars": janua_sandbox::MAX_OUTPUT_CHARS,
            "failure_chars": crate::pipeline::FAILURE_CHARS,
            "batch_token_budget": options.token_budget,
        },
        "hooks": serde_json::to_value(runtime.extensions()).unwrap_or_default(),
        "session_start": started,
        "warnings": runtime.warnings(),
    })
}

/// Hook lifecycle events become `system` lines (when asked for); `tool_started` and
/// `tool_finished` keep the table the progress ticker reads.
fn event_sink(
    write: LineWriter,
    running: Arc<Mutex<HashMap<String, (String, Instant)>>>,
    current: Arc<Current>,
    include_hook_events: bool,
) -> Arc<dyn Fn(&Value) + Send + Sync> {
    Arc::new(move |event: &Value| {
        let id = event["tool_use_id"].as_str().unwrap_or_default().to_owned();
        match event["event"].as_str() {
            Some("tool_started") => {
                let name = event["tool_name"].as_str().unwrap_or_default().to_owned();
                running
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .insert(id, (name, Instant::now()));
            }
            Some("tool_finished") => {
                running
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .remove(&id);
                current
                    .unfinished
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .remove(&id);
            }
            // A call made by a delegating tool or a sub-agent: shown under its parent, as
            // Claude Code shows a sub-agent's messages (`parent_tool_use_id`).
            Some("nested_result") => {
                let lineage = |mut line: Value| {
                    line["session_id"] = event["session_id"].clone();
                    line["parent_tool_use_id"] = event["parent_tool_use_id"].clone();
                    if let Some(agent) = event.get("agent_id") {
                        line["agent_id"] = agent.clone();
                    }
                    line["delegation_depth"] = event["delegation_depth"].clone();
                    line
                };
                write(lineage(json!({
                    "type": "assistant",
                    "message": {"role": "assistant", "content": [event["tool_use"]]},
                })));
                write(lineage(json!({
                    "type": "user",
                    "message": {"role": "user", "content": [event["tool_result"]]},
                    "error_kind": event["error_kind"],
                })));
            }
            Some(kind @ ("hook_started" | "hook_response")) if include_hook_events => {
                write(json!({
                    "type": "system",
                    "subtype": kind,
                    "session_id": event["session_id"],
                    "hook_name": event["hook"],
                    "hook_event": event["hook_event_name"],
                    "tool_use_id": event["tool_use_id"],
                    "outcome": event.get("outcome"),
                    "decision": event.get("decision"),
                    "duration_ms": event.get("duration_ms"),
                }));
            }
            _ => {}
        }
    })
}

/// Writes a `tool_progress` line for every call running longer than `interval`, every interval.
async fn progress_ticker(
    write: LineWriter,
    running: Arc<Mutex<HashMap<String, (String, Instant)>>>,
    interval: Duration,
) {
    let interval = interval.max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(interval).await;
        let now = Instant::now();
        // Written while the table is held, so no line follows its call's `tool_finished`.
        let running = running.lock().unwrap_or_else(|poison| poison.into_inner());
        let lines: Vec<Value> = running
            .iter()
            .filter(|(_, (_, since))| now.duration_since(*since) >= interval)
            .map(|(id, (name, since))| {
                json!({
                    "type": "tool_progress",
                    "tool_use_id": id,
                    "tool_name": name,
                    "elapsed_time_seconds": now.duration_since(*since).as_secs_f64(),
                })
            })
            .collect();
        for line in lines {
            write(line);
        }
    }
}

/// Reads input lines on their own thread until the input ends.
fn spawn_reader(
    input: Box<dyn BufRead + Send>,
    batches: tokio::sync::mpsc::UnboundedSender<(u64, Vec<ToolUse>)>,
    write: LineWriter,
    prompter: Arc<StreamPrompter>,
    runtime: Arc<Runtime>,
    current: Arc<Current>,
) {
    let line_numbers = AtomicU64::new(0);
    let read = move || {
        // Lines are read as bytes: a line that is not UTF-8 is answered like any malformed line.
        let mut input = input;
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            match input.read_until(b'\n', &mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let number = line_numbers.fetch_add(1, Ordering::Relaxed) + 1;
            let Ok(text) = std::str::from_utf8(&buffer) else {
                write(error_line(number, "the line is not valid UTF-8"));
                continue;
            };
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            match parse_line(text) {
                Ok(Inbound::Batch(calls)) => {
                    current
                        .unfinished
                        .lock()
                        .unwrap_or_else(|poison| poison.into_inner())
                        .extend(calls.iter().map(|call| call.id.clone()));
                    current.queued.fetch_add(1, Ordering::Relaxed);
                    if batches.send((number, calls)).is_err() {
                        break;
                    }
                }
                Ok(Inbound::ControlResponse { request_id, answer }) => {
                    if !prompter.resolve(&request_id, answer) {
                        write(error_line(
                            number,
                            &format!("no permission request {request_id:?} is waiting"),
                        ));
                    }
                }
                Ok(Inbound::Cancel { tool_use_id }) => {
                    let unfinished = current
                        .unfinished
                        .lock()
                        .unwrap_or_else(|poison| poison.into_inner())
                        .contains(&tool_use_id);
                    if unfinished {
                        // Running now, or still queued: cancelled when it starts.
                        runtime.cancel_when_started(&tool_use_id, "cancelled by the agent loop");
                    } else {
                        write(error_line(
                            number,
                            &format!("no call {tool_use_id:?} is running or queued"),
                        ));
                    }
                }
                Ok(Inbound::Interrupt) => {
                    current.interrupted_at.fetch_max(number, Ordering::SeqCst);
                    current.interrupt(&runtime, "interrupted by the agent loop");
                    prompter.fail_pending();
                }
                Err(problem) => write(error_line(number, &problem.to_string())),
            }
        }
        // Nobody can answer permission requests any more.
        prompter.close();
    };
    if let Err(error) = std::thread::Builder::new()
        .name("janua-stream-input".into())
        .spawn(read)
    {
        tracing::error!("cannot start the input thread: {error}");
    }
}
