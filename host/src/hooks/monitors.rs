//! Monitors: observers of every lifecycle event, each on its own thread behind a bounded queue.
//!
//! The pipeline never waits for a monitor: an event that does not fit in a monitor's queue is
//! dropped and counted, and the next event it does receive says how many it missed (`dropped`).
//! A monitor answers `{}`, `{"action": "cancel", "tool_use_id": ..}` (the call's guest is
//! interrupted through its epoch deadline and its child processes killed) or `{"action": "halt",
//! "reason": ..}` (every in-flight call is cancelled and later calls are refused). Monitors are
//! asynchronous by design, so a cancel races the call it targets; a hard limit belongs in a
//! PreToolUse hook.
//!
//! Event kinds and their fields (besides `event`, `seq`, `session_id`, `time_ms`, and `config`
//! and `dropped` when there are any):
//! - `session_start` (`source`), `session_end` (`reason`);
//! - `tool_started` (`tool_use_id`, `tool_name`, `tool_input`), right before the tool runs;
//! - `decision` (`tool_use_id`, `tool_name`, `verdict`, `decided_by`, `reason`);
//! - `permission_request` (`tool_use_id`, `tool_name`, `reason`);
//! - `hook_started`, `hook_response` (`hook`, `hook_event_name`, `tool_use_id`, `outcome`,
//!   `duration_ms`);
//! - `tool_finished` (`tool_use_id`, `tool_name`, `is_error`, `error_kind`, `duration_ms`), for
//!   every call that reached the pipeline, run or not;
//! - `batch_finished` (`tool_use_ids`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use janua_sandbox::Resident;

/// The default number of events waiting for one monitor.
pub(crate) const DEFAULT_QUEUE: usize = 1024;
/// Bytes of a tool input carried in monitor events; a larger input is replaced by its size and
/// SHA-256, so a queue of events stays small whatever the calls carry.
const MAX_EVENT_INPUT_BYTES: usize = 64 << 10;

/// `input` as monitor events carry it: itself, or past [`MAX_EVENT_INPUT_BYTES`] a stand-in with
/// its size and SHA-256.
pub(crate) fn monitor_input(input: &Value) -> Value {
    use sha2::Digest as _;
    let text = input.to_string();
    if text.len() <= MAX_EVENT_INPUT_BYTES {
        return input.clone();
    }
    json!({
        "janua_truncated": true,
        "bytes": text.len(),
        "sha256": janua_types::hex(&sha2::Sha256::digest(text.as_bytes())),
    })
}

/// In-flight calls and the halt flag, shared by the pipeline and the monitors.
#[derive(Default)]
pub(crate) struct Controls {
    inflight: Mutex<HashMap<String, Arc<AtomicBool>>>,
    /// Calls cancelled before they started, with the reason; applied when they register.
    precancelled: Mutex<HashMap<String, String>>,
    /// Why a call was cancelled, when a monitor did it.
    reasons: Mutex<HashMap<String, String>>,
    halted: Mutex<Option<String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

impl Controls {
    /// Makes `id` cancellable through `flag` while it runs.
    pub(crate) fn register(&self, id: &str, flag: Arc<AtomicBool>) {
        let mut inflight = lock(&self.inflight);
        if let Some(reason) = lock(&self.precancelled).remove(id) {
            lock(&self.reasons).insert(id.to_owned(), reason);
            flag.store(true, Ordering::Relaxed);
        }
        inflight.insert(id.to_owned(), flag);
    }

    /// Cancels call `id` now if it runs, or as soon as it starts.
    pub(crate) fn cancel_when_started(&self, id: &str, reason: &str) {
        let inflight = lock(&self.inflight);
        let reason = super::capped::clip(reason);
        match inflight.get(id) {
            Some(flag) => {
                lock(&self.reasons).insert(id.to_owned(), reason);
                flag.store(true, Ordering::Relaxed);
            }
            None => {
                lock(&self.precancelled).insert(id.to_owned(), reason);
            }
        }
    }

    /// Forgets `id`; returns why a monitor cancelled it, if one did.
    pub(crate) fn finish(&self, id: &str) -> Option<String> {
        let mut inflight = lock(&self.inflight);
        inflight.remove(id);
        lock(&self.reasons).remove(id)
    }

    /// Cancels in-flight call `id`; false when no such call is running.
    pub(crate) fn cancel(&self, id: &str, reason: String) -> bool {
        // The reason is recorded under the in-flight lock, so a call finishing at the same moment
        // cannot leave it behind for a later call with the same id.
        let inflight = lock(&self.inflight);
        match inflight.get(id) {
            Some(flag) => {
                lock(&self.reasons).insert(id.to_owned(), super::capped::clip(&reason));
                flag.store(true, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// Stops the session: every in-flight call is cancelled and later calls are refused.
    pub(crate) fn halt(&self, reason: String) {
        let reason = super::capped::clip(&reason);
        lock(&self.halted).get_or_insert(reason.clone());
        self.cancel_all(&reason);
    }

    /// Cancels every in-flight call (an interrupt), without halting the session.
    pub(crate) fn cancel_all(&self, reason: &str) {
        let reason = super::capped::clip(reason);
        let inflight = lock(&self.inflight);
        for (id, flag) in inflight.iter() {
            lock(&self.reasons).insert(id.clone(), reason.clone());
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// Why the session was halted, if it was.
    pub(crate) fn halted(&self) -> Option<String> {
        lock(&self.halted).clone()
    }
}

/// One monitor to start.
pub(crate) struct MonitorSpec {
    pub(crate) name: String,
    pub(crate) resident: Resident,
    /// Event kinds to deliver; `None` delivers all.
    pub(crate) filter: Option<Vec<String>>,
    pub(crate) queue: usize,
    pub(crate) config: Option<Value>,
}

/// Counters of one monitor, for reports.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct MonitorStats {
    /// The monitor's name.
    pub name: String,
    /// Events it observed.
    pub delivered: u64,
    /// Events dropped because its queue was full.
    pub dropped: u64,
    /// Events it failed on (trap, timeout, error answer).
    pub failures: u64,
    /// Cancel and halt actions it took.
    pub actions: u64,
}

#[derive(Default)]
struct Counters {
    delivered: AtomicU64,
    dropped: AtomicU64,
    failures: AtomicU64,
    actions: AtomicU64,
    /// Drops not yet reported to the monitor.
    unreported: AtomicU64,
}

struct Channel {
    name: String,
    filter: Option<Vec<String>>,
    sender: Mutex<Option<SyncSender<Value>>>,
    counters: Arc<Counters>,
    done: Mutex<Option<mpsc::Receiver<()>>>,
}

struct Hub {
    channels: Vec<Channel>,
}

/// A host-side observer of lifecycle events (the stream-json writer), called on the emitting
/// thread: it must be quick and must not block.
pub(crate) type EventSink = Arc<dyn Fn(&Value) + Send + Sync>;

/// A host-side observer of calls' progress messages (`tool_use_id`, message), called on the
/// guest's thread: it must be quick and must not block.
pub type ProgressListener = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// The session's monitors; emitting is a no-op when there are none and no sink.
#[derive(Clone, Default)]
pub(crate) struct Monitors {
    hub: Option<Arc<Hub>>,
    sink: Arc<std::sync::RwLock<Option<EventSink>>>,
    /// Kept apart from `sink`: setting it must not make every lifecycle event cost its JSON.
    progress: Arc<std::sync::RwLock<Option<ProgressListener>>>,
    seq: Arc<AtomicU64>,
    session_id: Arc<str>,
}

impl Monitors {
    /// Starts one thread per monitor.
    pub(crate) fn start(
        specs: Vec<MonitorSpec>,
        session_id: &str,
        controls: &Arc<Controls>,
    ) -> Self {
        if specs.is_empty() {
            return Self {
                session_id: session_id.into(),
                ..Self::default()
            };
        }
        let mut channels = Vec::new();
        for spec in specs {
            let (sender, receiver) = mpsc::sync_channel::<Value>(spec.queue.max(1));
            let (finished, done) = mpsc::channel();
            let counters = Arc::new(Counters::default());
            let worker = Worker {
                name: spec.name.clone(),
                resident: spec.resident,
                config: spec.config,
                counters: Arc::clone(&counters),
                controls: Arc::clone(controls),
            };
            let started = std::thread::Builder::new()
                .name(format!("janua-monitor-{}", spec.name))
                .spawn(move || {
                    worker.serve(receiver);
                    let _ = finished.send(());
                });
            if let Err(error) = started {
                tracing::error!("cannot start monitor {}: {error}", spec.name);
                continue;
            }
            channels.push(Channel {
                name: spec.name,
                filter: spec.filter,
                sender: Mutex::new(Some(sender)),
                counters,
                done: Mutex::new(Some(done)),
            });
        }
        Self {
            hub: Some(Arc::new(Hub { channels })),
            sink: Arc::default(),
            progress: Arc::default(),
            seq: Arc::default(),
            session_id: session_id.into(),
        }
    }

    /// Sets the host-side observer every event is also given to.
    pub(crate) fn set_sink(&self, sink: Option<EventSink>) {
        *self
            .sink
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = sink;
    }

    /// Sets the host-side observer of progress messages.
    pub(crate) fn set_progress_listener(&self, listener: Option<ProgressListener>) {
        *self
            .progress
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = listener;
    }

    /// A sink for call `tool_use_id`'s progress messages, for the progress listener only
    /// (monitors see calls start and finish, not their chatter); `None` when there is none.
    pub(crate) fn progress_sink(&self, tool_use_id: &str) -> Option<janua_sandbox::ProgressSink> {
        let listener = self
            .progress
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()?;
        let id = tool_use_id.to_owned();
        Some(Arc::new(move |message: &str| listener(&id, message)))
    }

    /// True when some monitor or listener receives events: only then is an event worth building.
    pub(crate) fn listening(&self) -> bool {
        self.hub.is_some()
            || self
                .sink
                .read()
                .unwrap_or_else(|poison| poison.into_inner())
                .is_some()
    }

    /// Delivers a `kind` event with `fields` to every monitor that wants it, without waiting.
    pub(crate) fn emit(&self, kind: &str, fields: Value) {
        let sink = self
            .sink
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone();
        if self.hub.is_none() && sink.is_none() {
            return;
        }
        let mut event = json!({
            "event": kind,
            "seq": self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            "session_id": &*self.session_id,
            "time_ms": janua_types::unix_ms(),
        });
        if let (Some(object), Value::Object(fields)) = (event.as_object_mut(), fields) {
            object.extend(fields);
        }
        if let Some(sink) = sink {
            sink(&event);
        }
        let Some(hub) = &self.hub else {
            return;
        };
        for channel in &hub.channels {
            if channel
                .filter
                .as_ref()
                .is_some_and(|filter| !filter.iter().any(|wanted| wanted == kind))
            {
                continue;
            }
            let sender = lock(&channel.sender);
            let Some(sender) = sender.as_ref() else {
                continue;
            };
            let counters = &channel.counters;
            let unreported = counters.unreported.load(Ordering::Relaxed);
            let mut delivered = event.clone();
            if unreported > 0 {
                delivered["dropped"] = unreported.into();
            }
            match sender.try_send(delivered) {
                Ok(()) => {
                    counters.unreported.fetch_sub(unreported, Ordering::Relaxed);
                }
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    counters.unreported.fetch_add(1, Ordering::Relaxed);
                    counters.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Closes every queue and waits up to `wait` in all for the monitors to finish what is queued.
    pub(crate) fn close(&self, wait: Duration) -> Vec<MonitorStats> {
        let Some(hub) = &self.hub else {
            return Vec::new();
        };
        for channel in &hub.channels {
            lock(&channel.sender).take();
        }
        let deadline = std::time::Instant::now() + wait;
        for channel in &hub.channels {
            if let Some(done) = lock(&channel.done).take() {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if done.recv_timeout(left).is_err() {
                    tracing::warn!("monitor {} did not finish its queue in time", channel.name);
                }
            }
        }
        self.stats()
    }

    /// Counters of every monitor.
    pub(crate) fn stats(&self) -> Vec<MonitorStats> {
        let Some(hub) = &self.hub else {
            return Vec::new();
        };
        hub.channels
            .iter()
            .map(|channel| {
                let counters = &channel.counters;
                MonitorStats {
                    name: channel.name.clone(),
                    delivered: counters.delivered.load(Ordering::Relaxed),
                    dropped: counters.dropped.load(Ordering::Relaxed),
                    failures: counters.failures.load(Ordering::Relaxed),
                    actions: counters.actions.load(Ordering::Relaxed),
                }
            })
            .collect()
    }
}

/// One monitor's thread.
struct Worker {
    name: String,
    resident: Resident,
    config: Option<Value>,
    counters: Arc<Counters>,
    controls: Arc<Controls>,
}

impl Worker {
    fn serve(mut self, receiver: mpsc::Receiver<Value>) {
        for mut event in receiver {
            if let (Some(config), Some(object)) = (&self.config, event.as_object_mut()) {
                object.insert("config".to_owned(), config.clone());
            }
            let kind = event["event"].as_str().unwrap_or_default().to_owned();
            let observed = self.resident.observe(&event.to_string());
            self.counters.delivered.fetch_add(1, Ordering::Relaxed);
            let answer = match observed {
                Ok(Ok(text)) => serde_json::from_str::<Value>(&text)
                    .map_err(|error| format!("its answer is not JSON: {error}")),
                Ok(Err(message)) => Err(format!("it reported an error: {message}")),
                Err(failure) => Err(format!("{failure:?}")),
            };
            match answer {
                Ok(answer) => self.act(&answer),
                Err(problem) => {
                    self.counters.failures.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!("monitor {} failed on a {kind} event: {problem}", self.name);
                }
            }
        }
    }

    fn act(&self, answer: &Value) {
        let reason = answer["reason"].as_str().unwrap_or("no reason given");
        match answer["action"].as_str() {
            None => {}
            Some("cancel") => {
                self.counters.actions.fetch_add(1, Ordering::Relaxed);
                let id = answer["tool_use_id"].as_str().unwrap_or_default();
                let cancelled = self.controls.cancel(
                    id,
                    format!("monitor {} cancelled the call: {reason}", self.name),
                );
                if !cancelled {
                    tracing::info!(
                        "monitor {} asked to cancel {id:?}, which is not running",
                        self.name
                    );
                }
            }
            Some("halt") => {
                self.counters.actions.fetch_add(1, Ordering::Relaxed);
                self.controls.halt(format!(
                    "monitor {} halted the session: {reason}",
                    self.name
                ));
            }
            Some(other) => {
                self.counters.failures.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    "monitor {} answered the unknown action {other:?} (expected cancel or halt)",
                    self.name
                );
            }
        }
    }
}
