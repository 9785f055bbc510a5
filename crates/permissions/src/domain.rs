//! `domain:` specifiers for URL tools (WebFetch): matched against the URL's host,
//! case-insensitively, trailing dots ignored. `*.example.com` covers subdomains at any depth but not
//! the apex; elsewhere `*` spans one label (`example.*` matches `example.org`, not
//! `example.evil.com`); `domain:*` matches every host.

use janua_types::wildcard;

/// A compiled `domain:` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    pattern: String,
}

impl DomainPattern {
    /// Parses the text after `domain:`.
    pub fn parse(text: &str) -> Result<Self, String> {
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
    pub fn matches(&self, host: &str) -> bool {
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

/// The host of an absolute URL as a WHATWG URL parser reads it (the `url` crate, which HTTP clients
/// use): lower-cased, percent-decoded, IDNA-mapped, IPv4 forms canonicalized, without port, user
/// info or trailing dot. `None` when the URL has no host or does not parse; domain deny and ask
/// rules then match, domain allow rules do not.
pub fn url_host(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = match parsed.host()? {
        url::Host::Domain(domain) => domain.to_owned(),
        url::Host::Ipv4(address) => address.to_string(),
        // `[::ffff:169.254.169.254]` reaches the IPv4 host; rules name it as such.
        url::Host::Ipv6(address) => match address.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{address}]"),
        },
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
            ("mailto:someone@example.com", None),
            ("https://", None),
            // Spellings a WHATWG parser turns into evil.com.
            ("http://%65vil.com/", Some("evil.com")),
            ("http://ev\til.com/", Some("evil.com")),
            ("http://\u{ff45}vil.com/", Some("evil.com")),
            ("http://evil\u{3002}com/", Some("evil.com")),
            ("http://EVIL.com%2e/", Some("evil.com")),
            ("http://0xa9fea9fe/", Some("169.254.169.254")),
            ("http://2852039166/", Some("169.254.169.254")),
            ("http://[::ffff:169.254.169.254]/", Some("169.254.169.254")),
            ("http://[::ffff:a9fe:a9fe]/", Some("169.254.169.254")),
        ];
        for (url, expected) in cases {
            assert_eq!(url_host(url).as_deref(), expected, "{url}");
        }
    }
}
