//! Reused threads for the blocking jobs of every child: copying its output into the spool,
//! waiting for its exit. Starting two fresh threads per command cost 0.1–0.3 ms of a `Bash`
//! call on the 2-core machine (issue 33, point 5; BENCHMARKS.md).
//!
//! A job runs on an idle worker when one waits, else on a new thread, so a job never queues
//! behind another (a spool must drain while its child's waiter waits). A worker idle for
//! thirty seconds ends, so a burst of background tasks leaves no threads behind for long.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError, mpsc};
use std::time::Duration;

/// How long an idle worker waits for another job before it ends.
const IDLE_EXIT: Duration = Duration::from_secs(30);

type Job = Box<dyn FnOnce() + Send>;

/// A worker waiting for a job.
struct Idle {
    id: u64,
    jobs: mpsc::Sender<Job>,
}

fn idle() -> &'static Mutex<Vec<Idle>> {
    static IDLE: OnceLock<Mutex<Vec<Idle>>> = OnceLock::new();
    IDLE.get_or_init(Mutex::default)
}

/// Runs `job` on an idle worker thread (`janua-worker`), or on a new one when none is idle.
/// Fails only when a needed thread cannot be started; `job` is then dropped without running.
pub fn run(job: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let mut job: Job = Box::new(job);
    loop {
        let waiting = idle().lock().unwrap_or_else(PoisonError::into_inner).pop();
        let Some(worker) = waiting else {
            return start(job);
        };
        // A worker leaves the idle list only under its lock, before it ends, so a send to one
        // taken from the list reaches it; the loop is a guard, not a path.
        match worker.jobs.send(job) {
            Ok(()) => return Ok(()),
            Err(mpsc::SendError(returned)) => job = returned,
        }
    }
}

/// Starts a worker whose first job is `first`.
fn start(first: Job) -> std::io::Result<()> {
    static NEXT_ID: AtomicU64 = AtomicU64::new(0);
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let (jobs, receiver) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("janua-worker".to_owned())
        .spawn(move || {
            let mut job = first;
            loop {
                job();
                idle()
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Idle {
                        id,
                        jobs: jobs.clone(),
                    });
                job = loop {
                    match receiver.recv_timeout(IDLE_EXIT) {
                        Ok(next) => break next,
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            let mut idle = idle().lock().unwrap_or_else(PoisonError::into_inner);
                            if let Some(at) = idle.iter().position(|worker| worker.id == id) {
                                idle.swap_remove(at);
                                return;
                            }
                            // Taken from the list just now: its job is on the way.
                        }
                        // This worker holds a sender itself, so the channel never closes.
                        Err(mpsc::RecvTimeoutError::Disconnected) => return,
                    }
                };
            }
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};

    /// Runs `job` on a worker and returns the id of the thread it ran on.
    fn ran_on() -> std::thread::ThreadId {
        let (sender, receiver) = mpsc::channel();
        run(move || {
            sender.send(std::thread::current().id()).unwrap();
        })
        .unwrap();
        receiver.recv_timeout(Duration::from_secs(10)).unwrap()
    }

    #[test]
    fn jobs_that_wait_for_each_other_never_queue() {
        // Three jobs that each wait for the others finish only if none queues behind another.
        let barrier = Arc::new(Barrier::new(4));
        for _ in 0..3 {
            let barrier = Arc::clone(&barrier);
            run(move || {
                barrier.wait();
            })
            .unwrap();
        }
        barrier.wait();
    }

    #[test]
    fn sequential_jobs_reuse_a_few_threads() {
        // Without reuse every job would have a thread of its own; a job may still start one
        // when the last worker has not yet gone idle, and other tests share the workers.
        let threads: std::collections::HashSet<_> = (0..200).map(|_| ran_on()).collect();
        assert!(
            threads.len() <= 10,
            "200 jobs ran on {} threads",
            threads.len()
        );
    }
}
