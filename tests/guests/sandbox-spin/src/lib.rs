//! Hostile guest: `Spin` loops forever in `call` and `SpinCheck` in `validate-input`, without calling
//! the host, so only the epoch deadline stops them.

use janua_sdk::{Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Input of `Spin`.
#[derive(Deserialize, JsonSchema)]
struct SpinInput {}

struct Spin;

impl Tool for Spin {
    type Input = SpinInput;
    const NAME: &'static str = "Spin";
    const DESCRIPTION: &'static str = "Never returns.";
    const READ_ONLY: bool = true;

    fn call(_input: SpinInput, _ctx: &Context) -> Result<Output, ToolError> {
        let mut counter: u64 = 0;
        loop {
            counter = std::hint::black_box(counter.wrapping_add(1));
        }
    }
}

/// Input of `SpinCheck`.
#[derive(Deserialize, JsonSchema)]
struct SpinCheckInput {}

/// Loops forever in `validate-input`.
struct SpinCheck;

impl Tool for SpinCheck {
    type Input = SpinCheckInput;
    const NAME: &'static str = "SpinCheck";
    const DESCRIPTION: &'static str = "Never finishes validating.";
    const READ_ONLY: bool = true;

    fn call(_input: SpinCheckInput, _ctx: &Context) -> Result<Output, ToolError> {
        Ok(Output::text("unreachable in tests"))
    }
}

impl janua_sdk::Validate for SpinCheck {
    fn validate(_input: &SpinCheckInput, _ctx: &Context) -> Result<(), String> {
        let mut counter: u64 = 0;
        loop {
            counter = std::hint::black_box(counter.wrapping_add(1));
        }
    }
}

janua_sdk::export!(Spin, SpinCheck);
