//! Run programs through the host's `process` interface. Only components whose manifest grants
//! `process` (naming each program and its argument patterns) may use it; the host checks every
//! request against those grants and runs the program under its process sandbox.

pub use crate::__private::bindings::janua::plugin::process::{
    Command, Finished, ProcessError, TaskStatus,
};

use crate::__private::bindings::janua::plugin::process as host;

/// Runs `command` to completion.
pub fn run(command: &Command) -> Result<Finished, ProcessError> {
    host::run(command)
}

/// Starts `command` as a background task of the session; returns its id at once.
pub fn start(command: &Command) -> Result<String, ProcessError> {
    host::start(command)
}

/// Reads task `id`'s new output, first waiting up to `wait_ms` for it to finish.
pub fn task_output(id: &str, wait_ms: u64) -> Result<TaskStatus, ProcessError> {
    host::task_output(id, wait_ms)
}

/// Kills task `id`'s whole process group.
pub fn task_stop(id: &str) -> Result<TaskStatus, ProcessError> {
    host::task_stop(id)
}

impl ProcessError {
    /// A stable error kind for a tool result: `permission_denied`, `sandbox_unavailable`,
    /// `spawn_failed` or `unknown_task`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotGranted(_) => "permission_denied",
            Self::SandboxUnavailable(_) => "sandbox_unavailable",
            Self::SpawnFailed(_) => "spawn_failed",
            Self::UnknownTask(_) => "unknown_task",
        }
    }

    /// The host's explanation.
    pub fn message(&self) -> &str {
        match self {
            Self::NotGranted(message)
            | Self::SandboxUnavailable(message)
            | Self::SpawnFailed(message)
            | Self::UnknownTask(message) => message,
        }
    }
}

impl From<ProcessError> for crate::ToolError {
    fn from(error: ProcessError) -> Self {
        crate::ToolError::new(error.kind(), error.message())
    }
}
