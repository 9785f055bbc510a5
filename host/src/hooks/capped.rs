//! The cap on hook text (`additionalContext`, `systemMessage`, reasons, plain output): at most
//! 10,000 characters reach the model or the user, as in Claude Code. Longer text is saved whole
//! to a file in the session directory and replaced by a preview and the path, so nothing is lost
//! and nothing floods the context.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Characters of one hook text that are kept inline.
pub(crate) const MAX_HOOK_TEXT_CHARS: usize = 10_000;
/// Characters of an over-long text shown before the path.
const PREVIEW_CHARS: usize = 2_000;

/// `text`, or, past [`MAX_HOOK_TEXT_CHARS`], a preview plus the path of a file holding all of it.
/// `label` names the file (hook and field); it is made file-name safe here.
pub(crate) fn cap_text(text: String, session_dir: &Path, label: &str) -> String {
    let length = text.chars().count();
    if length <= MAX_HOOK_TEXT_CHARS {
        return text;
    }
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let safe: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let path = session_dir.join("hook-output").join(format!(
        "{}-{}-{safe}.txt",
        janua_types::unix_ms(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let preview: String = text.chars().take(PREVIEW_CHARS).collect();
    let saved = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| janua_types::write_whole(&path, text.as_bytes()));
    match saved {
        Ok(()) => format!(
            "{preview}\n[hook output of {length} characters is over the {MAX_HOOK_TEXT_CHARS}-character cap; all of it is in {}]",
            path.display()
        ),
        Err(error) => format!(
            "{preview}\n[hook output of {length} characters is over the {MAX_HOOK_TEXT_CHARS}-character cap and could not be saved ({error}); the rest was dropped]"
        ),
    }
}

/// Characters kept of a message a hook or monitor produced about itself (an error, a stderr line,
/// a stop or cancel reason) before it goes into warnings and results.
const MAX_MESSAGE_CHARS: usize = 2_000;

/// `text`, cut at [`MAX_MESSAGE_CHARS`] with a marker saying how much was dropped.
pub(crate) fn clip(text: &str) -> String {
    let length = text.chars().count();
    if length <= MAX_MESSAGE_CHARS {
        return text.to_owned();
    }
    let kept: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
    format!("{kept}... [{} more characters]", length - MAX_MESSAGE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_and_long_text_is_saved_whole() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(cap_text("short".into(), dir.path(), "h"), "short");
        let long = "é".repeat(MAX_HOOK_TEXT_CHARS + 1);
        let capped = cap_text(long.clone(), dir.path(), "hook/one:context");
        assert!(capped.starts_with(&"é".repeat(PREVIEW_CHARS)));
        let path = capped
            .rsplit("all of it is in ")
            .next()
            .unwrap()
            .trim_end_matches(']');
        assert!(path.contains("hook_one_context"), "{path}");
        assert_eq!(std::fs::read_to_string(path).unwrap(), long);
    }

    #[test]
    fn messages_are_clipped_with_a_marker() {
        assert_eq!(clip("short"), "short");
        let clipped = clip(&"x".repeat(MAX_MESSAGE_CHARS + 5));
        assert!(clipped.ends_with("... [5 more characters]"));
    }
}
