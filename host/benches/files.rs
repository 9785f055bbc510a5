//! File-tool benchmarks: Edit's whole path (read-before-edit, checkpoint, atomic replace), Glob
//! and Grep over a tree, and what hiding Read-denied paths in the WASI layer costs.
//!
//! `cargo bench -p janua --bench files` prints Markdown rows for `BENCHMARKS.md`.

#[allow(dead_code, reason = "each benchmark uses a different part")]
mod common;

use std::path::Path;
use std::time::Instant;

use common::{bench, dispatch, row};
use janua::{PermissionMode, Runtime, RuntimeConfig};
use serde_json::json;

/// Files in the benchmark tree, and lines per file.
const TREE_FILES: usize = 2000;
const LINES_PER_FILE: usize = 100;

fn main() {
    common::block_on(run());
}

async fn run() {
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    build_tree(&workspace);
    let config = |deny: bool| {
        let mut config = RuntimeConfig::new(&workspace);
        config.state_dir = Some(root.path().join("state"));
        config.cache_dir = Some(root.path().join("cache"));
        config.permission_mode = Some(PermissionMode::AcceptEdits);
        if deny {
            config.disallowed_tools = vec!["Read(.env) Read(secrets/**)".to_owned()];
        }
        config
    };
    let plain = Runtime::new(config(false)).await.expect("runtime");
    let hiding = Runtime::new(config(true)).await.expect("runtime");

    println!("| what one iteration does | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");

    // Edit: alternate between two strings so every call changes the file.
    dispatch(&plain, "Read", &json!({"file_path": "edit-me.txt"})).await;
    let mut samples = Vec::new();
    for round in 0..300 {
        let (old, new) = if round % 2 == 0 {
            ("alpha", "omega")
        } else {
            ("omega", "alpha")
        };
        let input = json!({"file_path": "edit-me.txt", "old_string": old, "new_string": new});
        let started = Instant::now();
        let result = dispatch(&plain, "Edit", &input).await;
        samples.push(started.elapsed());
        assert!(result.outcome.error.is_none(), "{:?}", result.block);
    }
    row(
        "full pipeline, `Edit` of a 100-line file (validate reads + digest, checkpoint, atomic replace, mode restore)",
        &mut samples,
    );
    let checkpoints = plain.session().checkpoints();
    println!(
        "\nCheckpoint store after 300 edits: {} checkpoints kept, {} bytes on disk.\n",
        checkpoints.list().expect("list").len(),
        checkpoints.storage_bytes()
    );
    println!("| what one iteration does | p50 | p99 | mean | per second |");
    println!("|---|---|---|---|---|");

    let tree = format!("{TREE_FILES} files × {LINES_PER_FILE} lines");
    for (label, runtime) in [
        ("no deny rules", &plain),
        ("2 Read deny rules (hidden paths)", &hiding),
    ] {
        bench(
            runtime,
            &format!("`Grep` files_with_matches, {tree}, {label}"),
            "Grep",
            &json!({"pattern": "needle_[0-9]+"}),
            20,
        )
        .await;
        bench(
            runtime,
            &format!("`Grep` content -n, {tree}, {label}"),
            "Grep",
            &json!({"pattern": "needle_1[0-9]", "output_mode": "content", "-n": true}),
            20,
        )
        .await;
        bench(
            runtime,
            &format!("`Glob` `**/*.rs`, {tree}, {label}"),
            "Glob",
            &json!({"pattern": "**/*.rs"}),
            20,
        )
        .await;
    }
}

/// A tree of source files in 40 directories, a `.env` and a `secrets/` directory.
fn build_tree(workspace: &Path) {
    for n in 0..TREE_FILES {
        let dir = workspace.join(format!("src/module_{}", n % 40));
        std::fs::create_dir_all(&dir).expect("tree dir");
        let text: String = (0..LINES_PER_FILE)
            .map(|line| {
                if line == 50 {
                    format!("let needle_{n} = {line};\n")
                } else {
                    format!("fn item_{line}() -> usize {{ {line} }}\n")
                }
            })
            .collect();
        std::fs::write(dir.join(format!("file_{n}.rs")), text).expect("tree file");
    }
    std::fs::write(workspace.join(".env"), "TOKEN=needle_0\n").expect("env");
    std::fs::create_dir_all(workspace.join("secrets")).expect("secrets");
    std::fs::write(workspace.join("secrets/key.rs"), "needle_1\n").expect("secret");
    let text: String = (0..LINES_PER_FILE)
        .map(|line| {
            if line == 10 {
                "alpha\n".to_owned()
            } else {
                format!("line {line}\n")
            }
        })
        .collect();
    std::fs::write(workspace.join("edit-me.txt"), text).expect("edit file");
}
