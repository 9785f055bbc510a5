//! Hook and monitor benchmarks: what PreToolUse hooks add to a `Read` call (one WASM hook; two,
//! four and ten on one call; ten that are not selected; one sandboxed command hook), and what a monitor costs the pipeline, beside the
//! floor of issue 10's target 2: one bare instantiate + `handle` of the same hook component
//! (`janua_sandbox::Floor`), measured in the same run.
//!
//! `cargo bench -p janua --bench hooks` prints Markdown rows for `BENCHMARKS.md`.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::path::Path;

use common::bench;
use janua::{Runtime, RuntimeConfig};
use serde_json::json;

fn main() {
    // The floor runs wasmtime's synchronous WASI, outside any async context.
    let floor = janua_sandbox::Floor::new(
        &std::fs::read(janua_test_guests::HOOKS_SCRIPTED).expect("hook guest"),
        true,
    )
    .expect("floor");
    let event = json!({"hook_event_name": "PreToolUse", "tool_name": "Read",
        "tool_input": {"file_path": "notes.md"}, "config": {"behaviour": "answer"}})
    .to_string();
    for _ in 0..200 {
        floor.call("", &event).expect("floor call");
    }
    let mut samples: Vec<std::time::Duration> = (0..2000)
        .map(|_| {
            let started = std::time::Instant::now();
            floor.call("", &event).expect("floor call");
            started.elapsed()
        })
        .collect();
    println!("| what one iteration does | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");
    common::row(
        "floor: bare store + instantiate + `handle` of the hook component, this thread",
        &mut samples,
    );
    common::block_on(run());
}

/// A plugin directory holding the scripted test hook with `tables`.
fn hook_plugin(dir: &Path, name: &str, tables: &str) -> std::path::PathBuf {
    let plugin = dir.join(name);
    std::fs::create_dir_all(&plugin).expect("plugin dir");
    std::fs::copy(janua_test_guests::HOOKS_SCRIPTED, plugin.join("ext.wasm")).expect("copy");
    std::fs::write(
        plugin.join("janua.toml"),
        format!("[plugin]\nname = \"{name}\"\n\n{tables}"),
    )
    .expect("manifest");
    plugin
}

fn hook_table(index: usize) -> String {
    hook_table_for(index, "Read")
}

/// A PreToolUse hook entry whose matcher is `matcher`.
fn hook_table_for(index: usize, matcher: &str) -> String {
    format!(
        "[[hooks]]\ncomponent = \"ext.wasm\"\nname = \"h{index}\"\nevents = [\"PreToolUse\"]\nmatcher = \"{matcher}\"\nconfig = {{ behaviour = \"answer\" }}\n\n"
    )
}

async fn run() {
    let (root, workspace) = common::temp_workspace();
    std::fs::write(workspace.join("notes.md"), "hello\n".repeat(20)).expect("file");
    let config = |plugins: Vec<std::path::PathBuf>, settings: Option<String>| {
        let mut config = RuntimeConfig::new(&workspace);
        config.state_dir = Some(root.path().join("state"));
        config.cache_dir = Some(root.path().join("cache"));
        config.plugin_dirs = plugins;
        config.settings_json = settings.into_iter().collect();
        config
    };
    let one = hook_plugin(root.path(), "one", &hook_table(0));
    let two = hook_plugin(
        root.path(),
        "two",
        &(0..2).map(hook_table).collect::<String>(),
    );
    let four = hook_plugin(
        root.path(),
        "four",
        &(0..4).map(hook_table).collect::<String>(),
    );
    let ten = hook_plugin(
        root.path(),
        "ten",
        &(0..10).map(hook_table).collect::<String>(),
    );
    // Ten hooks for another tool: not selected, so never instantiated and their event never built.
    let elsewhere = hook_plugin(
        root.path(),
        "elsewhere",
        &(0..10)
            .map(|index| hook_table_for(index, "Write"))
            .collect::<String>(),
    );
    let audit = root.path().join("audit");
    janua::extensions::write_example("monitor-audit", &audit).expect("audit example");
    let command = json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": "exit 0"}]}]}})
    .to_string();
    let runtimes: Vec<(&str, Runtime)> = vec![
        (
            "no hooks",
            Runtime::new(config(Vec::new(), None))
                .await
                .expect("runtime"),
        ),
        (
            "10 WASM PreToolUse hooks whose matcher names another tool",
            Runtime::new(config(vec![elsewhere], None))
                .await
                .expect("runtime"),
        ),
        (
            "1 WASM PreToolUse hook",
            Runtime::new(config(vec![one], None))
                .await
                .expect("runtime"),
        ),
        (
            "2 WASM PreToolUse hooks",
            Runtime::new(config(vec![two], None))
                .await
                .expect("runtime"),
        ),
        (
            "4 WASM PreToolUse hooks",
            Runtime::new(config(vec![four], None))
                .await
                .expect("runtime"),
        ),
        (
            "10 WASM PreToolUse hooks",
            Runtime::new(config(vec![ten], None))
                .await
                .expect("runtime"),
        ),
        (
            "1 command hook (`exit 0`, process sandbox)",
            Runtime::new(config(Vec::new(), Some(command)))
                .await
                .expect("runtime"),
        ),
        (
            "audit monitor (every event hashed and appended)",
            Runtime::new(config(vec![audit], None))
                .await
                .expect("runtime"),
        ),
    ];
    let input = json!({"file_path": "notes.md"});
    // `JANUA_BENCH_ONLY=<part of a row's label>` runs only the matching rows (for profiling).
    let only = std::env::var("JANUA_BENCH_ONLY").ok();
    for (label, runtime) in &runtimes {
        if only.as_deref().is_some_and(|only| !label.contains(only)) {
            continue;
        }
        bench(
            runtime,
            &format!("full pipeline, `Read` of a small file, {label}"),
            "Read",
            &input,
            300,
        )
        .await;
    }
    let (_, monitored) = runtimes
        .iter()
        .find(|(label, _)| label.starts_with("audit monitor"))
        .expect("the audit row");
    let report = monitored.end_session("other").await;
    for stats in report.monitors {
        println!(
            "\naudit monitor: {} events delivered, {} dropped, {} failures",
            stats.delivered, stats.dropped, stats.failures
        );
    }
}
