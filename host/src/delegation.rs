//! Delegated work: nested tool calls (the `delegate` import), sub-sessions
//! ([`Runtime::fork`](crate::Runtime::fork)) and the Agent tool. Every path goes through the one
//! pipeline, and every scope can only narrow its parent: by construction, a nested call sees the
//! parent's deny rules, and never more grants than the caller holds.

mod agent;
mod ceiling;
mod narrowing;
mod runner;
mod scope;
mod subsession;

pub use agent::{AgentError, AgentReport, AgentRequest, AgentRunner};
pub use narrowing::{ForkError, Narrowing};
pub use runner::CommandRunner;
pub use scope::DEFAULT_MAX_DELEGATION_DEPTH;
pub use subsession::SubSession;

pub(crate) use ceiling::Ceiling;
pub(crate) use narrowing::{Parent, fork};
pub(crate) use scope::Scope;
