//! Dispatch benchmarks: start-up, full-pipeline latency per outcome, throughput and memory.
//!
//! `cargo bench -p warden --bench dispatch` prints Markdown rows for `BENCHMARKS.md`. Plain
//! `Instant` timing over many iterations after a warm-up; each row states what one iteration does.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use warden::{
    CapabilityClass, Policy, Rule, RuleContext, RuleKind, RuleSource, Runtime, RuntimeConfig,
    ToolSpec, ToolUse,
};

const WARM_UP: usize = 200;
const ITERATIONS: usize = 3000;

fn main() {
    common::block_on(run());
}

async fn run() {
    let (root, workspace) = common::temp_workspace();
    let lines: String = (1..=100)
        .map(|n| format!("line {n} of the benchmark file\n"))
        .collect();
    std::fs::write(workspace.join("small.txt"), lines).expect("write file");
    let plugin = root.path().join("echo");
    std::fs::create_dir_all(&plugin).expect("plugin dir");
    std::fs::copy(warden_test_guests::PIPELINE_ECHO, plugin.join("echo.wasm")).expect("copy guest");
    std::fs::write(
        plugin.join("warden.toml"),
        "[plugin]\nname = \"echo\"\n\n[[tool]]\ncomponent = \"echo.wasm\"\n",
    )
    .expect("manifest");

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

    decision_rows(&workspace);

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

/// The central decision alone, with 200 rules loaded across allow, ask and deny.
fn decision_rows(workspace: &Path) {
    let context = RuleContext {
        cwd: std::fs::canonicalize(workspace).expect("workspace"),
        home: Some("/home/bench".into()),
    };
    let mut policy = Policy::new(context.clone());
    for n in 0..200 {
        let (kind, text) = match n % 8 {
            0 => (RuleKind::Allow, format!("Bash(tool{n} *)")),
            1 => (RuleKind::Deny, format!("Bash(danger{n} *)")),
            2 => (RuleKind::Ask, format!("Bash(argv:risky{n} -r -f)")),
            3 => (RuleKind::Allow, format!("Read(src/mod{n}/**)")),
            4 => (RuleKind::Deny, format!("Read(secret{n}/**)")),
            5 => (RuleKind::Allow, format!("Edit(//opt/data{n}/*.json)")),
            6 => (
                RuleKind::Allow,
                format!("WebFetch(domain:*.site{n}.example)"),
            ),
            _ => (RuleKind::Deny, format!("mcp__server{n}__*")),
        };
        let rule = Rule::parse(&text, kind, RuleSource::CommandLine, &context).expect("rule");
        policy.add(rule);
    }
    policy.add(
        Rule::parse(
            "Bash(git status)",
            RuleKind::Allow,
            RuleSource::CommandLine,
            &context,
        )
        .expect("rule"),
    );
    let spec = |name: &str, field: &str, class: CapabilityClass| ToolSpec {
        name: name.to_owned(),
        description: String::new(),
        input_schema: json!({"type": "object", "properties": {field: {"type": "string"}}}),
        class,
        read_only: class == CapabilityClass::Read,
        concurrency_safe: false,
        rule_field: Some(field.to_owned()),
    };
    let cases = [
        (
            "decision only, 200 rules: `Bash` compound command (parse + every subcommand)",
            spec("Bash", "command", CapabilityClass::Process),
            json!({"command": "git status && FOO=1 timeout 5 tool8 --x | grep y"}),
        ),
        (
            "decision only, 200 rules: `Read` path (gitignore globs, symlink resolution)",
            spec("Read", "file_path", CapabilityClass::Read),
            json!({"file_path": "src/mod3/deep/file.rs"}),
        ),
        (
            "decision only, 200 rules: `WebFetch` URL (domain rules)",
            spec("WebFetch", "url", CapabilityClass::Network),
            json!({"url": "https://docs.site6.example/page"}),
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
