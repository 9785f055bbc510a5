//! Test guest: `Echo` (a write-class tool returning the input it received) and `Picky` (a read-only
//! tool whose `validate-input` rejects upper-case words). Exercises schema coercion, validation and
//! permission outcomes.

use janua_sdk::{CapabilityClass, Context, LogLevel, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Nested object used by coercion tests.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Meta {
    /// Any key.
    key: String,
}

/// Input of `Echo`.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoInput {
    /// Text to echo.
    text: String,
    /// A count.
    count: Option<i64>,
    /// A flag.
    loud: Option<bool>,
    /// Tags.
    tags: Option<Vec<String>>,
    /// Metadata.
    meta: Option<Meta>,
}

struct Echo;

impl Tool for Echo {
    type Input = EchoInput;
    const NAME: &'static str = "Echo";
    const DESCRIPTION: &'static str = "Echoes its input back as JSON.";
    const CLASS: CapabilityClass = CapabilityClass::Write;

    fn call(input: EchoInput, ctx: &Context) -> Result<Output, ToolError> {
        janua_sdk::log(LogLevel::Info, "echo called");
        janua_sdk::progress("echoing");
        if janua_sdk::cancelled() {
            return Err(ToolError::new("cancelled", "cancelled before start"));
        }
        // Guest stdio is captured by the host; it must never reach the host's own stdout.
        println!("ECHO-STDOUT-MARKER");
        eprintln!("ECHO-STDERR-MARKER");
        if input.text == "huge_structured" {
            let size = input.count.unwrap_or(0).max(0) as usize;
            return Ok(
                Output::text("huge").with_structured(serde_json::Value::String("s".repeat(size)))
            );
        }
        if input.text == "fail" {
            return Err(ToolError::new(
                "asked_to_fail",
                "the input asked Echo to fail",
            ));
        }
        let value =
            serde_json::to_value(&input).map_err(|e| ToolError::new("internal", e.to_string()))?;
        let mut text = value.to_string();
        if input.text == "big" {
            text = "x".repeat(input.count.unwrap_or(40_000).max(0) as usize);
        }
        Ok(Output::text(text)
            .with_structured(serde_json::json!({ "input": value, "call_id": ctx.call_id })))
    }
}

/// Input of `Picky`.
#[derive(Deserialize, JsonSchema)]
struct PickyInput {
    /// A lower-case word.
    word: String,
}

struct Picky;

impl Tool for Picky {
    type Input = PickyInput;
    const NAME: &'static str = "Picky";
    const DESCRIPTION: &'static str = "Accepts only lower-case words.";
    const READ_ONLY: bool = true;
    const CONCURRENCY_SAFE: bool = true;

    fn call(input: PickyInput, _ctx: &Context) -> Result<Output, ToolError> {
        Ok(Output::text(format!("accepted {}", input.word)))
    }
}

impl janua_sdk::Validate for Picky {
    fn validate(input: &PickyInput, _ctx: &Context) -> Result<(), String> {
        if input.word.chars().any(char::is_uppercase) {
            return Err(format!("word must be lower case, got {:?}", input.word));
        }
        Ok(())
    }
}

janua_sdk::export!(Echo, Picky);
