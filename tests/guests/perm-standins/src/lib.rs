//! Test guest: a stand-in named like Claude Code's `Bash`, with its input fields and class, that
//! only reports what it was asked to do. Permission rules give the name its meaning (shell
//! commands), so end-to-end permission tests can run before the real tool exists, and can never
//! run a command. (`Write` and `WebFetch` are the built-in tools.)

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

warden_sdk::export!(Bash);
