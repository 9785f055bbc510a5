//! File helpers shared by tools that edit files: content digests, the session's read-before-edit
//! record, and atomic replacement.
//!
//! The host keeps, per session, the digest of each file's content as last read (or written) by a
//! tool. An editing tool compares it with the file's current content before changing anything, so
//! the model never edits a file it has not seen, or one that changed under it.

use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher as _, Hasher as _};
use std::io::{ErrorKind, Write as _};

use sha2::{Digest as _, Sha256};

use crate::__private::bindings::janua::plugin::host;
use crate::ToolError;

/// Lowercase hex SHA-256 of `bytes`, the digest format `record-read` expects.
pub fn digest(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// An incremental [`digest`], for content read in pieces.
#[derive(Default, Clone)]
pub struct ContentDigest(Sha256);

impl ContentDigest {
    /// A digest of nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `bytes` to the content.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The lowercase hex SHA-256 of everything added.
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

/// Records that this call saw `path` with content `digest` (see [`digest`]). Call it after a read
/// and after a successful write, with the bytes now in the file.
pub fn record_read(path: &str, digest: &str) {
    host::record_read(path, digest);
}

/// The digest the session last recorded for `path`, if any.
pub fn read_digest(path: &str) -> Option<String> {
    host::read_digest(path)
}

/// Checks the read-before-edit rule for an existing file whose content is now `current`: the
/// session must have read it, and it must not have changed since. See [`check_fresh`].
pub fn check_read_before_edit(path: &str, current: &[u8]) -> Result<(), ToolError> {
    check_fresh(path, &digest(current))
}

/// The read-before-edit rule for a file whose current content has `current_digest`. The error's
/// kind is `not_read` or `changed_since_read`, and its message tells the model what to do.
pub fn check_fresh(path: &str, current_digest: &str) -> Result<(), ToolError> {
    match read_digest(path) {
        None => Err(ToolError::new(
            "not_read",
            format!(
                "{path} exists but has not been read in this session; Read it first so the edit \
                 is based on its current content, then retry"
            ),
        )),
        Some(recorded) if recorded != current_digest => Err(ToolError::new(
            "changed_since_read",
            format!(
                "{path} changed on disk since it was last read in this session; Read it again, \
                 then retry the edit against its current content"
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// A filesystem failure as a tool error with a stable kind (`not_found`, `access_denied` or
/// `io_error`); `action` says what the tool tried, e.g. `read` or `create the directory`.
pub fn io_error(path: &str, action: &str, error: &std::io::Error) -> ToolError {
    match error.kind() {
        ErrorKind::NotFound => ToolError::new(
            "not_found",
            format!(
                "cannot {action} {path}: it does not exist or is outside the directories this \
                 tool may use"
            ),
        ),
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => ToolError::new(
            "access_denied",
            format!(
                "cannot {action} {path}: it is outside the directories this tool may use, or this \
                 call may not change it"
            ),
        ),
        _ => ToolError::new("io_error", format!("cannot {action} {path}: {error}")),
    }
}

/// What lies at `path`, which a tool named `tool` is about to replace: `None` when nothing does,
/// the metadata of a regular file otherwise. A symlink (kind `symlink`: an atomic replace would
/// turn the link into a plain file and leave its target unchanged), a directory (`is_directory`)
/// or a FIFO, socket or device (`not_a_regular_file`) is refused. Nothing is opened, so a FIFO
/// cannot block the call.
pub fn editable(path: &str, tool: &str) -> Result<Option<std::fs::Metadata>, ToolError> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error(path, "read", &error)),
    };
    if metadata.file_type().is_symlink() {
        let shown = std::fs::read_link(path)
            .ok()
            .and_then(|target| target.to_str().map(|target| link_target(path, target)))
            .map_or_else(String::new, |target| format!(" to {target}"));
        return Err(ToolError::new(
            "symlink",
            format!(
                "{path} is a symbolic link{shown}; {tool} does not change files through links. \
                 Use the link's target path instead"
            ),
        ));
    }
    if metadata.is_dir() {
        return Err(ToolError::new(
            "is_directory",
            format!("{path} is a directory; give the path of a file"),
        ));
    }
    if !metadata.is_file() {
        return Err(ToolError::new(
            "not_a_regular_file",
            format!(
                "{path} is not a regular file (a FIFO, socket or device); {tool} changes files only"
            ),
        ));
    }
    Ok(Some(metadata))
}

/// The absolute, normalized path that a symlink at `link` pointing to `target` names.
pub fn link_target(link: &str, target: &str) -> String {
    if target.starts_with('/') {
        return normalize(target);
    }
    let dir = link.rsplit_once('/').map_or("", |(dir, _)| dir);
    normalize(&format!("{dir}/{target}"))
}

/// Normalizes an absolute path lexically: repeated and trailing separators, `.` and `..` are
/// resolved without touching the filesystem (`..` at the root stays at the root).
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Replaces (or creates) the file at `path` with `bytes` atomically: the bytes go to a new
/// temporary file in the same directory, which is flushed to disk and then renamed over `path`.
/// A crash at any point leaves either the old file or the new one, never a mix. The temporary file
/// is removed on failure.
///
/// The file mode of a replaced file is restored by the host after the call (WASI cannot set modes).
pub fn write_atomically(path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let (dir, name) = match path.rsplit_once('/') {
        Some((dir, name)) if !name.is_empty() => (if dir.is_empty() { "/" } else { dir }, name),
        _ => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{path} does not name a file"),
            ));
        }
    };
    let (temp_path, mut file) = create_temporary(dir, name)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temp_path, path));
    drop(file);
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temp_path);
        return Err(error);
    }
    // Make the rename itself durable; not every filesystem supports syncing a directory.
    if let Ok(directory) = File::open(dir) {
        let _ = directory.sync_all();
    }
    Ok(())
}

/// Creates a new, uniquely named temporary file next to `name` in `dir`.
fn create_temporary(dir: &str, name: &str) -> std::io::Result<(String, File)> {
    let mut last_error = None;
    for _ in 0..8 {
        // RandomState is seeded from the host's random source: unique names without a dependency.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let stem: String = name.chars().take(64).collect();
        let temp_path = format!("{dir}/.{stem}.janua-{random:016x}.tmp");
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp_path)
        {
            Ok(file) => return Ok((temp_path, file)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                last_error = Some(error);
            }
            Err(error) => return Err(error),
        }
    }
    Err(last_error.unwrap_or_else(|| std::io::Error::other("cannot create a temporary file")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots_and_separators() {
        for (path, expected) in [
            ("/a/b/../c/./d//", "/a/c/d"),
            ("/..", "/"),
            ("/a/../../b", "/b"),
            ("/", "/"),
            ("/ws/src/main.rs", "/ws/src/main.rs"),
        ] {
            assert_eq!(normalize(path), expected, "{path}");
        }
    }

    #[test]
    fn link_targets_resolve_against_the_links_directory() {
        for (link, target, expected) in [
            ("/ws/a/link", "b.txt", "/ws/a/b.txt"),
            ("/ws/a/link", "../b.txt", "/ws/b.txt"),
            ("/ws/a/link", "/etc/passwd", "/etc/passwd"),
            ("/link", "x", "/x"),
        ] {
            assert_eq!(link_target(link, target), expected, "{link} -> {target}");
        }
    }

    #[test]
    fn digest_is_lowercase_hex_sha256() {
        assert_eq!(
            digest(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
