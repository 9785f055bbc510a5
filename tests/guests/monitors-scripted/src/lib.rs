//! Test guest: a monitor driven by the manifest's `config`, so host tests can script cancels,
//! halts, traps and a slow consumer from one component.
//!
//! - `config.record` (absolute path): appends every event, as compact JSON and a newline, to
//!   that file (the manifest grants its directory).
//! - `config.sleep_ms`: sleeps that long per event, to fill the host's bounded queue.
//! - `config.trap_on` (event kind): panics when such an event arrives.
//! - `config.cancel_tool` (tool name): cancels each call of that tool when it starts, with
//!   reason `scripted cancel`.
//! - `config.halt_tool` (tool name): halts the session when a call of that tool starts, with
//!   reason `scripted halt`.
//!
//! - `config.log` (string): writes it to the host's log (info) and reports it as progress, to
//!   test the `host` import from a monitor.
//!
//! Logging, recording, sleeping and trapping happen in that order, before any answer; otherwise
//! `{}`.

use std::io::Write as _;

use janua_sdk::LogLevel;
use janua_sdk::monitor::{self, Monitor};
use serde::Deserialize;
use serde_json::Value;

/// `config`, the manifest's table.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Config {
    cancel_tool: Option<String>,
    halt_tool: Option<String>,
    record: Option<String>,
    sleep_ms: Option<u64>,
    trap_on: Option<String>,
    log: Option<String>,
}

/// The fields of the event this monitor reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    event: String,
    tool_name: Option<String>,
    tool_use_id: Option<String>,
    config: Option<Config>,
}

struct Scripted;

impl Monitor for Scripted {
    fn observe(value: Value) -> Result<Value, String> {
        let event: Event = serde_json::from_value(value.clone())
            .map_err(|error| format!("unexpected event or config: {error}"))?;
        let config = event.config.unwrap_or_default();
        if let Some(message) = &config.log {
            janua_sdk::log(LogLevel::Info, message);
            janua_sdk::progress(message);
        }
        if let Some(path) = &config.record {
            record(path, &value)?;
        }
        if let Some(sleep_ms) = config.sleep_ms {
            std::thread::sleep(std::time::Duration::from_millis(sleep_ms));
        }
        if config.trap_on.as_deref() == Some(event.event.as_str()) {
            panic!("scripted trap on {}", event.event);
        }
        if event.event != "tool_started" {
            return Ok(monitor::ok());
        }
        let tool = event.tool_name.as_deref();
        if tool.is_some() && config.cancel_tool.as_deref() == tool {
            let id = event.tool_use_id.unwrap_or_default();
            return Ok(monitor::cancel(id, "scripted cancel"));
        }
        if tool.is_some() && config.halt_tool.as_deref() == tool {
            return Ok(monitor::halt("scripted halt"));
        }
        Ok(monitor::ok())
    }
}

janua_sdk::export_monitor!(Scripted);

/// Appends `event` and a newline to `path` in one write, so lines never interleave.
fn record(path: &str, event: &Value) -> Result<(), String> {
    let mut line = event.to_string();
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(line.as_bytes()))
        .map_err(|error| format!("cannot append to {path}: {error}"))
}
