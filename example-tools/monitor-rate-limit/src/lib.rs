//! Example monitor: cancels calls of the tools in `config.tools` (default `["Bash"]`) beyond
//! `config.per_minute` (default 30) started calls of the same tool in any 60-second window.
//!
//! Time is the host's `time_ms` of each `tool_started` event, never a clock read here, so the
//! window follows the session's own timeline. A cancelled call does not count against the limit.
//! The counts live in memory: when the host re-creates the instance (after a trap or a timeout)
//! they start again from zero. Every other event gets `{}`.

// Native builds exist only for unit tests and do not export the component (see below).
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use janua_sdk::monitor::{self, Monitor};
use serde::Deserialize;
use serde_json::Value;

/// The length of the sliding window.
const WINDOW_MS: u64 = 60_000;
/// Calls allowed per window when the manifest gives no `per_minute`.
const DEFAULT_PER_MINUTE: u64 = 30;

/// The fields of a monitor event this monitor reads; the host sends more.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    event: String,
    time_ms: u64,
    tool_name: Option<String>,
    tool_use_id: Option<String>,
    /// Absent or `null` when the manifest gives no table.
    config: Option<Config>,
}

/// `config`, the manifest's table. Unknown keys are errors, so a misspelt limit is not ignored.
#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Config {
    /// Started calls of one tool allowed in any 60 seconds.
    per_minute: u64,
    /// The tools limited.
    tools: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            per_minute: DEFAULT_PER_MINUTE,
            tools: vec!["Bash".to_owned()],
        }
    }
}

/// Start times of the recent calls of each limited tool.
#[derive(Debug, Default)]
struct Limiter {
    started: HashMap<String, VecDeque<u64>>,
}

impl Limiter {
    /// Records a call of `tool` started at `time_ms` and returns true, or returns false without
    /// recording it when `per_minute` calls already started in the window ending then.
    fn admit(&mut self, tool: &str, time_ms: u64, per_minute: u64) -> bool {
        let started = self.started.entry(tool.to_owned()).or_default();
        while started
            .front()
            .is_some_and(|&start| start.saturating_add(WINDOW_MS) <= time_ms)
        {
            started.pop_front();
        }
        if started.len() as u64 >= per_minute {
            return false;
        }
        started.push_back(time_ms);
        true
    }

    /// The answer to `event`.
    fn observe(&mut self, event: Event) -> Result<Value, String> {
        if event.event != "tool_started" {
            return Ok(monitor::ok());
        }
        let config = event.config.unwrap_or_default();
        let Some(tool) = event.tool_name.filter(|tool| config.tools.contains(tool)) else {
            return Ok(monitor::ok());
        };
        let per_minute = config.per_minute;
        if self.admit(&tool, event.time_ms, per_minute) {
            return Ok(monitor::ok());
        }
        let id = event.tool_use_id.ok_or_else(|| {
            "monitor-rate-limit: a tool_started event has no tool_use_id".to_owned()
        })?;
        Ok(monitor::cancel(
            id,
            format!("rate limit: more than {per_minute} {tool} calls per minute"),
        ))
    }
}

/// One instance serves one session, one event at a time; the lock only satisfies `static`.
static LIMITER: Mutex<Option<Limiter>> = Mutex::new(None);

struct RateLimit;

impl Monitor for RateLimit {
    fn observe(event: Value) -> Result<Value, String> {
        let event: Event = serde_json::from_value(event)
            .map_err(|error| format!("monitor-rate-limit: invalid event or config: {error}"))?;
        let mut limiter = LIMITER
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        limiter.get_or_insert_with(Limiter::default).observe(event)
    }
}

#[cfg(target_arch = "wasm32")]
janua_sdk::export_monitor!(RateLimit);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn started(seq: u64, tool: &str, time_ms: u64, config: &Value) -> Event {
        serde_json::from_value(json!({
            "event": "tool_started",
            "seq": seq,
            "session_id": "s",
            "time_ms": time_ms,
            "tool_use_id": format!("toolu_{seq}"),
            "tool_name": tool,
            "tool_input": {},
            "config": config,
        }))
        .expect("event")
    }

    /// Calls as (tool, `time_ms`) pairs, one `tool_started` event each.
    type Calls<'a> = &'a [(&'a str, u64)];

    /// Feeds `calls` and returns the `tool_use_id` of each cancelled one.
    fn cancelled(calls: Calls<'_>, config: Value) -> Vec<String> {
        let mut limiter = Limiter::default();
        let mut cancelled = Vec::new();
        for (index, &(tool, time_ms)) in calls.iter().enumerate() {
            let answer = limiter
                .observe(started(index as u64 + 1, tool, time_ms, &config))
                .expect("answer");
            if answer != json!({}) {
                assert_eq!(answer["action"], json!("cancel"));
                cancelled.push(
                    answer["tool_use_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                );
            }
        }
        cancelled
    }

    #[test]
    fn cancels_calls_beyond_the_limit_in_a_sliding_window() {
        let config = json!({"per_minute": 2});
        let cases: &[(Calls<'_>, &[&str])] = &[
            (&[("Bash", 0), ("Bash", 1000)], &[]),
            (&[("Bash", 0), ("Bash", 1000), ("Bash", 2000)], &["toolu_3"]),
            // A cancelled call does not count: the fourth call is the third admitted attempt.
            (
                &[
                    ("Bash", 0),
                    ("Bash", 1000),
                    ("Bash", 2000),
                    ("Bash", 59_999),
                ],
                &["toolu_3", "toolu_4"],
            ),
            // The first call leaves the window exactly 60 s after it started.
            (&[("Bash", 0), ("Bash", 1000), ("Bash", 60_000)], &[]),
            (
                &[
                    ("Bash", 0),
                    ("Bash", 1000),
                    ("Bash", 60_000),
                    ("Bash", 60_500),
                ],
                &["toolu_4"],
            ),
            // Unlisted tools are neither limited nor counted.
            (&[("Read", 0), ("Read", 1), ("Read", 2), ("Bash", 3)], &[]),
        ];
        for (calls, expected) in cases {
            assert_eq!(
                cancelled(calls, config.clone()),
                *expected,
                "calls: {calls:?}"
            );
        }
    }

    #[test]
    fn each_listed_tool_has_its_own_window() {
        let config = json!({"per_minute": 1, "tools": ["Bash", "WebFetch"]});
        let calls = [("Bash", 0), ("WebFetch", 1), ("Bash", 2), ("WebFetch", 3)];
        assert_eq!(cancelled(&calls, config), ["toolu_3", "toolu_4"]);
    }

    #[test]
    fn defaults_to_thirty_bash_calls() {
        let calls: Vec<(&str, u64)> = (0..31).map(|second| ("Bash", second * 1000)).collect();
        assert_eq!(cancelled(&calls, json!({})), ["toolu_31"]);
        assert_eq!(cancelled(&calls, Value::Null), ["toolu_31"]);
    }

    #[test]
    fn the_answer_names_the_call_limit_and_tool() {
        let mut limiter = Limiter::default();
        let config = json!({"per_minute": 1});
        limiter
            .observe(started(1, "Bash", 0, &config))
            .expect("answer");
        let answer = limiter
            .observe(started(2, "Bash", 10, &config))
            .expect("answer");
        assert_eq!(
            answer,
            json!({"action": "cancel", "tool_use_id": "toolu_2", "reason": "rate limit: more than 1 Bash calls per minute"})
        );
    }

    #[test]
    fn other_events_and_bad_config() {
        let mut limiter = Limiter::default();
        let finished: Event = serde_json::from_value(json!({
            "event": "tool_finished", "seq": 1, "session_id": "s", "time_ms": 0, "dropped": 3,
            "config": {"per_minute": 0}
        }))
        .expect("event");
        assert_eq!(limiter.observe(finished).expect("answer"), json!({}));
        let bad = json!({"event": "tool_started", "config": {"per_minut": 1}});
        assert!(serde_json::from_value::<Event>(bad).is_err());
    }
}
