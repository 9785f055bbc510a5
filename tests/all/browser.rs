//! The built-in Browser end to end, on a real headless Chromium (Debian's `chromium` where it is
//! installed, else one provisioned from the npm registry, see [`test_browser`]), against pages
//! served by each test on 127.0.0.1 and a second server on 127.0.0.2 that stands for a host
//! nobody granted: every request that second server sees is a hole.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine as _;
use janua::sandbox::ProxySettings;
use janua::{ContentBlock, ErrorKind, PermissionMode, ResultContent};
use serde_json::{Value, json};

use crate::support::{Fixture, call, error_text, janua_bin, ok_text};

/// A loopback HTTP/1.1 server on `ip` with the routes below; it records every request path.
struct Site {
    address: SocketAddr,
    paths: Arc<Mutex<Vec<String>>>,
    requests: Arc<AtomicUsize>,
}

impl Site {
    /// Serves on `ip`; `other` is the base URL pages point at for the other host.
    fn start(ip: &str, other: Option<&str>) -> Self {
        let listener = TcpListener::bind((ip, 0)).expect("bind loopback");
        let address = listener.local_addr().expect("local address");
        let paths = Arc::new(Mutex::new(Vec::new()));
        let requests = Arc::new(AtomicUsize::new(0));
        let other = other.unwrap_or("http://127.0.0.2:9").to_owned();
        let (seen, counter) = (Arc::clone(&paths), Arc::clone(&requests));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (seen, counter, other) =
                    (Arc::clone(&seen), Arc::clone(&counter), other.clone());
                std::thread::spawn(move || serve(stream, &seen, &counter, &other));
            }
        });
        Self {
            address,
            paths,
            requests,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    fn paths(&self) -> Vec<String> {
        self.paths.lock().unwrap().clone()
    }
}

const APP: &str = "<!DOCTYPE html><html><head><title>Shop</title></head><body>\
    <div id=\"app\">loading…</div>\
    <script>fetch('/data').then(r => r.json()).then(d => {\
      document.getElementById('app').textContent = 'Items: ' + d.items.join(', ');\
    });</script></body></html>";

const FORM: &str = "<!DOCTYPE html><html><head><title>Greeter</title></head><body>\
    <label>Name <input id=\"name\"></label><button id=\"greet\">Greet</button><p id=\"out\"></p>\
    <script>document.getElementById('greet').addEventListener('click', () => {\
      document.getElementById('out').textContent = 'Hello, ' + document.querySelector('#name').value + '!';\
    });</script></body></html>";

const RED: &str = "<!DOCTYPE html><html><head><title>Red</title></head>\
    <body style=\"margin:0;background:#ff0000\"></body></html>";

fn serve(stream: TcpStream, seen: &Mutex<Vec<String>>, counter: &AtomicUsize, other: &str) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut cookie = None;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("cookie") {
                cookie = Some(value.trim().to_owned());
            }
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length.min(1 << 20)];
    let _ = std::io::Read::read_exact(&mut reader, &mut body);
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    counter.fetch_add(1, Ordering::SeqCst);
    seen.lock().unwrap().push(path.clone());
    let mut stream = stream;
    let mut respond = |status: &str, headers: &str, body: &[u8]| {
        let head = format!(
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body);
    };
    let html = "Content-Type: text/html; charset=utf-8\r\n";
    match path.as_str() {
        "/app" => respond("200 OK", html, APP.as_bytes()),
        "/data" => respond(
            "200 OK",
            "Content-Type: application/json\r\n",
            br#"{"items": ["alpha", "beta"]}"#,
        ),
        "/form" => respond("200 OK", html, FORM.as_bytes()),
        "/red" => respond("200 OK", html, RED.as_bytes()),
        "/leak" => respond(
            "200 OK",
            html,
            format!(
                "<!DOCTYPE html><title>Leak</title><p>visible</p>\
                 <img src=\"{other}/pixel.png\"><script src=\"{other}/x.js\"></script>\
                 <iframe src=\"{other}/frame\"></iframe>"
            )
            .as_bytes(),
        ),
        "/away" => respond("302 Found", &format!("Location: {other}/landing\r\n"), b""),
        "/link" => respond(
            "200 OK",
            html,
            format!(
                "<!DOCTYPE html><title>Link</title><a id=\"go\" href=\"{other}/landing\">go</a>"
            )
            .as_bytes(),
        ),
        "/hang" => std::thread::sleep(Duration::from_secs(60)),
        "/worker" => respond(
            "200 OK",
            html,
            b"<title>Worker</title><p id=\"out\">waiting</p><script>\
              const w = new Worker('/worker.js');\
              w.onmessage = e => document.getElementById('out').textContent = e.data;</script>",
        ),
        "/worker.js" => respond(
            "200 OK",
            "Content-Type: text/javascript\r\n",
            format!(
                "fetch('{other}/from-worker').catch(() => {{}});\
                 fetch('/data').then(r => r.json()).then(d => postMessage('worker got ' + d.items.join(',')));"
            )
            .as_bytes(),
        ),
        "/post" => respond(
            "200 OK",
            html,
            b"<title>Post</title><form method=\"post\" action=\"/echo\">\
              <input name=\"q\" value=\"hello world\"><button id=\"send\">Send</button></form>",
        ),
        "/echo" => respond(
            "200 OK",
            "Content-Type: text/plain\r\n",
            format!("posted: {}", String::from_utf8_lossy(&body)).as_bytes(),
        ),
        "/login" => respond(
            "200 OK",
            &format!("{html}Set-Cookie: session=s3cret; Path=/\r\n"),
            b"<title>Login</title><script>document.cookie = 'theme=dark; path=/';\
              fetch('/whoami').then(r => r.text()).then(t => document.body.textContent = t);</script>",
        ),
        "/whoami" => respond(
            "200 OK",
            "Content-Type: text/plain\r\n",
            format!("cookies: {}", cookie.unwrap_or_default()).as_bytes(),
        ),
        "/landing" => respond("200 OK", html, b"<title>Landed</title><p>landed</p>"),
        "/spin" => respond(
            "200 OK",
            html,
            b"<title>Spin</title><p>spinning</p><script>setTimeout(() => { for (;;) {} }, 300);</script>",
        ),
        "/dialog" => respond(
            "200 OK",
            html,
            b"<title>Dialog</title><script>alert('hello'); document.title = 'After';</script><p>after the dialog</p>",
        ),
        _ => respond("404 Not Found", "", b"nothing here"),
    }
}

/// The Chromium the tests drive: the one janua finds itself (`JANUA_BROWSER`, Debian's
/// `chromium`), else one `tests/browser/setup.sh` provisions from the npm registry into the target
/// directory. The suite never passes without exercising a real browser.
fn test_browser() -> PathBuf {
    static BROWSER: OnceLock<PathBuf> = OnceLock::new();
    BROWSER
        .get_or_init(|| {
            if let Ok(path) = janua::sandbox::find_browser() {
                return path;
            }
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser");
            let output = std::process::Command::new("bash")
                .arg(crate::mcp_support::repo().join("tests/browser/setup.sh"))
                .arg(&dir)
                .output()
                .expect("run tests/browser/setup.sh");
            assert!(
                output.status.success(),
                "the Browser tests need Chromium: none is installed and tests/browser/setup.sh {} \
                 failed (it needs npm and the npm registry): {}",
                dir.display(),
                String::from_utf8_lossy(&output.stderr)
            );
            PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
        })
        .clone()
}

/// A runtime where Browser may open 127.0.0.1 (rule and operator), nothing else.
async fn runtime(fixture: &Fixture) -> janua::Runtime {
    fixture
        .runtime(&[], |c| {
            c.browser = Some(test_browser());
            c.allowed_tools = vec!["Browser(domain:127.0.0.1)".to_owned()];
            c.net.proxy = ProxySettings::default();
            c.net.allow_private_hosts = vec!["127.0.0.1".to_owned()];
        })
        .await
}

/// One `Browser` call opening `url` and running `actions`.
async fn browse(runtime: &janua::Runtime, url: &str, actions: Value) -> janua::Dispatch {
    call(runtime, "Browser", json!({"url": url, "actions": actions})).await
}

/// The PNG images of a result.
fn images(dispatch: &janua::Dispatch) -> Vec<Vec<u8>> {
    match &dispatch.block.content {
        ResultContent::Text(_) => Vec::new(),
        ResultContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Image { source } => {
                    assert_eq!(source.media_type, "image/png");
                    Some(
                        base64::engine::general_purpose::STANDARD
                            .decode(&source.data)
                            .expect("base64 image"),
                    )
                }
                ContentBlock::Text { .. } => None,
            })
            .collect(),
    }
}

/// Processes of a browser whose profile lies under `marker` (the fixture's state directory): the
/// browser names its profile in `HOME`, and every process it starts runs in the profile, which
/// its working directory still names after helpers drop their environment (Chromium's headless
/// shell starts its zygotes and renderers with none).
fn processes_with(marker: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let home = std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|byte| *byte == 0)
                    .any(|var| var.starts_with(b"HOME=") && contains(var, marker.as_bytes()))
            });
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd"))
                .is_ok_and(|cwd| cwd.to_string_lossy().starts_with(marker));
            home || cwd
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// Waits up to 10 s for every process naming `marker` to be gone; the ones left.
fn gone(marker: &str) -> Vec<i32> {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_with(marker);
        if left.is_empty() || Instant::now() >= until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_a_page_javascript_renders() {
    let fixture = Fixture::new();
    let site = Site::start("127.0.0.1", None);
    let runtime = runtime(&fixture).await;
    let result = browse(
        &runtime,
        &site.url("/app"),
        json!([
            {"action": "wait_for_network_idle"},
            {"action": "text", "selector": "#app"},
            {"action": "evaluate", "expression": "document.querySelectorAll('div').length"},
            {"action": "accessibility_tree"},
        ]),
    )
    .await;
    let text = ok_text(&result);
    assert!(text.starts_with("Shop — http://127.0.0.1:"), "{text}");
    assert!(text.contains("(HTTP 200)"), "{text}");
    assert!(
        text.contains("2. text of \"#app\": Items: alpha, beta"),
        "{text}"
    );
    assert!(text.contains("3. evaluate: 1"), "{text}");
    assert!(text.contains("RootWebArea \"Shop\""), "{text}");
    assert!(!text.contains("loading…"), "{text}");
    let paths = site.paths();
    assert!(
        paths.contains(&"/app".to_owned()) && paths.contains(&"/data".to_owned()),
        "{paths:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clicking_and_typing_change_the_page() {
    let fixture = Fixture::new();
    let site = Site::start("127.0.0.1", None);
    let runtime = runtime(&fixture).await;
    let result = browse(
        &runtime,
        &site.url("/form"),
        json!([
            {"action": "text", "selector": "#out"},
            {"action": "type", "selector": "#name", "text": "Ada"},
            {"action": "click", "selector": "#greet"},
            {"action": "text", "selector": "#out"},
            {"action": "evaluate", "expression": "document.querySelector('#name').value"},
        ]),
    )
    .await;
    let text = ok_text(&result);
    assert!(text.contains("1. text of \"#out\": \n2. type"), "{text}");
    assert!(
        text.contains("2. type into \"#name\": typed 3 characters"),
        "{text}"
    );
    assert!(text.contains("4. text of \"#out\": Hello, Ada!"), "{text}");
    assert!(text.contains("5. evaluate: \"Ada\""), "{text}");

    // A selector that matches nothing fails the call, with the steps done before it.
    let missing = call(
        &runtime,
        "Browser",
        json!({
            "url": site.url("/form"),
            // Long enough for the page to load on a loaded host; the click still runs out.
            "timeout_ms": 3000,
            "actions": [
                {"action": "type", "selector": "#name", "text": "x"},
                {"action": "click", "selector": "#nothing"},
            ],
        }),
    )
    .await;
    // Like a person, the click waits for the element to appear, up to the step's limit.
    let text = error_text(&missing, ErrorKind::Timeout);
    assert!(
        text.contains("step 2 (click \"#nothing\") failed: no element matched"),
        "{text}"
    );
    assert!(text.contains("1. type into \"#name\""), "{text}");

    // Cookies a response set and cookies the page's script set go with the page's next request
    // (the host makes the request, so it asks the page's cookie jar).
    let login = browse(
        &runtime,
        &site.url("/login"),
        json!([{"action": "wait_for_network_idle"}, {"action": "text"}]),
    )
    .await;
    let text = ok_text(&login);
    assert!(text.contains("session=s3cret"), "{text}");
    assert!(text.contains("theme=dark"), "{text}");

    // A form post: the host sends the body the page gave.
    let post = browse(
        &runtime,
        &site.url("/post"),
        json!([{"action": "click", "selector": "#send"}, {"action": "wait_for_network_idle"}]),
    )
    .await;
    let text = ok_text(&post);
    assert!(text.contains("posted: q=hello+world"), "{text}");

    // evaluate is read-only: V8 refuses an expression with a side effect, and the page keeps
    // its state (a fresh call: a fresh page).
    let write = browse(
        &runtime,
        &site.url("/form"),
        json!([{"action": "evaluate", "expression": "document.title = 'changed'"}]),
    )
    .await;
    let text = error_text(&write, ErrorKind::ToolFailed);
    assert!(text.contains("script_error"), "{text}");
    assert!(text.contains("read-only"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_is_a_png_of_the_viewport() {
    let fixture = Fixture::new();
    let site = Site::start("127.0.0.1", None);
    let runtime = runtime(&fixture).await;
    let result = call(
        &runtime,
        "Browser",
        json!({"url": site.url("/red"), "screenshot": true, "actions": [{"action": "screenshot"}]}),
    )
    .await;
    let text = ok_text(&result);
    assert!(text.contains("1. screenshot: image 1 below"), "{text}");
    let images = images(&result);
    assert_eq!(images.len(), 2, "{text}");
    for image in images {
        let decoder = png::Decoder::new(std::io::Cursor::new(image));
        let mut reader = decoder.read_info().expect("a PNG header");
        let mut pixels = vec![0; reader.output_buffer_size().expect("buffer size")];
        let frame = reader.next_frame(&mut pixels).expect("the PNG decodes");
        assert_eq!((frame.width, frame.height), (1280, 800));
        let channels = frame.color_type.samples();
        let centre = ((400 * 1280 + 640) * channels) as usize;
        assert_eq!(
            &pixels[centre..centre + 3],
            [255, 0, 0],
            "the page's red background"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_to_a_host_nobody_granted_never_leave() {
    let fixture = Fixture::new();
    let other = Site::start("127.0.0.2", None);
    let base = format!("http://{}", other.address);
    let site = Site::start("127.0.0.1", Some(&base));
    let runtime = runtime(&fixture).await;

    // Subresources (image, script, frame) from the other host: the page loads, they do not.
    let leak = call(&runtime, "Browser", json!({"url": site.url("/leak")})).await;
    let text = ok_text(&leak);
    assert!(text.contains("visible"), "{text}");
    assert!(
        text.contains("Requests refused by the network policy:"),
        "{text}"
    );
    assert!(text.contains(&format!("{base}/pixel.png")), "{text}");
    assert!(text.contains(&format!("{base}/x.js")), "{text}");

    // A worker's requests are the host's to answer too: its own host, yes; the other, no.
    let worker = browse(
        &runtime,
        &site.url("/worker"),
        json!([{"action": "wait_for_network_idle"}, {"action": "text", "selector": "#out"}]),
    )
    .await;
    let text = ok_text(&worker);
    assert!(text.contains("worker got alpha,beta"), "{text}");
    assert!(text.contains(&format!("{base}/from-worker")), "{text}");

    // A redirect of the page itself to the other host.
    let away = call(&runtime, "Browser", json!({"url": site.url("/away")})).await;
    let text = error_text(&away, ErrorKind::PermissionDenied);
    assert!(text.contains("127.0.0.2"), "{text}");

    // A link the page follows on a click.
    let link = browse(
        &runtime,
        &site.url("/link"),
        json!([{"action": "click", "selector": "#go"}, {"action": "text"}]),
    )
    .await;
    let text = ok_text(&link);
    assert!(!text.contains("landed"), "{text}");
    assert!(text.contains(&format!("{base}/landing")), "{text}");

    // Opening it directly: the permission decision asks, nobody answers, so it is denied.
    let direct = call(
        &runtime,
        "Browser",
        json!({"url": format!("{base}/landing")}),
    )
    .await;
    error_text(&direct, ErrorKind::PermissionDenied);

    assert_eq!(
        other.requests(),
        0,
        "the other host saw {:?}",
        other.paths()
    );
    assert!(site.requests() >= 3, "{:?}", site.paths());
}

/// A page's subresources on a host the rules refuse are never even looked up (no DNS query can
/// carry data out): `strace` follows janua (and detaches from the browser at its `execve`, whose
/// own resolver answers nothing), and the name service's `/etc/hosts` is opened only when the
/// rules allow the host, as the control shows.
#[test]
fn a_host_the_rules_refuse_is_never_resolved_for_a_page() {
    let fixture = Fixture::new();
    let site = Site::start("127.0.0.1", Some("http://localhost:9"));
    let traced = |label: &str, rule: &str| -> (Value, String) {
        let trace = fixture.root().join(format!("trace-{label}"));
        let settings = json!({
            "allowPrivateNetworkHosts": ["127.0.0.1"],
            "permissions": {"allow": ["Browser(domain:127.0.0.1)", rule]},
        });
        let output = std::process::Command::new("strace")
            .args(["-f", "-b", "execve", "-e", "trace=open,openat", "-o"])
            .arg(&trace)
            .arg(janua_bin())
            .args(["call", "Browser", "--no-user-settings", "--cwd"])
            .arg(fixture.workspace())
            .arg("--state-dir")
            .arg(fixture.root().join(format!("state-{label}")))
            .arg("--settings")
            .arg(settings.to_string())
            .arg("--input")
            .arg(
                json!({"url": site.url("/leak"), "actions": [{"action": "wait_for_network_idle"}]})
                    .to_string(),
            )
            .env("JANUA_CACHE_DIR", crate::support::cache_dir())
            .env("JANUA_BROWSER", test_browser())
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .output()
            .expect("strace runs (Debian: apt-get install strace)");
        let block: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
            panic!(
                "a tool_result ({error}): {}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        (block, std::fs::read_to_string(&trace).expect("the trace"))
    };
    // Building the browser's Landlock rules opens every `/etc` entry as a path only (`O_PATH`);
    // a lookup reads the file.
    let looked_up = |trace: &str| {
        trace
            .lines()
            .any(|line| line.contains("\"/etc/hosts\"") && !line.contains("O_PATH"))
    };
    let (refused, trace) = traced("refused", "Browser(domain:example.com)");
    assert_eq!(refused["is_error"], false, "{refused}");
    let text = refused.to_string();
    assert!(text.contains("http://localhost:9/pixel.png"), "{text}");
    assert!(!looked_up(&trace), "the refused host was looked up");
    let (allowed, trace) = traced("allowed", "Browser(domain:localhost)");
    assert_eq!(allowed["is_error"], false, "{allowed}");
    assert!(
        allowed
            .to_string()
            .contains("localhost resolves to 127.0.0.1"),
        "{allowed}"
    );
    assert!(looked_up(&trace), "an allowed host is looked up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_stay_closed_even_when_every_call_is_allowed() {
    let fixture = Fixture::new();
    let other = Site::start("127.0.0.2", None);
    let runtime = fixture
        .runtime(&[], |c| {
            c.browser = Some(test_browser());
            c.permission_mode = Some(PermissionMode::BypassPermissions);
            c.net.proxy = ProxySettings::default();
        })
        .await;
    let result = call(&runtime, "Browser", json!({"url": other.url("/landing")})).await;
    let text = error_text(&result, ErrorKind::PermissionDenied);
    assert!(text.contains("loopback"), "{text}");
    assert!(text.contains("allowPrivateNetworkHosts"), "{text}");
    assert_eq!(other.requests(), 0, "{:?}", other.paths());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_loads_hits_its_deadline() {
    let fixture = Fixture::new();
    let site = Site::start("127.0.0.1", None);
    let runtime = runtime(&fixture).await;
    // The browser starts first, so the call's 1.5 s go to the page alone even on a loaded host.
    let warm = call(&runtime, "Browser", json!({"url": site.url("/red")})).await;
    assert!(ok_text(&warm).starts_with("Red — "));
    let started = Instant::now();
    let result = call(
        &runtime,
        "Browser",
        json!({"url": site.url("/hang"), "timeout_ms": 1500}),
    )
    .await;
    let text = error_text(&result, ErrorKind::Timeout);
    assert!(text.contains("did not answer in time"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // The browser is still usable afterwards.
    let next = call(&runtime, "Browser", json!({"url": site.url("/red")})).await;
    assert!(ok_text(&next).starts_with("Red — "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pages_cannot_hold_the_call() {
    let fixture = Fixture::new();
    let site = Site::start("127.0.0.1", None);
    let runtime = runtime(&fixture).await;
    // A dialog would wait for a person forever: it is dismissed and the page goes on.
    let dialog = call(&runtime, "Browser", json!({"url": site.url("/dialog")})).await;
    let text = ok_text(&dialog);
    assert!(text.starts_with("After — "), "{text}");
    assert!(text.contains("after the dialog"), "{text}");

    // A script that never yields: the step runs out of time, the call ends at its limit.
    let started = Instant::now();
    let spin = call(
        &runtime,
        "Browser",
        json!({
            "url": site.url("/spin"),
            "timeout_ms": 1500,
            "actions": [{"action": "wait_for", "selector": "#never"}],
        }),
    )
    .await;
    error_text(&spin, ErrorKind::Timeout);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let next = call(&runtime, "Browser", json!({"url": site.url("/red")})).await;
    assert!(ok_text(&next).starts_with("Red — "));

    // The browser killed from outside: the next call starts a new one.
    let marker = fixture.state_dir().to_string_lossy().into_owned();
    for pid in processes_with(&marker) {
        // SAFETY: a plain kill of a process this test's runtime started.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    assert_eq!(gone(&marker), Vec::<i32>::new());
    let again = call(&runtime, "Browser", json!({"url": site.url("/red")})).await;
    assert!(ok_text(&again).starts_with("Red — "), "{:?}", again.block);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_pages_are_limited_to_the_workspace() {
    let fixture = Fixture::new();
    let page = fixture.write("page.html", "<title>Local</title><p>from the workspace</p>");
    let secret = fixture.outside().join("secret.html");
    std::fs::write(&secret, "<p>outside secret</p>").unwrap();
    fixture.write(".env", "TOKEN=hunter2");
    let runtime = fixture
        .runtime(&[], |c| {
            c.browser = Some(test_browser());
            c.allowed_tools = vec!["Browser".to_owned()];
            c.disallowed_tools = vec!["Read(.env)".to_owned()];
        })
        .await;
    let inside = call(
        &runtime,
        "Browser",
        json!({"url": format!("file://{}", page.display())}),
    )
    .await;
    assert!(ok_text(&inside).contains("from the workspace"));
    let outside = call(
        &runtime,
        "Browser",
        json!({"url": format!("file://{}", secret.display())}),
    )
    .await;
    let text = error_text(&outside, ErrorKind::PermissionDenied);
    assert!(text.contains("outside the workspace"), "{text}");
    assert!(!text.contains("outside secret"), "{text}");
    // A file the Read deny rules hide stays hidden from the browser too, opened or embedded.
    let env = fixture.workspace().join(".env");
    let hidden = call(
        &runtime,
        "Browser",
        json!({"url": format!("file://{}", env.display())}),
    )
    .await;
    let text = error_text(&hidden, ErrorKind::PermissionDenied);
    assert!(text.contains("hidden by a Read deny rule"), "{text}");
    let embed = fixture.write(
        "embed.html",
        format!(
            "<title>Embed</title><iframe src=\"file://{}\"></iframe><p>shell</p>",
            env.display()
        ),
    );
    let embedded = call(
        &runtime,
        "Browser",
        json!({"url": format!("file://{}", embed.display()), "actions": [{"action": "accessibility_tree"}]}),
    )
    .await;
    let text = ok_text(&embedded);
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("hidden by a Read deny rule"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_browser_starts_without_the_process_sandbox() {
    let fixture = Fixture::new();
    let page = fixture.write("page.html", "<title>Local</title>");
    let runtime = fixture
        .runtime(&[], |c| {
            c.browser = Some(test_browser());
            c.allowed_tools = vec!["Browser".to_owned()];
            c.process_sandbox = janua::sandbox::ProcessSandbox::Unsandboxed;
        })
        .await;
    let result = call(
        &runtime,
        "Browser",
        json!({"url": format!("file://{}", page.display())}),
    )
    .await;
    let text = error_text(&result, ErrorKind::ToolFailed);
    assert!(text.contains("browser_unavailable"), "{text}");
    assert!(text.contains("only under the process sandbox"), "{text}");
    let marker = fixture.state_dir().to_string_lossy().into_owned();
    assert!(processes_with(&marker).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_process_tree_ends_with_the_session() {
    let fixture = Fixture::new();
    let site = Site::start("127.0.0.1", None);
    let marker = fixture.state_dir().to_string_lossy().into_owned();
    let runtime = runtime(&fixture).await;
    assert!(
        processes_with(&marker).is_empty(),
        "no browser before the first call"
    );
    let result = call(&runtime, "Browser", json!({"url": site.url("/red")})).await;
    ok_text(&result);
    let running = processes_with(&marker);
    assert!(
        running.len() >= 2,
        "the browser and its helpers run: {running:?}"
    );
    // Every browser process runs in namespaces of its own: it sees its own processes and mounts
    // (the root of its grants), not the host's.
    let namespace = |pid: &str, kind: &str| std::fs::read_link(format!("/proc/{pid}/ns/{kind}"));
    let browsers: Vec<&i32> = running
        .iter()
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe.to_string_lossy().contains("chrom"))
        })
        .collect();
    assert!(!browsers.is_empty(), "no browser among {running:?}");
    let mut checked = 0;
    for pid in browsers {
        for kind in ["mnt", "pid", "ipc", "net"] {
            let theirs = match namespace(&pid.to_string(), kind) {
                Ok(theirs) => theirs,
                // A short-lived helper that ended since it was listed.
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => panic!("the namespace of browser process {pid}: {error}"),
            };
            assert_ne!(
                theirs,
                namespace("self", kind).expect("the test's namespace"),
                "browser process {pid} shares the host's {kind} namespace"
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 4,
        "no browser process lived long enough to be checked"
    );
    let profiles = browser_profiles(&fixture.state_dir());
    assert_eq!(profiles.len(), 1, "one fresh profile: {profiles:?}");
    runtime.end_session("test").await;
    assert_eq!(
        gone(&marker),
        Vec::<i32>::new(),
        "processes left after the session"
    );
    assert!(
        browser_profiles(&fixture.state_dir()).is_empty(),
        "the profile is removed"
    );
    drop(runtime);

    // One `janua call` is one session: nothing of its browser outlives the command.
    let state = fixture.root().join("cli-state");
    let output = std::process::Command::new(janua_bin())
        .args(["call", "Browser", "--no-user-settings", "--cwd"])
        .arg(fixture.workspace())
        .arg("--state-dir")
        .arg(&state)
        .args([
            "--settings",
            r#"{"allowPrivateNetworkHosts": ["127.0.0.1"], "permissions": {"allow": ["Browser(domain:127.0.0.1)"]}}"#,
            "--input",
        ])
        .arg(json!({"url": site.url("/red")}).to_string())
        .env("JANUA_CACHE_DIR", crate::support::cache_dir())
        .env("JANUA_BROWSER", test_browser())
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .output()
        .expect("run janua call");
    let block: Value = serde_json::from_slice(&output.stdout).expect("a tool_result");
    assert_eq!(block["is_error"], false, "{block}");
    let state = state.to_string_lossy().into_owned();
    assert_eq!(
        gone(&state),
        Vec::<i32>::new(),
        "processes left after janua call"
    );
}

/// The browser profiles under `state_dir`.
fn browser_profiles(state_dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![state_dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path
                    .file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with("profile-"))
                {
                    found.push(path);
                } else {
                    pending.push(path);
                }
            }
        }
    }
    found
}

/// Runs the `browser-probe` guest as plugin `name` with `grants` (TOML lines of its
/// `[tool.grants]`) on `url`, asking for the page text before opening it too; its report.
async fn probe(fixture: &Fixture, name: &str, grants: &str, url: &str) -> Value {
    let plugin = fixture.plugin(
        name,
        janua_test_guests::BROWSER_PROBE,
        &format!("[tool.grants]\n{grants}\n"),
    );
    let runtime = fixture
        .runtime(&[plugin], |c| {
            c.browser = Some(test_browser());
            c.allowed_tools = vec!["BrowserProbe".to_owned()];
            c.net.proxy = ProxySettings::default();
        })
        .await;
    let result = call(
        &runtime,
        "BrowserProbe",
        json!({"url": url, "text_first": true}),
    )
    .await;
    serde_json::from_str(&ok_text(&result)).expect("the probe's JSON report")
}

/// The `browser` capability is a grant: a component without it is refused at the host, and a
/// component with it reaches only what its own net grants name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn browser_probe() {
    let fixture = Fixture::new();
    let other = Site::start("127.0.0.2", None);
    let base = format!("http://{}", other.address);
    let site = Site::start("127.0.0.1", Some(&base));
    let report = probe(
        &fixture,
        "ungranted",
        "net = [\"http://127.0.0.1:*\"]",
        &site.url("/red"),
    )
    .await;
    assert_eq!(report["early"]["error"], "permission_denied", "{report}");
    assert_eq!(report["open"]["error"], "permission_denied", "{report}");
    assert!(
        report["open"]["message"]
            .as_str()
            .unwrap()
            .contains("browser = true"),
        "{report}"
    );
    assert_eq!(site.requests(), 0);

    let report = probe(
        &fixture,
        "granted",
        "browser = true\nnet = [\"http://127.0.0.1:*\"]",
        &site.url("/leak"),
    )
    .await;
    assert_eq!(report["early"]["error"], "no_page", "{report}");
    assert_eq!(report["open"]["ok"]["title"], "Leak", "{report}");
    assert!(report["text"]["ok"].as_str().unwrap().contains("visible"));
    let refused = report["refused"].to_string();
    assert!(
        refused.contains("not in the component's net grants"),
        "{refused}"
    );
    assert_eq!(other.requests(), 0, "{:?}", other.paths());
}

/// `janua doctor` names the Chromium the Browser tool will start and why that one, and says
/// plainly when the one named does not exist.
#[test]
fn doctor_names_the_browser_the_tool_will_use() {
    let browser = test_browser();
    let output = std::process::Command::new(janua_bin())
        .arg("doctor")
        .env("JANUA_BROWSER", &browser)
        .output()
        .expect("run janua doctor");
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|line| line.starts_with("browser:"))
        .unwrap_or_else(|| panic!("no browser line: {text}"));
    assert!(line.contains(&browser.display().to_string()), "{line}");
    assert!(line.contains("named by JANUA_BROWSER"), "{line}");
    assert!(line.contains("Chrom"), "the version: {line}");

    let missing = std::process::Command::new(janua_bin())
        .args(["doctor", "--json"])
        .env("JANUA_BROWSER", "/nonexistent/chromium")
        .output()
        .expect("run janua doctor");
    let report: Value = serde_json::from_slice(&missing.stdout).expect("JSON");
    assert_eq!(report["browser"], Value::Null, "{report}");
    assert_eq!(report["browser_chosen_by"], Value::Null, "{report}");
    let error = report["browser_error"].as_str().expect("an error");
    assert!(
        error.contains("JANUA_BROWSER names /nonexistent/chromium"),
        "{error}"
    );
}
