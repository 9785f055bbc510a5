//! Guest for the `browser` interface's grant checks: `BrowserProbe` opens a URL and reports the
//! outcome of every step as data (`{"open": ..., "text": ..., "refused": [...]}`), so a test
//! sees exactly what the host allowed, whatever the component's grants say.

use janua_sdk::browser::{self, BrowserError};
use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Input of `BrowserProbe`.
#[derive(Deserialize, JsonSchema)]
struct ProbeInput {
    /// The page to open.
    url: String,
    /// Call `text` before `open`, to see the host refuse a step without a page.
    #[serde(default)]
    text_first: bool,
}

struct BrowserProbe;

fn outcome<T: serde::Serialize>(result: Result<T, BrowserError>) -> Value {
    match result {
        Ok(value) => json!({"ok": value}),
        Err(error) => json!({"error": error.kind(), "message": error.message()}),
    }
}

impl Tool for BrowserProbe {
    type Input = ProbeInput;
    const NAME: &'static str = "BrowserProbe";
    const DESCRIPTION: &'static str =
        "Opens a page through the host's browser interface and reports each step.";
    const CLASS: CapabilityClass = CapabilityClass::External;
    const RULE_FIELD: Option<&'static str> = Some("url");

    fn call(input: ProbeInput, _ctx: &Context) -> Result<Output, ToolError> {
        let early = input.text_first.then(|| outcome(browser::text(None, 1000)));
        let open = outcome(
            browser::open(&input.url, 10_000)
                .map(|page| json!({"url": page.url, "title": page.title})),
        );
        let text = outcome(browser::text(None, 2_000));
        let report = json!({
            "early": early,
            "open": open,
            "text": text,
            "refused": browser::refused(),
        });
        Ok(Output::text(report.to_string()))
    }
}

janua_sdk::export!(BrowserProbe);
