//! `--watch`: poll the plugin directories and reload them into the runtime when they change.
//!
//! Polling rather than inotify: plugin directories are few and small, and polling works on every
//! filesystem a plugin may sit on (network mounts, containers' bind mounts).

use std::sync::Arc;
use std::time::Duration;

use crate::runtime::{PluginReload, Runtime};

/// Polls the plugin directories every `interval`; once a change has held still for one more
/// interval (a build writes its component in several steps), reloads them and gives the outcome
/// to `announce`. Runs until its task is dropped.
pub(crate) async fn watch_plugins(
    runtime: Arc<Runtime>,
    interval: Duration,
    announce: impl Fn(Result<PluginReload, crate::Error>) + Send + 'static,
) {
    let dirs = runtime.plugin_dirs().to_vec();
    let fingerprint = move || {
        let dirs = dirs.clone();
        async move {
            tokio::task::spawn_blocking(move || crate::registry::fingerprint(&dirs))
                .await
                .unwrap_or_default()
        }
    };
    let mut loaded = fingerprint().await;
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
