//! Hostile guest: `Trap` panics, which aborts the guest (a wasm trap).

use janua_sdk::{Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Input of `Trap`.
#[derive(Deserialize, JsonSchema)]
struct TrapInput {}

struct Trap;

impl Tool for Trap {
    type Input = TrapInput;
    const NAME: &'static str = "Trap";
    const DESCRIPTION: &'static str = "Panics on every call.";
    const READ_ONLY: bool = true;

    fn call(_input: TrapInput, _ctx: &Context) -> Result<Output, ToolError> {
        panic!("guest panicked on purpose");
    }
}

janua_sdk::export!(Trap);
