//! Where a call runs: the root session, a delegated call's nest, or a forked sub-session. A scope
//! only ever narrows its parent: fewer tools, more deny and ask rules, a stricter mode, a grant
//! ceiling, a shorter deadline.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::ceiling::Ceiling;
use janua_permissions::Policy;

/// The default depth limit of nested calls (`delegation_depth_exceeded` beyond it).
pub const DEFAULT_MAX_DELEGATION_DEPTH: u32 = 3;

/// The share of a caller's remaining time a nested call may use: the caller keeps the rest to
/// use the answer.
const DEADLINE_SHARE: f64 = 0.9;

/// A scope's narrowings and lineage.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    /// How many calls or forks this scope is nested in (0: the root session).
    pub(crate) depth: u32,
    /// The call that opened the scope (the delegating tool's or the Agent tool's `tool_use` id).
    pub(crate) parent_tool_use_id: Option<String>,
    /// The sub-agent the scope belongs to (inherited by delegated calls within it).
    pub(crate) agent_id: Option<String>,
    /// The tools available; `None`: every tool of the parent.
    pub(crate) tools: Option<BTreeSet<String>>,
    /// A narrowed policy; `None`: the parent's.
    pub(crate) policy: Option<Arc<Policy>>,
    /// The grant ceiling; `None`: each tool's own grants.
    pub(crate) ceiling: Option<Arc<Ceiling>>,
    /// The latest moment a call in the scope may end.
    pub(crate) deadline: Option<Instant>,
    /// The caller's cancel flag: once set, calls in the scope are cancelled too.
    pub(crate) cancelled_with: Option<Arc<AtomicBool>>,
    /// Numbers the ids of calls delegated from within this scope.
    next_call: AtomicU64,
}

impl Scope {
    /// The root session's scope.
    pub(crate) fn root() -> Self {
        Self::default()
    }

    /// A child of `self` opened by the call `parent_tool_use_id`, `depth + 1` deep, inheriting
    /// everything; the caller narrows the fields it must.
    pub(crate) fn child(&self, parent_tool_use_id: Option<String>) -> Self {
        Self {
            depth: self.depth + 1,
            parent_tool_use_id: parent_tool_use_id.or_else(|| self.parent_tool_use_id.clone()),
            agent_id: self.agent_id.clone(),
            tools: self.tools.clone(),
            policy: self.policy.clone(),
            ceiling: self.ceiling.clone(),
            deadline: self.deadline,
            cancelled_with: self.cancelled_with.clone(),
            next_call: AtomicU64::new(0),
        }
    }

    /// The id of the next call delegated by `caller`: `<caller>.<n>`.
    pub(crate) fn nested_id(&self, caller: &str) -> String {
        format!(
            "{caller}.{}",
            self.next_call.fetch_add(1, Ordering::Relaxed) + 1
        )
    }

    /// True when `tool` is in the scope's tool set.
    pub(crate) fn has_tool(&self, tool: &str) -> bool {
        self.tools.as_ref().is_none_or(|tools| tools.contains(tool))
    }

    /// The time left before the scope's deadline, if it has one.
    pub(crate) fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }

    /// The deadline a nested call of a caller ending at `caller_deadline` gets.
    pub(crate) fn share_of(caller_deadline: Instant) -> Instant {
        let now = Instant::now();
        let left = caller_deadline.saturating_duration_since(now);
        now + left.mul_f64(DEADLINE_SHARE)
    }

    /// True when the caller was cancelled.
    pub(crate) fn caller_cancelled(&self) -> bool {
        self.cancelled_with
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    }

    /// Adds the lineage fields (`parent_tool_use_id`, `agent_id`, `delegation_depth`) to an
    /// event or a hook input; nothing at the root.
    pub(crate) fn annotate(&self, fields: &mut Value) {
        if self.depth == 0 {
            return;
        }
        if let Value::Object(object) = fields {
            object.insert(
                "parent_tool_use_id".to_owned(),
                self.parent_tool_use_id.clone().into(),
            );
            if let Some(agent) = &self.agent_id {
                object.insert("agent_id".to_owned(), agent.clone().into());
            }
            object.insert("delegation_depth".to_owned(), self.depth.into());
        }
    }
}
