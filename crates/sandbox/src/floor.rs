//! The floor the benchmarks measure janua against: one fresh store, instantiate and call of a
//! component on the calling thread, with janua's own engine (the tuned pooling allocator), linker
//! and store type, and nothing else: no pipeline, no grants, no thread hand-off, no output layer.
//!
//! It lives in the library, not in the benches, so that the floor and the pipeline share every
//! wasmtime setting: a ratio between them then measures janua's layers and nothing else.

use super::grants::ResolvedGrants;
use super::limits::Limits;
use super::{CallContext, CallSetup, ComponentKind, FileAccess, GuestReply, GuestRequest, Sandbox};

/// Why a bare call gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum FloorError {
    /// The component could not be linked.
    #[error(transparent)]
    Sandbox(super::SandboxError),
    /// The guest answered with its own error.
    #[error("the guest answered an error: {0}")]
    Guest(String),
    /// The guest answered something else than a call or hook answer.
    #[error("the guest gave an unexpected reply")]
    UnexpectedReply,
    /// The sandbox gave no answer (a trap, the deadline, no free slot).
    #[error("the run failed: {0:?}")]
    Run(super::GuestFailure),
    /// Instantiation or the call failed (a trap, a missing export).
    #[error("{0:#}")]
    Failed(wasmtime::Error),
}

/// A component ready for bare calls.
pub struct Floor {
    sandbox: Sandbox,
    component: super::LoadedComponent,
}

impl Floor {
    /// Compiles `wasm` (a `tool-plugin` component when `hook` is false, else a `hook-plugin`).
    pub fn new(wasm: &[u8], hook: bool) -> Result<Self, super::SandboxError> {
        let sandbox = Sandbox::new(None)?;
        let kind = if hook {
            ComponentKind::Hook
        } else {
            ComponentKind::Tool
        };
        let component = sandbox.load(wasm, "floor", kind)?;
        Ok(Self { sandbox, component })
    }

    /// One fresh store + instantiate + `call(tool, input)` (or `handle(input)` for a hook) + drop,
    /// on this thread. `Err` carries the guest's error text or the trap.
    pub fn call(&self, tool: &str, input: &str) -> Result<(), FloorError> {
        let grants = ResolvedGrants::default();
        let files = FileAccess::default();
        let setup = CallSetup::new(&grants, Limits::default(), "floor", &files);
        let request = self.request(tool, input);
        let pre = self
            .sandbox
            .linked(&self.component)
            .map_err(FloorError::Sandbox)?;
        let engine = self.sandbox.engine().map_err(FloorError::Sandbox)?;
        reply(super::call::run_here(engine, pre, setup, request))
    }

    /// The same call through [`Sandbox::run`], the path the pipeline takes for a guest with no
    /// grants (inline on the calling task, through wasmtime's async exports): what the sandbox
    /// itself adds to the bare floor, without any stage of the pipeline.
    pub async fn call_inline(&self, tool: &str, input: &str) -> Result<(), FloorError> {
        let grants = ResolvedGrants::default();
        let files = FileAccess::default();
        let setup = CallSetup::new(&grants, Limits::default(), "floor", &files);
        let request = self.request(tool, input);
        let run = self.sandbox.run(&self.component, setup, request).await;
        match run.reply {
            Ok(reply) => reply_of(reply),
            Err(failure) => Err(FloorError::Run(failure)),
        }
    }

    fn request(&self, tool: &str, input: &str) -> GuestRequest {
        match self.component.kind {
            ComponentKind::Hook => GuestRequest::Hook {
                event: input.to_owned(),
            },
            _ => GuestRequest::Call {
                tool: tool.to_owned(),
                input: input.to_owned(),
                ctx: CallContext {
                    call_id: "floor".to_owned(),
                    session_id: "floor".to_owned(),
                    cwd: "/".to_owned(),
                    deadline_ms: 10_000,
                    plugin_data: None,
                    tmp: None,
                },
            },
        }
    }
}

fn reply(result: wasmtime::Result<GuestReply>) -> Result<(), FloorError> {
    match result {
        Ok(reply) => reply_of(reply),
        Err(error) => Err(FloorError::Failed(error)),
    }
}

fn reply_of(reply: GuestReply) -> Result<(), FloorError> {
    match reply {
        GuestReply::Called(Ok(_)) | GuestReply::Answered(Ok(_)) => Ok(()),
        GuestReply::Called(Err(error)) => Err(FloorError::Guest(format!("{error:?}"))),
        GuestReply::Answered(Err(error)) => Err(FloorError::Guest(error.0)),
        _ => Err(FloorError::UnexpectedReply),
    }
}
