//! `sed` scripts: which of them only print, delete or substitute, and which can run a command
//! (`e`, `s///e`), write another file (`w`, `W`, `s///w`) or read one (`r`, `R`). Shared by the
//! exec-wrapper check (`bash.rs`: such a `sed` needs an exact rule) and the `acceptEdits`
//! filesystem commands (`edit_commands.rs`).
//!
//! Hand-rolled because no crate parses sed scripts; it reads only what it must and calls anything
//! it does not recognise unsafe.

use super::shell::ShellWord;

/// `sed` substitution flags that neither write a file (`w`) nor run a command (`e`).
const SAFE_FLAGS: &str = "gGiIpPmM0123456789";

/// Commands without arguments that only print, delete, quit or move text between buffers.
const SAFE_COMMANDS: &[&str] = &[
    "", "p", "P", "d", "D", "q", "Q", "n", "N", "=", "h", "H", "g", "G", "x", "l",
];

/// A `sed` command's scripts (its `-e`/`--expression` values, else its first operand) and the
/// files it names; `None` for a script file (`-f`) or a flag not known to be harmless.
pub fn sed_scripts(args: &[ShellWord]) -> Option<(Vec<&str>, Vec<&ShellWord>)> {
    let mut scripts = Vec::new();
    let mut named = Vec::new();
    let mut expect_script = false;
    let mut explicit = false;
    for word in args {
        let text = word.text.as_str();
        if expect_script {
            scripts.push(text);
            expect_script = false;
        } else if text == "-e" || text == "--expression" {
            expect_script = true;
            explicit = true;
        } else if let Some(script) = text.strip_prefix("--expression=") {
            scripts.push(script);
            explicit = true;
        } else if text.starts_with("-f") || text.starts_with("--file") {
            return None;
        } else if text.starts_with('-') && text != "-" {
            // `-i`, `-n`, `-E`, `-i.bak`, `--in-place`, ...: only what is printed or saved.
            if !(text.starts_with("-i")
                || text.starts_with("--in-place")
                || matches!(
                    text,
                    "-n" | "-E"
                        | "-r"
                        | "-s"
                        | "-u"
                        | "-z"
                        | "--quiet"
                        | "--silent"
                        | "--regexp-extended"
                        | "--separate"
                        | "--null-data"
                ))
            {
                return None;
            }
        } else {
            named.push(word);
        }
    }
    if !explicit {
        let (script, rest) = named.split_first()?;
        scripts.push(script.text.as_str());
        named = rest.to_vec();
    }
    Some((scripts, named))
}

/// True when every command of `script` (split at `;` and newlines, after a line-number address)
/// only prints, deletes, quits or substitutes plainly. A `;` inside a substitution splits it and
/// so counts as unsafe: the check errs towards an exact rule.
pub fn safe_script(script: &str) -> bool {
    script.split(['\n', ';']).all(|command| {
        let body = command.trim().trim_start_matches(|c: char| {
            c.is_ascii_digit() || matches!(c, ',' | '$' | '~' | '+' | ' ' | '!')
        });
        SAFE_COMMANDS.contains(&body) || plain_substitution(body)
    })
}

/// `s<d>pattern<d>replacement<d>flags` with only harmless flags.
pub fn plain_substitution(script: &str) -> bool {
    let Some(rest) = script.strip_prefix('s') else {
        return false;
    };
    let Some(delimiter) = rest.chars().next() else {
        return false;
    };
    if delimiter.is_alphanumeric() || delimiter == '\\' || delimiter == '\n' {
        return false;
    }
    let mut parts = 0;
    let mut escaped = false;
    let mut flags_at = None;
    for (at, c) in rest.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == delimiter {
            parts += 1;
            if parts == 2 {
                flags_at = Some(at + c.len_utf8());
                break;
            }
        } else if c == '\n' {
            return false;
        }
    }
    flags_at.is_some_and(|at| rest[at..].chars().all(|flag| SAFE_FLAGS.contains(flag)))
}

#[cfg(test)]
mod tests {
    use super::safe_script;

    #[test]
    fn only_printing_deleting_and_plain_substitutions_are_safe() {
        for (script, safe) in [
            ("1,5p", true),
            ("$d", true),
            ("s/a/b/g", true),
            ("s/a/b/;p", true),
            ("10q", true),
            ("1e rm -rf x", false),
            ("s/a/b/e", false),
            ("s/a/b/w out.txt", false),
            ("w out.txt", false),
            ("W out.txt", false),
            ("r /etc/passwd", false),
            ("R /etc/passwd", false),
            ("/x/d", false),
            ("s/a;b/c/", false),
        ] {
            assert_eq!(safe_script(script), safe, "{script}");
        }
    }
}
