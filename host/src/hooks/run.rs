//! Running hooks: which hooks an event selects (event, matcher, `if`), running all of them
//! concurrently on the call's task, each in its own sandbox under its own deadline, and reducing
//! what each produced to a [`Reply`]. A hook that waits (a command's process, a guest's clock or
//! HTTP call) lets the others run; CPU-bound WASM hooks run one after another, because a thread
//! per hook cost more than it saved (BENCHMARKS.md, issue 33 step 5). What the replies mean
//! together is the pipeline stage's business.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use janua_types::HookEvent;

use super::{Handler, HookEntry, HookSet, Monitors};
use janua_confine::ProcessSandbox;
use janua_permissions::RuleContext;
use janua_sandbox::GrantContext;
use janua_sandbox::{FileAccess, Sandbox};
use janua_types::ToolSpec;

/// What hooks need from the runtime.
pub(crate) struct HookEnv<'a> {
    pub(crate) sandbox: &'a Sandbox,
    /// The runtime's grant context (workspace, additional directories).
    pub(crate) grant_context: &'a GrantContext,
    /// Hidden paths, for WASM hooks' file access.
    pub(crate) files: &'a FileAccess,
    /// How command hooks are confined (the operator's choice, as for Bash).
    pub(crate) process_sandbox: ProcessSandbox,
    pub(crate) monitors: &'a Monitors,
    /// For `if` rules.
    pub(crate) rules: &'a RuleContext,
    /// The calling scope: hook events of nested calls carry its lineage.
    pub(crate) scope: &'a crate::delegation::Scope,
    /// The view command hooks get, as Bash's commands do.
    pub(crate) view: &'a janua_confine::ViewRules,
}

impl HookEnv<'_> {
    /// Sends a `kind` event to the monitors; `fields` is built only when one listens.
    fn emit(&self, kind: &str, fields: impl FnOnce() -> Value) {
        if !self.monitors.listening() {
            return;
        }
        let mut fields = fields();
        self.scope.annotate(&mut fields);
        self.monitors.emit(kind, fields);
    }
}

/// The call a tool event is about.
#[derive(Clone, Copy)]
pub(crate) struct CallRef<'a> {
    pub(crate) spec: &'a ToolSpec,
    pub(crate) input: &'a Value,
    pub(crate) tool_use_id: Option<&'a str>,
}

/// What one hook produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// A JSON answer (a WASM or in-process hook's, or a command's exit 0 with JSON stdout).
    Answer(Value),
    /// A command's exit 0 with plain (non-JSON) stdout: no decision.
    Plain(String),
    /// A command's exit 2: block, with stderr as the reason.
    Block(String),
    /// A command's other exit codes: a non-blocking error, reported.
    NonBlocking(String),
    /// A trap, timeout, start failure, or an answer that is not JSON.
    Failed(String),
}

impl Reply {
    /// The decision the reply carries, in one word, for lifecycle events: a PreToolUse
    /// `permissionDecision`, a PermissionRequest `behavior`, a top-level `decision`, `stop`, or
    /// `block` for a command's exit 2.
    pub(crate) fn decision(&self) -> Option<String> {
        match self {
            Reply::Answer(answer) => {
                if answer["continue"] == Value::Bool(false) {
                    return Some("stop".to_owned());
                }
                let specific = &answer["hookSpecificOutput"];
                [
                    &specific["permissionDecision"],
                    &specific["decision"]["behavior"],
                    &answer["decision"],
                ]
                .into_iter()
                .find_map(|value| value.as_str())
                .map(|decision| decision.chars().take(32).collect())
            }
            Reply::Block(_) => Some("block".to_owned()),
            _ => None,
        }
    }

    /// A word for lifecycle events.
    pub(crate) fn outcome(&self) -> &'static str {
        match self {
            Reply::Answer(_) => "answered",
            Reply::Plain(_) => "plain",
            Reply::Block(_) => "blocked",
            Reply::NonBlocking(_) => "error",
            Reply::Failed(_) => "failed",
        }
    }
}

/// One hook's reply.
pub(crate) struct Ran<'h> {
    pub(crate) hook: &'h HookEntry,
    pub(crate) reply: Reply,
}

impl HookSet {
    /// The hooks `event` selects, in load order. For tool events the matcher reads the tool name
    /// and `if` must touch the call; for SessionStart and SessionEnd the matcher reads `subject`
    /// (the source or reason); PostToolBatch ignores matchers.
    pub(crate) fn selected(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        call: Option<CallRef<'_>>,
        rules: &RuleContext,
    ) -> Vec<&HookEntry> {
        self.entries()
            .iter()
            .filter(|hook| hook.events.contains(&event))
            .filter(|hook| {
                if event.is_tool_event() {
                    call.is_some_and(|call| hook.matcher.matches(&call.spec.name))
                } else {
                    event == HookEvent::PostToolBatch
                        || subject.is_none_or(|subject| hook.matcher.matches(subject))
                }
            })
            .filter(|hook| match &hook.condition {
                None => true,
                // `if` applies to tool events only; elsewhere such a hook never runs (as in
                // Claude Code).
                Some(rule) => call.is_some_and(|call| {
                    event.is_tool_event()
                        && janua_permissions::touches(rule, call.spec, call.input, rules)
                }),
            })
            .collect()
    }

    /// Runs every hook `event` selects, concurrently, and returns their replies in load order.
    /// The event (`payload`) is built only when some hook is selected: a hook whose matcher or
    /// `if` cannot match costs the call nothing.
    pub(crate) async fn run<'h>(
        &'h self,
        env: &HookEnv<'_>,
        event: HookEvent,
        subject: Option<&str>,
        call: Option<CallRef<'_>>,
        payload: impl FnOnce() -> Value,
    ) -> Vec<Ran<'h>> {
        let selected = self.selected(event, subject, call, env.rules);
        if selected.is_empty() {
            return Vec::new();
        }
        let payload = payload();
        let payload = &payload;
        let tool_use_id = call.and_then(|call| call.tool_use_id);
        let runs = selected
            .into_iter()
            .map(|hook| run_one(env, hook, event, payload, tool_use_id));
        futures_util::future::join_all(runs).await
    }
}

async fn run_one<'h>(
    env: &HookEnv<'_>,
    hook: &'h HookEntry,
    event: HookEvent,
    payload: &Value,
    tool_use_id: Option<&str>,
) -> Ran<'h> {
    env.emit("hook_started", || {
        json!({
            "hook": hook.name,
            "hook_event_name": event.as_str(),
            "tool_use_id": tool_use_id,
        })
    });
    let started = Instant::now();
    let reply = match &hook.handler {
        Handler::InProcess(handler) => {
            // Off the async workers, and under the same deadline as any hook (a timed-out
            // closure keeps its blocking thread until it returns; its answer is dropped).
            let handler = std::sync::Arc::clone(handler);
            let event = payload.clone();
            let run = tokio::task::spawn_blocking(move || handler.handle(&event));
            match tokio::time::timeout(hook.timeout, run).await {
                Ok(Ok(Ok(answer))) => Reply::Answer(answer),
                Ok(Ok(Err(error))) => Reply::Failed(super::capped::clip(&error.to_string())),
                Ok(Err(error)) => Reply::Failed(format!("the hook panicked: {error}")),
                Err(_) => Reply::Failed(format!(
                    "the hook timed out after {} ms",
                    hook.timeout.as_millis()
                )),
            }
        }
        Handler::Wasm(wasm) => wasm.run(env, payload, hook.timeout).await,
        Handler::Command(command) => command.run(env, event, payload, hook.timeout).await,
    };
    env.emit("hook_response", || {
        json!({
            "hook": hook.name,
            "hook_event_name": event.as_str(),
            "tool_use_id": tool_use_id,
            "outcome": reply.outcome(),
            "decision": reply.decision(),
            "duration_ms": millis(started.elapsed()),
        })
    });
    Ran { hook, reply }
}

/// Whole milliseconds, saturating.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
