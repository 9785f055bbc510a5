//! The plugin author's loop through the real binary: `janua plugin new` crates that build with
//! cargo for wasm32-wasip2 and pass `janua plugin check` unchanged; lints and load errors in
//! `check`; `approve` and the registry holding a plugin to its approval; and a tool written in
//! Python (componentize-py against `wit/`), loaded and called like any other.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use janua::ErrorKind;
use janua_test_guests::PIPELINE_ECHO;
use serde_json::json;
use sha2::Digest as _;

use crate::mcp_support::{repo, tools_dir};
use crate::support::{Fixture, cache_dir, call, janua_bin, ok_text};

/// One cargo target directory for every scaffolded crate, kept across runs so their
/// dependencies (wit-bindgen, serde, schemars) are compiled once.
fn scaffold_target() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("plugin-scaffold-target")
}

/// Runs `janua` with the fixture's state and the shared component cache, then `args`.
fn janua(fixture: &Fixture, args: &[&str]) -> Output {
    Command::new(janua_bin())
        .args(["--cwd", &fixture.workspace().display().to_string()])
        .args(["--state-dir", &fixture.state_dir().display().to_string()])
        .args(["--cache-dir", &cache_dir().display().to_string()])
        .arg("--no-user-settings")
        .args(args)
        .env("CARGO_TARGET_DIR", scaffold_target())
        .output()
        .expect("run janua")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn describe(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn scaffolded_tool_hook_and_monitor_build_and_pass_check_unchanged() {
    let fixture = Fixture::new();
    for (kind, name) in [
        ("tool", "word-count"),
        ("hook", "sudo-guard"),
        ("monitor", "call-budget"),
    ] {
        let dir = fixture.root().join(name);
        let dir_text = dir.display().to_string();
        let created = janua(
            &fixture,
            &["plugin", "new", name, "--kind", kind, "--dir", &dir_text],
        );
        assert!(created.status.success(), "{}", describe(&created));
        for file in ["Cargo.toml", "src/lib.rs", "janua.toml"] {
            assert!(dir.join(file).is_file(), "{kind}: {file} missing");
        }

        let built = janua(&fixture, &["plugin", "build", &dir_text]);
        assert!(built.status.success(), "{kind}: {}", describe(&built));
        let component = dir.join(format!("{}.wasm", name.replace('-', "_")));
        let bytes = std::fs::read(&component).expect("the component is next to janua.toml");
        let digest = janua::plugins::component_digest(&bytes);
        let report = stdout(&built);
        assert!(
            report.contains(&format!("{} bytes, sha256 {digest}", bytes.len())),
            "{report}"
        );

        let checked = janua(&fixture, &["plugin", "check", &dir_text]);
        assert!(checked.status.success(), "{kind}: {}", describe(&checked));
        let report = stdout(&checked);
        assert!(report.contains("0 error(s), 0 warning(s)"), "{report}");
        match kind {
            "tool" => {
                assert!(report.contains("tool WordCount [read, read-only, concurrency-safe]"))
            }
            "hook" => assert!(report.contains("on PreToolUse for Bash"), "{report}"),
            _ => assert!(report.contains("on tool_started"), "{report}"),
        }
    }

    // A scaffold named like a built-in builds, and check refuses it.
    let read = fixture.root().join("read");
    let read_text = read.display().to_string();
    let created = janua(&fixture, &["plugin", "new", "read", "--dir", &read_text]);
    assert!(created.status.success(), "{}", describe(&created));
    let built = janua(&fixture, &["plugin", "build", &read_text]);
    assert!(built.status.success(), "{}", describe(&built));
    let checked = janua(&fixture, &["plugin", "check", &read_text]);
    assert_eq!(checked.status.code(), Some(1), "{}", describe(&checked));
    assert!(
        stdout(&checked).contains("tool Read is defined twice: by built-in and by plugin read"),
        "{}",
        describe(&checked)
    );

    let plugin = fixture.root().join("word-count").display().to_string();
    let called = janua(
        &fixture,
        &[
            "--plugins",
            &plugin,
            "--tools",
            "",
            "call",
            "WordCount",
            "--input",
            r#"{"text":"one two  three"}"#,
        ],
    );
    assert!(called.status.success(), "{}", describe(&called));
    assert!(stdout(&called).contains("3 words"), "{}", describe(&called));
}

#[test]
fn new_refuses_bad_names_and_non_empty_directories() {
    let fixture = Fixture::new();
    let bad = janua(&fixture, &["plugin", "new", "Bad Name"]);
    assert_eq!(bad.status.code(), Some(2), "{}", describe(&bad));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("lower-case letters"));

    let taken = fixture.root().join("taken");
    std::fs::create_dir_all(&taken).expect("create dir");
    std::fs::write(taken.join("keep.txt"), "mine").expect("write file");
    let refused = janua(
        &fixture,
        &[
            "plugin",
            "new",
            "taken",
            "--dir",
            &taken.display().to_string(),
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", describe(&refused));
    assert_eq!(
        std::fs::read_to_string(taken.join("keep.txt")).expect("still there"),
        "mine"
    );
    assert!(!taken.join("Cargo.toml").exists());
}

#[test]
fn build_without_a_crate_says_how_to_make_one() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("echo", PIPELINE_ECHO, "");
    let built = janua(
        &fixture,
        &["plugin", "build", &plugin.display().to_string()],
    );
    assert_eq!(built.status.code(), Some(2), "{}", describe(&built));
    assert!(
        String::from_utf8_lossy(&built.stderr).contains("janua plugin new"),
        "{}",
        describe(&built)
    );
}

#[test]
fn check_lints_warn_and_load_errors_fail() {
    let fixture = Fixture::new();
    // Over-broad grants on a tool whose spec is loose: warnings, exit 0.
    let broad = fixture.plugin(
        "broad",
        PIPELINE_ECHO,
        r#"grants = { net = ["https://*"], env = ["*"], fs = [{ path = "${WORKSPACE}", access = "read-write" }] }"#,
    );
    let checked = janua(&fixture, &["plugin", "check", &broad.display().to_string()]);
    assert!(checked.status.success(), "{}", describe(&checked));
    let report = stdout(&checked);
    for needle in [
        "tool Echo",
        "tool tool.wasm: send HTTP requests to https://*",
        "reaches every host",
        "hands over every variable",
        "read-write on the whole ${WORKSPACE}",
        "0 error(s)",
    ] {
        assert!(report.contains(needle), "{needle:?} missing:\n{report}");
    }

    // A browser grant without a host to load from: a warning, and the grant as a sentence.
    let browser = fixture.plugin("browser", PIPELINE_ECHO, "grants = { browser = true }");
    let checked = janua(
        &fixture,
        &["plugin", "check", &browser.display().to_string()],
    );
    assert!(checked.status.success(), "{}", describe(&checked));
    let report = stdout(&checked);
    for needle in [
        "tool tool.wasm: drive a headless browser page",
        "browser grant without net grants",
    ] {
        assert!(report.contains(needle), "{needle:?} missing:\n{report}");
    }

    // A core module instead of a component, and one built against another WIT version: errors.
    let core = fixture.plugin("core", PIPELINE_ECHO, "");
    std::fs::write(core.join("tool.wasm"), b"\0asm\x01\0\0\0").expect("write module");
    let checked = janua(&fixture, &["plugin", "check", &core.display().to_string()]);
    assert_eq!(checked.status.code(), Some(1), "{}", describe(&checked));
    assert!(
        stdout(&checked).contains("core WebAssembly module"),
        "{}",
        describe(&checked)
    );

    let future = fixture.plugin("future", PIPELINE_ECHO, "");
    let wasm = std::fs::read(future.join("tool.wasm")).expect("read guest");
    let ours = format!("janua:plugin/tool@{}", janua::plugins::wit_version()).into_bytes();
    let theirs = b"janua:plugin/tool@9.9.9".to_vec();
    assert_eq!(
        ours.len(),
        theirs.len(),
        "a same-length version keeps the binary valid"
    );
    let patched = replace_all(&wasm, &ours, &theirs);
    assert_ne!(patched, wasm, "the guest exports janua:plugin/tool");
    std::fs::write(future.join("tool.wasm"), patched).expect("write patched guest");
    let checked = janua(
        &fixture,
        &["plugin", "check", &future.display().to_string()],
    );
    assert_eq!(checked.status.code(), Some(1), "{}", describe(&checked));
    assert!(
        stdout(&checked).contains("built against janua:plugin@9.9.9"),
        "{}",
        describe(&checked)
    );

    // A broken manifest is an error with its line.
    let broken = fixture.plugin("broken", PIPELINE_ECHO, "");
    std::fs::write(
        broken.join("janua.toml"),
        "[plugin]\nname = \"broken\"\nbogus = 1\n",
    )
    .expect("write manifest");
    let checked = janua(
        &fixture,
        &["plugin", "check", &broken.display().to_string()],
    );
    assert_eq!(checked.status.code(), Some(1), "{}", describe(&checked));
    let report = stdout(&checked);
    assert!(
        report.contains("line 3") && report.contains("bogus"),
        "{report}"
    );
}

fn replace_all(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = haystack.to_vec();
    let mut at = 0;
    while let Some(offset) = out[at..]
        .windows(from.len())
        .position(|window| window == from)
    {
        let start = at + offset;
        out[start..start + from.len()].copy_from_slice(to);
        at = start + from.len();
    }
    out
}

#[tokio::test]
async fn an_approved_plugin_that_asks_for_more_is_not_loaded_until_approved_again() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("echo", PIPELINE_ECHO, "");
    let settings = fixture.root().join("user-settings.json");
    std::fs::write(&settings, r#"{"permissions": {"allow": ["Echo"]}}"#).expect("settings");
    let approve = |fixture: &Fixture| {
        janua(
            fixture,
            &[
                "plugin",
                "approve",
                &plugin.display().to_string(),
                "--settings-file",
                &settings.display().to_string(),
            ],
        )
    };
    let approved = approve(&fixture);
    assert!(approved.status.success(), "{}", describe(&approved));
    assert!(
        stdout(&approved).contains("grants: none"),
        "{}",
        describe(&approved)
    );
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read settings"))
            .expect("settings stay JSON");
    assert_eq!(
        recorded["permissions"]["allow"],
        json!(["Echo"]),
        "the rest is kept"
    );
    let key = plugin
        .canonicalize()
        .expect("canonical")
        .display()
        .to_string();
    let digest =
        janua::plugins::component_digest(&std::fs::read(plugin.join("tool.wasm")).expect("wasm"));
    assert_eq!(
        recorded["pluginApprovals"][&key]["components"]["tool.wasm"],
        json!(digest)
    );

    let start = || {
        let plugin = plugin.clone();
        let settings = settings.clone();
        async move { fixture_runtime(&plugin, &settings).await }
    };
    let runtime = start().await;
    assert!(runtime.warnings().is_empty(), "{:?}", runtime.warnings());
    assert!(ok_text(&call(&runtime, "Echo", json!({"text": "hi"})).await).contains("hi"));
    drop(runtime);

    // Rebuilt (other bytes) with the same grants: still loads.
    let mut wasm = std::fs::read(plugin.join("tool.wasm")).expect("wasm");
    append_custom_section(&mut wasm, "rebuilt", b"2");
    std::fs::write(plugin.join("tool.wasm"), &wasm).expect("write wasm");
    let runtime = start().await;
    assert!(runtime.warnings().is_empty(), "{:?}", runtime.warnings());
    drop(runtime);

    // Asking for an environment variable it was not approved for: left out, with the difference.
    widen_past_its_approval(&plugin);
    let runtime = start().await;
    let warning = runtime.warnings().join("\n");
    assert!(warning.contains("plugin echo"), "{warning}");
    assert!(warning.contains("is not loaded"), "{warning}");
    assert!(
        warning.contains("+ tool tool.wasm: read the environment variable(s) HOME"),
        "{warning}"
    );
    assert!(warning.contains("tool.wasm"), "{warning}");
    assert_eq!(
        call(&runtime, "Echo", json!({"text": "hi"}))
            .await
            .error_kind(),
        Some(ErrorKind::UnknownTool)
    );
    drop(runtime);

    let approved = approve(&fixture);
    assert!(approved.status.success(), "{}", describe(&approved));
    assert!(stdout(&approved).contains("read the environment variable(s) HOME"));
    let runtime = start().await;
    assert!(runtime.warnings().is_empty(), "{:?}", runtime.warnings());
    assert!(ok_text(&call(&runtime, "Echo", json!({"text": "back"})).await).contains("back"));
}

/// A runtime with `plugin` and `settings` given as `--settings` (an operator scope).
async fn fixture_runtime(plugin: &Path, settings: &Path) -> janua::Runtime {
    let fixture = Fixture::new();
    let mut config = fixture.config();
    config.plugin_dirs = vec![plugin.to_path_buf()];
    config.settings_files = vec![settings.to_path_buf()];
    janua::Runtime::new(config).await.expect("runtime starts")
}

/// Appends a custom section: other bytes, the same component.
fn append_custom_section(wasm: &mut Vec<u8>, name: &str, data: &[u8]) {
    let mut payload = vec![u8::try_from(name.len()).expect("short name")];
    payload.extend_from_slice(name.as_bytes());
    payload.extend_from_slice(data);
    wasm.push(0);
    wasm.push(u8::try_from(payload.len()).expect("short section"));
    wasm.extend_from_slice(&payload);
}

/// `example-tools/python-line-count` built with componentize-py, cached by the digest of its
/// source, the WIT contract and the componentize-py version.
fn python_line_count() -> &'static Path {
    static COMPONENT: OnceLock<PathBuf> = OnceLock::new();
    COMPONENT.get_or_init(|| {
        let example = repo().join("example-tools/python-line-count");
        let componentize = tools_dir().join("venv/bin/componentize-py");
        let mut hasher = sha2::Sha256::new();
        for file in [example.join("app.py"), repo().join("wit/plugin.wit")] {
            hasher.update(std::fs::read(&file).expect("read a build input"));
        }
        let version = Command::new(&componentize)
            .arg("--version")
            .output()
            .expect("run componentize-py");
        hasher.update(&version.stdout);
        let digest = hasher.finalize();
        let digest: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("python-guests");
        let component = dir.join(format!("line_count-{digest}.wasm"));
        if !component.is_file() {
            std::fs::create_dir_all(&dir).expect("create python-guests");
            let partial = dir.join(format!(
                "line_count-{digest}.{}.partial",
                std::process::id()
            ));
            let built = Command::new(&componentize)
                .current_dir(repo())
                .args(["-d", "wit", "-w", "tool-plugin", "componentize", "-p"])
                .arg(&example)
                .arg("app")
                .arg("-o")
                .arg(&partial)
                .output()
                .expect("run componentize-py");
            assert!(
                built.status.success(),
                "componentize-py: {}",
                describe(&built)
            );
            std::fs::rename(&partial, &component).expect("publish the component");
        }
        component
    })
}

/// The Python example as a plugin directory: its own manifest, the built component.
fn python_plugin(fixture: &Fixture) -> PathBuf {
    let dir = fixture.root().join("plugins/python-line-count");
    std::fs::create_dir_all(&dir).expect("create plugin dir");
    std::fs::copy(
        repo().join("example-tools/python-line-count/janua.toml"),
        dir.join("janua.toml"),
    )
    .expect("copy manifest");
    std::fs::copy(python_line_count(), dir.join("line_count.wasm")).expect("copy component");
    dir
}

#[tokio::test]
async fn a_python_tool_is_described_validated_and_run_under_its_grants() {
    let fixture = Fixture::new();
    fixture.write("notes.txt", "one two\nthree\n");
    let plugin = python_plugin(&fixture);
    let runtime = fixture
        .runtime(std::slice::from_ref(&plugin), |config| {
            config.tools = janua::plugins::ToolSelection::None;
        })
        .await;
    let tools = runtime.tools();
    let spec = &tools
        .iter()
        .find(|tool| tool.spec.name == "LineCount")
        .expect("LineCount is registered")
        .spec;
    assert!(spec.read_only && spec.concurrency_safe, "{spec:?}");
    assert_eq!(spec.rule_field.as_deref(), Some("file_path"));

    let counted = call(&runtime, "LineCount", json!({"file_path": "notes.txt"})).await;
    assert_eq!(ok_text(&counted), "2 lines, 3 words, 14 bytes");

    let misspelled = call(&runtime, "LineCount", json!({"file": "notes.txt"})).await;
    assert_eq!(misspelled.error_kind(), Some(ErrorKind::InvalidInput));

    let missing = call(&runtime, "LineCount", json!({"file_path": "absent.txt"})).await;
    assert_eq!(missing.error_kind(), Some(ErrorKind::ToolFailed));

    let secret = fixture.outside().join("secret.txt");
    let outside = call(
        &runtime,
        "LineCount",
        json!({"file_path": secret.display().to_string()}),
    )
    .await;
    assert!(outside.error_kind().is_some(), "outside the grants");
    assert!(!format!("{outside:?}").contains("TOPSECRET"));

    // The host is unharmed: the next call succeeds.
    let again = call(&runtime, "LineCount", json!({"file_path": "notes.txt"})).await;
    assert_eq!(ok_text(&again), "2 lines, 3 words, 14 bytes");

    let checked = janua(
        &fixture,
        &["plugin", "check", &plugin.display().to_string()],
    );
    assert!(checked.status.success(), "{}", describe(&checked));
    let report = stdout(&checked);
    assert!(
        report.contains("tool LineCount [read, read-only, concurrency-safe]"),
        "{report}"
    );
    assert!(
        report.contains("tool line_count.wasm: read files under ${WORKSPACE}"),
        "{report}"
    );
    assert!(report.contains("0 error(s), 0 warning(s)"), "{report}");
}

/// The Echo plugin, approved in a user settings file, and a runtime that loads it.
async fn approved_echo(fixture: &Fixture) -> (PathBuf, PathBuf, janua::Runtime) {
    let plugin = fixture.plugin("echo", PIPELINE_ECHO, "");
    let settings = fixture.root().join("user-settings.json");
    janua::plugins::approve_plugin(&plugin, &settings).expect("approve");
    let runtime = fixture
        .runtime(std::slice::from_ref(&plugin), |config| {
            config.settings_files = vec![settings.clone()];
            config.allowed_tools = vec!["Echo".to_owned()];
        })
        .await;
    (plugin, settings, runtime)
}

/// Gives `plugin` a grant its approval does not hold (the environment variable `HOME`).
fn widen_past_its_approval(plugin: &Path) {
    let manifest = plugin.join("janua.toml");
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    std::fs::write(
        &manifest,
        format!("{text}grants = {{ env = [\"HOME\"] }}\n"),
    )
    .expect("widen");
}

/// A `--watch` reload holds a plugin to its approval as a start does, reads approvals again (an
/// approval given while the session runs counts at the next reload), and a settings file broken
/// meanwhile fails the reload and leaves the tools as they were.
#[tokio::test]
async fn a_reload_holds_a_plugin_to_its_approval_and_sees_a_new_one() {
    let fixture = Fixture::new();
    let (plugin, settings, runtime) = approved_echo(&fixture).await;
    assert!(ok_text(&call(&runtime, "Echo", json!({"text": "one"})).await).contains("one"));

    widen_past_its_approval(&plugin);
    let reload = runtime
        .reload_plugins()
        .await
        .expect("the reload itself works");
    assert!(!reload.tools.contains(&"Echo".to_owned()), "{reload:?}");
    let warning = reload.warnings.join("\n");
    assert!(
        warning.contains("+ tool tool.wasm: read the environment variable(s) HOME"),
        "{warning}"
    );
    assert_eq!(
        call(&runtime, "Echo", json!({"text": "two"}))
            .await
            .error_kind(),
        Some(ErrorKind::UnknownTool)
    );

    janua::plugins::approve_plugin(&plugin, &settings).expect("approve again");
    let reload = runtime.reload_plugins().await.expect("reload");
    assert!(reload.tools.contains(&"Echo".to_owned()), "{reload:?}");
    assert!(reload.warnings.is_empty(), "{reload:?}");
    assert!(ok_text(&call(&runtime, "Echo", json!({"text": "three"})).await).contains("three"));

    std::fs::write(&settings, "{").expect("break settings");
    assert!(runtime.reload_plugins().await.is_err());
    assert!(ok_text(&call(&runtime, "Echo", json!({"text": "four"})).await).contains("four"));
}

/// A sub-session the embedder forked follows the session's registry: after a reload drops a
/// plugin, the sub-session neither lists nor runs it (and gets it back with the session).
#[tokio::test]
async fn a_forked_sub_session_sees_a_reload_as_the_session_does() {
    let fixture = Fixture::new();
    let (plugin, settings, runtime) = approved_echo(&fixture).await;
    let sub = runtime
        .fork(janua::Narrowing::default())
        .expect("a fork that narrows nothing");
    assert!(sub.tools().contains(&"Echo".to_owned()));
    let echo = |text: &str| janua::ToolUse {
        id: format!("toolu_{text}"),
        name: "Echo".to_owned(),
        input: json!({ "text": text }),
    };
    assert!(sub.dispatch(echo("one")).await.block.text().contains("one"));

    widen_past_its_approval(&plugin);
    runtime.reload_plugins().await.expect("reload");
    assert!(
        !sub.tools().contains(&"Echo".to_owned()),
        "{:?}",
        sub.tools()
    );
    assert_eq!(
        sub.dispatch(echo("two"))
            .await
            .outcome
            .error
            .map(|failure| failure.kind),
        Some(ErrorKind::UnknownTool)
    );

    janua::plugins::approve_plugin(&plugin, &settings).expect("approve again");
    runtime.reload_plugins().await.expect("reload");
    assert!(
        sub.dispatch(echo("three"))
            .await
            .block
            .text()
            .contains("three")
    );
}
