//! Test guest: `Delegate` forwards one call through the host's `delegate` import and returns the
//! result it got; `Recurse` calls itself through `delegate` until the host refuses, a depth bomb.
//! `EnvDump` reports the environment it sees (to show a delegated call holds no more than its
//! caller).

use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Input of `Delegate`.
#[derive(Deserialize, JsonSchema)]
struct DelegateInput {
    /// The tool to call.
    tool: String,
    /// Its input.
    input: serde_json::Value,
}

fn report(result: &janua_sdk::delegate::Delegated) -> serde_json::Value {
    json!({
        "tool_use_id": result.tool_use_id,
        "is_error": result.is_error,
        "error_kind": result.error_kind,
        "text": result.text,
        "structured": result.structured_json(),
    })
}

struct Delegate;

impl Tool for Delegate {
    type Input = DelegateInput;
    const NAME: &'static str = "Delegate";
    const DESCRIPTION: &'static str = "Calls another tool through delegate and returns its result.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;

    fn call(input: DelegateInput, _ctx: &Context) -> Result<Output, ToolError> {
        let result = janua_sdk::delegate::call(&input.tool, &input.input);
        let report = report(&result);
        Ok(Output::text(report.to_string()).with_structured(report))
    }
}

/// Input of `Recurse`.
#[derive(Deserialize, JsonSchema)]
struct RecurseInput {
    /// How deep this call is.
    level: u32,
}

struct Recurse;

impl Tool for Recurse {
    type Input = RecurseInput;
    const NAME: &'static str = "Recurse";
    const DESCRIPTION: &'static str = "Calls itself through delegate, one level deeper each time.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;

    fn call(input: RecurseInput, _ctx: &Context) -> Result<Output, ToolError> {
        let child = janua_sdk::delegate::call("Recurse", &json!({"level": input.level + 1}));
        let nested = if child.is_error {
            report(&child)
        } else {
            child.structured_json().unwrap_or_default()
        };
        let report = json!({"level": input.level, "child": nested});
        Ok(Output::text(report.to_string()).with_structured(report))
    }
}

/// Input of `EnvDump`.
#[derive(Deserialize, JsonSchema)]
struct EnvDumpInput {}

struct EnvDump;

impl Tool for EnvDump {
    type Input = EnvDumpInput;
    const NAME: &'static str = "EnvDump";
    const DESCRIPTION: &'static str = "Lists the environment variables and directories it sees.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;

    fn call(_input: EnvDumpInput, ctx: &Context) -> Result<Output, ToolError> {
        let mut names: Vec<String> = std::env::vars().map(|(name, _)| name).collect();
        names.sort();
        let sees_workspace = std::fs::read_dir(&ctx.cwd).is_ok();
        let report = json!({"env": names, "sees_workspace": sees_workspace});
        Ok(Output::text(report.to_string()).with_structured(report))
    }
}

janua_sdk::export!(Delegate, Recurse, EnvDump);
