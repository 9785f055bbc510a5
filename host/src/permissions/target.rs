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
    Command(Box<CommandTarget>),
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
    /// A file a well-known program changes that is named by a pattern or expansion
    /// (`cp x $DIR/.git/config`).
    pub(crate) unresolved_program_write: Option<String>,
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
        let given = field.and_then(|field| input.get(field));
        if path_tool && given.is_none_or(Value::is_null) {
            // A path tool called without its path works on the working directory (Glob and
            // Grep without `path`), so rules judge that directory.
            return Target::Path(PathCandidates::new(".", cwd, home));
        }
        let Some(value) = given.and_then(Value::as_str) else {
            return Target::None;
        };
        if is_shell_tool(tool) || (field == Some("command") && !path_tool) {
            return Target::Command(Box::new(CommandTarget::new(value, cwd, home)));
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
    /// The directories relative names of the line may be read from: `workspace`, then every
    /// directory a `cd` of the line names (a subcommand may run after any of them).
    pub(crate) fn run_directories(&self, workspace: &Path) -> Vec<PathBuf> {
        std::iter::once(workspace.to_path_buf())
            .chain(
                self.cd_targets
                    .iter()
                    .flatten()
                    .map(|cd| cd.lexical.clone()),
            )
            .collect()
    }

    fn new(command: &str, cwd: &Path, home: Option<&Path>) -> Self {
        let parsed = shell::split(command);
        let forms: Vec<SubcommandForms> = parsed
            .subcommands
            .iter()
            .map(SubcommandForms::new)
            .collect();
        let mut files = Files::new(cwd, home);
        for (sub, sub_forms) in parsed.subcommands.iter().zip(&forms) {
            for redirect in &sub.redirects {
                if redirect.write {
                    files.write(&redirect.target);
                } else {
                    files.read(&redirect.target);
                }
            }
            // Every spelling deny rules see: behind wrappers (`command cat .env`), past
            // `sudo`, by base name.
            let mut destination = None;
            for form in &sub_forms.deny {
                if let Some(cd) = files.program(&form.words) {
                    destination.get_or_insert(cd);
                }
            }
            if let Some(cd) = destination {
                files.change_directory(cd);
            }
        }
        Self {
            forms,
            raw: command.trim().to_owned(),
            parsed,
            writes: files.writes,
            program_writes: files.program_writes,
            cd_targets: files.cd_targets,
            reads: files.reads,
            unresolved_write: files.unresolved_write,
            unresolved_read: files.unresolved_read,
            unresolved_program_write: files.unresolved_program_write,
        }
    }
}

/// The files a command line reads and writes, resolved against the directory each subcommand
/// runs in (a `cd` moves it; an unknown `cd` makes later relative paths unresolved).
struct Files<'a> {
    start: &'a Path,
    home: Option<&'a Path>,
    /// `None` after a `cd` to a place not known before running.
    current: Option<PathBuf>,
    writes: Vec<PathCandidates>,
    program_writes: Vec<PathCandidates>,
    reads: Vec<PathCandidates>,
    cd_targets: Vec<Option<PathCandidates>>,
    unresolved_write: Option<String>,
    unresolved_read: Option<String>,
    unresolved_program_write: Option<String>,
}

enum Access {
    Read,
    Write,
    ProgramWrite,
}

impl<'a> Files<'a> {
    fn new(start: &'a Path, home: Option<&'a Path>) -> Self {
        Self {
            start,
            home,
            current: Some(start.to_path_buf()),
            writes: Vec::new(),
            program_writes: Vec::new(),
            reads: Vec::new(),
            cd_targets: Vec::new(),
            unresolved_write: None,
            unresolved_read: None,
            unresolved_program_write: None,
        }
    }

    fn read(&mut self, word: &ShellWord) {
        self.add(word, Access::Read);
    }

    fn write(&mut self, word: &ShellWord) {
        if word.literal && word.text == "/dev/null" {
            return;
        }
        self.add(word, Access::Write);
    }

    /// Records `word` in every spelling: relative paths against the starting directory and the
    /// current one (a subshell's `cd` may or may not still apply).
    fn add(&mut self, word: &ShellWord, access: Access) {
        let absolute = word.text.starts_with('/') || word.tilde;
        // A redirect to `~...` asks, as in Claude Code; elsewhere `~` expands with $HOME.
        let unresolved = !word.literal
            || word.glob
            || (word.tilde && (self.home.is_none() || matches!(access, Access::Write)));
        let unknown_directory = !absolute && self.current.is_none();
        if unresolved || unknown_directory {
            let slot = match access {
                Access::Read => &mut self.unresolved_read,
                Access::Write => &mut self.unresolved_write,
                Access::ProgramWrite => &mut self.unresolved_program_write,
            };
            slot.get_or_insert_with(|| word.text.clone());
            return;
        }
        let mut bases = vec![self.start.to_path_buf()];
        if let Some(current) = &self.current
            && current.as_path() != self.start
            && !absolute
        {
            bases.push(current.clone());
        }
        for base in bases {
            let candidates = PathCandidates::new(&word.text, &base, self.home);
            let list = match access {
                Access::Read => &mut self.reads,
                Access::Write => &mut self.writes,
                Access::ProgramWrite => &mut self.program_writes,
            };
            if !list.contains(&candidates) {
                list.push(candidates);
            }
        }
    }

    /// Reads what one spelling of a subcommand reads and changes; returns where a `cd` goes.
    fn program(&mut self, words: &[ShellWord]) -> Option<Option<PathCandidates>> {
        let (program, args) = words.split_first()?;
        let base = program.text.rsplit('/').next().unwrap_or_default();
        let operands: Vec<&ShellWord> = args
            .iter()
            .filter(|word| !word.text.starts_with('-'))
            .collect();
        let valued = |flag: &str| -> Vec<&ShellWord> {
            args.iter()
                .enumerate()
                .filter_map(|(at, word)| (word.text == flag).then(|| args.get(at + 1)).flatten())
                .collect()
        };
        if FILE_READERS.contains(&base) {
            for word in &operands {
                self.read(word);
            }
        } else if PATTERN_FIRST_READERS.contains(&base) {
            let explicit_pattern = args.iter().any(|word| {
                matches!(word.text.as_str(), "-e" | "-f" | "--file")
                    || word.text.starts_with("--regexp")
                    || word.text.starts_with("--file=")
                    || (word.text.starts_with("-e") && !word.text.starts_with("--"))
            });
            let skip = usize::from(!explicit_pattern);
            for word in operands.iter().skip(skip) {
                self.read(word);
            }
            let recursive = base == "rg"
                || args.iter().any(|word| {
                    word.text == "--recursive"
                        || (!word.text.starts_with("--")
                            && word.text.starts_with('-')
                            && word.text.contains(['r', 'R']))
                });
            if recursive {
                // A directory search reads every file below it.
                self.unresolved_read
                    .get_or_insert_with(|| format!("a recursive {base}"));
            }
        }
        let mut changed: Vec<&ShellWord> = match base {
            "tee" | "touch" | "truncate" | "rm" | "rmdir" | "unlink" | "shred" | "mkdir"
            | "chmod" | "chown" => operands.clone(),
            "cp" | "mv" | "ln" | "install" | "rsync" => {
                let mut targets = valued("-t");
                targets.extend(
                    args.iter()
                        .filter(|word| word.text.starts_with("--target-directory=")),
                );
                if targets.is_empty() {
                    operands.last().copied().into_iter().collect()
                } else {
                    targets
                }
            }
            "sed" => {
                let in_place = args.iter().any(|word| {
                    word.text.starts_with("--in-place")
                        || (!word.text.starts_with("--")
                            && word.text.starts_with('-')
                            && word.text.contains('i'))
                });
                if in_place {
                    operands.iter().copied().skip(1).collect()
                } else {
                    Vec::new()
                }
            }
            "sort" => valued("-o"),
            "uniq" => operands.get(1).copied().into_iter().collect(),
            "find" => ["-fprint", "-fprint0", "-fprintf", "-fls"]
                .into_iter()
                .flat_map(valued)
                .collect(),
            _ => Vec::new(),
        };
        // `--output=F` (sort, git log/diff, curl), `-oF` (sort), `of=F` (dd).
        let spelled: Vec<ShellWord> = args
            .iter()
            .filter_map(|word| {
                let path = word
                    .text
                    .strip_prefix("--output=")
                    .or_else(|| {
                        (base == "sort")
                            .then(|| word.text.strip_prefix("-o"))
                            .flatten()
                    })
                    .or_else(|| {
                        (base == "dd")
                            .then(|| word.text.strip_prefix("of="))
                            .flatten()
                    })?;
                (!path.is_empty()).then(|| ShellWord {
                    text: path.to_owned(),
                    ..word.clone()
                })
            })
            .collect();
        changed.extend(spelled.iter());
        for word in changed {
            self.add(word, Access::ProgramWrite);
        }
        if !matches!(base, "cd" | "pushd") {
            return None;
        }
        let destination = match operands.first() {
            None => self
                .home
                .map(|dir| PathCandidates::new(&dir.to_string_lossy(), self.start, self.home)),
            Some(word) if word.literal && !word.glob && word.text != "-" => self
                .current
                .as_ref()
                .map(|current| PathCandidates::new(&word.text, current, self.home)),
            Some(_) => None,
        };
        Some(destination)
    }

    fn change_directory(&mut self, destination: Option<PathCandidates>) {
        self.current = destination.as_ref().map(|path| path.lexical.clone());
        self.cd_targets.push(destination);
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
