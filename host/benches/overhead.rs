//! Issue 10's targets that run in-process, each beside its floor in the same run:
//!
//! 1. per-call overhead: the full pipeline (200 rules, no hooks) over a bare fresh store +
//!    instantiate + call of the same component (`janua_sandbox::Floor`, janua's own engine), p50 ≤ 1.2×;
//! 3. throughput: pipeline calls per second on one and two tasks beside the bare floor's on one
//!    and two threads;
//! 7. the decision over 1,000 rules, p50 ≤ 20 µs;
//! 8. a `Read` of a small file within 3× of the bare Echo floor.
//!
//! `cargo bench -p janua --bench overhead` prints Markdown rows for `BENCHMARKS.md`. Floor,
//! sandbox-alone and pipeline samples are taken in turns of 50 calls each, so all see the same
//! machine state. `JANUA_BENCH_ONLY=echo` (or `read`) runs one tool alone, `JANUA_BENCH_CALLS`
//! times (20,000 by default), for profiling, and prints the mean per call.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use janua::{CapabilityClass, Runtime, RuntimeConfig, ToolSpec, ToolUse};

use janua::rules::{Policy, Rule, RuleContext, RuleKind, RuleSource};
use janua_sandbox::Floor;
use serde_json::json;

const WARM_UP: usize = 300;
const ITERATIONS: usize = 3000;

fn main() {
    // The floor calls wasmtime's synchronous WASI, which must not run inside an async context; so
    // this thread stays outside the runtime and enters it (`block_on`) for each pipeline call.
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    run(&tokio);
}

/// `count` rules across allow, ask and deny, none of which matches the benchmark's calls.
fn rules(count: usize) -> (Vec<String>, Vec<String>) {
    let mut allow = Vec::new();
    let mut deny = Vec::new();
    for n in 0..count {
        match n % 6 {
            0 => allow.push(format!("Bash(tool{n} *)")),
            1 => deny.push(format!("Bash(danger{n} *)")),
            2 => allow.push(format!("Read(src/mod{n}/**)")),
            3 => deny.push(format!("Read(secret{n}/**)")),
            4 => allow.push(format!("WebFetch(domain:*.site{n}.example)")),
            _ => deny.push(format!("Edit(//opt/data{n}/*.json)")),
        }
    }
    (allow, deny)
}

fn run(tokio: &tokio::runtime::Runtime) {
    // `JANUA_BENCH_ONLY=decision` runs the decision rows alone (for profiling them).
    if std::env::var("JANUA_BENCH_ONLY").as_deref() == Ok("decision") {
        let (root, workspace) = common::temp_workspace();
        for count in [0, 1000] {
            decision(&workspace, count);
        }
        drop(root);
        return;
    }
    let (root, workspace) = common::temp_workspace();
    common::small_file(&workspace);
    let plugin = common::echo_plugin(root.path());
    let (mut allow, deny) = rules(200);
    allow.push("Echo".to_owned());
    let mut config = RuntimeConfig::new(&workspace);
    config.state_dir = Some(root.path().join("state"));
    config.cache_dir = Some(root.path().join("cache"));
    config.plugin_dirs = vec![plugin.clone()];
    config.allowed_tools = allow;
    config.disallowed_tools = deny;
    let runtime = Arc::new(tokio.block_on(Runtime::new(config)).expect("runtime"));
    let floor = Arc::new(
        Floor::new(
            &std::fs::read(janua_test_guests::PIPELINE_ECHO).expect("guest"),
            false,
        )
        .expect("floor"),
    );
    let echo_input = json!({"text": "hi"});
    let echo_text = echo_input.to_string();

    println!("| what one iteration does | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");
    // `JANUA_BENCH_ONLY=read` (or `echo`) runs that tool alone for a while (for profiling it).
    let alone = match std::env::var("JANUA_BENCH_ONLY").as_deref() {
        Ok("read") => Some(("Read", json!({"file_path": "small.txt", "limit": 10}))),
        Ok("echo") => Some(("Echo", echo_input.clone())),
        _ => None,
    };
    if let Some((tool, input)) = alone {
        let calls = std::env::var("JANUA_BENCH_CALLS")
            .ok()
            .and_then(|calls| calls.parse().ok())
            .unwrap_or(20_000u32);
        let alone_started = Instant::now();
        for _ in 0..calls {
            let call = ToolUse {
                id: "toolu_bench".to_owned(),
                name: tool.to_owned(),
                input: input.clone(),
            };
            std::hint::black_box(tokio.block_on(runtime.dispatch(call)));
        }
        println!(
            "{tool} alone: {:.2} µs per call (mean of {calls})",
            alone_started.elapsed().as_secs_f64() * 1e6 / f64::from(calls)
        );
        return;
    }
    let (floor_samples, inline_samples, echo_samples) =
        side_by_side(tokio, &runtime, &floor, &echo_text, "Echo", &echo_input);
    let (_, _, read_samples) = side_by_side(
        tokio,
        &runtime,
        &floor,
        &echo_text,
        "Read",
        &json!({"file_path": "small.txt", "limit": 10}),
    );
    let floor_p50 = print(
        "floor: bare store + instantiate + `call` of Echo, this thread",
        floor_samples,
    );
    print(
        "sandbox alone: `Sandbox::run` of Echo, inline on the task (async exports), no stage",
        inline_samples,
    );
    let echo_p50 = print(
        "full pipeline, `Echo`, 200 rules loaded, no hooks",
        echo_samples,
    );
    let read_p50 = print(
        "full pipeline, `Read` of 10 lines of a small file",
        read_samples,
    );
    println!(
        "\nTarget 1 (pipeline / floor, p50): **{:.2}×** (target ≤ 1.2×)  \nTarget 8 (`Read` / Echo floor, p50): **{:.2}×** (target ≤ 3×)\n",
        ratio(echo_p50, floor_p50),
        ratio(read_p50, floor_p50)
    );

    tokio.block_on(throughput(&runtime, &floor, &echo_text));
    for count in [0, 1000] {
        decision(&workspace, count);
    }
    drop(root);
}

/// Floor, sandbox-alone and pipeline calls of `tool`, `ITERATIONS` of each after a warm-up, in
/// turns of a few dozen calls.
fn side_by_side(
    tokio: &tokio::runtime::Runtime,
    runtime: &Runtime,
    floor: &Floor,
    floor_input: &str,
    tool: &str,
    input: &serde_json::Value,
) -> (Vec<Duration>, Vec<Duration>, Vec<Duration>) {
    let call = || ToolUse {
        id: "toolu_bench".to_owned(),
        name: tool.to_owned(),
        input: input.clone(),
    };
    for _ in 0..WARM_UP {
        floor.call("Echo", floor_input).expect("floor call");
        let result = tokio.block_on(runtime.dispatch(call()));
        assert!(!result.block.is_error, "{tool}: {:?}", result.block);
    }
    let mut floors = Vec::with_capacity(ITERATIONS);
    let mut inline = Vec::with_capacity(ITERATIONS);
    let mut pipeline = Vec::with_capacity(ITERATIONS);
    // Blocks of `BLOCK` calls of each kind, in turn: all three see the same machine state over
    // the run, and no call pays for the cache lines and TLB entries the previous kind evicted
    // (each kind has its own engine and instance pool).
    const BLOCK: usize = 50;
    for _ in 0..ITERATIONS / BLOCK {
        for _ in 0..BLOCK {
            let started = Instant::now();
            floor.call("Echo", floor_input).expect("floor call");
            floors.push(started.elapsed());
        }
        for _ in 0..BLOCK {
            let started = Instant::now();
            tokio
                .block_on(floor.call_inline("Echo", floor_input))
                .expect("inline floor call");
            inline.push(started.elapsed());
        }
        for _ in 0..BLOCK {
            let started = Instant::now();
            let result = tokio.block_on(runtime.dispatch(call()));
            pipeline.push(started.elapsed());
            std::hint::black_box(result);
        }
    }
    (floors, inline, pipeline)
}

fn print(label: &str, mut samples: Vec<Duration>) -> Duration {
    common::row(label, &mut samples);
    samples[samples.len() / 2]
}

fn ratio(over: Duration, floor: Duration) -> f64 {
    over.as_secs_f64() / floor.as_secs_f64()
}

/// Calls per second of the floor on one and two threads, and of the pipeline on one and two
/// concurrent tasks (two tokio workers, as the binary).
async fn throughput(runtime: &Arc<Runtime>, floor: &Arc<Floor>, floor_input: &str) {
    const CALLS: usize = 6000;
    println!("| throughput, {CALLS} Echo calls | 1 thread/task | 2 threads/tasks | scaling |");
    println!("|---|---|---|---|");
    let mut floor_rates = Vec::new();
    for threads in [1usize, 2] {
        let started = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let floor = Arc::clone(floor);
                scope.spawn(move || {
                    for _ in 0..CALLS / threads {
                        floor.call("Echo", floor_input).expect("floor call");
                    }
                });
            }
        });
        floor_rates.push(CALLS as f64 / started.elapsed().as_secs_f64());
    }
    let mut rates = Vec::new();
    for tasks in [1usize, 2] {
        let started = Instant::now();
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let runtime = Arc::clone(runtime);
                tokio::spawn(async move {
                    for _ in 0..CALLS / tasks {
                        let result = runtime
                            .dispatch(ToolUse {
                                id: "toolu_bench".to_owned(),
                                name: "Echo".to_owned(),
                                input: json!({"text": "hi"}),
                            })
                            .await;
                        assert!(!result.block.is_error);
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.await.expect("task");
        }
        rates.push(CALLS as f64 / started.elapsed().as_secs_f64());
    }
    println!(
        "| floor (bare instantiate + call), calls/s | {:.0} | {:.0} | {:.2}× |",
        floor_rates[0],
        floor_rates[1],
        floor_rates[1] / floor_rates[0]
    );
    println!(
        "| full pipeline `Runtime::dispatch`, calls/s | {:.0} | {:.0} | {:.2}× |",
        rates[0],
        rates[1],
        rates[1] / rates[0]
    );
    println!(
        "\nPipeline throughput on two tasks: {:.0}% of the floor's on two threads.\n",
        100.0 * rates[1] / floor_rates[1]
    );
}

/// Target 7: the decision alone over `count` rules.
fn decision(workspace: &std::path::Path, count: usize) {
    let context = RuleContext {
        cwd: std::fs::canonicalize(workspace).expect("workspace"),
        home: Some("/home/bench".into()),
    };
    let mut policy = Policy::new(context.clone());
    let (allow, deny) = rules(count);
    for (kind, texts) in [(RuleKind::Allow, allow), (RuleKind::Deny, deny)] {
        for text in texts {
            policy.add(Rule::parse(&text, kind, RuleSource::CommandLine, &context).expect("rule"));
        }
    }
    let spec = |name: &str, field: &str, class: CapabilityClass| ToolSpec {
        name: name.to_owned(),
        description: String::new(),
        input_schema: json!({"type": "object", "properties": {field: {"type": "string"}}}),
        class,
        read_only: class == CapabilityClass::Read,
        concurrency_safe: false,
        rule_field: Some(field.to_owned()),
        validates_input: false,
    };
    println!("| the decision alone, {count} rules loaded | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");
    let cases = [
        (
            "`Bash` compound command (parse + every subcommand)",
            spec("Bash", "command", CapabilityClass::Process),
            json!({"command": "git status && FOO=1 timeout 5 tool8 --x | grep y"}),
        ),
        (
            "`Read` path (path globs, symlink resolution)",
            spec("Read", "file_path", CapabilityClass::Read),
            json!({"file_path": "src/mod3/deep/file.rs"}),
        ),
        (
            "`WebFetch` URL (domain rules)",
            spec("WebFetch", "url", CapabilityClass::Network),
            json!({"url": "https://docs.site4.example/page"}),
        ),
    ];
    for (label, tool, input) in cases {
        for _ in 0..WARM_UP {
            std::hint::black_box(policy.evaluate(&tool, &input));
        }
        let mut samples = Vec::with_capacity(ITERATIONS);
        for _ in 0..ITERATIONS {
            let started = Instant::now();
            std::hint::black_box(policy.evaluate(&tool, &input));
            samples.push(started.elapsed());
        }
        common::row(label, &mut samples);
    }
}
