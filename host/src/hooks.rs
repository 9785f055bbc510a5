//! Hooks and monitors: executable extensions at the same trust tier as tools.
//!
//! A hook receives an event object in Claude Code's shape (`hook_event_name`, `tool_name`,
//! `tool_input`, `tool_use_id`, ...) and answers with Claude Code's hook output JSON (`continue`,
//! `stopReason`, `decision`, `hookSpecificOutput`, ...). Three kinds share one parser and one
//! runner: WASM hooks from plugin manifests (`[[hooks]]`, each call in a fresh sandbox holding only
//! the hook's grants), command hooks from trusted settings (run under the process sandbox, with
//! read access to the workspace and nothing else by default), and in-process hooks registered by
//! library users. Every matching hook runs in parallel; the pipeline stages aggregate the answers
//! deterministically (`pipeline/pre_hooks.rs`, `pipeline/post_hooks.rs`, `pipeline/decide.rs`).
//!
//! A hook that traps, times out, cannot start or answers malformed JSON fails *closed* for the policy
//! events (PreToolUse, PermissionRequest) unless it is declared `on-error = "ignore"`: a typo must
//! not silently disable a policy gate. For the other events a failure is reported and ignored.
//!
//! Monitors (`monitors.rs`) observe every lifecycle event on a bounded queue and never block the
//! pipeline; they may cancel an in-flight call or halt the session.

mod answer;
mod audit;
mod capped;
mod command;
mod examples;
mod load;
pub(crate) mod monitors;
mod run;
mod wasm;

use std::sync::Arc;
use std::time::Duration;

pub use answer::{
    AnswerError, Common, DeniedAnswer, PostAnswer, PreAnswer, RequestAnswer, SessionAnswer,
};
pub use load::{CommandGrants, ExtensionsReport, HookInfo, MonitorInfo, SkippedExtension};

pub use audit::{AuditError, AuditSummary, verify_audit_log};
pub use examples::{example_names, write_example};
pub use monitors::{MonitorStats, ProgressListener};

pub(crate) use capped::cap_text;
pub(crate) use command::CommandHook;
pub(crate) use load::{LoadInput, describe, load};
pub(crate) use monitors::{Controls, Monitors, monitor_input};
pub(crate) use run::{CallRef, HookEnv, Ran, Reply};
pub(crate) use wasm::WasmHook;

use janua_permissions::Rule;
use janua_types::{HookEvent, Matcher, OnError};

/// The default time one hook may take.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// Why an in-process hook failed: any error of the embedding program's own code.
pub type HookError = Box<dyn std::error::Error + Send + Sync>;

/// An in-process hook, for library users. Implementations must not block for long: they run on
/// the runtime's threads, unsandboxed (they are the embedding program's own code).
pub trait Hook: Send + Sync {
    /// A name for decision records and errors.
    fn name(&self) -> &str;
    /// Handles one event; `Err` is a hook failure (the call fails closed for policy events).
    fn handle(&self, event: &serde_json::Value) -> Result<serde_json::Value, HookError>;
}

/// A hook made from a name and a closure, for library users and tests.
pub struct FnHook<F> {
    name: String,
    handler: F,
}

impl<F> FnHook<F>
where
    F: Fn(&serde_json::Value) -> Result<serde_json::Value, HookError> + Send + Sync,
{
    /// Wraps `handler` as a hook called `name`.
    pub fn new(name: impl Into<String>, handler: F) -> Self {
        Self {
            name: name.into(),
            handler,
        }
    }
}

impl<F> Hook for FnHook<F>
where
    F: Fn(&serde_json::Value) -> Result<serde_json::Value, HookError> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn handle(&self, event: &serde_json::Value) -> Result<serde_json::Value, HookError> {
        (self.handler)(event)
    }
}

/// How a hook runs.
#[derive(Clone)]
pub(crate) enum Handler {
    /// The embedding program's own code.
    InProcess(Arc<dyn Hook>),
    /// A `hook-plugin` component, a fresh sandbox per event.
    Wasm(Arc<WasmHook>),
    /// A shell command under the process sandbox.
    Command(Arc<CommandHook>),
}

impl Handler {
    fn kind(&self) -> &'static str {
        match self {
            Handler::InProcess(_) => "in-process",
            Handler::Wasm(_) => "wasm",
            Handler::Command(_) => "command",
        }
    }
}

/// One loaded hook.
#[derive(Clone)]
pub(crate) struct HookEntry {
    /// Unique name, used in decisions, warnings and listings.
    pub(crate) name: String,
    /// Where it was configured, in words.
    pub(crate) source: String,
    pub(crate) events: Vec<HookEvent>,
    pub(crate) matcher: Matcher,
    /// The `if` rule, parsed.
    pub(crate) condition: Option<Rule>,
    pub(crate) timeout: Duration,
    pub(crate) on_error: OnError,
    /// What it may touch, in words.
    pub(crate) grants: String,
    pub(crate) handler: Handler,
}

/// The loaded hooks, in load order (which is also the order their contexts are reported in).
#[derive(Clone, Default)]
pub(crate) struct HookSet {
    entries: Vec<HookEntry>,
}

impl HookSet {
    pub(crate) fn push(&mut self, entry: HookEntry) {
        self.entries.push(entry);
    }

    pub(crate) fn entries(&self) -> &[HookEntry] {
        &self.entries
    }

    /// True when some hook handles `event`.
    pub(crate) fn handles(&self, event: HookEvent) -> bool {
        self.entries
            .iter()
            .any(|entry| entry.events.contains(&event))
    }
}
