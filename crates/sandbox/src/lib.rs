//! janua's WebAssembly sandbox: the engine, the component cache, and per-call instances built
//! from effective grants only, with the host interfaces those instances may import (files,
//! processes, HTTP, the browser, delegation).
//!
//! This crate does not decide whether a call may run (that is `janua-permissions`); it makes sure
//! a call that runs can do no more than its grants and limits allow. It knows nothing of the
//! registry, settings, hooks or the pipeline above it.

#![warn(missing_docs, unreachable_pub)]

mod bindings;
mod browser;
mod cache;
mod call;
mod delegate;
mod engine;
mod floor;
mod grants;
mod hidden;
mod http;
mod limits;
mod pipe;
mod process;
mod reads;
mod resident;
mod slots;
mod wasi;

use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};

use wasmtime::Engine;
use wasmtime::component::Linker;

pub use browser::{BrowserAccess, BrowserConfig, BrowserService, NoBrowser, find_browser};
pub use grants::{
    EnvGrant, FsAccess, FsGrant, GrantContext, GrantError, Grants, NetGrant, NetGrantError,
    ProcessGrant, ResolvedGrants,
};
pub use http::{
    DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_REQUEST_TIMEOUT, NetPolicy, NetRefused, NetRuntime,
    NetSettings, ProxyError, ProxySettings, tls_config,
};
pub use limits::{
    DEFAULT_MEMORY_BYTES, DEFAULT_OUTPUT_CHARS, DEFAULT_STDIO_BYTES, DEFAULT_TIMEOUT,
    DeclaredLimits, Limits, MAX_MEMORY_BYTES, MAX_OUTPUT_CHARS, MIN_OUTPUT_CHARS,
};
pub use process::{Foreground, ForegroundError, ProcessAccess, Shell, ShellConfig};
pub use reads::{MAX_READS, ReadEntry, ReadLedger};

pub use bindings::WitDelegated;
pub use bindings::WitImage;
pub use bindings::{CallContext, WitCapabilityClass, WitContent, WitToolSpec};
pub use cache::CacheInfo;
pub use call::{
    CallSetup, FileAccess, GuestError, GuestFailure, GuestReply, GuestRequest, GuestRun,
    NetOutcome, ProgressSink, far_deadline,
};
pub use delegate::{BoxFuture, Delegator};
pub use floor::{Floor, FloorError};
pub use hidden::HiddenPaths;
pub use resident::{Resident, ResidentSetup};

use bindings::{
    HookPluginPre, InlineHookPluginPre, InlineToolPluginPre, MonitorPluginPre, ToolPluginPre,
};
use call::CallState;

/// Engine, linker and compile cache shared by every call. The engine is made when first needed
/// ([`Sandbox::engine_on_demand`]) or at once ([`Sandbox::new`]): a caller that only reads cached
/// descriptions and decides never makes one.
pub struct Sandbox {
    /// The engine, its linkers and its epoch ticker; shared with a thread that may make them
    /// ahead ([`Sandbox::warm_in_background`]).
    parts: Arc<OnceLock<Result<EngineParts, SandboxError>>>,
    cache: Arc<cache::ComponentCache>,
    /// Guests abandoned while stuck in a host call and not yet returned.
    abandoned: Arc<AtomicUsize>,
    /// The waiting line for the pool's instance slots.
    slots: slots::Slots,
}

/// What running a guest needs, made once.
struct EngineParts {
    engine: Engine,
    linker: Linker<CallState>,
    /// The linker for guests that run on the calling task (no directories, no processes, no
    /// delegation; see `call.rs`): WASI's async bindings, and no hidden-path wrapper, which has
    /// nothing to guard without a preopened directory.
    inline_linker: Linker<CallState>,
    /// Shared with resident monitors, whose deadlines must keep firing as long as they live.
    ticker: Arc<engine::EpochTicker>,
}

/// SHA-256 of `bytes` in lower-case hex: how components are named in the cache and in approvals.
pub fn hex_digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    janua_types::hex(&sha2::Sha256::digest(bytes))
}

/// A component, compiled and linked the first time it is needed (or at once, for hooks and
/// monitors and for tools whose description is not cached), then instantiated per call.
pub struct LoadedComponent {
    /// SHA-256 of the component bytes, for approvals, diagnostics and the cache.
    pub digest: String,
    label: String,
    kind: ComponentKind,
    wasm: Wasm,
    pre: std::sync::OnceLock<Result<ComponentPre, SandboxError>>,
}

/// The bytes a component is compiled from.
pub enum Wasm {
    /// Embedded in the binary.
    Embedded(&'static [u8]),
    /// Read from a plugin directory at start-up; kept so the component compiled later is the one
    /// whose digest was approved and described, whatever happens to the file meanwhile.
    Read(Vec<u8>),
}

impl Wasm {
    fn bytes(&self) -> &[u8] {
        match self {
            Wasm::Embedded(bytes) => bytes,
            Wasm::Read(bytes) => bytes,
        }
    }
}

impl LoadedComponent {
    /// True once compiled and linked (successfully or not).
    pub fn is_linked(&self) -> bool {
        self.pre.get().is_some()
    }
}

/// Which world a component targets: what it exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentKind {
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

/// A linked component of one of the worlds. Tools and hooks are linked twice: for a blocking-pool
/// thread (`sync`) and for the calling task (`inline`); `call.rs` picks one per call.
#[derive(Clone)]
pub(crate) enum ComponentPre {
    Tool {
        sync: ToolPluginPre<CallState>,
        inline: InlineToolPluginPre<CallState>,
    },
    Hook {
        sync: HookPluginPre<CallState>,
        inline: InlineHookPluginPre<CallState>,
    },
    Monitor(MonitorPluginPre<CallState>),
}

/// Errors setting up the sandbox or loading a component.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SandboxError {
    /// The engine could not be created.
    #[error("cannot create the WebAssembly engine: {0}")]
    Engine(String),
    /// The bytes are not a component this host can run.
    #[error("{label} is not a usable janua {kind} component: {message}")]
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
    /// Creates the engine and linker now; compiled components are cached under `cache_dir` if
    /// given.
    pub fn new(cache_dir: Option<&Path>) -> Result<Self, SandboxError> {
        let sandbox = Self::engine_on_demand(cache_dir);
        sandbox.parts()?;
        Ok(sandbox)
    }

    /// A sandbox whose engine is made when a component is first compiled, loaded or run (an
    /// error making it is then that call's error); compiled components are cached under
    /// `cache_dir` if given, descriptions are readable at once.
    pub fn engine_on_demand(cache_dir: Option<&Path>) -> Self {
        Self {
            parts: Arc::new(OnceLock::new()),
            cache: Arc::new(cache::ComponentCache::new(cache_dir)),
            abandoned: Arc::default(),
            slots: slots::Slots::new(),
        }
    }

    /// Makes the engine on another thread now, so that neither start-up nor the first call waits
    /// for all of it.
    pub fn warm_in_background(&self) {
        let parts = Arc::clone(&self.parts);
        let spawned = std::thread::Builder::new()
            .name("janua-engine".to_owned())
            .spawn(move || {
                parts.get_or_init(EngineParts::make);
            });
        if let Err(error) = spawned {
            tracing::debug!(
                "the engine is made at first use: no thread to make it ahead ({error})"
            );
        }
    }

    fn parts(&self) -> Result<&EngineParts, SandboxError> {
        self.parts
            .get_or_init(EngineParts::make)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Compiles (or loads from cache) and links `wasm` as a component of `kind` at once; `label`
    /// names it in errors.
    pub fn load(
        &self,
        wasm: &[u8],
        label: &str,
        kind: ComponentKind,
    ) -> Result<LoadedComponent, SandboxError> {
        let component = self.lazy(Wasm::Read(wasm.to_vec()), None, label, kind);
        self.linked(&component)?;
        Ok(component)
    }

    /// A component that is compiled and linked when first needed ([`Self::prepare`], or its
    /// first call). `digest` is the SHA-256 of the bytes (hex) when already known (the embedded
    /// components, hashed at build time). The caller guarantees it: it names the compiled code
    /// in the cache, so a wrong digest would load another component's code.
    pub fn lazy(
        &self,
        wasm: Wasm,
        digest: Option<&str>,
        label: &str,
        kind: ComponentKind,
    ) -> LoadedComponent {
        use sha2::Digest as _;
        let digest = digest.map_or_else(
            || janua_types::hex(&sha2::Sha256::digest(wasm.bytes())),
            str::to_owned,
        );
        LoadedComponent {
            digest,
            label: label.to_owned(),
            kind,
            wasm,
            pre: std::sync::OnceLock::new(),
        }
    }

    /// The linked component, compiled (or loaded from the cache) on first use. Concurrent first
    /// uses wait for one compilation.
    pub(crate) fn linked<'c>(
        &self,
        component: &'c LoadedComponent,
    ) -> Result<&'c ComponentPre, SandboxError> {
        component
            .pre
            .get_or_init(|| self.link(component))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Compiles and links `component` now (or loads it from the cache), so that its first call
    /// does not pay for it and a broken component is reported at start-up.
    pub fn prepare(&self, component: &LoadedComponent) -> Result<(), SandboxError> {
        self.linked(component).map(|_| ())
    }

    fn link(&self, loaded: &LoadedComponent) -> Result<ComponentPre, SandboxError> {
        let kind = loaded.kind;
        let component_error = |message: String| SandboxError::Component {
            label: loaded.label.clone(),
            kind: kind.as_str(),
            message,
        };
        let parts = self.parts()?;
        let component = self
            .cache
            .load(&parts.engine, loaded.wasm.bytes(), &loaded.digest)
            .map_err(|error| component_error(format!("{error:#}")))?;
        let linked = |linker: &Linker<CallState>| {
            linker
                .instantiate_pre(&component)
                .map_err(|error| component_error(format!("{error:#}")))
        };
        let sync = linked(&parts.linker)?;
        match kind {
            ComponentKind::Tool => ToolPluginPre::new(sync).and_then(|sync| {
                let inline = InlineToolPluginPre::new(linked(&parts.inline_linker)?)?;
                Ok(ComponentPre::Tool { sync, inline })
            }),
            ComponentKind::Hook => HookPluginPre::new(sync).and_then(|sync| {
                let inline = InlineHookPluginPre::new(linked(&parts.inline_linker)?)?;
                Ok(ComponentPre::Hook { sync, inline })
            }),
            ComponentKind::Monitor => MonitorPluginPre::new(sync).map(ComponentPre::Monitor),
        }
        .map_err(|error| component_error(format!("{error:#}")))
    }

    /// The engine, made now if it was not.
    pub fn engine(&self) -> Result<&Engine, SandboxError> {
        self.parts().map(|parts| &parts.engine)
    }

    /// The compile cache.
    pub fn cache(&self) -> &cache::ComponentCache {
        &self.cache
    }

    /// What the compile cache holds for this engine (made now if it was not).
    pub fn cache_info(&self) -> Result<CacheInfo, SandboxError> {
        Ok(self.cache.info(self.engine()?))
    }

    /// True when `digest`'s compiled code is cached for this engine (made now if it was not).
    pub fn has_compiled(&self, digest: &str) -> bool {
        self.engine()
            .is_ok_and(|engine| self.cache.has_artifact(engine, digest))
    }

    /// Runs one request in a fresh instance of `component`.
    pub async fn run(
        &self,
        component: &LoadedComponent,
        setup: CallSetup<'_>,
        request: GuestRequest,
    ) -> GuestRun {
        // A component's first call compiles or deserializes it here, on the caller's thread:
        // with a warm cache that is well under a millisecond for one component, and only once.
        let pre = match self.linked(component) {
            Ok(pre) => pre,
            Err(error) => {
                return GuestRun {
                    reply: Err(GuestFailure::Setup(error.to_string())),
                    progress: Vec::new(),
                    net: NetOutcome::default(),
                };
            }
        };
        let _slot = match self
            .slots
            .acquire(&setup.cancel, setup.limits.timeout)
            .await
        {
            Ok(slot) => slot,
            Err(failure) => return GuestRun::failed(failure),
        };
        // `linked` made the engine.
        let Ok(parts) = self.parts() else {
            return GuestRun::failed(GuestFailure::Setup(
                "the WebAssembly engine could not be made".to_owned(),
            ));
        };
        call::run(&parts.engine, pre, &self.abandoned, setup, request).await
    }

    /// A monitor instance that lives across events (see `resident.rs`).
    pub fn resident(&self, component: &LoadedComponent, setup: ResidentSetup) -> Option<Resident> {
        let pre = self.linked(component).ok()?;
        let parts = self.parts().ok()?;
        match pre {
            ComponentPre::Monitor(pre) => Some(Resident::new(
                &parts.engine,
                Arc::clone(&parts.ticker),
                pre.clone(),
                setup,
            )),
            _ => None,
        }
    }
}

impl EngineParts {
    /// The engine, both linkers and the epoch ticker.
    fn make() -> Result<Self, SandboxError> {
        let engine_error = |error: wasmtime::Error| SandboxError::Engine(format!("{error:#}"));
        let engine = engine::build_engine().map_err(engine_error)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(engine_error)?;
        // The filesystem interfaces are replaced by the hidden-path wrapper around the same
        // implementation (see `hidden.rs`).
        linker.allow_shadowing(true);
        wasmtime_wasi::p2::bindings::sync::filesystem::types::add_to_linker::<
            CallState,
            hidden::HidingFsData,
        >(&mut linker, CallState::hiding_fs)
        .map_err(engine_error)?;
        wasmtime_wasi::p2::bindings::filesystem::preopens::add_to_linker::<
            CallState,
            hidden::HidingFsData,
        >(&mut linker, CallState::hiding_fs)
        .map_err(engine_error)?;
        linker.allow_shadowing(false);
        // wasi:http, every request checked by `http.rs`; raw sockets stay off (see `wasi.rs`).
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker).map_err(engine_error)?;
        bindings::add_host_to_linker(&mut linker).map_err(engine_error)?;
        bindings::add_process_to_linker(&mut linker).map_err(engine_error)?;
        bindings::add_delegate_to_linker(&mut linker).map_err(engine_error)?;
        bindings::add_browser_to_linker(&mut linker).map_err(engine_error)?;
        let inline_linker = inline_linker(&engine).map_err(engine_error)?;
        let ticker = engine::EpochTicker::start(&engine).map_err(|error| {
            SandboxError::Engine(format!("cannot start the epoch ticker thread: {error}"))
        })?;
        Ok(Self {
            engine,
            linker,
            inline_linker,
            ticker: Arc::new(ticker),
        })
    }
}

/// The linker for inline guests: WASI p2's async bindings (file, stream and clock calls never
/// block the task), `wasi:http` through the same checks, and janua's own imports, whose
/// synchronous host functions return at once here (an inline guest has no process or browser
/// access and no delegator, so those imports only refuse).
fn inline_linker(engine: &Engine) -> wasmtime::Result<Linker<CallState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    bindings::add_host_to_linker(&mut linker)?;
    bindings::add_process_to_linker(&mut linker)?;
    bindings::add_delegate_to_linker(&mut linker)?;
    bindings::add_browser_to_linker(&mut linker)?;
    Ok(linker)
}
