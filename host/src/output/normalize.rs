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
const BEL: char = '\u{7}';

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
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                report.carriage_returns_converted += 1;
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
            }
            ESC if !strip_escapes => out.push(c),
            ESC => {
                report.escape_sequences_stripped += 1;
                match chars.next() {
                    // CSI: parameters and intermediates, then one final byte.
                    Some('[') => {
                        for next in chars.by_ref() {
                            if ('\u{40}'..='\u{7e}').contains(&next) {
                                break;
                            }
                        }
                    }
                    // OSC (and the other string sequences): up to BEL or ESC \.
                    Some(']' | 'P' | 'X' | '^' | '_') => {
                        while let Some(next) = chars.next() {
                            if next == BEL {
                                break;
                            }
                            if next == ESC && chars.peek() == Some(&'\\') {
                                chars.next();
                                break;
                            }
                        }
                    }
                    // Two-byte escapes (ESC 7, ESC =, ESC ( B ...): the designators take one more.
                    Some('(' | ')' | '*' | '+') => {
                        chars.next();
                    }
                    Some(_) | None => {}
                }
            }
            '\u{fffd}' => {
                report.replacement_characters += 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    (out, report)
}

/// Binary: a NUL, or more than one in ten characters a control character other than tab,
/// newline, carriage return, form feed and escape (looked at in the first 8 KiB).
fn looks_binary(text: &str) -> bool {
    let sample: Vec<char> = text.chars().take(8192).collect();
    if sample.contains(&'\0') {
        return true;
    }
    let controls = sample
        .iter()
        .filter(|c| c.is_control() && !matches!(**c, '\t' | '\n' | '\r' | '\u{c}' | ESC))
        .count();
    !sample.is_empty() && controls * 10 > sample.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_table() {
        let cases: &[(&str, &str, Normalization)] = &[
            ("plain text\n", "plain text\n", Normalization::default()),
            (
                "a\r\nb\rc\n",
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
        let (out, report) = normalize("ELF\0\0\u{1}\u{2}binary", true);
        assert!(out.starts_with("[binary output: "), "{out}");
        assert_eq!(report.binary_parts, 1);
        let (out, _) = normalize(&"\u{1}\u{2}\u{3}ab".repeat(100), true);
        assert_eq!(normalize("\u{1b}[1mbold", false).0, "\u{1b}[1mbold");
        assert!(out.starts_with("[binary output"));
        assert!(!looks_binary("ordinary log line\n\u{1b}[32mok\u{1b}[0m\n"));
    }
}
