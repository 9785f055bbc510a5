//! The decision order, table-tested: every step, every mode, and the `cd` guard.

use super::*;
use crate::{RuleContext, RuleSource};

fn spec(read_only: bool, class: CapabilityClass) -> ToolSpec {
    ToolSpec {
        name: "T".into(),
        description: String::new(),
        input_schema: serde_json::json!({"type": "object", "properties": {"x": {}, "mode": {}}}),
        class,
        read_only,
        concurrency_safe: false,
        rule_field: Some("x".into()),
        validates_input: false,
    }
}

fn policy(allow: &[&str], ask: &[&str], deny: &[&str], mode: PermissionMode) -> Policy {
    let mut policy = Policy::new(RuleContext {
        cwd: "/ws".into(),
        home: None,
    });
    for (kind, texts) in [
        (RuleKind::Allow, allow),
        (RuleKind::Ask, ask),
        (RuleKind::Deny, deny),
    ] {
        for text in texts {
            let rule = Rule::parse(text, kind, RuleSource::CommandLine, policy.context()).unwrap();
            policy.add(rule);
        }
    }
    policy.mode = mode;
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
        class: CapabilityClass,
        inside: Option<bool>,
        within_grants: Option<bool>,
        allow: &'static [&'static str],
        ask: &'static [&'static str],
        deny: &'static [&'static str],
        vote: Option<VoteKind>,
        env: bool,
        mode: PermissionMode,
        expected: Verdict,
        source: &'static str,
    }
    let base = || Case {
        read_only: false,
        class: CapabilityClass::Read,
        inside: None,
        within_grants: None,
        allow: &[],
        ask: &[],
        deny: &[],
        vote: None,
        env: false,
        mode: PermissionMode::Default,
        expected: Verdict::Ask,
        source: "default",
    };
    use PermissionMode::*;
    let write = CapabilityClass::Write;
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
            ..base()
        },
        Case {
            allow: &["T"],
            expected: Verdict::Allow,
            source: "cli",
            ..base()
        },
        Case {
            allow: &["T"],
            deny: &["T(x)"],
            expected: Verdict::Deny,
            source: "cli",
            ..base()
        },
        Case {
            allow: &["T"],
            within_grants: Some(false),
            expected: Verdict::Deny,
            source: "grant",
            ..base()
        },
        Case {
            vote: Some(VoteKind::Allow),
            expected: Verdict::Allow,
            source: "hook",
            ..base()
        },
        Case {
            vote: Some(VoteKind::Allow),
            deny: &["T(x)"],
            expected: Verdict::Deny,
            source: "cli",
            ..base()
        },
        // A hook's allow never overrides an ask rule.
        Case {
            vote: Some(VoteKind::Allow),
            ask: &["T"],
            source: "cli",
            ..base()
        },
        Case {
            vote: Some(VoteKind::Deny),
            allow: &["T"],
            expected: Verdict::Deny,
            source: "hook",
            ..base()
        },
        Case {
            vote: Some(VoteKind::Ask),
            allow: &["T"],
            source: "hook",
            ..base()
        },
        Case {
            vote: Some(VoteKind::Ask),
            read_only: true,
            source: "hook",
            ..base()
        },
        Case {
            vote: Some(VoteKind::Defer),
            allow: &["T"],
            expected: Verdict::Defer,
            source: "hook",
            ..base()
        },
        Case {
            vote: Some(VoteKind::Defer),
            within_grants: Some(false),
            expected: Verdict::Deny,
            source: "grant",
            ..base()
        },
        Case {
            vote: Some(VoteKind::Defer),
            deny: &["T(x)"],
            expected: Verdict::Defer,
            source: "hook",
            ..base()
        },
        Case {
            read_only: true,
            inside: Some(true),
            env: true,
            ..base()
        },
        Case {
            read_only: true,
            env: true,
            allow: &["T"],
            expected: Verdict::Allow,
            source: "cli",
            ..base()
        },
        // Ask rules beat allow rules, and ask even in bypass mode.
        Case {
            allow: &["T"],
            ask: &["T(x)"],
            source: "cli",
            ..base()
        },
        Case {
            ask: &["T"],
            mode: BypassPermissions,
            source: "cli",
            ..base()
        },
        Case {
            deny: &["T"],
            mode: BypassPermissions,
            expected: Verdict::Deny,
            source: "cli",
            ..base()
        },
        Case {
            mode: BypassPermissions,
            expected: Verdict::Allow,
            source: "mode",
            ..base()
        },
        // dontAsk: what would ask is denied, even an explicit ask rule.
        Case {
            mode: DontAsk,
            expected: Verdict::Deny,
            source: "mode",
            ..base()
        },
        Case {
            ask: &["T"],
            allow: &["T"],
            mode: DontAsk,
            expected: Verdict::Deny,
            source: "mode",
            ..base()
        },
        Case {
            allow: &["T"],
            mode: DontAsk,
            expected: Verdict::Allow,
            source: "cli",
            ..base()
        },
        Case {
            read_only: true,
            mode: DontAsk,
            expected: Verdict::Allow,
            ..base()
        },
        // plan: no writes, whatever allows them.
        Case {
            class: write,
            allow: &["T"],
            mode: Plan,
            expected: Verdict::Deny,
            source: "mode",
            ..base()
        },
        Case {
            class: CapabilityClass::Process,
            mode: Plan,
            expected: Verdict::Deny,
            source: "mode",
            ..base()
        },
        Case {
            read_only: true,
            mode: Plan,
            expected: Verdict::Allow,
            ..base()
        },
        // acceptEdits: writes inside the workspace.
        Case {
            class: write,
            inside: Some(true),
            mode: AcceptEdits,
            expected: Verdict::Allow,
            source: "mode",
            ..base()
        },
        Case {
            class: write,
            inside: Some(false),
            mode: AcceptEdits,
            ..base()
        },
        Case {
            class: write,
            inside: Some(true),
            ..base()
        },
        // Parameter rules (deny/ask) match a top-level scalar.
        Case {
            deny: &["T(mode:fast)"],
            expected: Verdict::Ask,
            ..base()
        },
    ];
    let input = serde_json::json!({"x": "x", "mode": "slow"});
    let target = Target::Field("x".into());
    for (index, case) in cases.iter().enumerate() {
        let tool = spec(case.read_only, case.class);
        let policy = policy(case.allow, case.ask, case.deny, case.mode);
        let vote = case.vote.map(vote);
        let decision = decide(&DecisionInput {
            tool: &tool,
            target: &target,
            input: &input,
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
        assert_eq!(
            decision.decided_by.source_label(),
            case.source,
            "case {index}: {decision:?}"
        );
    }
}

/// PERM §Read-only commands: `cd` into another directory and then `git` prompts (GH review:
/// the repository there would run its own hooks and pager).
#[test]
fn a_cd_out_of_the_workspace_needs_more_than_a_pattern() {
    let tool = crate::decision_table::bash();
    let patterns = &["Bash(cd *)", "Bash(git status)"][..];
    let cases = [
        (patterns, "cd sub && git status", Verdict::Allow),
        (patterns, "cd /tmp/evil && git status", Verdict::Ask),
        (patterns, "cd .. && git status", Verdict::Ask),
        (patterns, "cd $DIR && git status", Verdict::Ask),
        (patterns, "cd && git status", Verdict::Ask),
        (&["Bash"][..], "cd /tmp/evil && git status", Verdict::Allow),
    ];
    for (allow, command, expected) in cases {
        let mut policy = policy(allow, &[], &[], PermissionMode::Default);
        policy.context = RuleContext {
            cwd: "/ws".into(),
            home: Some("/home/u".into()),
        };
        let decision = policy.evaluate(&tool, &serde_json::json!({ "command": command }));
        assert_eq!(decision.verdict, expected, "{command}: {decision:?}");
    }
}

/// Deny and ask rules fail closed on doubt (issue 30, point 9): every row of `fail_closed.tsv`.
#[test]
fn fail_closed_table() {
    crate::decision_table::run("fail_closed.tsv", include_str!("../fail_closed.tsv"), 30);
}

/// The decision reads a command from the session shell's directory, and directories it cannot
/// know make path rules ask (issue 30, point 10): every row of `directories.tsv`.
#[test]
fn directories_table() {
    crate::decision_table::run("directories.tsv", include_str!("../directories.tsv"), 30);
}

/// The limits of analysis: where the engine cannot see, a deny rule still holds and no question
/// is asked that no rule needed.
#[test]
fn limits_of_analysis_table() {
    crate::decision_table::run("limits.tsv", include_str!("../limits.tsv"), 50);
}
