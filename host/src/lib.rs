//! janua: a runtime that turns an LLM agent's tool calls into local side effects safely.
//!
//! Every tool is a WebAssembly component (`janua:plugin@0.1.0`). A call goes through one pipeline:
//! resolve (one alias hop) -> registry check -> coerce -> schema -> the tool's `validate-input` ->
//! PreToolUse hooks -> the central permission decision -> the call, in a fresh sandbox holding only
//! the tool's grants -> PostToolUse / PostToolUseFailure hooks -> a bounded `tool_result` block.
//!
//! ```no_run
//! # async fn example() -> Result<(), janua::Error> {
//! let runtime = janua::Runtime::new(janua::RuntimeConfig::new(".")).await?;
//! let result = runtime
//!     .dispatch(janua::ToolUse {
//!         id: "toolu_1".into(),
//!         name: "Read".into(),
//!         input: serde_json::json!({"file_path": "README.md", "limit": 5}),
//!     })
//!     .await;
//! println!("{}", serde_json::to_string(&result.block).unwrap());
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod authoring;
mod delegation;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod hooks;
mod output;
mod pipeline;
mod protocol;
mod registry;
mod runtime;
mod session;
mod settings;

// What an embedder needs: the runtime, its configuration, a call and its result, who answers
// permission questions and runs sub-agents, and the errors. Everything else is in the modules
// below, grouped by what it is about.
pub use crate::delegation::{ForkError, Narrowing};
pub use crate::hooks::{FnHook, Hook};
pub use crate::pipeline::{
    AgentError, AgentReport, AgentRequest, AgentRunner, BatchDispatch, CheckReport, Dispatch,
    Failure, Outcome, SubSession,
};
pub use crate::runtime::{BatchOptions, CommandRunner, Runtime, RuntimeConfig, ToolInfo};
pub use crate::session::Session;
pub use crate::settings::SettingsInput;
pub use janua_permissions::{
    Decision, NoPrompter, PermissionMode, PermissionRequest, PromptAnswer, Prompter, Verdict,
};
pub use janua_sandbox::{Grants, Limits};
pub use janua_types::{
    CapabilityClass, ContentBlock, DeferredCall, ErrorKind, ImageSource, ResultContent,
    ToolResultBlock, ToolSpec, ToolUse,
};

/// Hooks and monitors: events and matchers, the answers a hook gives, what was loaded, the audit log and the shipped examples.
pub mod extensions {
    pub use crate::hooks::{
        AnswerError, AuditError, AuditSummary, CommandGrants, Common, DEFAULT_HOOK_TIMEOUT,
        DeniedAnswer, ExtensionsReport, HookError, HookInfo, MonitorInfo, MonitorStats, PostAnswer,
        PreAnswer, ProgressListener, RequestAnswer, SessionAnswer, SkippedExtension, example_names,
        verify_audit_log, write_example,
    };
    pub use janua_types::{HookEvent, Matcher, MatcherError, OnError};
}

/// Permission rules and what decided a call: the grammar, the policy, hook votes, the terminal prompter.
pub mod rules {
    pub use crate::settings::{PermissionSettings, RuleEntry};
    pub use janua_permissions::{
        DecidedBy, HookVote, Policy, Rule, RuleContext, RuleError, RuleKind, RuleSource,
        TtyPrompter, UnknownMode, VoteKind, split_command, split_rule_list,
    };
}

/// The sandbox a call runs in: grants, limits, outgoing HTTP, process confinement, the component cache and the browser.
pub mod sandbox {
    pub use crate::runtime::{cache_info, clear_cache, default_cache_dir};
    pub use janua_confine::{
        KernelSupport, ProcessSandbox, Unavailable, close_inherited_descriptors, kill_group,
    };
    pub use janua_sandbox::{
        CacheInfo, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MEMORY_BYTES, DEFAULT_OUTPUT_CHARS,
        DEFAULT_REQUEST_TIMEOUT, DEFAULT_STDIO_BYTES, DEFAULT_TIMEOUT, DeclaredLimits, EnvGrant,
        Foreground, ForegroundError, FsAccess, FsGrant, GrantError, MAX_MEMORY_BYTES,
        MAX_OUTPUT_CHARS, MIN_OUTPUT_CHARS, NetGrant, NetGrantError, NetSettings, NoBrowser,
        ProcessGrant, ProxyError, ProxySettings, SandboxError, find_browser,
    };
}

/// MCP servers as tool sources: their per-server sandbox and limits, and `.mcp.json` errors.
pub mod mcp {
    pub use janua_mcp::{
        DEFAULT_CALL_TIMEOUT as DEFAULT_MCP_CALL_TIMEOUT,
        DEFAULT_OUTPUT_TOKENS as DEFAULT_MCP_OUTPUT_TOKENS,
        DEFAULT_STARTUP_TIMEOUT as DEFAULT_MCP_STARTUP_TIMEOUT, McpConfigError, McpServerPolicy,
    };
}

/// The front ends: `janua run`'s stream-json session, `janua mcp serve` (stdio and Streamable HTTP), and tool definitions for model APIs.
pub mod serve {
    pub use crate::protocol::{
        DefinitionFormat, HttpServe, HttpServeError, McpServeOptions, StreamOptions, serve_mcp,
        serve_mcp_http, serve_stream, tool_definitions,
    };
}

/// Claude Code's hook protocol: `janua hook claude` reads one event and answers it (docs/HOSTS.md).
pub mod claude {
    pub use crate::protocol::{
        CLAUDE_HOOK_EVENTS, ClaudeHandler, ClaudeHookAnswer, ClaudeHookError, ClaudeHookEvent,
        ClaudeHookOptions, ClaudeHookReply, ClaudeHookRequest, ClaudeHookServer, ClaudeScope,
        HTTP_TOKEN_VARIABLE, HookServeError, HookShapeError, RegisteredHook, SessionProjects,
        SettingsChange, answer_claude_hook, claude_answer, claude_block, edit_claude_hooks,
        install_claude_hook, parse_claude_hook, registered_claude_hooks, respond_to_claude_hook,
    };
}

/// Plugins: checking and approving them, their manifests, the registry's errors, aliases and tool selection.
pub mod plugins {
    pub use crate::authoring::{
        ApprovalError, Finding, PluginReport, Severity, approve_plugin, check_plugin,
        component_digest, manifest_components, wit_version,
    };
    pub use crate::registry::{
        Alias, AliasError, DescribeError, ManifestError, PluginApproval, RegistryError,
        ToolSelection, ToolSource,
    };
    pub use crate::runtime::PluginReload;
}

/// A session's saved state: checkpoints and rewinds, and what session start and end reported.
pub mod state {
    pub use crate::runtime::{SessionEndReport, SessionStartReport};
    pub use crate::session::{
        Checkpoint, Checkpoints, DEFAULT_SESSION_ID, FileState, MAX_CHECKPOINTS, RewindReport,
        SessionError, Skipped,
    };
}

/// Settings files and the runtime's other defaults.
pub mod config {
    pub use crate::delegation::DEFAULT_MAX_DELEGATION_DEPTH;
    pub use crate::runtime::DEFAULT_MAX_CONCURRENCY;
    pub use crate::settings::{
        CLAUDE_MANAGED_SETTINGS, ClaudeCodeSettings, HookSetting, Settings, SettingsError,
        claude_managed_files, claude_user_settings_path, user_settings_path,
    };
    pub use janua_types::AGENT_TOOL;
}

/// What an outcome records besides its result: the alias hop, coercions, output normalization and truncation.
pub mod outcome {
    pub use crate::output::{Normalization, Truncation};
    pub use crate::pipeline::{AliasHop, Coercion, CoercionRule};
}

/// A configuration or start-up error: the runtime could not be built. (Problems with a single call
/// are never errors; they are error results.)
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workspace directory is unusable.
    #[error("workspace {}: {source}", path.display())]
    Workspace {
        /// The path given.
        path: std::path::PathBuf,
        /// Why it is unusable.
        source: std::io::Error,
    },
    /// The registry could not be built.
    #[error(transparent)]
    Registry(#[from] plugins::RegistryError),
    /// The sandbox could not be created.
    #[error(transparent)]
    Sandbox(#[from] sandbox::SandboxError),
    /// A permission rule is malformed.
    #[error(transparent)]
    Rule(#[from] rules::RuleError),
    /// An alias is malformed.
    #[error(transparent)]
    Alias(#[from] plugins::AliasError),
    /// The session could not be opened.
    #[error(transparent)]
    Session(#[from] state::SessionError),
    /// A settings file is unusable.
    #[error(transparent)]
    Settings(#[from] config::SettingsError),
    /// The outgoing-HTTP settings are unusable (a proxy that is not an `http://` URL).
    #[error("network settings: {0}")]
    Net(#[from] sandbox::ProxyError),
    /// An MCP configuration file is unusable.
    #[error(transparent)]
    Mcp(#[from] mcp::McpConfigError),
    /// The compile cache could not be changed.
    #[error("compile cache: {path}: {source}")]
    Cache {
        /// The cache directory.
        path: std::path::PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}
