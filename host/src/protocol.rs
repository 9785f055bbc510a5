//! Protocols: tool-definition export for model APIs and MCP, and the stream-json session of
//! `janua run` (docs/PROTOCOL.md), the MCP server `janua mcp serve` (docs/MCP.md), and Claude
//! Code's hook protocol (`janua hook claude`, docs/HOSTS.md).

mod claude_hook;
mod definitions;
pub(crate) mod loopback;
mod mcp_server;
pub(crate) mod messages;
mod prompter;
mod serve;
mod watch;

pub use claude_hook::{
    CLAUDE_HOOK_EVENTS, ClaudeHandler, ClaudeHookAnswer, ClaudeHookError, ClaudeHookEvent,
    ClaudeHookOptions, ClaudeHookReply, ClaudeHookRequest, ClaudeHookServer, ClaudeScope,
    HTTP_TOKEN_VARIABLE, HookServeError, HookShapeError, RegisteredHook, SessionProjects,
    SettingsChange, answer_claude_hook, claude_answer, claude_block, edit_claude_hooks,
    install_claude_hook, parse_claude_hook, registered_claude_hooks, respond_to_claude_hook,
};
pub use definitions::{DefinitionFormat, tool_definitions};

pub use mcp_server::{HttpServe, HttpServeError, McpServeOptions, serve_mcp, serve_mcp_http};
pub use serve::{StreamOptions, serve_stream};
