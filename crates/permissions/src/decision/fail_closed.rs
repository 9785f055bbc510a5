//! Fail closed at the limits of analysis, in one place: a part of a command whose effect is not
//! known before it runs (`unknown.rs`: text past a limit, a word built when it runs, code handed
//! to an interpreter, an option that runs a program, files named by a pattern, a directory a
//! program walks) is
//! - denied when a deny rule could match it: a Bash deny rule for what it may run, a Read or Edit
//!   deny rule for the files it may reach;
//! - asked, with an ask no allow rule, mode or hook turns into allow, when an ask rule or a
//!   protected path could match it;
//! - otherwise left to the allow rules and the mode, as any command is: no question nobody
//!   needed.
//!
//! Where the command runs inside janua's kernel view (janua's own Bash, `--sandbox-bash`, `janua
//! sandbox`: `Policy::commands_confined`), a Read or Edit deny rule the view enforces (a masked or
//! read-only path) and the protected paths cannot be broken by the unknown part, so they do not
//! count; Bash deny and ask rules always do. This module does not find the parts, and it never
//! allows.

use super::{DecidedBy, Decision, DecisionInput, Verdict, denied_by};
use crate::Policy;
use crate::protected::is_protected;
use crate::rules::{Family, Rule, RuleKind, Specifier};
use crate::target::CommandTarget;
use crate::unknown::{Scope, Unknown};

/// The denial when a deny rule could match an unknown part of `command`.
pub(super) fn deny(input: &DecisionInput<'_>, command: &CommandTarget) -> Option<Decision> {
    let name = &input.tool.name;
    let confined = confined(input);
    command.unknown.iter().find_map(|part| {
        let rule = breakable(input, RuleKind::Deny, part, confined)?;
        Some(denied_by(rule, |text, source| {
            format!(
                "{name} {}: janua cannot analyze that before it runs, and the deny rule {text} ({source}) could match it",
                part.what
            )
        }))
    })
}

/// The ask that nothing but a person's answer turns into allow, when an ask rule or a protected
/// path could match an unknown part of `command`.
pub(super) fn ask(input: &DecisionInput<'_>, command: &CommandTarget) -> Option<Decision> {
    let name = &input.tool.name;
    let policy = input.policy;
    let confined = confined(input);
    command.unknown.iter().find_map(|part| {
        let why = if let Some(rule) = breakable(input, RuleKind::Ask, part, confined) {
            format!("the ask rule {} ({})", rule.text(), rule.source())
        } else if !confined
            && !part.runs
            && let Some(path) = protected_within(policy, &part.writes, part.dot_names)
        {
            format!("the protected path {path}")
        } else {
            return None;
        };
        Some(Decision {
            verdict: Verdict::Ask,
            decided_by: DecidedBy::BeyondAnalysis {
                part: part.what.clone(),
            },
            reason: format!(
                "{name} {}: janua cannot analyze that before it runs, and {why} could match it, so a person must answer (no rule or mode approves it)",
                part.what
            ),
        })
    })
}

/// True when the command runs inside janua's kernel view.
fn confined(input: &DecisionInput<'_>) -> bool {
    input.policy.commands_confined && input.tool.name == "Bash"
}

/// The first rule of `kind` that the unknown `part` could break: a Bash rule naming commands
/// for a part that may run anything (looked at first: it names what runs), else a Read or Edit
/// rule whose paths it could reach and the kernel view does not hold.
fn breakable<'p>(
    input: &DecisionInput<'p>,
    kind: RuleKind,
    part: &Unknown,
    confined: bool,
) -> Option<&'p Rule> {
    let policy = input.policy;
    let tool = input.tool.name.as_str();
    let schema = &input.tool.input_schema;
    let command_rule = |rule: &Rule| {
        rule.family().is_none()
            && part.runs
            && rule.matches_name(tool)
            && names_commands(rule, schema)
    };
    let path_rule = |rule: &Rule| {
        let scopes: &[&Scope] = match rule.family() {
            None => return false,
            // A Read deny also refuses writing the file; an Edit deny only changes.
            Some(Family::Read) => &[&part.reads, &part.writes],
            Some(Family::Edit) => &[&part.writes],
        };
        let kernel_holds = confined && kind == RuleKind::Deny && policy.kernel_enforces(rule);
        !kernel_holds && scopes.iter().any(|scope| reaches(rule, scope))
    };
    policy
        .rules_for(kind, tool)
        .find(|rule| command_rule(rule))
        .or_else(|| policy.rules_for(kind, tool).find(|rule| path_rule(rule)))
}

/// True for a Bash rule that names commands (not the bare tool, which the registry removes, nor a
/// rule on another parameter of the tool: `Bash(run_in_background:true)`).
fn names_commands(rule: &Rule, schema: &serde_json::Value) -> bool {
    let Specifier::Value(value) = &rule.specifier else {
        return false;
    };
    let other_parameter = value.param.as_ref().is_some_and(|(name, _)| {
        name != "command" && schema["properties"].get(name.as_str()).is_some()
    });
    value.command.is_some() && !other_parameter
}

/// True when a path rule could match a file within `scope`.
fn reaches(rule: &Rule, scope: &Scope) -> bool {
    let Specifier::Value(value) = &rule.specifier else {
        return false;
    };
    if value.param.is_some() {
        return false;
    }
    match scope {
        Scope::Nothing => false,
        Scope::Anywhere => true,
        Scope::Under(dirs) => match &value.path {
            Some(pattern) => dirs.iter().any(|dir| pattern.could_match_under(dir)),
            None => true,
        },
    }
}

/// A protected path a write within `scope` could reach: anywhere, a protected directory, or (when
/// it reaches names starting with a dot) one holding the workspace's, an additional directory's
/// or home's own configuration. (A part that may run any program is not counted here: any code
/// could write anywhere, and only rules decide it; the kernel view holds janua's own runs.)
fn protected_within(policy: &Policy, scope: &Scope, dot_names: bool) -> Option<String> {
    match scope {
        Scope::Nothing => None,
        Scope::Anywhere => Some("anywhere (a file only known when it runs)".to_owned()),
        Scope::Under(dirs) => {
            let context = policy.context();
            let roots: Vec<&std::path::Path> = std::iter::once(context.cwd.as_path())
                .chain(
                    policy
                        .additional_dirs
                        .iter()
                        .map(std::path::PathBuf::as_path),
                )
                .chain(context.home.as_deref())
                .collect();
            dirs.iter()
                .find(|dir| {
                    is_protected(dir)
                        || (dot_names && roots.iter().any(|root| root.starts_with(dir)))
                })
                .map(|dir| format!("under {}", dir.display()))
        }
    }
}
