//! `janua check TOOL --input JSON`: the decision the rules reach, without running the tool.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use janua::{Runtime, ToolUse};

/// Arguments of `janua check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The tool name as a model would write it.
    tool: String,
    /// The input object as JSON, or `-` to read it from stdin (default `{}`).
    #[arg(long, value_name = "JSON")]
    input: Option<String>,
    /// Do not run PreToolUse hooks (they vote in the decision otherwise).
    #[arg(long = "no-hooks")]
    no_hooks: bool,
    /// Where the command would run: `hook` (another agent's shell, the decision alone keeps every
    /// rule: the strictest) or `confined` (janua's own Bash, `--sandbox-bash`, `janua sandbox`:
    /// the kernel view holds the Read and Edit deny rules it enforces).
    #[arg(long, value_enum, default_value_t = Surface::Hook)]
    surface: Surface,
}

/// The surface `janua check` answers for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Surface {
    /// A hook in front of another agent's shell.
    Hook,
    /// Inside janua's kernel view.
    Confined,
}

impl CheckArgs {
    /// True when the command would run inside janua's kernel view.
    pub(crate) fn confined(&self) -> bool {
        self.surface == Surface::Confined
    }

    /// The raw input text.
    pub(crate) fn read_input(&self) -> anyhow::Result<String> {
        super::call::read_input_arg(self.input.as_deref())
    }
}

/// Prints one JSON object; exit 0 whenever a decision was reached, 1 otherwise.
pub(crate) async fn run(runtime: &Runtime, args: CheckArgs, input: String) -> ExitCode {
    let (input, parse_error) = match serde_json::from_str::<Value>(&input) {
        Ok(value) => (value, None),
        Err(error) => (
            json!({}),
            Some(json!({
                "kind": "invalid_input",
                "message": format!("the input is not valid JSON: {error}"),
            })),
        ),
    };
    let report = runtime
        .check(
            ToolUse {
                id: "toolu_janua_check".to_owned(),
                name: args.tool.clone(),
                input,
            },
            !args.no_hooks,
        )
        .await;
    let stage_error = parse_error.or_else(|| {
        report
            .stage_error
            .as_ref()
            .map(|failure| json!({ "kind": failure.kind.as_str(), "message": failure.message }))
    });
    let surface = if args.confined() { "confined" } else { "hook" };
    let mut printed = match &report.decision {
        Some(decision) => json!({
            "decision": decision.verdict,
            "reason": decision.reason,
            "rule": decision.decided_by.rule(),
            "source": decision.decided_by.source_label(),
            "tool": report.tool,
            "surface": surface,
        }),
        None => json!({
            "decision": Value::Null,
            "reason": "no decision: the call did not reach the permission stage",
            "rule": Value::Null,
            "source": Value::Null,
            "tool": report.tool,
            "surface": surface,
        }),
    };
    if let Some(error) = stage_error {
        printed["stage_error"] = error;
    }
    println!("{printed}");
    if report.decision.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
