//! Stage 6: the central permission decision, then the prompter for `ask`. With no prompter able to
//! answer, `ask` becomes `permission_denied` with a reason naming what would allow the call.

use std::path::{Path, PathBuf};

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

/// Decides, asking the prompter when needed; the verdict is never `Ask`.
pub(crate) fn run(
    context: &DecideContext<'_>,
    tool: &RegisteredTool,
    input: &Value,
    vote: Option<&HookVote>,
) -> Decision {
    let spec = &tool.spec;
    let raw_value = spec
        .rule_field
        .as_deref()
        .and_then(|field| input.get(field))
        .and_then(Value::as_str);
    let path_tool = tool.path_field().is_some();
    let (within_grants, inside_workspace) = if path_tool {
        let (within, inside) = match raw_value {
            Some(value) => {
                let path = normalize(&context.grant_context.workspace, value);
                locate(context.grant_context, tool, &path)
            }
            // A path tool called without its path cannot be placed: never inside.
            None => (true, false),
        };
        (Some(within), Some(inside))
    } else {
        (None, None)
    };
    let values = RuleValues::new(
        raw_value,
        path_tool.then_some(&context.grant_context.workspace),
    );
    let decision = decide(&DecisionInput {
        tool: spec,
        allow_values: &values.allow,
        deny_values: &values.deny,
        within_grants,
        inside_workspace,
        reads_host_env: !tool.component.grants.env.is_empty(),
        grants: tool.component.grants.describe(),
        vote,
        policy: context.policy,
    });
    match decision.verdict {
        Verdict::Ask => ask(context, tool, input, decision),
        _ => decision,
    }
}

/// Whether `path` is inside the tool's grants and inside the workspace. The session's
/// externalized results count as both for tools that may page through them.
fn locate(grant_context: &GrantContext, tool: &RegisteredTool, path: &Path) -> (bool, bool) {
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
        path.starts_with(&grant_context.workspace) || in_results,
    )
}

/// The strings rule specifiers are matched against.
///
/// Deny rules see every spelling of the target (as written, lexically normalized, and resolved by
/// the filesystem), so no spelling slips past them. Allow rules see nothing for a path that climbs
/// with `..`: `docs/../.git/x` cannot ride on an allow rule for `docs/*`, and a link followed by
/// `..` cannot make the lexical spelling differ from what the sandbox opens.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct RuleValues {
    pub(crate) allow: Vec<String>,
    pub(crate) deny: Vec<String>,
}

impl RuleValues {
    /// Values for `raw`; `workspace` is given for path tools.
    pub(crate) fn new(raw: Option<&str>, workspace: Option<&PathBuf>) -> Self {
        let Some(raw) = raw else {
            return Self::default();
        };
        let Some(workspace) = workspace else {
            return Self {
                allow: vec![raw.to_owned()],
                deny: vec![raw.to_owned()],
            };
        };
        let normalized = normalize(workspace, raw).to_string_lossy().into_owned();
        let climbs = Path::new(raw)
            .components()
            .any(|part| part == std::path::Component::ParentDir);
        let mut values = Self::default();
        if !climbs {
            // Without `..`, the lexical spelling is the path the sandbox opens.
            values.allow.push(raw.to_owned());
            values.allow.push(normalized.clone());
        }
        values.deny.push(raw.to_owned());
        values.deny.push(normalized.clone());
        // What the filesystem resolves: symlinks followed, and `..` taken after each link (as the
        // sandbox does), both for the spelling as given and for its lexical form.
        let physical = [workspace.join(raw), PathBuf::from(&normalized)];
        for candidate in physical {
            if let Ok(resolved) = std::fs::canonicalize(candidate) {
                let resolved = resolved.to_string_lossy().into_owned();
                if !values.deny.contains(&resolved) {
                    values.deny.push(resolved);
                }
            }
        }
        values
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_values_never_climb_and_deny_values_see_every_spelling() {
        let workspace = PathBuf::from("/ws");
        let values = RuleValues::new(Some("docs/../.git/hooks/x"), Some(&workspace));
        assert!(values.allow.is_empty(), "{values:?}");
        assert_eq!(values.deny, ["docs/../.git/hooks/x", "/ws/.git/hooks/x"]);
        let plain = RuleValues::new(Some("docs/a.md"), Some(&workspace));
        assert_eq!(plain.allow, ["docs/a.md", "/ws/docs/a.md"]);
        let command = RuleValues::new(Some("ls ../x"), None);
        assert_eq!(command.allow, ["ls ../x"]);
        assert_eq!(
            RuleValues::new(None, Some(&workspace)),
            RuleValues::default()
        );
    }

    #[test]
    fn deny_values_follow_a_link_before_climbing() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(workspace.join("private/sub")).unwrap();
        std::fs::write(workspace.join("private/x"), "p").unwrap();
        std::fs::write(workspace.join("x"), "top").unwrap();
        std::os::unix::fs::symlink(workspace.join("private/sub"), workspace.join("alias")).unwrap();
        let values = RuleValues::new(Some("alias/../x"), Some(&workspace));
        let physical = workspace.join("private/x").to_string_lossy().into_owned();
        assert!(values.deny.contains(&physical), "{values:?}");
        assert!(values.allow.is_empty());
    }

    #[test]
    fn deny_values_include_the_symlink_target() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(workspace.join("keys.secret"), "k").unwrap();
        std::os::unix::fs::symlink(workspace.join("keys.secret"), workspace.join("link.txt"))
            .unwrap();
        let values = RuleValues::new(Some("link.txt"), Some(&workspace));
        let target = workspace.join("keys.secret").to_string_lossy().into_owned();
        assert!(values.deny.contains(&target), "{values:?}");
        assert!(!values.allow.contains(&target));
    }
}
