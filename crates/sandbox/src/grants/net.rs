//! Network grants: `scheme://host[:port]` patterns a component's outgoing HTTP requests must match.
//!
//! The scheme is `http` or `https`. The host is a name or IP address, a leading `*.` label
//! (`*.example.com`: any subdomain, not the apex) or `*` alone (any host). Without a port the
//! scheme's default port is meant (80, 443); `:*` is any port. A grant whose host is written out
//! (no `*`) also lets requests reach that host when it resolves to a private or loopback address
//! (see `http.rs`); a wildcard never does.

use std::fmt;

use serde::Deserialize;

/// One allowed request destination pattern (`https://*.example.com`, `http://127.0.0.1:8080`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct NetGrant {
    text: String,
    scheme: NetScheme,
    host: HostPattern,
    port: PortPattern,
}

/// A scheme a net grant may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetScheme {
    Http,
    Https,
}

impl NetScheme {
    /// The scheme's name, `http` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            NetScheme::Http => "http",
            NetScheme::Https => "https",
        }
    }

    /// The port a URL without one means.
    pub fn default_port(self) -> u16 {
        match self {
            NetScheme::Http => 80,
            NetScheme::Https => 443,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Any,
    /// `*.suffix`: the labels before `suffix` are one or more.
    Subdomains(String),
    Exact(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortPattern {
    Any,
    Exact(u16),
}

/// Why a net grant pattern is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "net grant {pattern:?}: {reason}; write scheme://host[:port], e.g. https://*.example.com or http://127.0.0.1:8080"
)]
pub struct NetGrantError {
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong with it.
    pub reason: String,
}

impl TryFrom<String> for NetGrant {
    type Error = NetGrantError;

    fn try_from(pattern: String) -> Result<Self, NetGrantError> {
        let error = |reason: &str| NetGrantError {
            pattern: pattern.clone(),
            reason: reason.to_owned(),
        };
        let (scheme, rest) = pattern
            .split_once("://")
            .ok_or_else(|| error("it has no scheme"))?;
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "http" => NetScheme::Http,
            "https" => NetScheme::Https,
            _ => return Err(error("the scheme must be http or https")),
        };
        if rest.contains(['/', '?', '#', '@', ' ']) || rest.is_empty() {
            return Err(error(
                "only a host and port may follow the scheme (no path, user or spaces)",
            ));
        }
        let (host, port) = split_host_port(rest).ok_or_else(|| error("the port is not valid"))?;
        let port = match port {
            None => PortPattern::Exact(scheme.default_port()),
            Some("*") => PortPattern::Any,
            Some(digits) => PortPattern::Exact(
                digits
                    .parse::<u16>()
                    .ok()
                    .filter(|port| *port != 0 && digits.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| error("the port must be 1-65535 or *"))?,
            ),
        };
        let host = host.to_ascii_lowercase();
        let host = if host == "*" {
            HostPattern::Any
        } else if let Some(suffix) = host.strip_prefix("*.") {
            let suffix = suffix.trim_end_matches('.');
            if suffix.is_empty() || suffix.contains('*') {
                return Err(error("'*' may only be the whole host or its first label"));
            }
            check_host(suffix).map_err(error)?;
            HostPattern::Subdomains(suffix.to_owned())
        } else if host.contains('*') {
            return Err(error("'*' may only be the whole host or its first label"));
        } else {
            let host = host.trim_end_matches('.');
            check_host(host).map_err(error)?;
            HostPattern::Exact(canonical_host(host))
        };
        Ok(Self {
            text: pattern,
            scheme,
            host,
            port,
        })
    }
}

/// Splits `host[:port]`, where host may be a bracketed IPv6 address.
fn split_host_port(text: &str) -> Option<(&str, Option<&str>)> {
    if let Some(rest) = text.strip_prefix('[') {
        let (address, after) = rest.split_once(']')?;
        let host = &text[..address.len() + 2];
        return match after {
            "" => Some((host, None)),
            port => Some((host, Some(port.strip_prefix(':')?))),
        };
    }
    match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => Some((host, Some(port))),
        Some(_) => None,
        None => Some((text, None)),
    }
}

fn check_host(host: &str) -> Result<(), &'static str> {
    if host.is_empty() {
        return Err("the host is empty");
    }
    if let Some(address) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return address
            .parse::<std::net::Ipv6Addr>()
            .map(|_| ())
            .map_err(|_| "the bracketed host is not an IPv6 address");
    }
    let valid = host.split('.').all(|label| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    if valid {
        Ok(())
    } else {
        Err("the host must be letters, digits, '-', '_' and dots (IDNA names in their xn-- form)")
    }
}

/// The host as [`janua_types::url_host`] spells it, so grants and URLs compare equal.
fn canonical_host(host: &str) -> String {
    match url::Host::parse(host) {
        Ok(url::Host::Ipv4(address)) => address.to_string(),
        Ok(url::Host::Ipv6(address)) => match address.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{address}]"),
        },
        _ => host.to_owned(),
    }
}

impl NetGrant {
    /// True when a request to `scheme://host:port` matches. `host` is spelled as `url_host` spells
    /// it (lower case, no trailing dot, IPv6 in brackets).
    pub fn matches(&self, scheme: NetScheme, host: &str, port: u16) -> bool {
        let host = host.trim_end_matches('.');
        self.scheme == scheme
            && match self.port {
                PortPattern::Any => true,
                PortPattern::Exact(granted) => granted == port,
            }
            && match &self.host {
                HostPattern::Any => true,
                HostPattern::Exact(granted) => granted.eq_ignore_ascii_case(host),
                HostPattern::Subdomains(suffix) => {
                    // Bytes, so a non-ASCII host can never split a character.
                    let (host, suffix) = (host.as_bytes(), suffix.as_bytes());
                    let start = host.len().saturating_sub(suffix.len());
                    host.len() > suffix.len() + 1
                        && host[start..].eq_ignore_ascii_case(suffix)
                        && host[start - 1] == b'.'
                }
            }
    }

    /// True when the pattern matches every host (`https://*`).
    pub fn any_host(&self) -> bool {
        matches!(self.host, HostPattern::Any)
    }

    /// True when the grant writes `host` out literally (no wildcard): then it may reach that host
    /// at a private or loopback address.
    pub fn names_host(&self, host: &str) -> bool {
        matches!(&self.host, HostPattern::Exact(granted) if granted.eq_ignore_ascii_case(host.trim_end_matches('.')))
    }
}

impl fmt::Display for NetGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(pattern: &str) -> NetGrant {
        NetGrant::try_from(pattern.to_owned()).expect("valid pattern")
    }

    #[test]
    fn matching_table() {
        use NetScheme::{Http, Https};
        let cases: &[(&str, NetScheme, &str, u16, bool)] = &[
            ("https://example.com", Https, "example.com", 443, true),
            ("https://example.com", Https, "example.com", 8443, false),
            ("https://example.com", Http, "example.com", 80, false),
            ("https://example.com", Https, "www.example.com", 443, false),
            ("https://EXAMPLE.com.", Https, "example.com", 443, true),
            ("https://*.example.com", Https, "www.example.com", 443, true),
            ("https://*.example.com", Https, "a.b.example.com", 443, true),
            ("https://*.example.com", Https, "example.com", 443, false),
            (
                "https://*.example.com",
                Https,
                "evilexample.com",
                443,
                false,
            ),
            ("https://*", Https, "anything.test", 443, true),
            ("https://*", Https, "anything.test", 444, false),
            ("https://*:*", Https, "anything.test", 444, true),
            ("http://*:*", Https, "anything.test", 443, false),
            ("http://127.0.0.1:8080", Http, "127.0.0.1", 8080, true),
            ("http://127.0.0.1:8080", Http, "127.0.0.1", 8081, false),
            ("http://[::1]:*", Http, "[::1]", 1, true),
            ("http://[0:0::1]:*", Http, "[::1]", 1, true),
            ("http://0x7f000001:*", Http, "127.0.0.1", 9, true),
        ];
        for (pattern, scheme, host, port, expected) in cases {
            assert_eq!(
                grant(pattern).matches(*scheme, host, *port),
                *expected,
                "{pattern} vs {scheme:?}://{host}:{port}"
            );
        }
    }

    #[test]
    fn only_literal_hosts_name_a_host() {
        assert!(grant("http://localhost:*").names_host("localhost"));
        assert!(grant("http://127.0.0.1").names_host("127.0.0.1"));
        assert!(!grant("http://*:*").names_host("localhost"));
        assert!(!grant("http://*.internal").names_host("db.internal"));
    }

    #[test]
    fn bad_patterns_name_themselves() {
        for bad in [
            "example.com",
            "ftp://example.com",
            "https://",
            "https://example.com/path",
            "https://user@example.com",
            "https://exa*mple.com",
            "https://*example.com",
            "https://a.*.com",
            "https://*.",
            "https://example.com:0",
            "https://example.com:99999",
            "https://example.com:+80",
            "https://example.com:",
            "https://[::1",
            "https://[nothex]:80",
            "https://exa mple.com",
            "https://::1:80",
        ] {
            let error = NetGrant::try_from(bad.to_owned()).expect_err(bad);
            assert_eq!(error.pattern, bad);
            assert!(error.to_string().contains(bad), "{error}");
        }
    }
}
