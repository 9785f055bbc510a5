//! janua's vocabulary: the types every layer of the runtime speaks, and nothing that acts.
//!
//! Architecture invariant: this crate depends on small leaf crates only (`serde`, `serde_json`,
//! `tempfile`, `thiserror`, `url`, `regex`). It knows no rule, no sandbox, no engine and no
//! protocol; every other janua crate may depend on
//! it, and it on none of them. A type belongs here when two sibling crates (permissions, confine,
//! sandbox, mcp) or a crate and the runtime above it both need it.
#![warn(missing_docs)]

mod block;
mod checks;
mod enforce;
mod error_kind;
mod helpers;
mod hook_event;
mod matcher;
mod tool;
mod url_host;
pub mod wildcard;

pub use block::{ContentBlock, ImageSource, ResultContent, ToolResultBlock};
pub use checks::{HiddenPaths, HostCheck, HostRefused};
pub use enforce::{
    Enforceable, PROTECTED_DIRECTORIES, PROTECTED_FILES, Reach, WALK_LIMIT, other_names, walk,
};
pub use error_kind::ErrorKind;
pub use helpers::{hex, unix_ms, write_atomically, write_whole};
pub use hook_event::{HookEvent, MAX_QUEUE, MONITOR_EVENTS, OnError};
pub use matcher::{Matcher, MatcherError};
pub use tool::{AGENT_TOOL, CapabilityClass, DeferredCall, ToolSpec, ToolUse};
pub use url_host::url_host;
