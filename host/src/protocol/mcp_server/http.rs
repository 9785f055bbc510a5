//! `janua mcp serve --http ADDR`: the MCP server on a loopback port, Streamable HTTP with JSON
//! responses (every POST carries one message; a request is answered in the response body).
//!
//! Only loopback addresses are accepted; connections are held and dropped by
//! `protocol/loopback.rs`. Every request must carry the bearer token printed at start, a `Host` naming the bound loopback address (a DNS-rebinding page sends its own host
//! name) and, when present, an `Origin` on loopback. Without a stream back to the client janua
//! cannot send it requests, so permission questions are denied (or decided by rules and mode),
//! and progress notifications are not sent.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};

use super::{McpServeOptions, Peer, Reply, Server};
use crate::runtime::{Runtime, SessionEndReport};
use janua_mcp::jsonrpc::{self, Incoming};

/// Largest request body accepted.
const MAX_BODY: usize = 16 << 20;

/// Where and how the HTTP transport listens.
#[derive(Debug, Clone)]
pub struct HttpServe {
    /// A loopback address (`127.0.0.1:0` picks a free port).
    pub address: SocketAddr,
    /// The bearer token clients must send (`Authorization: Bearer <token>`).
    pub token: String,
}

/// Why the MCP HTTP transport cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum HttpServeError {
    /// The address is not a loopback address.
    #[error("{0} is not a loopback address: janua's MCP HTTP transport serves this machine only")]
    NotLoopback(SocketAddr),
    /// No randomness for the bearer token.
    #[error("cannot read /dev/urandom: {0}")]
    Randomness(std::io::Error),
    /// The address cannot be bound.
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The address asked for.
        address: SocketAddr,
        /// Why it cannot be bound.
        source: std::io::Error,
    },
}

impl HttpServe {
    /// A listener on `address` with a fresh random token; `Err` when the address is not loopback
    /// or no randomness is available.
    pub fn new(address: SocketAddr) -> Result<Self, HttpServeError> {
        if !address.ip().is_loopback() {
            return Err(HttpServeError::NotLoopback(address));
        }
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut random| std::io::Read::read_exact(&mut random, &mut bytes))
            .map_err(HttpServeError::Randomness)?;
        Ok(Self {
            address,
            token: janua_types::hex(&bytes),
        })
    }
}

/// Serves MCP over HTTP until `shutdown` resolves; `ready` receives the bound address first.
pub async fn serve_mcp_http(
    runtime: Runtime,
    options: McpServeOptions,
    http: HttpServe,
    ready: Box<dyn FnOnce(SocketAddr) + Send>,
    shutdown: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
) -> Result<SessionEndReport, HttpServeError> {
    let listen_error = |source| HttpServeError::Listen {
        address: http.address,
        source,
    };
    let listener = tokio::net::TcpListener::bind(http.address)
        .await
        .map_err(listen_error)?;
    let bound = listener.local_addr().map_err(listen_error)?;
    let peer = Arc::new(Peer::new(
        Box::new(std::io::sink()),
        options.elicitation_timeout,
        false,
    ));
    let (server, runtime) = Server::start(runtime, options, peer).await;
    ready(bound);
    let guard = Arc::new(Guard {
        token: http.token.clone(),
        hosts: loopback_names(bound),
    });
    let handler = {
        let server = Arc::clone(&server);
        move |request| {
            let server = Arc::clone(&server);
            let guard = Arc::clone(&guard);
            async move { answer(&server, &guard, request).await }
        }
    };
    crate::protocol::loopback::serve(listener, Arc::from(http.token), handler, shutdown).await;
    server.shut_down().await;
    Ok(runtime.end_session("other").await)
}

/// What every request must show.
struct Guard {
    token: String,
    /// `Host` values that name the bound address.
    hosts: Vec<String>,
}

/// The spellings of a loopback address a browser or client would put in `Host`.
fn loopback_names(bound: SocketAddr) -> Vec<String> {
    let port = bound.port();
    let mut names = vec![format!("localhost:{port}")];
    match bound {
        SocketAddr::V4(address) => names.push(format!("{}:{port}", address.ip())),
        SocketAddr::V6(address) => names.push(format!("[{}]:{port}", address.ip())),
    }
    names
}

impl Guard {
    /// `Err((status, reason))` when the request may not reach the server.
    fn check(&self, request: &Request<hyper::body::Incoming>) -> Result<(), (StatusCode, String)> {
        let text = |name: header::HeaderName| {
            request
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
        };
        let host = text(header::HOST).unwrap_or_default().to_ascii_lowercase();
        if !self.hosts.contains(&host) {
            return Err((
                StatusCode::FORBIDDEN,
                format!("Host {host:?} is not this server's loopback address"),
            ));
        }
        if let Some(origin) = text(header::ORIGIN) {
            let origin = origin.to_ascii_lowercase();
            let allowed = self
                .hosts
                .iter()
                .any(|host| origin == format!("http://{host}"));
            if !allowed {
                return Err((
                    StatusCode::FORBIDDEN,
                    format!("Origin {origin:?} may not use this server"),
                ));
            }
        }
        let presented = text(header::AUTHORIZATION)
            .and_then(|value| value.strip_prefix("Bearer "))
            .unwrap_or_default();
        if !same(presented.as_bytes(), self.token.as_bytes()) {
            return Err((
                StatusCode::UNAUTHORIZED,
                "a valid Authorization: Bearer token is required (janua printed it at start)"
                    .to_owned(),
            ));
        }
        Ok(())
    }
}

/// Compares in time independent of where the inputs differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain"),
    );
    response
}

async fn answer(
    server: &Arc<Server>,
    guard: &Guard,
    request: Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    if let Err((status, reason)) = guard.check(&request) {
        return plain(status, reason);
    }
    if request.uri().path() != "/mcp" {
        return plain(StatusCode::NOT_FOUND, "the MCP endpoint is /mcp".to_owned());
    }
    if request.method() != Method::POST {
        let mut response = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "POST one JSON-RPC message to /mcp; janua opens no event stream".to_owned(),
        );
        response
            .headers_mut()
            .insert(header::ALLOW, header::HeaderValue::from_static("POST"));
        return response;
    }
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("a message may have at most {MAX_BODY} bytes"),
            );
        }
    };
    let message = match jsonrpc::parse(&body) {
        Ok(message) => message,
        Err(bad) => {
            return json(
                StatusCode::BAD_REQUEST,
                jsonrpc::error_response(&bad.id, bad.code, &bad.message),
            );
        }
    };
    let is_request = matches!(message, Incoming::Request { .. });
    let (sender, answered) = tokio::sync::oneshot::channel::<String>();
    let sender = std::sync::Mutex::new(Some(sender));
    // Progress notifications would come first; without a stream only the response is kept.
    let reply: Reply = Arc::new(move |line: &str| {
        let is_response = serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|value| value.get("id").is_some() && value.get("method").is_none());
        if is_response
            && let Some(sender) = sender
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .take()
        {
            let _ = sender.send(line.to_owned());
        }
    });
    server.handle(message, &reply);
    drop(reply);
    if !is_request {
        return plain(StatusCode::ACCEPTED, String::new());
    }
    match answered.await {
        Ok(line) => json(StatusCode::OK, line),
        // A cancelled request gets no answer.
        Err(_) => plain(StatusCode::ACCEPTED, String::new()),
    }
}

fn json(status: StatusCode, line: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(line)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_served() {
        assert!(HttpServe::new("127.0.0.1:0".parse().unwrap()).is_ok());
        assert!(HttpServe::new("[::1]:0".parse().unwrap()).is_ok());
        assert!(HttpServe::new("0.0.0.0:80".parse().unwrap()).is_err());
        assert!(HttpServe::new("192.168.1.2:80".parse().unwrap()).is_err());
        let token = HttpServe::new("127.0.0.1:0".parse().unwrap())
            .unwrap()
            .token;
        assert_eq!(token.len(), 64);
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert!(!same(b"", b"a"));
    }
}
