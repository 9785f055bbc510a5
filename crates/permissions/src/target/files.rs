//! The files a command line reads and writes, placed in the directory each subcommand runs in:
//! redirects, the operands of well-known readers and writers, option values that name files,
//! directories programs walk, `cd` and `-C DIR`. What cannot be placed becomes an unknown part
//! (`unknown.rs`).

use std::path::{Path, PathBuf};

use super::candidates::PathCandidates;
use crate::programs::git_subcommand;
use crate::shell::ShellWord;
use crate::unknown::{Scope, Unknown};

/// Programs whose operands are files they read, so Read deny rules see them too. (For `grep`,
/// `sed` and `awk` the first operand is a pattern or script.)
const FILE_READERS: &[&str] = &[
    "cat", "head", "tail", "less", "more", "nl", "od", "xxd", "hexdump", "strings", "base64", "wc",
    "sort", "uniq", "cut", "tac", "file", "stat", "diff", "cmp", "cp", "source", ".",
];
const PATTERN_FIRST_READERS: &[&str] = &["grep", "egrep", "fgrep", "rg", "sed", "awk"];

/// Programs whose operands are never files they read (builtins, messages, numbers, processes),
/// or which the lists above or `trees` already read. Every other program may read a file any of
/// its words names (`base32 .env`, `jq . .env`, `openvpn --config .env`, `as @.env`): Read deny
/// and ask rules see those words as reads.
const NO_FILE_OPERANDS: &[&str] = &[
    "echo", "printf", "seq", "sleep", "kill", "pkill", "killall", "true", "false", "test", "[",
    "expr", "basename", "dirname", "id", "whoami", "which", "type", "hash", "alias", "unalias",
    "export", "declare", "typeset", "local", "readonly", "read", "set", "unset", "shift", "exit",
    "return", "trap", "wait", "jobs", "bg", "fg", "umask", "ulimit", "yes", "tput", "stty", "cd",
    "pushd", "popd", "mkdir", "touch", "rm", "rmdir", "unlink", "chmod", "chown", "chgrp", "ln",
    "mv", "tee", "truncate", "shred", "timeout", "nice", "nohup", "time", "command", "builtin",
    "exec", "sudo", "env", "xargs", "eval", "source", ".",
];

/// True for a `cd` operand that `CDPATH` and `cdable_vars` never redirect: absolute, or
/// starting with `.` or `..`.
fn explicitly_relative(text: &str) -> bool {
    text.starts_with('/')
        || text == "."
        || text == ".."
        || text.starts_with("./")
        || text.starts_with("../")
}

/// True when `sub` sets `CDPATH` or turns on `cdable_vars`: a later `cd NAME` may then go to a
/// directory found by a search only the running shell knows. (The sandbox's environment never
/// inherits `CDPATH`, so only the line itself can set it.)
pub(super) fn sets_cd_search(sub: &crate::shell::Subcommand) -> bool {
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

/// The values of the long option `long` (`--target-directory`) in `args`, spelled whole or as
/// any prefix GNU getopt accepts (`--target`, `--ta`), with `=VALUE` or the next word. A prefix
/// another option shares is read as this one too: the stricter reading.
fn long_values(args: &[ShellWord], long: &str) -> Vec<ShellWord> {
    let mut values = Vec::new();
    for (at, word) in args.iter().enumerate() {
        let Some(given) = word.text.strip_prefix("--") else {
            continue;
        };
        let (name, value) = match given.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (given, None),
        };
        if name.is_empty() || !long.trim_start_matches('-').starts_with(name) {
            continue;
        }
        match value {
            Some(value) => values.push(ShellWord {
                text: value.to_owned(),
                ..word.clone()
            }),
            None => values.extend(args.get(at + 1).cloned()),
        }
    }
    values
}

/// What a `git` subcommand reads of the work tree beyond its operands: everything for `add -A`,
/// `add .`, `commit -a`, `grep` (`--no-index` too) and `stash`.
fn git_reads(args: &[ShellWord], here: &ShellWord) -> Vec<ShellWord> {
    let (subcommand, rest) = git_subcommand(args);
    let has = |flags: &[&str]| rest.iter().any(|word| flags.contains(&word.text.as_str()));
    match subcommand {
        Some("add") if has(&["-A", "--all", ".", "-u", "--update"]) => vec![here.clone()],
        Some("commit") if has(&["-a", "--all", "-am"]) => vec![here.clone()],
        Some("grep" | "stash") => vec![here.clone()],
        _ => Vec::new(),
    }
}

/// What a `git` subcommand changes in the work tree: the paths `rm` and `mv` name, the paths
/// `checkout`/`restore` name (the whole tree when `checkout` switches branches), the whole tree
/// for `clean` and `reset --hard`.
fn git_changes(args: &[ShellWord], here: &ShellWord) -> Vec<ShellWord> {
    let (Some(subcommand), rest) = git_subcommand(args) else {
        return Vec::new();
    };
    let rest: Vec<&ShellWord> = rest.iter().collect();
    let after_dashes: Option<Vec<ShellWord>> = rest
        .iter()
        .position(|word| word.text == "--")
        .map(|at| rest[at + 1..].iter().map(|word| (*word).clone()).collect());
    let operands: Vec<ShellWord> = rest
        .iter()
        .filter(|word| !word.text.starts_with('-'))
        .map(|word| (*word).clone())
        .collect();
    match subcommand {
        "rm" | "mv" => operands,
        "restore" => after_dashes.unwrap_or(operands),
        "checkout" => {
            if let Some(paths) = after_dashes {
                paths
            } else if rest
                .iter()
                .any(|word| matches!(word.text.as_str(), "-b" | "-B" | "--orphan"))
            {
                Vec::new()
            } else if operands.len() > 1 {
                operands[1..].to_vec()
            } else {
                vec![here.clone()]
            }
        }
        "clean" | "stash" | "checkout-index" => vec![here.clone()],
        // `git init DIR`, `git archive -o FILE`, `git bundle create FILE`, `git format-patch -o DIR`.
        "init" => operands.first().cloned().into_iter().collect(),
        "archive" | "format-patch" => {
            let mut written = Vec::new();
            for (at, word) in rest.iter().enumerate() {
                if matches!(word.text.as_str(), "-o" | "--output" | "--output-directory") {
                    written.extend(rest.get(at + 1).map(|word| (*word).clone()));
                } else if let Some(value) = word
                    .text
                    .strip_prefix("--output=")
                    .or_else(|| word.text.strip_prefix("--output-directory="))
                {
                    written.push(ShellWord {
                        text: value.to_owned(),
                        ..(*word).clone()
                    });
                }
            }
            written
        }
        "bundle" if operands.first().is_some_and(|word| word.text == "create") => {
            operands.get(1).cloned().into_iter().collect()
        }
        "reset" if rest.iter().any(|word| word.text == "--hard") => vec![here.clone()],
        _ => Vec::new(),
    }
}

/// The files a command line reads and writes, resolved against the directory each subcommand
/// runs in (a `cd` moves it; an unknown `cd` makes later relative paths unresolved).
pub(super) struct Files<'a> {
    pub(super) start: &'a Path,
    pub(super) home: Option<&'a Path>,
    /// `None` after a `cd` to a place not known before running.
    pub(super) current: Option<PathBuf>,
    pub(super) writes: Vec<PathCandidates>,
    pub(super) program_writes: Vec<PathCandidates>,
    pub(super) reads: Vec<PathCandidates>,
    pub(super) cd_targets: Vec<Option<PathCandidates>>,
    pub(super) unresolved_write: Option<String>,
    pub(super) unresolved_read: Option<String>,
    pub(super) unresolved_program_write: Option<String>,
    /// `CDPATH` or `cdable_vars` is in effect: `cd NAME` may go somewhere else than `./NAME`.
    pub(super) cd_searches: bool,
    /// Files named by a pattern or expansion, and directories a program walks.
    pub(super) unknown: Vec<Unknown>,
    /// Where the current subcommand was started (before a `-C DIR` of its own moved it).
    pub(super) launched: Option<PathBuf>,
}

pub(super) enum Access {
    Read,
    Write,
    ProgramWrite,
}

impl<'a> Files<'a> {
    pub(super) fn new(start: &'a Path, home: Option<&'a Path>) -> Self {
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
            unknown: Vec::new(),
            launched: Some(start.to_path_buf()),
        }
    }

    pub(super) fn read(&mut self, word: &ShellWord) {
        self.add(word, Access::Read);
    }

    pub(super) fn write(&mut self, word: &ShellWord) {
        if word.literal && word.text == "/dev/null" {
            return;
        }
        self.add(word, Access::Write);
    }

    /// Records `word` in every spelling: relative paths against the starting directory and the
    /// current one (a subshell's `cd` may or may not still apply).
    pub(super) fn add(&mut self, word: &ShellWord, access: Access) {
        self.add_walked(word, access, false);
    }

    /// [`Files::add`]; `walked` when the program walks what the word names (`rm -r *`).
    fn add_walked(&mut self, word: &ShellWord, access: Access, walked: bool) {
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
            // A pattern below a plain directory (`src/*.rs`) reaches only below it.
            let scope = match (
                &self.current,
                word.literal && !word.tilde && !word.text.is_empty(),
            ) {
                (Some(current), true) => {
                    let directory = crate::read_only::glob_directory(word);
                    Scope::Under(self.spellings(directory, current, absolute))
                }
                _ => Scope::Anywhere,
            };
            // bash expands a glob to names starting with a dot only when its last part does.
            let last = word.text.rsplit('/').next().unwrap_or_default();
            let dot_names = walked || last.starts_with('.') || !matches!(scope, Scope::Under(_));
            let shown = if word.text.is_empty() {
                "a file only known when it runs".to_owned()
            } else {
                format!("{}, only known when it runs", word.text)
            };
            self.unknown.push(match access {
                Access::Read => Unknown::reads(format!("reads {shown}"), scope, dot_names),
                Access::Write | Access::ProgramWrite => {
                    Unknown::writes(format!("writes {shown}"), scope, dot_names)
                }
            });
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

    /// Every spelling of `text` read from the directories a relative name may be read from.
    fn spellings(&self, text: &str, current: &Path, absolute: bool) -> Vec<PathBuf> {
        let mut bases = vec![self.start.to_path_buf()];
        if current != self.start && !absolute {
            bases.push(current.to_path_buf());
        }
        let mut found = Vec::new();
        for base in bases {
            let candidates = PathCandidates::new(text, &base, self.home);
            for spelling in candidates.all() {
                if !found.iter().any(|known: &PathBuf| known == spelling) {
                    found.push(spelling.to_path_buf());
                }
            }
        }
        found
    }

    /// The file a word may name, read only when it can be placed (a word built when it runs is
    /// not a file read here: `echo $X` reads nothing): an operand, an option's value
    /// (`--config=F`, a word after a flag), `@F` (a response file), `file://F`.
    fn named_read(&mut self, word: &ShellWord) {
        if !word.literal || word.glob || (word.tilde && self.home.is_none()) {
            return;
        }
        let text = word.text.as_str();
        let text = match text.strip_prefix("--") {
            Some(option) => match option.split_once('=') {
                Some((_, value)) => value,
                None => return,
            },
            None if text.starts_with('-') => return,
            None => text.split_once('=').map_or(text, |(_, value)| value),
        };
        let text = text.strip_prefix('@').unwrap_or(text);
        let text = text.strip_prefix("file://").unwrap_or(text);
        if text.is_empty() {
            return;
        }
        let named = ShellWord {
            text: text.to_owned(),
            ..word.clone()
        };
        self.add(&named, Access::Read);
    }

    /// A directory a program walks whole (`grep -r src`, `rm -r build`): the exact path for the
    /// rules that name it, and a part reaching everything below it.
    fn tree(&mut self, word: &ShellWord, access: Access, program: &str) {
        self.tree_from(word, access, program, self.current.clone());
    }

    /// [`Files::tree`] for a directory named relative to `from`.
    fn tree_from(
        &mut self,
        word: &ShellWord,
        access: Access,
        program: &str,
        from: Option<PathBuf>,
    ) {
        let absolute = word.text.starts_with('/') || word.tilde;
        let placed = word.literal && !word.glob && !(word.tilde && self.home.is_none());
        let Some(current) = from.filter(|_| placed) else {
            self.add_walked(word, access, true);
            return;
        };
        let (verb, writes) = match access {
            Access::Read => ("reads", false),
            Access::Write | Access::ProgramWrite => ("changes", true),
        };
        let scope = Scope::Under(self.spellings(&word.text, &current, absolute));
        let what = format!("{program} {verb} everything under {}", word.text);
        // git writes what the repository tracks, its users' own work, as any known program
        // does its own: Read and Edit rules see the tree, the protected paths leave it to git.
        let dot_names = program != "git";
        self.unknown.push(if writes {
            Unknown::writes(what, scope, dot_names)
        } else {
            Unknown::reads(what, scope, dot_names)
        });
        if self.current.is_some() {
            // (Placed from where the program started, its own `-C DIR`, the exact path is not
            // where it runs.)
            self.add(word, access);
        }
    }

    /// Reads what one spelling of a subcommand reads and changes; returns where a `cd` goes.
    pub(super) fn program(&mut self, words: &[ShellWord]) -> Option<Option<PathCandidates>> {
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
            let recursive = base == "rg"
                || args.iter().any(|word| {
                    word.text == "--recursive"
                        || (!word.text.starts_with("--")
                            && word.text.starts_with('-')
                            && word.text.contains(['r', 'R']))
                });
            let dot = ShellWord {
                text: ".".to_owned(),
                literal: true,
                ..ShellWord::default()
            };
            let searched: Vec<&ShellWord> = operands.iter().skip(skip).copied().collect();
            if recursive {
                // A directory search reads every file below each directory it names (its
                // working directory when it names none).
                let searched = if searched.is_empty() {
                    vec![&dot]
                } else {
                    searched
                };
                for word in searched {
                    self.tree(word, Access::Read, base);
                }
            } else {
                for word in searched {
                    self.read(word);
                }
            }
        }
        self.trees(base, args, &operands);
        if base == "git" {
            // `git show REV:PATH`, `git cat-file -p :PATH`: the file as the repository holds it.
            for word in args.iter().filter(|word| !word.text.starts_with('-')) {
                if let Some((_, path)) = word.text.split_once(':') {
                    self.named_read(&ShellWord {
                        text: path.to_owned(),
                        ..word.clone()
                    });
                }
            }
        }
        if !NO_FILE_OPERANDS.contains(&base) {
            // The readers above read their operands already; an option's value may be a file
            // too (`sort --files0-from=F`).
            let readers = FILE_READERS.contains(&base) || PATTERN_FIRST_READERS.contains(&base);
            for word in args {
                if !readers || word.text.starts_with("--") {
                    self.named_read(word);
                }
            }
        }
        let long_targets = if matches!(base, "cp" | "mv" | "ln" | "install") {
            long_values(args, "--target-directory")
        } else {
            Vec::new()
        };
        let long_outputs = if matches!(base, "sort" | "shuf") {
            long_values(args, "--output")
        } else {
            Vec::new()
        };
        let mut changed: Vec<&ShellWord> = match base {
            "tee" | "touch" | "truncate" | "rm" | "rmdir" | "unlink" | "shred" | "mkdir"
            | "chmod" | "chown" | "mkfifo" | "mknod" | "gzip" | "gunzip" | "bzip2" | "bunzip2"
            | "xz" | "unxz" | "lzma" | "zstd" | "unzstd" | "compress" | "lz4" | "sponge" => {
                operands.clone()
            }
            "mv" => operands.clone(),
            "cp" | "ln" | "install" | "rsync" => {
                let targets = valued("-t");
                if targets.is_empty() && long_targets.is_empty() {
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
        changed.extend(long_targets.iter());
        changed.extend(long_outputs.iter());
        for word in changed {
            self.add(word, Access::ProgramWrite);
        }
        match base {
            "cd" => {}
            // The directory stack, `+N` rotations and `popd`'s return are the running shell's.
            "pushd" | "popd" => return Some(None),
            _ => return None,
        }
        if args.iter().any(|word| word.text == "-") {
            // `cd -` goes to `$OLDPWD`, which the line may have set.
            return Some(None);
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

    /// The directories programs change or read whole: `rm -r`, `mv`, `cp -r`'s destination,
    /// `chmod -R`, `find DIR -delete`, `git rm/mv/checkout/restore/clean/reset --hard`, `tar -x`,
    /// `unzip`, `patch`, `rsync`'s destination, `tar -c`'s and `cp -r`'s sources, `zip -r`.
    fn trees(&mut self, base: &str, args: &[ShellWord], operands: &[&ShellWord]) {
        let flag = |short: char, long: &str| {
            args.iter().any(|word| {
                word.text == long
                    || (!word.text.starts_with("--")
                        && word.text.starts_with('-')
                        && word.text.contains(short))
            })
        };
        let here = ShellWord {
            text: ".".to_owned(),
            literal: true,
            ..ShellWord::default()
        };
        let valued = |names: &[&str]| -> Option<ShellWord> {
            args.iter().enumerate().find_map(|(at, word)| {
                names.iter().find_map(|name| {
                    if word.text == *name {
                        args.get(at + 1).cloned()
                    } else {
                        word.text
                            .strip_prefix(&format!("{name}="))
                            .map(|value| ShellWord {
                                text: value.to_owned(),
                                ..word.clone()
                            })
                    }
                })
            })
        };
        let recursive = flag('r', "--recursive") || flag('R', "--recursive");
        let (changed, read): (Vec<ShellWord>, Vec<ShellWord>) = match base {
            "rm" | "chmod" | "chown" | "chgrp" | "shred" if recursive => (
                operands.iter().map(|word| (*word).clone()).collect(),
                Vec::new(),
            ),
            "mv" => (
                operands.iter().map(|word| (*word).clone()).collect(),
                Vec::new(),
            ),
            // What a link points at is read and written through it, by this line's later
            // commands too.
            "ln" | "link" => {
                let sources: Vec<ShellWord> = match operands.split_last() {
                    Some((_, sources)) if !sources.is_empty() => {
                        sources.iter().map(|word| (*word).clone()).collect()
                    }
                    _ => operands.iter().map(|word| (*word).clone()).collect(),
                };
                (sources.clone(), sources)
            }
            "cp" if flag('s', "--symbolic-link") || flag('l', "--link") => {
                let sources: Vec<ShellWord> = operands
                    .split_last()
                    .map(|(_, sources)| sources.iter().map(|word| (*word).clone()).collect())
                    .unwrap_or_default();
                (sources.clone(), sources)
            }
            "diff" if recursive => (
                Vec::new(),
                operands.iter().map(|word| (*word).clone()).collect(),
            ),
            "cp" | "rsync" if recursive || base == "rsync" || flag('a', "--archive") => {
                let (last, sources) = operands
                    .split_last()
                    .map_or((None, &[][..]), |(l, s)| (Some(l), s));
                (
                    last.map(|word| (*word).clone()).into_iter().collect(),
                    sources.iter().map(|word| (*word).clone()).collect(),
                )
            }
            "find" if args.iter().any(|word| word.text == "-delete") => (
                args.iter()
                    .take_while(|word| {
                        !word.text.starts_with('-') && word.text != "(" && word.text != "!"
                    })
                    .cloned()
                    .collect(),
                Vec::new(),
            ),
            "git" => (git_changes(args, &here), git_reads(args, &here)),
            "tar" => {
                let extracts = args.first().is_some_and(|word| {
                    word.text == "--extract"
                        || (!word.text.starts_with("--") && word.text.contains('x'))
                }) || flag('x', "--extract");
                let creates = args
                    .first()
                    .is_some_and(|word| !word.text.starts_with("--") && word.text.contains('c'))
                    || flag('c', "--create");
                let directory = valued(&["-C", "--directory"]).unwrap_or_else(|| here.clone());
                if extracts {
                    (vec![directory], Vec::new())
                } else if creates {
                    // The archive: `-f A`, `--file=A`, or the word after a bundle ending in `f`
                    // (`-cf A`, old-style `cf A`).
                    let archive = valued(&["-f", "--file"]).or_else(|| {
                        args.iter()
                            .position(|word| {
                                !word.text.starts_with("--")
                                    && word.text.trim_start_matches('-').ends_with('f')
                                    && word
                                        .text
                                        .trim_start_matches('-')
                                        .chars()
                                        .all(|c| c.is_ascii_alphabetic())
                            })
                            .and_then(|at| args.get(at + 1).cloned())
                    });
                    // `tar cvf a.tar src`: the first word is the option bundle.
                    let old_style = args.first().filter(|word| !word.text.starts_with('-'));
                    let sources = operands
                        .iter()
                        .filter(|word| archive.as_ref().is_none_or(|a| a.text != word.text))
                        .filter(|word| old_style.is_none_or(|first| !std::ptr::eq(first, **word)))
                        .map(|word| (*word).clone())
                        .collect();
                    (archive.into_iter().collect(), sources)
                } else {
                    (Vec::new(), Vec::new())
                }
            }
            // Output files named in the current directory (`xx00`, `xaa`).
            "csplit" => (vec![here.clone()], Vec::new()),
            // What `find … -exec` runs is handed every file below the start points.
            "find"
                if args.iter().any(|word| {
                    matches!(word.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                }) =>
            {
                let starts: Vec<ShellWord> = args
                    .iter()
                    .take_while(|word| {
                        !word.text.starts_with('-') && word.text != "(" && word.text != "!"
                    })
                    .cloned()
                    .collect();
                let starts = if starts.is_empty() {
                    vec![here.clone()]
                } else {
                    starts
                };
                // A reader (`-exec grep … {} +`) only reads what it is handed.
                let only_readers = args.windows(2).all(|pair| {
                    !matches!(
                        pair[0].text.as_str(),
                        "-exec" | "-execdir" | "-ok" | "-okdir"
                    ) || {
                        let program = pair[1].text.rsplit('/').next().unwrap_or_default();
                        matches!(
                            program,
                            "cat"
                                | "head"
                                | "tail"
                                | "grep"
                                | "egrep"
                                | "fgrep"
                                | "rg"
                                | "wc"
                                | "file"
                                | "stat"
                                | "ls"
                                | "strings"
                                | "od"
                                | "xxd"
                                | "md5sum"
                                | "sha1sum"
                                | "sha256sum"
                                | "cmp"
                                | "nl"
                                | "tac"
                        )
                    }
                });
                if only_readers {
                    (Vec::new(), starts)
                } else {
                    (starts.clone(), starts)
                }
            }
            "unzip" => (
                vec![valued(&["-d"]).unwrap_or_else(|| here.clone())],
                Vec::new(),
            ),
            "patch" if valued(&["-o", "--output"]).is_none() => (
                vec![valued(&["-d", "--directory"]).unwrap_or_else(|| here.clone())],
                Vec::new(),
            ),
            // The archive is the first operand (`-` for stdout); the rest are read whole.
            "zip" if recursive => (
                Vec::new(),
                args.iter()
                    .filter(|word| word.text == "-" || !word.text.starts_with('-'))
                    .skip(1)
                    .map(|word| (*word).clone())
                    .collect(),
            ),
            _ => (Vec::new(), Vec::new()),
        };
        // `tar -C DIR`, `unzip -d DIR`, `patch -d DIR` name their directory from where they start.
        let from = if matches!(base, "tar" | "unzip" | "patch") {
            self.launched.clone()
        } else {
            self.current.clone()
        };
        for word in &changed {
            self.tree_from(word, Access::ProgramWrite, base, from.clone());
        }
        for word in &read {
            self.tree(word, Access::Read, base);
        }
    }

    /// Where a program told to run in another directory runs (`git -C DIR`, ...): `Some(None)`
    /// when that directory is not known before it runs; `None` for other programs.
    pub(super) fn program_directory(&self, words: &[ShellWord]) -> Option<Option<PathCandidates>> {
        let (program, args) = words.split_first()?;
        let base = program.text.rsplit('/').next().unwrap_or_default();
        let value = directory_option(base, args)?;
        Some(value.and_then(|word| {
            let current = self.current.as_ref()?;
            (word.literal && !word.glob && !word.tilde)
                .then(|| PathCandidates::new(&word.text, current, self.home))
        }))
    }

    pub(super) fn change_directory(&mut self, destination: Option<PathCandidates>) {
        self.current = destination.as_ref().map(|path| path.lexical.clone());
        self.cd_targets.push(destination);
    }
}
