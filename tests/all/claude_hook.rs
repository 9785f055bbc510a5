//! `janua hook claude`: Claude Code hook events on stdin, answered by the real binary from the
//! settings files Claude Code reads (issue 34, point 1).

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::{Fixture, cache_dir, janua_bin};

/// The project's `.claude/settings.json` every case below reads.
const PROJECT_SETTINGS: &str = r#"{
  "permissions": {
    "allow": ["Bash(git status *)", "Bash(find *)", "Bash(npm test)"],
    "deny": ["Read(./.env)", "Bash(curl *)", "mcp__evil"],
    "defaultMode": "auto"
  },
  "model": "opus",
  "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "janua hook claude"}]}]}
}"#;

fn project(fixture: &Fixture) {
    fixture.write(".claude/settings.json", PROJECT_SETTINGS);
    fixture.write(".env", "SECRET=1\n");
}

/// Runs `janua hook claude ARGS` with `event` on stdin, in a home of its own (so the machine's
/// `~/.claude` is never read).
fn hook(fixture: &Fixture, args: &[&str], event: &str) -> Output {
    hook_in(fixture, args, event, |command| command)
}

fn hook_in(
    fixture: &Fixture,
    args: &[&str],
    event: &str,
    wrap: impl FnOnce(&mut Command) -> &mut Command,
) -> Output {
    let home = fixture.root().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut command = Command::new(janua_bin());
    command
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache_dir())
        .args(["hook", "claude"])
        .args(args)
        .current_dir(fixture.workspace())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", fixture.config_home())
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = wrap(&mut command).spawn().expect("spawn janua hook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.as_bytes())
        .unwrap();
    child.wait_with_output().expect("wait for janua hook")
}

fn event(fixture: &Fixture, name: &str, tool: &str, input: Value, mode: &str) -> String {
    json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": fixture.workspace(),
        "prompt_id": "p1",
        "permission_mode": mode,
        "effort": {"level": "high"},
        "hook_event_name": name,
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_01",
    })
    .to_string()
}

fn pre(fixture: &Fixture, tool: &str, input: Value) -> String {
    event(fixture, "PreToolUse", tool, input, "default")
}

/// The decision printed (`None` when janua printed nothing), after checking the exit code.
fn answer(output: &Output) -> Option<(String, String)> {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    if stdout.trim().is_empty() {
        return None;
    }
    let value: Value = serde_json::from_str(&stdout).expect("one JSON object");
    let specific = &value["hookSpecificOutput"];
    let (decision, reason) = match specific["hookEventName"].as_str() {
        Some("PreToolUse") => (
            &specific["permissionDecision"],
            &specific["permissionDecisionReason"],
        ),
        Some("PermissionRequest") => (
            &specific["decision"]["behavior"],
            &specific["decision"]["message"],
        ),
        other => panic!("unexpected answer for {other:?}: {value}"),
    };
    Some((
        decision.as_str().unwrap().to_owned(),
        reason.as_str().unwrap_or_default().to_owned(),
    ))
}

#[test]
fn dangerous_calls_are_never_left_to_an_allow_rule() {
    let fixture = Fixture::new();
    project(&fixture);
    // (command, what janua must answer, a word its reason must hold)
    let cases = [
        // find hands rm every file below ., .env among them.
        ("find . -exec rm {} \\;", "deny", "Read(./.env)"),
        ("rm -rf ~", "ask", "critical"),
        ("{ cat .env; }", "deny", "Read(./.env)"),
        ("git status && touch x", "ask", "no allow rule"),
        ("FOO=1 curl https://example.com", "deny", "Bash(curl *)"),
        ("echo $(curl https://example.com)", "deny", "Bash(curl *)"),
    ];
    for (command, expected, word) in cases {
        let output = hook(
            &fixture,
            &[],
            &pre(&fixture, "Bash", json!({"command": command})),
        );
        let (decision, reason) =
            answer(&output).unwrap_or_else(|| panic!("{command:?} got no answer"));
        assert_eq!(decision, expected, "{command:?}: {reason}");
        assert!(reason.starts_with("janua: "), "{reason}");
        assert!(reason.contains(word), "{command:?}: {reason}");
    }
    let read = hook(
        &fixture,
        &[],
        &pre(
            &fixture,
            "Read",
            json!({"file_path": fixture.workspace().join(".env")}),
        ),
    );
    let (decision, reason) = answer(&read).unwrap();
    assert_eq!(decision, "deny");
    assert!(reason.contains(".claude/settings.json"), "{reason}");
}

#[test]
fn allowed_calls_are_left_to_claude_code_unless_authoritative() {
    let fixture = Fixture::new();
    project(&fixture);
    let status = pre(&fixture, "Bash", json!({"command": "git status --short"}));
    assert_eq!(answer(&hook(&fixture, &[], &status)), None);
    let (decision, _) = answer(&hook(&fixture, &["--authoritative"], &status)).unwrap();
    assert_eq!(decision, "allow");
    // Authoritative, janua's own workspace trust decides whether a project's allow rules count.
    let test = pre(&fixture, "Bash", json!({"command": "npm test"}));
    let (decision, reason) = answer(&hook(&fixture, &["--authoritative"], &test)).unwrap();
    assert_eq!(decision, "ask", "{reason}");
    let (decision, _) = answer(&hook(
        &fixture,
        &["--authoritative", "--trust-workspace"],
        &test,
    ))
    .unwrap();
    assert_eq!(decision, "allow");
}

#[test]
fn tools_janua_does_not_have_are_decided_by_the_rules_naming_them() {
    let fixture = Fixture::new();
    project(&fixture);
    let mcp = hook(
        &fixture,
        &[],
        &pre(&fixture, "mcp__evil__wipe", json!({"all": true})),
    );
    let (decision, reason) = answer(&mcp).unwrap();
    assert_eq!(decision, "deny");
    assert!(reason.contains("mcp__evil"), "{reason}");
    let todo = hook(
        &fixture,
        &[],
        &pre(&fixture, "TodoWrite", json!({"todos": []})),
    );
    assert_eq!(answer(&todo), None);
}

#[test]
fn modes_come_from_the_event_and_unknown_ones_decide_as_default() {
    let fixture = Fixture::new();
    project(&fixture);
    let edit = json!({
        "file_path": fixture.workspace().join("notes.md"),
        "old_string": "a",
        "new_string": "b",
    });
    let accept = hook(
        &fixture,
        &[],
        &event(&fixture, "PreToolUse", "Edit", edit.clone(), "acceptEdits"),
    );
    assert_eq!(answer(&accept), None);
    for mode in ["auto", "someFutureMode"] {
        let output = hook(
            &fixture,
            &[],
            &event(&fixture, "PreToolUse", "Edit", edit.clone(), mode),
        );
        let (decision, _) = answer(&output).unwrap();
        assert_eq!(decision, "ask", "{mode}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(mode),
            "the mode read as default is said on stderr"
        );
    }
}

#[test]
fn permission_requests_are_denied_or_left_to_the_user() {
    let fixture = Fixture::new();
    project(&fixture);
    let request = |tool: &str, input: Value| {
        hook(
            &fixture,
            &[],
            &event(&fixture, "PermissionRequest", tool, input, "default"),
        )
    };
    let (decision, reason) = answer(&request(
        "Bash",
        json!({"command": "curl https://example.com"}),
    ))
    .unwrap();
    assert_eq!(decision, "deny");
    assert!(reason.contains("Bash(curl *)"), "{reason}");
    assert_eq!(
        answer(&request("Bash", json!({"command": "rm -rf build"}))),
        None
    );
}

#[test]
fn what_cannot_be_read_blocks_the_call() {
    let fixture = Fixture::new();
    project(&fixture);
    let blocked = |output: &Output, word: &str| {
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(word) && stderr.contains("blocked"),
            "{stderr}"
        );
    };
    for garbage in [
        "",
        "not json",
        "[1,2]",
        r#"{"hook_event_name":"PreToolUse"}"#,
    ] {
        let output = hook(&fixture, &[], garbage);
        blocked(&output, "hook");
        let stdout: Value = serde_json::from_slice(&output.stdout).expect("a deny answer");
        assert_eq!(stdout["hookSpecificOutput"]["permissionDecision"], "deny");
    }
    // A settings file janua cannot read blocks every call until it is fixed, naming the file.
    fixture.write(".claude/settings.local.json", "{ not json");
    let output = hook(
        &fixture,
        &[],
        &pre(&fixture, "Read", json!({"file_path": "a"})),
    );
    blocked(&output, "settings.local.json");
    let output = hook(
        &fixture,
        &[],
        &event(
            &fixture,
            "PermissionRequest",
            "Read",
            json!({"file_path": "a"}),
            "default",
        ),
    );
    blocked(&output, "settings.local.json");
    let stdout: Value = serde_json::from_slice(&output.stdout).expect("a deny answer");
    assert_eq!(
        stdout["hookSpecificOutput"]["decision"]["behavior"], "deny",
        "a PermissionRequest is blocked by its JSON, which Claude Code honours on exit 2"
    );
}

#[test]
fn events_janua_does_not_decide_get_no_answer() {
    let fixture = Fixture::new();
    project(&fixture);
    let stop = hook(
        &fixture,
        &[],
        &json!({"hook_event_name": "Stop", "stop_hook_active": false}).to_string(),
    );
    assert_eq!(answer(&stop), None);
}

#[test]
fn deciding_needs_no_webassembly_engine() {
    // The engine's instance pool reserves gigabytes of address space; under a 1 GiB limit no
    // guest can run, so a hook that answers there ran none (no `validate-input`, no hook).
    let fixture = Fixture::new();
    project(&fixture);
    let event = pre(&fixture, "Bash", json!({"command": "{ cat .env; }"}));
    let (decision, _) = answer(&hook_in(&fixture, &[], &event, address_space_limited)).unwrap();
    assert_eq!(decision, "deny");
    // The control: running a tool under the same limit needs the engine and its instance pool,
    // which cannot reserve their memory.
    let mut call = Command::new(janua_bin());
    call.arg("--cache-dir")
        .arg(cache_dir())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .args(["--cwd"])
        .arg(fixture.workspace())
        .args(["call", "Read", "--input", r#"{"file_path":"x.txt"}"#])
        .env("XDG_CONFIG_HOME", fixture.config_home());
    fixture.write("x.txt", "hello\n");
    let output = address_space_limited(&mut call).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        !output.status.success() && (stdout.contains("reserve") || stdout.contains("engine")),
        "the control ran: {stdout}"
    );
}

/// `command` under a 1 GiB address-space limit.
fn address_space_limited(command: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: `setrlimit` is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        })
    }
}

/// `janua hook install|doctor ARGS` with `home` as HOME and `path_dirs` first on PATH.
fn hook_admin(fixture: &Fixture, home: &std::path::Path, path_dirs: &str, args: &[&str]) -> Output {
    Command::new(janua_bin())
        .arg("--cache-dir")
        .arg(cache_dir())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("hook")
        .args(args)
        .current_dir(fixture.workspace())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", fixture.config_home())
        // The self-test's hook finds the suite's compiled components.
        .env("JANUA_CACHE_DIR", cache_dir())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env(
            "PATH",
            format!("{path_dirs}:{}", std::env::var("PATH").unwrap_or_default()),
        )
        .output()
        .expect("run janua hook")
}

#[test]
fn install_is_idempotent_keeps_other_settings_and_uninstalls() {
    let fixture = Fixture::new();
    let home = fixture.root().join("home");
    let user = home.join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    let original = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}
    });
    std::fs::write(&user, original.to_string()).unwrap();
    let first = hook_admin(&fixture, &home, "", &["install", "--claude"]);
    assert!(first.status.success(), "{first:?}");
    let printed = String::from_utf8_lossy(&first.stdout);
    assert!(
        printed.contains("+            \"onFailure\": \"block\""),
        "{printed}"
    );
    let installed: Value = serde_json::from_str(&std::fs::read_to_string(&user).unwrap()).unwrap();
    assert_eq!(installed["model"], "opus");
    assert_eq!(
        installed["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "./guard.sh"
    );
    let command = installed["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(command.ends_with(" hook claude"), "{command}");
    assert_eq!(
        installed["hooks"]["PermissionRequest"][0]["hooks"][0]["command"],
        command
    );

    let again = hook_admin(&fixture, &home, "", &["install", "--claude"]);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("unchanged"),
        "{again:?}"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&std::fs::read_to_string(&user).unwrap()).unwrap(),
        installed
    );

    let removed = hook_admin(&fixture, &home, "", &["install", "--claude", "--uninstall"]);
    assert!(removed.status.success(), "{removed:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&std::fs::read_to_string(&user).unwrap()).unwrap(),
        original
    );

    // A file janua cannot read is left exactly as it was.
    let local = fixture.workspace().join(".claude/settings.local.json");
    std::fs::create_dir_all(local.parent().unwrap()).unwrap();
    std::fs::write(&local, "{ broken").unwrap();
    let refused = hook_admin(
        &fixture,
        &home,
        "",
        &["install", "--claude", "--scope", "local"],
    );
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("settings.local.json"));
    assert_eq!(std::fs::read_to_string(&local).unwrap(), "{ broken");
}

#[test]
fn doctor_fails_on_every_set_up_that_lets_a_call_past_janua() {
    let fixture = Fixture::new();
    let home = fixture.root().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let managed = fixture.root().join("etc-claude-code");
    let managed_dir = managed.to_string_lossy().into_owned();
    let bin = fixture.root().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake_claude = |version: Option<&str>| {
        use std::os::unix::fs::PermissionsExt as _;
        let path = bin.join("claude");
        match version {
            Some(version) => {
                std::fs::write(
                    &path,
                    format!("#!/bin/sh\necho '{version} (Claude Code)'\n"),
                )
                .unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    };
    let bin_dir = bin.to_string_lossy().into_owned();
    let doctor = || {
        let output = hook_admin(
            &fixture,
            &home,
            &bin_dir,
            &["doctor", "--claude", "--managed-dir", &managed_dir],
        );
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let install = |args: &[&str]| {
        let mut all = vec!["install", "--claude", "--managed-dir", &managed_dir];
        all.extend_from_slice(args);
        let output = hook_admin(&fixture, &home, &bin_dir, &all);
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    fake_claude(Some("2.1.332"));
    let (code, report) = doctor();
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("no janua handler for PreToolUse"),
        "{report}"
    );

    let said = install(&["--scope", "project"]);
    assert!(
        said.contains("installed for PreToolUse, PermissionRequest")
            && !said.contains("PostToolUse"),
        "install says exactly what it added: {said}"
    );
    let (code, report) = doctor();
    assert_eq!(code, Some(0), "{report}");
    assert!(report.contains("honours \"onFailure\""), "{report}");
    assert!(report.contains("answered ask"), "{report}");
    let settings_path = fixture.workspace().join(".claude/settings.json");
    let healthy = std::fs::read_to_string(&settings_path).unwrap();

    // Each fail-open set-up fails, with its fix.
    let janua_command = registered_command(&healthy);
    let cases = [
        (
            json!({"hooks": {
                "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": janua_command}]}],
                "PermissionRequest": [{"matcher": "*", "hooks": [{"type": "command", "command": janua_command, "onFailure": "block"}]}]}}),
            "onFailure",
        ),
        (
            json!({"hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": janua_command, "onFailure": "block"}]}],
                "PermissionRequest": [{"matcher": "*", "hooks": [{"type": "command", "command": janua_command, "onFailure": "block"}]}]}}),
            "matches only",
        ),
        (
            json!({"hooks": {
                "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": janua_command, "onFailure": "block"}]}]}}),
            "no janua handler for PermissionRequest",
        ),
        (
            json!({"hooks": {
                "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": janua_command, "onFailure": "block", "async": true}]}],
                "PermissionRequest": [{"matcher": "*", "hooks": [{"type": "command", "command": janua_command, "onFailure": "block"}]}]}}),
            "async",
        ),
    ];
    for (settings, word) in cases {
        std::fs::write(&settings_path, settings.to_string()).unwrap();
        let (code, report) = doctor();
        assert_eq!(code, Some(1), "{word}: {report}");
        assert!(
            report.contains(word) && report.contains("fix:"),
            "{word}: {report}"
        );
    }
    std::fs::write(&settings_path, &healthy).unwrap();

    // A repository's local settings switch every hook off: fatal, until janua is managed.
    fixture.write(
        ".claude/settings.local.json",
        r#"{"disableAllHooks": true}"#,
    );
    let (code, report) = doctor();
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("disableAllHooks") && report.contains("--scope managed"),
        "{report}"
    );
    let said = install(&["--scope", "managed", "--allow-managed-hooks-only"]);
    assert!(said.contains("allowManagedHooksOnly set"), "{said}");
    let drop_in = managed.join("managed-settings.d/janua.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&drop_in).unwrap()).unwrap();
    assert_eq!(written["allowManagedHooksOnly"], true);
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(
        std::fs::metadata(&drop_in).unwrap().permissions().mode() & 0o777,
        0o644,
        "every user's Claude Code reads the managed file"
    );
    let (code, report) = doctor();
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains("janua's managed hook still runs"),
        "{report}"
    );
    // Managed only, janua's project hook alone would never run.
    install(&["--scope", "managed", "--uninstall"]);
    std::fs::write(
        managed.join("managed-settings.d/10-policy.json"),
        r#"{"allowManagedHooksOnly": true}"#,
    )
    .unwrap();
    std::fs::remove_file(fixture.workspace().join(".claude/settings.local.json")).unwrap();
    let (code, report) = doctor();
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains("allowManagedHooksOnly"), "{report}");
    std::fs::remove_file(managed.join("managed-settings.d/10-policy.json")).unwrap();

    // Claude Code missing or too old.
    fake_claude(Some("2.1.200"));
    let (code, report) = doctor();
    assert_eq!(code, Some(1));
    assert!(report.contains("too old"), "{report}");
    fake_claude(None);
    let (code, report) = doctor();
    assert_eq!(code, Some(1));
    assert!(report.contains("not found on PATH"), "{report}");
    fake_claude(Some("2.1.332"));

    // Trust is read from $CLAUDE_CONFIG_DIR/.claude.json when that is set.
    let config_dir = fixture.root().join("claude-config");
    std::fs::create_dir_all(&config_dir).unwrap();
    let project = std::fs::canonicalize(fixture.workspace()).unwrap();
    std::fs::write(
        config_dir.join(".claude.json"),
        json!({"projects": {project.to_string_lossy(): {"hasTrustDialogAccepted": true}}})
            .to_string(),
    )
    .unwrap();
    let output = Command::new(janua_bin())
        .arg("--cache-dir")
        .arg(cache_dir())
        .args(["hook", "doctor", "--claude", "--managed-dir", &managed_dir])
        .current_dir(fixture.workspace())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", fixture.config_home())
        .env("CLAUDE_CONFIG_DIR", &config_dir)
        .env(
            "PATH",
            format!("{bin_dir}:{}", std::env::var("PATH").unwrap_or_default()),
        )
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("Claude Code trusts"), "{report}");
}

/// The command of janua's first handler in the settings `text`.
fn registered_command(text: &str) -> String {
    let settings: Value = serde_json::from_str(text).unwrap();
    settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_project_cannot_steer_the_decision_to_another_tool_or_trust_itself() {
    let fixture = Fixture::new();
    // An alias would have janua judge a read-only Glob while Claude Code runs a file write; a
    // project listing itself as trusted would have its own allow rules count.
    fixture.write(
        ".claude/settings.json",
        r#"{"aliases": {"mcp__fs__write_file": "Glob"},
            "trustedWorkspaces": ["."],
            "permissions": {"allow": ["Bash(npm test)"], "deny": ["mcp__fs"]}}"#,
    );
    let write = pre(
        &fixture,
        "mcp__fs__write_file",
        json!({"path": fixture.workspace().join("x"), "pattern": "*"}),
    );
    let (decision, reason) = answer(&hook(&fixture, &["--authoritative"], &write)).unwrap();
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("mcp__fs"), "{reason}");
    // Advisory, Claude Code's project files count without janua's trust, but their
    // `trustedWorkspaces` must not make janua's own project files count too.
    fixture.write(
        ".janua/settings.json",
        r#"{"permissions": {"allow": ["Bash(make deploy)"]}}"#,
    );
    let deploy = pre(&fixture, "Bash", json!({"command": "make deploy"}));
    let (decision, _) = answer(&hook(&fixture, &[], &deploy)).unwrap();
    assert_eq!(decision, "ask", "the project trusted itself");
}

#[test]
fn relative_paths_are_read_from_where_claude_codes_shell_is() {
    let fixture = Fixture::new();
    fixture.write("secrets/id_rsa", "KEY\n");
    fixture.write(
        ".claude/settings.json",
        r#"{"permissions": {"deny": ["Read(./secrets/id_rsa)"]}}"#,
    );
    let event = json!({
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cat id_rsa"},
        "cwd": fixture.workspace().join("secrets"), "permission_mode": "default",
    })
    .to_string();
    let output = hook_in(&fixture, &[], &event, |command| {
        command.env("CLAUDE_PROJECT_DIR", fixture.workspace())
    });
    let (decision, reason) = answer(&output).unwrap();
    assert_eq!(decision, "deny", "{reason}");
}

#[test]
fn sandbox_bash_rewrites_what_janua_lets_through_and_reports_what_ran_without_it() {
    let fixture = Fixture::new();
    project(&fixture);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let original = format!("echo x > /dev/tcp/127.0.0.1/{port} && echo CONNECTED || echo NONET");
    let input = json!({"command": original, "description": "probe", "timeout": 5000});
    let output = hook(&fixture, &["--sandbox-bash"], &pre(&fixture, "Bash", input));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let rewrite: Value = serde_json::from_slice(&output.stdout).unwrap();
    let specific = &rewrite["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "ask", "{rewrite}");
    let rewritten = &specific["updatedInput"];
    assert_eq!(
        rewritten["description"], "probe",
        "every other field is kept"
    );
    assert_eq!(rewritten["timeout"], 5000);
    let command = rewritten["command"].as_str().unwrap();
    assert!(command.contains(" sandbox -- /bin/bash -c "), "{command}");

    // Run as Claude Code would run it: the command is confined, the host's loopback unreachable.
    let ran = Command::new("/bin/sh")
        .args(["-c", command])
        .current_dir(fixture.workspace())
        .env("HOME", fixture.root().join("home"))
        .env("JANUA_CACHE_DIR", cache_dir())
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&ran.stdout);
    assert!(
        printed.contains("NONET") && !printed.contains("CONNECTED"),
        "{ran:?}"
    );
    assert!(
        listener.accept().is_err(),
        "the sandboxed command reached the host"
    );

    // A command already in the rewrite's form is decided by what it runs.
    let prefix = command.rsplit_once(" -c ").unwrap().0;
    let prewrapped = format!("{prefix} -c 'curl https://example.com'");
    let denied = hook(
        &fixture,
        &["--sandbox-bash"],
        &pre(&fixture, "Bash", json!({"command": prewrapped})),
    );
    assert_eq!(answer(&denied).unwrap().0, "deny", "{prewrapped}");
    // A denied command is denied, not rewritten.
    let denied = hook(
        &fixture,
        &["--sandbox-bash"],
        &pre(
            &fixture,
            "Bash",
            json!({"command": "curl https://example.com"}),
        ),
    );
    let (decision, _) = answer(&denied).unwrap();
    assert_eq!(decision, "deny");

    // After the call: a Bash command that ran without the sandbox is reported, one that ran
    // under it is not, and without --sandbox-bash nothing is said.
    let post = |command: &str| {
        json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}, "tool_response": {"stdout": ""},
               "cwd": fixture.workspace()})
        .to_string()
    };
    let dropped = hook(&fixture, &["--sandbox-bash"], &post(&original));
    let report: Value = serde_json::from_slice(&dropped.stdout).unwrap();
    assert_eq!(report["decision"], "block");
    assert!(
        report["systemMessage"]
            .as_str()
            .unwrap()
            .contains("WITHOUT janua's sandbox"),
        "{report}"
    );
    let kept = hook(&fixture, &["--sandbox-bash"], &post(command));
    assert!(kept.status.success() && kept.stdout.is_empty(), "{kept:?}");
    // A command a model wrote to look sandboxed, whose tail would run outside: wrapped whole
    // before it runs, and reported if it ran as written.
    let smuggled = format!("{command}; touch outside");
    let output = hook(
        &fixture,
        &["--sandbox-bash"],
        &pre(&fixture, "Bash", json!({"command": smuggled})),
    );
    let rewrite: Value = serde_json::from_slice(&output.stdout).unwrap();
    let wrapped = rewrite["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("not rewritten: {rewrite}"));
    assert_ne!(wrapped, smuggled);
    let reported = hook(&fixture, &["--sandbox-bash"], &post(&smuggled));
    assert!(!reported.stdout.is_empty(), "{reported:?}");
    let plain = hook(&fixture, &[], &post(&original));
    assert!(
        plain.status.success() && plain.stdout.is_empty(),
        "{plain:?}"
    );

    // Installed with --sandbox-bash, the hook also runs after each Bash call.
    let home = fixture.root().join("home");
    let installed = hook_admin(
        &fixture,
        &home,
        "",
        &["install", "--claude", "--sandbox-bash"],
    );
    assert!(installed.status.success(), "{installed:?}");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".claude/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings["hooks"]["PostToolUse"][0]["matcher"],
        "Bash|Monitor"
    );
    assert!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("hook claude --sandbox-bash")
    );
}

/// One HTTP/1.1 POST to `port` with `token`; the status code and the body.
fn post(port: u16, token: Option<&str>, body: &str) -> (u16, String) {
    let host = format!("127.0.0.1:{port}");
    let bearer = token.map(|token| format!("Bearer {token}"));
    let mut headers = vec![("Host", host.as_str())];
    headers.extend(bearer.as_deref().map(|bearer| ("Authorization", bearer)));
    crate::support::http_post(
        std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        "/claude",
        &headers,
        body,
        None,
    )
    .expect("an answer")
}

#[test]
fn hook_serve_answers_http_hooks_on_loopback_with_a_token() {
    let fixture = Fixture::new();
    project(&fixture);
    let token = "a-token-of-twenty-chars";
    let serve = |address: &str, token: &str| {
        hook_serve(
            &fixture,
            Command::new(janua_bin()),
            &["--listen", address],
            token,
        )
    };
    for (address, token, word) in [
        ("0.0.0.0:0", token, "loopback"),
        ("127.0.0.1:0", "short", "16 characters"),
    ] {
        let refused = serve(address, token).output().unwrap();
        assert_eq!(refused.status.code(), Some(2), "{refused:?}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains(word));
    }
    let mut server = serve("127.0.0.1:0", token).spawn().unwrap();
    let port = serving_port(&mut server);

    let event = pre(&fixture, "Bash", json!({"command": "{ cat .env; }"}));
    assert_eq!(post(port, None, &event).0, 401);
    assert_eq!(post(port, Some("a-token-of-twenty-chart"), &event).0, 401);
    let (status, body) = post(port, Some(token), &event);
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{body}"
    );
    // Claude Code reads a non-2xx answer as no decision: a block travels as a 200 deny.
    let (status, body) = post(port, Some(token), "not json");
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{body}"
    );
    let (status, body) = post(
        port,
        Some(token),
        &pre(&fixture, "Bash", json!({"command": "git status"})),
    );
    assert_eq!((status, body.as_str()), (200, "{}"));

    // The project is the session's, whatever `cd` the model ran: fixed at the session's first
    // event, or found from the transcript Claude Code names, never taken from a moved `cwd`.
    std::fs::create_dir_all(fixture.workspace().join("sub")).unwrap();
    let named: String = fixture
        .workspace()
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let session_event = |session: &str,
                         cwd: &std::path::Path,
                         project_name: &str,
                         command: &str| {
        json!({
            "session_id": session,
            "transcript_path": fixture.root().join(format!("home/.claude/projects/{project_name}/{session}.jsonl")),
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": "toolu_cd",
        })
        .to_string()
    };
    let decision = |body: &str| {
        let answer: Value = serde_json::from_str(body).unwrap();
        answer["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap_or("none")
            .to_owned()
    };
    let sub = fixture.workspace().join("sub");
    let (_, body) = post(
        port,
        Some(token),
        &session_event("started-here", &fixture.workspace(), &named, "git status"),
    );
    assert_eq!(body, "{}");
    for session in ["started-here", "first-seen-after-cd"] {
        let (status, body) = post(
            port,
            Some(token),
            &session_event(session, &sub, &named, "cat ../.env"),
        );
        assert_eq!(status, 200);
        assert_eq!(decision(&body), "deny", "{session}: {body}");
    }
    // A session first seen outside the project its transcript names cannot be placed: blocked.
    let (_, body) = post(
        port,
        Some(token),
        &session_event("lost", std::path::Path::new("/"), &named, "ls"),
    );
    assert_eq!(decision(&body), "deny", "{body}");
    assert!(body.contains("transcript"), "{body}");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// Where janua's analysis ends, the hook still answers: the padded, substituted and code-string
/// commands of the project's deny rules are denied (never "no answer"), and in
/// `bypassPermissions`, which accepts every ask unasked, an ask only a person may answer is a
/// denial.
#[test]
fn the_hook_answers_at_the_limits_of_analysis_and_never_leaves_an_ask_to_bypass() {
    let fixture = Fixture::new();
    project(&fixture);
    let padded = format!(
        "echo {} >/dev/null; curl https://x.test",
        "x".repeat(10_001)
    );
    let cases = [
        (padded.as_str(), "deny", "Bash(curl *)"),
        (
            "sh -c \"$(echo curl) https://x.test\"",
            "deny",
            "Bash(curl *)",
        ),
        (
            "python3 -c \"print(open('.env').read())\"",
            "deny",
            "could match",
        ),
        ("grep -r SECRET .", "deny", "Read(./.env)"),
    ];
    for (command, expected, named) in cases {
        let output = hook(
            &fixture,
            &[],
            &pre(&fixture, "Bash", json!({ "command": command })),
        );
        let (decision, reason) = answer(&output).expect("an answer");
        let shown = &command[command.len().saturating_sub(60)..];
        assert_eq!(decision, expected, "{shown}: {reason}");
        assert!(reason.contains(named), "{shown}: {reason}");
    }
    let bypass = |command: &str| {
        let event = event(
            &fixture,
            "PreToolUse",
            "Bash",
            json!({ "command": command }),
            "bypassPermissions",
        );
        answer(&hook(&fixture, &[], &event)).expect("an answer")
    };
    for command in ["echo x > .git/hooks/pre-commit", "rm -rf ~"] {
        let (decision, reason) = bypass(command);
        assert_eq!(decision, "deny", "{command}: {reason}");
        assert!(reason.contains("bypassPermissions"), "{command}: {reason}");
    }
}

/// The decision printed for `tool` with `input` (PreToolUse, `mode`), with `args`.
fn decided(fixture: &Fixture, args: &[&str], tool: &str, input: Value, mode: &str) -> Output {
    hook(
        fixture,
        args,
        &event(fixture, "PreToolUse", tool, input, mode),
    )
}

#[test]
fn every_claude_code_tool_is_decided_by_janua_rules_whatever_fields_it_sends() {
    let fixture = Fixture::new();
    project(&fixture);
    // A field janua's Bash does not have (Claude's models set it after a sandbox failure) does
    // not turn janua's allow into no answer.
    let escape = json!({"command": "git status --short", "dangerouslyDisableSandbox": true, "someFutureField": 1});
    let allowed = decided(
        &fixture,
        &["--authoritative"],
        "Bash",
        escape.clone(),
        "default",
    );
    assert_eq!(answer(&allowed).unwrap().0, "allow", "{allowed:?}");
    assert!(
        String::from_utf8_lossy(&allowed.stderr).contains("without the field(s) someFutureField"),
        "the dropped field is said on stderr: {allowed:?}"
    );
    // Nothing about Claude Code's own keys, hooks (janua's among them) or modes.
    let stderr = String::from_utf8_lossy(&allowed.stderr);
    for noise in ["unknown key", "not supported", "not loaded", "defaultMode"] {
        assert!(!stderr.contains(noise), "{stderr}");
    }
    // Under --sandbox-bash the rewrite drops it, and says so.
    let output = decided(&fixture, &["--sandbox-bash"], "Bash", escape, "default");
    let rewrite: Value = serde_json::from_slice(&output.stdout).unwrap();
    let specific = &rewrite["hookSpecificOutput"];
    assert!(
        specific["updatedInput"]
            .get("dangerouslyDisableSandbox")
            .is_none(),
        "{rewrite}"
    );
    assert!(
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("dangerouslyDisableSandbox removed"),
        "{rewrite}"
    );

    // Monitor runs a command: Bash's rules, and --sandbox-bash wraps it.
    for (command, fragment) in [
        ("curl https://example.com/x", "Bash(curl *)"),
        ("tail -f .env", "Read(./.env)"),
    ] {
        let monitor = json!({"command": command, "description": "watch", "timeout_ms": 1000, "persistent": false});
        let (decision, reason) = answer(&decided(
            &fixture,
            &[],
            "Monitor",
            monitor,
            "bypassPermissions",
        ))
        .unwrap();
        assert_eq!(decision, "deny", "{command}: {reason}");
        assert!(reason.contains(fragment), "{command}: {reason}");
    }
    let monitor = json!({"command": "tail -f build.log", "description": "watch", "timeout_ms": 1000, "persistent": false});
    let output = decided(&fixture, &["--sandbox-bash"], "Monitor", monitor, "default");
    let rewrite: Value = serde_json::from_slice(&output.stdout).unwrap();
    let command = rewrite["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("not rewritten: {rewrite}"));
    assert!(command.contains(" sandbox -- /bin/bash -c "), "{command}");
    assert_eq!(
        rewrite["hookSpecificOutput"]["updatedInput"]["persistent"],
        false
    );

    // MultiEdit and NotebookEdit are edits of their file: a protected path is asked in
    // default mode and denied where Claude Code would not ask (bypassPermissions, dontAsk).
    let settings = fixture.workspace().join(".claude/settings.json");
    let multi = json!({"file_path": settings, "edits": [{"old_string": "a", "new_string": "b"}]});
    let (decision, _) = answer(&decided(
        &fixture,
        &[],
        "MultiEdit",
        multi.clone(),
        "default",
    ))
    .unwrap();
    assert_eq!(decision, "ask");
    for mode in ["bypassPermissions", "dontAsk"] {
        let (decision, reason) =
            answer(&decided(&fixture, &[], "MultiEdit", multi.clone(), mode)).unwrap();
        assert_eq!(decision, "deny", "{mode}: {reason}");
        assert!(
            reason.contains(mode) && reason.contains("protected"),
            "{reason}"
        );
    }
    let notebook =
        json!({"notebook_path": fixture.workspace().join(".git/hooks/x.ipynb"), "new_source": "x"});
    let (decision, _) = answer(&decided(
        &fixture,
        &[],
        "NotebookEdit",
        notebook,
        "bypassPermissions",
    ))
    .unwrap();
    assert_eq!(decision, "deny");

    // A tool janua cannot classify (PowerShell, a tool a later Claude Code adds) is asked while
    // deny rules are set, denied where no person would be asked, and left alone without them.
    for tool in ["PowerShell", "SomeFutureTool", "LSP"] {
        let input = json!({"command": "Remove-Item -Recurse x", "filePath": ".env"});
        let (decision, reason) =
            answer(&decided(&fixture, &[], tool, input.clone(), "default")).unwrap();
        assert_eq!(decision, "ask", "{tool}");
        assert!(
            reason.contains(tool) && reason.contains("deny rules"),
            "{reason}"
        );
        let (decision, _) =
            answer(&decided(&fixture, &[], tool, input, "bypassPermissions")).unwrap();
        assert_eq!(decision, "deny", "{tool}");
    }
    // Input none of a tool's rows can read is decided as a tool janua cannot classify.
    let (decision, _) = answer(&decided(
        &fixture,
        &[],
        "Monitor",
        json!({"script": "rm -rf x"}),
        "default",
    ))
    .unwrap();
    assert_eq!(decision, "ask");
    // Tools with nothing of their own to touch stay Claude Code's.
    for tool in ["Agent", "TaskStop", "AskUserQuestion", "mcp__docs__search"] {
        let output = decided(&fixture, &[], tool, json!({"x": 1}), "bypassPermissions");
        assert_eq!(answer(&output), None, "{tool}");
    }

    // Without a deny rule, nothing janua cannot classify is asked.
    let open = Fixture::new();
    open.write(
        ".claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(ls *)"]}}"#,
    );
    let output = decided(
        &open,
        &[],
        "PowerShell",
        json!({"command": "ls"}),
        "default",
    );
    assert_eq!(answer(&output), None);

    // With --sandbox-bash, a tool that runs commands janua cannot confine is asked even without
    // a deny rule.
    let output = decided(
        &open,
        &["--sandbox-bash"],
        "PowerShell",
        json!({"command": "ls"}),
        "default",
    );
    assert_eq!(answer(&output).unwrap().0, "ask");
    // A rule naming Claude Code's own tool holds for a tool decided as another of janua's.
    let named = Fixture::new();
    named.write(
        ".janua/settings.json",
        r#"{"permissions": {"deny": ["Monitor"]}}"#,
    );
    let output = decided(
        &named,
        &["--authoritative"],
        "Monitor",
        json!({"command": "ls", "description": "x"}),
        "default",
    );
    let (decision, reason) = answer(&output).unwrap();
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("Monitor"), "{reason}");
    // After a failed call too, --sandbox-bash reports a command that ran without its sandbox.
    let failed = json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
           "tool_input": {"command": "false"}, "error": "exit 1",
           "cwd": fixture.workspace()})
    .to_string();
    let reported = hook(&fixture, &["--sandbox-bash"], &failed);
    let report: Value = serde_json::from_slice(&reported.stdout).unwrap();
    assert_eq!(report["decision"], "block", "{report}");
    // After the call, --sandbox-bash reports a Monitor command that ran without its sandbox.
    let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Monitor",
           "tool_input": {"command": "tail -f build.log"}, "tool_response": {},
           "cwd": fixture.workspace()})
    .to_string();
    let reported = hook(&fixture, &["--sandbox-bash"], &post);
    let report: Value = serde_json::from_slice(&reported.stdout).unwrap();
    assert_eq!(report["decision"], "block", "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managed_drop_ins_are_read_as_claude_code_reads_them() {
    let fixture = Fixture::new();
    project(&fixture);
    let managed = fixture.root().join("etc/claude-code");
    std::fs::create_dir_all(managed.join("managed-settings.d")).unwrap();
    std::fs::write(
        managed.join("managed-settings.json"),
        r#"{"permissions": {"deny": ["Bash(wget *)"]}}"#,
    )
    .unwrap();
    std::fs::write(
        managed.join("managed-settings.d/10-security.json"),
        r#"{"permissions": {"deny": ["Bash(scp *)"]}, "allowManagedHooksOnly": true}"#,
    )
    .unwrap();
    // Hidden files and other extensions are not drop-ins.
    std::fs::write(
        managed.join("managed-settings.d/.20-draft.json"),
        r#"{"permissions": {"deny": ["Bash(echo *)"]}}"#,
    )
    .unwrap();
    std::fs::write(
        managed.join("managed-settings.d/30-notes.txt"),
        r#"{"permissions": {"deny": ["Bash(echo *)"]}}"#,
    )
    .unwrap();
    let mut base = fixture.config();
    base.claude_code = Some(janua::config::ClaudeCodeSettings {
        managed: Some(managed.join("managed-settings.json")),
        user: None,
        project: true,
        trust_project: true,
    });
    let options = janua::claude::ClaudeHookOptions {
        keep_workspace: true,
        ..Default::default()
    };
    for (command, expected) in [
        ("scp a host:b", Some("deny")),
        ("wget https://example.com", Some("deny")),
        ("echo hi", None),
    ] {
        let event = pre(&fixture, "Bash", json!({"command": command}));
        let reply = janua::claude::respond_to_claude_hook(&base, &event, &options).await;
        assert_eq!(reply.blocked, None, "{command}");
        let decision = reply.output.as_ref().map(|output| {
            output["hookSpecificOutput"]["permissionDecision"]
                .as_str()
                .unwrap()
                .to_owned()
        });
        assert_eq!(
            decision.as_deref(),
            expected,
            "{command}: {:?}",
            reply.output
        );
        if let Some(output) = &reply.output {
            let reason = output["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap();
            assert!(reason.contains("managed-settings"), "{reason}");
        }
    }
}

#[test]
fn hook_serve_answers_its_client_through_a_flood_of_idle_connections() {
    let fixture = Fixture::new();
    project(&fixture);
    let token = "a-token-of-twenty-chars";
    // An open-file limit the flood below exceeds (half the usual 1,024, so that this process
    // can hold the flood under a hard limit of 1,024 too).
    let mut limited = Command::new("/bin/sh");
    limited
        .arg("-c")
        .arg("ulimit -n 512 && exec \"$0\" \"$@\"")
        .arg(janua_bin());
    let mut server = hook_serve(&fixture, limited, &["--listen", "127.0.0.1:0"], token)
        .spawn()
        .unwrap();
    let port = serving_port(&mut server);
    let event = pre(&fixture, "Bash", json!({"command": "{ cat .env; }"}));
    let (answers, cpu) = crate::support::with_idle_connections(port, 700, server.id(), || {
        // At once, while every idle connection is held, and again past the token deadline.
        let mut answers = vec![post_within(
            port,
            token,
            &event,
            std::time::Duration::from_secs(1),
        )];
        std::thread::sleep(std::time::Duration::from_millis(2500));
        answers.push(post_within(
            port,
            token,
            &event,
            std::time::Duration::from_secs(1),
        ));
        answers
    });
    for answer in &answers {
        let (status, body) = answer.as_ref().expect("answered within a second");
        assert_eq!(*status, 200);
        assert!(body.contains("\"deny\""), "{body}");
    }
    assert!(
        cpu < std::time::Duration::from_millis(800),
        "the server spent {cpu:?} of CPU holding idle connections for 2.5 s"
    );
    server.kill().unwrap();
    server.wait().unwrap();
}

/// One POST to `port` with `token`, given up after `limit`.
fn post_within(
    port: u16,
    token: &str,
    body: &str,
    limit: std::time::Duration,
) -> std::io::Result<(u16, String)> {
    let host = format!("127.0.0.1:{port}");
    let bearer = format!("Bearer {token}");
    crate::support::http_post(
        std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        "/claude",
        &[("Host", host.as_str()), ("Authorization", bearer.as_str())],
        body,
        Some(limit),
    )
}

#[test]
fn hook_serve_with_a_project_decides_every_event_for_it() {
    let fixture = Fixture::new();
    project(&fixture);
    std::fs::create_dir_all(fixture.workspace().join("sub")).unwrap();
    let token = "a-token-of-twenty-chars";
    let workspace = fixture.workspace().to_string_lossy().into_owned();
    let mut server = hook_serve(
        &fixture,
        Command::new(janua_bin()),
        &["--listen", "127.0.0.1:0", "--project", &workspace],
        token,
    )
    // Started elsewhere: the project comes from --project alone.
    .current_dir(fixture.root())
    .spawn()
    .unwrap();
    let port = serving_port(&mut server);
    // No transcript, a cwd the model moved: still the project's rules.
    let event = json!({
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cat ../.env"}, "cwd": fixture.workspace().join("sub"),
        "permission_mode": "default",
    })
    .to_string();
    let (status, body) = post(port, Some(token), &event);
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(status, 200);
    assert!(
        body.contains("\"deny\"") && body.contains("Read(./.env)"),
        "{body}"
    );
}

/// `janua hook serve ARGS` for `fixture` with `token`, run by `command`: janua itself, or a
/// shell that sets a limit first and runs janua as `$0` with these arguments.
fn hook_serve(fixture: &Fixture, mut command: Command, args: &[&str], token: &str) -> Command {
    command
        .arg("--cache-dir")
        .arg(cache_dir())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .args(["hook", "serve"])
        .args(args)
        .current_dir(fixture.workspace())
        .env("HOME", fixture.root().join("home"))
        .env("XDG_CONFIG_HOME", fixture.config_home())
        .env("JANUA_HOOK_TOKEN", token)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// The port `janua hook serve` says it listens on (the first line of its standard error), which
/// is then closed: a server must answer without anyone reading its log.
fn serving_port(server: &mut std::process::Child) -> u16 {
    use std::io::BufRead as _;
    let mut line = String::new();
    std::io::BufReader::new(server.stderr.take().expect("stderr piped"))
        .read_line(&mut line)
        .expect("read the first line");
    line.split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
}
