//! Stage 4: the tool's own `validate-input`, run with no grants at all (validation must have no side
//! effects, and without grants it cannot have any).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::execute::failure_from_guest;
use super::outcome::{ErrorKind, Failure};
use crate::registry::RegisteredTool;
use crate::sandbox::grants::ResolvedGrants;
use crate::sandbox::{CallContext, CallSetup, GuestReply, GuestRequest, Sandbox};

/// `Ok` when the tool accepts `input`; `validation_failed` with the tool's message otherwise.
pub(crate) async fn run(
    sandbox: &Sandbox,
    tool: &RegisteredTool,
    input: &String,
    ctx: CallContext,
    cancel: Arc<AtomicBool>,
) -> Result<(), Failure> {
    let no_grants = ResolvedGrants::default();
    let run = sandbox
        .run(
            &tool.component.loaded,
            CallSetup {
                grants: &no_grants,
                limits: tool.component.limits,
                cancel,
                label: &tool.spec.name,
            },
            GuestRequest::Validate {
                tool: &tool.spec.name,
                input,
                ctx,
            },
        )
        .await;
    match run.reply {
        Ok(GuestReply::Validated(Ok(()))) => Ok(()),
        Ok(GuestReply::Validated(Err(message))) => Err(Failure::new(
            ErrorKind::ValidationFailed,
            format!("{} rejected the input: {message}", tool.spec.name),
        )),
        Ok(_) => Err(Failure::new(
            ErrorKind::Internal,
            "validate-input returned an unexpected reply",
        )),
        Err(failure) => Err(failure_from_guest(&tool.spec.name, failure)),
    }
}
