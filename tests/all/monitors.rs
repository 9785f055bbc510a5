//! Monitors, with the real `monitors-scripted` guest and the shipped examples: lifecycle events in
//! order, cancelling a looping call, halting the session, counted drops, the hash-chained audit
//! log and `janua audit verify`, the rate limiter, and the example hooks.

use std::path::Path;
use std::time::{Duration, Instant};

use janua::{ErrorKind, Runtime, RuntimeConfig};
use janua_test_guests::{MONITORS_SCRIPTED, PIPELINE_ECHO, SANDBOX_SPIN};
use serde_json::{Value, json};

use crate::hook_plugins::toml_inline;
use crate::support::{Fixture, call, error_text, janua_bin, ok_text};

/// A `[[monitors]]` table for the scripted guest.
fn monitor(config: Value, extra: &str) -> String {
    format!(
        "[[monitors]]\ncomponent = \"ext.wasm\"\nname = \"scripted\"\nconfig = {}\n{extra}\n",
        toml_inline(&config)
    )
}

/// The grant that lets the monitor write its record in the plugin's data directory.
const RECORD_GRANT: &str =
    "grants = { fs = [{ path = \"${PLUGIN_DATA}\", access = \"read-write\" }] }";

/// The record file `name` in the `monitors` plugin's data directory of `fixture`'s session.
fn record_file(runtime: &Runtime, name: &str) -> std::path::PathBuf {
    runtime
        .session()
        .dir()
        .parent()
        .unwrap()
        .join(".plugin-data/monitors")
        .join(name)
}

async fn with_monitor(
    fixture: &Fixture,
    table: String,
    configure: impl FnOnce(&mut RuntimeConfig),
) -> Runtime {
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    let spin = fixture.plugin("spin", SANDBOX_SPIN, "limits = { timeout_ms = 60000 }");
    let monitors = fixture.extension_plugin("monitors", MONITORS_SCRIPTED, &table);
    fixture
        .runtime(&[echo, spin, monitors], |config| {
            config.allowed_tools = vec!["Echo".into(), "Picky".into(), "Spin".into()];
            configure(config);
        })
        .await
}

fn recorded(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a recorded event"))
        .collect()
}

/// The named test of the `monitors-scripted` guest: a session's lifecycle events reach the
/// monitor in order, with increasing `seq`, its `config`, and the call's fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn monitors_scripted() {
    let fixture = Fixture::new();
    let table = monitor(
        json!({"record": "${PLUGIN_DATA}/events.jsonl"}),
        RECORD_GRANT,
    );
    let runtime = with_monitor(&fixture, table, |_| {}).await;
    let log = record_file(&runtime, "events.jsonl");
    runtime.start_session().await;
    let batch = runtime
        .dispatch_batch(crate::support::batch(&[
            ("one", "Echo", json!({"text": "a"})),
            ("two", "Picky", json!({"word": "NOPE"})),
        ]))
        .await;
    error_text(&batch.results[1], ErrorKind::ValidationFailed);
    let ended = runtime.end_session("other").await;
    assert_eq!(ended.monitors[0].dropped, 0);
    let events = recorded(&log);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "session_start",
            "decision",
            "tool_started",
            "tool_finished",
            "tool_finished",
            "batch_finished",
            "session_end"
        ]
    );
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|pair| pair[0] < pair[1]), "{seqs:?}");
    assert_eq!(events[1]["verdict"], "allow");
    assert_eq!(events[2]["tool_input"], json!({"text": "a"}));
    assert_eq!(events[4]["tool_use_id"], "two");
    assert_eq!(events[4]["error_kind"], "validation_failed");
    assert_eq!(events[5]["tool_use_ids"], json!(["one", "two"]));
    assert_eq!(events[0]["config"]["record"], log.display().to_string());
    assert!(
        events
            .iter()
            .all(|e| e["session_id"] == runtime.session().id())
    );
}

/// A monitor's cancel interrupts a looping guest through its epoch deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_monitor_cancels_a_looping_call() {
    let fixture = Fixture::new();
    let runtime = with_monitor(
        &fixture,
        monitor(json!({"cancel_tool": "Spin"}), ""),
        |_| {},
    )
    .await;
    let started = Instant::now();
    let result = call(&runtime, "Spin", json!({})).await;
    let text = error_text(&result, ErrorKind::Cancelled);
    assert!(
        text.contains("monitor scripted cancelled the call: scripted cancel"),
        "{text}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    ok_text(&call(&runtime, "Echo", json!({"text": "still fine"})).await);
}

/// A monitor's halt stops the session: later calls are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_monitor_halts_the_session() {
    let fixture = Fixture::new();
    let runtime = with_monitor(&fixture, monitor(json!({"halt_tool": "Picky"}), ""), |_| {}).await;
    call(&runtime, "Picky", json!({"word": "x"})).await;
    // The monitor is asynchronous: wait (boundedly) for its answer to land.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let result = call(&runtime, "Echo", json!({"text": "x"})).await;
        if result.error_kind() == Some(ErrorKind::HookStopped) {
            assert!(error_text(&result, ErrorKind::HookStopped).contains("scripted halt"));
            // The caller is told to stop its loop.
            assert!(
                result
                    .outcome
                    .stop
                    .as_deref()
                    .unwrap()
                    .contains("scripted halt")
            );
            break;
        }
        assert!(Instant::now() < deadline, "the halt never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A slow monitor never slows the pipeline: events beyond its queue are dropped, counted, and
/// reported to it on the next event it receives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_monitor_drops_and_counts_events() {
    let fixture = Fixture::new();
    let table = monitor(
        json!({"record": "${PLUGIN_DATA}/slow.jsonl", "sleep_ms": 300}),
        &format!("queue = 1\n{RECORD_GRANT}"),
    );
    let runtime = with_monitor(&fixture, table, |_| {}).await;
    let log = record_file(&runtime, "slow.jsonl");
    let started = Instant::now();
    for _ in 0..5 {
        ok_text(&call(&runtime, "Echo", json!({"text": "x"})).await);
    }
    // 15 events at 300 ms each would take 4.5 s if the pipeline waited for the monitor.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the pipeline waited for the monitor: {:?}",
        started.elapsed()
    );
    // Let the queue drain, so the next event is delivered and carries the count of the missed.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    ok_text(&call(&runtime, "Echo", json!({"text": "after"})).await);
    let ended = runtime.end_session("other").await;
    let stats = &ended.monitors[0];
    assert!(stats.dropped > 0, "{stats:?}");
    assert!(
        ended.warnings.iter().any(|w| w.contains("missed")),
        "{:?}",
        ended.warnings
    );
    let events = recorded(&log);
    let reported: u64 = events.iter().filter_map(|e| e["dropped"].as_u64()).sum();
    assert!(reported > 0, "{events:?}");
    assert!(reported <= stats.dropped);
}

fn janua(fixture: &Fixture, plugins: &[&Path], args: &[&str]) -> std::process::Output {
    let mut command = std::process::Command::new(janua_bin());
    command
        .arg("--cwd")
        .arg(fixture.workspace())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(crate::support::cache_dir())
        .arg("--no-user-settings");
    for plugin in plugins {
        command.arg("--plugins").arg(plugin);
    }
    command.args(args).output().expect("run janua")
}

/// The shipped audit monitor writes a hash-chained log across sessions; `janua audit verify`
/// accepts it and names the line after a modified one.
#[test]
fn the_audit_chain_verifies_and_detects_a_modified_line() {
    let fixture = Fixture::new();
    fixture.write("notes.md", "hello\n");
    let dir = fixture.root().join("audit-plugin");
    let written = janua(
        &fixture,
        &[],
        &["example", "monitor-audit", dir.to_str().unwrap()],
    );
    assert_eq!(
        written.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    for _ in 0..2 {
        let output = janua(
            &fixture,
            &[&dir],
            &["call", "Read", "--input", r#"{"file_path":"notes.md"}"#],
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let log = std::fs::read_dir(fixture.state_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path().join(".plugin-data/audit/audit.jsonl"))
        .find(|path| path.is_file())
        .expect("the audit log exists");
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let kinds: Vec<String> = lines
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["event"]["event"].to_string())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| k.contains("session_start")).count(),
        2,
        "{kinds:?}"
    );
    assert!(kinds.iter().any(|k| k.contains("tool_finished")));
    let verified = janua(&fixture, &[], &["audit", "verify", log.to_str().unwrap()]);
    assert_eq!(
        verified.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    assert!(String::from_utf8_lossy(&verified.stdout).contains(&format!("{} lines", lines.len())));

    let mut tampered = lines.clone();
    tampered[2] = tampered[2].replace("\"Read\"", "\"Bash\"");
    assert_ne!(tampered[2], lines[2], "the third line names Read");
    std::fs::write(&log, format!("{}\n", tampered.join("\n"))).unwrap();
    let verified = janua(&fixture, &[], &["audit", "verify", log.to_str().unwrap()]);
    assert_eq!(verified.status.code(), Some(1));
    let printed = String::from_utf8_lossy(&verified.stdout);
    assert!(printed.contains("line 4: prev does not match"), "{printed}");
}

/// The shipped rate limiter cancels Bash calls beyond its per-minute budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_monitor_cancels_bash_beyond_its_budget() {
    let fixture = Fixture::new();
    let dir = fixture.root().join("rate-plugin");
    janua::extensions::write_example("monitor-rate-limit", &dir).unwrap();
    let manifest = std::fs::read_to_string(dir.join("janua.toml")).unwrap();
    assert!(manifest.contains("per_minute = 30"), "{manifest}");
    std::fs::write(
        dir.join("janua.toml"),
        manifest.replace("per_minute = 30", "per_minute = 1"),
    )
    .unwrap();
    let runtime = fixture
        .runtime(&[dir], |config| {
            config.allowed_tools = vec!["Bash".into()];
        })
        .await;
    let bash = |command: &str| json!({"command": command});
    let first = call(&runtime, "Bash", bash("echo first")).await;
    assert!(ok_text(&first).contains("first"));
    let second = call(&runtime, "Bash", bash("sleep 20; echo second")).await;
    let text = error_text(&second, ErrorKind::Cancelled);
    assert!(text.contains("rate limit"), "{text}");
}

/// The shipped example hooks: the Bash guard denies `rm -rf` of critical paths, and the input
/// rewriter adds `--no-pager` to git commands before the decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_hooks_guard_and_rewrite_bash() {
    let fixture = Fixture::new();
    let guard = fixture.root().join("guard");
    let rewriter = fixture.root().join("rewriter");
    janua::extensions::write_example("hook-bash-guard", &guard).unwrap();
    janua::extensions::write_example("hook-input-rewriter", &rewriter).unwrap();
    assert!(
        janua::extensions::write_example("hook-bash-guard", &guard).is_err(),
        "not empty"
    );
    assert!(janua::extensions::write_example("hook-nope", &fixture.root().join("x")).is_err());
    let runtime = fixture
        .runtime(&[guard, rewriter], |config| {
            config.allowed_tools = vec!["Bash".into()];
        })
        .await;
    let bash = |command: &str| json!({"command": command});
    for command in ["rm -rf ~", "cd build && rm -fr /", "sudo rm -r -f /etc"] {
        let text = error_text(
            &call(&runtime, "Bash", bash(command)).await,
            ErrorKind::PermissionDenied,
        );
        assert!(text.contains("bash-guard"), "{command}: {text}");
    }
    fixture.write("build/out.o", "x");
    ok_text(&call(&runtime, "Bash", bash("rm -rf ./build")).await);
    assert!(!fixture.workspace().join("build").exists());
    let rewritten = call(&runtime, "Bash", bash("git log -1 || true")).await;
    assert_eq!(
        rewritten.outcome.input.as_ref().unwrap()["command"],
        "git --no-pager log -1 || true"
    );
}

/// A monitor without a `name` is named after its plugin and its place in `[[monitors]]`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unnamed_monitor_is_named_after_its_plugin_and_table() {
    let fixture = Fixture::new();
    let table = "[[monitors]]\ncomponent = \"ext.wasm\"\n".to_owned();
    let runtime = with_monitor(&fixture, table, |_| {}).await;
    let names: Vec<String> = runtime
        .extensions()
        .monitors
        .iter()
        .map(|monitor| monitor.name.clone())
        .collect();
    assert_eq!(names, ["monitors/monitors[0]"]);
}
