//! What programs do with their arguments beyond what the words show: the table of programs that
//! run other programs, run code, or read and write files through options or scripts
//! (`programs.tsv`, one row per program and option, each citing its source), the shells whose
//! script files are read like a code string, and `sed` and `awk` programs that run commands.
//!
//! This module only reads words; `target.rs` places the files, reads the scripts and turns what
//! cannot be read into unknown parts (`unknown.rs`).

use std::sync::LazyLock;

use super::shell::{ShellWord, Subcommand};

/// What one row says a program does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Runs its operands (after the option word, for a subcommand row) as a command.
    Wrapper,
    /// Runs code from its arguments, a script file or stdin.
    Interpreter,
    /// The option's value is a command line.
    Runs,
    /// The option's value is code the engine cannot read.
    Code,
    /// The option's value names a file the program changes.
    Writes,
    /// The option's value names a file the program reads.
    Reads,
    /// Runs the words after its host operand as a command line on that host (this one too).
    Remote,
}

/// One row of `programs.tsv`.
#[derive(Debug)]
struct Row {
    program: &'static str,
    option: &'static str,
    prefix: &'static str,
    effect: Effect,
}

/// The table, parsed once. A malformed row is a bug in the table, caught by its test; at run
/// time it is skipped.
static TABLE: LazyLock<Vec<Row>> = LazyLock::new(|| parse_table(include_str!("programs.tsv")));

fn parse_table(text: &'static str) -> Vec<Row> {
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let program = fields.next()?;
            let option = fields.next()?;
            let prefix = fields.next()?;
            let effect = match fields.next()? {
                "wrapper" => Effect::Wrapper,
                "interpreter" => Effect::Interpreter,
                "runs" => Effect::Runs,
                "code" => Effect::Code,
                "writes" => Effect::Writes,
                "reads" => Effect::Reads,
                "remote" => Effect::Remote,
                _ => return None,
            };
            fields.next()?;
            Some(Row {
                program,
                option,
                prefix: if prefix == "-" { "" } else { prefix },
                effect,
            })
        })
        .collect()
}

/// What a program does beyond its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A command line it runs (`None`: its text is only known when it runs).
    Runs {
        /// The program and option, in words.
        what: String,
        /// The command line.
        text: Option<String>,
    },
    /// Something it runs that cannot be read before it runs.
    Unknown(String),
    /// A file it reads.
    Reads(ShellWord),
    /// A file it changes.
    Writes(ShellWord),
    /// A file it runs as a shell script (`sh FILE`, `source FILE`).
    Script(ShellWord),
    /// The program is named by a path (`./build.sh`), with its arguments: a shell script when
    /// its text says so, another program's copy or link when its bytes say so.
    PathProgram(Vec<ShellWord>),
}

/// Shells whose script files are bash syntax, so their text is read like `-c`.
const SCRIPT_SHELLS: &[&str] = &["sh", "bash", "dash", "ksh", "ash", "mksh", "posh", "yash"];

/// Programs that run code the project's files hold (a Makefile's recipes, package.json's
/// scripts, setup.py, conftest.py, build.rs): that code is theirs, unless the same line wrote it.
const PROJECT_RUNNERS: &[&str] = &[
    "make", "gmake", "npm", "npx", "yarn", "pnpm", "bun", "cargo", "pip", "pip3", "pytest", "tox",
    "nox", "cmake", "ctest", "rake", "bundle", "gradle", "gradlew", "mvn", "ant", "go", "just",
    "task", "meson", "ninja", "poetry", "uv", "hatch", "composer", "mix", "dotnet", "sbt",
];

/// Files those programs read as code.
const PROJECT_CODE: &[&str] = &[
    "Makefile",
    "makefile",
    "GNUmakefile",
    "package.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "conftest.py",
    "pytest.ini",
    "tox.ini",
    "noxfile.py",
    "Cargo.toml",
    "build.rs",
    "config.toml",
    "CMakeLists.txt",
    "Rakefile",
    "Gemfile",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "pom.xml",
    "build.xml",
    "go.mod",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    "meson.build",
    "build.ninja",
    "composer.json",
    "mix.exs",
];

/// True for a program that runs code its project's files hold.
pub fn runs_project_code(base: &str) -> bool {
    PROJECT_RUNNERS.contains(&base)
}

/// True for a file name such a program reads as code.
pub fn is_project_code(name: &str) -> bool {
    PROJECT_CODE.contains(&name) || name.ends_with(".mk")
}

/// True for a shell whose scripts are bash syntax (read like `-c`).
pub fn is_script_shell(name: &str) -> bool {
    SCRIPT_SHELLS.contains(&name)
}

/// Arguments that only print a version or help.
const INFO_ONLY: &[&str] = &["--version", "-V", "--help", "-h", "-version", "-help"];

/// Variables whose value a program runs as a command, or that change which program or code runs.
const COMMAND_VARIABLES: &[&str] = &[
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "VISUAL",
    "EDITOR",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "SYSTEMD_EDITOR",
    "LESSOPEN",
    "LESSCLOSE",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_EXTERNAL_DIFF",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG",
    "RESTIC_PASSWORD_COMMAND",
    "PERL5OPT",
    "PERL5DB",
    "PERL5LIB",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "NODE_OPTIONS",
    "NODE_PATH",
    "RUBYOPT",
    "RUBYLIB",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "AUTOM4TE",
    "GROFF_BIN_PATH",
    "CRASHPAGER",
    "BROWSER",
    "PROMPT_COMMAND",
    "BASH_ENV",
    "ENV",
    "PATH",
    "SHELL",
    "CARGO_TARGET_DIR_RUNNER",
    "RUSTC_WRAPPER",
    "RUSTC",
    "CC",
    "CXX",
    "MAKEFLAGS",
    "BUNDLE_GEMFILE",
    "npm_config_script_shell",
    "NPM_CONFIG_SCRIPT_SHELL",
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "BASH_CMDS",
    "BASH_ALIASES",
    "BASH_LOADABLES_PATH",
    "EXECIGNORE",
    "HISTFILE",
    "INPUTRC",
    "OLDPWD",
    "FCEDIT",
];

/// `git -c` keys that only change formatting or identity.
const HARMLESS_GIT_CONFIG: &[&str] = &[
    "color.",
    "user.",
    "advice.",
    "init.defaultbranch=",
    "core.quotepath=",
    "log.",
    "column.",
    "safe.directory=",
    "commit.gpgsign=false",
    "tag.gpgsign=false",
];

/// The table's rows for `base` (exact, else with a version suffix removed: `python3.12`).
fn rows(base: &str) -> impl Iterator<Item = &'static Row> + '_ {
    let stripped = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let exact = TABLE.iter().any(|row| row.program == base);
    let name = if exact || stripped.is_empty() {
        base
    } else {
        stripped
    };
    let name = name.to_owned();
    TABLE.iter().filter(move |row| row.program == name)
}

/// The program's base name.
pub fn base_name(word: &ShellWord) -> &str {
    word.text.rsplit('/').next().unwrap_or_default()
}

/// Where the command of a wrapper row begins in `words` (`words[0]` is the program): after the
/// program itself, or after the subcommand word a row names (`npm exec`).
pub fn wrapper_start(words: &[ShellWord]) -> Option<usize> {
    let (program, args) = words.split_first()?;
    rows(base_name(program))
        .filter(|row| row.effect == Effect::Wrapper)
        .find_map(|row| {
            if row.option == "*" {
                return Some(1);
            }
            args.iter()
                .position(|word| word.text == row.option)
                .map(|at| at + 2)
        })
}

/// Why only an exact rule may allow `words` (the allow form): a wrapper of the table, or an
/// option that runs a program or code.
pub fn exact_only(words: &[ShellWord]) -> Option<String> {
    let (program, args) = words.split_first()?;
    let base = base_name(program);
    if wrapper_start(words).is_some() {
        return Some(format!("`{base}` runs the command it is given"));
    }
    if remote_command(base, args).is_some() {
        return Some(format!("`{base}` runs the command it is given on a host"));
    }
    for found in examine_options(base, args) {
        if let Found::Runs { what, .. } = found {
            return Some(format!("{what} runs another program"));
        }
        if let Found::Unknown(what) = found {
            return Some(what);
        }
    }
    if let Some(why) = sed_runs(base, args).or_else(|| awk_runs(base, args)) {
        return Some(why);
    }
    None
}

/// What the assignments of `sub` change: a variable a program runs as a command, or `PATH`
/// (which makes any later name any program), set for the command or for the rest of the line.
pub fn assigned(sub: &Subcommand) -> Option<Found> {
    let name = sub
        .assignments
        .iter()
        .find(|name| COMMAND_VARIABLES.contains(&name.as_str()))?;
    Some(Found::Unknown(format!(
        "{name} set on the line changes what runs"
    )))
}

/// What one spelling `words` of a subcommand (its deny form: wrappers peeled) does beyond its
/// words.
pub fn examine(words: &[ShellWord]) -> Vec<Found> {
    let mut found = Vec::new();
    let Some((program, args)) = words.split_first() else {
        return found;
    };
    let base = base_name(program);
    // Builtins that set a variable by name: `export PATH=…`, `read PATH`, `printf -v PATH`,
    // `declare -n r=PATH` (a name reference), `unset PATH`, `mapfile BASH_CMDS`.
    if matches!(
        base,
        "export"
            | "declare"
            | "typeset"
            | "readonly"
            | "local"
            | "env"
            | "sudo"
            | "doas"
            | "read"
            | "printf"
            | "unset"
            | "mapfile"
            | "readarray"
            | "getopts"
            | "let"
    ) && let Some(name) = args.iter().find_map(|word| {
        word.text
            .split(['=', '[', ':'])
            .find(|part| COMMAND_VARIABLES.contains(part))
    }) {
        found.push(Found::Unknown(format!(
            "{base} {name} changes what later commands run"
        )));
    }
    if program.literal && program.text.contains('/') {
        found.push(Found::PathProgram(words.to_vec()));
    }
    if base == "git" {
        found.extend(git_config_file(args));
        found.extend(git_runs(args));
    }
    // `find … -exec {} …` runs the files it finds; `xargs -I{}` puts words of its input
    // anywhere in the command.
    let exec_action =
        |word: &ShellWord| matches!(word.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir");
    if base == "find"
        && args
            .windows(2)
            .any(|pair| exec_action(&pair[0]) && pair[1].text.contains("{}"))
    {
        found.push(Found::Unknown(
            "find runs the files it finds as programs".to_owned(),
        ));
    }
    if base == "xargs"
        && args.iter().any(|word| {
            word.text.starts_with("-I")
                || word.text.starts_with("-i")
                || word.text.starts_with("--replace")
        })
    {
        found.push(Found::Unknown(
            "xargs -I puts words of its input in the command (file names, programs)".to_owned(),
        ));
    }
    if base == "chroot"
        && args
            .iter()
            .filter(|word| !word.text.starts_with('-'))
            .count()
            < 2
    {
        found.push(Found::Unknown(
            "chroot without a command runs a shell on its input".to_owned(),
        ));
    }
    if matches!(base, "source" | ".") {
        match args.first() {
            Some(file) => found.push(Found::Script(file.clone())),
            None => found.push(Found::Unknown(format!("{base} without a file"))),
        }
    }
    if SCRIPT_SHELLS.contains(&base) {
        // `sh -c STRING` is read by the shell walker; `sh`, `sh -s` read their input.
        let command_string = args
            .iter()
            .take_while(|word| word.text.starts_with('-'))
            .any(|word| !word.text.starts_with("--") && word.text.contains('c'));
        let reads_stdin = args
            .iter()
            .take_while(|word| word.text.starts_with('-'))
            .any(|word| !word.text.starts_with("--") && word.text.contains('s'));
        let script = args
            .iter()
            .find(|word| !word.text.starts_with('-') && !word.text.starts_with('+'));
        match script {
            Some(script) if !command_string => found.push(Found::Script(script.clone())),
            None if reads_stdin || (!command_string && !info_only(args)) => {
                found.push(Found::Unknown(format!(
                    "{base} reads its commands from its input"
                )));
            }
            _ => {}
        }
    }
    if rows(base).any(|row| row.effect == Effect::Interpreter) && !info_only(args) {
        found.push(Found::Unknown(format!(
            "{base} runs code janua cannot read (its arguments, a script or its input)"
        )));
    }
    found.extend(examine_options(base, args));
    if let Some(command) = remote_command(base, args) {
        let readable = command.iter().all(|word| word.literal);
        found.push(Found::Runs {
            what: format!("`{base}` with a command"),
            text: readable.then(|| super::shell::join(command)),
        });
    }
    if let Some(why) = sed_runs(base, args).or_else(|| awk_runs(base, args)) {
        found.push(Found::Unknown(why));
    }
    found
}

/// The command words of `ssh HOST COMMAND...` (or `mosh`), which run on the host named: this
/// one for `localhost`, and any host could be this one.
fn remote_command<'w>(base: &str, args: &'w [ShellWord]) -> Option<&'w [ShellWord]> {
    if !rows(base).any(|row| row.effect == Effect::Remote) {
        return None;
    }
    // ssh's options that take a value; mosh's are all `--name=value`.
    const VALUED: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    // OpenSSH reads options before and after the host; `--` ends them.
    let mut host = None;
    let mut at = 0;
    while let Some(word) = args.get(at) {
        let text = word.text.as_str();
        at += 1;
        if text == "--" {
            if host.is_none() {
                host = args.get(at).map(|_| at);
                at += 1;
            }
            break;
        }
        match text.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => {
                if !text.starts_with("--")
                    && flags.len() == 1
                    && flags.chars().all(|flag| VALUED.contains(flag))
                {
                    at += 1;
                }
            }
            _ if host.is_none() => host = Some(at - 1),
            _ => {
                at -= 1;
                break;
            }
        }
    }
    host?;
    let command = args.get(at..)?;
    (!command.is_empty()).then_some(command)
}

/// What `git` runs from its own words: configuration the line sets (`git config alias.x '!cmd'`,
/// `core.fsmonitor`, `core.hooksPath`, `include.path`, ... run by a later git command), and
/// `git clone -u CMD`.
fn git_runs(args: &[ShellWord]) -> Vec<Found> {
    let (Some(subcommand), rest) = git_subcommand(args) else {
        return Vec::new();
    };
    match subcommand {
        "config" => {
            let reading = rest.iter().any(|word| {
                matches!(
                    word.text.as_str(),
                    "--get"
                        | "--get-all"
                        | "--get-regexp"
                        | "--list"
                        | "-l"
                        | "--show-origin"
                        | "--get-urlmatch"
                        | "get"
                        | "list"
                )
            });
            let key = rest
                .iter()
                .find(|word| !word.text.starts_with('-') && word.text != "set")
                .map(|word| word.text.to_ascii_lowercase());
            let harmless = key.as_deref().is_some_and(|key| {
                HARMLESS_GIT_CONFIG
                    .iter()
                    .any(|prefix| key.starts_with(prefix.trim_end_matches('=')))
            });
            if reading || harmless || key.is_none() {
                Vec::new()
            } else {
                vec![Found::Unknown(
                    "`git config` sets configuration a later git command may run (alias.x=!…, core.fsmonitor, core.hooksPath, include.path)"
                        .to_owned(),
                )]
            }
        }
        "clone" => option_values("-u", rest)
            .into_iter()
            .map(|value| Found::Runs {
                what: "`git clone -u`".to_owned(),
                text: value.filter(|word| word.literal).map(|word| word.text),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The `git` subcommand of `args`, past the global options (some with a value: `-C DIR`,
/// `-c KEY=VALUE`, `--git-dir DIR`), and the words after it. One reading for every git rule.
pub fn git_subcommand(args: &[ShellWord]) -> (Option<&str>, &[ShellWord]) {
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

/// `git config -f FILE` (`--file`) reads and writes FILE.
fn git_config_file(args: &[ShellWord]) -> Vec<Found> {
    let (Some("config"), rest) = git_subcommand(args) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (index, word) in rest.iter().enumerate() {
        let file = match word.text.as_str() {
            "-f" | "--file" => rest.get(index + 1).cloned(),
            text => text.strip_prefix("--file=").map(|value| ShellWord {
                text: value.to_owned(),
                ..word.clone()
            }),
        };
        if let Some(file) = file {
            found.push(Found::Reads(file.clone()));
            found.push(Found::Writes(file));
        }
    }
    found
}

/// True when an interpreter is only asked for its version or help, or to run a module by name
/// (`python3 -m pytest`: a program like any other).
fn info_only(args: &[ShellWord]) -> bool {
    (!args.is_empty()
        && args
            .iter()
            .all(|word| INFO_ONLY.contains(&word.text.as_str())))
        || args
            .iter()
            .take_while(|word| word.text.starts_with('-'))
            .any(|word| word.text == "-m")
}

/// What the option rows of `base` find in `args`.
fn examine_options(base: &str, args: &[ShellWord]) -> Vec<Found> {
    let mut found = Vec::new();
    for row in rows(base) {
        if matches!(
            row.effect,
            Effect::Wrapper | Effect::Interpreter | Effect::Remote
        ) || row.option == "*"
        {
            continue;
        }
        for value in option_values(row.option, args) {
            let readable = value.as_ref().filter(|word| word.literal);
            let text = readable.map(|word| word.text.as_str());
            if !row.prefix.is_empty() && !text.is_none_or(|text| starts_with_key(text, row.prefix))
            {
                continue;
            }
            let rest = text.map(|text| text.get(row.prefix.len()..).unwrap_or_default());
            let what = format!("`{} {}`", row.program, row.option);
            match row.effect {
                Effect::Runs => found.push(Found::Runs {
                    what,
                    text: rest.map(str::to_owned),
                }),
                Effect::Code => {
                    if base == "git"
                        && row.option == "-c"
                        && rest.is_some_and(|rest| {
                            let key = rest.to_ascii_lowercase();
                            HARMLESS_GIT_CONFIG
                                .iter()
                                .any(|harmless| key.starts_with(harmless))
                        })
                    {
                        continue;
                    }
                    found.push(Found::Unknown(format!(
                        "{what} runs code janua cannot read"
                    )));
                }
                Effect::Writes | Effect::Reads => {
                    let word = match (&value, rest) {
                        (Some(word), Some(rest)) => ShellWord {
                            text: rest.to_owned(),
                            ..word.clone()
                        },
                        (Some(word), None) => word.clone(),
                        (None, _) => ShellWord::default(),
                    };
                    found.push(if row.effect == Effect::Writes {
                        Found::Writes(word)
                    } else {
                        Found::Reads(word)
                    });
                }
                Effect::Wrapper | Effect::Interpreter | Effect::Remote => {}
            }
        }
    }
    found
}

/// True when `text` starts with the key `prefix` (`ProxyCommand=`), compared without case, also
/// when the key is followed by a space instead of `=` (ssh reads `-o "ProxyCommand cmd"`).
fn starts_with_key(text: &str, prefix: &str) -> bool {
    let head = text.get(..prefix.len()).unwrap_or_default();
    if head.eq_ignore_ascii_case(prefix) {
        return true;
    }
    prefix.strip_suffix('=').is_some_and(|key| {
        text.get(..key.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(key))
            && text[key.len()..].starts_with([' ', '\t'])
    })
}

/// The values `option` takes in `args` (`None`: present, its value missing). `--long V`,
/// `--long=V`; `-s V`, `-sV`, a bundle ending in the letter (`-xI V`); `NAME=V`; `+V`; a
/// subcommand word followed by its value (`csvtool call V`).
fn option_values(option: &str, args: &[ShellWord]) -> Vec<Option<ShellWord>> {
    let with_text = |word: &ShellWord, text: &str| ShellWord {
        text: text.to_owned(),
        ..word.clone()
    };
    let mut values = Vec::new();
    for (at, word) in args.iter().enumerate() {
        let text = word.text.as_str();
        let next = || args.get(at + 1).cloned();
        if option == "+" {
            if let Some(rest) = text.strip_prefix('+').filter(|rest| !rest.is_empty()) {
                values.push(Some(with_text(word, rest)));
            }
        } else if option.ends_with('=') {
            if let Some(rest) = text.strip_prefix(option) {
                values.push(Some(with_text(word, rest)));
            }
        } else if text == option {
            values.push(next());
        } else if let Some(long) = option.strip_prefix("--") {
            if let Some(rest) = text
                .strip_prefix("--")
                .and_then(|text| text.strip_prefix(long))
                .and_then(|rest| rest.strip_prefix('='))
            {
                values.push(Some(with_text(word, rest)));
            }
        } else if let Some(letter) = option.strip_prefix('-')
            && letter.len() == 1
            && !text.starts_with("--")
            && let Some(bundle) = text.strip_prefix('-')
        {
            if let Some(attached) = bundle.strip_prefix(letter) {
                values.push(Some(with_text(word, attached)));
            } else if bundle.ends_with(letter) && bundle.chars().all(|c| c.is_ascii_alphanumeric())
            {
                values.push(next());
            }
        } else if option.starts_with('-')
            && let Some(rest) = text.strip_prefix(option).filter(|rest| !rest.is_empty())
        {
            // `-pdflatex=...`, `-wrapper,...`: a long single-dash option with its value attached.
            values.push(Some(with_text(word, rest.trim_start_matches(['=', ',']))));
        }
    }
    values
}

/// Why a `sed` call may run a command or touch another file: a script beyond printing and plain
/// substitution (`e`, `w`, `r`, ...), or one only known when it runs.
pub fn sed_runs(base: &str, args: &[ShellWord]) -> Option<String> {
    if base != "sed" {
        return None;
    }
    let safe = super::sed::sed_scripts(args)
        .is_some_and(|(scripts, _)| scripts.iter().all(|s| super::sed::safe_script(s)));
    (!safe || !args.iter().all(|arg| arg.literal)).then(|| {
        "this `sed` script can run a command or write or read another file (e, w, r, ...)"
            .to_owned()
    })
}

/// Why an `awk` program may run commands or touch files (`system`, `getline`, `|`, `>`), or
/// comes from a file.
pub fn awk_runs(base: &str, args: &[ShellWord]) -> Option<String> {
    if !matches!(base, "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk") {
        return None;
    }
    let mut words = args.iter();
    let program = loop {
        let word = words.next()?;
        match word.text.as_str() {
            "-F" | "-v" => {
                words.next();
            }
            text if text.starts_with("-f") || text.starts_with("--file") => {
                return Some("`awk -f` runs a program file".to_owned());
            }
            text if text.starts_with('-') => {}
            _ => break word,
        }
    };
    let text = program.text.as_str();
    (!program.literal
        || text.contains("system")
        || text.contains("getline")
        || text.contains('|')
        || text.contains('>'))
    .then(|| {
        "this `awk` program can run commands or write files (system, getline, |, >)".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<ShellWord> {
        super::super::shell::split(command).subcommands[0]
            .words
            .clone()
    }

    fn found(command: &str) -> Vec<Found> {
        let parsed = super::super::shell::split(command);
        let sub = &parsed.subcommands[0];
        let mut found = examine(&sub.words);
        found.extend(assigned(sub));
        found
    }

    #[test]
    fn every_row_parses_and_cites_a_source() {
        let text = include_str!("programs.tsv");
        let rows = text
            .lines()
            .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
            .count();
        assert_eq!(TABLE.len(), rows, "a malformed row in programs.tsv");
        assert!(rows >= 250, "programs.tsv has {rows} rows");
        for line in text.lines().filter(|line| !line.starts_with('#')) {
            let source = line.split('\t').nth(4).unwrap_or_default();
            assert!(
                source.starts_with("GTFOBins ") || source.starts_with("janua: "),
                "{line}"
            );
        }
    }

    #[test]
    fn options_that_run_programs_are_read() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec=./e.sh x",
                Some("./e.sh"),
            ),
            ("tar xf a.tar --to-command 'rm x'", Some("rm x")),
            ("tar -xI 'sh -c rm' -f a", Some("sh -c rm")),
            ("tar --use-compress-program=zstd -cf a.tar .", Some("zstd")),
            ("rsync -e 'ssh -i k' a b:", Some("ssh -i k")),
            ("ssh -o ProxyCommand='rm x' host", Some("rm x")),
            ("ssh -oproxycommand=nc host", Some("nc")),
            ("ssh -o 'ProxyCommand rm y' host", Some("rm y")),
            ("zip a.zip f -T -TT 'rm z'", Some("rm z")),
            ("git clone --upload-pack='rm w' x", Some("rm w")),
            ("make SHELL=/tmp/evil", Some("/tmp/evil")),
            ("man -P 'rm v' ls", Some("rm v")),
        ];
        for (command, expected) in cases {
            let runs: Vec<Option<String>> = found(command)
                .into_iter()
                .filter_map(|found| match found {
                    Found::Runs { text, .. } => Some(text),
                    _ => None,
                })
                .collect();
            assert_eq!(
                runs.first().cloned().flatten().as_deref(),
                *expected,
                "{command}: {runs:?}"
            );
            assert!(exact_only(&words(command)).is_some(), "{command}");
        }
    }

    #[test]
    fn code_and_interpreters_are_unknown_and_plain_calls_are_not() {
        let unknown = |command: &str| {
            found(command)
                .iter()
                .any(|found| matches!(found, Found::Unknown(_)))
        };
        for command in [
            "python3 -c 'print(1)'",
            "python3.12 script.py",
            "node -e 'x'",
            "perl -e 'unlink q(x)'",
            "ruby x.rb",
            "python3",
            "git -c core.pager='rm x' log",
            "git -c alias.x='!rm y' x",
            "awk 'BEGIN {system(\"rm x\")}'",
            "sed -n '1e rm x' f",
            "sqlite3 db '.shell rm x'",
            "PAGER='rm x' git -p help",
            "export GIT_SSH_COMMAND='rm x'",
            "vim -c ':!rm x'",
            "make --eval='$(shell rm x)'",
        ] {
            assert!(unknown(command), "{command}");
        }
        for command in [
            "python3 --version",
            "python3 -m pytest -q",
            "git -c color.ui=always log",
            "git log --oneline",
            "tar -cf a.tar src",
            "awk '{print $1}' f",
            "sed 's/a/b/' f",
            "make test",
            "cargo build",
            "ls -la",
        ] {
            assert!(!unknown(command), "{command}: {:?}", found(command));
            if !command.starts_with("python3 --") {
                assert_eq!(exact_only(&words(command)), None, "{command}");
            }
        }
    }

    #[test]
    fn scripts_and_wrappers_are_found() {
        assert_eq!(
            found("sh -e clean.sh arg"),
            [Found::Script(words("clean.sh")[0].clone())]
        );
        assert!(
            matches!(&found("source env.sh")[..], [Found::Script(word)] if word.text == "env.sh")
        );
        assert!(
            matches!(&found("./build.sh")[..], [Found::PathProgram(words)] if words[0].text == "./build.sh")
        );
        assert!(found("sh -c 'rm x'").is_empty());
        assert_eq!(wrapper_start(&words("strace -f rm x")), Some(1));
        assert_eq!(wrapper_start(&words("npm exec rm x")), Some(2));
        assert_eq!(wrapper_start(&words("npm test")), None);
        assert!(exact_only(&words("valgrind rm x")).is_some());
        assert!(exact_only(&words("npm exec rm x")).is_some());
        assert_eq!(exact_only(&words("npm test")), None);
        for (command, runs) in [
            ("ssh localhost rm x", Some("rm x")),
            (
                "ssh -p 22 -i key -o BatchMode=yes host ls -la",
                Some("ls -la"),
            ),
            ("ssh -tt user@host -- uptime", Some("uptime")),
        ] {
            let found = found(command);
            assert!(
                found.contains(&Found::Runs {
                    what: "`ssh` with a command".to_owned(),
                    text: runs.map(str::to_owned),
                }),
                "{command}: {found:?}"
            );
            assert!(exact_only(&words(command)).is_some(), "{command}");
        }
        assert!(found("ssh host").is_empty());
        assert_eq!(exact_only(&words("ssh -p 22 host")), None);
        let writes = found("curl -o out.html https://x");
        assert!(matches!(&writes[..], [Found::Writes(word)] if word.text == "out.html"));
        let reads = found("dd if=.env of=/dev/null");
        assert!(
            reads
                .iter()
                .any(|found| matches!(found, Found::Reads(word) if word.text == ".env"))
        );
    }
}
