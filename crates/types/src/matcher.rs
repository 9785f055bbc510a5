//! Hook matchers, read exactly as Claude Code reads them, so a matcher copied from its settings
//! selects the same tools here:
//!
//! - `*`, empty or absent: every tool;
//! - only letters, digits, `_`, `-`, spaces, `|` and `,`: one exact name or a list of exact names;
//! - anything else: an unanchored, case-sensitive regular expression (`Edit.*` also selects
//!   `NotebookEdit`; write `^Edit$` for one tool).
//!
//! `janua hooks` prints which registered tools each matcher selects, so the regex reading never
//! surprises anyone silently.

use std::fmt;

/// Which tools (or, for session events, which sources) a hook applies to.
#[derive(Debug, Clone)]
pub struct Matcher {
    text: String,
    form: Form,
}

#[derive(Debug, Clone)]
enum Form {
    All,
    Names(Vec<String>),
    Regex(regex::Regex),
}

/// A matcher that is neither a name list nor a valid regular expression.
#[derive(Debug, Clone, thiserror::Error)]
#[error("hook matcher {matcher:?} is not a valid regular expression: {reason}")]
pub struct MatcherError {
    /// The matcher text.
    pub matcher: String,
    /// Why the regular expression was rejected.
    pub reason: String,
}

impl Matcher {
    /// Parses `text` with Claude Code's rules (see the module docs).
    pub fn parse(text: &str) -> Result<Self, MatcherError> {
        let trimmed = text.trim();
        let form = if trimmed.is_empty() || trimmed == "*" {
            Form::All
        } else if trimmed
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | '|' | ','))
        {
            Form::Names(
                trimmed
                    .split(['|', ','])
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect(),
            )
        } else {
            // Bounded compile size: a matcher comes from a settings file or a manifest, and a
            // pathological pattern must fail at load, not eat memory.
            let regex = regex::RegexBuilder::new(trimmed)
                .size_limit(1 << 20)
                .build()
                .map_err(|error| MatcherError {
                    matcher: text.to_owned(),
                    reason: error.to_string(),
                })?;
            Form::Regex(regex)
        };
        Ok(Self {
            text: text.to_owned(),
            form,
        })
    }

    /// The matcher that selects everything.
    pub fn all() -> Self {
        Self {
            text: String::new(),
            form: Form::All,
        }
    }

    /// True when the matcher selects `name`.
    pub fn matches(&self, name: &str) -> bool {
        match &self.form {
            Form::All => true,
            Form::Names(names) => names.iter().any(|candidate| candidate == name),
            Form::Regex(regex) => regex.is_match(name),
        }
    }

    /// True for `*`, empty or absent.
    pub fn is_all(&self) -> bool {
        matches!(self.form, Form::All)
    }

    /// How the text was read: `all`, `names` or `regex`.
    pub fn kind(&self) -> &'static str {
        match self.form {
            Form::All => "all",
            Form::Names(_) => "names",
            Form::Regex(_) => "regex",
        }
    }
}

impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.text.trim().is_empty() {
            f.write_str("*")
        } else {
            f.write_str(&self.text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matcher_table() {
        let cases = [
            ("", "Read", true),
            ("*", "Read", true),
            ("  ", "Anything", true),
            ("Read", "Read", true),
            ("Read", "ReadX", false),
            ("Read", "read", false),
            ("Read|Write", "Write", true),
            ("Read | Write", "Write", true),
            ("Read,Write", "Write", true),
            ("Read|Write", "Echo", false),
            ("code-reviewer", "code-reviewer", true),
            ("code-reviewer", "code", false),
            // Anything else is an unanchored regex.
            ("Edit.*", "Edit", true),
            ("Edit.*", "NotebookEdit", true),
            ("^Edit$", "NotebookEdit", false),
            ("^Edit$", "Edit", true),
            ("mcp__memory__.*", "mcp__memory__create", true),
            ("mcp__memory", "mcp__memory__create", false),
            ("Notebook.*", "NotebookEdit", true),
            ("Bash|Web.*", "WebFetch", true),
            ("Bash|Web.*", "Bash", true),
            ("Bash|Web.*", "Read", false),
        ];
        for (pattern, tool, expected) in cases {
            assert_eq!(
                Matcher::parse(pattern).unwrap().matches(tool),
                expected,
                "{pattern:?} vs {tool}"
            );
        }
    }

    #[test]
    fn kinds_and_errors() {
        assert_eq!(Matcher::parse("*").unwrap().kind(), "all");
        assert_eq!(Matcher::parse("Read|Write").unwrap().kind(), "names");
        assert_eq!(Matcher::parse("Edit.*").unwrap().kind(), "regex");
        let error = Matcher::parse("Edit(").unwrap_err();
        assert!(error.to_string().contains("not a valid regular expression"));
        assert_eq!(Matcher::parse("").unwrap().to_string(), "*");
    }
}
