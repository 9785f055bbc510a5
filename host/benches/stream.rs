//! `janua run` benchmarks: the round trip of a batch through the stream-json protocol, measured
//! from the agent loop's side (write the line, read until the batch's `result` line), for one
//! Read, and for ten Reads as one parallel batch against ten batches of one.
//!
//! `cargo bench -p janua --bench stream` prints Markdown rows for `BENCHMARKS.md`.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::io::{BufRead, BufReader, Write};
use std::time::Instant;

use common::row;
use serde_json::{Value, json};

fn main() {
    let (root, workspace) = common::temp_workspace();
    for index in 0..10 {
        std::fs::write(
            workspace.join(format!("f{index}.txt")),
            "hello\n".repeat(20),
        )
        .expect("file");
    }
    let (mut child, mut stdin, mut stdout) = common::start_run(
        std::process::Command::new(env!("CARGO_BIN_EXE_janua")),
        &workspace,
        &root.path().join("state"),
        &root.path().join("cache"),
        &[],
    );
    let mut line = String::new();
    let mut read_until_result = |stdout: &mut BufReader<std::process::ChildStdout>| loop {
        line.clear();
        if stdout.read_line(&mut line).expect("read") == 0 {
            panic!("janua run ended early");
        }
        let value: Value = serde_json::from_str(&line).expect("JSON");
        if value["type"] == "result" {
            assert_eq!(value["errors"], 0, "{value}");
            return;
        }
    };
    let send = |stdin: &mut std::process::ChildStdin, value: &Value| {
        writeln!(stdin, "{value}").expect("write");
        stdin.flush().expect("flush");
    };
    let read = |id: &str, file: usize| json!({"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": format!("f{file}.txt")}});
    // Warm up.
    send(&mut stdin, &read("warm", 0));
    read_until_result(&mut stdout);

    println!("| what one iteration does | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");
    let mut samples = Vec::new();
    for index in 0..300 {
        let started = Instant::now();
        send(&mut stdin, &read(&format!("one{index}"), index % 10));
        read_until_result(&mut stdout);
        samples.push(started.elapsed());
    }
    row(
        "`janua run`: a batch of one Read, line in to result line out",
        &mut samples,
    );

    let mut samples = Vec::new();
    for round in 0..50 {
        let blocks: Vec<Value> = (0..10)
            .map(|file| read(&format!("p{round}-{file}"), file))
            .collect();
        let started = Instant::now();
        send(
            &mut stdin,
            &json!({"type": "assistant", "message": {"role": "assistant", "content": blocks}}),
        );
        read_until_result(&mut stdout);
        samples.push(started.elapsed());
    }
    row(
        "`janua run`: one batch of ten Reads (run in parallel)",
        &mut samples,
    );

    let mut samples = Vec::new();
    for round in 0..50 {
        let started = Instant::now();
        for file in 0..10 {
            send(&mut stdin, &read(&format!("s{round}-{file}"), file));
            read_until_result(&mut stdout);
        }
        samples.push(started.elapsed());
    }
    row(
        "`janua run`: ten batches of one Read, one after another",
        &mut samples,
    );

    drop(stdin);
    let status = child.wait().expect("janua exits");
    assert!(status.success());
}
