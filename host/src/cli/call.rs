//! `janua call TOOL [--input JSON | --input -]` and `janua call --resume-deferred ID`.
//!
//! The call is a session's whole life in one process: SessionStart hooks, the call as a batch of
//! one (so PostToolBatch hooks run and a PreToolUse `defer` counts), SessionEnd hooks. What hooks
//! say to the user (`systemMessage`, SessionStart context, warnings) goes to stderr; stdout holds
//! only the tool_result (or, with `--outcome`, the structured record).

use std::io::Read as _;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use clap::Args;

use janua::{BatchDispatch, ErrorKind, Failure, ResultContent, Runtime, ToolResultBlock, ToolUse};

/// Arguments of `janua call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool name as a model would write it.
    #[arg(required_unless_present = "resume_deferred")]
    tool: Option<String>,
    /// Resume the call a PreToolUse hook deferred (its tool_use id), through the whole pipeline
    /// again; use the same --session.
    #[arg(long = "resume-deferred", value_name = "ID", conflicts_with_all = ["tool", "input", "id"])]
    resume_deferred: Option<String>,
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

/// Runs the call, prints the result and returns the exit code (0 success, 1 error result, 2 no
/// such deferred call).
pub(crate) async fn run(runtime: &Runtime, args: CallArgs, input: String) -> ExitCode {
    let started = runtime.start_session().await;
    for text in started.system_messages.iter().chain(&started.warnings) {
        eprintln!("janua: {text}");
    }
    for context in &started.additional_context {
        eprintln!("janua: SessionStart context: {context}");
    }
    if let Some(reason) = &started.stop {
        // A SessionStart hook ended the session before the call: the call gets its result.
        let id = args
            .resume_deferred
            .clone()
            .or_else(|| args.id.clone())
            .unwrap_or_else(generated_id);
        let block = ToolResultBlock::new(
            &id,
            ResultContent::Text(format!(
                "{}: a SessionStart hook stopped the session: {reason}",
                ErrorKind::HookStopped
            )),
            true,
        );
        println!("{}", serde_json::to_value(&block).unwrap_or_default());
        let ended = runtime.end_session("other").await;
        for warning in &ended.warnings {
            eprintln!("janua: warning: {warning}");
        }
        return ExitCode::from(1);
    }
    let code = match &args.resume_deferred {
        Some(id) => match runtime.resume_deferred(id).await {
            Some(batch) => print_batch(&batch, args.outcome),
            None => {
                let waiting: Vec<String> = runtime
                    .session()
                    .deferred()
                    .into_iter()
                    .map(|call| call.id)
                    .collect();
                eprintln!(
                    "janua: session {} holds no deferred call {id:?} (deferred calls: {})",
                    runtime.session().id(),
                    if waiting.is_empty() {
                        "none".to_owned()
                    } else {
                        waiting.join(", ")
                    }
                );
                ExitCode::from(2)
            }
        },
        None => run_new(runtime, &args, input).await,
    };
    let ended = runtime.end_session("other").await;
    for warning in &ended.warnings {
        eprintln!("janua: warning: {warning}");
    }
    code
}

async fn run_new(runtime: &Runtime, args: &CallArgs, input: String) -> ExitCode {
    let id = args.id.clone().unwrap_or_else(generated_id);
    let tool = args.tool.clone().unwrap_or_default();
    match serde_json::from_str::<serde_json::Value>(&input) {
        Ok(value) => {
            let batch = runtime
                .dispatch_batch(vec![ToolUse {
                    id,
                    name: tool,
                    input: value,
                }])
                .await;
            print_batch(&batch, args.outcome)
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
            println!("{json}");
            ExitCode::from(1)
        }
    }
}

/// Prints the batch's one result; hook messages for the user go to stderr.
fn print_batch(batch: &BatchDispatch, outcome: bool) -> ExitCode {
    let Some(dispatch) = batch.results.first() else {
        return ExitCode::from(1);
    };
    for text in dispatch
        .outcome
        .system_messages
        .iter()
        .chain(&batch.system_messages)
    {
        eprintln!("janua: {text}");
    }
    for warning in dispatch.outcome.warnings.iter().chain(&batch.warnings) {
        eprintln!("janua: warning: {warning}");
    }
    if let Some(stop) = &batch.stop {
        eprintln!("janua: stop: {stop}");
    }
    let json = if outcome {
        serde_json::json!({
            "tool_result": dispatch.block,
            "outcome": dispatch.outcome,
            "batch": {
                "additional_context": batch.additional_context,
                "stop": batch.stop,
            },
        })
    } else {
        for context in &batch.additional_context {
            eprintln!("janua: PostToolBatch context: {context}");
        }
        serde_json::to_value(&dispatch.block).unwrap_or_default()
    };
    println!("{json}");
    if dispatch.block.is_error {
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
    format!("toolu_janua_{nanos:x}{:x}", std::process::id())
}
