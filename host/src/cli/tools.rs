//! `janua tools [--format table|anthropic|openai|mcp]`.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::Value;

use janua::Runtime;

use janua::serve::{DefinitionFormat, tool_definitions};

/// Arguments of `janua tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// A human-readable table with each tool's parameters.
    Table,
    /// Anthropic Messages API `tools`.
    Anthropic,
    /// OpenAI function tools.
    Openai,
    /// MCP `tools/list` result.
    Mcp,
}

/// Prints the registry.
pub(crate) fn run(runtime: &Runtime, args: &ToolsArgs) -> anyhow::Result<ExitCode> {
    let tools = runtime.tools();
    let format = match args.format {
        Format::Table => {
            print_table(&tools);
            return Ok(ExitCode::SUCCESS);
        }
        Format::Anthropic => DefinitionFormat::Anthropic,
        Format::Openai => DefinitionFormat::OpenAi,
        Format::Mcp => DefinitionFormat::Mcp,
    };
    let definitions = tool_definitions(tools.iter().map(|tool| &tool.spec), format);
    let text = serde_json::to_string_pretty(&definitions)?;
    println!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn print_table(tools: &[janua::ToolInfo]) {
    if tools.is_empty() {
        println!("(no tools)");
        return;
    }
    for tool in tools {
        let spec = &tool.spec;
        let flags = [
            spec.read_only.then_some("read-only"),
            spec.concurrency_safe.then_some("concurrency-safe"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        println!(
            "{}  [{}{}{}]  {}",
            spec.name,
            spec.class.as_str(),
            if flags.is_empty() { "" } else { ", " },
            flags,
            tool.source
        );
        println!("  {}", spec.description.lines().next().unwrap_or_default());
        println!("  grants: {}", tool.grants);
        for line in parameters(&spec.input_schema) {
            println!("    {line}");
        }
    }
}

/// One line per top-level property: `name: type (required) - description`.
fn parameters(schema: &Value) -> Vec<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let kind = match property.get("type") {
                Some(Value::String(kind)) => kind.clone(),
                Some(Value::Array(kinds)) => kinds
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|kind| *kind != "null")
                    .collect::<Vec<_>>()
                    .join("|"),
                _ => "any".to_owned(),
            };
            let flag = if required.contains(&name.as_str()) {
                " (required)"
            } else {
                ""
            };
            let description = property
                .get("description")
                .and_then(Value::as_str)
                .map(|text| format!(" - {}", text.lines().next().unwrap_or_default()))
                .unwrap_or_default();
            format!("{name}: {kind}{flag}{description}")
        })
        .collect()
}
