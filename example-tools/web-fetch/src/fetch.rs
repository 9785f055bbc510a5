//! The network half of WebFetch: GET requests through `wasi:http`, same-host redirects, the body
//! read until it ends or the host cuts it. Every request is checked by the host first.

use janua_sdk::ToolError;
use url::{Position, Url};
use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    ErrorCode, Fields, IncomingBody, IncomingResponse, Method, OutgoingRequest, Scheme,
};
use wasip2::io::streams::StreamError;

use crate::MAX_REDIRECTS;
use crate::page::{Fetched, Hop, next_hop, quote};

/// Bytes asked for per read of the body.
const READ_CHUNK: u64 = 64 * 1024;
/// The trailer the host adds when it cut the body at its size cap (value: the cap in bytes).
const CUT_TRAILER: &str = "janua-body-cut";
const USER_AGENT: &str = "janua-webfetch/0.1";
const ACCEPT: &str =
    "text/html, application/xhtml+xml, text/markdown;q=0.9, text/plain;q=0.8, */*;q=0.5";

/// Fetches `url`, following same-host redirects.
pub(crate) fn follow(mut url: Url) -> Result<Fetched, ToolError> {
    url.set_fragment(None);
    let mut redirects = 0;
    loop {
        let response = send(&url)?;
        let status = response.status();
        let location = header(&response, "location");
        if (300..400).contains(&status)
            && let Some(location) = location
        {
            match next_hop(&url, &location) {
                Hop::Follow(next) if redirects < MAX_REDIRECTS => {
                    redirects += 1;
                    url = next;
                    continue;
                }
                Hop::Follow(_) => {
                    return Err(ToolError::new(
                        "too_many_redirects",
                        format!("{url} redirected more than {MAX_REDIRECTS} times; stopped"),
                    ));
                }
                Hop::NotFollowed { target, reason } => {
                    return Ok(Fetched {
                        url,
                        redirects,
                        status,
                        content_type: None,
                        body: Vec::new(),
                        cut_at: None,
                        unfollowed: Some((target, reason)),
                    });
                }
            }
        }
        let content_type = header(&response, "content-type");
        let (body, cut_at) = read_body(&response, &url)?;
        return Ok(Fetched {
            url,
            redirects,
            status,
            content_type,
            body,
            cut_at,
            unfollowed: None,
        });
    }
}

/// Sends one GET request and waits for the response head.
fn send(url: &Url) -> Result<IncomingResponse, ToolError> {
    let headers = Fields::new();
    for (name, value) in [("user-agent", USER_AGENT), ("accept", ACCEPT)] {
        headers
            .append(name, value.as_bytes())
            .map_err(|_| internal(format!("cannot set the {name} header")))?;
    }
    let request = OutgoingRequest::new(headers);
    let scheme = if url.scheme() == "https" {
        Scheme::Https
    } else {
        Scheme::Http
    };
    let host = url.host_str().unwrap_or_default();
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let path = &url[Position::BeforePath..Position::AfterQuery];
    let path = if path.is_empty() { "/" } else { path };
    request
        .set_method(&Method::Get)
        .and_then(|()| request.set_scheme(Some(&scheme)))
        .and_then(|()| request.set_authority(Some(&authority)))
        .and_then(|()| request.set_path_with_query(Some(path)))
        .map_err(|()| {
            ToolError::new(
                "invalid_url",
                format!("{} cannot be requested", quote(url.as_str())),
            )
        })?;
    let future = outgoing_handler::handle(request, None).map_err(|code| failure(url, &code))?;
    future.subscribe().block();
    match future.get() {
        Some(Ok(Ok(response))) => Ok(response),
        Some(Ok(Err(code))) => Err(failure(url, &code)),
        Some(Err(())) | None => Err(internal(format!("the response to {url} was lost"))),
    }
}

/// The first value of header `name`, as text.
fn header(response: &IncomingResponse, name: &str) -> Option<String> {
    let values = response.headers().get(name);
    let value = values.first()?;
    Some(String::from_utf8_lossy(value).into_owned())
}

/// The whole body, or as much as the host let through and the cap it cut at.
fn read_body(response: &IncomingResponse, url: &Url) -> Result<(Vec<u8>, Option<u64>), ToolError> {
    let body: IncomingBody = response
        .consume()
        .map_err(|()| internal(format!("the body of {url} could not be read")))?;
    let stream = body
        .stream()
        .map_err(|()| internal(format!("the body of {url} could not be read")))?;
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(READ_CHUNK) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(error)) => {
                if let Some(code) = wasip2::http::types::http_error_code(&error) {
                    return Err(failure(url, &code));
                }
                // Body errors reach the guest without an error code; the text still names it.
                let detail = error.to_debug_string();
                let kind = if detail.contains("Timeout") {
                    "timeout"
                } else {
                    "fetch_failed"
                };
                return Err(ToolError::new(
                    kind,
                    format!(
                        "reading the body of {url} failed after {} bytes: {}",
                        bytes.len(),
                        quote(&detail)
                    ),
                ));
            }
        }
    }
    drop(stream);
    // The host cuts an oversized body and says so in a trailer of its own.
    let trailers = IncomingBody::finish(body);
    trailers.subscribe().block();
    let cut_at = match trailers.get() {
        Some(Ok(Ok(Some(fields)))) => fields
            .get(CUT_TRAILER)
            .first()
            .and_then(|value| std::str::from_utf8(value).ok()?.parse::<u64>().ok()),
        _ => None,
    };
    Ok((bytes, cut_at))
}

/// A `wasi:http` error as a tool error with a stable kind.
fn failure(url: &Url, code: &ErrorCode) -> ToolError {
    let (kind, what) = match code {
        ErrorCode::HttpRequestDenied => (
            "permission_denied",
            "the host refused the request (not granted, not allowed by the permission rules, or a private address)".to_owned(),
        ),
        ErrorCode::DnsTimeout
        | ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::HttpResponseTimeout => ("timeout", "the request timed out".to_owned()),
        ErrorCode::DnsError(payload) => (
            "dns_error",
            format!(
                "the host name could not be resolved{}",
                payload
                    .rcode
                    .as_deref()
                    .map(|code| format!(" ({})", quote(code)))
                    .unwrap_or_default()
            ),
        ),
        ErrorCode::DestinationNotFound
        | ErrorCode::DestinationUnavailable
        | ErrorCode::DestinationIpUnroutable
        | ErrorCode::ConnectionRefused
        | ErrorCode::ConnectionTerminated => ("connection_failed", format!("{code:?}")),
        ErrorCode::DestinationIpProhibited => (
            "permission_denied",
            "the destination address is not allowed".to_owned(),
        ),
        ErrorCode::TlsProtocolError
        | ErrorCode::TlsCertificateError
        | ErrorCode::TlsAlertReceived(_) => ("tls_error", format!("{code:?}")),
        ErrorCode::InternalError(Some(message)) => ("fetch_failed", quote(message)),
        other => ("fetch_failed", format!("{other:?}")),
    };
    ToolError::new(kind, format!("fetching {url} failed: {what}"))
}

fn internal(message: String) -> ToolError {
    ToolError::new("fetch_failed", message)
}
