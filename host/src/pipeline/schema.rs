//! Stage 3: validate the (coerced) input against the tool's JSON Schema, compiled once at load.
//! Reports every violation with its JSON pointer.

use janua_types::ErrorKind;

use super::outcome::Failure;
use crate::registry::RegisteredTool;

/// Most violations listed in one result.
const MAX_VIOLATIONS: usize = 20;
/// Characters kept of one violation line.
const MAX_LINE_CHARS: usize = 500;

/// `Ok` when `input` matches the schema; else `invalid_input` listing each violation.
pub(crate) fn check(tool: &RegisteredTool, input: &serde_json::Value) -> Result<(), Failure> {
    // Messages quote the offending value, which can be huge: format only what is shown, and cut
    // each line.
    let validator = tool.validator().map_err(|error| {
        Failure::new(
            ErrorKind::InvalidInput,
            format!("no input can be checked: {error}"),
        )
    })?;
    let mut total = 0usize;
    let mut violations: Vec<String> = Vec::new();
    for error in validator.iter_errors(input) {
        total += 1;
        if violations.len() < MAX_VIOLATIONS {
            let pointer = error.instance_path().to_string();
            let at = if pointer.is_empty() {
                "(root)".to_owned()
            } else {
                pointer
            };
            let line = format!("- {at}: {error}");
            violations.push(cut_line(line));
        }
    }
    if violations.is_empty() {
        return Ok(());
    }
    let mut message = format!(
        "The input for {} does not match its schema ({total} violation{}):\n{}",
        tool.spec.name,
        if total == 1 { "" } else { "s" },
        violations.join("\n")
    );
    if total > violations.len() {
        message.push_str(&format!("\n- ... and {} more", total - violations.len()));
    }
    Err(Failure::new(ErrorKind::InvalidInput, message))
}

/// At most [`MAX_LINE_CHARS`] characters of `line`, with a marker when cut.
fn cut_line(line: String) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((index, _)) => format!("{}… (cut)", &line[..index]),
        None => line,
    }
}
