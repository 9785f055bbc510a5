//! `fork`: what a sub-session asks for, and the checks that it asks for nothing its parent lacks.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::ceiling::Ceiling;
use super::scope::Scope;
use crate::registry::Registry;
use janua_permissions::{PermissionMode, Policy, Rule, RuleKind, RuleSource};
use janua_sandbox::{GrantContext, Grants};

/// What a sub-session keeps of its parent. Every field can only narrow: the default keeps
/// everything.
#[derive(Debug, Clone, Default)]
pub struct Narrowing {
    /// The sub-agent's id, on every event and hook input of its calls (default: none).
    pub agent_id: Option<String>,
    /// The tools the sub-session may call (canonical names); `None` keeps the parent's set.
    pub tools: Option<Vec<String>>,
    /// Replaces the allow rules: each must already be allowed by the parent (the same rule, or a
    /// bare rule for its tool). `None` keeps the parent's allow rules.
    pub allow: Option<Vec<String>>,
    /// Ask rules added to the parent's.
    pub ask: Vec<String>,
    /// Deny rules added to the parent's.
    pub deny: Vec<String>,
    /// A mode no more permissive than the parent's (`plan` < `dontAsk` < `default` <
    /// `acceptEdits` < `bypassPermissions`).
    pub mode: Option<PermissionMode>,
    /// A grant ceiling; it must lie within what the parent holds.
    pub grants: Option<Grants>,
}

/// Why a fork was refused: it would have widened its parent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForkError {
    /// A tool the parent does not have.
    #[error(
        "the sub-session cannot have {tool}: the parent session has no such tool (it has: {available})"
    )]
    UnknownTool {
        /// The tool asked for.
        tool: String,
        /// The parent's tools, comma-separated.
        available: String,
    },
    /// An allow rule the parent lacks.
    #[error("the allow rule {rule:?} widens the parent session, which does not allow it")]
    WidensAllow {
        /// The rule.
        rule: String,
    },
    /// A more permissive mode.
    #[error("the mode {wanted} is more permissive than the parent session's {parent}")]
    WidensMode {
        /// The parent's mode.
        parent: &'static str,
        /// The mode asked for.
        wanted: &'static str,
    },
    /// A grant the parent does not hold.
    #[error("the grant {grant} widens the parent session, which does not hold it")]
    WidensGrant {
        /// The grant, in words.
        grant: String,
    },
    /// A rule that does not parse.
    #[error("the rule {rule:?} is malformed: {reason}")]
    Rule {
        /// The rule.
        rule: String,
        /// Why.
        reason: String,
    },
    /// The fork would be nested deeper than the delegation depth limit.
    #[error("a sub-session {depth} deep exceeds the delegation depth limit of {limit}")]
    DepthExceeded {
        /// The depth asked for.
        depth: u32,
        /// The limit.
        limit: u32,
    },
}

/// True when a fork of a `parent` session may run in `wanted`. The modes form a partial order:
/// plan and dontAsk are each stricter than default, but neither is stricter than the other (plan
/// may run what an allow rule names under dontAsk; dontAsk may refuse what plan's read-only
/// tools run), so a fork may not move between them.
fn mode_narrows(wanted: PermissionMode, parent: PermissionMode) -> bool {
    use PermissionMode::{AcceptEdits, BypassPermissions, Default, DontAsk, Plan};
    let rank = |mode| match mode {
        Plan | DontAsk => 0,
        Default => 1,
        AcceptEdits => 2,
        BypassPermissions => 3,
    };
    match (wanted, parent) {
        (Plan, DontAsk) | (DontAsk, Plan) => false,
        _ => rank(wanted) <= rank(parent),
    }
}

/// What a fork is checked against.
pub(crate) struct Parent<'a> {
    pub(crate) scope: &'a Scope,
    pub(crate) policy: &'a Policy,
    pub(crate) registry: &'a Registry,
    pub(crate) grant_context: &'a GrantContext,
    pub(crate) max_depth: u32,
}

/// The scope of a sub-session of `parent` narrowed by `narrowing`, or why it would widen.
pub(crate) fn fork(
    parent: &Parent<'_>,
    narrowing: Narrowing,
    opened_by: Option<String>,
) -> Result<Scope, ForkError> {
    let depth = parent.scope.depth + 1;
    if depth > parent.max_depth {
        return Err(ForkError::DepthExceeded {
            depth,
            limit: parent.max_depth,
        });
    }
    let mut scope = parent.scope.child(opened_by);
    if narrowing.agent_id.is_some() {
        scope.agent_id = narrowing.agent_id;
    }
    let available: Vec<&str> = parent
        .registry
        .tools()
        .map(|tool| tool.spec.name.as_str())
        .filter(|name| parent.scope.has_tool(name))
        .collect();
    if let Some(tools) = narrowing.tools {
        let mut set = BTreeSet::new();
        for tool in tools {
            if !available.contains(&tool.as_str()) {
                return Err(ForkError::UnknownTool {
                    tool,
                    available: available.join(", "),
                });
            }
            set.insert(tool);
        }
        scope.tools = Some(set);
    }
    let parse = |text: &str, kind: RuleKind| {
        Rule::parse(text, kind, RuleSource::Session, parent.policy.context()).map_err(|error| {
            ForkError::Rule {
                rule: text.to_owned(),
                reason: error.reason,
            }
        })
    };
    let allow = match narrowing.allow {
        Some(texts) => {
            let mut rules = Vec::new();
            for text in texts {
                let rule = parse(&text, RuleKind::Allow)?;
                if !parent.policy.covers_allow(&rule) {
                    return Err(ForkError::WidensAllow { rule: text });
                }
                rules.push(rule);
            }
            Some(rules)
        }
        None => None,
    };
    let ask = narrowing
        .ask
        .iter()
        .map(|text| parse(text, RuleKind::Ask))
        .collect::<Result<Vec<_>, _>>()?;
    let deny = narrowing
        .deny
        .iter()
        .map(|text| parse(text, RuleKind::Deny))
        .collect::<Result<Vec<_>, _>>()?;
    let mode = match narrowing.mode {
        Some(wanted) if !mode_narrows(wanted, parent.policy.mode) => {
            return Err(ForkError::WidensMode {
                parent: parent.policy.mode.as_str(),
                wanted: wanted.as_str(),
            });
        }
        Some(wanted) => wanted,
        None => parent.policy.mode,
    };
    let narrows_policy =
        allow.is_some() || !ask.is_empty() || !deny.is_empty() || mode != parent.policy.mode;
    if narrows_policy {
        scope.policy = Some(Arc::new(parent.policy.narrowed(allow, ask, deny, mode)));
    }
    if let Some(grants) = narrowing.grants {
        let wanted = Ceiling::of_grants(&grants, parent.grant_context);
        let held = match &parent.scope.ceiling {
            Some(ceiling) => (**ceiling).clone(),
            None => Ceiling::union(
                parent.registry.tools().map(|tool| tool.grants()),
                parent.grant_context,
            ),
        };
        if let Some(grant) = held.missing(&wanted) {
            return Err(ForkError::WidensGrant { grant });
        }
        scope.ceiling = Some(Arc::new(match &parent.scope.ceiling {
            Some(ceiling) => ceiling.meet(&wanted),
            None => wanted,
        }));
    }
    Ok(scope)
}

#[cfg(test)]
mod tests {
    use super::mode_narrows;
    use janua_permissions::PermissionMode::{self, *};

    #[test]
    fn a_fork_may_keep_or_lower_its_mode_but_not_move_sideways() {
        let table: &[(PermissionMode, PermissionMode, bool)] = &[
            (Plan, Plan, true),
            (Plan, Default, true),
            (DontAsk, Default, true),
            (Default, BypassPermissions, true),
            (AcceptEdits, AcceptEdits, true),
            (Plan, BypassPermissions, true),
            (Default, Plan, false),
            (Default, DontAsk, false),
            (Plan, DontAsk, false),
            (DontAsk, Plan, false),
            (BypassPermissions, AcceptEdits, false),
            (AcceptEdits, Default, false),
        ];
        for &(wanted, parent, allowed) in table {
            assert_eq!(
                mode_narrows(wanted, parent),
                allowed,
                "{wanted:?} under {parent:?}"
            );
        }
    }
}
