//! The decision order (DESIGN.md §7): grant violation -> hook deny -> hook defer -> deny rule ->
//! a deny rule an unknown part could break (`fail_closed.rs`) -> ask rule -> critical-path
//! removal (asks) -> protected-path write (asks) -> an ask rule or protected path an unknown part
//! could break (asks; like the critical and protected asks, no hook, rule or mode approves it) ->
//! hook ask ->
//! built-in read-only Bash command (allows) -> mode (acceptEdits: also its filesystem commands) -> allow rules or hook allow ->
//! read-only inside the workspace -> ask; `dontAsk` turns a final ask into a denial. A hook's allow
//! never overrides a deny or ask rule. Every decision records what decided it.

use serde::Serialize;
use serde_json::Value;

mod fail_closed;

use super::Policy;
use super::critical::{Roots, critical_removal};
use super::edit_commands::edit_command;
use super::matching::{CallView, allowing, blocking};
use super::mode::PermissionMode;
use super::protected::is_protected;
use super::read_only::{ReadOnly, read_only};
use super::rules::{Rule, RuleKind};
use super::target::CommandTarget;
use super::target::{PathCandidates, Target};
use janua_types::{CapabilityClass, ToolSpec};

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
        /// Where it came from, in words.
        source: String,
        /// The scope label (`cli`, `user`, `project`, `local`, `settings`, `session`).
        scope: String,
    },
    /// An ask rule.
    AskRule {
        /// The rule text.
        rule: String,
        /// Where it came from, in words.
        source: String,
        /// The scope label.
        scope: String,
    },
    /// An allow rule (the first, when several cover a compound command).
    AllowRule {
        /// The rule text.
        rule: String,
        /// Where it came from, in words.
        source: String,
        /// The scope label.
        scope: String,
    },
    /// A PreToolUse hook's vote.
    Hook {
        /// The hook's name.
        hook: String,
    },
    /// The permission mode.
    Mode {
        /// The mode's name.
        mode: String,
    },
    /// A write to a protected path, which always asks.
    ProtectedPath {
        /// The path.
        path: String,
    },
    /// A part of a command janua cannot analyze before it runs, which an ask rule or a protected
    /// path could match: only a person's answer approves it.
    BeyondAnalysis {
        /// The part, in words.
        part: String,
    },
    /// An `rm`/`rmdir` of a critical path, which no rule, hook or mode approves.
    CriticalPath {
        /// The operand as written.
        path: String,
    },
    /// The default mode allows read-only tools inside the workspace.
    ReadOnlyInWorkspace,
    /// A Bash command line of the built-in read-only set, in every mode.
    ReadOnlyCommand,
    /// No rule matched; the default mode asks.
    DefaultAsk,
    /// A PermissionRequest hook answered the ask.
    PermissionHook {
        /// The hook's name.
        hook: String,
    },
    /// The prompter answered.
    Prompter,
    /// Nobody could answer an ask.
    NoPrompter,
}

impl DecidedBy {
    /// The source label `janua check` prints: a rule's scope, `mode`, `hook`, `grant` or
    /// `default`.
    pub fn source_label(&self) -> &str {
        match self {
            DecidedBy::Grant { .. } => "grant",
            DecidedBy::DenyRule { scope, .. }
            | DecidedBy::AskRule { scope, .. }
            | DecidedBy::AllowRule { scope, .. } => scope,
            DecidedBy::Hook { .. } | DecidedBy::PermissionHook { .. } => "hook",
            DecidedBy::Mode { .. } => "mode",
            DecidedBy::Prompter => "prompter",
            DecidedBy::ProtectedPath { .. }
            | DecidedBy::CriticalPath { .. }
            | DecidedBy::BeyondAnalysis { .. }
            | DecidedBy::ReadOnlyInWorkspace
            | DecidedBy::ReadOnlyCommand
            | DecidedBy::DefaultAsk
            | DecidedBy::NoPrompter => "default",
        }
    }

    /// True for an ask no allow rule, mode or hook may turn into allow: a protected path, a
    /// critical removal, a part beyond analysis that a rule or protected path could match.
    pub fn needs_a_person(&self) -> bool {
        matches!(
            self,
            DecidedBy::ProtectedPath { .. }
                | DecidedBy::CriticalPath { .. }
                | DecidedBy::BeyondAnalysis { .. }
        )
    }

    /// The rule that decided, if a rule did.
    pub fn rule(&self) -> Option<&str> {
        match self {
            DecidedBy::DenyRule { rule, .. }
            | DecidedBy::AskRule { rule, .. }
            | DecidedBy::AllowRule { rule, .. } => Some(rule),
            _ => None,
        }
    }
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
pub struct DecisionInput<'a> {
    /// The tool called.
    pub tool: &'a ToolSpec,
    /// What the call presents to rules.
    pub target: &'a Target,
    /// The input, for parameter rules.
    pub input: &'a Value,
    /// `Some(false)` when the call's path lies outside the tool's grants.
    pub within_grants: Option<bool>,
    /// `Some(true)` when the call's path lies inside the workspace (or an additional directory);
    /// `None` for tools without paths.
    pub inside_workspace: Option<bool>,
    /// True when the tool's component can read host environment variables: data from outside the
    /// workspace, so the default mode never allows it.
    pub reads_host_env: bool,
    /// The tool's grants in words, for the decision's reason.
    pub grants: String,
    /// The PreToolUse hooks' combined vote, if any hook voted.
    pub vote: Option<&'a HookVote>,
    /// The rules and mode.
    pub policy: &'a Policy,
}

impl Decision {
    fn new(verdict: Verdict, decided_by: DecidedBy, reason: String) -> Self {
        Self {
            verdict,
            decided_by,
            reason,
        }
    }
}

fn rule_fields(rule: &Rule) -> (String, String, String) {
    (
        rule.text().to_owned(),
        rule.source().to_string(),
        rule.source().label().to_owned(),
    )
}

/// A denial by the deny rule `rule`; `reason` words it from the rule's text and source.
fn denied_by(rule: &Rule, reason: impl FnOnce(&str, &str) -> String) -> Decision {
    let (text, source, scope) = rule_fields(rule);
    let reason = reason(&text, &source);
    Decision::new(
        Verdict::Deny,
        DecidedBy::DenyRule {
            rule: text,
            source,
            scope,
        },
        reason,
    )
}

/// Decides, before any prompter is consulted. In `dontAsk` mode the verdict is never `Ask`.
pub fn decide(input: &DecisionInput<'_>) -> Decision {
    let decision = decide_in_order(input);
    let mode = input.policy.mode;
    if decision.verdict == Verdict::Ask && mode == PermissionMode::DontAsk {
        return Decision::new(
            Verdict::Deny,
            DecidedBy::Mode {
                mode: mode.as_str().to_owned(),
            },
            format!("dontAsk mode denies what would ask: {}", decision.reason),
        );
    }
    decision
}

fn decide_in_order(input: &DecisionInput<'_>) -> Decision {
    let name = &input.tool.name;
    let policy = input.policy;
    if input.within_grants == Some(false) {
        return Decision::new(
            Verdict::Deny,
            DecidedBy::Grant {
                grants: input.grants.clone(),
            },
            format!(
                "{name} may not access that path: it is outside the tool's grants ({})",
                input.grants
            ),
        );
    }
    if let Some(vote) = input.vote.filter(|vote| vote.kind == VoteKind::Deny) {
        return Decision::new(
            Verdict::Deny,
            DecidedBy::Hook {
                hook: vote.hook.clone(),
            },
            vote.reason
                .clone()
                .unwrap_or_else(|| format!("the PreToolUse hook {} denied this call", vote.hook)),
        );
    }
    if let Some(vote) = input.vote.filter(|vote| vote.kind == VoteKind::Defer) {
        return Decision::new(
            Verdict::Defer,
            DecidedBy::Hook {
                hook: vote.hook.clone(),
            },
            format!(
                "the PreToolUse hook {} deferred this call to the caller",
                vote.hook
            ),
        );
    }
    let hits = super::path_index::PathHits::new(policy.path_index());
    let call = CallView {
        tool: name,
        writes: input.tool.class == CapabilityClass::Write,
        target: input.target,
        input: input.input,
        schema: &input.tool.input_schema,
        hits: Some(&hits),
    };
    if let Some(rule) = blocking(policy.rules_for(RuleKind::Deny, name), &call) {
        return denied_by(rule, |text, source| {
            format!("{name} is denied by the rule {text} ({source})")
        });
    }
    let command: Option<&CommandTarget> = match input.target {
        Target::Command(command) => Some(command),
        _ => None,
    };
    if let Some(decision) = command.and_then(|command| fail_closed::deny(input, command)) {
        return decision;
    }
    if let Some(rule) = blocking(policy.rules_for(RuleKind::Ask, name), &call) {
        let (text, source, scope) = rule_fields(rule);
        let reason = format!("the rule {text} ({source}) asks before {name} runs this");
        return Decision::new(
            Verdict::Ask,
            DecidedBy::AskRule {
                rule: text,
                source,
                scope,
            },
            reason,
        );
    }
    if let Target::Command(command) = input.target
        && let Some(removal) = critical_removal(
            command,
            &Roots {
                workspace: &policy.context().cwd,
                home: policy.context().home.as_deref(),
                additional: &policy.additional_dirs,
            },
        )
    {
        return Decision::new(
            Verdict::Ask,
            DecidedBy::CriticalPath {
                path: removal.operand.clone(),
            },
            format!(
                "{name} removes {} ({}), a critical path: no rule, hook or mode approves that, so it always asks",
                removal.operand, removal.what
            ),
        );
    }
    if let Some(path) = protected_write(input) {
        let shown = path.display().to_string();
        return Decision::new(
            Verdict::Ask,
            DecidedBy::ProtectedPath {
                path: shown.clone(),
            },
            format!(
                "{shown} is a protected path: writes to it always ask, whatever rule or mode would allow them"
            ),
        );
    }
    if let Some(decision) = command.and_then(|command| fail_closed::ask(input, command)) {
        return decision;
    }
    if let Some(vote) = input.vote.filter(|vote| vote.kind == VoteKind::Ask) {
        return Decision::new(
            Verdict::Ask,
            DecidedBy::Hook {
                hook: vote.hook.clone(),
            },
            vote.reason
                .clone()
                .unwrap_or_else(|| format!("the PreToolUse hook {} asks for approval", vote.hook)),
        );
    }
    if name == "Bash"
        && let Target::Command(command) = input.target
    {
        match read_only(command, policy) {
            ReadOnly::Yes(why) => {
                return Decision::new(Verdict::Allow, DecidedBy::ReadOnlyCommand, why);
            }
            ReadOnly::Hidden { rule, path } => {
                return denied_by(rule, |text, source| {
                    format!("{name} would read {path}, which the rule {text} ({source}) hides")
                });
            }
            ReadOnly::No => {}
        }
    }
    let mode = policy.mode;
    let mode_decided = |verdict, reason: String| {
        Decision::new(
            verdict,
            DecidedBy::Mode {
                mode: mode.as_str().to_owned(),
            },
            reason,
        )
    };
    let class = input.tool.class;
    match mode {
        PermissionMode::Plan
            if matches!(class, CapabilityClass::Write | CapabilityClass::Process) =>
        {
            return mode_decided(
                Verdict::Deny,
                format!(
                    "plan mode allows no writes and no processes; {name} is a {} tool",
                    class.as_str()
                ),
            );
        }
        PermissionMode::BypassPermissions => {
            return mode_decided(
                Verdict::Allow,
                "bypassPermissions mode allows everything no deny or ask rule stops".to_owned(),
            );
        }
        PermissionMode::AcceptEdits
            if class == CapabilityClass::Write && input.inside_workspace == Some(true) =>
        {
            return mode_decided(
                Verdict::Allow,
                format!("acceptEdits mode allows {name} inside the workspace"),
            );
        }
        PermissionMode::AcceptEdits if name == "Bash" => {
            if let Target::Command(command) = input.target
                && let Some(programs) = edit_command(command, policy)
            {
                return mode_decided(
                    Verdict::Allow,
                    format!("acceptEdits mode allows {programs} inside the workspace"),
                );
            }
        }
        _ => {}
    }
    let accept_edits = mode == PermissionMode::AcceptEdits;
    let write_ok = |path: &PathCandidates| {
        accept_edits && path.all().all(|spelling| policy.inside_workspace(spelling))
    };
    // A `cd` out of the workspace leaves only bare allow rules able to approve the command.
    let leaves_workspace = match input.target {
        Target::Command(command) => command.cd_targets.iter().any(|destination| {
            destination
                .as_ref()
                .is_none_or(|path| !path.all().all(|spelling| policy.inside_workspace(spelling)))
        }),
        _ => false,
    };
    let allowed = policy.with_allow_rules_for(name, |rules| {
        let bare_only: Vec<&Rule>;
        let rules = if leaves_workspace {
            bare_only = rules
                .iter()
                .copied()
                .filter(|rule| rule.is_bare())
                .collect();
            &bare_only[..]
        } else {
            rules
        };
        allowing(rules, &call, &write_ok).map(|used| {
            let texts: Vec<String> = used.iter().map(|rule| rule.text().to_owned()).collect();
            (used.first().map(|rule| rule_fields(rule)), texts)
        })
    });
    if let Some((first, mut texts)) = allowed {
        let Some((text, source, scope)) = first else {
            return mode_decided(
                Verdict::Allow,
                "acceptEdits mode allows writes inside the workspace".to_owned(),
            );
        };
        texts.dedup();
        let reason = if texts.len() > 1 {
            format!("allowed by the rules {} ({source} first)", texts.join(", "))
        } else {
            format!("allowed by the rule {text} ({source})")
        };
        return Decision::new(
            Verdict::Allow,
            DecidedBy::AllowRule {
                rule: text,
                source,
                scope,
            },
            reason,
        );
    }
    if let Some(vote) = input.vote.filter(|vote| vote.kind == VoteKind::Allow) {
        return Decision::new(
            Verdict::Allow,
            DecidedBy::Hook {
                hook: vote.hook.clone(),
            },
            format!("allowed by the PreToolUse hook {}", vote.hook),
        );
    }
    if input.tool.read_only && input.inside_workspace != Some(false) && !input.reads_host_env {
        return Decision::new(
            Verdict::Allow,
            DecidedBy::ReadOnlyInWorkspace,
            format!("{name} is read-only and stays inside the workspace"),
        );
    }
    let why =
        if let Target::Command(command) = input.target {
            match (&command.parsed.opaque, &command.unresolved_write) {
            (Some(why), _) => format!("needs approval ({why})"),
            (None, Some(target)) => {
                format!("writes to {target}, which cannot be checked before it runs")
            }
            _ if leaves_workspace => {
                "changes directory out of the workspace, so no pattern rule allows what runs there"
                    .to_owned()
            }
            _ if let Some(write) = uncovered_write(command, policy, &write_ok) => format!(
                "writes to {}, which no Edit allow rule covers",
                write.lexical.display()
            ),
            _ => match command.forms.iter().find_map(|forms| forms.exact_only.as_ref()) {
                Some(exact_only) => format!("runs a command no allow rule covers: {exact_only}"),
                None => "runs a command no allow rule covers".to_owned(),
            },
        }
        } else if !input.tool.read_only {
            "is not read-only and no allow rule matches".to_owned()
        } else if input.reads_host_env {
            "reads host environment variables and no allow rule matches".to_owned()
        } else {
            "reads outside the workspace and no allow rule matches".to_owned()
        };
    Decision::new(
        Verdict::Ask,
        DecidedBy::DefaultAsk,
        format!("{name} {why} (mode {mode})"),
    )
}

/// The first file `command` redirects into that neither `write_ok` nor an Edit allow rule covers.
fn uncovered_write<'c>(
    command: &'c CommandTarget,
    policy: &Policy,
    write_ok: &dyn Fn(&PathCandidates) -> bool,
) -> Option<&'c PathCandidates> {
    policy.with_allow_rules(|rules| {
        command.writes.iter().find(|write| {
            !write_ok(write) && super::matching::allowing_write(rules, write).is_none()
        })
    })
}

/// The first protected path the call would write, if any. (A file only known when it runs that
/// could be one is decided in `fail_closed.rs`.)
fn protected_write(input: &DecisionInput<'_>) -> Option<std::path::PathBuf> {
    let writes: Vec<&PathCandidates> = match input.target {
        Target::Path(path) if input.tool.class == CapabilityClass::Write => vec![path],
        Target::Command(command) => command
            .writes
            .iter()
            .chain(&command.program_writes)
            .collect(),
        _ => Vec::new(),
    };
    writes
        .into_iter()
        .flat_map(PathCandidates::all)
        .find(|path| is_protected(path))
        .map(std::path::Path::to_path_buf)
}

#[cfg(test)]
mod tests;
