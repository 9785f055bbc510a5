//! Test guest: a stand-in named like Claude Code's `Monitor` (which janua does not have yet), with a
//! `command` field and the process class, that only reports what it would watch. Permission tests
//! load it as a plugin beside the built-in tools (`Write`, `Bash`, `WebFetch` are real), so rules
//! naming a tool that takes command specifiers are checked against a plugin too.

use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Input of `Monitor`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MonitorInput {
    /// The command whose output would be watched.
    command: String,
}

struct Monitor;

impl Tool for Monitor {
    type Input = MonitorInput;
    const NAME: &'static str = "Monitor";
    const DESCRIPTION: &'static str = "Reports the command it would watch (a stand-in).";
    const CLASS: CapabilityClass = CapabilityClass::Process;
    const RULE_FIELD: Option<&'static str> = Some("command");

    fn call(input: MonitorInput, _ctx: &Context) -> Result<Output, ToolError> {
        Ok(Output::text(format!("would watch: {}", input.command)))
    }
}

janua_sdk::export!(Monitor);
