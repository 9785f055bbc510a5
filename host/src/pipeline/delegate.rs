//! Nested calls: a scope's admission check, dispatching inside a scope, the `delegate` import's
//! calls and the Agent tool's runs. A nested call is an ordinary dispatch with narrower services:
//! the same registry, hooks, prompter and session; the scope's policy (the parent's, or a
//! narrowed copy that only adds); the scope's grant ceiling; and a deadline within the caller's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use janua_types::{ErrorKind, ToolUse};

use super::outcome::{Dispatch, Failure};
use super::{AgentRequest, SubSession};
use super::{Placement, Services, refused};
use crate::delegation::{Ceiling, Scope};
use crate::registry::{Backend, RegisteredTool};
use janua_sandbox::{BoxFuture, Delegator, FileAccess, WitDelegated};

/// How often a nested call looks at its caller's cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// Refuses a tool the scope does not hold: one outside a sub-session's tool set, and, under a
/// grant ceiling, an MCP tool (its server's sandbox was fixed when it started) or the Agent tool
/// (its runner is a process under the operator's confinement): neither can be narrowed to the
/// caller's grants.
pub(super) fn admit(services: &Services<'_>, tool: &RegisteredTool) -> Result<(), Failure> {
    let scope = services.scope;
    if !scope.has_tool(&tool.spec.name) {
        let available: Vec<&str> = scope.tools.iter().flatten().map(String::as_str).collect();
        return Err(Failure::new(
            ErrorKind::UnknownTool,
            format!(
                "{} is not available in this sub-session; its tools are: {}",
                tool.spec.name,
                available.join(", ")
            ),
        ));
    }
    let fixed = match tool.backend {
        Backend::Mcp(..) => Some("an MCP tool: its server's sandbox"),
        Backend::Agent(_) => Some("the Agent tool: its runner's sandbox"),
        Backend::Component(_) => None,
    };
    if scope.ceiling.is_some()
        && let Some(what) = fixed
    {
        return Err(Failure::new(
            ErrorKind::PermissionDenied,
            format!(
                "{} is {what} cannot be narrowed to the delegating tool's grants",
                tool.spec.name
            ),
        ));
    }
    Ok(())
}

/// Dispatches `call` in `scope`, on `services` narrowed to it, and reports the nested result
/// (`nested_result`: the `tool_use` and its `tool_result`) for stream-json and monitors.
/// `beside_others` is the caller's: a nested call runs where its caller runs.
pub(crate) async fn dispatch_scoped(
    services: &Services<'_>,
    scope: &Scope,
    call: ToolUse,
    cancel: Arc<AtomicBool>,
    beside_others: bool,
) -> Dispatch {
    let mut nested = services.clone();
    nested.scope = scope;
    // A narrowed policy's Read deny rules must hide paths from every guest's view (Grep, Glob,
    // plugins), not only from Read's decision, exactly as the root policy's do.
    let narrowed_files;
    if let Some(policy) = &scope.policy {
        nested.policy = policy;
        narrowed_files = FileAccess {
            hidden: policy.hidden_paths(),
            ..services.files.clone()
        };
        nested.files = &narrowed_files;
    }
    let placement = Placement::nested(beside_others);
    let tool_use =
        json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input});
    let dispatch = if scope.cancelled_with.is_some() {
        let flag = Arc::clone(&cancel);
        let watch = async {
            loop {
                tokio::time::sleep(CANCEL_POLL).await;
                if scope.caller_cancelled() {
                    flag.store(true, Ordering::Relaxed);
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::select! {
            dispatch = super::dispatch(&nested, placement, call, cancel) => dispatch,
            () = watch => unreachable!("the watch never ends"),
        }
    } else {
        super::dispatch(&nested, placement, call, cancel).await
    };
    nested.emit("nested_result", || {
        json!({
            "tool_use": tool_use,
            "tool_result": serde_json::to_value(&dispatch.block).unwrap_or_default(),
            "error_kind": dispatch.outcome.error.as_ref().map(|failure| failure.kind.as_str()),
        })
    });
    dispatch
}

/// The `delegate` import of one call: its calls run nested under the caller's grants.
pub(super) struct NestedCalls<'a> {
    pub(super) services: &'a Services<'a>,
    /// The delegating call's id.
    pub(super) caller: String,
    /// The delegating call's effective grants.
    pub(super) ceiling: Arc<Ceiling>,
    /// The delegating call's cancel flag.
    pub(super) cancel: Arc<AtomicBool>,
    /// Whether the delegating call runs beside others in its batch (its nested calls do too).
    pub(super) beside_others: bool,
}

impl NestedCalls<'_> {
    /// A nested call refused before any stage ran, reported like any nested result (one level
    /// below the caller).
    fn refuse(&self, call: &ToolUse, failure: Failure) -> Dispatch {
        let dispatch = refused(call, failure);
        let mut fields = json!({
            "tool_use": {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input},
            "tool_result": serde_json::to_value(&dispatch.block).unwrap_or_default(),
            "error_kind": dispatch.outcome.error.as_ref().map(|failure| failure.kind.as_str()),
        });
        self.services
            .scope
            .child(Some(self.caller.clone()))
            .annotate(&mut fields);
        self.services.monitors.emit("nested_result", fields);
        dispatch
    }
}

/// The longest tool name and input a guest may delegate: bounded before the input is parsed, so
/// a guest cannot make the host hold many copies of most of its memory.
const MAX_DELEGATED_NAME: usize = 256;
const MAX_DELEGATED_INPUT: usize = 4 << 20;

impl Delegator for NestedCalls<'_> {
    fn delegate<'s>(
        &'s self,
        tool: String,
        input: String,
        deadline: Instant,
    ) -> BoxFuture<'s, WitDelegated> {
        Box::pin(async move {
            let id = self.services.scope.nested_id(&self.caller);
            if tool.len() > MAX_DELEGATED_NAME || input.len() > MAX_DELEGATED_INPUT {
                let shown: String = tool.chars().take(MAX_DELEGATED_NAME).collect();
                return answer(
                    &id,
                    refused_nested(
                        &id,
                        &shown,
                        Failure::new(
                            ErrorKind::InvalidInput,
                            format!(
                                "a delegated call's tool name may have at most {MAX_DELEGATED_NAME} bytes and its input at most {MAX_DELEGATED_INPUT} bytes (got {} and {})",
                                tool.len(),
                                input.len()
                            ),
                        ),
                    ),
                );
            }
            let input: Value = match serde_json::from_str(&input) {
                Ok(value) => value,
                Err(error) => {
                    return answer(
                        &id,
                        refused_nested(
                            &id,
                            &tool,
                            Failure::new(
                                ErrorKind::InvalidInput,
                                format!("the delegated input is not JSON: {error}"),
                            ),
                        ),
                    );
                }
            };
            let call = ToolUse {
                id: id.clone(),
                name: tool.clone(),
                input,
            };
            let depth = self.services.scope.depth + 1;
            if depth > self.services.max_delegation_depth {
                let failure = Failure::new(
                    ErrorKind::DelegationDepthExceeded,
                    format!(
                        "{} may not call {tool}: delegated calls nest at most {} deep",
                        self.caller, self.services.max_delegation_depth
                    ),
                );
                return answer(&id, self.refuse(&call, failure));
            }
            // The grant names tools, so it is checked against the tool the name resolves to (one
            // alias hop): an alias cannot smuggle a call to a tool the grant omits.
            let canonical = if self.services.registry.get(&tool).is_some() {
                tool.as_str()
            } else {
                self.services
                    .registry
                    .aliases()
                    .target(&tool)
                    .unwrap_or(&tool)
            };
            if !self
                .ceiling
                .delegate
                .iter()
                .any(|pattern| janua_types::wildcard::matches(pattern, canonical))
            {
                let failure = Failure::new(
                    ErrorKind::PermissionDenied,
                    format!(
                        "the delegating tool's `delegate` grant does not name {tool} (it names: {})",
                        self.ceiling.delegate.join(", ")
                    ),
                );
                return answer(&id, self.refuse(&call, failure));
            }
            let mut scope = self.services.scope.child(Some(self.caller.clone()));
            scope.ceiling = Some(Arc::clone(&self.ceiling));
            scope.deadline = Some(Scope::share_of(deadline));
            scope.cancelled_with = Some(Arc::clone(&self.cancel));
            // The share bounds the whole nested call (its hooks and any permission question
            // too), not only its guest: past it the nested dispatch is dropped, which stops its
            // guest and reports it finished (`pipeline::Abandoned`).
            let share = scope.deadline.unwrap_or(deadline);
            let shown = call.clone();
            match tokio::time::timeout_at(
                share.into(),
                dispatch_scoped(
                    self.services,
                    &scope,
                    call,
                    Arc::default(),
                    self.beside_others,
                ),
            )
            .await
            {
                Ok(dispatch) => answer(&id, dispatch),
                Err(_) => {
                    let failure = Failure::new(
                        ErrorKind::Timeout,
                        format!(
                            "the delegated call of {} did not finish within its share of {}'s time",
                            shown.name, self.caller
                        ),
                    );
                    answer(&id, self.refuse(&shown, failure))
                }
            }
        })
    }
}

fn refused_nested(id: &str, tool: &str, failure: Failure) -> Dispatch {
    refused(
        &ToolUse {
            id: id.to_owned(),
            name: tool.to_owned(),
            input: Value::Null,
        },
        failure,
    )
}

/// The WIT answer for a nested dispatch.
fn answer(id: &str, dispatch: Dispatch) -> WitDelegated {
    WitDelegated {
        tool_use_id: id.to_owned(),
        is_error: dispatch.block.is_error,
        error_kind: dispatch
            .outcome
            .error
            .as_ref()
            .map(|failure| failure.kind.as_str().to_owned()),
        text: dispatch.block.text(),
        structured: if dispatch.block.is_error {
            None
        } else {
            dispatch.outcome.structured.as_ref().map(Value::to_string)
        },
    }
}

/// One Agent call, as the execute stage hands it over.
pub(super) struct AgentCall<'c> {
    /// The Agent call's id: its sub-agent's calls are numbered below it.
    pub(super) call_id: &'c str,
    /// The Agent call's input (description, prompt, tools, ...).
    pub(super) input: &'c Value,
    /// The call's time limit, which bounds the whole sub-agent.
    pub(super) timeout: Duration,
    /// Whether the Agent call runs beside others in its batch (its sub-agent's calls do too).
    pub(super) beside_others: bool,
}

/// Runs an Agent call: the runner gets the request and a sub-session narrowed to the tools the
/// call names, under the call's deadline; its answer is the call's text result.
pub(super) async fn run_agent(
    services: &Services<'_>,
    agent: AgentCall<'_>,
    cancel: Arc<AtomicBool>,
) -> Result<String, Failure> {
    let AgentCall {
        call_id,
        input,
        timeout,
        beside_others,
    } = agent;
    let Some(runner) = services.agent_runner else {
        return Err(Failure::new(
            ErrorKind::ToolFailed,
            "no agent runner is configured (janua run --agent-runner COMMAND, or Runtime::set_agent_runner)",
        ));
    };
    let tools: Option<Vec<String>> = input.get("tools").and_then(Value::as_array).map(|list| {
        list.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    });
    let agent_id = format!("agent-{call_id}");
    let parent = crate::delegation::Parent {
        scope: services.scope,
        policy: services.policy,
        registry: &services.registry,
        grant_context: services.grant_context,
        max_depth: services.max_delegation_depth,
    };
    let narrowing = crate::delegation::Narrowing {
        agent_id: Some(agent_id.clone()),
        tools,
        ..Default::default()
    };
    let mut scope =
        crate::delegation::fork(&parent, narrowing, Some(call_id.to_owned())).map_err(|error| {
            let kind = match error {
                crate::delegation::ForkError::DepthExceeded { .. } => {
                    ErrorKind::DelegationDepthExceeded
                }
                _ => ErrorKind::InvalidInput,
            };
            Failure::new(kind, error.to_string())
        })?;
    let deadline = janua_sandbox::far_deadline(timeout);
    scope.deadline = Some(scope.deadline.map_or(deadline, |outer| outer.min(deadline)));
    scope.cancelled_with = Some(Arc::clone(&cancel));
    let session = SubSession::for_agent(services.clone(), scope, beside_others);
    let request = AgentRequest {
        agent_id,
        parent_tool_use_id: call_id.to_owned(),
        session_id: services.session_id.to_owned(),
        description: input["description"].as_str().unwrap_or_default().to_owned(),
        prompt: input["prompt"].as_str().unwrap_or_default().to_owned(),
        subagent_type: input["subagent_type"].as_str().map(str::to_owned),
        model: input["model"].as_str().map(str::to_owned),
        name: input["name"].as_str().map(str::to_owned),
        isolation: input["isolation"].as_str().map(str::to_owned),
        tools: session.tool_definitions(),
        timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
    };
    let run = runner.run(request, &session);
    let cancelled = async {
        loop {
            tokio::time::sleep(CANCEL_POLL).await;
            if cancel.load(Ordering::Relaxed) {
                break;
            }
        }
    };
    tokio::select! {
        report = run => report.map(|report| report.result).map_err(|error| {
            Failure::new(ErrorKind::ToolFailed, format!("the agent runner failed: {error}"))
        }),
        () = tokio::time::sleep(timeout) => Err(Failure::new(
            ErrorKind::Timeout,
            format!("the sub-agent did not finish within {} s and was stopped", timeout.as_secs()),
        )),
        () = cancelled => Err(Failure::new(ErrorKind::Cancelled, "the sub-agent was cancelled")),
    }
}
