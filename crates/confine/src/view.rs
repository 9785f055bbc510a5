//! The files a command sees, made in its own mount namespace between fork and exec, before
//! capabilities are dropped and seccomp forbids `mount` (issue 31, point 2, first step):
//!
//! - the protected paths that exist at the top of the workspace and of each additional directory
//!   (`.git/hooks`, `.git/config`, `.janua/`, `.claude/`, `.mcp.json`, `.envrc`, ..., the lists
//!   of `permissions/protected.rs`), those up to `NESTED_DEPTH` levels below, and the hooks and
//!   configuration of submodules' repositories are read-only: no program, link, rename or
//!   directory trick changes them (a hard link across the mount fails with `EXDEV`, a rename of
//!   the mount point with `EBUSY`);
//! - the paths of `Edit(...)` deny rules are read-only;
//! - the paths of `Read(...)` deny rules are masked: `/dev/null` over a file, an empty read-only
//!   `tmpfs` over a directory.
//!
//! Rules are read back from their compiled globs (`janua-permissions`' `enforced.rs`, as `janua_types::Enforceable`); a name at any
//! depth (`Read(.env)`) is found by walking the roots before each command (bounded, without
//! following links). Mounts propagate nowhere: `/` is made private first. A path that is a
//! symbolic link is enforced through its target, as the decision reads it (either name denies);
//! a protected link is guarded too, since a command may replace the link itself
//! ([`Guarded`], [`set_aside`]).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use janua_types::{Enforceable, PROTECTED_DIRECTORIES, PROTECTED_FILES, Reach, other_names, walk};

mod aside;

pub use aside::{Guarded, set_aside};

/// What the session's rules ask of every command's view.
#[derive(Debug, Clone, Default)]
pub struct ViewRules {
    /// The workspace and the additional directories.
    pub roots: Vec<PathBuf>,
    /// The deny rules' paths.
    pub enforceable: Enforceable,
}

/// Protected directories that hold a tool's working state as well as what changes what runs:
/// only the latter is read-only (all of `.git/` or `.hg/` read-only would stop every commit, all
/// of `.yarn/` every install).
const PROTECTED_INSIDE: &[(&str, &[&str])] = &[
    (".git", &["hooks", "config"]),
    (".hg", &["hgrc"]),
    (".yarn", &["plugins", "releases", "sdks"]),
];

/// Protected files a version-control tool makes in its everyday work (`git submodule add`,
/// `git lfs track`), which a command may create though not change once they exist: neither runs
/// anything without `.git/config`, which stays read-only.
const MADE_BY_TOOLS: &[&str] = &[".gitmodules", ".gitattributes"];

/// How many directory levels below a root protected names are looked for (`a/b/c/.envrc`, a
/// nested repository's `.git/hooks`), and how many entries that search reads at most: every
/// command pays for it before it starts.
const NESTED_DEPTH: usize = 3;
const NESTED_ENTRIES: usize = 2_000;
/// Trees not searched for nested protected names: large, made by tools, read by none of them
/// for configuration.
const NOT_SEARCHED: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__"];
/// How deep `.git/modules` is searched for the repositories of submodules (nested ones under
/// `modules/<name>/modules/`, names with slashes as directories).
const MODULES_DEPTH: usize = 8;

/// The mounts for one command, prepared before fork.
#[derive(Debug, Default)]
pub struct MountPlan {
    mounts: Vec<Mount>,
    /// Protected paths that did not exist, so nothing could be mounted on them, and those that
    /// were symbolic links, which a command may replace.
    guarded: Vec<Guarded>,
    /// The workspace and additional directories: a link is followed only to a target inside
    /// one of them (and not to one of them, or above).
    roots: Vec<PathBuf>,
    /// The flags of the mount holding `/dev/null` that a read-only remount of a mask keeps.
    null_locked: libc::c_ulong,
}

#[derive(Debug)]
struct Mount {
    target: CString,
    how: How,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    /// Bind onto itself, then remount read-only keeping the flags a user namespace locks.
    ReadOnly {
        locked: libc::c_ulong,
    },
    MaskFile,
    MaskDirectory,
    /// Bind onto itself, writable as before: a mount point cannot be renamed (`EBUSY`), so a
    /// read-only path below it cannot be swapped for a new one by renaming a directory above.
    Pin,
}

impl MountPlan {
    /// The mounts `rules` ask for, for the paths that exist now.
    pub fn build(rules: &ViewRules) -> Self {
        let mut plan = Self {
            roots: rules.roots.clone(),
            null_locked: super::root::locked_flags(Path::new("/dev/null")),
            ..Self::default()
        };
        for root in &rules.roots {
            plan.protect_in(root);
            // Below the top only what exists: a command may make a directory holding a
            // protected name (`npm init` in a new package); it cannot change one that exists.
            for nested in nested_protected(root) {
                plan.protect_nested(&nested);
            }
        }
        let enforceable = &rules.enforceable;
        for reach in &enforceable.read_only {
            for path in found(reach) {
                plan.read_only(&path);
            }
        }
        // A second name made earlier for a read-only file (`ln .git/config gc` in the command
        // that ran `git init`) would change it past the mount: every other name under the
        // roots is read-only too.
        let read_only = plan.read_only_paths();
        let linked = linked_files(&read_only);
        if !linked.is_empty() {
            for root in &rules.roots {
                for path in other_names(root, &linked) {
                    plan.read_only(&path);
                }
            }
        }
        let mut masked_files = Vec::new();
        for reach in &enforceable.hidden {
            for path in found(reach) {
                plan.mask(&path);
                masked_files.push(path);
            }
        }
        // A hard link is the same file under another name (issue 31, point 3): every name of a
        // masked file found under the roots is masked too.
        let linked: Vec<(u64, u64)> = masked_files
            .iter()
            // A masked link's target, whose other names are as secret.
            .filter_map(|path| std::fs::metadata(path).ok())
            .filter(|meta| meta.is_file() && meta.nlink() > 1)
            .map(|meta| (meta.dev(), meta.ino()))
            .collect();
        if !linked.is_empty() {
            for root in &rules.roots {
                for path in other_names(root, &linked) {
                    plan.mask(&path);
                }
            }
        }
        plan.pin_parents();
        plan
    }

    /// Pins every directory between a root and a read-only or masked path (`.git` above
    /// `.git/config`, `conf` above a protected link's target `conf/janua`, `config` above a
    /// hidden `config/secrets`): renaming one away and making a new one in its place would leave
    /// a fresh, writable file at the protected name, or show the hidden one under a new name.
    fn pin_parents(&mut self) {
        let held: Vec<PathBuf> = self
            .mounts
            .iter()
            .filter(|mount| mount.how != How::Pin)
            .map(|mount| PathBuf::from(std::ffi::OsStr::from_bytes(mount.target.as_bytes())))
            .collect();
        for path in held {
            let Some(root) = self.roots.iter().find(|root| path.starts_with(root)) else {
                continue;
            };
            let mut above: Vec<&Path> = path
                .ancestors()
                .skip(1)
                .take_while(|ancestor| *ancestor != root.as_path())
                .collect();
            above.reverse();
            for directory in above {
                if let Some(target) = c_path(directory) {
                    self.push(target, How::Pin);
                }
            }
        }
    }

    /// The protected paths at the top of a root (one that does not exist is remembered, to be
    /// set aside if a command makes it), and the repositories of its submodules.
    fn protect_in(&mut self, root: &Path) {
        // One read of the root's names answers "absent" for most protected names without a
        // `stat` each (about forty per command, before it and again after, issue 33).
        let listed = aside::names_in(root);
        let absent = |name: &str| {
            listed
                .as_ref()
                .is_some_and(|names| !names.contains(std::ffi::OsStr::new(name)))
        };
        // A missing `.git`, `.hg` or `.yarn` is the tool's to make (`git init`); what changes
        // what runs inside an existing one is not.
        for (directory, inside) in PROTECTED_INSIDE {
            if absent(directory) {
                continue;
            }
            let directory = root.join(directory);
            if is_real_directory(&directory) {
                for part in *inside {
                    self.protect(&directory.join(part));
                }
            }
        }
        if !absent(".git") {
            self.protect_submodules(&root.join(".git"));
        }
        for name in PROTECTED_DIRECTORIES
            .iter()
            .chain(PROTECTED_FILES)
            .filter(|name| !PROTECTED_INSIDE.iter().any(|(inside, _)| inside == *name))
        {
            let path = root.join(name);
            if absent(name) {
                self.absent(&path);
            } else {
                self.protect(&path);
            }
        }
    }

    /// A protected name found below the top of a root: read-only, or for `.git`, `.hg` and
    /// `.yarn` what changes what runs inside them.
    fn protect_nested(&mut self, path: &Path) {
        let inside = PROTECTED_INSIDE
            .iter()
            .find(|(name, _)| path.file_name().is_some_and(|found| found == *name));
        match inside {
            Some((_, parts)) => {
                if is_real_directory(path) {
                    for part in *parts {
                        self.guard_link(&path.join(part));
                        self.read_only(&path.join(part));
                    }
                    self.protect_submodules(path);
                }
            }
            None => {
                self.guard_link(path);
                self.read_only(path);
            }
        }
    }

    /// Guards `path` against being replaced when it is a symbolic link (its target is made
    /// read-only through it; the link itself lies in a writable directory).
    fn guard_link(&mut self, path: &Path) {
        self.guarded.extend(Guarded::link(path));
    }

    /// The canonical target of a link when it lies strictly inside a root: a link to a root
    /// itself, to a directory above one or to anything outside would turn a mount on it into
    /// a read-only workspace or a masked `/usr` (a command can make such links).
    fn followed(&self, link: &Path) -> Option<PathBuf> {
        let target = std::fs::canonicalize(link).ok()?;
        self.roots
            .iter()
            .any(|root| target.starts_with(root) && target != *root)
            .then_some(target)
    }

    /// The hooks and configuration of the submodules' repositories in `git_directory/modules`:
    /// they run with `git` inside a submodule (and with `git status` in the repository above).
    fn protect_submodules(&mut self, git_directory: &Path) {
        for repository in submodule_repositories(&git_directory.join("modules")) {
            for part in ["hooks", "config"] {
                self.guard_link(&repository.join(part));
                self.read_only(&repository.join(part));
            }
        }
    }

    /// The paths the plan makes read-only.
    fn read_only_paths(&self) -> Vec<PathBuf> {
        self.mounts
            .iter()
            .filter(|mount| matches!(mount.how, How::ReadOnly { .. }))
            .map(|mount| PathBuf::from(std::ffi::OsStr::from_bytes(mount.target.as_bytes())))
            .collect()
    }

    /// The protected paths that did not exist or were symbolic links when the plan was made:
    /// the command must not leave anything else there behind (`set_aside`).
    pub fn guarded(&self) -> &[Guarded] {
        &self.guarded
    }

    /// A protected path: read-only when it exists (its target, for a symbolic link, which is
    /// also guarded against being replaced), remembered when it does not.
    fn protect(&mut self, path: &Path) {
        match std::fs::symlink_metadata(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => self.absent(path),
            _ => {
                self.guard_link(path);
                self.read_only(path);
            }
        }
    }

    /// A protected path that does not exist: remembered, to be set aside if a command makes
    /// it (except what tools make themselves).
    fn absent(&mut self, path: &Path) {
        let made_by_tools = path
            .file_name()
            .is_some_and(|name| MADE_BY_TOOLS.iter().any(|made| name == *made));
        if !made_by_tools {
            self.guarded.push(Guarded::absent(path));
        }
    }

    /// Makes `path` read-only; a symbolic link as the rules read it, through its target (a
    /// mount on the link's name would land on the target anyway, and the name itself lies in a
    /// writable directory).
    fn read_only(&mut self, path: &Path) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            if let Some(target) = self.followed(path) {
                self.read_only(&target);
            }
            return;
        }
        let Some(target) = c_path(path) else {
            return;
        };
        let locked = super::root::locked_flags(path);
        self.push(target, How::ReadOnly { locked });
    }

    /// Masks `path`; a symbolic link through its target, which a `Read` deny covers as the
    /// decision does (either name denies).
    fn mask(&mut self, path: &Path) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            if let Some(target) = self.followed(path) {
                self.mask(&target);
            }
            return;
        }
        let how = if meta.is_dir() {
            How::MaskDirectory
        } else if meta.is_file() {
            How::MaskFile
        } else {
            return;
        };
        if let Some(target) = c_path(path) {
            self.push(target, how);
        }
    }

    fn push(&mut self, target: CString, how: How) {
        let masks = matches!(how, How::MaskFile | How::MaskDirectory);
        match self.mounts.iter_mut().find(|mount| mount.target == target) {
            // A Read deny on a protected path (`.npmrc`, `.git/config`): the mask, read-only
            // itself, hides what a read-only bind would show.
            Some(mount) if masks => mount.how = how,
            Some(_) => {}
            None => self.mounts.push(Mount { target, how }),
        }
    }

    /// Makes the mounts. Runs in the child, in a fresh mount namespace, between fork and exec:
    /// only system calls on data prepared above. A target that vanished since is skipped.
    pub fn apply(&self) -> std::io::Result<()> {
        let fail = std::io::Error::last_os_error;
        let none = std::ptr::null::<libc::c_char>();
        // SAFETY: `mount` on NUL-terminated buffers owned by `self` and static strings.
        unsafe {
            if libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) == -1
            {
                return Err(fail());
            }
            // Pins first (parents before children), then read-only mounts, then masks, which
            // may lie under them.
            let mut pins: Vec<&Mount> = self
                .mounts
                .iter()
                .filter(|mount| mount.how == How::Pin)
                .collect();
            pins.sort_by_key(|mount| mount.target.as_bytes().len());
            let ordered = pins
                .into_iter()
                .chain(
                    self.mounts
                        .iter()
                        .filter(|mount| matches!(mount.how, How::ReadOnly { .. })),
                )
                .chain(
                    self.mounts
                        .iter()
                        .filter(|mount| matches!(mount.how, How::MaskFile | How::MaskDirectory)),
                );
            for mount in ordered {
                let target = mount.target.as_ptr();
                let bound_onto_itself = || {
                    libc::mount(
                        target,
                        target,
                        none,
                        libc::MS_BIND | libc::MS_REC,
                        std::ptr::null(),
                    ) != -1
                };
                let done = match mount.how {
                    How::ReadOnly { locked } => {
                        bound_onto_itself()
                            && super::root::seal_read_only(&mount.target, locked).is_ok()
                    }
                    // Read-only, so that `chmod`, `touch` or an extended attribute on the masked
                    // name cannot reach `/dev/null`'s own inode (writes still go to the device).
                    How::MaskFile => {
                        libc::mount(
                            c"/dev/null".as_ptr(),
                            target,
                            none,
                            libc::MS_BIND,
                            std::ptr::null(),
                        ) != -1
                            && super::root::seal_read_only(&mount.target, self.null_locked).is_ok()
                    }
                    How::MaskDirectory => {
                        libc::mount(
                            c"tmpfs".as_ptr(),
                            target,
                            c"tmpfs".as_ptr(),
                            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                            c"size=4k,mode=0500".as_ptr().cast(),
                        ) != -1
                    }
                    How::Pin => bound_onto_itself(),
                };
                if !done && *libc::__errno_location() != libc::ENOENT {
                    return Err(fail());
                }
            }
        }
        Ok(())
    }
}

/// The protected names (`PROTECTED_DIRECTORIES`, `PROTECTED_FILES`) in the directories from
/// one to [`NESTED_DEPTH`] levels below `root`, outside [`NOT_SEARCHED`] trees and the
/// protected directories themselves, reading at most [`NESTED_ENTRIES`] entries. Only names and
/// entry types are read: no metadata, so the search costs about a microsecond per entry.
fn nested_protected(root: &Path) -> Vec<PathBuf> {
    let protected = |name: &std::ffi::OsStr| {
        PROTECTED_DIRECTORIES
            .iter()
            .chain(PROTECTED_FILES)
            .any(|protected| name == *protected)
    };
    let mut found = Vec::new();
    read_levels(root, NESTED_DEPTH + 1, |depth, entry| {
        let name = entry.file_name();
        if protected(&name) {
            // The top's are the plan's already (`protect_in`).
            if depth > 0 {
                found.push(entry.path());
            }
            None
        } else {
            (depth < NESTED_DEPTH
                && !NOT_SEARCHED.iter().any(|skip| name == *skip)
                && entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .then(|| entry.path())
        }
    });
    found
}

/// The repositories under a `.git/modules` directory: each directory holding `HEAD`, and those
/// of its own submodules (its `modules/`); bounded by [`MODULES_DEPTH`] and [`NESTED_ENTRIES`].
fn submodule_repositories(modules: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    if !is_real_directory(modules) {
        return found;
    }
    read_levels(modules, MODULES_DEPTH, |_, entry| {
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            return None;
        }
        let path = entry.path();
        if path.join("HEAD").is_file() {
            let inner = path.join("modules");
            found.push(path);
            is_real_directory(&inner).then_some(inner)
        } else {
            Some(path)
        }
    });
    found
}

/// Reads `start` and the directories `visit` asks for, level by level: `levels` levels at most
/// and [`NESTED_ENTRIES`] entries in all. `visit` gets each entry with its level (0: the
/// entries of `start`) and returns the directory to read at the next level, if any.
fn read_levels(
    start: &Path,
    levels: usize,
    mut visit: impl FnMut(usize, &std::fs::DirEntry) -> Option<PathBuf>,
) {
    let mut level = vec![start.to_path_buf()];
    let mut read = 0;
    for depth in 0..levels {
        let mut next = Vec::new();
        for directory in &level {
            let Ok(entries) = std::fs::read_dir(directory) else {
                continue;
            };
            for entry in entries.flatten() {
                read += 1;
                if read > NESTED_ENTRIES {
                    return;
                }
                next.extend(visit(depth, &entry));
            }
        }
        level = next;
    }
}

fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

fn is_real_directory(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

/// The device and inode of every multiply linked regular file among `paths` and under those
/// that are directories (a bounded walk each).
fn linked_files(paths: &[PathBuf]) -> Vec<(u64, u64)> {
    let mut linked = Vec::new();
    let mut note = |meta: &std::fs::Metadata| {
        if meta.is_file() && meta.nlink() > 1 && !linked.contains(&(meta.dev(), meta.ino())) {
            linked.push((meta.dev(), meta.ino()));
        }
    };
    for path in paths {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        if meta.is_dir() {
            walk(path, |_, entry| {
                if entry.file_type().is_ok_and(|kind| kind.is_file())
                    && let Ok(meta) = entry.metadata()
                {
                    note(&meta);
                }
                false
            });
        } else {
            note(&meta);
        }
    }
    linked
}

/// The existing paths `reach` covers.
fn found(reach: &Reach) -> Vec<PathBuf> {
    match reach {
        Reach::Path(path) | Reach::Tree(path) => vec![path.clone()],
        Reach::Named { under, name, tree } => walk(under, |path, entry| {
            path.file_name() == Some(std::ffi::OsStr::new(name))
                && (!*tree || entry.file_type().is_ok_and(|kind| kind.is_dir()))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_names_are_found_three_levels_down_outside_tool_trees() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path();
        let cases = [
            ("a/.envrc", true),
            ("a/b/c/.envrc", true),
            ("a/b/c/d/.envrc", false),
            ("node_modules/pkg/.npmrc", false),
            ("target/debug/.cargo", false),
            (".janua/inner/.envrc", false),
            ("a/b/notes.txt", false),
        ];
        for (path, _) in cases {
            let path = base.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "").unwrap();
        }
        std::fs::create_dir_all(base.join("vendor/tool/.git/modules/lib/hooks")).unwrap();
        std::fs::write(base.join("vendor/tool/.git/modules/lib/HEAD"), "").unwrap();
        let found = nested_protected(base);
        for (path, expected) in cases {
            assert_eq!(
                found.contains(&base.join(path)),
                expected,
                "{path}: {found:?}"
            );
        }
        assert!(found.contains(&base.join("vendor/tool/.git")), "{found:?}");
        assert_eq!(
            submodule_repositories(&base.join("vendor/tool/.git/modules")),
            [base.join("vendor/tool/.git/modules/lib")]
        );
    }

    #[test]
    fn a_plan_covers_protected_paths_and_deny_rules_that_exist() {
        let root = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(root.path()).unwrap();
        for dir in [
            ".git/hooks",
            "deep/er",
            "secrets",
            "gen",
            ".hg/store",
            ".yarn/cache",
            ".yarn/releases",
            "config/secrets",
        ] {
            std::fs::create_dir_all(ws.join(dir)).unwrap();
        }
        for file in [
            ".git/config",
            ".env",
            "deep/er/.env",
            ".mcp.json",
            ".hg/hgrc",
        ] {
            std::fs::write(ws.join(file), "x").unwrap();
        }
        std::fs::write(ws.join("env.real"), "x").unwrap();
        std::os::unix::fs::symlink("env.real", ws.join(".envrc")).unwrap();
        std::fs::write(ws.join("secret.real"), "x").unwrap();
        std::os::unix::fs::symlink("../secret.real", ws.join("deep/.env")).unwrap();
        // Links a command could make to turn a mount into a read-only workspace or a masked
        // `/usr`: not followed.
        std::os::unix::fs::symlink(&ws, ws.join(".vscode")).unwrap();
        std::os::unix::fs::symlink("later", ws.join(".claude")).unwrap();
        std::fs::create_dir_all(ws.join("other")).unwrap();
        std::os::unix::fs::symlink("/usr", ws.join("other/.env")).unwrap();
        let rules = ViewRules {
            roots: vec![ws.clone()],
            enforceable: Enforceable {
                hidden: vec![
                    Reach::Named {
                        under: ws.clone(),
                        name: ".env".into(),
                        tree: false,
                    },
                    Reach::Tree(ws.join("secrets")),
                    Reach::Tree(ws.join("config/secrets")),
                    // A protected path that a Read deny also names.
                    Reach::Path(ws.join(".hg/hgrc")),
                ],
                read_only: vec![Reach::Tree(ws.join("gen")), Reach::Path(ws.join("absent"))],
                decision_only: Vec::new(),
            },
        };
        let plan = MountPlan::build(&rules);
        let listed: Vec<(String, How)> = plan
            .mounts
            .iter()
            .map(|mount| {
                let path = PathBuf::from(std::ffi::OsStr::from_bytes(mount.target.as_bytes()));
                let relative = path
                    .strip_prefix(&ws)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let how = match mount.how {
                    How::ReadOnly { .. } => How::ReadOnly { locked: 0 },
                    other => other,
                };
                (relative, how)
            })
            .collect();
        let read_only = How::ReadOnly { locked: 0 };
        for expected in [
            (".git/hooks", read_only),
            (".git/config", read_only),
            (".mcp.json", read_only),
            (".hg/hgrc", How::MaskFile),
            ("config/secrets", How::MaskDirectory),
            // A hidden tree's parents cannot be renamed to show it under another name.
            ("config", How::Pin),
            (".yarn/releases", read_only),
            ("gen", read_only),
            (".env", How::MaskFile),
            ("deep/er/.env", How::MaskFile),
            // A link is read as the rules read it: through its target.
            ("env.real", read_only),
            ("secret.real", How::MaskFile),
            ("secrets", How::MaskDirectory),
        ] {
            assert!(
                listed.contains(&(expected.0.to_owned(), expected.1)),
                "{expected:?} in {listed:?}"
            );
        }
        assert!(
            !listed
                .iter()
                .any(|(path, _)| path == ".envrc" || path == "deep/.env" || path == "absent"),
            "links and missing paths are not mounted: {listed:?}"
        );
        assert!(
            !listed.iter().any(|(path, _)| path.is_empty()),
            "a link to the workspace itself is not followed: {listed:?}"
        );
        assert!(
            !plan
                .mounts
                .iter()
                .any(|mount| mount.target.as_bytes() == b"/usr"),
            "a link out of the roots is not followed"
        );
        let link = plan
            .guarded()
            .iter()
            .find(|guarded| guarded.path() == ws.join(".envrc"))
            .expect("a protected link is guarded");
        assert!(link.unchanged());
        std::fs::remove_file(ws.join(".envrc")).unwrap();
        std::fs::write(ws.join(".envrc"), "planted").unwrap();
        assert!(!link.unchanged(), "a file in the link's place is a change");
        let dangling = plan
            .guarded()
            .iter()
            .find(|guarded| guarded.path() == ws.join(".claude"))
            .expect("a dangling protected link is guarded");
        assert!(dangling.unchanged());
        std::fs::create_dir(ws.join("later")).unwrap();
        assert!(
            !dangling.unchanged(),
            "a dangling link made to lead somewhere"
        );
        assert!(
            !listed.iter().any(|(path, how)| *how != How::Pin
                && [".git", ".hg", ".yarn", ".yarn/cache"].contains(&path.as_str())),
            "a tool's working state stays writable: {listed:?}"
        );
        for pinned in [".git", ".hg", ".yarn"] {
            assert!(
                listed.contains(&(pinned.to_owned(), How::Pin)),
                "{pinned} cannot be renamed away: {listed:?}"
            );
        }
    }

    #[test]
    fn every_other_name_of_a_read_only_file_is_read_only_too() {
        let root = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(root.path()).unwrap();
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(ws.join("notes")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]").unwrap();
        std::fs::write(ws.join(".git/hooks/pre-commit"), "#!/bin/sh").unwrap();
        std::fs::write(ws.join("plain.txt"), "x").unwrap();
        std::fs::hard_link(ws.join(".git/config"), ws.join("gc")).unwrap();
        std::fs::hard_link(ws.join(".git/hooks/pre-commit"), ws.join("notes/hook")).unwrap();
        std::fs::hard_link(ws.join("plain.txt"), ws.join("notes/plain")).unwrap();
        let plan = MountPlan::build(&ViewRules {
            roots: vec![ws.clone()],
            enforceable: Enforceable::default(),
        });
        let read_only = plan.read_only_paths();
        for expected in ["gc", "notes/hook", ".git/config", ".git/hooks"] {
            assert!(
                read_only.contains(&ws.join(expected)),
                "{expected}: {read_only:?}"
            );
        }
        assert!(
            !read_only.contains(&ws.join("notes/plain")),
            "{read_only:?}"
        );
    }
}
