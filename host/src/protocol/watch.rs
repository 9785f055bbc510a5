//! `--watch`: poll the plugin directories and reload them into the runtime when they change.
//!
//! Polling rather than inotify: plugin directories are few and small, and polling works on every
//! filesystem a plugin may sit on (network mounts, containers' bind mounts).

use std::sync::Arc;
use std::time::Duration;

use crate::runtime::{PluginReload, Runtime};

/// Polls the plugin directories every `interval`; once a change has held still for one more
/// interval (a build writes its component in several steps), reloads them and gives the outcome
/// to `announce`. The baseline is taken now, before the returned task first runs, so a change
/// made as soon as the caller has answered anyone is never mistaken for the starting state. The
/// task runs until it is dropped.
pub(crate) fn watch_plugins(
    runtime: Arc<Runtime>,
    interval: Duration,
    announce: impl Fn(Result<PluginReload, crate::Error>) + Send + Sync + 'static,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let dirs = runtime.plugin_dirs().to_vec();
    let baseline = crate::registry::fingerprint(&dirs);
    watch_from(runtime, dirs, baseline, interval, announce)
}

async fn watch_from(
    runtime: Arc<Runtime>,
    dirs: Vec<std::path::PathBuf>,
    baseline: u64,
    interval: Duration,
    announce: impl Fn(Result<PluginReload, crate::Error>) + Send + Sync + 'static,
) {
    let fingerprint = move || {
        let dirs = dirs.clone();
        async move {
            tokio::task::spawn_blocking(move || crate::registry::fingerprint(&dirs))
                .await
                .unwrap_or_default()
        }
    };
    let mut loaded = baseline;
    let mut settling: Option<u64> = None;
    loop {
        tokio::time::sleep(interval).await;
        let now = fingerprint().await;
        if now == loaded {
            settling = None;
            continue;
        }
        if settling != Some(now) {
            settling = Some(now);
            continue;
        }
        settling = None;
        loaded = now;
        announce(runtime.reload_plugins().await);
    }
}
