//! `domain:` specifiers for URL tools (WebFetch): matched against the URL's host,
//! case-insensitively, trailing dots ignored. `*.example.com` covers subdomains at any depth but not
//! the apex; elsewhere `*` spans one label (`example.*` matches `example.org`, not
//! `example.evil.com`); `domain:*` matches every host.

use janua_types::wildcard;

use crate::rules::SpecifierError;

/// A compiled `domain:` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    pattern: String,
}

impl DomainPattern {
    /// Parses the text after `domain:`.
    pub(crate) fn parse(text: &str) -> Result<Self, SpecifierError> {
        let pattern = text.trim().trim_end_matches('.').to_ascii_lowercase();
        if pattern.is_empty() {
            return Err(SpecifierError::EmptyDomain);
        }
        if pattern.contains(['/', ':', '@', ' ']) {
            return Err(SpecifierError::NotAHost(text.to_owned()));
        }
        Ok(Self { pattern })
    }

    /// True when `host` (from `janua_types::url_host`) matches.
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
}
