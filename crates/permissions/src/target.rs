//! What a call presents to rules: a split command line, a path (as spelled and as the filesystem
//! resolves it), a URL's host, or the tool's rule-field value. This is the one place the decision
//! touches the disk: to resolve symlinks, and to read the shell scripts a command line runs
//! (`sh FILE`, `source FILE`, `./FILE`), which are read like a code string.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::bash::{Form, SubcommandForms};
use super::paths::normalize;
use super::programs::{self, Found};
use super::rules::{Family, is_shell_tool, is_url_tool};
use super::shell::{self, MAX_COMMAND_CHARS, ShellCommand, ShellWord, Subcommand};
use super::unknown::{Scope, Unknown};
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
    /// The forms of the subcommands of the shell scripts the line runs (`sh FILE`, `./FILE`):
    /// deny and ask rules see them; allow rules judge the line as written, as for any program.
    pub script_forms: Vec<SubcommandForms>,
    /// The parts whose effect is not known before the line runs (`unknown.rs`).
    pub unknown: Vec<Unknown>,
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

    /// Every form deny and ask rules see: the line's and its scripts'.
    pub fn deny_forms(&self) -> impl Iterator<Item = &Form> {
        self.forms
            .iter()
            .chain(&self.script_forms)
            .flat_map(|forms| &forms.deny)
    }

    fn new(command: &str, cwd: &Path, home: Option<&Path>) -> Self {
        let parsed = shell::split(command);
        let mut reader = Reader {
            files: Files::new(cwd, home),
            forms: Vec::new(),
            script_forms: Vec::new(),
            subcommands: Vec::new(),
            opaque: parsed.opaque.clone(),
            unknown: Vec::new(),
            scripts: Vec::new(),
        };
        reader.line(parsed, 0, false);
        reader.finish(command, cwd)
    }
}

/// How deeply scripts that run scripts (and option values that run command lines) are followed.
const MAX_NESTED_DEPTH: usize = 4;

/// How many scripts one command line may run before the rest is unknown.
const MAX_SCRIPTS: usize = 16;

/// Reads a command line, the command lines its programs' options run and the scripts it runs,
/// in the order they run, placing the files each subcommand names.
struct Reader<'a> {
    files: Files<'a>,
    forms: Vec<SubcommandForms>,
    script_forms: Vec<SubcommandForms>,
    subcommands: Vec<Subcommand>,
    opaque: Option<String>,
    unknown: Vec<Unknown>,
    /// The scripts read (or looked for), by path: a line that changes one cannot trust what was
    /// read.
    scripts: Vec<PathBuf>,
}

impl Reader<'_> {
    fn unknown(&mut self, part: Unknown) {
        if self.unknown.len() < 32 && !self.unknown.contains(&part) {
            self.unknown.push(part);
        }
    }

    /// Reads the subcommands of `parsed`; `in_script` when they come from a script file.
    fn line(&mut self, parsed: ShellCommand, depth: usize, in_script: bool) {
        if let Some(why) = &parsed.opaque {
            let what = if in_script {
                format!("a script it runs: {why}")
            } else {
                why.clone()
            };
            self.unknown(Unknown::anything(what));
        }
        for sub in parsed.subcommands {
            self.subcommand(sub, depth, in_script);
        }
    }

    fn subcommand(&mut self, sub: Subcommand, depth: usize, in_script: bool) {
        let sub_forms = SubcommandForms::new(&sub);
        if sets_cd_search(&sub) {
            self.files.cd_searches = true;
        }
        for redirect in &sub.redirects {
            if redirect.write {
                self.files.write(&redirect.target);
            } else {
                self.files.read(&redirect.target);
            }
        }
        // A program told to run elsewhere (`git -C DIR`, `env -C DIR`, `make -C`, `tar -C`):
        // its relative names are read from a directory only known for certain when it runs.
        let elsewhere = sub_forms
            .deny
            .iter()
            .find_map(|form| self.files.program_directory(&form.words));
        self.files.launched = self.files.current.clone();
        let resumed = elsewhere.map(|destination| {
            self.files.cd_targets.push(destination);
            self.files.current.take()
        });
        // Every spelling deny rules see: behind wrappers (`command cat .env`), past `sudo`, by
        // base name.
        let mut destination = None;
        let mut found: Vec<Found> = Vec::new();
        for form in &sub_forms.deny {
            if let Some(cd) = self.files.program(&form.words) {
                destination.get_or_insert(cd);
            }
            for effect in programs::examine(&form.words) {
                if !found.contains(&effect) {
                    found.push(effect);
                }
            }
        }
        if let Some(word) = hidden_program(&sub.words) {
            self.unknown(Unknown::anything(format!(
                "the program word {} is only known when it runs",
                word.text
            )));
        }
        found.extend(programs::assigned(&sub));
        for effect in found {
            self.found(effect, depth, in_script);
        }
        if let Some(current) = resumed {
            self.files.current = current;
        }
        if let Some(cd) = destination {
            self.files.change_directory(cd);
        }
        if in_script {
            self.script_forms.push(sub_forms);
        } else {
            self.forms.push(sub_forms);
            self.subcommands.push(sub);
        }
    }

    /// Applies what a program does beyond its words.
    fn found(&mut self, effect: Found, depth: usize, in_script: bool) {
        match effect {
            Found::Runs {
                text: Some(text), ..
            } if depth < MAX_NESTED_DEPTH => {
                self.line(shell::split(&text), depth + 1, in_script);
            }
            Found::Runs { what, .. } => {
                self.unknown(Unknown::anything(format!(
                    "{what} runs a command line janua cannot read"
                )));
            }
            Found::Unknown(what) => self.unknown(Unknown::anything(what)),
            Found::Reads(word) => self.files.read(&word),
            Found::Writes(word) => self.files.add(&word, Access::ProgramWrite),
            Found::Script(word) => {
                self.files.read(&word);
                self.script(&word, depth);
            }
            Found::PathProgram(word) => self.path_program(&word, depth),
        }
    }

    /// The file a script word names, resolved where the subcommand runs.
    fn place(&self, word: &ShellWord) -> Option<PathBuf> {
        if !word.literal || word.glob || word.tilde {
            return None;
        }
        let base = if word.text.starts_with('/') {
            self.files.start.to_path_buf()
        } else {
            self.files.current.clone()?
        };
        Some(PathCandidates::new(&word.text, &base, self.files.home).physical)
    }

    /// Reads the shell script `word` names as if its text were given with `-c`.
    fn script(&mut self, word: &ShellWord, depth: usize) {
        let Some(path) = self.place(word) else {
            self.unknown(Unknown::anything(format!(
                "the script {} is only known when it runs",
                word.text
            )));
            return;
        };
        self.scripts.push(path.clone());
        if depth >= MAX_NESTED_DEPTH || self.scripts.len() > MAX_SCRIPTS {
            self.unknown(Unknown::anything(format!(
                "the script {} runs past the depth janua follows",
                word.text
            )));
            return;
        }
        match read_script(&path) {
            Ok(text) => {
                let current = self.files.current.clone();
                let moves = self.files.cd_targets.len();
                self.line(shell::split(&text), depth + 1, true);
                // A `cd` inside a script leaves `sh FILE`'s shell; `source` keeps it, and where
                // it went is not followed.
                self.files.current = if self.files.cd_targets.len() == moves {
                    current
                } else {
                    None
                };
            }
            Err(why) => self.unknown(Unknown::anything(format!(
                "the script {} cannot be read ({why})",
                word.text
            ))),
        }
    }

    /// A program named by a path: a shell script is read, a script of another interpreter is
    /// unknown, a binary is a program like any other.
    fn path_program(&mut self, word: &ShellWord, depth: usize) {
        let Some(path) = self.place(word) else {
            return;
        };
        match std::fs::metadata(&path) {
            Ok(metadata) if metadata.is_file() => {}
            Ok(_) => return,
            Err(_) => {
                // Not there (yet): a line that makes it is caught in `finish`.
                self.scripts.push(path);
                return;
            }
        }
        let Ok(head) = read_head(&path) else {
            self.unknown(Unknown::anything(format!("{} cannot be read", word.text)));
            return;
        };
        if head.starts_with(b"\x7fELF") || head.contains(&0) {
            return;
        }
        match shebang_interpreter(&head) {
            Some(interpreter) if !programs::is_script_shell(&interpreter) => {
                self.unknown(Unknown::anything(format!(
                    "{} is a {interpreter} script",
                    word.text
                )));
            }
            _ => self.script(word, depth),
        }
    }

    fn finish(mut self, command: &str, cwd: &Path) -> CommandTarget {
        let changed = self.scripts.iter().find(|script| {
            self.files
                .writes
                .iter()
                .chain(&self.files.program_writes)
                .any(|write| write.physical == **script || write.lexical == **script)
        });
        if let Some(script) = changed {
            let what = format!("the line changes {} before running it", script.display());
            self.unknown(Unknown::anything(what));
        } else if !self.scripts.is_empty()
            && (self.files.unresolved_write.is_some()
                || self.files.unresolved_program_write.is_some())
        {
            self.unknown(Unknown::anything(
                "the line writes to a file only known when it runs, which could be a script it runs",
            ));
        }
        let file_parts = std::mem::take(&mut self.files.unknown);
        for part in file_parts {
            self.unknown(part);
        }
        let files = self.files;
        CommandTarget {
            parsed: ShellCommand {
                subcommands: self.subcommands,
                opaque: self.opaque,
            },
            forms: self.forms,
            script_forms: self.script_forms,
            unknown: self.unknown,
            raw: command.trim().to_owned(),
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

/// The program word of `words` when it is only known when it runs, looking through every
/// wrapper that runs its operands. Behind a wrapper whose options are not all known (`sudo`,
/// `strace`, ...) any operand built when it runs could be the program.
fn hidden_program(words: &[ShellWord]) -> Option<&ShellWord> {
    let mut words = words;
    while let Some(rest) = super::bash::strip_one_wrapper(words) {
        words = rest;
    }
    let (program, args) = words.split_first()?;
    if !program.literal {
        return Some(program);
    }
    let base = programs::base_name(program);
    let start = if super::bash::EXEC_WRAPPERS.contains(&base) {
        1
    } else {
        programs::wrapper_start(words)?
    };
    let assignment = |text: &str| {
        text.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    args.iter()
        .skip(start - 1)
        .find(|word| !word.literal && !word.text.starts_with('-') && !assignment(&word.text))
        .or_else(|| {
            let at = args
                .iter()
                .skip(start - 1)
                .position(|word| !word.text.starts_with('-') && !assignment(&word.text))?;
            hidden_program(&args[start - 1 + at..])
        })
}

/// The first bytes of a file, enough for a shebang line or a binary's magic number.
fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)?;
    let mut head = Vec::with_capacity(256);
    file.take(256).read_to_end(&mut head)?;
    Ok(head)
}

/// The base name of the interpreter a `#!` line names (`/usr/bin/env -S bash -e` gives `bash`).
fn shebang_interpreter(head: &[u8]) -> Option<String> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|byte| *byte == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let name = first.rsplit('/').next().unwrap_or_default();
    if name == "env" {
        return words
            .find(|word| !word.starts_with('-') && !word.contains('='))
            .map(|word| word.rsplit('/').next().unwrap_or_default().to_owned());
    }
    Some(name.to_owned())
}

/// Why a script's text could not be read.
#[derive(Debug, thiserror::Error)]
enum ScriptUnreadable {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a regular file")]
    NotAFile,
    #[error("longer than {MAX_COMMAND_CHARS} characters")]
    TooLong,
}

/// A script's text: a regular file of valid UTF-8 within the length a command line may have.
fn read_script(path: &Path) -> Result<String, ScriptUnreadable> {
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_file() {
        return Err(ScriptUnreadable::NotAFile);
    }
    if metadata.len() > (MAX_COMMAND_CHARS * 4) as u64 {
        return Err(ScriptUnreadable::TooLong);
    }
    let text = std::fs::read_to_string(path)?;
    if text.chars().count() > MAX_COMMAND_CHARS {
        return Err(ScriptUnreadable::TooLong);
    }
    Ok(text)
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

/// The `git` subcommand of `args` (past the global options, some with a value) and its words.
fn git_subcommand(args: &[ShellWord]) -> (Option<&str>, &[ShellWord]) {
    let mut at = 0;
    while let Some(word) = args.get(at) {
        match word.text.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => at += 2,
            text if text.starts_with('-') => at += 1,
            text => return (Some(text), &args[at + 1..]),
        }
    }
    (None, &[])
}

/// What a `git` subcommand changes in the work tree: the paths `rm` and `mv` name, the paths
/// `checkout`/`restore` name (the whole tree when `checkout` switches branches), the whole tree
/// for `clean` and `reset --hard`.
fn git_changes(args: &[ShellWord], here: &ShellWord) -> Vec<ShellWord> {
    let mut words = args.iter();
    // Global options, some with a value, come before the subcommand.
    let subcommand = loop {
        let Some(word) = words.next() else {
            return Vec::new();
        };
        match word.text.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => {
                words.next();
            }
            text if text.starts_with('-') => {}
            _ => break word.text.as_str(),
        }
    };
    let rest: Vec<&ShellWord> = words.collect();
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
        "clean" | "stash" => vec![here.clone()],
        "reset" if rest.iter().any(|word| word.text == "--hard") => vec![here.clone()],
        _ => Vec::new(),
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
    /// `CDPATH` or `cdable_vars` is in effect: `cd NAME` may go somewhere else than `./NAME`.
    cd_searches: bool,
    /// Files named by a pattern or expansion, and directories a program walks.
    unknown: Vec<Unknown>,
    /// Where the current subcommand was started (before a `-C DIR` of its own moved it).
    launched: Option<PathBuf>,
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
            unknown: Vec::new(),
            launched: Some(start.to_path_buf()),
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
                    let directory = super::read_only::glob_directory(word);
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
            | "chmod" | "chown" => operands.clone(),
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
                    let archive = valued(&["-f", "--file"]);
                    // `tar cvf a.tar src`: the first word is the option bundle.
                    let old_style = args.first().filter(|word| !word.text.starts_with('-'));
                    let sources = operands
                        .iter()
                        .filter(|word| archive.as_ref().is_none_or(|a| a.text != word.text))
                        .filter(|word| old_style.is_none_or(|first| !std::ptr::eq(first, **word)))
                        .map(|word| (*word).clone())
                        .collect();
                    (Vec::new(), sources)
                } else {
                    (Vec::new(), Vec::new())
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
            "zip" if recursive => (
                Vec::new(),
                operands
                    .iter()
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
