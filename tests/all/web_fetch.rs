//! The built-in WebFetch end to end, against a real HTTP server on 127.0.0.1 that each test starts
//! and that counts the requests it sees: conversion, the host policy (before any connection),
//! redirects, the size cap, the timeout and private addresses.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use janua::{ErrorKind, PermissionMode, RuntimeConfig};

use janua::sandbox::ProxySettings;
use serde_json::json;

use crate::support::{Fixture, call, error_text, ok_text};

const PAGE: &str = "<!DOCTYPE html><html><head><title>Test page</title>\
    <style>body { color: red }</style><script>document.write('tracking')</script></head>\
    <body><h1>Welcome</h1><p>Some <b>bold</b> text and <a href=\"/docs\">a link</a>.</p>\
    <ul><li>first</li><li>second</li></ul></body></html>";

/// A loopback HTTP/1.1 server with fixed routes; it counts every request it reads.
pub(crate) struct Server {
    address: SocketAddr,
    requests: Arc<AtomicUsize>,
    /// Requests whose target was an absolute URL: what a proxy receives.
    proxied: Arc<AtomicUsize>,
}

impl Server {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let address = listener.local_addr().expect("local address");
        let requests = Arc::new(AtomicUsize::new(0));
        let proxied = Arc::new(AtomicUsize::new(0));
        let (counter, absolute) = (Arc::clone(&requests), Arc::clone(&proxied));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (counter, absolute) = (Arc::clone(&counter), Arc::clone(&absolute));
                std::thread::spawn(move || serve(stream, &counter, &absolute));
            }
        });
        Self {
            address,
            requests,
            proxied,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.address.port())
    }

    pub(crate) fn port(&self) -> u16 {
        self.address.port()
    }

    pub(crate) fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

fn serve(stream: TcpStream, counter: &AtomicUsize, absolute: &AtomicUsize) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    counter.fetch_add(1, Ordering::SeqCst);
    let mut path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    if let Some(rest) = path.strip_prefix("http://") {
        absolute.fetch_add(1, Ordering::SeqCst);
        path = rest
            .find('/')
            .map_or("/".to_owned(), |slash| rest[slash..].to_owned());
    }
    let mut stream = stream;
    let respond = |stream: &mut TcpStream, status: &str, headers: &str, body: &[u8]| {
        let head = format!(
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body);
    };
    match path.as_str() {
        "/page" => respond(
            &mut stream,
            "200 OK",
            "Content-Type: text/html; charset=utf-8\r\n",
            PAGE.as_bytes(),
        ),
        "/same" => respond(&mut stream, "302 Found", "Location: /page\r\n", b""),
        "/away" => respond(
            &mut stream,
            "301 Moved Permanently",
            "Location: http://elsewhere.test/landing\r\n",
            b"",
        ),
        "/big" => respond(
            &mut stream,
            "200 OK",
            "Content-Type: text/plain\r\n",
            &vec![b'a'; 1 << 20],
        ),
        "/slow" => std::thread::sleep(Duration::from_secs(20)),
        _ => respond(&mut stream, "404 Not Found", "", b"nothing here"),
    }
}

/// A runtime where WebFetch may fetch `allowed` hosts, 127.0.0.1 may be reached, and no proxy
/// from the environment interferes.
async fn runtime(
    fixture: &Fixture,
    allowed: &str,
    configure: impl FnOnce(&mut RuntimeConfig),
) -> janua::Runtime {
    fixture
        .runtime(&[], |c| {
            c.allowed_tools = vec![allowed.to_owned()];
            c.net.proxy = ProxySettings::default();
            c.net.allow_private_hosts = vec!["127.0.0.1".to_owned()];
            configure(c);
        })
        .await
}

fn fetch(url: &str) -> serde_json::Value {
    json!({"url": url, "prompt": "what is on the page?"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_a_granted_host_and_converts_html_to_markdown() {
    let server = Server::start();
    let fixture = Fixture::new();
    let runtime = runtime(&fixture, "WebFetch(domain:127.0.0.1)", |_| {}).await;
    let page = call(&runtime, "WebFetch", fetch(&server.url("/page"))).await;
    let text = ok_text(&page);
    assert!(text.contains("# Welcome"), "{text}");
    assert!(text.contains("**bold**"), "{text}");
    assert!(text.contains("[a link](/docs)"), "{text}");
    assert!(
        text.contains("*   first") && text.contains("*   second"),
        "{text}"
    );
    assert!(
        !text.contains("tracking") && !text.contains("color: red"),
        "{text}"
    );
    assert!(text.contains("Status: 200"), "{text}");
    assert!(
        text.contains("Prompt (echoed; janua runs no model): what is on the page?"),
        "{text}"
    );
    // A same-host redirect is followed; each hop is a request the host checked.
    let moved = call(&runtime, "WebFetch", fetch(&server.url("/same"))).await;
    let text = ok_text(&moved);
    assert!(text.contains("# Welcome"), "{text}");
    assert!(text.contains("Redirects followed: 1"), "{text}");
    assert_eq!(server.requests(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_a_host_no_rule_allows_before_connecting() {
    let server = Server::start();
    let fixture = Fixture::new();
    let runtime = runtime(&fixture, "WebFetch(domain:docs.example.com)", |_| {}).await;
    let denied = call(&runtime, "WebFetch", fetch(&server.url("/page"))).await;
    error_text(&denied, ErrorKind::PermissionDenied);
    assert_eq!(server.requests(), 0, "the server must see no request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_a_redirect_to_another_host_without_following_it() {
    let server = Server::start();
    let fixture = Fixture::new();
    let runtime = runtime(&fixture, "WebFetch(domain:127.0.0.1)", |_| {}).await;
    let moved = call(&runtime, "WebFetch", fetch(&server.url("/away"))).await;
    let text = ok_text(&moved);
    assert!(text.contains("http://elsewhere.test/landing"), "{text}");
    assert!(text.contains("points to another host"), "{text}");
    assert!(text.contains("not followed"), "{text}");
    assert_eq!(server.requests(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cuts_a_body_over_the_size_cap() {
    let server = Server::start();
    let fixture = Fixture::new();
    let runtime = runtime(&fixture, "WebFetch(domain:127.0.0.1)", |c| {
        c.net.max_response_bytes = 64 << 10;
    })
    .await;
    let big = call(&runtime, "WebFetch", fetch(&server.url("/big"))).await;
    let text = ok_text(&big);
    assert!(
        text.contains("Bytes: 65536"),
        "{}",
        &text[..300.min(text.len())]
    );
    assert!(
        text.contains("cut at 65536 bytes, the size cap"),
        "{}",
        &text[..300.min(text.len())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stops_a_slow_server_with_a_timeout() {
    let server = Server::start();
    let fixture = Fixture::new();
    let runtime = runtime(&fixture, "WebFetch(domain:127.0.0.1)", |c| {
        c.net.request_timeout = Duration::from_secs(1);
    })
    .await;
    let started = std::time::Instant::now();
    let slow = call(&runtime, "WebFetch", fetch(&server.url("/slow"))).await;
    let text = error_text(&slow, ErrorKind::Timeout);
    assert!(text.contains("timed out"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_localhost_unless_the_operator_allows_it() {
    let server = Server::start();
    let fixture = Fixture::new();
    let url = format!("http://localhost:{}/page", server.port());
    // Allowed by the rules (and by bypassPermissions), but localhost is a loopback address.
    for mode in [None, Some(PermissionMode::BypassPermissions)] {
        let runtime = runtime(&fixture, "WebFetch(domain:localhost)", |c| {
            c.permission_mode = mode;
        })
        .await;
        let denied = call(&runtime, "WebFetch", fetch(&url)).await;
        let text = error_text(&denied, ErrorKind::PermissionDenied);
        assert!(text.contains("allowPrivateNetworkHosts"), "{text}");
        assert_eq!(server.requests(), 0, "the server must see no request");
    }
    // The operator's settings name it: fetched.
    let runtime = runtime(&fixture, "WebFetch(domain:localhost)", |c| {
        c.settings_json = vec![json!({"allowPrivateNetworkHosts": ["localhost"]}).to_string()];
    })
    .await;
    let page = call(&runtime, "WebFetch", fetch(&url)).await;
    assert!(ok_text(&page).contains("# Welcome"));
    assert_eq!(server.requests(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goes_through_the_http_proxy_when_one_is_set() {
    let proxy = Server::start();
    let fixture = Fixture::new();
    // 127.0.0.2 is checked (allowed private by the operator) but never connected to: the request
    // goes to the proxy, in absolute form.
    let proxied = runtime(&fixture, "WebFetch(domain:127.0.0.2)", |c| {
        c.net.allow_private_hosts = vec!["127.0.0.2".to_owned()];
        c.net.proxy.http = Some(format!("http://127.0.0.1:{}", proxy.port()));
    })
    .await;
    let page = call(&proxied, "WebFetch", fetch("http://127.0.0.2:9/page")).await;
    assert!(ok_text(&page).contains("# Welcome"));
    assert_eq!(proxy.proxied.load(Ordering::SeqCst), 1);
    // NO_PROXY sends it directly (to a port where nothing listens).
    let bypassed = runtime(&fixture, "WebFetch(domain:127.0.0.2)", |c| {
        c.net.allow_private_hosts = vec!["127.0.0.2".to_owned()];
        c.net.proxy.http = Some(format!("http://127.0.0.1:{}", proxy.port()));
        c.net.proxy.no_proxy = vec!["127.0.0.2".to_owned()];
    })
    .await;
    let direct = call(&bypassed, "WebFetch", fetch("http://127.0.0.2:9/page")).await;
    error_text(&direct, ErrorKind::ToolFailed);
    assert_eq!(proxy.requests(), 1);
}

/// Issue 31, point 6: every IPv6 form that carries an IPv4 address is refused as that address
/// (NAT64 well-known and local-use, SIIT, 6to4, Teredo, ISATAP), before any connection. The
/// control: the IPv4-mapped spelling of the loopback address the operator listed (127.0.0.1)
/// does reach the server, as that address itself does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_forms_of_a_private_ipv4_address_are_refused_as_that_address() {
    let server = Server::start();
    let fixture = Fixture::new();
    let runtime = runtime(&fixture, "WebFetch", |c| {
        c.permission_mode = Some(PermissionMode::BypassPermissions);
    })
    .await;
    let port = server.port();
    for host in [
        "[64:ff9b::7f00:1]",
        "[64:ff9b:1::7f00:1]",
        "[::ffff:0:7f00:1]",
        "[2002:7f00:1::1]",
        "[2001:0:7f00:1::1]",
        "[2001:0:808:808::80ff:fffe]",
        "[2606:4700::5efe:7f00:1]",
        "[64:ff9b::a9fe:a9fe]",
    ] {
        let url = format!("http://{host}:{port}/page");
        let refused = call(&runtime, "WebFetch", fetch(&url)).await;
        let text = error_text(&refused, ErrorKind::PermissionDenied);
        assert!(
            text.contains("loopback (127.0.0.0/8)") || text.contains("link-local"),
            "{host}: {text}"
        );
    }
    assert_eq!(server.requests(), 0, "the server must see no request");
    let mapped = format!("http://[::ffff:7f00:1]:{port}/page");
    let page = call(&runtime, "WebFetch", fetch(&mapped)).await;
    assert!(ok_text(&page).contains("# Welcome"));
    let page = call(&runtime, "WebFetch", fetch(&server.url("/page"))).await;
    assert!(ok_text(&page).contains("# Welcome"));
    assert_eq!(server.requests(), 2);
}

/// Issue 31, point 6: an `HTTP_PROXY` janua inherits is never used (the proxy, not janua, would
/// resolve the names); the operator's `networkProxy` setting is. Through the binary, with the
/// environment a harness would set.
#[test]
fn an_inherited_proxy_is_ignored_and_the_operators_network_proxy_is_used() {
    let proxy = Server::start();
    let fixture = Fixture::new();
    let proxy_url = format!("http://127.0.0.1:{}", proxy.port());
    let fetch_with = |settings: serde_json::Value| {
        let input = fetch("http://127.0.0.2:9/page").to_string();
        let settings = settings.to_string();
        std::process::Command::new(crate::support::janua_bin())
            .args([
                "--no-user-settings",
                "--allowedTools",
                "WebFetch(domain:127.0.0.2)",
            ])
            .args(["--settings", &settings])
            .args(["call", "WebFetch", "--input", &input, "--state-dir"])
            .arg(fixture.state_dir())
            .arg("--cache-dir")
            .arg(crate::support::cache_dir())
            .current_dir(fixture.workspace())
            .env("HTTP_PROXY", &proxy_url)
            .env("http_proxy", &proxy_url)
            .output()
            .expect("run janua call")
    };
    // 127.0.0.2:9 has no listener: without the proxy the fetch fails.
    let direct = fetch_with(json!({"allowPrivateNetworkHosts": ["127.0.0.2"]}));
    assert_eq!(direct.status.code(), Some(1), "{direct:?}");
    assert_eq!(proxy.requests(), 0, "the inherited proxy was used");
    let proxied = fetch_with(json!({
        "allowPrivateNetworkHosts": ["127.0.0.2"],
        "networkProxy": {"http": proxy_url},
    }));
    assert!(
        String::from_utf8_lossy(&proxied.stdout).contains("# Welcome"),
        "{proxied:?}"
    );
    assert_eq!(proxy.proxied.load(Ordering::SeqCst), 1);
    // A repository cannot choose the proxy: the project file's networkProxy is not used.
    fixture.write(
        ".janua/settings.json",
        json!({"networkProxy": {"http": proxy_url}}).to_string(),
    );
    let project = fetch_with(json!({"allowPrivateNetworkHosts": ["127.0.0.2"]}));
    assert_eq!(project.status.code(), Some(1), "{project:?}");
    assert!(
        String::from_utf8_lossy(&project.stderr).contains("networkProxy in"),
        "{project:?}"
    );
    assert_eq!(proxy.proxied.load(Ordering::SeqCst), 1);
}

/// Issue 31, point 6: a host the rules refuse is never even resolved (no lookup can leak its
/// name to a resolver): with a deny rule naming `localhost`, janua opens no `/etc/hosts`, which
/// every lookup of the C library reads first. Control in the same test: allowed, the same fetch
/// looks the name up (then refuses the loopback address it finds).
#[test]
fn a_host_the_rules_refuse_is_never_resolved() {
    let fixture = Fixture::new();
    let input = fetch("http://localhost:9/page").to_string();
    let traced = |label: &str, rules: &[&str]| -> (String, String) {
        let trace = fixture.root().join(format!("trace-{label}"));
        let output = std::process::Command::new("strace")
            .args(["-f", "-e", "trace=open,openat", "-o"])
            .arg(&trace)
            .arg(crate::support::janua_bin())
            .arg("--no-user-settings")
            .args(rules)
            .args(["call", "WebFetch", "--input", &input, "--state-dir"])
            .arg(fixture.state_dir())
            .arg("--cache-dir")
            .arg(crate::support::cache_dir())
            .current_dir(fixture.workspace())
            .output()
            .expect("strace runs (Debian: apt-get install strace)");
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            std::fs::read_to_string(&trace).expect("the trace"),
        )
    };
    let (refused, trace) = traced(
        "refused",
        &[
            "--allowedTools",
            "WebFetch",
            "--disallowedTools",
            "WebFetch(domain:localhost)",
        ],
    );
    assert!(refused.contains("permission_denied"), "{refused}");
    assert!(
        !trace.contains("/etc/hosts"),
        "the refused host was looked up"
    );
    let (allowed, trace) = traced("allowed", &["--allowedTools", "WebFetch(domain:localhost)"]);
    assert!(allowed.contains("allowPrivateNetworkHosts"), "{allowed}");
    assert!(trace.contains("/etc/hosts"), "an allowed host is looked up");
}
