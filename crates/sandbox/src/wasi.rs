//! The one place a WASI context is built. It reads nothing but the call's resolved grants.
//!
//! Defaults and their security meaning (see `WasiCtxBuilder::new`): no arguments, no environment, no
//! preopens, empty stdin, no sockets (TCP, UDP and name lookup off; every address refused), stdout and
//! stderr captured into capped pipes that never reach the host's own streams or protocol output.
//! Sockets stay off even for components with net grants: those reach the network only through
//! `wasi:http`, whose every request `http.rs` checks.

use std::path::PathBuf;

use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::grants::{FsAccess, ResolvedGrants};
use super::pipe::CappedPipe;

/// A granted directory could not be opened for the call.
#[derive(Debug, thiserror::Error)]
#[error("cannot open granted directory {}: {error}", dir.display())]
pub(crate) struct GrantedDirGone {
    dir: PathBuf,
    error: wasmtime::Error,
}

/// Builds the WASI context for one call from `grants`. Fails only when a granted directory cannot be
/// opened (it was removed or made unreadable after resolution).
pub(crate) fn build_context(
    grants: &ResolvedGrants,
    stdout: &CappedPipe,
    stderr: &CappedPipe,
    may_block: bool,
) -> Result<WasiCtx, GrantedDirGone> {
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        // A guest on its own blocking-pool thread may block it in file calls; an inline guest runs
        // on an async worker, which must never block (see `call.rs`).
        .allow_blocking_current_thread(may_block)
        .socket_addr_check(|_, _| Box::pin(async { false }));
    for (name, value) in &grants.env {
        builder.env(name, value);
    }
    for (dir, access) in &grants.dirs {
        let perms = match access {
            FsAccess::Read => FsPerms::ReadOnly,
            FsAccess::ReadWrite => FsPerms::ReadWrite,
        };
        // The guest sees each directory at its host path, so paths mean the same on both sides.
        let guest_path = dir.to_string_lossy();
        builder
            .preopened_dir(dir, guest_path.as_ref(), perms)
            .map_err(|error| GrantedDirGone {
                dir: dir.clone(),
                error,
            })?;
    }
    Ok(builder.build())
}
