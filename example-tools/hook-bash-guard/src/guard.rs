//! Finds a recursive, forced `rm` of a critical path in a command line.
//!
//! Each simple command (see `shell`) is looked at after skipping `VAR=value` assignments, reserved
//! words (`if`, `then`, `{`, `!`, ...) and wrappers that run the rest of the line as a command
//! (`sudo`, `doas`, `env`, `command`, `exec`, `nohup`, `nice`, `time`, `timeout`, `xargs`,
//! `builtin`, with their options). Scripts handed to `sh -c` (and `bash`, `zsh`, `dash`, `ksh`),
//! `eval` and `env -S` are checked as command lines of their own. An `rm` (any directory, e.g.
//! `/bin/rm`) is a violation when it has both a recursive (`-r`, `-R`, `--recursive`) and a force
//! (`-f`, `--force`) option, in any spelling GNU `rm` accepts (`-rf`, `-f -r`, `-rfv`, `--rec`),
//! and an operand that is critical.
//!
//! A path is critical when, after lexical normalization (trailing slashes, `.` and `..`
//! components; `$HOME`, `${HOME}` and `~` read as the home directory, `$PWD` and relative paths
//! resolved against the workspace), it is one of the built-in system paths, the home directory, a
//! `config.protect` path or the workspace root, or an ancestor of one of them (deleting `/work`
//! deletes the workspace `/work/project`). `*` and `.*` stand for everything in their directory,
//! so `/*` and `~/*` are critical too. Variables other than `HOME` and `PWD`, other globs and
//! operands read from standard input (`xargs`) are not expanded: this is a seatbelt against
//! accidents, not a sandbox.

use crate::shell::simple_commands;

/// Paths an `rm -rf` may never target, besides the home directory, the workspace and the
/// configured ones.
const SYSTEM_PATHS: &[&str] = &[
    "/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/var", "/home", "/root",
    "/opt", "/dev", "/proc", "/sys",
];

/// Scripts nested in scripts (`sh -c "eval '...'"`) are followed this deep.
const MAX_DEPTH: usize = 8;

/// A command that would delete a critical path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// The operand as the command wrote it, quotes removed.
    pub(crate) target: String,
    /// The operand normalized, e.g. `/work/project` for `.`.
    pub(crate) resolved: String,
    /// Why it is critical, completing "which ...", e.g. `is the workspace root`.
    pub(crate) why: String,
}

impl Violation {
    /// The reason shown to the model.
    pub(crate) fn reason(&self) -> String {
        let resolved = if self.resolved == self.target {
            String::new()
        } else {
            format!(" (that is {})", self.resolved)
        };
        format!(
            "bash-guard denied this command: it runs `rm` with recursive and force options on \
             {:?}{resolved}, which {}. Remove specific files or subdirectories instead.",
            self.target, self.why
        )
    }
}

/// What counts as critical for one event.
#[derive(Debug, Clone)]
pub(crate) struct Protected {
    /// Normalized critical paths: the system paths, `~`, the configured ones and the workspace.
    paths: Vec<String>,
    /// The normalized workspace root, when the event gives an absolute one.
    cwd: Option<String>,
}

impl Protected {
    /// The built-in paths plus `extra` (the `config.protect` entries), for workspace `cwd`.
    pub(crate) fn new(cwd: Option<&str>, extra: &[String]) -> Self {
        let cwd = cwd
            .filter(|cwd| cwd.starts_with('/'))
            .map(|cwd| normalize(cwd, None));
        let mut paths: Vec<String> = SYSTEM_PATHS.iter().map(|&path| path.to_owned()).collect();
        paths.push("~".to_owned());
        paths.extend(extra.iter().map(|path| normalize(path, cwd.as_deref())));
        paths.extend(cwd.clone());
        Self { paths, cwd }
    }

    /// Why deleting the normalized path `path` is not allowed, completing "which ...", or `None`
    /// when it may go.
    fn why(&self, path: &str) -> Option<String> {
        if let Some(parent) = path
            .strip_suffix("/*")
            .or_else(|| path.strip_suffix("/.*"))
            .map(|parent| if parent.is_empty() { "/" } else { parent })
        {
            return self
                .why(parent)
                .map(|why| format!("names everything in {parent}, which {why}"));
        }
        if path == "*" || path == ".*" {
            return Some("names everything in the workspace".to_owned());
        }
        if path == ".." || path.starts_with("../") {
            return Some("contains the workspace".to_owned());
        }
        if path == "." {
            return Some("is the workspace root".to_owned());
        }
        if path == HOME_PARENT {
            return Some("contains the home directory".to_owned());
        }
        for protected in &self.paths {
            let is_workspace = Some(protected) == self.cwd.as_ref();
            if path == protected {
                return Some(if is_workspace {
                    "is the workspace root".to_owned()
                } else if protected == "~" {
                    "is the home directory".to_owned()
                } else {
                    "is a protected path".to_owned()
                });
            }
            if is_ancestor(path, protected) {
                return Some(if is_workspace {
                    format!("contains the workspace root {protected}")
                } else if protected == "~" {
                    "contains the home directory".to_owned()
                } else {
                    format!("contains the protected path {protected}")
                });
            }
        }
        None
    }
}

/// The first violation in `script`, if any.
pub(crate) fn check(script: &str, protected: &Protected) -> Option<Violation> {
    check_script(script, protected, 0)
}

fn check_script(script: &str, protected: &Protected, depth: usize) -> Option<Violation> {
    if depth > MAX_DEPTH {
        return None;
    }
    simple_commands(script)
        .iter()
        .find_map(|words| check_command(words, protected, depth))
}

fn check_command(words: &[String], protected: &Protected, depth: usize) -> Option<Violation> {
    match unwrap(words) {
        Run::Program(words) => {
            let (program, args) = words.split_first()?;
            if basename(program) == "rm" {
                check_rm(args, protected)
            } else {
                None
            }
        }
        Run::Script(script) => check_script(&script, protected, depth + 1),
        Run::Nothing => None,
    }
}

/// What a simple command runs once assignments, reserved words and wrappers are skipped.
enum Run<'a> {
    /// A program and its arguments.
    Program(&'a [String]),
    /// A command line another program interprets (`sh -c`, `eval`, `env -S`).
    Script(String),
    /// Nothing we can see (`bash script.sh`, a bare wrapper).
    Nothing,
}

/// Reserved words that may start a simple command without being its program.
const RESERVED: &[&str] = &[
    "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
];

fn unwrap(mut words: &[String]) -> Run<'_> {
    loop {
        let Some((first, rest)) = words.split_first() else {
            return Run::Nothing;
        };
        if is_assignment(first) || RESERVED.contains(&first.as_str()) {
            words = rest;
            continue;
        }
        let program = basename(first);
        let with_argument: &[&str] = match program {
            "sudo" => &[
                "-u", "-g", "-p", "-C", "-D", "-h", "-r", "-t", "-T", "-U", "-R",
            ],
            "doas" => &["-u", "-C"],
            "env" => {
                if let Some(script) = env_split_string(rest) {
                    return Run::Script(script);
                }
                &["-u", "--unset", "-C", "--chdir"]
            }
            "exec" => &["-a"],
            "nice" => &["-n", "--adjustment"],
            "timeout" => &["-s", "--signal", "-k", "--kill-after"],
            "xargs" => &["-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a"],
            "command" | "builtin" | "nohup" => &[],
            "sh" | "bash" | "zsh" | "dash" | "ksh" => return shell_script(rest),
            "eval" => return Run::Script(rest.join(" ")),
            _ => return Run::Program(words),
        };
        words = skip_options(rest, with_argument);
        if program == "timeout" {
            // The duration comes before the command.
            words = words.get(1..).unwrap_or_default();
        }
    }
}

/// `args` without their leading options; options in `with_argument` also take the next word.
fn skip_options<'a>(mut args: &'a [String], with_argument: &[&str]) -> &'a [String] {
    while let Some((first, rest)) = args.split_first() {
        if first == "--" {
            return rest;
        }
        if !first.starts_with('-') || first == "-" {
            break;
        }
        args = rest;
        if with_argument.contains(&first.as_str()) {
            args = args.get(1..).unwrap_or_default();
        }
    }
    args
}

/// The string of `env -S STRING` / `env --split-string=STRING`, which env runs as a command line.
fn env_split_string(args: &[String]) -> Option<String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "-S" || arg == "--split-string" {
            return args.next().cloned();
        }
        if let Some(script) = arg
            .strip_prefix("--split-string=")
            .or_else(|| arg.strip_prefix("-S").filter(|script| !script.is_empty()))
        {
            return Some(script.to_owned());
        }
        if !arg.starts_with('-') {
            return None;
        }
    }
    None
}

/// The script of `sh -c SCRIPT` (options may be combined, as in `bash -lc`).
fn shell_script(args: &[String]) -> Run<'_> {
    let mut takes_script = false;
    for arg in args {
        if arg.starts_with('-') && !arg.starts_with("--") {
            takes_script |= arg[1..].contains('c');
            continue;
        }
        if arg.starts_with("--") {
            continue;
        }
        return if takes_script {
            Run::Script(arg.clone())
        } else {
            Run::Nothing
        };
    }
    Run::Nothing
}

fn check_rm(args: &[String], protected: &Protected) -> Option<Violation> {
    let mut recursive = false;
    let mut force = false;
    let mut operands = Vec::new();
    let mut options_done = false;
    for arg in args {
        if options_done || arg == "-" || !arg.starts_with('-') {
            operands.push(arg);
        } else if arg == "--" {
            options_done = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            // GNU getopt accepts any unambiguous prefix of a long option.
            let long = long.split('=').next().unwrap_or_default();
            recursive |= !long.is_empty() && "recursive".starts_with(long);
            force |= !long.is_empty() && "force".starts_with(long);
        } else {
            recursive |= arg.contains(['r', 'R']);
            force |= arg.contains('f');
        }
    }
    if !(recursive && force) {
        return None;
    }
    operands.into_iter().find_map(|target| {
        let resolved = normalize(target, protected.cwd.as_deref());
        protected.why(&resolved).map(|why| Violation {
            target: target.clone(),
            resolved,
            why,
        })
    })
}

/// The parent of the home directory, written as `normalize` reports a path that climbs above `~`.
const HOME_PARENT: &str = "~/..";

/// Normalizes `path` lexically: `~`, `$HOME` and `${HOME}` become the root `~`; `$PWD` and
/// `${PWD}` the workspace; a relative path is joined to `cwd` when known; empty and `.` components
/// go and `..` removes the component before it. `/..` is `/`; climbing above `~` gives
/// [`HOME_PARENT`]; a relative path with no `cwd` keeps its leading `..` and is `.` when empty.
pub(crate) fn normalize(path: &str, cwd: Option<&str>) -> String {
    let (root, rest) = split_root(path, cwd);
    let mut parts: Vec<&str> = Vec::new();
    let mut above_home = false;
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ => match root {
                    Root::Absolute => {}
                    Root::Home => above_home = true,
                    Root::Relative => parts.push(".."),
                },
            },
            part => parts.push(part),
        }
    }
    if above_home {
        return HOME_PARENT.to_owned();
    }
    let joined = parts.join("/");
    match root {
        Root::Absolute => format!("/{joined}"),
        Root::Home if joined.is_empty() => "~".to_owned(),
        Root::Home => format!("~/{joined}"),
        Root::Relative if joined.is_empty() => ".".to_owned(),
        Root::Relative => joined,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Root {
    Absolute,
    Home,
    Relative,
}

/// The root of `path` and the rest, with home and workspace variables replaced.
fn split_root(path: &str, cwd: Option<&str>) -> (Root, String) {
    for home in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = path.strip_prefix(home)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return (Root::Home, rest.to_owned());
        }
    }
    let mut path = path.to_owned();
    for variable in ["$PWD", "${PWD}"] {
        if let Some(rest) = path.strip_prefix(variable)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            path = format!(".{rest}");
        }
    }
    if path.starts_with('/') {
        return (Root::Absolute, path);
    }
    match cwd {
        Some(cwd) => (Root::Absolute, format!("{cwd}/{path}")),
        None => (Root::Relative, path),
    }
}

/// True when `ancestor` is a proper ancestor of `path`; both normalized.
fn is_ancestor(ancestor: &str, path: &str) -> bool {
    if ancestor == "/" {
        return path.starts_with('/') && path != "/";
    }
    path.strip_prefix(ancestor)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// `rm` for `/bin/rm`: programs are recognized by name whatever directory they come from.
fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// True for `NAME=value` words, which set a variable for the command instead of naming it.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    const CWD: &str = "/work/project";

    /// `Some(target)` when the command must be denied for that operand, `None` when allowed.
    #[test]
    fn finds_recursive_forced_rm_of_critical_paths() {
        let cases: &[(&str, Option<&str>)] = &[
            // Denied: every spelling of the flags, every critical path.
            ("rm -rf /", Some("/")),
            ("rm -fr /etc", Some("/etc")),
            ("rm -r -f /usr/", Some("/usr/")),
            ("rm -Rf /bin", Some("/bin")),
            ("rm --recursive --force /var", Some("/var")),
            ("rm --rec --forc /var", Some("/var")),
            ("rm -rfv /home", Some("/home")),
            ("rm -f -v -R /root//", Some("/root//")),
            ("rm /opt -rf", Some("/opt")),
            ("rm -rf -- /dev", Some("/dev")),
            ("rm -rf /*", Some("/*")),
            ("rm -rf ~", Some("~")),
            ("rm -rf ~/", Some("~/")),
            ("rm -rf $HOME", Some("$HOME")),
            ("rm -rf ${HOME}/", Some("${HOME}/")),
            ("rm -rf ~/*", Some("~/*")),
            ("rm -rf .", Some(".")),
            ("rm -rf ..", Some("..")),
            ("rm -rf *", Some("*")),
            ("rm -rf ./", Some("./")),
            ("rm -rf /work/project/", Some("/work/project/")),
            ("rm -rf /work", Some("/work")),
            ("rm -rf $PWD", Some("$PWD")),
            ("rm -rf build/../..", Some("build/../..")),
            ("rm -rf /usr/..", Some("/usr/..")),
            ("rm -rf /lib64 /proc /sys /sbin /boot", Some("/lib64")),
            ("rm -rf ./build /lib", Some("/lib")),
            ("/bin/rm -rf /", Some("/")),
            ("\\rm -rf /", Some("/")),
            ("rm -rf \"/\"", Some("/")),
            ("rm -rf '/etc'", Some("/etc")),
            // Found inside lists, substitutions and wrappers.
            ("cd /tmp && rm -rf /", Some("/")),
            ("true; rm -rf /etc", Some("/etc")),
            ("false || rm -rf ~", Some("~")),
            ("ls | rm -rf /", Some("/")),
            ("sleep 1 & rm -rf /", Some("/")),
            ("echo ok\nrm -rf /", Some("/")),
            ("echo $(rm -rf /)", Some("/")),
            ("echo \"$(rm -rf /)\"", Some("/")),
            ("echo `rm -rf /`", Some("/")),
            ("sudo rm -rf /", Some("/")),
            ("sudo -u root rm -rf /", Some("/")),
            ("env FOO=1 rm -rf /", Some("/")),
            ("FOO=1 BAR=2 rm -rf /", Some("/")),
            ("command rm -rf /", Some("/")),
            ("nice -n 5 nohup rm -rf /", Some("/")),
            ("timeout 10 rm -rf /", Some("/")),
            ("xargs -n 1 rm -rf /", Some("/")),
            ("bash -c 'rm -rf /'", Some("/")),
            ("sh -lc \"cd x && rm -rf ~\"", Some("~")),
            ("eval rm -rf /", Some("/")),
            ("env -S 'rm -rf /'", Some("/")),
            ("if true; then rm -rf /; fi", Some("/")),
            ("{ rm -rf /; }", Some("/")),
            ("(rm -rf /)", Some("/")),
            ("rm -rf /srv/data", Some("/srv/data")),
            ("rm -rf /srv", Some("/srv")),
            // Allowed.
            ("rm -rf ./build", None),
            ("rm -rf build target/debug", None),
            ("rm -r /tmp/x", None),
            ("rm -r /", None),
            ("rm -f /etc/passwd", None),
            ("rm -rf /tmp/x", None),
            ("rm -rf /usr/local/share/foo", None),
            ("rm -rf /home/user/project2", None),
            ("rm -rf /etc/*.bak", None),
            ("echo rm -rf /", None),
            ("echo 'rm -rf /'", None),
            ("echo \"rm -rf /\"", None),
            ("git commit -m 'rm -rf /'", None),
            ("ls # rm -rf /", None),
            ("bash script.sh /", None),
            ("rm -rf -- -r", None),
            ("grep -rf patterns /", None),
            ("rmdir /tmp/x", None),
            ("rm -rf \"$TARGET\"", None),
        ];
        let protected = Protected::new(Some(CWD), &["/srv/data".to_owned()]);
        for (script, expected) in cases {
            let found = check(script, &protected).map(|violation| violation.target);
            assert_eq!(found.as_deref(), *expected, "script: {script:?}");
        }
    }

    #[test]
    fn without_a_workspace_relative_paths_stay_relative() {
        let protected = Protected::new(None, &[]);
        let cases: &[(&str, bool)] = &[
            ("rm -rf .", true),
            ("rm -rf ./", true),
            ("rm -rf ..", true),
            ("rm -rf ../x", true),
            ("rm -rf *", true),
            ("rm -rf $PWD", true),
            ("rm -rf build", false),
            ("rm -rf x/..", true),
        ];
        for (script, denied) in cases {
            assert_eq!(
                check(script, &protected).is_some(),
                *denied,
                "script: {script:?}"
            );
        }
    }

    #[test]
    fn normalizes_lexically() {
        let cases: &[(&str, Option<&str>, &str)] = &[
            ("/", None, "/"),
            ("//", None, "/"),
            ("/usr/", None, "/usr"),
            ("/usr/./bin/../lib", None, "/usr/lib"),
            ("/..", None, "/"),
            ("~", None, "~"),
            ("~/", None, "~"),
            ("$HOME/a/", None, "~/a"),
            ("${HOME}", None, "~"),
            ("~/..", None, HOME_PARENT),
            ("~user", None, "~user"),
            ("$HOMEDIR", None, "$HOMEDIR"),
            ("a/../..", None, ".."),
            ("./", None, "."),
            ("a/b/", Some("/w"), "/w/a/b"),
            ("..", Some("/w/p"), "/w"),
            ("$PWD/x", Some("/w"), "/w/x"),
        ];
        for (path, cwd, expected) in cases {
            assert_eq!(normalize(path, *cwd), *expected, "path: {path:?}");
        }
    }

    #[test]
    fn reason_names_the_path_and_what_it_resolves_to() {
        let protected = Protected::new(Some(CWD), &[]);
        let cases = [
            (
                "rm -rf /usr/..",
                "on \"/usr/..\" (that is /), which is a protected path.",
            ),
            (
                "rm -rf .",
                "on \".\" (that is /work/project), which is the workspace root.",
            ),
            ("rm -rf /etc", "on \"/etc\", which is a protected path."),
            (
                "rm -rf /work",
                "on \"/work\", which contains the workspace root /work/project.",
            ),
            (
                "rm -rf ~/*",
                "on \"~/*\", which names everything in ~, which is the home directory.",
            ),
        ];
        for (script, expected) in cases {
            let reason = check(script, &protected).expect("denied").reason();
            assert!(reason.contains(expected), "{script}: {reason}");
        }
    }
}
