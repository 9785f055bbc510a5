//! The wasmtime engine: configuration, pooling allocator and the epoch ticker behind every deadline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::limits::MAX_MEMORY_BYTES;

/// How often the epoch advances; deadlines and cancellation are checked at this granularity.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Concurrent instances the pooling allocator has room for.
pub(crate) const POOL_INSTANCES: u32 = 32;

/// Builds the engine: epoch interruption on, component-model concurrency off (p2 guests do not need
/// it and it triples call overhead), and a tuned pooling allocator. Falls back to on-demand
/// allocation when the pool's virtual-memory reservation is refused (`ulimit -v`, strict overcommit).
pub(crate) fn build_engine() -> wasmtime::Result<Engine> {
    match Engine::new(&config(true)) {
        Ok(engine) => Ok(engine),
        Err(error) => {
            tracing::warn!("pooling allocator unavailable ({error:#}); using on-demand allocation");
            Engine::new(&config(false))
        }
    }
}

fn config(pooling: bool) -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.concurrency_support(false);
    if pooling {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(POOL_INSTANCES)
            .total_core_instances(POOL_INSTANCES * 8)
            .total_memories(POOL_INSTANCES * 2)
            .total_tables(POOL_INSTANCES * 8)
            .total_stacks(POOL_INSTANCES)
            .max_memory_size(MAX_MEMORY_BYTES as usize)
            .linear_memory_keep_resident(1 << 20)
            .table_keep_resident(64 << 10)
            .pagemap_scan(Enabled::Auto)
            .decommit_batch_size(8);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

/// A thread that advances the engine's epoch every [`EPOCH_TICK`] until dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    /// Starts ticking `engine`. Without the ticker no deadline could fire, so failing to start it
    /// is an error.
    pub(crate) fn start(engine: &Engine) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            let engine = engine.clone();
            std::thread::Builder::new()
                .name("janua-epoch".to_owned())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        // Parked rather than asleep, so that dropping the ticker wakes it at once.
                        std::thread::park_timeout(EPOCH_TICK);
                        engine.increment_epoch();
                    }
                })?
        };
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
