//! Hostile guest: `Spin` loops forever without calling the host, so only the epoch deadline stops it.

use schemars::JsonSchema;
use serde::Deserialize;
use warden_sdk::{Context, Output, Tool, ToolError};

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

warden_sdk::export!(Spin);
