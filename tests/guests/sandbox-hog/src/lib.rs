//! Hostile guest: `Hog` allocates and touches memory until the host's limit stops it.

use janua_sdk::{Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Input of `Hog`.
#[derive(Deserialize, JsonSchema)]
struct HogInput {}

struct Hog;

impl Tool for Hog {
    type Input = HogInput;
    const NAME: &'static str = "Hog";
    const DESCRIPTION: &'static str = "Allocates memory without bound.";
    const READ_ONLY: bool = true;

    fn call(_input: HogInput, _ctx: &Context) -> Result<Output, ToolError> {
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        loop {
            chunks.push(vec![0xAB; 1 << 20]);
            std::hint::black_box(&chunks);
        }
    }
}

janua_sdk::export!(Hog);
