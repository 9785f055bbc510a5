//! Capability grants: what a component may touch. Declared in its manifest (the ceiling), resolved
//! per call against the workspace and session, and turned into a WASI context by `wasi.rs` only.
//!
//! Deny by default: an empty [`Grants`] gives a guest no files, no environment and no network.

mod env;
mod fs;
mod net;
mod process;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use env::EnvGrant;
pub use fs::{FsAccess, FsGrant};
pub(crate) use net::NetScheme;
pub use net::{NetGrant, NetGrantError};
pub use process::ProcessGrant;

/// A file, process or environment grant that cannot be used, as written in a manifest or by
/// the operator. (Net grants have their own [`NetGrantError`].)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    /// An fs grant path that does not start with one of the three roots.
    #[error(
        "fs grant path {template:?} must start with ${{WORKSPACE}}, ${{PLUGIN_DATA}} or ${{TMP}}"
    )]
    FsRoot {
        /// The path as written.
        template: String,
    },
    /// An fs grant path whose subpath does not follow the root after `/`.
    #[error("fs grant path {template:?}: a subpath must follow the variable after '/'")]
    FsSeparator {
        /// The path as written.
        template: String,
    },
    /// An fs grant path whose subpath climbs or is absolute.
    #[error("fs grant path {template:?}: the subpath may not contain '..', '.' or a root")]
    FsSubpath {
        /// The path as written.
        template: String,
    },
    /// A process grant whose program is not an absolute path without `..`.
    #[error("process grant program {program:?} must be an absolute path without '..'")]
    ProcessProgram {
        /// The program as written.
        program: String,
    },
    /// An env grant that is neither a variable name nor a `*` glob of one.
    #[error(
        "env grant {pattern:?} must be a variable name or a glob of letters, digits, '_' and '*'"
    )]
    EnvPattern {
        /// The pattern as written.
        pattern: String,
    },
}

/// Everything one component is granted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Directories the component may open, each read-only or read-write.
    #[serde(default)]
    pub fs: Vec<FsGrant>,
    /// Environment variables (names or `*` globs) copied from the host's environment.
    #[serde(default)]
    pub env: Vec<EnvGrant>,
    /// Programs the component may run through the host's `process` interface.
    #[serde(default)]
    pub process: Vec<ProcessGrant>,
    /// Outgoing HTTP destinations (`scheme://host[:port]` patterns); see `grants/net.rs`.
    #[serde(default)]
    pub net: Vec<NetGrant>,
    /// Tools (names or `*` globs) the component may call through the host's `delegate`
    /// interface; each call runs the whole pipeline under the caller's grants.
    #[serde(default)]
    pub delegate: Vec<String>,
    /// The host's `browser` interface: a headless page per call whose requests must pass the
    /// `net` grants and the permission rules (`browser.rs`).
    #[serde(default)]
    pub browser: bool,
}

/// Host locations the `${...}` variables in fs grants stand for, fixed for one call.
#[derive(Debug, Clone)]
pub struct GrantContext {
    /// `${WORKSPACE}`: the canonical workspace directory.
    pub workspace: PathBuf,
    /// `${PLUGIN_DATA}`: the plugin's own persistent directory, if it has one.
    pub plugin_data: Option<PathBuf>,
    /// `${TMP}`: a scratch directory that lives for one call.
    pub tmp: Option<PathBuf>,
    /// The session's `tool-results/` directory; read-class tools may read it to page through
    /// externalized output.
    pub session_results: Option<PathBuf>,
    /// The operator's `additionalDirectories`: a grant of the whole `${WORKSPACE}` also stands for
    /// each of them, with the same access.
    pub additional_dirs: Vec<PathBuf>,
}

/// Grants with every variable resolved to a host path: exactly what the WASI context gets.
#[derive(Debug, Clone, Default)]
pub struct ResolvedGrants {
    /// Directories, each preopened at its own absolute path.
    pub dirs: Vec<(PathBuf, FsAccess)>,
    /// Environment variables and their values.
    pub env: Vec<(String, String)>,
}

impl ResolvedGrants {
    /// The same directories, every one read-only, and no environment.
    pub fn read_only(self) -> Self {
        Self {
            dirs: self
                .dirs
                .into_iter()
                .map(|(dir, _)| (dir, FsAccess::Read))
                .collect(),
            env: Vec::new(),
        }
    }

    /// Turns every read-write directory read-only: a write-class call whose target cannot be
    /// told gets no write access at all.
    pub fn make_read_only(&mut self) {
        for (_, access) in &mut self.dirs {
            *access = FsAccess::Read;
        }
    }

    /// Narrows write access to what a write-class call's decision covered: the directory
    /// closest to `target` that exists, when it lies under a read-write grant and no symlink is on
    /// the way (then the preopen is exactly that directory); every other directory becomes
    /// read-only. The guest can then create or replace files only next to its target.
    pub fn narrow_writes_to(&mut self, target: &Path) {
        let mut narrowed: Option<PathBuf> = None;
        for (dir, access) in &mut self.dirs {
            if *access != FsAccess::ReadWrite {
                continue;
            }
            if narrowed.is_none() && target.starts_with(&*dir) {
                let closest = target
                    .ancestors()
                    .skip(1)
                    .take_while(|candidate| candidate.starts_with(&*dir))
                    .find(|candidate| candidate.is_dir());
                if let Some(closest) = closest
                    && std::fs::canonicalize(closest).is_ok_and(|real| real == closest)
                {
                    if closest == dir.as_path() {
                        // The grant itself is the closest directory: it stays read-write.
                        narrowed = Some(PathBuf::new());
                        continue;
                    }
                    narrowed = Some(closest.to_path_buf());
                }
            }
            *access = FsAccess::Read;
        }
        if let Some(dir) = narrowed.filter(|dir| !dir.as_os_str().is_empty()) {
            self.dirs.push((dir, FsAccess::ReadWrite));
        }
    }
}

impl Grants {
    /// Resolves the grants for one call. Directories that do not exist, or that a symlink would
    /// take outside their base, are skipped; a grant never brings a path into being.
    pub fn resolve(&self, context: &GrantContext, read_results: bool) -> ResolvedGrants {
        let mut dirs: Vec<(PathBuf, FsAccess)> = self
            .fs
            .iter()
            .flat_map(|grant| grant.resolve_all(context))
            .collect();
        if read_results
            && let Some(results) = &context.session_results
            && results.is_dir()
        {
            dirs.push((results.clone(), FsAccess::Read));
        }
        // `vars_os`: a variable that is not UTF-8 is skipped, never a panic. Most components
        // are granted no variables: they skip copying the whole environment on every call.
        let env = if self.env.is_empty() {
            Default::default()
        } else {
            let vars = std::env::vars_os().filter_map(|(name, value)| {
                Some((name.into_string().ok()?, value.into_string().ok()?))
            });
            env::select(&self.env, vars)
        };
        ResolvedGrants { dirs, env }
    }

    /// The grant that lets `path` be opened with `access`, if any. Paths are compared lexically after
    /// normalization; symlinks are the sandbox's business (WASI refuses to follow them out of a
    /// preopen).
    pub fn covering(
        &self,
        context: &GrantContext,
        path: &Path,
        access: FsAccess,
    ) -> Option<&FsGrant> {
        self.fs.iter().find(|grant| {
            grant
                .resolve_all(context)
                .iter()
                .any(|(root, granted)| granted.allows(access) && path.starts_with(root))
        })
    }

    /// True when some fs grant allows writing.
    pub fn can_write(&self) -> bool {
        self.fs
            .iter()
            .any(|grant| grant.access() == FsAccess::ReadWrite)
    }

    /// True when some fs grant is rooted at `${WORKSPACE}`.
    pub fn reads_workspace(&self) -> bool {
        self.fs.iter().any(FsGrant::is_workspace)
    }

    /// True when some fs grant is rooted at `${PLUGIN_DATA}`.
    pub fn uses_plugin_data(&self) -> bool {
        self.fs.iter().any(FsGrant::is_plugin_data)
    }

    /// True when some fs grant is rooted at `${TMP}`, so the call needs a scratch directory.
    pub fn uses_tmp(&self) -> bool {
        self.fs.iter().any(FsGrant::is_tmp)
    }

    /// A short human description, e.g. `fs: ${WORKSPACE} (read); env: none; net: none`.
    pub fn describe(&self) -> String {
        let fs = if self.fs.is_empty() {
            "none".to_owned()
        } else {
            self.fs
                .iter()
                .map(FsGrant::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let env = if self.env.is_empty() {
            "none".to_owned()
        } else {
            self.env
                .iter()
                .map(EnvGrant::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let net = if self.net.is_empty() {
            "none".to_owned()
        } else {
            self.net
                .iter()
                .map(NetGrant::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = format!("fs: {fs}; env: {env}; net: {net}");
        if !self.process.is_empty() {
            let process = self
                .process
                .iter()
                .map(ProcessGrant::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            text.push_str(&format!("; process: {process}"));
        }
        if !self.delegate.is_empty() {
            text.push_str(&format!("; delegate: {}", self.delegate.join(", ")));
        }
        if self.browser {
            text.push_str("; browser");
        }
        text
    }
}
