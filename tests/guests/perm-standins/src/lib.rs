//! Test guest: stand-ins named like Claude Code's `Bash` and `WebFetch`, with their input fields and
//! classes, that only report what they were asked to do. Permission rules give these names their
//! meaning (shell commands, domains), so end-to-end permission tests can run before the real tools
//! exist, and can never run a command or fetch anything. (`Write` is the built-in tool.)

use schemars::JsonSchema;
use serde::Deserialize;
use warden_sdk::{CapabilityClass, Context, Output, Tool, ToolError};

/// Input of `Bash`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BashInput {
    /// The command line.
    command: String,
    /// Timeout in milliseconds.
    #[expect(dead_code, reason = "accepted so the schema matches Claude Code's")]
    timeout: Option<u64>,
    /// What the command does.
    #[expect(dead_code, reason = "accepted so the schema matches Claude Code's")]
    description: Option<String>,
    /// Run in the background.
    #[expect(dead_code, reason = "accepted so the schema matches Claude Code's")]
    run_in_background: Option<bool>,
}

struct Bash;

impl Tool for Bash {
    type Input = BashInput;
    const NAME: &'static str = "Bash";
    const DESCRIPTION: &'static str = "Reports the command it would run (a stand-in).";
    const CLASS: CapabilityClass = CapabilityClass::Process;
    const RULE_FIELD: Option<&'static str> = Some("command");

    fn call(input: BashInput, _ctx: &Context) -> Result<Output, ToolError> {
        Ok(Output::text(format!("would run: {}", input.command)))
    }
}

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

warden_sdk::export!(Bash, WebFetch);
