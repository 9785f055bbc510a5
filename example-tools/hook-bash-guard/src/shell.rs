//! A best-effort shell lexer: splits a command line into simple commands, each a list of words
//! with quotes and backslashes removed.
//!
//! It separates commands on `;`, `&`, `|`, `&&`, `||`, newlines and parentheses, and lexes the
//! text inside `$(...)`, `<(...)`, `>(...)` and backticks, including inside double quotes, as
//! commands of their own, because the shell runs them. A substitution stays in its enclosing word
//! as its source text, which matches no path. Redirections and their targets are dropped; comments
//! are skipped. It does not expand variables, globs or aliases, and it lexes here-document bodies
//! as commands, which can only make the guard stricter. It is not a shell parser: it never fails,
//! and input that is not valid shell still yields words.

/// How deep substitutions are followed; deeper ones stay opaque words, which bounds recursion on
/// hostile input.
const MAX_DEPTH: usize = 16;

/// Every simple command in `script`, substitutions included, each as its words.
pub(crate) fn simple_commands(script: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = script.chars().collect();
    let mut commands = Vec::new();
    lex(&chars, 0, &mut commands);
    commands
}

/// The words of the simple command being lexed.
#[derive(Default)]
struct Command {
    words: Vec<String>,
    word: String,
    /// True once the current word has started; `''` is an empty word, not no word.
    in_word: bool,
    /// True when the next word is a redirection target, which is not an argument.
    redirect_target: bool,
}

impl Command {
    fn push(&mut self, c: char) {
        self.word.push(c);
        self.in_word = true;
    }

    fn push_str(&mut self, text: &str) {
        self.word.push_str(text);
        self.in_word = true;
    }

    fn finish_word(&mut self) {
        if self.in_word {
            let word = std::mem::take(&mut self.word);
            if self.redirect_target {
                self.redirect_target = false;
            } else {
                self.words.push(word);
            }
        }
        self.in_word = false;
    }

    fn finish(&mut self, commands: &mut Vec<Vec<String>>) {
        self.finish_word();
        self.redirect_target = false;
        if !self.words.is_empty() {
            commands.push(std::mem::take(&mut self.words));
        }
    }
}

fn lex(chars: &[char], depth: usize, commands: &mut Vec<Vec<String>>) {
    let mut command = Command::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' | '\r' => command.finish_word(),
            '\n' | ';' | '|' | '(' | ')' => command.finish(commands),
            '&' if next == Some('>') => {
                command.finish_word();
                i = redirection(chars, i + 1, depth, &mut command, commands);
                continue;
            }
            '&' => command.finish(commands),
            '>' | '<' => {
                // A word of digits right before the operator is a file descriptor (`2>`).
                if command.in_word && command.word.chars().all(|c| c.is_ascii_digit()) {
                    command.word.clear();
                    command.in_word = false;
                }
                command.finish_word();
                i = redirection(chars, i, depth, &mut command, commands);
                continue;
            }
            '#' if !command.in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\'' => {
                command.in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    command.push(chars[i]);
                    i += 1;
                }
            }
            '"' => {
                i = double_quoted(chars, i + 1, depth, &mut command, commands);
                continue;
            }
            '\\' => match next {
                // A line continuation joins the lines; it is not a character of the word.
                Some('\n') => i += 1,
                Some(escaped) => {
                    command.push(escaped);
                    i += 1;
                }
                None => command.push('\\'),
            },
            '$' => {
                i = dollar(chars, i, depth, &mut command, commands);
                continue;
            }
            '`' => {
                i = backticks(chars, i, depth, &mut command, commands);
                continue;
            }
            _ => command.push(c),
        }
        i += 1;
    }
    command.finish(commands);
}

/// Lexes a redirection operator starting at `start` (`>`, `>>`, `>&`, `<`, `<<`, `<<<`, `>|`,
/// `<>`) and marks the next word as its target. `<(` and `>(` are process substitutions instead.
/// Returns the index after the operator.
fn redirection(
    chars: &[char],
    start: usize,
    depth: usize,
    command: &mut Command,
    commands: &mut Vec<Vec<String>>,
) -> usize {
    if chars.get(start + 1) == Some(&'(') {
        return substitution(chars, start + 1, depth, command, commands);
    }
    let mut i = start + 1;
    while i < chars.len() && matches!(chars[i], '>' | '<' | '&' | '|') {
        i += 1;
    }
    command.redirect_target = true;
    i
}

/// Lexes a double-quoted string whose content starts at `start`; returns the index after the
/// closing quote.
fn double_quoted(
    chars: &[char],
    start: usize,
    depth: usize,
    command: &mut Command,
    commands: &mut Vec<Vec<String>>,
) -> usize {
    command.in_word = true;
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            '"' => return i + 1,
            '\\' => match chars.get(i + 1) {
                Some('\n') => i += 2,
                Some(&escaped @ ('$' | '`' | '"' | '\\')) => {
                    command.push(escaped);
                    i += 2;
                }
                _ => {
                    command.push('\\');
                    i += 1;
                }
            },
            '$' => i = dollar(chars, i, depth, command, commands),
            '`' => i = backticks(chars, i, depth, command, commands),
            c => {
                command.push(c);
                i += 1;
            }
        }
    }
    i
}

/// Lexes what follows a `$` at `start`: a command substitution `$(...)`, a braced parameter
/// `${...}` (kept verbatim, so `${HOME}` stays recognizable), or a plain `$`. Returns the index
/// after it.
fn dollar(
    chars: &[char],
    start: usize,
    depth: usize,
    command: &mut Command,
    commands: &mut Vec<Vec<String>>,
) -> usize {
    match chars.get(start + 1) {
        Some('(') => substitution(chars, start + 1, depth, command, commands),
        Some('{') => {
            let end = chars[start..]
                .iter()
                .position(|&c| c == '}')
                .map_or(chars.len(), |offset| start + offset + 1);
            command.push_str(&chars[start..end].iter().collect::<String>());
            end
        }
        _ => {
            command.push('$');
            start + 1
        }
    }
}

/// Lexes a parenthesized substitution whose `(` is at `open`, preceded by `$`, `<` or `>`: its
/// commands join `commands` and its source text joins the current word. Returns the index after
/// the matching `)`.
fn substitution(
    chars: &[char],
    open: usize,
    depth: usize,
    command: &mut Command,
    commands: &mut Vec<Vec<String>>,
) -> usize {
    let close = matching_paren(chars, open);
    if depth < MAX_DEPTH {
        lex(&chars[open + 1..close], depth + 1, commands);
    }
    let end = (close + 1).min(chars.len());
    command.push_str(&chars[open - 1..end].iter().collect::<String>());
    end
}

/// The index of the `)` closing the `(` at `open`, skipping quoted text and nested parentheses;
/// the end of the input when it is unbalanced.
fn matching_paren(chars: &[char], open: usize) -> usize {
    let mut nesting = 0usize;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '\'' => {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '(' => nesting += 1,
            ')' => {
                nesting -= 1;
                if nesting == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

/// Lexes a backtick substitution whose opening backtick is at `start`; returns the index after the
/// closing one.
fn backticks(
    chars: &[char],
    start: usize,
    depth: usize,
    command: &mut Command,
    commands: &mut Vec<Vec<String>>,
) -> usize {
    let mut inner = Vec::new();
    let mut i = start + 1;
    while i < chars.len() && chars[i] != '`' {
        // Inside backticks a backslash quotes only `\`, `` ` `` and `$`.
        if chars[i] == '\\' && matches!(chars.get(i + 1), Some('\\' | '`' | '$')) {
            i += 1;
        }
        inner.push(chars[i]);
        i += 1;
    }
    if depth < MAX_DEPTH {
        lex(&inner, depth + 1, commands);
    }
    let end = (i + 1).min(chars.len());
    command.push_str(&chars[start..end].iter().collect::<String>());
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quotes_operators_and_substitutions() {
        let cases: &[(&str, &[&[&str]])] = &[
            ("ls -la", &[&["ls", "-la"]]),
            (
                "a; b && c || d | e & f",
                &[&["a"], &["b"], &["c"], &["d"], &["e"], &["f"]],
            ),
            ("a\nb", &[&["a"], &["b"]]),
            (
                "echo 'a b' \"c d\" e\\ f",
                &[&["echo", "a b", "c d", "e f"]],
            ),
            ("echo ''", &[&["echo", ""]]),
            ("echo \"x\\\"y\"", &[&["echo", "x\"y"]]),
            (
                "echo $(rm -rf /)",
                &[&["rm", "-rf", "/"], &["echo", "$(rm -rf /)"]],
            ),
            (
                "echo \"$(ls \"a b\")\"",
                &[&["ls", "a b"], &["echo", "$(ls \"a b\")"]],
            ),
            ("echo `ls x`", &[&["ls", "x"], &["echo", "`ls x`"]]),
            (
                "echo $(a $(b))",
                &[&["b"], &["a", "$(b)"], &["echo", "$(a $(b))"]],
            ),
            ("diff <(ls a) b", &[&["ls", "a"], &["diff", "<(ls a)", "b"]]),
            ("ls > out 2>&1 x", &[&["ls", "x"]]),
            ("ls 2> err &> all >>app", &[&["ls"]]),
            ("echo ${HOME}/x $HOME", &[&["echo", "${HOME}/x", "$HOME"]]),
            ("ls # rm -rf /\npwd", &[&["ls"], &["pwd"]]),
            ("a#b", &[&["a#b"]]),
            ("(cd x; rm y)", &[&["cd", "x"], &["rm", "y"]]),
            ("rm \\\n -rf x", &[&["rm", "-rf", "x"]]),
            ("echo 'unterminated", &[&["echo", "unterminated"]]),
            (
                "echo $(unbalanced",
                &[&["unbalanced"], &["echo", "$(unbalanced"]],
            ),
        ];
        for (script, expected) in cases {
            let expected: Vec<Vec<String>> = expected
                .iter()
                .map(|words| words.iter().map(|word| (*word).to_owned()).collect())
                .collect();
            assert_eq!(simple_commands(script), expected, "script: {script:?}");
        }
    }

    #[test]
    fn deep_nesting_stops_following_substitutions() {
        let script = format!("{}x{}", "$(".repeat(100), ")".repeat(100));
        // Only the outermost MAX_DEPTH levels are lexed as commands; none of this panics.
        assert_eq!(simple_commands(&script).len(), MAX_DEPTH + 1);
    }
}
