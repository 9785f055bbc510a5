//! Issue 33, point 6: no growth with session length. One `janua run` session is driven the way an
//! agent loop drives it, one call at a time (write a `tool_use`, read until its `result`), and
//! after 1,000, 10,000 and 100,000 `Read`s of a small file the bench prints the process's RSS and
//! the mean time per call over the calls since the previous mark, and the session directory's
//! size (log, checkpoints, audit chain). Targets: RSS and time per call at 100,000 within 10% of
//! their value at 1,000.
//!
//! `cargo bench -p janua --bench session_length` (about a minute); `JANUA_BENCH_CALLS` changes the
//! last mark.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const JANUA: &str = env!("CARGO_BIN_EXE_janua");

fn main() {
    let last: usize = std::env::var("JANUA_BENCH_CALLS")
        .ok()
        .and_then(|calls| calls.parse().ok())
        .unwrap_or(100_000);
    let (root, workspace) = common::temp_workspace();
    std::fs::write(workspace.join("small.txt"), "hello\n".repeat(20)).expect("file");
    let state = root.path().join("state");
    let cache = root.path().join("cache");
    // A warm compile cache, as a user's second session has: RSS then holds no compiler state.
    let mut prewarm = Command::new(JANUA);
    assert!(
        common::isolated(&mut prewarm, &workspace, &state, &cache)
            .args(["cache", "prewarm"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("prewarm")
            .success()
    );
    let (mut child, mut stdin, mut stdout) = common::start_run(
        Command::new(JANUA),
        &workspace,
        &state,
        &cache,
        &["--session", "long"],
    );
    let mut line = String::new();
    let mut call = |number: usize| {
        writeln!(
            stdin,
            r#"{{"type":"tool_use","id":"t{number}","name":"Read","input":{{"file_path":"small.txt"}}}}"#
        )
        .expect("write");
        stdin.flush().expect("flush");
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).expect("read") > 0,
                "janua run ended early"
            );
            if line.starts_with(r#"{"batch""#) {
                assert!(line.contains(r#""errors":0"#), "call {number}: {line}");
                return;
            }
        }
    };
    // Warm-up: the first call loads the Read component.
    for number in 0..100 {
        call(number);
    }
    println!(
        "| `janua run`, one `Read` at a time | calls so far | RSS | µs per call since the last mark | session directory |"
    );
    println!("|---|---|---|---|---|");
    let mut marks = Vec::new();
    let mut done = 0;
    let mut since = Instant::now();
    for mark in [1_000, 10_000, last] {
        for number in done..mark {
            call(100 + number);
        }
        let per_call = since.elapsed().as_secs_f64() * 1e6 / (mark - done) as f64;
        let rss = rss_kib(child.id());
        let session = directory_bytes(&state);
        println!(
            "| after {mark} calls | {mark} | {:.1} MiB | {per_call:.1} | {:.1} KiB |",
            rss as f64 / 1024.0,
            session as f64 / 1024.0
        );
        marks.push((rss, per_call));
        done = mark;
        since = Instant::now();
    }
    let (first, later) = (marks[0], marks[marks.len() - 1]);
    println!(
        "\nAt {last} calls over 1,000: RSS **{:.3}×**, time per call **{:.3}×** (targets ≤ 1.10×).",
        later.0 as f64 / first.0 as f64,
        later.1 / first.1
    );
    // The end of the input ends the session.
    drop(stdin);
    let _ = child.wait();
    drop(root);
}

/// The resident set of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("status")
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Bytes of every file under `dir`.
fn directory_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(metadata) if metadata.is_dir() => directory_bytes(&entry.path()),
            Ok(metadata) => metadata.len(),
            Err(_) => 0,
        })
        .sum()
}
