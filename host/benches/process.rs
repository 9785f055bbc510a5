//! Process benchmarks: a Bash command end to end (pipeline, confinement set-up, fork and exec under
//! Landlock in a fresh network namespace, spooled output, group kill), against the same command
//! spawned bare from Rust for scale.
//!
//! `cargo bench -p janua --bench process` prints Markdown rows for `BENCHMARKS.md`.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::time::Instant;

use common::{bench, row};
use janua::sandbox::ProcessSandbox;
use janua::{PermissionMode, Runtime, RuntimeConfig};
use serde_json::json;

fn main() {
    common::block_on(run());
}

async fn run() {
    let (root, workspace) = common::temp_workspace();
    let config = |sandbox: ProcessSandbox| {
        let mut config = RuntimeConfig::new(&workspace);
        config.state_dir = Some(root.path().join("state"));
        config.cache_dir = Some(root.path().join("cache"));
        config.permission_mode = Some(PermissionMode::BypassPermissions);
        config.process_sandbox = sandbox;
        config
    };
    let sandboxed = Runtime::new(config(ProcessSandbox::Required))
        .await
        .expect("runtime");
    let unsandboxed = Runtime::new(config(ProcessSandbox::Unsandboxed))
        .await
        .expect("runtime");

    println!("| what one iteration does | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");
    // Target 5: `true` through the process sandbox at most 1 ms over a plain fork + exec.
    bash_true_rows(&sandboxed, &unsandboxed, "").await;
    bare_row(
        "echo hi",
        "`bash -c 'echo hi'` spawned bare by `std::process` (scale)",
    );
    for (label, runtime) in [
        ("confined (Landlock, network namespace)", &sandboxed),
        ("`--unsandboxed-process`", &unsandboxed),
    ] {
        bench(
            runtime,
            &format!("full pipeline, `Bash` `echo hi`, {label}"),
            "Bash",
            &json!({"command": "echo hi"}),
            200,
        )
        .await;
    }
    bench(
        &sandboxed,
        "full pipeline, `Bash` `seq 1 200000` (1.3 MB spooled, preview returned)",
        "Bash",
        &json!({"command": "seq 1 200000"}),
        50,
    )
    .await;
    // A name denied at any depth (`Read(.env)`) is found by walking the workspace before each
    // command (issue 31): the cost of that walk in a workspace of 5,000 files in 100
    // directories, one of which holds a `.env` the view masks.
    let (deny_root, deny_workspace) = common::temp_workspace();
    for directory in 0..100 {
        let directory = deny_workspace.join(format!("dir{directory:03}"));
        std::fs::create_dir_all(&directory).expect("directory");
        for file in 0..50 {
            std::fs::write(directory.join(format!("file{file:02}.txt")), "x").expect("file");
        }
    }
    std::fs::write(deny_workspace.join("dir050/.env"), "SECRET=1\n").expect(".env");
    let mut denied = RuntimeConfig::new(&deny_workspace);
    denied.state_dir = Some(deny_root.path().join("state"));
    denied.cache_dir = Some(root.path().join("cache"));
    denied.permission_mode = Some(PermissionMode::BypassPermissions);
    denied.disallowed_tools = vec!["Read(.env)".to_owned()];
    let denied = Runtime::new(denied).await.expect("runtime");
    bench(
        &denied,
        "full pipeline, `Bash` `true`, confined, `Read(.env)` denied in a 5,000-file workspace",
        "Bash",
        &json!({"command": "true"}),
        200,
    )
    .await;
    // Issue 33, point 5: a command costs the same in a host grown large, since no child copies
    // the host's page tables (`clone(CLONE_VM)`, `spawn.rs`).
    let before = resident_mib();
    let ballast = vec![1u8; 500 << 20];
    let grown = format!(
        ", host grown from {before} to {} MiB resident",
        resident_mib()
    );
    bash_true_rows(&sandboxed, &unsandboxed, &grown).await;
    drop(std::hint::black_box(ballast));
}

/// `true` spawned bare, then through the pipeline confined and unconfined; `note` ends each label.
async fn bash_true_rows(sandboxed: &Runtime, unsandboxed: &Runtime, note: &str) {
    bare_row(
        "true",
        &format!("floor: `bash -c true` spawned bare by `std::process` (fork + exec, pipes){note}"),
    );
    for (label, runtime) in [
        ("confined (Landlock, network namespace)", sandboxed),
        (
            "`--unsandboxed-process` (same pipeline, no confinement)",
            unsandboxed,
        ),
    ] {
        bench(
            runtime,
            &format!("full pipeline, `Bash` `true`, {label}{note}"),
            "Bash",
            &json!({"command": "true"}),
            200,
        )
        .await;
    }
}

/// `bash -c script` spawned bare 200 times, as the row `label`.
fn bare_row(script: &str, label: &str) {
    let mut samples = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        let status = std::process::Command::new("/bin/bash")
            .args(["-c", script])
            .output()
            .expect("bash runs");
        samples.push(started.elapsed());
        assert!(status.status.success());
    }
    row(label, &mut samples);
}

/// This process's resident memory in MiB (`VmRSS`).
fn resident_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib / 1024)
}
