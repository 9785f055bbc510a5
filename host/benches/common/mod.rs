//! Helpers the benchmarks share: dispatching a call and printing a table row of its timings.

use std::time::{Duration, Instant};

use janua::{Runtime, ToolUse};
use serde_json::Value;

/// Runs `benchmark` on a two-worker tokio runtime, as the `janua` binary does.
pub fn block_on(benchmark: impl std::future::Future<Output = ()>) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(benchmark);
}

/// A temporary directory holding an empty `workspace/`, and that workspace's path.
pub fn temp_workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    (root, workspace)
}

/// Writes `small.txt` (100 short lines) into `workspace`: the file the `Read` rows read.
pub fn small_file(workspace: &std::path::Path) {
    let lines: String = (1..=100)
        .map(|n| format!("line {n} of the benchmark file\n"))
        .collect();
    std::fs::write(workspace.join("small.txt"), lines).expect("write file");
}

/// A plugin directory under `root` holding the `pipeline-echo` test guest (`Echo`, `Picky`).
pub fn echo_plugin(root: &std::path::Path) -> std::path::PathBuf {
    let plugin = root.join("echo");
    std::fs::create_dir_all(&plugin).expect("plugin dir");
    std::fs::copy(janua_test_guests::PIPELINE_ECHO, plugin.join("echo.wasm")).expect("copy guest");
    std::fs::write(
        plugin.join("janua.toml"),
        "[plugin]\nname = \"echo\"\n\n[[tool]]\ncomponent = \"echo.wasm\"\n",
    )
    .expect("manifest");
    plugin
}

/// Adds the flags that keep a `janua` child to the benchmark's own directories: the workspace,
/// state and compile cache given, and no user settings.
pub fn isolated<'c>(
    command: &'c mut std::process::Command,
    workspace: &std::path::Path,
    state: &std::path::Path,
    cache: &std::path::Path,
) -> &'c mut std::process::Command {
    command
        .arg("--cwd")
        .arg(workspace)
        .arg("--state-dir")
        .arg(state)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--no-user-settings")
}

/// A `janua run` child of `command` (the `janua` binary, or a wrapper such as `taskset` already
/// naming it) kept to the benchmark's directories (see [`isolated`]), with `args` after `run`;
/// its standard input, and its standard output read line by line.
pub fn start_run(
    mut command: std::process::Command,
    workspace: &std::path::Path,
    state: &std::path::Path,
    cache: &std::path::Path,
    args: &[&str],
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::process::Stdio;
    let mut child = isolated(&mut command, workspace, state, cache)
        .arg("run")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start janua run");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    (child, stdin, stdout)
}

/// Dispatches one call of `tool`.
pub async fn dispatch(runtime: &Runtime, tool: &str, input: &Value) -> janua::Dispatch {
    runtime
        .dispatch(ToolUse {
            id: "toolu_bench".to_owned(),
            name: tool.to_owned(),
            input: input.clone(),
        })
        .await
}

/// Runs `tool` once to warm up, then `iterations` times (or `JANUA_BENCH_ITERATIONS`, for
/// profiling one row), and prints a row of the timings.
pub async fn bench(runtime: &Runtime, label: &str, tool: &str, input: &Value, iterations: usize) {
    let iterations = std::env::var("JANUA_BENCH_ITERATIONS")
        .ok()
        .and_then(|count| count.parse().ok())
        .unwrap_or(iterations);
    let warm = dispatch(runtime, tool, input).await;
    assert!(warm.outcome.error.is_none(), "{label}: {:?}", warm.block);
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let result = dispatch(runtime, tool, input).await;
        samples.push(started.elapsed());
        assert!(
            result.outcome.error.is_none(),
            "{label}: {:?}",
            result.block
        );
    }
    row(label, &mut samples);
}

/// Prints a table row: p50, p99, mean and calls per second of `samples`.
pub fn row(label: &str, samples: &mut [Duration]) {
    samples.sort();
    let p50 = samples[samples.len() / 2];
    let p99 = samples[(samples.len() * 99 / 100).min(samples.len() - 1)];
    let total: Duration = samples.iter().sum();
    let mean = total / u32::try_from(samples.len()).expect("few samples");
    println!(
        "| {label} | {} | {} | {} | {:.0} |",
        format_duration(p50),
        format_duration(p99),
        format_duration(mean),
        1.0 / mean.as_secs_f64()
    );
}

/// `duration` in µs below a millisecond, else in ms.
pub fn format_duration(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros >= 1000.0 {
        format!("{:.2} ms", micros / 1000.0)
    } else {
        format!("{micros:.1} µs")
    }
}
