//! Protocols: tool-definition export for model APIs and MCP, and the stream-json session of
//! `warden run` (docs/PROTOCOL.md), and the MCP server `warden mcp serve` (docs/MCP.md).

mod definitions;
pub(crate) mod jsonrpc;
mod mcp_server;
mod messages;
mod prompter;
mod serve;

pub use definitions::{DefinitionFormat, tool_definitions};
pub use mcp_server::{McpServeOptions, serve_mcp};
pub use serve::{StreamOptions, serve_stream};
