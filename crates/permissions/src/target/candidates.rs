//! One path in every spelling rules must consider: as written, with `..` resolved, and with
//! every symlink resolved as the kernel resolves it (the one place the decision touches the disk
//! for a path).

use std::path::{Component, Path, PathBuf};

use crate::paths::normalize;

/// One path in every spelling rules must consider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathCandidates {
    /// `..`, `.` and duplicate slashes resolved lexically.
    pub lexical: PathBuf,
    /// Symlinks resolved (for the longest existing prefix), `..` taken after each link as the
    /// kernel takes it.
    pub physical: PathBuf,
    /// True when the path as given climbs with `..`: allow rules never match such a path, so
    /// `docs/../.git/x` cannot ride on an allow rule for `docs/**`.
    pub climbs: bool,
}

impl PathCandidates {
    /// Candidates for `raw` relative to `cwd` (`~/` expanded with `home`).
    pub fn new(raw: &str, cwd: &Path, home: Option<&Path>) -> Self {
        let expanded = match (raw.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest).to_string_lossy().into_owned(),
            _ if raw == "~" => home.map_or_else(
                || raw.to_owned(),
                |home| home.to_string_lossy().into_owned(),
            ),
            _ => raw.to_owned(),
        };
        let lexical = normalize(cwd, &expanded);
        let joined = if Path::new(&expanded).is_absolute() {
            PathBuf::from(&expanded)
        } else {
            cwd.join(&expanded)
        };
        Self {
            physical: resolve(&joined),
            climbs: Path::new(&expanded)
                .components()
                .any(|part| part == Component::ParentDir),
            lexical,
        }
    }

    /// Every distinct spelling.
    pub fn all(&self) -> impl Iterator<Item = &Path> {
        let physical = (self.physical != self.lexical).then_some(self.physical.as_path());
        std::iter::once(self.lexical.as_path()).chain(physical)
    }
}

/// `path` (absolute) with every symlink on it resolved, one component at a time as the kernel
/// does, `..` taken after each link. A link whose target does not exist yet is still followed, so
/// a write through a dangling link is judged by where it lands. Missing components are appended
/// lexically; more than 40 links (a loop) falls back to the lexical path.
fn resolve(path: &Path) -> PathBuf {
    let mut pending: Vec<std::ffi::OsString> = Vec::new();
    push_components(&mut pending, path);
    let mut current = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            current.pop();
            continue;
        }
        if part == "." || part.is_empty() {
            continue;
        }
        let candidate = current.join(&part);
        let is_link =
            std::fs::symlink_metadata(&candidate).is_ok_and(|meta| meta.file_type().is_symlink());
        if !is_link {
            current = candidate;
            continue;
        }
        links += 1;
        if links > 40 {
            return normalize(Path::new("/"), &path.to_string_lossy());
        }
        match std::fs::read_link(&candidate) {
            Ok(target) => {
                if target.is_absolute() {
                    current = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
            Err(_) => current = candidate,
        }
    }
    current
}

/// Pushes `path`'s components onto `stack` so that they pop in order.
fn push_components(stack: &mut Vec<std::ffi::OsString>, path: &Path) {
    for part in path.components().rev() {
        match part {
            Component::Normal(name) => stack.push(name.to_owned()),
            Component::ParentDir => stack.push("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}
