//! A dispatch as an MCP `CallToolResult`, and the progress notifications of a running call.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Reply;
use crate::pipeline::Dispatch;
use janua_mcp::jsonrpc;
use janua_types::{ContentBlock, ResultContent};

/// `{"content","isError","structuredContent"?,"_meta"}`: the same text the model would get in a
/// `tool_result`, with janua's `error_kind` and result file in `_meta`.
pub(crate) fn call_result(dispatch: &Dispatch) -> Value {
    let content: Vec<Value> = match &dispatch.block.content {
        ResultContent::Text(text) => vec![json!({"type": "text", "text": text})],
        ResultContent::Blocks(blocks) => blocks
            .iter()
            .map(|block| match block {
                ContentBlock::Text { text } => json!({"type": "text", "text": text}),
                ContentBlock::Image { source } => json!({
                    "type": "image",
                    "data": source.data,
                    "mimeType": source.media_type,
                }),
            })
            .collect(),
    };
    let outcome = &dispatch.outcome;
    let mut meta = serde_json::Map::new();
    meta.insert("janua/tool_use_id".into(), json!(outcome.tool_use_id));
    if let Some(failure) = &outcome.error {
        meta.insert("janua/error_kind".into(), json!(failure.kind.as_str()));
    }
    if let Some(path) = &outcome.saved_to {
        meta.insert("janua/saved_to".into(), json!(path.to_string_lossy()));
    }
    let mut result = json!({
        "content": content,
        "isError": dispatch.block.is_error,
        "_meta": meta,
    });
    // Structured results only for successes whose tool gave one: an error's shape is the
    // tool's own business, and a client may check structured content against a schema.
    if !dispatch.block.is_error
        && let Some(structured) = outcome
            .structured
            .as_ref()
            .filter(|value| value.is_object())
    {
        result["structuredContent"] = structured.clone();
    }
    result
}

/// `notifications/progress` for one call sent with a `progressToken`: every progress message the
/// tool reports, and an elapsed-time tick every interval, until the call's result is sent.
pub(crate) struct Progress {
    /// What the notifications need; held while one or the result is written, so none follows
    /// the result.
    state: Arc<Mutex<Notifier>>,
    ticker: tokio::task::JoinHandle<()>,
}

struct Notifier {
    reply: Reply,
    token: Value,
    /// The specification wants `progress` to grow with every notification.
    sent: u64,
    done: bool,
}

impl Notifier {
    fn send(&mut self, message: &str) {
        if self.done {
            return;
        }
        self.sent += 1;
        (self.reply)(&jsonrpc::notification(
            "notifications/progress",
            &json!({"progressToken": self.token, "progress": self.sent, "message": message}),
        ));
    }
}

fn lock(state: &Mutex<Notifier>) -> std::sync::MutexGuard<'_, Notifier> {
    state.lock().unwrap_or_else(|poison| poison.into_inner())
}

impl Progress {
    pub(crate) fn start(reply: Reply, token: Value, tool: String, interval: Duration) -> Self {
        let state = Arc::new(Mutex::new(Notifier {
            reply,
            token,
            sent: 0,
            done: false,
        }));
        let ticker = {
            let state = Arc::clone(&state);
            tokio::spawn(async move {
                let started = Instant::now();
                let interval = interval.max(Duration::from_millis(10));
                loop {
                    tokio::time::sleep(interval).await;
                    let mut state = lock(&state);
                    if state.done {
                        break;
                    }
                    let elapsed = started.elapsed().as_secs_f64();
                    state.send(&format!("{tool} running for {elapsed:.1} s"));
                }
            })
        };
        Self { state, ticker }
    }

    /// Forwards a progress message the tool reported.
    pub(crate) fn message(&self, text: &str) {
        lock(&self.state).send(text);
    }

    /// Stops the notifications, then sends `result` (when the call was not cancelled).
    pub(crate) fn finish(&self, result: Option<&str>) {
        let mut state = lock(&self.state);
        state.done = true;
        if let Some(line) = result {
            (state.reply)(line);
        }
        self.ticker.abort();
    }
}
