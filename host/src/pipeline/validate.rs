//! Stage 4: the tool's own `validate-input`. Built-in tools run it with their directory grants
//! downgraded to read-only, no environment and no `${TMP}`: they may look at files (has the model
//! read this file, does this notebook cell exist) so that nobody is asked to approve a call that
//! will fail, but cannot change anything or add to the session's read record. Plugin tools run it
//! with no grants at all: it comes before hooks and the permission decision, and a plugin's
//! message to the model must not carry file content from a call the user would deny.

use std::sync::Arc;
use std::time::Duration;

use super::Services;
use super::execute::MAX_ERROR_CHARS;
use super::execute::failure_from_guest;
use super::frame::Frame;
use super::outcome::Failure;
use crate::output::head_and_tail;
use crate::registry::{RegisteredTool, ToolSource};
use janua_sandbox::ResolvedGrants;
use janua_sandbox::{CallContext, CallSetup, GuestReply, GuestRequest};
use janua_types::ErrorKind;

/// Validation is meant to be cheap; it gets at most this long (or the call's timeout, if shorter),
/// so that one dispatch takes at most this plus the call's own timeout.
const VALIDATE_TIMEOUT: Duration = Duration::from_secs(5);

/// `Ok` when the tool accepts `input`; `validation_failed` with the tool's message otherwise.
pub(crate) async fn run(
    services: &Services<'_>,
    frame: &Frame<'_>,
    tool: &RegisteredTool,
    input: &str,
    ctx: CallContext,
) -> Result<(), Failure> {
    // An MCP tool has no validate-input: its schema is all the validation there is.
    let Some(component) = tool.component() else {
        return Ok(());
    };
    // A tool with nothing to check beyond its schema costs no instance here.
    if !tool.spec.validates_input {
        return Ok(());
    }
    let grants = if component.source == ToolSource::BuiltIn {
        let resolved = component.grants.resolve(
            &tool.grant_context(services.grant_context),
            tool.reads_session_results(),
        );
        match services.scope.ceiling.as_deref() {
            Some(ceiling) => ceiling.narrow(resolved),
            None => resolved,
        }
        .read_only()
    } else {
        ResolvedGrants::default()
    };
    let mut limits = component.limits;
    limits.timeout = limits.timeout.min(VALIDATE_TIMEOUT);
    let mut ctx = ctx;
    ctx.deadline_ms = u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX);
    let request = GuestRequest::Validate {
        tool: tool.spec.name.clone(),
        input: input.to_owned(),
        ctx,
    };
    let run = tool
        .run_guest(
            component,
            services.sandbox,
            // No network, processes or browser while validating: it runs before the decision.
            CallSetup::new(&grants, limits, &tool.spec.name, services.files)
                .cancel(Arc::clone(&frame.cancel))
                .own_thread(frame.placement.beside_others),
            request,
        )
        .await;
    match run.reply {
        Ok(GuestReply::Validated(Ok(()))) => Ok(()),
        Ok(GuestReply::Validated(Err(message))) => {
            // Guest text: bounded before it reaches the outcome.
            let (message, _) = head_and_tail(&message.0, MAX_ERROR_CHARS);
            Err(Failure::new(
                ErrorKind::ValidationFailed,
                format!("{} rejected the input: {message}", tool.spec.name),
            ))
        }
        Ok(_) => Err(Failure::new(
            ErrorKind::Internal,
            "validate-input returned an unexpected reply",
        )),
        Err(failure) => Err(failure_from_guest(&tool.spec.name, failure)),
    }
}
