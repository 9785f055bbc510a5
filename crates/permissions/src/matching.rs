//! Which rules match a call. Deny and ask rules block when ANY part of the call matches (any
//! subcommand in any spelling, any path spelling, any redirect target); allow rules allow only when
//! EVERY part is covered (each subcommand by some allow rule, every spelling of the path, every
//! file the command writes).
//!
//! Path rules reach across tools: a `Read(...)` deny blocks every tool that touches a matching
//! path (Edit, Write, plugin tools, files a Bash command reads or writes); an `Edit(...)` deny
//! blocks every write. An `Edit(...)` allow also allows reading; a `Read(...)` allow covers the
//! read family (Read, Grep, Glob).

use std::path::Path;

use serde_json::Value;

use super::bash::{CommandPattern, text_matches};
use super::path_index::PathHits;
use super::rules::{
    Family, Rule, RuleContext, RuleKind, Specifier, ValueSpecifier, is_shell_tool, is_url_tool,
};
use super::target::{PathCandidates, Target};
use janua_types::wildcard;

/// A call as rules see it.
pub struct CallView<'a> {
    /// The canonical tool name.
    pub tool: &'a str,
    /// True for write-class tools.
    pub writes: bool,
    /// What the call presents.
    pub target: &'a Target,
    /// The input, for parameter rules.
    pub input: &'a Value,
    /// The tool's input schema, for parameter rules.
    pub schema: &'a Value,
    /// The policy's path index with this call's memo; `None` matches each pattern directly.
    pub hits: Option<&'a PathHits<'a>>,
}

/// The first deny or ask rule that blocks the call.
pub fn blocking<'r>(
    rules: impl IntoIterator<Item = &'r Rule>,
    call: &CallView<'_>,
) -> Option<&'r Rule> {
    rules.into_iter().find(|rule| blocks(rule, call))
}

/// The allow rules that together cover every part of the call, or `None`. `write_ok` says whether
/// a file a command writes is allowed without a rule (acceptEdits inside the workspace).
pub fn allowing<'r>(
    rules: &[&'r Rule],
    call: &CallView<'_>,
    write_ok: &dyn Fn(&PathCandidates) -> bool,
) -> Option<Vec<&'r Rule>> {
    match call.target {
        Target::Command(command) => {
            let mut used = Vec::new();
            if let Some(bare) = rules
                .iter()
                .find(|rule| rule.is_bare() && rule.matches_name(call.tool))
            {
                used.push(*bare);
            } else {
                if command.parsed.opaque.is_some() || command.parsed.subcommands.is_empty() {
                    return None;
                }
                for forms in &command.forms {
                    if forms.redirect_only {
                        // Only redirections: the files are checked below.
                        continue;
                    }
                    let form = forms.allow.as_ref()?;
                    let rule = rules.iter().find(|rule| {
                        rule.matches_name(call.tool)
                            && value(rule).is_some_and(|value| {
                                param_reading(value, call).is_none()
                                    && value.command.as_ref().is_some_and(|p| {
                                        p.allows_form(form, forms.exact_only.is_some())
                                    })
                            })
                    })?;
                    used.push(*rule);
                }
            }
            if command.unresolved_write.is_some() {
                // A file only known when it runs: only a bare Edit allow covers every file.
                used.push(*rules.iter().find(|rule| bare_edit(rule))?);
            }
            for write in &command.writes {
                if write_ok(write) {
                    continue;
                }
                used.push(allowing_write_in(rules, write, call.hits)?);
            }
            Some(used)
        }
        Target::Path(path) => rules
            .iter()
            .find(|rule| allows_path_call(rule, call, path))
            .map(|rule| vec![*rule]),
        _ => rules
            .iter()
            .find(|rule| allows_other(rule, call))
            .map(|rule| vec![*rule]),
    }
}

/// True for a bare `Edit` allow: it allows every edit, so every file a command redirects into.
fn bare_edit(rule: &Rule) -> bool {
    rule.is_bare() && rule.family() == Some(Family::Edit)
}

/// The allow rule that covers a command's redirect into `write`: a bare Edit allow, or an Edit
/// rule whose path matches every spelling.
pub fn allowing_write<'r>(rules: &[&'r Rule], write: &PathCandidates) -> Option<&'r Rule> {
    allowing_write_in(rules, write, None)
}

fn allowing_write_in<'r>(
    rules: &[&'r Rule],
    write: &PathCandidates,
    hits: Option<&PathHits<'_>>,
) -> Option<&'r Rule> {
    rules.iter().copied().find(|rule| {
        bare_edit(rule)
            || (rule.family() == Some(Family::Edit)
                && value(rule).is_some_and(|value| allows_path(value, write, hits)))
    })
}

fn value(rule: &Rule) -> Option<&ValueSpecifier> {
    match &rule.specifier {
        Specifier::Value(value) => Some(value),
        _ => None,
    }
}

/// `Some(matched)` when the specifier is a parameter rule for this tool (`name:value` where the
/// tool's schema has a top-level property `name`); the literal input value is compared.
fn param_reading(value: &ValueSpecifier, call: &CallView<'_>) -> Option<bool> {
    let (name, pattern) = value.param.as_ref()?;
    let known = call
        .schema
        .get("properties")
        .and_then(|properties| properties.get(name))
        .is_some();
    if !known {
        // `Agent(colour:red)` names a parameter the Agent tool does not have: it matches nothing
        // rather than being read as a sub-agent name (loading it warns).
        return (call.tool == janua_types::AGENT_TOOL).then_some(false);
    }
    let matched = match call.input.get(name) {
        Some(Value::String(text)) => wildcard::matches(pattern, text),
        Some(Value::Bool(flag)) => wildcard::matches(pattern, &flag.to_string()),
        Some(Value::Number(number)) => wildcard::matches(pattern, &number.to_string()),
        _ => false,
    };
    Some(matched)
}

fn blocks(rule: &Rule, call: &CallView<'_>) -> bool {
    let value = match &rule.specifier {
        Specifier::Any => return rule.matches_name(call.tool),
        Specifier::Domain(domain) => {
            // A URL whose host cannot be read might name any host: it is blocked.
            return rule.matches_name(call.tool)
                && match call.target {
                    Target::Url {
                        host: Some(host), ..
                    } => domain.matches(host),
                    Target::Url { host: None, .. } => true,
                    _ => false,
                };
        }
        Specifier::Value(value) => value,
    };
    if let Some(matched) = param_reading(value, call) {
        return matched && rule.matches_name(call.tool);
    }
    if let Some(family) = rule.family()
        && any_blocked_path(family, call, |path| {
            path.all()
                .any(|spelling| path_matches(value, spelling, call.hits))
        })
    {
        return true;
    }
    if !rule.matches_name(call.tool) {
        return false;
    }
    match call.target {
        Target::Command(command) => {
            let Some(pattern) = &value.command else {
                return false;
            };
            let raw_match = matches!(pattern, CommandPattern::Text { pattern } if text_matches(pattern, &command.raw));
            raw_match || command.deny_forms().any(|form| pattern.matches_form(form))
        }
        Target::Path(path) => {
            rule.family().is_none()
                && path
                    .all()
                    .any(|spelling| path_matches(value, spelling, call.hits))
        }
        Target::Url { url, .. } => wildcard::matches(&value.raw, url),
        Target::Field(text) => wildcard::matches(&value.raw, text),
        Target::None => false,
    }
}

/// True when `matches` holds for one of the paths a family's deny or ask rules look at in this
/// call. (A callback, not a list: this runs once per path rule per decision.)
fn any_blocked_path(
    family: Family,
    call: &CallView<'_>,
    mut matches: impl FnMut(&PathCandidates) -> bool,
) -> bool {
    match (call.target, family) {
        (Target::Path(path), Family::Read) => matches(path),
        (Target::Path(path), Family::Edit) => {
            (call.writes || Family::of(call.tool) == Some(Family::Edit)) && matches(path)
        }
        (Target::Command(command), Family::Read) => command
            .reads
            .iter()
            .chain(&command.writes)
            .chain(&command.program_writes)
            .any(matches),
        (Target::Command(command), Family::Edit) => command
            .writes
            .iter()
            .chain(&command.program_writes)
            .any(matches),
        _ => false,
    }
}

/// True when `rule` is a Read-family rule with a path specifier matching `path` (absolute): such
/// a deny rule hides the path from every guest's filesystem view.
pub fn hides_path(rule: &Rule, path: &Path) -> bool {
    rule.family() == Some(Family::Read)
        && match &rule.specifier {
            Specifier::Value(value) => value.param.is_none() && path_matches(value, path, None),
            Specifier::Any | Specifier::Domain(_) => false,
        }
}

fn path_matches(value: &ValueSpecifier, path: &Path, hits: Option<&PathHits<'_>>) -> bool {
    match (&value.path, hits) {
        (Some(pattern), Some(hits)) => hits.matches(pattern, path),
        (Some(pattern), None) => pattern.matches(path),
        (None, _) => wildcard::matches(&value.raw, &path.to_string_lossy()),
    }
}

/// Allow rules need every spelling to match, and never match a path that climbs with `..`.
fn allows_path(value: &ValueSpecifier, path: &PathCandidates, hits: Option<&PathHits<'_>>) -> bool {
    !path.climbs
        && path
            .all()
            .all(|spelling| path_matches(value, spelling, hits))
}

fn allows_path_call(rule: &Rule, call: &CallView<'_>, path: &PathCandidates) -> bool {
    let value = match &rule.specifier {
        Specifier::Any => return rule.matches_name(call.tool),
        Specifier::Domain(_) => return false,
        Specifier::Value(value) => value,
    };
    if param_reading(value, call).is_some() {
        return false;
    }
    let covers_tool = rule.matches_name(call.tool)
        || match (rule.family(), Family::of(call.tool)) {
            (Some(Family::Read), Some(Family::Read)) => true,
            // An Edit allow also allows reading the same paths.
            (Some(Family::Edit), Some(_)) => true,
            _ => false,
        };
    covers_tool && allows_path(value, path, call.hits)
}

fn allows_other(rule: &Rule, call: &CallView<'_>) -> bool {
    if !rule.matches_name(call.tool) {
        return false;
    }
    match &rule.specifier {
        Specifier::Any => true,
        Specifier::Domain(domain) => {
            matches!(call.target, Target::Url { host: Some(host), .. } if domain.matches(host))
        }
        Specifier::Value(value) => {
            param_reading(value, call).is_none()
                && match call.target {
                    Target::Url { url, .. } => wildcard::matches(&value.raw, url),
                    Target::Field(text) => wildcard::matches(&value.raw, text),
                    _ => false,
                }
        }
    }
}

/// True when `rule` touches a call of `spec` with `input`: when ANY part of the call matches, the
/// way deny and ask rules match (a hook's `if` condition). A command that cannot be parsed
/// touches every command rule, so the hook runs (fails open towards more checking).
pub fn touches(
    rule: &Rule,
    spec: &janua_types::ToolSpec,
    input: &Value,
    context: &RuleContext,
) -> bool {
    let target = Target::new(
        &spec.name,
        spec.rule_field.as_deref(),
        spec.path_field().is_some(),
        input,
        &context.cwd,
        context.home.as_deref(),
    );
    if let Target::Command(command) = &target
        && command.parsed.opaque.is_some()
        && rule.matches_name(&spec.name)
    {
        return true;
    }
    let call = CallView {
        tool: &spec.name,
        writes: spec.class == janua_types::CapabilityClass::Write,
        target: &target,
        input,
        schema: &spec.input_schema,
        hits: None,
    };
    blocks(rule, &call)
}

/// True when `rule` matches `example` the way it would match a call: a string is the value of
/// the tool's rule field (a command, a path relative to the working directory, a URL), an object
/// is a whole input. Allow rules must cover the whole example; deny and ask rules any part.
pub fn example_matches(rule: &Rule, example: &Value, context: &RuleContext) -> bool {
    let tool = if rule.tool().contains('*') {
        rule.tool().replace('*', "x")
    } else {
        rule.tool().to_owned()
    };
    call_matches(rule, &tool, example, context)
}

/// True when `rule` matches a call of `tool` with `example` (see [`example_matches`]).
pub fn call_matches(rule: &Rule, tool: &str, example: &Value, context: &RuleContext) -> bool {
    let tool = tool.to_owned();
    let (field, path_tool) = if is_shell_tool(&tool) {
        ("command", false)
    } else if Family::of(&tool).is_some() {
        ("file_path", true)
    } else if is_url_tool(&tool) {
        ("url", false)
    } else {
        ("value", false)
    };
    let input = match example {
        Value::Object(_) => example.clone(),
        other => serde_json::json!({ field: other }),
    };
    let properties: serde_json::Map<String, Value> = input
        .as_object()
        .map(|map| {
            map.keys()
                .map(|key| (key.clone(), Value::Bool(true)))
                .collect()
        })
        .unwrap_or_default();
    let schema = serde_json::json!({ "properties": properties });
    let target = Target::new(
        &tool,
        Some(field),
        path_tool,
        &input,
        &context.cwd,
        context.home.as_deref(),
    );
    let call = CallView {
        tool: &tool,
        writes: Family::of(&tool) == Some(Family::Edit),
        target: &target,
        input: &input,
        schema: &schema,
        hits: None,
    };
    match rule.kind() {
        RuleKind::Allow => allowing(&[rule], &call, &|_| false).is_some(),
        RuleKind::Ask | RuleKind::Deny => blocks(rule, &call),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RuleSource;
    const A: RuleKind = RuleKind::Allow;
    const D: RuleKind = RuleKind::Deny;

    /// PERM §Read and Edit (symlinks): allow needs the link AND its target to match; deny applies
    /// when EITHER matches.
    #[test]
    fn symlinks_need_both_for_allow_and_either_for_deny() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(ws.join("public")).unwrap();
        std::fs::create_dir_all(ws.join("private")).unwrap();
        std::fs::write(ws.join("private/key.txt"), "k").unwrap();
        std::os::unix::fs::symlink(ws.join("private/key.txt"), ws.join("public/key.txt")).unwrap();
        std::os::unix::fs::symlink(ws.join("private"), ws.join("public/dir")).unwrap();
        let context = RuleContext {
            cwd: ws.clone(),
            home: None,
        };
        let check = |kind, text: &str, path: &str| {
            let rule = Rule::parse(text, kind, RuleSource::CommandLine, &context).unwrap();
            call_matches(&rule, "Read", &Value::String(path.to_owned()), &context)
        };
        let cases = [
            (A, "Read(public/**)", "public/key.txt", false),
            (A, "Read(public/**)", "public/dir/new.txt", false),
            (A, "Read(private/**)", "public/key.txt", false),
            (A, "Read(/**)", "public/key.txt", true),
            (D, "Read(private/**)", "public/key.txt", true),
            (D, "Read(private/**)", "public/dir/new.txt", true),
            (D, "Read(public/**)", "public/key.txt", true),
            (D, "Read(*.secret)", "public/key.txt", false),
        ];
        for (kind, text, path, expected) in cases {
            assert_eq!(check(kind, text, path), expected, "{kind:?} {text} {path}");
        }
    }

    /// PERM §Read and Edit: `/path` is anchored at the settings scope; `//path` at the root.
    #[test]
    fn rule_anchors_follow_the_scope() {
        let context = RuleContext {
            cwd: "/ws".into(),
            home: Some("/home/u".into()),
        };
        let cases = [
            (
                RuleSource::User("/home/u/.config/janua/settings.json".into()),
                "/home/u/.config/janua/secrets/k",
                true,
            ),
            (
                RuleSource::User("/home/u/.config/janua/settings.json".into()),
                "/ws/secrets/k",
                false,
            ),
            (
                RuleSource::Project("/ws/.janua/settings.json".into()),
                "/ws/secrets/k",
                true,
            ),
            (
                RuleSource::Local("/ws/.janua/settings.local.json".into()),
                "/ws/secrets/k",
                true,
            ),
            (
                RuleSource::Settings(Some("/etc/team/settings.json".into())),
                "/etc/team/secrets/k",
                true,
            ),
            (RuleSource::Settings(None), "/ws/secrets/k", true),
            (RuleSource::CommandLine, "/ws/secrets/k", true),
            (RuleSource::Session, "/secrets/k", false),
        ];
        for (source, path, expected) in cases {
            let rule = Rule::parse("Read(/secrets/**)", D, source.clone(), &context).unwrap();
            let got = call_matches(&rule, "Read", &Value::String(path.to_owned()), &context);
            assert_eq!(got, expected, "{source:?} {path}");
        }
    }

    /// `Bash(command:rm *)` names the primary field: it means `Bash(rm *)`, compound commands
    /// included.
    #[test]
    fn a_primary_field_parameter_is_the_ordinary_specifier() {
        let context = RuleContext {
            cwd: "/ws".into(),
            home: None,
        };
        let rule = Rule::parse("Bash(command:rm *)", D, RuleSource::CommandLine, &context).unwrap();
        for command in ["rm -rf x", "echo; rm -rf /", "FOO=1 rm x"] {
            assert!(
                call_matches(&rule, "Bash", &Value::String(command.into()), &context),
                "{command}"
            );
        }
        let read = Rule::parse(
            "Read(file_path: .env)",
            D,
            RuleSource::CommandLine,
            &context,
        )
        .unwrap();
        assert!(call_matches(
            &read,
            "Read",
            &Value::String("a/.env".into()),
            &context
        ));
    }

    /// Files that well-known programs change are writes for Edit deny rules and protected paths,
    /// but an allow rule for the program needs no Edit rule.
    #[test]
    fn program_writes_meet_edit_denies_but_not_allow_requirements() {
        let context = RuleContext {
            cwd: "/ws".into(),
            home: None,
        };
        let deny = Rule::parse("Edit(.git/**)", D, RuleSource::CommandLine, &context).unwrap();
        for command in [
            "cp x .git/config",
            "tee .git/hooks/pre-commit",
            "sed -i s/a/b/ .git/config",
            "rm -f .git/index",
        ] {
            assert!(
                call_matches(&deny, "Bash", &Value::String(command.into()), &context),
                "{command}"
            );
        }
        assert!(!call_matches(
            &deny,
            "Bash",
            &Value::String("cp .git/config x".into()),
            &context
        ));
        let allow = Rule::parse("Bash(rm *)", A, RuleSource::CommandLine, &context).unwrap();
        assert!(call_matches(
            &allow,
            "Bash",
            &Value::String("rm build/x".into()),
            &context
        ));
    }
}
