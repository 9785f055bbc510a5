//! Example monitor: appends every event it observes to a hash-chained JSONL audit log at
//! `config.path` (see `chain` for the format), and answers `{}`.
//!
//! The chain's position lives in memory for the session. The host re-creates the instance after a
//! trap or a timeout, and a new session starts a new one, so on its first event an instance reads
//! the end of the existing log and continues from its last line; if that line is not a record it
//! fails instead of starting a second chain in the same file. Each record is appended with a single
//! write to a file opened in append mode. One log should have one writer at a time: two sessions
//! appending to the same file fork the chain, which a verifier will report.

// Native builds exist only for unit tests and do not export the component (see below).
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

mod chain;

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write as _};
use std::sync::Mutex;

use janua_sdk::monitor::{self, Monitor};
use serde::Deserialize;
use serde_json::Value;

use crate::chain::{Chain, read_tail};

/// The fields of a monitor event this monitor reads; it logs the whole event.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    /// Absent or `null` when the manifest gives no table.
    config: Option<Config>,
}

/// `config`, the manifest's table; the host has already expanded `${PLUGIN_DATA}` in it.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Config {
    /// Absolute path of the log file.
    path: Option<String>,
}

/// The log this instance appends to, once its first event has opened it.
struct Log {
    path: String,
    chain: Chain,
    /// True when the log's last line lacks its newline, so the next record starts with one.
    needs_newline: bool,
}

/// One instance serves one session, one event at a time; the lock only satisfies `static`.
static LOG: Mutex<Option<Log>> = Mutex::new(None);

struct Audit;

impl Monitor for Audit {
    fn observe(event: Value) -> Result<Value, String> {
        let config = serde_json::from_value::<Event>(event.clone())
            .map_err(|error| format!("monitor-audit: invalid config: {error}"))?
            .config
            .unwrap_or_default();
        let path = config
            .path
            .filter(|path| path.starts_with('/'))
            .ok_or_else(|| {
                "monitor-audit: config.path must be the absolute path of the log file".to_owned()
            })?;
        let mut log = LOG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if log.as_ref().is_none_or(|log| log.path != path) {
            *log = Some(open(&path)?);
        }
        let Some(log) = log.as_mut() else {
            return Err("monitor-audit: the log was not opened".to_owned());
        };
        append(log, &event)?;
        Ok(monitor::ok())
    }
}

#[cfg(target_arch = "wasm32")]
janua_sdk::export_monitor!(Audit);

/// Resumes the chain of the log at `path`, or starts one when the log is missing or empty.
fn open(path: &str) -> Result<Log, String> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Ok(Log {
                path: path.to_owned(),
                chain: Chain::new(),
                needs_newline: false,
            });
        }
        Err(error) => return Err(format!("monitor-audit: cannot open {path}: {error}")),
    };
    let tail = read_tail(&mut file)
        .map_err(|error| format!("monitor-audit: cannot read {path}: {error}"))?;
    let chain = match tail.last_line {
        Some(line) => Chain::resume(&line).map_err(|error| {
            format!("monitor-audit: cannot continue the audit log {path}: {error}")
        })?,
        None => Chain::new(),
    };
    Ok(Log {
        path: path.to_owned(),
        chain,
        needs_newline: tail.needs_newline,
    })
}

/// Appends the record of `event` in one write; the chain advances only once it is written.
fn append(log: &mut Log, event: &Value) -> Result<(), String> {
    let (line, chain) = log
        .chain
        .next(event)
        .map_err(|error| format!("monitor-audit: {error}"))?;
    let mut bytes = Vec::with_capacity(line.len() + 2);
    if log.needs_newline {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log.path)
        .and_then(|mut file| file.write_all(&bytes))
        .map_err(|error| format!("monitor-audit: cannot append to {}: {error}", log.path))?;
    log.chain = chain;
    log.needs_newline = false;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chain::GENESIS;

    fn lines(path: &str) -> Vec<Value> {
        std::fs::read_to_string(path)
            .expect("read log")
            .lines()
            .map(|line| serde_json::from_str(line).expect("record"))
            .collect()
    }

    #[test]
    fn a_recreated_instance_continues_the_chain() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("audit.jsonl").display().to_string();
        let mut log = open(&path).expect("open");
        append(&mut log, &json!({"event": "session_start", "seq": 1})).expect("append");
        append(&mut log, &json!({"event": "tool_started", "seq": 2})).expect("append");
        let mut log = open(&path).expect("reopen");
        append(&mut log, &json!({"event": "session_end", "seq": 3})).expect("append");

        let text = std::fs::read_to_string(&path).expect("read log");
        let raw: Vec<&str> = text.lines().collect();
        let records = lines(&path);
        assert_eq!(records.len(), 3);
        assert_eq!(records[0]["prev"], json!(GENESIS));
        for (index, record) in records.iter().enumerate() {
            assert_eq!(record["seq"], json!(index + 1));
            if index > 0 {
                assert_eq!(
                    record["prev"],
                    json!(janua_sdk::files::digest(raw[index - 1].as_bytes()))
                );
            }
        }
        assert_eq!(
            records[2]["event"],
            json!({"event": "session_end", "seq": 3})
        );
    }

    #[test]
    fn a_last_line_without_newline_gets_one_before_the_next_record() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("audit.jsonl").display().to_string();
        let mut log = open(&path).expect("open");
        append(&mut log, &json!({"n": 1})).expect("append");
        let text = std::fs::read_to_string(&path).expect("read log");
        std::fs::write(&path, text.trim_end()).expect("strip newline");
        let mut log = open(&path).expect("reopen");
        append(&mut log, &json!({"n": 2})).expect("append");
        let records = lines(&path);
        assert_eq!(records.len(), 2);
        assert_eq!(records[1]["seq"], json!(2));
    }

    #[test]
    fn a_damaged_last_line_is_an_error_naming_the_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("audit.jsonl").display().to_string();
        std::fs::write(&path, "{\"seq\":1,\"prev\":\"00\n").expect("write");
        let error = open(&path).err().expect("refused");
        assert!(error.contains(&path), "{error}");
        assert!(error.contains("not an audit record"), "{error}");
    }

    #[test]
    fn an_unwritable_log_is_an_error_naming_the_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir
            .path()
            .join("missing")
            .join("audit.jsonl")
            .display()
            .to_string();
        let mut log = open(&path).expect("open");
        let error = append(&mut log, &json!({})).expect_err("refused");
        assert!(error.contains(&path), "{error}");
        assert_eq!(log.chain, Chain::new());
    }
}
