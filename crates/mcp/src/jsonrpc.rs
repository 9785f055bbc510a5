//! JSON-RPC 2.0 messages as MCP's stdio transport carries them: one JSON object per line.
//!
//! Shared by the MCP client (`connection.rs`, `http.rs`), janua's MCP server
//! (`host/src/protocol/mcp_server.rs`) and the agent runner (`host/src/runtime/runner.rs`), so it
//! lives in the lowest of them. This file only reads and writes messages; it knows no MCP method.
//! The messages are small serde types rather than a JSON-RPC crate because the framing is a dozen lines and the server's CPU budget per call
//! (BENCHMARKS.md, MCP) leaves no room for a generic layer's task hand-offs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// JSON-RPC's error codes that janua sends or reads.
pub mod code {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a JSON-RPC message.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The params do not fit the method.
    pub const INVALID_PARAMS: i64 = -32602;
}

/// One message read from the peer.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: it must be answered with its `id`.
    Request {
        /// The request's id, echoed by the answer.
        id: Value,
        /// The method called.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A notification: never answered.
    Notification {
        /// The method notified.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// The answer to a request this side sent: `Ok(result)` or `Err(error object)`.
    Response {
        /// The id of the request answered.
        id: Value,
        /// Its result or error object.
        outcome: Result<Value, Value>,
    },
}

/// A line that is not a usable message, with the error response it deserves.
#[derive(Debug, Clone, PartialEq)]
pub struct BadMessage {
    /// The request id when one could be read (else the response carries `null`).
    pub id: Value,
    /// The JSON-RPC error code (`code::PARSE_ERROR`, `code::INVALID_REQUEST`).
    pub code: i64,
    /// What is wrong with the line.
    pub message: String,
}

#[derive(Deserialize)]
struct Raw {
    jsonrpc: Option<String>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    error: Option<Value>,
}

/// Keeps a present `null` (`"id": null`, `"result": null`) apart from an absent field.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// Reads one line. Blank lines are the caller's to skip.
pub fn parse(line: &[u8]) -> Result<Incoming, BadMessage> {
    let bad = |id: Value, code: i64, message: String| BadMessage { id, code, message };
    let raw: Raw = match serde_json::from_slice(line) {
        Ok(raw) => raw,
        Err(error) if error.is_data() => {
            return Err(bad(
                Value::Null,
                code::INVALID_REQUEST,
                format!("not a JSON-RPC message object: {error}"),
            ));
        }
        Err(error) => {
            return Err(bad(
                Value::Null,
                code::PARSE_ERROR,
                format!("the line is not JSON: {error}"),
            ));
        }
    };
    let id = raw.id.clone().unwrap_or(Value::Null);
    if raw.jsonrpc.as_deref() != Some("2.0") {
        return Err(bad(
            id,
            code::INVALID_REQUEST,
            "\"jsonrpc\" must be \"2.0\"".to_owned(),
        ));
    }
    if raw
        .id
        .as_ref()
        .is_some_and(|id| !matches!(id, Value::String(_) | Value::Number(_)))
    {
        return Err(bad(
            Value::Null,
            code::INVALID_REQUEST,
            "\"id\" must be a string or a number".to_owned(),
        ));
    }
    let params = raw.params.unwrap_or(Value::Null);
    match (raw.method, raw.id) {
        (Some(method), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(method), None) => Ok(Incoming::Notification { method, params }),
        (None, Some(id)) => match (raw.result, raw.error) {
            (Some(result), None) => Ok(Incoming::Response {
                id,
                outcome: Ok(result),
            }),
            (None, Some(error)) => Ok(Incoming::Response {
                id,
                outcome: Err(error),
            }),
            _ => Err(bad(
                id,
                code::INVALID_REQUEST,
                "a response needs exactly one of \"result\" and \"error\"".to_owned(),
            )),
        },
        (None, None) => Err(bad(
            Value::Null,
            code::INVALID_REQUEST,
            "a message needs a \"method\" or an \"id\"".to_owned(),
        )),
    }
}

/// What [`read_line`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A line (without a final newline only at the end of the input).
    Complete,
    /// A line longer than the limit; it was read to its end and dropped.
    TooLong,
    /// The input ended.
    End,
}

/// Reads one line of at most `limit` bytes into `line` (cleared first), so a peer that never
/// sends a newline cannot grow memory without bound. A buffer grown by a long line is given back.
pub fn read_line(
    reader: &mut impl std::io::BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Line> {
    line.clear();
    if line.capacity() > 1 << 20 {
        line.shrink_to(64 << 10);
    }
    let mut too_long = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Complete,
            });
        }
        let (chunk, done) = match buffer.iter().position(|byte| *byte == b'\n') {
            Some(end) => (&buffer[..=end], true),
            None => (buffer, false),
        };
        if !too_long && line.len() + chunk.len() > limit {
            too_long = true;
            line.clear();
        }
        if !too_long {
            line.extend_from_slice(chunk);
        }
        let used = chunk.len();
        reader.consume(used);
        if done {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

#[derive(Serialize)]
struct Outgoing<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

impl<'a> Outgoing<'a> {
    fn empty() -> Self {
        Self {
            jsonrpc: "2.0",
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        }
    }

    fn line(&self) -> String {
        // Serializing borrowed `Value`s cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A success response.
pub fn response(id: &Value, result: &Value) -> String {
    Outgoing {
        id: Some(id),
        result: Some(result),
        ..Outgoing::empty()
    }
    .line()
}

/// An error response.
pub fn error_response(id: &Value, code: i64, message: &str) -> String {
    Outgoing {
        id: Some(id),
        error: Some(serde_json::json!({ "code": code, "message": message })),
        ..Outgoing::empty()
    }
    .line()
}

/// A request to the peer.
pub fn request(id: &Value, method: &str, params: &Value) -> String {
    Outgoing {
        id: Some(id),
        method: Some(method),
        params: Some(params),
        ..Outgoing::empty()
    }
    .line()
}

/// A notification to the peer.
pub fn notification(method: &str, params: &Value) -> String {
    Outgoing {
        method: Some(method),
        params: Some(params),
        ..Outgoing::empty()
    }
    .line()
}

/// The text of an error object a peer sent, for messages.
pub fn error_text(error: &Value) -> String {
    match (
        error.get("code"),
        error.get("message").and_then(Value::as_str),
    ) {
        (Some(code), Some(message)) => format!("{message} (code {code})"),
        (None, Some(message)) => message.to_owned(),
        _ => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_table() {
        let cases: &[(&str, Result<Incoming, i64>)] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
                Ok(Incoming::Request {
                    id: json!(1),
                    method: "ping".into(),
                    params: Value::Null,
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#,
                Ok(Incoming::Notification {
                    method: "notifications/cancelled".into(),
                    params: json!({"requestId": "a"}),
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","result":null}"#,
                Ok(Incoming::Response {
                    id: json!("x"),
                    outcome: Ok(Value::Null),
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}"#,
                Ok(Incoming::Response {
                    id: json!(7),
                    outcome: Err(json!({"code": -1, "message": "no"})),
                }),
            ),
            ("{not json", Err(code::PARSE_ERROR)),
            ("[1,2]", Err(code::INVALID_REQUEST)),
            (r#"{"id":1,"method":"ping"}"#, Err(code::INVALID_REQUEST)),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                Err(code::INVALID_REQUEST),
            ),
            (r#"{"jsonrpc":"2.0"}"#, Err(code::INVALID_REQUEST)),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#,
                Err(code::INVALID_REQUEST),
            ),
        ];
        for (line, expected) in cases {
            let got = parse(line.as_bytes()).map_err(|bad| bad.code);
            assert_eq!(&got, expected, "{line}");
        }
    }

    #[test]
    fn lines_are_bounded() {
        let mut input: &[u8] = b"{\"a\":1}\n0123456789abcdef\nok\n{\"b\"";
        let mut line = Vec::new();
        let mut read = || {
            let found = read_line(&mut input, &mut line, 10).unwrap();
            (found, String::from_utf8_lossy(&line).into_owned())
        };
        assert_eq!(read(), (Line::Complete, "{\"a\":1}\n".to_owned()));
        assert_eq!(read(), (Line::TooLong, String::new()));
        assert_eq!(read(), (Line::Complete, "ok\n".to_owned()));
        assert_eq!(read(), (Line::Complete, "{\"b\"".to_owned()));
        assert_eq!(read(), (Line::End, String::new()));
    }

    #[test]
    fn written_messages_read_back() {
        let id = json!(3);
        let line = request(&id, "tools/call", &json!({"name": "Read"}));
        assert_eq!(
            parse(line.as_bytes()).unwrap(),
            Incoming::Request {
                id: id.clone(),
                method: "tools/call".into(),
                params: json!({"name": "Read"}),
            }
        );
        let line = error_response(&id, code::METHOD_NOT_FOUND, "no such method");
        let Incoming::Response { outcome, .. } = parse(line.as_bytes()).unwrap() else {
            panic!("not a response: {line}");
        };
        assert_eq!(
            error_text(&outcome.unwrap_err()),
            "no such method (code -32601)"
        );
        assert!(!notification("notifications/initialized", &json!({})).contains("\"id\""));
    }
}
