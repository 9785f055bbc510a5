//! The matcher's table: every example on Claude Code's permissions page, the bypasses reported on
//! its issue tracker, and janua's own stricter cases. Sources:
//! [PERM] https://code.claude.com/docs/en/permissions (section named per row);
//! [IAM-2025] https://docs.anthropic.com/en/docs/claude-code/iam (2025 edition);
//! [MODES] https://code.claude.com/docs/en/permission-modes;
//! [SANDBOX] https://code.claude.com/docs/en/sandboxing;
//! [CHANGELOG x] https://github.com/anthropics/claude-code/blob/main/CHANGELOG.md (version x);
//! GH#n: https://github.com/anthropics/claude-code/issues/n.
//! Working directory `/ws`, home `/home/u`; a string input is the tool's rule field, an object
//! input is the whole input. The rows live in `vectors.tsv`, one per line, so a failure names its line.

use serde_json::Value;

use super::matching::call_matches;
use super::rules::{Rule, RuleContext, RuleKind, RuleSource};

/// One row of `vectors.tsv`.
pub(crate) struct Row {
    line: usize,
    pub(crate) kind: RuleKind,
    pub(crate) rule: String,
    pub(crate) tool: String,
    pub(crate) input: String,
    pub(crate) expected: bool,
    source: String,
}

/// The table's escapes: `\n` a newline, `\t` a tab, `\\` one backslash; any other backslash is
/// itself (so shell inputs such as `\;` read as written).
fn unescape(field: &str) -> String {
    let mut text = String::with_capacity(field.len());
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('n')) => {
                text.push('\n');
                chars.next();
            }
            ('\\', Some('t')) => {
                text.push('\t');
                chars.next();
            }
            ('\\', Some('\\')) => {
                text.push('\\');
                chars.next();
            }
            _ => text.push(c),
        }
    }
    text
}

/// Every row of `vectors.tsv`; a malformed line fails the test naming it.
pub(crate) fn rows() -> Vec<Row> {
    include_str!("vectors.tsv")
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|(index, line)| {
            let line_number = index + 1;
            let fields: Vec<&str> = line.split('\t').collect();
            let [kind, rule, tool, input, expected, source] = fields[..] else {
                panic!("vectors.tsv:{line_number}: six tab-separated fields expected: {line:?}");
            };
            let kind = match kind {
                "allow" => RuleKind::Allow,
                "deny" => RuleKind::Deny,
                "ask" => RuleKind::Ask,
                other => panic!("vectors.tsv:{line_number}: unknown kind {other:?}"),
            };
            let expected = match expected {
                "yes" => true,
                "no" => false,
                other => {
                    panic!("vectors.tsv:{line_number}: matches must be yes or no, not {other:?}")
                }
            };
            Row {
                line: line_number,
                kind,
                rule: unescape(rule),
                tool: tool.to_owned(),
                input: unescape(input),
                expected,
                source: unescape(source),
            }
        })
        .collect()
}

fn context() -> RuleContext {
    RuleContext {
        cwd: "/ws".into(),
        home: Some("/home/u".into()),
    }
}

#[test]
fn at_least_250_vectors() {
    let rows = rows();
    assert!(rows.len() >= 250, "{}", rows.len());
}

#[test]
fn vectors() {
    let context = context();
    let mut failures = Vec::new();
    for row in rows() {
        let rule = Rule::parse(&row.rule, row.kind, RuleSource::CommandLine, &context)
            .unwrap_or_else(|error| panic!("vectors.tsv:{}: {}: {error}", row.line, row.rule));
        let example = if row.input.starts_with("{\"") || row.input == "{}" {
            serde_json::from_str(&row.input)
                .unwrap_or_else(|error| panic!("vectors.tsv:{}: input JSON: {error}", row.line))
        } else {
            Value::String(row.input.clone())
        };
        if call_matches(&rule, &row.tool, &example, &context) != row.expected {
            failures.push(format!(
                "vectors.tsv:{}: {:?} {} on {} {:?}: expected {} ({})",
                row.line, row.kind, row.rule, row.tool, row.input, row.expected, row.source
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
