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

#[test]
fn the_view_holds_masks_over_protected_paths_parents_of_hidden_ones_and_no_set_id_bits() {
    let fixture = Fixture::new();
    fixture.write(".npmrc", "//registry.npmjs.org/:_authToken=TOPSECRET-npm\n");
    fixture.write("config/secrets/key.txt", "TOPSECRET-key\n");
    fixture.write("config/app.toml", "ok\n");
    let settings = r#"{"permissions":{"deny":["Read(./.npmrc)","Read(./config/secrets/**)"]}}"#;
    // A Read deny on a protected path masks it: the protected path's read-only mount does not
    // show it instead.
    let read = sandbox(
        &fixture,
        &["--settings", settings],
        &["python3", "-c", "print(open('.npmrc').read())"],
        "",
    );
    assert!(!stdout(&read).contains("TOPSECRET"), "{read:?}");
    // The mask is read-only: nothing done to the masked name reaches `/dev/null` itself.
    use std::os::unix::fs::PermissionsExt as _;
    let null_mode = std::fs::metadata("/dev/null").unwrap().permissions().mode();
    let changed = sandbox(
        &fixture,
        &["--settings", settings],
        &[
            "sh",
            "-c",
            "chmod 000 .npmrc; touch .npmrc; echo written > .npmrc; echo done",
        ],
        "",
    );
    assert!(stdout(&changed).contains("done"), "{changed:?}");
    assert_eq!(
        std::fs::metadata("/dev/null").unwrap().permissions().mode(),
        null_mode,
        "{changed:?}"
    );
    assert!(
        std::fs::read_to_string(fixture.workspace().join(".npmrc"))
            .unwrap()
            .contains("TOPSECRET-npm")
    );
    // The parent of a hidden tree cannot be renamed or removed to show it under a new name, in
    // one command or across two.
    let renamed = sandbox(
        &fixture,
        &["--settings", settings],
        &[
            "sh",
            "-c",
            "mv config c2; cat c2/secrets/key.txt config/app.toml",
        ],
        "",
    );
    assert!(!stdout(&renamed).contains("TOPSECRET"), "{renamed:?}");
    assert!(stdout(&renamed).contains("ok"), "{renamed:?}");
    let later = sandbox(
        &fixture,
        &["--settings", settings],
        &[
            "sh",
            "-c",
            "cat c2/secrets/key.txt 2>/dev/null; rm -rf config; ls config",
        ],
        "",
    );
    assert!(!stdout(&later).contains("TOPSECRET"), "{later:?}");
    assert!(fixture.workspace().join("config/secrets/key.txt").exists());
    // No setuid or setgid file can be left behind, by chmod, install or a creating open.
    let set_id = sandbox(
        &fixture,
        &[],
        &[
            "sh",
            "-c",
            "cp /bin/sh x; chmod 4755 x; chmod g+s x; install -m 4755 /bin/sh y; \
             python3 -c \"import os; os.close(os.open('z', os.O_CREAT | os.O_WRONLY, 0o6755))\"; \
             python3 -c \"import os, stat; os.mknod('w', stat.S_IFREG | 0o4755)\"; \
             chmod 755 x; echo done",
        ],
        "",
    );
    assert!(stdout(&set_id).contains("done"), "{set_id:?}");
    for name in ["x", "y", "z", "w"] {
        if let Ok(metadata) = std::fs::metadata(fixture.workspace().join(name)) {
            assert_eq!(
                metadata.permissions().mode() & 0o6000,
                0,
                "{name} was left with a set-id bit: {set_id:?}"
            );
        }
    }
    assert!(fixture.workspace().join("x").exists(), "{set_id:?}");
}

#[test]
fn a_path_entry_reached_through_a_link_still_finds_its_programs() {
    use std::os::unix::fs::PermissionsExt as _;
    let fixture = Fixture::new();
    let real = fixture.root().join("tools-real/bin");
    std::fs::create_dir_all(&real).unwrap();
    let program = real.join("hello-janua");
    std::fs::write(&program, "#!/bin/sh\necho hello-through-the-link\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(
        fixture.root().join("tools-real"),
        fixture.root().join("tools"),
    )
    .unwrap();
    let output = Command::new(janua_bin())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache_dir())
        .args(["sandbox", "--", "hello-janua"])
        .current_dir(fixture.workspace())
        .env("XDG_CONFIG_HOME", fixture.config_home())
        .env("HOME", fixture.root().join("home"))
        .env(
            "PATH",
            format!(
                "{}:/usr/bin:/bin",
                fixture.root().join("tools/bin").display()
            ),
        )
        .output()
        .unwrap();
    assert!(
        stdout(&output).contains("hello-through-the-link"),
        "{output:?}"
    );
}
