//! The default file tools' boundaries: paths hidden by Read deny rules, writes outside every grant,
//! checkpoints and `janua rewind`, and atomic replacement under SIGKILL.

use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use janua::{Dispatch, ErrorKind, PermissionMode};
use serde_json::{Value, json};

use crate::cli::janua;
use crate::support::{Fixture, cache_dir, call, error_text, janua_bin, ok_text};

/// A workspace with a denied `.env` and `secrets/` directory next to ordinary files that mention
/// the same words, so a leak would show up in every tool's output.
fn secret_workspace() -> Fixture {
    let fixture = Fixture::new();
    fixture.write(".env", "API_TOKEN=hunter2-env\n");
    fixture.write("config/.env", "API_TOKEN=hunter2-nested\n");
    fixture.write("secrets/key.txt", "API_TOKEN=hunter2-dir\n");
    fixture.write("secrets/deep/more.txt", "API_TOKEN=hunter2-deep\n");
    fixture.write("app.txt", "API_TOKEN is read from the environment\n");
    // Relative, because WASI refuses every absolute symlink: this one would be followed.
    std::os::unix::fs::symlink(".env", fixture.workspace().join("innocent.txt")).unwrap();
    fixture
}

const DENY_SECRETS: &str = r#"{"permissions": {"deny": ["Read(.env)", "Read(secrets/**)"]}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_denied_paths_are_invisible_to_read_glob_and_grep() {
    let fixture = secret_workspace();
    let runtime = fixture
        .runtime(&[], |config| {
            config.settings_json.push(DENY_SECRETS.to_owned())
        })
        .await;

    // Read: the rule denies it; a symlink to it finds nothing behind it.
    let denied = call(&runtime, "Read", json!({"file_path": ".env"})).await;
    error_text(&denied, ErrorKind::PermissionDenied);
    let via_link = call(&runtime, "Read", json!({"file_path": "innocent.txt"})).await;
    assert!(via_link.block.is_error, "{:?}", via_link.block);
    assert!(
        !via_link.block.text().contains("hunter2"),
        "{:?}",
        via_link.block
    );
    let nested = call(
        &runtime,
        "Read",
        json!({"file_path": "secrets/deep/more.txt"}),
    )
    .await;
    error_text(&nested, ErrorKind::PermissionDenied);

    // Glob: not listed, whatever the pattern.
    for pattern in ["**/*", "**/.env", "secrets/**", "**/*.txt"] {
        let listed = call(&runtime, "Glob", json!({"pattern": pattern})).await;
        let text = ok_text(&listed);
        assert!(!text.contains(".env"), "{pattern}: {text}");
        assert!(!text.contains("secrets/"), "{pattern}: {text}");
    }
    let all = ok_text(&call(&runtime, "Glob", json!({"pattern": "**/*"})).await);
    assert!(
        all.contains("app.txt"),
        "ordinary files are still listed: {all}"
    );

    // Grep: no file name and no matching line, in every output mode.
    for mode in ["files_with_matches", "content", "count"] {
        let found = call(
            &runtime,
            "Grep",
            json!({"pattern": "API_TOKEN", "output_mode": mode}),
        )
        .await;
        let text = ok_text(&found);
        assert!(!text.contains("hunter2"), "{mode}: {text}");
        assert!(!text.contains(".env"), "{mode}: {text}");
        assert!(!text.contains("secrets"), "{mode}: {text}");
        assert!(text.contains("app.txt"), "{mode}: {text}");
    }
    // Searching the denied directory itself finds nothing either.
    let inside = call(
        &runtime,
        "Grep",
        json!({"pattern": "hunter2", "path": "secrets", "output_mode": "content"}),
    )
    .await;
    assert!(
        !inside.block.text().contains("hunter2-dir"),
        "{:?}",
        inside.block
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_deny_rules_the_same_files_are_visible() {
    let fixture = secret_workspace();
    let runtime = fixture.runtime(&[], |_| {}).await;
    let found = ok_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "hunter2", "output_mode": "files_with_matches"}),
        )
        .await,
    );
    assert!(
        found.contains("secrets/key.txt") && found.contains(".env"),
        "{found}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_outside_the_workspace_is_denied_even_in_bypass_mode() {
    let fixture = Fixture::new();
    let runtime = fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::BypassPermissions);
        })
        .await;
    let target = fixture.outside().join("planted.txt");
    let denied = call(
        &runtime,
        "Write",
        json!({"file_path": target, "content": "planted"}),
    )
    .await;
    let text = error_text(&denied, ErrorKind::PermissionDenied);
    assert!(text.contains("grant"), "{text}");
    assert!(!target.exists());
    // Inside the workspace, bypass mode writes without asking.
    let inside = call(
        &runtime,
        "Write",
        json!({"file_path": "made.txt", "content": "made"}),
    )
    .await;
    ok_text(&inside);
    assert_eq!(
        std::fs::read(fixture.workspace().join("made.txt")).unwrap(),
        b"made"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_are_checkpointed_modes_kept_and_rewind_restores_exact_bytes() {
    let fixture = Fixture::new();
    let original = b"#!/bin/sh\r\necho one\r\necho two\r\n".to_vec();
    let script = fixture.write("run.sh", &original);
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let runtime = fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::AcceptEdits);
        })
        .await;
    ok_text(&call(&runtime, "Read", json!({"file_path": "run.sh"})).await);
    let first = call(
        &runtime,
        "Edit",
        json!({"file_path": "run.sh", "old_string": "echo one", "new_string": "echo ONE"}),
    )
    .await;
    ok_text(&first);
    assert_eq!(first.outcome.checkpoint, Some(1));
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755, "the replaced file keeps its mode");
    ok_text(
        &call(
            &runtime,
            "Edit",
            json!({"file_path": "run.sh", "old_string": "echo two", "new_string": "echo TWO"}),
        )
        .await,
    );
    ok_text(
        &call(
            &runtime,
            "Write",
            json!({"file_path": "notes/new.md", "content": "# new\n"}),
        )
        .await,
    );
    let failed = call(
        &runtime,
        "Edit",
        json!({"file_path": "run.sh", "old_string": "absent text", "new_string": "x"}),
    )
    .await;
    assert!(failed.block.is_error);
    assert_eq!(
        failed.outcome.checkpoint, None,
        "a call that changed nothing leaves none"
    );
    assert_eq!(
        std::fs::read(&script).unwrap(),
        b"#!/bin/sh\r\necho ONE\r\necho TWO\r\n"
    );
    drop(runtime);

    let listed = janua(&fixture, &["rewind", "--list", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let numbers: Vec<u64> = listed["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert!(listed["storage_bytes"].as_u64().unwrap() > 0);

    let last = janua(&fixture, &["rewind", "--last"]);
    assert!(last.status.success(), "{last:?}");
    assert!(!fixture.workspace().join("notes/new.md").exists());

    let rewound = janua(&fixture, &["rewind", "--to", "1"]);
    assert!(rewound.status.success(), "{rewound:?}");
    assert_eq!(
        std::fs::read(&script).unwrap(),
        original,
        "exact original bytes"
    );
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    let none = janua(&fixture, &["rewind", "--to", "1"]);
    assert_eq!(none.status.code(), Some(2), "{none:?}");
    assert!(String::from_utf8_lossy(&none.stderr).contains("no checkpoint 1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_skips_a_file_changed_by_something_else() {
    let fixture = Fixture::new();
    let path = fixture.write("a.txt", "one\n");
    let runtime = fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::AcceptEdits);
        })
        .await;
    ok_text(&call(&runtime, "Read", json!({"file_path": "a.txt"})).await);
    ok_text(
        &call(
            &runtime,
            "Edit",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        )
        .await,
    );
    drop(runtime);
    std::fs::write(&path, "edited by hand\n").unwrap();
    let output = janua(&fixture, &["rewind", "--last"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("skipped") && stdout.contains("changed by something else"),
        "{stdout}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"edited by hand\n");
    // The skipped file's checkpoint and saved content stay, for a restore by hand.
    let kept = stdout
        .split("earlier content is kept in ")
        .nth(1)
        .map(str::trim)
        .expect("the blob path is reported");
    assert_eq!(std::fs::read(kept).unwrap(), b"one\n");
    let listed = janua(&fixture, &["rewind", "--list", "--json"]);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["checkpoints"].as_array().unwrap().len(), 1);
}

#[test]
fn read_before_edit_holds_across_janua_call_processes() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "alpha\n");
    let edit =
        json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}).to_string();
    let args = [
        "--permission-mode",
        "acceptEdits",
        "call",
        "Edit",
        "--input",
        &edit,
    ];
    let unread = janua(&fixture, &args);
    assert_eq!(unread.status.code(), Some(1));
    let block: Value = serde_json::from_slice(&unread.stdout).unwrap();
    assert!(
        block["content"].to_string().contains("has not been read"),
        "{block}"
    );

    let read = json!({"file_path": "a.txt"}).to_string();
    assert!(
        janua(&fixture, &["call", "Read", "--input", &read])
            .status
            .success()
    );
    let edited = janua(&fixture, &args);
    assert!(edited.status.success(), "{edited:?}");
    assert_eq!(
        std::fs::read(fixture.workspace().join("a.txt")).unwrap(),
        b"beta\n"
    );
}

/// A `janua call Write` killed with SIGKILL while the new content is being written leaves the
/// old file, never a torn one; left alone, it leaves exactly the new one.
#[test]
fn a_write_killed_midway_leaves_the_old_or_the_new_file() {
    let fixture = Fixture::new();
    let old: Vec<u8> = (0..200_000)
        .flat_map(|n| format!("old line {n}\n").into_bytes())
        .collect();
    let path = fixture.write("big.txt", &old);
    let new_content: String = (0..1_500_000).map(|n| format!("new line {n}\n")).collect();
    let input = json!({"file_path": "big.txt", "content": new_content}).to_string();
    let read = json!({"file_path": "big.txt", "limit": 1}).to_string();

    let write = |kill_mid_write: bool| -> bool {
        assert!(
            janua(&fixture, &["call", "Read", "--input", &read])
                .status
                .success()
        );
        let mut child = Command::new(janua_bin())
            .args([
                "--permission-mode",
                "acceptEdits",
                "--timeout",
                "120s",
                "call",
                "Write",
                "--input",
                "-",
            ])
            .arg("--state-dir")
            .arg(fixture.state_dir())
            .arg("--cache-dir")
            .arg(cache_dir())
            .current_dir(fixture.workspace())
            .env("XDG_CONFIG_HOME", fixture.config_home())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(input.as_bytes()).unwrap();
        }
        if !kill_mid_write {
            return child.wait().unwrap().success();
        }
        // Kill as soon as the temporary file holds some of the new content.
        let started = Instant::now();
        let mut killed_mid_write = false;
        while started.elapsed() < Duration::from_secs(60) {
            let partial = std::fs::read_dir(fixture.workspace())
                .unwrap()
                .filter_map(Result::ok)
                .any(|entry| {
                    entry.file_name().to_string_lossy().contains(".janua-")
                        && entry.metadata().is_ok_and(|meta| meta.len() > 0)
                });
            if partial {
                child.kill().unwrap();
                killed_mid_write = true;
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        child.wait().unwrap();
        killed_mid_write
    };

    let killed = write(true);
    assert!(killed, "the test must catch the write in progress");
    let after_kill = std::fs::read(&path).unwrap();
    assert!(
        after_kill == old || after_kill == new_content.as_bytes(),
        "a killed write leaves the old or the new file, not {} torn bytes",
        after_kill.len()
    );

    assert!(write(false), "an undisturbed write succeeds");
    assert_eq!(std::fs::read(&path).unwrap(), new_content.as_bytes());
}

/// A write-class plugin holding a read-write grant on the whole workspace can change only the file
/// its decision allowed: not a sibling, not `.git/hooks`, no new directory, rename or symlink; and
/// `..` through a symlinked directory cannot reach a hidden file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn files_write_scope() {
    let fixture = Fixture::new();
    fixture.write(".git/hooks/README", "hooks\n");
    fixture.write("keep.txt", "keep\n");
    fixture.write(".env", "TOKEN=hunter2\n");
    fixture.write("packages/pkg/index.js", "module.exports = 1;\n");
    // Deeper than its target, so the lexical and physical meanings of `..` differ.
    std::fs::create_dir_all(fixture.workspace().join("node_modules/@s")).unwrap();
    std::os::unix::fs::symlink(
        "../../packages/pkg",
        fixture.workspace().join("node_modules/@s/pkg"),
    )
    .unwrap();
    let result = scribble(&fixture, "target.txt", "scope").await;
    let report = result
        .outcome
        .structured
        .clone()
        .expect("structured report");
    assert_eq!(report["target"], "ok", "{report}");
    assert_eq!(report["atomic"], "ok", "{report}");
    for refused in [
        "sibling",
        "git_hook",
        "mkdir",
        "rename",
        "symlink",
        "remove_other",
        "climb_read",
    ] {
        let outcome = report[refused].as_str().unwrap();
        assert!(
            ["PermissionDenied", "NotFound", "\"access\""]
                .iter()
                .any(|kind| outcome.contains(kind)),
            "{refused}: {report}"
        );
    }
    assert!(!report.to_string().contains("hunter2"), "{report}");
    let workspace = fixture.workspace();
    assert_eq!(
        std::fs::read(workspace.join("target.txt")).unwrap(),
        b"replaced\n"
    );
    for absent in [
        "other.txt",
        ".git/hooks/pre-commit",
        "newdir",
        "moved.txt",
        "link.txt",
    ] {
        assert!(!workspace.join(absent).exists(), "{absent}");
    }
    assert!(workspace.join("keep.txt").exists());
    assert_eq!(result.outcome.checkpoint, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_file_is_not_replaced_and_modes_survive_without_checkpoints() {
    let fixture = Fixture::new();
    let locked = fixture.write("locked.txt", "locked\n");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
    let script = fixture.write("run.sh", "echo one\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let runtime = fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::AcceptEdits);
            config.checkpoints = false;
        })
        .await;
    ok_text(&call(&runtime, "Read", json!({"file_path": "locked.txt"})).await);
    let refused = call(
        &runtime,
        "Write",
        json!({"file_path": "locked.txt", "content": "changed\n"}),
    )
    .await;
    let text = error_text(&refused, ErrorKind::ToolFailed);
    assert!(text.contains("read-only (mode 444)"), "{text}");
    assert_eq!(std::fs::read(&locked).unwrap(), b"locked\n");

    ok_text(&call(&runtime, "Read", json!({"file_path": "run.sh"})).await);
    let edited = call(
        &runtime,
        "Edit",
        json!({"file_path": "run.sh", "old_string": "one", "new_string": "two"}),
    )
    .await;
    ok_text(&edited);
    assert_eq!(edited.outcome.checkpoint, None, "checkpoints are off");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
}

/// Runs `Scribble` (read-write grant on the whole workspace) with `probe` against `file_path`
/// while `./.env` and `./config/prod.env` are hidden; the call itself must succeed.
async fn scribble(fixture: &Fixture, file_path: &str, probe: &str) -> Dispatch {
    let plugin = fixture.plugin(
        "scribble",
        janua_test_guests::FILES_WRITE_SCOPE,
        "grants = { fs = [{ path = \"${WORKSPACE}\", access = \"read-write\" }] }",
    );
    let runtime = fixture
        .runtime(&[plugin], |config| {
            config.allowed_tools = vec!["Scribble".to_owned()];
            config.disallowed_tools = vec![
                "Read(./.env)".to_owned(),
                "Read(./config/prod.env)".to_owned(),
            ];
        })
        .await;
    let result = call(
        &runtime,
        "Scribble",
        json!({"file_path": file_path, "probe": probe}),
    )
    .await;
    ok_text(&result);
    result
}

/// `Scribble`'s report of what each attempt did.
async fn scribble_report(fixture: &Fixture, file_path: &str, probe: &str) -> Value {
    let result = scribble(fixture, file_path, probe).await;
    result.outcome.structured.expect("structured report")
}

/// A symlink or hard link the workspace already had at the target is never written through: the
/// in-place writes are refused and the linked file keeps its bytes; an atomic replace swaps the
/// link itself for a new file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_at_the_write_target_is_not_written_through() {
    let fixture = Fixture::new();
    // The permission engine already refuses links into protected paths such as `.git/config`;
    // this shows the sandbox holds on its own, for an ordinary file.
    let config = fixture.write("vendor/lib.js", "[core]\n");
    let workspace = fixture.workspace();
    std::os::unix::fs::symlink("vendor/lib.js", workspace.join("soft.txt")).unwrap();
    std::fs::hard_link(&config, workspace.join("hard.txt")).unwrap();
    for link in ["soft.txt", "hard.txt"] {
        let report = scribble_report(&fixture, link, "through_link").await;
        for refused in ["in_place", "append"] {
            let outcome = report[refused].as_str().unwrap();
            assert!(
                outcome.contains("PermissionDenied"),
                "{link} {refused}: {report}"
            );
        }
        assert_eq!(report["atomic"], "ok", "{link}: {report}");
        assert_eq!(std::fs::read(&config).unwrap(), b"[core]\n", "{link}");
        let meta = std::fs::symlink_metadata(workspace.join(link)).unwrap();
        assert!(meta.is_file(), "{link} is now a file of its own");
        assert_eq!(std::fs::read(workspace.join(link)).unwrap(), b"replaced\n");
    }
}

/// With a deny rule in force, a write target two missing directories deep can still be created:
/// a missing parent answers `no-entry`, as the kernel would, so `create_dir_all` recurses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_missing_directories_are_created_under_deny_rules() {
    let fixture = Fixture::new();
    let report = scribble_report(&fixture, "new/sub/deep.txt", "nested").await;
    assert_eq!(report["create_dirs"], "ok", "{report}");
    assert_eq!(report["write"], "ok", "{report}");
    assert_eq!(
        std::fs::read(fixture.workspace().join("new/sub/deep.txt")).unwrap(),
        b"deep\n"
    );
}

/// A directory descriptor keeps the physical path it was opened at: re-pointing the link it was
/// opened through does not make a hidden file under it visible.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repointed_link_does_not_unhide_files_under_a_held_directory() {
    let fixture = Fixture::new();
    fixture.write("config/prod.env", "PROD_SECRET=swordfish\n");
    fixture.write("src/prod.env", "harmless\n");
    let workspace = fixture.workspace();
    std::os::unix::fs::symlink("config", workspace.join("t")).unwrap();
    std::os::unix::fs::symlink("src", workspace.join(".t.janua-1.tmp")).unwrap();
    let report = scribble_report(&fixture, "t", "repoint").await;
    assert_eq!(
        report["swap"], "ok",
        "the swap itself is in scope: {report}"
    );
    let read = report["read_through_held"].as_str().unwrap();
    assert!(read.contains("no-entry"), "{report}");
    assert!(!report.to_string().contains("swordfish"), "{report}");
}
