//! One MCP server: a stdio child started under the process sandbox, initialized, asked for its
//! tools, sent calls, restarted with backoff after it crashes or hangs; or a Streamable HTTP
//! endpoint (`http.rs`).
//!
//! A server failure never reaches the host: a call to a server that is down, dies mid-call or
//! does not answer in time is an error result, and the next call after the backoff starts it
//! again. Reads and writes run on the connection's own threads, so a server that stops reading
//! or floods its output cannot stall an async worker.

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::jsonrpc::{self, Incoming, code};
use janua_confine::ChildSpec;
use janua_confine::server::{Pipes, ServerProcess};
use janua_types::ErrorKind;

/// Longest line read from a server; a longer one ends the connection (the server is broken).
const MAX_LINE: usize = 64 << 20;
/// Lines waiting for the server to read them; a server that lets more pile up is killed.
const MAX_QUEUED_LINES: usize = 1024;
/// The protocol revisions janua accepts from a server.
pub(crate) use super::MCP_REVISIONS as SERVER_VERSIONS;
/// Bytes of the server's stderr kept for error messages.
const STDERR_TAIL: usize = 4096;
/// Pages of `tools/list` followed, and tools kept per server.
const MAX_PAGES: usize = 100;
const MAX_TOOLS: usize = 1000;
/// Longest wait between restarts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a server that closed its output is given to exit, so the message can say how.
const EXIT_GRACE: Duration = Duration::from_millis(500);
/// How often a waiting call looks at cancellation.
const POLL: Duration = Duration::from_millis(20);

/// How to start the server, fixed at configuration.
pub(crate) struct Launch {
    pub spec: ChildSpec,
    pub startup_timeout: Duration,
    pub workspace: std::path::PathBuf,
}

/// Why a configured server is not started, or could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The url of a Streamable HTTP server does not parse.
    #[error("its url {url:?}: {source}")]
    Url {
        /// The url as configured.
        url: String,
        /// Why it does not parse.
        source: url::ParseError,
    },
    /// A configured header name is not one.
    #[error("{0:?} is not a header name")]
    HeaderName(String),
    /// A configured header value is not one.
    #[error("the value of header {0} is not a header value")]
    HeaderValue(String),
    /// A stdio start was asked of another transport.
    #[error("not a stdio server")]
    NotStdio,
    /// The command is on no `PATH` directory (the workspace's own never count).
    #[error("the command {0:?} was not found (outside the workspace) on PATH")]
    CommandNotFound(String),
    /// The server's temporary directory cannot be made.
    #[error("cannot create {}: {source}", path.display())]
    TempDir {
        /// The directory.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The task that starts the process failed.
    #[error("the start-up task failed: {0}")]
    Task(tokio::task::JoinError),
    /// The confined process could not be started.
    #[error(transparent)]
    Confine(janua_confine::ConfineError),
    /// A thread serving the process's pipes could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),
    /// The server answered `initialize` with a revision janua does not speak.
    #[error("it speaks MCP revision {0:?}; janua speaks {versions}", versions = SERVER_VERSIONS.join(", "))]
    Revision(String),
    /// The server did not answer `initialize`.
    #[error("initialize failed: {0}")]
    Initialize(String),
}

/// Why a request got no result.
#[derive(Debug, Clone)]
pub struct RequestError {
    /// The error kind the call's result carries.
    pub kind: ErrorKind,
    /// What happened, for the model and the operator.
    pub message: String,
}

impl RequestError {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

type Answer = Result<Value, Value>;

/// A started server.
struct Live {
    writer: mpsc::SyncSender<String>,
    pending: Arc<Mutex<HashMap<u64, tokio::sync::oneshot::Sender<Answer>>>>,
    next_id: AtomicU64,
    alive: Arc<AtomicBool>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    process: Arc<Mutex<ServerProcess>>,
}

impl Live {
    fn stderr_tail(&self) -> String {
        let tail = self
            .stderr
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let bytes: Vec<u8> = tail.iter().copied().collect();
        String::from_utf8_lossy(&bytes).trim().to_owned()
    }

    /// Why it is gone, for messages. A server that has just closed its output is usually a
    /// moment away from exiting, and its exit status says why, so it gets [`EXIT_GRACE`].
    async fn death(&self) -> String {
        let until = Instant::now() + EXIT_GRACE;
        let status = loop {
            let exited = self
                .process
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .exited();
            match exited {
                Some(status) => break status.to_string(),
                None if Instant::now() >= until => break "it closed its output".to_owned(),
                None => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        };
        let tail = self.stderr_tail();
        if tail.is_empty() {
            status
        } else {
            format!("{status}; its last stderr: {tail}")
        }
    }

    fn kill(&self) {
        self.alive.store(false, Ordering::SeqCst);
        self.process
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .kill();
    }

    /// Sends a request and waits for its answer, the deadline or `cancel`.
    async fn request(
        &self,
        method: &str,
        params: &Value,
        deadline: Instant,
        cancel: &AtomicBool,
    ) -> Result<Value, RequestError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, mut answer) = tokio::sync::oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .insert(id, sender);
        let gone = async |live: &Live| {
            RequestError::new(
                ErrorKind::ToolFailed,
                format!("the server is not running ({})", live.death().await),
            )
        };
        if !self.alive.load(Ordering::SeqCst)
            || !self.queue(jsonrpc::request(&json!(id), method, params))
        {
            self.forget(id);
            return Err(gone(self).await);
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                self.forget(id);
                // `initialize` is never cancelled (the specification forbids it); the caller
                // kills the server instead.
                if method != "initialize" {
                    self.cancel_request(id, "timed out");
                }
                return Err(RequestError::new(
                    ErrorKind::Timeout,
                    format!("the server did not answer {method} in time"),
                ));
            }
            if cancel.load(Ordering::Relaxed) {
                self.forget(id);
                self.cancel_request(id, "cancelled");
                return Err(RequestError::new(
                    ErrorKind::Cancelled,
                    "the call was cancelled",
                ));
            }
            match tokio::time::timeout(POLL.min(deadline - now), &mut answer).await {
                Ok(Ok(Ok(result))) => return Ok(result),
                Ok(Ok(Err(error))) => {
                    return Err(RequestError::new(
                        ErrorKind::ToolFailed,
                        format!(
                            "the server refused {method}: {}",
                            jsonrpc::error_text(&error)
                        ),
                    ));
                }
                // The reader dropped every pending answer: the server is gone.
                Ok(Err(_)) => return Err(gone(self).await),
                Err(_) => {}
            }
        }
    }

    fn forget(&self, id: u64) {
        self.pending
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .remove(&id);
    }

    fn cancel_request(&self, id: u64, reason: &str) {
        self.queue(jsonrpc::notification(
            "notifications/cancelled",
            &json!({"requestId": id, "reason": reason}),
        ));
    }

    fn notify(&self, method: &str) {
        self.queue(jsonrpc::notification(method, &json!({})));
    }

    /// Queues a line for the server; false (and the server killed) when it is gone or has let
    /// [`MAX_QUEUED_LINES`] pile up unread.
    fn queue(&self, line: String) -> bool {
        match self.writer.try_send(line) {
            Ok(()) => true,
            Err(mpsc::TrySendError::Full(_)) => {
                tracing::warn!("an MCP server stopped reading its input; it is killed");
                self.kill();
                false
            }
            Err(mpsc::TrySendError::Disconnected(_)) => false,
        }
    }
}

enum State {
    Up(Arc<Live>),
    Down { retry_at: Instant, reason: String },
}

/// One configured server: a stdio child started on demand and restarted with backoff, or a
/// Streamable HTTP endpoint.
pub struct Connection {
    name: String,
    link: Link,
    /// Crashes and failed starts since the last successful call: the backoff grows with them.
    failures: std::sync::atomic::AtomicU32,
}

enum Link {
    Stdio {
        launch: Launch,
        state: tokio::sync::Mutex<State>,
    },
    Http(super::http::HttpSession),
}

impl Connection {
    /// A stdio server, started on first use.
    pub(crate) fn new(name: String, launch: Launch) -> Self {
        Self {
            name,
            link: Link::Stdio {
                launch,
                state: tokio::sync::Mutex::new(State::Down {
                    retry_at: Instant::now(),
                    reason: "not started yet".to_owned(),
                }),
            },
            failures: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// A Streamable HTTP server.
    pub fn http(name: String, target: super::http::HttpTarget) -> Self {
        Self {
            name,
            link: Link::Http(super::http::HttpSession::new(target)),
            failures: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// How long the server has to start and list its tools.
    fn startup_timeout(&self) -> Duration {
        match &self.link {
            Link::Stdio { launch, .. } => launch.startup_timeout,
            Link::Http(session) => session.startup_timeout(),
        }
    }

    /// Sends one request to the server, starting it first if needed. A (re)start has the
    /// start-up timeout and `cancel` (dropping a half-started server kills it); the request's own
    /// `timeout` starts once the server is up.
    async fn send(
        &self,
        method: &str,
        params: &Value,
        timeout: Duration,
        cancel: &AtomicBool,
    ) -> Result<Value, RequestError> {
        if let Link::Http(session) = &self.link {
            return session.request(method, params, timeout, cancel).await;
        }
        let started_by = Instant::now() + self.startup_timeout();
        let live = tokio::select! {
            live = self.live() => live?,
            stopped = stopped(cancel, started_by) => return Err(stopped),
        };
        let deadline = Instant::now() + timeout;
        let result = live.request(method, params, deadline, cancel).await;
        // A server that does not answer in time is hung or overloaded: it is restarted (a slow
        // server is told so by the cancel notification first).
        if result
            .as_ref()
            .is_err_and(|error| error.kind == ErrorKind::Timeout)
        {
            live.kill();
        }
        result
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts the server and lists its tools (every page).
    pub async fn list_tools(&self) -> Result<Vec<Value>, RequestError> {
        let deadline = Instant::now() + self.startup_timeout();
        let never = AtomicBool::new(false);
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let left = deadline.saturating_duration_since(Instant::now());
            let page = self.send("tools/list", &params, left, &never).await?;
            let listed = page["tools"].as_array().ok_or_else(|| {
                RequestError::new(
                    ErrorKind::ToolFailed,
                    "the server's tools/list result has no \"tools\" list",
                )
            })?;
            tools.extend(listed.iter().cloned());
            if tools.len() > MAX_TOOLS {
                tools.truncate(MAX_TOOLS);
                break;
            }
            match page.get("nextCursor").filter(|next| !next.is_null()) {
                Some(next) => cursor = Some(next.clone()),
                None => break,
            }
        }
        Ok(tools)
    }

    /// Calls `tool` with `arguments`; the answer is the server's `CallToolResult`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: &Value,
        timeout: Duration,
        cancel: &AtomicBool,
    ) -> Result<Value, RequestError> {
        let result = self
            .send(
                "tools/call",
                &json!({"name": tool, "arguments": arguments}),
                timeout,
                cancel,
            )
            .await;
        if result.is_ok() {
            self.succeeded().await;
        }
        result
    }

    /// Resets the backoff once a call succeeded.
    async fn succeeded(&self) {
        self.failures.store(0, Ordering::Relaxed);
    }

    /// The running server, started (again) when it is down and its backoff has passed.
    async fn live(&self) -> Result<Arc<Live>, RequestError> {
        let Link::Stdio { state, .. } = &self.link else {
            return Err(RequestError::new(ErrorKind::Internal, "not a stdio server"));
        };
        let mut state = state.lock().await;
        if let State::Up(live) = &*state {
            if live.alive.load(Ordering::SeqCst) {
                return Ok(Arc::clone(live));
            }
            let reason = live.death().await;
            tracing::warn!("MCP server {} stopped: {reason}", self.name);
            let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
            *state = State::Down {
                retry_at: Instant::now() + backoff(failures),
                reason,
            };
        }
        if let State::Down { retry_at, reason } = &*state {
            let now = Instant::now();
            if now < *retry_at {
                return Err(RequestError::new(
                    ErrorKind::ToolFailed,
                    format!(
                        "the server is down ({reason}); janua restarts it in {:.1} s",
                        (*retry_at - now).as_secs_f64()
                    ),
                ));
            }
        }
        match self.start().await {
            Ok(live) => {
                *state = State::Up(Arc::clone(&live));
                Ok(live)
            }
            Err(reason) => {
                let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
                let backoff = backoff(failures);
                *state = State::Down {
                    retry_at: Instant::now() + backoff,
                    reason: reason.to_string(),
                };
                Err(RequestError::new(
                    ErrorKind::ToolFailed,
                    format!(
                        "the server could not be started: {reason} (next try in {:.0} s)",
                        backoff.as_secs_f64()
                    ),
                ))
            }
        }
    }

    /// Starts the process and runs the `initialize` handshake.
    async fn start(&self) -> Result<Arc<Live>, StartError> {
        let Link::Stdio { launch, .. } = &self.link else {
            return Err(StartError::NotStdio);
        };
        let spec = launch.spec.clone();
        let (process, pipes) =
            tokio::task::spawn_blocking(move || janua_confine::server::start(spec))
                .await
                .map_err(StartError::Task)?
                .map_err(StartError::Confine)?;
        let live = Arc::new(wire(process, pipes, &self.name, &launch.workspace)?);
        let deadline = Instant::now() + launch.startup_timeout;
        let initialized = live
            .request(
                "initialize",
                &json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"roots": {"listChanged": false}},
                    "clientInfo": {"name": "janua", "version": env!("CARGO_PKG_VERSION")},
                }),
                deadline,
                &AtomicBool::new(false),
            )
            .await;
        match initialized {
            Ok(answer) => {
                let version = answer["protocolVersion"].as_str().unwrap_or_default();
                if !SERVER_VERSIONS.contains(&version) {
                    live.kill();
                    return Err(StartError::Revision(version.to_owned()));
                }
                live.notify("notifications/initialized");
                Ok(live)
            }
            Err(error) => {
                live.kill();
                Err(StartError::Initialize(error.message))
            }
        }
    }

    /// Stops the server (the session ends).
    pub async fn stop(&self) {
        if let Link::Stdio { state, .. } = &self.link
            && let State::Up(live) = &*state.lock().await
        {
            live.kill();
        }
    }
}

/// Resolves when `cancel` is set or `deadline` passes, with the matching error.
pub(crate) async fn stopped(cancel: &AtomicBool, deadline: Instant) -> RequestError {
    loop {
        if cancel.load(Ordering::Relaxed) {
            return RequestError::new(ErrorKind::Cancelled, "the call was cancelled");
        }
        let now = Instant::now();
        if now >= deadline {
            return RequestError::new(
                ErrorKind::Timeout,
                "the server did not start within the call's timeout",
            );
        }
        tokio::time::sleep(POLL.min(deadline - now)).await;
    }
}

/// The wait before the next start after `failures` crashes or failed starts: none after the
/// first, then 1, 2, 4 ... up to 30 s.
fn backoff(failures: u32) -> Duration {
    if failures <= 1 {
        return Duration::ZERO;
    }
    Duration::from_secs(1u64 << (failures - 2).min(5)).min(MAX_BACKOFF)
}

/// The reader, writer and stderr threads of a started process.
fn wire(
    process: ServerProcess,
    pipes: Pipes,
    name: &str,
    workspace: &std::path::Path,
) -> Result<Live, StartError> {
    let Pipes {
        stdin,
        stdout,
        stderr: stderr_pipe,
    } = pipes;
    let (writer, lines) = mpsc::sync_channel::<String>(MAX_QUEUED_LINES);
    let pending: Arc<Mutex<HashMap<u64, tokio::sync::oneshot::Sender<Answer>>>> = Arc::default();
    let alive = Arc::new(AtomicBool::new(true));
    let stderr: Arc<Mutex<VecDeque<u8>>> = Arc::default();
    let thread = |role: &str| std::thread::Builder::new().name(format!("janua-mcp-{role}"));
    {
        let alive = Arc::clone(&alive);
        let mut stdin = stdin;
        thread("write")
            .spawn(move || {
                for line in lines {
                    let written = stdin
                        .write_all(line.as_bytes())
                        .and_then(|()| stdin.write_all(b"\n"))
                        .and_then(|()| stdin.flush());
                    if written.is_err() {
                        alive.store(false, Ordering::SeqCst);
                        break;
                    }
                }
            })
            .map_err(StartError::Thread)?;
    }
    {
        let stderr = Arc::clone(&stderr);
        let mut pipe = stderr_pipe;
        thread("stderr")
            .spawn(move || {
                let mut buffer = [0u8; 4096];
                while let Ok(read @ 1..) = pipe.read(&mut buffer) {
                    let mut tail = stderr.lock().unwrap_or_else(|poison| poison.into_inner());
                    tail.extend(&buffer[..read]);
                    let excess = tail.len().saturating_sub(STDERR_TAIL);
                    tail.drain(..excess);
                }
            })
            .map_err(StartError::Thread)?;
    }
    {
        let pending = Arc::clone(&pending);
        let alive = Arc::clone(&alive);
        let writer = writer.clone();
        let name = name.to_owned();
        let roots = json!({"roots": [{
            "uri": url::Url::from_directory_path(workspace).map(String::from).unwrap_or_default(),
            "name": "workspace",
        }]});
        thread("read")
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut line = Vec::new();
                loop {
                    match jsonrpc::read_line(&mut reader, &mut line, MAX_LINE) {
                        Ok(jsonrpc::Line::Complete) => {}
                        Ok(jsonrpc::Line::End) | Err(_) => break,
                        Ok(jsonrpc::Line::TooLong) => {
                            tracing::warn!("MCP server {name} sent a line over {MAX_LINE} bytes");
                            break;
                        }
                    }
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match jsonrpc::parse(&line) {
                        Ok(Incoming::Response { id, outcome }) => {
                            let sender = id.as_u64().and_then(|id| {
                                pending
                                    .lock()
                                    .unwrap_or_else(|poison| poison.into_inner())
                                    .remove(&id)
                            });
                            if let Some(sender) = sender {
                                let _ = sender.send(outcome);
                            }
                        }
                        Ok(Incoming::Request { id, method, .. }) => {
                            let reply = match method.as_str() {
                                "ping" => jsonrpc::response(&id, &json!({})),
                                "roots/list" => jsonrpc::response(&id, &roots),
                                _ => jsonrpc::error_response(
                                    &id,
                                    code::METHOD_NOT_FOUND,
                                    &format!("janua does not offer {method} to MCP servers"),
                                ),
                            };
                            // A server flooding requests without reading the answers fills
                            // the queue; the connection then ends.
                            if writer.try_send(reply).is_err() {
                                break;
                            }
                        }
                        Ok(Incoming::Notification { method, .. }) => {
                            tracing::debug!("MCP server {name} sent {method}");
                        }
                        Err(bad) => {
                            tracing::debug!("MCP server {name} sent a bad line: {}", bad.message);
                        }
                    }
                }
                alive.store(false, Ordering::SeqCst);
                // Every waiting request learns at once that no answer will come.
                pending
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .clear();
            })
            .map_err(StartError::Thread)?;
    }
    Ok(Live {
        writer,
        pending,
        next_id: AtomicU64::new(1),
        alive,
        stderr,
        process: Arc::new(Mutex::new(process)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_a_ceiling() {
        let waits: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [0, 1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
