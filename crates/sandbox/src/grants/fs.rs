//! Filesystem grants: a directory template (`${WORKSPACE}`, `${PLUGIN_DATA}`, `${TMP}`, optionally
//! followed by a relative subpath) and an access level.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use super::{GrantContext, GrantError};

/// Read-only or read-write access to a granted directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsAccess {
    /// Open and list, never modify.
    Read,
    /// Also create, write, rename and delete.
    ReadWrite,
}

impl FsAccess {
    /// True when a grant of `self` permits `needed`.
    pub fn allows(self, needed: FsAccess) -> bool {
        self == FsAccess::ReadWrite || needed == FsAccess::Read
    }
}

/// One directory a component may open.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawFsGrant")]
pub struct FsGrant {
    base: Base,
    subpath: PathBuf,
    access: FsAccess,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    Workspace,
    PluginData,
    Tmp,
}

impl Base {
    fn variable(self) -> &'static str {
        match self {
            Base::Workspace => "${WORKSPACE}",
            Base::PluginData => "${PLUGIN_DATA}",
            Base::Tmp => "${TMP}",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFsGrant {
    path: String,
    access: FsAccess,
}

impl TryFrom<RawFsGrant> for FsGrant {
    type Error = GrantError;

    fn try_from(raw: RawFsGrant) -> Result<Self, GrantError> {
        FsGrant::new(&raw.path, raw.access)
    }
}

impl FsGrant {
    /// Parses a path template. Only the three variables are accepted as roots: a plugin cannot name
    /// arbitrary host directories, and a subpath may not climb out with `..`.
    pub fn new(template: &str, access: FsAccess) -> Result<Self, GrantError> {
        let (base, rest) = [Base::Workspace, Base::PluginData, Base::Tmp]
            .into_iter()
            .find_map(|base| {
                template
                    .strip_prefix(base.variable())
                    .map(|rest| (base, rest))
            })
            .ok_or_else(|| GrantError::FsRoot {
                template: template.to_owned(),
            })?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return Err(GrantError::FsSeparator {
                template: template.to_owned(),
            });
        }
        let subpath = PathBuf::from(rest.trim_start_matches('/'));
        if subpath
            .components()
            .any(|part| !matches!(part, Component::Normal(_)))
        {
            return Err(GrantError::FsSubpath {
                template: template.to_owned(),
            });
        }
        Ok(Self {
            base,
            subpath,
            access,
        })
    }

    /// True when rooted at `${PLUGIN_DATA}`.
    pub fn is_plugin_data(&self) -> bool {
        self.base == Base::PluginData
    }

    /// True when rooted at `${TMP}`.
    pub fn is_tmp(&self) -> bool {
        self.base == Base::Tmp
    }

    /// The granted access level.
    pub fn access(&self) -> FsAccess {
        self.access
    }

    /// The host directory and access this grant means in `context`: canonical, existing, and inside
    /// its base. A subpath that is (or passes through) a symlink leading out of the base resolves to
    /// nothing, so a link in the workspace can never widen a grant.
    pub fn resolve(&self, context: &GrantContext) -> Option<(PathBuf, FsAccess)> {
        let root: &Path = match self.base {
            Base::Workspace => &context.workspace,
            Base::PluginData => context.plugin_data.as_deref()?,
            Base::Tmp => context.tmp.as_deref()?,
        };
        let base = std::fs::canonicalize(root).ok()?;
        // The base is canonical already: a grant of the whole base skips a second resolution.
        let target = if self.subpath.as_os_str().is_empty() {
            base.clone()
        } else {
            std::fs::canonicalize(base.join(&self.subpath)).ok()?
        };
        (target.starts_with(&base) && target.is_dir()).then_some((target, self.access))
    }

    /// Every directory this grant stands for: its own root, and for a grant of the whole
    /// `${WORKSPACE}` also the operator's additional directories.
    pub fn resolve_all(&self, context: &GrantContext) -> Vec<(PathBuf, FsAccess)> {
        let mut roots: Vec<(PathBuf, FsAccess)> = self.resolve(context).into_iter().collect();
        if self.base == Base::Workspace && self.subpath.as_os_str().is_empty() {
            for dir in &context.additional_dirs {
                if let Ok(dir) = std::fs::canonicalize(dir)
                    && dir.is_dir()
                    && !roots.iter().any(|(root, _)| *root == dir)
                {
                    roots.push((dir, self.access));
                }
            }
        }
        roots
    }

    /// True when rooted at `${WORKSPACE}`.
    pub fn is_workspace(&self) -> bool {
        self.base == Base::Workspace
    }
}

impl FsGrant {
    /// The directory as written in the manifest, e.g. `${WORKSPACE}/docs`.
    pub fn location(&self) -> String {
        if self.subpath.as_os_str().is_empty() {
            self.base.variable().to_owned()
        } else {
            format!("{}/{}", self.base.variable(), self.subpath.display())
        }
    }
}

impl fmt::Display for FsGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let access = match self.access {
            FsAccess::Read => "read",
            FsAccess::ReadWrite => "read-write",
        };
        write!(f, "{} ({access})", self.location())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_templates_and_rejects_escapes() {
        let cases: &[(&str, bool)] = &[
            ("${WORKSPACE}", true),
            ("${WORKSPACE}/docs", true),
            ("${PLUGIN_DATA}", true),
            ("${TMP}/x/y", true),
            ("/etc", false),
            ("${HOME}", false),
            ("${WORKSPACE}/../etc", false),
            ("${WORKSPACE}docs", false),
            // Extra slashes collapse: this is ${WORKSPACE}/etc, never /etc.
            ("${WORKSPACE}//etc", true),
            ("${WORKSPACE}/./x", false),
        ];
        for (template, ok) in cases {
            assert_eq!(
                FsGrant::new(template, FsAccess::Read).is_ok(),
                *ok,
                "{template}"
            );
        }
    }

    #[test]
    fn read_write_allows_read_but_not_the_reverse() {
        assert!(FsAccess::ReadWrite.allows(FsAccess::Read));
        assert!(FsAccess::Read.allows(FsAccess::Read));
        assert!(!FsAccess::Read.allows(FsAccess::ReadWrite));
    }
}
