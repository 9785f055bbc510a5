//! Around stage 7: before a write-class tool runs, the prior state of the file it names is saved
//! in the session's checkpoints; after it, the checkpoint is kept if the file changed. The file's
//! permission bits are put back if the tool replaced it (tools replace files by rename and WASI
//! cannot set modes), whether checkpoints are on or not. This stage decides nothing: a call
//! reaching it was allowed, and a checkpoint that cannot be saved stops the call instead of letting
//! a change happen that could not be undone. A file without its owner's write bit is not replaced
//! (a rename would bypass that protection).

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use super::Services;
use super::outcome::Failure;
use crate::session::Pending;
use janua_types::ErrorKind;

/// What was saved before the call.
pub(crate) struct Before {
    target: PathBuf,
    /// Permission bits of the regular file that was there.
    mode: Option<u32>,
    pending: Option<Pending>,
}

/// Saves the state of `target` (when checkpoints are on) and its mode.
pub(crate) fn before(
    services: &Services<'_>,
    target: Option<&Path>,
) -> Result<Option<Before>, Failure> {
    let Some(target) = target else {
        return Ok(None);
    };
    let mode = std::fs::symlink_metadata(target)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|meta| meta.permissions().mode() & 0o7777);
    // Tools replace files by rename, which needs only a writable directory: honour a file the
    // user made read-only instead of silently replacing it.
    if let Some(mode) = mode
        && mode & 0o200 == 0
    {
        return Err(Failure {
            kind: ErrorKind::ToolFailed,
            message: format!(
                "read_only_file: {} is read-only (mode {mode:o}); it was left unchanged. Ask the \
                 user to make it writable if it should change",
                target.display()
            ),
            tool_error_kind: Some("read_only_file".to_owned()),
        });
    }
    let pending = match services.checkpoints {
        Some(checkpoints) => Some(checkpoints.before(target).map_err(|error| {
            Failure::new(
                ErrorKind::Internal,
                format!(
                    "the call was not run: cannot save a checkpoint of {} first: {error}",
                    target.display()
                ),
            )
        })?),
        None => None,
    };
    Ok(Some(Before {
        target: target.to_path_buf(),
        mode,
        pending,
    }))
}

/// What went wrong after a file-changing call; the text is a warning on its result.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AfterWarning {
    #[error("{} lost its permission bits {mode:o} and they could not be restored: {error}", path.display())]
    Mode {
        path: std::path::PathBuf,
        mode: u32,
        error: std::io::Error,
    },
    #[error("the checkpoint of this call could not be recorded: {0}")]
    NotRecorded(crate::session::SessionError),
}

/// Restores the mode of a replaced file and keeps the checkpoint if the call changed the file;
/// the checkpoint's number, or a warning.
pub(crate) fn after(
    services: &Services<'_>,
    before: Before,
    tool: &str,
    call_id: &str,
) -> Result<Option<u64>, AfterWarning> {
    if let Some(mode) = before.mode
        && let Ok(meta) = std::fs::symlink_metadata(&before.target)
        && meta.is_file()
        && meta.permissions().mode() & 0o7777 != mode
        && let Err(error) =
            std::fs::set_permissions(&before.target, std::fs::Permissions::from_mode(mode))
    {
        return Err(AfterWarning::Mode {
            path: before.target,
            mode,
            error,
        });
    }
    let (Some(checkpoints), Some(pending)) = (services.checkpoints, before.pending) else {
        return Ok(None);
    };
    checkpoints
        .after(pending, tool, call_id)
        .map_err(AfterWarning::NotRecorded)
}
