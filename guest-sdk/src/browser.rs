//! Drive a headless browser page through the host's `browser` interface. Only components whose
//! manifest says `browser = true` may use it; every request the page makes (navigations,
//! redirects, subresources) must pass the component's `net` grants and the permission rules, and
//! `file://` is limited to the workspace. A call's page is opened by the first [`open`] and
//! closed when the call ends; each function waits at most `timeout_ms` and never past the call's
//! deadline.

pub use crate::__private::bindings::janua::plugin::browser::{BrowserError, PageInfo};

use crate::__private::bindings::janua::plugin::browser as host;

/// Navigates the call's page to `url` (opening it first) and waits for its load event.
pub fn open(url: &str, timeout_ms: u64) -> Result<PageInfo, BrowserError> {
    host::open(url, timeout_ms)
}

/// Waits until an element matches the CSS `selector`.
pub fn wait_for_selector(selector: &str, timeout_ms: u64) -> Result<(), BrowserError> {
    host::wait_for_selector(selector, timeout_ms)
}

/// Waits until no request has been in flight for `idle_ms`.
pub fn wait_for_network_idle(idle_ms: u64, timeout_ms: u64) -> Result<(), BrowserError> {
    host::wait_for_network_idle(idle_ms, timeout_ms)
}

/// The rendered text of the first element matching `selector`, or of the whole body.
pub fn text(selector: Option<&str>, timeout_ms: u64) -> Result<String, BrowserError> {
    host::text(selector, timeout_ms)
}

/// The page's accessibility tree, one `role "name"` line per node, indented by depth.
pub fn accessibility_tree(timeout_ms: u64) -> Result<String, BrowserError> {
    host::accessibility_tree(timeout_ms)
}

/// Clicks the first element matching `selector` (waiting for it to appear).
pub fn click(selector: &str, timeout_ms: u64) -> Result<(), BrowserError> {
    host::click(selector, timeout_ms)
}

/// Focuses the first element matching `selector` and types `text` into it.
pub fn type_text(selector: &str, text: &str, timeout_ms: u64) -> Result<(), BrowserError> {
    host::type_text(selector, text, timeout_ms)
}

/// Evaluates a side-effect-free JavaScript expression and returns its value as JSON.
pub fn evaluate(expression: &str, timeout_ms: u64) -> Result<serde_json::Value, BrowserError> {
    let text = host::evaluate(expression, timeout_ms)?;
    Ok(serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)))
}

/// A PNG screenshot of the viewport.
pub fn screenshot(timeout_ms: u64) -> Result<Vec<u8>, BrowserError> {
    host::screenshot(timeout_ms)
}

/// What the network policy refused during this call (`URL: reason`, the first few).
pub fn refused() -> Vec<String> {
    host::refused()
}

impl BrowserError {
    /// A stable error kind for a tool result.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotGranted(_) | Self::Blocked(_) => "permission_denied",
            Self::Unavailable(_) => "browser_unavailable",
            Self::Timeout(_) => "timeout",
            Self::NoElement(_) => "no_element",
            Self::ScriptError(_) => "script_error",
            Self::NoPage(_) => "no_page",
            Self::Failed(_) => "browser_failed",
        }
    }

    /// The host's explanation.
    pub fn message(&self) -> &str {
        match self {
            Self::NotGranted(message)
            | Self::Unavailable(message)
            | Self::Blocked(message)
            | Self::Timeout(message)
            | Self::NoElement(message)
            | Self::ScriptError(message)
            | Self::NoPage(message)
            | Self::Failed(message) => message,
        }
    }
}

impl From<BrowserError> for crate::ToolError {
    fn from(error: BrowserError) -> Self {
        crate::ToolError::new(error.kind(), error.message())
    }
}
