//! The sandbox: engine, component cache, and per-call instances built from effective grants only.
//!
//! This module does not decide whether a call may run (that is `permissions`); it makes sure a call
//! that runs can do no more than its grants and limits allow.

mod bindings;
mod cache;
mod call;
mod delegate;
mod engine;
pub(crate) mod grants;
mod hidden;
pub(crate) mod http;
pub(crate) mod limits;
mod pipe;
pub(crate) mod process;
mod resident;
mod wasi;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use wasmtime::Engine;
use wasmtime::component::Linker;

pub(crate) use bindings::WitDelegated;
pub(crate) use bindings::WitImage;
pub(crate) use bindings::{CallContext, WitCapabilityClass, WitContent, WitToolSpec};
pub(crate) use cache::hex;
pub(crate) use call::{
    CallSetup, FileAccess, GuestFailure, GuestReply, GuestRequest, GuestRun, NetOutcome,
    ProgressSink, far_deadline,
};
pub(crate) use delegate::{BoxFuture, Delegator};
pub(crate) use hidden::HiddenPaths;
pub(crate) use resident::{Resident, ResidentSetup};

use bindings::{HookPluginPre, MonitorPluginPre, ToolPluginPre};
use call::CallState;

/// Engine, linker and compile cache shared by every call.
pub(crate) struct Sandbox {
    engine: Engine,
    linker: Linker<CallState>,
    cache: cache::ComponentCache,
    /// Guests abandoned while stuck in a host call and not yet returned.
    abandoned: Arc<AtomicUsize>,
    /// Shared with resident monitors, whose deadlines must keep firing as long as they live.
    ticker: Arc<engine::EpochTicker>,
}

/// A component compiled and linked, ready to be instantiated per call.
pub(crate) struct LoadedComponent {
    pre: ComponentPre,
    /// SHA-256 of the component bytes, for approvals and diagnostics.
    pub(crate) digest: String,
}

/// Which world a component targets: what it exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ComponentKind {
    /// `tool-plugin`: exports `tool`.
    Tool,
    /// `hook-plugin`: exports `hook`.
    Hook,
    /// `monitor-plugin`: exports `monitor`.
    Monitor,
}

impl ComponentKind {
    fn as_str(self) -> &'static str {
        match self {
            ComponentKind::Tool => "tool",
            ComponentKind::Hook => "hook",
            ComponentKind::Monitor => "monitor",
        }
    }
}

/// A linked component of one of the worlds.
#[derive(Clone)]
pub(crate) enum ComponentPre {
    Tool(ToolPluginPre<CallState>),
    Hook(HookPluginPre<CallState>),
    Monitor(MonitorPluginPre<CallState>),
}

/// Errors setting up the sandbox or loading a component.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The engine could not be created.
    #[error("cannot create the WebAssembly engine: {0}")]
    Engine(String),
    /// The bytes are not a component this host can run.
    #[error("{label} is not a usable warden {kind} component: {message}")]
    Component {
        /// Where the component came from.
        label: String,
        /// What it was loaded as: `tool`, `hook` or `monitor`.
        kind: &'static str,
        /// What is wrong with it.
        message: String,
    },
}

impl Sandbox {
    /// Creates the engine and linker; compiled components are cached under `cache_dir` if given.
    pub(crate) fn new(cache_dir: Option<&Path>) -> Result<Self, SandboxError> {
        let engine =
            engine::build_engine().map_err(|error| SandboxError::Engine(format!("{error:#}")))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|error| SandboxError::Engine(format!("{error:#}")))?;
        // The filesystem interfaces are replaced by the hidden-path wrapper around the same
        // implementation (see `hidden.rs`).
        linker.allow_shadowing(true);
        wasmtime_wasi::p2::bindings::sync::filesystem::types::add_to_linker::<
            CallState,
            hidden::HidingFsData,
        >(&mut linker, CallState::hiding_fs)
        .map_err(|error| SandboxError::Engine(format!("{error:#}")))?;
        wasmtime_wasi::p2::bindings::filesystem::preopens::add_to_linker::<
            CallState,
            hidden::HidingFsData,
        >(&mut linker, CallState::hiding_fs)
        .map_err(|error| SandboxError::Engine(format!("{error:#}")))?;
        linker.allow_shadowing(false);
        // wasi:http, every request checked by `http.rs`; raw sockets stay off (see `wasi.rs`).
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker)
            .map_err(|error| SandboxError::Engine(format!("{error:#}")))?;
        bindings::add_host_to_linker(&mut linker)
            .map_err(|error| SandboxError::Engine(format!("{error:#}")))?;
        bindings::add_process_to_linker(&mut linker)
            .map_err(|error| SandboxError::Engine(format!("{error:#}")))?;
        bindings::add_delegate_to_linker(&mut linker)
            .map_err(|error| SandboxError::Engine(format!("{error:#}")))?;
        let cache = cache::ComponentCache::new(&engine, cache_dir);
        let ticker = engine::EpochTicker::start(&engine).map_err(|error| {
            SandboxError::Engine(format!("cannot start the epoch ticker thread: {error}"))
        })?;
        Ok(Self {
            engine,
            linker,
            cache,
            abandoned: Arc::default(),
            ticker: Arc::new(ticker),
        })
    }

    /// Compiles (or loads from cache) and links `wasm` as a component of `kind`; `label` names it
    /// in errors.
    pub(crate) fn load(
        &self,
        wasm: &[u8],
        label: &str,
        kind: ComponentKind,
    ) -> Result<LoadedComponent, SandboxError> {
        use sha2::Digest as _;
        let digest = cache::hex(&sha2::Sha256::digest(wasm));
        self.load_digested(wasm, &digest, label, kind)
    }

    /// [`Self::load`] for bytes whose SHA-256 (`digest`, hex) is already known: the embedded
    /// components, hashed at build time.
    pub(crate) fn load_digested(
        &self,
        wasm: &[u8],
        digest: &str,
        label: &str,
        kind: ComponentKind,
    ) -> Result<LoadedComponent, SandboxError> {
        let component_error = |message: String| SandboxError::Component {
            label: label.to_owned(),
            kind: kind.as_str(),
            message,
        };
        let component = self
            .cache
            .load(&self.engine, wasm, digest)
            .map_err(|error| component_error(format!("{error:#}")))?;
        let instance_pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|error| component_error(format!("{error:#}")))?;
        let pre = match kind {
            ComponentKind::Tool => ToolPluginPre::new(instance_pre).map(ComponentPre::Tool),
            ComponentKind::Hook => HookPluginPre::new(instance_pre).map(ComponentPre::Hook),
            ComponentKind::Monitor => {
                MonitorPluginPre::new(instance_pre).map(ComponentPre::Monitor)
            }
        }
        .map_err(|error| component_error(format!("{error:#}")))?;
        Ok(LoadedComponent {
            pre,
            digest: digest.to_owned(),
        })
    }

    /// Runs one request in a fresh instance of `component`.
    pub(crate) async fn run(
        &self,
        component: &LoadedComponent,
        setup: CallSetup<'_>,
        request: GuestRequest,
    ) -> GuestRun {
        call::run(
            &self.engine,
            &component.pre,
            &self.abandoned,
            setup,
            request,
        )
        .await
    }

    /// A monitor instance that lives across events (see `resident.rs`).
    pub(crate) fn resident(
        &self,
        component: &LoadedComponent,
        setup: ResidentSetup,
    ) -> Option<Resident> {
        match &component.pre {
            ComponentPre::Monitor(pre) => Some(Resident::new(
                &self.engine,
                Arc::clone(&self.ticker),
                pre.clone(),
                setup,
            )),
            _ => None,
        }
    }
}
