//! The outgoing-request policy behind `wasi:http`: every request a guest sends (each redirect hop
//! is a new request) is checked here before any connection, and sent by janua's own sender
//! (`http/send.rs`), never by a default client.
//!
//! A request passes when, in this order:
//! 1. the call has a net policy at all (none during `validate-input`, none without net grants);
//! 2. its scheme is `http` or `https` and its authority has no user info;
//! 3. scheme, host and port match one of the component's net grants (`grants/net.rs`);
//! 4. the host passes the permission rules (`HostCheck`, from the pipeline: the host the decision
//!    looked at, or one an allow rule covers, and never one a deny or ask rule names);
//! 5. every address the host resolves to is public, unless the grant writes the host out or the
//!    operator lists it in `allowPrivateNetworkHosts` (`http/address.rs`).
//!
//! The sender then connects to an address checked in step 5 (no second lookup, so DNS rebinding
//! cannot swap in another), or to the operator's proxy; cuts the body at the size cap; and stops
//! the request at its deadline. What was refused or timed out is recorded for the pipeline, which
//! turns the tool's resulting error into `permission_denied` or `timeout`.

mod address;
mod send;

use std::net::IpAddr;

use bytes::Bytes;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

use super::grants::{NetGrant, NetScheme};

pub(crate) use send::ProxyConfig;
pub use send::ProxyError;

/// The TLS client configuration outgoing requests use (webpki roots, ring); built once.
pub fn tls_config() -> Result<Arc<tokio_rustls::rustls::ClientConfig>, tokio_rustls::rustls::Error>
{
    send::tls_config()
}

/// Default cap on one response body.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 10 << 20;
/// Default time one request may take, connection to last byte.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Time kept back from the call's deadline, so a request stopped at its own deadline leaves the
/// guest time to report it before the call's deadline stops the guest.
const DEADLINE_MARGIN: Duration = Duration::from_millis(500);
/// Refusal reasons kept per call.
const MAX_RECORDED: usize = 8;
/// Requests one call may send; a guest looping on requests is refused after that.
const MAX_REQUESTS_PER_CALL: u32 = 100;

pub(crate) use janua_types::HostCheck;

/// Why the outgoing-request policy refused a request; the text is what the model sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetRefused {
    /// The call has no net policy (`validate-input`, or a component without net grants).
    #[error("this call has no network grant (validate-input never has one)")]
    NoGrant,
    /// A page the model asked the browser to open, and the component has no net grant.
    #[error("the component has no net grant")]
    NoGrantToOpen,
    /// A browser page's request, and the component has no net grant.
    #[error("the component has no net grant, so its browser reaches no network")]
    NoBrowserGrant,
    /// The call sent more than its 100 requests.
    #[error("a call may send at most {MAX_REQUESTS_PER_CALL} requests")]
    TooMany,
    /// Step 2: the scheme is not `http` or `https`.
    #[error("the scheme {0:?} is not http or https")]
    Scheme(String),
    /// Step 2: the authority carries user info.
    #[error("a request URL may not carry user info")]
    UserInfo,
    /// Step 2: the authority does not parse.
    #[error("the authority {authority:?} is not valid: {error}")]
    Authority {
        /// The authority as the request wrote it.
        authority: String,
        /// Why it does not parse.
        error: url::ParseError,
    },
    /// Step 2: the authority names no host.
    #[error("the authority {0:?} has no host")]
    NoHost(String),
    /// Step 3: no net grant matches scheme, host and port.
    #[error("{destination} is not in the component's net grants ({grants})")]
    NotGranted {
        /// `scheme://host:port`.
        destination: String,
        /// The component's net grants, comma-separated.
        grants: String,
    },
    /// Step 4: the permission rules refuse the host.
    #[error(transparent)]
    Rules(#[from] janua_types::HostRefused),
    /// Step 5: the host resolves to a private address nobody allowed.
    #[error(
        "{host} resolves to {address}, a {range} address; such addresses are reached only when the operator lists the host in allowPrivateNetworkHosts or the component's grant names it"
    )]
    PrivateAddress {
        /// The host asked for.
        host: String,
        /// The private address it resolves to.
        address: IpAddr,
        /// Which private range the address is in.
        range: &'static str,
    },
}

/// Operator settings for outgoing HTTP, fixed for the runtime's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetSettings {
    /// Largest response body, in bytes; the rest is cut with a note.
    pub max_response_bytes: u64,
    /// Time one request may take, connection to last byte (also bounded by the call's deadline).
    pub request_timeout: Duration,
    /// Hosts that may be reached at private or loopback addresses (`allowPrivateNetworkHosts`),
    /// spelled as URLs spell them (`localhost`, `127.0.0.1`, `[::1]`).
    pub allow_private_hosts: Vec<String>,
    /// The operator's proxy (settings' `networkProxy`); never taken from the environment, whose
    /// `HTTP_PROXY` an agent harness may set without meaning janua to trust it.
    pub proxy: ProxySettings,
}

/// Proxies for outgoing HTTP, as the operator configures them. A configured proxy resolves the
/// names it is asked for: it is trusted with every request it carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxySettings {
    /// Proxy for `http://` URLs, an `http://host:port` URL.
    pub http: Option<String>,
    /// Proxy for `https://` URLs, tunnelled with `CONNECT`.
    pub https: Option<String>,
    /// Hosts reached directly: names, `.suffix`es, or `*`.
    pub no_proxy: Vec<String>,
}

impl Default for NetSettings {
    fn default() -> Self {
        Self {
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            allow_private_hosts: Vec::new(),
            proxy: ProxySettings::default(),
        }
    }
}

/// The runtime's outgoing-HTTP configuration: the settings and the proxies parsed from them.
pub struct NetRuntime {
    /// The operator's outgoing-HTTP settings.
    pub settings: Arc<NetSettings>,
    /// The proxies parsed from them.
    pub proxy: Arc<ProxyConfig>,
}

impl NetRuntime {
    /// Parses the proxies; a proxy that is not an `http://host[:port]` URL is an error.
    pub fn new(settings: NetSettings) -> Result<Self, ProxyError> {
        let proxy = ProxyConfig::parse(&settings.proxy)?;
        Ok(Self {
            settings: Arc::new(settings),
            proxy: Arc::new(proxy),
        })
    }
}

/// What one call's component may reach over HTTP.
pub struct NetPolicy {
    /// The component's net grants.
    pub grants: Vec<NetGrant>,
    /// The permission rules' check of each host.
    pub hosts: HostCheck,
    /// Operator settings.
    pub settings: Arc<NetSettings>,
    /// The proxies, parsed once.
    pub proxy: Arc<ProxyConfig>,
}

/// What the policy refused, and whether a request ran out of time, during one call.
#[derive(Debug, Default)]
pub(crate) struct NetReport {
    /// Why requests were refused (the first few).
    pub refused: Vec<NetRefused>,
    /// A request was stopped at its deadline.
    pub timed_out: bool,
}

impl NetReport {
    fn refuse(report: &Mutex<NetReport>, reason: NetRefused) -> HttpError {
        tracing::info!(target: "janua::net", "request refused: {reason}");
        if let Ok(mut report) = report.lock()
            && report.refused.len() < MAX_RECORDED
        {
            report.refused.push(reason);
        }
        HttpError::HttpRequestDenied
    }
}

/// The `wasi:http` hooks of one call: the policy (if any), the call's deadline and the report.
pub(crate) struct HttpHooks {
    policy: Option<Arc<NetPolicy>>,
    deadline: Instant,
    report: Arc<Mutex<NetReport>>,
    sent: u32,
}

impl HttpHooks {
    /// Hooks for a call ending at `deadline`; without a policy every request is refused.
    pub(crate) fn new(policy: Option<Arc<NetPolicy>>, deadline: Instant) -> Self {
        Self {
            policy,
            deadline,
            report: Arc::default(),
            sent: 0,
        }
    }

    /// What was refused or timed out so far.
    pub(crate) fn report(&self) -> (Vec<String>, bool) {
        match self.report.lock() {
            Ok(report) => (
                report.refused.iter().map(NetRefused::to_string).collect(),
                report.timed_out,
            ),
            Err(_) => (Vec::new(), false),
        }
    }
}

/// A request that passed steps 1-4: where it goes and what may be reached there.
pub struct Destination {
    pub scheme: NetScheme,
    /// As `url_host` spells it: lower case, IPv6 in brackets.
    pub host: String,
    pub port: u16,
    /// The grant or the operator names the host: private addresses are allowed.
    pub private_ok: bool,
}

impl NetPolicy {
    /// Steps 2-4 for the request URI `uri`.
    pub fn check(&self, uri: &http::Uri) -> Result<Destination, NetRefused> {
        let scheme = match uri.scheme_str() {
            Some("http") => NetScheme::Http,
            Some("https") => NetScheme::Https,
            other => return Err(NetRefused::Scheme(other.unwrap_or("").to_owned())),
        };
        let authority = uri
            .authority()
            .map(http::uri::Authority::as_str)
            .unwrap_or("");
        if authority.contains('@') {
            return Err(NetRefused::UserInfo);
        }
        let url =
            url::Url::parse(&format!("{}://{authority}/", scheme.as_str())).map_err(|error| {
                NetRefused::Authority {
                    authority: authority.to_owned(),
                    error,
                }
            })?;
        let host = janua_types::url_host(url.as_str())
            .ok_or_else(|| NetRefused::NoHost(authority.to_owned()))?;
        let port = url.port().unwrap_or(scheme.default_port());
        let Some(grant) = self
            .grants
            .iter()
            .find(|grant| grant.matches(scheme, &host, port))
        else {
            return Err(NetRefused::NotGranted {
                destination: format!("{}://{host}:{port}", scheme.as_str()),
                grants: self
                    .grants
                    .iter()
                    .map(NetGrant::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        (self.hosts)(&host)?;
        let private_ok = grant.names_host(&host)
            || self
                .settings
                .allow_private_hosts
                .iter()
                .any(|allowed| allowed.trim_end_matches('.').eq_ignore_ascii_case(&host));
        Ok(Destination {
            scheme,
            host,
            port,
            private_ok,
        })
    }
}

impl Destination {
    /// Step 5 for one resolved address.
    pub fn check_address(&self, address: IpAddr) -> Result<(), NetRefused> {
        match address::private_range(address) {
            Some(range) if !self.private_ok => Err(NetRefused::PrivateAddress {
                host: self.host.clone(),
                address,
                range,
            }),
            _ => Ok(()),
        }
    }
}

/// A response fetched by [`fetch`], body read whole (up to the cap).
pub(crate) struct Fetched {
    /// The HTTP status code.
    pub status: u16,
    /// The response headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, cut at the operator's cap.
    pub body: Bytes,
}

/// Why [`fetch`] has no response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FetchError {
    /// The policy refused the request (steps 1-5); the reason names the grant or rule.
    #[error("refused: {0}")]
    Refused(NetRefused),
    /// The request did not finish by its deadline.
    #[error("the request did not finish in time")]
    TimedOut,
    /// The connection or the exchange failed.
    #[error("{0}")]
    Failed(String),
}

/// Sends one request for a host-side client (the browser's requests, `browser/intercept.rs`)
/// under the same policy and sender as `wasi:http`, and reads its whole body: the host, not a
/// guest, holds the request, so the policy is applied to the URL the client asked for and to
/// every address it resolves to.
pub(crate) async fn fetch(
    policy: Arc<NetPolicy>,
    request: http::Request<Bytes>,
    deadline: Instant,
) -> Result<Fetched, FetchError> {
    use http_body_util::BodyExt as _;
    let destination = policy.check(request.uri()).map_err(FetchError::Refused)?;
    let remaining = deadline.saturating_duration_since(Instant::now());
    let timeout = policy.settings.request_timeout.min(remaining);
    let deadline = tokio::time::Instant::now() + timeout;
    let report = Arc::new(Mutex::new(NetReport::default()));
    let refused = |report: &Mutex<NetReport>| {
        report
            .lock()
            .ok()
            .and_then(|report| report.refused.first().cloned())
    };
    let request = request.map(|body| {
        http_body_util::Full::new(body)
            .map_err(|never| match never {})
            .boxed_unsync()
    });
    let sent = send::send(policy, destination, request, deadline, Arc::clone(&report)).await;
    let (response, connection) = match sent {
        Ok(sent) => sent,
        Err(error) => {
            if let Some(reason) = refused(&report) {
                return Err(FetchError::Refused(reason));
            }
            if report.lock().is_ok_and(|report| report.timed_out) {
                return Err(FetchError::TimedOut);
            }
            return Err(FetchError::Failed(error.to_string()));
        }
    };
    let connection = tokio::spawn(Box::into_pin(connection));
    let (parts, body) = response.into_parts();
    let collected = body.collect().await;
    connection.abort();
    let body = match collected {
        Ok(collected) => collected.to_bytes(),
        Err(_) if report.lock().is_ok_and(|report| report.timed_out) => {
            return Err(FetchError::TimedOut);
        }
        Err(error) => return Err(FetchError::Failed(error.to_string())),
    };
    let headers = parts
        .headers
        .iter()
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect();
    Ok(Fetched {
        status: parts.status.as_u16(),
        headers,
        body,
    })
}

type SendFuture = Box<
    dyn Future<
            Output = Result<
                (
                    http::Response<WasiBody>,
                    Box<dyn Future<Output = Result<(), HttpError>> + Send>,
                ),
                HttpError,
            >,
        > + Send,
>;

impl WasiHttpHooks for HttpHooks {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> SendFuture {
        drop(fut);
        let report = Arc::clone(&self.report);
        let Some(policy) = self.policy.clone() else {
            let error = NetReport::refuse(&report, NetRefused::NoGrant);
            return Box::new(async move { Err(error) });
        };
        self.sent = self.sent.saturating_add(1);
        if self.sent > MAX_REQUESTS_PER_CALL {
            let error = NetReport::refuse(&report, NetRefused::TooMany);
            return Box::new(async move { Err(error) });
        }
        let destination = match policy.check(request.uri()) {
            Ok(destination) => destination,
            Err(reason) => {
                let error = NetReport::refuse(&report, reason);
                return Box::new(async move { Err(error) });
            }
        };
        let remaining = self
            .deadline
            .saturating_duration_since(Instant::now())
            .saturating_sub(DEADLINE_MARGIN);
        let mut timeout = policy.settings.request_timeout.min(remaining);
        // A guest may ask for less time, never more.
        if let Some(connect) = options.and_then(|options| options.connect_timeout) {
            timeout = timeout.min(connect.max(Duration::from_millis(1)));
        }
        let deadline = tokio::time::Instant::now() + timeout;
        Box::new(send::send(policy, destination, request, deadline, report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(grants: &[&str], private: &[&str], hosts: HostCheck) -> NetPolicy {
        NetPolicy {
            grants: grants
                .iter()
                .map(|grant| NetGrant::try_from((*grant).to_owned()).unwrap())
                .collect(),
            hosts,
            settings: Arc::new(NetSettings {
                allow_private_hosts: private.iter().map(|host| (*host).to_owned()).collect(),
                ..NetSettings::default()
            }),
            proxy: Arc::default(),
        }
    }

    fn any_host() -> HostCheck {
        Arc::new(|_| Ok(()))
    }

    fn uri(text: &str) -> http::Uri {
        text.parse().unwrap()
    }

    #[test]
    fn requests_must_match_a_grant_and_the_rules() {
        let only_docs: HostCheck = Arc::new(|host| {
            if host == "docs.example.com" {
                Ok(())
            } else {
                Err(janua_types::HostRefused::NotAllowed {
                    host: host.to_owned(),
                    tool: "Fetcher".to_owned(),
                    decided: None,
                })
            }
        });
        let web = policy(&["https://*.example.com"], &[], only_docs);
        assert!(web.check(&uri("https://docs.example.com/x")).is_ok());
        assert!(web.check(&uri("https://DOCS.example.com./x")).is_ok());
        let error = web.check(&uri("https://api.example.com/")).err().unwrap();
        assert!(
            matches!(&error, NetRefused::Rules(janua_types::HostRefused::NotAllowed { host, .. }) if host == "api.example.com"),
            "{error}"
        );
        let error = web.check(&uri("http://docs.example.com/")).err().unwrap();
        assert!(
            matches!(&error, NetRefused::NotGranted { destination, .. } if destination == "http://docs.example.com:80"),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains("not in the component's net grants"),
            "{error}"
        );
        let error = web
            .check(&uri("https://docs.example.com:8443/"))
            .err()
            .unwrap();
        assert!(matches!(error, NetRefused::NotGranted { .. }), "{error}");
        let error = web
            .check(&uri("https://user@docs.example.com/"))
            .err()
            .unwrap();
        assert_eq!(error, NetRefused::UserInfo);
    }

    #[test]
    fn private_addresses_need_a_literal_grant_or_the_operator() {
        let wildcard = policy(&["http://*:*"], &[], any_host());
        let local = wildcard.check(&uri("http://localhost:8080/")).unwrap();
        assert!(local.check_address("127.0.0.1".parse().unwrap()).is_err());
        assert!(
            local
                .check_address("93.184.216.34".parse().unwrap())
                .is_ok()
        );
        let metadata = wildcard.check(&uri("http://0xa9fea9fe/")).unwrap();
        assert_eq!(metadata.host, "169.254.169.254");
        assert!(
            metadata
                .check_address("169.254.169.254".parse().unwrap())
                .is_err()
        );

        let operator = policy(&["http://*:*"], &["localhost"], any_host());
        let local = operator.check(&uri("http://localhost:8080/")).unwrap();
        assert!(local.check_address("127.0.0.1".parse().unwrap()).is_ok());
        let other = operator.check(&uri("http://127.0.0.1:8080/")).unwrap();
        assert!(other.check_address("127.0.0.1".parse().unwrap()).is_err());

        let literal = policy(&["http://127.0.0.1:*"], &[], any_host());
        let local = literal.check(&uri("http://127.0.0.1:9/")).unwrap();
        assert!(local.check_address("127.0.0.1".parse().unwrap()).is_ok());
    }
}
