//! Protocols: tool-definition export for model APIs and MCP, and the stream-json session of
//! `warden run` (docs/PROTOCOL.md). The MCP server comes in a later issue.

mod definitions;
mod messages;
mod prompter;
mod serve;

pub use definitions::{DefinitionFormat, tool_definitions};
pub use serve::{StreamOptions, serve_stream};
