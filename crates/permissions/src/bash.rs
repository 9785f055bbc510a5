//! Bash rule specifiers: Claude Code's text patterns (`git * main`, `ls *`, legacy `ls:*`) and
//! janua's argv patterns (`argv:rm -r -f`), and the forms of a subcommand each rule kind sees.
//!
//! Allow rules see one form: wrappers stripped, and only known-safe leading assignments. Deny and
//! ask rules see every form: as written, each wrapper peeled, the program's base name, and past
//! exec-style wrappers (`sudo`, `env`, `exec`) that allow rules never look through.

use super::shell::{ShellWord, Subcommand, join};
use janua_types::wildcard;

use crate::rules::SpecifierError;

/// Leading assignments an allow rule may look past: they change formatting, not what runs.
const SAFE_ASSIGNMENTS: &[&str] = &[
    "NODE_ENV",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "CI",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "TERM",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "DEBUG",
    "VERBOSE",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "CARGO_TERM_COLOR",
    "COLUMNS",
];

/// Wrappers deny rules also look through (allow rules do not: they run their argument with
/// different privileges or environment).
pub const EXEC_WRAPPERS: &[&str] = &[
    "exec", "env", "sudo", "doas", "setsid", "ionice", "chrt", "taskset", "watch", "flock",
    "unbuffer", "chroot", "runuser", "su", "xargs", "setarch", "linux32", "linux64", "i386",
    "x86_64", "prlimit", "setpriv", "choom", "unshare", "numactl", "nsenter", "cgexec",
];

/// A parsed Bash rule specifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPattern {
    /// Claude Code's text pattern.
    Text {
        /// The pattern, `:*` rewritten to ` *`.
        pattern: String,
    },
    /// janua's argv pattern.
    Argv(ArgvPattern),
}

/// `argv:PROGRAM [-flag | --long[=glob] | !-flag | operand-glob]...`: matches the parsed argument
/// vector, so flag bundles (`-rf`, `-fr`, `-r -f`) and `--flag=value` mean one thing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgvPattern {
    program: String,
    required: Vec<Flag>,
    forbidden: Vec<Flag>,
    operands: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Flag {
    /// `-x`, or `-xyz` read as a bundle (or, for `find`-style programs, a literal word).
    Short(String),
    /// `--name` or `--name=glob`.
    Long { name: String, value: Option<String> },
}

impl CommandPattern {
    /// Parses a Bash specifier.
    pub(crate) fn parse(specifier: &str) -> Result<Self, SpecifierError> {
        if let Some(rest) = specifier.strip_prefix("argv:") {
            return ArgvPattern::parse(rest).map(Self::Argv);
        }
        let pattern = match specifier.strip_suffix(":*") {
            Some(prefix) => format!("{prefix} *"),
            None => specifier.to_owned(),
        };
        Ok(Self::Text { pattern })
    }

    /// True when the pattern matches one form of a subcommand.
    #[cfg(test)]
    pub fn matches(&self, words: &[ShellWord]) -> bool {
        match self {
            Self::Text { pattern } => text_matches(pattern, &join(words)),
            Self::Argv(argv) => argv.matches(words),
        }
    }
}

/// One spelling of a subcommand: its words and their text joined by single spaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    /// The words.
    pub words: Vec<ShellWord>,
    /// The words joined by single spaces.
    pub text: String,
}

impl Form {
    fn new(words: Vec<ShellWord>) -> Self {
        let text = join(&words);
        Self { words, text }
    }
}

/// What allow and deny rules see of one subcommand, computed once per call.
#[derive(Debug, Clone)]
pub struct SubcommandForms {
    /// The form allow rules see (`None`: no pattern may allow it).
    pub allow: Option<Form>,
    /// Why only an exact rule (no `*`, the whole command) may allow `allow`: the command runs
    /// another command or deletes files through an exec wrapper or `find` action.
    pub exact_only: Option<String>,
    /// Every form deny and ask rules see.
    pub deny: Vec<Form>,
    /// True for a subcommand that only redirects (`> file`).
    pub redirect_only: bool,
}

impl SubcommandForms {
    /// The forms of `sub`.
    pub fn new(sub: &Subcommand) -> Self {
        let allow = allow_form(sub).map(Form::new);
        Self {
            exact_only: allow.as_ref().and_then(|form| exact_only(&form.words)),
            allow,
            deny: deny_forms(sub)
                .into_iter()
                .filter(|words| !words.is_empty())
                .map(Form::new)
                .collect(),
            redirect_only: sub.words.is_empty() && sub.assignments.is_empty(),
        }
    }
}

impl CommandPattern {
    /// True when the pattern matches `form` (the deny and ask reading: a program name that is a
    /// glob matches when it could expand to the pattern's program).
    pub fn matches_form(&self, form: &Form) -> bool {
        match self {
            Self::Text { pattern } => {
                text_matches(pattern, &form.text) || glob_program_matches(pattern, form)
            }
            Self::Argv(argv) => argv.matches(&form.words),
        }
    }

    /// True when the pattern may allow `form`: an argv pattern reads flags, so every argument
    /// must be a plain word (a brace or `${IFS}` could hide a flag). With `exact_only` only a text
    /// pattern without `*` that is the whole command allows it.
    pub fn allows_form(&self, form: &Form, exact_only: bool) -> bool {
        match self {
            Self::Text { pattern } if exact_only => !pattern.contains('*') && *pattern == form.text,
            Self::Argv(_) if exact_only => false,
            Self::Text { pattern } => text_matches(pattern, &form.text),
            Self::Argv(argv) => {
                form.words.iter().all(|word| word.literal && !word.glob)
                    && argv.matches(&form.words)
            }
        }
    }
}

/// `/???/r? -rf x` against `rm *`: when the program word is a glob that could expand to the
/// pattern's literal first word, the form is read with that word in its place.
fn glob_program_matches(pattern: &str, form: &Form) -> bool {
    let Some((program, rest)) = form.words.split_first() else {
        return false;
    };
    if !program.glob {
        return false;
    }
    let head = pattern.split(' ').next().unwrap_or_default();
    if head.is_empty() || head.contains('*') {
        return false;
    }
    let base = program.text.rsplit('/').next().unwrap_or_default();
    let expands_to_head = globset::Glob::new(base)
        .map(|glob| glob.compile_matcher().is_match(head))
        .unwrap_or(true);
    if !expands_to_head {
        return false;
    }
    let mut text = head.to_owned();
    for word in rest {
        text.push(' ');
        text.push_str(&word.text);
    }
    text_matches(pattern, &text)
}

/// Claude Code's Bash text matching: `*` spans anything including spaces; a trailing ` *` also
/// matches the bare prefix, so `ls *` matches `ls` and `ls -la` but not `lsof`.
pub fn text_matches(pattern: &str, text: &str) -> bool {
    if wildcard::matches(pattern, text) {
        return true;
    }
    pattern
        .strip_suffix(" *")
        .is_some_and(|prefix| wildcard::matches(prefix, text))
}

impl ArgvPattern {
    fn parse(text: &str) -> Result<Self, SpecifierError> {
        let mut tokens = text.split_whitespace();
        let program = tokens
            .next()
            .ok_or(SpecifierError::ArgvWithoutProgram)?
            .to_owned();
        let mut pattern = Self {
            program,
            required: Vec::new(),
            forbidden: Vec::new(),
            operands: Vec::new(),
        };
        for token in tokens {
            if let Some(flag) = token.strip_prefix('!') {
                let flag = Flag::parse(flag)
                    .ok_or_else(|| SpecifierError::ArgvNegation(token.to_owned()))?;
                pattern.forbidden.push(flag);
            } else if let Some(flag) = Flag::parse(token) {
                pattern.required.push(flag);
            } else {
                pattern.operands.push(token.to_owned());
            }
        }
        Ok(pattern)
    }

    fn matches(&self, words: &[ShellWord]) -> bool {
        let Some((program, args)) = words.split_first() else {
            return false;
        };
        let base = program.text.rsplit('/').next().unwrap_or_default();
        if !(wildcard::matches(&self.program, &program.text)
            || wildcard::matches(&self.program, base))
        {
            return false;
        }
        let parsed = ParsedArgs::new(base, args);
        self.required.iter().all(|flag| parsed.has(flag))
            && !self.forbidden.iter().any(|flag| parsed.has(flag))
            && self.operands.iter().all(|pattern| {
                parsed
                    .operands
                    .iter()
                    .any(|operand| wildcard::matches(pattern, operand))
            })
    }
}

impl Flag {
    fn parse(token: &str) -> Option<Self> {
        if let Some(long) = token.strip_prefix("--") {
            if long.is_empty() {
                return None;
            }
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
                None => (long.to_owned(), None),
            };
            return Some(Self::Long { name, value });
        }
        let short = token.strip_prefix('-')?;
        (!short.is_empty()).then(|| Self::Short(short.to_owned()))
    }
}

/// A command's arguments read as flags and operands. Flag presence is over-approximated (a short
/// flag counts as present if any bundle holds its letter), which errs towards deny for required
/// flags and towards asking for forbidden ones.
struct ParsedArgs {
    words: Vec<String>,
    letters: std::collections::BTreeSet<char>,
    long: Vec<(String, Option<String>)>,
    operands: Vec<String>,
}

impl ParsedArgs {
    fn new(program: &str, args: &[ShellWord]) -> Self {
        let mut parsed = Self {
            words: Vec::new(),
            letters: std::collections::BTreeSet::new(),
            long: Vec::new(),
            operands: Vec::new(),
        };
        let mut flags_done = false;
        for arg in args {
            let text = arg.text.as_str();
            if flags_done || text == "-" || !text.starts_with('-') {
                parsed.operands.push(text.to_owned());
                continue;
            }
            if text == "--" {
                flags_done = true;
                continue;
            }
            parsed.words.push(text.to_owned());
            if let Some(long) = text.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
                    None => (long.to_owned(), None),
                };
                if let Some(letter) = short_alias(program, &name) {
                    parsed.letters.insert(letter);
                }
                parsed.long.push((name, value));
            } else {
                parsed.letters.extend(text[1..].chars());
            }
        }
        parsed
    }

    fn has(&self, flag: &Flag) -> bool {
        match flag {
            Flag::Short(letters) => {
                self.words.iter().any(|word| word[1..] == **letters)
                    || letters.chars().all(|letter| self.letters.contains(&letter))
            }
            Flag::Long { name, value } => self.long.iter().any(|(have, have_value)| {
                have == name
                    && match value {
                        None => true,
                        Some(pattern) => have_value
                            .as_deref()
                            .is_some_and(|v| wildcard::matches(pattern, v)),
                    }
            }),
        }
    }
}

/// Long options of common destructive programs and the short flag each means, so
/// `argv:rm -r -f` also matches `rm --recursive --force` (and getopt's unambiguous prefixes, such
/// as `--rec`, of at least three letters).
const LONG_ALIASES: &[(&str, &str, char)] = &[
    ("rm", "recursive", 'r'),
    ("rm", "force", 'f'),
    ("rm", "dir", 'd'),
    ("rm", "interactive", 'i'),
    ("cp", "recursive", 'r'),
    ("cp", "force", 'f'),
    ("mv", "force", 'f'),
    ("ln", "force", 'f'),
    ("ln", "symbolic", 's'),
    ("chmod", "recursive", 'R'),
    ("chown", "recursive", 'R'),
    ("git", "force", 'f'),
    ("shred", "remove", 'u'),
    ("shred", "force", 'f'),
];

fn short_alias(program: &str, name: &str) -> Option<char> {
    LONG_ALIASES
        .iter()
        .find(|(known, long, _)| {
            *known == program && (*long == name || (name.len() >= 3 && long.starts_with(name)))
        })
        .map(|(_, _, letter)| *letter)
}

/// The one form allow rules see: wrappers stripped, past safe assignments only. `None` when no
/// pattern rule may allow the subcommand (an unsafe assignment, a program that is not a literal
/// word, or a bare assignment that changes the environment of later commands).
pub fn allow_form(sub: &Subcommand) -> Option<Vec<ShellWord>> {
    if sub
        .assignments
        .iter()
        .any(|name| !SAFE_ASSIGNMENTS.contains(&name.as_str()))
    {
        return None;
    }
    let mut words = &sub.words[..];
    let mut from_stdin = false;
    while let Some(rest) = strip_one_wrapper(words) {
        from_stdin |= words[0].text == "xargs";
        words = rest;
    }
    let program = words.first()?;
    // A glob or expansion in the program name runs whatever it expands to; a quoted name with a
    // space (`'npm test'`) is one program, not the words a pattern would see.
    if !program.literal || program.glob || program.text.contains(char::is_whitespace) {
        return None;
    }
    let mut form = words.to_vec();
    if from_stdin {
        // `xargs` appends arguments read from stdin: the form ends with words not known yet.
        form.push(stdin_arguments());
    }
    Some(form)
}

/// Exec wrappers whose argument command no prefix rule may approve (Claude Code: `watch`,
/// `setsid`, `ionice`, `flock`; janua adds `xargs` with options, which Claude Code matches as an
/// `xargs` command: `Bash(xargs *)` would approve whatever program it names).
const EXACT_ONLY_WRAPPERS: &[&str] = &["watch", "setsid", "ionice", "flock", "xargs"];

/// `find` actions that run a command or delete files.
const FIND_EXEC_ACTIONS: &[&str] = &["-exec", "-execdir", "-ok", "-okdir", "-delete"];

/// Why only an exact rule may allow the allow form `words` (`None`: a prefix rule may). Claude
/// Code's exec wrappers (CHANGELOG 2.1.113), and `find` with an action that runs a command or
/// deletes, or with an argument only known at run time (a glob or expansion could become
/// `-exec`).
pub fn exact_only(words: &[ShellWord]) -> Option<String> {
    let (program, args) = words.split_first()?;
    let base = program.text.rsplit('/').next().unwrap_or_default();
    if EXACT_ONLY_WRAPPERS.contains(&base) {
        return Some(format!(
            "`{base}` runs the command it is given, so only an exact rule for the whole command \
             approves it"
        ));
    }
    if let Some(why) = super::programs::exact_only(words) {
        return Some(format!(
            "{why}, so only an exact rule for the whole command approves it"
        ));
    }
    if base != "find" {
        return None;
    }
    if let Some(action) = args
        .iter()
        .find(|arg| arg.literal && FIND_EXEC_ACTIONS.contains(&arg.text.as_str()))
    {
        return Some(format!(
            "`find {}` {}, so only an exact rule for the whole command approves it",
            action.text,
            if action.text == "-delete" {
                "deletes files"
            } else {
                "runs another command"
            }
        ));
    }
    args.iter().any(|arg| !arg.literal || arg.glob).then(|| {
        "`find` has an argument only known when it runs (it could become -exec or -delete), so \
         only an exact rule for the whole command approves it"
            .to_owned()
    })
}

/// The commands `find -exec`, `-execdir`, `-ok` and `-okdir` run: the words after the action up
/// to its `;` or `+`, or to the end when bash took an unescaped `;` as a command separator.
fn find_exec_commands(args: &[ShellWord]) -> Vec<Vec<ShellWord>> {
    let mut commands = Vec::new();
    let mut rest = args;
    while let Some(at) = rest
        .iter()
        .position(|arg| matches!(arg.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
    {
        let after = &rest[at + 1..];
        let end = after
            .iter()
            .position(|arg| arg.text == ";" || arg.text == "+")
            .unwrap_or(after.len());
        if end > 0 {
            commands.push(after[..end].to_vec());
        }
        rest = &after[end.min(after.len())..];
    }
    commands
}

/// Every form deny and ask rules see.
pub fn deny_forms(sub: &Subcommand) -> Vec<Vec<ShellWord>> {
    let mut forms: Vec<Vec<ShellWord>> = Vec::new();
    let mut pending = vec![sub.words.clone()];
    while let Some(words) = pending.pop() {
        if words.is_empty() || forms.contains(&words) || forms.len() > 64 {
            continue;
        }
        if let Some(rest) = strip_one_wrapper(&words) {
            let mut rest = rest.to_vec();
            if words[0].text == "xargs" {
                rest.push(stdin_arguments());
            }
            pending.push(rest);
        }
        let program = &words[0];
        if program.text.contains('/') {
            let mut renamed = words.clone();
            renamed[0].text = program
                .text
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned();
            pending.push(renamed);
        }
        if let Some(expanded) = expand_braces(program) {
            let mut spelled = expanded;
            spelled.extend(words[1..].iter().cloned());
            pending.push(spelled);
        }
        let base = program.text.rsplit('/').next().unwrap_or_default();
        if base == "find" {
            pending.extend(find_exec_commands(&words[1..]));
        }
        let wrapped = if EXEC_WRAPPERS.contains(&base) || STRIPPED_WRAPPERS.contains(&base) {
            Some(1)
        } else {
            super::programs::wrapper_start(&words)
        };
        if let Some(start) = wrapped {
            // Options of these wrappers vary; every later non-flag word may start the command.
            for (at, word) in words.iter().enumerate().skip(start) {
                if forms.len() + pending.len() >= 64 {
                    break;
                }
                if !word.text.starts_with('-') && !word.text.contains('=') {
                    pending.push(words[at..].to_vec());
                }
            }
        }
        forms.push(words);
    }
    if forms.is_empty() {
        forms.push(Vec::new());
    }
    forms
}

/// `{rm,-rf,/}` as the words bash makes of it (one level, no nesting), for deny rules.
fn expand_braces(word: &ShellWord) -> Option<Vec<ShellWord>> {
    let inner = word.text.strip_prefix('{')?.strip_suffix('}')?;
    if !inner.contains(',') || inner.contains(['{', '}']) {
        return None;
    }
    Some(
        inner
            .split(',')
            .map(|text| ShellWord {
                text: text.to_owned(),
                literal: true,
                ..ShellWord::default()
            })
            .collect(),
    )
}

/// Claude Code's wrappers, which allow rules look through.
pub const STRIPPED_WRAPPERS: &[&str] = &[
    "timeout", "time", "nice", "nohup", "stdbuf", "command", "builtin", "noglob", "xargs",
];

/// The stand-in for arguments `xargs` reads from stdin.
fn stdin_arguments() -> ShellWord {
    ShellWord {
        text: "<stdin>".to_owned(),
        literal: false,
        ..ShellWord::default()
    }
}

/// Strips one wrapper (`timeout`, `time`, `nice`, `nohup`, `stdbuf`, `command`, `builtin`,
/// `noglob`, bare `xargs`) with its own options, if the words start with one.
pub fn strip_one_wrapper(words: &[ShellWord]) -> Option<&[ShellWord]> {
    let (first, rest) = words.split_first()?;
    if !first.literal || first.glob {
        return None;
    }
    let after = match first.text.as_str() {
        "nohup" | "builtin" | "noglob" => rest,
        "time" => skip_flags(rest, &["-p"], &[])?,
        "command" | "xargs" => {
            if rest.first()?.text.starts_with('-') {
                return None;
            }
            rest
        }
        "nice" => {
            let rest = skip_flags(rest, &[], &["-n", "--adjustment"])?;
            match rest.first() {
                Some(word)
                    if word.text.starts_with('-') && word.text[1..].parse::<i32>().is_ok() =>
                {
                    &rest[1..]
                }
                _ => rest,
            }
        }
        "stdbuf" => skip_flags(
            rest,
            &[],
            &["-i", "-o", "-e", "--input", "--output", "--error"],
        )?,
        "timeout" => {
            let rest = skip_flags(
                rest,
                &["--preserve-status", "--foreground", "-v", "--verbose"],
                &["-s", "--signal", "-k", "--kill-after"],
            )?;
            let (duration, rest) = rest.split_first()?;
            if !duration.literal || duration.glob {
                return None;
            }
            let number = duration.text.trim_end_matches(['s', 'm', 'h', 'd']);
            if number.parse::<f64>().is_err() {
                return None;
            }
            rest
        }
        _ => return None,
    };
    (!after.is_empty()).then_some(after)
}

/// Skips known flags: `plain` take no value; `valued` take one (`-n 5`, `-n5`, `--name=5`).
/// `None` when an unknown flag appears.
fn skip_flags<'a>(
    mut words: &'a [ShellWord],
    plain: &[&str],
    valued: &[&str],
) -> Option<&'a [ShellWord]> {
    while let Some((word, rest)) = words.split_first() {
        let text = word.text.as_str();
        if !text.starts_with('-') || text == "-" {
            break;
        }
        // `-o {L,touch,/x}` or `-n5${IFS}cmd`: bash splits these into more words than they look.
        let simple = |word: &ShellWord| word.literal && !word.glob;
        if !simple(word) || (valued.contains(&text) && !rest.first().is_some_and(simple)) {
            return None;
        }
        if text == "--" {
            return Some(rest);
        }
        if plain.contains(&text) {
            words = rest;
        } else if valued.contains(&text) {
            words = rest.get(1..)?;
        } else if valued.iter().any(|flag| {
            (flag.starts_with("--") && text.starts_with(&format!("{flag}=")))
                || (!flag.starts_with("--") && text.len() > 2 && text.starts_with(flag))
        }) {
            words = rest;
        } else if text.starts_with('-') && text[1..].parse::<i32>().is_ok() {
            // `nice -10`: handled by the caller.
            break;
        } else {
            return None;
        }
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::super::shell::split;
    use super::*;

    fn allowed(pattern: &str, command: &str) -> bool {
        let pattern = CommandPattern::parse(pattern).unwrap();
        let parsed = split(command);
        parsed.opaque.is_none()
            && !parsed.subcommands.is_empty()
            && parsed.subcommands.iter().all(|sub| {
                let forms = SubcommandForms::new(sub);
                forms
                    .allow
                    .as_ref()
                    .is_some_and(|form| pattern.allows_form(form, forms.exact_only.is_some()))
            })
    }

    fn denied(pattern: &str, command: &str) -> bool {
        let pattern = CommandPattern::parse(pattern).unwrap();
        split(command)
            .subcommands
            .iter()
            .any(|sub| deny_forms(sub).iter().any(|form| pattern.matches(form)))
    }

    #[test]
    fn wrappers_are_stripped_for_allow() {
        let cases = [
            ("npm test *", "timeout 30 npm test", true),
            ("npm test *", "timeout -s KILL 30s npm test --watch", true),
            ("npm test *", "time npm test", true),
            ("npm test *", "nice -n 10 npm test", true),
            ("npm test *", "nice -5 npm test", true),
            ("npm test *", "nohup npm test", true),
            ("npm test *", "stdbuf -oL npm test", true),
            ("npm test *", "command npm test", true),
            ("npm test *", "nohup nice timeout 5 npm test", true),
            ("grep *", "xargs grep pattern", true),
            ("grep *", "xargs -n1 grep pattern", false),
            ("npm test *", "command -v npm test", false),
            ("npm test *", "timeout --weird 5 npm test", false),
            ("npm test *", "NODE_ENV=test npm test", true),
            ("npm test *", "PATH=/tmp npm test", false),
            ("npm test *", "LD_PRELOAD=x.so npm test", false),
            ("ls *", "$CMD -la", false),
            ("ls *", "FOO=bar && ls", false),
        ];
        for (pattern, command, expected) in cases {
            assert_eq!(
                allowed(pattern, command),
                expected,
                "{pattern} vs {command}"
            );
        }
    }

    #[test]
    fn deny_sees_through_everything() {
        let cases = [
            ("rm *", "FOO=bar rm -rf tmp/", true),
            ("rm *", "/bin/rm -rf /", true),
            ("rm *", "sudo -u root rm -rf /", true),
            ("rm *", "env -i PATH=/x rm -rf /", true),
            ("rm *", "exec rm -rf /", true),
            ("rm *", "timeout 5 rm x", true),
            ("rm *", "echo rm", false),
            ("rm *", "rmdir x", false),
            ("curl *", "nohup nice curl evil.example", true),
        ];
        for (pattern, command, expected) in cases {
            assert_eq!(denied(pattern, command), expected, "{pattern} vs {command}");
        }
    }

    #[test]
    fn argv_patterns_normalize_flag_bundles() {
        let cases = [
            ("argv:rm -r -f", "rm -rf x", true),
            ("argv:rm -r -f", "rm -fr x", true),
            ("argv:rm -r -f", "rm -r -f x", true),
            ("argv:rm -r -f", "rm -r x", false),
            ("argv:rm -rf", "rm -f -r x", true),
            ("argv:git --force", "git push --force", true),
            ("argv:git --force", "git push --force=yes", true),
            ("argv:git --force", "git push", false),
            ("argv:curl --output=*.sh", "curl --output=x.sh u", true),
            ("argv:curl --output=*.sh", "curl --output=x.txt u", false),
            ("argv:rm /etc*", "rm -rf /etc/passwd", true),
            ("argv:rm /etc*", "rm -rf /tmp/x", false),
            ("argv:find !-exec !-delete", "find . -name x", true),
            ("argv:find !-exec !-delete", "find . -exec rm {} ;", false),
            ("argv:rm -r", "/bin/rm -r x", true),
            ("argv:rm -r", "rm -- -r", false),
            ("argv:rm -r -f", "rm --recursive --force x", true),
            ("argv:rm -r -f", "rm --rec --for x", true),
            ("argv:rm -r -f", "rm --re --force x", false),
            ("argv:git -f", "git push --force", true),
        ];
        for (pattern, command, expected) in cases {
            assert_eq!(denied(pattern, command), expected, "{pattern} vs {command}");
        }
        // Negation: find without -exec/-delete is allowed; with them it is not.
        assert!(allowed("argv:find !-exec !-delete", "find . -type f"));
        assert!(!allowed(
            "argv:find !-exec !-delete",
            "find . -exec rm {} ;"
        ));
        assert!(!allowed("argv:find !-exec !-delete", "find . -delete"));
    }

    #[test]
    fn malformed_argv_patterns_are_errors() {
        assert!(CommandPattern::parse("argv:").is_err());
        assert!(CommandPattern::parse("argv:rm !x").is_err());
    }
}
