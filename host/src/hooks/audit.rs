//! Verifying the hash-chained JSONL log the example audit monitor writes
//! (`example-tools/monitor-audit`): each line is `{"seq": N, "prev": "<hex>", "event": {...}}`,
//! `seq` counts from 1, and `prev` is the lowercase hex SHA-256 of the previous line's bytes
//! without its newline (64 zeros on the first line). Editing, removing, inserting or reordering a
//! line breaks the chain at the line after it; a changed *last* line is only caught against a
//! hash kept elsewhere, which is why the summary reports the last line's hash.

use std::path::{Path, PathBuf};

use sha2::Digest as _;

/// A log whose chain holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AuditSummary {
    /// Lines checked.
    pub lines: u64,
    /// SHA-256 of the last line: keep it elsewhere to detect a changed last line later.
    pub last_hash: String,
}

/// Why a log does not verify.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The log.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line breaks the chain.
    #[error("{}: line {line}: {reason}", path.display())]
    Broken {
        /// The log.
        path: PathBuf,
        /// The first line that does not verify (1-based).
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
}

/// Checks every line of the audit log at `path`.
pub fn verify_audit_log(path: &Path) -> Result<AuditSummary, AuditError> {
    let bytes = std::fs::read(path).map_err(|source| AuditError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut previous = "0".repeat(64);
    let mut lines = 0u64;
    for (index, line) in bytes.split(|byte| *byte == b'\n').enumerate() {
        let number = index as u64 + 1;
        let broken = |reason: String| AuditError::Broken {
            path: path.to_path_buf(),
            line: number,
            reason,
        };
        if line.is_empty() {
            // Only the end of the file may be empty (after the last newline).
            if index + 1 == bytes.split(|byte| *byte == b'\n').count() {
                break;
            }
            return Err(broken("empty line inside the log".to_owned()));
        }
        let record: serde_json::Value = serde_json::from_slice(line)
            .map_err(|error| broken(format!("not a JSON record: {error}")))?;
        let seq = record["seq"]
            .as_u64()
            .ok_or_else(|| broken("no numeric \"seq\"".to_owned()))?;
        if seq != number {
            return Err(broken(format!("seq is {seq}, expected {number}")));
        }
        let prev = record["prev"]
            .as_str()
            .ok_or_else(|| broken("no \"prev\" hash".to_owned()))?;
        if prev != previous {
            return Err(broken(if number == 1 {
                "the first line's prev must be 64 zeros".to_owned()
            } else {
                format!(
                    "prev does not match the SHA-256 of line {} (the chain is broken: line {} was changed, removed or reordered)",
                    number - 1,
                    number - 1
                )
            }));
        }
        if !record["event"].is_object() {
            return Err(broken("no \"event\" object".to_owned()));
        }
        previous = janua_types::hex(&sha2::Sha256::digest(line));
        lines = number;
    }
    Ok(AuditSummary {
        lines,
        last_hash: previous,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(events: &[&str]) -> Vec<String> {
        let mut previous = "0".repeat(64);
        let mut lines = Vec::new();
        for (index, event) in events.iter().enumerate() {
            let line = format!(
                "{{\"event\":{event},\"prev\":\"{previous}\",\"seq\":{}}}",
                index + 1
            );
            previous = janua_types::hex(&sha2::Sha256::digest(line.as_bytes()));
            lines.push(line);
        }
        lines
    }

    #[test]
    fn intact_chains_verify_and_changed_lines_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let lines = chain(&[r#"{"event":"a"}"#, r#"{"event":"b"}"#, r#"{"event":"c"}"#]);
        std::fs::write(&path, format!("{}\n", lines.join("\n"))).unwrap();
        let summary = verify_audit_log(&path).unwrap();
        assert_eq!(summary.lines, 3);

        let mut changed = lines.clone();
        changed[1] = changed[1].replace("\"b\"", "\"B\"");
        std::fs::write(&path, format!("{}\n", changed.join("\n"))).unwrap();
        let error = verify_audit_log(&path).unwrap_err().to_string();
        assert!(error.contains("line 3: prev does not match"), "{error}");

        let mut removed = lines.clone();
        removed.remove(1);
        std::fs::write(&path, removed.join("\n")).unwrap();
        let error = verify_audit_log(&path).unwrap_err().to_string();
        assert!(error.contains("line 2: seq is 3"), "{error}");

        std::fs::write(&path, "not json\n").unwrap();
        assert!(
            verify_audit_log(&path)
                .unwrap_err()
                .to_string()
                .contains("line 1: not a JSON record")
        );
    }
}
