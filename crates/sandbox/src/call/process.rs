//! `janua:plugin/process`: the guest's calls handed to the session's shell through the call's
//! link (its process grants, cancel flag and deadline); the capability itself is `process.rs`.

use super::store::CallState;
use crate::bindings::{ProcessCommand, ProcessError, ProcessFinished, ProcessHost, TaskStatus};

impl ProcessHost for CallState {
    fn run(&mut self, command: ProcessCommand) -> Result<ProcessFinished, ProcessError> {
        self.process_link().run(command)
    }

    fn start(&mut self, command: ProcessCommand) -> Result<String, ProcessError> {
        self.process_link().start(command)
    }

    fn task_output(&mut self, id: String, wait_ms: u64) -> Result<TaskStatus, ProcessError> {
        self.process_link().task_output(&id, wait_ms)
    }

    fn task_stop(&mut self, id: String) -> Result<TaskStatus, ProcessError> {
        self.process_link().task_stop(&id)
    }
}

impl CallState {
    fn process_link(&self) -> crate::process::CallLink<'_> {
        crate::process::CallLink {
            access: self.process.as_ref(),
            cancel: &self.cancel,
            deadline: self.deadline,
        }
    }
}
