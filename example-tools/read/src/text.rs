//! Text files in `cat -n` format, one window of lines at a time.
//!
//! Lines are streamed to the end of the file (the total line count and the read-before-edit digest
//! both need every byte), each kept line is capped at `MAX_LINE_CHARS` characters, and only the
//! requested window is held.

use std::io::{BufRead, ErrorKind};

use janua_sdk::Output;
use serde_json::json;

/// Characters kept of one line; the rest is replaced by a marker.
pub(crate) const MAX_LINE_CHARS: usize = 2000;

/// The window of lines a call returns, plus what the model needs to page on.
#[derive(Debug)]
pub(crate) struct Page {
    pub(crate) text: String,
    pub(crate) start: u64,
    pub(crate) returned: u64,
    pub(crate) total_lines: u64,
    pub(crate) cut_lines: u64,
}

/// Reads lines `start..start + limit` (1-based) of `reader`, consuming it to the end.
pub(crate) fn read_page(
    reader: &mut impl BufRead,
    start: u64,
    limit: u64,
) -> std::io::Result<Page> {
    let mut page = Page {
        text: String::new(),
        start,
        returned: 0,
        total_lines: 0,
        cut_lines: 0,
    };
    let end = start.saturating_add(limit);
    let mut line = Vec::new();
    loop {
        line.clear();
        let number = page.total_lines + 1;
        let keep = number >= start && number < end;
        let cap = if keep { MAX_LINE_CHARS * 4 + 4 } else { 0 };
        let Some(length) = read_line_capped(reader, &mut line, cap)? else {
            break;
        };
        page.total_lines = number;
        if keep {
            page.push_line(number, &line, length);
        }
    }
    Ok(page)
}

impl Page {
    fn push_line(&mut self, number: u64, bytes: &[u8], byte_length: usize) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let mut chars = text.char_indices();
        let cut_at = chars.nth(MAX_LINE_CHARS).map(|(index, _)| index);
        self.text.push_str(&format!("{number:>6}\t"));
        match cut_at {
            Some(index) => {
                self.text.push_str(&text[..index]);
                self.text.push_str(&format!(
                    "… [line cut: showed the first {MAX_LINE_CHARS} characters of a \
                     {byte_length}-byte line]"
                ));
                self.cut_lines += 1;
            }
            None if byte_length > bytes.len() => {
                self.text.push_str(text);
                self.text.push_str(&format!(
                    "… [line cut: showed {} of {byte_length} bytes]",
                    bytes.len()
                ));
                self.cut_lines += 1;
            }
            None => self.text.push_str(text),
        }
        self.text.push('\n');
        self.returned += 1;
    }

    /// The text the model sees (the window plus a paging notice when more lines follow) and the
    /// structured result.
    pub(crate) fn into_output(self, path: &str) -> Output {
        let structured = json!({
            "type": "text",
            "file": {
                "filePath": path,
                "content": self.text,
                "numLines": self.returned,
                "startLine": self.start,
                "totalLines": self.total_lines,
                "cutLines": self.cut_lines,
            }
        });
        Output::text(self.model_text(path)).with_structured(structured)
    }

    fn model_text(self, path: &str) -> String {
        if self.total_lines == 0 {
            format!("<notice>{path} exists but is empty (0 lines).</notice>")
        } else if self.returned == 0 {
            format!(
                "<notice>{path} has {} lines; offset {} is past the end. Use an offset between 1 \
                 and {}.</notice>",
                self.total_lines, self.start, self.total_lines
            )
        } else {
            let last = self.start + self.returned - 1;
            let mut text = self.text;
            if last < self.total_lines {
                text.push_str(&format!(
                    "<notice>Showed lines {}-{last} of {}. Continue with offset {}.</notice>",
                    self.start,
                    self.total_lines,
                    last + 1
                ));
            }
            text
        }
    }
}

/// Reads one line, keeping at most `cap` bytes of it in `line`; returns the line's full byte length,
/// or `None` at end of file. Skipped bytes are never buffered, so a huge line costs no memory.
fn read_line_capped(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<usize>> {
    let mut length = 0usize;
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if buffer.is_empty() {
            return Ok((length > 0).then_some(length));
        }
        let (chunk, done) = match buffer.iter().position(|&byte| byte == b'\n') {
            Some(index) => (&buffer[..=index], true),
            None => (buffer, false),
        };
        let room = cap.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let consumed = chunk.len();
        length += consumed;
        reader.consume(consumed);
        if done {
            return Ok(Some(length));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Cursor};

    use super::*;

    fn page(content: &str, start: u64, limit: u64) -> String {
        // A tiny buffer makes lines span several fills, as large files do.
        let mut reader = BufReader::with_capacity(7, Cursor::new(content.as_bytes().to_vec()));
        read_page(&mut reader, start, limit)
            .expect("in-memory read")
            .model_text("/w/f.txt")
    }

    #[test]
    fn pages_lines_with_notices() {
        let ten: String = (1..=10).map(|n| format!("line {n}\r\n")).collect();
        let cases = [
            (
                ten.as_str(),
                3,
                2,
                "     3\tline 3\n     4\tline 4\n<notice>Showed lines 3-4 of 10. Continue with \
                 offset 5.</notice>",
            ),
            ("a\nb", 1, 2000, "     1\ta\n     2\tb\n"),
            (
                "",
                1,
                2000,
                "<notice>/w/f.txt exists but is empty (0 lines).</notice>",
            ),
            (
                "a\nb\n",
                9,
                2000,
                "<notice>/w/f.txt has 2 lines; offset 9 is past the end. Use an offset between \
                 1 and 2.</notice>",
            ),
        ];
        for (content, start, limit, expected) in cases {
            assert_eq!(page(content, start, limit), expected, "{content:?}");
        }
    }

    #[test]
    fn pages_deep_into_a_large_file() {
        let content: String = (1..=100_000).map(|n| format!("row {n}\n")).collect();
        assert_eq!(
            page(&content, 50_000, 3),
            " 50000\trow 50000\n 50001\trow 50001\n 50002\trow 50002\n<notice>Showed lines \
             50000-50002 of 100000. Continue with offset 50003.</notice>"
        );
    }

    #[test]
    fn cuts_long_lines_by_characters_and_bytes() {
        let long = format!("{}\n", "y".repeat(5000));
        let text = page(&long, 1, 1);
        assert!(
            text.contains("[line cut: showed the first 2000 characters of a 5001-byte line]"),
            "{text}"
        );
        // Invalid UTF-8 is shown as replacement characters and cut like any other long line.
        let bytes = vec![0xffu8; MAX_LINE_CHARS * 5];
        let mut reader = Cursor::new(bytes);
        let page = read_page(&mut reader, 1, 1).expect("in-memory read");
        assert_eq!(page.cut_lines, 1);
        assert!(
            page.text.contains("characters of a 10000-byte line"),
            "{}",
            page.text
        );
    }
}
