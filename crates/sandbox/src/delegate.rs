//! The guest side of the `delegate` import. A guest's request to call another tool is carried from
//! its thread to the async task running its call, which hands it to a [`Delegator`] (the pipeline's
//! nested dispatch) and sends the answer back. The sandbox never runs the pipeline itself: it only
//! moves requests, so a component without a delegator (no `delegate` grant, `validate-input`, hooks)
//! gets a refusal and nothing else.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use super::bindings::{DelegateHost, WitDelegated};
use super::call::CallState;

/// A boxed future the delegator returns; boxed because nested dispatch is recursive.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Runs a delegated call through the whole pipeline and renders its `tool_result`.
pub trait Delegator: Send + Sync {
    /// Calls `tool` with `input` (JSON text) for a caller whose own deadline is `deadline`.
    fn delegate<'s>(
        &'s self,
        tool: String,
        input: String,
        deadline: Instant,
    ) -> BoxFuture<'s, WitDelegated>;
}

/// One request travelling from the guest's thread to its call's task.
pub(crate) struct DelegateRequest {
    pub tool: String,
    pub input: String,
    pub deadline: Instant,
    pub reply: std::sync::mpsc::SyncSender<WitDelegated>,
}

/// The guest thread's end of the channel.
pub(crate) type DelegateLink = tokio::sync::mpsc::UnboundedSender<DelegateRequest>;

/// The answer to a request the host refuses without running anything.
pub(crate) fn refusal(kind: &str, message: String) -> WitDelegated {
    WitDelegated {
        tool_use_id: String::new(),
        is_error: true,
        error_kind: Some(kind.to_owned()),
        text: message,
        structured: None,
    }
}

impl DelegateHost for CallState {
    fn call(&mut self, tool: String, input: String) -> WitDelegated {
        let Some(link) = self.delegate_link() else {
            return refusal(
                "permission_denied",
                "this component may not delegate: its grants have no `delegate` entry (or it is not in `call`)".to_owned(),
            );
        };
        if self.is_cancelled() {
            return refusal("cancelled", "the calling tool was cancelled".to_owned());
        }
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let request = DelegateRequest {
            tool,
            input,
            deadline: self.deadline(),
            reply,
        };
        if link.send(request).is_err() {
            return refusal(
                "cancelled",
                "the calling tool's call already ended".to_owned(),
            );
        }
        // The call's task always answers or drops the request (when it gives up on this guest),
        // so this wait ends; the nested call itself is bounded by a share of this deadline.
        answer.recv().unwrap_or_else(|_| {
            refusal(
                "cancelled",
                "the calling tool's call ended before the delegated call finished".to_owned(),
            )
        })
    }
}
