//! What the kernel can hold a child process to of the rules (issue 31, point 2), as data both
//! sides share: the permission engine fills it from the deny rules, the process sandbox turns it
//! into mounts. With it, the protected names and the bounded walk both use to find entries.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// Directories whose contents are protected wherever they appear.
pub const PROTECTED_DIRECTORIES: &[&str] = &[
    ".git",
    ".janua",
    ".claude",
    ".vscode",
    ".idea",
    ".husky",
    ".cargo",
    ".devcontainer",
    ".yarn",
    ".mvn",
    ".hg",
    ".ssh",
];

/// Files that are protected wherever they appear.
pub const PROTECTED_FILES: &[&str] = &[
    ".gitconfig",
    ".gitmodules",
    ".gitattributes",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".profile",
    ".envrc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    "bunfig.toml",
    ".bazelrc",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    ".devcontainer.json",
    ".ripgreprc",
    "pyrightconfig.json",
    ".mcp.json",
    ".claude.json",
];

/// Where a rule's paths are, in a shape a mount can cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// One file or directory.
    Path(PathBuf),
    /// A directory and everything under it (`dir/**`).
    Tree(PathBuf),
    /// Every entry named `name` at any depth under `under` (`Read(.env)`; with `tree`, the
    /// directories of that name and what is under them: `Read(secrets/**)`).
    Named {
        /// The directory the search starts in.
        under: PathBuf,
        /// The entry's name.
        name: String,
        /// The whole tree below the entry is meant.
        tree: bool,
    },
}

/// The deny rules' paths by what the kernel does with them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Enforceable {
    /// `Read(...)` denials: masked.
    pub hidden: Vec<Reach>,
    /// `Edit(...)` denials: read-only.
    pub read_only: Vec<Reach>,
    /// Rules with a pattern no mount expresses (enforced by the decision only).
    pub decision_only: Vec<String>,
}

/// Entries one walk of a root visits at most (names at any depth, other names of a file); past
/// it, the rest is left to the decision (and named in the docs' limits).
pub const WALK_LIMIT: usize = 20_000;

/// The regular files under `root` that are one of the files `identities` names by device and
/// inode (see [`walk`]).
pub fn other_names(root: &Path, identities: &[(u64, u64)]) -> Vec<PathBuf> {
    walk(root, |_, entry| {
        entry.file_type().is_ok_and(|kind| kind.is_file())
            && entry.metadata().is_ok_and(|meta| {
                meta.nlink() > 1 && identities.contains(&(meta.dev(), meta.ino()))
            })
    })
}

/// The entries under `root` that `pick` chooses (given each entry's path and the entry, whose
/// `file_type` costs no system call where the file system reports types and whose `metadata`
/// is an `lstat`: ask for it last). A bounded walk (`WALK_LIMIT`, 20,000 entries): it descends into
/// every directory it did not pick, except `.git/`, and never through a symlink.
pub fn walk(root: &Path, mut pick: impl FnMut(&Path, &std::fs::DirEntry) -> bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut visited = 0;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            if visited > WALK_LIMIT {
                return found;
            }
            let path = entry.path();
            if pick(&path, &entry) {
                found.push(path);
            } else if entry.file_type().is_ok_and(|kind| kind.is_dir())
                && entry.file_name() != ".git"
            {
                pending.push(path);
            }
        }
    }
    found
}
