//! What a call presents to rules: a split command line, a path (as spelled and as the filesystem
//! resolves it), a URL's host, or the tool's rule-field value. This is the one place the decision
//! touches the disk, and only to resolve symlinks.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::bash::SubcommandForms;
use super::paths::normalize;
use super::rules::{Family, is_shell_tool, is_url_tool};
use super::shell::{self, ShellCommand, ShellWord};
use janua_types::url_host;

/// What rules are matched against for one call.
#[derive(Debug, Clone)]
pub enum Target {
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
pub struct CommandTarget {
    /// The split command.
    pub parsed: ShellCommand,
    /// Each subcommand's forms, in the order of `parsed.subcommands`.
    pub forms: Vec<SubcommandForms>,
    /// The command line as given, trimmed: deny patterns also see what the parser could not
    /// split.
    pub raw: String,
    /// Files written through redirections.
    pub writes: Vec<PathCandidates>,
    /// Files well-known programs change (`tee`, `cp`/`mv` destinations, `rm`, `sed -i`, ...):
    /// Edit deny rules and protected paths see them; allow rules do not require them, as in
    /// Claude Code, where `Bash(rm *)` needs no Edit rule.
    pub program_writes: Vec<PathCandidates>,
    /// Files read through `<` or by well-known file readers (`cat`, `head`, ...).
    pub reads: Vec<PathCandidates>,
    /// A write target that cannot be resolved before running (`> $F`, `> ~/x`, `> *.log`).
    pub unresolved_write: Option<String>,
    /// Where each `cd`/`pushd` goes (`None`: somewhere not known before it runs, such as `cd -`
    /// or `cd $DIR`). Leaving the workspace makes the later commands run elsewhere (a `git` there
    /// runs that repository's hooks and pager), so pattern rules do not allow it.
    pub cd_targets: Vec<Option<PathCandidates>>,
    /// A file a well-known program changes that is named by a pattern or expansion
    /// (`cp x $DIR/.git/config`).
    pub unresolved_program_write: Option<String>,
    /// A file a reader names by a pattern or expansion (`cat .en?`, `cat $F`), which Read deny
    /// rules cannot check before it runs.
    pub unresolved_read: Option<String>,
    /// The directory the line starts in: the session shell's, which an earlier call's `cd` may
    /// have moved from the workspace root.
    pub start: PathBuf,
}

/// One path in every spelling rules must consider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathCandidates {
    /// `..`, `.` and duplicate slashes resolved lexically.
    pub lexical: PathBuf,
    /// Symlinks resolved (for the longest existing prefix), `..` taken after each link as the
    /// kernel takes it.
    pub physical: PathBuf,
    /// True when the path as given climbs with `..`: allow rules never match such a path, so
    /// `docs/../.git/x` cannot ride on an allow rule for `docs/**`.
    pub climbs: bool,
}

impl PathCandidates {
    /// Candidates for `raw` relative to `cwd` (`~/` expanded with `home`).
    pub fn new(raw: &str, cwd: &Path, home: Option<&Path>) -> Self {
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
    pub fn all(&self) -> impl Iterator<Item = &Path> {
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

/// True for a `cd` operand that `CDPATH` and `cdable_vars` never redirect: absolute, or
/// starting with `.` or `..`.
fn explicitly_relative(text: &str) -> bool {
    text.starts_with('/')
        || text == "."
        || text == ".."
        || text.starts_with("./")
        || text.starts_with("../")
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
    /// The target of a call to `tool` whose rule field is `field` (read from `input`), with
    /// relative names read from `cwd`.
    pub fn new(
        tool: &str,
        field: Option<&str>,
        path_tool: bool,
        input: &Value,
        cwd: &Path,
        home: Option<&Path>,
    ) -> Self {
        Self::in_directories(tool, field, path_tool, input, (cwd, cwd), home)
    }

    /// [`Target::new`] with two directories `(workspace, shell)`: paths are read from the
    /// workspace, a command line from the session shell's directory, where it runs.
    pub fn in_directories(
        tool: &str,
        field: Option<&str>,
        path_tool: bool,
        input: &Value,
        (cwd, shell): (&Path, &Path),
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
            return Target::Command(Box::new(CommandTarget::new(value, shell, home)));
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
    /// The directories relative names of the line may be read from: where it starts, then every
    /// directory a `cd` (or `git -C`, `env -C`, ...) of the line names (a subcommand may run after
    /// any of them).
    pub fn run_directories(&self) -> Vec<PathBuf> {
        std::iter::once(self.start.clone())
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
            if sets_cd_search(sub) {
                files.cd_searches = true;
            }
            for redirect in &sub.redirects {
                if redirect.write {
                    files.write(&redirect.target);
                } else {
                    files.read(&redirect.target);
                }
            }
            // A program told to run elsewhere (`git -C DIR`, `env -C DIR`, `make -C`, `tar -C`):
            // its relative names are read from a directory only known for certain when it runs.
            let elsewhere = sub_forms
                .deny
                .iter()
                .find_map(|form| files.program_directory(&form.words));
            let resumed = elsewhere.map(|destination| {
                files.cd_targets.push(destination);
                files.current.take()
            });
            // Every spelling deny rules see: behind wrappers (`command cat .env`), past
            // `sudo`, by base name.
            let mut destination = None;
            for form in &sub_forms.deny {
                if let Some(cd) = files.program(&form.words) {
                    destination.get_or_insert(cd);
                }
            }
            if let Some(current) = resumed {
                files.current = current;
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
            start: cwd.to_path_buf(),
        }
    }
}

/// True when `sub` sets `CDPATH` or turns on `cdable_vars`: a later `cd NAME` may then go to a
/// directory found by a search only the running shell knows. (The sandbox's environment never
/// inherits `CDPATH`, so only the line itself can set it.)
fn sets_cd_search(sub: &super::shell::Subcommand) -> bool {
    sub.assignments.iter().any(|name| name == "CDPATH")
        || sub.words.iter().any(|word| {
            word.text == "CDPATH" || word.text.starts_with("CDPATH=") || word.text == "cdable_vars"
        })
}

/// The directory option of a program that runs in another directory than the shell's: `env -C
/// DIR`/`--chdir`, `git -C DIR` (before its subcommand), `make -C DIR`/`--directory`, `tar -C
/// DIR`/`--directory`. `None` when the program has none; `Some(None)` when its value is not one
/// plain word (several options add up or apply by position, so they count as unknown too).
fn directory_option(base: &str, args: &[ShellWord]) -> Option<Option<ShellWord>> {
    // Programs whose options end at the first operand, with their options that take a value.
    let leading: Option<&[&str]> = match base {
        "env" => Some(&["-C", "--chdir", "-u", "--unset", "-S", "--split-string"]),
        "git" => Some(&[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--config-env",
        ]),
        "make" | "gmake" | "tar" => None,
        _ => return None,
    };
    let long = match base {
        "env" => "--chdir",
        "git" => "",
        _ => "--directory",
    };
    let mut found: Option<Option<ShellWord>> = None;
    for (at, word) in args.iter().enumerate() {
        let text = word.text.as_str();
        if let Some(valued) = leading
            && !text.starts_with('-')
        {
            // `git log -C` (copy detection) and the command `env` runs are not the option.
            if at > 0 && valued.contains(&args[at - 1].text.as_str()) {
                continue;
            }
            break;
        }
        let spelled = |value: &str| ShellWord {
            text: value.to_owned(),
            ..word.clone()
        };
        let value = if text == "-C" || (!long.is_empty() && text == long) {
            Some(args.get(at + 1).cloned())
        } else if let Some(value) = (!long.is_empty())
            .then(|| text.strip_prefix(long)?.strip_prefix('='))
            .flatten()
        {
            Some(Some(spelled(value)))
        } else if let Some(value) = text.strip_prefix("-C").filter(|value| !value.is_empty()) {
            Some(Some(spelled(value)))
        } else if base == "tar"
            && !text.starts_with("--")
            && text.starts_with('-')
            && text.contains('C')
        {
            // A bundle such as `-xzC DIR`.
            Some(args.get(at + 1).cloned())
        } else {
            None
        };
        if let Some(value) = value {
            if found.is_some() {
                return Some(None);
            }
            found = Some(value);
        }
    }
    found
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
    /// `CDPATH` or `cdable_vars` is in effect: `cd NAME` may go somewhere else than `./NAME`.
    cd_searches: bool,
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
            cd_searches: false,
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
        match base {
            "cd" => {}
            // The directory stack, `+N` rotations and `popd`'s return are the running shell's.
            "pushd" | "popd" => return Some(None),
            _ => return None,
        }
        let destination = match operands.first() {
            None => self
                .home
                .map(|dir| PathCandidates::new(&dir.to_string_lossy(), self.start, self.home)),
            Some(word) if self.cd_searches && !explicitly_relative(&word.text) => None,
            Some(word) if word.literal && !word.glob && word.text != "-" => self
                .current
                .as_ref()
                .map(|current| PathCandidates::new(&word.text, current, self.home)),
            Some(_) => None,
        };
        Some(destination)
    }

    /// Where a program told to run in another directory runs (`git -C DIR`, ...): `Some(None)`
    /// when that directory is not known before it runs; `None` for other programs.
    fn program_directory(&self, words: &[ShellWord]) -> Option<Option<PathCandidates>> {
        let (program, args) = words.split_first()?;
        let base = program.text.rsplit('/').next().unwrap_or_default();
        let value = directory_option(base, args)?;
        Some(value.and_then(|word| {
            let current = self.current.as_ref()?;
            (word.literal && !word.glob && !word.tilde)
                .then(|| PathCandidates::new(&word.text, current, self.home))
        }))
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
