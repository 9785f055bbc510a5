//! Output: turns tool content into an Anthropic `tool_result` block, normalized and bounded.
//!
//! Normalization makes text valid UTF-8 with `\n` newlines; the inline budget keeps at most the
//! tool's limit of characters, and every cut says exactly how much was removed. Externalizing the
//! full output to a session file is the budget layer's job (a later issue).

mod block;
mod truncate;

pub use block::{ContentBlock, ImageSource, ResultContent, ToolResultBlock};
pub use truncate::Truncation;

pub(crate) use truncate::{head, head_and_tail};

/// Normalizes text for the model: `\r\n` and lone `\r` become `\n`.
pub(crate) fn normalize_text(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_owned();
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_newlines() {
        assert_eq!(normalize_text("a\r\nb\rc\n"), "a\nb\nc\n");
        assert_eq!(normalize_text("plain"), "plain");
    }
}
