//! The `janua` binary: output, exit codes and flag placement.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::{Fixture, cache_dir, janua_bin};

pub(crate) fn janua(fixture: &Fixture, args: &[&str]) -> Output {
    janua_with_stdin(fixture, args, None)
}

pub(crate) fn janua_with_stdin(fixture: &Fixture, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(janua_bin())
        .args(args)
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache_dir())
        .current_dir(fixture.workspace())
        .env("XDG_CONFIG_HOME", fixture.config_home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn janua");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().expect("wait for janua")
}

pub(crate) fn json_stdout(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn call_prints_the_block_and_exits_zero() {
    let fixture = Fixture::new();
    fixture.write("README.md", "# hello\n");
    let output = janua(
        &fixture,
        &[
            "call",
            "Read",
            "--input",
            r#"{"file_path":"README.md","limit":5}"#,
            "--id",
            "toolu_1",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        json_stdout(&output),
        serde_json::json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "     1\t# hello\n", "is_error": false})
    );
}

#[test]
fn input_from_stdin_and_flags_after_the_subcommand() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("n.txt"), "from cwd flag\n").unwrap();
    let cwd = elsewhere.path().to_str().unwrap();
    let after = janua_with_stdin(
        &fixture,
        &["call", "Read", "--input", "-", "--cwd", cwd],
        Some(r#"{"file_path":"n.txt"}"#),
    );
    let before = janua_with_stdin(
        &fixture,
        &["--cwd", cwd, "call", "Read", "--input", "-"],
        Some(r#"{"file_path":"n.txt"}"#),
    );
    for output in [after, before] {
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            json_stdout(&output)["content"]
                .as_str()
                .unwrap()
                .contains("from cwd flag")
        );
    }
}

#[test]
fn error_results_exit_one_and_config_errors_exit_two() {
    let fixture = Fixture::new();
    let unknown = janua(&fixture, &["call", "Nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert_eq!(json_stdout(&unknown)["is_error"], true);

    let malformed = janua(&fixture, &["call", "Read", "--input", "{not json"]);
    assert_eq!(malformed.status.code(), Some(1));
    assert!(
        json_stdout(&malformed)["content"]
            .as_str()
            .unwrap()
            .starts_with("invalid_input: the input is not valid JSON")
    );

    let chain = janua(
        &fixture,
        &["call", "Read", "--alias", "A=B", "--alias", "B=Read"],
    );
    assert_eq!(chain.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&chain.stderr).contains("alias chain A -> B -> Read"));
    assert!(chain.stdout.is_empty());

    let missing = janua(
        &fixture,
        &["call", "Read", "--cwd", "/nonexistent/janua-ws"],
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("workspace /nonexistent/janua-ws"));
    let bad_session = janua(&fixture, &["call", "Read", "--session", "../x"]);
    assert_eq!(bad_session.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_session.stderr).contains("invalid session id"));

    let usage = janua(&fixture, &["call"]);
    assert_eq!(usage.status.code(), Some(2));
    let bad_timeout = janua(&fixture, &["--timeout", "soon", "tools"]);
    assert_eq!(bad_timeout.status.code(), Some(2));
}

#[test]
fn outcome_flag_prints_the_structured_outcome() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "x\n");
    let output = janua(
        &fixture,
        &[
            "call",
            "Read",
            "--input",
            r#"{"file_path":"a.txt","limit":"1"}"#,
            "--outcome",
        ],
    );
    let printed = json_stdout(&output);
    assert_eq!(printed["outcome"]["coercions"][0]["pointer"], "/limit");
    assert_eq!(
        printed["outcome"]["decision"]["decided_by"]["kind"],
        "read_only_in_workspace"
    );
    assert_eq!(printed["tool_result"]["is_error"], false);
}

#[test]
fn tools_lists_the_registry_in_every_format() {
    let fixture = Fixture::new();
    let table = janua(&fixture, &["tools"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("Read  [read, read-only, concurrency-safe]  built-in"),
        "{text}"
    );
    assert!(text.contains("file_path: string (required)"), "{text}");

    let anthropic = json_stdout(&janua(&fixture, &["tools", "--format", "anthropic"]));
    let names: Vec<&str> = anthropic
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Bash",
            "Browser",
            "Edit",
            "Glob",
            "Grep",
            "NotebookEdit",
            "Read",
            "TaskOutput",
            "TaskStop",
            "WebFetch",
            "Write"
        ]
    );
    let read = anthropic
        .as_array()
        .unwrap()
        .iter()
        .position(|t| t["name"] == "Read")
        .unwrap();
    assert_eq!(anthropic[read]["name"], "Read");
    assert_eq!(anthropic[0]["input_schema"]["type"], "object");
    let openai = json_stdout(&janua(&fixture, &["tools", "--format", "openai"]));
    assert_eq!(
        openai[read]["function"]["parameters"]["required"][0],
        "file_path"
    );
    let mcp = json_stdout(&janua(&fixture, &["tools", "--format", "mcp"]));
    assert_eq!(mcp["tools"][read]["annotations"]["readOnlyHint"], true);
    assert_eq!(
        mcp["tools"][0]["annotations"]["readOnlyHint"], false,
        "Edit is not read-only"
    );

    let empty = janua(&fixture, &["tools", "--tools", ""]);
    assert!(String::from_utf8_lossy(&empty.stdout).contains("(no tools)"));
}

#[test]
fn help_describes_the_commands_and_flags() {
    let fixture = Fixture::new();
    let help = janua(&fixture, &["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    for expected in [
        "call",
        "tools",
        "--allowedTools",
        "--disallowedTools",
        "--alias",
        "--plugins",
        "--timeout",
        "--session",
    ] {
        assert!(text.contains(expected), "help lacks {expected}: {text}");
    }
}

#[test]
fn guest_stdio_never_reaches_the_hosts_stdout() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("echo", janua_test_guests::PIPELINE_ECHO, "");
    let output = janua(
        &fixture,
        &[
            "call",
            "Echo",
            "--input",
            r#"{"text":"hi"}"#,
            "--allowedTools",
            "Echo",
            "--plugins",
            plugin.to_str().unwrap(),
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stdout.contains("MARKER") && !stderr.contains("MARKER"),
        "{stdout}{stderr}"
    );
    assert_eq!(json_stdout(&output)["is_error"], false);
}

#[test]
fn consecutive_calls_share_the_workspaces_default_session() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "x\n");
    for _ in 0..2 {
        let output = janua(
            &fixture,
            &["call", "Read", "--input", r#"{"file_path":"a.txt"}"#],
        );
        assert_eq!(output.status.code(), Some(0));
    }
    janua(
        &fixture,
        &[
            "call",
            "Read",
            "--input",
            r#"{"file_path":"a.txt"}"#,
            "--session",
            "other",
        ],
    );
    let workspaces: Vec<_> = std::fs::read_dir(fixture.state_dir())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(workspaces.len(), 1, "one directory per workspace");
    let calls = |session: &str| {
        let path = workspaces[0].path().join(session).join("session.json");
        let state: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        state["calls"].as_u64().unwrap()
    };
    assert_eq!(calls("default"), 2);
    assert_eq!(calls("other"), 1);
}
