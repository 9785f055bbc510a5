//! Stage 6: the central permission decision, then the prompter for `ask`. With no prompter able to
//! answer, `ask` becomes `permission_denied` with a reason naming what would allow the call.

use std::path::Path;

use serde_json::Value;

use super::outcome::{ErrorKind, Failure};
use crate::permissions::{
    DecidedBy, Decision, DecisionInput, HookVote, PermissionRequest, Policy, PromptAnswer,
    Prompter, Verdict, decide, normalize,
};
use crate::registry::{CapabilityClass, RegisteredTool};
use crate::sandbox::grants::{FsAccess, GrantContext};

/// Everything the decision stage reads besides the call.
pub(crate) struct DecideContext<'a> {
    pub(crate) policy: &'a Policy,
    pub(crate) prompter: &'a dyn Prompter,
    pub(crate) grant_context: &'a GrantContext,
}

/// Decides, asking the prompter when needed; the verdict is always `Allow` or `Deny`.
pub(crate) fn run(
    context: &DecideContext<'_>,
    tool: &RegisteredTool,
    input: &Value,
    vote: Option<&HookVote>,
) -> Decision {
    let spec = &tool.spec;
    let workspace = &context.grant_context.workspace;
    let raw_value = spec
        .rule_field
        .as_deref()
        .and_then(|field| input.get(field))
        .and_then(Value::as_str);
    let path_tool = matches!(spec.class, CapabilityClass::Read | CapabilityClass::Write);
    let path = raw_value
        .filter(|_| path_tool)
        .map(|value| normalize(workspace, value));
    let mut rule_values: Vec<String> = raw_value.map(str::to_owned).into_iter().collect();
    if let Some(path) = &path {
        rule_values.push(path.to_string_lossy().into_owned());
    }
    let access = if spec.class == CapabilityClass::Write {
        FsAccess::ReadWrite
    } else {
        FsAccess::Read
    };
    let within_grants = path.as_deref().map(|path| {
        let granted = tool
            .component
            .grants
            .covering(context.grant_context, path, access)
            .is_some();
        let session_results = spec.class == CapabilityClass::Read
            && context
                .grant_context
                .session_results
                .as_deref()
                .is_some_and(|results| path.starts_with(results));
        granted || session_results
    });
    let inside_workspace = path
        .as_deref()
        .map(|path: &Path| path.starts_with(workspace));
    let decision = decide(&DecisionInput {
        tool: spec,
        rule_values: &rule_values,
        within_grants,
        inside_workspace,
        grants: tool.component.grants.describe(),
        vote,
        policy: context.policy,
    });
    match decision.verdict {
        Verdict::Allow | Verdict::Deny => decision,
        Verdict::Ask => ask(context, tool, input, decision),
    }
}

/// The `permission_denied` failure for a denying decision.
pub(crate) fn denial(decision: &Decision) -> Failure {
    Failure::new(ErrorKind::PermissionDenied, decision.reason.clone())
}

fn ask(
    context: &DecideContext<'_>,
    tool: &RegisteredTool,
    input: &Value,
    asked: Decision,
) -> Decision {
    let request = PermissionRequest {
        tool: tool.spec.name.clone(),
        input: input.clone(),
        reason: asked.reason.clone(),
    };
    let name = &tool.spec.name;
    match context.prompter.ask(&request) {
        PromptAnswer::Allow => Decision {
            verdict: Verdict::Allow,
            decided_by: DecidedBy::Prompter,
            reason: "approved when asked".to_owned(),
        },
        PromptAnswer::Deny(message) => Decision {
            verdict: Verdict::Deny,
            decided_by: DecidedBy::Prompter,
            reason: message,
        },
        PromptAnswer::Unavailable => {
            let specific = tool
                .spec
                .rule_field
                .as_deref()
                .map(|field| format!(" (or a narrower rule such as {name}(<{field} pattern>))"))
                .unwrap_or_default();
            Decision {
                verdict: Verdict::Deny,
                decided_by: DecidedBy::NoPrompter,
                reason: format!(
                    "{name} needs approval: {}. Nobody can approve it in this headless run; to \
                     allow it, pass --allowedTools {name}{specific} or add the rule to \
                     permissions.allow in a settings file.",
                    asked.reason
                ),
            }
        }
    }
}
