//! The Agent tool as the registry lists it: its spec and its limits. It is registered like a
//! built-in tool; `delegation` runs its calls (through the embedder's runner).

use std::time::Duration;

use janua_types::{AGENT_TOOL, CapabilityClass, ToolSpec};
use serde_json::json;

use janua_sandbox::Limits;

/// The longest an agent run may take unless the operator's `--timeout` says more.
const DEFAULT_AGENT_TIMEOUT: Duration = Duration::from_secs(600);

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
