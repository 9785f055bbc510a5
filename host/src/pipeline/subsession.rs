//! [`SubSession`]: a narrowed view of a session for an embedder's agent loop or an agent runner.
//! Forked from the runtime ([`Runtime::fork`](crate::Runtime::fork)) or inside an Agent call,
//! it is the same thing either way: the session's services, a narrower scope, and the pipeline.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};

use super::{Dispatch, Services};
use crate::delegation::{ForkError, Narrowing, Parent, Scope};
use crate::registry::Registry;
use janua_types::ToolUse;

/// A sub-session: the same session, with a tool set, rules and grants that are a subset of its
/// parent's. Made by [`Runtime::fork`](crate::Runtime::fork) or [`SubSession::fork`]; every call
/// it dispatches runs the whole pipeline and carries the sub-session's lineage on its events and
/// hook inputs.
pub struct SubSession<'r> {
    services: Box<Services<'r>>,
    scope: Arc<Scope>,
    /// The calls run beside others (an Agent call's sub-agent inherits its call's placement).
    beside_others: bool,
    /// Forked by the embedder: its calls count as the session's own (`Session::record_call`);
    /// a sub-agent's calls are counted by the Agent call that ran them.
    records_calls: bool,
    /// Forked by the embedder: the runtime's registry, read again for every call and listing,
    /// so that a plugin reload reaches a sub-session as it reaches the session (a sub-agent
    /// keeps its Agent call's registry, as that call does).
    live_registry: Option<&'r RwLock<Arc<Registry>>>,
}

impl<'r> SubSession<'r> {
    /// The session itself as a sub-session of nothing (its root scope), for the embedder to fork.
    pub(crate) fn root(
        services: Services<'r>,
        root: Arc<Scope>,
        registry: &'r RwLock<Arc<Registry>>,
    ) -> Self {
        Self {
            services: Box::new(services),
            scope: root,
            beside_others: false,
            records_calls: true,
            live_registry: Some(registry),
        }
    }

    /// A sub-agent's sub-session in `scope`, forked inside an Agent call that runs with
    /// `services`.
    pub(crate) fn for_agent(services: Services<'r>, scope: Scope, beside_others: bool) -> Self {
        Self {
            services: Box::new(services),
            scope: Arc::new(scope),
            beside_others,
            records_calls: false,
            live_registry: None,
        }
    }

    /// The services a call or listing starts with now: the registry read again when the
    /// sub-session follows the runtime's.
    fn services(&self) -> Services<'r> {
        let mut services = (*self.services).clone();
        if let Some(registry) = self.live_registry {
            services.registry =
                Arc::clone(&registry.read().unwrap_or_else(|poison| poison.into_inner()));
        }
        services
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
        self.services()
            .registry
            .tools()
            .map(|tool| tool.spec.name.clone())
            .filter(|name| self.scope.has_tool(name))
            .collect()
    }

    /// The sub-session's tools as definitions (`name`, `description`, `input_schema`), for a
    /// runner to show its model.
    pub fn tool_definitions(&self) -> Vec<serde_json::Value> {
        self.services()
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
    }

    /// A further narrowed sub-session; any widening is an error.
    pub fn fork(&self, narrowing: Narrowing) -> Result<SubSession<'r>, ForkError> {
        let services = self.services();
        let parent = Parent {
            scope: &self.scope,
            policy: self.scope.policy.as_deref().unwrap_or(services.policy),
            registry: &services.registry,
            grant_context: services.grant_context,
            max_depth: services.max_delegation_depth,
        };
        let scope = crate::delegation::fork(&parent, narrowing, None)?;
        Ok(Self {
            services: self.services.clone(),
            scope: Arc::new(scope),
            beside_others: self.beside_others,
            records_calls: self.records_calls,
            live_registry: self.live_registry,
        })
    }

    /// Dispatches one call through the whole pipeline inside the sub-session.
    pub async fn dispatch(&self, call: ToolUse) -> Dispatch {
        self.dispatch_cancellable(call, Arc::default()).await
    }

    /// Dispatches one call; setting `cancel` interrupts it (result `cancelled`).
    pub async fn dispatch_cancellable(&self, call: ToolUse, cancel: Arc<AtomicBool>) -> Dispatch {
        let call_id = call.id.clone();
        let services = self.services();
        let dispatch =
            super::dispatch_scoped(&services, &self.scope, call, cancel, self.beside_others).await;
        if self.records_calls {
            services.session.record_call(&call_id);
        }
        dispatch
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
}
