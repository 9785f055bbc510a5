//! `janua:plugin/browser`: the guest's calls handed to the session's browser through the call's
//! link (its page, cancel flag and deadline); the service itself is `browser.rs`.

use super::store::CallState;
use crate::bindings::{BrowserHost, WitBrowserError, WitPageInfo};

impl BrowserHost for CallState {
    fn open(&mut self, url: String, timeout_ms: u64) -> Result<WitPageInfo, WitBrowserError> {
        self.browser_link()
            .open(&url, timeout_ms)
            .map(|info| WitPageInfo {
                url: info.url,
                title: info.title,
                status: info.status,
            })
            .map_err(wit_browser_error)
    }

    fn wait_for_selector(
        &mut self,
        selector: String,
        timeout_ms: u64,
    ) -> Result<(), WitBrowserError> {
        self.browser_link()
            .wait_for_selector(&selector, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn wait_for_network_idle(
        &mut self,
        idle_ms: u64,
        timeout_ms: u64,
    ) -> Result<(), WitBrowserError> {
        self.browser_link()
            .wait_for_network_idle(idle_ms, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn text(
        &mut self,
        selector: Option<String>,
        timeout_ms: u64,
    ) -> Result<String, WitBrowserError> {
        self.browser_link()
            .text(selector.as_deref(), timeout_ms)
            .map_err(wit_browser_error)
    }

    fn accessibility_tree(&mut self, timeout_ms: u64) -> Result<String, WitBrowserError> {
        self.browser_link()
            .accessibility_tree(timeout_ms)
            .map_err(wit_browser_error)
    }

    fn click(&mut self, selector: String, timeout_ms: u64) -> Result<(), WitBrowserError> {
        self.browser_link()
            .click(&selector, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn type_text(
        &mut self,
        selector: String,
        text: String,
        timeout_ms: u64,
    ) -> Result<(), WitBrowserError> {
        self.browser_link()
            .type_text(&selector, &text, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn evaluate(&mut self, expression: String, timeout_ms: u64) -> Result<String, WitBrowserError> {
        self.browser_link()
            .evaluate(&expression, timeout_ms)
            .map_err(wit_browser_error)
    }

    fn screenshot(&mut self, timeout_ms: u64) -> Result<Vec<u8>, WitBrowserError> {
        self.browser_link()
            .screenshot(timeout_ms)
            .map_err(wit_browser_error)
    }

    fn refused(&mut self) -> Vec<String> {
        self.browser_link().refused()
    }
}

fn wit_browser_error(error: crate::browser::BrowserError) -> WitBrowserError {
    use crate::browser::BrowserError;
    match error {
        BrowserError::NotGranted(message) => WitBrowserError::NotGranted(message),
        BrowserError::Unavailable(message) => WitBrowserError::Unavailable(message),
        BrowserError::Blocked(message) => WitBrowserError::Blocked(message),
        BrowserError::Timeout(message) => WitBrowserError::Timeout(message),
        BrowserError::NoElement(message) => WitBrowserError::NoElement(message),
        BrowserError::ScriptError(message) => WitBrowserError::ScriptError(message),
        BrowserError::NoPage(message) => WitBrowserError::NoPage(message),
        BrowserError::Failed(message) => WitBrowserError::Failed(message),
    }
}

impl CallState {
    fn browser_link(&mut self) -> crate::browser::BrowserLink<'_> {
        crate::browser::BrowserLink {
            access: self.browser.as_mut(),
            cancel: &self.cancel,
            deadline: self.deadline,
        }
    }
}
