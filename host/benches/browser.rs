//! Browser benchmarks: the built-in `Browser` tool end to end against a page served on 127.0.0.1
//! (pipeline, a fresh browser context and page, every request answered by the host under the
//! net policy, the steps), with the session's first call (which starts Chromium under the
//! process sandbox) measured on its own.
//!
//! `cargo bench -p janua --bench browser` prints Markdown rows for `BENCHMARKS.md`. It needs
//! Chromium (`janua doctor`); without Debian's, `JANUA_BROWSER=$(bash tests/browser/setup.sh
//! target/tmp/browser)` names one provisioned from the npm registry.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::time::Instant;

use common::{bench, dispatch, row};
use janua::sandbox::ProxySettings;
use janua::{Runtime, RuntimeConfig};
use serde_json::json;

const PAGE: &str = "<!DOCTYPE html><title>Bench</title><input id=\"q\"><button id=\"go\" \
    onclick=\"document.getElementById('out').textContent = document.getElementById('q').value\">\
    Go</button><p id=\"out\"></p><script>fetch('/data').then(r => r.text())\
    .then(t => document.title = t)</script>";

/// Serves `PAGE` at every path but `/data`, which answers a short text, on 127.0.0.1.
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let data = line.contains("/data");
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                }
                let body = if data { "Loaded" } else { PAGE };
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

fn main() {
    common::block_on(run());
}

async fn runtime(root: &std::path::Path, workspace: &std::path::Path) -> Runtime {
    let mut config = RuntimeConfig::new(workspace);
    config.state_dir = Some(root.join("state"));
    config.cache_dir = Some(root.join("cache"));
    config.allowed_tools = vec!["Browser(domain:127.0.0.1)".to_owned()];
    config.net.proxy = ProxySettings::default();
    config.net.allow_private_hosts = vec!["127.0.0.1".to_owned()];
    Runtime::new(config).await.expect("runtime")
}

async fn run() {
    if let Err(error) = janua::sandbox::find_browser() {
        panic!(
            "the browser benchmark needs Chromium: {error}; \
             `JANUA_BROWSER=$(bash tests/browser/setup.sh target/tmp/browser)` provisions one"
        );
    }
    let (root, workspace) = common::temp_workspace();
    let port = serve();
    let url = format!("http://127.0.0.1:{port}/");
    println!("| what one iteration does | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");

    // A new session's first call starts the browser; ten sessions, one call each.
    let mut samples = Vec::new();
    for _ in 0..10 {
        let runtime = runtime(root.path(), &workspace).await;
        let started = Instant::now();
        let result = dispatch(&runtime, "Browser", &json!({"url": url})).await;
        samples.push(started.elapsed());
        assert!(result.outcome.error.is_none(), "{:?}", result.block);
        runtime.end_session("bench").await;
    }
    row(
        "a session's first `Browser` call: start Chromium (sandboxed), open, read the text",
        &mut samples,
    );

    let runtime = runtime(root.path(), &workspace).await;
    bench(
        &runtime,
        "`Browser` open + page text (fresh context and page per call)",
        "Browser",
        &json!({"url": url}),
        50,
    )
    .await;
    bench(
        &runtime,
        "`Browser` open, wait for network idle (the page's fetch), type, click, read an element",
        "Browser",
        &json!({"url": url, "actions": [
            {"action": "wait_for_network_idle", "idle_ms": 50},
            {"action": "type", "selector": "#q", "text": "abc"},
            {"action": "click", "selector": "#go"},
            {"action": "text", "selector": "#out"},
        ]}),
        30,
    )
    .await;
    bench(
        &runtime,
        "`Browser` open + a 1280x800 PNG screenshot",
        "Browser",
        &json!({"url": url, "screenshot": true}),
        30,
    )
    .await;
    runtime.end_session("bench").await;
}
