//! Inline truncation with exact accounting. Budgets count Unicode characters; markers are included in
//! the budget, so the returned text never exceeds the limit.

use serde::Serialize;

/// What a cut removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Truncation {
    /// Characters the output had.
    pub total_chars: usize,
    /// Characters of it that were kept.
    pub kept_chars: usize,
    /// Characters cut.
    pub cut_chars: usize,
}

/// Room left for the marker; markers are well under this.
const MARKER_RESERVE: usize = 200;

/// Keeps the head and the tail of `text` (errors are often explained at the end), with a marker at
/// the top and one where the middle was cut.
pub(crate) fn head_and_tail(text: &str, limit: usize) -> (String, Option<Truncation>) {
    let total = text.chars().count();
    if total <= limit {
        return (text.to_owned(), None);
    }
    let kept = limit.saturating_sub(2 * MARKER_RESERVE);
    let head_chars = kept / 2;
    let tail_chars = kept - head_chars;
    let cut = total - kept;
    let head: String = text.chars().take(head_chars).collect();
    let tail: String = text.chars().skip(total - tail_chars).collect();
    let out = format!(
        "[janua: output truncated: kept the first {head_chars} and last {tail_chars} of {total} characters; {cut} characters were cut]\n{head}\n[... {cut} characters cut ...]\n{tail}"
    );
    (
        out,
        Some(Truncation {
            total_chars: total,
            kept_chars: kept,
            cut_chars: cut,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(head_and_tail("abc", 3), ("abc".to_owned(), None));
    }

    #[test]
    fn head_and_tail_keeps_both_ends() {
        let text = format!("{}{}{}", "a".repeat(500), "m".repeat(1000), "z".repeat(500));
        let (out, cut) = head_and_tail(&text, 1000);
        let cut = cut.unwrap();
        assert_eq!(cut.kept_chars + cut.cut_chars, 2000);
        assert!(out.starts_with("[janua: output truncated"));
        assert!(out.ends_with(&"z".repeat(300)));
        assert!(out.chars().count() <= 1000);
        assert!(!out.contains('m'));
    }
}
