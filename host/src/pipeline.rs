//! The dispatch pipeline. This file only sequences the stages; each stage lives in its own file:
//!
//! resolve (alias hop + registry check) -> coerce -> schema -> validate-input -> PreToolUse ->
//! decide (permission request loop) -> execute -> PostToolUse | PostToolUseFailure -> output.
//!
//! The stages share the session's [`Services`] (long-lived: registry, policy, hooks, sandbox,
//! session store) and write nothing there; what one call gathers lives in its [`Frame`]
//! (`pipeline/frame.rs`), which only the sequencer ([`run`]) writes, from what each stage returns.
//!
//! Everything up to and including the decision is one function, [`reach_decision`], which
//! `janua check` stops after, so a check and a call cannot decide differently. A PreToolUse
//! `updatedInput` goes through coercion, the schema and `validate-input` again before the
//! decision: the tool never receives input it would have rejected, whoever rewrote it.

mod agent;
mod batch;
mod checkpoint;
pub(crate) mod coerce;
mod decide;
mod delegate;
mod execute;
mod frame;
mod outcome;
mod output;
mod post_hooks;
mod pre_hooks;
mod resolve;
mod schema;
mod subsession;
mod validate;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use janua_types::{DeferredCall, ErrorKind, ToolUse};
use serde_json::Value;

pub use agent::{AgentError, AgentReport, AgentRequest, AgentRunner};
pub use batch::BatchDispatch;
pub use coerce::{Coercion, CoercionRule};
pub use subsession::SubSession;

pub(crate) use batch::{DEFAULT_BATCH_TOKENS, finish_batch};
pub(crate) use delegate::dispatch_scoped;
pub(crate) use frame::Placement;

pub use outcome::{AliasHop, Dispatch, Failure, Outcome};
pub(crate) use output::FAILURE_CHARS;

use frame::Frame;

use crate::hooks::{Controls, HookEnv, HookSet, Monitors};
use crate::registry::Registry;
use crate::session::Checkpoints;
use janua_permissions::{Policy, Prompter, Verdict};
use janua_sandbox::GrantContext;
use janua_sandbox::{CallContext, FileAccess, Sandbox};
use janua_sandbox::{DEFAULT_OUTPUT_CHARS, MAX_OUTPUT_CHARS, MIN_OUTPUT_CHARS};

/// The session's services as the calls of one scope see them: long-lived and shared (registry,
/// policy, hooks, sandbox, session store, capabilities). What one call gathers is its [`Frame`].
#[derive(Clone)]
pub(crate) struct Services<'a> {
    pub(crate) sandbox: &'a Sandbox,
    pub(crate) registry: Arc<Registry>,
    pub(crate) policy: &'a Policy,
    pub(crate) hooks: &'a HookSet,
    pub(crate) prompter: &'a dyn Prompter,
    pub(crate) grant_context: &'a GrantContext,
    pub(crate) session_id: &'a str,
    /// `$HOME`, for `~/` in paths.
    pub(crate) home: Option<&'a std::path::Path>,
    /// Called with the rules an "allow always" answer added.
    pub(crate) on_approval: &'a OnApproval,
    /// Hidden paths and the session's read record, for every guest run.
    pub(crate) files: &'a FileAccess,
    /// Where write-class tools' changes are checkpointed; `None` turns checkpoints off.
    pub(crate) checkpoints: Option<&'a Checkpoints>,
    /// Input fields the operator's settings fill in when a call leaves them out, by tool.
    pub(crate) input_defaults: &'a InputDefaults,
    /// The session's shell: directory and background tasks of the `process` capability.
    pub(crate) shell: &'a Arc<janua_sandbox::Shell>,
    /// The session's browser, behind the `browser` capability.
    pub(crate) browser: &'a Arc<janua_sandbox::BrowserService>,
    /// Operator settings for outgoing HTTP.
    pub(crate) net: &'a janua_sandbox::NetRuntime,
    /// The session's monitors (lifecycle events).
    pub(crate) monitors: &'a Monitors,
    /// In-flight calls and the halt flag.
    pub(crate) controls: &'a Controls,
    /// The session's directory (deferred calls, over-long hook output).
    pub(crate) session: &'a crate::session::Session,
    /// Where over-long hook output is saved.
    pub(crate) session_dir: &'a std::path::Path,
    /// Settings' `toolOutputChars`: inline limits by tool.
    pub(crate) output_limits: &'a std::collections::BTreeMap<String, usize>,
    /// Where the call runs: the root session, a delegated call's nest, or a sub-session.
    pub(crate) scope: &'a crate::delegation::Scope,
    /// How deeply delegated calls and sub-sessions may nest.
    pub(crate) max_delegation_depth: u32,
    /// Who runs the Agent tool's sub-agents.
    pub(crate) agent_runner: Option<&'a dyn AgentRunner>,
}

/// What records the rules an "allow always" answer added (the session's, and the local
/// settings file's with `--save-approvals`).
pub(crate) type OnApproval = dyn Fn(&[String]) + Send + Sync;

/// Operator defaults for input fields, by canonical tool name.
pub(crate) type InputDefaults =
    std::collections::BTreeMap<String, serde_json::Map<String, serde_json::Value>>;

impl<'a> Services<'a> {
    /// Coerces `input` toward the tool's schema and fills in the operator's defaults.
    fn prepare(
        &self,
        tool: &crate::registry::RegisteredTool,
        input: Value,
    ) -> (Value, Vec<Coercion>) {
        let (mut input, mut coercions) = coerce::coerce(&tool.spec.input_schema, input);
        if let Some(defaults) = self.input_defaults.get(&tool.spec.name) {
            coercions.extend(coerce::apply_defaults(
                &mut input,
                &tool.spec.input_schema,
                defaults,
            ));
        }
        (input, coercions)
    }

    /// The call context `validate-input` and `call` receive (the call adds `${PLUGIN_DATA}` and
    /// `${TMP}` itself).
    fn call_context(&self, call_id: &str, tool: &crate::registry::RegisteredTool) -> CallContext {
        CallContext {
            call_id: call_id.to_owned(),
            session_id: self.session_id.to_owned(),
            cwd: self.grant_context.workspace.to_string_lossy().into_owned(),
            deadline_ms: u64::try_from(self.timeout(tool).as_millis()).unwrap_or(u64::MAX),
            plugin_data: None,
            tmp: None,
        }
    }

    /// The call's time limit: the tool's, cut to what is left of the scope's deadline.
    pub(crate) fn timeout(&self, tool: &crate::registry::RegisteredTool) -> std::time::Duration {
        let own = tool.limits().timeout;
        self.scope.remaining().map_or(own, |left| own.min(left))
    }

    /// Delivers a lifecycle event, with the scope's lineage when the call is nested.
    /// Sends a `kind` event to the monitors; `fields` is built only when one listens.
    pub(crate) fn emit(&self, kind: &str, fields: impl FnOnce() -> Value) {
        if !self.monitors.listening() {
            return;
        }
        let mut fields = fields();
        self.scope.annotate(&mut fields);
        self.monitors.emit(kind, fields);
    }

    /// What hooks need to run.
    pub(crate) fn hook_env(&self) -> HookEnv<'_> {
        HookEnv {
            sandbox: self.sandbox,
            grant_context: self.grant_context,
            files: self.files,
            process_sandbox: self.shell.sandbox_mode(),
            monitors: self.monitors,
            rules: self.policy.context(),
            scope: self.scope,
            view: self.shell.view(),
        }
    }

    /// Runs the hooks `event` selects for one call of `spec` with `input` (the payload is the
    /// event the hooks receive), each in its own sandbox, concurrently.
    pub(crate) async fn tool_hooks(
        &self,
        event: janua_types::HookEvent,
        base: &pre_hooks::EventBase<'_>,
        spec: &janua_types::ToolSpec,
        input: &Value,
        payload: impl FnOnce() -> Value,
    ) -> Vec<crate::hooks::Ran<'a>> {
        let call = crate::hooks::CallRef {
            spec,
            input,
            tool_use_id: Some(base.tool_use_id),
        };
        let env = self.hook_env();
        self.hooks.run(&env, event, None, Some(call), payload).await
    }

    /// The workspace as hooks see it (`cwd`).
    fn workspace_text(&self) -> String {
        self.grant_context.workspace.to_string_lossy().into_owned()
    }

    /// The fields every hook event of call `call_id` to `tool` shares.
    fn event_base<'b>(
        &'b self,
        call_id: &'b str,
        tool: &'b str,
        workspace: &'b str,
    ) -> pre_hooks::EventBase<'b> {
        pre_hooks::EventBase {
            session_id: self.session_id,
            cwd: workspace,
            permission_mode: self.permission_mode(),
            tool_use_id: call_id,
            tool_name: tool,
            scope: self.scope,
        }
    }

    /// The `permission_mode` hooks see.
    fn permission_mode(&self) -> &'static str {
        self.policy.mode.as_str()
    }

    fn decide_context(&self) -> decide::DecideContext<'_> {
        decide::DecideContext {
            policy: self.policy,
            prompter: self.prompter,
            grant_context: self.grant_context,
            home: self.home,
            on_approval: self.on_approval,
            ceiling: self.scope.ceiling.as_deref(),
            shell_directory: self.shell.cwd(),
        }
    }
}

/// The result of a call refused before any stage ran (a `tool_use` id repeated in its batch).
pub(crate) fn refused(call: &ToolUse, failure: Failure) -> Dispatch {
    let rendered = output::failure(&call.id, &failure, DEFAULT_OUTPUT_CHARS, &[]);
    Dispatch {
        block: rendered.block,
        outcome: Outcome {
            tool_use_id: call.id.clone(),
            requested: call.name.clone(),
            error: Some(failure),
            ..Outcome::default()
        },
    }
}

/// Runs one call through every stage and returns its result block and outcome. Never panics on
/// model input; every failure is an error block with a stable kind.
pub(crate) async fn dispatch(
    services: &Services<'_>,
    placement: Placement<'_>,
    call: ToolUse,
    cancel: Arc<AtomicBool>,
) -> Dispatch {
    let started = Instant::now();
    let mut frame = Frame::new(&call, placement, Arc::clone(&cancel));
    let id = call.id.clone();
    services.controls.register(&id, Arc::clone(&cancel));
    let tool = call.name.clone();
    let mut abandoned = Abandoned {
        services,
        id: &id,
        tool: &tool,
        started,
        cancel: Some(cancel),
    };
    let mut result = run(services, &mut frame, call).await;
    abandoned.cancel = None;
    if let Some(reason) = services.controls.finish(&id)
        && let Err((failure, _)) = &mut result
        && failure.kind == ErrorKind::Cancelled
    {
        failure.message = format!("{}: {reason}", failure.message);
    }
    let Frame {
        mut outcome,
        output: rules,
        ..
    } = frame;
    let rendered = match result {
        Ok(Success { content, notes }) => output::success(
            &outcome.tool_use_id,
            content,
            rules.limit,
            &notes,
            services.grant_context.session_results.as_deref(),
            rules.strip_escapes,
        ),
        Err((failure, notes)) => {
            let rendered = output::failure(&outcome.tool_use_id, &failure, rules.limit, &notes);
            outcome.error = Some(failure);
            rendered
        }
    };
    let block = rendered.block;
    outcome.truncation = rendered.truncation;
    outcome.normalization = (!rendered.normalization.is_empty()).then_some(rendered.normalization);
    outcome.saved_to = rendered.saved_to;
    // A common estimate (four characters a token), for budgets that count tokens.
    outcome.estimated_tokens =
        u64::try_from(block.text().chars().count().div_ceil(4)).unwrap_or(u64::MAX);
    outcome.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    services.emit("tool_finished", || {
        serde_json::json!({
            "tool_use_id": outcome.tool_use_id,
            "tool_name": outcome.tool.as_deref().unwrap_or(&outcome.requested),
            "is_error": block.is_error,
            "error_kind": outcome.error.as_ref().map(|failure| failure.kind.as_str()),
            "duration_ms": outcome.duration_ms,
        })
    });
    Dispatch { block, outcome }
}

/// Runs when a dispatch's future is dropped before the call ended (its caller was cancelled or
/// timed out, e.g. an Agent call abandoning a sub-agent's call): the guest is told to stop, the
/// call's cancel handle is released and its `tool_finished` still goes out, so no listener waits
/// for a call that no longer exists.
struct Abandoned<'s, 'a> {
    services: &'s Services<'a>,
    id: &'s str,
    tool: &'s str,
    started: Instant,
    /// `None` once the call ended normally.
    cancel: Option<Arc<AtomicBool>>,
}

impl Drop for Abandoned<'_, '_> {
    fn drop(&mut self) {
        let Some(cancel) = self.cancel.take() else {
            return;
        };
        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        self.services.controls.finish(self.id);
        self.services.emit(
            "tool_finished",
            || serde_json::json!({
                "tool_use_id": self.id,
                "tool_name": self.tool,
                "is_error": true,
                "error_kind": ErrorKind::Cancelled.as_str(),
                "duration_ms": u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            }),
        );
    }
}

struct Success {
    content: Vec<janua_sandbox::WitContent>,
    notes: Vec<String>,
}

type StageResult<T> = Result<T, (Failure, Vec<String>)>;

fn plain<T>(result: Result<T, Failure>) -> StageResult<T> {
    result.map_err(|failure| (failure, Vec::new()))
}

/// What a failing stage before the decision does: end the sequence (a call), or be recorded
/// while the decision is still reached for the input as it stands (`janua check`).
struct StageFailures {
    keep_going: bool,
    first: Option<Failure>,
}

impl StageFailures {
    /// `Ok(true)` when the stage passed, `Ok(false)` when it failed and the sequence goes on.
    fn stage(&mut self, result: Result<(), Failure>) -> Result<bool, Failure> {
        match result {
            Ok(()) => Ok(true),
            Err(failure) if self.keep_going => {
                self.first.get_or_insert(failure);
                Ok(false)
            }
            Err(failure) => Err(failure),
        }
    }
}

/// What the stages up to and including the decision settled for one call.
struct Reached {
    tool: Arc<crate::registry::RegisteredTool>,
    /// The input before PreToolUse hooks: a deferred call stores it, and deny and ask rules
    /// judge it as well as a rewrite.
    hooked_input: Value,
    /// The input the decision judged (a PreToolUse rewrite, checked again).
    input: Value,
    vote: Option<janua_permissions::HookVote>,
    decision: janua_permissions::Decision,
    target: janua_permissions::Target,
}

/// The one sequence from the `tool_use` block to the central decision, shared by every call
/// (`janua call`, `run`, `mcp serve`) and by `janua check`, which stops after it: resolve,
/// admit, coerce, schema, validate-input, absolute paths, PreToolUse hooks, the same checks
/// again for a rewrite, then the decision before anyone is asked.
async fn reach_decision(
    services: &Services<'_>,
    frame: &mut Frame<'_>,
    call: ToolUse,
    failures: &mut StageFailures,
    stages: CheckStages,
) -> Result<Reached, Failure> {
    let (tool, hop) = resolve::resolve(&services.registry, &call.name)?;
    failures.stage(delegate::admit(services, &tool))?;
    frame.outcome.tool = Some(tool.spec.name.clone());
    frame.outcome.alias = hop;
    // The tool's limit (manifests only lower the operator's), or the settings' toolOutputChars,
    // always within the floor and the hard ceiling.
    frame.output.limit = services
        .output_limits
        .get(&tool.spec.name)
        .copied()
        .unwrap_or(tool.limits().output_chars)
        .clamp(MIN_OUTPUT_CHARS, MAX_OUTPUT_CHARS);
    frame.output.strip_escapes = !tool.keep_escapes();

    let (mut input, coercions) = services.prepare(&tool, call.input);
    frame.outcome.coercions = coercions;
    frame.outcome.input = Some(input.clone());
    if failures.stage(schema::check(&tool, &input))? && stages.validate_input {
        let validated = validate::run(
            services,
            frame,
            &tool,
            &input.to_string(),
            services.call_context(&call.id, &tool),
        )
        .await;
        failures.stage(validated)?;
    }
    // Hooks and rules see absolute paths, as Claude Code's hooks do; the tool's own validation
    // saw the path as the model wrote it.
    if let Some(field) = tool.path_field() {
        let workspace = &services.grant_context.workspace;
        if let Some(change) = coerce::absolutize_path(&mut input, field, workspace, services.home) {
            frame.outcome.coercions.push(change);
            frame.outcome.input = Some(input.clone());
        }
    }

    let workspace = services.workspace_text();
    let base = services.event_base(&call.id, &tool.spec.name, &workspace);
    let mut vote = None;
    let hooked_input = input.clone();
    if stages.hooks {
        let allow_defer = frame.placement.allow_defer;
        match pre_hooks::run(services, &base, &tool.spec, &input, allow_defer).await {
            Ok(pre) => {
                frame.absorb(pre.effects);
                frame.notes.extend(
                    pre.additional_context
                        .iter()
                        .map(|(hook, context)| format!("[PreToolUse hook {hook}] {context}")),
                );
                vote = pre.vote;
                if let Some((rewritten, hook)) = pre.updated_input {
                    let checked = recheck(services, frame, &tool, &call.id, rewritten, &hook).await;
                    let (rewritten, changes) = match checked {
                        Ok(checked) => checked,
                        Err((failure, rewritten)) => {
                            failures.stage(Err(failure))?;
                            (rewritten, Vec::new())
                        }
                    };
                    frame.outcome.coercions.extend(changes);
                    frame.outcome.input = Some(rewritten.clone());
                    frame.outcome.input_rewritten_by = Some(hook);
                    input = rewritten;
                }
            }
            Err(failure) => {
                if failure.kind == ErrorKind::HookStopped {
                    frame.outcome.stop = Some(failure.message.clone());
                }
                failures.stage(Err(failure))?;
            }
        }
    }
    let (decision, target) = decide::evaluate_rewritten(
        &services.decide_context(),
        &tool,
        &input,
        Some(&hooked_input),
        vote.as_ref(),
    );
    Ok(Reached {
        tool,
        hooked_input,
        input,
        vote,
        decision,
        target,
    })
}

/// A PreToolUse rewrite goes through what the model's input went through: coercion and the
/// operator's defaults, the schema, the tool's `validate-input`, then absolute paths. A failure
/// names the hook and returns the rewrite as it stood.
async fn recheck(
    services: &Services<'_>,
    frame: &Frame<'_>,
    tool: &crate::registry::RegisteredTool,
    call_id: &str,
    rewritten: Value,
    hook: &str,
) -> Result<(Value, Vec<Coercion>), (Failure, Value)> {
    let (mut rewritten, mut changes) = services.prepare(tool, rewritten);
    let named = |mut failure: Failure| {
        failure.message = format!(
            "after the PreToolUse hook {hook} rewrote it: {}",
            failure.message
        );
        failure
    };
    let checked = match schema::check(tool, &rewritten) {
        Ok(()) => {
            validate::run(
                services,
                frame,
                tool,
                &rewritten.to_string(),
                services.call_context(call_id, tool),
            )
            .await
        }
        Err(failure) => Err(failure),
    };
    if let Some(field) = tool.path_field() {
        let workspace = &services.grant_context.workspace;
        if let Some(change) =
            coerce::absolutize_path(&mut rewritten, field, workspace, services.home)
        {
            changes.push(change);
        }
    }
    match checked {
        Ok(()) => Ok((rewritten, changes)),
        Err(failure) => Err((named(failure), rewritten)),
    }
}

/// The sequencer: the one place that orders the stages of a call. Each stage returns what it
/// settled and this function writes it into the frame; no stage calls back into it.
async fn run(
    services: &Services<'_>,
    frame: &mut Frame<'_>,
    call: ToolUse,
) -> StageResult<Success> {
    if frame.cancelled(services.scope.caller_cancelled()) {
        return Err((
            Failure::new(
                ErrorKind::Cancelled,
                "the call was cancelled before it started",
            ),
            Vec::new(),
        ));
    }
    if let Some(reason) = services.controls.halted() {
        frame.outcome.stop = Some(reason.clone());
        return Err((Failure::new(ErrorKind::HookStopped, reason), Vec::new()));
    }
    let call_id = call.id.clone();
    let mut failures = StageFailures {
        keep_going: false,
        first: None,
    };
    let Reached {
        tool,
        hooked_input,
        input,
        vote,
        decision,
        target,
    } = plain(reach_decision(services, frame, call, &mut failures, CheckStages::ALL).await)?;
    let context = || services.call_context(&call_id, &tool);
    let workspace = services.workspace_text();
    let base = services.event_base(&call_id, &tool.spec.name, &workspace);
    if decision.verdict == Verdict::Ask {
        frame.outcome.asked = Some(decision.clone());
    }
    let decided = decide::settle(
        services,
        &base,
        &tool,
        input,
        decide::Evaluated {
            decision,
            target,
            original: Some(&hooked_input),
            vote: vote.as_ref(),
        },
    )
    .await;
    frame.absorb(decided.effects);
    if let Some(hook) = decided.rewritten_by {
        frame.outcome.input = Some(decided.input.clone());
        frame.outcome.input_rewritten_by = Some(hook);
    }
    let input = decided.input;
    let decision = decided.decision;
    services.emit("decision", || {
        serde_json::json!({
            "tool_use_id": call_id,
            "tool_name": tool.spec.name,
            "verdict": decision.verdict,
            "decided_by": decision.decided_by.source_label(),
            "reason": decision.reason,
        })
    });
    let denied = match decision.verdict {
        Verdict::Allow => None,
        Verdict::Defer => {
            let deferred = DeferredCall {
                id: call_id.clone(),
                name: tool.spec.name.clone(),
                input: hooked_input,
            };
            let message = match services.session.defer(&deferred) {
                Ok(()) => format!(
                    "{} The call is saved in session {}; resume it with `janua call --session {} --resume-deferred {}` (PreToolUse hooks run again).",
                    decision.reason, services.session_id, services.session_id, call_id
                ),
                Err(error) => format!(
                    "{} It could not be saved for resuming: {error}",
                    decision.reason
                ),
            };
            frame.outcome.deferred = Some(deferred);
            Some(Failure::new(ErrorKind::Deferred, message))
        }
        Verdict::Deny | Verdict::Ask => Some(decide::denial(&decision)),
    };
    frame.outcome.decision = Some(decision);
    // A denied or deferred call's result carries what PermissionDenied hooks said, not the
    // PreToolUse context (the tool never ran).
    if let Some(failure) = denied {
        return Err((failure, decided.notes));
    }

    // A cancel that arrived while hooks ran or a permission question waited: the tool never runs.
    if frame.cancelled(services.scope.caller_cancelled()) {
        return Err((
            Failure::new(ErrorKind::Cancelled, "the call was cancelled before it ran"),
            decided.notes,
        ));
    }
    services.emit("tool_started", || {
        serde_json::json!({
            "tool_use_id": call_id,
            "tool_name": tool.spec.name,
            "tool_input": crate::hooks::monitor_input(&input),
        })
    });
    let started = Instant::now();
    let target = execute::write_target(services, &tool, &input);
    let saved = plain(checkpoint::before(services, target.as_deref()))?;
    let executed = execute::run(
        services,
        frame,
        &tool,
        input.to_string(),
        context(),
        target.as_deref(),
    )
    .await;
    if let Some(saved) = saved {
        match checkpoint::after(services, saved, &tool.spec.name, &call_id) {
            Ok(number) => frame.outcome.checkpoint = number,
            Err(warning) => frame.outcome.warnings.push(warning.to_string()),
        }
    }
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match executed {
        Ok(mut executed) => {
            frame.outcome.progress = std::mem::take(&mut executed.progress);
            frame.outcome.warnings.append(&mut executed.warnings);
            let structured = executed.structured.as_deref().and_then(|text| {
                serde_json::from_str::<Value>(text)
                    .map_err(|error| {
                        frame
                            .outcome
                            .warnings
                            .push(format!("the tool's structured result is not JSON: {error}"));
                    })
                    .ok()
            });
            let response = || {
                structured
                    .clone()
                    .unwrap_or_else(|| response_text(&executed.content))
            };
            let post = post_hooks::after_success(
                services, &base, &tool.spec, &input, response, elapsed_ms,
            )
            .await;
            frame.outcome.structured = structured;
            frame.absorb(post.effects);
            let mut content = executed.content;
            if let Some((replacement, hook)) = post.updated_output {
                match post_hooks::replace_output(frame.outcome.structured.as_ref(), replacement) {
                    Ok((replaced, structured)) => {
                        content = replaced;
                        if structured.is_some() {
                            frame.outcome.structured = structured;
                        }
                        frame.notes.push(format!(
                            "[PostToolUse hook {hook}] replaced the tool's output"
                        ));
                    }
                    Err(problem) => frame.outcome.warnings.push(format!(
                        "the PostToolUse hook {hook}'s updatedToolOutput is ignored: {problem}"
                    )),
                }
            }
            frame.notes.extend(post.notes);
            frame.outcome.additional_context.clone_from(&frame.notes);
            Ok(Success {
                content,
                notes: frame.notes.clone(),
            })
        }
        Err((failure, progress)) => {
            frame.outcome.progress = progress;
            let interrupted = matches!(failure.kind, ErrorKind::Cancelled | ErrorKind::Timeout);
            let post = post_hooks::after_failure(
                services,
                &base,
                &tool.spec,
                &input,
                &failure.message,
                interrupted,
                elapsed_ms,
            )
            .await;
            frame.absorb(post.effects);
            frame.notes.extend(post.notes);
            frame.outcome.additional_context.clone_from(&frame.notes);
            Err((failure, frame.notes.clone()))
        }
    }
}

/// The text parts of a result, for hooks when the tool gave no structured result.
fn response_text(content: &[janua_sandbox::WitContent]) -> Value {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|part| match part {
            janua_sandbox::WitContent::Text(text) | janua_sandbox::WitContent::Json(text) => {
                Some(text.as_str())
            }
            _ => None,
        })
        .collect();
    Value::String(texts.join("\n"))
}

/// What `janua check` reports: the decision the rules reach for a call, without running it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckReport {
    /// The canonical tool, once resolved.
    pub tool: Option<String>,
    /// The decision before any prompter (`None` when the tool could not be resolved).
    pub decision: Option<janua_permissions::Decision>,
    /// The first stage that failed before the decision, if any.
    pub stage_error: Option<Failure>,
    /// The input the decision saw.
    pub input: Option<Value>,
}

/// Which of the stages before the decision that run code other than janua's a check runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckStages {
    /// PreToolUse hooks, which vote.
    pub(crate) hooks: bool,
    /// The tool's own `validate-input` (a guest call).
    pub(crate) validate_input: bool,
}

impl CheckStages {
    /// Every stage: what a call runs.
    pub(crate) const ALL: Self = Self {
        hooks: true,
        validate_input: true,
    };
}

/// Runs the stages of a call up to and including the decision ([`reach_decision`], PreToolUse
/// hooks and `validate-input` as `stages` says), never the tool. A failing stage is recorded and
/// the decision is still reached for the input as it stands.
pub(crate) async fn check(
    services: &Services<'_>,
    call: ToolUse,
    stages: CheckStages,
) -> CheckReport {
    let placement = Placement {
        allow_defer: true,
        ..Placement::default()
    };
    let mut frame = Frame::new(&call, placement, Arc::default());
    let mut failures = StageFailures {
        keep_going: true,
        first: None,
    };
    let reached = reach_decision(services, &mut frame, call, &mut failures, stages).await;
    let outcome = frame.outcome;
    match reached {
        Ok(reached) => CheckReport {
            tool: Some(reached.tool.spec.name.clone()),
            decision: Some(reached.decision),
            stage_error: failures.first,
            input: Some(reached.input),
        },
        Err(failure) => CheckReport {
            tool: outcome.tool,
            decision: None,
            stage_error: Some(failure),
            input: outcome.input,
        },
    }
}
