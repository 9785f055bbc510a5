//! Property tests: compound commands never ride on a prefix rule, a deny anywhere beats an allow
//! anywhere, and normalization is idempotent.

use std::path::Path;

use proptest::prelude::*;
use serde_json::json;

use super::Policy;
use super::decision::Verdict;
use super::matching::{CallView, allowing};
use super::mode::PermissionMode;
use super::paths::normalize;
use super::rules::{Rule, RuleContext, RuleKind, RuleSource};
use super::target::Target;
use janua_types::url_host;
use janua_types::{CapabilityClass, ToolSpec};

const ALLOWED: &[&str] = &["git", "ls", "npm", "cargo", "echo"];
const OTHERS: &[&str] = &["rm", "curl", "sh", "python3", "dd", "chmod"];
const OPERATORS: &[&str] = &[" && ", " || ", "; ", " | ", " |& ", " & ", "\n"];

fn context() -> RuleContext {
    RuleContext {
        cwd: "/ws".into(),
        home: None,
    }
}

fn bash_spec() -> ToolSpec {
    ToolSpec {
        name: "Bash".into(),
        description: String::new(),
        input_schema: json!({"type": "object", "properties": {"command": {}}}),
        class: CapabilityClass::Process,
        read_only: false,
        concurrency_safe: false,
        rule_field: Some("command".into()),
        validates_input: false,
    }
}

fn arg() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9._/-]{1,8}",
        "-[a-z]{1,3}",
        "\"[a-z ;&|]{0,8}\"".prop_map(|s| s),
        "'[a-z ;&|$()]{0,8}'".prop_map(|s| s),
    ]
}

fn words(program: &str, args: Vec<String>) -> String {
    std::iter::once(program.to_owned())
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// `Bash(p *)` never allows a command line holding a subcommand that starts with another
    /// program, wherever it sits and whatever operator joins it.
    #[test]
    fn a_prefix_rule_never_allows_a_foreign_subcommand(
        allowed in prop::sample::select(ALLOWED),
        other in prop::sample::select(OTHERS),
        allowed_args in prop::collection::vec(arg(), 0..4),
        other_args in prop::collection::vec(arg(), 0..4),
        operator in prop::sample::select(OPERATORS),
        shape in 0u32..5,
    ) {
        let a = words(allowed, allowed_args);
        let b = words(other, other_args);
        let line = match shape {
            0 => format!("{a}{operator}{b}"),
            1 => format!("{b}{operator}{a}"),
            2 => format!("{a} $({b})"),
            3 => format!("{a} `{b}`"),
            _ => format!("{a}{operator}({b})"),
        };
        let rule = Rule::parse(&format!("Bash({allowed} *)"), RuleKind::Allow, RuleSource::CommandLine, &context()).unwrap();
        let input = json!({"command": line});
        let target = Target::new("Bash", Some("command"), false, &input, Path::new("/ws"), None);
        let spec = bash_spec();
        let call = CallView { tool: "Bash", writes: false, target: &target, input: &input, schema: &spec.input_schema, hits: None };
        prop_assert!(allowing(&[&rule], &call, &|_| false).is_none(), "{line:?} was allowed");
    }

    /// Whatever allow rules any scope holds and whatever the mode, a matching deny rule from any
    /// scope decides `deny`.
    #[test]
    fn deny_beats_allow_across_scopes_and_modes(
        program in prop::sample::select(OTHERS),
        deny_scope in 0usize..5,
        allow_scopes in prop::collection::vec(0usize..5, 0..5),
        mode in prop::sample::select(&[
            PermissionMode::Default, PermissionMode::AcceptEdits, PermissionMode::Plan,
            PermissionMode::DontAsk, PermissionMode::BypassPermissions,
        ][..]),
        args in prop::collection::vec(arg(), 0..3),
    ) {
        let scopes = [
            RuleSource::CommandLine,
            RuleSource::User("/u/settings.json".into()),
            RuleSource::Project("/ws/.janua/settings.json".into()),
            RuleSource::Local("/ws/.janua/settings.local.json".into()),
            RuleSource::Settings(None),
        ];
        let mut policy = Policy::new(context());
        policy.mode = mode;
        for scope in &allow_scopes {
            for text in ["Bash", &format!("Bash({program} *)")] {
                policy.add(Rule::parse(text, RuleKind::Allow, scopes[*scope].clone(), &context()).unwrap());
            }
        }
        policy.add(Rule::parse(&format!("Bash({program} *)"), RuleKind::Deny, scopes[deny_scope].clone(), &context()).unwrap());
        let line = words(program, args);
        let decision = policy.evaluate(&bash_spec(), &json!({"command": line}));
        prop_assert_eq!(decision.verdict, Verdict::Deny, "{:?} {}", decision, line);
    }

    /// Any text at all splits or is reported opaque; the splitter never panics.
    #[test]
    fn the_splitter_never_panics(command in "[a-z $'\"`(){}\\[\\];&|<>\\\\#=\n*?!.-]{0,80}") {
        let parsed = super::shell::split(&command);
        if parsed.opaque.is_none() {
            for sub in &parsed.subcommands {
                prop_assert!(sub.words.len() <= command.len() + 1);
            }
        }
    }

    /// Normalizing a path twice gives what normalizing once gave.
    #[test]
    fn path_normalization_is_idempotent(path in "(/|\\./|\\.\\./)?([a-z.]{1,3}/{1,2}){0,5}[a-z.]{0,3}") {
        let once = normalize(Path::new("/ws/a"), &path);
        let twice = normalize(Path::new("/ws/a"), &once.to_string_lossy());
        prop_assert_eq!(&once, &twice);
        prop_assert!(once.is_absolute());
        prop_assert!(!once.components().any(|c| matches!(c, std::path::Component::ParentDir | std::path::Component::CurDir)));
    }

    /// A host read from a URL reads back as itself.
    #[test]
    fn host_normalization_is_idempotent(host in "[A-Za-z][A-Za-z0-9]{0,7}(\\.[A-Za-z][A-Za-z0-9]{0,7}){0,3}\\.?", port in prop::option::of(1u16..)) {
        let url = match port { Some(port) => format!("https://{host}:{port}/x"), None => format!("https://{host}/x") };
        let once = url_host(&url).unwrap();
        let again = url_host(&format!("https://{once}/")).unwrap();
        prop_assert_eq!(&once, &again);
        prop_assert_eq!(once, host.trim_end_matches('.').to_ascii_lowercase());
    }
}

/// One way to run a command line `C` so that its words are hidden from a reader: padding past
/// the length limit, code strings, substitutions, wrappers, interpreters and options that run a
/// program, in any nesting.
fn disguised(command: String) -> impl Strategy<Value = String> {
    let quoted = |text: &str| format!("'{}'", text.replace('\'', "'\\''"));
    let q = quoted(&command);
    let python = quoted(&format!("import os; os.system({})", json!(command)));
    let perl = quoted(&format!("system({})", json!(command)));
    let node = quoted(&format!(
        "require('child_process').execSync({})",
        json!(command)
    ));
    let options = vec![
        format!("echo {} >/dev/null; {command}", "x".repeat(10_001)),
        format!("bash -c {q}"),
        format!("sh -c \"$(echo {q})\""),
        format!("eval {q}"),
        format!("eval \"$(printf %s {q})\""),
        // A wrapper runs one program: a whole command line goes through a shell.
        format!("timeout 5 sh -c {q}"),
        format!("nice env bash -c {q}"),
        format!("sudo -u nobody sh -c {q}"),
        format!("strace -f -o /dev/null sh -c {q}"),
        format!("valgrind -q bash -c {q}"),
        format!("python3 -c {python}"),
        format!("perl -e {perl}"),
        format!("node -e {node}"),
        format!("tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec={q} x"),
        format!("tar xf a.tar --to-command {q}"),
        format!("find . -maxdepth 0 -exec sh -c {q} \\;"),
        format!("git -c core.pager={q} log"),
        format!("ssh -o ProxyCommand={q} host"),
        format!("rsync -e {q} a b:"),
        format!("echo x | xargs sh -c {q}"),
        format!("bash <<'EOF'\n{command}\nEOF"),
        format!("echo {q} | sh"),
        format!("echo \"$( {command} )\""),
        format!("( {command} )"),
        format!("if true; then {command}; fi"),
        format!("source <(echo {q})"),
        format!("env PAGER={q} git -p help"),
        format!("awk 'BEGIN {{system({})}}'", json!(command)),
    ];
    proptest::sample::select(options)
}

/// The denied command in a spelling that hides its program.
fn core(program: &'static str, rest: &'static str) -> impl Strategy<Value = String> {
    let options = vec![
        format!("{program} {rest}"),
        format!("$(echo {program}) {rest}"),
        format!("\"{program}\" {rest}"),
        format!("x={program}; $x {rest}"),
        format!("command {program} {rest}"),
        format!("timeout 5 {program} {rest}"),
        format!("nice env {program} {rest}"),
        format!("sudo -u nobody {program} {rest}"),
        format!("strace -f -o /dev/null $(echo {program}) {rest}"),
        format!("valgrind -q {program} {rest}"),
    ];
    proptest::sample::select(options)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Whatever hides a denied command — padding, nesting, quoting, substitutions, wrappers,
    /// code strings, options that run a program, in up to three layers — it is never allowed,
    /// under a bare `Bash` allow, in any mode, on either surface.
    #[test]
    fn a_deny_rule_holds_whatever_hides_the_command(
        (rule, command) in prop_oneof![
            Just(("Bash(rm *)", "rm", "-rf victim")),
            Just(("Bash(curl *)", "curl", "-s http://x.test")),
            Just(("Bash(git push *)", "git", "push origin main")),
        ]
        .prop_flat_map(|(rule, program, rest)| (Just(rule), core(program, rest)))
        .prop_flat_map(|(rule, core)| (Just(rule), disguised(core)))
        .prop_flat_map(|(rule, once)| (Just(rule), prop_oneof![Just(once.clone()), disguised(once)]))
        .prop_flat_map(|(rule, twice)| (Just(rule), prop_oneof![Just(twice.clone()), disguised(twice)])),
        mode in proptest::sample::select(vec![
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::BypassPermissions,
            PermissionMode::DontAsk,
        ]),
        confined in any::<bool>(),
    ) {
        let mut policy = Policy::new(context());
        for (text, kind) in [("Bash", RuleKind::Allow), (rule, RuleKind::Deny)] {
            policy.add(Rule::parse(text, kind, RuleSource::CommandLine, policy.context()).unwrap());
        }
        policy.mode = mode;
        policy.commands_confined = confined;
        let decision = policy.evaluate(&bash_spec(), &json!({ "command": command }));
        prop_assert_ne!(
            decision.verdict,
            Verdict::Allow,
            "{} allowed under deny {} in {:?}: {}",
            command,
            rule,
            mode,
            decision.reason
        );
    }
}

/// Every Bash deny rule of the matcher table with each command it denies there.
fn table_denials() -> Vec<(String, String)> {
    super::vectors::rows()
        .into_iter()
        .filter(|row| {
            row.kind == RuleKind::Deny
                && row.tool == "Bash"
                && row.expected
                && !row.input.starts_with("{\"")
        })
        .map(|row| (row.rule, row.input))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Around every deny rule of the matcher table's Bash rows: each command it denies there,
    /// hidden in one or two layers, is never allowed under a bare `Bash` allow in
    /// `bypassPermissions` (inside the kernel view, a Read or Edit deny the view holds is left to
    /// it).
    #[test]
    fn every_table_deny_rule_holds_around_its_commands(
        (rule, command) in proptest::sample::select(table_denials())
            .prop_flat_map(|(rule, command)| (Just(rule), disguised(command)))
            .prop_flat_map(|(rule, once)| (Just(rule), prop_oneof![Just(once.clone()), disguised(once)])),
        confined in any::<bool>(),
    ) {
        let mut policy = Policy::new(context());
        for (text, kind) in [("Bash", RuleKind::Allow), (rule.as_str(), RuleKind::Deny)] {
            policy.add(Rule::parse(text, kind, RuleSource::CommandLine, policy.context()).unwrap());
        }
        policy.mode = PermissionMode::BypassPermissions;
        policy.commands_confined = confined;
        let held_by_the_view = policy
            .rules(RuleKind::Deny)
            .iter()
            .any(|rule| policy.kernel_enforces(rule));
        let decision = policy.evaluate(&bash_spec(), &json!({ "command": command }));
        prop_assert!(
            decision.verdict != Verdict::Allow || (confined && held_by_the_view),
            "{:?} allowed under deny {}: {}",
            command,
            rule,
            decision.reason
        );
    }
}
