//! Output: turns tool content into an Anthropic `tool_result` block, normalized and bounded.
//!
//! Normalization (`normalize.rs`) makes text valid UTF-8 with `\n` newlines and no terminal
//! escapes; the inline budget keeps at most the tool's limit of characters, every cut says exactly
//! how much was removed, and a success cut saves the whole output to
//! `<session>/tool-results/<tool_use_id>.txt` (`externalize.rs`), where Read can page through it.

mod externalize;
mod normalize;
mod truncate;

pub use normalize::Normalization;
pub use truncate::Truncation;

pub(crate) use externalize::{externalize, result_file};
pub(crate) use normalize::normalize;
pub(crate) use truncate::head_and_tail;
