//! Adds `--no-pager` to `git` commands in a command line, so git never waits on a pager the model
//! cannot drive.
//!
//! The scan is textual and best-effort: it finds where simple commands start (the beginning, after
//! `;`, `&`, `|`, newlines and parentheses, so inside unquoted `$(...)` too), skips `NAME=value`
//! assignments and reserved words (`if`, `then`, `{`, ...), and inserts ` --no-pager` after a `git`
//! word that has arguments. Quoted text, backticks and comments are passed over untouched, so
//! `echo "git log"` stays as it is. Everything else in the command keeps its exact bytes.

/// Reserved words that may start a simple command without being its program.
const RESERVED: &[&str] = &[
    "!", "{", "if", "then", "else", "elif", "do", "while", "until", "time",
];

/// `command` with `--no-pager` after every `git` that starts a simple command and lacks it, or
/// `None` when there is nothing to change.
pub(crate) fn add_no_pager(command: &str) -> Option<String> {
    let bytes = command.as_bytes();
    let mut insertions = Vec::new();
    let mut i = 0;
    let mut at_start = true;
    while i < bytes.len() {
        if at_start {
            at_start = false;
            i = program_start(bytes, i);
            let end = word_end(bytes, i);
            if &bytes[i..end] == b"git" && needs_no_pager(bytes, end) {
                insertions.push(end);
            }
            continue;
        }
        match bytes[i] {
            b'\'' | b'"' | b'`' | b'\\' => i = skip_quoted(bytes, i),
            b'#' if i == 0 || is_blank(bytes[i - 1]) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            byte => {
                at_start = is_separator(byte);
                i += 1;
            }
        }
    }
    if insertions.is_empty() {
        return None;
    }
    let mut rewritten = String::with_capacity(command.len() + insertions.len() * 11);
    let mut copied = 0;
    // Insertion points follow ASCII bytes (`git`), so they are character boundaries.
    for at in insertions {
        rewritten.push_str(&command[copied..at]);
        rewritten.push_str(" --no-pager");
        copied = at;
    }
    rewritten.push_str(&command[copied..]);
    Some(rewritten)
}

/// The index of the program word of the simple command starting at `i`: blanks, assignments and
/// reserved words skipped.
fn program_start(bytes: &[u8], mut i: usize) -> usize {
    loop {
        i = skip_blanks(bytes, i);
        let end = word_end(bytes, i);
        let word = &bytes[i..end];
        let reserved = RESERVED.iter().any(|reserved| reserved.as_bytes() == word);
        if end == i || !(reserved || is_assignment(word)) {
            return i;
        }
        i = end;
    }
}

/// True when the `git` word ending at `end` has arguments and none of them is `--no-pager` (or
/// its short form `-P` right after `git`).
fn needs_no_pager(bytes: &[u8], end: usize) -> bool {
    if !bytes.get(end).copied().is_some_and(is_blank) {
        return false;
    }
    let mut i = skip_blanks(bytes, end);
    let mut first = true;
    loop {
        let word_stop = word_end(bytes, i);
        if word_stop == i {
            // No more words in this simple command; `git` alone has no pager to turn off.
            return !first;
        }
        let word = &bytes[i..word_stop];
        if word == b"--no-pager" || (first && word == b"-P") {
            return false;
        }
        first = false;
        i = skip_blanks(bytes, word_stop);
    }
}

/// The index after the word starting at `i`: up to a blank or a separator, quotes included.
fn word_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && !is_blank(bytes[i]) && !is_separator(bytes[i]) {
        i = match bytes[i] {
            b'\'' | b'"' | b'`' | b'\\' => skip_quoted(bytes, i),
            _ => i + 1,
        };
    }
    i
}

/// The index after the quoted text or escape starting at `i`.
fn skip_quoted(bytes: &[u8], i: usize) -> usize {
    let quote = bytes[i];
    if quote == b'\\' {
        return (i + 2).min(bytes.len());
    }
    let mut j = i + 1;
    while j < bytes.len() && bytes[j] != quote {
        // Backslashes escape inside double quotes and backticks, not inside single quotes.
        if bytes[j] == b'\\' && quote != b'\'' {
            j += 1;
        }
        j += 1;
    }
    (j + 1).min(bytes.len())
}

fn skip_blanks(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_blank(bytes[i]) {
        i += 1;
    }
    i
}

fn is_blank(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t')
}

/// Bytes after which a new simple command starts.
fn is_separator(byte: u8) -> bool {
    matches!(byte, b';' | b'&' | b'|' | b'\n' | b'(' | b')')
}

/// True for `NAME=value` words.
fn is_assignment(word: &[u8]) -> bool {
    let Some(equals) = word.iter().position(|&byte| byte == b'=') else {
        return false;
    };
    let name = &word[..equals];
    name.first()
        .is_some_and(|&byte| byte.is_ascii_alphabetic() || byte == b'_')
        && name
            .iter()
            .all(|&byte| byte.is_ascii_alphanumeric() || byte == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_no_pager_where_git_starts_a_command() {
        let cases: &[(&str, Option<&str>)] = &[
            ("git log", Some("git --no-pager log")),
            ("git  log -p", Some("git --no-pager  log -p")),
            ("git -C dir diff", Some("git --no-pager -C dir diff")),
            ("cd x && git status", Some("cd x && git --no-pager status")),
            (
                "git diff; git log | head",
                Some("git --no-pager diff; git --no-pager log | head"),
            ),
            ("PAGER=less git log", Some("PAGER=less git --no-pager log")),
            ("A=\"x y\" git show", Some("A=\"x y\" git --no-pager show")),
            (
                "echo $(git rev-parse HEAD)",
                Some("echo $(git --no-pager rev-parse HEAD)"),
            ),
            ("(git log)", Some("(git --no-pager log)")),
            (
                "if true; then git log; fi",
                Some("if true; then git --no-pager log; fi"),
            ),
            ("  git\tlog", Some("  git --no-pager\tlog")),
            (
                "git log\ngit diff",
                Some("git --no-pager log\ngit --no-pager diff"),
            ),
            ("git log -m 'é'", Some("git --no-pager log -m 'é'")),
            // Unchanged.
            ("git --no-pager log", None),
            ("git -C x --no-pager log", None),
            ("git -P log", None),
            ("git", None),
            ("git;", None),
            ("echo git log", None),
            ("echo 'git log; git diff'", None),
            ("echo \"a; git log\"", None),
            ("echo `git log`", None),
            ("ls # git log", None),
            ("gitk log", None),
            ("/usr/bin/git log", None),
            ("mygit log", None),
            ("", None),
        ];
        for (command, expected) in cases {
            assert_eq!(
                add_no_pager(command).as_deref(),
                *expected,
                "command: {command:?}"
            );
        }
    }
}
