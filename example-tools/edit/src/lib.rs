//! The default `Edit` tool: exact string replacement in a UTF-8 text file the model has read.
//!
//! The file keeps its encoding details: a UTF-8 byte-order mark is set aside before matching and
//! put back, and in a CRLF file the `\n` line breaks of `old_string` and `new_string` become
//! `\r\n` (Read shows lines without their `\r`, so the model writes plain `\n`). Only the matched
//! text changes, so a missing final newline stays missing.
//!
//! Every check runs in `validate` too, so the user is never asked to approve an edit that cannot
//! apply, and again in `call`, because the file may change while the user decides.

// Natively only the unit tests use the crate; the Tool impl is reached through the wasm export.
#![cfg_attr(not(target_family = "wasm"), allow(dead_code))]

use std::borrow::Cow;

use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError, files};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Lines of unchanged context shown before and after the change.
const CONTEXT_LINES: usize = 4;
/// Lines the result snippet shows at most.
const MAX_SNIPPET_LINES: usize = 40;
/// Characters kept of one snippet line, as in Read.
const MAX_LINE_CHARS: usize = 2000;
/// Line numbers listed for an ambiguous `old_string`, or for a near miss.
const MAX_LISTED_LINES: usize = 5;
/// Files larger than this are refused: the whole file and its new version are held in memory.
const MAX_FILE_BYTES: u64 = 64 << 20;
/// Near-miss hints cost a copy and a line index of the file; above this size they are skipped.
const MAX_HINT_BYTES: usize = 4 << 20;

const BOM: &str = "\u{feff}";

/// Input of `Edit`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditInput {
    /// Path of the file to edit: absolute, or relative to the workspace.
    file_path: String,
    /// The exact text to replace, as the file has it (indentation included, without Read's line
    /// number prefix). It must occur exactly once unless replace_all is true. Empty only to create
    /// a new file (or fill an empty one).
    old_string: String,
    /// The text to put in its place; must differ from old_string.
    new_string: String,
    /// Replace every occurrence of old_string instead of requiring exactly one (default false).
    #[serde(default)]
    replace_all: bool,
}

struct Edit;

impl Tool for Edit {
    type Input = EditInput;
    const NAME: &'static str = "Edit";
    const DESCRIPTION: &'static str = "Replaces exact text in a file. The file must have been \
        read with Read in this session and not changed since. old_string must match the file's \
        text exactly, including whitespace and indentation (copy it from Read's output without \
        the line-number prefix), and must occur exactly once; add surrounding lines to make it \
        unique, or set replace_all to replace every occurrence. Line endings and a byte-order mark \
        are preserved. With an empty old_string and a path that does not exist, creates the file \
        with new_string. Returns the edited lines with their line numbers.";
    const CLASS: CapabilityClass = CapabilityClass::Write;
    const READ_ONLY: bool = false;
    const CONCURRENCY_SAFE: bool = false;
    const RULE_FIELD: Option<&'static str> = Some("file_path");

    fn call(input: EditInput, ctx: &Context) -> Result<Output, ToolError> {
        let path = ctx.resolve_path(&input.file_path);
        match prepare(&input, &path)? {
            Prepared::Create => {
                create_parents(&path)?;
                write(&path, &input.new_string)?;
                Ok(created_output(&path, &input))
            }
            Prepared::Update(plan) => {
                write(&path, &plan.content)?;
                Ok(edited_output(&path, &input, &plan))
            }
        }
    }
}

impl janua_sdk::Validate for Edit {
    fn validate(input: &EditInput, ctx: &Context) -> Result<(), String> {
        let path = ctx.resolve_path(&input.file_path);
        prepare(input, &path)
            .map(drop)
            .map_err(|error| error.message)
    }
}

// Natively (unit tests) the rlib is enough; the component exports only link for wasm.
#[cfg(target_family = "wasm")]
janua_sdk::export!(Edit);

/// What a call will do, once every check passed.
enum Prepared {
    /// Create the missing file with `new_string`.
    Create,
    /// Replace the file's content.
    Update(Plan),
}

/// Runs every check that can fail before anything is written.
fn prepare(input: &EditInput, path: &str) -> Result<Prepared, ToolError> {
    check_strings(input)?;
    let Some(bytes) = inspect(path)? else {
        if input.old_string.is_empty() {
            return Ok(Prepared::Create);
        }
        return Err(ToolError::new(
            "not_found",
            format!(
                "{path} does not exist; check the path (Read or list the directory). To create a \
                 new file, use Write, or Edit with an empty old_string"
            ),
        ));
    };
    let text = std::str::from_utf8(&bytes).map_err(|error| {
        ToolError::new(
            "not_utf8",
            format!(
                "{path} is not UTF-8 text (invalid byte at offset {}); Edit changes UTF-8 text \
                 files only",
                error.valid_up_to()
            ),
        )
    })?;
    files::check_read_before_edit(path, &bytes)?;
    plan(
        path,
        text,
        &input.old_string,
        &input.new_string,
        input.replace_all,
    )
    .map(Prepared::Update)
}

fn check_strings(input: &EditInput) -> Result<(), ToolError> {
    if input.file_path.trim().is_empty() {
        return Err(ToolError::new(
            "empty_path",
            "file_path is empty; give the path of the file to edit",
        ));
    }
    if input.old_string == input.new_string {
        return Err(ToolError::new(
            "no_change",
            "old_string and new_string are identical, so the edit would change nothing; give the \
             text to replace as old_string and its replacement as new_string",
        ));
    }
    Ok(())
}

/// The current bytes of the regular file at `path`, or `None` when nothing is there. Links,
/// directories, special files and very large files are refused.
fn inspect(path: &str) -> Result<Option<Vec<u8>>, ToolError> {
    let Some(metadata) = files::editable(path, "Edit")? else {
        return Ok(None);
    };
    if metadata.len() > MAX_FILE_BYTES {
        return Err(ToolError::new(
            "file_too_large",
            format!(
                "{path} is {} bytes; Edit handles files up to {MAX_FILE_BYTES} bytes",
                metadata.len()
            ),
        ));
    }
    std::fs::read(path)
        .map(Some)
        .map_err(|error| files::io_error(path, "read", &error))
}

fn create_parents(path: &str) -> Result<(), ToolError> {
    match path.rsplit_once('/') {
        Some((parent, _)) if !parent.is_empty() => std::fs::create_dir_all(parent)
            .map_err(|error| files::io_error(parent, "create the directory", &error)),
        _ => Ok(()),
    }
}

fn write(path: &str, content: &str) -> Result<(), ToolError> {
    files::write_atomically(path, content.as_bytes())
        .map_err(|error| files::io_error(path, "write", &error))?;
    // The model chose this content, so it has "seen" it: the next Edit needs no re-read.
    files::record_read(path, &files::digest(content.as_bytes()));
    Ok(())
}

/// An edit ready to write.
#[derive(Debug, PartialEq)]
struct Plan {
    /// The whole new file content, byte-order mark included.
    content: String,
    /// Occurrences replaced.
    replacements: usize,
    /// Line (from 1) where the first replacement starts.
    start_line: usize,
    /// Line where the first replacement's new text ends.
    end_line: usize,
}

impl Plan {
    /// The new content as Read shows it: without the byte-order mark.
    fn text(&self) -> &str {
        split_bom(&self.content).1
    }
}

/// Applies `old` -> `new` to the file content `original`, or says why it cannot apply.
fn plan(
    path: &str,
    original: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Plan, ToolError> {
    let (bom, text) = split_bom(original);
    let bom = if bom { BOM } else { "" };
    if old.is_empty() {
        // Like Claude Code: an empty old_string may fill a blank file, never overwrite content.
        if !text.trim().is_empty() {
            return Err(ToolError::new(
                "file_exists",
                format!(
                    "{path} already exists and is not empty; an empty old_string only creates a \
                     file. Give the text to replace as old_string, or use Write to replace the \
                     whole file"
                ),
            ));
        }
        return Ok(Plan {
            content: format!("{bom}{new}"),
            replacements: 1,
            start_line: 1,
            end_line: last_line_of(1, new),
        });
    }
    let (old, new, offsets) = locate(text, old, new);
    match offsets.len() {
        0 => return Err(not_found_error(path, text, &old)),
        1 => {}
        count if !replace_all => {
            let lines = lines_at(text, &offsets);
            return Err(ToolError::new(
                "old_string_not_unique",
                format!(
                    "old_string occurs {count} times in {path} ({}); add surrounding lines to \
                     old_string so it matches exactly one place, or set replace_all to true to \
                     replace every occurrence",
                    describe_lines(&lines)
                ),
            ));
        }
        _ => {}
    }
    let replaced = if replace_all {
        &offsets[..]
    } else {
        &offsets[..1]
    };
    // Saturating: a hostile replace_all (many matches times a long new_string) must fail as an
    // allocation inside the memory limit, not overflow the size computation.
    let mut content = String::with_capacity(
        replaced
            .len()
            .saturating_mul(new.len())
            .saturating_add(bom.len() + text.len())
            .min(1 << 30),
    );
    content.push_str(bom);
    let mut copied = 0;
    for &at in replaced {
        content.push_str(&text[copied..at]);
        content.push_str(&new);
        copied = at + old.len();
    }
    content.push_str(&text[copied..]);
    let start_line = line_at(text, offsets[0]);
    Ok(Plan {
        content,
        replacements: replaced.len(),
        start_line,
        end_line: last_line_of(start_line, &new),
    })
}

/// The strings to match and insert, in the file's line-ending style, and where `old` occurs.
fn locate<'a>(text: &str, old: &'a str, new: &'a str) -> (Cow<'a, str>, Cow<'a, str>, Vec<usize>) {
    if uses_crlf(text) {
        let (old_crlf, new_crlf) = (to_crlf(old), to_crlf(new));
        let offsets = occurrences(text, &old_crlf);
        // A file can mix styles; a region with plain `\n` still matches the text as given.
        if !offsets.is_empty() || old_crlf == old {
            return (old_crlf, new_crlf, offsets);
        }
    }
    let offsets = occurrences(text, old);
    (Cow::Borrowed(old), Cow::Borrowed(new), offsets)
}

/// Splits a UTF-8 byte-order mark off `text`.
fn split_bom(text: &str) -> (bool, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// True when `text` has more CRLF line breaks than lone LF ones.
fn uses_crlf(text: &str) -> bool {
    let newlines = text.bytes().filter(|&byte| byte == b'\n').count();
    let crlf = text.matches("\r\n").count();
    crlf > newlines - crlf
}

/// `text` with each `\n` not already preceded by `\r` turned into `\r\n`.
fn to_crlf(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = |at: usize| bytes[at] == b'\n' && (at == 0 || bytes[at - 1] != b'\r');
    if !(0..bytes.len()).any(lone) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut previous = None;
    for ch in text.chars() {
        if ch == '\n' && previous != Some('\r') {
            out.push('\r');
        }
        out.push(ch);
        previous = Some(ch);
    }
    Cow::Owned(out)
}

/// Byte offsets of the non-overlapping occurrences of `needle` (not empty) in `text`.
fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    text.match_indices(needle).map(|(at, _)| at).collect()
}

/// The line (from 1) holding byte `offset` of `text`.
fn line_at(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
}

/// The lines holding each of the ascending `offsets`, without repeats, in one pass over `text`.
fn lines_at(text: &str, offsets: &[usize]) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut lines: Vec<usize> = Vec::with_capacity(offsets.len());
    let (mut line, mut scanned) = (1, 0);
    for &offset in offsets {
        line += bytes[scanned..offset]
            .iter()
            .filter(|&&byte| byte == b'\n')
            .count();
        scanned = offset;
        if lines.last() != Some(&line) {
            lines.push(line);
        }
    }
    lines
}

/// The line holding the last character of `inserted` once it is inserted on line `start`.
fn last_line_of(start: usize, inserted: &str) -> usize {
    let bytes = inserted.as_bytes();
    let Some((_, before_last)) = bytes.split_last() else {
        return start;
    };
    // A trailing newline ends the last line instead of starting a new one.
    start + before_last.iter().filter(|&&byte| byte == b'\n').count()
}

/// "at line 3" or "at lines 3, 7, 9, 12, 15 and 2 more lines".
fn describe_lines(lines: &[usize]) -> String {
    let listed: Vec<String> = lines
        .iter()
        .take(MAX_LISTED_LINES)
        .map(usize::to_string)
        .collect();
    let more = lines.len().saturating_sub(MAX_LISTED_LINES);
    match (lines.len(), more) {
        (1, _) => format!("at line {}", listed.join("")),
        (_, 0) => format!("at lines {}", listed.join(", ")),
        (_, more) => format!("at lines {} and {more} more", listed.join(", ")),
    }
}

/// The `old_string_not_found` error, with a hint at the nearest miss when one is cheap to find.
fn not_found_error(path: &str, text: &str, old: &str) -> ToolError {
    let mut message = format!(
        "old_string was not found in {path}. It must match the file's text exactly, including \
         whitespace, indentation and line breaks, without Read's line-number prefix"
    );
    if let Some(hint) = near_miss(text, old) {
        message.push_str("; ");
        message.push_str(&hint);
    } else {
        message.push_str("; Read the file again and copy the text to replace exactly");
    }
    ToolError::new("old_string_not_found", message)
}

/// Why `old` (which does not occur in `text`) nearly matches, if it does.
fn near_miss(text: &str, old: &str) -> Option<String> {
    if text.len() > MAX_HINT_BYTES {
        return None;
    }
    let unify = |s: &str| s.replace("\r\n", "\n");
    if unify(text).contains(&unify(old)) {
        return Some(
            "it matches if CRLF and LF line endings are not told apart, so the file mixes line \
             endings: Read the lines again and give old_string in the file's own style"
                .to_owned(),
        );
    }
    let file_lines: Vec<&str> = text.lines().collect();
    let old_lines: Vec<&str> = old.lines().collect();
    if let Some(line) = loose_match(&file_lines, &old_lines) {
        return Some(format!(
            "it matches at line {line} if leading and trailing whitespace on each line is \
             ignored: copy the exact indentation and spacing from Read's output (after the tab \
             that follows the line number)"
        ));
    }
    let first = old_lines
        .iter()
        .map(|line| line.trim())
        .find(|line| !line.is_empty())?;
    // A very short line (a lone brace) would "match" everywhere and tell the model nothing.
    if first.chars().count() < 4 {
        return None;
    }
    let lines: Vec<usize> = file_lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.contains(first))
        .map(|(index, _)| index + 1)
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "its first line, {}, occurs {} but the text after it differs: Read those lines again and \
         copy them exactly",
        quote(first),
        describe_lines(&lines)
    ))
}

/// The line (from 1) where `old_lines` match consecutive `file_lines` ignoring whitespace at the
/// ends of each line. The first and last lines of `old` may be partial lines of the file.
fn loose_match(file_lines: &[&str], old_lines: &[&str]) -> Option<usize> {
    let old: Vec<&str> = old_lines.iter().map(|line| line.trim()).collect();
    if old.iter().all(|line| line.is_empty()) {
        return None;
    }
    let fits = |start: usize| {
        old.iter().enumerate().all(|(index, want)| {
            let have = file_lines[start + index].trim();
            match (index == 0, index + 1 == old.len()) {
                (true, true) => have.contains(want),
                (true, false) => have.ends_with(want),
                (false, true) => have.starts_with(want),
                (false, false) => have == *want,
            }
        })
    };
    let windows = (file_lines.len() + 1).checked_sub(old.len())?;
    (0..windows)
        .find(|&start| fits(start))
        .map(|start| start + 1)
}

/// `text` in backquotes, cut to 80 characters.
fn quote(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("`{}…`", &text[..at]),
        None => format!("`{text}`"),
    }
}

/// Lines `first..=last` (from 1) of `text` in Read's `cat -n` format, at most `MAX_SNIPPET_LINES`
/// of them; returns the snippet and the last line shown.
fn render_snippet(text: &str, first: usize, last: usize) -> (String, usize) {
    let first = first.max(1);
    let last = last.min(first + MAX_SNIPPET_LINES - 1);
    let mut snippet = String::new();
    let mut shown = first.saturating_sub(1);
    for (index, line) in text.lines().enumerate().skip(first - 1) {
        let number = index + 1;
        if number > last {
            break;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        snippet.push_str(&format!("{number:>6}\t"));
        match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((at, _)) => {
                snippet.push_str(&line[..at]);
                snippet.push_str(&format!(
                    "… [line cut: showed the first {MAX_LINE_CHARS} characters of a {}-byte line]",
                    line.len()
                ));
            }
            None => snippet.push_str(line),
        }
        snippet.push('\n');
        shown = number;
    }
    (snippet, shown)
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

fn edited_output(path: &str, input: &EditInput, plan: &Plan) -> Output {
    let text = plan.text();
    let total = count_lines(text);
    let first = plan.start_line.saturating_sub(CONTEXT_LINES).max(1);
    let wanted = (plan.end_line + CONTEXT_LINES).min(total);
    let (snippet, shown) = render_snippet(text, first, wanted);
    let noun = if plan.replacements == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    let mut message = format!(
        "Edited {path}: replaced {} {noun}\n{snippet}",
        plan.replacements
    );
    if shown < wanted {
        message.push_str(&format!(
            "<notice>Showed lines {first}-{shown}; Read with offset {} to see the rest of the \
             change.</notice>",
            shown + 1
        ));
    }
    Output::text(message).with_structured(json!({
        "filePath": path,
        "oldString": input.old_string,
        "newString": input.new_string,
        "replaceAll": input.replace_all,
        "replacements": plan.replacements,
        "startLine": plan.start_line,
    }))
}

fn created_output(path: &str, input: &EditInput) -> Output {
    let lines = count_lines(&input.new_string);
    let bytes = input.new_string.len();
    let text = format!(
        "Created {path} ({lines} {}, {bytes} {})",
        if lines == 1 { "line" } else { "lines" },
        if bytes == 1 { "byte" } else { "bytes" }
    );
    Output::text(text).with_structured(json!({
        "filePath": path,
        "oldString": input.old_string,
        "newString": input.new_string,
        "replaceAll": input.replace_all,
        "replacements": 0,
        "startLine": 1,
    }))
}

#[cfg(test)]
mod tests;
