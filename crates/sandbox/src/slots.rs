//! Instance slots: the pooling allocator has room for a fixed number of live instances, so a call
//! waits here for one instead of failing when a wide batch (`--max-concurrency` up to 256) or many
//! sessions run more guests at once than the pool holds.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, SemaphorePermit};

use super::call::GuestFailure;
use super::engine::{EPOCH_TICK, POOL_INSTANCES};

/// Slots kept out of the waiting line for resident monitors, which hold theirs for the whole
/// session, and for guests a delegating tool starts while it holds its own slot.
const RESERVED: u32 = 8;

/// The waiting line for the pool's instance slots.
pub(crate) struct Slots {
    free: Semaphore,
}

impl Slots {
    pub(crate) fn new() -> Self {
        Self {
            free: Semaphore::new((POOL_INSTANCES - RESERVED) as usize),
        }
    }

    /// Waits for a slot, giving up when `cancel` is set or after `timeout` (the call's own
    /// deadline, so a queued call never outlives what a running one could).
    pub(crate) async fn acquire(
        &self,
        cancel: &AtomicBool,
        timeout: Duration,
    ) -> Result<SemaphorePermit<'_>, GuestFailure> {
        if let Ok(permit) = self.free.try_acquire() {
            return Ok(permit);
        }
        let deadline = Instant::now() + timeout;
        let acquire = self.free.acquire();
        tokio::pin!(acquire);
        loop {
            tokio::select! {
                permit = &mut acquire => {
                    return permit.map_err(|_| {
                        GuestFailure::ResourceExhausted("the sandbox is shutting down".to_owned())
                    });
                }
                () = tokio::time::sleep(EPOCH_TICK) => {
                    if cancel.load(Ordering::Relaxed) {
                        return Err(GuestFailure::Cancelled);
                    }
                    if Instant::now() >= deadline {
                        return Err(GuestFailure::ResourceExhausted(format!(
                            "no instance slot came free within {timeout:?}: {} guests were running",
                            POOL_INSTANCES - RESERVED
                        )));
                    }
                }
            }
        }
    }
}
