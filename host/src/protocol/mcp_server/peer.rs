//! The MCP client as the server sees it: the one writer of the output stream, the requests janua
//! sends it (elicitations) and their answers, and the prompter that turns permission questions
//! into elicitations.
//!
//! It does not decide anything: an answer only allows a call the central decision asked about.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, mpsc};
use std::time::Duration;

use serde::Deserialize as _;
use serde_json::{Value, json};

use janua_mcp::jsonrpc;
use janua_permissions::{PermissionRequest, PromptAnswer, Prompter};

type Answer = Result<Value, Value>;

/// The client on the other end of the stream.
pub(crate) struct Peer {
    /// Written by whoever has a line: a call's task, the input thread. A hand-off to a writer
    /// thread would cost every call another cross-thread wake-up (≈40 µs of CPU on this VM,
    /// BENCHMARKS.md); a client that stops reading blocks the writers either way once a queue
    /// or the pipe is full.
    output: Mutex<std::io::BufWriter<Box<dyn Write + Send>>>,
    pending: Mutex<HashMap<String, mpsc::Sender<Answer>>>,
    next_request: AtomicU64,
    /// The client's `initialize` params (capabilities, clientInfo).
    client: OnceLock<Value>,
    closed: AtomicBool,
    answer_timeout: Duration,
    /// False when janua cannot send the client requests (plain HTTP responses, no stream).
    can_request: bool,
}

impl Peer {
    pub(crate) fn new(
        output: Box<dyn Write + Send>,
        answer_timeout: Duration,
        can_request: bool,
    ) -> Self {
        Self {
            output: Mutex::new(std::io::BufWriter::new(output)),
            pending: Mutex::default(),
            next_request: AtomicU64::new(1),
            client: OnceLock::new(),
            closed: AtomicBool::new(false),
            answer_timeout,
            can_request,
        }
    }

    /// Writes one message line. A closed output leaves nobody to tell; the server still ends
    /// cleanly when its input ends.
    pub(crate) fn send(&self, line: &str) {
        let mut output = self
            .output
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let _ = output
            .write_all(line.as_bytes())
            .and_then(|()| output.write_all(b"\n"))
            .and_then(|()| output.flush());
    }

    /// Withdraws every question waiting for the client (a call was cancelled): each is denied,
    /// and the client is told to drop it.
    pub(crate) fn withdraw_requests(&self) {
        let withdrawn: Vec<String> = self.pending().drain().map(|(id, _)| id).collect();
        for id in withdrawn {
            let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
            self.send(&jsonrpc::notification(
                "notifications/cancelled",
                &json!({"requestId": id, "reason": "the call was cancelled"}),
            ));
        }
    }

    /// Records the client's `initialize` params (the first ones count).
    pub(crate) fn set_client(&self, params: &Value) {
        let _ = self.client.set(params.clone());
    }

    /// True when the client declared the elicitation capability.
    fn elicits(&self) -> bool {
        self.can_request
            && self
                .client
                .get()
                .is_some_and(|client| client["capabilities"].get("elicitation").is_some())
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::Sender<Answer>>> {
        self.pending
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Delivers the client's answer to a request janua sent; an unknown id is ignored (its
    /// asker gave up waiting).
    pub(crate) fn resolve(&self, id: &Value, answer: Answer) {
        if let Some(sender) = self.pending().remove(&id.to_string()) {
            let _ = sender.send(answer);
        }
    }

    /// Nobody will answer any more: pending and later requests fail at once.
    pub(crate) fn close(&self) {
        let mut pending = self.pending();
        self.closed.store(true, Ordering::SeqCst);
        pending.clear();
    }

    /// Sends a request and waits for its answer on this thread (moving other tasks off it when
    /// it is an async worker). `Err` says why there is no answer.
    fn request_blocking(&self, method: &str, params: &Value) -> Result<Value, NoAnswer> {
        let id = json!(format!(
            "janua-{}",
            self.next_request.fetch_add(1, Ordering::Relaxed)
        ));
        let (sender, answer) = mpsc::channel();
        {
            // Checked under the lock `close` takes, so no request slips in after it.
            let mut pending = self.pending();
            if self.closed.load(Ordering::SeqCst) {
                return Err(NoAnswer::Disconnected);
            }
            pending.insert(id.to_string(), sender);
        }
        self.send(&jsonrpc::request(&id, method, params));
        let timeout = self.answer_timeout;
        let wait = || answer.recv_timeout(timeout);
        let received = match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        };
        match received {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(NoAnswer::Refused(jsonrpc::error_text(&error))),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.pending().remove(&id.to_string());
                Err(NoAnswer::TimedOut(timeout))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(NoAnswer::Dropped),
        }
    }
}

/// Why a request janua sent to the MCP client has no answer; the text completes "janua asked
/// the user through the MCP client, and …".
#[derive(Debug, thiserror::Error)]
enum NoAnswer {
    #[error("the MCP client has disconnected")]
    Disconnected,
    #[error("the MCP client refused the request: {0}")]
    Refused(String),
    #[error("the MCP client gave no answer within {} s", .0.as_secs())]
    TimedOut(std::time::Duration),
    #[error("no answer will come (the call was cancelled, or the client disconnected)")]
    Dropped,
}

/// Permission questions as MCP elicitations. Without the client's elicitation capability there
/// is nobody to ask, and the decision denies with its reason.
pub(crate) struct ElicitationPrompter {
    peer: std::sync::Arc<Peer>,
}

impl ElicitationPrompter {
    pub(crate) fn new(peer: std::sync::Arc<Peer>) -> Self {
        Self { peer }
    }
}

const ALLOW_ONCE: &str = "allow once";
const ALLOW_ALWAYS: &str = "allow always";
const DENY: &str = "deny";

impl Prompter for ElicitationPrompter {
    fn ask(&self, request: &PermissionRequest) -> PromptAnswer {
        if !self.peer.elicits() {
            return PromptAnswer::Unavailable;
        }
        let mut choices = vec![ALLOW_ONCE, DENY];
        if !request.suggestions.is_empty() {
            choices.insert(1, ALLOW_ALWAYS);
        }
        let input = serde_json::to_string(&request.input).unwrap_or_default();
        let shown: String = input.chars().take(2000).collect();
        let mut message = format!(
            "janua asks whether {} may run.\n{}\nInput: {shown}",
            request.tool, request.reason
        );
        if !request.suggestions.is_empty() {
            message.push_str(&format!(
                "\n\"{ALLOW_ALWAYS}\" adds the session rule(s): {}",
                request.suggestions.join(", ")
            ));
        }
        let params = json!({
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "decision": {
                        "type": "string",
                        "title": "Decision",
                        "description": format!("Whether {} may run", request.tool),
                        "enum": choices,
                    }
                },
                "required": ["decision"],
            }
        });
        match self.peer.request_blocking("elicitation/create", &params) {
            Ok(answer) => read_answer(&answer, !request.suggestions.is_empty()),
            Err(problem) => PromptAnswer::Deny(format!(
                "janua asked the user through the MCP client, and {problem}"
            )),
        }
    }
}

/// An elicitation result as a prompt answer: only an accepted, well-formed choice allows.
fn read_answer(answer: &Value, always_offered: bool) -> PromptAnswer {
    /// An `ElicitResult`: `action`, and with `accept` the form's `content`.
    #[derive(serde::Deserialize)]
    #[serde(tag = "action", rename_all = "lowercase")]
    enum Elicited {
        Accept {
            #[serde(default)]
            content: Option<Form>,
        },
        Decline,
        Cancel,
    }
    #[derive(serde::Deserialize)]
    struct Form {
        decision: Option<String>,
    }
    match Elicited::deserialize(answer) {
        Ok(Elicited::Accept { content }) => {
            match content.and_then(|form| form.decision).as_deref() {
                Some(ALLOW_ONCE) => PromptAnswer::Allow,
                Some(ALLOW_ALWAYS) if always_offered => PromptAnswer::AllowAlways,
                Some(DENY) => PromptAnswer::Deny("the user denied the call".to_owned()),
                other => PromptAnswer::Deny(format!(
                    "the user's answer {other:?} is not one of the offered choices, so the call is denied"
                )),
            }
        }
        Ok(Elicited::Decline) => PromptAnswer::Deny("the user declined the call".to_owned()),
        Ok(Elicited::Cancel) => PromptAnswer::Deny("the user dismissed the question".to_owned()),
        Err(_) => PromptAnswer::Deny(format!(
            "the MCP client's elicitation answer is malformed ({answer}), so the call is denied"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elicitation_answers_table() {
        let cases = [
            (
                json!({"action": "accept", "content": {"decision": ALLOW_ONCE}}),
                true,
                Some(PromptAnswer::Allow),
            ),
            (
                json!({"action": "accept", "content": {"decision": ALLOW_ALWAYS}}),
                true,
                Some(PromptAnswer::AllowAlways),
            ),
            // "allow always" was not offered: it cannot be chosen.
            (
                json!({"action": "accept", "content": {"decision": ALLOW_ALWAYS}}),
                false,
                None,
            ),
            (
                json!({"action": "accept", "content": {"decision": "yes"}}),
                true,
                None,
            ),
            (json!({"action": "accept"}), true, None),
            (json!({"action": "decline"}), true, None),
            (json!({"action": "cancel"}), true, None),
            (json!({"action": "allow"}), true, None),
            (json!("accept"), true, None),
        ];
        for (answer, offered, expected) in cases {
            let got = read_answer(&answer, offered);
            match expected {
                Some(expected) => assert_eq!(got, expected, "{answer}"),
                None => assert!(matches!(got, PromptAnswer::Deny(_)), "{answer}: {got:?}"),
            }
        }
    }
}
