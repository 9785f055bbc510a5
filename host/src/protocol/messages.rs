//! The stream-json lines of `janua run`: parsing what the agent loop sends, and building what
//! janua answers. Shapes follow Claude Code's SDK messages where one exists; every line is
//! described by `docs/protocol.schema.json`.

use serde_json::{Value, json};

use crate::pipeline::BatchDispatch;
use janua_permissions::{PermissionRequest, PromptAnswer};
use janua_types::{ErrorKind, ToolUse};

/// What one input line asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Inbound {
    /// The `tool_use` blocks of one assistant message (or one bare block).
    Batch(Vec<ToolUse>),
    /// The answer to a `control_request`.
    ControlResponse {
        request_id: String,
        answer: PromptAnswer,
    },
    /// Cancel one running call.
    Cancel { tool_use_id: String },
    /// Cancel everything running and what is queued in the current batch.
    Interrupt,
}

/// Why an input line is not understood; the text goes into its `error` line.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BadLine {
    #[error("not valid JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    #[error("a message needs a string \"type\"")]
    NoType,
    #[error(
        "unknown message type {0:?}; expected assistant, tool_use, control_response, cancel or interrupt"
    )]
    UnknownType(String),
    #[error("an assistant message needs message.content, an array of blocks")]
    NoContent,
    #[error("the assistant message holds no tool_use blocks")]
    NoToolUse,
    #[error("a tool_use block needs a non-empty string \"id\"")]
    NoId,
    #[error("tool_use {0} needs a string \"name\"")]
    NoName(String),
    #[error("a cancel message needs a string \"tool_use_id\"")]
    NoCancelId,
    #[error("a control_response needs response.request_id")]
    NoRequestId,
    #[error("a control_response needs response.response.behavior \"allow\" or \"deny\"")]
    NoBehavior,
    #[error("a control_response needs response.subtype \"success\" or \"error\"")]
    NoSubtype,
}

/// Reads one input line. The error says what is wrong, for an `error` line.
pub(crate) fn parse_line(text: &str) -> Result<Inbound, BadLine> {
    let value: Value = serde_json::from_str(text)?;
    let kind = value["type"].as_str().ok_or(BadLine::NoType)?;
    match kind {
        "assistant" => {
            let content = value["message"]["content"]
                .as_array()
                .ok_or(BadLine::NoContent)?;
            let calls = content
                .iter()
                .filter(|block| block["type"] == "tool_use")
                .map(tool_use)
                .collect::<Result<Vec<_>, _>>()?;
            if calls.is_empty() {
                return Err(BadLine::NoToolUse);
            }
            Ok(Inbound::Batch(calls))
        }
        "tool_use" => Ok(Inbound::Batch(vec![tool_use(&value)?])),
        "control_response" => control_response(&value),
        "cancel" => Ok(Inbound::Cancel {
            tool_use_id: value["tool_use_id"]
                .as_str()
                .ok_or(BadLine::NoCancelId)?
                .to_owned(),
        }),
        "interrupt" => Ok(Inbound::Interrupt),
        other => Err(BadLine::UnknownType(other.to_owned())),
    }
}

fn tool_use(block: &Value) -> Result<ToolUse, BadLine> {
    let id = block["id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .ok_or(BadLine::NoId)?;
    let name = block["name"]
        .as_str()
        .ok_or_else(|| BadLine::NoName(id.to_owned()))?;
    Ok(ToolUse {
        id: id.to_owned(),
        name: name.to_owned(),
        // A missing or non-object input is the pipeline's to report (`invalid_input`).
        input: block.get("input").cloned().unwrap_or(json!({})),
    })
}

/// `{"type":"control_response","response":{"subtype":"success","request_id":..,
/// "response":{"behavior":"allow"|"deny","message":..,"updatedPermissions":[..]}}}`; an
/// `"always": true` or any `updatedPermissions` makes an allow "allow always".
fn control_response(value: &Value) -> Result<Inbound, BadLine> {
    let response = &value["response"];
    let request_id = response["request_id"]
        .as_str()
        .ok_or(BadLine::NoRequestId)?
        .to_owned();
    let answer = match response["subtype"].as_str() {
        Some("success") => {
            let inner = &response["response"];
            match inner["behavior"].as_str() {
                // An edited input is not run: janua's decision covered the input as asked, and
                // an edit would skip the schema, hooks and rules. The model is told to call again.
                Some("allow") if inner.get("updatedInput").is_some() => {
                    PromptAnswer::Deny(format!(
                        "the reviewer approved an edited input instead; call the tool again with it: {}",
                        inner["updatedInput"]
                    ))
                }
                Some("allow") => {
                    let always = inner["always"] == Value::Bool(true)
                        || inner["updatedPermissions"]
                            .as_array()
                            .is_some_and(|updates| !updates.is_empty());
                    if always {
                        PromptAnswer::AllowAlways
                    } else {
                        PromptAnswer::Allow
                    }
                }
                Some("deny") => PromptAnswer::Deny(
                    inner["message"]
                        .as_str()
                        .unwrap_or("the user denied this call")
                        .to_owned(),
                ),
                _ => return Err(BadLine::NoBehavior),
            }
        }
        Some("error") => PromptAnswer::Deny(format!(
            "the permission request failed: {}",
            response["error"].as_str().unwrap_or("no reason given")
        )),
        _ => return Err(BadLine::NoSubtype),
    };
    Ok(Inbound::ControlResponse { request_id, answer })
}

/// The `error` line for input line `line`.
pub(crate) fn error_line(line: u64, message: &str) -> Value {
    json!({"type": "error", "line": line, "message": message})
}

/// The `control_request` asking the agent loop about `request`.
pub(crate) fn control_request(request_id: &str, request: &PermissionRequest) -> Value {
    json!({
        "type": "control_request",
        "request_id": request_id,
        "request": {
            "subtype": "can_use_tool",
            "tool_name": request.tool,
            "input": request.input,
            "reason": request.reason,
            "permission_suggestions": request.suggestions,
        },
    })
}

/// The `user` message carrying a batch's results, and the `result` line that closes it.
pub(crate) fn batch_lines(
    batch: &BatchDispatch,
    number: u64,
    duration_ms: u64,
    session_id: &str,
) -> (Value, Value) {
    let content: Vec<Value> = batch
        .results
        .iter()
        .map(|result| serde_json::to_value(&result.block).unwrap_or_default())
        .collect();
    let outcomes: Vec<Value> = batch
        .results
        .iter()
        .map(|result| serde_json::to_value(&result.outcome).unwrap_or_default())
        .collect();
    let user = json!({
        "type": "user",
        "session_id": session_id,
        "message": {"role": "user", "content": content},
        "outcomes": outcomes,
        "additional_context": batch.additional_context,
    });
    let denials: Vec<Value> = batch
        .results
        .iter()
        .filter(|result| result.error_kind() == Some(ErrorKind::PermissionDenied))
        .map(|result| {
            json!({
                "tool_use_id": result.outcome.tool_use_id,
                "tool_name": result.outcome.tool.as_deref().unwrap_or(&result.outcome.requested),
                "reason": result.outcome.error.as_ref().map(|failure| failure.message.as_str()),
            })
        })
        .collect();
    let deferred: Vec<Value> = batch
        .results
        .iter()
        .filter_map(|result| result.outcome.deferred.as_ref())
        .map(|call| serde_json::to_value(call).unwrap_or_default())
        .collect();
    let errors = batch
        .results
        .iter()
        .filter(|result| result.block.is_error)
        .count();
    let result = json!({
        "type": "result",
        "subtype": "batch",
        "session_id": session_id,
        "batch": number,
        "duration_ms": duration_ms,
        "num_calls": batch.results.len(),
        "errors": errors,
        "is_error": errors > 0,
        "denials": denials,
        "deferred": deferred,
        "stop": batch.stop,
        "warnings": batch.warnings,
        "system_messages": batch.system_messages,
    });
    (user, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_lines_table() {
        let cases: Vec<(&str, Result<Inbound, &str>)> = vec![
            (
                r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"a","name":"Read","input":{"file_path":"x"}}]}}"#,
                Ok(Inbound::Batch(vec![ToolUse {
                    id: "a".into(),
                    name: "Read".into(),
                    input: json!({"file_path": "x"}),
                }])),
            ),
            (
                r#"{"type":"tool_use","id":"b","name":"Glob"}"#,
                Ok(Inbound::Batch(vec![ToolUse {
                    id: "b".into(),
                    name: "Glob".into(),
                    input: json!({}),
                }])),
            ),
            (
                r#"{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"behavior":"allow"}}}"#,
                Ok(Inbound::ControlResponse {
                    request_id: "r1".into(),
                    answer: PromptAnswer::Allow,
                }),
            ),
            (
                r#"{"type":"control_response","response":{"subtype":"success","request_id":"r2","response":{"behavior":"deny","message":"no"}}}"#,
                Ok(Inbound::ControlResponse {
                    request_id: "r2".into(),
                    answer: PromptAnswer::Deny("no".into()),
                }),
            ),
            (
                r#"{"type":"control_response","response":{"subtype":"success","request_id":"r3","response":{"behavior":"allow","always":true}}}"#,
                Ok(Inbound::ControlResponse {
                    request_id: "r3".into(),
                    answer: PromptAnswer::AllowAlways,
                }),
            ),
            (
                r#"{"type":"cancel","tool_use_id":"a"}"#,
                Ok(Inbound::Cancel {
                    tool_use_id: "a".into(),
                }),
            ),
            (r#"{"type":"interrupt"}"#, Ok(Inbound::Interrupt)),
            (
                r#"{"type":"control_response","response":{"subtype":"success","request_id":"r4","response":{"behavior":"allow","updatedInput":{"command":"ls"}}}}"#,
                Ok(Inbound::ControlResponse {
                    request_id: "r4".into(),
                    answer: PromptAnswer::Deny(
                        "the reviewer approved an edited input instead; call the tool again with it: {\"command\":\"ls\"}".into(),
                    ),
                }),
            ),
            ("{not json", Err("not valid JSON")),
            ("[]", Err("string \"type\"")),
            (r#"{"type":"nope"}"#, Err("unknown message type")),
            (
                r#"{"type":"assistant","message":{"content":[]}}"#,
                Err("no tool_use blocks"),
            ),
            (r#"{"type":"tool_use","name":"Read"}"#, Err("\"id\"")),
            (r#"{"type":"cancel"}"#, Err("tool_use_id")),
            (
                r#"{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{}}}"#,
                Err("behavior"),
            ),
        ];
        for (line, expected) in cases {
            match (parse_line(line), expected) {
                (Ok(got), Ok(expected)) => assert_eq!(got, expected, "{line}"),
                (Err(got), Err(expected)) => {
                    assert!(got.to_string().contains(expected), "{line}: {got}");
                }
                (got, expected) => panic!("{line}: got {got:?}, expected {expected:?}"),
            }
        }
    }
}
