//! Compiled components, cached on disk by content digest and engine compatibility, and what each
//! component's `describe` answered, cached by content digest alone (so a caller that never runs a
//! guest reads its tools without creating an engine: `janua hook claude`).
//!
//! Compiling a component with Cranelift takes 30–250 ms; loading a cached artifact takes well under
//! a millisecond, and a cached description lets start-up skip loading the component at all (it is
//! loaded when first called). Entries are written atomically (temporary file, then rename), so a
//! reader never sees a half-written one. An artifact starts with a header holding the SHA-256 of
//! the native code after it, checked on every read: an entry that is truncated, flipped or fails to
//! load is recompiled and replaced, never trusted.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::Digest as _;
use wasmtime::Engine;
use wasmtime::component::Component;

/// The first bytes of an artifact; the SHA-256 of the rest follows.
const MAGIC: &[u8; 7] = b"janua\x01\n";
const HEADER: usize = MAGIC.len() + 32;
/// File name endings of the two kinds of entry.
const ARTIFACT: &str = "cwasm";
/// The layout of the entries; part of the directory name, so that entries of an older layout
/// (artifacts without the checksum header) are left alone as stale, not read as corrupt.
const FORMAT: u32 = 3;
const DESCRIPTION: &str = "tools.json";

/// Where compiled components and descriptions live, if anywhere.
pub struct ComponentCache {
    /// The cache's root (private to this user), `None` when caching is off.
    root: Option<PathBuf>,
    /// Compiled code: `root/<hash of the engine's compatibility, janua's version, the layout>`,
    /// known once there is an engine.
    engine_dir: std::sync::OnceLock<Option<PathBuf>>,
    /// Descriptions: `root/<hash of janua's version and the layout>`; they do not depend on the
    /// engine.
    descriptions: Option<PathBuf>,
}

/// What `janua cache info` reports.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CacheInfo {
    /// The directory holding this engine's entries (`None`: caching is off).
    pub dir: Option<PathBuf>,
    /// Compiled components.
    pub artifacts: usize,
    /// Cached descriptions.
    pub descriptions: usize,
    /// Bytes of every entry, this engine's and stale ones.
    pub bytes: u64,
    /// Directories left by other janua or wasmtime versions (`janua cache clear` removes them).
    pub stale_dirs: usize,
}

impl ComponentCache {
    /// A cache under `dir`; `None` disables it. The cache holds native code, so it is used only if
    /// this user owns the directory and nobody else can write to it; otherwise it is disabled
    /// with a warning. Nothing of the engine is needed until compiled code is read or written.
    pub fn new(dir: Option<&Path>) -> Self {
        let root = dir.map(Path::to_path_buf).and_then(usable);
        let descriptions = root
            .as_ref()
            .and_then(|root| usable(entry_dir(root, "descriptions")));
        Self {
            root,
            engine_dir: std::sync::OnceLock::new(),
            descriptions,
        }
    }

    /// The directory of `engine`'s compiled code (made private on first use).
    fn engine_dir(&self, engine: &Engine) -> Option<&PathBuf> {
        self.engine_dir
            .get_or_init(|| {
                let root = self.root.as_ref()?;
                usable(entry_dir(root, engine.precompile_compatibility_hash()))
            })
            .as_ref()
    }

    /// Loads `wasm`, whose SHA-256 is `digest` (hex), as a component, from the cache when
    /// possible.
    pub fn load(&self, engine: &Engine, wasm: &[u8], digest: &str) -> wasmtime::Result<Component> {
        let Some(dir) = self.engine_dir(engine) else {
            return Component::new(engine, wasm);
        };
        let path = dir.join(format!("{digest}.{ARTIFACT}"));
        if let Some(bytes) = read_ours(dir, &path) {
            match verified(&bytes) {
                // SAFETY: the bytes were produced by `Component::serialize` for an engine with the
                // same compatibility hash (it is in the directory name), they hash to the digest
                // written beside them (so they are whole and unchanged since), and the directory
                // and the file belong to the user running janua, nobody else can write the
                // directory (`private_dir`, `read_ours`).
                Some(code) => match unsafe { Component::deserialize(engine, code) } {
                    Ok(component) => return Ok(component),
                    Err(error) => tracing::warn!(
                        "cached component {} is unusable ({error:#}); recompiling",
                        path.display()
                    ),
                },
                None => tracing::warn!(
                    "cached component {} is corrupt (its checksum does not match); recompiling",
                    path.display()
                ),
            }
        }
        let component = Component::new(engine, wasm)?;
        match component.serialize() {
            Ok(code) => {
                let mut entry = Vec::with_capacity(HEADER + code.len());
                entry.extend_from_slice(MAGIC);
                entry.extend_from_slice(&sha2::Sha256::digest(&code));
                entry.extend_from_slice(&code);
                if let Err(error) = store(dir, &path, &entry) {
                    tracing::warn!("cannot cache component at {}: {error}", path.display());
                }
            }
            Err(error) => tracing::warn!("cannot serialize component {digest}: {error:#}"),
        }
        Ok(component)
    }

    /// True when the compiled artifact of `digest` for `engine` is in the cache (not checked).
    pub fn has_artifact(&self, engine: &Engine, digest: &str) -> bool {
        self.engine_dir(engine)
            .is_some_and(|dir| dir.join(format!("{digest}.{ARTIFACT}")).is_file())
    }

    /// What `describe` answered for the component `digest`, if cached and readable.
    pub fn description(&self, digest: &str) -> Option<serde_json::Value> {
        let dir = self.descriptions.as_ref()?;
        let bytes = read_ours(dir, &dir.join(format!("{digest}.{DESCRIPTION}")))?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Records what `describe` answered for the component `digest`.
    pub fn store_description(&self, digest: &str, description: &serde_json::Value) {
        let Some(dir) = &self.descriptions else {
            return;
        };
        let path = dir.join(format!("{digest}.{DESCRIPTION}"));
        let bytes = serde_json::to_vec(description).unwrap_or_default();
        if let Err(error) = store(dir, &path, &bytes) {
            tracing::warn!("cannot cache a description at {}: {error}", path.display());
        }
    }

    /// Counts the entries (for `janua cache info`): `engine`'s compiled code, the descriptions,
    /// and what other janua or wasmtime versions left.
    pub fn info(&self, engine: &Engine) -> CacheInfo {
        let (Some(root), Some(dir)) = (&self.root, self.engine_dir(engine)) else {
            return CacheInfo::default();
        };
        let mut info = CacheInfo {
            dir: Some(dir.clone()),
            ..CacheInfo::default()
        };
        for entry_dir in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let path = entry_dir.path();
            if !path.is_dir() {
                continue;
            }
            let compiled = path == *dir;
            let described = self.descriptions.as_ref() == Some(&path);
            if !compiled && !described {
                info.stale_dirs += 1;
            }
            for entry in std::fs::read_dir(&path).into_iter().flatten().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                info.bytes += entry.metadata().map_or(0, |metadata| metadata.len());
                if compiled && name.ends_with(&format!(".{ARTIFACT}")) {
                    info.artifacts += 1;
                } else if described && name.ends_with(&format!(".{DESCRIPTION}")) {
                    info.descriptions += 1;
                }
            }
        }
        info
    }

    /// Removes every entry, this engine's and stale ones; returns how many files went.
    pub fn clear(&self) -> std::io::Result<usize> {
        let Some(root) = &self.root else { return Ok(0) };
        let mut removed = 0;
        for engine_dir in std::fs::read_dir(root)?.flatten() {
            let path = engine_dir.path();
            // Only what janua writes: hex-named engine directories of entries.
            let name = engine_dir.file_name().to_string_lossy().into_owned();
            if !path.is_dir() || name.len() != 16 || !name.chars().all(|c| c.is_ascii_hexdigit()) {
                continue;
            }
            for entry in std::fs::read_dir(&path)?.flatten() {
                let file = entry.path();
                if file.is_file() {
                    std::fs::remove_file(&file)?;
                    removed += 1;
                }
            }
            let _ = std::fs::remove_dir(&path);
        }
        Ok(removed)
    }
}

/// `root/<hash of kind, janua's version and the layout>`: the directory of one kind of entry
/// (the engine's compatibility for compiled code, `"descriptions"` for descriptions).
fn entry_dir(root: &Path, kind: impl Hash) -> PathBuf {
    let mut hasher = DefaultHasher::new();
    kind.hash(&mut hasher);
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    FORMAT.hash(&mut hasher);
    root.join(format!("{:016x}", hasher.finish()))
}

/// `dir` when it is (made) private to this user, else `None` with a warning.
fn usable(dir: PathBuf) -> Option<PathBuf> {
    match private_dir(&dir) {
        Ok(()) => Some(dir),
        Err(reason) => {
            tracing::warn!(
                "not caching compiled components in {}: {reason}",
                dir.display()
            );
            None
        }
    }
}

/// The native code of an artifact whose checksum matches, else `None`.
fn verified(entry: &[u8]) -> Option<&[u8]> {
    let (header, code) = entry.split_at_checked(HEADER)?;
    let (magic, sum) = header.split_at(MAGIC.len());
    (magic == MAGIC && sum == sha2::Sha256::digest(code).as_slice()).then_some(code)
}

/// The bytes of `path` when it is a regular file owned like `dir` (checked by `private_dir`).
fn read_ours(dir: &Path, path: &Path) -> Option<Vec<u8>> {
    owned_by_us(dir, path)
        .then(|| std::fs::read(path).ok())
        .flatten()
}

/// Why a cache directory is not used.
#[derive(Debug, thiserror::Error)]
enum NotPrivate {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("it is owned by uid {0}, not by this user")]
    Owner(u32),
    #[error("its mode {0:o} lets others write to it")]
    Writable(u32),
}

/// Creates `dir` (mode 0700) if needed and checks that this user owns it and that neither group
/// nor others can write to it.
fn private_dir(dir: &Path) -> Result<(), NotPrivate> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let metadata = std::fs::metadata(dir)?;
    // A file this process creates is owned by its effective user: compare owners without libc.
    let probe = tempfile::NamedTempFile::new_in(dir)?;
    let our_uid = probe.as_file().metadata()?.uid();
    if metadata.uid() != our_uid {
        return Err(NotPrivate::Owner(metadata.uid()));
    }
    if metadata.mode() & 0o022 != 0 {
        return Err(NotPrivate::Writable(metadata.mode() & 0o777));
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

fn store(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    // Made again private if `janua cache clear` removed it meanwhile.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}
