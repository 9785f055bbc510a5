//! How janua spells a URL's host, so that rules, grants and the HTTP sender compare the same text.

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
