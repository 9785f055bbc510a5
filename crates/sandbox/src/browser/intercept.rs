//! Every request a page makes, answered by the host: the page's `Fetch` domain pauses each one
//! (navigations, redirects, frames, subresources, `file://` loads) before the browser would send
//! it, and this loop decides. `http`/`https` go through the same policy and sender as `wasi:http`
//! (`http.rs`: net grants, permission rules, private ranges) and the host hands the
//! response back; `file://` inside the workspace is left to the browser (Landlock lets it read
//! only system directories and the workspace); `data:`, `blob:` and `about:` stay in the browser;
//! everything else is refused. A request the loop never sees has no way out either: the browser
//! has no network of its own (`launch.rs`).
//!
//! The loop also keeps what waiting needs: the main frame's load state, requests in flight, and
//! what was refused.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use base64::Engine as _;
use bytes::Bytes;
use serde_json::{Value, json};

use super::cdp::{Connection, Event};
use crate::HiddenPaths;
use crate::http::{DEFAULT_MAX_RESPONSE_BYTES, FetchError, NetPolicy, NetRefused};

/// Requests of one page the host fetches at once; the others wait their turn, so a page cannot
/// hold more than this many response bodies in the host's memory.
const MAX_CONCURRENT_FETCHES: usize = 8;
/// Requests one page may make; later ones are refused (a page looping on requests).
const MAX_REQUESTS_PER_PAGE: u32 = 2000;
/// Longest wait for the page's cookies for one request.
const COOKIE_LOOKUP: std::time::Duration = std::time::Duration::from_secs(2);
/// Refusals kept per page.
const MAX_REFUSALS: usize = 16;
/// Request headers the host sets itself or never forwards.
const DROPPED_REQUEST_HEADERS: &[&str] = &[
    "host",
    "connection",
    "content-length",
    "accept-encoding",
    "proxy-authorization",
    "proxy-connection",
    "keep-alive",
    "transfer-encoding",
    "upgrade",
];
/// Response headers that describe the host's connection, not the response.
const DROPPED_RESPONSE_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "proxy-connection",
];

/// Where one request goes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// Fetched by the host under the net policy.
    Network(http::Uri),
    /// A workspace file, read by the host (its real path).
    File(PathBuf),
    /// Left to the browser: `data:`, `blob:`, `about:blank`, `about:srcdoc`.
    Browser,
    /// Refused, with the reason.
    Refuse(String),
}

/// What `file://` may show: files under `roots` (canonical) that the session's Read deny rules
/// do not hide.
#[derive(Clone, Default)]
pub(super) struct FileScope {
    pub(super) roots: Vec<PathBuf>,
    pub(super) hidden: Option<HiddenPaths>,
}

/// Why a `file://` page is not shown; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
enum FileRefused {
    #[error(
        "{} is outside the workspace (file:// pages may only show workspace files), or does not exist",
        .0.display()
    )]
    Outside(PathBuf),
    #[error("{} is hidden by a Read deny rule", .0.display())]
    Hidden(PathBuf),
    #[error("{} changed while it was opened", .0.display())]
    Changed(PathBuf),
    #[error("{} is not a regular file (directories are not listed)", .0.display())]
    NotAFile(PathBuf),
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The read's blocking task panicked or was cancelled.
    #[error("{0}")]
    Stopped(#[from] tokio::task::JoinError),
}

impl FileScope {
    /// The real path of `path` when it may be shown.
    fn admit(&self, path: &Path) -> Result<PathBuf, FileRefused> {
        let outside = || FileRefused::Outside(path.to_owned());
        let real = std::fs::canonicalize(path).map_err(|_| outside())?;
        if !self.roots.iter().any(|root| real.starts_with(root)) {
            return Err(outside());
        }
        if let Some(hidden) = &self.hidden
            && (hidden(path) || hidden(&real))
        {
            return Err(FileRefused::Hidden(path.to_owned()));
        }
        Ok(real)
    }
}

/// Decides `url`'s route.
pub(super) fn route(url: &str, files: &FileScope) -> Route {
    let Ok(parsed) = url::Url::parse(url) else {
        return Route::Refuse(format!("{url:?} is not a valid URL"));
    };
    match parsed.scheme() {
        "http" | "https" => {
            let mut without_fragment = parsed.clone();
            without_fragment.set_fragment(None);
            match without_fragment.as_str().parse::<http::Uri>() {
                Ok(uri) => Route::Network(uri),
                Err(error) => Route::Refuse(format!("{url:?} is not a valid request URL: {error}")),
            }
        }
        "file" => match parsed.to_file_path() {
            Ok(path) => match files.admit(&path) {
                Ok(real) => Route::File(real),
                Err(reason) => Route::Refuse(reason.to_string()),
            },
            Err(()) => Route::Refuse(format!("{url:?} names no local file")),
        },
        "data" | "blob" => Route::Browser,
        // Other `about:` pages are the browser's own (`about:version` is `chrome://version`).
        "about" if matches!(parsed.path(), "blank" | "srcdoc") => Route::Browser,
        other => Route::Refuse(format!(
            "the URL {url:?} (scheme {other:?}) is not allowed in the browser"
        )),
    }
}

/// Reads the workspace file at `real` (from [`FileScope::admit`]) for the page: it must still be
/// that regular file once open (a link swapped in since the check is refused), at most
/// `cap` bytes.
fn read_file(real: &Path, cap: u64) -> Result<(Vec<u8>, &'static str), FileRefused> {
    use std::io::Read as _;
    use std::os::fd::AsRawFd as _;
    let io = |error| FileRefused::Io {
        path: real.to_owned(),
        error,
    };
    let file = std::fs::File::open(real).map_err(io)?;
    let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(io)?;
    if opened != real {
        return Err(FileRefused::Changed(real.to_owned()));
    }
    let metadata = file.metadata().map_err(io)?;
    if !metadata.is_file() {
        return Err(FileRefused::NotAFile(real.to_owned()));
    }
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes).map_err(io)?;
    Ok((bytes, media_type(real)))
}

/// The media type a file's extension stands for; what a browser needs to render it.
fn media_type(path: &Path) -> &'static str {
    let extension = path
        .extension()
        .map(|extension| extension.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "wasm" => "application/wasm",
        "txt" | "md" | "csv" | "log" => "text/plain; charset=utf-8",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// What the page's waits and the call's report read.
#[derive(Debug)]
pub(super) struct Status {
    /// The main frame fired its load event since its last navigation started.
    pub(super) loaded: bool,
    /// Requests paused and not yet answered.
    pub(super) in_flight: usize,
    /// When a request last started or ended.
    pub(super) last_activity: Instant,
    /// Refused requests, `URL: reason` (the first few).
    pub(super) refused: Vec<String>,
    /// Why the main document of the latest navigation was refused, if it was.
    pub(super) main_refusal: Option<String>,
    /// The latest main document's HTTP status.
    pub(super) main_status: Option<u16>,
    /// A request ran out of time.
    pub(super) timed_out: bool,
    /// The page's renderer crashed.
    pub(super) crashed: bool,
    requests: u32,
}

/// [`Status`] with a condition variable for the waits.
pub(super) struct PageStatus {
    status: Mutex<Status>,
    changed: Condvar,
}

impl PageStatus {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self {
            status: Mutex::new(Status {
                loaded: true,
                in_flight: 0,
                last_activity: Instant::now(),
                refused: Vec::new(),
                main_refusal: None,
                main_status: None,
                timed_out: false,
                crashed: false,
                requests: 0,
            }),
            changed: Condvar::new(),
        })
    }

    /// The status now.
    pub(super) fn lock(&self) -> MutexGuard<'_, Status> {
        self.status
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Changes the status and wakes the waits.
    fn update(&self, change: impl FnOnce(&mut Status)) {
        change(&mut self.lock());
        self.changed.notify_all();
    }

    /// Waits until `done` holds, `until` passes, or `stop` says to give up (checked every 50 ms).
    /// True when `done` held.
    pub(super) fn wait_until(
        &self,
        until: Instant,
        stop: &dyn Fn() -> bool,
        done: &dyn Fn(&Status) -> bool,
    ) -> bool {
        let mut status = self.lock();
        loop {
            if done(&status) {
                return true;
            }
            let now = Instant::now();
            if now >= until || stop() {
                return false;
            }
            let slice = (until - now).min(std::time::Duration::from_millis(50));
            status = self
                .changed
                .wait_timeout(status, slice)
                .unwrap_or_else(|poison| poison.into_inner())
                .0;
        }
    }

    fn refuse(&self, url: &str, reason: &str, main: bool) {
        tracing::info!(target: "janua::browser", "request refused: {url}: {reason}");
        self.update(|status| {
            if status.refused.len() < MAX_REFUSALS {
                status.refused.push(format!("{url}: {reason}"));
            }
            if main {
                status.main_refusal = Some(reason.to_owned());
            }
        });
    }
}

/// What the loop needs to answer a page's requests.
pub(super) struct Interceptor {
    pub(super) connection: Arc<Connection>,
    /// The page's protocol session.
    pub(super) session: String,
    /// The page's target id, which is also its main frame's id.
    pub(super) main_frame: String,
    pub(super) status: Arc<PageStatus>,
    /// `None`: the component has no net grant and every network request is refused.
    pub(super) policy: Option<Arc<NetPolicy>>,
    /// What `file://` may show.
    pub(super) files: FileScope,
    /// The call's deadline: no request outlives it.
    pub(super) deadline: Instant,
    /// Protocol sessions of the page's own targets (workers, popups) attached so far, for the
    /// page to forget when it closes.
    pub(super) children: Arc<Mutex<Vec<String>>>,
}

/// The request interception every target of a page gets before it may run: every request
/// paused at the request stage.
pub(super) fn interception() -> Value {
    json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]})
}

/// What every target of a page attaches its own targets with: paused until interception is on.
pub(super) fn auto_attach() -> Value {
    json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
}

impl Interceptor {
    /// A permit to fetch, shared by the page's requests.
    fn fetch_permits() -> Arc<tokio::sync::Semaphore> {
        Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_FETCHES))
    }
}

impl Interceptor {
    /// Answers the page's events until the page is closed (the task is aborted then, and every
    /// request still being fetched with it).
    pub(super) async fn run(self, mut events: tokio::sync::mpsc::UnboundedReceiver<Event>) {
        let this = Arc::new(self);
        let permits = Self::fetch_permits();
        let mut requests = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { break };
                    Arc::clone(&this).on_event(event, &mut requests, &permits);
                }
                Some(_) = requests.join_next(), if !requests.is_empty() => {}
            }
        }
        // The browser went away; the requests it paused have nobody to answer.
        requests.abort_all();
    }

    fn on_event(
        self: Arc<Self>,
        event: Event,
        requests: &mut tokio::task::JoinSet<()>,
        permits: &Arc<tokio::sync::Semaphore>,
    ) {
        tracing::trace!(target: "janua::browser", "event {}", event.method);
        let frame = event.params.get("frameId").and_then(Value::as_str);
        match event.method.as_str() {
            "Fetch.requestPaused" => {
                self.status.update(|status| {
                    status.in_flight += 1;
                    status.requests = status.requests.saturating_add(1);
                    status.last_activity = Instant::now();
                });
                let permits = Arc::clone(permits);
                requests.spawn(async move {
                    self.answer(event.params, &permits).await;
                    self.status.update(|status| {
                        status.in_flight = status.in_flight.saturating_sub(1);
                        status.last_activity = Instant::now();
                    });
                });
            }
            "Page.frameStartedLoading" if frame == Some(self.main_frame.as_str()) => {
                self.status.update(|status| status.loaded = false);
            }
            "Page.loadEventFired" => self.status.update(|status| status.loaded = true),
            "Inspector.targetCrashed" => self.status.update(|status| status.crashed = true),
            // A worker or popup of the page: it waits (`waitForDebuggerOnStart`) until its own
            // requests are intercepted like the page's, then runs.
            "Target.attachedToTarget" => {
                let Some(child) = event.params.get("sessionId").and_then(Value::as_str) else {
                    return;
                };
                let child = child.to_owned();
                self.children
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .push(child.clone());
                let events = self.connection.listen(&child);
                let interceptor = Interceptor {
                    connection: Arc::clone(&self.connection),
                    session: child.clone(),
                    main_frame: self.main_frame.clone(),
                    status: Arc::clone(&self.status),
                    policy: self.policy.clone(),
                    files: self.files.clone(),
                    deadline: self.deadline,
                    children: Arc::clone(&self.children),
                };
                requests.spawn(async move {
                    let connection = Arc::clone(&interceptor.connection);
                    let session = child.clone();
                    let started = tokio::task::spawn_blocking(move || {
                        let _ = connection.send(Some(&session), "Fetch.enable", interception());
                        let _ =
                            connection.send(Some(&session), "Target.setAutoAttach", auto_attach());
                        connection.send(
                            Some(&session),
                            "Runtime.runIfWaitingForDebugger",
                            json!({}),
                        )
                    })
                    .await;
                    if matches!(started, Ok(Ok(()))) {
                        Box::pin(interceptor.run(events)).await;
                    }
                });
            }
            // A dialog would stop the page until someone answers it; nobody will.
            "Page.javascriptDialogOpening" => {
                let _ = self.connection.send(
                    Some(&self.session),
                    "Page.handleJavaScriptDialog",
                    json!({"accept": false}),
                );
            }
            _ => {}
        }
    }

    /// Answers one paused request.
    async fn answer(&self, params: Value, permits: &tokio::sync::Semaphore) {
        let Some(id) = params.get("requestId").and_then(Value::as_str) else {
            return;
        };
        let request = params.get("request").cloned().unwrap_or(Value::Null);
        let url = request.get("url").and_then(Value::as_str).unwrap_or("");
        let main = params.get("resourceType").and_then(Value::as_str) == Some("Document")
            && params.get("frameId").and_then(Value::as_str) == Some(self.main_frame.as_str());
        let over_budget = self.status.lock().requests > MAX_REQUESTS_PER_PAGE;
        let route = if over_budget {
            Route::Refuse(format!(
                "a page may make at most {MAX_REQUESTS_PER_PAGE} requests"
            ))
        } else {
            route(url, &self.files)
        };
        let (method, reply) = match route {
            Route::Browser => ("Fetch.continueRequest", json!({"requestId": id})),
            Route::File(real) => {
                let cap = self
                    .policy
                    .as_ref()
                    .map_or(DEFAULT_MAX_RESPONSE_BYTES, |policy| {
                        policy.settings.max_response_bytes
                    });
                let read = tokio::task::spawn_blocking(move || read_file(&real, cap))
                    .await
                    .unwrap_or_else(|error| Err(error.into()));
                match read {
                    Ok((body, media_type)) => (
                        "Fetch.fulfillRequest",
                        json!({
                            "requestId": id,
                            "responseCode": 200,
                            "responseHeaders": [{"name": "Content-Type", "value": media_type}],
                            "body": base64::engine::general_purpose::STANDARD.encode(&body),
                        }),
                    ),
                    Err(reason) => {
                        self.status.refuse(url, &reason.to_string(), main);
                        (
                            "Fetch.failRequest",
                            json!({"requestId": id, "errorReason": "AccessDenied"}),
                        )
                    }
                }
            }
            Route::Refuse(reason) => {
                self.status.refuse(url, &reason, main);
                (
                    "Fetch.failRequest",
                    json!({"requestId": id, "errorReason": "BlockedByClient"}),
                )
            }
            Route::Network(uri) => match self.fetch_in_turn(uri, &request, id, permits).await {
                Ok(fetched) => {
                    if main {
                        self.status.update(|status| {
                            status.main_status = Some(fetched.status);
                            status.main_refusal = None;
                        });
                    }
                    let headers: Vec<Value> = fetched
                        .headers
                        .iter()
                        .filter(|(name, _)| {
                            !DROPPED_RESPONSE_HEADERS.contains(&name.to_ascii_lowercase().as_str())
                        })
                        .map(|(name, value)| json!({"name": name, "value": value}))
                        .collect();
                    (
                        "Fetch.fulfillRequest",
                        json!({
                            "requestId": id,
                            "responseCode": fetched.status,
                            "responseHeaders": headers,
                            "body": base64::engine::general_purpose::STANDARD.encode(&fetched.body),
                        }),
                    )
                }
                Err(FetchError::Refused(reason)) => {
                    self.status.refuse(url, &reason.to_string(), main);
                    (
                        "Fetch.failRequest",
                        json!({"requestId": id, "errorReason": "BlockedByClient"}),
                    )
                }
                Err(FetchError::TimedOut) => {
                    self.status.update(|status| status.timed_out = true);
                    (
                        "Fetch.failRequest",
                        json!({"requestId": id, "errorReason": "TimedOut"}),
                    )
                }
                Err(FetchError::Failed(reason)) => {
                    tracing::debug!(target: "janua::browser", "request failed: {url}: {reason}");
                    (
                        "Fetch.failRequest",
                        json!({"requestId": id, "errorReason": "Failed"}),
                    )
                }
            },
        };
        // A fulfilled body can be megabytes: the pipe write must not hold an async worker.
        let connection = Arc::clone(&self.connection);
        let session = self.session.clone();
        let _ = tokio::task::spawn_blocking(move || connection.send(Some(&session), method, reply))
            .await;
    }

    /// [`Interceptor::fetch`] once a permit is free, with the body the browser did not inline.
    async fn fetch_in_turn(
        &self,
        uri: http::Uri,
        request: &Value,
        id: &str,
        permits: &tokio::sync::Semaphore,
    ) -> Result<crate::http::Fetched, FetchError> {
        let _permit = permits
            .acquire()
            .await
            .map_err(|_| FetchError::Failed("the page is closing".to_owned()))?;
        let mut request = request.clone();
        let inlined = request.get("postData").is_some() || request.get("postDataEntries").is_some();
        if request.get("hasPostData").and_then(Value::as_bool) == Some(true) && !inlined {
            // Long bodies are left out of the event; the browser hands them over on request.
            if let Some(body) = self.post_data(id).await {
                request["postDataEntries"] = json!([{"bytes": body}]);
            }
        }
        self.fetch(uri, &request).await
    }

    /// The body of paused request `id`, from the browser, base64-encoded.
    async fn post_data(&self, id: &str) -> Option<String> {
        let connection = Arc::clone(&self.connection);
        let session = self.session.clone();
        let params = json!({"requestId": id});
        let until = self.deadline;
        let answer = tokio::task::spawn_blocking(move || {
            connection.call(Some(&session), "Fetch.getRequestPostData", params, until)
        })
        .await
        .ok()?
        .ok()?;
        let body = answer.get("postData")?.as_str()?;
        if answer.get("base64Encoded").and_then(Value::as_bool) == Some(true) {
            Some(body.to_owned())
        } else {
            Some(base64::engine::general_purpose::STANDARD.encode(body))
        }
    }

    /// Sends the page's request through the net policy.
    async fn fetch(
        &self,
        uri: http::Uri,
        request: &Value,
    ) -> Result<crate::http::Fetched, FetchError> {
        let Some(policy) = &self.policy else {
            return Err(FetchError::Refused(NetRefused::NoBrowserGrant));
        };
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("GET");
        let mut builder = http::Request::builder().method(method).uri(uri.clone());
        if let Some(headers) = request.get("headers").and_then(Value::as_object) {
            for (name, value) in headers {
                let lower = name.to_ascii_lowercase();
                if DROPPED_REQUEST_HEADERS.contains(&lower.as_str()) {
                    continue;
                }
                if let Some(value) = value.as_str() {
                    builder = builder.header(name.as_str(), value);
                }
            }
        }
        if let Some(authority) = uri.authority() {
            builder = builder.header(http::header::HOST, authority.as_str());
        }
        if let Some(cookies) = self.cookies(&uri.to_string()).await {
            builder = builder.header(http::header::COOKIE, cookies);
        }
        builder = builder.header(http::header::ACCEPT_ENCODING, "identity");
        let request = builder
            .body(request_body(request))
            .map_err(|error| FetchError::Failed(format!("the request is not valid: {error}")))?;
        crate::http::fetch(Arc::clone(policy), request, self.deadline).await
    }
}

impl Interceptor {
    /// The `Cookie` header the browser would send to `url`: a paused request does not carry its
    /// cookies yet (the network stack adds them later), so the host asks the page's cookie jar.
    async fn cookies(&self, url: &str) -> Option<String> {
        let connection = Arc::clone(&self.connection);
        let session = self.session.clone();
        let params = json!({"urls": [url]});
        let until = Instant::now() + COOKIE_LOOKUP;
        let answer = tokio::task::spawn_blocking(move || {
            connection.call(Some(&session), "Network.getCookies", params, until)
        })
        .await
        .ok()?
        .ok()?;
        let pairs: Vec<String> = answer
            .get("cookies")?
            .as_array()?
            .iter()
            .filter_map(|cookie| {
                Some(format!(
                    "{}={}",
                    cookie.get("name")?.as_str()?,
                    cookie.get("value")?.as_str()?
                ))
            })
            .collect();
        (!pairs.is_empty()).then(|| pairs.join("; "))
    }
}

/// The body of a paused request: its `postDataEntries` (base64), or its `postData` text.
fn request_body(request: &Value) -> Bytes {
    if let Some(entries) = request.get("postDataEntries").and_then(Value::as_array) {
        let mut body = Vec::new();
        for entry in entries {
            if let Some(bytes) = entry.get("bytes").and_then(Value::as_str)
                && let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(bytes)
            {
                body.extend(decoded);
            }
        }
        return Bytes::from(body);
    }
    request
        .get("postData")
        .and_then(Value::as_str)
        .map(|text| Bytes::from(text.to_owned()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_follow_the_scheme_and_the_workspace() {
        let workspace = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(workspace.path()).unwrap();
        std::fs::write(root.join("page.html"), "<p>hi</p>").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.html"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.html"), root.join("link.html"))
            .unwrap();
        std::fs::write(root.join(".env"), "TOKEN=1").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let hidden_file = root.join(".env");
        let files = FileScope {
            roots: vec![root.clone()],
            hidden: Some(Arc::new(move |path: &Path| path == hidden_file)),
        };
        let file = |path: &Path| format!("file://{}", path.display());
        let cases: Vec<(String, &str)> = vec![
            ("https://example.com/a#frag".to_owned(), "network"),
            ("http://127.0.0.1:8080/".to_owned(), "network"),
            (file(&root.join("page.html")), "file"),
            (file(&root.join("sub")), "file"),
            (file(&root.join(".env")), "refuse"),
            (file(&root.join("link.html")), "refuse"),
            (file(&outside.path().join("secret.html")), "refuse"),
            (file(&root.join("missing.html")), "refuse"),
            ("file:///etc/passwd".to_owned(), "refuse"),
            ("data:text/html,<p>x</p>".to_owned(), "browser"),
            ("about:blank".to_owned(), "browser"),
            ("about:srcdoc".to_owned(), "browser"),
            ("about:version".to_owned(), "refuse"),
            ("ws://example.com/".to_owned(), "refuse"),
            ("ftp://example.com/".to_owned(), "refuse"),
            ("chrome://settings".to_owned(), "refuse"),
            ("view-source:http://example.com/".to_owned(), "refuse"),
            ("javascript:alert(1)".to_owned(), "refuse"),
            ("not a url".to_owned(), "refuse"),
        ];
        for (url, expected) in cases {
            let got = match route(&url, &files) {
                Route::Network(uri) => {
                    assert!(!uri.to_string().contains('#'), "{uri}");
                    "network"
                }
                Route::File(real) => {
                    assert!(real.starts_with(&root), "{}", real.display());
                    "file"
                }
                Route::Browser => "browser",
                Route::Refuse(_) => "refuse",
            };
            assert_eq!(got, expected, "{url}");
        }
        // The host reads what it admitted: a regular file, never a directory.
        let (body, media_type) = read_file(&root.join("page.html"), 1 << 20).unwrap();
        assert_eq!(
            (body.as_slice(), media_type),
            (&b"<p>hi</p>"[..], "text/html; charset=utf-8")
        );
        assert_eq!(read_file(&root.join("page.html"), 3).unwrap().0, b"<p>");
        let error = read_file(&root.join("sub"), 1 << 20).unwrap_err();
        assert!(matches!(error, FileRefused::NotAFile(_)), "{error}");
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }

    #[test]
    fn post_bodies_come_from_entries_or_text() {
        let entries = json!({"postDataEntries": [{"bytes": "YWI="}, {"bytes": "Yw=="}]});
        assert_eq!(request_body(&entries), Bytes::from_static(b"abc"));
        let text = json!({"postData": "x=1"});
        assert_eq!(request_body(&text), Bytes::from_static(b"x=1"));
        assert!(request_body(&json!({})).is_empty());
    }
}
