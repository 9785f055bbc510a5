//! `janua mcp serve` driven by the official MCP Python SDK's stdio client: listing with
//! annotations, calls through the whole pipeline, errors as results, elicitation, cancellation,
//! progress, limits, and the lessons measured on Wassette (peers.md §13).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use janua_test_guests::{
    GRANTS_ENV, REDTEAM_OUTPUT_FLOOD, SANDBOX_HOG, SANDBOX_SPIN, SANDBOX_TRAP,
};
use serde_json::{Value, json};

use crate::mcp_support::{drive, drive_http, error_kind, janua_command, result_text};
use crate::support::Fixture;

/// `janua GLOBAL... mcp serve --progress-interval-ms 100`.
fn serve(fixture: &Fixture, global: &[&str]) -> Vec<String> {
    let mut command = janua_command(fixture, global);
    command.extend(["mcp", "serve", "--progress-interval-ms", "100"].map(str::to_owned));
    command
}

/// Global flags loading the looping `Spin` tool from `plugins`, allowed, with a 60 s timeout.
fn spin_flags(plugins: &str) -> [&str; 6] {
    [
        "--plugins",
        plugins,
        "--allowedTools",
        "Spin",
        "--timeout",
        "60s",
    ]
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"op": "call", "name": name, "arguments": arguments, "timeout_s": 60})
}

#[test]
fn mcp_server_lists_the_registry_and_runs_calls_through_the_pipeline() {
    let fixture = Fixture::new();
    fixture.write("notes.md", "first line\nsecond line\n");
    let run = drive(
        &json!([
            {"op": "list"},
            call("Read", json!({"file_path": "notes.md"})),
            // Coerced toward the schema ("1" becomes 1) before validation.
            call("Read", json!({"file_path": "notes.md", "limit": "1"})),
            call("Write", json!({"file_path": "new.txt", "content": "x"})),
            call("Nope", json!({})),
            call("Read", json!({"file_path": 7})),
            call("Read", json!({"file_path": "notes.md", "extra": true})),
        ]),
        &serve(&fixture, &[]),
        &[],
    );
    let init = run.step(0);
    assert_eq!(init["serverInfo"]["name"], "janua", "{init}");
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true, "{init}");

    let tools = run.step(1)["tools"].as_array().expect("tools").clone();
    let tool = |name: &str| {
        tools
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed: {tools:?}"))
            .clone()
    };
    for name in ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "WebFetch"] {
        let listed = tool(name);
        assert_eq!(listed["inputSchema"]["type"], "object", "{listed}");
        assert!(
            !listed["description"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{listed}"
        );
    }
    let hints = |name: &str| tool(name)["annotations"].clone();
    assert_eq!(
        hints("Read"),
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(hints("Write")["destructiveHint"], true);
    assert_eq!(hints("Write")["readOnlyHint"], false);
    assert_eq!(hints("Bash")["destructiveHint"], true);
    assert_eq!(hints("WebFetch")["openWorldHint"], true);

    let read = &run.step(2)["result"];
    assert_eq!(read["isError"], false, "{read}");
    assert!(result_text(read).contains("second line"), "{read}");
    let limited = &run.step(3)["result"];
    assert!(result_text(limited).contains("first line"), "{limited}");
    assert!(!result_text(limited).contains("second line"), "{limited}");

    // Nobody can be asked (the client offers no elicitation): the write is denied, and nothing
    // was written.
    let write = &run.step(4)["result"];
    assert_eq!(write["isError"], true, "{write}");
    assert_eq!(error_kind(write), Some("permission_denied"), "{write}");
    assert!(!fixture.workspace().join("new.txt").exists());

    let unknown = &run.step(5)["result"];
    assert_eq!(error_kind(unknown), Some("unknown_tool"), "{unknown}");
    let mistyped = &run.step(6)["result"];
    assert_eq!(error_kind(mistyped), Some("invalid_input"), "{mistyped}");
    assert!(result_text(mistyped).contains("file_path"), "{mistyped}");
    let extra = &run.step(7)["result"];
    assert_eq!(error_kind(extra), Some("invalid_input"), "{extra}");
}

#[test]
fn mcp_server_asks_permission_through_elicitation() {
    let fixture = Fixture::new();
    let run = drive(
        &json!({"elicitation": "accept", "content": {"decision": "allow once"}, "steps": [
            call("Write", json!({"file_path": "allowed.txt", "content": "hello"})),
            {"op": "elicitation", "answer": "decline"},
            call("Write", json!({"file_path": "declined.txt", "content": "no"})),
            {"op": "elicitation", "answer": "accept", "content": {"decision": "yes please"}},
            call("Write", json!({"file_path": "garbled.txt", "content": "no"})),
        ]}),
        &serve(&fixture, &[]),
        &[],
    );
    let allowed = run.step(1);
    assert_eq!(allowed["result"]["isError"], false, "{allowed}");
    let asked = allowed["elicitations"].as_array().expect("elicitations");
    assert_eq!(asked.len(), 1, "{allowed}");
    assert!(
        asked[0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Write"),
        "{allowed}"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join("allowed.txt")).unwrap(),
        "hello"
    );
    for (step, file) in [(3, "declined.txt"), (5, "garbled.txt")] {
        let denied = &run.step(step)["result"];
        assert_eq!(error_kind(denied), Some("permission_denied"), "{denied}");
        assert!(!fixture.workspace().join(file).exists());
    }
}

#[test]
fn mcp_server_rules_and_modes_decide_without_asking() {
    let fixture = Fixture::new();
    let run = drive(
        &json!({"elicitation": "accept", "content": {"decision": "allow once"}, "steps": [
            call("Write", json!({"file_path": "a.txt", "content": "by rule"})),
            call("Read", json!({"file_path": "b.txt"})),
        ]}),
        &serve(
            &fixture,
            &[
                "--allowedTools",
                "Edit(a.txt)",
                "--disallowedTools",
                "Read(b.txt)",
            ],
        ),
        &[],
    );
    let write = run.step(1);
    assert_eq!(write["result"]["isError"], false, "{write}");
    assert_eq!(
        write["elicitations"],
        json!([]),
        "a rule allowed it: {write}"
    );
    let read = run.step(2);
    assert_eq!(
        error_kind(&read["result"]),
        Some("permission_denied"),
        "{read}"
    );
    assert_eq!(
        read["elicitations"],
        json!([]),
        "a deny rule is never asked: {read}"
    );
}

#[test]
fn mcp_server_cancels_a_looping_call_and_keeps_serving() {
    let fixture = Fixture::new();
    fixture.write("notes.md", "still here\n");
    let spin = fixture.plugin("spin", SANDBOX_SPIN, "limits = { timeout_ms = 60000 }");
    let plugins = spin.display().to_string();
    let started = Instant::now();
    let run = drive(
        &json!([
            {"op": "cancel", "name": "Spin", "arguments": {}, "cancel_after_s": 0.5, "timeout_s": 60},
            call("Read", json!({"file_path": "notes.md"})),
        ]),
        &serve(&fixture, &spin_flags(&plugins)),
        &[],
    );
    let cancelled = run.step(1);
    assert_eq!(cancelled["sent_cancel"], true, "{cancelled}");
    let read = &run.step(2)["result"];
    assert!(result_text(read).contains("still here"), "{read}");
    // The loop was stopped by the cancellation, not by its 60 s deadline.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn mcp_server_limits_stop_looping_and_hungry_calls_while_others_are_served() {
    let fixture = Fixture::new();
    fixture.write("notes.md", "served\n");
    let spin = fixture.plugin("spin", SANDBOX_SPIN, "limits = { timeout_ms = 1500 }");
    let hog = fixture.plugin("hog", SANDBOX_HOG, "limits = { memory_mib = 64 }");
    let plugins = [spin.display().to_string(), hog.display().to_string()];
    let run = drive(
        &json!([
            {"op": "parallel", "timeout_s": 60, "calls": [
                {"name": "Spin", "arguments": {}},
                {"name": "Hog", "arguments": {}},
                {"name": "Read", "arguments": {"file_path": "notes.md"}},
            ]},
            {"op": "call_progress", "name": "Spin", "arguments": {}, "timeout_s": 60},
        ]),
        &serve(
            &fixture,
            &[
                "--plugins",
                &plugins[0],
                "--plugins",
                &plugins[1],
                "--allowedTools",
                "Spin,Hog",
            ],
        ),
        &[],
    );
    let results = run.step(1)["results"].as_array().expect("results").clone();
    assert_eq!(
        error_kind(&results[0]["result"]),
        Some("timeout"),
        "{results:?}"
    );
    assert_eq!(
        error_kind(&results[1]["result"]),
        Some("resource_exhausted"),
        "{results:?}"
    );
    assert!(
        result_text(&results[2]["result"]).contains("served"),
        "{results:?}"
    );
    let progressed = run.step(2);
    assert_eq!(
        error_kind(&progressed["result"]),
        Some("timeout"),
        "{progressed}"
    );
    let progress = progressed["progress"].as_array().expect("progress");
    assert!(progress.len() >= 3, "a 1.5 s call at 100 ms: {progressed}");
    assert!(
        progress[0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Spin"),
        "{progressed}"
    );
}

#[test]
fn mcp_server_keeps_guests_off_the_protocol_and_away_from_host_secrets() {
    let fixture = Fixture::new();
    let flood = fixture.plugin("flood", REDTEAM_OUTPUT_FLOOD, "");
    let env = fixture.plugin("env", GRANTS_ENV, "");
    let trap = fixture.plugin("trap", SANDBOX_TRAP, "");
    let plugins: Vec<String> = [flood, env, trap]
        .iter()
        .map(|dir| dir.display().to_string())
        .collect();
    let mut global = Vec::new();
    for plugin in &plugins {
        global.extend(["--plugins", plugin.as_str()]);
    }
    global.extend(["--allowedTools", "Flood,EnvPeek,Trap"]);
    let run = drive(
        &json!([
            // 4 MiB on the guest's stdout and stderr: captured, never on the protocol stream.
            call("Flood", json!({"mode": "stdio", "count": 64})),
            call("EnvPeek", json!({"name": "JANUA_TEST_CANARY"})),
            call("Trap", json!({})),
            call("Flood", json!({"mode": "error", "size": 100})),
            {"op": "list"},
        ]),
        &serve(&fixture, &global),
        &[("JANUA_TEST_CANARY", "host-secret-4711")],
    );
    let flooded = &run.step(1)["result"];
    assert_eq!(flooded["isError"], true, "{flooded}");
    assert!(
        !run.stderr
            .contains("ooooooooooooooooooooooooooooooooooooooooooooooooooooooo"),
        "guest stdout reached the host's stderr"
    );

    let peek = &run.step(2)["result"];
    assert_eq!(peek["isError"], false, "{peek}");
    let seen: Value = serde_json::from_str(&result_text(peek)).expect("EnvPeek JSON");
    assert_eq!(seen["value"], Value::Null, "{seen}");
    assert_eq!(seen["names"], json!([]), "{seen}");
    let args = seen["args"].as_array().expect("args");
    assert!(
        args.iter()
            .all(|arg| !arg.as_str().unwrap_or_default().contains("mcp")),
        "the guest saw the host's command line: {seen}"
    );
    assert!(!result_text(peek).contains("host-secret-4711"));

    // A trap is a short error for the model, never a wasm backtrace.
    let trapped = &run.step(3)["result"];
    assert_eq!(trapped["isError"], true, "{trapped}");
    assert_eq!(error_kind(trapped), Some("tool_failed"), "{trapped}");
    let text = result_text(trapped);
    assert!(text.len() < 2000, "{text}");
    for marker in ["wasm backtrace", "wasm-function", "0x"] {
        assert!(!text.contains(marker), "{marker} in {text}");
    }
    // The guest's own error is an error result.
    let failed = &run.step(4)["result"];
    assert_eq!(failed["isError"], true, "{failed}");
    // Still serving after all of it.
    assert!(
        run.step(5)["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty())
    );
}

#[test]
fn mcp_server_refuses_two_plugins_exporting_the_same_tool_at_load() {
    let fixture = Fixture::new();
    let first = fixture.plugin("spin-a", SANDBOX_SPIN, "");
    let second = fixture.plugin("spin-b", SANDBOX_SPIN, "");
    let mut command = serve(
        &fixture,
        &[
            "--plugins",
            &first.display().to_string(),
            "--plugins",
            &second.display().to_string(),
        ],
    );
    let program = command.remove(0);
    let output = Command::new(program)
        .args(&command)
        .stdin(Stdio::null())
        .output()
        .expect("run janua");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(output.stdout.is_empty(), "nothing on the protocol stream");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("tool Spin is defined twice"), "{stderr}");
}

/// `janua GLOBAL... mcp serve` for a raw client: the child, its stdin and its stdout.
fn raw_server(
    fixture: &Fixture,
    global: &[&str],
    serve: &[&str],
) -> (
    std::process::Child,
    std::process::ChildStdin,
    BufReader<std::process::ChildStdout>,
) {
    let mut command = janua_command(fixture, global);
    command.extend(["mcp", "serve"].map(str::to_owned));
    command.extend(serve.iter().map(|arg| (*arg).to_owned()));
    let program = command.remove(0);
    let mut child = Command::new(program)
        .args(&command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start janua mcp serve");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    (child, stdin, stdout)
}

/// A raw client: what the server writes, line by line, and how it ends.
#[test]
fn mcp_server_answers_malformed_lines_and_exits_when_stdin_closes() {
    let fixture = Fixture::new();
    let (mut child, mut stdin, mut stdout) = raw_server(&fixture, &[], &[]);
    let mut exchange = |line: &str| -> Value {
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().expect("flush");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("read");
        serde_json::from_str(&answer).unwrap_or_else(|_| panic!("not JSON: {answer:?}"))
    };
    let init = exchange(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(exchange("{not json")["error"]["code"], -32700);
    assert_eq!(
        exchange(r#"{"jsonrpc":"2.0","id":2,"method":"nope"}"#)["error"]["code"],
        -32601
    );
    assert_eq!(
        exchange(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#)["error"]["code"],
        -32602
    );
    let listed = exchange(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#);
    let again = exchange(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    assert_eq!(listed["result"], again["result"]);
    let ping = exchange(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit when stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `janua mcp serve --http 127.0.0.1:0`: its URL and token from stderr.
struct HttpServer {
    child: std::process::Child,
    address: String,
    token: String,
}

impl HttpServer {
    fn start(fixture: &Fixture, global: &[&str]) -> Self {
        Self::start_with_files(fixture, global, 1024)
    }

    /// As [`HttpServer::start`], with at most `files` open files (the usual limit is 1,024).
    fn start_with_files(fixture: &Fixture, global: &[&str], files: u32) -> Self {
        let mut command = janua_command(fixture, global);
        command.extend(["mcp", "serve", "--http", "127.0.0.1:0"].map(str::to_owned));
        // The usual open-file limit, which a flood of connections must not exhaust.
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("ulimit -n {files} && exec \"$0\" \"$@\""))
            .args(&command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start janua mcp serve --http");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let (mut address, mut token) = (None, None);
        let mut line = String::new();
        while address.is_none() || token.is_none() {
            line.clear();
            assert!(
                stderr.read_line(&mut line).expect("read stderr") > 0,
                "no URL printed"
            );
            if let Some(url) = line
                .trim()
                .strip_prefix("janua: MCP server listening on http://")
            {
                address = url.strip_suffix("/mcp").map(str::to_owned);
            }
            if let Some(value) = line.trim().strip_prefix("janua: bearer token: ") {
                token = Some(value.to_owned());
            }
        }
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Self {
            child,
            address: address.expect("address"),
            token: token.expect("token"),
        }
    }

    /// POSTs `body` to `path` with `headers`; returns the status and the body.
    fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
        self.post_within(path, headers, body, None)
            .expect("an answer")
    }

    /// As [`HttpServer::post`], giving up (`None`) when no answer came within `limit`.
    fn post_within(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
        limit: Option<std::time::Duration>,
    ) -> Option<(u16, String)> {
        let address = self.address.parse().expect("a socket address");
        crate::support::http_post(address, path, headers, body, limit).ok()
    }
}

#[test]
fn mcp_server_over_http_answers_its_client_through_a_flood_of_idle_connections() {
    let fixture = Fixture::new();
    // Fewer open files than the flood below (so that this process can hold the flood under a
    // hard limit of 1,024 too).
    let server = HttpServer::start_with_files(&fixture, &[], 512);
    let bearer = format!("Bearer {}", server.token);
    let good = [
        ("Host", server.address.as_str()),
        ("Authorization", bearer.as_str()),
    ];
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let port: u16 = server
        .address
        .rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .expect("a port");
    let limit = Some(std::time::Duration::from_secs(1));
    let (answers, cpu) =
        crate::support::with_idle_connections(port, 700, server.child.id(), || {
            let first = server.post_within("/mcp", &good, ping, limit);
            std::thread::sleep(std::time::Duration::from_millis(2500));
            [first, server.post_within("/mcp", &good, ping, limit)]
        });
    for answer in answers {
        let (status, body) = answer.expect("answered within a second");
        assert_eq!(status, 200, "{body}");
    }
    assert!(
        cpu < std::time::Duration::from_millis(800),
        "the server spent {cpu:?} of CPU holding idle connections for 2.5 s"
    );
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_server_over_http_needs_the_token_and_a_loopback_host() {
    let fixture = Fixture::new();
    fixture.write("notes.md", "over http\n");
    let server = HttpServer::start(&fixture, &[]);
    let bearer = format!("Bearer {}", server.token);
    let host = server.address.clone();
    let good = [("Host", host.as_str()), ("Authorization", bearer.as_str())];
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let (status, body) = server.post("/mcp", &good, init);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"serverInfo\""), "{body}");

    // No token, a wrong token, a rebinding page's Host, a foreign Origin: refused before parsing.
    let (status, _) = server.post("/mcp", &[("Host", host.as_str())], init);
    assert_eq!(status, 401);
    let (status, _) = server.post(
        "/mcp",
        &[("Host", host.as_str()), ("Authorization", "Bearer nope")],
        init,
    );
    assert_eq!(status, 401);
    let (status, _) = server.post(
        "/mcp",
        &[
            ("Host", "evil.example:80"),
            ("Authorization", bearer.as_str()),
        ],
        init,
    );
    assert_eq!(status, 403);
    let mut foreign = good.to_vec();
    foreign.push(("Origin", "http://evil.example"));
    let (status, _) = server.post("/mcp", &foreign, init);
    assert_eq!(status, 403);
    let mut same_origin = good.to_vec();
    let origin = format!("http://{host}");
    same_origin.push(("Origin", origin.as_str()));
    let (status, _) = server.post(
        "/mcp",
        &same_origin,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    );
    assert_eq!(status, 200);

    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Read","arguments":{"file_path":"notes.md"}}}"#;
    let (status, body) = server.post("/mcp", &good, call);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("over http"), "{body}");
    // Nobody can be asked over plain HTTP responses, even when the client claims elicitation.
    let write = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Write","arguments":{"file_path":"x.txt","content":"x"}}}"#;
    let (_, body) = server.post("/mcp", &good, write);
    assert!(body.contains("permission_denied"), "{body}");
    assert!(!fixture.workspace().join("x.txt").exists());
    let (status, _) = server.post(
        "/mcp",
        &good,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status, 202);
    let (status, body) = server.post("/mcp", &good, "{broken");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("-32700"), "{body}");
    let (status, _) = server.post("/other", &good, init);
    assert_eq!(status, 404);
}

#[test]
fn mcp_server_over_http_serves_the_official_sdk_client() {
    let fixture = Fixture::new();
    fixture.write("notes.md", "read through streamable http\n");
    let server = HttpServer::start(&fixture, &[]);
    let url = format!("http://{}/mcp", server.address);
    let run = drive_http(
        &json!([
            {"op": "list"},
            call("Read", json!({"file_path": "notes.md"})),
            call("Nope", json!({})),
        ]),
        &url,
        &server.token,
    );
    assert_eq!(run.step(0)["serverInfo"]["name"], "janua");
    assert!(
        run.step(1)["tools"]
            .as_array()
            .is_some_and(|tools| tools.len() > 5)
    );
    let read = &run.step(2)["result"];
    assert!(result_text(read).contains("streamable http"), "{read}");
    assert_eq!(error_kind(&run.step(3)["result"]), Some("unknown_tool"));
}

#[test]
fn mcp_server_over_http_refuses_non_loopback_addresses() {
    let fixture = Fixture::new();
    let mut command = janua_command(&fixture, &[]);
    command.extend(["mcp", "serve", "--http", "0.0.0.0:0"].map(str::to_owned));
    let program = command.remove(0);
    let output = Command::new(program)
        .args(&command)
        .output()
        .expect("run janua");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a loopback address"));
}

#[test]
fn mcp_server_withdraws_a_question_when_its_call_is_cancelled() {
    let fixture = Fixture::new();
    let (mut child, mut stdin, mut stdout) = raw_server(&fixture, &[], &[]);
    let mut send = |line: &str| {
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().expect("flush");
    };
    let mut next = || -> Value {
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    assert!(next()["result"].is_object());
    send(
        r#"{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"Write","arguments":{"file_path":"q.txt","content":"x"}}}"#,
    );
    let question = next();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w"}}"#);
    let withdrawn = next();
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert_eq!(
        withdrawn["params"]["requestId"], question["id"],
        "{withdrawn}"
    );
    // No answer for the cancelled call; the server goes on serving.
    send(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    assert_eq!(next()["id"], "p");
    // A late answer to the withdrawn question changes nothing.
    let late = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"decision": "allow once"}}});
    send(&late.to_string());
    send(r#"{"jsonrpc":"2.0","id":"p2","method":"ping"}"#);
    assert_eq!(next()["id"], "p2");
    assert!(!fixture.workspace().join("q.txt").exists());
    drop(stdin);
    let _ = child.wait();
}

#[test]
fn mcp_server_forwards_a_tools_own_progress_messages() {
    let fixture = Fixture::new();
    let echo = fixture.plugin("echo", janua_test_guests::PIPELINE_ECHO, "");
    let run = drive(
        &json!([
            {"op": "call_progress", "name": "Echo", "arguments": {"text": "hi"}, "timeout_s": 60},
        ]),
        &serve(
            &fixture,
            &[
                "--plugins",
                &echo.display().to_string(),
                "--allowedTools",
                "Echo",
            ],
        ),
        &[],
    );
    let step = run.step(1);
    assert_eq!(step["result"]["isError"], false, "{step}");
    let progress = step["progress"].as_array().expect("progress");
    assert!(
        progress.iter().any(|update| update["message"] == "echoing"),
        "the guest's own message: {step}"
    );
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|update| update["progress"].as_f64())
        .collect();
    assert!(
        values.windows(2).all(|pair| pair[0] < pair[1]),
        "{values:?}"
    );
}

#[test]
fn mcp_server_protocol_stream_carries_only_json_rpc_while_a_guest_floods_stdout() {
    let fixture = Fixture::new();
    let flood = fixture.plugin("flood", REDTEAM_OUTPUT_FLOOD, "");
    let flood = flood.display().to_string();
    let (mut child, mut stdin, mut stdout) = raw_server(
        &fixture,
        &["--plugins", &flood, "--allowedTools", "Flood"],
        &[],
    );
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Flood","arguments":{"mode":"stdio","count":64}}}"#,
    ] {
        writeln!(stdin, "{line}").expect("write");
    }
    stdin.flush().expect("flush");
    // Every line up to the call's answer is a JSON-RPC message of janua's.
    loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).expect("read") > 0,
            "the server ended"
        );
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("not JSON-RPC: {:?}", &line[..line.len().min(200)]));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        if message["id"] == 2 {
            // The crash report quotes the tail of the guest's stderr, inside the result.
            assert_eq!(message["result"]["isError"], true, "{message}");
            break;
        }
        assert!(
            !line.contains("oooooooo"),
            "guest output on the protocol stream"
        );
    }
    drop(stdin);
    let _ = child.wait();
}

/// `mcp serve --watch`: a plugin directory that changes is reloaded, the client gets
/// `notifications/tools/list_changed`, and the next `tools/list` has the new tools.
#[test]
fn mcp_server_watch_announces_a_changed_plugin_and_lists_its_new_tools() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("swap", SANDBOX_SPIN, "");
    let plugin_text = plugin.display().to_string();
    let (mut child, mut stdin, stdout) = raw_server(
        &fixture,
        &["--plugins", &plugin_text, "--tools", ""],
        &["--watch", "--watch-interval-ms", "50"],
    );
    let mut send = |line: &str| {
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().expect("flush");
    };
    // Lines come through a channel so that a missing notification fails the test, not hangs it.
    let (lines, received) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let read = || -> Value {
        let line = received
            .recv_timeout(Duration::from_secs(60))
            .expect("a line within 60 s");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
    };
    let names = |listed: &Value| -> Vec<String> {
        listed["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|tool| tool["name"].as_str().expect("name").to_owned())
            .collect()
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    let init = read();
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(names(&read()), ["Spin", "SpinCheck"]);

    std::fs::copy(
        janua_test_guests::PIPELINE_ECHO,
        plugin.join("tool.wasm.partial"),
    )
    .expect("copy guest");
    std::fs::rename(plugin.join("tool.wasm.partial"), plugin.join("tool.wasm")).expect("swap");
    let notification = read();
    assert_eq!(
        notification,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    assert_eq!(names(&read()), ["Echo", "Picky"]);
    drop(stdin);
    assert!(child.wait().expect("exits").success());
}

/// Many calls in flight over one connection: whichever input thread runs a call, the other keeps
/// reading, so every call is answered exactly once, pings are answered meanwhile, and cancelled
/// calls (one running, the rest queued) are never answered.
#[test]
fn mcp_server_answers_every_pipelined_call_once_while_cancelling_others() {
    const READS: usize = 600;
    const SPINS: usize = 3;
    let fixture = Fixture::new();
    fixture.write("notes.md", "still here\n");
    let spin = fixture.plugin("spin", SANDBOX_SPIN, "limits = { timeout_ms = 60000 }");
    let plugins = spin.display().to_string();
    let (mut child, mut stdin, stdout) = raw_server(&fixture, &spin_flags(&plugins), &[]);
    let line = |id: &str, method: &str, params: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut send = |text: String| {
            writeln!(stdin, "{text}").expect("write");
            stdin.flush().expect("flush");
        };
        send(line(
            "init",
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
        ));
        // The first Spin runs at once (on an input thread); the others queue behind it.
        for index in 0..SPINS {
            send(line(
                &format!("spin-{index}"),
                "tools/call",
                json!({"name": "Spin", "arguments": {}}),
            ));
        }
        for index in 0..READS {
            send(line(
                &format!("read-{index}"),
                "tools/call",
                json!({"name": "Read", "arguments": {"file_path": "notes.md"}}),
            ));
            if index % 100 == 0 {
                send(line(&format!("ping-{index}"), "ping", json!({})));
            }
        }
        std::thread::sleep(Duration::from_millis(500));
        for index in 0..SPINS {
            send(
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": format!("spin-{index}")}})
                    .to_string(),
            );
        }
        stdin
    });
    let mut answered: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut lines = stdout.lines();
    let expected = 1 + READS + READS.div_ceil(100);
    while answered.values().sum::<usize>() < expected {
        let text = lines.next().expect("the server ended early").expect("read");
        let message: Value = serde_json::from_str(&text).expect("JSON");
        let id = message["id"].as_str().unwrap_or_default().to_owned();
        if id.starts_with("read-") {
            assert!(
                result_text(&message["result"]).contains("still here"),
                "{message}"
            );
        }
        *answered.entry(id).or_default() += 1;
    }
    let stdin = writer.join().expect("writer");
    drop(stdin);
    // Whatever else the server writes before it exits must not answer a cancelled call.
    for text in lines {
        let message: Value = serde_json::from_str(&text.expect("read")).expect("JSON");
        *answered
            .entry(message["id"].as_str().unwrap_or_default().to_owned())
            .or_default() += 1;
    }
    assert!(child.wait().expect("wait").success());
    for index in 0..READS {
        assert_eq!(
            answered.get(&format!("read-{index}")),
            Some(&1),
            "read-{index}"
        );
    }
    for index in (0..READS).step_by(100) {
        assert_eq!(
            answered.get(&format!("ping-{index}")),
            Some(&1),
            "ping-{index}"
        );
    }
    for index in 0..SPINS {
        assert_eq!(answered.get(&format!("spin-{index}")), None, "spin-{index}");
    }
    assert_eq!(answered.len(), expected, "{answered:?}");
    // The running Spin was stopped by its cancellation, not by its 60 s deadline.
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "{:?}",
        started.elapsed()
    );
}
