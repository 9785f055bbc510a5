//! Grants are the hard boundary: paths outside the workspace, symlinks out of it and ungranted
//! environment variables are invisible to guests, whatever the permission decision said.

use std::process::Command;

use serde_json::json;
use warden::ErrorKind;
use warden_test_guests::{GRANTS_ENV, GRANTS_FS_ESCAPE};

use crate::support::{Fixture, cache_dir, call, error_text, ok_text, warden_bin};

const SECRET: &str = "TOPSECRET";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_of_a_parent_relative_path_is_denied_without_disclosure() {
    let fixture = Fixture::new();
    let runtime = fixture
        .runtime(&[], |c| c.allowed_tools = vec!["Read".into()])
        .await;
    let result = call(
        &runtime,
        "Read",
        json!({"file_path": "../outside/secret.txt"}),
    )
    .await;
    let text = error_text(&result, ErrorKind::PermissionDenied);
    assert!(text.contains("outside the tool's grants"), "{text}");
    assert!(!text.contains(SECRET));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_of_an_absolute_path_outside_is_denied_without_disclosure() {
    let fixture = Fixture::new();
    let runtime = fixture
        .runtime(&[], |c| c.allowed_tools = vec!["Read".into()])
        .await;
    let path = fixture.outside().join("secret.txt");
    let result = call(&runtime, "Read", json!({"file_path": path})).await;
    assert!(!error_text(&result, ErrorKind::PermissionDenied).contains(SECRET));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_through_a_symlink_pointing_outside_fails_in_the_sandbox() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    std::os::unix::fs::symlink(
        fixture.outside().join("secret.txt"),
        workspace.join("link.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(fixture.outside(), workspace.join("linkdir")).unwrap();
    let runtime = fixture.runtime(&[], |_| {}).await;
    for path in ["link.txt", "linkdir/secret.txt"] {
        let result = call(&runtime, "Read", json!({"file_path": path})).await;
        // The path is lexically inside the workspace, so the decision allows it; the WASI preopen
        // refuses to follow the link out.
        assert_eq!(
            result.outcome.decision.as_ref().unwrap().verdict,
            warden::Verdict::Allow
        );
        let text = error_text(&result, ErrorKind::ToolFailed);
        assert!(!text.contains(SECRET), "{path}: {text}");
    }
}

/// `Peek` has no rule field, so nothing but the preopens stands between it and the host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn grants_fs_escape() {
    let fixture = Fixture::new();
    fixture.write("inside.txt", "inside\n");
    let plugin = fixture.plugin(
        "escape",
        GRANTS_FS_ESCAPE,
        "grants = { fs = [{ path = \"${WORKSPACE}\", access = \"read\" }] }",
    );
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    assert_eq!(
        ok_text(&call(&runtime, "Peek", json!({"target": "inside.txt"})).await),
        "inside\n"
    );
    let outside = fixture.outside().join("secret.txt");
    let workspace = fixture.workspace();
    std::os::unix::fs::symlink(&outside, workspace.join("link")).unwrap();
    let attempts = [
        "../outside/secret.txt".to_owned(),
        outside.display().to_string(),
        "link".to_owned(),
        "/etc/passwd".to_owned(),
        format!("{}/../outside/secret.txt", workspace.display()),
    ];
    for target in attempts {
        let result = call(&runtime, "Peek", json!({"target": target})).await;
        let text = error_text(&result, ErrorKind::ToolFailed);
        assert!(
            !text.contains(SECRET) && !text.contains("root:"),
            "{target}: {text}"
        );
    }
    // A read grant does not allow writing.
    let result = call(
        &runtime,
        "Peek",
        json!({"target": "new.txt", "write": true}),
    )
    .await;
    error_text(&result, ErrorKind::ToolFailed);
    assert!(!workspace.join("new.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_without_fs_grants_sees_no_files() {
    let fixture = Fixture::new();
    fixture.write("inside.txt", "inside\n");
    let plugin = fixture.plugin("escape", GRANTS_FS_ESCAPE, "");
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    error_text(
        &call(&runtime, "Peek", json!({"target": "inside.txt"})).await,
        ErrorKind::ToolFailed,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_write_grant_lets_a_guest_write_in_the_workspace() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "escape",
        GRANTS_FS_ESCAPE,
        "grants = { fs = [{ path = \"${WORKSPACE}\", access = \"read-write\" }] }",
    );
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    ok_text(
        &call(
            &runtime,
            "Peek",
            json!({"target": "new.txt", "write": true}),
        )
        .await,
    );
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join("new.txt")).unwrap(),
        "written by guest"
    );
}

/// Runs in a child process so the host environment can be set without touching this process's.
#[test]
pub(crate) fn grants_env() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "env",
        GRANTS_ENV,
        "grants = { env = [\"WARDEN_TEST_GRANTED*\"] }",
    );
    let peek = |name: &str| {
        let output = Command::new(warden_bin())
            .args([
                "call",
                "EnvPeek",
                "--input",
                &json!({"name": name}).to_string(),
            ])
            .arg("--plugins")
            .arg(&plugin)
            .arg("--cwd")
            .arg(fixture.workspace())
            .arg("--state-dir")
            .arg(fixture.state_dir())
            .arg("--cache-dir")
            .arg(cache_dir())
            .env("WARDEN_TEST_SECRET", "hunter2")
            .env("WARDEN_TEST_GRANTED_ONE", "visible")
            .output()
            .expect("run warden");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let block: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let seen: serde_json::Value =
            serde_json::from_str(block["content"].as_str().unwrap()).unwrap();
        seen
    };
    let granted = peek("WARDEN_TEST_GRANTED_ONE");
    assert_eq!(granted["value"], "visible");
    assert_eq!(
        granted["names"],
        json!(["WARDEN_TEST_GRANTED_ONE"]),
        "only granted names are visible"
    );
    let secret = peek("WARDEN_TEST_SECRET");
    assert_eq!(secret["value"], serde_json::Value::Null);
    let path = peek("PATH");
    assert_eq!(path["value"], serde_json::Value::Null);
}
