//! The runner of the decision tables (`critical.tsv`, `read_only.tsv`): each row is one Bash call
//! through the whole decision, kept as data so a failure names its file and line.
//!
//! Columns, separated by tabs: mode (with `+confined`: the command runs inside janua's kernel
//! view), rules (`kind:text`, several separated by ` ;; `, or `-`), the command, the expected
//! verdict (`allow`, `ask`, `deny`), the expected `decided_by` kind (`critical_path`,
//! `read_only_command`, `deny_rule`, `mode`, ...) and the source the row follows. A table may add
//! a second column, the session shell's directory relative to the workspace (where an earlier
//! call's `cd` left it). The workspace is `/ws/project`, home `/home/u`, and `/srv/shared/extra`
//! an additional directory.

use super::{PermissionMode, Policy, Rule, RuleContext, RuleKind, RuleSource};
use janua_types::{CapabilityClass, ToolSpec};

/// The built-in Bash tool's spec, as the decision sees it.
pub fn bash() -> ToolSpec {
    ToolSpec {
        name: "Bash".into(),
        description: String::new(),
        input_schema: serde_json::json!({"type": "object", "properties": {"command": {}}}),
        class: CapabilityClass::Process,
        read_only: false,
        concurrency_safe: false,
        rule_field: Some("command".into()),
        validates_input: false,
    }
}

/// Runs every row of `text` (the contents of `file`), failing with every row that decides
/// otherwise; `at_least` guards against a table that silently lost its rows.
pub fn run(file: &str, text: &str, at_least: usize) {
    let mut failures = Vec::new();
    let mut rows = 0;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        rows += 1;
        let at = index + 1;
        let fields: Vec<&str> = line.split('\t').collect();
        let (mode, directory, rule, command, verdict, decided_by, source) = match fields[..] {
            [mode, rule, command, verdict, decided_by, source] => {
                (mode, ".", rule, command, verdict, decided_by, source)
            }
            [mode, directory, rule, command, verdict, decided_by, source] => {
                (mode, directory, rule, command, verdict, decided_by, source)
            }
            _ => panic!("{file}:{at}: six or seven tab-separated fields expected: {line:?}"),
        };
        let mut policy = Policy::new(RuleContext {
            cwd: "/ws/project".into(),
            home: Some("/home/u".into()),
        });
        policy.additional_dirs = vec!["/srv/shared/extra".into()];
        let (mode_name, confined) = match mode.strip_suffix("+confined") {
            Some(name) => (name, true),
            None => (mode, false),
        };
        policy.commands_confined = confined;
        policy.mode = mode_name
            .parse::<PermissionMode>()
            .unwrap_or_else(|_| panic!("{file}:{at}: unknown mode {mode:?}"));
        for (kind, text) in rule.split(" ;; ").filter_map(|rule| rule.split_once(':')) {
            let kind = match kind {
                "allow" => RuleKind::Allow,
                "ask" => RuleKind::Ask,
                "deny" => RuleKind::Deny,
                other => panic!("{file}:{at}: unknown rule kind {other:?}"),
            };
            let rule = Rule::parse(text, kind, RuleSource::CommandLine, policy.context())
                .unwrap_or_else(|error| panic!("{file}:{at}: {text}: {error}"));
            policy.add(rule);
        }
        let shell = super::paths::normalize(std::path::Path::new("/ws/project"), directory);
        let decision =
            policy.evaluate_in(&bash(), &serde_json::json!({ "command": command }), &shell);
        let kind = serde_json::to_value(&decision.decided_by).expect("serializable")["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let got = serde_json::to_value(decision.verdict).expect("serializable");
        if got != verdict || kind != decided_by {
            failures.push(format!(
                "{file}:{at}: {mode} {rule} {command:?}: expected {verdict} by {decided_by}, got {got} by {kind}: {} ({source})",
                decision.reason
            ));
        }
    }
    assert!(rows >= at_least, "{file}: {rows} rows");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
