//! Write warden tools in Rust.
//!
//! A tool is a type implementing [`Tool`]: its input is a struct deriving `Deserialize` and
//! `JsonSchema`, from which the SDK derives the JSON Schema the model sees and into which it
//! deserializes each call's input. [`export!`] turns one or more tools into a `warden:plugin`
//! component; build the crate as a `cdylib` for `wasm32-wasip2`.
//!
//! ```no_run
//! use warden_sdk::{Context, Output, Tool, ToolError};
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
//! warden_sdk::export!(Shout);
//! ```
#![warn(missing_docs)]

// Lets generated code name `::warden_sdk` both here and in tool crates.
extern crate self as warden_sdk;

use serde::de::DeserializeOwned;

pub use schemars::JsonSchema;

#[doc(hidden)]
pub mod __private;
pub mod files;
pub mod process;

/// The side-effect class of a tool; the host's permission engine and default mode read it.
pub use __private::bindings::warden::plugin::types::CapabilityClass;

/// Severity of a [`log`] line.
pub use __private::bindings::warden::plugin::host::LogLevel;

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

    /// Checks rules the schema cannot express; must have no side effects. Defaults to accepting.
    fn validate(input: &Self::Input, ctx: &Context) -> Result<(), String> {
        let _ = (input, ctx);
        Ok(())
    }

    /// Performs the call.
    fn call(input: Self::Input, ctx: &Context) -> Result<Output, ToolError>;
}

/// Writes a line to the host's log (never shown to the model).
pub fn log(level: LogLevel, message: &str) {
    __private::bindings::warden::plugin::host::log(level, message);
}

/// Reports progress on a long call.
pub fn progress(message: &str) {
    __private::bindings::warden::plugin::host::progress(message);
}

/// True once the host cancelled the call; long-running tools should check it and stop early.
pub fn cancelled() -> bool {
    __private::bindings::warden::plugin::host::cancelled()
}

/// Exports the listed [`Tool`] types as one `warden:plugin/tool-plugin` component.
///
/// Use it once per crate: `warden_sdk::export!(Read, Write);`.
#[macro_export]
macro_rules! export {
    ($($tool:ty),+ $(,)?) => {
        #[doc(hidden)]
        struct __WardenToolComponent;

        impl $crate::__private::Guest for __WardenToolComponent {
            fn describe() -> ::std::vec::Vec<$crate::__private::ToolSpec> {
                ::std::vec![$($crate::__private::spec::<$tool>()),+]
            }

            fn validate_input(
                tool: ::std::string::String,
                input: ::std::string::String,
                ctx: $crate::__private::CallContext,
            ) -> ::std::result::Result<(), ::std::string::String> {
                $(
                    if tool == <$tool as $crate::Tool>::NAME {
                        return $crate::__private::validate::<$tool>(&input, ctx);
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

        $crate::__private::export_component!(__WardenToolComponent);
    };
}
