//! Sessions: state shared by the calls of one run, kept outside the workspace under
//! `<state root>/<workspace digest>/<session id>/` (state root: `--state-dir`, else
//! `$XDG_STATE_HOME/janua`, else `~/.local/state/janua`).
//!
//! Consecutive `janua call`s in one workspace share the `default` session unless `--session ID` is
//! given. State files are written atomically (temporary file + rename); a corrupt state file is set
//! aside as `session.json.corrupt-<time>` and reported, never trusted.

mod checkpoints;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use janua_types::{unix_ms, write_atomically};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

pub(crate) use checkpoints::Pending;
pub use checkpoints::{Checkpoint, Checkpoints, FileState, MAX_CHECKPOINTS, RewindReport, Skipped};
use janua_sandbox::ReadLedger;

/// The session id used when none is given.
pub const DEFAULT_SESSION_ID: &str = "default";
const STATE_FILE: &str = "session.json";
const STATE_VERSION: u32 = 1;

/// Errors opening or saving a session.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The id has characters that cannot name a directory safely.
    #[error(
        "invalid session id {0:?}: use 1-64 letters, digits, '-', '_' or '.', not starting with '.'"
    )]
    InvalidId(String),
    /// No state directory could be found.
    #[error("no state directory: set --state-dir, XDG_STATE_HOME or HOME")]
    NoStateDir,
    /// A filesystem operation failed.
    #[error("session state {}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionState {
    version: u32,
    id: String,
    workspace: PathBuf,
    created_unix_ms: u64,
    updated_unix_ms: u64,
    calls: u64,
    last_call_id: Option<String>,
    /// Allow rules added by "allow always" answers.
    #[serde(default)]
    approved_rules: Vec<String>,
    /// Files tools read, with the digest of what they saw (read-before-edit).
    #[serde(default)]
    reads: Vec<janua_sandbox::ReadEntry>,
    /// The shell directory the session's last command left (Bash's `cd` persists).
    #[serde(default)]
    shell_cwd: Option<PathBuf>,
    /// Calls a PreToolUse hook deferred, waiting to be resumed.
    #[serde(default)]
    deferred: Vec<janua_types::DeferredCall>,
}

/// An open session.
#[derive(Debug)]
pub struct Session {
    id: String,
    dir: PathBuf,
    state: Mutex<SessionState>,
    dirty: AtomicBool,
    reads: Arc<ReadLedger>,
    checkpoints: Arc<Checkpoints>,
}

impl Session {
    /// Opens (creating if needed) session `id` (default: [`DEFAULT_SESSION_ID`]) of `workspace`.
    /// Returns warnings, such as a corrupt state file that was set aside.
    pub fn open(
        state_root: Option<&Path>,
        workspace: &Path,
        id: Option<&str>,
    ) -> Result<(Self, Vec<String>), SessionError> {
        let id = id.unwrap_or(DEFAULT_SESSION_ID);
        let id_ok = !id.is_empty()
            && id.len() <= 64
            && !id.starts_with('.')
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !id_ok {
            return Err(SessionError::InvalidId(id.to_owned()));
        }
        let root = match state_root {
            Some(root) => root.to_path_buf(),
            None => default_state_root().ok_or(SessionError::NoStateDir)?,
        };
        // Absolute, so that grants and permission checks compare like with like.
        let root = std::path::absolute(&root).map_err(|source| SessionError::Io {
            path: root.clone(),
            source,
        })?;
        let digest = janua_types::hex(&sha2::Sha256::digest(
            workspace.to_string_lossy().as_bytes(),
        ));
        let dir = root.join(&digest[..16]).join(id);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SessionError::Io { path, source }
        };
        std::fs::create_dir_all(dir.join("tool-results")).map_err(io(&dir))?;

        let mut warnings = Vec::new();
        let path = dir.join(STATE_FILE);
        let now = unix_ms();
        let fresh = SessionState {
            version: STATE_VERSION,
            id: id.to_owned(),
            workspace: workspace.to_path_buf(),
            created_unix_ms: now,
            updated_unix_ms: now,
            calls: 0,
            approved_rules: Vec::new(),
            last_call_id: None,
            reads: Vec::new(),
            shell_cwd: None,
            deferred: Vec::new(),
        };
        let (state, loaded) = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<SessionState>(&bytes) {
                Ok(state) if state.version == STATE_VERSION && state.id == id => (state, true),
                Ok(_) | Err(_) => {
                    let aside = dir.join(format!("{STATE_FILE}.corrupt-{now}"));
                    std::fs::rename(&path, &aside).map_err(io(&path))?;
                    warnings.push(format!(
                        "session state {} was unreadable; it was moved to {} and a new state started",
                        path.display(),
                        aside.display()
                    ));
                    (fresh, false)
                }
            },
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => (fresh, false),
            Err(error) => return Err(io(&path)(error)),
        };
        let mut state = state;
        let reads = Arc::new(ReadLedger::from_entries(std::mem::take(&mut state.reads)));
        let session = Self {
            id: id.to_owned(),
            checkpoints: Arc::new(Checkpoints::new(&dir)),
            dir,
            state: Mutex::new(state),
            dirty: AtomicBool::new(false),
            reads,
        };
        if !loaded {
            session.save()?;
        }
        Ok((session, warnings))
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session's state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where externalized tool results go.
    pub fn results_dir(&self) -> PathBuf {
        self.dir.join("tool-results")
    }

    /// Calls recorded in this session so far.
    pub fn calls(&self) -> u64 {
        self.lock().calls
    }

    /// Records a finished call. The state is saved when the session is dropped (or by
    /// [`Session::save`]); a durable write per call would cost more than the call itself.
    pub fn record_call(&self, call_id: &str) {
        let mut state = self.lock();
        state.calls += 1;
        state.updated_unix_ms = unix_ms();
        state.last_call_id = Some(call_id.to_owned());
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// Allow rules approved "always" in this session.
    pub fn approved_rules(&self) -> Vec<String> {
        self.lock().approved_rules.clone()
    }

    /// Records allow rules approved "always"; they apply to later calls of the session.
    pub fn add_approved_rules(&self, rules: &[String]) {
        let mut state = self.lock();
        for rule in rules {
            if !state.approved_rules.contains(rule) {
                state.approved_rules.push(rule.clone());
            }
        }
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// The shell directory the session's last command left, if any.
    pub fn shell_cwd(&self) -> Option<PathBuf> {
        self.lock().shell_cwd.clone()
    }

    /// Records the shell directory for the session's next command.
    pub fn set_shell_cwd(&self, cwd: &Path) {
        let mut state = self.lock();
        if state.shell_cwd.as_deref() != Some(cwd) {
            state.shell_cwd = Some(cwd.to_path_buf());
            self.dirty.store(true, Ordering::Relaxed);
        }
    }

    /// Stores a deferred call (replacing one with the same id) and saves the state at once: the
    /// caller usually exits next and resumes the call from another process.
    pub fn defer(&self, call: &janua_types::DeferredCall) -> Result<(), SessionError> {
        {
            let mut state = self.lock();
            state.deferred.retain(|stored| stored.id != call.id);
            state.deferred.push(call.clone());
        }
        self.dirty.store(true, Ordering::Relaxed);
        self.save()
    }

    /// The deferred calls waiting in this session.
    pub fn deferred(&self) -> Vec<janua_types::DeferredCall> {
        self.lock().deferred.clone()
    }

    /// Removes and returns deferred call `id`.
    pub fn take_deferred(&self, id: &str) -> Option<janua_types::DeferredCall> {
        let mut state = self.lock();
        let index = state.deferred.iter().position(|call| call.id == id)?;
        self.dirty.store(true, Ordering::Relaxed);
        Some(state.deferred.remove(index))
    }

    /// The files the session's tools read, for read-before-edit.
    pub(crate) fn reads(&self) -> &Arc<ReadLedger> {
        &self.reads
    }

    /// The session's checkpoints of files changed by write-class tools.
    pub fn checkpoints(&self) -> &Arc<Checkpoints> {
        &self.checkpoints
    }

    /// Writes the state now, atomically.
    pub fn save(&self) -> Result<(), SessionError> {
        self.reads.take_dirty();
        let mut state = self.lock().clone();
        state.reads = self.reads.entries();
        let bytes = serde_json::to_vec_pretty(&state).map_err(|error| SessionError::Io {
            path: self.dir.join(STATE_FILE),
            source: std::io::Error::other(error),
        })?;
        write_atomically(&self.dir.join(STATE_FILE), &bytes).map_err(|source| {
            SessionError::Io {
                path: self.dir.join(STATE_FILE),
                source,
            }
        })?;
        self.dirty.store(false, Ordering::Relaxed);
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if (self.dirty.load(Ordering::Relaxed) || self.reads.take_dirty())
            && let Err(error) = self.save()
        {
            tracing::warn!("{error}");
        }
    }
}

fn default_state_root() -> Option<PathBuf> {
    if let Some(state) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(state).join("janua"));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|home| PathBuf::from(home).join(".local/state/janua"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_ids_that_could_escape_the_state_dir() {
        let root = tempfile::tempdir().unwrap();
        for bad in ["", "..", "../x", "a/b", ".hidden", "x y"] {
            let result = Session::open(Some(root.path()), Path::new("/ws"), Some(bad));
            assert!(matches!(result, Err(SessionError::InvalidId(_))), "{bad:?}");
        }
    }

    #[test]
    fn calls_accumulate_across_opens_and_corrupt_state_is_set_aside() {
        let root = tempfile::tempdir().unwrap();
        let workspace = Path::new("/ws");
        let (session, warnings) = Session::open(Some(root.path()), workspace, None).unwrap();
        assert!(warnings.is_empty());
        session.record_call("a");
        drop(session);
        let (session, _) = Session::open(Some(root.path()), workspace, None).unwrap();
        assert_eq!(session.calls(), 1);
        session.record_call("b");
        assert_eq!(session.calls(), 2);
        session.save().unwrap();

        std::fs::write(session.dir().join(STATE_FILE), b"{not json").unwrap();
        let (reopened, warnings) = Session::open(Some(root.path()), workspace, None).unwrap();
        assert_eq!(reopened.calls(), 0);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let aside = std::fs::read_dir(reopened.dir())
            .unwrap()
            .filter_map(Result::ok)
            .any(|entry| entry.file_name().to_string_lossy().contains(".corrupt-"));
        assert!(aside, "the corrupt file was kept for inspection");
    }
}
