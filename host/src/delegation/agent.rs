//! The Agent tool: janua has no model, so an Agent call hands its request to the embedder's
//! [`AgentRunner`] together with a [`SubSession`](super::SubSession) narrowed to the tools the
//! call names. Rules `Agent(name)` (or `Task(name)`, the accepted alias) match `subagent_type`.

use std::time::Duration;

use janua_types::AGENT_TOOL;
use serde_json::json;

use crate::sandbox::BoxFuture;
use crate::sandbox::limits::Limits;
use janua_types::{CapabilityClass, ToolSpec};

/// The longest an agent run may take unless the operator's `--timeout` says more.
const DEFAULT_AGENT_TIMEOUT: Duration = Duration::from_secs(600);

/// What an Agent call asks its runner to do.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AgentRequest {
    /// The sub-agent's id (on every event and hook input of its calls).
    pub agent_id: String,
    /// The Agent call's `tool_use` id.
    pub parent_tool_use_id: String,
    /// The session the sub-agent's calls belong to.
    pub session_id: String,
    /// A short description of the task.
    pub description: String,
    /// The task itself.
    pub prompt: String,
    /// Which kind of sub-agent, when the model named one.
    pub subagent_type: Option<String>,
    /// The model the sub-agent should use (`sonnet`, `opus`, `haiku`, or a model id), if named.
    pub model: Option<String>,
    /// A name for the sub-agent, if given.
    pub name: Option<String>,
    /// Where the sub-agent should work (`worktree`, `remote`), if asked; the runner decides.
    pub isolation: Option<String>,
    /// The tools the sub-session holds, as tool definitions (`name`, `description`,
    /// `input_schema`).
    pub tools: Vec<serde_json::Value>,
    /// The time the run has.
    pub timeout_ms: u64,
}

/// What a runner reports back: the text the parent model receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentReport {
    /// The sub-agent's final answer.
    pub result: String,
}

/// A run that failed; the Agent call's result is `tool_failed` with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AgentError(pub String);

/// Runs sub-agents. janua calls it for every Agent call with the request and a sub-session
/// whose tools, rules and grants are the parent's, narrowed; every tool call the runner makes
/// must go through that sub-session.
pub trait AgentRunner: Send + Sync {
    /// Runs one sub-agent to its final answer.
    fn run<'s>(
        &'s self,
        request: AgentRequest,
        session: &'s super::SubSession<'s>,
    ) -> BoxFuture<'s, Result<AgentReport, AgentError>>;
}

/// The Agent tool's spec.
pub(crate) fn agent_spec() -> ToolSpec {
    ToolSpec {
        name: AGENT_TOOL.to_owned(),
        description: "Launches a sub-agent to handle a task on its own. The sub-agent gets the \
            tools you name (default: all of yours) under your permissions, never more, and \
            returns one final answer."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                "prompt": {"type": "string", "description": "The task for the sub-agent"},
                "subagent_type": {"type": "string", "description": "The kind of sub-agent to use"},
                "model": {"type": "string", "description": "The model the sub-agent uses: sonnet, opus, haiku, or a model id (passed to the runner)"},
                "name": {"type": "string", "description": "A name for the sub-agent (passed to the runner)"},
                "isolation": {"type": "string", "enum": ["worktree", "remote"], "description": "Where the sub-agent works (passed to the runner, which decides)"},
                "run_in_background": {"type": "boolean", "description": "Accepted for compatibility: janua runs every sub-agent to its end before answering"},
                "tools": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The tools the sub-agent may use (a subset of yours)"
                }
            },
            "required": ["description", "prompt"],
            "additionalProperties": false
        }),
        class: CapabilityClass::Agent,
        read_only: false,
        concurrency_safe: true,
        rule_field: Some("subagent_type".to_owned()),
        validates_input: false,
    }
}

/// The limits of an agent run: the operator's output limits, and at least ten minutes.
pub(crate) fn agent_limits(operator: Limits) -> Limits {
    Limits {
        timeout: operator.timeout.max(DEFAULT_AGENT_TIMEOUT),
        ..operator
    }
}
