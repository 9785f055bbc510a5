//! `janua hook serve`: Claude Code's `http` hook type answered by a warm process on loopback.
//!
//! Claude Code treats a non-2xx answer, a refused connection and a timeout as "no decision", so
//! everything janua can say, a block included, goes out as `200` with Claude Code's hook JSON;
//! only a request without the bearer token is refused (`401`), since it is not Claude Code's.
//! Connections are held and dropped by `protocol/loopback.rs`.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};

use super::{ClaudeHookOptions, respond_to_claude_hook};
use crate::RuntimeConfig;

/// The largest event accepted: Claude Code's tool inputs are far smaller.
const MAX_EVENT_BYTES: usize = 4 << 20;

/// Why `janua hook serve` did not start.
#[derive(Debug, thiserror::Error)]
pub enum HookServeError {
    /// Only loopback addresses are served.
    #[error("{0} is not a loopback address; janua hook serve listens on 127.0.0.1 or [::1] only")]
    NotLoopback(SocketAddr),
    /// The bearer token is missing or too short.
    #[error("the bearer token must be at least 16 characters (set it in JANUA_HOOK_TOKEN)")]
    WeakToken,
    /// The address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// A bound `janua hook serve` listener, before it serves.
pub struct ClaudeHookServer {
    listener: tokio::net::TcpListener,
    token: String,
}

impl ClaudeHookServer {
    /// Binds `address` (loopback only) for requests bearing `token`.
    pub async fn bind(address: SocketAddr, token: String) -> Result<Self, HookServeError> {
        if !address.ip().is_loopback() {
            return Err(HookServeError::NotLoopback(address));
        }
        if token.chars().count() < 16 {
            return Err(HookServeError::WeakToken);
        }
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|source| HookServeError::Bind { address, source })?;
        Ok(Self { listener, token })
    }

    /// The address it listens on (the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Answers hook events until the task is dropped; each request is decided in a runtime made
    /// from `base` for the event's project, as `janua hook claude` decides.
    pub async fn serve(self, base: RuntimeConfig, mut options: ClaudeHookOptions) {
        // The process outlives sessions: each session's project is fixed at its first event.
        options
            .session_projects
            .get_or_insert_with(|| Arc::new(super::SessionProjects::default()));
        let shared = Arc::new((base, options));
        let handler = move |request| {
            let shared = Arc::clone(&shared);
            async move {
                let (base, options) = &*shared;
                answer(request, base, options).await
            }
        };
        crate::protocol::loopback::serve(
            self.listener,
            Arc::from(self.token),
            handler,
            std::future::pending(),
        )
        .await;
    }
}

/// Answers one request that bore the token (the connection layer checked it).
async fn answer(
    request: Request<hyper::body::Incoming>,
    base: &RuntimeConfig,
    options: &ClaudeHookOptions,
) -> Response<Full<Bytes>> {
    if request.method() != Method::POST {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "POST a Claude Code hook event",
        );
    }
    let text = match Limited::new(request.into_body(), MAX_EVENT_BYTES)
        .collect()
        .await
    {
        Ok(body) => String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        // Unreadable is not "no decision": a block, which only a 200 carries.
        Err(error) => format!("unreadable request body: {error}"),
    };
    let reply = respond_to_claude_hook(base, &text, options).await;
    for note in &reply.notes {
        tracing::info!("{note}");
    }
    if let Some(reason) = &reply.blocked {
        tracing::warn!("{reason}");
    }
    let body = reply
        .output
        .map_or_else(|| "{}".to_owned(), |output| output.to_string());
    let mut response = Response::new(Full::new(Bytes::from(body)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response
}
