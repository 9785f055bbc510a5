//! `janua mcp serve`: the effective registry served to any MCP client over stdio.
//!
//! `tools/list` is answered from a listing built at start (and again after each `--watch` reload,
//! announced with `notifications/tools/list_changed`). Every `tools/call` runs the whole
//! pipeline (coerce, schema, validate-input, hooks, the central decision, the sandbox, the output
//! budget) and comes back as a `CallToolResult`; failures are results with `isError: true` and
//! janua's `error_kind`, never protocol errors. Permission questions go to the client as MCP
//! elicitations when it offers them and are denied otherwise. `notifications/cancelled` stops a
//! call; a call sent with a `progressToken` gets `notifications/progress` while it runs. When the
//! input ends, calls in flight are cancelled, the session ends and the server returns.
//!
//! Nothing but JSON-RPC is ever written to the output: guests' stdout and stderr are captured by
//! the sandbox, and janua's own diagnostics go to stderr.

mod http;
mod peer;
mod results;

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::pipeline::Failure;
use crate::runtime::{DEFAULT_MAX_CONCURRENCY, Runtime, SessionEndReport};
use janua_mcp::jsonrpc::{self, Incoming, code};
use janua_types::{ErrorKind, ToolUse};

pub use http::{HttpServe, HttpServeError, serve_mcp_http};
pub(crate) use peer::Peer;

/// Where the answers to one message go: the stdio stream, or one HTTP response.
pub(crate) type Reply = Arc<dyn Fn(&str) + Send + Sync>;

/// Calls read but not finished beyond which new calls are refused (`resource_exhausted`).
const MAX_QUEUED_CALLS: usize = 1024;

/// Largest message read from the client; a longer line is answered with an error and skipped.
const MAX_MESSAGE: usize = 16 << 20;

/// How long the server waits for calls to finish after the input ended (they are cancelled).
const DRAIN: Duration = Duration::from_secs(5);

/// How `janua mcp serve` behaves.
#[derive(Debug, Clone)]
pub struct McpServeOptions {
    /// Most calls running at once (default 10); concurrency-safe calls share the slots, any
    /// other call runs alone.
    pub max_concurrency: usize,
    /// How often a call sent with a `progressToken` gets a progress notification (default 1 s).
    pub progress_interval: Duration,
    /// How long a permission question waits for the client's elicitation answer (default 5 min);
    /// no answer denies.
    pub elicitation_timeout: Duration,
    /// Poll the plugin directories this often and reload them when they change (`--watch`).
    pub watch_plugins: Option<Duration>,
}

impl Default for McpServeOptions {
    fn default() -> Self {
        Self {
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            progress_interval: Duration::from_secs(1),
            elicitation_timeout: Duration::from_secs(300),
            watch_plugins: None,
        }
    }
}

/// `tools/call` params.
#[derive(serde::Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

/// A request's `_meta`.
#[derive(serde::Deserialize)]
struct RequestMeta {
    #[serde(rename = "progressToken", default)]
    progress_token: Option<Value>,
}

/// A `tools/call` checked and registered, ready to run.
struct Admitted {
    id: Value,
    /// Its key in `in_flight`.
    key: String,
    call: ToolUse,
    cancel: Arc<std::sync::atomic::AtomicBool>,
    progress_token: Option<Value>,
}

/// The client's input, shared by the two input threads: whoever holds the lock reads.
struct SharedInput {
    state: Mutex<InputState>,
}

struct InputState {
    input: Box<dyn BufRead + Send>,
    line: Vec<u8>,
    /// Told when the input ends; taken by the thread that saw the end.
    ended: Option<tokio::sync::oneshot::Sender<()>>,
}

impl SharedInput {
    fn lock(&self) -> std::sync::MutexGuard<'_, InputState> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl InputState {
    /// The next message; `None` once the input has ended. Lines that are too long or not
    /// JSON-RPC are answered with an error here and skipped.
    fn next_message(&mut self, reply: &Reply) -> Option<Incoming> {
        // Once one thread saw the end, the other reads nothing more.
        self.ended.as_ref()?;
        loop {
            match jsonrpc::read_line(&mut self.input, &mut self.line, MAX_MESSAGE) {
                Ok(jsonrpc::Line::End) | Err(_) => return None,
                Ok(jsonrpc::Line::TooLong) => {
                    reply(&jsonrpc::error_response(
                        &Value::Null,
                        code::INVALID_REQUEST,
                        &format!("a message may have at most {MAX_MESSAGE} bytes"),
                    ));
                    continue;
                }
                Ok(jsonrpc::Line::Complete) => {}
            }
            if self.line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match jsonrpc::parse(&self.line) {
                Ok(message) => return Some(message),
                Err(bad) => reply(&jsonrpc::error_response(&bad.id, bad.code, &bad.message)),
            }
        }
    }
}

/// One call in flight, keyed by its JSON-RPC id.
struct InFlight {
    /// Set by `notifications/cancelled` or shutdown: the pipeline stops the call (before it
    /// starts, or its guest through the epoch deadline), and no result is sent (the
    /// specification asks receivers not to answer a cancelled request).
    cancel: Arc<std::sync::atomic::AtomicBool>,
}

struct Server {
    runtime: Arc<Runtime>,
    peer: Arc<Peer>,
    options: McpServeOptions,
    /// The `tools/list` result, rebuilt after each reload.
    tools_list: Mutex<Value>,
    in_flight: Mutex<HashMap<String, InFlight>>,
    /// The progress notifiers of calls sent with a `progressToken`, by `tool_use_id`.
    progress: Mutex<HashMap<String, Arc<results::Progress>>>,
    /// Concurrency-safe calls share it; every other call holds it alone.
    exclusive: tokio::sync::RwLock<()>,
    slots: tokio::sync::Semaphore,
    next_call: AtomicU64,
    handle: tokio::runtime::Handle,
    /// Calls whose tasks have not finished, and a signal each time one finishes.
    running: AtomicU64,
    /// A call runs on an input thread (see [`Server::read`]), or fewer than two input threads
    /// run: a call read now must not keep its thread from reading.
    inline_busy: std::sync::atomic::AtomicBool,
    finished: tokio::sync::Notify,
    /// The `--watch` task, stopped at shutdown.
    watcher: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// Serves MCP over `input` and `output` until the input ends, then ends the session and returns
/// what ending it reported.
pub async fn serve_mcp(
    runtime: Runtime,
    options: McpServeOptions,
    input: Box<dyn BufRead + Send>,
    output: Box<dyn std::io::Write + Send>,
) -> SessionEndReport {
    let peer = Arc::new(Peer::new(output, options.elicitation_timeout, true));
    let (server, runtime) = Server::start(runtime, options, peer).await;
    let (ended, input_closed) = tokio::sync::oneshot::channel();
    let input = Arc::new(SharedInput {
        state: Mutex::new(InputState {
            input,
            line: Vec::new(),
            ended: Some(ended),
        }),
    });
    for number in 0..2 {
        let reader = {
            let server = Arc::clone(&server);
            let input = Arc::clone(&input);
            move || server.read(&input)
        };
        if let Err(error) = std::thread::Builder::new()
            .name(format!("janua-mcp-input-{number}"))
            .spawn(reader)
        {
            tracing::error!("cannot start an MCP input thread: {error}");
            if number == 0 {
                return runtime.end_session("other").await;
            }
            // One reader alone must never stop reading to run a call: calls stay spawned.
            break;
        }
        if number == 1 {
            server.inline_busy.store(false, Ordering::SeqCst);
        }
    }
    let _ = input_closed.await;
    server.shut_down().await;
    runtime.end_session("other").await
}

impl Server {
    /// Sets the prompter, lists the tools once and starts the session.
    async fn start(
        mut runtime: Runtime,
        options: McpServeOptions,
        peer: Arc<Peer>,
    ) -> (Arc<Self>, Arc<Runtime>) {
        runtime.set_prompter(Arc::new(peer::ElicitationPrompter::new(Arc::clone(&peer))));
        for warning in runtime.warnings() {
            tracing::warn!("{warning}");
        }
        let specs: Vec<janua_types::ToolSpec> =
            runtime.tools().into_iter().map(|tool| tool.spec).collect();
        let tools_list = super::tool_definitions(&specs, super::DefinitionFormat::Mcp);
        let runtime = Arc::new(runtime);
        runtime.start_session().await;
        let server = Arc::new(Server {
            runtime: Arc::clone(&runtime),
            peer,
            slots: tokio::sync::Semaphore::new(options.max_concurrency.max(1)),
            options,
            tools_list: Mutex::new(tools_list),
            in_flight: Mutex::default(),
            progress: Mutex::default(),
            exclusive: tokio::sync::RwLock::new(()),
            next_call: AtomicU64::new(1),
            handle: tokio::runtime::Handle::current(),
            running: AtomicU64::new(0),
            // Until both input threads run, no call may keep its thread from reading.
            inline_busy: std::sync::atomic::AtomicBool::new(true),
            finished: tokio::sync::Notify::new(),
            watcher: Mutex::default(),
        });
        // A tool's progress messages reach its call's notifier as they come.
        let weak = Arc::downgrade(&server);
        runtime.set_progress_listener(Arc::new(move |id: &str, message: &str| {
            let Some(server) = weak.upgrade() else {
                return;
            };
            let progress = server.lock_progress().get(id).cloned();
            if let Some(progress) = progress {
                progress.message(message);
            }
        }));
        if let Some(interval) = server.options.watch_plugins {
            let weak = Arc::downgrade(&server);
            let watcher = server.handle.spawn(super::watch::watch_plugins(
                Arc::clone(&runtime),
                interval,
                move |reload| {
                    let Some(server) = weak.upgrade() else {
                        return;
                    };
                    match reload {
                        Ok(_) => {
                            let specs: Vec<janua_types::ToolSpec> =
                                server.runtime.tools().into_iter().map(|tool| tool.spec).collect();
                            *server
                                .tools_list
                                .lock()
                                .unwrap_or_else(|poison| poison.into_inner()) =
                                super::tool_definitions(&specs, super::DefinitionFormat::Mcp);
                            server.peer.send(
                                &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                                    .to_string(),
                            );
                        }
                        Err(error) => tracing::warn!("plugins not reloaded: {error}"),
                    }
                },
            ));
            *server
                .watcher
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()) = Some(watcher);
        }
        (server, runtime)
    }

    /// Reads messages until the input ends; two threads run this, one reading at a time.
    ///
    /// A `tools/call` read while no call runs on the other thread runs right here: the thread
    /// registers it, hands the input to the other thread (which goes on reading cancellations,
    /// elicitation answers and further calls), runs the call and writes its result, then waits
    /// for its turn to read again. Handing a call to the async worker instead cost a wake-up and
    /// a park of that worker per call: this saves 9–17% of the server's CPU per echo call
    /// (BENCHMARKS.md, issue 33 step 3), though the input still changes threads on every call.
    /// A call read while the other thread runs one is spawned, as before: one thread always
    /// reads.
    fn read(self: &Arc<Self>, input: &SharedInput) {
        let reply: Reply = {
            let peer = Arc::clone(&self.peer);
            Arc::new(move |line: &str| peer.send(line))
        };
        loop {
            let mut state = input.lock();
            let Some(message) = state.next_message(&reply) else {
                // The input ended: the first thread to see it tells the server; the other finds
                // the sender gone and leaves too.
                if let Some(ended) = state.ended.take() {
                    let _ = ended.send(());
                }
                return;
            };
            let message = match message {
                Incoming::Request { id, method, params } if method == "tools/call" => (id, params),
                other => {
                    // Handled in the order read, before the next message is.
                    self.handle(other, &reply);
                    continue;
                }
            };
            let (id, params) = message;
            if self.inline_busy.swap(true, Ordering::SeqCst) {
                self.call(id, params, &reply);
                continue;
            }
            // Registered before the input is handed over: a cancellation read next finds it.
            let admitted = self.admit(id, params, &reply);
            drop(state);
            if let Some(admitted) = admitted {
                // A call that panics loses its answer, as a spawned one does, but not the thread.
                let run = std::panic::AssertUnwindSafe(|| {
                    self.handle
                        .block_on(self.finish(admitted, Arc::clone(&reply)));
                });
                if std::panic::catch_unwind(run).is_err() {
                    tracing::error!("an MCP call panicked on its input thread");
                }
            }
            self.inline_busy.store(false, Ordering::SeqCst);
        }
    }

    /// Handles one message; a request's answer (and a call's progress) goes to `reply`.
    pub(crate) fn handle(self: &Arc<Self>, message: Incoming, reply: &Reply) {
        match message {
            Incoming::Request { id, method, params } => self.request(id, &method, params, reply),
            Incoming::Notification { method, params } => self.notification(&method, &params),
            Incoming::Response { id, outcome } => self.peer.resolve(&id, outcome),
        }
    }

    fn request(self: &Arc<Self>, id: Value, method: &str, params: Value, reply: &Reply) {
        let result = match method {
            "initialize" => Ok(self.initialize(&params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(self
                .tools_list
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .clone()),
            "tools/call" => return self.call(id, params, reply),
            // Offered by no capability, but asked for by some clients regardless.
            "resources/list" => Ok(json!({"resources": []})),
            "prompts/list" => Ok(json!({"prompts": []})),
            _ => Err((
                code::METHOD_NOT_FOUND,
                format!("janua does not serve the method {method:?}"),
            )),
        };
        let line = match result {
            Ok(result) => jsonrpc::response(&id, &result),
            Err((code, message)) => jsonrpc::error_response(&id, code, &message),
        };
        reply(&line);
    }

    fn initialize(&self, params: &Value) -> Value {
        self.peer.set_client(params);
        let asked = params["protocolVersion"].as_str().unwrap_or_default();
        // A client asking for a revision janua does not speak gets the newest, as the
        // specification prescribes; it may then disconnect.
        let version = janua_mcp::MCP_REVISIONS
            .iter()
            .find(|version| **version == asked)
            .unwrap_or(&janua_mcp::MCP_REVISIONS[0]);
        json!({
            "protocolVersion": version,
            "capabilities": {
                // Lists change when plugins are reloaded; until then the list is fixed.
                "tools": { "listChanged": true },
            },
            "serverInfo": {
                "name": "janua",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "instructions": "Tools run in janua's sandbox; every call passes janua's permission rules, hooks and output limits. Error results carry _meta[\"janua/error_kind\"].",
        })
    }

    fn notification(&self, method: &str, params: &Value) {
        if method != "notifications/cancelled" {
            // `notifications/initialized` and the rest need nothing from janua.
            return;
        }
        let key = params["requestId"].to_string();
        if let Some(call) = self.lock_in_flight().get(&key) {
            call.cancel.store(true, Ordering::SeqCst);
            // A permission question the call waits on is withdrawn too (answered as denied).
            self.peer.withdraw_requests();
        }
    }

    fn lock_progress(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<results::Progress>>> {
        self.progress
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn lock_in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, InFlight>> {
        self.in_flight
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Starts a `tools/call` on the async runtime; the input thread goes on reading.
    fn call(self: &Arc<Self>, id: Value, params: Value, reply: &Reply) {
        if let Some(admitted) = self.admit(id, params, reply) {
            let server = Arc::clone(self);
            let reply = Arc::clone(reply);
            self.handle
                .spawn(async move { server.finish(admitted, reply).await });
        }
    }

    /// Checks a `tools/call` and registers it as running; `None` when it was answered already
    /// (bad params, a repeated id, too many calls).
    fn admit(&self, id: Value, params: Value, reply: &Reply) -> Option<Admitted> {
        let params: CallParams = match serde_json::from_value(params) {
            Ok(params) => params,
            Err(error) => {
                reply(&jsonrpc::error_response(
                    &id,
                    code::INVALID_PARAMS,
                    &format!("tools/call params need a string \"name\": {error}"),
                ));
                return None;
            }
        };
        let name = params.name;
        // Whatever `arguments` is, the schema stage judges it (a non-object is invalid_input).
        let input = params.arguments.unwrap_or_else(|| json!({}));
        let tool_use_id = format!("mcp_{}", self.next_call.fetch_add(1, Ordering::Relaxed));
        let key = id.to_string();
        let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
        {
            let mut in_flight = self.lock_in_flight();
            if in_flight.contains_key(&key) {
                drop(in_flight);
                reply(&jsonrpc::error_response(
                    &id,
                    code::INVALID_REQUEST,
                    &format!("a request with id {key} is still running"),
                ));
                return None;
            }
            if in_flight.len() >= MAX_QUEUED_CALLS {
                drop(in_flight);
                let failure = Failure::new(
                    ErrorKind::ResourceExhausted,
                    format!(
                        "{MAX_QUEUED_CALLS} calls are already running or queued; try again when some have finished"
                    ),
                );
                let call = ToolUse {
                    id: tool_use_id,
                    name,
                    input,
                };
                let result = results::call_result(&crate::pipeline::refused(&call, failure));
                reply(&jsonrpc::response(&id, &result));
                return None;
            }
            in_flight.insert(
                key.clone(),
                InFlight {
                    cancel: Arc::clone(&cancel),
                },
            );
        }
        let progress_token = params
            .meta
            .and_then(|meta| meta.progress_token)
            .filter(|token| token.is_string() || token.is_number());
        self.running.fetch_add(1, Ordering::SeqCst);
        Some(Admitted {
            id,
            key,
            call: ToolUse {
                id: tool_use_id,
                name,
                input,
            },
            cancel,
            progress_token,
        })
    }

    /// Runs an admitted call and writes its result (none when it was cancelled).
    async fn finish(&self, admitted: Admitted, reply: Reply) {
        let Admitted {
            id,
            key,
            call,
            cancel,
            progress_token,
        } = admitted;
        let progress = progress_token.map(|token| {
            Arc::new(results::Progress::start(
                Arc::clone(&reply),
                token,
                call.name.clone(),
                self.options.progress_interval,
            ))
        });
        let tool_use_id = call.id.clone();
        if let Some(progress) = &progress {
            self.lock_progress()
                .insert(tool_use_id.clone(), Arc::clone(progress));
        }
        let dispatch = self.run(call, Arc::clone(&cancel)).await;
        self.lock_progress().remove(&tool_use_id);
        self.lock_in_flight().remove(&key);
        let cancelled = cancel.load(Ordering::SeqCst);
        let line = (!cancelled).then(|| jsonrpc::response(&id, &results::call_result(&dispatch)));
        match progress {
            // The last progress line goes out before the result, never after it.
            Some(progress) => progress.finish(line.as_deref()),
            None => {
                if let Some(line) = line {
                    reply(&line);
                }
            }
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.finished.notify_waiters();
    }

    /// Runs one call within the concurrency rules: a slot, and the exclusive lock unless the tool
    /// is concurrency-safe.
    async fn run(
        &self,
        call: ToolUse,
        cancel: Arc<std::sync::atomic::AtomicBool>,
    ) -> crate::pipeline::Dispatch {
        let Ok(_slot) = self.slots.acquire().await else {
            return crate::pipeline::refused(
                &call,
                Failure::new(ErrorKind::Internal, "the server is shutting down"),
            );
        };
        if self.runtime.concurrency_safe(&call.name) {
            let _shared = self.exclusive.read().await;
            self.runtime.dispatch_cancellable(call, cancel).await
        } else {
            let _alone = self.exclusive.write().await;
            self.runtime.dispatch_cancellable(call, cancel).await
        }
    }

    /// The input ended: nobody can answer a question or read a result any more. Calls in flight
    /// are cancelled and given a moment to finish.
    async fn shut_down(&self) {
        if let Some(watcher) = self
            .watcher
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .take()
        {
            watcher.abort();
        }
        self.peer.close();
        for call in self.lock_in_flight().values() {
            call.cancel.store(true, Ordering::SeqCst);
        }
        let drained = tokio::time::timeout(DRAIN, async {
            loop {
                let finished = self.finished.notified();
                if self.running.load(Ordering::SeqCst) == 0 {
                    break;
                }
                finished.await;
            }
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                "{} MCP call(s) had not finished {} s after the input ended",
                self.running.load(Ordering::SeqCst),
                DRAIN.as_secs()
            );
        }
    }
}
