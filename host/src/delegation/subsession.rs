//! [`SubSession`]: a narrowed view of a session for an embedder's agent loop or an agent runner.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::narrowing::{ForkError, Narrowing, Parent};
use super::scope::Scope;
use crate::pipeline::{Dispatch, Services};
use crate::runtime::Runtime;
use janua_types::ToolUse;

/// A sub-session: the same session, with a tool set, rules and grants that are a subset of its
/// parent's. Made by [`Runtime::fork`] or [`SubSession::fork`]; every call it dispatches runs the
/// whole pipeline and carries the sub-session's lineage on its events and hook inputs.
pub struct SubSession<'r> {
    base: Base<'r>,
    scope: Arc<Scope>,
}

/// Where the sub-session's calls get the session's services from.
enum Base<'r> {
    /// Forked by the embedder from the runtime itself.
    Runtime(&'r Runtime),
    /// Forked inside a call (the Agent tool): the call's own services, and whether the call
    /// runs beside others in its batch.
    Services(Box<Services<'r>>, bool),
}

impl<'r> SubSession<'r> {
    pub(crate) fn from_runtime(runtime: &'r Runtime, scope: Scope) -> Self {
        Self {
            base: Base::Runtime(runtime),
            scope: Arc::new(scope),
        }
    }

    pub(crate) fn from_services(services: Services<'r>, scope: Scope, beside_others: bool) -> Self {
        Self {
            base: Base::Services(Box::new(services), beside_others),
            scope: Arc::new(scope),
        }
    }

    /// The sub-agent's id, if the fork named one.
    pub fn agent_id(&self) -> Option<&str> {
        self.scope.agent_id.as_deref()
    }

    /// How deeply the sub-session is nested (1 for a fork of the root session).
    pub fn depth(&self) -> u32 {
        self.scope.depth
    }

    /// The names of the tools the sub-session may call, sorted.
    pub fn tools(&self) -> Vec<String> {
        self.with_services(|services| {
            services
                .registry
                .tools()
                .map(|tool| tool.spec.name.clone())
                .filter(|name| self.scope.has_tool(name))
                .collect()
        })
    }

    /// The sub-session's tools as definitions (`name`, `description`, `input_schema`), for a
    /// runner to show its model.
    pub fn tool_definitions(&self) -> Vec<serde_json::Value> {
        self.with_services(|services| {
            services
                .registry
                .tools()
                .filter(|tool| self.scope.has_tool(&tool.spec.name))
                .map(|tool| {
                    serde_json::json!({
                        "name": tool.spec.name,
                        "description": tool.spec.description,
                        "input_schema": tool.spec.input_schema,
                    })
                })
                .collect()
        })
    }

    /// A further narrowed sub-session; any widening is an error.
    pub fn fork(&self, narrowing: Narrowing) -> Result<SubSession<'r>, ForkError> {
        let scope = self.with_services(|services| {
            super::narrowing::fork(
                &Parent {
                    scope: &self.scope,
                    policy: self.scope.policy.as_deref().unwrap_or(services.policy),
                    registry: &services.registry,
                    grant_context: services.grant_context,
                    max_depth: services.max_delegation_depth,
                },
                narrowing,
                None,
            )
        })?;
        Ok(Self {
            base: match &self.base {
                Base::Runtime(runtime) => Base::Runtime(runtime),
                Base::Services(services, beside_others) => {
                    Base::Services(services.clone(), *beside_others)
                }
            },
            scope: Arc::new(scope),
        })
    }

    /// Dispatches one call through the whole pipeline inside the sub-session.
    pub async fn dispatch(&self, call: ToolUse) -> Dispatch {
        self.dispatch_cancellable(call, Arc::default()).await
    }

    /// Dispatches one call; setting `cancel` interrupts it (result `cancelled`).
    pub async fn dispatch_cancellable(&self, call: ToolUse, cancel: Arc<AtomicBool>) -> Dispatch {
        match &self.base {
            Base::Runtime(runtime) => runtime.dispatch_scoped(call, &self.scope, cancel).await,
            Base::Services(services, beside_others) => {
                crate::pipeline::dispatch_scoped(
                    services,
                    &self.scope,
                    call,
                    cancel,
                    *beside_others,
                )
                .await
            }
        }
    }

    /// Dispatches a call a runner made, under an id janua gives it (`<Agent call id>.<n>`).
    pub(crate) async fn dispatch_nested(&self, mut call: ToolUse) -> Dispatch {
        let caller = self
            .scope
            .parent_tool_use_id
            .clone()
            .unwrap_or_else(|| "agent".to_owned());
        call.id = self.scope.nested_id(&caller);
        self.dispatch(call).await
    }

    fn with_services<T>(&self, f: impl FnOnce(&Services<'_>) -> T) -> T {
        match &self.base {
            Base::Runtime(runtime) => runtime.with_services(f),
            Base::Services(services, _) => f(services),
        }
    }
}
