//! Built-in read-only Bash commands (Claude Code's permissions page, §Read-only commands): `ls`,
//! `cat`, `echo`, `pwd`, `head`, `tail`, `grep`, `find` without actions that run or delete, `wc`,
//! `which`, `diff`, `stat`, `du`, `cd` inside the workspace, and read-only `git` subcommands run
//! without a rule in every mode. The set is fixed; deny and ask rules (checked before this) override
//! it.
//!
//! A command line counts only when every subcommand is in the set with only the flags the set
//! knows to be harmless, every file it names lies inside the workspace or an additional directory,
//! and it writes nothing (an output redirect only to `/dev/null`). Unquoted globs are accepted only
//! for programs whose flags are all read-only (`ls *.ts`, `wc -l src/*.py`), never for `find` and
//! `git`. An opaque command (unparseable, over 10,000 characters, a construct janua cannot see
//! into) is never read-only. janua is stricter in one way: a file a Read deny rule hides is never
//! read by a read-only command, so naming one denies the call, naming the rule.

use super::Policy;
use super::matching::{CallView, blocking};
use super::rules::{Rule, RuleKind};
use super::shell::ShellWord;
use super::target::{CommandTarget, PathCandidates, Target};

/// What the read-only set says of a command line.
pub enum ReadOnly<'p> {
    /// Every subcommand is read-only; the reason names the programs.
    Yes(String),
    /// It is read-only but names a file a Read deny rule hides.
    Hidden {
        /// The deny rule.
        rule: &'p Rule,
        /// The file, as written.
        path: String,
    },
    /// Not read-only: the ordinary decision goes on.
    No,
}

/// Programs whose every flag only changes what is printed: unquoted globs are fine for them.
const PLAIN_READERS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "stat", "du", "diff", "grep",
];

/// `find` words that run a command, delete, or write a file.
const FIND_WRITERS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// `git` subcommands that only read, each with the flags that would make it write or run
/// something (`None`: every argument is fine; `Some(list)`: arguments must be flags from the list).
const GIT_READERS: &[(&str, Option<&[&str]>)] = &[
    ("status", None),
    ("log", None),
    ("diff", None),
    ("show", None),
    ("blame", None),
    ("shortlog", None),
    ("describe", None),
    ("rev-parse", None),
    ("ls-files", None),
    ("ls-tree", None),
    ("cat-file", None),
    ("show-ref", None),
    ("grep", None),
    (
        "branch",
        Some(&[
            "-a",
            "-r",
            "-v",
            "-vv",
            "-l",
            "--list",
            "--all",
            "--remotes",
            "--verbose",
            "--show-current",
            "--no-color",
            "--color",
        ]),
    ),
    ("remote", Some(&["-v", "--verbose"])),
    ("tag", Some(&["-l", "--list", "-n"])),
];

/// `git` flags that write a file, run a program, or read outside the repository.
const GIT_WRITERS: &[&str] = &[
    "--output",
    "--ext-diff",
    "--no-index",
    "-O",
    "--open-files-in-pager",
    "--textconv",
];

/// Whether `command` is in the read-only set (see the module docs).
pub fn read_only<'p>(command: &CommandTarget, policy: &'p Policy) -> ReadOnly<'p> {
    if command.parsed.opaque.is_some()
        || command.parsed.subcommands.is_empty()
        || !command.writes.is_empty()
        || command.unresolved_write.is_some()
        || !command.program_writes.is_empty()
        || command.unresolved_program_write.is_some()
    {
        return ReadOnly::No;
    }
    let workspace = policy.context().cwd.as_path();
    let home = policy.context().home.as_deref();
    // Relative names are read from where the line starts and from every directory a `cd` names,
    // all of which must lie inside the workspace.
    let inside = |cd: &PathCandidates| cd.all().all(|path| policy.inside_workspace(path));
    if !command
        .cd_targets
        .iter()
        .all(|cd| cd.as_ref().is_some_and(inside))
    {
        return ReadOnly::No;
    }
    let bases = command.run_directories();
    // Run anywhere but the workspace root (an earlier call's `cd`, or one on this line).
    let moved = bases.iter().any(|base| base != workspace);
    let mut programs: Vec<&str> = Vec::new();
    let mut paths: Vec<ShellWord> = Vec::new();
    for forms in &command.forms {
        if forms.redirect_only {
            continue;
        }
        let Some(form) = &forms.allow else {
            return ReadOnly::No;
        };
        let Some((program, args)) = form.words.split_first() else {
            return ReadOnly::No;
        };
        let name = program.text.as_str();
        let Some(named) = operands_of(name, args, moved) else {
            return ReadOnly::No;
        };
        paths.extend(named);
        if !programs.contains(&name) {
            programs.push(name);
        }
    }
    for word in &paths {
        let directory = glob_directory(word);
        for base in &bases {
            let candidates = PathCandidates::new(directory, base, home);
            if !candidates.all().all(|path| policy.inside_workspace(path)) {
                return ReadOnly::No;
            }
            if let Some(rule) = hidden_by(policy, &candidates) {
                return ReadOnly::Hidden {
                    rule,
                    path: word.text.clone(),
                };
            }
        }
    }
    let (verb, stays) = if programs.len() == 1 {
        ("is", "stays")
    } else {
        ("are", "stay")
    };
    ReadOnly::Yes(format!(
        "{} {verb} read-only (the built-in set) and {stays} inside the workspace",
        programs.join(", ")
    ))
}

/// The files a read-only program names, or `None` when the program or one of its arguments is
/// not read-only. `moved`: an earlier `cd` on the line went somewhere other than the workspace.
pub fn operands_of(name: &str, args: &[ShellWord], moved: bool) -> Option<Vec<ShellWord>> {
    let mut named: Vec<ShellWord> = named_files(name, args, moved)?
        .into_iter()
        .cloned()
        .collect();
    if PLAIN_READERS.contains(&name) {
        // `diff --from-file=/etc/passwd`, `du --files0-from=F`: a value may name a file.
        named.extend(flag_values(args));
    }
    Some(named)
}

/// The operands of a read-only program that name files (see [`operands_of`]).
fn named_files<'w>(name: &str, args: &'w [ShellWord], moved: bool) -> Option<Vec<&'w ShellWord>> {
    let plain = PLAIN_READERS.contains(&name);
    // A word whose value is only known when it runs could be a flag or a file anywhere.
    let known = |word: &ShellWord| word.literal && (plain || !word.glob);
    match name {
        "echo" | "pwd" => Some(Vec::new()),
        "which" => args.iter().all(known).then(Vec::new),
        "cd" => Some(Vec::new()),
        "ls" | "cat" | "head" | "tail" | "wc" | "stat" | "du" | "diff" => {
            if !args.iter().all(known) {
                return None;
            }
            Some(files(
                args,
                &["-n", "-c", "--lines", "--bytes", "-d", "--max-depth"],
            ))
        }
        "grep" => {
            if !args.iter().all(known)
                || args.iter().any(|word| {
                    matches!(word.text.as_str(), "-f" | "--file")
                        || word.text.starts_with("--file=")
                })
            {
                return None;
            }
            let explicit = args
                .iter()
                .any(|word| word.text == "-e" || word.text.starts_with("--regexp"));
            let valued = ["-e", "--regexp", "-m", "--max-count", "-A", "-B", "-C"];
            let mut named = files(args, &valued);
            if !explicit && !named.is_empty() {
                named.remove(0);
            }
            Some(named)
        }
        "find" => {
            if !args.iter().all(known)
                || args
                    .iter()
                    .any(|word| FIND_WRITERS.contains(&word.text.as_str()))
            {
                return None;
            }
            // `find -L / ...`: the options -H, -L, -P, -D LIST and -O<level> come before the
            // starting points.
            let mut rest = args;
            while let Some((first, after)) = rest.split_first() {
                match first.text.as_str() {
                    "-H" | "-L" | "-P" => rest = after,
                    "-D" => rest = after.get(1..).unwrap_or_default(),
                    text if text.starts_with("-O") => rest = after,
                    _ => break,
                }
            }
            let starts: Vec<&ShellWord> = rest
                .iter()
                .take_while(|word| !word.text.starts_with(['-', '(', '!']))
                .collect();
            Some(starts)
        }
        "git" => {
            // `cd` + `git` into another directory runs that repository's configuration.
            if moved || !args.iter().all(known) {
                return None;
            }
            let (subcommand, rest) = args.split_first()?;
            let (_, allowed_flags) = GIT_READERS
                .iter()
                .find(|(known, _)| *known == subcommand.text)?;
            let writes = rest.iter().any(|word| {
                GIT_WRITERS
                    .iter()
                    .any(|flag| word.text == *flag || word.text.starts_with(&format!("{flag}=")))
            });
            let flags_ok = allowed_flags
                .is_none_or(|flags| rest.iter().all(|word| flags.contains(&word.text.as_str())));
            (!writes && flags_ok).then(Vec::new)
        }
        _ => None,
    }
}

/// The operands of `args` (words not starting with `-`, and every word after `--`), skipping the
/// value of each flag in `valued`.
pub fn files<'w>(args: &'w [ShellWord], valued: &[&str]) -> Vec<&'w ShellWord> {
    let mut found = Vec::new();
    let mut options_done = false;
    let mut skip_next = false;
    for word in args {
        if skip_next {
            skip_next = false;
        } else if !options_done && word.text == "--" {
            options_done = true;
        } else if !options_done && word.text.starts_with('-') && word.text != "-" {
            skip_next = valued.contains(&word.text.as_str());
        } else if word.text != "-" {
            found.push(word);
        }
    }
    found
}

/// The value of every `--name=value` argument, as a word of its own: such a value may name a file
/// (`--target-directory=DIR`, `--from-file=FILE`); judged as a path, a value that is not one at worst
/// makes the command ask.
pub fn flag_values(args: &[ShellWord]) -> Vec<ShellWord> {
    args.iter()
        .filter_map(|word| {
            let (_, value) = word.text.strip_prefix("--")?.split_once('=')?;
            Some(ShellWord {
                text: value.to_owned(),
                glob: value.contains(['*', '?', '[']) && word.glob,
                ..word.clone()
            })
        })
        .collect()
}

/// The part of a name before its first globbed component (the whole name when it has no glob).
pub fn glob_directory(word: &ShellWord) -> &str {
    if !word.glob {
        return &word.text;
    }
    let text = word.text.as_str();
    let Some(at) = text.find(['*', '?', '[']) else {
        return text;
    };
    match text[..at].rfind('/') {
        Some(0) => "/",
        Some(slash) => &text[..slash],
        None => ".",
    }
}

/// The Read deny rule that hides `candidates`, if any.
fn hidden_by<'p>(policy: &'p Policy, candidates: &PathCandidates) -> Option<&'p Rule> {
    let target = Target::Path(candidates.clone());
    let input = serde_json::Value::Null;
    let schema = serde_json::Value::Null;
    let call = CallView {
        tool: "Read",
        writes: false,
        target: &target,
        input: &input,
        schema: &schema,
        hits: None,
    };
    blocking(policy.rules_for(RuleKind::Deny, "Read"), &call)
}

#[cfg(test)]
mod tests {
    use super::super::decision_table;

    /// Every row of `read_only.tsv` through the whole decision.
    #[test]
    fn read_only_commands_table() {
        decision_table::run("read_only.tsv", include_str!("read_only.tsv"), 40);
    }
}
