//! Tool definitions in the shapes model APIs expect: Anthropic `tools`, OpenAI function tools, and
//! MCP `tools/list` entries.

use serde_json::{Value, json};

use janua_types::ToolSpec;

/// MCP's behaviour hints, from what janua knows of the tool: read-only tools change nothing
/// (and repeat without effect); write and process tools may destroy; network, MCP and external
/// tools reach beyond the machine.
fn annotations(spec: &ToolSpec) -> Value {
    use janua_types::CapabilityClass;
    let destructive = !spec.read_only
        && matches!(
            spec.class,
            CapabilityClass::Write
                | CapabilityClass::Process
                | CapabilityClass::Mcp
                | CapabilityClass::Agent
                | CapabilityClass::External
        );
    json!({
        "readOnlyHint": spec.read_only,
        "destructiveHint": destructive,
        "idempotentHint": spec.read_only,
        "openWorldHint": matches!(
            spec.class,
            CapabilityClass::Network | CapabilityClass::Mcp | CapabilityClass::External
        ),
    })
}

/// A tool-definition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefinitionFormat {
    /// `[{"name","description","input_schema"}]`.
    Anthropic,
    /// `[{"type":"function","function":{"name","description","parameters"}}]`.
    OpenAi,
    /// `{"tools":[{"name","description","inputSchema","annotations"}]}`.
    Mcp,
}

/// The definitions of `specs` in `format`.
pub fn tool_definitions<'a>(
    specs: impl IntoIterator<Item = &'a ToolSpec>,
    format: DefinitionFormat,
) -> Value {
    let specs = specs.into_iter();
    match format {
        DefinitionFormat::Anthropic => specs
            .map(|spec| {
                json!({
                    "name": spec.name,
                    "description": spec.description,
                    "input_schema": spec.input_schema,
                })
            })
            .collect(),
        DefinitionFormat::OpenAi => specs
            .map(|spec| {
                json!({
                    "type": "function",
                    "function": {
                        "name": spec.name,
                        "description": spec.description,
                        "parameters": spec.input_schema,
                    }
                })
            })
            .collect(),
        DefinitionFormat::Mcp => {
            let tools: Vec<Value> = specs
                .map(|spec| {
                    json!({
                        "name": spec.name,
                        "description": spec.description,
                        "inputSchema": spec.input_schema,
                        "annotations": annotations(spec),
                    })
                })
                .collect();
            json!({ "tools": tools })
        }
    }
}
