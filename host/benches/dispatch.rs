//! Dispatch benchmarks: start-up, full-pipeline latency per outcome, throughput and memory.
//!
//! `cargo bench -p janua --bench dispatch` prints Markdown rows for `BENCHMARKS.md`. Plain
//! `Instant` timing over many iterations after a warm-up; each row states what one iteration does.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use janua::{Runtime, RuntimeConfig, ToolUse};
use serde_json::{Value, json};

const WARM_UP: usize = 200;
const ITERATIONS: usize = 3000;

fn main() {
    common::block_on(run());
}

async fn run() {
    let (root, workspace) = common::temp_workspace();
    common::small_file(&workspace);
    let plugin = common::echo_plugin(root.path());

    let config = || {
        let mut config = RuntimeConfig::new(&workspace);
        config.state_dir = Some(root.path().join("state"));
        config.cache_dir = Some(root.path().join("cache"));
        config.plugin_dirs = vec![plugin.clone()];
        config.allowed_tools = vec!["Echo".to_owned()];
        config
    };

    println!("| what one iteration does | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");

    let cold = Instant::now();
    drop(Runtime::new(config()).await.expect("runtime"));
    println!(
        "| `Runtime::new`, empty compile cache (Cranelift compiles 2 components), once | {} | | | |",
        common::format_duration(cold.elapsed())
    );
    let mut starts = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        drop(Runtime::new(config()).await.expect("runtime"));
        starts.push(started.elapsed());
    }
    common::row(
        "`Runtime::new`, warm compile cache (load, link, describe 2 components)",
        &mut starts,
    );

    let rss_before = rss_kib();
    let runtime = Arc::new(Runtime::new(config()).await.expect("runtime"));
    let read = json!({"file_path": "small.txt", "limit": 10});
    bench(
        &runtime,
        "full pipeline, `Read` of 10 lines (validate + call: 2 fresh instances, 1 file read)",
        "Read",
        &read,
    )
    .await;
    bench(
        &runtime,
        "full pipeline, `Echo` (2 fresh instances, no files)",
        "Echo",
        &json!({"text": "hi", "count": "3"}),
    )
    .await;
    bench(
        &runtime,
        "`unknown_tool` result (resolve stage only)",
        "Nope",
        &json!({}),
    )
    .await;
    bench(
        &runtime,
        "`invalid_input` result (coerce + schema, no guest)",
        "Echo",
        &json!({"count": "x"}),
    )
    .await;

    for tasks in [1usize, 2] {
        let per_task = 4000;
        let started = Instant::now();
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let runtime = Arc::clone(&runtime);
                tokio::spawn(async move {
                    for _ in 0..per_task {
                        let result = runtime.dispatch(echo_call()).await;
                        assert!(!result.block.is_error);
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.await.expect("task");
        }
        let rate = (tasks * per_task) as f64 / started.elapsed().as_secs_f64();
        println!(
            "| `Echo` throughput, {tasks} concurrent task(s), {} calls | | | | {rate:.0} |",
            tasks * per_task
        );
    }
    let rss_after = rss_kib();
    println!(
        "\nRSS: {} MiB before the runtime, {} MiB after it served {} calls.",
        rss_before / 1024,
        rss_after / 1024,
        4 * (WARM_UP + ITERATIONS) + 12_000
    );
}

fn echo_call() -> ToolUse {
    ToolUse {
        id: "toolu_bench".to_owned(),
        name: "Echo".to_owned(),
        input: json!({"text": "hi"}),
    }
}

async fn bench(runtime: &Runtime, label: &str, tool: &str, input: &Value) {
    let call = || ToolUse {
        id: "toolu_bench".to_owned(),
        name: tool.to_owned(),
        input: input.clone(),
    };
    for _ in 0..WARM_UP {
        runtime.dispatch(call()).await;
    }
    let mut samples = Vec::with_capacity(ITERATIONS);
    for _ in 0..ITERATIONS {
        let started = Instant::now();
        let result = runtime.dispatch(call()).await;
        samples.push(started.elapsed());
        std::hint::black_box(result);
    }
    common::row(label, &mut samples);
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string(Path::new("/proc/self/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
