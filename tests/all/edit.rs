//! The built-in Write and Edit tools: read-before-edit, exact replacement, preserved encoding and
//! line endings, and refusals that come before the permission prompt.

use std::sync::Arc;

use janua::{Dispatch, ErrorKind, FnHook, PermissionMode, Runtime};

use janua::extensions::HookEvent;
use serde_json::{Value, json};

use crate::support::{Fixture, call, error_text, ok_text};

/// A runtime where write-class tools inside the workspace run without asking.
async fn editing_runtime(fixture: &Fixture) -> Runtime {
    fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::AcceptEdits);
        })
        .await
}

/// The absolute path of `name` in the workspace, as the tools spell it in messages.
fn shown(fixture: &Fixture, name: &str) -> String {
    fixture.workspace().join(name).display().to_string()
}

fn bytes(fixture: &Fixture, name: &str) -> Vec<u8> {
    std::fs::read(fixture.workspace().join(name)).expect("read workspace file")
}

async fn read(runtime: &Runtime, name: &str) {
    ok_text(&call(runtime, "Read", json!({"file_path": name})).await);
}

async fn edit(runtime: &Runtime, name: &str, old: &str, new: &str) -> Dispatch {
    call(
        runtime,
        "Edit",
        json!({"file_path": name, "old_string": old, "new_string": new}),
    )
    .await
}

/// Asserts `dispatch` failed in the tool with `kind` and returns the text.
fn tool_error(dispatch: &Dispatch, kind: &str) -> String {
    let text = error_text(dispatch, ErrorKind::ToolFailed);
    let failure = dispatch.outcome.error.as_ref().expect("an error outcome");
    assert_eq!(failure.tool_error_kind.as_deref(), Some(kind), "{text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ambiguous_old_string_is_refused_until_replace_all() {
    let fixture = Fixture::new();
    let original = "foo\nbar\nfoo\nbaz foo\n";
    fixture.write("a.txt", original);
    let runtime = editing_runtime(&fixture).await;
    read(&runtime, "a.txt").await;

    let refused = edit(&runtime, "a.txt", "foo", "qux").await;
    let text = error_text(&refused, ErrorKind::ValidationFailed);
    let path = shown(&fixture, "a.txt");
    assert!(
        text.contains(&format!(
            "old_string occurs 3 times in {path} (at lines 1, 3, 4); add surrounding lines to \
             old_string so it matches exactly one place, or set replace_all to true"
        )),
        "{text}"
    );
    assert_eq!(bytes(&fixture, "a.txt"), original.as_bytes());

    let replaced = call(
        &runtime,
        "Edit",
        json!({"file_path": "a.txt", "old_string": "foo", "new_string": "qux", "replace_all": true}),
    )
    .await;
    assert_eq!(
        ok_text(&replaced),
        format!(
            "Edited {path}: replaced 3 occurrences\n     1\tqux\n     2\tbar\n     3\tqux\n     \
             4\tbaz qux\n"
        )
    );
    assert_eq!(bytes(&fixture, "a.txt"), b"qux\nbar\nqux\nbaz qux\n");
    assert_eq!(
        replaced.outcome.structured,
        Some(json!({
            "filePath": path,
            "oldString": "foo",
            "newString": "qux",
            "replaceAll": true,
            "replacements": 3,
            "startLine": 1,
        }))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_strings_and_missing_text_are_validation_errors() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "fn main() {\n    let x = 1;\n}\n");
    let runtime = editing_runtime(&fixture).await;
    read(&runtime, "a.txt").await;

    let same = edit(&runtime, "a.txt", "x", "x").await;
    let text = error_text(&same, ErrorKind::ValidationFailed);
    assert!(
        text.contains("old_string and new_string are identical"),
        "{text}"
    );

    // A tab where the file has four spaces: the hint names the line.
    let indented = edit(&runtime, "a.txt", "\tlet x = 1;", "\tlet x = 2;").await;
    let text = error_text(&indented, ErrorKind::ValidationFailed);
    assert!(
        text.contains(&format!(
            "old_string was not found in {}",
            shown(&fixture, "a.txt")
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "it matches at line 2 if leading and trailing whitespace on each line is ignored"
        ),
        "{text}"
    );
    assert_eq!(
        bytes(&fixture, "a.txt"),
        b"fn main() {\n    let x = 1;\n}\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crlf_line_endings_are_kept() {
    let fixture = Fixture::new();
    fixture.write("win.txt", "one\r\ntwo\r\nthree\r\n");
    let runtime = editing_runtime(&fixture).await;
    read(&runtime, "win.txt").await;
    // The model sees lines without `\r` and answers with plain `\n`.
    let result = edit(&runtime, "win.txt", "one\ntwo", "1\n2\n2.5").await;
    assert_eq!(
        ok_text(&result),
        format!(
            "Edited {}: replaced 1 occurrence\n     1\t1\n     2\t2\n     3\t2.5\n     4\tthree\n",
            shown(&fixture, "win.txt")
        )
    );
    assert_eq!(bytes(&fixture, "win.txt"), b"1\r\n2\r\n2.5\r\nthree\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_order_mark_and_a_missing_final_newline_are_kept() {
    let fixture = Fixture::new();
    fixture.write("bom.txt", "\u{feff}first\nsecond\n");
    fixture.write("open.txt", "a\nb");
    let runtime = editing_runtime(&fixture).await;
    read(&runtime, "bom.txt").await;
    read(&runtime, "open.txt").await;

    ok_text(&edit(&runtime, "bom.txt", "first", "premier").await);
    assert_eq!(
        bytes(&fixture, "bom.txt"),
        "\u{feff}premier\nsecond\n".as_bytes()
    );

    let result = edit(&runtime, "open.txt", "b", "c").await;
    assert_eq!(
        ok_text(&result),
        format!(
            "Edited {}: replaced 1 occurrence\n     1\ta\n     2\tc\n",
            shown(&fixture, "open.txt")
        )
    );
    assert_eq!(bytes(&fixture, "open.txt"), b"a\nc");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_needs_a_read_of_the_current_content() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "alpha\n");
    let runtime = editing_runtime(&fixture).await;
    let path = shown(&fixture, "a.txt");

    let unread = edit(&runtime, "a.txt", "alpha", "beta").await;
    let text = error_text(&unread, ErrorKind::ValidationFailed);
    assert!(
        text.contains(&format!(
            "{path} exists but has not been read in this session"
        )),
        "{text}"
    );
    assert_eq!(bytes(&fixture, "a.txt"), b"alpha\n");

    read(&runtime, "a.txt").await;
    fixture.write("a.txt", "alpha, changed by someone else\n");
    let stale = edit(&runtime, "a.txt", "alpha", "beta").await;
    let text = error_text(&stale, ErrorKind::ValidationFailed);
    assert!(
        text.contains(&format!("{path} changed on disk since it was last read")),
        "{text}"
    );
    assert_eq!(
        bytes(&fixture, "a.txt"),
        b"alpha, changed by someone else\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_records_its_result_so_the_next_edit_needs_no_read() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "one\ntwo\nthree\n");
    let runtime = editing_runtime(&fixture).await;
    read(&runtime, "a.txt").await;
    ok_text(&edit(&runtime, "a.txt", "one", "1").await);
    ok_text(&edit(&runtime, "a.txt", "three", "3").await);
    assert_eq!(bytes(&fixture, "a.txt"), b"1\ntwo\n3\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_while_the_call_waits_is_caught_by_the_call() {
    let fixture = Fixture::new();
    let target = fixture.write("a.txt", "alpha\n");
    let mut runtime = editing_runtime(&fixture).await;
    read(&runtime, "a.txt").await;
    // The hook runs after validation and before the call, like a user taking time to approve.
    let hook_target = target.clone();
    runtime
        .add_hook(
            HookEvent::PreToolUse,
            "Edit",
            Arc::new(FnHook::new("meddler", move |_event: &Value| {
                std::fs::write(&hook_target, "alpha, rewritten\n").map_err(|e| e.to_string())?;
                Ok(json!({}))
            })),
        )
        .expect("valid matcher");
    let result = edit(&runtime, "a.txt", "alpha", "beta").await;
    let text = tool_error(&result, "changed_since_read");
    assert!(
        text.contains("changed on disk since it was last read"),
        "{text}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"alpha, rewritten\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_creates_a_missing_file_only_from_an_empty_old_string() {
    let fixture = Fixture::new();
    fixture.write("full.txt", "content\n");
    let runtime = editing_runtime(&fixture).await;

    let missing = edit(&runtime, "new.txt", "something", "else").await;
    let text = error_text(&missing, ErrorKind::ValidationFailed);
    assert!(
        text.contains(&format!("{} does not exist", shown(&fixture, "new.txt"))),
        "{text}"
    );
    assert!(!fixture.workspace().join("new.txt").exists());

    let created = edit(&runtime, "sub/new.txt", "", "hello\n").await;
    assert_eq!(
        ok_text(&created),
        format!(
            "Created {} (1 line, 6 bytes)",
            shown(&fixture, "sub/new.txt")
        )
    );
    assert_eq!(bytes(&fixture, "sub/new.txt"), b"hello\n");

    read(&runtime, "full.txt").await;
    let exists = edit(&runtime, "full.txt", "", "x").await;
    let text = error_text(&exists, ErrorKind::ValidationFailed);
    assert!(text.contains("already exists and is not empty"), "{text}");
    assert!(text.contains("use Write"), "{text}");
    assert_eq!(bytes(&fixture, "full.txt"), b"content\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_creates_parent_directories_and_a_following_edit_needs_no_read() {
    let fixture = Fixture::new();
    let runtime = editing_runtime(&fixture).await;
    let path = shown(&fixture, "deep/er/new.txt");
    let written = call(
        &runtime,
        "Write",
        json!({"file_path": "deep/er/new.txt", "content": "hello\n"}),
    )
    .await;
    assert_eq!(
        ok_text(&written),
        format!("Created {path} (1 line, 6 bytes)")
    );
    assert_eq!(
        written.outcome.structured,
        Some(json!({"type": "create", "filePath": path, "bytes": 6, "lines": 1}))
    );
    assert_eq!(bytes(&fixture, "deep/er/new.txt"), b"hello\n");

    ok_text(&edit(&runtime, "deep/er/new.txt", "hello", "hi").await);
    assert_eq!(bytes(&fixture, "deep/er/new.txt"), b"hi\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_overwrites_only_a_file_that_was_read() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "old\n");
    let runtime = editing_runtime(&fixture).await;
    let path = shown(&fixture, "a.txt");
    let input = json!({"file_path": "a.txt", "content": "new\r\ntext"});

    let unread = call(&runtime, "Write", input.clone()).await;
    let text = error_text(&unread, ErrorKind::ValidationFailed);
    assert!(
        text.contains(&format!(
            "{path} exists but has not been read in this session"
        )),
        "{text}"
    );
    assert_eq!(bytes(&fixture, "a.txt"), b"old\n");

    read(&runtime, "a.txt").await;
    let written = call(&runtime, "Write", input).await;
    assert_eq!(
        ok_text(&written),
        format!("Overwrote {path} (2 lines, 9 bytes)")
    );
    assert_eq!(
        written.outcome.structured.as_ref().unwrap()["type"],
        "update"
    );
    // Written exactly as given: no line-ending or final-newline fix-ups.
    assert_eq!(bytes(&fixture, "a.txt"), b"new\r\ntext");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlinks_and_directories_are_refused() {
    let fixture = Fixture::new();
    fixture.write("real.txt", "real\n");
    let link = fixture.workspace().join("link.txt");
    std::os::unix::fs::symlink("real.txt", &link).unwrap();
    std::fs::create_dir(fixture.workspace().join("dir")).unwrap();
    let runtime = editing_runtime(&fixture).await;
    read(&runtime, "real.txt").await;
    let real = shown(&fixture, "real.txt");
    let shown_link = shown(&fixture, "link.txt");

    let write = call(
        &runtime,
        "Write",
        json!({"file_path": "link.txt", "content": "through the link\n"}),
    )
    .await;
    let text = error_text(&write, ErrorKind::ValidationFailed);
    assert!(
        text.contains(&format!(
            "{shown_link} is a symbolic link to {real}; Write does not change files through \
             links. Use the link's target path instead"
        )),
        "{text}"
    );
    let edited = edit(&runtime, "link.txt", "real", "fake").await;
    let text = error_text(&edited, ErrorKind::ValidationFailed);
    assert!(
        text.contains(&format!("{shown_link} is a symbolic link to {real}")),
        "{text}"
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is still a link"
    );
    assert_eq!(bytes(&fixture, "real.txt"), b"real\n");

    let dir = call(
        &runtime,
        "Write",
        json!({"file_path": "dir", "content": "x"}),
    )
    .await;
    let text = error_text(&dir, ErrorKind::ValidationFailed);
    assert!(
        text.contains(&format!("{} is a directory", shown(&fixture, "dir"))),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_utf8_files_are_not_edited() {
    let fixture = Fixture::new();
    let latin1 = b"caf\xe9\n".to_vec();
    fixture.write("latin1.txt", &latin1);
    let runtime = editing_runtime(&fixture).await;
    read(&runtime, "latin1.txt").await;
    let result = edit(&runtime, "latin1.txt", "caf", "bar").await;
    let text = error_text(&result, ErrorKind::ValidationFailed);
    assert!(
        text.contains(&format!(
            "{} is not UTF-8 text (invalid byte at offset 3)",
            shown(&fixture, "latin1.txt")
        )),
        "{text}"
    );
    assert_eq!(bytes(&fixture, "latin1.txt"), latin1);
}
