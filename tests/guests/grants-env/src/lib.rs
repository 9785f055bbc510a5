//! Test guest: `EnvPeek` reports the environment the guest can see.

use schemars::JsonSchema;
use serde::Deserialize;
use warden_sdk::{Context, Output, Tool, ToolError};

/// Input of `EnvPeek`.
#[derive(Deserialize, JsonSchema)]
struct EnvPeekInput {
    /// Variable to look up.
    name: String,
}

struct EnvPeek;

impl Tool for EnvPeek {
    type Input = EnvPeekInput;
    const NAME: &'static str = "EnvPeek";
    const DESCRIPTION: &'static str =
        "Returns one environment variable and the names of all visible ones.";
    const READ_ONLY: bool = true;

    fn call(input: EnvPeekInput, _ctx: &Context) -> Result<Output, ToolError> {
        let value = std::env::var(&input.name).ok();
        let names: Vec<String> = std::env::vars().map(|(name, _)| name).collect();
        let text = serde_json::json!({ "value": value, "names": names }).to_string();
        Ok(Output::text(text))
    }
}

warden_sdk::export!(EnvPeek);
