//! Registry assembly: `--tools`, plugin directories, bare-name denies, and load errors that name
//! the file to fix.

use janua::{ErrorKind, Runtime};
use janua_test_guests::{GRANTS_ENV, PIPELINE_ECHO};
use serde_json::json;

use crate::support::{Fixture, call, error_text};

async fn start_error(
    fixture: &Fixture,
    plugins: &[std::path::PathBuf],
    configure: impl FnOnce(&mut janua::RuntimeConfig),
) -> String {
    let mut config = fixture.config();
    config.plugin_dirs = plugins.to_vec();
    configure(&mut config);
    Runtime::new(config)
        .await
        .err()
        .expect("start-up fails")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_selection_picks_from_the_built_in_set() {
    let fixture = Fixture::new();
    let none = fixture
        .runtime(&[], |c| c.tools = "".parse().unwrap())
        .await;
    assert!(none.tools().is_empty());
    error_text(
        &call(&none, "Read", json!({"file_path": "x"})).await,
        ErrorKind::UnknownTool,
    );
    let listed = fixture
        .runtime(&[], |c| c.tools = "Read".parse().unwrap())
        .await;
    assert_eq!(listed.tools().len(), 1);
    let message = start_error(&fixture, &[], |c| c.tools = "Read,Shell".parse().unwrap()).await;
    assert!(
        message.contains("unknown tool(s) Shell")
            && message.contains(
                "built-in tools are: Bash, Browser, Edit, Glob, Grep, NotebookEdit, Read, TaskOutput, TaskStop, WebFetch, Write"
            ),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_add_tools_after_selection_and_bare_denies_remove_them() {
    let fixture = Fixture::new();
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    let runtime = fixture
        .runtime(&[echo], |c| {
            c.tools = "".parse().unwrap();
            c.disallowed_tools = vec!["Picky".into()];
        })
        .await;
    let names: Vec<String> = runtime.tools().into_iter().map(|t| t.spec.name).collect();
    assert_eq!(names, ["Echo"]);
    let info = &runtime.tools()[0];
    assert!(
        matches!(&info.source, janua::plugins::ToolSource::Plugin { name, .. } if name == "echo")
    );
    assert_eq!(info.digest.len(), 64);
}

/// A tool says whether it has checks beyond its schema; the host calls `validate-input` only for
/// those that do (`pipeline::validation_failed_carries_the_tools_message` shows Picky's still runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_tools_with_their_own_checks_are_validated() {
    let fixture = Fixture::new();
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    let runtime = fixture.runtime(&[echo], |_| {}).await;
    let validates = |name: &str| {
        runtime
            .tools()
            .into_iter()
            .find(|t| t.spec.name == name)
            .map(|t| t.spec.validates_input)
    };
    assert_eq!(validates("Echo"), Some(false));
    assert_eq!(validates("Picky"), Some(true));
    assert_eq!(validates("Read"), Some(false));
    assert_eq!(validates("Edit"), Some(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_tool_names_are_rejected() {
    let fixture = Fixture::new();
    let first = fixture.plugin("first", PIPELINE_ECHO, "");
    let second = fixture.plugin("second", PIPELINE_ECHO, "");
    let message = start_error(&fixture, &[first, second], |_| {}).await;
    assert!(
        message.contains("tool Echo is defined twice: by plugin first and by plugin second"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_manifests_name_the_file_and_line() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "env",
        GRANTS_ENV,
        "grants = { env = [\"OK\"], net = [\"https://x/path\"] }",
    );
    let message = start_error(&fixture, std::slice::from_ref(&plugin), |_| {}).await;
    assert!(
        message.contains("janua.toml: line 6") && message.contains("net grant \"https://x/path\""),
        "{message}"
    );

    std::fs::write(
        plugin.join("janua.toml"),
        "[plugin]\nname = \"env\"\n[[tool]]\ncomponent = \"missing.wasm\"\n",
    )
    .unwrap();
    let message = start_error(&fixture, std::slice::from_ref(&plugin), |_| {}).await;
    assert!(
        message.contains("cannot read component") && message.contains("missing.wasm"),
        "{message}"
    );

    std::fs::write(plugin.join("junk.wasm"), b"not wasm at all").unwrap();
    std::fs::write(
        plugin.join("janua.toml"),
        "[plugin]\nname = \"env\"\n[[tool]]\ncomponent = \"junk.wasm\"\n",
    )
    .unwrap();
    let message = start_error(&fixture, std::slice::from_ref(&plugin), |_| {}).await;
    assert!(
        message.contains("junk.wasm is not a usable janua tool component"),
        "{message}"
    );

    let message = start_error(&fixture, &[fixture.workspace().join("nope")], |_| {}).await;
    assert!(
        message.contains("cannot read the plugin manifest"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rules_fail_start_up_and_broad_allow_globs_are_ignored_with_a_warning() {
    let fixture = Fixture::new();
    let message = start_error(&fixture, &[], |c| c.allowed_tools = vec!["Read(".into()]).await;
    assert!(
        message.contains("invalid permission rule \"Read(\""),
        "{message}"
    );
    let runtime = fixture
        .runtime(&[], |c| c.allowed_tools = vec!["*".into()])
        .await;
    assert!(
        runtime
            .warnings()
            .iter()
            .any(|w| w.contains("ignored allow rule \"*\"")),
        "{:?}",
        runtime.warnings()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_files_add_rules_and_aliases() {
    let fixture = Fixture::new();
    fixture.write("a.secret", "s\n");
    let settings = fixture.workspace().join("settings.json");
    std::fs::write(
        &settings,
        r#"{"permissions": {"deny": ["Read(*.secret)"]}, "aliases": {"Cat": "Read"}}"#,
    )
    .unwrap();
    let runtime = fixture
        .runtime(&[], |c| c.settings_files = vec![settings.clone()])
        .await;
    let result = call(&runtime, "Cat", json!({"file_path": "a.secret"})).await;
    let text = error_text(&result, ErrorKind::PermissionDenied);
    assert!(
        text.contains("settings.json"),
        "the rule's source is named: {text}"
    );
    // A typo is a warning naming the key (Claude Code settings carry keys janua does not read);
    // a wrong type is an error.
    std::fs::write(&settings, r#"{"permisions": {}}"#).unwrap();
    let runtime = fixture
        .runtime(&[], |c| c.settings_files = vec![settings.clone()])
        .await;
    assert!(
        runtime
            .warnings()
            .iter()
            .any(|w| w.contains("\"permisions\"")),
        "{:?}",
        runtime.warnings()
    );
    std::fs::write(&settings, r#"{"permissions": {"deny": "Read"}}"#).unwrap();
    let message = start_error(&fixture, &[], |c| c.settings_files = vec![settings]).await;
    assert!(
        message.contains("permissions.deny must be an array"),
        "{message}"
    );
}
