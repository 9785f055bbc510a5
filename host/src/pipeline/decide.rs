//! Stage 6: the central permission decision. An `ask` goes to the PermissionRequest hooks (allow
//! or deny, a rewritten input that is checked again against the schema and the deny and ask
//! rules, session rules to add), then to the prompter. With no hook answering and no prompter
//! able to, `ask` becomes `permission_denied` with a reason naming what would allow the call.
//! Every denial then runs the PermissionDenied hooks, which may tell the model it can retry.

use std::path::Path;

use serde_json::Value;

use super::Services;
use super::frame::HookEffects;
use super::outcome::Failure;
use super::pre_hooks::EventBase;
use crate::hooks::{DeniedAnswer, Reply, RequestAnswer, cap_text};
use crate::registry::RegisteredTool;
use janua_permissions::{
    DecidedBy, Decision, DecisionInput, HookVote, PermissionRequest, Policy, PromptAnswer,
    Prompter, Rule, RuleKind, RuleSource, Target, Verdict, decide, suggest_rule,
};
use janua_sandbox::{FsAccess, GrantContext};
use janua_types::CapabilityClass;
use janua_types::ErrorKind;
use janua_types::{HookEvent, OnError};

/// Everything the decision stage reads besides the call.
pub(crate) struct DecideContext<'a> {
    pub(crate) policy: &'a Policy,
    pub(crate) prompter: &'a dyn Prompter,
    pub(crate) grant_context: &'a GrantContext,
    pub(crate) home: Option<&'a Path>,
    /// Called with the rules an "allow always" answer added.
    pub(crate) on_approval: &'a super::OnApproval,
    /// The grant ceiling of a nested call: paths beyond it are a grant violation.
    pub(crate) ceiling: Option<&'a crate::delegation::Ceiling>,
    /// The session shell's directory, where a command line runs (an earlier `cd` moved it).
    pub(crate) shell_directory: std::path::PathBuf,
}

/// Decides without asking anyone: the verdict may be `Ask`. (`janua check` stops here.)
pub(crate) fn evaluate(
    context: &DecideContext<'_>,
    tool: &RegisteredTool,
    input: &Value,
    vote: Option<&HookVote>,
) -> (Decision, Target) {
    let spec = &tool.spec;
    let workspace = &context.grant_context.workspace;
    let path_tool = tool.path_field().is_some();
    let target = Target::in_directories(
        &spec.name,
        spec.rule_field.as_deref(),
        path_tool,
        input,
        (workspace, &context.shell_directory),
        context.home,
    );
    let (within_grants, inside_workspace) = if path_tool {
        let (within, inside) = match &target {
            Target::Path(path) => {
                let (within, inside) = locate(context, tool, &path.lexical);
                // The mode's "inside the workspace" must hold where a link really leads too.
                let inside = inside
                    && path
                        .all()
                        .all(|spelling| is_inside(context, tool, spelling));
                (within, inside)
            }
            // A path tool called without its path cannot be placed: never inside.
            _ => (true, false),
        };
        (Some(within), Some(inside))
    } else {
        (None, None)
    };
    let decision = decide(&DecisionInput {
        tool: spec,
        target: &target,
        input,
        within_grants,
        inside_workspace,
        reads_host_env: !tool.grants().env.is_empty(),
        // Read only to say why a path outside the grants is refused.
        grants: match tool.source() {
            _ if within_grants != Some(false) => String::new(),
            crate::registry::ToolSource::Mcp { server } => {
                format!("those of the MCP server {server}'s process sandbox")
            }
            _ => tool.grants().describe(),
        },
        vote,
        policy: context.policy,
    });
    (decision, target)
}

/// [`evaluate`] for an input a PreToolUse hook rewrote from `original`: a deny or ask rule that
/// matches the original input applies as well as one matching the rewrite (a hook cannot launder
/// a denied call into an allowed one), while allow rules, modes and the read-only set judge only
/// the rewrite, which is what runs.
pub(crate) fn evaluate_rewritten(
    context: &DecideContext<'_>,
    tool: &RegisteredTool,
    input: &Value,
    original: Option<&Value>,
    vote: Option<&HookVote>,
) -> (Decision, Target) {
    let (decision, target) = evaluate(context, tool, input, vote);
    let Some(original) = original.filter(|original| *original != input) else {
        return (decision, target);
    };
    if decision.verdict == Verdict::Deny {
        return (decision, target);
    }
    let (before, _) = evaluate(context, tool, original, vote);
    let by_rule = matches!(
        (&before.verdict, &before.decided_by),
        (Verdict::Deny, DecidedBy::DenyRule { .. }) | (Verdict::Ask, DecidedBy::AskRule { .. })
    );
    if by_rule && decision.decided_by != before.decided_by {
        let reason = format!(
            "{} (the input before a PreToolUse hook rewrote it)",
            before.reason
        );
        return (Decision { reason, ..before }, target);
    }
    (decision, target)
}

/// What the decision stage settled.
pub(crate) struct Decided {
    pub(crate) decision: Decision,
    /// The input the tool gets: a PermissionRequest hook may have rewritten it.
    pub(crate) input: Value,
    /// The hook that rewrote the input, if one did.
    pub(crate) rewritten_by: Option<String>,
    /// Texts for the model from PermissionDenied hooks.
    pub(crate) notes: Vec<String>,
    /// Warnings, messages for the user, and a stop (`interrupt`, `continue: false`).
    pub(crate) effects: HookEffects,
}

/// The decision [`evaluate_rewritten`] reached, and what it judged.
pub(crate) struct Evaluated<'v> {
    pub(crate) decision: Decision,
    pub(crate) target: Target,
    /// The input before a PreToolUse hook rewrote it, when one did.
    pub(crate) original: Option<&'v Value>,
    pub(crate) vote: Option<&'v HookVote>,
}

/// Settles an evaluated decision, asking PermissionRequest hooks and then the prompter when it
/// asks; the verdict is never `Ask`. A denial runs the PermissionDenied hooks.
pub(crate) async fn settle(
    services: &Services<'_>,
    base: &EventBase<'_>,
    tool: &RegisteredTool,
    input: Value,
    evaluated: Evaluated<'_>,
) -> Decided {
    let context = services.decide_context();
    let Evaluated {
        decision,
        target,
        original,
        vote,
    } = evaluated;
    let mut decided = Decided {
        decision,
        input,
        rewritten_by: None,
        notes: Vec::new(),
        effects: HookEffects::default(),
    };
    if decided.decision.verdict == Verdict::Ask {
        services.emit("permission_request", || {
            serde_json::json!({
                "tool_use_id": base.tool_use_id,
                "tool_name": tool.spec.name,
                "reason": decided.decision.reason,
            })
        });
        let suggestions = suggest_rule(&tool.spec.name, &target);
        // A write to a protected path, a critical removal or a part janua cannot analyze that a
        // rule could match needs a human: no hook answers it.
        let hooks_may_answer = !decided.decision.decided_by.needs_a_person();
        let answered = if hooks_may_answer {
            request_hooks(services, base, tool, &mut decided, &suggestions).await
        } else {
            None
        };
        match answered {
            Some(decision) => decided.decision = decision,
            None => {
                let (decision, target) = if decided.rewritten_by.is_some() {
                    evaluate_rewritten(&context, tool, &decided.input, original, vote)
                } else {
                    (decided.decision.clone(), target)
                };
                decided.decision = match decision.verdict {
                    Verdict::Ask => ask(&context, tool, &decided.input, &target, decision),
                    _ => decision,
                };
            }
        }
    }
    if decided.decision.verdict == Verdict::Deny {
        denied_hooks(services, base, tool, &mut decided).await;
    }
    decided
}

/// Runs the PermissionRequest hooks for an `ask`. `Some` is their decision; `None` leaves the
/// ask to the prompter (no hook answered, or an allowed rewrite met an ask rule).
async fn request_hooks(
    services: &Services<'_>,
    base: &EventBase<'_>,
    tool: &RegisteredTool,
    decided: &mut Decided,
    suggestions: &[String],
) -> Option<Decision> {
    let event = || {
        let mut event = base.event(HookEvent::PermissionRequest, &decided.input);
        if let Some(object) = event.as_object_mut() {
            // Claude Code's PermissionRequest input has no tool_use_id.
            object.remove("tool_use_id");
            let rules: Vec<Value> = suggestions
                .iter()
                .map(|rule| {
                    let (name, content) = match rule.split_once('(') {
                        Some((name, rest)) => (name, Some(rest.trim_end_matches(')'))),
                        None => (rule.as_str(), None),
                    };
                    serde_json::json!({"toolName": name, "ruleContent": content})
                })
                .collect();
            object.insert(
            "permission_suggestions".to_owned(),
            serde_json::json!([{"type": "addRules", "rules": rules, "behavior": "allow", "destination": "session"}]),
        );
        }
        event
    };
    let ran = services
        .tool_hooks(
            HookEvent::PermissionRequest,
            base,
            &tool.spec,
            &decided.input,
            event,
        )
        .await;
    let deny = |hook: &str, reason: String| Decision {
        verdict: Verdict::Deny,
        decided_by: DecidedBy::PermissionHook {
            hook: hook.to_owned(),
        },
        reason,
    };
    let mut allowed: Option<(String, RequestAnswer)> = None;
    let mut denial: Option<Decision> = None;
    for ran in &ran {
        let name = &ran.hook.name;
        let answer = match &ran.reply {
            Reply::Answer(value) => {
                RequestAnswer::from_json(value).map_err(|error| error.to_string())
            }
            Reply::Failed(problem) => Err(problem.clone()),
            Reply::Plain(_) => continue,
            // Exit 2 does not decide a PermissionRequest (as in Claude Code): only the JSON does.
            Reply::Block(_) | Reply::NonBlocking(_) => {
                decided.effects.warnings.push(format!(
                    "the PermissionRequest hook {name} exited without a decision; use hookSpecificOutput.decision"
                ));
                continue;
            }
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(problem) => {
                match ran.hook.on_error {
                    OnError::Deny => {
                        denial.get_or_insert_with(|| deny(name, format!(
                            "the PermissionRequest hook {name} failed ({problem}); janua denies calls whose policy hooks fail"
                        )));
                    }
                    OnError::Ignore => decided.effects.warnings.push(format!(
                        "the PermissionRequest hook {name} failed and is ignored (on-error = \"ignore\"): {problem}"
                    )),
                }
                continue;
            }
        };
        if let Some(message) = answer.common.system_message.clone() {
            decided
                .effects
                .system_messages
                .push(cap_text(message, services.session_dir, name));
        }
        if let Some(reason) = answer.common.stop.clone() {
            let reason = cap_text(reason, services.session_dir, name);
            decided.effects.stop.get_or_insert_with(|| {
                format!("the PermissionRequest hook {name} stopped the run: {reason}")
            });
            // A hook that stops the run does not also let the call through.
            denial.get_or_insert_with(|| {
                deny(
                    name,
                    format!("the PermissionRequest hook {name} stopped the run"),
                )
            });
            continue;
        }
        match answer.allow {
            Some(false) => {
                if answer.interrupt {
                    decided.effects.stop.get_or_insert_with(|| {
                        format!("the PermissionRequest hook {name} interrupted the run")
                    });
                }
                let message = answer
                    .message
                    .unwrap_or_else(|| "denied by a PermissionRequest hook".to_owned());
                denial.get_or_insert_with(|| {
                    deny(name, cap_text(message, services.session_dir, name))
                });
            }
            Some(true) => {
                for ignored in &answer.ignored_updates {
                    decided.effects.warnings.push(format!(
                        "the PermissionRequest hook {name}'s updatedPermissions entry {ignored}"
                    ));
                }
                match &allowed {
                    Some((first, earlier)) if earlier.updated_input != answer.updated_input => {
                        denial.get_or_insert_with(|| {
                            deny(name, format!(
                                "the PermissionRequest hooks {first} and {name} allowed different inputs; janua denies the call rather than choose one"
                            ))
                        });
                    }
                    Some(_) => {}
                    None => allowed = Some((name.clone(), answer)),
                }
            }
            None => {}
        }
    }
    if let Some(denial) = denial {
        return Some(denial);
    }
    let (hook, answer) = allowed?;
    if let Some(updated) = answer.updated_input {
        if let Err(failure) = super::schema::check(tool, &updated) {
            return Some(deny(
                &hook,
                format!(
                    "the PermissionRequest hook {hook} allowed a rewritten input that breaks the tool's schema: {}",
                    failure.message
                ),
            ));
        }
        decided.input = updated;
        decided.rewritten_by = Some(hook.clone());
        // The rewrite is checked again: a deny rule denies it, an ask rule asks a human.
        let (again, _) = evaluate(&services.decide_context(), tool, &decided.input, None);
        match (&again.verdict, &again.decided_by) {
            (Verdict::Deny, _) => return Some(again),
            (Verdict::Ask, DecidedBy::AskRule { .. }) => return None,
            (Verdict::Ask, by) if by.needs_a_person() => return None,
            _ => {}
        }
    }
    let mut added = Vec::new();
    let policy = services.policy;
    for text in &answer.add_rules {
        match Rule::parse(text, RuleKind::Allow, RuleSource::Session, policy.context()) {
            // A hook answers for the tool it was asked about; it cannot grant other tools.
            Ok(rule) if rule.tool() != tool.spec.name => {
                decided.effects.warnings.push(format!(
                    "the PermissionRequest hook {hook}'s rule {text:?} is ignored: it may only add rules for {}",
                    tool.spec.name
                ));
            }
            Ok(rule) => {
                policy.add_session_rule(rule);
                added.push(text.clone());
            }
            Err(error) => decided.effects.warnings.push(format!(
                "the PermissionRequest hook {hook} suggested the invalid rule {text:?}: {error}"
            )),
        }
    }
    if !added.is_empty() {
        // Session rules only: a hook's approval is never written to a settings file.
        services.session.add_approved_rules(&added);
    }
    Some(Decision {
        verdict: Verdict::Allow,
        decided_by: DecidedBy::PermissionHook { hook: hook.clone() },
        reason: if added.is_empty() {
            format!("allowed by the PermissionRequest hook {hook}")
        } else {
            format!(
                "allowed by the PermissionRequest hook {hook}, which added the session rules {}",
                added.join(", ")
            )
        },
    })
}

/// Runs the PermissionDenied hooks; `retry: true` tells the model it may try again.
async fn denied_hooks(
    services: &Services<'_>,
    base: &EventBase<'_>,
    tool: &RegisteredTool,
    decided: &mut Decided,
) {
    let event = || {
        let mut event = base.event(HookEvent::PermissionDenied, &decided.input);
        event["reason"] = decided.decision.reason.clone().into();
        event
    };
    let ran = services
        .tool_hooks(
            HookEvent::PermissionDenied,
            base,
            &tool.spec,
            &decided.input,
            event,
        )
        .await;
    for ran in ran {
        let name = &ran.hook.name;
        let answer = match ran.reply {
            Reply::Answer(value) => {
                DeniedAnswer::from_json(&value).map_err(|error| error.to_string())
            }
            Reply::Plain(_) => continue,
            Reply::Block(problem) | Reply::NonBlocking(problem) | Reply::Failed(problem) => {
                Err(problem)
            }
        };
        match answer {
            Ok(answer) => {
                if answer.retry {
                    decided.notes.push(format!(
                        "[PermissionDenied hook {name}] you may retry this call"
                    ));
                }
                if let Some(context) = answer.additional_context {
                    let context = cap_text(context, services.session_dir, name);
                    decided
                        .notes
                        .push(format!("[PermissionDenied hook {name}] {context}"));
                }
                if let Some(message) = answer.common.system_message {
                    decided.effects.system_messages.push(cap_text(
                        message,
                        services.session_dir,
                        name,
                    ));
                }
            }
            Err(problem) => decided.effects.warnings.push(format!(
                "the PermissionDenied hook {name} failed: {problem}"
            )),
        }
    }
}

/// Whether `path` is inside the tool's grants and inside the workspace (or an additional
/// directory). The session's externalized results count as both for tools that may page
/// through them.
fn locate(context: &DecideContext<'_>, tool: &RegisteredTool, path: &Path) -> (bool, bool) {
    let grant_context = context.grant_context;
    let access = if tool.spec.class == CapabilityClass::Write {
        FsAccess::ReadWrite
    } else {
        FsAccess::Read
    };
    // `${TMP}` does not exist before the call, so no path can name it yet.
    let tool_context = tool.grant_context(grant_context);
    let granted = tool
        .grants()
        .covering(&tool_context, path, access)
        .is_some()
        && context
            .ceiling
            .is_none_or(|ceiling| ceiling.covers(path, access));
    (
        granted || in_results(context, tool, path),
        is_inside(context, tool, path),
    )
}

/// True when `path` lies in the workspace, an additional directory, or the session's results
/// (for a tool that reads them): a lexical test, no file system access.
fn is_inside(context: &DecideContext<'_>, tool: &RegisteredTool, path: &Path) -> bool {
    context.policy.inside_workspace(path) || in_results(context, tool, path)
}

fn in_results(context: &DecideContext<'_>, tool: &RegisteredTool, path: &Path) -> bool {
    tool.reads_session_results()
        && context
            .grant_context
            .session_results
            .as_deref()
            .is_some_and(|results| path.starts_with(results))
}

/// The `permission_denied` failure for a denying decision.
pub(crate) fn denial(decision: &Decision) -> Failure {
    Failure::new(ErrorKind::PermissionDenied, decision.reason.clone())
}

fn ask(
    context: &DecideContext<'_>,
    tool: &RegisteredTool,
    input: &Value,
    target: &Target,
    asked: Decision,
) -> Decision {
    let name = &tool.spec.name;
    let request = PermissionRequest {
        tool: name.clone(),
        input: input.clone(),
        reason: asked.reason.clone(),
        suggestions: suggest_rule(name, target),
    };
    match context.prompter.ask(&request) {
        PromptAnswer::Allow => Decision {
            verdict: Verdict::Allow,
            decided_by: DecidedBy::Prompter,
            reason: "approved when asked".to_owned(),
        },
        PromptAnswer::AllowAlways => {
            let policy = context.policy;
            let mut added = Vec::new();
            for text in &request.suggestions {
                let parsed =
                    Rule::parse(text, RuleKind::Allow, RuleSource::Session, policy.context());
                if let Ok(rule) = parsed {
                    policy.add_session_rule(rule);
                    added.push(text.clone());
                }
            }
            (context.on_approval)(&added);
            Decision {
                verdict: Verdict::Allow,
                decided_by: DecidedBy::Prompter,
                reason: format!(
                    "approved when asked; allowed for the rest of the session by {}",
                    added.join(", ")
                ),
            }
        }
        PromptAnswer::Deny(message) => Decision {
            verdict: Verdict::Deny,
            decided_by: DecidedBy::Prompter,
            reason: message,
        },
        PromptAnswer::Unavailable => {
            let hint = match (&asked.decided_by, request.suggestions.first()) {
                (DecidedBy::AskRule { rule, .. }, _) => format!(
                    "the ask rule {rule} requires a human answer; no allow rule can skip it"
                ),
                (DecidedBy::ProtectedPath { .. }, _) => {
                    "writes to protected paths need a human answer; no rule or mode allows them"
                        .to_owned()
                }
                (DecidedBy::CriticalPath { .. }, _) => {
                    "removing a critical path needs a human answer; no rule, hook or mode allows it"
                        .to_owned()
                }
                (DecidedBy::BeyondAnalysis { .. }, _) => {
                    "what janua cannot analyze, where a rule could match it, needs a human answer; no rule, hook or mode allows it"
                        .to_owned()
                }
                (_, Some(rule)) if rule != name => format!(
                    "to allow it, pass --allowedTools {name} or the narrower '{rule}', or add such a rule to permissions.allow in a settings file"
                ),
                _ => format!(
                    "to allow it, pass --allowedTools {name} or add an allow rule to a settings file"
                ),
            };
            Decision {
                verdict: Verdict::Deny,
                decided_by: DecidedBy::NoPrompter,
                reason: format!(
                    "{name} needs approval: {}. Nobody can approve it in this headless run; {hint}.",
                    asked.reason
                ),
            }
        }
    }
}
