//! Around stage 7: before a write-class tool runs, the prior state of the file it names is saved
//! in the session's checkpoints; after it, the checkpoint is kept if the file changed (and the
//! file's mode is put back if the tool replaced it). This stage does not decide anything: a call
//! reaching it was allowed, and a checkpoint that cannot be saved stops the call instead of
//! letting a change happen that could not be undone.

use std::path::Path;

use super::Stages;
use super::outcome::{ErrorKind, Failure};
use crate::session::Pending;

/// Saves the state of `target` when checkpoints are on.
pub(crate) fn before(
    stages: &Stages<'_>,
    target: Option<&Path>,
) -> Result<Option<Pending>, Failure> {
    let (Some(checkpoints), Some(target)) = (stages.checkpoints, target) else {
        return Ok(None);
    };
    checkpoints.before(target).map(Some).map_err(|error| {
        Failure::new(
            ErrorKind::Internal,
            format!(
                "the call was not run: cannot save a checkpoint of {} first: {error}",
                target.display()
            ),
        )
    })
}

/// Keeps the checkpoint if the call changed the file; its number, or a warning.
pub(crate) fn after(
    stages: &Stages<'_>,
    pending: Pending,
    tool: &str,
    call_id: &str,
) -> Result<Option<u64>, String> {
    let Some(checkpoints) = stages.checkpoints else {
        return Ok(None);
    };
    checkpoints
        .after(pending, tool, call_id)
        .map_err(|error| format!("the checkpoint of this call could not be recorded: {error}"))
}
