//! The central permission engine: Claude-Code-compatible rules (allow, ask, deny) from every
//! settings scope, permission modes, protected paths, hook votes and grants, decided in one place.
//!
//! Layout: `rules` parses rules; `shell`, `bash`, `path_pattern` and `domain` give specifiers
//! their meaning per tool; `target` reads what a call presents; `matching` applies rules to it;
//! `critical` and `read_only` recognise critical-path removals and the built-in read-only Bash
//! commands; `decision` runs the fixed order; `prompter` answers `ask`; `enforced` turns deny
//! rules and protected paths into what the kernel can enforce.
//!
//! Architecture invariant: this crate decides and never acts. It depends on `janua-types` and
//! on parsing crates only: no wasmtime, no tokio, no sandbox, no process or network code, so a
//! change here rebuilds nothing of the engine and the fuzz targets link only this. It hands the
//! sandbox what the rules mean as plain data or closures (`HiddenPaths`, `HostCheck`,
//! `Enforceable`); the sandbox never reaches back into it.
#![warn(missing_docs)]

mod bash;
mod critical;
mod decision;
#[cfg(test)]
mod decision_table;
mod domain;
mod edit_commands;
mod enforced;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod matching;
mod mode;
mod path_index;
mod path_pattern;
pub mod paths;
mod programs;
mod prompter;
#[cfg(test)]
mod properties;
mod protected;
mod read_only;
mod rules;
mod sed;
mod shell;
mod target;
mod unknown;
#[cfg(test)]
mod vectors;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

pub use decision::{DecidedBy, Decision, HookVote, Verdict, VoteKind};
pub use mode::{PermissionMode, UnknownMode};
pub use prompter::{NoPrompter, PermissionRequest, PromptAnswer, Prompter, TtyPrompter};
pub use rules::{Rule, RuleContext, RuleError, RuleKind, RuleSource, split_rule_list};
pub use unknown::{Scope, Unknown};

pub use decision::{DecisionInput, decide};
pub use prompter::suggest_rule;

/// Splits a shell command line into the simple commands Bash rules see, each as its words joined
/// by single spaces (wrappers kept), and says why a pattern rule could not allow it, if it could
/// not. Exposed for fuzzing and for `janua check`-style tooling.
pub fn split_command(command: &str) -> (Vec<String>, Option<String>) {
    let parsed = shell::split(command);
    (
        parsed
            .subcommands
            .iter()
            .map(shell::Subcommand::text)
            .collect(),
        parsed.opaque,
    )
}
pub use matching::{example_matches, touches};
pub use rules::Family;
pub use target::Target;

/// The hidden-path check, once built (a closure, so `Debug` shows only whether it is there).
#[derive(Default)]
struct HiddenCache(std::sync::OnceLock<Option<janua_types::HiddenPaths>>);

impl std::fmt::Debug for HiddenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0.get() {
            Some(Some(_)) => "HiddenCache(built)",
            Some(None) => "HiddenCache(nothing hidden)",
            None => "HiddenCache(not built)",
        })
    }
}

/// Positions of relevant allow, ask and deny rules.
#[derive(Debug)]
struct Relevant([Vec<u32>; 3]);

/// The operator's permission configuration: rules of every scope, the mode, and the directories
/// that count as the workspace.
#[derive(Debug)]
pub struct Policy {
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
    session: RwLock<Vec<Rule>>,
    /// The configured rules' path patterns in one set, built on first use.
    path_index: std::sync::OnceLock<path_index::PathIndex>,
    /// What the Read deny rules hide from guests, built on first use (every nested call of a
    /// narrowed scope asks for it).
    hidden: HiddenCache,
    /// Per tool name, the positions of the configured rules that can match its calls.
    relevant: RwLock<std::collections::HashMap<String, Arc<Relevant>>>,
    /// The permission mode.
    pub mode: PermissionMode,
    /// Directories besides the workspace that count as inside it.
    pub additional_dirs: Vec<PathBuf>,
    /// True when Bash commands run inside janua's kernel view (janua's own Bash, `--sandbox-bash`,
    /// `janua sandbox`), which holds them to the Read and Edit deny rules it can enforce and to
    /// the protected paths. Default false: the decision alone must keep every rule (a hook in
    /// front of another agent's shell), the strictest reading.
    pub commands_confined: bool,
    context: RuleContext,
}

impl Default for Policy {
    fn default() -> Self {
        Self::new(RuleContext {
            cwd: PathBuf::from("/"),
            home: None,
        })
    }
}

impl Policy {
    /// An empty policy in `default` mode whose rules are anchored with `context`.
    pub fn new(context: RuleContext) -> Self {
        Self {
            allow: Vec::new(),
            ask: Vec::new(),
            deny: Vec::new(),
            session: RwLock::new(Vec::new()),
            path_index: std::sync::OnceLock::new(),
            hidden: HiddenCache::default(),
            relevant: RwLock::default(),
            mode: PermissionMode::Default,
            additional_dirs: Vec::new(),
            commands_confined: false,
            context,
        }
    }

    /// What rules are anchored against.
    pub fn context(&self) -> &RuleContext {
        &self.context
    }

    /// Adds `rule` to its list. An allow rule with a broad tool-name glob, or a `Write(<path>)`
    /// (or `NotebookEdit(<path>)`, `MultiEdit(<path>)`) allow (Edit rules decide file edits), is
    /// not added; such a deny or ask is added and applies as the same `Edit(...)` rule. The
    /// returned warning says why and what to write.
    pub fn add(&mut self, rule: Rule) -> Option<String> {
        self.path_index.take();
        self.hidden.0.take();
        self.relevant
            .get_mut()
            .unwrap_or_else(|poison| poison.into_inner())
            .clear();
        // Claude Code decides every file-editing tool by `Edit(...)` rules and never consults
        // path rules written for Write, NotebookEdit or the legacy MultiEdit (2.1.210): such an
        // allow is dropped; a deny or ask still applies, as an Edit rule would (safer than
        // dropping it), and both say which rule to write instead.
        let tool = rule.tool().to_owned();
        let edit_instead = (matches!(tool.as_str(), "Write" | "NotebookEdit" | "MultiEdit")
            && !rule.is_bare())
        .then(|| {
            rule.text()
                .strip_prefix(tool.as_str())
                .unwrap_or_default()
                .to_owned()
        });
        match (rule.kind(), edit_instead) {
            (RuleKind::Allow, Some(specifier)) => {
                return Some(format!(
                    "ignored allow rule {:?} ({}): {tool}(<path>) rules are never consulted; Edit rules decide Write, Edit and NotebookEdit, so write Edit{specifier} instead",
                    rule.text(),
                    rule.source()
                ));
            }
            (kind, Some(specifier)) => {
                let warning = format!(
                    "{} rule {:?} ({}): Claude Code never consults {tool}(<path>) rules; janua applies it as Edit{specifier} to Write, Edit and NotebookEdit. Write Edit{specifier} instead so both agree",
                    kind.as_str(),
                    rule.text(),
                    rule.source()
                );
                self.add_rule(rule);
                return Some(warning);
            }
            _ => {}
        }
        self.add_rule(rule)
    }

    /// Files `rule` under its kind; the warning when an allow rule is dropped.
    fn add_rule(&mut self, rule: Rule) -> Option<String> {
        match rule.kind() {
            RuleKind::Allow if rule.has_broad_name_glob() => Some(format!(
                "ignored allow rule {:?} ({}): allow rules may use '*' in the tool name only after a literal mcp__<server>__ prefix",
                rule.text(),
                rule.source()
            )),
            RuleKind::Allow => {
                self.allow.push(rule);
                None
            }
            RuleKind::Ask => {
                self.ask.push(rule);
                None
            }
            RuleKind::Deny => {
                self.deny.push(rule);
                None
            }
        }
    }

    /// Every path pattern of the configured rules in one set (see `path_index.rs`).
    pub fn path_index(&self) -> &path_index::PathIndex {
        self.path_index.get_or_init(|| {
            path_index::PathIndex::build(
                self.allow
                    .iter()
                    .chain(&self.ask)
                    .chain(&self.deny)
                    .filter_map(Rule::path_pattern),
            )
        })
    }

    /// The configured rules of `kind` (session rules not included).
    pub fn rules(&self, kind: RuleKind) -> &[Rule] {
        match kind {
            RuleKind::Allow => &self.allow,
            RuleKind::Ask => &self.ask,
            RuleKind::Deny => &self.deny,
        }
    }

    /// Allow rules added during the session ("allow always").
    pub fn session_rules(&self) -> Vec<Rule> {
        self.session
            .read()
            .map(|rules| rules.clone())
            .unwrap_or_default()
    }

    /// Adds a session allow rule.
    pub fn add_session_rule(&self, rule: Rule) {
        if let Ok(mut rules) = self.session.write()
            && !rules.iter().any(|known| known.text() == rule.text())
        {
            rules.push(rule);
        }
    }

    /// A copy for a sub-session: `allow` replaces the allow rules (and session rules) when given,
    /// `ask` and `deny` are added, and `mode` replaces the mode. The caller checks that nothing
    /// widens (see `delegation/narrowing.rs`).
    pub fn narrowed(
        &self,
        allow: Option<Vec<Rule>>,
        ask: Vec<Rule>,
        deny: Vec<Rule>,
        mode: PermissionMode,
    ) -> Policy {
        let (allow, session) = match allow {
            Some(allow) => (allow, Vec::new()),
            None => (self.allow.clone(), self.session_rules()),
        };
        Policy {
            allow,
            ask: self.ask.iter().cloned().chain(ask).collect(),
            deny: self.deny.iter().cloned().chain(deny).collect(),
            session: RwLock::new(session),
            path_index: std::sync::OnceLock::new(),
            hidden: HiddenCache::default(),
            relevant: RwLock::default(),
            mode,
            additional_dirs: self.additional_dirs.clone(),
            commands_confined: self.commands_confined,
            context: self.context.clone(),
        }
    }

    /// True when an allow rule of this policy (configured or session) already allows everything
    /// `rule` allows: the same rule, or a bare rule for its tool.
    pub fn covers_allow(&self, rule: &Rule) -> bool {
        self.with_allow_rules(|rules| {
            rules.iter().any(|held| {
                held.text() == rule.text()
                    || (held.is_bare()
                        && (held.tool() == rule.tool()
                            || janua_types::wildcard::matches(held.tool(), rule.tool())))
            })
        })
    }

    /// The configured rules of `kind` that can match a call of `tool`, in order. A rule whose tool
    /// is neither `tool` (by name or glob) nor of a path family (whose paths reach across tools)
    /// can never match, so with many rules most are skipped without being looked at.
    pub fn rules_for(&self, kind: RuleKind, tool: &str) -> impl Iterator<Item = &Rule> {
        let relevant = self.relevant(tool);
        let rules = self.rules(kind);
        let positions = match kind {
            RuleKind::Allow => 0,
            RuleKind::Ask => 1,
            RuleKind::Deny => 2,
        };
        (0..relevant.0[positions].len()).map(move |at| &rules[relevant.0[positions][at] as usize])
    }

    fn relevant(&self, tool: &str) -> Arc<Relevant> {
        if let Some(found) = self
            .relevant
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .get(tool)
        {
            return Arc::clone(found);
        }
        let positions = |rules: &[Rule]| -> Vec<u32> {
            rules
                .iter()
                .enumerate()
                .filter(|(_, rule)| rule.family().is_some() || rule.matches_name(tool))
                .filter_map(|(at, _)| u32::try_from(at).ok())
                .collect()
        };
        let relevant = Arc::new(Relevant([
            positions(&self.allow),
            positions(&self.ask),
            positions(&self.deny),
        ]));
        let mut cache = self
            .relevant
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        // Tool names come from the registry, but a model can make up any: keep the cache bounded.
        if cache.len() < 4096 {
            cache.insert(tool.to_owned(), Arc::clone(&relevant));
        }
        relevant
    }

    /// Runs `f` on the configured allow rules that can match `tool` and every session allow
    /// rule, in that order, without copying them.
    pub fn with_allow_rules_for<T>(&self, tool: &str, f: impl FnOnce(&[&Rule]) -> T) -> T {
        let session = self.session.read().ok();
        let rules: Vec<&Rule> = self
            .rules_for(RuleKind::Allow, tool)
            .chain(session.iter().flat_map(|rules| rules.iter()))
            .collect();
        f(&rules)
    }

    /// Runs `f` on the configured and session allow rules, in that order, without copying them.
    pub fn with_allow_rules<T>(&self, f: impl FnOnce(&[&Rule]) -> T) -> T {
        let session = self.session.read().ok();
        let rules: Vec<&Rule> = self
            .allow
            .iter()
            .chain(session.iter().flat_map(|rules| rules.iter()))
            .collect();
        f(&rules)
    }

    /// What Read deny rules with a path (`Read(.env)`, `Read(secrets/**)`) hide from every guest's
    /// filesystem view, or `None` when there are none. Only configured deny rules count; the
    /// session adds allow rules only, so the answer is fixed for the policy's life.
    pub fn hidden_paths(&self) -> Option<janua_types::HiddenPaths> {
        self.hidden
            .0
            .get_or_init(|| self.build_hidden_paths())
            .clone()
    }

    fn build_hidden_paths(&self) -> Option<janua_types::HiddenPaths> {
        let rules: Vec<Rule> = self
            .deny
            .iter()
            .filter(|rule| {
                rule.tool() == "Read" && matches!(rule.specifier, rules::Specifier::Value(_))
            })
            .cloned()
            .collect();
        if rules.is_empty() {
            return None;
        }
        // The guest's every file access asks this: path patterns go through one set search,
        // only the rest (no path reading) rule by rule.
        let (indexed, direct): (Vec<Rule>, Vec<Rule>) = rules.into_iter().partition(|rule| {
            matches!(&rule.specifier, rules::Specifier::Value(value) if value.param.is_none() && value.path.is_some())
        });
        let index = path_index::PathIndex::build(indexed.iter().filter_map(Rule::path_pattern));
        Some(std::sync::Arc::new(move |path: &Path| {
            index.any_match(path) || direct.iter().any(|rule| matching::hides_path(rule, path))
        }))
    }

    /// True when a bare-name deny rule removes `tool` from the registry.
    pub fn removes(&self, tool: &str) -> bool {
        self.deny
            .iter()
            .any(|rule| rule.is_bare() && rule.matches_name(tool))
    }

    /// The decision these rules and this mode reach for a call of `tool` with `input`, before
    /// grants, hooks and any prompter (so `Ask` is possible). For embedders that want to show
    /// what would happen; the pipeline's decision also weighs grants and hook votes.
    pub fn evaluate(&self, tool: &janua_types::ToolSpec, input: &serde_json::Value) -> Decision {
        self.evaluate_in(tool, input, &self.context.cwd)
    }

    /// [`Policy::evaluate`] for a session whose shell is in `shell_directory`.
    pub fn evaluate_in(
        &self,
        tool: &janua_types::ToolSpec,
        input: &serde_json::Value,
        shell_directory: &Path,
    ) -> Decision {
        let path_tool = tool.path_field().is_some();
        let target = Target::in_directories(
            &tool.name,
            tool.rule_field.as_deref(),
            path_tool,
            input,
            (&self.context.cwd, shell_directory),
            self.context.home.as_deref(),
        );
        let inside_workspace = match &target {
            Target::Path(path) => Some(self.inside_workspace(&path.lexical)),
            _ if path_tool => Some(false),
            _ => None,
        };
        decide(&DecisionInput {
            tool,
            target: &target,
            input,
            within_grants: None,
            inside_workspace,
            reads_host_env: false,
            grants: String::new(),
            vote: None,
            policy: self,
        })
    }

    /// The check every outgoing HTTP request of a call of `tool` must pass (`sandbox/http.rs`):
    /// its host is `decided` (the host the decision looked at) or an allow rule covers it, and no
    /// deny rule names it; an ask rule also refuses a host other than `decided`, since nobody can
    /// be asked in the middle of a call. The rules that count are the tool's own and every
    /// `WebFetch(domain:...)` rule: domain rules are the operator's list of hosts for every
    /// network component. Allow rules are read now, session rules included.
    pub fn host_check(&self, tool: &str, decided: Option<String>) -> janua_types::HostCheck {
        let relevant = |rule: &Rule| {
            (rule.matches_name(tool) || rule.tool() == "WebFetch")
                && matches!(
                    rule.specifier,
                    rules::Specifier::Any | rules::Specifier::Domain(_)
                )
                && (rule.matches_name(tool) || !rule.is_bare())
        };
        let deny: Vec<Rule> = self
            .deny
            .iter()
            .filter(|rule| relevant(rule))
            .cloned()
            .collect();
        let ask: Vec<Rule> = self
            .ask
            .iter()
            .filter(|rule| relevant(rule))
            .cloned()
            .collect();
        let allow: Vec<Rule> = self.with_allow_rules(|rules| {
            rules
                .iter()
                .filter(|rule| relevant(rule))
                .map(|rule| (*rule).clone())
                .collect()
        });
        let names = |rule: &Rule, host: &str| match &rule.specifier {
            rules::Specifier::Any => true,
            rules::Specifier::Domain(domain) => domain.matches(host),
            rules::Specifier::Value(_) => false,
        };
        let tool = tool.to_owned();
        std::sync::Arc::new(move |host: &str| {
            if let Some(rule) = deny.iter().find(|rule| names(rule, host)) {
                return Err(janua_types::HostRefused::Denied {
                    host: host.to_owned(),
                    rule: rule.text().to_owned(),
                    origin: rule.source().to_string(),
                });
            }
            if decided.as_deref() == Some(host) {
                return Ok(());
            }
            if let Some(rule) = ask.iter().find(|rule| names(rule, host)) {
                return Err(janua_types::HostRefused::Asked {
                    host: host.to_owned(),
                    tool: tool.clone(),
                    rule: rule.text().to_owned(),
                    origin: rule.source().to_string(),
                });
            }
            if allow.iter().any(|rule| names(rule, host)) {
                return Ok(());
            }
            Err(janua_types::HostRefused::NotAllowed {
                host: host.to_owned(),
                tool: tool.clone(),
                decided: decided.clone(),
            })
        })
    }

    /// True when `path` lies in the workspace or an additional directory.
    pub fn inside_workspace(&self, path: &Path) -> bool {
        path.starts_with(&self.context.cwd)
            || self.additional_dirs.iter().any(|dir| path.starts_with(dir))
    }
}

#[cfg(test)]
mod host_check_tests {
    use super::*;

    fn policy(rules: &[(&str, RuleKind)]) -> Policy {
        let mut policy = Policy::default();
        for (text, kind) in rules {
            let rule = Rule::parse(text, *kind, RuleSource::CommandLine, policy.context())
                .expect("valid rule");
            assert!(policy.add(rule).is_none());
        }
        policy
    }

    #[test]
    fn requests_need_the_decided_host_or_an_allow_rule_and_no_deny() {
        let policy = policy(&[
            ("WebFetch(domain:*.docs.test)", RuleKind::Allow),
            ("WebFetch(domain:evil.docs.test)", RuleKind::Deny),
            ("WebFetch(domain:ask.test)", RuleKind::Ask),
        ]);
        let check = policy.host_check("WebFetch", Some("start.test".to_owned()));
        assert!(check("start.test").is_ok());
        assert!(check("a.docs.test").is_ok());
        let denied = check("evil.docs.test").unwrap_err();
        assert!(
            matches!(&denied, janua_types::HostRefused::Denied { rule, .. } if rule == "WebFetch(domain:evil.docs.test)"),
            "{denied}"
        );
        let asked = check("ask.test").unwrap_err();
        assert!(
            matches!(asked, janua_types::HostRefused::Asked { .. }),
            "{asked}"
        );
        assert!(asked.to_string().contains("asks"), "{asked}");
        let other = check("other.test").unwrap_err();
        assert!(
            matches!(other, janua_types::HostRefused::NotAllowed { .. }),
            "{other}"
        );
        assert!(other.to_string().contains("no allow rule"), "{other}");
        // The decided host passed the decision's ask already; a deny still refuses it.
        let check = policy.host_check("WebFetch", Some("ask.test".to_owned()));
        assert!(check("ask.test").is_ok());
        let check = policy.host_check("WebFetch", Some("evil.docs.test".to_owned()));
        assert!(check("evil.docs.test").is_err());
    }

    #[test]
    fn domain_rules_apply_to_other_network_components() {
        let policy = policy(&[
            ("WebFetch(domain:api.test)", RuleKind::Allow),
            ("WebFetch", RuleKind::Allow),
            ("WebFetch(domain:bad.test)", RuleKind::Deny),
        ]);
        let check = policy.host_check("Fetcher", None);
        assert!(check("api.test").is_ok());
        // A bare WebFetch allow is about WebFetch, not every component.
        assert!(check("other.test").is_err());
        assert!(check("bad.test").is_err());
        let bare = policy.host_check("WebFetch", None);
        assert!(bare("other.test").is_ok());
        assert!(bare("bad.test").is_err());
    }

    #[test]
    fn a_browser_page_answers_to_browser_and_webfetch_domain_rules() {
        let policy = policy(&[
            ("Browser(domain:app.test)", RuleKind::Allow),
            ("WebFetch(domain:cdn.test)", RuleKind::Allow),
            ("WebFetch(domain:evil.test)", RuleKind::Deny),
            ("Browser(domain:tracker.test)", RuleKind::Deny),
        ]);
        let page = policy.host_check("Browser", Some("app.test".to_owned()));
        let cases = [
            ("app.test", true),
            ("cdn.test", true),
            ("evil.test", false),
            ("tracker.test", false),
            ("elsewhere.test", false),
        ];
        for (host, allowed) in cases {
            assert_eq!(page(host).is_ok(), allowed, "{host}: {:?}", page(host));
        }
        // Browser's own rules are not the operator's list for every component.
        let fetch = policy.host_check("WebFetch", Some("start.test".to_owned()));
        assert!(fetch("app.test").is_err());
        assert!(fetch("tracker.test").is_err());
        assert!(fetch("cdn.test").is_ok());
    }
}

/// Edit rules decide every file-editing tool (issue 30, point 5; PERM §Read and Edit).
#[cfg(test)]
mod edit_rule_tests {
    use super::*;
    use janua_types::{CapabilityClass, ToolSpec};

    fn editor(name: &str, field: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object", "properties": {field: {}}}),
            class: CapabilityClass::Write,
            read_only: false,
            concurrency_safe: false,
            rule_field: Some(field.into()),
            validates_input: false,
        }
    }

    fn policy_with(text: &str, kind: RuleKind) -> (Policy, Option<String>) {
        let mut policy = Policy::new(RuleContext {
            cwd: "/ws".into(),
            home: None,
        });
        let rule =
            Rule::parse(text, kind, RuleSource::CommandLine, policy.context()).expect("valid rule");
        let warning = policy.add(rule);
        (policy, warning)
    }

    fn verdicts(policy: &Policy) -> Vec<Verdict> {
        [
            (editor("Write", "file_path"), "file_path", "src/a.rs"),
            (editor("Edit", "file_path"), "file_path", "src/a.rs"),
            (
                editor("NotebookEdit", "notebook_path"),
                "notebook_path",
                "src/a.ipynb",
            ),
        ]
        .iter()
        .map(|(tool, field, path)| {
            policy
                .evaluate(tool, &serde_json::json!({ *field: *path }))
                .verdict
        })
        .collect()
    }

    /// Every row of `edit_rules.tsv` (issue 30, point 5).
    #[test]
    fn edit_rules_decide_write_edit_and_notebook_edit() {
        let mut failures = Vec::new();
        let mut rows = 0;
        for (index, line) in include_str!("edit_rules.tsv").lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            rows += 1;
            let at = index + 1;
            let [kind, text, write, edit, notebook, warns, source] =
                line.split('\t').collect::<Vec<_>>()[..]
            else {
                panic!("edit_rules.tsv:{at}: seven fields expected");
            };
            let kind = match kind {
                "allow" => RuleKind::Allow,
                "deny" => RuleKind::Deny,
                _ => RuleKind::Ask,
            };
            let (policy, warning) = policy_with(text, kind);
            let expected: Vec<Verdict> = [write, edit, notebook]
                .iter()
                .map(|verdict| match *verdict {
                    "allow" => Verdict::Allow,
                    "deny" => Verdict::Deny,
                    _ => Verdict::Ask,
                })
                .collect();
            let got = verdicts(&policy);
            let warned = match (warns, &warning) {
                ("-", None) => true,
                ("-", Some(_)) | (_, None) => false,
                (text, Some(warning)) => warning.contains(text),
            };
            if got != expected || !warned {
                failures.push(format!(
                    "edit_rules.tsv:{at}: {text}: expected {expected:?} warning {warns:?}, got {got:?} warning {warning:?} ({source})"
                ));
            }
        }
        assert!(rows >= 10, "edit_rules.tsv: {rows} rows");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn a_write_path_allow_is_never_consulted_and_its_warning_says_what_to_write() {
        let (policy, warning) = policy_with("Write(src/**)", RuleKind::Allow);
        assert_eq!(verdicts(&policy), vec![Verdict::Ask; 3]);
        let warning = warning.expect("a warning");
        assert!(warning.contains("\"Write(src/**)\""), "{warning}");
        assert!(warning.contains("command line"), "{warning}");
        assert!(warning.contains("write Edit(src/**) instead"), "{warning}");
    }
}
