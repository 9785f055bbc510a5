//! The Chrome DevTools Protocol over the pipe Chromium opens with `--remote-debugging-pipe`:
//! JSON messages, each ended by a NUL byte; commands go to the browser's fd 3, answers and events
//! come from its fd 4.
//!
//! Written here rather than taken from `chromiumoxide` or `headless_chrome`: both speak the
//! protocol over a WebSocket only, and the browser runs in a network namespace of its own, where
//! no host socket can reach its debugging port. The pipe also keeps the protocol off every socket
//! a page could reach. This file only frames messages and matches answers to commands; the
//! commands themselves are plain `serde_json` values.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use serde_json::{Value, json};

/// Largest message read from the browser (a viewport screenshot is a few MiB of base64); a
/// bigger one is skipped and the command it answers fails.
const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// What a command can end in besides its result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CdpError {
    /// The pipe closed or the browser sent something unreadable.
    #[error("the browser stopped answering: {0}")]
    Closed(String),
    /// No answer before the deadline.
    #[error("the browser did not answer {0} in time")]
    Timeout(String),
    /// The browser answered with a protocol error.
    #[error("{method} failed: {message}")]
    Protocol {
        /// The command.
        method: String,
        /// The browser's message.
        message: String,
    },
}

/// An event the browser sent, for the session (page) it names.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// `Domain.event`, e.g. `Fetch.requestPaused`.
    pub method: String,
    /// The event's parameters.
    pub params: Value,
}

type Reply = Result<Value, CdpError>;

/// One browser's protocol connection, shared by every page of it.
pub(crate) struct Connection {
    writer: Mutex<std::fs::File>,
    pending: Mutex<HashMap<u64, mpsc::SyncSender<Reply>>>,
    listeners: Mutex<HashMap<String, tokio::sync::mpsc::UnboundedSender<Event>>>,
    next_id: AtomicU64,
    closed: Mutex<Option<String>>,
}

impl Connection {
    /// Starts reading `from_browser` on a thread of its own and returns the connection.
    pub(crate) fn start(
        to_browser: std::fs::File,
        from_browser: std::fs::File,
    ) -> std::io::Result<Arc<Self>> {
        let connection = Arc::new(Self {
            writer: Mutex::new(to_browser),
            pending: Mutex::default(),
            listeners: Mutex::default(),
            next_id: AtomicU64::new(1),
            closed: Mutex::default(),
        });
        let reader = Arc::clone(&connection);
        std::thread::Builder::new()
            .name("janua-browser-cdp".to_owned())
            .spawn(move || reader.read_loop(from_browser))?;
        Ok(connection)
    }

    /// Sends `method` (to the page `session`, or to the browser) and waits for its result until
    /// `deadline`.
    pub(crate) fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        deadline: Instant,
    ) -> Result<Value, CdpError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.lock_pending().insert(id, reply);
        if let Err(error) = self.write(id, session, method, params) {
            self.lock_pending().remove(&id);
            return Err(error);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        let answered = answer.recv_timeout(wait);
        self.lock_pending().remove(&id);
        match answered {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(CdpError::Protocol { message, .. })) => Err(CdpError::Protocol {
                method: method.to_owned(),
                message,
            }),
            Ok(Err(error)) => Err(error),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(CdpError::Timeout(method.to_owned())),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(self.closed_error()),
        }
    }

    /// Sends `method` without waiting for its answer.
    pub(crate) fn send(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<(), CdpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.write(id, session, method, params)
    }

    /// The events of page `session` from now on, until [`Connection::forget`].
    pub(crate) fn listen(&self, session: &str) -> tokio::sync::mpsc::UnboundedReceiver<Event> {
        let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
        self.lock_listeners().insert(session.to_owned(), events);
        receiver
    }

    /// Stops delivering events of `session`.
    pub(crate) fn forget(&self, session: &str) {
        self.lock_listeners().remove(session);
    }

    /// Why the connection is closed, if it is.
    pub(crate) fn closed(&self) -> Option<String> {
        self.closed
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    fn closed_error(&self) -> CdpError {
        CdpError::Closed(
            self.closed()
                .unwrap_or_else(|| "the connection closed".to_owned()),
        )
    }

    fn write(
        &self,
        id: u64,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<(), CdpError> {
        if self.closed().is_some() {
            return Err(self.closed_error());
        }
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = Value::String(session.to_owned());
        }
        let mut bytes = serde_json::to_vec(&message)
            .map_err(|error| CdpError::Closed(format!("cannot encode {method}: {error}")))?;
        bytes.push(0);
        let mut writer = self
            .writer
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        writer
            .write_all(&bytes)
            .map_err(|error| CdpError::Closed(format!("writing {method}: {error}")))
    }

    fn read_loop(&self, from_browser: std::fs::File) {
        let mut reader = BufReader::with_capacity(1 << 16, from_browser);
        let mut message = Vec::new();
        let reason = loop {
            message.clear();
            let read = std::io::Read::take(&mut reader, MAX_MESSAGE_BYTES as u64 + 1)
                .read_until(0, &mut message);
            match read {
                Ok(0) => break "the browser closed its end of the pipe".to_owned(),
                Err(error) => break format!("reading from the browser: {error}"),
                Ok(_) if message.last() != Some(&0) && message.len() > MAX_MESSAGE_BYTES => {
                    // Chromium writes `id` first: the command it answers fails, the rest goes on.
                    let id = answered_id(&message);
                    if let Err(error) = reader.skip_until(0) {
                        break format!("reading from the browser: {error}");
                    }
                    if let Some(reply) = id.and_then(|id| self.lock_pending().remove(&id)) {
                        let _ = reply.try_send(Err(CdpError::Protocol {
                            method: String::new(),
                            message: format!(
                                "the answer is larger than {} MiB; ask for less (a selector, a smaller value)",
                                MAX_MESSAGE_BYTES >> 20
                            ),
                        }));
                    }
                    continue;
                }
                Ok(_) if message.last() != Some(&0) => {
                    break "the browser closed its end of the pipe".to_owned();
                }
                Ok(_) => {}
            }
            message.pop();
            match serde_json::from_slice::<Value>(&message) {
                Ok(value) => self.dispatch(value),
                Err(error) => {
                    break format!("the browser sent a message that is not JSON: {error}");
                }
            }
        };
        tracing::debug!(target: "janua::browser", "protocol connection closed: {reason}");
        *self
            .closed
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) = Some(reason.clone());
        for (_, reply) in self.lock_pending().drain() {
            let _ = reply.try_send(Err(CdpError::Closed(reason.clone())));
        }
        self.lock_listeners().clear();
    }

    fn dispatch(&self, mut message: Value) {
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            let Some(reply) = self.lock_pending().remove(&id) else {
                return;
            };
            let answer = match message.get_mut("error") {
                Some(error) => Err(CdpError::Protocol {
                    method: String::new(),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown error")
                        .to_owned(),
                }),
                None => Ok(message
                    .get_mut("result")
                    .map(Value::take)
                    .unwrap_or(Value::Null)),
            };
            let _ = reply.try_send(answer);
            return;
        }
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return;
        };
        let session = message
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or("");
        let listeners = self.lock_listeners();
        if let Some(listener) = listeners.get(session) {
            let _ = listener.send(Event {
                method: method.to_owned(),
                params: message.get("params").cloned().unwrap_or(Value::Null),
            });
        }
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, HashMap<u64, mpsc::SyncSender<Reply>>> {
        self.pending
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn lock_listeners(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, tokio::sync::mpsc::UnboundedSender<Event>>> {
        self.listeners
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// The `id` of an answer from its first bytes (`{"id":12,...`), for one too large to parse.
fn answered_id(message: &[u8]) -> Option<u64> {
    let rest = message.strip_prefix(br#"{"id":"#)?;
    let digits: Vec<u8> = rest
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .take(20)
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_answer_is_matched_by_its_leading_id() {
        assert_eq!(answered_id(br#"{"id":42,"result":{"data":"AAAA"#), Some(42));
        assert_eq!(answered_id(br#"{"method":"Page.loadEventFired"}"#), None);
        assert_eq!(answered_id(br#"{"id":"x"}"#), None);
        assert_eq!(answered_id(b"{\"id\":99999999999999999999999}"), None);
    }
}
