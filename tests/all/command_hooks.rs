//! Command hooks from settings, run by real `/bin/sh` children under the process sandbox: Claude
//! Code's exit-code contract, fail-closed start failures, the sandbox around the hook, workspace
//! trust, and `janua hooks` saying why a hook was not loaded.

use janua::{ErrorKind, Runtime, RuntimeConfig};
use janua_test_guests::PIPELINE_ECHO;
use serde_json::{Value, json};

use crate::support::{Fixture, call, error_text, janua_bin, ok_text};

/// Settings JSON with one PreToolUse command hook per `(matcher, command, extra fields)`.
fn settings(hooks: &[(&str, &str, Value)]) -> String {
    let groups: Vec<Value> = hooks
        .iter()
        .map(|(matcher, command, extra)| {
            let mut handler = json!({"type": "command", "command": command, "timeout": 10});
            if let (Some(handler), Some(extra)) = (handler.as_object_mut(), extra.as_object()) {
                handler.extend(extra.clone());
            }
            json!({"matcher": matcher, "hooks": [handler]})
        })
        .collect();
    json!({"hooks": {"PreToolUse": groups}}).to_string()
}

async fn with_settings(fixture: &Fixture, settings_json: String) -> Runtime {
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    fixture
        .runtime(&[echo], |config: &mut RuntimeConfig| {
            config.allowed_tools = vec!["Echo".into(), "Picky".into()];
            config.settings_json = vec![settings_json];
        })
        .await
}

/// Exit 0 with JSON answers; exit 2 blocks with stderr; other codes are non-blocking warnings;
/// a command that cannot run denies (fail closed) unless `onError` is `ignore`. The event
/// arrives on stdin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_hooks_follow_the_exit_code_contract() {
    let fixture = Fixture::new();
    let deny_json = r#"printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"json says no to %s"}}' "$JANUA_HOOK_EVENT""#;
    // (label, command, handler fields, denial reason, warning)
    type Case<'a> = (&'a str, &'a str, Value, Option<&'a str>, Option<&'a str>);
    let cases: &[Case] = &[
        (
            "0",
            deny_json,
            json!({}),
            Some("json says no to PreToolUse"),
            None,
        ),
        (
            "2",
            "echo 'blocked by policy' >&2; exit 2",
            json!({}),
            Some("blocked by policy"),
            None,
        ),
        (
            "1",
            "echo 'oops' >&2; exit 1",
            json!({}),
            None,
            Some("Failed with non-blocking status code 1: oops"),
        ),
        (
            "127",
            "/nonexistent/guard.sh",
            json!({}),
            Some("could not run (exit code 127)"),
            None,
        ),
        (
            "127-ignored",
            "/nonexistent/guard.sh",
            json!({"onError": "ignore"}),
            None,
            Some("failed and is ignored"),
        ),
        ("plain", "echo just text", json!({}), None, None),
        (
            "timeout",
            "sleep 5",
            json!({"timeout": 0.5}),
            Some("timed out after 500 ms"),
            None,
        ),
        (
            "0-broken-json",
            "echo '{\"hookSpecificOutput\": '",
            json!({}),
            Some("not valid JSON"),
            None,
        ),
        (
            "1-broken-json",
            "echo '{\"hookSpecificOutput\": '; exit 1",
            json!({}),
            Some("not a valid JSON object"),
            None,
        ),
    ];
    for (label, command, extra, denied, warned) in cases {
        let fixture = Fixture::new();
        let runtime = with_settings(&fixture, settings(&[("Echo", command, extra.clone())])).await;
        let result = call(&runtime, "Echo", json!({"text": "x"})).await;
        match denied {
            Some(reason) => {
                let text = error_text(&result, ErrorKind::PermissionDenied);
                assert!(text.contains(reason), "{label}: {text}");
            }
            None => {
                ok_text(&result);
            }
        }
        if let Some(warning) = warned {
            let warnings = result.outcome.warnings.join("\n");
            assert!(warnings.contains(warning), "{label}: {warnings}");
        }
    }
    drop(fixture);
}

/// The event on stdin is Claude Code's: the hook can read the tool input from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_arrives_on_stdin() {
    let fixture = Fixture::new();
    let command = r#"input=$(cat); case "$input" in *'"text":"forbidden"'*) echo "saw forbidden" >&2; exit 2;; esac; exit 0"#;
    let runtime = with_settings(&fixture, settings(&[("Echo", command, json!({}))])).await;
    ok_text(&call(&runtime, "Echo", json!({"text": "fine"})).await);
    let text = error_text(
        &call(&runtime, "Echo", json!({"text": "forbidden"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("saw forbidden"), "{text}");
}

/// A command hook runs confined: by default it reads the workspace only, writes nothing and sees
/// none of the host's environment beyond the basics; settings grants widen exactly that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_hooks_run_inside_the_process_sandbox() {
    let fixture = Fixture::new();
    fixture.write("inside.txt", "INSIDE\n");
    fixture.write(".git/config", "[core]\n");
    let secret = fixture.outside().join("secret.txt");
    let command = format!(
        r#"if cat '{}' >/dev/null 2>&1; then r=read-outside; else r=no-outside; fi
if grep -q INSIDE "$JANUA_PROJECT_DIR/inside.txt"; then i=read-inside; else i=no-inside; fi
if (echo x > "$JANUA_PROJECT_DIR/pwned") 2>/dev/null; then w=wrote; else w=no-write; fi
if (echo x >> "$JANUA_PROJECT_DIR/.git/config") 2>/dev/null; then g=wrote-git-config; else g=no-git-config; fi
printf '{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","additionalContext":"%s %s %s %s %s"}}}}' "$r" "$i" "$w" "$g" "${{CARGO_PKG_NAME:-no-env}}""#,
        secret.display()
    );
    let granted = json!({"grants": {
        "read": [fixture.outside().display().to_string()],
        "write": ["${WORKSPACE}"],
        "env": ["CARGO_PKG_NAME"],
    }});
    let runtime = with_settings(
        &fixture,
        settings(&[("Echo", &command, json!({})), ("Picky", &command, granted)]),
    )
    .await;
    let confined = call(&runtime, "Echo", json!({"text": "x"})).await;
    assert_eq!(
        confined.outcome.additional_context,
        [
            "[PreToolUse hook settings:hooks.PreToolUse[0].hooks[0]] no-outside read-inside no-write no-git-config no-env"
        ]
    );
    assert!(!fixture.workspace().join("pwned").exists());
    let widened = call(&runtime, "Picky", json!({"word": "x"})).await;
    assert_eq!(
        widened.outcome.additional_context,
        [
            "[PreToolUse hook settings:hooks.PreToolUse[1].hooks[0]] read-outside read-inside wrote no-git-config janua"
        ]
    );
    // A hook granted the workspace still cannot change a protected path (issue 31, point 2).
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join(".git/config")).unwrap(),
        "[core]\n"
    );
}

/// Hooks in a project's settings run only once the workspace is trusted; `janua hooks` lists
/// what loaded and says why the rest did not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_hooks_need_a_trusted_workspace_and_janua_hooks_says_why() {
    let fixture = Fixture::new();
    let project = json!({"hooks": {
        "PreToolUse": [{"matcher": "Echo", "hooks": [
            {"type": "command", "command": "echo 'project says no' >&2; exit 2"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "true"}]}],
        "PostToolUse": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9"}]}]
    }});
    fixture.write(".janua/settings.json", project.to_string());
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    let untrusted = fixture
        .runtime(std::slice::from_ref(&echo), |config| {
            config.allowed_tools = vec!["Echo".into()];
        })
        .await;
    ok_text(&call(&untrusted, "Echo", json!({"text": "x"})).await);
    assert!(
        untrusted
            .warnings()
            .iter()
            .any(|w| w.contains("has not been trusted, so its settings cannot run hooks")),
        "{:?}",
        untrusted.warnings()
    );
    drop(untrusted);
    let trusted = fixture
        .runtime(std::slice::from_ref(&echo), |config| {
            config.allowed_tools = vec!["Echo".into()];
            config.trust_workspace = true;
        })
        .await;
    let text = error_text(
        &call(&trusted, "Echo", json!({"text": "x"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("project says no"), "{text}");
    let report = trusted.extensions();
    assert_eq!(report.hooks.len(), 1);
    assert_eq!(report.hooks[0].covers, ["Echo"]);
    let reasons: Vec<&str> = report.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert!(
        reasons.iter().any(|r| r.contains("no Stop event")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.contains("not http hooks")),
        "{reasons:?}"
    );
    drop(trusted);

    let output = std::process::Command::new(janua_bin())
        .arg("--cwd")
        .arg(fixture.workspace())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(crate::support::cache_dir())
        .arg("--no-user-settings")
        .arg("--plugins")
        .arg(&echo)
        .arg("hooks")
        .output()
        .expect("run janua hooks");
    assert_eq!(output.status.code(), Some(0));
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(printed.contains("Hooks: none loaded."), "{printed}");
    assert!(printed.contains("Not loaded:"), "{printed}");
    assert!(printed.contains("has not been trusted"), "{printed}");
}

/// A malformed hook block is a configuration error naming the file and position.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_hook_settings_are_configuration_errors() {
    let fixture = Fixture::new();
    for (settings_json, expected) in [
        (
            json!({"hooks": {"PreToolUse": [{"matcher": "Edit(", "hooks": [{"type": "command", "command": "true"}]}]}}),
            "not a valid regular expression",
        ),
        (
            json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true", "if": "Bash("}]}]}}),
            "hooks.PreToolUse[0].hooks[0]: the hook's `if` rule is invalid",
        ),
        (
            json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true", "timeout": -1}]}]}}),
            "timeout must be a number",
        ),
    ] {
        let mut config = fixture.config();
        config.settings_json = vec![settings_json.to_string()];
        let error = match Runtime::new(config).await {
            Ok(_) => panic!("{settings_json} loaded"),
            Err(error) => error.to_string(),
        };
        assert!(error.contains(expected), "{settings_json}: {error}");
    }
}

/// A command hook has no network unless its grants say so: it cannot reach a server the test
/// runs on the host's loopback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_hooks_have_no_network_unless_granted() {
    let fixture = Fixture::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!(
        r#"if bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null; then c=connected; else c=isolated; fi
printf '{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","additionalContext":"%s"}}}}' "$c""#
    );
    let runtime = with_settings(
        &fixture,
        settings(&[
            ("Echo", &command, json!({})),
            ("Picky", &command, json!({"grants": {"network": true}})),
        ]),
    )
    .await;
    let isolated = call(&runtime, "Echo", json!({"text": "x"})).await;
    assert!(
        isolated.outcome.additional_context[0].ends_with("] isolated"),
        "{:?}",
        isolated.outcome.additional_context
    );
    let connected = call(&runtime, "Picky", json!({"word": "x"})).await;
    assert!(
        connected.outcome.additional_context[0].ends_with("] connected"),
        "{:?}",
        connected.outcome.additional_context
    );
}

/// Only the operator's own scopes may turn hooks off: a trusted project's `disableAllHooks` is
/// ignored with a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_cannot_disable_the_operators_hooks() {
    let fixture = Fixture::new();
    fixture.write(".janua/settings.json", r#"{"disableAllHooks": true}"#);
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    let runtime = fixture
        .runtime(&[echo], |config| {
            config.allowed_tools = vec!["Echo".into()];
            config.trust_workspace = true;
            config.settings_json = vec![settings(&[(
                "Echo",
                "echo 'operator says no' >&2; exit 2",
                json!({}),
            )])];
        })
        .await;
    assert!(
        runtime
            .warnings()
            .iter()
            .any(|w| w.contains("only --settings and user settings may turn hooks off")),
        "{:?}",
        runtime.warnings()
    );
    let text = error_text(
        &call(&runtime, "Echo", json!({"text": "x"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("operator says no"), "{text}");
}
