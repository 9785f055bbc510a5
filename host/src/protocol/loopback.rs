//! The connections of janua's loopback HTTP servers (`janua mcp serve --http`, `janua hook
//! serve`): who may hold one and for how long. It checks the bearer token and nothing about what
//! a request asks; each server answers its own requests.
//!
//! Every local process can reach a loopback port, and each idle connection costs the server a
//! file descriptor. So a connection that has not shown the token is cheap to drop: it must
//! present the token within [`TOKEN_DEADLINE`], at most [`UNAUTHENTICATED`] wait at once (at most
//! [`UNAUTHENTICATED_PER_PEER`] from one address) and, past that, the oldest waiting one is
//! closed for the newest, so a flood of idle connections cannot keep out a client that sends its
//! request as soon as it connects (only a flood of more than that many new connections in the
//! moment between its connect and its request could, which blocks the call rather than skip
//! janua). Connections that showed the token are capped too ([`AUTHENTICATED`], and per
//! address). An `accept` that fails (no file descriptor left) is retried after a pause that
//! doubles up to half a second, never in a busy loop.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use tokio::sync::Notify;

/// How long a connection may stay open without a request bearing the token.
pub(crate) const TOKEN_DEADLINE: Duration = Duration::from_secs(2);
/// Connections waiting to show the token, at most.
pub(crate) const UNAUTHENTICATED: usize = 64;
/// Of those, from one address.
pub(crate) const UNAUTHENTICATED_PER_PEER: usize = 48;
/// Connections that showed the token, at most (far below the usual 1,024 open files).
pub(crate) const AUTHENTICATED: usize = 256;
/// Of those, from one address.
pub(crate) const AUTHENTICATED_PER_PEER: usize = 192;
/// The longest pause after a failed `accept`.
const LONGEST_ACCEPT_PAUSE: Duration = Duration::from_millis(500);

/// One connection's standing.
struct Connection {
    id: u64,
    peer: IpAddr,
    authenticated: AtomicBool,
    /// Closed for a newer connection, or at the deadline.
    closed: Notify,
}

/// Every open connection's standing.
#[derive(Default)]
struct Registry {
    next_id: u64,
    waiting: VecDeque<Arc<Connection>>,
    authenticated: usize,
    authenticated_by_peer: HashMap<IpAddr, usize>,
}

impl Registry {
    /// Registers a new connection from `peer`, closing the oldest waiting one (from the same
    /// address first) when the caps are reached.
    fn admit(&mut self, peer: IpAddr) -> Arc<Connection> {
        let from_peer = self.waiting.iter().filter(|c| c.peer == peer).count();
        let evict = if from_peer >= UNAUTHENTICATED_PER_PEER {
            self.waiting.iter().position(|c| c.peer == peer)
        } else if self.waiting.len() >= UNAUTHENTICATED {
            Some(0)
        } else {
            None
        };
        if let Some(evicted) = evict.and_then(|index| self.waiting.remove(index)) {
            evicted.closed.notify_one();
        }
        self.next_id += 1;
        let connection = Arc::new(Connection {
            id: self.next_id,
            peer,
            authenticated: AtomicBool::new(false),
            closed: Notify::new(),
        });
        self.waiting.push_back(Arc::clone(&connection));
        connection
    }

    /// Moves `connection` from waiting to authenticated; false when the caps are full.
    fn authenticate(&mut self, connection: &Connection) -> bool {
        if connection.authenticated.load(Ordering::SeqCst) {
            return true;
        }
        let from_peer = self
            .authenticated_by_peer
            .get(&connection.peer)
            .copied()
            .unwrap_or(0);
        if self.authenticated >= AUTHENTICATED || from_peer >= AUTHENTICATED_PER_PEER {
            return false;
        }
        self.waiting.retain(|waiting| waiting.id != connection.id);
        self.authenticated += 1;
        *self
            .authenticated_by_peer
            .entry(connection.peer)
            .or_default() += 1;
        connection.authenticated.store(true, Ordering::SeqCst);
        true
    }

    /// Forgets `connection`, closed.
    fn release(&mut self, connection: &Connection) {
        if connection.authenticated.load(Ordering::SeqCst) {
            self.authenticated = self.authenticated.saturating_sub(1);
            if let Some(count) = self.authenticated_by_peer.get_mut(&connection.peer) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    self.authenticated_by_peer.remove(&connection.peer);
                }
            }
        } else {
            self.waiting.retain(|waiting| waiting.id != connection.id);
        }
    }
}

/// Serves `listener` until `shutdown` resolves: each request bearing `token` goes to `handler`;
/// one without it is answered `401` and its connection closed.
pub(crate) async fn serve<H, F>(
    listener: tokio::net::TcpListener,
    token: Arc<str>,
    handler: H,
    shutdown: impl Future<Output = ()>,
) where
    H: Fn(Request<hyper::body::Incoming>) -> F + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let handler = Arc::new(handler);
    let registry: Arc<Mutex<Registry>> = Arc::default();
    tokio::pin!(shutdown);
    let mut pause = Duration::ZERO;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, address) = match accepted {
            Ok(accepted) => {
                pause = Duration::ZERO;
                accepted
            }
            Err(error) => {
                // Out of file descriptors (or another passing failure): wait for connections
                // to close instead of spinning on the error.
                pause = (pause * 2).clamp(Duration::from_millis(5), LONGEST_ACCEPT_PAUSE);
                tracing::warn!("accept failed ({error}); retrying in {pause:?}");
                tokio::time::sleep(pause).await;
                continue;
            }
        };
        let connection = lock(&registry).admit(address.ip());
        let registry = Arc::clone(&registry);
        let handler = Arc::clone(&handler);
        let token = Arc::clone(&token);
        tokio::spawn(async move {
            // Released however the task ends, a panic in a handler included.
            let _release = Release {
                registry: Arc::clone(&registry),
                connection: Arc::clone(&connection),
            };
            let service = {
                let connection = Arc::clone(&connection);
                let registry = Arc::clone(&registry);
                hyper::service::service_fn(move |request| {
                    let allowed = bearer_matches(&request, &token);
                    let admitted = allowed && lock(&registry).authenticate(&connection);
                    let handler = Arc::clone(&handler);
                    async move {
                        Ok::<_, std::convert::Infallible>(match (allowed, admitted) {
                            (false, _) => closing(
                                StatusCode::UNAUTHORIZED,
                                "a valid Authorization: Bearer token is required",
                            ),
                            (true, false) => closing(
                                StatusCode::SERVICE_UNAVAILABLE,
                                "too many open connections; retry",
                            ),
                            (true, true) => handler(request).await,
                        })
                    }
                })
            };
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(served);
            let deadline = tokio::time::sleep(TOKEN_DEADLINE);
            tokio::pin!(deadline);
            loop {
                tokio::select! {
                    _ = &mut served => break,
                    () = connection.closed.notified() => break,
                    () = &mut deadline, if !connection.authenticated.load(Ordering::SeqCst) => {
                        if !connection.authenticated.load(Ordering::SeqCst) {
                            break;
                        }
                    }
                }
            }
        });
    }
}

/// Forgets its connection when dropped.
struct Release {
    registry: Arc<Mutex<Registry>>,
    connection: Arc<Connection>,
}

impl Drop for Release {
    fn drop(&mut self) {
        lock(&self.registry).release(&self.connection);
    }
}

/// The registry, even after a panic elsewhere held its lock.
fn lock(registry: &Mutex<Registry>) -> std::sync::MutexGuard<'_, Registry> {
    registry.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Whether `request` bears `token` (compared in time independent of where they differ).
fn bearer_matches(request: &Request<hyper::body::Incoming>, token: &str) -> bool {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default()
        .as_bytes();
    let token = token.as_bytes();
    presented.len() == token.len()
        && presented
            .iter()
            .zip(token)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A plain-text answer after which the connection is closed.
fn closing(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_waiting_connection_makes_room_and_authenticated_ones_are_capped() {
        let mut registry = Registry::default();
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let other: IpAddr = "127.0.0.2".parse().unwrap();
        let first = registry.admit(local);
        for _ in 1..UNAUTHENTICATED_PER_PEER {
            registry.admit(local);
        }
        assert_eq!(registry.waiting.len(), UNAUTHENTICATED_PER_PEER);
        // One more from the same address closes that address's oldest.
        let newest = registry.admit(local);
        assert_eq!(registry.waiting.len(), UNAUTHENTICATED_PER_PEER);
        assert!(!registry.waiting.iter().any(|c| c.id == first.id));
        // Others fill the rest; past the total the oldest of all goes.
        for _ in 0..(UNAUTHENTICATED - UNAUTHENTICATED_PER_PEER + 5) {
            registry.admit(other);
        }
        assert_eq!(registry.waiting.len(), UNAUTHENTICATED);
        // The newest can still show its token.
        assert!(registry.authenticate(&newest));
        assert!(newest.authenticated.load(Ordering::SeqCst));
        assert!(!registry.waiting.iter().any(|c| c.id == newest.id));
        registry.release(&newest);
        assert_eq!(registry.authenticated, 0);
        // The authenticated cap per address holds.
        let mut held = Vec::new();
        for _ in 0..AUTHENTICATED_PER_PEER {
            let connection = registry.admit(local);
            assert!(registry.authenticate(&connection));
            held.push(connection);
        }
        let refused = registry.admit(local);
        assert!(!registry.authenticate(&refused));
        registry.release(&held[0]);
        assert!(registry.authenticate(&refused));
    }
}
