//! `domain:` specifiers for URL tools (WebFetch): matched against the URL's host,
//! case-insensitively, trailing dots ignored. `*.example.com` covers subdomains at any depth but not
//! the apex; elsewhere `*` spans one label (`example.*` matches `example.org`, not
//! `example.evil.com`); `domain:*` matches every host.

use crate::wildcard;

/// A compiled `domain:` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DomainPattern {
    pattern: String,
}

impl DomainPattern {
    /// Parses the text after `domain:`.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let pattern = text.trim().trim_end_matches('.').to_ascii_lowercase();
        if pattern.is_empty() {
            return Err("a domain pattern may not be empty".to_owned());
        }
        if pattern.contains(['/', ':', '@', ' ']) {
            return Err(format!(
                "{text:?} is not a host name; write domain:example.com"
            ));
        }
        Ok(Self { pattern })
    }

    /// True when `host` (from [`url_host`]) matches.
    pub(crate) fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if self.pattern == "*" {
            return true;
        }
        if let Some(apex) = self.pattern.strip_prefix("*.") {
            return host
                .strip_suffix(apex)
                .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.'))
                && labels_match(apex, &host[host.len() - apex.len()..]);
        }
        labels_match(&self.pattern, &host)
    }
}

fn labels_match(pattern: &str, host: &str) -> bool {
    let patterns: Vec<&str> = pattern.split('.').collect();
    let labels: Vec<&str> = host.split('.').collect();
    patterns.len() == labels.len()
        && patterns
            .iter()
            .zip(&labels)
            .all(|(pattern, label)| wildcard::matches(pattern, label))
}

/// The host of an absolute URL, lower-cased, without port, user info or trailing dot.
///
/// Hand-rolled because permission checks need only the authority, and it must be read as the
/// WHATWG URL standard reads it for http(s): the authority ends at the first `/`, `\`, `?` or `#`,
/// and user info runs to the last `@`, so `http://evil.com\@good.com` is `evil.com`.
pub(crate) fn url_host(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once(':')?;
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let rest = rest.trim_start_matches(['/', '\\']);
    let authority = rest.split(['/', '\\', '?', '#']).next().unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        format!("[{}]", bracketed.split(']').next().unwrap_or_default())
    } else {
        host_port.split(':').next().unwrap_or_default().to_owned()
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_table() {
        let cases = [
            ("example.com", "example.com", true),
            ("example.com", "EXAMPLE.com.", true),
            ("example.com.", "example.com", true),
            ("example.com", "www.example.com", false),
            ("*.example.com", "www.example.com", true),
            ("*.example.com", "a.b.example.com", true),
            ("*.example.com", "example.com", false),
            ("*.example.com", "evilexample.com", false),
            ("example.*", "example.org", true),
            ("example.*", "example.evil.com", false),
            ("*", "anything.at.all", true),
            ("docs.*.io", "docs.rs.io", true),
            ("docs.*.io", "docs.a.b.io", false),
        ];
        for (pattern, host, expected) in cases {
            assert_eq!(
                DomainPattern::parse(pattern).unwrap().matches(host),
                expected,
                "{pattern} vs {host}"
            );
        }
    }

    #[test]
    fn hosts_are_read_like_a_browser() {
        let cases = [
            ("https://Example.com/path", Some("example.com")),
            ("https://example.com:8443/x", Some("example.com")),
            ("https://user:pw@example.com/", Some("example.com")),
            ("http://evil.com\\@good.com/", Some("evil.com")),
            ("http://good.com@evil.com/", Some("evil.com")),
            ("https://example.com./", Some("example.com")),
            ("http://[::1]:80/", Some("[::1]")),
            ("https://example.com?q=@x.com", Some("example.com")),
            ("not a url", None),
            ("https://", None),
        ];
        for (url, expected) in cases {
            assert_eq!(url_host(url).as_deref(), expected, "{url}");
        }
    }
}
