//! What a command may not leave changed where no mount could stop it: a protected path that did
//! not exist (nothing to mount on) or was a symbolic link (the mount lands on its target; the
//! link lies in a writable directory). When the command ends, whatever it made or replaced
//! there is renamed beside itself, contents intact, and the result says so.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A protected path a command may not leave changed: absent (`link` is `None`) or the same
/// symbolic link, leading to the same place.
#[derive(Debug, Clone)]
pub struct Guarded {
    path: PathBuf,
    link: Option<Link>,
}

/// A symbolic link as it was: its text, and where it led (`None`: nowhere, a dangling link a
/// command could make lead somewhere by creating its target, or a chain it could redirect).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Link {
    text: PathBuf,
    target: Option<PathBuf>,
}

impl Link {
    fn of(path: &Path, text: PathBuf) -> Self {
        Self {
            text,
            target: std::fs::canonicalize(path).ok(),
        }
    }
}

impl Guarded {
    /// A protected path that does not exist: the command may not leave one there.
    pub(super) fn absent(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            link: None,
        }
    }

    /// `path` when it is a symbolic link: the command may not replace or redirect it.
    pub(super) fn link(path: &Path) -> Option<Self> {
        let is_link =
            std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
        let text = std::fs::read_link(path).ok().filter(|_| is_link)?;
        Some(Self {
            path: path.to_path_buf(),
            link: Some(Link::of(path, text)),
        })
    }

    /// The protected path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether what is at the path now is what was there before the command.
    pub(super) fn unchanged(&self) -> bool {
        match (&self.link, std::fs::symlink_metadata(&self.path)) {
            // Removing a protected link makes nothing load.
            (_, Err(_)) => true,
            (None, Ok(_)) => false,
            (Some(link), Ok(meta)) => {
                meta.file_type().is_symlink()
                    && std::fs::read_link(&self.path)
                        .is_ok_and(|now| Link::of(&self.path, now) == *link)
            }
        }
    }
}

/// Directories with more entries than this are not listed: a `stat` per name is cheaper there.
const LISTED_NAMES: usize = 512;

/// The names in `dir` when it has at most [`LISTED_NAMES`] entries (one directory read instead
/// of a `stat` per name asked about); `None` when it has more or cannot be read.
pub(super) fn names_in(dir: &Path) -> Option<HashSet<OsString>> {
    let mut names = HashSet::new();
    for entry in std::fs::read_dir(dir).ok()? {
        names.insert(entry.ok()?.file_name());
        if names.len() > LISTED_NAMES {
            return None;
        }
    }
    Some(names)
}

/// Moves aside each of `guarded` a command made or replaced (which a mount could not stop:
/// there was nothing to mount on, or only a link's target), renaming it beside itself so
/// nothing is lost and nothing loads it; the notice says what moved where.
pub fn set_aside(guarded: &[Guarded], stamp: u128) -> Option<String> {
    let mut moved = Vec::new();
    // Each directory's names read once: an absent path still absent needs no `stat`.
    let mut listings: HashMap<&Path, Option<HashSet<OsString>>> = HashMap::new();
    for guarded in guarded {
        let still_absent = guarded.link.is_none()
            && guarded
                .path
                .parent()
                .zip(guarded.path.file_name())
                .is_some_and(|(parent, name)| {
                    listings
                        .entry(parent)
                        .or_insert_with(|| names_in(parent))
                        .as_ref()
                        .is_some_and(|names| !names.contains(name))
                });
        if still_absent || guarded.unchanged() {
            continue;
        }
        let path = &guarded.path;
        let Some(name) = path.file_name() else {
            continue;
        };
        let aside = (0..100).map(|attempt| {
            let mut aside = name.to_os_string();
            aside.push(format!(".janua-set-aside-{stamp}-{attempt}"));
            path.with_file_name(aside)
        });
        for target in aside {
            if std::fs::symlink_metadata(&target).is_ok() {
                continue;
            }
            match std::fs::rename(path, &target) {
                Ok(()) => moved.push(format!("{} to {}", path.display(), target.display())),
                Err(error) => moved.push(format!(
                    "{} could not be moved ({error}); remove it before trusting this workspace",
                    path.display()
                )),
            }
            break;
        }
    }
    (!moved.is_empty()).then(|| {
        format!(
            "janua set aside protected paths this command created, which commands may not make (docs/PROCESS.md): moved {}",
            moved.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_protected_path_is_set_aside_whether_its_directory_is_listed_or_not() {
        for entries in [0, LISTED_NAMES + 1] {
            let root = tempfile::tempdir().unwrap();
            for n in 0..entries {
                std::fs::write(root.path().join(format!("file{n}")), "").unwrap();
            }
            assert_eq!(
                names_in(root.path()).is_some(),
                entries <= LISTED_NAMES,
                "{entries} entries"
            );
            let guarded = [
                Guarded::absent(&root.path().join(".bashrc")),
                Guarded::absent(&root.path().join(".envrc")),
            ];
            assert_eq!(set_aside(&guarded, 1), None, "nothing was made");
            std::fs::write(root.path().join(".envrc"), "export X=1\n").unwrap();
            let notice = set_aside(&guarded, 1).expect("a notice");
            assert!(notice.contains(".envrc"), "{notice}");
            assert!(!root.path().join(".envrc").exists());
            assert!(root.path().join(".envrc.janua-set-aside-1-0").exists());
        }
    }
}
