//! The built-in Read tool's behaviour.

use serde_json::json;
use warden::ErrorKind;

use crate::support::{Fixture, call, error_text, ok_text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numbers_lines_and_pages_with_offset_and_limit() {
    let fixture = Fixture::new();
    let lines: String = (1..=10).map(|n| format!("line {n}\r\n")).collect();
    fixture.write("ten.txt", lines);
    let runtime = fixture.runtime(&[], |_| {}).await;
    let text = ok_text(
        &call(
            &runtime,
            "Read",
            json!({"file_path": "ten.txt", "offset": 3, "limit": 2}),
        )
        .await,
    );
    assert_eq!(
        text,
        "     3\tline 3\n     4\tline 4\n<notice>Showed lines 3-4 of 10. Continue with offset 5.</notice>"
    );
    let whole = ok_text(
        &call(
            &runtime,
            "Read",
            json!({"file_path": fixture.workspace().join("ten.txt")}),
        )
        .await,
    );
    assert!(
        whole.starts_with("     1\tline 1\n") && whole.ends_with("    10\tline 10\n"),
        "{whole}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_to_2000_lines_and_cuts_long_lines() {
    let fixture = Fixture::new();
    let mut text: String = (1..=2500).map(|n| format!("{n}\n")).collect();
    text.insert_str(0, &format!("{}\n", "y".repeat(5000)));
    fixture.write("long.txt", text);
    let runtime = fixture.runtime(&[], |_| {}).await;
    let result = call(&runtime, "Read", json!({"file_path": "long.txt"})).await;
    let structured = result.outcome.structured.clone().unwrap();
    assert_eq!(structured["file"]["numLines"], 2000);
    assert_eq!(structured["file"]["totalLines"], 2501);
    assert_eq!(structured["file"]["cutLines"], 1);
    let content = structured["file"]["content"].as_str().unwrap();
    let first = content.lines().next().unwrap();
    assert!(
        first.contains("[line cut: showed the first 2000 characters of a 5001-byte line]"),
        "{first}"
    );
    let kept = first.split('…').next().unwrap();
    assert_eq!(kept.matches('y').count(), 2000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_files_and_offsets_past_the_end_get_notices() {
    let fixture = Fixture::new();
    fixture.write("empty.txt", "");
    fixture.write("two.txt", "a\nb\n");
    let runtime = fixture.runtime(&[], |_| {}).await;
    let empty = ok_text(&call(&runtime, "Read", json!({"file_path": "empty.txt"})).await);
    assert!(empty.contains("exists but is empty"), "{empty}");
    let past = ok_text(
        &call(
            &runtime,
            "Read",
            json!({"file_path": "two.txt", "offset": 9}),
        )
        .await,
    );
    assert!(
        past.contains("has 2 lines; offset 9 is past the end"),
        "{past}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directories_binaries_and_missing_files_are_clear_errors() {
    let fixture = Fixture::new();
    std::fs::create_dir(fixture.workspace().join("dir")).unwrap();
    fixture.write("blob.bin", [0x7f, b'E', b'L', b'F', 0, 0, 1, 2]);
    let runtime = fixture.runtime(&[], |_| {}).await;
    let cases = [
        ("dir", "is_directory"),
        ("blob.bin", "binary_file"),
        ("missing.txt", "not_found"),
    ];
    for (path, kind) in cases {
        let result = call(&runtime, "Read", json!({"file_path": path})).await;
        let text = error_text(&result, ErrorKind::ToolFailed);
        assert_eq!(
            result
                .outcome
                .error
                .as_ref()
                .unwrap()
                .tool_error_kind
                .as_deref(),
            Some(kind),
            "{path}: {text}"
        );
    }
    let text = error_text(
        &call(&runtime, "Read", json!({"file_path": "  "})).await,
        ErrorKind::ValidationFailed,
    );
    assert!(text.contains("file_path is empty"), "{text}");
    error_text(
        &call(&runtime, "Read", json!({"file_path": "a", "limit": 0})).await,
        ErrorKind::InvalidInput,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_the_sessions_externalized_results_but_not_other_state() {
    let fixture = Fixture::new();
    let runtime = fixture.runtime(&[], |_| {}).await;
    let results = runtime.session().results_dir();
    std::fs::write(results.join("toolu_old.txt"), "full output\n").unwrap();
    let result = call(
        &runtime,
        "Read",
        json!({"file_path": results.join("toolu_old.txt")}),
    )
    .await;
    assert!(ok_text(&result).contains("full output"));
    let state = runtime.session().dir().join("session.json");
    let result = call(&runtime, "Read", json!({"file_path": state})).await;
    error_text(&result, ErrorKind::PermissionDenied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_is_refused_without_blocking() {
    let fixture = Fixture::new();
    let fifo = fixture.workspace().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(status.success());
    let runtime = fixture.runtime(&[], |_| {}).await;
    let result = call(&runtime, "Read", json!({"file_path": "pipe"})).await;
    error_text(&result, ErrorKind::ToolFailed);
    assert_eq!(
        result.outcome.error.unwrap().tool_error_kind.as_deref(),
        Some("not_a_regular_file")
    );
}
