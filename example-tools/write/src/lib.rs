//! The default `Write` tool: creates a file or replaces one the model has read, atomically.
//!
//! An existing file may only be replaced when the session read it and it has not changed since
//! (the SDK's read-before-edit record), so the model never overwrites content it has not seen.
//! Every check runs in `validate` too, before the user is asked to approve the write, and again in
//! `call`, because the file may change while the user decides.

// Natively only the unit tests use the crate; the Tool impl is reached through the wasm export.
#![cfg_attr(not(target_family = "wasm"), allow(dead_code))]

use std::io::{ErrorKind, Read as _};

use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError, files};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Input of `Write`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteInput {
    /// Path of the file to write: absolute, or relative to the workspace. Missing parent
    /// directories are created.
    file_path: String,
    /// The complete content of the file, written exactly as given.
    content: String,
}

struct Write;

impl Tool for Write {
    type Input = WriteInput;
    const NAME: &'static str = "Write";
    const DESCRIPTION: &'static str = "Writes a file in the workspace, creating it or replacing \
        its whole content. An existing file must have been read with Read in this session, and not \
        changed since, before it can be overwritten. Prefer Edit to change part of an existing \
        file. Missing parent directories are created; the content is written exactly as given.";
    const CLASS: CapabilityClass = CapabilityClass::Write;
    const READ_ONLY: bool = false;
    const CONCURRENCY_SAFE: bool = false;
    const RULE_FIELD: Option<&'static str> = Some("file_path");

    fn call(input: WriteInput, ctx: &Context) -> Result<Output, ToolError> {
        let (path, existed) = check(&input, ctx)?;
        if !existed {
            create_parents(&path)?;
        }
        let bytes = input.content.as_bytes();
        files::write_atomically(&path, bytes)
            .map_err(|error| files::io_error(&path, "write", &error))?;
        // The model wrote this content, so it has "seen" it: a following Edit needs no re-read.
        files::record_read(&path, &files::digest(bytes));
        Ok(output(&path, &input.content, existed))
    }
}

impl janua_sdk::Validate for Write {
    fn validate(input: &WriteInput, ctx: &Context) -> Result<(), String> {
        check(input, ctx).map(drop).map_err(|error| error.message)
    }
}

// Natively (unit tests) the rlib is enough; the component exports only link for wasm.
#[cfg(target_family = "wasm")]
janua_sdk::export!(Write);

/// Every check that can fail before anything is written; returns the resolved path and whether a
/// file is there now.
fn check(input: &WriteInput, ctx: &Context) -> Result<(String, bool), ToolError> {
    if input.file_path.trim().is_empty() {
        return Err(ToolError::new(
            "empty_path",
            "file_path is empty; give the path of the file to write",
        ));
    }
    let path = ctx.resolve_path(&input.file_path);
    let current = inspect(&path)?;
    if let Some(digest) = &current {
        files::check_fresh(&path, digest)?;
    }
    Ok((path, current.is_some()))
}

/// The digest of the regular file at `path`, or `None` when nothing is there. Links, directories
/// and special files are refused.
fn inspect(path: &str) -> Result<Option<String>, ToolError> {
    if files::editable(path, "Write")?.is_none() {
        return Ok(None);
    }
    content_digest(path)
        .map(Some)
        .map_err(|error| files::io_error(path, "read", &error))
}

/// Streams the file through the digest: the old content is about to be discarded, so it is never
/// held in memory whole, however large.
fn content_digest(path: &str) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut digest = files::ContentDigest::new();
    let mut buffer = vec![0; 64 * 1024];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => return Ok(digest.finish()),
            Ok(read) => digest.update(&buffer[..read]),
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
}

fn create_parents(path: &str) -> Result<(), ToolError> {
    match path.rsplit_once('/') {
        Some((parent, _)) if !parent.is_empty() => std::fs::create_dir_all(parent)
            .map_err(|error| files::io_error(parent, "create the directory", &error)),
        _ => Ok(()),
    }
}

fn output(path: &str, content: &str, existed: bool) -> Output {
    let lines = count_lines(content);
    let bytes = content.len();
    let verb = if existed { "Overwrote" } else { "Created" };
    let text = format!(
        "{verb} {path} ({lines} {}, {bytes} {})",
        plural(lines, "line"),
        plural(bytes, "byte")
    );
    Output::text(text).with_structured(json!({
        "type": if existed { "update" } else { "create" },
        "filePath": path,
        "bytes": bytes,
        "lines": lines,
    }))
}

/// Lines as Read numbers them: a last line without a newline still counts.
fn count_lines(text: &str) -> usize {
    let newlines = text.bytes().filter(|&byte| byte == b'\n').count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        noun.to_owned()
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_like_read() {
        for (text, expected) in [
            ("", 0),
            ("\n", 1),
            ("a", 1),
            ("a\n", 1),
            ("a\nb", 2),
            ("a\nb\n", 2),
            ("a\r\nb\r\n", 2),
            ("\n\n\n", 3),
        ] {
            assert_eq!(count_lines(text), expected, "{text:?}");
        }
    }

    #[test]
    fn summaries_count_lines_and_bytes() {
        for (content, existed, expected) in [
            ("a\nb\n", false, "Created /ws/f (2 lines, 4 bytes)"),
            ("x", true, "Overwrote /ws/f (1 line, 1 byte)"),
            ("", false, "Created /ws/f (0 lines, 0 bytes)"),
        ] {
            let out = output("/ws/f", content, existed);
            assert_eq!(
                out.content,
                vec![janua_sdk::Content::Text(expected.to_owned())]
            );
        }
        let out = output("/ws/f", "é\n", true);
        assert_eq!(
            out.structured,
            Some(json!({"type": "update", "filePath": "/ws/f", "bytes": 3, "lines": 1}))
        );
    }
}
