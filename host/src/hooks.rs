//! Hooks: extensions that see tool calls before and after they run, with Claude Code's JSON shapes.
//!
//! A hook receives an event object (`hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`, ...)
//! and answers with a JSON object (`continue`, `stopReason`, `decision`, `hookSpecificOutput`, ...).
//! The same parser reads answers from in-process hooks (this issue), WASM hooks and command hooks
//! (later issues). A hook that fails makes the call fail closed: a broken policy gate must not
//! silently let calls through.

mod answer;

use std::sync::Arc;

pub use answer::{PostAnswer, PreAnswer};

/// Lifecycle events hooks can subscribe to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// After validation, before the permission decision.
    PreToolUse,
    /// After a successful call.
    PostToolUse,
    /// After a failed call.
    PostToolUseFailure,
}

impl HookEvent {
    /// The `hook_event_name` value.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
        }
    }
}

/// An executable hook. Implementations must be side-effect free with respect to warden's state.
pub trait Hook: Send + Sync {
    /// A name for decision records and errors.
    fn name(&self) -> &str;
    /// Handles one event; `Err` is a hook failure (the call fails closed for PreToolUse).
    fn handle(&self, event: &serde_json::Value) -> Result<serde_json::Value, String>;
}

/// A hook made from a name and a closure, for library users and tests.
pub struct FnHook<F> {
    name: String,
    handler: F,
}

impl<F> FnHook<F>
where
    F: Fn(&serde_json::Value) -> Result<serde_json::Value, String> + Send + Sync,
{
    /// Wraps `handler` as a hook called `name`.
    pub fn new(name: impl Into<String>, handler: F) -> Self {
        Self {
            name: name.into(),
            handler,
        }
    }
}

impl<F> Hook for FnHook<F>
where
    F: Fn(&serde_json::Value) -> Result<serde_json::Value, String> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn handle(&self, event: &serde_json::Value) -> Result<serde_json::Value, String> {
        (self.handler)(event)
    }
}

/// Which tools a hook applies to: `*` (or empty) for all, else names separated by `|`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matcher(Vec<String>);

impl Matcher {
    /// Parses a matcher.
    pub fn new(pattern: &str) -> Self {
        let pattern = pattern.trim();
        if pattern.is_empty() || pattern == "*" {
            return Self(Vec::new());
        }
        Self(
            pattern
                .split('|')
                .map(|name| name.trim().to_owned())
                .collect(),
        )
    }

    fn matches(&self, tool: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|name| name == tool)
    }
}

/// The registered hooks, in registration order.
#[derive(Clone, Default)]
pub(crate) struct HookSet {
    entries: Vec<(HookEvent, Matcher, Arc<dyn Hook>)>,
}

impl HookSet {
    pub(crate) fn add(&mut self, event: HookEvent, matcher: Matcher, hook: Arc<dyn Hook>) {
        self.entries.push((event, matcher, hook));
    }

    /// Hooks for `event` whose matcher accepts `tool`.
    pub(crate) fn matching(
        &self,
        event: HookEvent,
        tool: &str,
    ) -> impl Iterator<Item = &Arc<dyn Hook>> {
        self.entries
            .iter()
            .filter(move |(e, matcher, _)| *e == event && matcher.matches(tool))
            .map(|(_, _, hook)| hook)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matcher_table() {
        let cases = [
            ("", "Read", true),
            ("*", "Read", true),
            ("Read", "Read", true),
            ("Read|Write", "Write", true),
            ("Read|Write", "Echo", false),
            ("Read", "ReadX", false),
        ];
        for (pattern, tool, expected) in cases {
            assert_eq!(
                Matcher::new(pattern).matches(tool),
                expected,
                "{pattern} vs {tool}"
            );
        }
    }
}
