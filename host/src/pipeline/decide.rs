//! Stage 6: the central permission decision, then the prompter for `ask`. With no prompter able to
//! answer, `ask` becomes `permission_denied` with a reason naming what would allow the call.

use std::path::Path;

use serde_json::Value;

use super::outcome::{ErrorKind, Failure};
use crate::permissions::{
    DecidedBy, Decision, DecisionInput, HookVote, PermissionRequest, Policy, PromptAnswer,
    Prompter, Rule, RuleKind, RuleSource, Target, Verdict, decide, suggest_rule,
};
use crate::registry::{CapabilityClass, RegisteredTool};
use crate::sandbox::grants::{FsAccess, GrantContext};

/// Everything the decision stage reads besides the call.
pub(crate) struct DecideContext<'a> {
    pub(crate) policy: &'a Policy,
    pub(crate) prompter: &'a dyn Prompter,
    pub(crate) grant_context: &'a GrantContext,
    pub(crate) home: Option<&'a Path>,
    /// Called with the rules an "allow always" answer added.
    pub(crate) on_approval: &'a (dyn Fn(&[String]) + Send + Sync),
}

/// Decides without asking anyone: the verdict may be `Ask`. (`warden check` stops here.)
pub(crate) fn evaluate(
    context: &DecideContext<'_>,
    tool: &RegisteredTool,
    input: &Value,
    vote: Option<&HookVote>,
) -> (Decision, Target) {
    let spec = &tool.spec;
    let workspace = &context.grant_context.workspace;
    let path_tool = tool.path_field().is_some();
    let target = Target::new(
        &spec.name,
        spec.rule_field.as_deref(),
        path_tool,
        input,
        workspace,
        context.home,
    );
    let (within_grants, inside_workspace) = if path_tool {
        let (within, inside) = match &target {
            Target::Path(path) => {
                let (within, inside) = locate(context, tool, &path.lexical);
                // The mode's "inside the workspace" must hold where a link really leads too.
                let inside = inside && path.all().all(|spelling| locate(context, tool, spelling).1);
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
        reads_host_env: !tool.component.grants.env.is_empty(),
        grants: tool.component.grants.describe(),
        vote,
        policy: context.policy,
    });
    (decision, target)
}

/// Decides, asking the prompter when needed; the verdict is never `Ask`.
pub(crate) fn run(
    context: &DecideContext<'_>,
    tool: &RegisteredTool,
    input: &Value,
    vote: Option<&HookVote>,
) -> Decision {
    let (decision, target) = evaluate(context, tool, input, vote);
    match decision.verdict {
        Verdict::Ask => ask(context, tool, input, &target, decision),
        _ => decision,
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
    let in_results = tool.reads_session_results()
        && grant_context
            .session_results
            .as_deref()
            .is_some_and(|results| path.starts_with(results));
    // `${TMP}` does not exist before the call, so no path can name it yet.
    let tool_context = tool.grant_context(grant_context);
    let granted = tool
        .component
        .grants
        .covering(&tool_context, path, access)
        .is_some();
    (
        granted || in_results,
        context.policy.inside_workspace(path) || in_results,
    )
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
    // PermissionRequest hooks (the hooks issue) answer here, before the prompter.
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
