//! Text normalization for the model: `\r\n` and lone `\r` become `\n`, terminal escape sequences
//! (colours, cursor movement, titles) are stripped, replacement characters left by lossy UTF-8
//! decoding are counted, and output that is binary is described instead of dumped.
//!
//! The escape-sequence scanner is hand-written: ECMA-48's CSI, OSC and two-byte escapes are a
//! small fixed grammar, and stripping must never drop ordinary text, which a scanner this size can
//! be checked for by its tests.

use serde::Serialize;

/// What normalization changed in a result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Normalization {
    /// Terminal escape sequences removed.
    pub escape_sequences_stripped: usize,
    /// `\r\n` or lone `\r` turned into `\n`.
    pub carriage_returns_converted: usize,
    /// U+FFFD characters in the text (bytes that were not UTF-8, replaced where they were decoded).
    pub replacement_characters: usize,
    /// Text parts that were binary and shown as a description.
    pub binary_parts: usize,
}

impl Normalization {
    /// True when nothing changed or was found.
    pub fn is_empty(&self) -> bool {
        *self == Normalization::default()
    }

    /// Adds `other`'s counts.
    pub(crate) fn add(&mut self, other: Normalization) {
        self.escape_sequences_stripped += other.escape_sequences_stripped;
        self.carriage_returns_converted += other.carriage_returns_converted;
        self.replacement_characters += other.replacement_characters;
        self.binary_parts += other.binary_parts;
    }
}

const ESC: char = '\u{1b}';

/// Normalizes one text part; `strip_escapes` false keeps terminal escape sequences (a tool that
/// declared `keep_escape_sequences`).
pub(crate) fn normalize(text: &str, strip_escapes: bool) -> (String, Normalization) {
    let mut report = Normalization::default();
    if looks_binary(text) {
        report.binary_parts = 1;
        return (
            format!("[binary output: {} bytes, not shown as text]", text.len()),
            report,
        );
    }
    // Most output has nothing to change: copy it whole.
    let plain = !text
        .bytes()
        .any(|byte| byte == b'\r' || (strip_escapes && byte == 0x1b))
        && !text.contains('\u{fffd}');
    if plain {
        return (text.to_owned(), report);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let mut width = c.len_utf8();
        match c {
            '\r' if rest[1..].starts_with('\n') => {
                report.carriage_returns_converted += 1;
                out.push('\n');
                width = 2;
            }
            '\r' => {
                // A lone carriage return goes back to the start of the line, and what follows
                // overwrites it (progress bars): the model sees the line's last state.
                report.carriage_returns_converted += 1;
                let line_start = out.rfind('\n').map_or(0, |at| at + 1);
                out.truncate(line_start);
            }
            ESC if strip_escapes => {
                report.escape_sequences_stripped += 1;
                // A malformed sequence loses only its ESC, never the text after it.
                width = escape_len(rest).unwrap_or(1);
            }
            '\u{fffd}' => {
                report.replacement_characters += 1;
                out.push(c);
            }
            _ => out.push(c),
        }
        rest = &rest[width..];
    }
    (out, report)
}

/// The byte length of the well-formed escape sequence `text` starts with (it starts with ESC):
/// CSI (`ESC [`, parameter and intermediate bytes, one final byte), a string sequence (`ESC ]`,
/// `P`, `X`, `^`, `_` up to BEL or `ESC \`, on one line, within 4 KiB), a character-set
/// designation (`ESC ( B`), or a two-byte escape. `None` for anything else.
fn escape_len(text: &str) -> Option<usize> {
    const MAX_STRING: usize = 4096;
    let bytes = text.as_bytes();
    match *bytes.get(1)? {
        b'[' => {
            for (at, byte) in bytes.iter().enumerate().skip(2).take(64) {
                match byte {
                    0x20..=0x3f => {}
                    0x40..=0x7e => return Some(at + 1),
                    _ => return None,
                }
            }
            None
        }
        b']' | b'P' | b'X' | b'^' | b'_' => {
            let mut at = 2;
            while at < bytes.len().min(MAX_STRING) {
                match bytes[at] {
                    0x07 => return Some(at + 1),
                    0x1b if bytes.get(at + 1) == Some(&b'\\') => return Some(at + 2),
                    b'\n' => return None,
                    _ => at += 1,
                }
            }
            None
        }
        b'(' | b')' | b'*' | b'+' => bytes
            .get(2)
            .filter(|byte| (0x20..=0x7e).contains(*byte))
            .map(|_| 3),
        0x30..=0x7e => Some(2),
        _ => None,
    }
}

/// Binary: in the first 8 KiB, more than one character in ten a control character that text
/// does not use (NUL-separated lists, backspace overstrike and bells are text), more than one in
/// four a NUL, or more than one in four a replacement character (undecodable bytes).
fn looks_binary(text: &str) -> bool {
    // One pass over the first 8,192 characters, with no copy of them.
    let (mut sampled, mut nuls, mut replacements, mut controls) = (0usize, 0usize, 0usize, 0usize);
    for c in text.chars().take(8192) {
        sampled += 1;
        match c {
            '\0' => nuls += 1,
            '\u{fffd}' => replacements += 1,
            '\t' | '\n' | '\r' | '\u{c}' | '\u{8}' | '\u{7}' | ESC => {}
            c if c.is_control() => controls += 1,
            _ => {}
        }
    }
    sampled > 0 && (controls * 10 > sampled || nuls * 4 > sampled || replacements * 4 > sampled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_table() {
        let cases: &[(&str, &str, Normalization)] = &[
            ("plain text\n", "plain text\n", Normalization::default()),
            (
                "a\r\nb\r\nc\n",
                "a\nb\nc\n",
                Normalization {
                    carriage_returns_converted: 2,
                    ..Normalization::default()
                },
            ),
            (
                "\u{1b}[1;31mred\u{1b}[0m and \u{1b}[Kclear",
                "red and clear",
                Normalization {
                    escape_sequences_stripped: 3,
                    ..Normalization::default()
                },
            ),
            (
                "\u{1b}]0;title\u{7}after \u{1b}]8;;http://x\u{1b}\\link",
                "after link",
                Normalization {
                    escape_sequences_stripped: 2,
                    ..Normalization::default()
                },
            ),
            (
                "\u{1b}(Bkept \u{1b}=too",
                "kept too",
                Normalization {
                    escape_sequences_stripped: 2,
                    ..Normalization::default()
                },
            ),
            (
                "bad \u{fffd}\u{fffd} bytes",
                "bad \u{fffd}\u{fffd} bytes",
                Normalization {
                    replacement_characters: 2,
                    ..Normalization::default()
                },
            ),
            (
                "tabs\tand [brackets] stay",
                "tabs\tand [brackets] stay",
                Normalization::default(),
            ),
        ];
        for (input, expected, report) in cases {
            let (out, got) = normalize(input, true);
            assert_eq!(&out, expected, "{input:?}");
            assert_eq!(&got, report, "{input:?}");
        }
    }

    #[test]
    fn binary_is_described() {
        let (out, report) = normalize("ELF\0\0\u{1}\u{2}\u{3}\0\0\0\u{4}\0", true);
        assert!(out.starts_with("[binary output: "), "{out}");
        assert_eq!(report.binary_parts, 1);
        let (out, _) = normalize(&"\u{1}\u{2}\u{3}ab".repeat(100), true);
        assert_eq!(normalize("\u{1b}[1mbold", false).0, "\u{1b}[1mbold");
        assert!(out.starts_with("[binary output"));
        assert!(!looks_binary("ordinary log line\n\u{1b}[32mok\u{1b}[0m\n"));
        assert!(!looks_binary("N\u{8}NA\u{8}AM\u{8}ME\u{8}E"));
        assert!(!looks_binary("ding\u{7}"));
    }
}
