//! WASM hooks: a `hook-plugin` component, instantiated fresh for every event in a sandbox built
//! from the hook's own grants (files and environment only; usually none), with its own memory
//! limit and a deadline equal to its timeout.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::run::{HookEnv, Reply};
use janua_sandbox::Limits;
use janua_sandbox::{CallSetup, GuestFailure, GuestReply, GuestRequest, LoadedComponent};
use janua_sandbox::{GrantContext, Grants};

/// A loaded hook component.
pub(crate) struct WasmHook {
    pub(crate) component: Arc<LoadedComponent>,
    /// Declared grants: the whole of what the hook may touch.
    pub(crate) grants: Grants,
    /// Memory and output limits (the timeout comes from the hook entry).
    pub(crate) limits: Limits,
    /// The manifest's `config`, added to every event.
    pub(crate) config: Option<Value>,
    /// `${PLUGIN_DATA}` of the hook's plugin.
    pub(crate) plugin_data: Option<PathBuf>,
    /// Names the component in logs.
    pub(crate) label: String,
}

impl WasmHook {
    /// Handles `payload` in a fresh instance.
    pub(crate) async fn run(&self, env: &HookEnv<'_>, payload: &Value, timeout: Duration) -> Reply {
        let context = GrantContext {
            plugin_data: self.plugin_data.clone(),
            tmp: None,
            session_results: None,
            ..env.grant_context.clone()
        };
        if self.grants.uses_plugin_data()
            && let Some(dir) = &context.plugin_data
            && let Err(error) = std::fs::create_dir_all(dir)
        {
            return Reply::Failed(format!(
                "cannot create the plugin data directory {}: {error}",
                dir.display()
            ));
        }
        let grants = self.grants.resolve(&context, false);
        let mut event = payload.clone();
        if let (Some(config), Some(object)) = (&self.config, event.as_object_mut()) {
            object.insert("config".to_owned(), config.clone());
        }
        let limits = Limits {
            timeout,
            ..self.limits
        };
        let run = env
            .sandbox
            .run(
                &self.component,
                CallSetup::new(&grants, limits, &self.label, env.files),
                GuestRequest::Hook {
                    event: event.to_string(),
                },
            )
            .await;
        match run.reply {
            Ok(GuestReply::Answered(Ok(text))) => match serde_json::from_str::<Value>(&text) {
                Ok(answer) => Reply::Answer(answer),
                Err(error) => Reply::Failed(format!(
                    "the hook's answer is not JSON ({error}): {}",
                    text.chars().take(200).collect::<String>()
                )),
            },
            Ok(GuestReply::Answered(Err(message))) => Reply::Failed(format!(
                "the hook reported an error: {}",
                super::capped::clip(&message.0)
            )),
            Ok(_) => Reply::Failed("the hook gave a reply of the wrong kind".to_owned()),
            Err(failure) => Reply::Failed(describe(&failure)),
        }
    }
}

/// Words for a guest failure.
pub(crate) fn describe(failure: &GuestFailure) -> String {
    match failure {
        GuestFailure::Trap(message) => format!("the hook trapped: {message}"),
        GuestFailure::Timeout(timeout) => {
            format!("the hook timed out after {} ms", timeout.as_millis())
        }
        GuestFailure::Cancelled => "the hook was cancelled".to_owned(),
        GuestFailure::ResourceExhausted(message) => {
            format!("the hook ran out of resources: {message}")
        }
        GuestFailure::Setup(message) => {
            format!("the hook's sandbox could not be set up: {message}")
        }
    }
}
