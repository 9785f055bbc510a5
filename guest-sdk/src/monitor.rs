//! Write monitors: observers of every lifecycle event of a session.
//!
//! A monitor is a type implementing [`Monitor`], exported with
//! [`export_monitor!`](crate::export_monitor). Each event is a JSON object with `event` (its kind:
//! `session_start`, `tool_started`, `decision`, `permission_request`, `hook_started`,
//! `hook_response`, `tool_finished`, `batch_finished`, `session_end`), `seq`, `session_id`,
//! `time_ms`, `config` (the manifest's `[[monitors]]` table, when it gives one) and `dropped` (events
//! the host dropped from its full queue before this one, when any); kinds add their own fields, and
//! later hosts may add kinds and fields, so ignore what you do not know.
//!
//! One instance lives for the whole session, so state in `static`s or `thread_local!`s survives
//! from event to event; the host re-creates the instance after a trap or a timeout. The
//! [crate documentation](crate) has an example.

use serde_json::{Map, Value, json};

/// A monitor a component exports. Implement it, then name the type in
/// [`export_monitor!`](crate::export_monitor).
pub trait Monitor {
    /// Observes one event and returns the answer: [`ok`], [`cancel`] or [`halt`]. `Err` is a
    /// monitor failure, which the host reports.
    fn observe(event: Value) -> Result<Value, String>;
}

/// The answer that changes nothing, `{}`.
pub fn ok() -> Value {
    Value::Object(Map::new())
}

/// The answer that cancels the in-flight call `tool_use_id`, for `reason`.
pub fn cancel(tool_use_id: impl Into<String>, reason: impl Into<String>) -> Value {
    json!({
        "action": "cancel",
        "tool_use_id": tool_use_id.into(),
        "reason": reason.into(),
    })
}

/// The answer that stops the whole session, for `reason`.
pub fn halt(reason: impl Into<String>) -> Value {
    json!({
        "action": "halt",
        "reason": reason.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_have_the_documented_shape() {
        assert_eq!(ok(), json!({}));
        assert_eq!(
            cancel("toolu_1", "too slow"),
            json!({"action": "cancel", "tool_use_id": "toolu_1", "reason": "too slow"})
        );
        assert_eq!(
            halt("enough"),
            json!({"action": "halt", "reason": "enough"})
        );
    }
}
