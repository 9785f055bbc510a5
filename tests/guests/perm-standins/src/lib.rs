//! Test guest: a stand-in named like Claude Code's `WebFetch`, with its input fields and class, that
//! only reports what it was asked to do. Permission rules give the name its meaning (domains), so
//! end-to-end permission tests can run before the real tool exists, and can never fetch anything.
//! (`Write` and `Bash` are the built-in tools.)

use schemars::JsonSchema;
use serde::Deserialize;
use warden_sdk::{CapabilityClass, Context, Output, Tool, ToolError};

/// Input of `WebFetch`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FetchInput {
    /// The URL.
    url: String,
    /// What to extract.
    #[expect(dead_code, reason = "accepted so the schema matches Claude Code's")]
    prompt: Option<String>,
}

struct WebFetch;

impl Tool for WebFetch {
    type Input = FetchInput;
    const NAME: &'static str = "WebFetch";
    const DESCRIPTION: &'static str = "Reports the URL it would fetch (a stand-in).";
    const CLASS: CapabilityClass = CapabilityClass::Network;
    const RULE_FIELD: Option<&'static str> = Some("url");

    fn call(input: FetchInput, _ctx: &Context) -> Result<Output, ToolError> {
        Ok(Output::text(format!("would fetch: {}", input.url)))
    }
}

warden_sdk::export!(WebFetch);
