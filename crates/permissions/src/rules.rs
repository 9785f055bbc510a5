//! Permission rules in Claude Code's grammar: `Tool`, `Tool(*)` (the same as bare) and
//! `Tool(specifier)`, with tool-name globs (`*`, `mcp__*`), `Tool(param:value)`, `domain:` and
//! janua's `argv:` form. Parsing is purely syntactic plus the compilation of path patterns against
//! the rule's anchors; what a specifier means for a call is decided in `matching`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::bash::CommandPattern;
use super::domain::DomainPattern;
use super::path_pattern::{Anchors, PathPattern};

/// Allow, ask or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// Matching calls run without asking.
    Allow,
    /// Matching calls ask, whatever else allows them.
    Ask,
    /// Matching calls are refused.
    Deny,
}

impl RuleKind {
    /// The settings key: `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

/// Where a rule came from; relative `/path` specifiers are anchored at its scope root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "snake_case")]
pub enum RuleSource {
    /// `--allowedTools` / `--disallowedTools`.
    CommandLine,
    /// The user's settings file.
    User(PathBuf),
    /// The project's `.janua/settings.json`.
    Project(PathBuf),
    /// The project's `.janua/settings.local.json`.
    Local(PathBuf),
    /// `--settings FILE` (a path) or `--settings JSON` (none).
    Settings(Option<PathBuf>),
    /// Added during the session ("allow always").
    Session,
}

impl RuleSource {
    /// The label `janua check` prints: `cli`, `user`, `project`, `local`, `settings`, `session`.
    pub fn label(&self) -> &'static str {
        match self {
            RuleSource::CommandLine => "cli",
            RuleSource::User(_) => "user",
            RuleSource::Project(_) => "project",
            RuleSource::Local(_) => "local",
            RuleSource::Settings(_) => "settings",
            RuleSource::Session => "session",
        }
    }

    /// Where `/path` specifiers are anchored: the project root for project settings, the settings
    /// file's directory for user and `--settings` files, the working directory otherwise.
    pub fn scope_root(&self, cwd: &Path) -> PathBuf {
        let parent = |file: &Path| {
            file.parent()
                .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf)
        };
        match self {
            RuleSource::User(file) | RuleSource::Settings(Some(file)) => parent(file),
            RuleSource::Project(_)
            | RuleSource::Local(_)
            | RuleSource::CommandLine
            | RuleSource::Settings(None)
            | RuleSource::Session => cwd.to_path_buf(),
        }
    }
}

impl fmt::Display for RuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleSource::CommandLine => f.write_str("command line"),
            RuleSource::User(path) => write!(f, "user settings {}", path.display()),
            RuleSource::Project(path) => write!(f, "project settings {}", path.display()),
            RuleSource::Local(path) => write!(f, "local settings {}", path.display()),
            RuleSource::Settings(Some(path)) => write!(f, "settings {}", path.display()),
            RuleSource::Settings(None) => f.write_str("--settings JSON"),
            RuleSource::Session => f.write_str("session"),
        }
    }
}

/// What relative rule paths are resolved against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleContext {
    /// The working directory (the workspace).
    pub cwd: PathBuf,
    /// `$HOME`, for `~/` rules.
    pub home: Option<PathBuf>,
}

/// What is wrong with a rule's specifier (the part in parentheses); `RuleError` carries it as
/// its reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SpecifierError {
    /// `domain:` with nothing after it.
    #[error("a domain pattern may not be empty")]
    EmptyDomain,
    /// `domain:` followed by something that is not a host name (a URL, a port, a path).
    #[error("{0:?} is not a host name; write domain:example.com")]
    NotAHost(String),
    /// `argv:` with no program.
    #[error("an argv pattern needs a program, e.g. argv:rm -r -f")]
    ArgvWithoutProgram,
    /// `!` in an argv pattern not followed by a flag.
    #[error("{0:?}: '!' must be followed by a flag")]
    ArgvNegation(String),
    /// A `~/` path pattern while `$HOME` is not set.
    #[error("a ~/ path needs $HOME, which is not set")]
    NoHome,
    /// A path pattern the glob compiler refuses.
    #[error("invalid path pattern: {0}")]
    Glob(#[from] globset::Error),
    /// `..` after a wildcard segment, which no lexical normalization can resolve.
    #[error("'..' may not follow a wildcard segment")]
    DotDotAfterWildcard,
}

/// A rule that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule {rule:?} ({source_name}{}): {reason}", position.as_ref().map(|p| format!(", {p}")).unwrap_or_default())]
pub struct RuleError {
    /// The rule text.
    pub rule: String,
    /// Where it came from.
    pub source_name: String,
    /// Its position in the source, such as `permissions.deny[2]`.
    pub position: Option<String>,
    /// What is wrong.
    pub reason: String,
}

/// The tool families Claude Code's path rules cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Read, Grep, Glob, LS: `Read(...)` rules.
    Read,
    /// Edit, Write, NotebookEdit, MultiEdit: `Edit(...)` rules.
    Edit,
}

impl Family {
    /// The family a tool name belongs to, if any.
    pub fn of(tool: &str) -> Option<Self> {
        match tool {
            "Read" | "Grep" | "Glob" | "LS" | "LSP" => Some(Family::Read),
            "Edit" | "Write" | "NotebookEdit" | "MultiEdit" => Some(Family::Edit),
            _ => None,
        }
    }
}

/// True for tools whose specifier is a shell command line.
pub fn is_shell_tool(tool: &str) -> bool {
    matches!(tool, "Bash" | "Monitor")
}

/// True for tools whose specifier is a URL (`domain:` rules).
pub fn is_url_tool(tool: &str) -> bool {
    matches!(tool, "WebFetch" | "Browser")
}

/// A rule's specifier.
#[derive(Debug, Clone)]
pub enum Specifier {
    /// Bare, or `(*)`.
    Any,
    /// `domain:host-pattern`.
    Domain(DomainPattern),
    /// Anything else, read per tool: a command, a path, or a glob over the rule field.
    Value(ValueSpecifier),
}

/// A specifier's text with every reading prepared.
#[derive(Debug, Clone)]
pub struct ValueSpecifier {
    /// The text as written.
    pub raw: String,
    /// Its reading as a Bash pattern.
    pub command: Option<CommandPattern>,
    /// Its reading as a path pattern.
    pub path: Option<PathPattern>,
    /// `name:value`, read as a parameter rule when the tool has an input property `name`.
    pub param: Option<(String, String)>,
}

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    kind: RuleKind,
    source: RuleSource,
    tool: String,
    /// `Family::of(tool)`, asked once per rule per decision, so computed once.
    family: Option<Family>,
    pub(crate) specifier: Specifier,
}

impl Rule {
    /// Parses `text` as a rule of `kind` from `source`; path specifiers are anchored with
    /// `context`. Tool names are letters, digits, `_`, `-` and (for globs) `*`.
    pub fn parse(
        text: &str,
        kind: RuleKind,
        source: RuleSource,
        context: &RuleContext,
    ) -> Result<Self, RuleError> {
        let error = |reason: String| RuleError {
            rule: text.to_owned(),
            source_name: source.to_string(),
            position: None,
            reason,
        };
        let trimmed = text.trim();
        let (tool, inner) = match trimmed.split_once('(') {
            Some((tool, rest)) => {
                let inner = rest.strip_suffix(')').ok_or_else(|| {
                    error(format!(
                        "a specifier must end with ')' (at character {})",
                        trimmed.len() + 1
                    ))
                })?;
                if inner.trim().is_empty() {
                    return Err(error(
                        "empty specifier; use the bare tool name instead".to_owned(),
                    ));
                }
                (tool.trim_end(), Some(inner))
            }
            None => (trimmed, None),
        };
        if let Some(at) = tool
            .char_indices()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*')))
            .map(|(at, _)| at)
        {
            return Err(error(format!(
                "the tool name may hold only letters, digits, '_', '-' or '*' (found {:?} at character {})",
                &tool[at..].chars().next().unwrap_or(' '),
                at + 1
            )));
        }
        if tool.is_empty() {
            return Err(error("the rule has no tool name".to_owned()));
        }
        // Claude Code's older name for its sub-agent tool; both spell rules for the Agent tool.
        let tool = if tool == "Task" { "Agent" } else { tool };
        let specifier = match inner {
            None | Some("*") => Specifier::Any,
            Some(inner) => Self::specifier(tool, inner, kind, &source, context)
                .map_err(|problem| error(problem.to_string()))?,
        };
        Ok(Self {
            text: trimmed.to_owned(),
            kind,
            source,
            tool: tool.to_owned(),
            family: Family::of(tool),
            specifier,
        })
    }

    fn specifier(
        tool: &str,
        inner: &str,
        kind: RuleKind,
        source: &RuleSource,
        context: &RuleContext,
    ) -> Result<Specifier, SpecifierError> {
        // `Bash(command:rm *)` names the primary field: it means `Bash(rm *)` (Claude Code ignores
        // such a rule with a warning; a deny rule that silently does nothing is worse).
        let primary = match Family::of(tool) {
            _ if is_shell_tool(tool) => &["command"][..],
            Some(_) => &["file_path", "path", "notebook_path"][..],
            None if is_url_tool(tool) => &["url"][..],
            None => &[][..],
        };
        let inner = primary
            .iter()
            .find_map(|field| {
                inner
                    .strip_prefix(field)
                    .and_then(|rest| rest.trim_start().strip_prefix(':'))
                    .map(str::trim_start)
            })
            .filter(|rest| !rest.is_empty())
            .unwrap_or(inner);
        if let Some(domain) = inner.strip_prefix("domain:") {
            let pattern = DomainPattern::parse(domain)?;
            return Ok(if domain.trim() == "*" {
                Specifier::Any
            } else {
                Specifier::Domain(pattern)
            });
        }
        let command = match CommandPattern::parse(inner) {
            Ok(pattern) => Some(pattern),
            Err(reason) if is_shell_tool(tool) => return Err(reason),
            Err(_) => None,
        };
        let scope_root = source.scope_root(&context.cwd);
        let anchors = Anchors {
            cwd: &context.cwd,
            home: context.home.as_deref(),
            scope_root: &scope_root,
        };
        let path = match PathPattern::compile(inner, kind != RuleKind::Allow, &anchors) {
            Ok(pattern) => Some(pattern),
            Err(reason) if Family::of(tool).is_some() => return Err(reason),
            Err(_) => None,
        };
        let param = inner.split_once(':').and_then(|(name, value)| {
            let name = name.trim();
            let identifier = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            identifier.then(|| (name.to_owned(), value.trim().to_owned()))
        });
        Ok(Specifier::Value(ValueSpecifier {
            raw: inner.to_owned(),
            command,
            path,
            param,
        }))
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Allow, ask or deny.
    pub fn kind(&self) -> RuleKind {
        self.kind
    }

    /// Where the rule came from.
    pub fn source(&self) -> &RuleSource {
        &self.source
    }

    /// The tool-name part (possibly a glob).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The parameter name of a `Tool(param:value)` specifier, if it has that shape.
    pub fn param_name(&self) -> Option<&str> {
        match &self.specifier {
            Specifier::Value(value) => value.param.as_ref().map(|(name, _)| name.as_str()),
            _ => None,
        }
    }

    /// The path family of the rule's tool (Read or Edit), if any.
    pub fn family(&self) -> Option<Family> {
        self.family
    }

    /// The rule's path pattern, when its specifier reads as one.
    pub fn path_pattern(&self) -> Option<&super::path_pattern::PathPattern> {
        match &self.specifier {
            Specifier::Value(value) => value.path.as_ref(),
            Specifier::Any | Specifier::Domain(_) => None,
        }
    }

    /// True for `Tool` and `Tool(*)`.
    pub fn is_bare(&self) -> bool {
        matches!(self.specifier, Specifier::Any)
    }

    /// True when the tool-name part names `tool`: exactly, as a glob, or as an MCP server
    /// (`mcp__github` covers `mcp__github__issues`).
    pub fn matches_name(&self, tool: &str) -> bool {
        if self.tool == tool {
            return true;
        }
        if self.tool.contains('*') {
            return janua_types::wildcard::matches(&self.tool, tool);
        }
        self.tool
            .strip_prefix("mcp__")
            .is_some_and(|server| !server.contains("__"))
            && tool.strip_prefix(self.tool.as_str()).is_some_and(|rest| {
                // `mcp__github` must not cover the server `github_` (`mcp__github___x`).
                rest.strip_prefix("__")
                    .is_some_and(|name| !name.is_empty() && !name.starts_with('_'))
            })
    }

    /// True when the tool-name part has a glob outside a literal `mcp__<server>__` prefix, which
    /// allow rules may not use: a broad allow glob is how tools get approved by accident.
    pub fn has_broad_name_glob(&self) -> bool {
        let Some(star) = self.tool.find('*') else {
            return false;
        };
        let prefix = &self.tool[..star];
        let server_prefix = prefix
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split_once("__"))
            .is_some_and(|(server, _)| !server.is_empty());
        !server_prefix
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
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

    pub fn context() -> RuleContext {
        RuleContext {
            cwd: PathBuf::from("/ws"),
            home: Some(PathBuf::from("/home/u")),
        }
    }

    fn rule(text: &str) -> Rule {
        Rule::parse(text, RuleKind::Deny, RuleSource::CommandLine, &context()).unwrap()
    }

    #[test]
    fn task_rules_are_agent_rules() {
        for (text, tool, bare) in [
            ("Task", "Agent", true),
            ("Task(explore)", "Agent", false),
            ("Agent(explore)", "Agent", false),
            ("Tasks", "Tasks", true),
        ] {
            let parsed = rule(text);
            assert_eq!(parsed.tool(), tool, "{text}");
            assert_eq!(parsed.is_bare(), bare, "{text}");
            assert_eq!(parsed.text(), text, "the rule keeps its own spelling");
        }
    }

    #[test]
    fn bare_and_star_specifier_are_the_same() {
        assert!(rule("Read").is_bare());
        assert!(rule("Read(*)").is_bare());
        assert!(rule("WebFetch(domain:*)").is_bare());
        assert!(!rule("Read(/x)").is_bare());
    }

    #[test]
    fn rejects_malformed_rules_with_a_position() {
        for (bad, expected) in [
            ("", "no tool name"),
            ("Read(", "must end with ')'"),
            ("Read()", "empty specifier"),
            ("Re ad", "character 3"),
            ("Read(x", "must end with ')'"),
            ("Rea$d", "character 4"),
            ("Bash(argv:)", "needs a program"),
            ("WebFetch(domain:)", "may not be empty"),
            ("WebFetch(domain:http://x)", "not a host name"),
            ("Read(~/x/../*/..)", "wildcard"),
        ] {
            let error = Rule::parse(bad, RuleKind::Deny, RuleSource::CommandLine, &context())
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{bad:?}: {error}");
        }
    }

    #[test]
    fn names_match_exactly_by_glob_or_by_mcp_server() {
        let cases = [
            ("Read", "Read", true),
            ("Read", "ReadX", false),
            ("*", "Anything", true),
            ("mcp__*", "mcp__github__issues", true),
            ("mcp__*", "Read", false),
            ("mcp__github", "mcp__github__issues", true),
            ("mcp__github", "mcp__githubx__issues", false),
            ("mcp__github", "mcp__github", true),
            ("mcp__github", "mcp__github___x", false),
            ("mcp__github__*", "mcp__github__issues", true),
            ("mcp__github__*", "mcp__gitlab__issues", false),
            ("mcp__github__get_*", "mcp__github__get_issue", true),
            ("mcp__github__get_*", "mcp__github__create_issue", false),
            ("mcp__github__issues", "mcp__github__issues", true),
        ];
        for (text, tool, expected) in cases {
            assert_eq!(rule(text).matches_name(tool), expected, "{text} vs {tool}");
        }
    }

    #[test]
    fn broad_name_globs_are_detected() {
        let cases = [
            ("Read", false),
            ("mcp__github__*", false),
            ("mcp__github__get_*", false),
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
