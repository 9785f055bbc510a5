//! `janua:plugin/host`: logging (bounded, control characters escaped), progress, the cancel
//! flag, and the session's read record (only for paths inside the call's grants and not hidden).

use std::sync::atomic::Ordering;

use super::store::CallState;
use crate::bindings::{Host, LogLevel};

/// Log lines a guest may write per call; more are counted and dropped.
pub(super) const MAX_LOG_LINES: u32 = 1000;
/// Characters kept of one guest log line.
const MAX_LOG_CHARS: usize = 2000;

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
