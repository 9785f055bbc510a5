//! The session's read record: for each file a tool read (or wrote), the digest of the content it
//! saw. Editing tools compare it with the file's current content (read-before-edit), so the model
//! never edits a file it has not seen, or one that changed under it.
//!
//! The record is advisory model hygiene, not a security boundary (grants are): it holds only
//! absolute paths inside the recording component's grants and well-formed digests, and at most
//! [`MAX_READS`] files, dropping the oldest.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

/// Files remembered per session.
pub const MAX_READS: usize = 4096;
/// Longest path recorded.
const MAX_PATH_BYTES: usize = 4096;

/// One remembered read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadEntry {
    pub(crate) path: String,
    pub(crate) digest: String,
}

/// The read record shared by the calls of one session.
#[derive(Debug, Default)]
pub struct ReadLedger {
    entries: Mutex<VecDeque<ReadEntry>>,
    dirty: AtomicBool,
}

impl ReadLedger {
    /// A ledger holding `entries` (from the saved session), newest last.
    pub fn from_entries(entries: Vec<ReadEntry>) -> Self {
        let mut entries: VecDeque<ReadEntry> = entries
            .into_iter()
            .filter(|entry| well_formed(&entry.path, &entry.digest))
            .collect();
        let excess = entries.len().saturating_sub(MAX_READS);
        entries.drain(..excess);
        Self {
            entries: Mutex::new(entries),
            dirty: AtomicBool::new(false),
        }
    }

    /// Records that `path` was seen with `digest`; ignores malformed records.
    pub(crate) fn record(&self, path: &str, digest: &str) {
        if !well_formed(path, digest) {
            return;
        }
        let mut entries = self.lock();
        entries.retain(|entry| entry.path != path);
        if entries.len() == MAX_READS {
            entries.pop_front();
        }
        entries.push_back(ReadEntry {
            path: path.to_owned(),
            digest: digest.to_ascii_lowercase(),
        });
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// The digest last recorded for `path`.
    pub(crate) fn digest(&self, path: &str) -> Option<String> {
        self.lock()
            .iter()
            .rev()
            .find(|entry| entry.path == path)
            .map(|entry| entry.digest.clone())
    }

    /// The entries to save, oldest first.
    pub fn entries(&self) -> Vec<ReadEntry> {
        self.lock().iter().cloned().collect()
    }

    /// True (once) when something was recorded since the last call.
    pub fn take_dirty(&self) -> bool {
        self.dirty.swap(false, Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<ReadEntry>> {
        self.entries
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

fn well_formed(path: &str, digest: &str) -> bool {
    path.starts_with('/')
        && path.len() <= MAX_PATH_BYTES
        && digest.len() == 64
        && digest.bytes().all(|byte| byte.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST_A: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    const DIGEST_B: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn keeps_the_latest_digest_and_ignores_malformed_records() {
        let ledger = ReadLedger::default();
        ledger.record("/ws/a.txt", DIGEST_A);
        ledger.record("/ws/a.txt", DIGEST_B);
        ledger.record("relative.txt", DIGEST_A);
        ledger.record("/ws/b.txt", "not-a-digest");
        assert_eq!(ledger.digest("/ws/a.txt").as_deref(), Some(DIGEST_B));
        assert_eq!(ledger.digest("relative.txt"), None);
        assert_eq!(ledger.digest("/ws/b.txt"), None);
        assert_eq!(ledger.entries().len(), 1);
        assert!(ledger.take_dirty());
        assert!(!ledger.take_dirty());
    }

    #[test]
    fn forgets_the_oldest_beyond_the_cap() {
        let ledger = ReadLedger::default();
        for n in 0..=MAX_READS {
            ledger.record(&format!("/ws/{n}"), DIGEST_A);
        }
        assert_eq!(ledger.digest("/ws/0"), None);
        assert!(ledger.digest(&format!("/ws/{MAX_READS}")).is_some());
        assert_eq!(ledger.entries().len(), MAX_READS);
    }
}
