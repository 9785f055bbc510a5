//! The decision order (DESIGN.md §7): grant violation -> hook deny -> hook defer -> deny rule -> hook ask ->
//! allow rule or hook allow -> read-only inside the workspace -> ask. A hook's allow never overrides
//! a deny rule. Every decision records what decided it.

use serde::Serialize;

use super::Policy;
use crate::registry::ToolSpec;

/// Allow, deny or ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The call runs.
    Allow,
    /// The call is refused.
    Deny,
    /// A human (or prompter) must answer.
    Ask,
    /// A hook handed the call back to the caller.
    Defer,
}

/// What settled a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecidedBy {
    /// The call needs a capability outside the tool's grants.
    Grant {
        /// The grants the tool has.
        grants: String,
    },
    /// A deny rule.
    DenyRule {
        /// The rule text.
        rule: String,
        /// Where it came from.
        source: String,
    },
    /// An allow rule.
    AllowRule {
        /// The rule text.
        rule: String,
        /// Where it came from.
        source: String,
    },
    /// A PreToolUse hook's vote.
    Hook {
        /// The hook's name.
        hook: String,
    },
    /// The default mode allows read-only tools inside the workspace.
    ReadOnlyInWorkspace,
    /// No rule matched; the default mode asks.
    DefaultAsk,
    /// The prompter answered.
    Prompter,
    /// Nobody could answer an ask.
    NoPrompter,
}

/// A decision and its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// The verdict.
    pub verdict: Verdict,
    /// What decided it.
    pub decided_by: DecidedBy,
    /// A sentence for the model or user.
    pub reason: String,
}

/// A PreToolUse hook's permission vote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookVote {
    /// The vote.
    pub kind: VoteKind,
    /// The hook that cast it.
    pub hook: String,
    /// Its reason, if given.
    pub reason: Option<String>,
}

/// The permission a hook asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VoteKind {
    /// Allow (cannot override deny rules).
    Allow,
    /// Deny.
    Deny,
    /// Ask a human.
    Ask,
    /// Hand the call back to the caller (`deferred`).
    Defer,
}

/// Everything the decision reads.
pub(crate) struct DecisionInput<'a> {
    pub(crate) tool: &'a ToolSpec,
    /// Values allow-rule specifiers are matched against.
    pub(crate) allow_values: &'a [String],
    /// Values deny-rule specifiers are matched against.
    pub(crate) deny_values: &'a [String],
    /// `Some(false)` when the call's path lies outside the tool's grants.
    pub(crate) within_grants: Option<bool>,
    /// `Some(true)` when the call's path lies inside the workspace; `None` for tools without paths.
    pub(crate) inside_workspace: Option<bool>,
    /// True when the tool's component can read host environment variables: data from outside the
    /// workspace, so the default mode never allows it.
    pub(crate) reads_host_env: bool,
    pub(crate) grants: String,
    pub(crate) vote: Option<&'a HookVote>,
    pub(crate) policy: &'a Policy,
}

/// Decides, before any prompter is consulted.
pub(crate) fn decide(input: &DecisionInput<'_>) -> Decision {
    let name = &input.tool.name;
    if input.within_grants == Some(false) {
        return Decision {
            verdict: Verdict::Deny,
            decided_by: DecidedBy::Grant {
                grants: input.grants.clone(),
            },
            reason: format!(
                "{name} may not access that path: it is outside the tool's grants ({})",
                input.grants
            ),
        };
    }
    if let Some(vote) = input.vote.filter(|vote| vote.kind == VoteKind::Deny) {
        return Decision {
            verdict: Verdict::Deny,
            decided_by: DecidedBy::Hook {
                hook: vote.hook.clone(),
            },
            reason: vote
                .reason
                .clone()
                .unwrap_or_else(|| format!("the PreToolUse hook {} denied this call", vote.hook)),
        };
    }
    if let Some(vote) = input.vote.filter(|vote| vote.kind == VoteKind::Defer) {
        return Decision {
            verdict: Verdict::Defer,
            decided_by: DecidedBy::Hook {
                hook: vote.hook.clone(),
            },
            reason: format!(
                "the PreToolUse hook {} deferred this call to the caller",
                vote.hook
            ),
        };
    }
    if let Some(rule) = input.policy.deny.first_match(name, input.deny_values) {
        return Decision {
            verdict: Verdict::Deny,
            decided_by: DecidedBy::DenyRule {
                rule: rule.text().to_owned(),
                source: rule.source().to_string(),
            },
            reason: format!(
                "{name} is denied by the rule {} ({})",
                rule.text(),
                rule.source()
            ),
        };
    }
    if let Some(vote) = input.vote.filter(|vote| vote.kind == VoteKind::Ask) {
        return Decision {
            verdict: Verdict::Ask,
            decided_by: DecidedBy::Hook {
                hook: vote.hook.clone(),
            },
            reason: vote
                .reason
                .clone()
                .unwrap_or_else(|| format!("the PreToolUse hook {} asks for approval", vote.hook)),
        };
    }
    if let Some(rule) = input.policy.allow.first_match(name, input.allow_values) {
        return Decision {
            verdict: Verdict::Allow,
            decided_by: DecidedBy::AllowRule {
                rule: rule.text().to_owned(),
                source: rule.source().to_string(),
            },
            reason: format!("allowed by the rule {} ({})", rule.text(), rule.source()),
        };
    }
    if let Some(vote) = input.vote.filter(|vote| vote.kind == VoteKind::Allow) {
        return Decision {
            verdict: Verdict::Allow,
            decided_by: DecidedBy::Hook {
                hook: vote.hook.clone(),
            },
            reason: format!("allowed by the PreToolUse hook {}", vote.hook),
        };
    }
    if input.tool.read_only && input.inside_workspace != Some(false) && !input.reads_host_env {
        return Decision {
            verdict: Verdict::Allow,
            decided_by: DecidedBy::ReadOnlyInWorkspace,
            reason: format!("{name} is read-only and stays inside the workspace"),
        };
    }
    let why = if !input.tool.read_only {
        "is not read-only"
    } else if input.reads_host_env {
        "reads host environment variables"
    } else {
        "reads outside the workspace"
    };
    Decision {
        verdict: Verdict::Ask,
        decided_by: DecidedBy::DefaultAsk,
        reason: format!("{name} {why} and no allow rule matches"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::{Rule, RuleSource};
    use crate::registry::CapabilityClass;

    fn spec(read_only: bool) -> ToolSpec {
        ToolSpec {
            name: "T".into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
            class: CapabilityClass::Read,
            read_only,
            concurrency_safe: false,
            rule_field: None,
        }
    }

    fn policy(allow: &[&str], deny: &[&str]) -> Policy {
        let mut policy = Policy::default();
        for text in allow {
            policy
                .allow
                .push(Rule::parse(text, RuleSource::CommandLine).unwrap());
        }
        for text in deny {
            policy
                .deny
                .push(Rule::parse(text, RuleSource::CommandLine).unwrap());
        }
        policy
    }

    fn vote(kind: VoteKind) -> HookVote {
        HookVote {
            kind,
            hook: "h".into(),
            reason: None,
        }
    }

    #[test]
    fn decision_order_table() {
        struct Case {
            read_only: bool,
            inside: Option<bool>,
            within_grants: Option<bool>,
            allow: &'static [&'static str],
            deny: &'static [&'static str],
            vote: Option<VoteKind>,
            env: bool,
            expected: Verdict,
        }
        let base = || Case {
            read_only: false,
            inside: None,
            within_grants: None,
            allow: &[],
            deny: &[],
            vote: None,
            env: false,
            expected: Verdict::Ask,
        };
        let cases = [
            base(),
            Case {
                read_only: true,
                expected: Verdict::Allow,
                ..base()
            },
            Case {
                read_only: true,
                inside: Some(false),
                expected: Verdict::Ask,
                ..base()
            },
            Case {
                allow: &["T"],
                expected: Verdict::Allow,
                ..base()
            },
            Case {
                allow: &["T"],
                deny: &["T(x)"],
                expected: Verdict::Deny,
                ..base()
            },
            Case {
                allow: &["T"],
                within_grants: Some(false),
                expected: Verdict::Deny,
                ..base()
            },
            Case {
                vote: Some(VoteKind::Allow),
                expected: Verdict::Allow,
                ..base()
            },
            Case {
                vote: Some(VoteKind::Allow),
                deny: &["T(x)"],
                expected: Verdict::Deny,
                ..base()
            },
            Case {
                vote: Some(VoteKind::Deny),
                allow: &["T"],
                expected: Verdict::Deny,
                ..base()
            },
            Case {
                vote: Some(VoteKind::Ask),
                allow: &["T"],
                expected: Verdict::Ask,
                ..base()
            },
            Case {
                vote: Some(VoteKind::Ask),
                read_only: true,
                expected: Verdict::Ask,
                ..base()
            },
            Case {
                vote: Some(VoteKind::Defer),
                allow: &["T"],
                expected: Verdict::Defer,
                ..base()
            },
            Case {
                vote: Some(VoteKind::Defer),
                within_grants: Some(false),
                expected: Verdict::Deny,
                ..base()
            },
            Case {
                vote: Some(VoteKind::Defer),
                deny: &["T(x)"],
                expected: Verdict::Defer,
                ..base()
            },
            Case {
                read_only: true,
                inside: Some(true),
                env: true,
                expected: Verdict::Ask,
                ..base()
            },
            Case {
                read_only: true,
                env: true,
                allow: &["T"],
                expected: Verdict::Allow,
                ..base()
            },
        ];
        let values = vec!["x".to_owned()];
        for (index, case) in cases.iter().enumerate() {
            let tool = spec(case.read_only);
            let policy = policy(case.allow, case.deny);
            let vote = case.vote.map(vote);
            let decision = decide(&DecisionInput {
                tool: &tool,
                allow_values: &values,
                deny_values: &values,
                within_grants: case.within_grants,
                inside_workspace: case.inside,
                reads_host_env: case.env,
                grants: "fs: none; env: none".into(),
                vote: vote.as_ref(),
                policy: &policy,
            });
            assert_eq!(
                decision.verdict, case.expected,
                "case {index}: {decision:?}"
            );
        }
    }
}
