//! A monitor's instance, kept for a whole session: monitors count, chain hashes and remember,
//! so a fresh store per event (as for tools and hooks) would make every monitor stateless.
//!
//! Each event still runs under a fresh epoch deadline and the component's memory limit. A trap,
//! timeout or exhausted limit poisons the store, so the instance is dropped and the next event
//! starts a new one. The owner runs it on its own thread: a stuck monitor blocks only itself.

use std::sync::Arc;

use wasmtime::{Engine, Store};

use super::bindings::{MonitorPlugin, MonitorPluginPre};
use super::call::{self, CallSetup, CallState, FileAccess, GuestFailure};
use super::grants::ResolvedGrants;
use super::limits::Limits;
use super::pipe::CappedPipe;

/// What a resident instance runs with (owned: it outlives any one call).
#[derive(Clone)]
pub struct ResidentSetup {
    /// The component's effective grants.
    pub grants: ResolvedGrants,
    /// Its limits; the deadline applies to each call into it.
    pub limits: Limits,
    /// How it is named in logs and errors.
    pub label: String,
    /// The session's files, as for a call.
    pub files: FileAccess,
}

/// A monitor instance that lives across events.
pub struct Resident {
    engine: Engine,
    /// Keeps the epoch ticking while this instance lives, even after the runtime is dropped: a
    /// monitor spinning in guest code must still reach its deadline.
    _ticker: Arc<super::engine::EpochTicker>,
    pre: MonitorPluginPre<CallState>,
    setup: ResidentSetup,
    live: Option<Live>,
    /// Instances created so far (1 after the first event; more after failures).
    pub instances: u32,
}

struct Live {
    store: Store<CallState>,
    instance: MonitorPlugin,
    stderr: CappedPipe,
}

impl Resident {
    pub(super) fn new(
        engine: &Engine,
        ticker: Arc<super::engine::EpochTicker>,
        pre: MonitorPluginPre<CallState>,
        setup: ResidentSetup,
    ) -> Self {
        Self {
            _ticker: ticker,
            engine: engine.clone(),
            pre,
            setup,
            live: None,
            instances: 0,
        }
    }

    /// Delivers one event; the outer `Err` is a failure of the instance (dropped afterwards), the
    /// inner result is the monitor's own answer.
    pub fn observe(
        &mut self,
        event: &String,
    ) -> Result<Result<String, call::GuestError>, GuestFailure> {
        let timeout = self.setup.limits.timeout;
        let live = match self.live.take() {
            Some(live) => live,
            None => self.instantiate()?,
        };
        let Live {
            mut store,
            instance,
            stderr,
        } = live;
        store.data_mut().rearm(timeout);
        store.set_epoch_deadline(1);
        match instance
            .janua_plugin_monitor()
            .call_observe(&mut store, event)
        {
            Ok(answer) => {
                self.live = Some(Live {
                    store,
                    instance,
                    stderr,
                });
                Ok(answer.map_err(call::GuestError))
            }
            Err(error) => Err(call::classify(store.data(), &error, timeout, &stderr)),
        }
    }

    fn instantiate(&mut self) -> Result<Live, GuestFailure> {
        let setup = CallSetup::new(
            &self.setup.grants,
            self.setup.limits,
            &self.setup.label,
            &self.setup.files,
        );
        let (mut store, stderr) = call::new_store(&self.engine, setup, false, false)?;
        self.instances = self.instances.saturating_add(1);
        let timeout = self.setup.limits.timeout;
        match self.pre.instantiate(&mut store) {
            Ok(instance) => Ok(Live {
                store,
                instance,
                stderr,
            }),
            Err(error) => Err(call::classify(store.data(), &error, timeout, &stderr)),
        }
    }
}
