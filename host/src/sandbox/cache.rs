//! Compiled components, cached on disk by content digest and engine compatibility.
//!
//! Compiling a component with Cranelift takes 30–250 ms; loading a cached `.cwasm` takes well under a
//! millisecond. Entries are written atomically (temporary file, then rename), so a reader never sees
//! a half-written artifact; an entry that fails to load is recompiled and replaced.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

/// Where compiled components live, if anywhere.
pub(crate) struct ComponentCache {
    dir: Option<PathBuf>,
}

impl ComponentCache {
    /// A cache under `dir/<engine compatibility hash>/`; `None` disables it. The cache holds native
    /// code, so it is used only if this user owns the directory and nobody else can write to it;
    /// otherwise it is disabled with a warning.
    pub(crate) fn new(engine: &Engine, dir: Option<&Path>) -> Self {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        let dir = dir
            .map(|dir| dir.join(format!("{:016x}", hasher.finish())))
            .and_then(|dir| match private_dir(&dir) {
                Ok(()) => Some(dir),
                Err(reason) => {
                    tracing::warn!(
                        "not caching compiled components in {}: {reason}",
                        dir.display()
                    );
                    None
                }
            });
        Self { dir }
    }

    /// Loads `wasm`, whose SHA-256 is `digest` (hex), as a component, from the cache when
    /// possible.
    pub(crate) fn load(
        &self,
        engine: &Engine,
        wasm: &[u8],
        digest: &str,
    ) -> wasmtime::Result<Component> {
        let Some(dir) = &self.dir else {
            return Component::new(engine, wasm);
        };
        let path = dir.join(format!("{digest}.cwasm"));
        if path.is_file() && owned_by_us(dir, &path) {
            // SAFETY: the file was produced by `Component::serialize` for an engine with the same
            // compatibility hash (it is in the directory name) and is only ever replaced by rename.
            // The directory and the file belong to the user running warden and nobody else can
            // write the directory (`private_dir`, `owned_by_us`).
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(component) => return Ok(component),
                Err(error) => tracing::warn!(
                    "cached component {} is unusable ({error:#}); recompiling",
                    path.display()
                ),
            }
        }
        let component = Component::new(engine, wasm)?;
        if let Err(error) = store(dir, &path, &component) {
            tracing::warn!("cannot cache component at {}: {error}", path.display());
        }
        Ok(component)
    }
}

/// Creates `dir` (mode 0700) if needed and checks that this user owns it and that neither group
/// nor others can write to it.
fn private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|error| error.to_string())?;
    let metadata = std::fs::metadata(dir).map_err(|error| error.to_string())?;
    // A file this process creates is owned by its effective user: compare owners without libc.
    let probe = tempfile::NamedTempFile::new_in(dir).map_err(|error| error.to_string())?;
    let our_uid = probe
        .as_file()
        .metadata()
        .map_err(|error| error.to_string())?
        .uid();
    if metadata.uid() != our_uid {
        return Err(format!(
            "it is owned by uid {}, not by this user",
            metadata.uid()
        ));
    }
    if metadata.mode() & 0o022 != 0 {
        return Err(format!(
            "its mode {:o} lets others write to it",
            metadata.mode() & 0o777
        ));
    }
    Ok(())
}

/// True when `path` has the same owner as `dir` (checked by `private_dir`).
fn owned_by_us(dir: &Path, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (std::fs::metadata(dir), std::fs::symlink_metadata(path)) {
        (Ok(dir), Ok(file)) => file.is_file() && file.uid() == dir.uid(),
        _ => false,
    }
}

fn store(dir: &Path, path: &Path, component: &Component) -> std::io::Result<()> {
    let bytes = component.serialize().map_err(std::io::Error::other)?;
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(&bytes)?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
