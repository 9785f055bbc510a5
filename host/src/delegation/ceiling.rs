//! The grant ceiling of a delegated call or a sub-session: what the caller itself holds. A tool
//! running under a ceiling gets the intersection of its own grants and the ceiling, computed on
//! resolved host paths, so no spelling of a path or variable can reach past the caller.
//!
//! Directories intersect exactly (the deeper of two nested directories, the weaker access);
//! environment variables by name; `process`, `net` and `delegate` grants are kept only when the
//! caller holds the very same grant, `browser` only when the caller holds it too (a `delegate` pattern also when the caller's pattern covers
//! it). Glob patterns have no cheap exact intersection, so the rule errs toward less.

use std::path::{Path, PathBuf};

use janua_sandbox::{FsAccess, Grants, NetGrant, ProcessGrant, ResolvedGrants};
use janua_types::wildcard;

/// The most a call under a delegating tool or a sub-session may hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ceiling {
    /// Directories and their access, resolved.
    pub(crate) dirs: Vec<(PathBuf, FsAccess)>,
    /// Environment variable names or `*` globs.
    pub(crate) env: Vec<String>,
    /// Programs, compared whole.
    pub(crate) process: Vec<ProcessGrant>,
    /// Outgoing destinations, compared whole.
    pub(crate) net: Vec<NetGrant>,
    /// Tools that may be delegated to (names or globs).
    pub(crate) delegate: Vec<String>,
    /// The `browser` interface.
    pub(crate) browser: bool,
}

impl Ceiling {
    /// A delegating call's own effective grants: its resolved directories and variables and the
    /// `process`, `net` and `delegate` grants it ran with.
    pub(crate) fn of_call(resolved: &ResolvedGrants, grants: &Grants) -> Self {
        Self {
            dirs: resolved.dirs.clone(),
            env: resolved.env.iter().map(|(name, _)| name.clone()).collect(),
            process: grants.process.clone(),
            net: grants.net.clone(),
            delegate: grants.delegate.clone(),
            browser: grants.browser,
        }
    }

    /// Grants given to a sub-session, resolved (the env patterns are kept as patterns).
    pub(crate) fn of_grants(grants: &Grants, context: &janua_sandbox::GrantContext) -> Self {
        Self {
            dirs: grants
                .fs
                .iter()
                .flat_map(|grant| grant.resolve_all(context))
                .collect(),
            env: grants.env.iter().map(ToString::to_string).collect(),
            process: grants.process.clone(),
            net: grants.net.clone(),
            delegate: grants.delegate.clone(),
            browser: grants.browser,
        }
    }

    /// The access the ceiling gives `path`, if any.
    fn access_to(&self, path: &Path) -> Option<FsAccess> {
        self.dirs
            .iter()
            .filter(|(root, _)| path.starts_with(root))
            .map(|(_, access)| *access)
            .max_by_key(|access| *access == FsAccess::ReadWrite)
    }

    /// True when the ceiling lets `path` be opened with `access`.
    pub(crate) fn covers(&self, path: &Path, access: FsAccess) -> bool {
        self.access_to(path).is_some_and(|held| held.allows(access))
    }

    /// True when `name` may be read from the environment.
    fn allows_env(&self, name: &str) -> bool {
        self.env
            .iter()
            .any(|pattern| wildcard::matches(pattern, name))
    }

    /// `child` cut down to the ceiling.
    pub(crate) fn narrow(&self, child: ResolvedGrants) -> ResolvedGrants {
        let mut dirs: Vec<(PathBuf, FsAccess)> = Vec::new();
        for (dir, access) in &child.dirs {
            for (root, held) in &self.dirs {
                let both = weaker(*access, *held);
                let inner = if dir.starts_with(root) {
                    dir
                } else if root.starts_with(dir) {
                    root
                } else {
                    continue;
                };
                if !dirs.iter().any(|(known, _)| known == inner) {
                    dirs.push((inner.clone(), both));
                } else if let Some(entry) = dirs.iter_mut().find(|(known, _)| known == inner)
                    && both == FsAccess::ReadWrite
                {
                    entry.1 = both;
                }
            }
        }
        let env = child
            .env
            .into_iter()
            .filter(|(name, _)| self.allows_env(name))
            .collect();
        ResolvedGrants { dirs, env }
    }

    /// `child`'s process grants the ceiling holds too.
    pub(crate) fn process(&self, child: &[ProcessGrant]) -> Vec<ProcessGrant> {
        child
            .iter()
            .filter(|grant| self.process.contains(grant))
            .cloned()
            .collect()
    }

    /// `child`'s net grants the ceiling holds too.
    pub(crate) fn net(&self, child: &[NetGrant]) -> Vec<NetGrant> {
        child
            .iter()
            .filter(|grant| self.net.contains(grant))
            .cloned()
            .collect()
    }

    /// `child`'s delegate patterns the ceiling covers.
    pub(crate) fn delegate(&self, child: &[String]) -> Vec<String> {
        child
            .iter()
            .filter(|pattern| {
                self.delegate
                    .iter()
                    .any(|held| wildcard::matches(held, pattern))
            })
            .cloned()
            .collect()
    }

    /// The intersection of two ceilings (a sub-session inside a delegated call).
    pub(crate) fn meet(&self, other: &Ceiling) -> Ceiling {
        let resolved = self.narrow(ResolvedGrants {
            dirs: other.dirs.clone(),
            env: Vec::new(),
        });
        Ceiling {
            dirs: resolved.dirs,
            env: other
                .env
                .iter()
                .filter(|pattern| self.env.iter().any(|held| wildcard::matches(held, pattern)))
                .cloned()
                .collect(),
            process: self.process(&other.process),
            net: self.net(&other.net),
            delegate: self.delegate(&other.delegate),
            browser: self.browser && other.browser,
        }
    }

    /// The first part of `wanted` this ceiling does not hold, in words; `None` when it holds
    /// all of it (used to refuse a fork that would widen).
    pub(crate) fn missing(&self, wanted: &Ceiling) -> Option<String> {
        if let Some((dir, access)) = wanted
            .dirs
            .iter()
            .find(|(dir, access)| !self.covers(dir, *access))
        {
            return Some(format!(
                "fs {} ({})",
                dir.display(),
                match access {
                    FsAccess::Read => "read",
                    FsAccess::ReadWrite => "read-write",
                }
            ));
        }
        if let Some(pattern) = wanted
            .env
            .iter()
            .find(|pattern| !self.env.iter().any(|held| wildcard::matches(held, pattern)))
        {
            return Some(format!("env {pattern}"));
        }
        if let Some(grant) = wanted
            .process
            .iter()
            .find(|grant| !self.process.contains(grant))
        {
            return Some(format!("process {grant}"));
        }
        if let Some(grant) = wanted.net.iter().find(|grant| !self.net.contains(grant)) {
            return Some(format!("net {grant}"));
        }
        if wanted.browser && !self.browser {
            return Some("browser".to_owned());
        }
        wanted
            .delegate
            .iter()
            .find(|pattern| {
                !self
                    .delegate
                    .iter()
                    .any(|held| wildcard::matches(held, pattern))
            })
            .map(|pattern| format!("delegate {pattern}"))
    }

    /// Everything any of `grants` holds: the ceiling of the root session, for checking forks.
    pub(crate) fn union<'g>(
        grants: impl Iterator<Item = &'g Grants>,
        context: &janua_sandbox::GrantContext,
    ) -> Ceiling {
        let mut union = Ceiling::default();
        for grants in grants {
            let one = Ceiling::of_grants(grants, context);
            union.dirs.extend(one.dirs);
            union.env.extend(one.env);
            union.process.extend(one.process);
            union.net.extend(one.net);
            union.delegate.extend(one.delegate);
            union.browser |= one.browser;
        }
        union
    }
}

fn weaker(a: FsAccess, b: FsAccess) -> FsAccess {
    if a == FsAccess::ReadWrite && b == FsAccess::ReadWrite {
        FsAccess::ReadWrite
    } else {
        FsAccess::Read
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Directories as a table row writes them.
    type Dirs = &'static [(&'static str, FsAccess)];

    fn dirs(list: &[(&str, FsAccess)]) -> Vec<(PathBuf, FsAccess)> {
        list.iter()
            .map(|(dir, access)| (PathBuf::from(dir), *access))
            .collect()
    }

    #[test]
    fn directories_intersect_to_the_deeper_and_weaker() {
        use FsAccess::{Read, ReadWrite};
        let table: &[(Dirs, Dirs, Dirs)] = &[
            // child, ceiling, result
            (
                &[("/w", ReadWrite)],
                &[("/w/sub", Read)],
                &[("/w/sub", Read)],
            ),
            (
                &[("/w/sub", ReadWrite)],
                &[("/w", ReadWrite)],
                &[("/w/sub", ReadWrite)],
            ),
            (&[("/w", Read)], &[("/w", ReadWrite)], &[("/w", Read)]),
            (&[("/w", Read)], &[("/other", ReadWrite)], &[]),
            (&[("/w", Read)], &[], &[]),
            (&[("/w2", Read)], &[("/w", Read)], &[]),
        ];
        for (child, ceiling, expected) in table {
            let ceiling = Ceiling {
                dirs: dirs(ceiling),
                ..Ceiling::default()
            };
            let narrowed = ceiling.narrow(ResolvedGrants {
                dirs: dirs(child),
                env: Vec::new(),
            });
            assert_eq!(
                narrowed.dirs,
                dirs(expected),
                "child {child:?} ceiling {ceiling:?}"
            );
        }
    }

    #[test]
    fn environment_is_kept_only_by_name_the_ceiling_holds() {
        let ceiling = Ceiling {
            env: vec!["HOME".to_owned(), "JANUA_*".to_owned()],
            ..Ceiling::default()
        };
        let narrowed = ceiling.narrow(ResolvedGrants {
            dirs: Vec::new(),
            env: vec![
                ("HOME".to_owned(), "/h".to_owned()),
                ("SECRET".to_owned(), "x".to_owned()),
                ("JANUA_X".to_owned(), "1".to_owned()),
            ],
        });
        let names: Vec<&str> = narrowed.env.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["HOME", "JANUA_X"]);
    }

    #[test]
    fn missing_names_the_first_widening_grant() {
        let held = Ceiling {
            dirs: dirs(&[("/w", FsAccess::Read)]),
            delegate: vec!["Re*".to_owned()],
            ..Ceiling::default()
        };
        let table: &[(Ceiling, Option<&str>)] = &[
            (Ceiling::default(), None),
            (
                Ceiling {
                    dirs: dirs(&[("/w/a", FsAccess::Read)]),
                    ..Ceiling::default()
                },
                None,
            ),
            (
                Ceiling {
                    dirs: dirs(&[("/w/a", FsAccess::ReadWrite)]),
                    ..Ceiling::default()
                },
                Some("fs /w/a (read-write)"),
            ),
            (
                Ceiling {
                    env: vec!["HOME".to_owned()],
                    ..Ceiling::default()
                },
                Some("env HOME"),
            ),
            (
                Ceiling {
                    delegate: vec!["Read".to_owned()],
                    ..Ceiling::default()
                },
                None,
            ),
            (
                Ceiling {
                    delegate: vec!["Bash".to_owned()],
                    ..Ceiling::default()
                },
                Some("delegate Bash"),
            ),
        ];
        for (wanted, expected) in table {
            assert_eq!(held.missing(wanted).as_deref(), *expected, "{wanted:?}");
        }
    }
}
