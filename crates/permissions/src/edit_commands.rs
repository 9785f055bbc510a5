//! The filesystem commands `acceptEdits` approves (Claude Code's permission-modes page, modes
//! table): `mkdir`, `touch`, `rm`, `rmdir`, `mv`, `cp` and `sed` run without a rule in
//! `acceptEdits` when every path they name lies inside the workspace or an additional directory,
//! behind at most safe variable prefixes and the wrappers allow rules look through (`timeout`,
//! `nice`, `nohup`, ...). Subcommands of the built-in read-only set may sit beside them
//! (`mkdir -p out && ls out`).
//!
//! This module only recognises such a command line; the decision (`decision.rs`) asks it only in
//! `acceptEdits`, after deny and ask rules, critical-path removals and protected paths, so a path
//! outside, a critical path or a protected path still asks.

use super::Policy;
use super::read_only::{files, flag_values, glob_directory, operands_of};
use super::sed::{plain_substitution, sed_scripts};
use super::shell::ShellWord;
use super::target::{CommandTarget, PathCandidates};

/// The programs `acceptEdits` approves inside the workspace.
const EDIT_PROGRAMS: &[&str] = &["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"];

/// The edit programs of `command`, joined for the decision's reason, when `acceptEdits` may
/// approve it; `None` otherwise.
pub fn edit_command(command: &CommandTarget, policy: &Policy) -> Option<String> {
    if command.parsed.opaque.is_some()
        || command.parsed.subcommands.is_empty()
        || command.unresolved_write.is_some()
        || !command
            .cd_targets
            .iter()
            .all(|cd| cd.as_ref().is_some_and(|cd| inside(cd, policy)))
    {
        return None;
    }
    let workspace = policy.context().cwd.as_path();
    let home = policy.context().home.as_deref();
    let bases = command.run_directories();
    if !command.writes.iter().all(|write| inside(write, policy)) {
        return None;
    }
    let moved = bases.iter().any(|base| base != workspace);
    let mut programs: Vec<&str> = Vec::new();
    let mut paths: Vec<ShellWord> = Vec::new();
    for forms in &command.forms {
        if forms.redirect_only {
            continue;
        }
        let (program, args) = forms.allow.as_ref()?.words.split_first()?;
        let name = program.text.as_str();
        if EDIT_PROGRAMS.contains(&name) {
            paths.extend(edit_paths(name, args)?);
            if !programs.contains(&name) {
                programs.push(name);
            }
        } else {
            paths.extend(operands_of(name, args, moved)?);
        }
    }
    if programs.is_empty() {
        return None;
    }
    for word in &paths {
        let directory = glob_directory(word);
        for base in &bases {
            if !inside(&PathCandidates::new(directory, base, home), policy) {
                return None;
            }
        }
    }
    Some(programs.join(", "))
}

fn inside(path: &PathCandidates, policy: &Policy) -> bool {
    path.all().all(|spelling| policy.inside_workspace(spelling))
}

/// Every path an edit program names (its operands, and the value of each `--flag=value`), or
/// `None` when an argument is only known at run time or `sed` could run or write more than its
/// files.
fn edit_paths(name: &str, args: &[ShellWord]) -> Option<Vec<ShellWord>> {
    if !args.iter().all(|word| word.literal) {
        return None;
    }
    if name == "sed" {
        return sed_files(args).map(|named| named.into_iter().cloned().collect());
    }
    let mut paths: Vec<ShellWord> = files(args, &[]).into_iter().cloned().collect();
    paths.extend(flag_values(args));
    Some(paths)
}

/// The files a `sed` edits or reads, when its only scripts are plain substitutions
/// (`s/a/b/g`); `None` for anything else (`e`, `w`, `r` commands, script files, ...).
fn sed_files(args: &[ShellWord]) -> Option<Vec<&ShellWord>> {
    let (scripts, named) = sed_scripts(args)?;
    scripts
        .iter()
        .all(|script| plain_substitution(script))
        .then_some(named)
}

#[cfg(test)]
mod tests {
    use super::super::decision_table;
    use super::super::sed::plain_substitution;

    /// Every row of `edit_commands.tsv` through the whole decision.
    #[test]
    fn accept_edits_commands_table() {
        decision_table::run("edit_commands.tsv", include_str!("edit_commands.tsv"), 25);
    }

    #[test]
    fn only_plain_substitutions_are_plain() {
        for (script, plain) in [
            ("s/a/b/", true),
            ("s/a/b/g", true),
            ("s|a/b|c|gI", true),
            (r"s/a\/b/c/", true),
            ("s/a/b/w out.txt", false),
            ("s/a/b/e", false),
            ("s/a/b", false),
            ("1d", false),
            ("e rm -rf x", false),
            ("r /etc/passwd", false),
            ("sabac", false),
        ] {
            assert_eq!(plain_substitution(script), plain, "{script}");
        }
    }
}
