//! An MCP server's tools as janua tools: canonical names, specs, and results as content parts.
//!
//! What a server says about its tools is a claim: `readOnlyHint` only lets calls run side by side,
//! it never makes a tool read-only for the permission decision (DESIGN §1: the model asking, or a
//! server claiming, is never authorization).

use base64::Engine as _;
use serde::Deserialize as _;
use serde_json::Value;

use janua_types::{CapabilityClass, ToolSpec};

/// Longest canonical name, as model APIs accept.
const MAX_NAME: usize = 64;
/// Longest description kept; servers have sent whole manuals.
const MAX_DESCRIPTION: usize = 2048;

/// `[A-Za-z0-9_-]` only: anything else becomes `_`.
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The prefix every tool of `server` has: `mcp__<server>__`.
pub(crate) fn prefix(server: &str) -> String {
    format!("mcp__{}__", sanitize(server))
}

/// `mcp__<server>__<tool>`, sanitized and cut to 64 characters.
pub(crate) fn canonical_name(server: &str, tool: &str) -> String {
    let mut name = format!("{}{}", prefix(server), sanitize(tool));
    name.truncate(MAX_NAME);
    name
}

/// One entry of a server's `tools/list` (other fields are ignored).
#[derive(serde::Deserialize)]
struct Listed {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(rename = "inputSchema", default)]
    input_schema: Option<Value>,
    #[serde(default)]
    annotations: Option<Hints>,
}

#[derive(serde::Deserialize)]
struct Hints {
    #[serde(rename = "readOnlyHint", default)]
    read_only_hint: Option<bool>,
}

/// Why an entry of a server's `tools/list` is skipped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BadTool {
    #[error("a malformed tool: {0}")]
    Malformed(serde_json::Error),
    #[error("a tool without a name")]
    NoName,
    #[error("tool {0:?} has no inputSchema object")]
    NoSchema(String),
    #[error("tool {0:?}: the input schema must describe an object")]
    NotAnObject(String),
}

/// The spec of one entry of a server's `tools/list`, and the tool's name on its server.
pub(crate) fn spec(server: &str, tool: &Value) -> Result<(ToolSpec, String), BadTool> {
    let listed = Listed::deserialize(tool).map_err(BadTool::Malformed)?;
    let original = listed.name;
    if original.is_empty() {
        return Err(BadTool::NoName);
    }
    let Some(mut schema) = listed.input_schema.filter(Value::is_object) else {
        return Err(BadTool::NoSchema(original));
    };
    if schema.get("type").is_none() {
        schema["type"] = Value::from("object");
    }
    if schema["type"] != "object" {
        return Err(BadTool::NotAnObject(original));
    }
    let description: String = listed
        .description
        .unwrap_or_default()
        .chars()
        .take(MAX_DESCRIPTION)
        .collect();
    let read_only_hint = listed
        .annotations
        .and_then(|hints| hints.read_only_hint)
        .unwrap_or(false);
    Ok((
        ToolSpec {
            name: canonical_name(server, &original),
            description,
            input_schema: schema,
            class: CapabilityClass::Mcp,
            read_only: false,
            concurrency_safe: read_only_hint,
            rule_field: None,
            validates_input: false,
        },
        original,
    ))
}

/// One part of a server's result, in the shape janua shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text (resources and parts janua cannot show become text saying what they were).
    Text(String),
    /// An image, decoded from the server's base64.
    Image {
        /// Its media type, as the server gave it.
        media_type: String,
        /// The encoded image bytes.
        data: Vec<u8>,
    },
}

/// A `CallToolResult`'s content as janua content parts, its structured content, and whether the
/// server reported an error.
pub struct Converted {
    /// The parts, in the server's order.
    pub content: Vec<Part>,
    /// `structuredContent`, as JSON text.
    pub structured: Option<String>,
    /// The server's `isError`.
    pub is_error: bool,
}

/// Converts `result`; parts janua cannot show become text saying what they were.
pub(crate) fn convert(result: &Value) -> Converted {
    let parts = result["content"].as_array().map_or(&[][..], Vec::as_slice);
    let content = parts.iter().map(part).collect();
    let structured = result
        .get("structuredContent")
        .filter(|value| !value.is_null())
        .map(Value::to_string);
    Converted {
        content,
        structured,
        is_error: result["isError"] == Value::Bool(true),
    }
}

fn part(part: &Value) -> Part {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    match part["type"].as_str() {
        Some("text") => Part::Text(text(&part["text"])),
        Some("image") => {
            match base64::engine::general_purpose::STANDARD.decode(text(&part["data"])) {
                Ok(data) => Part::Image {
                    media_type: text(&part["mimeType"]),
                    data,
                },
                Err(error) => Part::Text(format!("[an image whose data is not base64: {error}]")),
            }
        }
        Some("resource") => {
            let resource = &part["resource"];
            match resource["text"].as_str() {
                Some(body) => Part::Text(format!("[resource {}]\n{body}", text(&resource["uri"]))),
                None => Part::Text(format!(
                    "[binary resource {} ({})]",
                    text(&resource["uri"]),
                    text(&resource["mimeType"])
                )),
            }
        }
        Some("resource_link") => Part::Text(format!(
            "[resource link {} {}]",
            text(&part["uri"]),
            text(&part["name"])
        )),
        Some("audio") => Part::Text(format!("[audio ({}), not shown]", text(&part["mimeType"]))),
        other => Part::Text(format!(
            "[a content part of type {} janua does not show]",
            other.unwrap_or("(none)")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_names_table() {
        let long = "t".repeat(100);
        let cases = [
            ("github", "issues", "mcp__github__issues"),
            ("my server", "get.item", "mcp__my_server__get_item"),
            ("ünï", "x/y", "mcp___n___x_y"),
            ("s", long.as_str(), &*format!("mcp__s__{}", "t".repeat(56))),
        ];
        for (server, tool, expected) in cases {
            let name = canonical_name(server, tool);
            assert_eq!(name, expected);
            assert!(name.len() <= 64);
        }
    }

    #[test]
    fn specs_never_trust_read_only_hints() {
        let (listed, original) = spec(
            "fs",
            &json!({"name": "read_file", "description": "Reads", "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": true}}),
        )
        .unwrap();
        assert_eq!(original, "read_file");
        assert_eq!(listed.name, "mcp__fs__read_file");
        assert!(!listed.read_only, "a server's hint is not a grant");
        assert!(listed.concurrency_safe);
        assert_eq!(listed.class, CapabilityClass::Mcp);
        assert!(matches!(
            spec("fs", &json!({"name": "x"})),
            Err(BadTool::NoSchema(name)) if name == "x"
        ));
        assert!(
            spec(
                "fs",
                &json!({"name": "x", "inputSchema": {"type": "string"}})
            )
            .is_err()
        );
        assert!(spec("fs", &json!({"inputSchema": {}})).is_err());
    }

    #[test]
    fn results_convert_every_part() {
        let converted = convert(&json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
                {"type": "image", "data": "***", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
                {"type": "audio", "data": "", "mimeType": "audio/wav"},
                {"type": "mystery"}
            ],
            "structuredContent": {"a": 1},
            "isError": true
        }));
        assert!(converted.is_error);
        assert_eq!(converted.structured.as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(converted.content.len(), 6);
        assert!(matches!(&converted.content[0], Part::Text(t) if t == "hello"));
        assert!(
            matches!(&converted.content[1], Part::Image { data, .. } if *data == [0x89, b'P', b'N', b'G'])
        );
        assert!(matches!(&converted.content[2], Part::Text(t) if t.contains("not base64")));
        assert!(matches!(&converted.content[3], Part::Text(t) if t.contains("body")));
        assert!(!convert(&json!({"content": []})).is_error);
    }
}
