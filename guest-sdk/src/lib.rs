//! Write janua tools, hooks and monitors in Rust.
//!
//! A tool is a type implementing [`Tool`]: its input is a struct deriving `Deserialize` and
//! `JsonSchema`, from which the SDK derives the JSON Schema the model sees and into which it
//! deserializes each call's input. [`export!`] turns one or more tools into a `janua:plugin`
//! component; build the crate as a `cdylib` for `wasm32-wasip2`.
//!
//! A hook ([`hook::Hook`], exported with [`export_hook!`]) is policy code the host runs at
//! lifecycle events, Claude Code style: it can allow, deny or rewrite a call before it runs and
//! add context after. A monitor ([`monitor::Monitor`], exported with [`export_monitor!`]) observes
//! every event of a session and may cancel a call or halt the session. Each is its own component:
//! one crate exports tools, a hook or a monitor. [`log`] and [`progress`] work in all three.
//!
//! # Tools
//!
//! ```no_run
//! use janua_sdk::{Context, Output, Tool, ToolError};
//!
//! /// Input of the `Shout` tool.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct ShoutInput {
//!     /// Text to shout.
//!     text: String,
//! }
//!
//! struct Shout;
//!
//! impl Tool for Shout {
//!     type Input = ShoutInput;
//!     const NAME: &'static str = "Shout";
//!     const DESCRIPTION: &'static str = "Returns the text in upper case.";
//!     const READ_ONLY: bool = true;
//!
//!     fn call(input: ShoutInput, _ctx: &Context) -> Result<Output, ToolError> {
//!         if input.text.is_empty() {
//!             return Err(ToolError::new("empty", "nothing to shout"));
//!         }
//!         Ok(Output::text(input.text.to_uppercase()))
//!     }
//! }
//!
//! janua_sdk::export!(Shout);
//! ```
//!
//! # Hooks
//!
//! A hook gets the event as JSON and answers JSON; [`hook`] builds the usual answers. Deserialize
//! the fields you need into your own types; the host sends more than any one hook reads.
//!
//! ```no_run
//! use serde::Deserialize;
//! use serde_json::Value;
//! use janua_sdk::hook::{self, Hook};
//!
//! /// The fields of a Bash `PreToolUse` event this hook reads.
//! #[derive(Deserialize)]
//! struct Event {
//!     tool_input: BashInput,
//! }
//!
//! #[derive(Deserialize)]
//! struct BashInput {
//!     command: String,
//! }
//!
//! /// Refuses every Bash command that mentions `shutdown`.
//! struct NoShutdown;
//!
//! impl Hook for NoShutdown {
//!     fn handle(event: Value) -> Result<Value, String> {
//!         let event: Event = serde_json::from_value(event).map_err(|error| error.to_string())?;
//!         if event.tool_input.command.contains("shutdown") {
//!             return Ok(hook::deny("shutting the machine down is not allowed"));
//!         }
//!         Ok(hook::no_objection())
//!     }
//! }
//!
//! janua_sdk::export_hook!(NoShutdown);
//! ```
//!
//! # Monitors
//!
//! A monitor gets every event of the session in order and answers [`monitor::ok`],
//! [`monitor::cancel`] or [`monitor::halt`]. Its instance lives for the session, so it may keep
//! state in statics.
//!
//! ```no_run
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! use serde::Deserialize;
//! use serde_json::Value;
//! use janua_sdk::monitor::{self, Monitor};
//!
//! /// The field of every event this monitor reads.
//! #[derive(Deserialize)]
//! struct Event {
//!     event: String,
//! }
//!
//! /// Stops the session when the model starts its 101st tool call.
//! struct Budget;
//!
//! static STARTED: AtomicU64 = AtomicU64::new(0);
//!
//! impl Monitor for Budget {
//!     fn observe(event: Value) -> Result<Value, String> {
//!         let event: Event = serde_json::from_value(event).map_err(|error| error.to_string())?;
//!         if event.event == "tool_started" && STARTED.fetch_add(1, Ordering::Relaxed) >= 100 {
//!             return Ok(monitor::halt("the session used its budget of 100 tool calls"));
//!         }
//!         Ok(monitor::ok())
//!     }
//! }
//!
//! janua_sdk::export_monitor!(Budget);
//! ```
#![warn(missing_docs)]

// Lets generated code name `::janua_sdk` both here and in tool crates.
extern crate self as janua_sdk;

use serde::de::DeserializeOwned;

pub use schemars::JsonSchema;

#[doc(hidden)]
pub mod __private;
pub mod browser;
pub mod delegate;
pub mod files;
pub mod hook;
pub mod monitor;
pub mod process;

/// The side-effect class of a tool; the host's permission engine and default mode read it.
pub use __private::bindings::janua::plugin::types::CapabilityClass;

/// Severity of a [`log`] line.
pub use __private::bindings::janua::plugin::host::LogLevel;

/// Facts about the current call.
#[derive(Debug, Clone)]
pub struct Context {
    /// The `tool_use` id of the call.
    pub call_id: String,
    /// The session the call belongs to.
    pub session_id: String,
    /// Absolute workspace directory; relative paths in inputs are relative to it.
    pub cwd: String,
    /// Wall-clock budget of the call in milliseconds.
    pub deadline_ms: u64,
    /// The plugin's persistent data directory, when granted (`${PLUGIN_DATA}`).
    pub plugin_data: Option<String>,
    /// A scratch directory for this call only, when granted (`${TMP}`).
    pub tmp: Option<String>,
}

impl Context {
    /// Resolves `path` against the workspace (absolute paths are kept, relative ones are joined) and
    /// normalizes it lexically with [`files::normalize`], so one file has one name in the session.
    pub fn resolve_path(&self, path: &str) -> String {
        if path.starts_with('/') {
            files::normalize(path)
        } else {
            files::normalize(&format!("{}/{}", self.cwd.trim_end_matches('/'), path))
        }
    }
}

/// One part of a tool's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// A JSON value, shown to the model as JSON text.
    Json(serde_json::Value),
    /// An encoded image.
    Image {
        /// IANA media type, e.g. `image/png`.
        media_type: String,
        /// The encoded bytes.
        data: Vec<u8>,
    },
    /// A reference to a file.
    File {
        /// Absolute path as the guest sees it.
        path: String,
        /// IANA media type when known.
        media_type: Option<String>,
    },
}

/// What a successful call returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// Content parts, in the order the model sees them.
    pub content: Vec<Content>,
    /// Structured result for hooks and library callers.
    pub structured: Option<serde_json::Value>,
}

impl Output {
    /// An output holding one text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text(text.into())],
            structured: None,
        }
    }

    /// Adds a content part.
    pub fn with_content(mut self, content: Content) -> Self {
        self.content.push(content);
        self
    }

    /// Sets the structured result.
    pub fn with_structured(mut self, structured: serde_json::Value) -> Self {
        self.structured = Some(structured);
        self
    }
}

/// A failure the tool reports to the model: a stable kind plus a message saying how to fix the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// Stable machine-readable kind, e.g. `not_found`.
    pub kind: String,
    /// Message for the model.
    pub message: String,
}

impl ToolError {
    /// Creates an error of `kind` with `message`.
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}

/// A tool a component exports. Implement it, then name the type in [`export!`].
pub trait Tool {
    /// The typed input; its `JsonSchema` becomes the tool's input schema.
    type Input: DeserializeOwned + JsonSchema;
    /// Canonical name (`^[a-zA-Z0-9_-]{1,64}$`).
    const NAME: &'static str;
    /// Description shown to the model.
    const DESCRIPTION: &'static str;
    /// Side-effect class; defaults to [`CapabilityClass::Read`].
    const CLASS: CapabilityClass = CapabilityClass::Read;
    /// True when the tool never mutates anything; defaults to false (fail closed).
    const READ_ONLY: bool = false;
    /// True when calls may run in parallel with other concurrency-safe calls; defaults to false.
    const CONCURRENCY_SAFE: bool = false;
    /// The input field permission-rule specifiers match (a path for read and write tools).
    const RULE_FIELD: Option<&'static str> = None;

    /// Performs the call.
    fn call(input: Self::Input, ctx: &Context) -> Result<Output, ToolError>;
}

/// Checks of a [`Tool`]'s input that its schema cannot express (a file the model must have read
/// first, a pattern that must compile). The host runs them after the schema check and before hooks
/// and the permission decision, so nobody is asked to approve a call that will fail.
///
/// Implement it only when there is something to check: [`export!`] tells the host which tools
/// have it, and a tool without it costs no `validate-input` instance per call.
pub trait Validate: Tool {
    /// Checks rules the schema cannot express; must have no side effects.
    fn validate(input: &Self::Input, ctx: &Context) -> Result<(), String>;
}

/// Writes a line to the host's log (never shown to the model).
pub fn log(level: LogLevel, message: &str) {
    __private::bindings::janua::plugin::host::log(level, message);
}

/// Reports progress on a long call.
pub fn progress(message: &str) {
    __private::bindings::janua::plugin::host::progress(message);
}

/// True once the host cancelled the call; long-running tools should check it and stop early.
pub fn cancelled() -> bool {
    __private::bindings::janua::plugin::host::cancelled()
}

/// Exports the listed [`Tool`] types as one `janua:plugin/tool-plugin` component.
///
/// Use it once per crate: `janua_sdk::export!(Read, Write);`.
#[macro_export]
macro_rules! export {
    ($($tool:ty),+ $(,)?) => {
        #[doc(hidden)]
        struct __JanuaToolComponent;

        impl $crate::__private::Guest for __JanuaToolComponent {
            fn describe() -> ::std::vec::Vec<$crate::__private::ToolSpec> {
                #[allow(unused_imports)]
                use $crate::__private::{Unvalidated as _, Validated as _};
                ::std::vec![$($crate::__private::spec::<$tool>(
                    (&&$crate::__private::Probe::<$tool>::new()).validates()
                )),+]
            }

            fn validate_input(
                tool: ::std::string::String,
                input: ::std::string::String,
                ctx: $crate::__private::CallContext,
            ) -> ::std::result::Result<(), ::std::string::String> {
                #[allow(unused_imports)]
                use $crate::__private::{Unvalidated as _, Validated as _};
                $(
                    if tool == <$tool as $crate::Tool>::NAME {
                        return (&&$crate::__private::Probe::<$tool>::new()).validate(&input, ctx);
                    }
                )+
                ::std::result::Result::Err($crate::__private::unknown_tool(&tool))
            }

            fn call(
                tool: ::std::string::String,
                input: ::std::string::String,
                ctx: $crate::__private::CallContext,
            ) -> ::std::result::Result<$crate::__private::ToolOutput, $crate::__private::ToolErrorRecord> {
                $(
                    if tool == <$tool as $crate::Tool>::NAME {
                        return $crate::__private::call::<$tool>(&input, ctx);
                    }
                )+
                ::std::result::Result::Err($crate::__private::ToolErrorRecord {
                    kind: ::std::string::String::from("unknown_tool"),
                    message: $crate::__private::unknown_tool(&tool),
                })
            }
        }

        $crate::__private::export_component!(__JanuaToolComponent);
    };
}

/// Exports the [`hook::Hook`] type `$hook` as a `janua:plugin/hook-plugin` component.
///
/// Use it once per crate: `janua_sdk::export_hook!(BashGuard);`. The event text is parsed before
/// [`hook::Hook::handle`] runs (an event that is not JSON becomes the hook's `err`) and its answer
/// is serialized.
#[macro_export]
macro_rules! export_hook {
    ($hook:ty $(,)?) => {
        #[doc(hidden)]
        struct __JanuaHookComponent;

        impl $crate::__private::HookGuest for __JanuaHookComponent {
            fn handle(
                event: ::std::string::String,
            ) -> ::std::result::Result<::std::string::String, ::std::string::String> {
                <$hook as $crate::hook::Hook>::handle_text(event)
            }
        }

        $crate::__private::export_hook_component!(__JanuaHookComponent);
    };
}

/// Exports the [`monitor::Monitor`] type `$monitor` as a `janua:plugin/monitor-plugin` component.
///
/// Use it once per crate: `janua_sdk::export_monitor!(Audit);`. The event text is parsed before
/// [`monitor::Monitor::observe`] runs (an event that is not JSON becomes the monitor's `err`) and
/// its answer is serialized.
#[macro_export]
macro_rules! export_monitor {
    ($monitor:ty $(,)?) => {
        #[doc(hidden)]
        struct __JanuaMonitorComponent;

        impl $crate::__private::MonitorGuest for __JanuaMonitorComponent {
            fn observe(
                event: ::std::string::String,
            ) -> ::std::result::Result<::std::string::String, ::std::string::String> {
                $crate::__private::observe::<$monitor>(&event)
            }
        }

        $crate::__private::export_monitor_component!(__JanuaMonitorComponent);
    };
}
