//! The default `Browser` tool: opens a page in the host's headless Chromium, runs a list of
//! actions on it (click, type, wait, read, evaluate, screenshot) and returns what they found, with
//! screenshots as image blocks.
//!
//! The component has no network and no files of its own: the host's `browser` interface drives
//! the page, and every request the page makes goes through the host's network policy (the
//! component's net grants, the permission rules, private-address checks; see the host's
//! `sandbox/browser.rs`). One call is one page in a fresh browser context, closed at the end.

// Native builds exist only for unit tests and do not export the component.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Longest URL accepted, in bytes.
const MAX_URL_BYTES: usize = 8192;
/// Most actions in one call.
const MAX_ACTIONS: usize = 50;
/// A step's time limit when the input gives none.
const DEFAULT_STEP_TIMEOUT_MS: u64 = 15_000;
/// Bounds of `timeout_ms`.
const STEP_TIMEOUT_RANGE: (u64, u64) = (100, 120_000);
/// Quiet time after a click or typing before the next step, so what it started can land.
const SETTLE_IDLE_MS: u64 = 200;
/// Longest wait for that quiet time; a page that never goes quiet just moves on.
const SETTLE_LIMIT_MS: u64 = 2_000;

/// Input of `Browser`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BrowserInput {
    /// The page to open: `http://`, `https://`, or `file://` inside the workspace.
    url: String,
    /// Steps run in order on the opened page. Omit to just read the page.
    #[serde(default)]
    actions: Vec<Action>,
    /// Take a PNG screenshot of the viewport (1280x800) after the last action.
    #[serde(default)]
    screenshot: bool,
    /// Time limit of each step (opening the page included) in milliseconds; default 15000.
    #[serde(default)]
    timeout_ms: Option<u64>,
}

/// One step on the page.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
enum Action {
    /// Click the first element matching a CSS selector (waits for it to appear).
    Click {
        /// CSS selector, e.g. `#submit` or `button.primary`.
        selector: String,
    },
    /// Focus the first element matching a CSS selector and type text into it.
    Type {
        /// CSS selector of an input, textarea or editable element.
        selector: String,
        /// The text to type.
        text: String,
    },
    /// Wait until an element matching a CSS selector exists.
    WaitFor {
        /// CSS selector.
        selector: String,
    },
    /// Wait until no request has been in flight for `idle_ms` (default 500).
    WaitForNetworkIdle {
        /// Quiet time in milliseconds.
        #[serde(default)]
        idle_ms: Option<u64>,
    },
    /// Read the rendered text of the first element matching `selector`, or of the whole page.
    Text {
        /// CSS selector; omit for the whole page.
        #[serde(default)]
        selector: Option<String>,
    },
    /// Read the page's accessibility tree (roles and names, indented).
    AccessibilityTree,
    /// Evaluate a read-only JavaScript expression and return its value as JSON. Expressions
    /// with side effects (assignments, calls that change the page) are refused.
    Evaluate {
        /// The expression, e.g. `document.querySelectorAll('li').length`.
        expression: String,
    },
    /// Take a PNG screenshot of the viewport now.
    Screenshot,
}

impl Action {
    /// How the step is named in the result.
    fn label(&self) -> String {
        match self {
            Action::Click { selector } => format!("click {selector:?}"),
            Action::Type { selector, .. } => format!("type into {selector:?}"),
            Action::WaitFor { selector } => format!("wait for {selector:?}"),
            Action::WaitForNetworkIdle { .. } => "wait for network idle".to_owned(),
            Action::Text {
                selector: Some(selector),
            } => format!("text of {selector:?}"),
            Action::Text { selector: None } => "text of the page".to_owned(),
            Action::AccessibilityTree => "accessibility tree".to_owned(),
            Action::Evaluate { .. } => "evaluate".to_owned(),
            Action::Screenshot => "screenshot".to_owned(),
        }
    }

    /// True for steps whose result is the page's content, so the page text is not added again.
    fn reads(&self) -> bool {
        matches!(self, Action::Text { .. } | Action::AccessibilityTree)
    }
}

struct Browser;

impl Tool for Browser {
    type Input = BrowserInput;
    const NAME: &'static str = "Browser";
    const DESCRIPTION: &'static str = "Opens a web page in a headless browser (JavaScript runs), \
        performs actions on it and returns what they found. Use it for pages that need \
        JavaScript and to check a web app: `actions` is a list of steps run in order: \
        {\"action\":\"click\",\"selector\":...}, {\"action\":\"type\",\"selector\":...,\"text\":...}, \
        {\"action\":\"wait_for\",\"selector\":...}, {\"action\":\"wait_for_network_idle\"}, \
        {\"action\":\"text\",\"selector\":...} (omit the selector for the whole page), \
        {\"action\":\"accessibility_tree\"}, {\"action\":\"evaluate\",\"expression\":...} \
        (read-only: side effects are refused) and {\"action\":\"screenshot\"}. Without a text or \
        accessibility_tree step the page's text after the last step is returned. `screenshot: \
        true` adds a PNG of the 1280x800 viewport at the end. Every request the page makes must \
        be allowed by the permission rules; private and loopback addresses are refused unless \
        the operator allows them; file:// is limited to the workspace; downloads are refused. \
        Each step has `timeout_ms` (default 15000). Every call starts with a fresh browser \
        profile: no cookies or storage carry over between calls.";
    const CLASS: CapabilityClass = CapabilityClass::External;
    const READ_ONLY: bool = false;
    const CONCURRENCY_SAFE: bool = true;
    const RULE_FIELD: Option<&'static str> = Some("url");

    fn call(input: BrowserInput, _ctx: &Context) -> Result<Output, ToolError> {
        check(&input).map_err(|message| ToolError::new("invalid_input", message))?;
        run(input)
    }
}

impl janua_sdk::Validate for Browser {
    fn validate(input: &BrowserInput, _ctx: &Context) -> Result<(), String> {
        check(input)
    }
}

/// What the schema cannot say about an input.
fn check(input: &BrowserInput) -> Result<(), String> {
    if input.url.len() > MAX_URL_BYTES {
        return Err(format!("the URL is longer than {MAX_URL_BYTES} bytes"));
    }
    let scheme = input
        .url
        .split_once(':')
        .map(|(scheme, _)| scheme.to_ascii_lowercase())
        .unwrap_or_default();
    if !matches!(scheme.as_str(), "http" | "https" | "file") {
        return Err(format!(
            "{:?} is not an http, https or file URL; write the whole URL, e.g. https://example.com/",
            input.url
        ));
    }
    if input.actions.len() > MAX_ACTIONS {
        return Err(format!(
            "{} actions given; at most {MAX_ACTIONS} fit in one call",
            input.actions.len()
        ));
    }
    if let Some(timeout) = input.timeout_ms
        && !(STEP_TIMEOUT_RANGE.0..=STEP_TIMEOUT_RANGE.1).contains(&timeout)
    {
        return Err(format!(
            "timeout_ms must be between {} and {}",
            STEP_TIMEOUT_RANGE.0, STEP_TIMEOUT_RANGE.1
        ));
    }
    for action in &input.actions {
        let selector = match action {
            Action::Click { selector }
            | Action::Type { selector, .. }
            | Action::WaitFor { selector }
            | Action::Text {
                selector: Some(selector),
            } => selector,
            _ => continue,
        };
        if selector.trim().is_empty() {
            return Err(format!("{}: the selector is empty", action.label()));
        }
    }
    Ok(())
}

/// The report being built: one line per step, images, and the structured record.
#[derive(Default)]
struct Report {
    lines: Vec<String>,
    images: Vec<Vec<u8>>,
    steps: Vec<serde_json::Value>,
}

impl Report {
    fn step(&mut self, label: &str, result: &str) {
        let number = self.steps.len() + 1;
        if result.contains('\n') {
            self.lines.push(format!("{number}. {label}:\n{result}"));
        } else {
            self.lines.push(format!("{number}. {label}: {result}"));
        }
        self.steps
            .push(serde_json::json!({"step": label, "result": result}));
    }
}

#[cfg(target_arch = "wasm32")]
fn run(input: BrowserInput) -> Result<Output, ToolError> {
    use janua_sdk::{Content, browser};

    let timeout = input.timeout_ms.unwrap_or(DEFAULT_STEP_TIMEOUT_MS);
    let page = browser::open(&input.url, timeout)?;
    let mut report = Report::default();
    for (index, action) in input.actions.iter().enumerate() {
        if janua_sdk::cancelled() {
            return Err(ToolError::new("cancelled", "the call was cancelled"));
        }
        let result = perform(action, timeout, &mut report);
        match result {
            Ok(text) => report.step(&action.label(), &text),
            Err(error) => {
                let done = if report.lines.is_empty() {
                    String::new()
                } else {
                    format!(" Steps done before it:\n{}", report.lines.join("\n"))
                };
                return Err(ToolError::new(
                    error.kind(),
                    format!(
                        "step {} ({}) failed: {}.{done}",
                        index + 1,
                        action.label(),
                        error.message()
                    ),
                ));
            }
        }
    }
    let mut text = format!(
        "{} — {}{}",
        if page.title.is_empty() {
            "(no title)"
        } else {
            &page.title
        },
        page.url,
        page.status
            .map(|status| format!(" (HTTP {status})"))
            .unwrap_or_default()
    );
    if !report.lines.is_empty() {
        text.push_str("\n\n");
        text.push_str(&report.lines.join("\n"));
    }
    if !input.actions.iter().any(Action::reads) {
        let body = browser::text(None, timeout)?;
        text.push_str("\n\nPage text:\n");
        text.push_str(&body);
    }
    if input.screenshot {
        report.images.push(browser::screenshot(timeout)?);
    }
    let refused = browser::refused();
    if !refused.is_empty() {
        text.push_str("\n\nRequests refused by the network policy:\n");
        text.push_str(&refused.join("\n"));
    }
    let structured = serde_json::json!({
        "url": page.url,
        "title": page.title,
        "status": page.status,
        "steps": report.steps,
        "screenshots": report.images.len(),
        "refused": refused,
    });
    let mut output = Output::text(text).with_structured(structured);
    for image in report.images {
        output = output.with_content(Content::Image {
            media_type: "image/png".to_owned(),
            data: image,
        });
    }
    Ok(output)
}

/// Runs one action; its result line.
#[cfg(target_arch = "wasm32")]
fn perform(
    action: &Action,
    timeout: u64,
    report: &mut Report,
) -> Result<String, janua_sdk::browser::BrowserError> {
    use janua_sdk::browser;

    let settle = || {
        // What a click or keystroke started (a fetch, a render) gets a moment to land.
        let _ = browser::wait_for_network_idle(SETTLE_IDLE_MS, SETTLE_LIMIT_MS.min(timeout));
    };
    Ok(match action {
        Action::Click { selector } => {
            browser::click(selector, timeout)?;
            settle();
            "done".to_owned()
        }
        Action::Type { selector, text } => {
            browser::type_text(selector, text, timeout)?;
            settle();
            match text.chars().count() {
                1 => "typed 1 character".to_owned(),
                count => format!("typed {count} characters"),
            }
        }
        Action::WaitFor { selector } => {
            browser::wait_for_selector(selector, timeout)?;
            "present".to_owned()
        }
        Action::WaitForNetworkIdle { idle_ms } => {
            browser::wait_for_network_idle(idle_ms.unwrap_or(500), timeout)?;
            "idle".to_owned()
        }
        Action::Text { selector } => browser::text(selector.as_deref(), timeout)?,
        Action::AccessibilityTree => browser::accessibility_tree(timeout)?,
        Action::Evaluate { expression } => browser::evaluate(expression, timeout)?.to_string(),
        Action::Screenshot => {
            report.images.push(browser::screenshot(timeout)?);
            format!("image {} below", report.images.len())
        }
    })
}

#[cfg(not(target_arch = "wasm32"))]
fn run(_input: BrowserInput) -> Result<Output, ToolError> {
    Err(ToolError::new(
        "unsupported",
        "Browser runs only when built as a component",
    ))
}

#[cfg(target_arch = "wasm32")]
janua_sdk::export!(Browser);

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: serde_json::Value) -> Result<BrowserInput, String> {
        serde_json::from_value(json).map_err(|error| error.to_string())
    }

    #[test]
    fn inputs_are_checked_beyond_the_schema() {
        let cases = [
            (serde_json::json!({"url": "https://example.com/"}), None),
            (
                serde_json::json!({"url": "ftp://example.com/"}),
                Some("not an http, https or file URL"),
            ),
            (
                serde_json::json!({"url": "example.com"}),
                Some("not an http, https or file URL"),
            ),
            (
                serde_json::json!({"url": "http://x/", "timeout_ms": 5}),
                Some("timeout_ms must be between"),
            ),
            (
                serde_json::json!({"url": "http://x/", "actions": [{"action": "click", "selector": " "}]}),
                Some("the selector is empty"),
            ),
        ];
        for (json, expected) in cases {
            let result = check(&input(json.clone()).unwrap());
            match expected {
                None => assert!(result.is_ok(), "{json}: {result:?}"),
                Some(text) => assert!(
                    result.as_ref().is_err_and(|error| error.contains(text)),
                    "{json}: {result:?}"
                ),
            }
        }
    }

    #[test]
    fn actions_parse_by_their_tag() {
        let parsed = input(serde_json::json!({
            "url": "http://x/",
            "actions": [
                {"action": "type", "selector": "#q", "text": "hi"},
                {"action": "wait_for_network_idle"},
                {"action": "accessibility_tree"},
                {"action": "text"},
            ],
        }))
        .unwrap();
        let labels: Vec<String> = parsed.actions.iter().map(Action::label).collect();
        assert_eq!(
            labels,
            [
                "type into \"#q\"",
                "wait for network idle",
                "accessibility tree",
                "text of the page"
            ]
        );
        assert!(
            input(serde_json::json!({"url": "http://x/", "actions": [{"action": "hover"}]}))
                .is_err()
        );
        assert!(
            input(serde_json::json!({"url": "http://x/", "actions": [{"action": "click"}]}))
                .is_err()
        );
    }
}
