//! The central permission decision: grants, rules, hook votes and the default mode, in one place.
//!
//! This first version knows allow and deny rules (`Tool` or `Tool(specifier)`) and the default mode;
//! the full Claude-Code-compatible grammar, ask rules, modes and settings scopes plug into
//! [`Policy`] and [`decide`] without changing the pipeline.

mod decision;
mod paths;
mod prompter;
mod rules;

pub use decision::{DecidedBy, Decision, HookVote, Verdict, VoteKind};
pub use prompter::{NoPrompter, PermissionRequest, PromptAnswer, Prompter};
pub use rules::{Rule, RuleError, RuleList, RuleSource, split_rule_list};

pub(crate) use decision::{DecisionInput, decide};
pub(crate) use paths::normalize;

/// The operator's permission configuration.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Rules that allow matching calls without asking.
    pub allow: RuleList,
    /// Rules that deny matching calls (a bare name removes the tool from the registry).
    pub deny: RuleList,
}

impl Policy {
    /// True when a bare-name deny rule removes `tool` from the registry.
    pub(crate) fn removes(&self, tool: &str) -> bool {
        self.deny
            .rules()
            .iter()
            .any(|rule| rule.is_bare() && rule.matches_name(tool))
    }
}
