//! Test guest: `EnvPeek` reports the environment the guest can see; `FileProbe` is a read-class
//! path tool for decision tests.

use janua_sdk::{Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

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
    const DESCRIPTION: &'static str = "Returns one environment variable, the names of all visible ones, and the guest's arguments.";
    const READ_ONLY: bool = true;

    fn call(input: EnvPeekInput, _ctx: &Context) -> Result<Output, ToolError> {
        let value = std::env::var(&input.name).ok();
        let names: Vec<String> = std::env::vars().map(|(name, _)| name).collect();
        let args: Vec<String> = std::env::args().collect();
        let text = serde_json::json!({ "value": value, "names": names, "args": args }).to_string();
        Ok(Output::text(text))
    }
}

/// Input of `FileProbe`.
#[derive(Deserialize, JsonSchema)]
struct FileProbeInput {
    /// File to measure.
    file_path: String,
}

/// A read-class path tool: lets tests place calls inside or outside grants by its `file_path`.
struct FileProbe;

impl Tool for FileProbe {
    type Input = FileProbeInput;
    const NAME: &'static str = "FileProbe";
    const DESCRIPTION: &'static str = "Returns the size of a file.";
    const READ_ONLY: bool = true;
    const RULE_FIELD: Option<&'static str> = Some("file_path");

    fn call(input: FileProbeInput, ctx: &Context) -> Result<Output, ToolError> {
        let path = ctx.resolve_path(&input.file_path);
        std::fs::metadata(&path)
            .map(|metadata| Output::text(metadata.len().to_string()))
            .map_err(|error| ToolError::new("io", error.to_string()))
    }
}

janua_sdk::export!(EnvPeek, FileProbe);
