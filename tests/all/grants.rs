//! Grants are the hard boundary: paths outside the workspace, symlinks out of it and ungranted
//! environment variables are invisible to guests, whatever the permission decision said.

use std::os::unix::ffi::OsStrExt as _;
use std::process::Command;

use janua::ErrorKind;
use janua_test_guests::{GRANTS_ENV, GRANTS_FS_ESCAPE};
use serde_json::json;

use crate::support::{Fixture, cache_dir, call, error_text, janua_bin, ok_text};

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
    // Where the link really leads is outside the workspace, so the default mode does not allow
    // the read by itself: it asks (denied headless).
    let runtime = fixture.runtime(&[], |_| {}).await;
    for path in ["link.txt", "linkdir/secret.txt"] {
        let result = call(&runtime, "Read", json!({"file_path": path})).await;
        let text = error_text(&result, ErrorKind::PermissionDenied);
        assert!(
            text.contains("reads outside the workspace"),
            "{path}: {text}"
        );
        assert!(!text.contains(SECRET), "{path}: {text}");
    }
    // With an allow rule the decision allows it; the WASI preopen still refuses to follow the link.
    let allowed = fixture
        .runtime(&[], |c| c.allowed_tools = vec!["Read".into()])
        .await;
    for path in ["link.txt", "linkdir/secret.txt"] {
        let result = call(&allowed, "Read", json!({"file_path": path})).await;
        assert_eq!(
            result.outcome.decision.as_ref().unwrap().verdict,
            janua::Verdict::Allow
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
async fn a_read_write_grant_makes_a_tool_ask_and_an_allow_rule_lets_it_write() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "escape",
        GRANTS_FS_ESCAPE,
        "grants = { fs = [{ path = \"${WORKSPACE}\", access = \"read-write\" }] }",
    );
    let input = json!({"target": "new.txt", "write": true});
    // Peek claims to be read-only; a write grant overrides the claim, so the default mode asks.
    let runtime = fixture.runtime(std::slice::from_ref(&plugin), |_| {}).await;
    assert!(
        !runtime
            .tools()
            .iter()
            .any(|t| t.spec.name == "Peek" && t.spec.read_only)
    );
    error_text(
        &call(&runtime, "Peek", input.clone()).await,
        ErrorKind::PermissionDenied,
    );
    assert!(!fixture.workspace().join("new.txt").exists());
    let runtime = fixture
        .runtime(&[plugin], |c| c.allowed_tools = vec!["Peek".into()])
        .await;
    ok_text(&call(&runtime, "Peek", input).await);
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join("new.txt")).unwrap(),
        "written by guest"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_subpath_that_is_a_symlink_out_of_the_workspace_grants_nothing() {
    let fixture = Fixture::new();
    std::os::unix::fs::symlink(fixture.outside(), fixture.workspace().join("docs")).unwrap();
    let plugin = fixture.plugin(
        "escape",
        GRANTS_FS_ESCAPE,
        "grants = { fs = [{ path = \"${WORKSPACE}/docs\", access = \"read\" }] }",
    );
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    let outside = fixture.outside().join("secret.txt");
    for target in [outside.display().to_string(), "docs/secret.txt".to_owned()] {
        let result = call(&runtime, "Peek", json!({"target": target})).await;
        let text = error_text(&result, ErrorKind::ToolFailed);
        assert!(!text.contains(SECRET), "{target}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_also_matches_the_target_of_a_symlink() {
    let fixture = Fixture::new();
    fixture.write("keys.secret", "sk-live\n");
    std::os::unix::fs::symlink(
        fixture.workspace().join("keys.secret"),
        fixture.workspace().join("innocent.txt"),
    )
    .unwrap();
    let runtime = fixture
        .runtime(&[], |c| c.disallowed_tools = vec!["Read(*.secret)".into()])
        .await;
    let result = call(&runtime, "Read", json!({"file_path": "innocent.txt"})).await;
    assert!(!error_text(&result, ErrorKind::PermissionDenied).contains("sk-live"));
}

/// Runs in a child process so the host environment can be set without touching this process's.
/// Env-reading tools are never auto-allowed (the values come from outside the workspace), so the
/// call carries an allow rule; `env_reading_tools_ask_even_when_read_only` checks the denial.
#[test]
pub(crate) fn grants_env() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "env",
        GRANTS_ENV,
        "grants = { env = [\"JANUA_TEST_GRANTED*\"] }",
    );
    let peek = |name: &str| {
        let output = Command::new(janua_bin())
            .args([
                "call",
                "EnvPeek",
                "--input",
                &json!({"name": name}).to_string(),
            ])
            .args(["--allowedTools", "EnvPeek"])
            .arg("--plugins")
            .arg(&plugin)
            .arg("--cwd")
            .arg(fixture.workspace())
            .arg("--state-dir")
            .arg(fixture.state_dir())
            .arg("--cache-dir")
            .arg(cache_dir())
            .env("JANUA_TEST_SECRET", "hunter2")
            .env("JANUA_TEST_GRANTED_ONE", "visible")
            // A variable that is not UTF-8 is skipped, never a crash.
            .env(
                "JANUA_TEST_GRANTED_RAW",
                std::ffi::OsStr::from_bytes(b"\xff\xfe"),
            )
            .output()
            .expect("run janua");
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
    let granted = peek("JANUA_TEST_GRANTED_ONE");
    assert_eq!(granted["value"], "visible");
    assert_eq!(
        granted["names"],
        json!(["JANUA_TEST_GRANTED_ONE"]),
        "only granted names are visible"
    );
    let secret = peek("JANUA_TEST_SECRET");
    assert_eq!(secret["value"], serde_json::Value::Null);
    let path = peek("PATH");
    assert_eq!(path["value"], serde_json::Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_reading_tools_ask_even_when_read_only() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("env", GRANTS_ENV, "grants = { env = [\"HOME\"] }");
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    let result = call(&runtime, "EnvPeek", json!({"name": "HOME"})).await;
    let text = error_text(&result, ErrorKind::PermissionDenied);
    assert!(text.contains("--allowedTools EnvPeek"), "{text}");
    assert!(text.contains("reads host environment variables"), "{text}");
}

/// `${PLUGIN_DATA}` persists across calls and runtimes; `${TMP}` is fresh for every call and gone
/// afterwards. Both are reported to the guest in its call context.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_data_persists_and_tmp_is_per_call() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "scratch",
        GRANTS_FS_ESCAPE,
        "grants = { fs = [{ path = \"${PLUGIN_DATA}\", access = \"read-write\" }, { path = \"${TMP}\", access = \"read-write\" }] }",
    );
    let configure = |c: &mut janua::RuntimeConfig| c.allowed_tools = vec!["Peek".into()];
    let runtime = fixture
        .runtime(std::slice::from_ref(&plugin), configure)
        .await;
    let write = |target: &str| json!({"target": target, "write": true});
    let read = |target: &str| json!({"target": target});
    ok_text(&call(&runtime, "Peek", write("$PLUGIN_DATA/kept.txt")).await);
    ok_text(&call(&runtime, "Peek", write("$TMP/scratch.txt")).await);
    error_text(
        &call(&runtime, "Peek", read("$TMP/scratch.txt")).await,
        ErrorKind::ToolFailed,
    );
    drop(runtime);

    let runtime = fixture.runtime(&[plugin], configure).await;
    let kept = call(&runtime, "Peek", read("$PLUGIN_DATA/kept.txt")).await;
    assert_eq!(ok_text(&kept), "written by guest");
    let data_dir = runtime
        .session()
        .dir()
        .parent()
        .unwrap()
        .join(".plugin-data/scratch");
    assert!(
        data_dir.join("kept.txt").is_file(),
        "{}",
        data_dir.display()
    );
    assert!(!data_dir.starts_with(fixture.workspace()));
}

/// A path tool whose component reads environment variables asks even for a path inside the
/// workspace; without the env grant the same call is allowed by the default mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_tool_with_an_env_grant_is_never_auto_allowed() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "12345");
    let input = json!({"file_path": "a.txt"});
    let with_env = fixture.plugin(
        "probe-env",
        GRANTS_ENV,
        "grants = { fs = [{ path = \"${WORKSPACE}\", access = \"read\" }], env = [\"HOME\"] }",
    );
    let runtime = fixture.runtime(&[with_env], |_| {}).await;
    let text = error_text(
        &call(&runtime, "FileProbe", input.clone()).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("reads host environment variables"), "{text}");
    let without_env = fixture.plugin(
        "probe",
        GRANTS_ENV,
        "grants = { fs = [{ path = \"${WORKSPACE}\", access = \"read\" }] }",
    );
    let runtime = fixture.runtime(&[without_env], |_| {}).await;
    assert_eq!(ok_text(&call(&runtime, "FileProbe", input).await), "5");
}

/// A link followed by `..` resolves (in the sandbox) beside the link's target, not where the
/// lexical spelling points; deny rules see that resolved path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_sees_through_a_link_followed_by_dot_dot() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    fixture.write("private/sub/keep.txt", "k\n");
    fixture.write("private/x", "PRIVATE-CONTENT\n");
    fixture.write("x", "public\n");
    std::os::unix::fs::symlink(workspace.join("private/sub"), workspace.join("alias")).unwrap();
    // `//` anchors at the filesystem root; a single `/` would anchor at the settings scope.
    let deny = format!("Read(/{}/private/*)", workspace.display());
    let runtime = fixture
        .runtime(&[], |c| c.disallowed_tools = vec![deny])
        .await;
    let result = call(&runtime, "Read", json!({"file_path": "alias/../x"})).await;
    let text = error_text(&result, ErrorKind::PermissionDenied);
    assert!(!text.contains("PRIVATE-CONTENT"), "{text}");
    assert!(ok_text(&call(&runtime, "Read", json!({"file_path": "x"})).await).contains("public"));
}

/// A path tool may name files in its own `${PLUGIN_DATA}`: the decision checks grants with the
/// tool's data directory, not only the workspace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_in_the_tools_plugin_data_is_within_its_grants() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "probe",
        GRANTS_ENV,
        "grants = { fs = [{ path = \"${PLUGIN_DATA}\", access = \"read\" }] }",
    );
    let runtime = fixture
        .runtime(&[plugin], |c| c.allowed_tools = vec!["FileProbe".into()])
        .await;
    let data = runtime
        .session()
        .dir()
        .parent()
        .unwrap()
        .join(".plugin-data/probe");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("state.bin"), "abc").unwrap();
    let result = call(
        &runtime,
        "FileProbe",
        json!({"file_path": data.join("state.bin")}),
    )
    .await;
    assert_eq!(ok_text(&result), "3");
}
