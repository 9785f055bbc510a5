//! Red-team guests: output floods, network escapes and filesystem tricks on writable scratch grants.
//! Each test asserts a typed outcome, a respected bound or the absence of a disclosure. Several began
//! as failing tests for defects they found (image, error and stderr bounds; plugin-data placement).

use std::time::{Duration, Instant};

use janua::ErrorKind;
use janua_test_guests::{
    REDTEAM_CONTRACT, REDTEAM_FS_TRICKS, REDTEAM_HTTP, REDTEAM_NET, REDTEAM_OUTPUT_FLOOD,
};
use serde_json::{Value, json};

use crate::support::{Fixture, call, error_text, ok_text};

const SECRET: &str = "TOPSECRET-outside";
/// The default inline budget, in characters.
const INLINE_LIMIT: usize = 30_000;
/// Anthropic's Messages API refuses requests over 32 MB; a single tool result larger than that can
/// never reach the model.
const API_REQUEST_LIMIT: usize = 32 << 20;
/// A generous bound on one flood call, so the test is never timing-sensitive.
const SANE: Duration = Duration::from_secs(60);

async fn flood_runtime(fixture: &Fixture) -> janua::Runtime {
    let plugin = fixture.plugin("flood", REDTEAM_OUTPUT_FLOOD, "");
    fixture.runtime(&[plugin], |_| {}).await
}

async fn flood(runtime: &janua::Runtime, input: Value) -> janua::Dispatch {
    let started = Instant::now();
    let dispatch = call(runtime, "Flood", input.clone()).await;
    let elapsed = started.elapsed();
    assert!(elapsed < SANE, "{input}: took {elapsed:?}");
    dispatch
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// Giant text, a million parts, a giant error, log/progress/stdio floods and a stack overflow all
/// end in bounded, typed results, and the host keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn redteam_output_flood() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "still serving\n");
    let runtime = flood_runtime(&fixture).await;

    // One 20-million-character text part.
    let result = flood(&runtime, json!({"mode": "text", "size": 20_000_000})).await;
    let text = ok_text(&result);
    assert!(chars(&text) <= INLINE_LIMIT, "{}", chars(&text));
    let cut = result.outcome.truncation.expect("truncation reported");
    assert_eq!(cut.total_chars, 20_000_000);
    // The marker names the file holding all of it, and its length comes out of the kept text.
    assert!(
        text.contains(&format!(
            "kept the first {} of 20000000 characters; {} characters were cut; all 20000000 characters (1 lines) are in ",
            cut.kept_chars, cut.cut_chars
        )),
        "{}",
        &text[text.len() - 300..]
    );
    let saved = runtime.session().results_dir().join("toolu_test.txt");
    assert_eq!(std::fs::metadata(&saved).unwrap().len(), 20_000_000);

    // A million one-character parts (joined with newlines).
    let result = flood(&runtime, json!({"mode": "parts", "count": 1_000_000})).await;
    let text = ok_text(&result);
    assert!(chars(&text) <= INLINE_LIMIT, "{}", chars(&text));
    let cut = result.outcome.truncation.expect("truncation reported");
    assert_eq!(cut.total_chars, 1_999_999);
    assert_eq!(cut.kept_chars + cut.cut_chars, cut.total_chars);

    // A 5-million-character error kind and message: head and tail within the limit.
    let result = flood(&runtime, json!({"mode": "error", "size": 5_000_000})).await;
    // Cut failures start with the truncation marker (DESIGN §9), not with `tool_failed: `.
    assert!(result.block.is_error);
    assert_eq!(result.error_kind(), Some(ErrorKind::ToolFailed));
    let text = result.block.text();
    assert!(chars(&text) <= INLINE_LIMIT, "{}", chars(&text));
    // The guest's message is bounded before it reaches the outcome (head and tail, with a marker
    // counting the original), then the block is cut to the inline limit.
    assert!(
        text.starts_with("[janua: output truncated: kept the first 4800 and last 4800 of "),
        "{}",
        &text[..200]
    );
    assert!(text.contains("of 5000000 characters"), "{}", &text[..400]);

    // 200,000 log lines of 1,000 characters: dropped past the per-call cap, the call still succeeds.
    let result = flood(
        &runtime,
        json!({"mode": "log", "count": 200_000, "size": 1_000}),
    )
    .await;
    assert_eq!(ok_text(&result), "logged");

    // 100,000 progress messages of 10,000 characters: the outcome keeps a bounded number, each cut.
    let result = flood(
        &runtime,
        json!({"mode": "progress", "count": 100_000, "size": 10_000}),
    )
    .await;
    assert_eq!(ok_text(&result), "progressed");
    assert!(
        result.outcome.progress.len() <= 1000,
        "{}",
        result.outcome.progress.len()
    );
    assert!(result.outcome.progress.iter().all(|p| chars(p) <= 2000));

    // 128 MiB each of stdout and stderr, then a panic: a crash whose report stays bounded.
    let result = flood(&runtime, json!({"mode": "stdio", "count": 2048})).await;
    let text = error_text(&result, ErrorKind::ToolFailed);
    assert!(chars(&text) <= INLINE_LIMIT, "{}", chars(&text));
    assert!(
        text.contains("Flood crashed: wasm trap"),
        "{}",
        &text[..200]
    );

    // Unbounded recursion: wasmtime's stack guard traps; the host's own stack is untouched.
    let result = flood(&runtime, json!({"mode": "recurse"})).await;
    let text = error_text(&result, ErrorKind::ToolFailed);
    assert!(text.contains("call stack exhausted"), "{text}");
    // With big frames the guest's shadow stack in linear memory runs out first: still a crash.
    let result = flood(&runtime, json!({"mode": "recurse_padded"})).await;
    let text = error_text(&result, ErrorKind::ToolFailed);
    assert!(text.contains("Flood crashed: wasm trap"), "{text}");

    // A few small images pass through as image blocks.
    let result = flood(
        &runtime,
        json!({"mode": "images", "count": 3, "size": 1000}),
    )
    .await;
    assert!(!result.block.is_error);
    let block = serde_json::to_value(&result.block).unwrap();
    let images = block["content"]
        .as_array()
        .expect("content blocks")
        .iter()
        .filter(|b| b["type"] == "image")
        .count();
    assert_eq!(images, 3);

    assert!(
        ok_text(&call(&runtime, "Read", json!({"file_path": "a.txt"})).await)
            .contains("still serving")
    );
}

/// Images are bounded in number and total size, not only one by one: twelve 4 MiB images must not
/// make a `tool_result` larger than any request the model API accepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_flood_stays_within_a_sendable_result() {
    let fixture = Fixture::new();
    let runtime = flood_runtime(&fixture).await;
    let result = flood(
        &runtime,
        json!({"mode": "images", "count": 12, "size": 4 << 20}),
    )
    .await;
    let serialized = serde_json::to_string(&result.block).unwrap().len();
    assert!(
        serialized <= API_REQUEST_LIMIT,
        "the tool_result is {serialized} bytes"
    );
}

/// An image's media type is guest text: anything but an image type the API accepts is replaced by a
/// note, so it cannot smuggle text past the inline budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_media_type_cannot_smuggle_text_past_the_inline_limit() {
    let fixture = Fixture::new();
    let runtime = flood_runtime(&fixture).await;
    let result = flood(&runtime, json!({"mode": "media_type", "size": 1_000_000})).await;
    let serialized = serde_json::to_string(&result.block).unwrap();
    assert!(
        serialized.len() <= 2 * INLINE_LIMIT,
        "the tool_result is {} bytes for a 4-byte image",
        serialized.len()
    );
}

/// The structured outcome (`--outcome`, library callers) bounds the guest's error kind and message
/// too, not only the result block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outcome_of_a_huge_error_is_bounded() {
    let fixture = Fixture::new();
    let runtime = flood_runtime(&fixture).await;
    let result = flood(&runtime, json!({"mode": "error", "size": 5_000_000})).await;
    let failure = result.outcome.error.as_ref().expect("an error");
    assert!(
        failure.message.len() <= 2 * INLINE_LIMIT,
        "outcome.error.message is {} bytes",
        failure.message.len()
    );
    assert!(
        failure.tool_error_kind.as_ref().map_or(0, String::len) <= 1000,
        "outcome.error.tool_error_kind is {} bytes",
        failure.tool_error_kind.as_ref().map_or(0, String::len)
    );
}

/// A guest that floods stderr before panicking does not hide its panic message: the capture keeps
/// head and tail and says how much it dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stderr_flood_does_not_hide_the_panic_message() {
    let fixture = Fixture::new();
    let runtime = flood_runtime(&fixture).await;
    let result = flood(&runtime, json!({"mode": "stdio", "count": 4})).await;
    let text = error_text(&result, ErrorKind::ToolFailed);
    assert!(text.contains("stdio flood done"), "{}", &text[..300]);
    assert!(text.contains("the capture dropped"), "{}", &text[..300]);
}

/// The keys of a `Dial`/`Plant` report that must have failed.
/// Runs `Dial` against the test's own TCP and UDP sockets and returns its report of each attempt.
async fn dial(
    runtime: &janua::Runtime,
    tcp: &std::net::TcpListener,
    udp: &std::net::UdpSocket,
) -> Value {
    let result = call(
        runtime,
        "Dial",
        json!({
            "tcp_port": tcp.local_addr().unwrap().port(),
            "udp_port": udp.local_addr().unwrap().port(),
        }),
    )
    .await;
    ok_text(&result);
    result.outcome.structured.expect("structured report")
}

fn assert_failed(report: &Value, keys: &[&str]) {
    for key in keys {
        let value = report[*key]
            .as_str()
            .unwrap_or_else(|| panic!("{key} missing: {report}"));
        assert!(value.starts_with("err"), "{key} succeeded: {value}");
    }
}

/// Without a net grant no socket opens: TCP connect and listen, UDP and name lookup fail through
/// std and through raw `wasi:sockets`, and a listener on loopback sees nothing arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn redteam_net() {
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let fixture = Fixture::new();
    let plugin = fixture.plugin("dial", REDTEAM_NET, "");
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    let report = dial(&runtime, &tcp, &udp).await;
    assert_failed(
        &report,
        &[
            "std_tcp_connect",
            "std_tcp_listen",
            "std_udp_send",
            "std_lookup",
            "wasi_tcp_connect",
            "wasi_tcp_listen",
            "wasi_udp_send",
            "wasi_lookup",
            "fs_root",
        ],
    );
    assert_eq!(report["env"], "[]", "{report}");
    assert_eq!(report["preopens"], "[]", "{report}");
    // Nothing reached the host's sockets.
    assert_eq!(
        tcp.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
    let mut buf = [0u8; 64];
    assert_eq!(
        udp.recv_from(&mut buf).map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
}

/// A guest sending raw `wasi:http` requests gets exactly its net grant: another port, another name
/// for the same address, user info, another scheme or a forged `Host` header are refused before
/// any connection; an address spelled differently is read as the grant reads it; a grant naming
/// a loopback host literally reaches it, a wildcard grant does not; a call sends at most 100
/// requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn redteam_http() {
    let server = crate::web_fetch::Server::start();
    let port = server.port();
    let fixture = Fixture::new();
    let literal = fixture.plugin(
        "probe",
        REDTEAM_HTTP,
        &format!("grants = {{ net = [\"http://127.0.0.1:{port}\"] }}"),
    );
    let runtime = fixture
        .runtime(&[literal], |c| {
            c.allowed_tools = vec!["Probe".into()];
            c.net.proxy = janua::sandbox::ProxySettings::default();
        })
        .await;
    let shared = &runtime;
    let probe = move |scheme: &str, authority: &str, headers: Value, times: u32| {
        call(
            shared,
            "Probe",
            json!({
                "url": format!("http://127.0.0.1:{port}/"),
                "scheme": scheme,
                "authority": authority,
                "headers": headers,
                "times": times,
            }),
        )
    };
    let granted = format!("127.0.0.1:{port}");
    assert_eq!(
        ok_text(&probe("http", &granted, json!([]), 1).await),
        "status 200"
    );
    assert_eq!(server.requests(), 1);
    let refused = [
        (
            "http",
            format!("127.0.0.1:{}", port.wrapping_add(1)),
            json!([]),
        ),
        ("http", format!("localhost:{port}"), json!([])),
        ("http", format!("user@127.0.0.1:{port}"), json!([])),
        ("https", granted.clone(), json!([])),
        ("ftp", granted.clone(), json!([])),
        ("http", granted.clone(), json!([["host", "evil.test"]])),
        ("http", String::new(), json!([])),
    ];
    for (scheme, authority, headers) in refused {
        let text = ok_text(&probe(scheme, &authority, headers.clone(), 1).await);
        assert!(
            text.starts_with("error: "),
            "{scheme}://{authority} {headers}: {text}"
        );
    }
    assert_eq!(
        server.requests(),
        1,
        "refused requests never reach the server"
    );
    // 0x7f000001 is 127.0.0.1 to the grant as to any URL parser.
    let hex = format!("0x7f000001:{port}");
    assert_eq!(
        ok_text(&probe("http", &hex, json!([]), 1).await),
        "status 200"
    );
    // At most 100 requests per call.
    let many = ok_text(&probe("http", &granted, json!([]), 103).await);
    assert_eq!(many.matches("status 200").count(), 100, "{many}");
    assert_eq!(many.matches("HttpRequestDenied").count(), 3, "{many}");
    assert_eq!(server.requests(), 102);

    // A wildcard grant does not reach loopback without the operator's allowPrivateNetworkHosts.
    let wildcard = fixture.plugin(
        "probe-any",
        REDTEAM_HTTP,
        "grants = { net = [\"http://*:*\"] }",
    );
    let runtime = fixture
        .runtime(&[wildcard], |c| {
            c.allowed_tools = vec!["Probe".into()];
            c.net.proxy = janua::sandbox::ProxySettings::default();
        })
        .await;
    let text = ok_text(
        &call(
            &runtime,
            "Probe",
            json!({"url": format!("http://127.0.0.1:{port}/"), "scheme": "http", "authority": granted}),
        )
        .await,
    );
    assert_eq!(text, "error: ErrorCode::HttpRequestDenied");
    assert_eq!(server.requests(), 102);
}

/// A manifest cannot ask for sockets: a net grant is an `http`/`https` pattern, and anything else
/// fails to load, naming the pattern, instead of being silently ignored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_grant_in_a_manifest_fails_closed() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "dial",
        REDTEAM_NET,
        "grants = { net = [\"tcp://127.0.0.1:*\"] }",
    );
    let mut config = fixture.config();
    config.plugin_dirs = vec![plugin];
    let error = match janua::Runtime::new(config).await {
        Ok(_) => panic!("a manifest with a socket grant loaded"),
        Err(error) => error.to_string(),
    };
    assert!(
        error.contains("net grant \"tcp://127.0.0.1:*\": the scheme must be http or https"),
        "{error}"
    );
}

/// An HTTP net grant, even one naming loopback, opens no socket: `wasi:sockets` stay denied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_grant_opens_no_socket() {
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "dial",
        REDTEAM_NET,
        "grants = { net = [\"http://127.0.0.1:*\"] }",
    );
    let runtime = fixture
        .runtime(&[plugin], |c| c.allowed_tools = vec!["Dial".into()])
        .await;
    let report = dial(&runtime, &tcp, &udp).await;
    assert_failed(
        &report,
        &[
            "std_tcp_connect",
            "wasi_tcp_connect",
            "wasi_udp_send",
            "wasi_lookup",
        ],
    );
    assert_eq!(
        tcp.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
}

const TRICKS_GRANTS: &str = "grants = { fs = [\
    { path = \"${TMP}\", access = \"read-write\" }, \
    { path = \"${PLUGIN_DATA}\", access = \"read-write\" }, \
    { path = \"${PLUGIN_DATA}/escape\", access = \"read\" }, \
    { path = \"${PLUGIN_DATA}/escape-climb\", access = \"read\" }, \
    { path = \"${WORKSPACE}\", access = \"read\" }] }";

/// Read-write `${TMP}` and `${PLUGIN_DATA}` grants do not reach the directory beside the workspace:
/// no symlink, `..` path, hard link or rename gets out, the read-only workspace stays read-only,
/// `${TMP}` is removed after the call without following the links in it, and symlinks planted in
/// the data directory do not widen a later call's `${PLUGIN_DATA}/escape*` grants. (WASI refuses
/// absolute symlink targets but lets the guest create a climbing relative one, which then sits in
/// the host's state directory pointing outside; the host must never follow it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn redteam_fs_tricks() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "workspace file\n");
    let outside = fixture.outside();
    let plugin = fixture.plugin("tricks", REDTEAM_FS_TRICKS, TRICKS_GRANTS);
    let runtime = fixture
        .runtime(&[plugin], |c| c.allowed_tools = vec!["Plant".into()])
        .await;
    let input = |action: &str| json!({"action": action, "outside": outside.display().to_string()});

    let result = call(&runtime, "Plant", input("plant")).await;
    let text = ok_text(&result);
    assert!(!text.contains(SECRET), "{text}");
    let report = result
        .outcome
        .structured
        .clone()
        .expect("structured report");
    assert!(
        report["stage"]
            .as_str()
            .is_some_and(|s| s.starts_with("ok")),
        "${{TMP}} is writable: {report}"
    );
    assert_failed(
        &report,
        &[
            "read_abs_link",
            "read_climb_link",
            "raw_read_abs_link",
            "raw_read_climb_link",
            "raw_read_dotdot",
            "read_dotdot_path",
            "read_direct",
            "write_outside",
            "hard_link_outside",
            "rename_out",
            "rename_from_workspace",
            "hard_link_from_workspace",
            "write_workspace",
        ],
    );
    // Nothing outside changed, the workspace file is intact, and ${TMP} is gone.
    let mut names: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["secret.txt"]);
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        format!("{SECRET}\n")
    );
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join("a.txt")).unwrap(),
        "workspace file\n"
    );
    let tmp = report["tmp"].as_str().expect("a ${TMP} preopen");
    assert!(
        std::fs::symlink_metadata(tmp).is_err(),
        "{tmp} outlived the call"
    );

    // Make sure the planted link exists even if the guest could not create it, so the next call's
    // grant resolution really faces a symlink leading out of ${PLUGIN_DATA}.
    let data = std::path::PathBuf::from(report["data"].as_str().expect("a data preopen"));
    if std::fs::symlink_metadata(data.join("escape")).is_err() {
        std::os::unix::fs::symlink(&outside, data.join("escape")).unwrap();
    }
    if report["plant_escape_climb"]
        .as_str()
        .is_some_and(|s| s.starts_with("ok"))
    {
        assert_eq!(
            std::fs::canonicalize(data.join("escape-climb")).unwrap(),
            outside,
            "the guest's climbing link leads outside"
        );
    }
    let result = call(&runtime, "Plant", input("probe")).await;
    let text = ok_text(&result);
    assert!(!text.contains(SECRET), "{text}");
    let report = result
        .outcome
        .structured
        .clone()
        .expect("structured report");
    assert_failed(
        &report,
        &["read_escape", "read_escape_climb", "read_direct"],
    );
    let preopens = report["preopens"].as_str().unwrap();
    assert!(
        !preopens.contains(&*outside.to_string_lossy()),
        "{preopens}"
    );
}

/// `${PLUGIN_DATA}` lives at `<state>/<workspace digest>/.plugin-data/<plugin>`, a name no session id
/// can take, so even in a session called `plugin-data` a plugin named `tool-results` cannot get the
/// session's own `tool-results/` directory (which read tools treat as part of the workspace).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_data_cannot_alias_the_sessions_tool_results() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "tool-results",
        REDTEAM_FS_TRICKS,
        "grants = { fs = [{ path = \"${PLUGIN_DATA}\", access = \"read-write\" }] }",
    );
    let runtime = fixture
        .runtime(&[plugin], |c| {
            c.allowed_tools = vec!["Plant".into()];
            c.session_id = Some("plugin-data".into());
        })
        .await;
    let result = call(
        &runtime,
        "Plant",
        json!({"action": "drop", "outside": fixture.outside().display().to_string()}),
    )
    .await;
    ok_text(&result);
    let forged = runtime.session().results_dir().join("forged.txt");
    assert!(
        !forged.exists(),
        "a plugin wrote {} into the session's results",
        forged.display()
    );
}

/// `REDTEAM_CONTRACT` with its baked-in `describe` mode patched to `mode` (see the guest's docs),
/// written under the fixture's root.
fn contract_guest(fixture: &Fixture, mode: &str) -> String {
    let marker = b"JANUA-MODE:ok______";
    let mut bytes = std::fs::read(REDTEAM_CONTRACT).expect("read the contract guest");
    let at = bytes
        .windows(marker.len())
        .position(|window| window == marker)
        .expect("the mode marker is in the component");
    let patched = format!("JANUA-MODE:{mode:_<8}");
    assert_eq!(patched.len(), marker.len(), "{mode}");
    bytes[at..at + marker.len()].copy_from_slice(patched.as_bytes());
    let path = fixture.root().join(format!("contract-{mode}.wasm"));
    std::fs::write(&path, bytes).expect("write the patched guest");
    path.display().to_string()
}

/// A plugin that breaks the contract at load (`describe` panicking, never returning, describing
/// 10,000 tools, duplicate, control-character or over-long names, a schema that is not JSON or not
/// an object, a 10 MB description or schema) fails start-up with a typed error naming the plugin
/// and the fault, in bounded time; a plugin that breaks it per call (`validate-input` or `call`
/// panicking, invalid UTF-8 or 1 GiB on stdout, a 100 MB result) ends that call with the expected
/// kind and the next call succeeds. The canary outside the workspace is untouched and never shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn redteam_contract() {
    let fixture = Fixture::new();
    let canary = fixture.outside().join("secret.txt");
    let before = std::fs::read(&canary).unwrap();
    let load_faults = [
        ("panic", "describe failed"),
        ("slow", "describe failed"),
        ("many", "describes 10000 tools; at most 256"),
        ("dup", "tool \"Contract\" is described twice"),
        ("ctrl", "must match ^[a-zA-Z0-9_-]{1,64}$"),
        ("long", "must match ^[a-zA-Z0-9_-]{1,64}$"),
        ("notjson", "input schema is not JSON"),
        ("notobj", "must describe an object"),
        ("bigdesc", "at most 32768 are accepted"),
        ("bigschm", "at most 262144 are accepted"),
    ];
    for (mode, symptom) in load_faults {
        let guest = contract_guest(&fixture, mode);
        let plugin = fixture.plugin(
            &format!("contract-{mode}"),
            &guest,
            "limits = { timeout_ms = 500 }",
        );
        let mut config = fixture.config();
        config.plugin_dirs = vec![plugin];
        let started = Instant::now();
        let error = janua::Runtime::new(config)
            .await
            .err()
            .unwrap_or_else(|| panic!("{mode}: start-up succeeds"));
        assert!(started.elapsed() < SANE, "{mode}: {:?}", started.elapsed());
        let message = error.to_string();
        assert!(
            message.contains(&format!("contract-{mode}")) && message.contains(symptom),
            "{mode}: {message}"
        );
        assert!(message.len() < 4_000, "{mode}: {} bytes", message.len());
        if mode == "slow" {
            assert!(
                message.contains("timed out") || message.contains("Timeout"),
                "{message}"
            );
        }
    }

    let guest = contract_guest(&fixture, "ok");
    let plugin = fixture.plugin("contract", &guest, "");
    fixture.write("a.txt", "still serving\n");
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    let call_faults = [
        (
            "panic_validate",
            ErrorKind::ToolFailed,
            "validate-input panics on purpose",
        ),
        (
            "panic_call",
            ErrorKind::ToolFailed,
            "call panics on purpose",
        ),
        (
            "bad_utf8_stdout",
            ErrorKind::ToolFailed,
            "after invalid UTF-8 on stdout",
        ),
    ];
    for (mode, kind, symptom) in call_faults {
        let result = contract_call(&runtime, json!({"mode": mode})).await;
        let text = error_text_of(&result, kind, mode);
        assert!(text.contains(symptom), "{mode}: {text}");
        assert!(!text.contains(SECRET), "{mode}: {text}");
        assert!(
            ok_text(&call(&runtime, "Read", json!({"file_path": "a.txt"})).await)
                .contains("still serving")
        );
    }

    // 1 GiB to stdout: kept up to the stdio cap, the rest counted and dropped; the call succeeds.
    let result = contract_call(&runtime, json!({"mode": "stdout_gib"})).await;
    assert_eq!(ok_text(&result), "wrote 1 GiB");

    // A 100 MB result string: cut to the inline budget, all of it saved to a file.
    let result = contract_call(&runtime, json!({"mode": "result_100mb"})).await;
    let text = ok_text(&result);
    assert!(chars(&text) <= INLINE_LIMIT, "{}", chars(&text));
    let cut = result.outcome.truncation.expect("truncation reported");
    assert_eq!(cut.total_chars, 100 << 20);
    let saved = runtime.session().results_dir().join("toolu_test.txt");
    assert_eq!(std::fs::metadata(&saved).unwrap().len(), 100 << 20);

    assert_eq!(
        ok_text(&contract_call(&runtime, json!({"mode": "fine"})).await),
        "ok"
    );
    assert_eq!(std::fs::read(&canary).unwrap(), before);
}

/// The text of `result`, which must be an error of `kind`.
fn error_text_of(result: &janua::Dispatch, kind: ErrorKind, mode: &str) -> String {
    assert!(result.block.is_error, "{mode}: not an error");
    assert_eq!(
        result.error_kind(),
        Some(kind),
        "{mode}: {}",
        result.block.text()
    );
    result.block.text()
}

/// Calls `Contract` with `input`, within the sane bound.
async fn contract_call(runtime: &janua::Runtime, input: Value) -> janua::Dispatch {
    let started = Instant::now();
    let dispatch = call(runtime, "Contract", input.clone()).await;
    assert!(
        started.elapsed() < SANE,
        "{input}: took {:?}",
        started.elapsed()
    );
    dispatch
}
