//! `janua sandbox -- CMD`: any command under the process sandbox a `Bash` command gets, with its
//! standard streams and exit code passed through (issue 34, point 3).

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

use crate::support::{Fixture, cache_dir, janua_bin};

fn sandbox(fixture: &Fixture, global: &[&str], command: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(janua_bin())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache_dir())
        .args(global)
        .arg("sandbox")
        .arg("--")
        .args(command)
        .current_dir(fixture.workspace())
        .env("XDG_CONFIG_HOME", fixture.config_home())
        // Claude Code's user settings are read from here, never from the machine's.
        .env("HOME", fixture.root().join("home"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("JANUA_TEST_SECRET", "hunter2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn janua sandbox");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().expect("wait for janua sandbox")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn streams_and_exit_codes_pass_through() {
    let fixture = Fixture::new();
    let output = sandbox(
        &fixture,
        &[],
        &["sh", "-c", "read line; echo got:$line; exit 7"],
        "hello\n",
    );
    assert_eq!(output.status.code(), Some(7), "{output:?}");
    assert_eq!(stdout(&output), "got:hello\n");
    let killed = sandbox(&fixture, &[], &["sh", "-c", "kill -TERM $$"], "");
    assert_eq!(killed.status.code(), Some(128 + 15), "{killed:?}");
    let missing = sandbox(&fixture, &[], &["no-such-program-janua"], "");
    assert_eq!(missing.status.code(), Some(125), "{missing:?}");
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("no-such-program-janua"),
        "{missing:?}"
    );
}

#[test]
fn the_network_and_the_hosts_files_stay_out_of_reach() {
    let fixture = Fixture::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let outside = fixture.outside().join("written-by-sandbox");
    let script = format!(
        "echo x > /dev/tcp/127.0.0.1/{port} && echo CONNECTED; \
         touch {outside} || echo NO-WRITE-OUTSIDE; \
         touch made-inside && echo WROTE-INSIDE; \
         cat {secret} || echo NO-READ-OUTSIDE; \
         echo secret=${{JANUA_TEST_SECRET:-unset}}",
        outside = outside.display(),
        secret = fixture.outside().join("secret.txt").display(),
    );
    let output = sandbox(&fixture, &[], &["bash", "-c", &script], "");
    let text = stdout(&output);
    assert!(!text.contains("CONNECTED"), "{text}");
    assert!(
        listener.accept().is_err(),
        "the loopback server was reached from the sandbox"
    );
    assert!(
        text.contains("NO-WRITE-OUTSIDE") && !outside.exists(),
        "{text}"
    );
    assert!(
        text.contains("WROTE-INSIDE") && fixture.workspace().join("made-inside").exists(),
        "{text}"
    );
    assert!(
        text.contains("NO-READ-OUTSIDE") && !text.contains("TOPSECRET"),
        "{text}"
    );
    assert!(text.contains("secret=unset"), "{text}");
}

#[test]
fn deny_rules_hide_their_files_from_the_command() {
    let fixture = Fixture::new();
    fixture.write(".env", "API_KEY=TOPSECRET-env\n");
    let denied = sandbox(
        &fixture,
        &["--settings", r#"{"permissions":{"deny":["Read(./.env)"]}}"#],
        &["cat", ".env"],
        "",
    );
    assert!(!stdout(&denied).contains("TOPSECRET"), "{denied:?}");
    let control = sandbox(&fixture, &[], &["cat", ".env"], "");
    assert!(stdout(&control).contains("TOPSECRET-env"), "{control:?}");
}

#[test]
fn claude_code_deny_rules_shape_the_view_whichever_file_holds_them() {
    for (file, home_relative) in [
        (".claude/settings.json", false),
        (".claude/settings.local.json", false),
        (".claude/settings.json", true),
    ] {
        let fixture = Fixture::new();
        fixture.write(".env", "API_KEY=TOPSECRET-env\n");
        fixture.write("secrets/key.txt", "k\n");
        // Claude Code's file as users have it: its hooks (janua's own among them), keys janua
        // does not read.
        let settings = r#"{"model": "opus", "env": {"A": "1"},
            "permissions": {"deny": ["Read(./.env)", "Edit(./secrets/**)"]},
            "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/usr/bin/janua hook claude", "onFailure": "block"}]}]}}"#;
        if home_relative {
            // The user's file holds project-relative rules only through absolute paths.
            let absolute = settings
                .replace(
                    "./.env",
                    &format!("/{}", fixture.workspace().join(".env").display()),
                )
                .replace(
                    "./secrets/**",
                    &format!("/{}/**", fixture.workspace().join("secrets").display()),
                );
            let home = fixture.root().join("home/.claude");
            std::fs::create_dir_all(&home).unwrap();
            std::fs::write(home.join("settings.json"), absolute).unwrap();
        } else {
            fixture.write(file, settings);
        }
        let output = sandbox(
            &fixture,
            &[],
            &[
                "sh",
                "-c",
                "cat .env; find secrets -delete; mv secrets moved; ls secrets",
            ],
            "",
        );
        let printed = stdout(&output);
        assert!(!printed.contains("TOPSECRET"), "{file}: {output:?}");
        assert!(printed.contains("key.txt"), "{file}: {output:?}");
        assert!(fixture.workspace().join("secrets/key.txt").exists());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("warning"),
            "no warning about Claude Code's own keys and hooks: {stderr}"
        );
    }
}
