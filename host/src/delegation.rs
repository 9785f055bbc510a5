//! How delegated work is narrowed: the scope a nested call, a sub-session or a sub-agent runs
//! in (its tools, its narrowed rules, its grant ceiling, its deadline and lineage), and the
//! checks that a fork only narrows its parent. By construction a nested call sees the parent's
//! deny rules, and never more grants than the caller holds.
//!
//! This module narrows and never dispatches: the sub-sessions that run calls in a scope and the
//! Agent tool's runner interface are the pipeline's (`pipeline/subsession.rs`,
//! `pipeline/agent.rs`); the CLI's external runner is the runtime's (`runtime/runner.rs`).

mod ceiling;
mod narrowing;
mod scope;

pub use narrowing::{ForkError, Narrowing};
pub use scope::DEFAULT_MAX_DELEGATION_DEPTH;

pub(crate) use ceiling::Ceiling;
pub(crate) use narrowing::{Parent, fork};
pub(crate) use scope::Scope;
