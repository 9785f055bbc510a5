//! Stage 9: build the `tool_result` block: render content parts, normalize text, apply the inline
//! budget (head for successes, with the whole output saved to the session's `tool-results/`;
//! head and tail for errors, within 10,000 characters) and append hook notes.

use std::path::Path;

use base64::Engine as _;

use super::outcome::Failure;
use crate::output::{
    ContentBlock, ImageSource, Normalization, ResultContent, ToolResultBlock, Truncation,
    externalize, head_and_tail, head_noting, normalize,
};
use crate::sandbox::WitContent;

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

    // One budget for all text, in order. Once a part has been cut, later text parts are dropped
    // whole and counted, and one marker at the end says how much.
    let mut remaining = limit;
    let mut truncation: Option<Truncation> = None;
    let mut dropped_chars = 0usize;
    blocks.retain_mut(|block| {
        let ContentBlock::Text { text } = block else {
            return true;
        };
        if truncation.is_some() {
            dropped_chars += text.chars().count();
            return false;
        }
        let (kept, cut) = head_noting(text, remaining, &note);
        remaining = remaining.saturating_sub(kept.chars().count());
        if let Some(cut) = cut {
            truncation = Some(cut);
        }
        *text = kept;
        true
    });
    if dropped_chars > 0 {
        truncation = truncation.map(|cut| Truncation {
            total_chars: cut.total_chars + dropped_chars,
            kept_chars: cut.kept_chars,
            cut_chars: cut.cut_chars + dropped_chars,
        });
        blocks.push(ContentBlock::Text {
            text: format!("[warden: {dropped_chars} more characters in later text parts were cut]"),
        });
    }
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
