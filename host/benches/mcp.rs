//! `janua mcp serve` benchmarks, measured the way Wassette was (peers.md §13): 2,000 sequential
//! `tools/call`s of a trivial echo component (a 100-byte string) from a minimal JSON-lines client,
//! with the server's CPU time (every thread, from `/proc/<pid>/stat`) divided by the calls, and
//! start-up until `tools/list` is answered with a warm component cache (median of 20 starts).
//!
//! `cargo bench -p janua --bench mcp` prints Markdown rows for `BENCHMARKS.md`.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use common::{format_duration, row};
use serde_json::{Value, json};

const CALLS: usize = 2000;
const STARTS: usize = 20;

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Server {
    fn start(root: &Path, workspace: &Path, plugin: &Path) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_janua"));
        let mut child = common::isolated(
            &mut command,
            workspace,
            &root.join("state"),
            &root.join("cache"),
        )
        .arg("--plugins")
        .arg(plugin)
        .args(["--allowedTools", "Echo", "mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start janua mcp serve");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Self {
            child,
            stdin,
            stdout,
            line: String::new(),
        }
    }

    /// Sends `message` and reads lines until the response with `id`.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").expect("write");
        self.stdin.flush().expect("flush");
        loop {
            self.line.clear();
            assert!(
                self.stdout.read_line(&mut self.line).expect("read") > 0,
                "the server ended"
            );
            let value: Value = serde_json::from_str(&self.line).expect("JSON");
            if value["id"] == id {
                return value;
            }
        }
    }

    fn initialize(&mut self) {
        self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}),
        );
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .expect("write");
    }

    /// CPU time of the server process.
    fn cpu(&self) -> Duration {
        process_cpu(&self.child.id().to_string())
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// CPU time of process `pid` (or `self`): the nanosecond run times of its threads
/// (`/proc/<pid>/task/*/schedstat`), as `/proc/<pid>/stat` counts only in 10 ms ticks. Threads
/// that already exited are not counted, so the measured runs keep their threads alive.
fn process_cpu(pid: &str) -> Duration {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("read the threads");
    let nanos: u64 = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(nanos)
}

/// The floor in the same run: the same calls through `Runtime::dispatch` in this process.
fn library_floor(root: &Path, workspace: &Path, plugin: &Path) -> (Vec<Duration>, Duration) {
    let mut samples = Vec::with_capacity(CALLS);
    let mut cpu = Duration::ZERO;
    common::block_on(async {
        let mut config = janua::RuntimeConfig::new(workspace);
        config.state_dir = Some(root.join("state"));
        config.cache_dir = Some(root.join("cache"));
        config.plugin_dirs = vec![plugin.to_path_buf()];
        config.allowed_tools = vec!["Echo".to_owned()];
        let runtime = janua::Runtime::new(config).await.expect("runtime");
        let input = json!({"text": "x".repeat(100)});
        for _ in 0..50 {
            common::dispatch(&runtime, "Echo", &input).await;
        }
        let before = process_cpu("self");
        for _ in 0..CALLS {
            let started = Instant::now();
            let result = common::dispatch(&runtime, "Echo", &input).await;
            samples.push(started.elapsed());
            assert!(result.outcome.error.is_none(), "{:?}", result.block);
        }
        cpu = process_cpu("self") - before;
    });
    (samples, cpu)
}

fn main() {
    let (root, workspace) = common::temp_workspace();
    let plugin = root.path().join("echo");
    std::fs::create_dir_all(&plugin).expect("plugin dir");
    std::fs::copy(janua_test_guests::PIPELINE_ECHO, plugin.join("tool.wasm")).expect("guest");
    std::fs::write(
        plugin.join("janua.toml"),
        "[plugin]\nname = \"echo\"\n\n[[tool]]\ncomponent = \"tool.wasm\"\n",
    )
    .expect("manifest");

    println!("| measure | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");
    let (mut floor, floor_cpu) = library_floor(root.path(), &workspace, &plugin);
    row("floor: `Runtime::dispatch` Echo in-process", &mut floor);
    let mut server = Server::start(root.path(), &workspace, &plugin);
    server.initialize();
    let text = "x".repeat(100);
    let call = |server: &mut Server, id: u64| {
        let answer = server.request(
            id,
            "tools/call",
            json!({"name": "Echo", "arguments": {"text": text}}),
        );
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    };
    for id in 1..=50 {
        call(&mut server, id);
    }
    let cpu_before = server.cpu();
    let mut samples = Vec::with_capacity(CALLS);
    let began = Instant::now();
    for id in 0..CALLS as u64 {
        let started = Instant::now();
        call(&mut server, 1000 + id);
        samples.push(started.elapsed());
    }
    let wall = began.elapsed();
    let cpu = server.cpu() - cpu_before;
    row(
        "`tools/call` Echo round trip (minimal client)",
        &mut samples,
    );
    let mut pings = Vec::with_capacity(CALLS);
    let cpu_before_ping = server.cpu();
    for id in 0..CALLS as u64 {
        let started = Instant::now();
        server.request(10_000 + id, "ping", json!({}));
        pings.push(started.elapsed());
    }
    let ping_cpu = server.cpu() - cpu_before_ping;
    row("`ping` round trip", &mut pings);
    let mut lists = Vec::with_capacity(200);
    for id in 0..200 {
        let started = Instant::now();
        server.request(20_000 + id, "tools/list", json!({}));
        lists.push(started.elapsed());
    }
    row(
        "`tools/list` round trip (served from the registry)",
        &mut lists,
    );
    server.stop();
    println!();
    println!(
        "server CPU per `tools/call`: {} ({} calls in {}); per `ping`: {}; the floor's CPU per dispatch (this process, every thread): {}",
        format_duration(cpu / CALLS as u32),
        CALLS,
        format_duration(wall),
        format_duration(ping_cpu / CALLS as u32),
        format_duration(floor_cpu / CALLS as u32),
    );

    // Start-up with a warm cache: the runs above compiled and cached the component.
    let mut starts = Vec::with_capacity(STARTS);
    for _ in 0..STARTS {
        let started = Instant::now();
        let mut server = Server::start(root.path(), &workspace, &plugin);
        server.initialize();
        let listed = server.request(1, "tools/list", json!({}));
        starts.push(started.elapsed());
        assert!(
            listed["result"]["tools"]
                .as_array()
                .is_some_and(|tools| !tools.is_empty())
        );
        server.stop();
    }
    starts.sort();
    println!(
        "start-up until tools are listed (warm cache, {STARTS} starts): median {}, min {}, max {}",
        format_duration(starts[STARTS / 2]),
        format_duration(starts[0]),
        format_duration(starts[STARTS - 1]),
    );
}
