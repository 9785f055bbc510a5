//! janua's HTTP/1.1 sender: resolves the host once and checks every address, connects to a
//! checked address (or to the operator's proxy), speaks TLS with the webpki roots, and wraps the
//! response body so it is cut at the size cap and stopped at the deadline.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt as _;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::rustls;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error as HttpError, WasiBody};

use super::{Destination, NetPolicy, NetReport, ProxySettings};
use crate::grants::NetScheme;

/// Trailer the body carries when the size cap cut it; its value is the cap in bytes. The guest
/// reads it from `incoming-body.finish`; server trailers never pass, so it cannot be forged.
pub(crate) const CUT_TRAILER: &str = "janua-body-cut";
/// Largest proxy `CONNECT` answer head read.
const MAX_CONNECT_HEAD: usize = 16 * 1024;
/// Most addresses tried for one host.
const MAX_ADDRESSES: usize = 8;

trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// The operator's proxies, parsed.
#[derive(Debug, Default)]
pub struct ProxyConfig {
    http: Option<Proxy>,
    https: Option<Proxy>,
    no_proxy: Vec<String>,
}

#[derive(Debug, Clone)]
struct Proxy {
    host: String,
    port: u16,
    /// `Proxy-Authorization` value from the proxy URL's user info.
    authorization: Option<String>,
}

/// A configured proxy janua cannot use (`networkProxy` in the settings).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    /// The proxy does not parse as a URL.
    #[error("proxy {proxy:?} is not a URL: {source}")]
    NotAUrl {
        /// The proxy as configured.
        proxy: String,
        /// Why it does not parse.
        source: url::ParseError,
    },
    /// The proxy is not an `http://` proxy.
    #[error("proxy {0:?}: only http:// proxies are supported")]
    NotHttp(String),
    /// The proxy URL names no host.
    #[error("proxy {0:?} has no host")]
    NoHost(String),
}

impl ProxyConfig {
    /// Parses the settings; a proxy that is not an `http://host[:port]` URL is an error naming it.
    pub fn parse(settings: &ProxySettings) -> Result<Self, ProxyError> {
        let parse = |text: &Option<String>| -> Result<Option<Proxy>, ProxyError> {
            let Some(text) = text else { return Ok(None) };
            let with_scheme = if text.contains("://") {
                text.clone()
            } else {
                format!("http://{text}")
            };
            let url = url::Url::parse(&with_scheme).map_err(|source| ProxyError::NotAUrl {
                proxy: text.clone(),
                source,
            })?;
            if url.scheme() != "http" {
                return Err(ProxyError::NotHttp(text.clone()));
            }
            let host = url
                .host_str()
                .filter(|host| !host.is_empty())
                .ok_or_else(|| ProxyError::NoHost(text.clone()))?
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            let authorization = (!url.username().is_empty()).then(|| {
                use base64::Engine as _;
                let user = percent_decode(url.username());
                let password = percent_decode(url.password().unwrap_or(""));
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
                )
            });
            Ok(Some(Proxy {
                host,
                port: url.port().unwrap_or(80),
                authorization,
            }))
        };
        Ok(Self {
            http: parse(&settings.http)?,
            https: parse(&settings.https)?,
            no_proxy: settings.no_proxy.clone(),
        })
    }

    fn for_destination(&self, destination: &Destination) -> Option<&Proxy> {
        let host = destination
            .host
            .trim_start_matches('[')
            .trim_end_matches(']');
        let bypass = self.no_proxy.iter().any(|entry| {
            let entry = entry.trim_start_matches("*.").trim_start_matches('.');
            entry == "*"
                || host == entry
                || host
                    .strip_suffix(entry)
                    .is_some_and(|rest| rest.ends_with('.'))
        });
        if bypass {
            return None;
        }
        match destination.scheme {
            NetScheme::Http => self.http.as_ref(),
            NetScheme::Https => self.https.as_ref(),
        }
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[index] == b'%'
            && let (Some(high), Some(low)) = (
                bytes.get(index + 1).copied().and_then(hex),
                bytes.get(index + 2).copied().and_then(hex),
            )
        {
            out.push((high * 16 + low) as u8);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Sends `request` to `destination`, all of it bounded by `deadline`.
pub(super) async fn send(
    policy: Arc<NetPolicy>,
    destination: Destination,
    request: http::Request<WasiBody>,
    deadline: Instant,
    report: Arc<Mutex<NetReport>>,
) -> Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ),
    HttpError,
> {
    let timed_out = |report: &Mutex<NetReport>| {
        if let Ok(mut report) = report.lock() {
            report.timed_out = true;
        }
    };
    let head = tokio::time::timeout_at(
        deadline,
        connect_and_send(&policy, &destination, request, &report),
    )
    .await;
    let (response, connection) = match head {
        Ok(result) => result?,
        Err(_) => {
            timed_out(&report);
            return Err(HttpError::ConnectionTimeout);
        }
    };
    let cap = policy.settings.max_response_bytes;
    let response = response.map(|incoming| {
        LimitedBody {
            inner: incoming,
            remaining: cap,
            cap,
            state: BodyState::Open,
            deadline: Box::pin(tokio::time::sleep_until(deadline)),
            report: Arc::clone(&report),
        }
        .boxed_unsync()
    });
    let io: Box<dyn Future<Output = Result<(), HttpError>> + Send> = Box::new(async move {
        match tokio::time::timeout_at(deadline, connection).await {
            Ok(result) => result.map_err(HttpError::Hyper),
            Err(_) => Ok(()),
        }
    });
    Ok((response, io))
}

type Connection = Pin<Box<dyn Future<Output = Result<(), hyper::Error>> + Send>>;

async fn connect_and_send(
    policy: &NetPolicy,
    destination: &Destination,
    mut request: http::Request<WasiBody>,
    report: &Mutex<NetReport>,
) -> Result<(http::Response<hyper::body::Incoming>, Connection), HttpError> {
    let refuse = |reason| NetReport::refuse(report, reason);
    // Resolve and check first, even with a proxy: a private address is refused either way.
    let addresses = resolve(destination).await?;
    if addresses.is_empty() {
        return Err(HttpError::DnsError {
            rcode: Some("no addresses".to_owned()),
            info_code: None,
        });
    }
    for address in &addresses {
        destination.check_address(address.ip()).map_err(refuse)?;
    }
    let proxy = policy.proxy.for_destination(destination);
    let stream: Box<dyn Stream> = match proxy {
        None => Box::new(connect(&addresses).await?),
        Some(proxy) => {
            let proxy_addresses = resolve_name(&proxy.host, proxy.port).await?;
            let mut stream = connect(&proxy_addresses).await?;
            if destination.scheme == NetScheme::Https {
                tunnel(&mut stream, destination, proxy).await?;
            }
            Box::new(stream)
        }
    };
    let stream: Box<dyn Stream> = match destination.scheme {
        NetScheme::Https => Box::new(tls(stream, destination).await?),
        NetScheme::Http => stream,
    };
    let (mut sender, connection) = hyper::client::conn::http1::Builder::new()
        .handshake::<_, WasiBody>(TokioIo::new(stream))
        .await
        .map_err(HttpError::Hyper)?;
    let mut connection: Connection = Box::pin(connection);
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", http::uri::PathAndQuery::as_str)
        .to_owned();
    let plain_proxy = proxy.filter(|_| destination.scheme == NetScheme::Http);
    if let Some(proxy) = plain_proxy {
        // A plain-HTTP proxy gets the absolute URI; the checked host and port, not the guest's text.
        *request.uri_mut() = format!("http://{}:{}{path}", destination.host, destination.port)
            .parse()
            .map_err(|_| HttpError::HttpRequestUriInvalid)?;
        if let Some(authorization) = &proxy.authorization {
            let value = http::HeaderValue::from_str(authorization)
                .map_err(|_| HttpError::ConfigurationError)?;
            request
                .headers_mut()
                .insert(http::header::PROXY_AUTHORIZATION, value);
        }
    } else {
        *request.uri_mut() = path.parse().map_err(|_| HttpError::HttpRequestUriInvalid)?;
    }
    let send = sender.send_request(request);
    tokio::pin!(send);
    let response = tokio::select! {
        biased;
        response = &mut send => response.map_err(HttpError::Hyper)?,
        ended = &mut connection => {
            ended.map_err(HttpError::Hyper)?;
            let response = send.await.map_err(HttpError::Hyper)?;
            return Ok((response, Box::pin(async { Ok(()) })));
        }
    };
    Ok((response, connection))
}

/// The destination's addresses: the literal address, or one lookup.
async fn resolve(destination: &Destination) -> Result<Vec<SocketAddr>, HttpError> {
    let host = destination
        .host
        .trim_start_matches('[')
        .trim_end_matches(']');
    resolve_name(host, destination.port).await
}

async fn resolve_name(host: &str, port: u16) -> Result<Vec<SocketAddr>, HttpError> {
    if let Ok(address) = host.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(address, port)]);
    }
    match tokio::net::lookup_host((host, port)).await {
        Ok(addresses) => Ok(addresses.take(MAX_ADDRESSES).collect()),
        Err(error) => Err(HttpError::DnsError {
            rcode: Some(error.to_string()),
            info_code: None,
        }),
    }
}

/// Connects to the first address that answers.
async fn connect(addresses: &[SocketAddr]) -> Result<TcpStream, HttpError> {
    let mut last = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(last.map_or(HttpError::DestinationNotFound, HttpError::Connect))
}

/// Opens a `CONNECT` tunnel to the destination through an HTTP proxy.
async fn tunnel(
    stream: &mut TcpStream,
    destination: &Destination,
    proxy: &Proxy,
) -> Result<(), HttpError> {
    let target = format!("{}:{}", destination.host, destination.port);
    let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(authorization) = &proxy.authorization {
        head.push_str(&format!("Proxy-Authorization: {authorization}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .await
        .map_err(HttpError::Connect)?;
    let mut answer = Vec::new();
    let mut byte = [0u8; 1];
    // Byte by byte, so nothing after the head (the tunnel's first bytes) is consumed.
    while !answer.ends_with(b"\r\n\r\n") {
        if answer.len() >= MAX_CONNECT_HEAD {
            return Err(HttpError::HttpProtocolError);
        }
        let read = stream.read(&mut byte).await.map_err(HttpError::Connect)?;
        if read == 0 {
            return Err(HttpError::ConnectionTerminated);
        }
        answer.push(byte[0]);
    }
    let status_line = answer.split(|b| *b == b'\r').next().unwrap_or_default();
    let status = std::str::from_utf8(status_line)
        .ok()
        .and_then(|line| line.split_whitespace().nth(1))
        .unwrap_or("");
    if status.starts_with('2') && status.len() == 3 {
        Ok(())
    } else {
        Err(HttpError::InternalError(Some(format!(
            "the proxy refused the tunnel to {target} (status {status})"
        ))))
    }
}

pub(super) fn tls_config() -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, rustls::Error>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map(|builder| Arc::new(builder.with_root_certificates(roots).with_no_client_auth()))
        })
        .clone()
}

async fn tls(
    stream: Box<dyn Stream>,
    destination: &Destination,
) -> Result<tokio_rustls::client::TlsStream<Box<dyn Stream>>, HttpError> {
    let host = destination
        .host
        .trim_start_matches('[')
        .trim_end_matches(']');
    let name = rustls::pki_types::ServerName::try_from(host.to_owned()).map_err(|_| {
        HttpError::DnsError {
            rcode: Some("invalid dns name".to_owned()),
            info_code: None,
        }
    })?;
    tokio_rustls::TlsConnector::from(
        tls_config().map_err(|error| {
            HttpError::InternalError(Some(format!("TLS setup failed: {error}")))
        })?,
    )
    .connect(name, stream)
    .await
    .map_err(HttpError::Tls)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyState {
    Open,
    /// Cut at the cap: the trailer that says so is next.
    Cut,
    Done,
}

/// A response body cut at `cap` bytes (ending with the [`CUT_TRAILER`] trailer) and stopped at
/// the deadline. Server trailers are dropped.
struct LimitedBody {
    inner: hyper::body::Incoming,
    remaining: u64,
    cap: u64,
    state: BodyState,
    deadline: Pin<Box<tokio::time::Sleep>>,
    report: Arc<Mutex<NetReport>>,
}

impl Body for LimitedBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let this = &mut *self;
        match this.state {
            BodyState::Done => return Poll::Ready(None),
            BodyState::Cut => {
                this.state = BodyState::Done;
                return Poll::Ready(Some(Ok(Frame::trailers(cut_trailers(this.cap)))));
            }
            BodyState::Open => {}
        }
        loop {
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(None) => {
                    this.state = BodyState::Done;
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Err(error))) => {
                    this.state = BodyState::Done;
                    return Poll::Ready(Some(Err(HttpError::Hyper(error))));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    let Ok(mut data) = frame.into_data() else {
                        // Server trailers: dropped.
                        continue;
                    };
                    if data.is_empty() {
                        continue;
                    }
                    let length = data.len() as u64;
                    if length > this.remaining {
                        // `remaining` is below `length`, a usize, so it fits.
                        data.truncate(usize::try_from(this.remaining).unwrap_or(0));
                        this.remaining = 0;
                        this.state = BodyState::Cut;
                        if data.is_empty() {
                            this.state = BodyState::Done;
                            return Poll::Ready(Some(Ok(Frame::trailers(cut_trailers(this.cap)))));
                        }
                        return Poll::Ready(Some(Ok(Frame::data(data))));
                    }
                    this.remaining -= length;
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Poll::Pending => {
                    if this.deadline.as_mut().poll(cx).is_ready() {
                        if let Ok(mut report) = this.report.lock() {
                            report.timed_out = true;
                        }
                        this.state = BodyState::Done;
                        return Poll::Ready(Some(Err(HttpError::ConnectionReadTimeout)));
                    }
                    return Poll::Pending;
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.state == BodyState::Done
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// The trailers that tell the guest its body was cut at `cap` bytes.
fn cut_trailers(cap: u64) -> http::HeaderMap {
    let mut trailers = http::HeaderMap::new();
    trailers.insert(CUT_TRAILER, http::HeaderValue::from(cap));
    trailers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxies_parse_and_bypass() {
        let config = ProxyConfig::parse(&ProxySettings {
            http: Some("http://user:p%40ss@proxy.local:3128".to_owned()),
            https: Some("proxy.local:3129".to_owned()),
            no_proxy: vec!["internal.example".to_owned(), ".corp".to_owned()],
        })
        .unwrap();
        let http = config.http.as_ref().unwrap();
        assert_eq!((http.host.as_str(), http.port), ("proxy.local", 3128));
        assert_eq!(
            http.authorization.as_deref(),
            Some("Basic dXNlcjpwQHNz") // user:p@ss
        );
        assert_eq!(config.https.as_ref().unwrap().port, 3129);
        let destination = |host: &str, scheme| Destination {
            scheme,
            host: host.to_owned(),
            port: 443,
            private_ok: false,
        };
        assert!(
            config
                .for_destination(&destination("example.com", NetScheme::Https))
                .is_some()
        );
        assert!(
            config
                .for_destination(&destination("internal.example", NetScheme::Https))
                .is_none()
        );
        assert!(
            config
                .for_destination(&destination("a.internal.example", NetScheme::Http))
                .is_none()
        );
        assert!(
            config
                .for_destination(&destination("x.corp", NetScheme::Http))
                .is_none()
        );
        assert!(
            config
                .for_destination(&destination("xcorp", NetScheme::Http))
                .is_some()
        );
        assert!(
            ProxyConfig::parse(&ProxySettings {
                https: Some("socks5://proxy:1080".to_owned()),
                ..ProxySettings::default()
            })
            .is_err()
        );
    }
}
