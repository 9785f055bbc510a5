//! What a call presents to rules: a split command line, a path (as spelled and as the filesystem
//! resolves it), a URL's host, or the tool's rule-field value. This is the one place the decision
//! touches the disk, and only to resolve symlinks.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::bash::SubcommandForms;
use super::domain::url_host;
use super::paths::normalize;
use super::rules::{Family, is_shell_tool, is_url_tool};
use super::shell::{self, ShellCommand, ShellWord};

/// What rules are matched against for one call.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// The tool has no rule field, or the call left it out.
    None,
    /// A shell command line.
    Command(CommandTarget),
    /// A file path.
    Path(PathCandidates),
    /// A URL.
    Url {
        /// The URL as given.
        url: String,
        /// Its host, when it has one.
        host: Option<String>,
    },
    /// Any other rule-field value.
    Field(String),
}

/// A command line with the files it redirects into and reads.
#[derive(Debug, Clone)]
pub(crate) struct CommandTarget {
    /// The split command.
    pub(crate) parsed: ShellCommand,
    /// Each subcommand's forms, in the order of `parsed.subcommands`.
    pub(crate) forms: Vec<SubcommandForms>,
    /// The command line as given, trimmed: deny patterns also see what the parser could not
    /// split.
    pub(crate) raw: String,
    /// Files written through redirections.
    pub(crate) writes: Vec<PathCandidates>,
    /// Files well-known programs change (`tee`, `cp`/`mv` destinations, `rm`, `sed -i`, ...):
    /// Edit deny rules and protected paths see them; allow rules do not require them, as in
    /// Claude Code, where `Bash(rm *)` needs no Edit rule.
    pub(crate) program_writes: Vec<PathCandidates>,
    /// Files read through `<` or by well-known file readers (`cat`, `head`, ...).
    pub(crate) reads: Vec<PathCandidates>,
    /// A write target that cannot be resolved before running (`> $F`, `> ~/x`, `> *.log`).
    pub(crate) unresolved_write: Option<String>,
    /// Where each `cd`/`pushd` goes (`None`: somewhere not known before it runs, such as `cd -`
    /// or `cd $DIR`). Leaving the workspace makes the later commands run elsewhere (a `git` there
    /// runs that repository's hooks and pager), so pattern rules do not allow it.
    pub(crate) cd_targets: Vec<Option<PathCandidates>>,
    /// A file a reader names by a pattern or expansion (`cat .en?`, `cat $F`), which Read deny
    /// rules cannot check before it runs.
    pub(crate) unresolved_read: Option<String>,
}

/// One path in every spelling rules must consider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathCandidates {
    /// `..`, `.` and duplicate slashes resolved lexically.
    pub(crate) lexical: PathBuf,
    /// Symlinks resolved (for the longest existing prefix), `..` taken after each link as the
    /// kernel takes it.
    pub(crate) physical: PathBuf,
    /// True when the path as given climbs with `..`: allow rules never match such a path, so
    /// `docs/../.git/x` cannot ride on an allow rule for `docs/**`.
    pub(crate) climbs: bool,
}

impl PathCandidates {
    /// Candidates for `raw` relative to `cwd` (`~/` expanded with `home`).
    pub(crate) fn new(raw: &str, cwd: &Path, home: Option<&Path>) -> Self {
        let expanded = match (raw.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest).to_string_lossy().into_owned(),
            _ if raw == "~" => home.map_or_else(
                || raw.to_owned(),
                |home| home.to_string_lossy().into_owned(),
            ),
            _ => raw.to_owned(),
        };
        let lexical = normalize(cwd, &expanded);
        let joined = if Path::new(&expanded).is_absolute() {
            PathBuf::from(&expanded)
        } else {
            cwd.join(&expanded)
        };
        Self {
            physical: resolve(&joined),
            climbs: Path::new(&expanded)
                .components()
                .any(|part| part == Component::ParentDir),
            lexical,
        }
    }

    /// Every distinct spelling.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Path> {
        let physical = (self.physical != self.lexical).then_some(self.physical.as_path());
        std::iter::once(self.lexical.as_path()).chain(physical)
    }
}

/// `path` (absolute) with every symlink on it resolved, one component at a time as the kernel
/// does, `..` taken after each link. A link whose target does not exist yet is still followed, so
/// a write through a dangling link is judged by where it lands. Missing components are appended
/// lexically; more than 40 links (a loop) falls back to the lexical path.
fn resolve(path: &Path) -> PathBuf {
    let mut pending: Vec<std::ffi::OsString> = Vec::new();
    push_components(&mut pending, path);
    let mut current = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            current.pop();
            continue;
        }
        if part == "." || part.is_empty() {
            continue;
        }
        let candidate = current.join(&part);
        let is_link =
            std::fs::symlink_metadata(&candidate).is_ok_and(|meta| meta.file_type().is_symlink());
        if !is_link {
            current = candidate;
            continue;
        }
        links += 1;
        if links > 40 {
            return normalize(Path::new("/"), &path.to_string_lossy());
        }
        match std::fs::read_link(&candidate) {
            Ok(target) => {
                if target.is_absolute() {
                    current = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
            Err(_) => current = candidate,
        }
    }
    current
}

/// Pushes `path`'s components onto `stack` so that they pop in order.
fn push_components(stack: &mut Vec<std::ffi::OsString>, path: &Path) {
    for part in path.components().rev() {
        match part {
            Component::Normal(name) => stack.push(name.to_owned()),
            Component::ParentDir => stack.push("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

/// Programs whose operands are files they read, so Read deny rules see them too. (For `grep`,
/// `sed` and `awk` the first operand is a pattern or script.)
const FILE_READERS: &[&str] = &[
    "cat", "head", "tail", "less", "more", "nl", "od", "xxd", "hexdump", "strings", "base64", "wc",
    "sort", "uniq", "cut", "tac", "file", "stat", "diff", "cmp", "cp", "source", ".",
];
const PATTERN_FIRST_READERS: &[&str] = &["grep", "egrep", "fgrep", "rg", "sed", "awk"];

impl Target {
    /// The target of a call to `tool` whose rule field is `field` (read from `input`).
    pub(crate) fn new(
        tool: &str,
        field: Option<&str>,
        path_tool: bool,
        input: &Value,
        cwd: &Path,
        home: Option<&Path>,
    ) -> Self {
        let Some(value) = field
            .and_then(|field| input.get(field))
            .and_then(Value::as_str)
        else {
            return Target::None;
        };
        if is_shell_tool(tool) || (field == Some("command") && !path_tool) {
            return Target::Command(CommandTarget::new(value, cwd, home));
        }
        if path_tool || Family::of(tool).is_some() {
            return Target::Path(PathCandidates::new(value, cwd, home));
        }
        if is_url_tool(tool) || field == Some("url") {
            return Target::Url {
                url: value.to_owned(),
                host: url_host(value),
            };
        }
        Target::Field(value.to_owned())
    }
}

impl CommandTarget {
    fn new(command: &str, cwd: &Path, home: Option<&Path>) -> Self {
        let parsed = shell::split(command);
        let forms = parsed
            .subcommands
            .iter()
            .map(SubcommandForms::new)
            .collect();
        let mut target = Self {
            forms,
            raw: command.trim().to_owned(),
            parsed,
            writes: Vec::new(),
            program_writes: Vec::new(),
            cd_targets: Vec::new(),
            reads: Vec::new(),
            unresolved_write: None,
            unresolved_read: None,
        };
        let mut reads: Vec<&ShellWord> = Vec::new();
        let mut writes: Vec<&ShellWord> = Vec::new();
        let mut program_writes: Vec<&ShellWord> = Vec::new();
        let mut cd_targets = Vec::new();
        for sub in &target.parsed.subcommands {
            for redirect in &sub.redirects {
                if redirect.write {
                    writes.push(&redirect.target);
                } else {
                    reads.push(&redirect.target);
                }
            }
            let Some((program, args)) = sub.words.split_first() else {
                continue;
            };
            let base = program.text.rsplit('/').next().unwrap_or_default();
            let operands: Vec<&ShellWord> = args
                .iter()
                .filter(|word| !word.text.starts_with('-'))
                .collect();
            if FILE_READERS.contains(&base) {
                reads.extend(operands.iter().copied());
            } else if PATTERN_FIRST_READERS.contains(&base) {
                reads.extend(operands.iter().copied().skip(1));
            }
            if matches!(base, "cd" | "pushd") {
                let destination = match operands.first() {
                    None => home.map(|dir| PathCandidates::new(&dir.to_string_lossy(), cwd, home)),
                    Some(word) if word.literal && !word.glob && word.text != "-" => {
                        Some(PathCandidates::new(&word.text, cwd, home))
                    }
                    Some(_) => None,
                };
                cd_targets.push(destination);
            }
            let changed: Vec<&ShellWord> = match base {
                "tee" | "touch" | "truncate" | "rm" | "rmdir" | "unlink" | "shred" | "mkdir"
                | "chmod" | "chown" => operands.clone(),
                "cp" | "mv" | "ln" | "install" | "rsync" => {
                    operands.last().copied().into_iter().collect()
                }
                "sed" if args.iter().any(|word| word.text.starts_with("-i")) => {
                    operands.iter().copied().skip(1).collect()
                }
                _ => Vec::new(),
            };
            program_writes.extend(changed);
        }
        let mut unresolved = None;
        let mut resolved_writes = Vec::new();
        for word in writes {
            if word.literal && word.text == "/dev/null" {
                continue;
            }
            if !word.literal || word.glob || word.tilde {
                unresolved.get_or_insert_with(|| word.text.clone());
                continue;
            }
            resolved_writes.push(PathCandidates::new(&word.text, cwd, home));
        }
        target.cd_targets = cd_targets;
        target.program_writes = program_writes
            .into_iter()
            .filter(|word| word.literal && !word.glob && word.text != "/dev/null")
            .map(|word| PathCandidates::new(&word.text, cwd, home))
            .collect();
        let mut unresolved_read = None;
        let mut resolved_reads = Vec::new();
        for word in reads {
            if word.literal && !word.glob {
                resolved_reads.push(PathCandidates::new(&word.text, cwd, home));
            } else {
                unresolved_read.get_or_insert_with(|| word.text.clone());
            }
        }
        target.unresolved_read = unresolved_read;
        target.writes = resolved_writes;
        target.reads = resolved_reads;
        target.unresolved_write = unresolved;
        target
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_targets_collect_redirects_and_reads() {
        let cwd = Path::new("/ws");
        let target = CommandTarget::new(
            "cat .env secret.txt > out.txt 2>/dev/null; grep -r key config.toml < in.txt",
            cwd,
            None,
        );
        let writes: Vec<&Path> = target.writes.iter().map(|p| p.lexical.as_path()).collect();
        assert_eq!(writes, [Path::new("/ws/out.txt")]);
        let reads: Vec<&Path> = target.reads.iter().map(|p| p.lexical.as_path()).collect();
        assert_eq!(
            reads,
            [
                Path::new("/ws/.env"),
                Path::new("/ws/secret.txt"),
                Path::new("/ws/in.txt"),
                Path::new("/ws/config.toml"),
            ]
        );
        assert_eq!(target.unresolved_write, None);
        for command in ["echo x > $OUT", "echo x > ~/x", "echo x > *.log"] {
            assert!(
                CommandTarget::new(command, cwd, None)
                    .unresolved_write
                    .is_some(),
                "{command}"
            );
        }
    }

    #[test]
    fn dangling_links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink("../.git/hooks/pre-commit", root.join("src/evil")).unwrap();
        let candidates = PathCandidates::new("src/evil", &root, None);
        assert_eq!(candidates.physical, root.join(".git/hooks/pre-commit"));
        std::os::unix::fs::symlink("loop2", root.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", root.join("loop2")).unwrap();
        assert_eq!(
            PathCandidates::new("loop1/x", &root, None).physical,
            root.join("loop1/x")
        );
        let target = CommandTarget::new("cat .en? $F", &root, None);
        assert_eq!(target.unresolved_read.as_deref(), Some(".en?"));
    }

    #[test]
    fn physical_paths_follow_links_for_missing_files_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        let candidates = PathCandidates::new("link/new.txt", &root, None);
        assert_eq!(candidates.lexical, root.join("link/new.txt"));
        assert_eq!(candidates.physical, root.join("real/new.txt"));
        assert!(!candidates.climbs);
        assert!(PathCandidates::new("a/../b", &root, None).climbs);
    }
}
