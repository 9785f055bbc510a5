//! Checkpoints: the prior state of every file a write-class tool changes, saved under the session
//! directory before the call, so `janua rewind` can put the workspace back.
//!
//! Layout: `<session>/checkpoints/index.json` lists the checkpoints oldest first; file contents
//! live once per digest in `<session>/checkpoints/blobs/<sha256>`. The index is written atomically.
//! Storage is bounded: the newest [`MAX_CHECKPOINTS`] are kept, the oldest are also dropped while
//! the store holds more than [`MAX_STORAGE_BYTES`], and blobs no checkpoint refers to are deleted;
//! files over [`MAX_FILE_BYTES`] are recorded as too large and skipped by rewind.
//!
//! What this does not cover: changes made by other means (Bash, editors); those are detected at
//! rewind time (the file no longer has the content the tool left) and the file is skipped.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use janua_types::{unix_ms, write_atomically};

use super::SessionError;

/// How long an unreferenced blob is spared: longer than any call may run (the longest timeout
/// is ten minutes), so another process's call in progress never loses its saved content.
const PENDING_BLOB_GRACE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Checkpoints kept per session; older ones are dropped.
pub const MAX_CHECKPOINTS: usize = 100;
/// Largest file whose content a checkpoint saves.
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// Most bytes the blobs of one session's checkpoints may use; the newest checkpoint is always kept.
pub const MAX_STORAGE_BYTES: u64 = 1 << 30;
const INDEX_FILE: &str = "index.json";
const INDEX_VERSION: u32 = 1;

/// What a path held at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileState {
    /// Nothing was there.
    Absent,
    /// A regular file; its content is the blob named by `digest`.
    File {
        /// SHA-256 of the content (lowercase hex).
        digest: String,
        /// Unix permission bits.
        mode: u32,
        /// Size in bytes.
        size: u64,
    },
    /// A regular file too large to save.
    TooLarge {
        /// Size in bytes.
        size: u64,
    },
    /// A symbolic link (never followed or restored).
    Symlink,
    /// A directory, FIFO, socket or device.
    Other,
}

/// One saved checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// Sequence number, increasing over the session's life.
    pub number: u64,
    /// When the change was made (milliseconds since the Unix epoch).
    pub unix_ms: u64,
    /// The tool that made it.
    pub tool: String,
    /// The `tool_use` id of the call.
    pub call_id: String,
    /// The file changed.
    pub path: PathBuf,
    /// The state before the call.
    pub before: FileState,
    /// The state the call left.
    pub after: FileState,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Index {
    version: u32,
    next: u64,
    checkpoints: Vec<Checkpoint>,
}

/// A checkpoint taken before a call and not yet committed.
#[derive(Debug)]
pub(crate) struct Pending {
    path: PathBuf,
    before: FileState,
}

/// Why a rewind left a file as it is; the text is the [`Skipped`] reason.
#[derive(Debug, thiserror::Error)]
enum NotRestored {
    #[error("cannot read its current state: {0}")]
    Unreadable(SessionError),
    #[error("it is now a symbolic link; links are never followed or replaced")]
    NowSymlink,
    #[error("a directory on its path is now a symbolic link")]
    LinkOnPath,
    #[error("it was changed by something else after janua's last change; restore it by hand")]
    ChangedSince,
    #[error("cannot remove it: {0}")]
    Remove(std::io::Error),
    #[error("its saved content is missing ({0})")]
    BlobMissing(std::io::Error),
    #[error("its saved content is damaged (digest mismatch)")]
    BlobDamaged,
    #[error("cannot recreate its directory: {0}")]
    Directory(std::io::Error),
    #[error("cannot write it: {0}")]
    Write(std::io::Error),
    #[error(
        "it was {0} bytes, over the {MAX_FILE_BYTES}-byte checkpoint limit, so its content was not saved"
    )]
    TooLarge(u64),
    #[error("it was a symbolic link, which is never restored")]
    WasSymlink,
    #[error("it was not a regular file")]
    NotRegular,
}

/// A file `rewind` left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why it was not restored.
    pub reason: String,
}

/// What `rewind` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RewindReport {
    /// Files put back to their earlier content (or removed, if they did not exist before).
    pub restored: Vec<PathBuf>,
    /// Files left as they are.
    pub skipped: Vec<Skipped>,
    /// Checkpoints undone.
    pub undone: usize,
}

/// The checkpoint store of one session.
#[derive(Debug)]
pub struct Checkpoints {
    dir: PathBuf,
    /// Digests of blobs saved by `before` whose `after` has not run yet, with how many calls wait
    /// on each: never garbage.
    pending: Mutex<HashMap<String, usize>>,
    /// How long unreferenced blobs are spared ([`PENDING_BLOB_GRACE`]).
    blob_grace: std::time::Duration,
}

/// Exclusive use of the store: the in-process lock plus an advisory lock on
/// `checkpoints/index.lock`, so two `janua` processes on one session do not lose updates.
struct Guard<'a> {
    pending: std::sync::MutexGuard<'a, HashMap<String, usize>>,
    _file: Option<std::fs::File>,
}

impl Checkpoints {
    /// The store under `session_dir`.
    pub(crate) fn new(session_dir: &Path) -> Self {
        Self {
            dir: session_dir.join("checkpoints"),
            pending: Mutex::new(HashMap::new()),
            blob_grace: PENDING_BLOB_GRACE,
        }
    }

    fn blobs(&self) -> PathBuf {
        self.dir.join("blobs")
    }

    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SessionError + use<> {
        let path = path.to_path_buf();
        move |source| SessionError::Io { path, source }
    }

    /// Saves the current state of `path` before a call changes it.
    pub(crate) fn before(&self, path: &Path) -> Result<Pending, SessionError> {
        let mut guard = self.guard();
        let before = self.capture(path, true)?;
        if let FileState::File { digest, .. } = &before {
            *guard.pending.entry(digest.clone()).or_default() += 1;
        }
        Ok(Pending {
            path: path.to_path_buf(),
            before,
        })
    }

    /// Commits `pending` after the call: records it when the file changed (returning its number),
    /// forgets it otherwise.
    pub(crate) fn after(
        &self,
        pending: Pending,
        tool: &str,
        call_id: &str,
    ) -> Result<Option<u64>, SessionError> {
        let mut guard = self.guard();
        if let FileState::File { digest, .. } = &pending.before
            && let Some(waiting) = guard.pending.get_mut(digest)
        {
            *waiting -= 1;
            if *waiting == 0 {
                guard.pending.remove(digest);
            }
        }
        let after = self.capture(&pending.path, false)?;
        let mut index = self.load()?;
        if after == pending.before {
            self.collect_garbage(&index, &guard)?;
            return Ok(None);
        }
        let number = index.next.max(1);
        let Some(next) = number.checked_add(1) else {
            return Err(Self::io(&self.dir.join(INDEX_FILE))(std::io::Error::other(
                "the checkpoint counter is exhausted; start a new session",
            )));
        };
        index.next = next;
        index.checkpoints.push(Checkpoint {
            number,
            unix_ms: unix_ms(),
            tool: tool.to_owned(),
            call_id: call_id.to_owned(),
            path: pending.path,
            before: pending.before,
            after,
        });
        let excess = index.checkpoints.len().saturating_sub(MAX_CHECKPOINTS);
        index.checkpoints.drain(..excess);
        while index.checkpoints.len() > 1 && referenced_bytes(&index) > MAX_STORAGE_BYTES {
            index.checkpoints.remove(0);
        }
        self.store(&index)?;
        self.collect_garbage(&index, &guard)?;
        Ok(Some(number))
    }

    /// Every checkpoint, oldest first.
    pub fn list(&self) -> Result<Vec<Checkpoint>, SessionError> {
        let _guard = self.guard();
        Ok(self.load()?.checkpoints)
    }

    /// Bytes the store uses on disk (index and blobs).
    pub fn storage_bytes(&self) -> u64 {
        let index = std::fs::metadata(self.dir.join(INDEX_FILE)).map_or(0, |meta| meta.len());
        let blobs = std::fs::read_dir(self.blobs()).map_or(0, |entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.metadata().ok())
                .map(|meta| meta.len())
                .sum()
        });
        index + blobs
    }

    /// Restores every file changed at or after checkpoint `number` to its state before that
    /// checkpoint, and forgets those checkpoints. Files that are symlinks, or that something else
    /// changed since the last checkpoint, are skipped and reported; their checkpoints are kept, so
    /// their saved content stays available.
    pub fn rewind(&self, number: u64) -> Result<RewindReport, SessionError> {
        let guard = self.guard();
        let mut index = self.load()?;
        let (kept, undone): (Vec<_>, Vec<_>) = index
            .checkpoints
            .into_iter()
            .partition(|checkpoint| checkpoint.number < number);
        let index_kept_len = kept.len();
        // For each file: the state before its first undone change, the state after its last.
        let mut files: BTreeMap<PathBuf, (FileState, FileState)> = BTreeMap::new();
        for checkpoint in &undone {
            files
                .entry(checkpoint.path.clone())
                .and_modify(|(_, after)| *after = checkpoint.after.clone())
                .or_insert_with(|| (checkpoint.before.clone(), checkpoint.after.clone()));
        }
        let mut report = RewindReport {
            undone: undone.len(),
            ..RewindReport::default()
        };
        for (path, (before, expected)) in files {
            match self.restore(&path, &before, &expected) {
                Ok(()) => report.restored.push(path),
                Err(reason) => {
                    let reason = match &before {
                        FileState::File { digest, .. } => format!(
                            "{reason}; its earlier content is kept in {}",
                            self.blobs().join(digest).display()
                        ),
                        _ => reason.to_string(),
                    };
                    report.skipped.push(Skipped { path, reason });
                }
            }
        }
        let mut kept = kept;
        kept.extend(undone.into_iter().filter(|checkpoint| {
            report
                .skipped
                .iter()
                .any(|skipped| skipped.path == checkpoint.path)
        }));
        report.undone -= kept.len() - index_kept_len;
        index.checkpoints = kept;
        self.store(&index)?;
        self.collect_garbage(&index, &guard)?;
        Ok(report)
    }

    fn restore(
        &self,
        path: &Path,
        before: &FileState,
        expected: &FileState,
    ) -> Result<(), NotRestored> {
        let now = self.capture(path, false).map_err(NotRestored::Unreadable)?;
        if now == FileState::Symlink {
            return Err(NotRestored::NowSymlink);
        }
        // The host writes with the user's full rights: never through a directory link that a
        // tool or anyone else put on the way, including above directories it must recreate.
        let closest = path
            .ancestors()
            .skip(1)
            .find(|ancestor| std::fs::symlink_metadata(ancestor).is_ok());
        if closest.is_none_or(|closest| {
            std::fs::canonicalize(closest).map_or(true, |real| real != closest)
        }) {
            return Err(NotRestored::LinkOnPath);
        }
        if &now == before {
            // An earlier rewind that was cut short already put it back.
            return Ok(());
        }
        if &now != expected {
            return Err(NotRestored::ChangedSince);
        }
        match before {
            FileState::Absent => std::fs::remove_file(path)
                .or_else(|error| match error.kind() {
                    std::io::ErrorKind::NotFound => Ok(()),
                    _ => Err(error),
                })
                .map_err(NotRestored::Remove),
            FileState::File { digest, mode, .. } => {
                let blob = self.blobs().join(digest);
                let bytes = std::fs::read(&blob).map_err(NotRestored::BlobMissing)?;
                if hex_digest(&bytes) != *digest {
                    return Err(NotRestored::BlobDamaged);
                }
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(NotRestored::Directory)?;
                }
                write_atomically(path, &bytes)
                    .and_then(|()| {
                        std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))
                    })
                    .map_err(NotRestored::Write)
            }
            FileState::TooLarge { size } => Err(NotRestored::TooLarge(*size)),
            FileState::Symlink => Err(NotRestored::WasSymlink),
            FileState::Other => Err(NotRestored::NotRegular),
        }
    }

    /// The state of `path`; with `save`, a regular file's content is stored as a blob.
    fn capture(&self, path: &Path, save: bool) -> Result<FileState, SessionError> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(FileState::Absent);
            }
            Err(error) => return Err(Self::io(path)(error)),
        };
        if meta.file_type().is_symlink() {
            return Ok(FileState::Symlink);
        }
        if !meta.is_file() {
            return Ok(FileState::Other);
        }
        if meta.len() > MAX_FILE_BYTES {
            return Ok(FileState::TooLarge { size: meta.len() });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(Self::io(path))?;
        let size = bytes.len() as u64;
        if size > MAX_FILE_BYTES {
            return Ok(FileState::TooLarge { size });
        }
        let digest = hex_digest(&bytes);
        if save {
            let blobs = self.blobs();
            std::fs::create_dir_all(&blobs).map_err(Self::io(&blobs))?;
            let blob = blobs.join(&digest);
            // A blob already there is touched: garbage collection in another process spares
            // young blobs, which a call in progress may be about to refer to.
            let touched = std::fs::File::options()
                .write(true)
                .open(&blob)
                .and_then(|file| file.set_modified(std::time::SystemTime::now()));
            if touched.is_err() {
                write_atomically(&blob, &bytes).map_err(Self::io(&blob))?;
            }
        }
        Ok(FileState::File {
            digest,
            mode: meta.permissions().mode() & 0o7777,
            size,
        })
    }

    fn load(&self) -> Result<Index, SessionError> {
        let path = self.dir.join(INDEX_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<Index>(&bytes) {
                Ok(index) if index.version == INDEX_VERSION => Ok(index),
                Ok(_) | Err(_) => {
                    // Never trust a damaged index: set it aside and start a new one.
                    let aside = self.dir.join(format!("{INDEX_FILE}.corrupt-{}", unix_ms()));
                    std::fs::rename(&path, &aside).map_err(Self::io(&path))?;
                    tracing::warn!(
                        "checkpoint index {} was unreadable; it was moved to {}",
                        path.display(),
                        aside.display()
                    );
                    Ok(Index::fresh())
                }
            },
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Index::fresh()),
            Err(error) => Err(Self::io(&path)(error)),
        }
    }

    fn store(&self, index: &Index) -> Result<(), SessionError> {
        std::fs::create_dir_all(&self.dir).map_err(Self::io(&self.dir))?;
        let path = self.dir.join(INDEX_FILE);
        let bytes = serde_json::to_vec_pretty(index)
            .map_err(|error| Self::io(&path)(std::io::Error::other(error)))?;
        write_atomically(&path, &bytes).map_err(Self::io(&path))
    }

    /// Deletes blobs no checkpoint refers to and no call in progress saved.
    fn collect_garbage(&self, index: &Index, guard: &Guard<'_>) -> Result<(), SessionError> {
        let mut referenced: HashSet<&str> = index
            .checkpoints
            .iter()
            .filter_map(|checkpoint| match &checkpoint.before {
                FileState::File { digest, .. } => Some(digest.as_str()),
                _ => None,
            })
            .collect();
        referenced.extend(guard.pending.keys().map(String::as_str));
        let Ok(entries) = std::fs::read_dir(self.blobs()) else {
            return Ok(());
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            // Another process's call in progress may have saved it: spare it while that call
            // could still be running.
            let young = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age < self.blob_grace));
            if !young && !referenced.contains(name.to_string_lossy().as_ref()) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(())
    }

    fn guard(&self) -> Guard<'_> {
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        // Best effort: without the directory or file locking, the in-process lock still holds.
        let file = std::fs::create_dir_all(&self.dir)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(self.dir.join("index.lock"))
            })
            .and_then(|file| file.lock().map(|()| file))
            .ok();
        Guard {
            pending,
            _file: file,
        }
    }
}

impl Index {
    fn fresh() -> Self {
        Self {
            version: INDEX_VERSION,
            next: 1,
            checkpoints: Vec::new(),
        }
    }
}

/// Bytes of the distinct blobs `index` refers to.
fn referenced_bytes(index: &Index) -> u64 {
    let mut seen = HashSet::new();
    index
        .checkpoints
        .iter()
        .filter_map(|checkpoint| match &checkpoint.before {
            FileState::File { digest, size, .. } if seen.insert(digest.as_str()) => Some(*size),
            _ => None,
        })
        .sum()
}

fn hex_digest(bytes: &[u8]) -> String {
    janua_types::hex(&sha2::Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store whose garbage collection spares no blob for its age.
    fn store() -> (tempfile::TempDir, tempfile::TempDir, Checkpoints) {
        let session = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let mut checkpoints = Checkpoints::new(session.path());
        checkpoints.blob_grace = std::time::Duration::ZERO;
        (session, workspace, checkpoints)
    }

    fn change(checkpoints: &Checkpoints, path: &Path, bytes: Option<&[u8]>) -> Option<u64> {
        let pending = checkpoints.before(path).unwrap();
        match bytes {
            Some(bytes) => std::fs::write(path, bytes).unwrap(),
            None => std::fs::remove_file(path).unwrap(),
        }
        checkpoints.after(pending, "Edit", "toolu_1").unwrap()
    }

    #[test]
    fn rewind_restores_bytes_mode_and_absence() {
        let (_session, workspace, checkpoints) = store();
        let kept = workspace.path().join("kept.sh");
        std::fs::write(&kept, b"#!/bin/sh\necho one\n").unwrap();
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o750)).unwrap();
        let created = workspace.path().join("new.txt");
        assert_eq!(change(&checkpoints, &kept, Some(b"two")), Some(1));
        assert_eq!(change(&checkpoints, &created, Some(b"fresh")), Some(2));
        assert_eq!(change(&checkpoints, &kept, Some(b"three")), Some(3));
        let report = checkpoints.rewind(1).unwrap();
        assert_eq!(report.undone, 3);
        assert!(report.skipped.is_empty(), "{report:?}");
        assert_eq!(std::fs::read(&kept).unwrap(), b"#!/bin/sh\necho one\n");
        let mode = std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
        assert!(!created.exists());
        assert!(checkpoints.list().unwrap().is_empty());
        assert_eq!(
            checkpoints.storage_bytes(),
            std::fs::metadata(checkpoints.dir.join(INDEX_FILE))
                .unwrap()
                .len()
        );
    }

    #[test]
    fn rewind_skips_files_changed_since_and_symlinks() {
        let (_session, workspace, checkpoints) = store();
        let edited = workspace.path().join("a.txt");
        let linked = workspace.path().join("b.txt");
        std::fs::write(&edited, b"old").unwrap();
        std::fs::write(&linked, b"old b").unwrap();
        change(&checkpoints, &edited, Some(b"new"));
        change(&checkpoints, &linked, Some(b"new b"));
        std::fs::write(&edited, b"someone else").unwrap();
        std::fs::remove_file(&linked).unwrap();
        std::os::unix::fs::symlink(&edited, &linked).unwrap();
        let report = checkpoints.rewind(1).unwrap();
        assert!(report.restored.is_empty(), "{report:?}");
        let reasons: Vec<&str> = report.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert!(
            reasons[0].contains("changed by something else"),
            "{reasons:?}"
        );
        assert!(reasons[1].contains("symbolic link"), "{reasons:?}");
        assert_eq!(std::fs::read(&edited).unwrap(), b"someone else");
    }

    #[test]
    fn unchanged_files_leave_no_checkpoint_and_old_ones_are_dropped() {
        let (_session, workspace, checkpoints) = store();
        let path = workspace.path().join("same.txt");
        std::fs::write(&path, b"same").unwrap();
        assert_eq!(change(&checkpoints, &path, Some(b"same")), None);
        for round in 0..(MAX_CHECKPOINTS + 5) {
            change(
                &checkpoints,
                &path,
                Some(format!("round {round}").as_bytes()),
            );
        }
        let list = checkpoints.list().unwrap();
        assert_eq!(list.len(), MAX_CHECKPOINTS);
        assert_eq!(list[0].number, 6);
        let blobs = std::fs::read_dir(checkpoints.blobs()).unwrap().count();
        assert_eq!(
            blobs, MAX_CHECKPOINTS,
            "one blob per kept checkpoint, no leftovers"
        );
    }

    #[test]
    fn another_process_spares_a_call_in_progress_and_shared_digests_are_counted() {
        let (session, workspace, checkpoints) = store();
        let first = workspace.path().join("one.txt");
        let second = workspace.path().join("two.txt");
        std::fs::write(&first, b"same bytes").unwrap();
        std::fs::write(&second, b"same bytes").unwrap();
        // Two calls in this process wait on one blob; the first finishes without a change.
        let waiting_first = checkpoints.before(&first).unwrap();
        let waiting_second = checkpoints.before(&second).unwrap();
        assert_eq!(checkpoints.after(waiting_first, "Edit", "a").unwrap(), None);
        // Another process (its own store on the same directory, default grace) collects
        // garbage while the second call is still running.
        let other = Checkpoints::new(session.path());
        let unrelated = workspace.path().join("three.txt");
        std::fs::write(&unrelated, b"other").unwrap();
        assert_eq!(change(&other, &unrelated, Some(b"other")), None);
        std::fs::write(&second, b"changed").unwrap();
        assert_eq!(
            checkpoints.after(waiting_second, "Edit", "b").unwrap(),
            Some(1)
        );
        let report = checkpoints.rewind(1).unwrap();
        assert!(report.skipped.is_empty(), "{report:?}");
        assert_eq!(std::fs::read(&second).unwrap(), b"same bytes");
    }

    #[test]
    fn rewind_never_recreates_directories_under_a_symlink_and_resumes() {
        let (_session, workspace, checkpoints) = store();
        let outside = tempfile::tempdir().unwrap();
        let nested = workspace.path().join("d/e/f.txt");
        std::fs::create_dir_all(nested.parent().unwrap()).unwrap();
        std::fs::write(&nested, b"content").unwrap();
        change(&checkpoints, &nested, None);
        std::fs::remove_dir_all(workspace.path().join("d")).unwrap();
        std::os::unix::fs::symlink(outside.path(), workspace.path().join("d")).unwrap();
        let report = checkpoints.rewind(1).unwrap();
        assert!(report.restored.is_empty(), "{report:?}");
        assert!(
            report.skipped[0].reason.contains("symbolic link"),
            "{report:?}"
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);

        // A rewind cut short: the file is already back, the index still lists the checkpoint.
        let plain = workspace.path().join("plain.txt");
        std::fs::write(&plain, b"before").unwrap();
        let number = change(&checkpoints, &plain, Some(b"after")).unwrap();
        std::fs::write(&plain, b"before").unwrap();
        let report = checkpoints.rewind(number).unwrap();
        assert_eq!(report.restored, vec![plain.clone()], "{report:?}");
    }
}
