//! Issue 10's whole-process targets, each beside its floor in the same run:
//!
//! 4. cold start with a warm compile cache: `janua tools` ≤ 10 ms and a first `janua call Read`
//!    ≤ 15 ms of wall time (median of 20), beside `/bin/true` and `janua --version`;
//! 6. memory: the idle `janua run` with the default tools ≤ 20 MB RSS, and the peak while a batch
//!    of 1,000 calls is in flight;
//! 3. throughput: a `janua run` batch of 10,000 concurrency-safe `Read`s against the bare floor
//!    (`janua_sandbox::Floor`, fresh instance per call) on two threads, and `janua run` pinned to one
//!    core against two (`taskset`);
//!
//! issue 33's point 5: `Bash` `true` through `janua run`, one call at a time, confined and
//! not, beside `bash -c true` spawned bare; and issue 34's `janua hook claude`, exec to exit
//! (≤ 5 ms p50), beside the same floors (`JANUA_BENCH_ONLY=hook` runs only that table).
//!
//! `cargo bench -p janua --bench whole_process` prints Markdown rows for `BENCHMARKS.md`.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const JANUA: &str = env!("CARGO_BIN_EXE_janua");

fn main() {
    if std::env::var("JANUA_BENCH_ONLY").as_deref() == Ok("hook") {
        hook_rows();
        return;
    }
    let (root, workspace) = common::temp_workspace();
    let plugin = common::echo_plugin(root.path());
    std::fs::write(workspace.join("small.txt"), "hello\n".repeat(20)).expect("file");
    let state = root.path().join("state");
    let cache = root.path().join("cache");
    let janua = |args: &[&str]| {
        let mut command = Command::new(JANUA);
        common::isolated(&mut command, &workspace, &state, &cache)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    };
    assert!(
        janua(&["cache", "prewarm"])
            .status()
            .expect("prewarm")
            .success()
    );

    println!("| whole process, warm compile cache, median of 20 | p50 | min | max | target |");
    println!("|---|---|---|---|---|");
    let starts = [
        (
            "`/bin/true` (process start floor)",
            Command::new("/bin/true"),
            "",
        ),
        (
            "`janua --version` (binary start floor)",
            {
                let mut command = Command::new(JANUA);
                command.arg("--version").stdout(Stdio::null());
                command
            },
            "",
        ),
        ("`janua tools`", janua(&["tools"]), "≤ 10 ms"),
        (
            "`janua call Read` (first call: loads Read's component)",
            janua(&["call", "Read", "--input", r#"{"file_path":"small.txt"}"#]),
            "≤ 15 ms",
        ),
    ];
    for (label, mut command, target) in starts {
        let mut samples: Vec<Duration> = (0..20)
            .map(|_| {
                let started = Instant::now();
                let status = command.status().expect("run");
                assert!(status.success(), "{label}");
                started.elapsed()
            })
            .collect();
        samples.sort();
        println!(
            "| {label} | {} | {} | {} | {target} |",
            common::format_duration(samples[samples.len() / 2]),
            common::format_duration(samples[0]),
            common::format_duration(samples[samples.len() - 1]),
        );
    }

    println!();
    let mut session = Session::start(None, None, &workspace, &state, &cache);
    session.batch(&reads(1, "warm"));
    std::thread::sleep(Duration::from_millis(300));
    let idle = session.status("VmRSS");
    let idle_anon = session.status("RssAnon");
    let idle_file = session.status("RssFile");
    // The epoch ticker (every 10 ms) is what an idle session still runs: its CPU over 2 s.
    let cpu_before = session.cpu_ticks();
    std::thread::sleep(Duration::from_secs(2));
    let idle_cpu = session.cpu_ticks() - cpu_before;
    let started = Instant::now();
    session.batch(&reads(1000, "inflight"));
    let thousand = started.elapsed();
    let peak = session.status("VmHWM");
    println!(
        "Memory (target 6): idle `janua run` with the default tools after one call: **{:.1} MiB** RSS (target ≤ 20 MB), of which {:.1} MiB anonymous (heap, stacks, pool slots) and {:.1} MiB clean pages of the binary file; peak while a batch of 1,000 `Read`s was in flight (at most the batch concurrency run at once, the rest queued): **{:.1} MiB** (the batch took {}).\n",
        idle as f64 / 1024.0,
        idle_anon as f64 / 1024.0,
        idle_file as f64 / 1024.0,
        peak as f64 / 1024.0,
        common::format_duration(thousand)
    );
    println!(
        "Idle CPU of `janua run` over 2 s (the epoch ticker's cost): **{} clock ticks** ({} ms; `/proc/<pid>/stat` utime + stime).\n",
        idle_cpu,
        idle_cpu * 10
    );
    drop(session);

    // Target 3: throughput.
    const CALLS: usize = 10_000;
    let floor = Arc::new(
        janua_sandbox::Floor::new(
            &std::fs::read(janua_test_guests::PIPELINE_ECHO).expect("guest"),
            false,
        )
        .expect("floor"),
    );
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            let floor = Arc::clone(&floor);
            scope.spawn(move || {
                for _ in 0..CALLS / 2 {
                    floor.call("Picky", r#"{"word":"hi"}"#).expect("floor call");
                }
            });
        }
    });
    let floor_rate = CALLS as f64 / started.elapsed().as_secs_f64();
    let mut rates = Vec::new();
    let mut read_rates = Vec::new();
    let mut inside_rates = Vec::new();
    for cores in ["0", "0,1"] {
        let mut session = Session::start(Some(cores), Some(&plugin), &workspace, &state, &cache);
        session.batch(&pickies(20, "warm"));
        let started = Instant::now();
        let inside_ms = session.batch(&pickies(CALLS, "many"));
        inside_rates.push(CALLS as f64 / (inside_ms.max(1) as f64 / 1000.0));
        rates.push(CALLS as f64 / started.elapsed().as_secs_f64());
        let started = Instant::now();
        session.batch(&reads(CALLS / 5, "reads"));
        read_rates.push((CALLS / 5) as f64 / started.elapsed().as_secs_f64());
    }
    println!("| throughput, {CALLS} calls | calls/s | of the floor |");
    println!("|---|---|---|");
    println!(
        "| floor: bare fresh instance + `call` of `Picky` (concurrency-safe, no files), 2 threads | {floor_rate:.0} | 100% |"
    );
    for (label, rate) in ["one core (`taskset -c 0`)", "two cores"]
        .iter()
        .zip(&rates)
    {
        println!(
            "| `janua run`, one batch of {CALLS} `Picky` calls, {label} | {rate:.0} | {:.0}% |",
            100.0 * rate / floor_rate
        );
    }
    // The client's window also holds writing the 10,000-block line and parsing the ~6 MB result
    // line; the batch's own `duration_ms` is the time janua spent dispatching it.
    for (label, rate) in ["one core", "two cores"].iter().zip(&inside_rates) {
        println!(
            "| the same batches by their own `duration_ms` (dispatch only), {label} | {rate:.0} | {:.0}% |",
            100.0 * rate / floor_rate
        );
    }
    for (label, rate) in ["one core", "two cores"].iter().zip(&read_rates) {
        println!(
            "| `janua run`, one batch of {} `Read`s of a small file, {label} | {rate:.0} | {:.0}% |",
            CALLS / 5,
            100.0 * rate / floor_rate
        );
    }
    println!(
        "\nTwo cores over one: **{:.2}×** (target ≥ 1.6×); two cores over the floor: **{:.0}%** (target ≥ 60%).",
        rates[1] / rates[0],
        100.0 * rates[1] / floor_rate
    );
    bash_rows(&workspace, &state, &cache);
    hook_rows();
}

/// Issue 34, point 1: `janua hook claude` answering one Claude Code event, from exec to exit,
/// in a project whose `.claude/settings.json` holds rules, beside the process floors.
fn hook_rows() {
    const RUNS: usize = 200;
    let root = tempfile::tempdir().expect("temp dir");
    let project = root.path().join("project");
    std::fs::create_dir_all(project.join(".claude")).expect("project");
    std::fs::write(
        project.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Bash(git status *)","Bash(npm test)"],"deny":["Read(./.env)","Bash(curl *)"]},"model":"opus"}"#,
    )
    .expect("settings");
    let home = root.path().join("home");
    let state = root.path().join("state");
    let cache = root.path().join("cache");
    std::fs::create_dir_all(&home).expect("home");
    let event = |tool: &str, input: Value| {
        json!({
            "session_id": "bench", "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": input, "tool_use_id": "toolu_bench", "permission_mode": "default",
            "cwd": project,
        })
        .to_string()
    };
    let janua_with = |cache: &Path, args: &[&str]| {
        let mut command = Command::new(JANUA);
        command
            .env_clear()
            .env("HOME", &home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .args(["--state-dir", &state.to_string_lossy()])
            .args(["--cache-dir", &cache.to_string_lossy()])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        command
    };
    // Nothing fills the cache first: the hook compiles nothing, so the first call after install
    // meets the target too (the cold row starts each run from an empty cache directory).
    let cold_cache = root.path().join("cold-cache");
    println!(
        "
| `janua hook claude`, exec to exit, {RUNS} runs | p50 | p90 | min | answer | target |"
    );
    println!("|---|---|---|---|---|---|");
    let janua = |args: &[&str]| janua_with(&cache, args);
    let cold = janua_with(&cold_cache, &["hook", "claude"]);
    let rows: Vec<(&str, Command, Option<String>)> = vec![
        (
            "`/bin/true` (process start floor)",
            Command::new("/bin/true"),
            None,
        ),
        (
            "`janua --version` (binary start floor)",
            {
                let mut command = Command::new(JANUA);
                command.arg("--version").stdout(Stdio::null());
                command
            },
            None,
        ),
        (
            "`Bash` `git status && touch x` (not covered: ask)",
            janua(&["hook", "claude"]),
            Some(event("Bash", json!({"command": "git status && touch x"}))),
        ),
        (
            "`Bash` `git status && touch x`, empty cache directory each run (the first call after install)",
            cold,
            Some(event("Bash", json!({"command": "git status && touch x"}))),
        ),
        (
            "`Read` `.env` (a project deny rule: deny)",
            janua(&["hook", "claude"]),
            Some(event("Read", json!({"file_path": project.join(".env")}))),
        ),
        (
            "`Bash` `npm test` (a project allow rule: no answer)",
            janua(&["hook", "claude"]),
            Some(event("Bash", json!({"command": "npm test"}))),
        ),
        (
            "`TodoWrite` (a tool janua does not have, no rule: no answer)",
            janua(&["hook", "claude"]),
            Some(event("TodoWrite", json!({"todos": []}))),
        ),
    ];
    for (label, mut command, input) in rows {
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut answer = String::new();
        let mut samples: Vec<Duration> = (0..RUNS + 10)
            .map(|_| {
                let _ = std::fs::remove_dir_all(&cold_cache);
                let started = Instant::now();
                let mut child = command.spawn().expect("spawn");
                if let Some(input) = &input {
                    let mut stdin = child.stdin.take().expect("stdin");
                    stdin.write_all(input.as_bytes()).expect("event");
                }
                let output = child.wait_with_output().expect("wait");
                let elapsed = started.elapsed();
                assert!(output.status.success(), "{label}: {:?}", output.status);
                answer = serde_json::from_slice::<Value>(&output.stdout).map_or_else(
                    |_| "none".to_owned(),
                    |value| {
                        value["hookSpecificOutput"]["permissionDecision"]
                            .as_str()
                            .unwrap_or("?")
                            .to_owned()
                    },
                );
                elapsed
            })
            .skip(10)
            .collect();
        samples.sort();
        println!(
            "| {label} | {} | {} | {} | {} | {} |",
            common::format_duration(samples[samples.len() / 2]),
            common::format_duration(samples[samples.len() * 9 / 10]),
            common::format_duration(samples[0]),
            if input.is_some() { answer.as_str() } else { "" },
            if input.is_some() { "≤ 5 ms p50" } else { "" },
        );
    }
}

/// Issue 33, point 5: `Bash` `true` through `janua run`, one call at a time as an agent sends
/// them, against the same command spawned bare in the same run; CPU is the `janua` process's
/// and its reaped children's (the commands themselves).
fn bash_rows(workspace: &Path, state: &Path, cache: &Path) {
    const CALLS: usize = 300;
    println!(
        "\n| `Bash` `true`, {CALLS} calls one at a time | CPU per call | p50 | p99 | mean | per second |"
    );
    println!("|---|---|---|---|---|---|");
    let mut samples = Vec::new();
    for _ in 0..CALLS {
        let started = Instant::now();
        let output = Command::new("/bin/bash")
            .args(["-c", "true"])
            .output()
            .expect("bash runs");
        samples.push(started.elapsed());
        assert!(output.status.success());
    }
    common::row(
        "floor: `bash -c true` spawned bare by `std::process` (fork + exec, pipes) | –",
        &mut samples,
    );
    for (label, extra) in [
        ("confined", &[][..]),
        ("`--unsandboxed-process`", &["--unsandboxed-process"][..]),
    ] {
        let mut args = vec!["--permission-mode", "bypassPermissions"];
        args.extend(extra);
        let (child, stdin, stdout) =
            common::start_run(Command::new(JANUA), workspace, state, cache, &args);
        let mut session = Session {
            child,
            stdin,
            stdout,
        };
        let bash = |n: usize| {
            [
                json!({"type": "tool_use", "id": format!("b{n}"), "name": "Bash", "input": {"command": "true"}}),
            ]
        };
        for n in 0..20 {
            session.batch(&bash(n));
        }
        let ticks = session.cpu_ticks_with_children();
        let mut samples = Vec::new();
        for n in 0..CALLS {
            let started = Instant::now();
            session.batch(&bash(n));
            samples.push(started.elapsed());
        }
        let cpu_ms = (session.cpu_ticks_with_children() - ticks) as f64 * 10.0 / CALLS as f64;
        common::row(
            &format!("`janua run`, `Bash` `true`, {label} | {cpu_ms:.2} ms"),
            &mut samples,
        );
    }
}

fn pickies(count: usize, prefix: &str) -> Vec<Value> {
    (0..count)
        .map(|n| json!({"type": "tool_use", "id": format!("{prefix}{n}"), "name": "Picky", "input": {"word": "hi"}}))
        .collect()
}

fn reads(count: usize, prefix: &str) -> Vec<Value> {
    (0..count)
        .map(|n| json!({"type": "tool_use", "id": format!("{prefix}{n}"), "name": "Read", "input": {"file_path": "small.txt"}}))
        .collect()
}

/// A `janua run` child, optionally pinned to `cores` with `taskset`, optionally with the test
/// plugin (`Echo`, `Picky`).
struct Session {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Session {
    fn start(
        cores: Option<&str>,
        plugin: Option<&Path>,
        workspace: &Path,
        state: &Path,
        cache: &Path,
    ) -> Self {
        let mut command = match cores {
            Some(cores) => {
                let mut command = Command::new("taskset");
                command.args(["-c", cores, JANUA]);
                command
            }
            None => Command::new(JANUA),
        };
        if let Some(plugin) = plugin {
            command.arg("--plugins").arg(plugin);
        }
        let (child, stdin, stdout) = common::start_run(command, workspace, state, cache, &[]);
        Self {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends `blocks` as one assistant message and waits for its `result` line.
    /// Sends one batch and waits for its `result` line; returns the batch's own `duration_ms`.
    fn batch(&mut self, blocks: &[Value]) -> u64 {
        let message =
            json!({"type": "assistant", "message": {"role": "assistant", "content": blocks}});
        writeln!(self.stdin, "{message}").expect("write");
        self.stdin.flush().expect("flush");
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.stdout.read_line(&mut line).expect("read") > 0,
                "janua run ended early"
            );
            let value: Value = serde_json::from_str(&line).expect("JSON");
            if value["type"] == "result" {
                assert_eq!(value["errors"], 0, "{value}");
                return value["duration_ms"].as_u64().expect("duration_ms");
            }
        }
    }

    /// User plus system CPU of the child so far, in clock ticks (100 per second on Linux).
    fn cpu_ticks(&self) -> u64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
        let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |at: usize| {
            fields
                .get(at)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        field(11) + field(12)
    }

    /// [`Session::cpu_ticks`] plus the CPU of the children it reaped (the commands it ran).
    fn cpu_ticks_with_children(&self) -> u64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        // cutime and cstime follow utime and stime.
        let children: u64 = rest
            .split_whitespace()
            .skip(13)
            .take(2)
            .filter_map(|field| field.parse::<u64>().ok())
            .sum();
        self.cpu_ticks() + children
    }

    /// A `/proc/<pid>/status` field of `janua` (not of `taskset`, which execs it), in KiB.
    fn status(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{field}:")))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
