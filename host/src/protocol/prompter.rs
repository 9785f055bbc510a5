//! The stream-json prompter: an `ask` becomes a `control_request` line, and the agent loop's
//! `control_response` line answers it. Once the input ends nobody can answer, so every pending
//! and later ask is `Unavailable` (the decision then denies).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use super::messages::control_request;
use janua_permissions::{PermissionRequest, PromptAnswer, Prompter};

/// Writes one output line.
pub(crate) type LineWriter = Arc<dyn Fn(serde_json::Value) + Send + Sync>;

/// Asks the agent loop over the stream.
pub(crate) struct StreamPrompter {
    write: LineWriter,
    pending: Mutex<HashMap<String, mpsc::Sender<PromptAnswer>>>,
    next: AtomicU64,
    closed: AtomicBool,
}

impl StreamPrompter {
    pub(crate) fn new(write: LineWriter) -> Self {
        Self {
            write,
            pending: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            closed: AtomicBool::new(false),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::Sender<PromptAnswer>>> {
        self.pending
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Delivers the answer to `request_id`; false when no such request is waiting.
    pub(crate) fn resolve(&self, request_id: &str, answer: PromptAnswer) -> bool {
        match self.pending().remove(request_id) {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
    }

    /// Nobody will answer any more: pending and later asks are `Unavailable`.
    pub(crate) fn close(&self) {
        let mut pending = self.pending();
        self.closed.store(true, Ordering::Relaxed);
        pending.clear();
    }

    /// Answers every pending ask `Unavailable` (an interrupt); later asks go out as usual.
    pub(crate) fn fail_pending(&self) {
        self.pending().clear();
    }
}

impl Prompter for StreamPrompter {
    fn ask(&self, request: &PermissionRequest) -> PromptAnswer {
        let id = format!("req_{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (sender, answer) = mpsc::channel();
        {
            // Checked under the same lock `close` takes, so an ask cannot slip in after it.
            let mut pending = self.pending();
            if self.closed.load(Ordering::Relaxed) {
                return PromptAnswer::Unavailable;
            }
            pending.insert(id.clone(), sender);
        }
        (self.write)(control_request(&id, request));
        // The answer arrives from the input thread; while waiting, the async runtime moves
        // other tasks off this worker (the CLI's runtime is multi-threaded).
        let wait = || answer.recv().unwrap_or(PromptAnswer::Unavailable);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        }
    }
}
