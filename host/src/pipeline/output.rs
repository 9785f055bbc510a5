//! Stage 9: build the `tool_result` block: render content parts, normalize text, apply the inline
//! budget (head for successes, with the whole output saved to the session's `tool-results/`;
//! head and tail for errors, within 10,000 characters) and append hook notes.

use std::path::Path;

use base64::Engine as _;

use super::outcome::Failure;
use crate::output::{Normalization, Truncation, externalize, head_and_tail, normalize};
use janua_types::{ContentBlock, ImageSource, ResultContent, ToolResultBlock};

/// Characters kept free for the truncation marker (its text, without the file note).
const MARKER_RESERVE: usize = 200;
use janua_sandbox::WitContent;

/// The most characters a failure keeps inline (head and tail), whatever the tool's limit.
pub(crate) const FAILURE_CHARS: usize = 10_000;

/// A rendered result: the block and what the output stage did to it.
pub(crate) struct Rendered {
    pub(crate) block: ToolResultBlock,
    pub(crate) truncation: Option<Truncation>,
    pub(crate) normalization: Normalization,
    /// The file holding the whole output, when it did not fit inline.
    pub(crate) saved_to: Option<std::path::PathBuf>,
}

/// The success block. Past `limit`, the whole text is saved under `results_dir` (when given)
/// and the marker says where.
pub(crate) fn success(
    tool_use_id: &str,
    content: Vec<WitContent>,
    limit: usize,
    notes: &[String],
    results_dir: Option<&Path>,
    strip_escapes: bool,
) -> Rendered {
    let mut normalization = Normalization::default();
    let mut blocks: Vec<ContentBlock> = Vec::new();
    let mut text = String::new();
    let mut has_images = false;
    for part in content {
        let part_text = match part {
            WitContent::Text(value) => {
                let (normalized, report) = normalize(&value, strip_escapes);
                normalization.add(report);
                normalized
            }
            WitContent::Json(value) => value,
            WitContent::File(file) => match file.media_type {
                Some(media_type) => format!("[file: {} ({media_type})]", file.path),
                None => format!("[file: {}]", file.path),
            },
            WitContent::Image(image) => {
                flush(&mut text, &mut blocks);
                has_images = true;
                blocks.push(ContentBlock::Image {
                    source: ImageSource {
                        kind: "base64".to_owned(),
                        media_type: image.media_type,
                        data: base64::engine::general_purpose::STANDARD.encode(&image.data),
                    },
                });
                continue;
            }
        };
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&part_text);
    }
    flush(&mut text, &mut blocks);

    let total_chars: usize = blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.chars().count(),
            ContentBlock::Image { .. } => 0,
        })
        .sum();
    let (saved_to, note) = match results_dir {
        Some(dir) if total_chars > limit => {
            let whole = blocks
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    ContentBlock::Image { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            match externalize(dir, tool_use_id, &whole) {
                Some((path, note)) => (Some(path), note),
                None => (None, String::new()),
            }
        }
        _ => (None, String::new()),
    };

    // One budget for all text, in order, with room kept for the one marker: text parts are kept
    // whole while they fit, the part that crosses the budget keeps its head, later text parts
    // are dropped, and a single marker at the end states the exact counts (and the file).
    let truncation = (total_chars > limit).then(|| {
        let budget = limit.saturating_sub(MARKER_RESERVE + note.chars().count());
        let mut kept_chars = 0usize;
        blocks.retain_mut(|block| {
            let ContentBlock::Text { text } = block else {
                return true;
            };
            let room = budget - kept_chars;
            let length = text.chars().count();
            if length <= room {
                kept_chars += length;
                return true;
            }
            if room == 0 {
                return false;
            }
            *text = text.chars().take(room).collect();
            kept_chars += room;
            true
        });
        let cut_chars = total_chars - kept_chars;
        blocks.push(ContentBlock::Text {
            text: format!(
                "[janua: output truncated: kept the first {kept_chars} of {total_chars} characters; {cut_chars} characters were cut{note}]"
            ),
        });
        Truncation {
            total_chars,
            kept_chars,
            cut_chars,
        }
    });
    for note in notes {
        blocks.push(ContentBlock::Text { text: note.clone() });
    }
    let content = if has_images {
        ResultContent::Blocks(blocks)
    } else {
        let joined = blocks
            .into_iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text),
                ContentBlock::Image { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        ResultContent::Text(joined)
    };
    Rendered {
        block: ToolResultBlock::new(tool_use_id, content, false),
        truncation,
        normalization,
        saved_to,
    }
}

/// The error block: `<kind>: <message>`, head and tail kept within `limit` (at most
/// [`FAILURE_CHARS`]), with the marker at the top saying how much was cut from the middle.
pub(crate) fn failure(
    tool_use_id: &str,
    failure: &Failure,
    limit: usize,
    notes: &[String],
) -> Rendered {
    let (text, normalization) = normalize(&format!("{}: {}", failure.kind, failure.message), true);
    let (mut text, truncation) = head_and_tail(&text, limit.min(FAILURE_CHARS));
    for note in notes {
        text.push_str("\n\n");
        text.push_str(note);
    }
    Rendered {
        block: ToolResultBlock::new(tool_use_id, ResultContent::Text(text), true),
        truncation,
        normalization,
        saved_to: None,
    }
}

fn flush(text: &mut String, blocks: &mut Vec<ContentBlock>) {
    if !text.is_empty() {
        blocks.push(ContentBlock::Text {
            text: std::mem::take(text),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image() -> WitContent {
        WitContent::Image(janua_sandbox::WitImage {
            media_type: "image/png".to_owned(),
            data: vec![1, 2, 3],
        })
    }

    fn texts(block: &ToolResultBlock) -> usize {
        match &block.content {
            ResultContent::Text(text) => text.chars().count(),
            ResultContent::Blocks(blocks) => blocks
                .iter()
                .map(|block| match block {
                    ContentBlock::Text { text } => text.chars().count(),
                    ContentBlock::Image { .. } => 0,
                })
                .sum(),
        }
    }

    #[test]
    fn one_budget_across_parts_with_images_and_exact_counts() {
        let content = vec![
            WitContent::Text("a".repeat(29_950)),
            image(),
            WitContent::Text("b".repeat(500)),
        ];
        let rendered = success("t", content, 30_000, &[], None, true);
        let cut = rendered.truncation.expect("cut");
        assert_eq!(cut.total_chars, 30_450);
        assert_eq!(cut.kept_chars + cut.cut_chars, 30_450);
        assert!(
            texts(&rendered.block) <= 30_000,
            "{}",
            texts(&rendered.block)
        );
        assert!(rendered.block.text().contains(&format!(
            "kept the first {} of 30450 characters",
            cut.kept_chars
        )));
    }

    #[test]
    fn failures_keep_head_and_tail_within_ten_thousand() {
        let failure = Failure::new(
            janua_types::ErrorKind::ToolFailed,
            format!("{}{}", "h".repeat(20_000), "t".repeat(20_000)),
        );
        let rendered = super::failure("t", &failure, 30_000, &[]);
        let text = rendered.block.text();
        assert!(text.chars().count() <= FAILURE_CHARS);
        assert!(text.starts_with("[janua: output truncated"));
        assert!(text.ends_with('t'));
    }
}
