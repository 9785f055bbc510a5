//! Text-level facts about shell words that brush-parser leaves implicit: brace expansions,
//! ANSI-C quoting, arithmetic assignments, named descriptors, here-document delimiters inside
//! substitutions, and a nesting bound checked before parsing.

/// `{NAME}`: a named-descriptor redirection's variable as brush-parser leaves it, a plain word.
pub(super) fn named_fd(text: &str) -> bool {
    text.strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|name| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && name.chars().any(|c| c.is_ascii_uppercase())
        })
}

/// True when `expr` may assign a variable with an upper-case letter in its name (`PATH=5`,
/// `HOME+=1`, `PATH++`): arithmetic contexts assign, and such names change how later commands run.
pub(super) fn assigns_environment(expr: &str) -> bool {
    let bytes = expr.as_bytes();
    let assigns = bytes.iter().enumerate().any(|(at, &c)| {
        let next = bytes.get(at + 1).copied();
        let previous = at.checked_sub(1).map(|p| bytes[p]);
        (c == b'=' && next != Some(b'=') && !matches!(previous, Some(b'=' | b'!' | b'<' | b'>')))
            || ((c == b'+' || c == b'-') && next == Some(c))
    });
    assigns && expr.bytes().any(|c| c.is_ascii_uppercase())
}

/// True when unquoted `text` holds a brace expansion (`{a,b}` or `{1..3}`).
pub(super) fn brace_expansion(text: &str) -> bool {
    text.find('{').is_some_and(|open| {
        text[open..]
            .find('}')
            .is_some_and(|close| text[open..open + close].contains([',', '.']))
    })
}

/// The value of an ANSI-C quoted string (`$'r\x6d'` is `rm`). brush-parser keeps the escapes;
/// this decodes the ones bash documents, so rules see what bash would run. Hand-rolled: it is a
/// fixed, ten-line escape table.
pub(super) fn ansi_c_unquote(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        if next == 'c' {
            // `\cX` is the control character X & 0x1f; `\c@` is NUL.
            let control = chars
                .next()
                .map(|x| (x as u32) & 0x1f)
                .and_then(char::from_u32);
            match control {
                Some('\0') | None => break,
                Some(control) => out.push(control),
            }
            continue;
        }
        let simple = match next {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(next),
            _ => None,
        };
        if let Some(decoded) = simple {
            out.push(decoded);
            continue;
        }
        let (radix, max, mut digits) = match next {
            'x' => (16, 2, String::new()),
            'u' => (16, 4, String::new()),
            'U' => (16, 8, String::new()),
            '0'..='7' => (8, 2, next.to_string()),
            _ => {
                out.push('\\');
                out.push(next);
                continue;
            }
        };
        while digits.len() < max + usize::from(radix == 8)
            && chars.peek().is_some_and(|d| d.is_digit(radix))
        {
            digits.extend(chars.next());
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            // bash ends the string at a NUL.
            Some('\0') if !digits.is_empty() => break,
            Some(decoded) if !digits.is_empty() => out.push(decoded),
            _ => {
                out.push('\\');
                out.push(next);
                out.push_str(digits.trim_start_matches(next));
            }
        }
    }
    out
}

/// An upper bound on how deeply `source` can nest: every opening bracket and backquote pair and
/// every compound keyword counts, none is ever taken back, and quotes are ignored. Crude but
/// impossible to game, and it keeps the recursive (and, on pathological input, backtracking)
/// parser away from inputs that would exhaust its stack or time.
pub(super) fn nesting(source: &str) -> usize {
    let brackets = source.chars().filter(|c| matches!(c, '(' | '{')).count();
    let keywords = source
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|word| matches!(*word, "if" | "while" | "until" | "for" | "case" | "select"))
        .count();
    brackets + keywords + source.matches('`').count() / 2
}

/// How many `open` brackets in `source` no later `close` closes, quotes ignored. brush-parser's
/// PEG grammars backtrack over every unclosed bracket they meet: a few dozen `(` spread over two
/// lines take minutes, and in arithmetic each unclosed `name[` multiplies the time by about ten
/// (both found by the `shell_splitter` fuzz target); bash itself rejects such input.
pub(super) fn unclosed(source: &str, open: char, close: char) -> usize {
    let mut unclosed = 0usize;
    for c in source.chars() {
        if c == open {
            unclosed += 1;
        } else if c == close {
            unclosed = unclosed.saturating_sub(1);
        }
    }
    unclosed
}

/// How deeply `name[` array subscripts nest in `source`, backslash escapes skipped and quotes
/// ignored. brush-parser's arithmetic grammar tries each subscript both as an array element and as
/// a plain word, so every nesting level multiplies the time by about ten (found by the
/// `shell_splitter` fuzz target: six levels take seconds); real commands rarely nest two.
pub(super) fn subscript_depth(source: &str) -> usize {
    subscripts(source).0
}

/// How many `name[` subscripts in `source` no later `]` closes (`${F[$`), quotes ignored. Each
/// multiplies brush-parser's time the same way nesting does, in words, here-document bodies and
/// arithmetic alike (found by the `shell_splitter` fuzz target); bash rejects most of them.
pub(super) fn unclosed_subscripts(source: &str) -> usize {
    subscripts(source).1
}

/// How deeply `$(` substitutions (command and arithmetic alike) nest in `source`, backslash
/// escapes skipped and quotes ignored. `$((` is either arithmetic or a command substitution of a
/// subshell, and brush-parser tries both at every level, so each nested level multiplies its time
/// (found by the `shell_splitter` fuzz target: seven levels of mixed `$(((` took three seconds in
/// a release build); real commands rarely nest three.
pub(super) fn substitution_depth(source: &str) -> usize {
    marked_nesting(source, '(', ')', |previous| previous == '$').0
}

/// The deepest subscript nesting and the number of subscripts left open.
fn subscripts(source: &str) -> (usize, usize) {
    marked_nesting(source, '[', ']', |previous| {
        previous.is_ascii_alphanumeric() || previous == '_'
    })
}

/// Walks the `open`/`close` brackets of `source` (backslash escapes skipped, quotes ignored) and
/// counts only those whose preceding character `marks`: how deeply marked brackets nest, and how
/// many are left open. Unmarked brackets are tracked too, so a `]` closing a glob or test bracket
/// inside a subscript (or a `)` closing a subshell inside a substitution) does not end the marked
/// one too early.
fn marked_nesting(
    source: &str,
    open: char,
    close: char,
    marks: impl Fn(char) -> bool,
) -> (usize, usize) {
    let mut stack: Vec<bool> = Vec::new();
    let mut marked = 0usize;
    let mut deepest = 0;
    let mut previous = ' ';
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            chars.next();
        } else if c == open {
            let is_marked = marks(previous);
            stack.push(is_marked);
            marked += usize::from(is_marked);
            deepest = deepest.max(marked);
        } else if c == close && stack.pop() == Some(true) {
            marked -= 1;
        }
        previous = c;
    }
    (deepest, marked)
}

/// True when a redirection names a descriptor number past `i32` (`99999999999>f`): bash rejects
/// it, and brush-parser unwraps the failed integer parse (found by the `shell_splitter` fuzz
/// target), which the walker would only catch as a panic.
pub(super) fn oversized_descriptor(source: &str) -> bool {
    let bytes = source.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        if !bytes[start].is_ascii_digit() {
            start += 1;
            continue;
        }
        let end = start
            + bytes[start..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
        if matches!(bytes.get(end), Some(b'<' | b'>')) && source[start..end].parse::<i32>().is_err()
        {
            return true;
        }
        start = end;
    }
    false
}

/// True when a here-document inside a command substitution has a line that starts with its
/// delimiter and goes on (`TAG)`): bash ends the document there, brush-parser does not.
pub(super) fn heredoc_tag_misuse(text: &str) -> bool {
    text.match_indices("<<").any(|(at, _)| {
        let rest = text[at + 2..].trim_start_matches(['-', '<']).trim_start();
        let tag: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '&' | '|' | ')' | '<' | '>'))
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        !tag.is_empty()
            && text[at..]
                .lines()
                .skip(1)
                .any(|line| line.len() > tag.len() && line.starts_with(tag.as_str()))
    })
}

/// True when a here-document delimiter is anything but a plain word (`EOF`, `'END'`, `"x-1"`,
/// `\\EOT`): missing, empty (`<<""`), holding a substitution (`<<  $(`) or other characters, or
/// after a run of `<` that bash reads as `<<<` then `<<`. Real commands use plain words, and
/// brush-parser's tokenizer loops forever, allocating, on several of the others (found by the
/// `shell_splitter` fuzz target: gigabytes in seconds from 14 bytes).
pub(super) fn unusual_heredoc_delimiter(source: &str) -> bool {
    let bytes = source.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'<' {
            at += 1;
            continue;
        }
        let run = bytes[at..].iter().take_while(|b| **b == b'<').count();
        at += run;
        // Greedy like the shell: `<<<` as often as it fits, then `<<` or `<`.
        if run % 3 != 2 {
            continue;
        }
        let mut word = String::new();
        let mut chars = source[at..]
            .trim_start_matches('-')
            .trim_start_matches([' ', '\t'])
            .chars();
        while let Some(c) = chars.next() {
            match c {
                // The shell's blanks only: to bash a `\r` is part of the word.
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | ')' => break,
                // An escaped operator (`\&`) is part of the word too.
                '\\' => {
                    word.push(c);
                    word.extend(chars.next());
                }
                _ => word.push(c),
            }
        }
        let unquoted = word.replace(['\'', '"', '\\'], "");
        let plain = !unquoted.is_empty()
            && unquoted
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !plain {
            return true;
        }
    }
    false
}
