//! Protocols: tool-definition export for model APIs and MCP, and the stream-json session of
//! `janua run` (docs/PROTOCOL.md), and the MCP server `janua mcp serve` (docs/MCP.md).

mod definitions;
mod mcp_server;
pub(crate) mod messages;
mod prompter;
mod serve;
mod watch;

pub use definitions::{DefinitionFormat, tool_definitions};

pub use mcp_server::{HttpServe, HttpServeError, McpServeOptions, serve_mcp, serve_mcp_http};
pub use serve::{StreamOptions, serve_stream};
