//! Delegation benchmarks: what a delegated call costs over a direct one (the guest blocking in
//! `delegate.call` while the nested dispatch runs), a call inside a forked sub-session, and the
//! example workflow (one Grep and three Reads, all delegated).
//!
//! `cargo bench -p janua --bench delegation` prints Markdown rows for `BENCHMARKS.md`.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::time::Instant;

use common::{bench, row};
use janua::{Narrowing, Runtime, RuntimeConfig, ToolUse};
use serde_json::json;

fn main() {
    common::block_on(run());
}

async fn run() {
    let (root, workspace) = common::temp_workspace();
    std::fs::write(workspace.join("notes.md"), "hello\n".repeat(20)).expect("file");
    for index in 0..3 {
        std::fs::write(
            workspace.join(format!("src{index}.rs")),
            format!("fn a() {{}}\n// TODO {index}\nfn b() {{}}\n"),
        )
        .expect("file");
    }
    let probe = root.path().join("probe");
    std::fs::create_dir_all(&probe).expect("plugin dir");
    std::fs::copy(janua_test_guests::DELEGATE_PROBE, probe.join("tool.wasm")).expect("copy");
    std::fs::write(
        probe.join("janua.toml"),
        "[plugin]\nname = \"probe\"\n\n[[tool]]\ncomponent = \"tool.wasm\"\ngrants = { delegate = [\"Read\"], fs = [{ path = \"${WORKSPACE}\", access = \"read\" }] }\n",
    )
    .expect("manifest");
    let workflow = root.path().join("grep-context");
    janua::extensions::write_example("workflow-grep-context", &workflow).expect("example");
    let mut config = RuntimeConfig::new(&workspace);
    config.state_dir = Some(root.path().join("state"));
    config.cache_dir = Some(root.path().join("cache"));
    config.plugin_dirs = vec![probe, workflow];
    config.allowed_tools = vec!["Delegate".to_owned(), "GrepContext".to_owned()];
    let runtime = Runtime::new(config).await.expect("runtime");

    println!("| what one iteration does | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");
    let read = json!({"file_path": "notes.md"});
    bench(
        &runtime,
        "`Read` of a small file, direct",
        "Read",
        &read,
        300,
    )
    .await;
    let nested = common::dispatch(
        &runtime,
        "Delegate",
        &json!({"tool": "Read", "input": read}),
    )
    .await;
    let report = nested.outcome.structured.expect("a report");
    assert_eq!(
        report["is_error"], false,
        "the nested Read must succeed: {report}"
    );
    bench(
        &runtime,
        "`Delegate` -> `Read` (one nested call, full pipeline twice)",
        "Delegate",
        &json!({"tool": "Read", "input": read}),
        300,
    )
    .await;
    fork_bench(&runtime, &read).await;
    bench(
        &runtime,
        "`GrepContext` (Grep + 3 Reads, all delegated)",
        "GrepContext",
        &json!({"pattern": "TODO", "context_lines": 1}),
        100,
    )
    .await;
}

/// `Read` inside a sub-session narrowed to Read and Grep with one extra deny rule.
async fn fork_bench(runtime: &Runtime, input: &serde_json::Value) {
    let fork = runtime
        .fork(Narrowing {
            tools: Some(vec!["Read".into(), "Grep".into()]),
            deny: vec!["Read(./secret/**)".into()],
            ..Default::default()
        })
        .expect("fork");
    let mut samples = Vec::new();
    for index in 0..330 {
        let started = Instant::now();
        let result = fork
            .dispatch(ToolUse {
                id: format!("f{index}"),
                name: "Read".into(),
                input: input.clone(),
            })
            .await;
        assert!(!result.block.is_error, "{}", result.block.text());
        if index >= 30 {
            samples.push(started.elapsed());
        }
    }
    row(
        "`Read` inside a forked sub-session (narrowed tools and rules)",
        &mut samples,
    );
}
