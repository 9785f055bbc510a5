//! The pure half of WebFetch: URL checks, where a redirect may lead, what a body is (HTML, text or
//! binary) and the text returned to the model. No I/O here, so all of it is unit-tested natively.

use url::Url;

use crate::MAX_URL_BYTES;

/// Characters of server-chosen text (a `Location`, a content type) quoted in a result.
const MAX_QUOTED_CHARS: usize = 2000;
/// Bytes looked at to tell text from binary content.
const SNIFF_BYTES: usize = 8192;
/// Elements dropped before conversion: code, styling and embedded objects carry no readable text.
const SKIPPED_TAGS: [&str; 9] = [
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
];

/// A URL the tool will fetch: absolute, `http` or `https`, with a host.
pub(crate) fn parse_url(text: &str) -> Result<Url, String> {
    let text = text.trim();
    if text.len() > MAX_URL_BYTES {
        return Err(format!(
            "the URL is {} bytes long; at most {MAX_URL_BYTES} are accepted",
            text.len()
        ));
    }
    let url = Url::parse(text).map_err(|error| {
        format!(
            "{} is not an absolute URL ({error}); write it as https://host/path",
            quote(text)
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "{} uses the {} scheme; WebFetch fetches http and https URLs only",
            quote(text),
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{} has no host", quote(text)));
    }
    Ok(url)
}

/// What to do with a redirect's `Location`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Hop {
    /// Same host (same scheme and port, or an upgrade from http to https): fetch it.
    Follow(Url),
    /// Anything else: report it, do not fetch it.
    NotFollowed {
        /// Where the redirect points, as resolved (or as sent, when it cannot be resolved).
        target: String,
        /// Why it was not followed, completing "the redirect ...".
        reason: &'static str,
    },
}

/// Where a redirect from `current` to `location` leads.
pub(crate) fn next_hop(current: &Url, location: &str) -> Hop {
    let Ok(mut target) = current.join(location.trim()) else {
        return Hop::NotFollowed {
            target: location.to_owned(),
            reason: "points to something that is not a URL",
        };
    };
    target.set_fragment(None);
    let not_followed = |reason| Hop::NotFollowed {
        target: target.to_string(),
        reason,
    };
    if !matches!(target.scheme(), "http" | "https") {
        return not_followed("points to a scheme other than http or https");
    }
    if target.host() != current.host() {
        return not_followed("points to another host");
    }
    let same_origin = target.scheme() == current.scheme()
        && target.port_or_known_default() == current.port_or_known_default();
    let upgrade = current.scheme() == "http"
        && target.scheme() == "https"
        && current.port().is_none()
        && target.port().is_none();
    if same_origin || upgrade {
        Hop::Follow(target)
    } else if current.scheme() == "https" && target.scheme() == "http" {
        not_followed("downgrades from https to http")
    } else {
        not_followed("points to another port")
    }
}

/// What a fetch produced.
#[derive(Debug)]
pub(crate) struct Fetched {
    /// The URL last requested (after same-host redirects).
    pub(crate) url: Url,
    /// Same-host redirects followed.
    pub(crate) redirects: usize,
    /// The HTTP status of the last response.
    pub(crate) status: u16,
    /// Its `Content-Type`, if any.
    pub(crate) content_type: Option<String>,
    /// The body (possibly cut).
    pub(crate) body: Vec<u8>,
    /// The host's size cap, when it cut the body.
    pub(crate) cut_at: Option<u64>,
    /// A redirect that was not followed.
    pub(crate) unfollowed: Option<(String, &'static str)>,
}

/// How a body is shown.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
}

fn kind_of(content_type: Option<&str>, body: &[u8]) -> Kind {
    let essence = content_type
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let head = &body[..body.len().min(SNIFF_BYTES)];
    let looks_binary = head.contains(&0);
    match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "" => {
            let start = String::from_utf8_lossy(&head[..head.len().min(256)]).to_ascii_lowercase();
            let start = start.trim_start_matches('\u{feff}').trim_start();
            if start.starts_with("<!doctype html") || start.starts_with("<html") {
                Kind::Html
            } else if looks_binary || std::str::from_utf8(head).is_err() && head.len() < SNIFF_BYTES
            {
                Kind::Binary
            } else {
                Kind::Text
            }
        }
        other
            if other.starts_with("text/")
                || other.ends_with("+json")
                || other.ends_with("+xml")
                || matches!(
                    other,
                    "application/json"
                        | "application/xml"
                        | "application/javascript"
                        | "application/x-javascript"
                        | "application/ecmascript"
                        | "application/x-ndjson"
                        | "application/toml"
                        | "application/yaml"
                        | "application/x-yaml"
                ) =>
        {
            if looks_binary {
                Kind::Binary
            } else {
                Kind::Text
            }
        }
        _ => Kind::Binary,
    }
}

/// HTML converted to Markdown: scripts, styles and embedded objects dropped.
pub(crate) fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED_TAGS.to_vec())
        .build();
    match converter.convert(html) {
        Ok(markdown) => markdown,
        // The converter reports only I/O errors of its in-memory sink; keep the text readable.
        Err(_) => html.to_owned(),
    }
}

/// The text returned to the model.
pub(crate) fn render(fetched: &Fetched, prompt: &str) -> String {
    let mut out = String::new();
    if let Some((target, reason)) = &fetched.unfollowed {
        out.push_str(&format!(
            "{} answered {} with a redirect to {}; the redirect {reason}, so it was not \
             followed. Fetch that URL with WebFetch if it should be read.\n",
            fetched.url,
            fetched.status,
            quote(target)
        ));
        if !prompt.is_empty() {
            out.push_str(&format!("Prompt (echoed; janua runs no model): {prompt}\n"));
        }
        return out;
    }
    let kind = kind_of(fetched.content_type.as_deref(), &fetched.body);
    let content_type = fetched
        .content_type
        .as_deref()
        .map_or_else(|| "no content type".to_owned(), quote);
    out.push_str(&format!(
        "URL: {}\nStatus: {}\nContent-Type: {content_type}\nBytes: {}",
        fetched.url,
        fetched.status,
        fetched.body.len()
    ));
    if fetched.redirects > 0 {
        out.push_str(&format!(
            "\nRedirects followed: {} (same host)",
            fetched.redirects
        ));
    }
    if !prompt.is_empty() {
        out.push_str(&format!("\nPrompt (echoed; janua runs no model): {prompt}"));
    }
    if let Some(cap) = fetched.cut_at {
        out.push_str(&format!(
            "\n[The response was cut at {cap} bytes, the size cap; the rest was not read.]"
        ));
    }
    out.push_str("\n\n");
    let text = String::from_utf8_lossy(&fetched.body);
    let text = text.trim_start_matches('\u{feff}');
    match kind {
        Kind::Html => out.push_str(&html_to_markdown(text)),
        Kind::Text => out.push_str(text),
        Kind::Binary => out.push_str(&format!(
            "[Binary content ({content_type}, {} bytes) is not shown.]",
            fetched.body.len()
        )),
    }
    out
}

/// Server- or model-chosen text for a message: control characters escaped, length capped.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX_QUOTED_CHARS {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn accepts_only_http_urls_with_a_host() {
        assert!(parse_url("https://example.com/a?b#c").is_ok());
        assert!(parse_url("  http://127.0.0.1:8080/ ").is_ok());
        for bad in [
            "example.com",
            "ftp://example.com/",
            "file:///etc/passwd",
            "data:text/html,hi",
            "https://",
            "javascript:alert(1)",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        assert!(parse_url(&format!("https://a.com/{}", "x".repeat(MAX_URL_BYTES))).is_err());
    }

    #[test]
    fn redirect_table() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("http://a.com/x", "/y", Some("http://a.com/y")),
            ("http://a.com/x/y", "z?q=1#f", Some("http://a.com/x/z?q=1")),
            ("http://a.com/x", "https://a.com/x", Some("https://a.com/x")),
            (
                "http://a.com:8080/x",
                "http://a.com:8080/y",
                Some("http://a.com:8080/y"),
            ),
            ("http://A.com/x", "//a.COM/y", Some("http://a.com/y")),
            ("http://a.com/x", "http://b.com/x", None),
            ("http://a.com/x", "//b.com/x", None),
            ("http://a.com/x", "http://a.com.evil.com/", None),
            ("http://a.com/x", "http://a.com:8080/x", None),
            ("http://a.com:8080/x", "https://a.com:8080/x", None),
            ("https://a.com/x", "http://a.com/x", None),
            ("http://a.com/x", "ftp://a.com/x", None),
            ("http://a.com/x", "http://[::1]/", None),
            ("http://a.com/x", "http://evil.com\\@a.com/", None),
        ];
        for (from, location, expected) in cases {
            let hop = next_hop(&url(from), location);
            match expected {
                Some(to) => assert_eq!(hop, Hop::Follow(url(to)), "{from} -> {location}"),
                None => assert!(
                    matches!(hop, Hop::NotFollowed { .. }),
                    "{from} -> {location}: {hop:?}"
                ),
            }
        }
    }

    #[test]
    fn kinds_follow_the_content_type_and_the_bytes() {
        let cases: &[(Option<&str>, &[u8], Kind)] = &[
            (Some("text/html; charset=utf-8"), b"<p>x</p>", Kind::Html),
            (Some("TEXT/HTML"), b"x", Kind::Html),
            (Some("application/xhtml+xml"), b"x", Kind::Html),
            (Some("text/plain"), b"plain", Kind::Text),
            (Some("application/json"), b"{}", Kind::Text),
            (Some("application/ld+json"), b"{}", Kind::Text),
            (Some("text/plain"), b"a\0b", Kind::Binary),
            (Some("image/png"), b"\x89PNG", Kind::Binary),
            (Some("application/octet-stream"), b"text", Kind::Binary),
            (None, b"<!DOCTYPE html><p>x", Kind::Html),
            (None, b"just text", Kind::Text),
            (None, b"\xff\xfe\0", Kind::Binary),
        ];
        for (content_type, body, expected) in cases {
            assert_eq!(&kind_of(*content_type, body), expected, "{content_type:?}");
        }
    }

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let markdown = html_to_markdown(
            "<html><head><style>p{}</style><script>alert(1)</script></head><body>\
             <h1>Title</h1><p>Some <b>bold</b> and a <a href=\"/x\">link</a>.</p>\
             <ul><li>one</li><li>two</li></ul></body></html>",
        );
        assert!(markdown.contains("# Title"), "{markdown}");
        assert!(markdown.contains("**bold**"), "{markdown}");
        assert!(markdown.contains("[link](/x)"), "{markdown}");
        assert!(
            markdown.contains("one") && markdown.contains("two"),
            "{markdown}"
        );
        assert!(!markdown.contains("alert"), "{markdown}");
        assert!(!markdown.contains("p{}"), "{markdown}");
    }

    fn fetched(content_type: &str, body: &[u8]) -> Fetched {
        Fetched {
            url: url("https://a.com/"),
            redirects: 0,
            status: 200,
            content_type: Some(content_type.to_owned()),
            body: body.to_vec(),
            cut_at: None,
            unfollowed: None,
        }
    }

    #[test]
    fn renders_the_prompt_the_cut_and_unfollowed_redirects() {
        let mut page = fetched("text/plain", b"hello");
        page.cut_at = Some(5);
        let text = render(&page, "find x");
        assert!(
            text.contains("Prompt (echoed; janua runs no model): find x"),
            "{text}"
        );
        assert!(text.contains("cut at 5 bytes"), "{text}");
        assert!(text.ends_with("\n\nhello"), "{text}");

        let mut moved = fetched("text/html", b"");
        moved.status = 302;
        moved.unfollowed = Some((
            "https://b.com/\u{1b}[2J".to_owned(),
            "points to another host",
        ));
        let text = render(&moved, "");
        assert!(text.contains("https://b.com/\\u{1b}[2J"), "{text}");
        assert!(text.contains("not followed"), "{text}");

        let binary = render(&fetched("image/png", b"\x89PNG\0"), "");
        assert!(binary.contains("[Binary content"), "{binary}");
    }
}
