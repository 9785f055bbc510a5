//! Protocols: tool-definition export for model APIs and MCP, and the stream-json session of
//! `janua run` (docs/PROTOCOL.md), and the MCP server `janua mcp serve` (docs/MCP.md).

mod definitions;
pub(crate) mod jsonrpc;
mod mcp_server;
pub(crate) mod messages;
mod prompter;
mod serve;
mod watch;

pub use definitions::{DefinitionFormat, tool_definitions};

/// The MCP protocol revisions janua speaks, newest first, as a server and as a client.
pub(crate) const MCP_REVISIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
pub use mcp_server::{HttpServe, McpServeOptions, serve_mcp, serve_mcp_http};
pub use serve::{StreamOptions, serve_stream};
