//! The audit log's format, without I/O: building a record line and resuming a chain from the last
//! line of an existing log.
//!
//! A log is one JSON object per line, `{"seq":N,"prev":"<hex>","event":{...}}`, serialized
//! compactly and ended by `\n`. `seq` counts from 1; `prev` is the lowercase hex SHA-256 of the
//! previous line's bytes without its newline, and 64 zeros on the first line. Changing, removing or
//! reordering any line therefore breaks the `prev` of the line after it.

use std::io::{self, Read, Seek, SeekFrom};

use janua_sdk::files::digest;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `prev` of the first line.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Bytes read per step when looking for the last line from the end of the log.
const TAIL_CHUNK: u64 = 8192;

/// Where the chain stands: what the next line continues from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chain {
    /// `seq` of the last line written; 0 before the first.
    pub(crate) seq: u64,
    /// Digest of the last line written, or [`GENESIS`].
    pub(crate) prev: String,
}

impl Chain {
    /// The chain of an empty log.
    pub(crate) fn new() -> Self {
        Self {
            seq: 0,
            prev: GENESIS.to_owned(),
        }
    }

    /// The next line for `event`, without its newline, and the chain once it is written.
    pub(crate) fn next(&self, event: &Value) -> Result<(String, Chain), String> {
        let seq = self.seq + 1;
        let line = serde_json::to_string(&Record {
            seq,
            prev: &self.prev,
            event,
        })
        .map_err(|error| format!("cannot serialize the audit record: {error}"))?;
        let chain = Chain {
            seq,
            prev: digest(line.as_bytes()),
        };
        Ok((line, chain))
    }

    /// The chain continuing after `line`, the last non-empty line of a log (without its newline).
    /// A line that is not a record is an error: appending after it would start a chain nobody can
    /// tell from a tampered one.
    pub(crate) fn resume(line: &[u8]) -> Result<Self, String> {
        let record: StoredRecord = serde_json::from_slice(line)
            .map_err(|error| format!("its last line is not an audit record ({error})"))?;
        let valid_prev = record.prev.len() == 64
            && record
                .prev
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
        if record.seq == 0 || !valid_prev {
            return Err(format!(
                "its last line is not an audit record (seq {} and prev {:?} must be a positive \
                 number and 64 lowercase hex digits)",
                record.seq, record.prev
            ));
        }
        Ok(Self {
            seq: record.seq,
            prev: digest(line),
        })
    }
}

/// One line as written; field order is the format's.
#[derive(Serialize)]
struct Record<'a> {
    seq: u64,
    prev: &'a str,
    event: &'a Value,
}

/// One line as read back.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredRecord {
    seq: u64,
    prev: String,
    #[expect(dead_code, reason = "required to be present, never read")]
    event: Value,
}

/// The end of an existing log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tail {
    /// The last non-empty line, without its newline; `None` when the log has no such line.
    pub(crate) last_line: Option<Vec<u8>>,
    /// True when the log is not empty and its last byte is not a newline, so the next record must
    /// start with one.
    pub(crate) needs_newline: bool,
}

/// Reads the end of a log backwards, chunk by chunk, so resuming costs the size of the last line
/// and not of the whole log.
pub(crate) fn read_tail<R: Read + Seek>(log: &mut R) -> io::Result<Tail> {
    let len = log.seek(SeekFrom::End(0))?;
    let mut start = len;
    // The bytes from `start` to the end of the log.
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let content_end = tail
            .iter()
            .rposition(|&byte| byte != b'\n')
            .map(|index| index + 1);
        if let Some(content_end) = content_end
            && let Some(newline) = tail[..content_end].iter().rposition(|&byte| byte == b'\n')
        {
            return Ok(Tail {
                last_line: Some(tail[newline + 1..content_end].to_vec()),
                needs_newline: tail.last() != Some(&b'\n'),
            });
        }
        if start == 0 {
            return Ok(Tail {
                last_line: content_end.map(|content_end| tail[..content_end].to_vec()),
                needs_newline: tail.last().is_some_and(|&byte| byte != b'\n'),
            });
        }
        let chunk_start = start.saturating_sub(TAIL_CHUNK);
        let mut chunk = vec![0; usize::try_from(start - chunk_start).unwrap_or(0)];
        log.seek(SeekFrom::Start(chunk_start))?;
        log.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&tail);
        tail = chunk;
        start = chunk_start;
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use serde_json::json;

    use super::*;

    #[test]
    fn lines_chain_by_digest_of_the_previous_line() {
        let first_event = json!({"event": "session_start", "seq": 1, "session_id": "s"});
        let (first, chain) = Chain::new().next(&first_event).expect("line");
        assert_eq!(
            first,
            format!(r#"{{"seq":1,"prev":"{GENESIS}","event":{first_event}}}"#)
        );
        assert_eq!(chain.seq, 1);
        assert_eq!(chain.prev, digest(first.as_bytes()));

        let (second, chain) = chain.next(&json!({"event": "session_end"})).expect("line");
        assert_eq!(
            second,
            format!(
                r#"{{"seq":2,"prev":"{}","event":{{"event":"session_end"}}}}"#,
                digest(first.as_bytes())
            )
        );
        assert_eq!(Chain::resume(second.as_bytes()), Ok(chain));
    }

    #[test]
    fn resume_refuses_lines_that_are_not_records() {
        let cases: &[&[u8]] = &[
            b"not json",
            br#"{"seq":1,"prev":"00""#,
            br#"{"seq":0,"prev":"0000000000000000000000000000000000000000000000000000000000000000","event":{}}"#,
            br#"{"seq":1,"prev":"ABCD000000000000000000000000000000000000000000000000000000000000","event":{}}"#,
            br#"{"seq":1,"prev":"00","event":{}}"#,
            br#"{"seq":-1,"prev":"0000000000000000000000000000000000000000000000000000000000000000","event":{}}"#,
            br#"{"seq":1,"prev":"0000000000000000000000000000000000000000000000000000000000000000"}"#,
            br#"{"seq":1,"prev":"0000000000000000000000000000000000000000000000000000000000000000","event":{},"extra":1}"#,
            br#"[1,2]"#,
        ];
        for line in cases {
            let result = Chain::resume(line);
            assert!(
                result
                    .as_ref()
                    .is_err_and(|error| error.contains("not an audit record")),
                "{}: {result:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn read_tail_finds_the_last_non_empty_line() {
        let long = "x".repeat(20_000);
        let cases: Vec<(String, Option<&str>, bool)> = vec![
            (String::new(), None, false),
            ("\n\n".to_owned(), None, false),
            ("a\n".to_owned(), Some("a"), false),
            ("a\nb\n".to_owned(), Some("b"), false),
            ("a\nb\n\n\n".to_owned(), Some("b"), false),
            ("a\nb".to_owned(), Some("b"), true),
            ("only".to_owned(), Some("only"), true),
            (format!("a\n{long}\n"), Some(long.as_str()), false),
            (format!("{long}\nz\n"), Some("z"), false),
            (format!("{long}\n{long}"), Some(long.as_str()), true),
        ];
        for (log, line, needs_newline) in cases {
            let tail = read_tail(&mut Cursor::new(log.as_bytes())).expect("read");
            assert_eq!(
                tail,
                Tail {
                    last_line: line.map(|line| line.as_bytes().to_vec()),
                    needs_newline,
                },
                "log of {} bytes",
                log.len()
            );
        }
    }
}
