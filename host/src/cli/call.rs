//! `warden call TOOL [--input JSON | --input -]`.

use std::io::Read as _;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use clap::Args;

use warden::{ErrorKind, Failure, ResultContent, Runtime, ToolResultBlock, ToolUse};

/// Arguments of `warden call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool name as a model would write it.
    tool: String,
    /// The input object as JSON, or `-` to read it from stdin (default `{}`).
    #[arg(long, value_name = "JSON")]
    input: Option<String>,
    /// The tool_use id to answer (default: a generated one).
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// Print {"tool_result": ..., "outcome": ...} with the structured outcome of every stage.
    #[arg(long)]
    outcome: bool,
}

impl CallArgs {
    /// The raw input text.
    pub(crate) fn read_input(&self) -> anyhow::Result<String> {
        read_input_arg(self.input.as_deref())
    }
}

/// The text of an `--input` argument: `{}` when absent, stdin for `-`.
pub(crate) fn read_input_arg(input: Option<&str>) -> anyhow::Result<String> {
    match input {
        None => Ok("{}".to_owned()),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the input from stdin")?;
            Ok(text)
        }
        Some(text) => Ok(text.to_owned()),
    }
}

/// Runs the call, prints the result and returns the exit code (0 success, 1 error result).
pub(crate) async fn run(runtime: &Runtime, args: CallArgs, input: String) -> ExitCode {
    let id = args.id.clone().unwrap_or_else(generated_id);
    let printed = match serde_json::from_str::<serde_json::Value>(&input) {
        Ok(value) => {
            let dispatch = runtime
                .dispatch(ToolUse {
                    id,
                    name: args.tool.clone(),
                    input: value,
                })
                .await;
            let is_error = dispatch.block.is_error;
            let json = if args.outcome {
                serde_json::json!({ "tool_result": dispatch.block, "outcome": dispatch.outcome })
            } else {
                serde_json::to_value(&dispatch.block).unwrap_or_default()
            };
            (json, is_error)
        }
        Err(error) => {
            // Malformed JSON is the caller's input problem: an error result, like any bad input.
            let failure = Failure {
                kind: ErrorKind::InvalidInput,
                message: format!("the input is not valid JSON: {error}"),
                tool_error_kind: None,
            };
            let block = ToolResultBlock::new(
                &id,
                ResultContent::Text(format!("{}: {}", failure.kind, failure.message)),
                true,
            );
            let json = if args.outcome {
                serde_json::json!({ "tool_result": block, "outcome": { "error": failure } })
            } else {
                serde_json::to_value(&block).unwrap_or_default()
            };
            (json, true)
        }
    };
    println!("{}", printed.0);
    if printed.1 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn generated_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or(0);
    format!("toolu_warden_{nanos:x}{:x}", std::process::id())
}
