//! Test guest: a hook whose behaviour the manifest's `config.behaviour` picks, so host tests can
//! drive every outcome of a hook call from one component.
//!
//! - `answer` (the default): answers `config.answer`, or `{}` when absent.
//! - `trap`: panics.
//! - `loop`: spins until the host interrupts it.
//! - `garbage`: answers `this is not json {` as its JSON text.
//! - `err`: fails with `scripted failure`.
//! - `probe`: reads the file `config.path` and the variable `config.env` and reports both in
//!   `additionalContext`, to test the hook's grants.
//! - `flood`: answers 100 MB of `additionalContext`.
//! - `echo`: answers the whole event as `additionalContext`, to test what the host sends.
//! - `rewrite`: answers `updatedInput` = `tool_input` with the fields of `config.set`
//!   overwritten, plus `permissionDecision` = `config.decision` when given.
//!
//! Whatever the behaviour, a string `config.log` is first written to the host's log (info) and
//! reported as progress, to test the `host` import from a hook.

use janua_sdk::LogLevel;
use janua_sdk::hook::{self, Hook};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The answer text of the `garbage` behaviour.
const GARBAGE: &str = "this is not json {";
/// Characters of the probed file that `probe` reports.
const PROBE_CHARS: usize = 40;

/// What the hook does, from `config.behaviour`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Behaviour {
    #[default]
    Answer,
    Trap,
    Loop,
    Garbage,
    Err,
    Probe,
    Echo,
    Rewrite,
    Flood,
}

/// `config`, the manifest's table; every field serves one behaviour.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Config {
    behaviour: Behaviour,
    answer: Option<Value>,
    path: Option<String>,
    env: Option<String>,
    set: Map<String, Value>,
    decision: Option<String>,
    log: Option<String>,
}

/// The fields of the event this hook reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    hook_event_name: String,
    tool_input: Option<Value>,
    config: Option<Config>,
}

struct Scripted;

impl Hook for Scripted {
    fn handle(event: Value) -> Result<Value, String> {
        let parsed: Event = serde_json::from_value(event.clone())
            .map_err(|error| format!("unexpected event or config: {error}"))?;
        let config = parsed.config.unwrap_or_default();
        if let Some(message) = &config.log {
            janua_sdk::log(LogLevel::Info, message);
            janua_sdk::progress(message);
        }
        match config.behaviour {
            Behaviour::Answer => Ok(config.answer.unwrap_or_else(hook::no_objection)),
            Behaviour::Trap => panic!("scripted trap"),
            Behaviour::Loop => spin(),
            // `handle_text` answers before `handle` runs; kept for completeness.
            Behaviour::Garbage => Err("garbage is answered by handle_text".to_owned()),
            Behaviour::Err => Err("scripted failure".to_owned()),
            Behaviour::Probe => Ok(hook::context(
                &parsed.hook_event_name,
                format!(
                    "read: {}; env: {}",
                    probe_file(config.path.as_deref()),
                    probe_env(config.env.as_deref())
                ),
            )),
            Behaviour::Flood => Ok(hook::context(
                &parsed.hook_event_name,
                "f".repeat(100 << 20),
            )),
            Behaviour::Echo => Ok(hook::context(&parsed.hook_event_name, event.to_string())),
            Behaviour::Rewrite => {
                let mut input = match parsed.tool_input {
                    Some(Value::Object(input)) => input,
                    _ => Map::new(),
                };
                input.extend(config.set);
                let mut specific = Map::new();
                specific.insert("hookEventName".to_owned(), json!("PreToolUse"));
                specific.insert("updatedInput".to_owned(), Value::Object(input));
                if let Some(decision) = config.decision {
                    specific.insert("permissionDecision".to_owned(), Value::String(decision));
                }
                Ok(json!({ "hookSpecificOutput": specific }))
            }
        }
    }

    // Overridden only so `garbage` can hand the host text that is not JSON, which the SDK's
    // serializing default cannot produce.
    fn handle_text(event: String) -> Result<String, String> {
        let value: Value = serde_json::from_str(&event)
            .map_err(|error| format!("the event is not valid JSON: {error}"))?;
        let behaviour = value
            .get("config")
            .and_then(|config| config.get("behaviour"))
            .cloned()
            .map(serde_json::from_value::<Behaviour>)
            .transpose()
            .map_err(|error| format!("unknown behaviour: {error}"))?;
        if behaviour == Some(Behaviour::Garbage) {
            return Ok(GARBAGE.to_owned());
        }
        Self::handle(value).map(|answer| answer.to_string())
    }
}

janua_sdk::export_hook!(Scripted);

/// Busy-loops forever; `black_box` keeps the optimizer from proving the loop useless, so only
/// the host's epoch interruption ends it.
fn spin() -> ! {
    let mut turns: u64 = 0;
    loop {
        turns = std::hint::black_box(turns.wrapping_add(1));
    }
}

/// `ok:<first characters>` or `error:<message>` for reading `path`.
fn probe_file(path: Option<&str>) -> String {
    let Some(path) = path else {
        return "error:no config.path".to_owned();
    };
    match std::fs::read_to_string(path) {
        Ok(text) => format!("ok:{}", text.chars().take(PROBE_CHARS).collect::<String>()),
        Err(error) => format!("error:{error}"),
    }
}

/// `set:<value>` or `unset` for the variable `name`.
fn probe_env(name: Option<&str>) -> String {
    match name.map(std::env::var) {
        Some(Ok(value)) => format!("set:{value}"),
        _ => "unset".to_owned(),
    }
}
