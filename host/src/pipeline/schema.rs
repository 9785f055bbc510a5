//! Stage 3: validate the (coerced) input against the tool's JSON Schema, compiled once at load.
//! Reports every violation with its JSON pointer.

use super::outcome::{ErrorKind, Failure};
use crate::registry::RegisteredTool;

/// Most violations listed in one result.
const MAX_VIOLATIONS: usize = 20;

/// `Ok` when `input` matches the schema; else `invalid_input` listing each violation.
pub(crate) fn check(tool: &RegisteredTool, input: &serde_json::Value) -> Result<(), Failure> {
    let violations: Vec<String> = tool
        .validator
        .iter_errors(input)
        .map(|error| {
            let pointer = error.instance_path().to_string();
            let at = if pointer.is_empty() {
                "(root)".to_owned()
            } else {
                pointer
            };
            format!("- {at}: {error}")
        })
        .collect();
    if violations.is_empty() {
        return Ok(());
    }
    let shown = violations.len().min(MAX_VIOLATIONS);
    let mut message = format!(
        "The input for {} does not match its schema ({} violation{}):\n{}",
        tool.spec.name,
        violations.len(),
        if violations.len() == 1 { "" } else { "s" },
        violations[..shown].join("\n")
    );
    if violations.len() > shown {
        message.push_str(&format!("\n- ... and {} more", violations.len() - shown));
    }
    Err(Failure::new(ErrorKind::InvalidInput, message))
}
