//! A command line as rules see it: its subcommands and their forms, the command lines its
//! programs' options run and the shell scripts it runs (read from disk like a code string), the
//! files it touches and the parts whose effect is unknown before it runs.

use std::path::{Path, PathBuf};

use super::candidates::PathCandidates;
use super::files::{Access, Files, sets_cd_search};
use crate::bash::{Form, SubcommandForms};
use crate::programs::{self, Found};
use crate::shell::{self, MAX_COMMAND_CHARS, ShellCommand, ShellWord, Subcommand};
use crate::unknown::{Scope, Unknown};

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

    pub(super) fn new(command: &str, cwd: &Path, home: Option<&Path>) -> Self {
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
            // A list of files read from the input (`tar -T -`) names any file.
            Found::Reads(word) if matches!(word.text.as_str(), "-" | "/dev/stdin") => {
                self.unknown(Unknown::reads(
                    "reads the files its input names",
                    Scope::Anywhere,
                    true,
                ));
            }
            Found::Reads(word) => self.files.read(&word),
            Found::Writes(word) => self.files.add(&word, Access::ProgramWrite),
            Found::Script(word) => {
                self.files.read(&word);
                self.script(&word, depth);
            }
            Found::PathProgram(words) => self.path_program(&words, depth),
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
    fn path_program(&mut self, words: &[ShellWord], depth: usize) {
        let Some((word, args)) = words.split_first() else {
            return;
        };
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
            // A link to, or a copy of, a system program is that program to deny rules.
            if let Some(name) = system_program(&path)
                && name != programs::base_name(word)
            {
                let sub = Subcommand {
                    words: std::iter::once(ShellWord {
                        text: name,
                        literal: true,
                        ..ShellWord::default()
                    })
                    .chain(args.iter().cloned())
                    .collect(),
                    ..Subcommand::default()
                };
                self.script_forms.push(SubcommandForms::new(&sub));
            }
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
        // A build the line prepares and runs: what make or npm then runs is the line's own.
        let runner = self
            .forms
            .iter()
            .chain(&self.script_forms)
            .flat_map(|forms| &forms.deny)
            .filter_map(|form| form.words.first())
            .map(programs::base_name)
            .find(|base| programs::runs_project_code(base))
            .map(str::to_owned);
        if let Some(runner) = runner {
            let written = self
                .files
                .writes
                .iter()
                .chain(&self.files.program_writes)
                .find(|write| {
                    write
                        .lexical
                        .file_name()
                        .is_some_and(|name| programs::is_project_code(&name.to_string_lossy()))
                })
                .map(|write| write.lexical.display().to_string())
                .or_else(|| {
                    self.files
                        .unresolved_write
                        .clone()
                        .or_else(|| self.files.unresolved_program_write.clone())
                });
            if let Some(file) = written {
                self.unknown(Unknown::anything(format!(
                    "the line writes {file} and runs {runner}, which may run it as code"
                )));
            }
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
    while let Some(rest) = crate::bash::strip_one_wrapper(words) {
        words = rest;
    }
    let (program, args) = words.split_first()?;
    if !program.literal {
        return Some(program);
    }
    let base = programs::base_name(program);
    let start = if crate::bash::EXEC_WRAPPERS.contains(&base) {
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

/// The system program a binary is: where its links lead (`./rr -> /usr/bin/rm`), or the
/// program of `/usr/bin` or `/bin` with the same bytes (a copy made in an earlier call).
fn system_program(path: &Path) -> Option<String> {
    const SYSTEM: &[&str] = &["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"];
    let real = std::fs::canonicalize(path).ok()?;
    let name = real.file_name()?.to_string_lossy().into_owned();
    if real
        .parent()
        .is_some_and(|dir| SYSTEM.iter().any(|system| dir == Path::new(system)))
    {
        return Some(name);
    }
    let size = std::fs::metadata(&real).ok()?.len();
    // A program larger than any a system directory holds is not compared.
    if size > 64 << 20 {
        return None;
    }
    let mut bytes: Option<Vec<u8>> = None;
    for dir in ["/usr/bin", "/bin"] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let candidate = entry.path();
            if std::fs::metadata(&candidate).map(|meta| meta.len()).ok() != Some(size) {
                continue;
            }
            let ours = match &bytes {
                Some(bytes) => bytes,
                None => bytes.insert(std::fs::read(&real).ok()?),
            };
            if std::fs::read(&candidate).is_ok_and(|theirs| theirs == *ours) {
                return Some(entry.file_name().to_string_lossy().into_owned());
            }
        }
    }
    None
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
