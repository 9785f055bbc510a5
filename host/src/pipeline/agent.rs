//! The Agent tool: janua has no model, so an Agent call hands its request to the embedder's
//! [`AgentRunner`] together with a [`SubSession`](super::SubSession) narrowed to the tools the
//! call names. Rules `Agent(name)` (or `Task(name)`, the accepted alias) match `subagent_type`.

use janua_sandbox::BoxFuture;

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
