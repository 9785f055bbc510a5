//! One Streamable HTTP MCP server: each message is a POST to the server's URL, answered with one
//! JSON message or an event stream that carries it. The session starts lazily with `initialize`
//! and starts again when the server forgets it (404 on a session id).
//!
//! Configured by the operator (or approved by them): the URL is not subject to the guests' URL
//! policy. Requests to a server never carry anything of the host but the configured headers.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

use super::connection::{RequestError, SERVER_VERSIONS, stopped};
use super::jsonrpc::{self, Incoming};
use janua_types::ErrorKind;

/// Largest response body or event read from a server.
const MAX_BODY: usize = 64 << 20;
const SESSION_HEADER: &str = "mcp-session-id";

trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// Where the server is and what every request carries.
pub struct HttpTarget {
    pub url: url::Url,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub startup_timeout: std::time::Duration,
    /// The TLS client configuration for an `https` URL.
    pub tls: crate::TlsConfig,
}

/// The session with one server.
pub(crate) struct HttpSession {
    target: HttpTarget,
    /// `Some` once `initialize` succeeded: the session id (if the server gave one) and the
    /// negotiated revision.
    session: tokio::sync::Mutex<Option<(Option<String>, String)>>,
    next_id: AtomicU64,
}

impl HttpSession {
    pub(crate) fn new(target: HttpTarget) -> Self {
        Self {
            target,
            session: tokio::sync::Mutex::new(None),
            next_id: AtomicU64::new(1),
        }
    }

    /// How long the server has to answer `initialize` and list its tools.
    pub(crate) fn startup_timeout(&self) -> std::time::Duration {
        self.target.startup_timeout
    }

    /// Sends a request (initializing the session first if needed, within the start-up timeout)
    /// and waits for its answer, `timeout` or `cancel`.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: &Value,
        timeout: std::time::Duration,
        cancel: &AtomicBool,
    ) -> Result<Value, RequestError> {
        for attempt in 0..2 {
            let (session_id, version) = self.session(cancel).await?;
            let deadline = Instant::now() + timeout;
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let body = jsonrpc::request(&json!(id), method, params);
            let sent = tokio::select! {
                sent = self.post(body, Some(id), session_id.as_deref(), Some(&version)) => sent,
                stopped = stopped(cancel, deadline) => {
                    let cancelled = jsonrpc::notification(
                        "notifications/cancelled",
                        &json!({"requestId": id, "reason": "cancelled"}),
                    );
                    let _ = self.post(cancelled, None, session_id.as_deref(), Some(&version)).await;
                    return Err(stopped);
                }
            };
            match sent {
                Err(Posted::SessionGone) if attempt == 0 && session_id.is_some() => {
                    *self.session.lock().await = None;
                }
                Err(Posted::SessionGone) => {
                    return Err(failed("the server ended the session"));
                }
                Err(Posted::Failed(message)) => return Err(failed(&message)),
                Ok((answer, _)) => return answer_of(answer, method),
            }
        }
        Err(failed("the server ended the session twice"))
    }

    /// The session, started with `initialize` when there is none.
    async fn session(&self, cancel: &AtomicBool) -> Result<(Option<String>, String), RequestError> {
        let mut session = self.session.lock().await;
        if let Some(session) = &*session {
            return Ok(session.clone());
        }
        let deadline = Instant::now() + self.target.startup_timeout;
        let body = jsonrpc::request(
            &json!(0),
            "initialize",
            &json!({
                "protocolVersion": SERVER_VERSIONS[1],
                "capabilities": {},
                "clientInfo": {"name": "janua", "version": env!("CARGO_PKG_VERSION")},
            }),
        );
        let sent = tokio::select! {
            sent = self.post(body, Some(0), None, None) => sent,
            stopped = stopped(cancel, deadline) => return Err(stopped),
        };
        let (answer, session_id) = match sent {
            Ok(sent) => sent,
            Err(Posted::SessionGone) => return Err(failed("initialize was refused (404)")),
            Err(Posted::Failed(message)) => return Err(failed(&message)),
        };
        let result = answer_of(answer, "initialize")?;
        let version = result["protocolVersion"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if !SERVER_VERSIONS.contains(&version.as_str()) {
            return Err(failed(&format!(
                "it speaks MCP revision {version:?}; janua speaks {}",
                SERVER_VERSIONS.join(", ")
            )));
        }
        let initialized = jsonrpc::notification("notifications/initialized", &json!({}));
        let _ = self
            .post(initialized, None, session_id.as_deref(), Some(&version))
            .await;
        *session = Some((session_id.clone(), version.clone()));
        Ok((session_id, version))
    }

    /// POSTs one message. For a request (`expect` = its id) the answer is the response message
    /// and the session id the server sent.
    async fn post(
        &self,
        body: String,
        expect: Option<u64>,
        session_id: Option<&str>,
        version: Option<&str>,
    ) -> Result<(Option<Value>, Option<String>), Posted> {
        let url = &self.target.url;
        let host = url
            .host_str()
            .ok_or_else(|| Posted::Failed("the URL has no host".to_owned()))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = url
            .port_or_known_default()
            .ok_or_else(|| Posted::Failed("the URL has no port".to_owned()))?;
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|error| Posted::Failed(format!("cannot connect to {url}: {error}")))?;
        let stream: Box<dyn Stream> = if url.scheme() == "https" {
            let config = (self.target.tls)()
                .map_err(|error| Posted::Failed(format!("TLS setup failed: {error}")))?;
            let name = tokio_rustls::rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|_| Posted::Failed(format!("{host} is not a TLS server name")))?;
            Box::new(
                tokio_rustls::TlsConnector::from(config)
                    .connect(name, tcp)
                    .await
                    .map_err(|error| Posted::Failed(format!("TLS with {url}: {error}")))?,
            )
        } else {
            Box::new(tcp)
        };
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|error| Posted::Failed(format!("HTTP with {url}: {error}")))?;
        let driver = tokio::spawn(connection);
        let path = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        let authority = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        };
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::HOST, authority)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
        for (name, value) in &self.target.headers {
            request = request.header(name, value);
        }
        if let Some(session_id) = session_id {
            request = request.header(SESSION_HEADER, session_id);
        }
        if let Some(version) = version {
            request = request.header("mcp-protocol-version", version);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|error| Posted::Failed(format!("a bad request: {error}")))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|error| Posted::Failed(format!("HTTP with {url}: {error}")))?;
        let status = response.status();
        let new_session = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
            .or_else(|| session_id.map(str::to_owned));
        let event_stream = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|kind| kind.starts_with("text/event-stream"));
        let mut body = response.into_body();
        let answered = if status == StatusCode::NOT_FOUND && session_id.is_some() {
            Err(Posted::SessionGone)
        } else if status == StatusCode::ACCEPTED || expect.is_none() {
            Ok((None, new_session))
        } else if !status.is_success() {
            let text = read_all(&mut body).await.unwrap_or_default();
            let text: String = String::from_utf8_lossy(&text).chars().take(300).collect();
            Err(Posted::Failed(format!("{url} answered {status}: {text}")))
        } else if event_stream {
            read_events(&mut body, expect)
                .await
                .map(|answer| (answer, new_session))
        } else {
            let text = read_all(&mut body)
                .await
                .map_err(|error| Posted::Failed(error.to_string()))?;
            Ok((Some(parse_answer(&text)?), new_session))
        };
        driver.abort();
        answered
    }
}

/// How a POST failed.
enum Posted {
    /// 404 for a session id: the server forgot the session.
    SessionGone,
    Failed(String),
}

fn failed(message: &str) -> RequestError {
    RequestError {
        kind: ErrorKind::ToolFailed,
        message: message.to_owned(),
    }
}

fn parse_answer(bytes: &[u8]) -> Result<Value, Posted> {
    serde_json::from_slice(bytes)
        .map_err(|error| Posted::Failed(format!("the server's answer is not JSON: {error}")))
}

/// A response message's result, or its error as a `RequestError`.
fn answer_of(answer: Option<Value>, method: &str) -> Result<Value, RequestError> {
    let answer = answer.ok_or_else(|| failed(&format!("the server sent no answer to {method}")))?;
    let line = answer.to_string();
    match jsonrpc::parse(line.as_bytes()) {
        Ok(Incoming::Response {
            outcome: Ok(result),
            ..
        }) => Ok(result),
        Ok(Incoming::Response {
            outcome: Err(error),
            ..
        }) => Err(failed(&format!(
            "the server refused {method}: {}",
            jsonrpc::error_text(&error)
        ))),
        _ => Err(failed(&format!(
            "the server's answer to {method} is not a response"
        ))),
    }
}

/// Why an answer's body was not read whole.
#[derive(Debug, thiserror::Error)]
enum BodyError {
    #[error("reading the answer: {0}")]
    Read(#[from] hyper::Error),
    #[error("the answer is over {MAX_BODY} bytes")]
    TooLarge,
}

async fn read_all(body: &mut hyper::body::Incoming) -> Result<Vec<u8>, BodyError> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_BODY {
                return Err(BodyError::TooLarge);
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// Reads server-sent events until the response to `expect` (other messages on the stream are
/// the server's notifications and requests, which janua does not take).
async fn read_events(
    body: &mut hyper::body::Incoming,
    expect: Option<u64>,
) -> Result<Option<Value>, Posted> {
    let mut pending = Vec::new();
    let mut data = String::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| Posted::Failed(format!("reading events: {error}")))?;
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        pending.extend_from_slice(&chunk);
        if pending.len() > MAX_BODY {
            return Err(Posted::Failed(format!("an event is over {MAX_BODY} bytes")));
        }
        while let Some(end) = pending.iter().position(|byte| *byte == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(value) = line.strip_prefix("data:") {
                data.push_str(value.strip_prefix(' ').unwrap_or(value));
                data.push('\n');
            } else if line.is_empty() && !data.is_empty() {
                let event = std::mem::take(&mut data);
                if let Ok(message) = serde_json::from_str::<Value>(&event)
                    && message.get("method").is_none()
                    && message.get("id").and_then(Value::as_u64) == expect
                {
                    return Ok(Some(message));
                }
            }
        }
    }
    Err(Posted::Failed(
        "the server's event stream ended without the answer".to_owned(),
    ))
}
