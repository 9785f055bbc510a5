//! Permission rules: `Tool`, `Tool(*)` (the same as bare) and `Tool(specifier)`.
//!
//! Interim specifier matching: `*` matches any run of characters, everything else is literal, and
//! the specifier is compared with the tool's rule field (for path tools also with the normalized
//! absolute path). The full grammar (Bash word boundaries, gitignore paths, domains) replaces
//! `Rule::matches_specifier` in the permission-engine issue.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// Where a rule came from, for `warden check` and decision records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "snake_case")]
pub enum RuleSource {
    /// `--allowedTools` / `--disallowedTools`.
    CommandLine,
    /// A settings file.
    Settings(PathBuf),
    /// Added during the session ("always allow").
    Session,
}

impl fmt::Display for RuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleSource::CommandLine => f.write_str("command line"),
            RuleSource::Settings(path) => write!(f, "settings {}", path.display()),
            RuleSource::Session => f.write_str("session"),
        }
    }
}

/// A rule that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule {rule:?} ({source_name}): {reason}")]
pub struct RuleError {
    /// The rule text.
    pub rule: String,
    /// Where it came from.
    pub source_name: String,
    /// What is wrong.
    pub reason: String,
}

/// One parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    text: String,
    tool: String,
    specifier: Option<String>,
    source: RuleSource,
}

impl Rule {
    /// Parses `text`. Tool names are letters, digits, `_`, `-` and (for globs) `*`.
    pub fn parse(text: &str, source: RuleSource) -> Result<Self, RuleError> {
        let error = |reason: &str| RuleError {
            rule: text.to_owned(),
            source_name: source.to_string(),
            reason: reason.to_owned(),
        };
        let trimmed = text.trim();
        let (tool, specifier) = match trimmed.split_once('(') {
            Some((tool, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| error("a specifier must end with ')'"))?;
                if inner.is_empty() {
                    return Err(error("empty specifier; use the bare tool name instead"));
                }
                let specifier = (inner != "*").then(|| inner.to_owned());
                (tool, specifier)
            }
            None => (trimmed, None),
        };
        let valid_name = !tool.is_empty()
            && tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*'));
        if !valid_name {
            return Err(error(
                "the tool name must be letters, digits, '_', '-' or '*'",
            ));
        }
        Ok(Self {
            text: trimmed.to_owned(),
            tool: tool.to_owned(),
            specifier,
            source,
        })
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where the rule came from.
    pub fn source(&self) -> &RuleSource {
        &self.source
    }

    /// True for `Tool` and `Tool(*)`.
    pub fn is_bare(&self) -> bool {
        self.specifier.is_none()
    }

    /// True when the tool-name part matches `tool`.
    pub(crate) fn matches_name(&self, tool: &str) -> bool {
        crate::wildcard::matches(&self.tool, tool)
    }

    /// True when the rule matches a call of `tool` whose rule-field values are `values`.
    pub(crate) fn matches(&self, tool: &str, values: &[String]) -> bool {
        if !self.matches_name(tool) {
            return false;
        }
        match &self.specifier {
            None => true,
            Some(specifier) => values
                .iter()
                .any(|value| crate::wildcard::matches(specifier, value)),
        }
    }

    /// True when the tool-name part has a glob outside a literal `mcp__<server>__` prefix, which
    /// allow rules may not use: a broad allow glob is how tools get approved by accident.
    pub(crate) fn has_broad_name_glob(&self) -> bool {
        let Some(star) = self.tool.find('*') else {
            return false;
        };
        let prefix = &self.tool[..star];
        let server_prefix = prefix
            .strip_prefix("mcp__")
            .and_then(|rest| rest.strip_suffix("__"))
            .is_some_and(|server| !server.is_empty() && !server.contains('*'));
        !server_prefix
    }
}

/// An ordered list of rules of one kind.
#[derive(Debug, Clone, Default)]
pub struct RuleList {
    rules: Vec<Rule>,
}

impl RuleList {
    /// Adds `rule`.
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// The rules in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The first rule matching the call, if any.
    pub(crate) fn first_match(&self, tool: &str, values: &[String]) -> Option<&Rule> {
        self.rules.iter().find(|rule| rule.matches(tool, values))
    }
}

/// Splits a `--allowedTools` value into rules: commas and whitespace separate rules, except inside
/// parentheses (`Bash(git diff *)` is one rule).
pub fn split_rule_list(value: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if depth == 0 && (c == ',' || c.is_whitespace()) => {
                if !current.is_empty() {
                    rules.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        rules.push(current);
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Rule {
        Rule::parse(text, RuleSource::CommandLine).unwrap()
    }

    #[test]
    fn matching_table() {
        let cases: &[(&str, &str, &[&str], bool)] = &[
            ("Read", "Read", &[], true),
            ("Read", "Write", &[], false),
            ("Read(*)", "Read", &["/x"], true),
            ("Read(/ws/*.env)", "Read", &["/ws/a.env"], true),
            ("Read(/ws/*.env)", "Read", &["/ws/a.txt"], false),
            ("Read(*.secret)", "Read", &["notes.secret"], true),
            (
                "Read(*.secret)",
                "Read",
                &["notes.txt", "/ws/notes.txt"],
                false,
            ),
            ("mcp__*", "mcp__github__issues", &[], true),
            ("mcp__*", "Read", &[], false),
            ("*", "Anything", &[], true),
            ("Echo(a*b*c)", "Echo", &["axxbyyc"], true),
            ("Echo(a*b*c)", "Echo", &["axxbyy"], false),
        ];
        for (text, tool, values, expected) in cases {
            let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            assert_eq!(
                rule(text).matches(tool, &values),
                *expected,
                "{text} vs {tool} {values:?}"
            );
        }
    }

    #[test]
    fn bare_and_star_specifier_are_the_same() {
        assert!(rule("Read").is_bare());
        assert!(rule("Read(*)").is_bare());
        assert!(!rule("Read(/x)").is_bare());
    }

    #[test]
    fn rejects_malformed_rules() {
        for bad in ["", "Read(", "Read()", "Re ad", "Read(x", "Rea$d"] {
            assert!(
                Rule::parse(bad, RuleSource::CommandLine).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn broad_name_globs_are_detected() {
        let cases = [
            ("Read", false),
            ("mcp__github__*", false),
            ("mcp__*", true),
            ("*", true),
            ("Re*", true),
            ("mcp__*__x", true),
        ];
        for (text, expected) in cases {
            assert_eq!(rule(text).has_broad_name_glob(), expected, "{text}");
        }
    }

    #[test]
    fn splits_rule_lists_outside_parentheses() {
        let cases: &[(&str, &[&str])] = &[
            ("Read,Edit", &["Read", "Edit"]),
            ("Read Edit", &["Read", "Edit"]),
            ("Bash(git diff *), Read", &["Bash(git diff *)", "Read"]),
            ("  ", &[]),
        ];
        for (input, expected) in cases {
            assert_eq!(split_rule_list(input), *expected, "{input}");
        }
    }
}
