//! The Anthropic `tool_result` block: `{"type":"tool_result","tool_use_id","content","is_error"}`.

use serde::{Deserialize, Serialize};

/// One `tool_result` content block, ready to send back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultBlock {
    /// Always `tool_result`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The id of the `tool_use` block this answers.
    pub tool_use_id: String,
    /// A string, or a list of text and image blocks.
    pub content: ResultContent,
    /// True for every error outcome.
    pub is_error: bool,
}

impl ToolResultBlock {
    /// A block answering `tool_use_id`.
    pub fn new(tool_use_id: &str, content: ResultContent, is_error: bool) -> Self {
        Self {
            kind: "tool_result".to_owned(),
            tool_use_id: tool_use_id.to_owned(),
            content,
            is_error,
        }
    }

    /// All text in the block, joined by newlines (images are skipped).
    pub fn text(&self) -> String {
        match &self.content {
            ResultContent::Text(text) => text.clone(),
            ResultContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    ContentBlock::Image { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// `content` of a `tool_result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResultContent {
    /// Plain text.
    Text(String),
    /// Text and image blocks.
    Blocks(Vec<ContentBlock>),
}

/// A block inside `content`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Its data.
        source: ImageSource,
    },
}

/// Base64 image data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageSource {
    /// Always `base64`.
    #[serde(rename = "type")]
    pub kind: String,
    /// IANA media type.
    pub media_type: String,
    /// Base64 bytes.
    pub data: String,
}
