//! What a command may not leave changed where no mount could stop it: a protected path that did
//! not exist (nothing to mount on) or was a symbolic link (the mount lands on its target; the
//! link lies in a writable directory). When the command ends, whatever it made or replaced
//! there is renamed beside itself, contents intact, and the result says so.

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

/// Moves aside each of `guarded` a command made or replaced (which a mount could not stop:
/// there was nothing to mount on, or only a link's target), renaming it beside itself so
/// nothing is lost and nothing loads it; the notice says what moved where.
pub fn set_aside(guarded: &[Guarded], stamp: u128) -> Option<String> {
    let mut moved = Vec::new();
    for guarded in guarded {
        if guarded.unchanged() {
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
