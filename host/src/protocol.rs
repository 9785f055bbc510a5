//! Protocols: tool-definition export for model APIs and MCP. Stream-json and the MCP server come in
//! later issues.

mod definitions;

pub use definitions::{DefinitionFormat, tool_definitions};
