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

pub use janua_types::{
    AGENT_TOOL, CapabilityClass, ContentBlock, DeferredCall, ErrorKind, HookEvent, ImageSource,
    Matcher, MatcherError, OnError, ResultContent, ToolResultBlock, ToolSpec, ToolUse,
};

pub use authoring::{
    ApprovalError, Finding, PluginReport, Severity, approve_plugin, check_plugin, component_digest,
    manifest_components, wit_version,
};
pub use delegation::{DEFAULT_MAX_DELEGATION_DEPTH, ForkError, Narrowing};
pub use hooks::{
    AuditError, AuditSummary, CommandGrants, Common, DEFAULT_HOOK_TIMEOUT, DeniedAnswer,
    ExtensionsReport, FnHook, Hook, HookInfo, MonitorInfo, MonitorStats, PostAnswer, PreAnswer,
    ProgressListener, RequestAnswer, SessionAnswer, SkippedExtension, example_names,
    verify_audit_log, write_example,
};
pub use janua_confine::{KernelSupport, ProcessSandbox, close_inherited_descriptors};
pub use janua_mcp::{
    DEFAULT_CALL_TIMEOUT as DEFAULT_MCP_CALL_TIMEOUT,
    DEFAULT_OUTPUT_TOKENS as DEFAULT_MCP_OUTPUT_TOKENS,
    DEFAULT_STARTUP_TIMEOUT as DEFAULT_MCP_STARTUP_TIMEOUT, McpConfigError, McpServerPolicy,
};
pub use janua_permissions::{
    DecidedBy, Decision, HookVote, NoPrompter, PermissionMode, PermissionRequest, Policy,
    PromptAnswer, Prompter, Rule, RuleContext, RuleError, RuleKind, RuleSource, TtyPrompter,
    UnknownMode, Verdict, VoteKind, split_command, split_rule_list,
};
pub use janua_sandbox::{
    CacheInfo, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MEMORY_BYTES, DEFAULT_OUTPUT_CHARS,
    DEFAULT_REQUEST_TIMEOUT, DEFAULT_STDIO_BYTES, DEFAULT_TIMEOUT, DeclaredLimits, EnvGrant,
    FsAccess, FsGrant, Grants, Limits, MAX_MEMORY_BYTES, MAX_OUTPUT_CHARS, MIN_OUTPUT_CHARS,
    NetGrant, NetGrantError, NetSettings, ProcessGrant, ProxySettings, SandboxError, find_browser,
};
pub use output::{Normalization, Truncation};
pub use pipeline::{
    AgentError, AgentReport, AgentRequest, AgentRunner, AliasHop, BatchDispatch, CheckReport,
    Coercion, CoercionRule, Dispatch, Failure, Outcome, SubSession,
};
pub use protocol::{
    DefinitionFormat, HttpServe, McpServeOptions, StreamOptions, serve_mcp, serve_mcp_http,
    serve_stream, tool_definitions,
};
pub use registry::{
    Alias, AliasError, ManifestError, PluginApproval, RegistryError, ToolSelection, ToolSource,
};
pub use runtime::{
    BatchOptions, CommandRunner, DEFAULT_MAX_CONCURRENCY, PluginReload, Runtime, RuntimeConfig,
    SessionEndReport, SessionStartReport, ToolInfo, cache_info, clear_cache, default_cache_dir,
};
pub use session::{
    Checkpoint, Checkpoints, DEFAULT_SESSION_ID, FileState, MAX_CHECKPOINTS, RewindReport, Session,
    SessionError, Skipped,
};
pub use settings::{
    HookSetting, PermissionSettings, RuleEntry, Settings, SettingsError, SettingsInput,
    user_settings_path,
};

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
    Registry(#[from] RegistryError),
    /// The sandbox could not be created.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// A permission rule is malformed.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// An alias is malformed.
    #[error(transparent)]
    Alias(#[from] AliasError),
    /// The session could not be opened.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A settings file is unusable.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The outgoing-HTTP settings are unusable (a proxy that is not an `http://` URL).
    #[error("network settings: {0}")]
    Net(String),
    /// An MCP configuration file is unusable.
    #[error(transparent)]
    Mcp(#[from] McpConfigError),
    /// The compile cache could not be changed.
    #[error("compile cache: {path}: {source}")]
    Cache {
        /// The cache directory.
        path: std::path::PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}
