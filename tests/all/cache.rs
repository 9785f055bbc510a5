//! The on-disk compile cache through the real binary: lazy loading (a tool not called is not
//! loaded), checksummed artifacts (a corrupt one is recompiled, never run), and
//! `janua cache {info,clear,prewarm}`.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{Fixture, janua_bin};

fn janua(fixture: &Fixture, cache: &Path, args: &[&str]) -> Output {
    std::process::Command::new(janua_bin())
        .arg("--cwd")
        .arg(fixture.workspace())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache)
        .arg("--no-user-settings")
        .args(args)
        .output()
        .expect("run janua")
}

fn json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

/// The compiled artifacts in the cache, by file name.
fn artifacts(cache: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for engine in std::fs::read_dir(cache).into_iter().flatten().flatten() {
        for entry in std::fs::read_dir(engine.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry.path().extension().is_some_and(|ext| ext == "cwasm") {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

/// `janua call Read` of `notes.txt`, which must succeed with the file's words.
fn read_notes(fixture: &Fixture, cache: &Path) -> Output {
    let read = janua(
        fixture,
        cache,
        &["call", "Read", "--input", r#"{"file_path":"notes.txt"}"#],
    );
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    assert!(String::from_utf8_lossy(&read.stdout).contains("cached words"));
    read
}

#[test]
fn a_tool_is_loaded_when_called_and_a_corrupt_artifact_is_recompiled() {
    let fixture = Fixture::new();
    fixture.write("notes.txt", "cached words\n");
    let cache = fixture.root().join("cache");

    // With a cold cache, listing and deciding compile nothing: the built-ins' descriptions ship
    // in the binary.
    let listed = janua(&fixture, &cache, &["tools"]);
    assert!(listed.status.success());
    assert!(String::from_utf8_lossy(&listed.stdout).contains("Read"));
    let mut hook = std::process::Command::new(janua_bin())
        .arg("--cwd")
        .arg(fixture.workspace())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(&cache)
        .args(["hook", "claude"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut hook.stdin.take().unwrap(),
        br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf ~"}}"#,
    )
    .unwrap();
    let decided = hook.wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&decided.stdout).contains("\"ask\""),
        "{decided:?}"
    );
    assert_eq!(
        artifacts(&cache),
        Vec::<PathBuf>::new(),
        "a cold start compiled"
    );

    // Prewarm fills an empty cache with every built-in.
    let prewarm = json(&janua(&fixture, &cache, &["cache", "--json", "prewarm"]));
    let info = json(&janua(&fixture, &cache, &["cache", "--json", "info"]));
    assert!(info["artifacts"].as_u64().unwrap() >= 8, "{info}");
    assert!(prewarm["tools"].as_u64().unwrap() >= 8, "{prewarm}");
    let before = artifacts(&cache);
    json(&janua(&fixture, &cache, &["cache", "--json", "prewarm"]));
    assert_eq!(
        artifacts(&cache),
        before,
        "a warm prewarm only loads what is cached"
    );

    // Without artifacts, listing the tools compiles nothing: the descriptions are enough.
    for artifact in artifacts(&cache) {
        std::fs::remove_file(artifact).unwrap();
    }
    let listed = janua(&fixture, &cache, &["tools"]);
    assert!(listed.status.success());
    assert!(String::from_utf8_lossy(&listed.stdout).contains("Read"));
    assert_eq!(
        artifacts(&cache),
        Vec::<PathBuf>::new(),
        "janua tools compiled a component"
    );

    // The first call compiles only the component it runs.
    read_notes(&fixture, &cache);
    let compiled = artifacts(&cache);
    assert_eq!(compiled.len(), 1, "{compiled:?}");

    // A flipped byte in the native code is caught by the checksum: recompiled, never run.
    let mut bytes = std::fs::read(&compiled[0]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(&compiled[0], &bytes).unwrap();
    let again = read_notes(&fixture, &cache);
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("corrupt"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_ne!(
        std::fs::read(&compiled[0]).unwrap(),
        bytes,
        "the corrupt entry was replaced"
    );
    // A truncated one too.
    std::fs::write(&compiled[0], &bytes[..100]).unwrap();
    read_notes(&fixture, &cache);

    // A plugin's description is cached; one that is not JSON is described again, not trusted.
    let plugin = fixture.plugin("echo", janua_test_guests::PIPELINE_ECHO, "");
    let with_plugin = |fixture: &Fixture| {
        let listed = janua(
            fixture,
            &cache,
            &["--plugins", plugin.to_str().unwrap(), "tools"],
        );
        assert!(
            listed.status.success(),
            "{}",
            String::from_utf8_lossy(&listed.stderr)
        );
        assert!(String::from_utf8_lossy(&listed.stdout).contains("Echo"));
    };
    with_plugin(&fixture);
    let info = json(&janua(&fixture, &cache, &["cache", "--json", "info"]));
    assert_eq!(info["descriptions"], 1, "{info}");
    let mut corrupted = 0;
    for engine in std::fs::read_dir(&cache).unwrap().flatten() {
        for entry in std::fs::read_dir(engine.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry.file_name().to_string_lossy().ends_with(".tools.json") {
                std::fs::write(entry.path(), b"{not json").unwrap();
                corrupted += 1;
            }
        }
    }
    assert_eq!(corrupted, 1);
    with_plugin(&fixture);

    // Clear removes every entry.
    let cleared = json(&janua(&fixture, &cache, &["cache", "--json", "clear"]));
    assert!(cleared["removed"].as_u64().unwrap() >= 2, "{cleared}");
    let empty = json(&janua(&fixture, &cache, &["cache", "--json", "info"]));
    assert_eq!(empty["artifacts"], 0, "{empty}");
    assert_eq!(empty["descriptions"], 0, "{empty}");
}

#[test]
fn cache_commands_without_a_cache_are_usage_errors() {
    let fixture = Fixture::new();
    let output = std::process::Command::new(janua_bin())
        .arg("--cwd")
        .arg(fixture.workspace())
        .args(["--no-cache", "cache", "info"])
        .output()
        .expect("run janua");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no compile cache"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
