//! The default `Read` tool: text files with `cat -n` line numbers, read only through the fs grant.
//!
//! Memory stays bounded whatever the file: lines are streamed, each kept line is capped at
//! `MAX_LINE_CHARS` characters, and only the requested window is held.

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use warden_sdk::{CapabilityClass, Context, Output, Tool, ToolError};

/// Lines returned when the call gives no `limit`.
const DEFAULT_LIMIT: u64 = 2000;
/// Characters kept of one line; the rest is replaced by a marker.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes sniffed for NUL to tell binary files from text.
const SNIFF_BYTES: usize = 8192;

/// Input of `Read`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    /// Path of the file to read: absolute, or relative to the workspace.
    file_path: String,
    /// Line number to start reading from (1 is the first line). Only give it for files too large to
    /// read at once.
    #[schemars(range(min = 0))]
    offset: Option<u64>,
    /// Number of lines to read (default 2000).
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

struct Read;

impl Tool for Read {
    type Input = ReadInput;
    const NAME: &'static str = "Read";
    const DESCRIPTION: &'static str = "Reads a text file from the workspace. Returns up to 2000 lines \
        by default, in `cat -n` format with line numbers starting at 1; use `offset` and `limit` to \
        page through longer files. Lines longer than 2000 characters are cut with a marker. \
        Directories and binary files cannot be read.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;
    const CONCURRENCY_SAFE: bool = true;
    const RULE_FIELD: Option<&'static str> = Some("file_path");

    fn validate(input: &ReadInput, _ctx: &Context) -> Result<(), String> {
        if input.file_path.trim().is_empty() {
            return Err("file_path is empty; give the path of a file to read".to_owned());
        }
        Ok(())
    }

    fn call(input: ReadInput, ctx: &Context) -> Result<Output, ToolError> {
        let path = ctx.resolve_path(&input.file_path);
        let file = open(&path)?;
        let start = input.offset.unwrap_or(1).max(1);
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
        let page = read_page(file, &path, start, limit)?;
        Ok(page.into_output(&path))
    }
}

warden_sdk::export!(Read);

fn open(path: &str) -> Result<File, ToolError> {
    // Look before opening: opening a FIFO or a device could block or have side effects.
    let metadata = std::fs::metadata(path).map_err(|error| io_error(path, &error))?;
    if metadata.is_dir() {
        return Err(ToolError::new(
            "is_directory",
            format!("{path} is a directory, not a file; list it with a directory tool instead"),
        ));
    }
    if !metadata.is_file() {
        return Err(ToolError::new(
            "not_a_regular_file",
            format!(
                "{path} is not a regular file (a FIFO, socket or device); Read reads files only"
            ),
        ));
    }
    File::open(path).map_err(|error| io_error(path, &error))
}

fn io_error(path: &str, error: &std::io::Error) -> ToolError {
    match error.kind() {
        ErrorKind::NotFound => ToolError::new(
            "not_found",
            format!("{path} does not exist or is outside the directories this tool may read"),
        ),
        ErrorKind::PermissionDenied => ToolError::new(
            "access_denied",
            format!("{path} is outside the directories this tool may read"),
        ),
        _ => ToolError::new("io_error", format!("cannot read {path}: {error}")),
    }
}

/// The window of lines a call returns, plus what the model needs to page on.
struct Page {
    text: String,
    start: u64,
    returned: u64,
    total_lines: u64,
    cut_lines: u64,
}

fn read_page(file: File, path: &str, start: u64, limit: u64) -> Result<Page, ToolError> {
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    if looks_binary(&mut reader).map_err(|error| io_error(path, &error))? {
        return Err(ToolError::new(
            "binary_file",
            format!("{path} looks like a binary file; Read returns text files only"),
        ));
    }
    let mut page = Page {
        text: String::new(),
        start,
        returned: 0,
        total_lines: 0,
        cut_lines: 0,
    };
    let end = start.saturating_add(limit);
    let mut line = Vec::new();
    loop {
        line.clear();
        let number = page.total_lines + 1;
        let keep = number >= start && number < end;
        let cap = if keep { MAX_LINE_CHARS * 4 + 4 } else { 0 };
        let Some(length) = read_line_capped(&mut reader, &mut line, cap)
            .map_err(|error| io_error(path, &error))?
        else {
            break;
        };
        page.total_lines = number;
        if keep {
            page.push_line(number, &line, length);
        }
    }
    Ok(page)
}

impl Page {
    fn push_line(&mut self, number: u64, bytes: &[u8], byte_length: usize) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let mut chars = text.char_indices();
        let cut_at = chars.nth(MAX_LINE_CHARS).map(|(index, _)| index);
        self.text.push_str(&format!("{number:>6}\t"));
        match cut_at {
            Some(index) => {
                self.text.push_str(&text[..index]);
                self.text.push_str(&format!(
                    "… [line cut: showed the first {MAX_LINE_CHARS} characters of a \
                     {byte_length}-byte line]"
                ));
                self.cut_lines += 1;
            }
            None if byte_length > bytes.len() => {
                self.text.push_str(text);
                self.text.push_str(&format!(
                    "… [line cut: showed {} of {byte_length} bytes]",
                    bytes.len()
                ));
                self.cut_lines += 1;
            }
            None => self.text.push_str(text),
        }
        self.text.push('\n');
        self.returned += 1;
    }

    fn into_output(self, path: &str) -> Output {
        let structured = json!({
            "type": "text",
            "file": {
                "filePath": path,
                "content": self.text,
                "numLines": self.returned,
                "startLine": self.start,
                "totalLines": self.total_lines,
                "cutLines": self.cut_lines,
            }
        });
        let text = if self.total_lines == 0 {
            format!("<notice>{path} exists but is empty (0 lines).</notice>")
        } else if self.returned == 0 {
            format!(
                "<notice>{path} has {} lines; offset {} is past the end. Use an offset between 1 \
                 and {}.</notice>",
                self.total_lines, self.start, self.total_lines
            )
        } else {
            let last = self.start + self.returned - 1;
            let mut text = self.text;
            if last < self.total_lines {
                text.push_str(&format!(
                    "<notice>Showed lines {}-{last} of {}. Continue with offset {}.</notice>",
                    self.start,
                    self.total_lines,
                    last + 1
                ));
            }
            text
        };
        Output::text(text).with_structured(structured)
    }
}

/// True when the first bytes contain NUL, the same test `git` and `grep` use.
fn looks_binary(reader: &mut BufReader<File>) -> std::io::Result<bool> {
    let buffer = reader.fill_buf()?;
    let sniff = &buffer[..buffer.len().min(SNIFF_BYTES)];
    Ok(sniff.contains(&0))
}

/// Reads one line, keeping at most `cap` bytes of it in `line`; returns the line's full byte length,
/// or `None` at end of file. Skipped bytes are never buffered, so a huge line costs no memory.
fn read_line_capped(
    reader: &mut BufReader<File>,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<usize>> {
    let mut length = 0usize;
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if buffer.is_empty() {
            return Ok((length > 0).then_some(length));
        }
        let (chunk, done) = match buffer.iter().position(|&byte| byte == b'\n') {
            Some(index) => (&buffer[..=index], true),
            None => (buffer, false),
        };
        let room = cap.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let consumed = chunk.len();
        length += consumed;
        reader.consume(consumed);
        if done {
            return Ok(Some(length));
        }
    }
}
