//! Critical paths: `rm` and `rmdir` of the filesystem root, a top-level directory, the home
//! directory, the workspace or a directory above it, an additional directory or one above it, a
//! glob directly under any of these, or a glob or trailing slash directly under a shell variable
//! (`rm -rf "$DIR"/*`, which is `/*` when the variable is empty). No allow rule, hook allow or mode
//! approves such a removal (Claude Code's permission-modes page, §Critical paths); the decision
//! asks, and `dontAsk` turns that into a denial. A matching deny rule still denies first.
//!
//! This module only recognises the removal; the decision order lives in `decision.rs`. Every
//! spelling deny rules see is read (behind `sudo`, `xargs`, `find -exec`, inside `$(...)`,
//! backticks and `<(...)`), so a wrapper cannot hide the removal.

use std::path::{Component, Path, PathBuf};

use super::shell::ShellWord;
use super::target::{CommandTarget, PathCandidates};

/// Where the critical directories of a call are.
pub struct Roots<'a> {
    /// The workspace: it and every directory above it are critical.
    pub workspace: &'a Path,
    /// The user's home directory.
    pub home: Option<&'a Path>,
    /// The additional directories: each and every directory above it are critical.
    pub additional: &'a [PathBuf],
}

/// A removal no rule, hook or mode may approve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriticalRemoval {
    /// The operand as written (quotes removed).
    pub operand: String,
    /// What it is, in words: "the filesystem root", "the workspace", ...
    pub what: String,
}

/// The first critical removal in `command`, if any.
pub fn critical_removal(command: &CommandTarget, roots: &Roots<'_>) -> Option<CriticalRemoval> {
    let bases = command.run_directories();
    command
        .deny_forms()
        .filter(|form| {
            let program = form.words.first().map_or("", |word| word.text.as_str());
            matches!(program.rsplit('/').next(), Some("rm" | "rmdir"))
        })
        .flat_map(|form| operands(&form.words[1..]))
        .find_map(|operand| critical_operand(operand, &bases, roots))
}

/// The operands of an `rm`/`rmdir` argument list: words after `--`, and words not starting with
/// `-` before it.
fn operands(args: &[ShellWord]) -> Vec<&ShellWord> {
    let mut found = Vec::new();
    let mut options_done = false;
    for arg in args {
        if !options_done && arg.text == "--" {
            options_done = true;
        } else if options_done || !arg.text.starts_with('-') || arg.text == "-" {
            found.push(arg);
        }
    }
    found
}

fn critical_operand(
    word: &ShellWord,
    bases: &[PathBuf],
    roots: &Roots<'_>,
) -> Option<CriticalRemoval> {
    let found = |what: String| CriticalRemoval {
        operand: word.text.clone(),
        what,
    };
    if (word.tilde || !word.literal) && word.text.trim_end_matches('/') == "~+" {
        // bash expands an unquoted `~+` to `$PWD`.
        return Some(found("the working directory".to_owned()));
    }
    if !word.literal {
        return under_variable(&word.text).map(found);
    }
    // A glob removes what it matches: judge the directory the first globbed component lies in.
    let (directory, globbed) = match glob_parent(&word.text) {
        Some(parent) if word.glob => (parent, true),
        _ => (word.text.as_str(), false),
    };
    let directory = if directory.is_empty() { "." } else { directory };
    let bases: &[PathBuf] = if directory.starts_with('/') || word.tilde {
        &bases[..1]
    } else {
        bases
    };
    // The documented glob case is `rm -rf <dir>/*`: a glob that takes everything in a critical
    // directory. A narrower one (`rm *.o` in the workspace) is an ordinary removal, except under
    // an additional directory or a directory above one, where the docs name any glob.
    let takes_everything = globbed
        && glob_component(&word.text)
            .chars()
            .all(|c| matches!(c, '*' | '.'));
    bases.iter().find_map(|base| {
        let candidates = PathCandidates::new(directory, base, roots.home);
        candidates.all().find_map(|path| {
            let what = critical_directory(path, roots)?;
            if !globbed {
                return Some(found(what));
            }
            let above_additional = roots.additional.iter().any(|dir| dir.starts_with(path));
            (takes_everything || above_additional)
                .then(|| found(format!("a glob directly under {what}")))
        })
    })
}

/// The path component that holds the first glob character (`*.o` of `build/*.o/x`).
fn glob_component(text: &str) -> &str {
    let Some(at) = text.find(['*', '?', '[']) else {
        return "";
    };
    let start = text[..at].rfind('/').map_or(0, |slash| slash + 1);
    let end = text[at..].find('/').map_or(text.len(), |slash| at + slash);
    &text[start..end]
}

/// `$HOME` itself, or a glob or trailing slash directly under a variable (`$DIR/`, `${DIR}/*`):
/// with the variable empty or unset, the removal starts at `/`.
fn under_variable(text: &str) -> Option<String> {
    let rest = text.strip_prefix('$')?;
    let (name, after) = match rest.strip_prefix('{') {
        Some(braced) => {
            let end = braced.find('}')?;
            (&braced[..end], &braced[end + 1..])
        }
        None => {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    };
    if name.is_empty() {
        return None;
    }
    if after.trim_end_matches('/').is_empty() {
        match name {
            "HOME" => return Some("the home directory".to_owned()),
            // The shell's working directory: the workspace or a directory a `cd` chose.
            "PWD" => return Some("the working directory".to_owned()),
            _ => {}
        }
    }
    let tail = after.strip_prefix('/')?;
    if tail.is_empty() {
        return Some(format!(
            "a trailing slash directly under the variable ${name}"
        ));
    }
    (!tail.contains('/') && tail.contains(['*', '?', '[']))
        .then(|| format!("a glob directly under the variable ${name}"))
}

/// The directory part before the first component holding a glob character (`""` for a glob in
/// the first relative component, `/` for one right under the root).
fn glob_parent(text: &str) -> Option<&str> {
    let at = text.find(['*', '?', '['])?;
    match text[..at].rfind('/') {
        Some(0) => Some("/"),
        Some(slash) => Some(&text[..slash]),
        None => Some(""),
    }
}

/// What makes `path` (absolute, normalized) critical, if anything.
fn critical_directory(path: &Path, roots: &Roots<'_>) -> Option<String> {
    let normal = path
        .components()
        .filter(|part| matches!(part, Component::Normal(_)))
        .count();
    if normal == 0 {
        return Some("the filesystem root".to_owned());
    }
    if roots.home == Some(path) {
        return Some("the home directory".to_owned());
    }
    if normal == 1 {
        return Some(format!("the top-level directory {}", path.display()));
    }
    if roots.workspace == path {
        return Some("the workspace".to_owned());
    }
    if roots.workspace.starts_with(path) {
        return Some(format!(
            "{}, a directory above the workspace",
            path.display()
        ));
    }
    roots.additional.iter().find_map(|dir| {
        if dir == path {
            Some(format!("the additional directory {}", path.display()))
        } else {
            dir.starts_with(path).then(|| {
                format!(
                    "{}, a directory above the additional directory {}",
                    path.display(),
                    dir.display()
                )
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::decision_table;

    /// Every row of `critical.tsv` through the whole decision.
    #[test]
    fn critical_removals_table() {
        decision_table::run("critical.tsv", include_str!("critical.tsv"), 30);
    }

    /// A PreToolUse hook's allow does not approve a critical removal (PERM §How permissions are
    /// evaluated: hooks "cannot approve rm/rmdir of a critical path").
    #[test]
    fn a_hook_allow_does_not_approve_a_critical_removal() {
        use crate::decision::{DecisionInput, HookVote, VoteKind, decide};
        use crate::target::Target;
        use crate::{Policy, RuleContext, Verdict};
        let policy = Policy::new(RuleContext {
            cwd: "/ws/project".into(),
            home: Some("/home/u".into()),
        });
        let tool = decision_table::bash();
        let vote = HookVote {
            kind: VoteKind::Allow,
            hook: "guard".into(),
            reason: None,
        };
        for (command, verdict) in [("rm -rf ~", Verdict::Ask), ("rm -rf build", Verdict::Allow)] {
            let input = serde_json::json!({ "command": command });
            let target = Target::new(
                "Bash",
                Some("command"),
                false,
                &input,
                std::path::Path::new("/ws/project"),
                Some(std::path::Path::new("/home/u")),
            );
            let decision = decide(&DecisionInput {
                tool: &tool,
                target: &target,
                input: &input,
                within_grants: None,
                inside_workspace: None,
                reads_host_env: false,
                grants: String::new(),
                vote: Some(&vote),
                policy: &policy,
            });
            assert_eq!(decision.verdict, verdict, "{command}: {decision:?}");
        }
    }
}
