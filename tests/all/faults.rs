//! Faults: the host killed with SIGKILL in the middle of a `Write` (and of the checkpoint it takes
//! first) and of a component-cache write. The next start must find the workspace consistent (the
//! old file or the new one, never a mix), the checkpoint store readable and complete, and the
//! cache usable. Kill points are spread over the measured length of each operation.

use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Fixture, cache_dir, janua_bin};

/// Kill points per operation.
const KILLS: u32 = 10;
/// Kill points through a cache prewarm (each costs a cold compile of the default tools).
const CACHE_KILLS: u32 = 5;
/// Size of each file version written.
const CONTENT_BYTES: usize = 8 << 20;

fn command(fixture: &Fixture, cache: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(janua_bin());
    command
        .arg("--cwd")
        .arg(fixture.workspace())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache)
        .arg("--no-user-settings")
        .args(args);
    command
}

fn run(fixture: &Fixture, cache: &Path, args: &[&str]) -> Output {
    let output = command(fixture, cache, args).output().expect("run janua");
    assert!(
        output.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Starts `janua call Write` replacing `big.txt` with `content`, its input on stdin.
fn start_write(fixture: &Fixture, content: &str) -> Child {
    let mut child = command(
        fixture,
        &cache_dir(),
        &["call", "Write", "--allowedTools", "Write", "--input", "-"],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("start janua call Write");
    let input = json!({"file_path": "big.txt", "content": content}).to_string();
    let mut stdin = child.stdin.take().expect("stdin");
    // The child may die before reading all of it; a broken pipe is part of the fault.
    let _ = stdin.write_all(input.as_bytes());
    child
}

fn version(n: u32) -> String {
    let mut text = format!("version {n}\n");
    text.push_str(
        &char::from(b'a' + u8::try_from(n % 26).unwrap())
            .to_string()
            .repeat(CONTENT_BYTES),
    );
    text
}

/// SIGKILL at ten points through a `Write` of 8 MB: each time the file is exactly the old or the
/// new version, the checkpoint list still loads, and rewinding to the first checkpoint restores
/// the very first version byte for byte or, when the last kill hid janua's own change, refuses
/// and names a kept copy that is that first version.
#[test]
fn a_host_killed_during_write_leaves_old_or_new_and_a_readable_checkpoint_store() {
    let fixture = Fixture::new();
    let original = version(0);
    let path = fixture.write("big.txt", &original);
    let read = [
        "call",
        "Read",
        "--input",
        r#"{"file_path":"big.txt","limit":1}"#,
    ];
    run(&fixture, &cache_dir(), &read);

    // How long one whole Write takes here, to spread the kill points over it.
    let started = Instant::now();
    let status = start_write(&fixture, &version(1)).wait().unwrap();
    let whole = started.elapsed();
    assert!(status.success());
    let mut current = version(1);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), current);

    let mut outcomes = (0, 0);
    for kill in 0..KILLS {
        run(&fixture, &cache_dir(), &read);
        let next = version(kill + 2);
        let mut child = start_write(&fixture, &next);
        std::thread::sleep(whole * kill / KILLS);
        let _ = child.kill();
        let _ = child.wait();
        let now = std::fs::read_to_string(&path).expect("big.txt is still there");
        if now == next {
            outcomes.1 += 1;
            current = next;
        } else {
            assert!(now == current, "kill {kill}: big.txt is neither version");
            outcomes.0 += 1;
        }
        let list = run(&fixture, &cache_dir(), &["rewind", "--list", "--json"]);
        serde_json::from_slice::<Value>(&list.stdout).expect("the checkpoint list loads");
    }
    eprintln!(
        "faults: {KILLS} kills over a {whole:?} Write: {} old, {} new",
        outcomes.0, outcomes.1
    );
    // Only the temporary file of an interrupted Write may be left, under its own hidden name.
    for entry in std::fs::read_dir(fixture.workspace()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == "big.txt" || (name.starts_with(".big.txt.janua-") && name.ends_with(".tmp")),
            "unexpected {name}"
        );
    }
    // A kill between the rename and the session's record of it leaves a file janua cannot prove
    // it wrote; rewind then refuses to overwrite it and names the kept copy instead.
    let rewind = command(&fixture, &cache_dir(), &["rewind", "--to", "1"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&rewind.stdout).into_owned()
        + &String::from_utf8_lossy(&rewind.stderr);
    if std::fs::read_to_string(&path).unwrap() != original {
        let kept = said
            .split("is kept in ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("rewind neither restored nor kept the file: {said}"));
        assert!(
            std::fs::read_to_string(kept).unwrap() == original,
            "the kept copy is not the first version: {said}"
        );
    }
}

/// SIGKILL at five points through `janua cache prewarm` into an empty cache: every next start
/// finds a usable cache (no half-written artifact is trusted) and a call succeeds.
#[test]
fn a_host_killed_during_a_cache_write_leaves_a_usable_cache() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "cached\n");
    let measure = fixture.root().join("measure-cache");
    let started = Instant::now();
    run(&fixture, &measure, &["cache", "prewarm"]);
    let whole = started.elapsed().max(Duration::from_millis(50));
    for kill in 0..CACHE_KILLS {
        let cache = fixture.root().join(format!("cache-{kill}"));
        let mut child = command(&fixture, &cache, &["cache", "prewarm"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prewarm");
        std::thread::sleep(whole * kill / CACHE_KILLS);
        let _ = child.kill();
        let _ = child.wait();
        let output = run(
            &fixture,
            &cache,
            &["call", "Read", "--input", r#"{"file_path":"a.txt"}"#],
        );
        let block: Value = serde_json::from_slice(&output.stdout).expect("a tool_result");
        assert_eq!(block["is_error"], false, "kill {kill}: {block}");
        assert!(block["content"].to_string().contains("cached"), "{block}");
        run(&fixture, &cache, &["cache", "info"]);
    }
}
