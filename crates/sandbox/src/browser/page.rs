//! One call's page: a fresh browser context (its own cookies and storage) with one tab, every
//! request of which the interceptor answers, and the operations the `browser` interface offers on
//! it. Each operation takes the instant it must be done by; waits also give up on cancellation.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::BrowserError;
use super::cdp::{CdpError, Connection};
use super::intercept::{
    FileScope, Interceptor, PageStatus, Route, auto_attach, interception, route,
};
use super::launch::VIEWPORT;
use crate::http::NetPolicy;

/// How often a wait for a selector looks again.
const POLL: Duration = Duration::from_millis(100);
/// Most characters of page text returned (the host's output budget cuts far earlier; this keeps
/// the protocol message small).
const MAX_TEXT_CHARS: usize = 1_000_000;
/// Most accessibility-tree lines returned.
const MAX_TREE_LINES: usize = 2000;
/// Accessibility roles that only group other nodes; their children are shown in their place
/// when they have no name.
const STRUCTURAL_ROLES: &[&str] = &["generic", "none", "LineBreak"];
/// Roles never shown: a text box's line fragments repeat its text.
const HIDDEN_ROLES: &[&str] = &["InlineTextBox"];

/// What a page shows after a navigation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PageInfo {
    /// The URL it ended on.
    pub url: String,
    /// The document title.
    pub title: String,
    /// The main document's HTTP status.
    pub status: Option<u16>,
}

/// An open page. Dropping it closes its context and stops answering its requests.
pub(super) struct Page {
    connection: Arc<Connection>,
    /// Keeps the browser running while the page is open.
    _browser: Arc<super::RunningBrowser>,
    session: String,
    context: String,
    status: Arc<PageStatus>,
    policy: Option<Arc<NetPolicy>>,
    files: FileScope,
    interceptor: tokio::task::JoinHandle<()>,
    /// The protocol sessions of the page's workers and popups.
    children: Arc<std::sync::Mutex<Vec<String>>>,
}

/// What opening a page needs besides the browser.
pub(super) struct PageSetup<'a> {
    pub(super) runtime: &'a tokio::runtime::Handle,
    pub(super) policy: Option<Arc<NetPolicy>>,
    pub(super) files: FileScope,
    /// The call's deadline: requests end by then.
    pub(super) call_deadline: Instant,
}

impl Page {
    /// Opens a blank page in a fresh context of `browser`, answering its requests from now on.
    pub(super) fn open(
        browser: Arc<super::RunningBrowser>,
        setup: PageSetup<'_>,
        until: Instant,
    ) -> Result<Self, BrowserError> {
        let connection = Arc::clone(&browser.connection);
        let call = |method: &str, params: Value| {
            connection
                .call(None, method, params, until)
                .map_err(|error| {
                    if matches!(error, CdpError::Timeout(_)) {
                        // A browser that cannot make a tab in time is replaced next call.
                        browser
                            .stuck
                            .store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    unavailable(&error)
                })
        };
        let context = string_field(
            &call(
                "Target.createBrowserContext",
                json!({"disposeOnDetach": true}),
            )?,
            "browserContextId",
        )?;
        let dispose = |connection: &Connection| {
            let _ = connection.send(
                None,
                "Target.disposeBrowserContext",
                json!({"browserContextId": context}),
            );
        };
        let opened = (|| {
            call(
                "Browser.setDownloadBehavior",
                json!({"behavior": "deny", "browserContextId": context}),
            )?;
            let target = string_field(
                &call(
                    "Target.createTarget",
                    json!({"url": "about:blank", "browserContextId": context}),
                )?,
                "targetId",
            )?;
            let session = string_field(
                &call(
                    "Target.attachToTarget",
                    json!({"targetId": target, "flatten": true}),
                )?,
                "sessionId",
            )?;
            Ok::<_, BrowserError>((target, session))
        })();
        let (target, session) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                dispose(&connection);
                return Err(error);
            }
        };
        let status = PageStatus::new();
        let children = Arc::default();
        let events = connection.listen(&session);
        let interceptor = setup.runtime.spawn(
            Interceptor {
                connection: Arc::clone(&connection),
                session: session.clone(),
                main_frame: target,
                status: Arc::clone(&status),
                policy: setup.policy.clone(),
                files: setup.files.clone(),
                deadline: setup.call_deadline,
                children: Arc::clone(&children),
            }
            .run(events),
        );
        let page = Self {
            connection,
            _browser: browser,
            session,
            context,
            status,
            policy: setup.policy,
            files: setup.files,
            interceptor,
            children,
        };
        let (width, height) = VIEWPORT;
        page.command("Fetch.enable", interception(), until)?;
        page.command("Target.setAutoAttach", auto_attach(), until)?;
        page.command("Page.enable", json!({}), until)?;
        page.command(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
            until,
        )?;
        Ok(page)
    }

    /// What the network policy refused on this page so far.
    pub(super) fn refused(&self) -> Vec<String> {
        self.status.lock().refused.clone()
    }

    /// Navigates to `url` and waits for the load event.
    pub(super) fn navigate(
        &self,
        url: &str,
        until: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Result<PageInfo, BrowserError> {
        // The same verdict the interceptor would give, now, so the model reads the reason.
        match route(url, &self.files) {
            Route::Refuse(reason) => return Err(BrowserError::Blocked(format!("{url}: {reason}"))),
            Route::Network(uri) => {
                let checked = match &self.policy {
                    None => Err(crate::http::NetRefused::NoGrantToOpen),
                    Some(policy) => policy.check(&uri).map(|_| ()),
                };
                if let Err(reason) = checked {
                    return Err(BrowserError::Blocked(format!("{url}: {reason}")));
                }
            }
            Route::File(_) | Route::Browser => {}
        }
        {
            let mut status = self.status.lock();
            status.loaded = false;
            status.main_refusal = None;
            status.main_status = None;
        }
        let navigated = self
            .connection
            .call(
                Some(&self.session),
                "Page.navigate",
                json!({"url": url}),
                until,
            )
            .map_err(|error| match error {
                CdpError::Timeout(_) => BrowserError::Timeout(format!(
                    "{url} did not answer in time (the browser was still waiting for the page)"
                )),
                other => unavailable(&other),
            })?;
        if let Some(error) = navigated.get("errorText").and_then(Value::as_str) {
            if let Some(reason) = self.status.lock().main_refusal.clone() {
                return Err(BrowserError::Blocked(format!("{url}: {reason}")));
            }
            return Err(BrowserError::Failed(format!(
                "the browser could not load {url}: {error}"
            )));
        }
        let loaded = self
            .status
            .wait_until(until, stop, &|status| status.loaded || status.crashed);
        self.check_crash()?;
        if !loaded {
            return Err(BrowserError::Timeout(format!(
                "{url} did not finish loading in time"
            )));
        }
        let info = self.script("({url: location.href, title: document.title})", until)?;
        Ok(PageInfo {
            url: info
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or(url)
                .to_owned(),
            title: info
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            status: self.status.lock().main_status,
        })
    }

    /// Waits until an element matches `selector`.
    pub(super) fn wait_for_selector(
        &self,
        selector: &str,
        until: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), BrowserError> {
        loop {
            match self.on_element(selector, "return {found: true};", until) {
                Ok(_) => return Ok(()),
                Err(BrowserError::NoElement(message)) if !message.contains("not a valid") => {
                    if Instant::now() + POLL >= until {
                        return Err(BrowserError::Timeout(format!(
                            "no element matched {selector:?} in time"
                        )));
                    }
                    if stop() {
                        return Err(BrowserError::Failed("the call was cancelled".to_owned()));
                    }
                    std::thread::sleep(POLL);
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Waits until no request has been in flight for `idle`.
    pub(super) fn wait_for_network_idle(
        &self,
        idle: Duration,
        until: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), BrowserError> {
        let idle_now = self.status.wait_until(until, stop, &|status| {
            status.crashed || (status.in_flight == 0 && status.last_activity.elapsed() >= idle)
        });
        self.check_crash()?;
        if idle_now {
            Ok(())
        } else {
            let in_flight = self.status.lock().in_flight;
            Err(BrowserError::Timeout(format!(
                "the network was not idle in time ({in_flight} requests still in flight)"
            )))
        }
    }

    /// The rendered text of the first match of `selector`, or of the body.
    pub(super) fn text(
        &self,
        selector: Option<&str>,
        until: Instant,
    ) -> Result<String, BrowserError> {
        let value = match selector {
            Some(selector) => self.on_element(
                selector,
                &format!(
                    "return {{text: String(el.innerText ?? el.textContent ?? '').slice(0, {MAX_TEXT_CHARS})}};"
                ),
                until,
            )?,
            None => self.script(
                &format!(
                    "({{text: document.body ? document.body.innerText.slice(0, {MAX_TEXT_CHARS}) : ''}})"
                ),
                until,
            )?,
        };
        Ok(value
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned())
    }

    /// The accessibility tree as indented `role "name"` lines.
    pub(super) fn accessibility_tree(&self, until: Instant) -> Result<String, BrowserError> {
        self.command("Accessibility.enable", json!({}), until)?;
        let tree = self.command("Accessibility.getFullAXTree", json!({}), until)?;
        let nodes = tree
            .get("nodes")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(format_tree(&nodes))
    }

    /// Clicks the centre of the first match of `selector`.
    pub(super) fn click(
        &self,
        selector: &str,
        until: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), BrowserError> {
        self.wait_for_selector(selector, until, stop)?;
        let (x, y) = self.centre(selector, until)?;
        for (kind, buttons) in [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)] {
            let mut event = json!({"type": kind, "x": x, "y": y, "buttons": buttons});
            if kind != "mouseMoved" {
                event["button"] = json!("left");
                event["clickCount"] = json!(1);
            }
            self.command("Input.dispatchMouseEvent", event, until)?;
        }
        Ok(())
    }

    /// Focuses the first match of `selector` and types `text` into it.
    pub(super) fn type_text(
        &self,
        selector: &str,
        text: &str,
        until: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), BrowserError> {
        self.wait_for_selector(selector, until, stop)?;
        let focused = self.on_element(
            selector,
            "el.focus(); \
             if (typeof el.value === 'string' && typeof el.setSelectionRange === 'function') { \
               try { el.setSelectionRange(el.value.length, el.value.length); } catch (e) {} } \
             return {focused: document.activeElement === el};",
            until,
        )?;
        if focused.get("focused") != Some(&Value::Bool(true)) {
            return Err(BrowserError::NoElement(format!(
                "the element matching {selector:?} cannot take the keyboard focus"
            )));
        }
        self.command("Input.insertText", json!({"text": text}), until)?;
        Ok(())
    }

    /// Evaluates `expression` with V8's side-effect check on and returns its value.
    pub(super) fn evaluate(&self, expression: &str, until: Instant) -> Result<Value, BrowserError> {
        let millis = until
            .saturating_duration_since(Instant::now())
            .as_millis()
            .max(1);
        let answer = self.command(
            "Runtime.evaluate",
            json!({
                "expression": expression,
                "returnByValue": true,
                "throwOnSideEffect": true,
                "timeout": u64::try_from(millis).unwrap_or(u64::MAX),
            }),
            until,
        )?;
        if let Some(details) = answer.get("exceptionDetails") {
            let message = exception_text(details);
            return Err(BrowserError::ScriptError(
                if message.contains("side-effect") {
                    format!(
                        "the expression would change the page ({message}); evaluate is read-only: use click and type actions to change it"
                    )
                } else {
                    message
                },
            ));
        }
        Ok(result_value(&answer))
    }

    /// A PNG screenshot of the viewport.
    pub(super) fn screenshot(&self, until: Instant) -> Result<Vec<u8>, BrowserError> {
        self.check_crash()?;
        let shot = self.command("Page.captureScreenshot", json!({"format": "png"}), until)?;
        let data = shot.get("data").and_then(Value::as_str).unwrap_or("");
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|error| BrowserError::Failed(format!("the screenshot is not base64: {error}")))
    }

    /// The viewport coordinates of the centre of the first match of `selector`, scrolled into view.
    fn centre(&self, selector: &str, until: Instant) -> Result<(f64, f64), BrowserError> {
        let rect = self.on_element(
            selector,
            "el.scrollIntoView({block: 'center', inline: 'center'}); \
             const r = el.getBoundingClientRect(); \
             return {x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height};",
            until,
        )?;
        let number = |name: &str| rect.get(name).and_then(Value::as_f64).unwrap_or(0.0);
        if number("w") <= 0.0 || number("h") <= 0.0 {
            return Err(BrowserError::NoElement(format!(
                "the element matching {selector:?} is not visible (it has no size)"
            )));
        }
        Ok((number("x"), number("y")))
    }

    /// Runs `body` (JavaScript with `el` bound to the first match of `selector`; it returns an
    /// object) and returns what it returned.
    fn on_element(
        &self,
        selector: &str,
        body: &str,
        until: Instant,
    ) -> Result<Value, BrowserError> {
        let selector_literal =
            serde_json::to_string(selector).unwrap_or_else(|_| "\"\"".to_owned());
        let script = format!(
            "(() => {{ let el; \
               try {{ el = document.querySelector({selector_literal}); }} \
               catch (e) {{ return {{__invalid: String(e && e.message || e)}}; }} \
               if (!el) return {{__missing: true}}; \
               {body} }})()"
        );
        let value = self.script(&script, until)?;
        if let Some(reason) = value.get("__invalid").and_then(Value::as_str) {
            return Err(BrowserError::NoElement(format!(
                "{selector:?} is not a valid CSS selector: {reason}"
            )));
        }
        if value.get("__missing").is_some() {
            return Err(BrowserError::NoElement(format!(
                "no element matches {selector:?}"
            )));
        }
        Ok(value)
    }

    /// Evaluates one of janua's own scripts (side effects allowed: scrolling, focusing).
    fn script(&self, expression: &str, until: Instant) -> Result<Value, BrowserError> {
        let answer = self.command(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
            until,
        )?;
        if let Some(details) = answer.get("exceptionDetails") {
            return Err(BrowserError::ScriptError(exception_text(details)));
        }
        Ok(result_value(&answer))
    }

    /// One command to the page, its failures mapped to browser errors.
    fn command(&self, method: &str, params: Value, until: Instant) -> Result<Value, BrowserError> {
        self.check_crash()?;
        self.connection
            .call(Some(&self.session), method, params, until)
            .map_err(|error| match error {
                CdpError::Timeout(_) => {
                    BrowserError::Timeout(format!("the page did not answer {method} in time"))
                }
                CdpError::Protocol { message, .. } => {
                    BrowserError::Failed(format!("{method}: {message}"))
                }
                closed @ CdpError::Closed(_) => unavailable(&closed),
            })
    }

    fn check_crash(&self) -> Result<(), BrowserError> {
        if self.status.lock().crashed {
            return Err(BrowserError::Failed(
                "the page crashed (it may have run out of memory)".to_owned(),
            ));
        }
        Ok(())
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        self.interceptor.abort();
        self.connection.forget(&self.session);
        for child in self
            .children
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .drain(..)
        {
            self.connection.forget(&child);
        }
        let _ = self.connection.send(
            None,
            "Target.disposeBrowserContext",
            json!({"browserContextId": self.context}),
        );
    }
}

fn unavailable(error: &CdpError) -> BrowserError {
    match error {
        CdpError::Timeout(method) => {
            BrowserError::Timeout(format!("the browser did not answer {method} in time"))
        }
        other => BrowserError::Unavailable(other.to_string()),
    }
}

fn string_field(value: &Value, field: &str) -> Result<String, BrowserError> {
    value
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| BrowserError::Failed(format!("the browser's answer has no {field}")))
}

/// The value of a `Runtime.evaluate` answer (`null` for `undefined`; a description for values
/// JSON cannot carry).
fn result_value(answer: &Value) -> Value {
    let result = answer.get("result").cloned().unwrap_or(Value::Null);
    match result.get("value") {
        Some(value) => value.clone(),
        None if result.get("type").and_then(Value::as_str) == Some("undefined") => Value::Null,
        None => result.get("description").cloned().unwrap_or(Value::Null),
    }
}

fn exception_text(details: &Value) -> String {
    details
        .get("exception")
        .and_then(|exception| exception.get("description"))
        .and_then(Value::as_str)
        .or_else(|| details.get("text").and_then(Value::as_str))
        .unwrap_or("the script threw")
        .to_owned()
}

/// Formats `Accessibility.getFullAXTree` nodes: one line per meaningful node, indented by depth;
/// ignored and purely structural nodes give their place to their children.
fn format_tree(nodes: &[Value]) -> String {
    use std::collections::HashMap;
    let id = |node: &Value| {
        node.get("nodeId")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let by_id: HashMap<String, &Value> = nodes
        .iter()
        .filter_map(|node| Some((id(node)?, node)))
        .collect();
    let roots: Vec<&Value> = nodes
        .iter()
        .filter(|node| {
            node.get("parentId")
                .and_then(Value::as_str)
                .is_none_or(|parent| !by_id.contains_key(parent))
        })
        .collect();
    let mut lines = Vec::new();
    let mut stack: Vec<(&Value, usize)> = roots.into_iter().rev().map(|node| (node, 0)).collect();
    while let Some((node, depth)) = stack.pop() {
        if lines.len() >= MAX_TREE_LINES {
            lines.push(format!("… (cut at {MAX_TREE_LINES} nodes)"));
            break;
        }
        let field = |name: &str| {
            node.get(name)
                .and_then(|part| part.get("value"))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        let role = field("role");
        let name = field("name");
        let ignored = node
            .get("ignored")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let nameless_structure = (STRUCTURAL_ROLES.contains(&role) && name.is_empty())
            || (role == "StaticText" && name.trim().is_empty());
        let shown =
            !(ignored || role.is_empty() || HIDDEN_ROLES.contains(&role) || nameless_structure);
        let child_depth = if shown {
            let mut line = format!("{}{role}", "  ".repeat(depth));
            if !name.is_empty() {
                line.push_str(&format!(" {name:?}"));
            }
            let value = field("value");
            if !value.is_empty() {
                line.push_str(&format!(" value={value:?}"));
            }
            lines.push(line);
            depth + 1
        } else {
            depth
        };
        if let Some(children) = node.get("childIds").and_then(Value::as_array) {
            for child in children.iter().rev() {
                if let Some(child) = child.as_str().and_then(|child| by_id.get(child)) {
                    stack.push((child, child_depth));
                }
            }
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, parent: Option<&str>, role: &str, name: &str, children: &[&str]) -> Value {
        let mut node = json!({
            "nodeId": id,
            "ignored": false,
            "role": {"value": role},
            "name": {"value": name},
            "childIds": children,
        });
        if let Some(parent) = parent {
            node["parentId"] = json!(parent);
        }
        node
    }

    #[test]
    fn the_tree_skips_structure_and_indents_by_depth() {
        let mut ignored = node("5", Some("2"), "div", "", &["6"]);
        ignored["ignored"] = json!(true);
        let nodes = vec![
            node("1", None, "RootWebArea", "Demo", &["2"]),
            node("2", Some("1"), "generic", "", &["3", "5"]),
            node("3", Some("2"), "button", "Go", &["4"]),
            node("4", Some("3"), "StaticText", "Go", &["7"]),
            ignored,
            node("6", Some("5"), "textbox", "Name", &[]),
            node("7", Some("4"), "InlineTextBox", "Go", &[]),
        ];
        assert_eq!(
            format_tree(&nodes),
            "RootWebArea \"Demo\"\n  button \"Go\"\n    StaticText \"Go\"\n  textbox \"Name\""
        );
    }

    #[test]
    fn evaluate_answers_become_json() {
        assert_eq!(
            result_value(&json!({"result": {"type": "number", "value": 3}})),
            json!(3)
        );
        assert_eq!(
            result_value(&json!({"result": {"type": "undefined"}})),
            Value::Null
        );
        assert_eq!(
            result_value(&json!({"result": {"type": "object", "description": "HTMLDivElement"}})),
            json!("HTMLDivElement")
        );
        assert_eq!(
            exception_text(&json!({"text": "Uncaught", "exception": {"description": "Error: x"}})),
            "Error: x"
        );
    }
}
