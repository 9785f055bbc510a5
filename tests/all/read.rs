//! The built-in Read tool's behaviour.

use janua::ErrorKind;
use serde_json::json;

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
        ErrorKind::InvalidInput,
    );
    assert!(text.contains("/file_path"), "{text}");
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

// --- Images, binary files, notebooks, large files, read records ---

/// A valid 2x1 RGB PNG (red, blue), 70 bytes.
const PNG_2X1: [u8; 70] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x7b, 0x40, 0xe8,
    0xdd, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0x00, 0x04,
    0xff, 0x01, 0x07, 0x00, 0x01, 0xff, 0xe2, 0x23, 0x9e, 0x59, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Asserts `dispatch` failed in the tool with `kind` and returns the text.
fn read_tool_error(dispatch: &janua::Dispatch, kind: &str) -> String {
    let text = error_text(dispatch, ErrorKind::ToolFailed);
    let failure = dispatch.outcome.error.as_ref().expect("an error outcome");
    assert_eq!(failure.tool_error_kind.as_deref(), Some(kind), "{text}");
    text
}

/// The image blocks of a result: (media type, decoded bytes).
fn image_blocks(dispatch: &janua::Dispatch) -> Vec<(String, Vec<u8>)> {
    use base64::Engine as _;
    let janua::ResultContent::Blocks(blocks) = &dispatch.block.content else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|block| match block {
            janua::ContentBlock::Image { source } => {
                assert_eq!(source.kind, "base64");
                let data = base64::engine::general_purpose::STANDARD
                    .decode(&source.data)
                    .expect("image data is base64");
                Some((source.media_type.clone(), data))
            }
            janua::ContentBlock::Text { .. } => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_are_returned_as_image_blocks_by_magic_bytes() {
    let fixture = Fixture::new();
    fixture.write("pixel.png", PNG_2X1);
    // Detection is by content: a PNG with a misleading name is still an image, and a text file
    // named .png is still text.
    fixture.write("pixel.dat", PNG_2X1);
    fixture.write("notes.png", "not an image\n");
    let runtime = fixture.runtime(&[], |_| {}).await;

    for name in ["pixel.png", "pixel.dat"] {
        let result = call(&runtime, "Read", json!({"file_path": name})).await;
        let text = ok_text(&result);
        let path = fixture.workspace().join(name).display().to_string();
        assert_eq!(
            text,
            format!("Image {path}: image/png, 70 bytes, 2x1 pixels"),
            "{name}"
        );
        assert_eq!(
            image_blocks(&result),
            vec![("image/png".to_owned(), PNG_2X1.to_vec())],
            "{name}"
        );
        assert_eq!(
            result.outcome.structured,
            Some(json!({
                "type": "image",
                "file": {
                    "filePath": path,
                    "type": "image/png",
                    "originalSize": 70,
                    "dimensions": {"width": 2, "height": 1},
                }
            })),
            "{name}"
        );
    }

    let text = call(&runtime, "Read", json!({"file_path": "notes.png"})).await;
    assert!(image_blocks(&text).is_empty());
    assert_eq!(ok_text(&text), "     1\tnot an image\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_over_5_mib_are_refused_with_size_and_cap() {
    let fixture = Fixture::new();
    let mut big = PNG_2X1.to_vec();
    big.resize((5 << 20) + 1, 0);
    fixture.write("big.png", &big);
    let runtime = fixture.runtime(&[], |_| {}).await;
    let result = call(&runtime, "Read", json!({"file_path": "big.png"})).await;
    let text = read_tool_error(&result, "image_too_large");
    assert!(text.contains("5242881 bytes"), "{text}");
    assert!(text.contains("5242880-byte (5 MiB) limit"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_files_are_refused_naming_size_and_type() {
    let fixture = Fixture::new();
    let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
    elf.resize(4096, 0);
    fixture.write("prog", &elf);
    fixture.write("data.bin", b"plain start\0then NUL");
    fixture.write("doc.pdf", b"%PDF-1.7\n%no NUL in the first bytes\n");
    fixture.write("report.docx", b"PK\x03\x04\x14\x00\x06\x00");
    let runtime = fixture.runtime(&[], |_| {}).await;
    let cases = [
        ("prog", "ELF executable", 4096),
        ("data.bin", "unknown binary data (contains NUL bytes)", 20),
        ("doc.pdf", "PDF document", 36),
        ("report.docx", "ZIP archive", 8),
    ];
    for (name, kind, size) in cases {
        let result = call(&runtime, "Read", json!({"file_path": name})).await;
        let text = read_tool_error(&result, "binary_file");
        assert!(text.contains(kind), "{name}: {text}");
        assert!(text.contains(&format!("{size} bytes")), "{name}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notebooks_are_rendered_cell_by_cell_with_ids() {
    let fixture = Fixture::new();
    let notebook = json!({
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Some text"]},
            {"cell_type": "code", "execution_count": 1, "id": "calc", "metadata": {},
             "outputs": [
                {"output_type": "stream", "name": "stdout", "text": ["3\n"]},
                {"output_type": "display_data", "metadata": {},
                 "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure size 640x480>"]}},
                {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                 "traceback": ["..."]}
             ],
             "source": ["x = 1 + 2\n", "print(x)"]},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    });
    fixture.write("nb.ipynb", serde_json::to_string_pretty(&notebook).unwrap());
    // nbformat 4.4: no ids, so cells are named by index.
    fixture.write(
        "old.ipynb",
        r#"{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": "a = 1", "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}"#,
    );
    fixture.write("broken.ipynb", "{\"cells\": [");
    let runtime = fixture.runtime(&[], |_| {}).await;

    let result = call(&runtime, "Read", json!({"file_path": "nb.ipynb"})).await;
    assert_eq!(
        ok_text(&result),
        "<cell id=\"intro\" type=\"markdown\" index=\"0\">\n# Title\nSome text\n</cell>\n\
         <cell id=\"calc\" type=\"code\" index=\"1\">\nx = 1 + 2\nprint(x)\nOutputs:\n3\n\
         <Figure size 640x480>\n[image/png output omitted]\nZeroDivisionError: division by zero\n\
         </cell>\n"
    );
    let path = fixture.workspace().join("nb.ipynb").display().to_string();
    assert_eq!(
        result.outcome.structured,
        Some(json!({"type": "notebook", "file": {"filePath": path, "cells": 2}}))
    );

    let old = ok_text(&call(&runtime, "Read", json!({"file_path": "old.ipynb"})).await);
    assert_eq!(
        old,
        "<cell id=\"cell-0\" type=\"code\" index=\"0\">\na = 1\n</cell>\n"
    );

    let broken = call(&runtime, "Read", json!({"file_path": "broken.ipynb"})).await;
    let text = read_tool_error(&broken, "invalid_notebook");
    assert!(text.contains("EOF while parsing"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_deep_into_a_100000_line_file() {
    let fixture = Fixture::new();
    let lines: String = (1..=100_000).map(|n| format!("row {n}\n")).collect();
    fixture.write("big.txt", lines);
    let runtime = fixture.runtime(&[], |_| {}).await;
    let result = call(
        &runtime,
        "Read",
        json!({"file_path": "big.txt", "offset": 50_000, "limit": 3}),
    )
    .await;
    assert_eq!(
        ok_text(&result),
        " 50000\trow 50000\n 50001\trow 50001\n 50002\trow 50002\n\
         <notice>Showed lines 50000-50002 of 100000. Continue with offset 50003.</notice>"
    );
    let structured = result.outcome.structured.unwrap();
    assert_eq!(structured["file"]["totalLines"], 100_000);
    assert_eq!(structured["file"]["startLine"], 50_000);
}
