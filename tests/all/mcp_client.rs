//! MCP servers as tool sources: the official reference servers from npm
//! (`@modelcontextprotocol/server-everything`, `server-filesystem`) started by janua under the
//! process sandbox, their tools registered as `mcp__<server>__<tool>` and called through the
//! pipeline, with rules, the output budget, approval, timeouts and restarts.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp_support::{janua_command, reference_server, tools_dir};
use crate::support::Fixture;

/// Writes an `.mcp.json`-format file naming `servers` (name -> entry) at `path`.
fn mcp_config(path: &std::path::Path, servers: Value) {
    std::fs::write(path, json!({ "mcpServers": servers }).to_string()).expect("write mcp config");
}

/// Settings that let `server` read the installed npm packages (node resolves its modules there)
/// and time calls out after `call_timeout_ms`.
fn policy(server: &str, call_timeout_ms: u64) -> String {
    json!({"mcpServerPolicy": {server: {
        "read": [tools_dir().join("npm").display().to_string()],
        "callTimeoutMs": call_timeout_ms,
    }}})
    .to_string()
}

/// A fixture whose `--mcp-config` file names server-everything as `everything`.
fn everything(fixture: &Fixture) -> std::path::PathBuf {
    let config = fixture.root().join("operator-mcp.json");
    mcp_config(
        &config,
        json!({"everything": {"command": reference_server("everything").display().to_string(), "args": ["stdio"]}}),
    );
    config
}

/// The global flags that start server-everything as `everything` (reading the npm packages,
/// calls timing out after `call_timeout_ms`), then `extra`.
fn everything_flags(fixture: &Fixture, call_timeout_ms: u64, extra: &[&str]) -> Vec<String> {
    let mut flags = vec![
        "--mcp-config".to_owned(),
        everything(fixture).display().to_string(),
        "--settings".to_owned(),
        policy("everything", call_timeout_ms),
    ];
    flags.extend(extra.iter().map(|flag| (*flag).to_owned()));
    flags
}

/// `&str`s of `flags`.
fn strs(flags: &[String]) -> Vec<&str> {
    flags.iter().map(String::as_str).collect()
}

/// `janua GLOBAL... ARGS...`, returning (exit code, stdout, stderr).
fn janua(fixture: &Fixture, global: &[&str], args: &[&str]) -> (Option<i32>, String, String) {
    janua_with_stdin(fixture, global, args, "")
}

/// The same, with `stdin` as the process's input (`--input -`).
fn janua_with_stdin(
    fixture: &Fixture,
    global: &[&str],
    args: &[&str],
    stdin: &str,
) -> (Option<i32>, String, String) {
    let mut command = janua_command(fixture, global);
    command.extend(args.iter().map(|arg| (*arg).to_owned()));
    let program = command.remove(0);
    let mut child = Command::new(program)
        .args(&command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run janua");
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let output = child.wait_with_output().expect("wait for janua");
    writer.join().expect("stdin writer");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn block(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("not a tool_result: {stdout}"))
}

fn block_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

#[test]
fn mcp_client_registers_reference_server_tools_under_rules() {
    let fixture = Fixture::new();
    let flags = everything_flags(&fixture, 30_000, &[]);
    let base = strs(&flags);

    let (code, stdout, stderr) = janua(&fixture, &base, &["tools", "--format", "mcp"]);
    assert_eq!(code, Some(0), "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).expect("tools JSON");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    for name in ["mcp__everything__echo", "mcp__everything__get-sum", "Read"] {
        assert!(names.contains(&name), "{name} missing: {names:?}\n{stderr}");
    }

    // No rule: an MCP tool is never allowed by default, and nobody can be asked.
    let echo = [
        "call",
        "mcp__everything__echo",
        "--input",
        r#"{"message":"hi"}"#,
    ];
    let (code, stdout, _) = janua(&fixture, &base, &echo);
    assert_eq!(code, Some(1));
    assert!(
        block_text(&block(&stdout)).starts_with("permission_denied"),
        "{stdout}"
    );

    // A server rule allows all its tools; a deny rule naming one removes it.
    let mut allowed = base.to_vec();
    allowed.extend([
        "--allowedTools",
        "mcp__everything",
        "--disallowedTools",
        "mcp__everything__get-sum",
    ]);
    let (code, stdout, stderr) = janua(&fixture, &allowed, &echo);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(block_text(&block(&stdout)), "Echo: hi");
    let (code, stdout, _) = janua(
        &fixture,
        &allowed,
        &[
            "call",
            "mcp__everything__get-sum",
            "--input",
            r#"{"a":1,"b":2}"#,
        ],
    );
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        block_text(&block(&stdout)).starts_with("unknown_tool"),
        "{stdout}"
    );

    // A bare-name deny removes the tool from the registry.
    let mut removed = base.to_vec();
    removed.extend(["--disallowedTools", "mcp__everything__echo"]);
    let (_, stdout, _) = janua(&fixture, &removed, &["tools", "--format", "mcp"]);
    assert!(!stdout.contains("mcp__everything__echo"), "{stdout}");
    assert!(stdout.contains("mcp__everything__get-sum"), "{stdout}");
}

#[test]
fn mcp_client_schema_coercion_and_output_budget_apply_to_server_tools() {
    let fixture = Fixture::new();
    let flags = everything_flags(&fixture, 30_000, &["--allowedTools", "mcp__everything__*"]);
    let base = strs(&flags);
    // "2" is coerced to the schema's number before the server sees it.
    let (code, stdout, stderr) = janua(
        &fixture,
        &base,
        &[
            "call",
            "mcp__everything__get-sum",
            "--input",
            r#"{"a":1,"b":"2"}"#,
        ],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(block_text(&block(&stdout)).contains('3'), "{stdout}");
    // A missing required field never reaches the server.
    let (code, stdout, _) = janua(
        &fixture,
        &base,
        &["call", "mcp__everything__echo", "--input", "{}"],
    );
    assert_eq!(code, Some(1));
    assert!(
        block_text(&block(&stdout)).starts_with("invalid_input"),
        "{stdout}"
    );

    // 25,000 estimated tokens inline (100,000 characters); the whole result goes to a file.
    let message = "0123456789".repeat(20_000);
    let input = json!({ "message": message }).to_string();
    let (code, stdout, stderr) = janua_with_stdin(
        &fixture,
        &base,
        &["call", "--outcome", "mcp__everything__echo", "--input", "-"],
        &input,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let printed: Value = serde_json::from_str(stdout.trim()).expect("outcome JSON");
    let text = block_text(&printed["tool_result"]);
    assert!(text.len() < 110_000, "{} characters inline", text.len());
    let saved = printed["outcome"]["saved_to"].as_str().expect("saved_to");
    let whole = std::fs::read_to_string(saved).expect("the saved result");
    assert!(whole.contains(&message), "the file holds the whole result");
}

#[test]
fn mcp_client_filesystem_server_reads_the_workspace_and_nothing_else() {
    let fixture = Fixture::new();
    fixture.write("inside.txt", "inside the workspace\n");
    let config = fixture.root().join("fs-mcp.json");
    let workspace = fixture.workspace().display().to_string();
    let outside = fixture.outside().display().to_string();
    mcp_config(
        &config,
        json!({"fs": {"command": reference_server("filesystem").display().to_string(),
                      "args": [workspace, outside]}}),
    );
    let config = config.display().to_string();
    let settings = policy("fs", 30_000);
    let base = [
        "--mcp-config",
        config.as_str(),
        "--settings",
        settings.as_str(),
        "--allowedTools",
        "mcp__fs",
    ];
    let inside = json!({"path": fixture.workspace().join("inside.txt")}).to_string();
    let (code, stdout, stderr) = janua(
        &fixture,
        &base,
        &["call", "mcp__fs__read_text_file", "--input", &inside],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(block_text(&block(&stdout)).contains("inside the workspace"));
    // The server itself allows the outside directory, but its sandbox grants only the workspace.
    let secret = json!({"path": fixture.outside().join("secret.txt")}).to_string();
    let (code, stdout, _) = janua(
        &fixture,
        &base,
        &["call", "mcp__fs__read_text_file", "--input", &secret],
    );
    assert_eq!(code, Some(1), "{stdout}");
    assert!(!stdout.contains("TOPSECRET"), "{stdout}");
    // Writes by the server are refused by its sandbox even when a rule allows the call.
    let write = json!({"path": fixture.workspace().join("made.txt"), "content": "x"}).to_string();
    let (code, stdout, _) = janua(
        &fixture,
        &base,
        &["call", "mcp__fs__write_file", "--input", &write],
    );
    assert_eq!(code, Some(1), "{stdout}");
    assert!(!fixture.workspace().join("made.txt").exists());
}

#[test]
fn mcp_client_starts_project_servers_only_when_the_operator_approves() {
    let fixture = Fixture::new();
    mcp_config(
        &fixture.workspace().join(".mcp.json"),
        json!({"proj": {"command": reference_server("everything").display().to_string()}}),
    );
    // The repository approving its own server counts for nothing.
    fixture.write(
        ".janua/settings.json",
        json!({"enabledMcpjsonServers": ["proj"], "enableAllProjectMcpServers": true}).to_string(),
    );
    let settings = policy("proj", 30_000);
    let base = ["--settings", settings.as_str(), "--trust-workspace"];
    let (code, stdout, stderr) = janua(&fixture, &base, &["tools"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stdout.contains("mcp__proj__"), "{stdout}");
    assert!(stderr.contains("has not been approved"), "{stderr}");
    assert!(
        stderr.contains("only user settings and --settings"),
        "{stderr}"
    );

    let mut approved = base.to_vec();
    approved.extend(["--approve-mcp", "proj"]);
    let (code, stdout, stderr) = janua(&fixture, &approved, &["tools"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("mcp__proj__echo"), "{stdout}\n{stderr}");

    // The operator's settings approve by name, so only where the workspace is trusted.
    let operator = json!({"enabledMcpjsonServers": ["proj"]}).to_string();
    let untrusted = [
        "--settings",
        settings.as_str(),
        "--settings",
        operator.as_str(),
    ];
    let (_, stdout, stderr) = janua(&fixture, &untrusted, &["tools"]);
    assert!(!stdout.contains("mcp__proj__"), "{stdout}");
    assert!(stderr.contains("only in trusted workspaces"), "{stderr}");
    let mut trusted = untrusted.to_vec();
    trusted.push("--trust-workspace");
    let (_, stdout, stderr) = janua(&fixture, &trusted, &["tools"]);
    assert!(stdout.contains("mcp__proj__echo"), "{stdout}\n{stderr}");

    // A refusal from any scope wins over an approval.
    let refused = json!({"disabledMcpjsonServers": ["proj"]}).to_string();
    approved.extend(["--settings", refused.as_str()]);
    let (_, stdout, stderr) = janua(&fixture, &approved, &["tools"]);
    assert!(!stdout.contains("mcp__proj__"), "{stdout}");
    assert!(stderr.contains("disabledMcpjsonServers"), "{stderr}");
}

#[test]
fn mcp_client_broken_configuration_and_missing_servers_are_reported() {
    let fixture = Fixture::new();
    let broken = fixture.root().join("broken.json");
    std::fs::write(
        &broken,
        r#"{"mcpServers":{"x":{"command":"a","url":"http://h"}}}"#,
    )
    .unwrap();
    let (code, _, stderr) = janua(
        &fixture,
        &["--mcp-config", &broken.display().to_string()],
        &["tools"],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("server \"x\""), "{stderr}");

    // The same mistakes in the repository's .mcp.json cost warnings, never the start.
    std::fs::write(
        fixture.workspace().join(".mcp.json"),
        r#"{"mcpServers":{"x":{"command":"a","url":"http://h"},"old":{"type":"sse","url":"http://h"},"git__hub":{"command":"a"}}}"#,
    )
    .unwrap();
    let (code, stdout, stderr) = janua(&fixture, &[], &["tools"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Read"), "{stdout}");
    for name in ["\"x\"", "\"old\"", "\"git__hub\""] {
        assert!(stderr.contains(name), "{name}: {stderr}");
    }
    std::fs::write(fixture.workspace().join(".mcp.json"), "{not json").unwrap();
    let (code, _, stderr) = janua(&fixture, &[], &["tools"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("its servers are not started"), "{stderr}");
    std::fs::remove_file(fixture.workspace().join(".mcp.json")).unwrap();

    // A server that is not installed, or exits at once, costs a warning, not the host.
    let missing = fixture.root().join("missing.json");
    mcp_config(
        &missing,
        json!({"gone": {"command": "/nonexistent/server"}, "quits": {"command": "/bin/false"}}),
    );
    let (code, stdout, stderr) = janua(
        &fixture,
        &["--mcp-config", &missing.display().to_string()],
        &["tools"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Read"), "{stdout}");
    assert!(
        stderr.contains("MCP server gone was not started"),
        "{stderr}"
    );
    assert!(
        stderr.contains("MCP server quits offers no tools"),
        "{stderr}"
    );
}

/// A `janua run` session whose MCP server is killed mid-call and times out.
struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
}

impl Session {
    fn start(fixture: &Fixture, global: &[&str]) -> Self {
        let mut command = janua_command(fixture, global);
        command.push("run".into());
        let program = command.remove(0);
        let mut child = Command::new(program)
            .args(&command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start janua run");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str(&line)
                    && sender.send(value).is_err()
                {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, id: &str, name: &str, input: Value) {
        let line = json!({"type": "tool_use", "id": id, "name": name, "input": input});
        writeln!(self.stdin, "{line}").expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The `tool_result` block answering `id`.
    fn result(&self, id: &str) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no result for {id}"));
            if line["type"] == "user"
                && let Some(block) = line["message"]["content"]
                    .as_array()
                    .and_then(|blocks| blocks.iter().find(|block| block["tool_use_id"] == id))
            {
                return block.clone();
            }
        }
    }

    /// Pids of the session's descendants whose command line mentions `needle`.
    fn descendants(&self, needle: &str) -> Vec<i32> {
        let mut found = Vec::new();
        let mut queue = vec![i32::try_from(self.child.id()).unwrap()];
        while let Some(pid) = queue.pop() {
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
                continue;
            };
            for task in tasks.flatten() {
                let children =
                    std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
                for child in children
                    .split_whitespace()
                    .filter_map(|pid| pid.parse::<i32>().ok())
                {
                    let cmdline =
                        std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
                    if String::from_utf8_lossy(&cmdline).contains(needle) {
                        found.push(child);
                    }
                    queue.push(child);
                }
            }
        }
        found
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_client_a_killed_or_hung_server_yields_errors_and_comes_back() {
    let fixture = Fixture::new();
    let flags = everything_flags(&fixture, 2_000, &["--allowedTools", "mcp__everything"]);
    let mut session = Session::start(&fixture, &strs(&flags));
    session.send("t1", "mcp__everything__echo", json!({"message": "one"}));
    assert_eq!(block_text(&session.result("t1")), "Echo: one");
    let servers = session.descendants("mcp-server-everything");
    assert!(!servers.is_empty(), "the server runs under janua");

    // Killed in the middle of a call: that call is an error result, the host goes on.
    session.send(
        "t2",
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 1.5, "steps": 3}),
    );
    std::thread::sleep(Duration::from_millis(500));
    for pid in &servers {
        kill(*pid);
    }
    let crashed = session.result("t2");
    assert_eq!(crashed["is_error"], true, "{crashed}");
    assert!(block_text(&crashed).starts_with("tool_failed"), "{crashed}");

    // The next call restarts it.
    session.send("t3", "mcp__everything__echo", json!({"message": "back"}));
    assert_eq!(block_text(&session.result("t3")), "Echo: back");
    let restarted = session.descendants("mcp-server-everything");
    assert!(
        !restarted.is_empty() && restarted != servers,
        "{servers:?} -> {restarted:?}"
    );

    // A call past its 2 s timeout is a timeout; the hung server is replaced.
    session.send(
        "t4",
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 10, "steps": 2}),
    );
    let slow = session.result("t4");
    assert!(block_text(&slow).starts_with("timeout"), "{slow}");
    session.send("t5", "mcp__everything__echo", json!({"message": "again"}));
    assert_eq!(block_text(&session.result("t5")), "Echo: again");
}

/// `kill -9 pid` (one of this test's own descendants).
fn kill(pid: i32) {
    let status = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    assert!(status.is_ok_and(|status| status.success()), "kill {pid}");
}

#[test]
fn mcp_client_uses_a_streamable_http_server_with_its_headers() {
    // The server: another janua, serving its workspace over HTTP with a bearer token.
    let inner = Fixture::new();
    inner.write("inner.txt", "from the other janua\n");
    let mut command = janua_command(&inner, &["--allowedTools", "Read"]);
    command.extend(["mcp", "serve", "--http", "127.0.0.1:0"].map(str::to_owned));
    let program = command.remove(0);
    let mut server = Command::new(program)
        .args(&command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the HTTP server");
    let mut stderr = BufReader::new(server.stderr.take().expect("stderr"));
    let (mut url, mut token) = (String::new(), String::new());
    let mut line = String::new();
    while url.is_empty() || token.is_empty() {
        line.clear();
        assert!(
            stderr.read_line(&mut line).expect("read") > 0,
            "no URL printed"
        );
        if let Some(found) = line.trim().strip_prefix("janua: MCP server listening on ") {
            url = found.to_owned();
        }
        if let Some(found) = line.trim().strip_prefix("janua: bearer token: ") {
            token = found.to_owned();
        }
    }
    let fixture = Fixture::new();
    let config = fixture.root().join("http-mcp.json");
    let file = inner.workspace().join("inner.txt").display().to_string();
    let input = json!({ "file_path": file }).to_string();
    let call = |headers: Value| {
        mcp_config(
            &config,
            json!({"inner": {"type": "http", "url": url, "headers": headers}}),
        );
        janua(
            &fixture,
            &[
                "--mcp-config",
                &config.display().to_string(),
                "--allowedTools",
                "mcp__inner",
            ],
            &["call", "mcp__inner__Read", "--input", &input],
        )
    };
    let (code, stdout, stderr) = call(json!({"Authorization": format!("Bearer {token}")}));
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        block_text(&block(&stdout)).contains("from the other janua"),
        "{stdout}"
    );
    // Without the token the server refuses the session: no tools, a warning, the host goes on.
    let (code, stdout, stderr) = call(json!({}));
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        block_text(&block(&stdout)).starts_with("unknown_tool"),
        "{stdout}"
    );
    assert!(stderr.contains("401"), "{stderr}");
    let _ = server.kill();
    let _ = server.wait();
}

/// A Streamable HTTP server that answers with event streams and session ids, and forgets its
/// session once: what the SDK-based servers do.
fn event_stream_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::Read as _;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    let seen: std::sync::Arc<std::sync::Mutex<Vec<String>>> = std::sync::Arc::default();
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        let mut sessions = 0;
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            let (head, body) = loop {
                let read = stream.read(&mut buffer).unwrap_or(0);
                if read == 0 {
                    break (String::new(), String::new());
                }
                request.extend_from_slice(&buffer[..read]);
                let text = String::from_utf8_lossy(&request).into_owned();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|line| {
                            line.to_ascii_lowercase()
                                .strip_prefix("content-length: ")
                                .map(str::to_owned)
                        })
                        .and_then(|value| value.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if body.len() >= length {
                        break (head.to_owned(), body.to_owned());
                    }
                }
            };
            let message: Value = serde_json::from_str(&body).unwrap_or_default();
            let method = message["method"].as_str().unwrap_or_default().to_owned();
            let session = head.lines().find_map(|line| {
                line.to_ascii_lowercase()
                    .strip_prefix("mcp-session-id: ")
                    .map(str::to_owned)
            });
            log.lock()
                .unwrap()
                .push(format!("{method} {}", session.clone().unwrap_or_default()));
            let reply = |stream: &mut std::net::TcpStream,
                         status: &str,
                         headers: &str,
                         body: &str| {
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
                    body.len()
                );
            };
            let current = format!("s{sessions}");
            if method == "initialize" {
                sessions += 1;
                let result = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "stub", "version": "0"}}});
                let events = format!("event: message\ndata: {result}\n\n");
                reply(
                    &mut stream,
                    "200 OK",
                    &format!("Content-Type: text/event-stream\r\nMcp-Session-Id: s{sessions}\r\n"),
                    &events,
                );
                continue;
            }
            // The first session is forgotten after tools/list: the client must start another.
            if session.as_deref() != Some(current.as_str())
                || (current == "s1" && method == "tools/call")
            {
                reply(&mut stream, "404 Not Found", "", "");
                continue;
            }
            if message.get("id").is_none() {
                reply(&mut stream, "202 Accepted", "", "");
                continue;
            }
            let result = match method.as_str() {
                "tools/list" => {
                    json!({"tools": [{"name": "shout", "description": "Upper-cases", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}]})
                }
                _ => {
                    json!({"content": [{"type": "text", "text": message["params"]["arguments"]["text"].as_str().unwrap_or_default().to_uppercase()}]})
                }
            };
            let notice = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}});
            let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
            let events = format!("data: {notice}\n\ndata: {answer}\n\n");
            reply(
                &mut stream,
                "200 OK",
                "Content-Type: text/event-stream\r\n",
                &events,
            );
        }
    });
    (format!("http://{address}/mcp"), seen)
}

#[test]
fn mcp_client_reads_event_streams_and_starts_a_forgotten_session_again() {
    let (url, seen) = event_stream_server();
    let fixture = Fixture::new();
    let config = fixture.root().join("sse-mcp.json");
    mcp_config(&config, json!({"stub": {"type": "http", "url": url}}));
    let (code, stdout, stderr) = janua(
        &fixture,
        &[
            "--mcp-config",
            &config.display().to_string(),
            "--allowedTools",
            "mcp__stub",
        ],
        &["call", "mcp__stub__shout", "--input", r#"{"text":"hello"}"#],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(block_text(&block(&stdout)), "HELLO");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "initialize ",
            "notifications/initialized s1",
            "tools/list s1",
            "tools/call s1",
            "initialize ",
            "notifications/initialized s2",
            "tools/call s2",
        ],
        "{seen:?}"
    );
}

/// A loopback HTTP server answering every request with `body`, counting the requests it saw.
fn counting_server(body: &'static str) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::Read as _;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&hits);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buffer = [0u8; 4096];
            let _ = stream.read(&mut buffer);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (format!("http://{address}/data.txt"), hits)
}

#[test]
fn mcp_client_servers_have_no_network_unless_the_operator_grants_it() {
    let (url, hits) = counting_server("payload for the gzip tool");
    let fixture = Fixture::new();
    let config = everything(&fixture);
    let config = config.display().to_string();
    let fetch = json!({"name": "data.gz", "data": url, "outputType": "resource"}).to_string();
    let call = [
        "call",
        "mcp__everything__gzip-file-as-resource",
        "--input",
        fetch.as_str(),
    ];
    let run = |network: bool| {
        let settings = json!({"mcpServerPolicy": {"everything": {
            "read": [tools_dir().join("npm").display().to_string()],
            "network": network,
        }}})
        .to_string();
        janua(
            &fixture,
            &[
                "--mcp-config",
                config.as_str(),
                "--settings",
                settings.as_str(),
                "--allowedTools",
                "mcp__everything",
            ],
            &call,
        )
    };
    // By default the server lives in its own network namespace: the host's loopback is not
    // there, and the test server sees nothing.
    let (code, stdout, stderr) = run(false);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        block_text(&block(&stdout)).starts_with("tool_failed"),
        "{stdout}"
    );
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0);
    // Granted, the same call reaches it.
    let (code, stdout, stderr) = run(true);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
}
