//! Hostile MCP servers as tool sources (`tests/mcp/hostile_server.py`, run by the system Python
//! under the process sandbox): each misbehaves in one way, and each time janua answers with
//! an error result or a warning, stays up, and keeps serving the server's good tool or restarts
//! it.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_support::{janua_command, repo};
use crate::support::Fixture;

/// `janua --mcp-config <hostile MODE> --allowedTools mcp__bad ARGS...` with the server's
/// timeouts; returns (exit code, stdout, stderr, wall time).
fn against(
    mode: &str,
    call_timeout_ms: u64,
    args: &[&str],
) -> (Option<i32>, String, String, Duration) {
    let fixture = Fixture::new();
    let script = repo().join("tests/mcp/hostile_server.py");
    let policy = json!({
        "read": [repo().join("tests/mcp")],
        "startupTimeoutMs": 3000,
        "callTimeoutMs": call_timeout_ms,
    });
    run_server(
        &fixture,
        &[script.display().to_string(), mode.to_owned()],
        &policy,
        args,
    )
}

/// `janua --mcp-config <python3 SERVER_ARGS as "bad"> --settings <its POLICY> --allowedTools
/// mcp__bad ARGS...` in `fixture`; returns (exit code, stdout, stderr, wall time).
fn run_server(
    fixture: &Fixture,
    server_args: &[String],
    policy: &Value,
    args: &[&str],
) -> (Option<i32>, String, String, Duration) {
    let config = fixture.root().join("hostile.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"bad": {"command": "/usr/bin/python3", "args": server_args}}})
            .to_string(),
    )
    .expect("config");
    let settings = json!({"mcpServerPolicy": {"bad": policy}}).to_string();
    let config = config.display().to_string();
    let mut command = janua_command(
        fixture,
        &[
            "--mcp-config",
            &config,
            "--settings",
            &settings,
            "--allowedTools",
            "mcp__bad",
        ],
    );
    command.extend(args.iter().map(|arg| (*arg).to_owned()));
    let program = command.remove(0);
    let started = Instant::now();
    let output = Command::new(program)
        .args(&command)
        .stdin(Stdio::null())
        .output()
        .expect("run janua");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        started.elapsed(),
    )
}

fn text(stdout: &str) -> String {
    let block: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("not JSON: {stdout}"));
    match &block["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

const CALL_OK: &[&str] = &["call", "mcp__bad__ok", "--input", "{}"];

#[test]
fn mcp_hostile_a_silent_server_costs_its_startup_timeout_and_nothing_else() {
    let (code, stdout, stderr, took) = against("silent", 5000, &["tools"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("Read") && !stdout.contains("mcp__bad"),
        "{stdout}"
    );
    assert!(
        stderr.contains("MCP server bad offers no tools"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn mcp_hostile_garbage_lines_are_skipped() {
    let (code, stdout, stderr, _) = against("garbage", 5000, CALL_OK);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(text(&stdout), "fine");
}

#[test]
fn mcp_hostile_an_oversized_line_ends_the_connection_not_the_host() {
    let (code, stdout, stderr, _) = against("huge_line", 20_000, CALL_OK);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(text(&stdout).starts_with("tool_failed"), "{stdout}");
    assert!(stdout.len() < 20_000, "{} bytes", stdout.len());
}

#[test]
fn mcp_hostile_a_ping_flood_that_never_reads_is_cut_off() {
    let (code, stdout, stderr, took) = against("flood", 20_000, CALL_OK);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(text(&stdout).starts_with("tool_failed"), "{stdout}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn mcp_hostile_broken_tool_listings_keep_only_valid_unique_tools() {
    let (code, stdout, stderr, _) = against("bad_tools", 5000, &["tools", "--format", "mcp"]);
    assert_eq!(code, Some(0), "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).expect("tools JSON");
    let names: Vec<String> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .filter(|name| name.starts_with("mcp__bad__"))
        .collect();
    assert!(names.contains(&"mcp__bad__ok".to_owned()), "{names:?}");
    for name in &names {
        assert!(name.len() <= 64, "{name}");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{name:?}"
        );
    }
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "duplicate names");
    // At most 1,000 tools are kept from one server.
    assert!(names.len() <= 1000, "{}", names.len());
    for skipped in ["no_schema", "string_schema", "broken_schema"] {
        assert!(
            !names.iter().any(|name| name.ends_with(skipped)),
            "{skipped}: {names:?}"
        );
    }
    assert!(stderr.contains("is taken by another tool"), "{stderr}");
}

#[test]
fn mcp_hostile_a_crash_mid_call_is_an_error_result() {
    let (code, stdout, stderr, _) = against("crash_on_call", 5000, CALL_OK);
    assert_eq!(code, Some(1), "{stderr}");
    let text = text(&stdout);
    assert!(text.starts_with("tool_failed"), "{text}");
    assert!(text.contains("exit status: 3"), "{text}");
}

#[test]
fn mcp_hostile_a_stderr_flood_is_drained_and_bounded() {
    let (code, stdout, stderr, _) = against("stderr_flood", 20_000, CALL_OK);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(text(&stdout), "fine");
    assert!(
        stderr.len() < 100_000,
        "the server's stderr reached janua's: {}",
        stderr.len()
    );
}

#[test]
fn mcp_hostile_an_unknown_protocol_revision_is_refused() {
    let (code, stdout, stderr, _) = against("wrong_version", 5000, &["tools"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stdout.contains("mcp__bad"), "{stdout}");
    assert!(stderr.contains("1999-01-01"), "{stderr}");
}

/// Issue 31, point 2: an MCP server granted the host's network still runs in mount, IPC and PID
/// namespaces under a root of its grants with the rules' view on top. Even with the workspace
/// granted writable, `.git/config` is read-only; a file outside its grants does not exist; the
/// host's processes are not there to signal. Control: `--unsandboxed-process` reaches all three.
#[test]
fn mcp_hostile_a_server_granted_the_network_still_gets_its_own_root_view_and_processes() {
    let fixture = Fixture::new();
    fixture.write(".git/config", "[core]\n");
    let secret = fixture.outside().join("secret.txt");
    std::fs::write(&secret, "outside").expect("secret");
    let workspace = fixture.workspace();
    let git_config = workspace.join(".git/config");
    let script = repo().join("tests/mcp/hostile_server.py");
    let targets = [
        format!("stat:{}", secret.display()),
        format!("kill:{}", std::process::id()),
        format!("write:{}", git_config.display()),
    ];
    let mut server_args = vec![script.display().to_string(), "probe".to_owned()];
    server_args.extend(targets.iter().cloned());
    let policy = json!({
        "read": [repo().join("tests/mcp")],
        "write": [workspace],
        "network": true,
    });
    let run = |extra: &[&str]| {
        let args: Vec<&str> = extra.iter().chain(CALL_OK).copied().collect();
        let (code, stdout, stderr, _) = run_server(&fixture, &server_args, &policy, &args);
        assert_eq!(code, Some(0), "{stdout}{stderr}");
        text(&stdout)
    };
    let confined = run(&[]);
    let expected = |results: [&str; 3]| {
        targets
            .iter()
            .zip(results)
            .map(|(target, result)| format!("{target} {result}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(confined, expected(["ENOENT", "ESRCH", "EROFS"]));
    assert_eq!(
        std::fs::read_to_string(&git_config).expect("config"),
        "[core]\n"
    );
    let unconfined = run(&["--unsandboxed-process"]);
    assert_eq!(unconfined, expected(["ok", "ok", "ok"]));
}
