//! The home a sandboxed command sees: a private `HOME` in the session's temporary directory with
//! a `.gitconfig` holding only the operator's `user.name` and `user.email`, and the toolchains on
//! `PATH` readable and executable, never writable (issue 31, point 4).
//!
//! The host's home stays unreadable: `~/.ssh`, `~/.aws`, `~/.config/gh`, `~/.netrc`, `~/.docker`
//! and the host's own `.gitconfig` (whose `core.hooksPath`, `core.fsmonitor` or aliases would run
//! programs) are never in the read set. A `PATH` entry under the host's home is readable by
//! itself; for the toolchain managers below, their root too, since their programs live beside
//! `bin/` (rustup's toolchains, pyenv's versions, nvm's node modules).

use std::path::{Path, PathBuf};

/// Directories under a home that never become readable, even when `PATH` names them.
const CREDENTIALS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".docker",
    ".kube",
    ".netrc",
    ".config/gh",
    ".config/gcloud",
    ".azure",
    ".password-store",
    ".local/share/keyrings",
];

/// Toolchain managers whose root (the parent of the `PATH` entry) a command needs, with the
/// variable that names the root when `HOME` moves.
const TOOLCHAIN_ROOTS: &[(&str, Option<&str>)] = &[
    (".cargo", Some("CARGO_HOME")),
    (".pyenv", Some("PYENV_ROOT")),
    (".rbenv", Some("RBENV_ROOT")),
    (".nodenv", Some("NODENV_ROOT")),
    (".volta", Some("VOLTA_HOME")),
    (".bun", Some("BUN_INSTALL")),
    (".deno", Some("DENO_INSTALL")),
];

/// The operator's git identity, the only part of their git configuration a command sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitIdentity {
    /// `user.name`.
    pub name: Option<String>,
    /// `user.email`.
    pub email: Option<String>,
}

impl GitIdentity {
    /// The host's global `user.name` and `user.email`, read with the host's `git` (`None`s when
    /// git or the values are missing).
    pub fn of_host() -> Self {
        // From `/`, so no repository's own configuration is even looked at.
        let output = std::process::Command::new("git")
            .current_dir("/")
            .args([
                "config",
                "--global",
                "--get-regexp",
                r"^user\.(name|email)$",
            ])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        let mut identity = Self::default();
        let Ok(output) = output else {
            return identity;
        };
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            match line.split_once(' ') {
                Some(("user.name", value)) => identity.name = Some(value.to_owned()),
                Some(("user.email", value)) => identity.email = Some(value.to_owned()),
                _ => {}
            }
        }
        identity
    }

    /// The `.gitconfig` a command gets: the identity, quoted, and nothing else. Values with
    /// control characters are left out.
    fn gitconfig(&self) -> String {
        let quoted = |value: &str| {
            let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
            format!("\"{escaped}\"")
        };
        let mut text =
            String::from("# Written by janua: the operator's git identity only.\n[user]\n");
        for (key, value) in [("name", &self.name), ("email", &self.email)] {
            if let Some(value) = value
                .as_deref()
                .filter(|v| !v.chars().any(char::is_control))
            {
                text.push_str(&format!("\t{key} = {}\n", quoted(value)));
            }
        }
        text
    }
}

/// What a child gets from its home: the environment to set and the directories to read.
#[derive(Debug, Clone, Default)]
pub struct ChildHome {
    /// `HOME` and the toolchain variables.
    pub env: Vec<(String, String)>,
    /// Toolchain directories: readable and executable.
    pub read_dirs: Vec<PathBuf>,
    /// Whether every `PATH` entry existed: when one did not, a later look may find more.
    pub complete: bool,
}

/// Makes `<temp_dir>/home/.gitconfig` hold the identity again if a command changed it; before
/// every command, so none leaves git configuration for the next (`GIT_CONFIG_GLOBAL` in
/// [`toolchains`]' environment points git at this file alone, not at `~/.config/git/config`).
pub fn reset(temp_dir: &Path, identity: &GitIdentity) -> std::io::Result<()> {
    std::fs::create_dir_all(temp_dir)?;
    write_gitconfig(temp_dir, identity.gitconfig().as_bytes())
}

/// The home's environment and the toolchains on `path` (the child's `PATH`) a child of
/// `temp_dir` may read; `host_home` is the host's `HOME`. Reads only the host's directories, which
/// no confined command can change, so a session may keep the answer for one `path`.
pub fn toolchains(
    temp_dir: &Path,
    host_home: Option<&Path>,
    path: &str,
    host_env: &dyn Fn(&str) -> Option<String>,
) -> ChildHome {
    let home = temp_dir.join("home");
    let mut child = ChildHome {
        env: vec![
            ("HOME".to_owned(), home.to_string_lossy().into_owned()),
            (
                "GIT_CONFIG_GLOBAL".to_owned(),
                home.join(".gitconfig").to_string_lossy().into_owned(),
            ),
        ],
        read_dirs: Vec::new(),
        complete: true,
    };
    let host_home = host_home.and_then(|dir| std::fs::canonicalize(dir).ok());
    let is_root = |parent: &Path| {
        parent.file_name().is_some_and(|name| {
            TOOLCHAIN_ROOTS
                .iter()
                .any(|(root, _)| name == std::ffi::OsStr::new(root))
        }) || is_nvm_version(parent)
    };
    for given in std::env::split_paths(path) {
        let Ok(entry) = std::fs::canonicalize(&given) else {
            child.complete = false;
            continue;
        };
        if !readable(&entry, host_home.as_deref()) {
            continue;
        }
        // The names `PATH` gives, when a link leads elsewhere (`~/.cargo` -> `/data/cargo`):
        // bound there as well, so the entry and its toolchain resolve inside the sandbox.
        let named = Some(given.as_path())
            .filter(|named| named.is_absolute() && *named != entry)
            .filter(|named| readable(named, host_home.as_deref()));
        let named_root = named
            .and_then(Path::parent)
            .filter(|parent| is_root(parent) && readable(parent, host_home.as_deref()));
        // Where the link leads must be as readable as any entry: not `/`, the home or a
        // credential store.
        let canonical_root = named_root
            .and_then(|root| std::fs::canonicalize(root).ok())
            .filter(|root| readable(root, host_home.as_deref()));
        let named_root = named_root.filter(|_| canonical_root.is_some());
        let root = entry
            .parent()
            .filter(|parent| is_root(parent))
            .or(canonical_root.as_deref());
        if let Some(named) = named {
            add(
                &mut child.read_dirs,
                named_root.unwrap_or(named).to_path_buf(),
            );
        }
        if let Some(root) = root {
            // Named as `PATH` names it (`.cargo`, whatever the link's target is called).
            let named_as = named_root.unwrap_or(root);
            let name = named_as.file_name().unwrap_or_default().to_string_lossy();
            if let Some((_, Some(variable))) = TOOLCHAIN_ROOTS.iter().find(|(n, _)| *n == name) {
                set(&mut child.env, variable, named_as);
            }
            if name == ".cargo" {
                // rustup's toolchains: the host's RUSTUP_HOME, else `.rustup` beside `.cargo`.
                let rustup = host_env("RUSTUP_HOME")
                    .map(PathBuf::from)
                    .or_else(|| named_as.parent().map(|parent| parent.join(".rustup")))
                    .and_then(|dir| std::fs::canonicalize(dir).ok())
                    .filter(|dir| readable(dir, host_home.as_deref()));
                if let Some(rustup) = rustup {
                    set(&mut child.env, "RUSTUP_HOME", &rustup);
                    add(&mut child.read_dirs, rustup);
                }
            }
            add(&mut child.read_dirs, root.to_path_buf());
        } else {
            add(&mut child.read_dirs, entry);
        }
    }
    child
}

/// Writes `<temp_dir>/home/.gitconfig` without following anything a command left there: the
/// temporary directory is writable by the session's commands, which may have replaced `home` or
/// `.gitconfig` with a symlink (or `.gitconfig` with a hard link to a workspace file) to make
/// janua, which runs unconfined, write elsewhere. `home` is opened without following links (a
/// link is removed and the directory made again); a `.gitconfig` that already holds exactly
/// these bytes, as a regular file with no other link, is kept; otherwise it is unlinked and the
/// new one created exclusively, and a command racing to put something back makes the spawn fail.
fn write_gitconfig(temp_dir: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
    use std::os::unix::ffi::OsStrExt as _;
    let last_error = std::io::Error::last_os_error;
    let c_path = |path: &Path| {
        std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let temp = c_path(temp_dir)?;
    let home = c"home";
    let file = c".gitconfig";
    // SAFETY: plain system calls on C strings that outlive them and descriptors owned here.
    unsafe {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
        let temp_fd = libc::open(temp.as_ptr(), flags);
        if temp_fd == -1 {
            return Err(last_error());
        }
        let temp_fd = OwnedFd::from_raw_fd(temp_fd);
        let mut home_fd = -1;
        for _ in 0..2 {
            if libc::mkdirat(temp_fd.as_raw_fd(), home.as_ptr(), 0o700) == -1
                && std::io::Error::last_os_error().kind() != std::io::ErrorKind::AlreadyExists
            {
                return Err(last_error());
            }
            home_fd = libc::openat(temp_fd.as_raw_fd(), home.as_ptr(), flags | libc::O_NOFOLLOW);
            if home_fd != -1 {
                break;
            }
            // A symlink or a file where the directory belongs: remove it and make it again.
            libc::unlinkat(temp_fd.as_raw_fd(), home.as_ptr(), 0);
        }
        if home_fd == -1 {
            return Err(last_error());
        }
        let home_fd = OwnedFd::from_raw_fd(home_fd);
        if holds_exactly(&home_fd, file, bytes) {
            return Ok(());
        }
        if libc::unlinkat(home_fd.as_raw_fd(), file.as_ptr(), 0) == -1
            && std::io::Error::last_os_error().kind() != std::io::ErrorKind::NotFound
        {
            // A directory named `.gitconfig`: leave it; git will not read it as config.
            return Err(last_error());
        }
        let created = libc::openat(
            home_fd.as_raw_fd(),
            file.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o644,
        );
        if created == -1 {
            return Err(last_error());
        }
        std::fs::File::from_raw_fd(created).write_all(bytes)
    }
}

/// True when `dir/name` is a regular file with no other link holding exactly `bytes`: then
/// rewriting it would change nothing (a hard link from elsewhere could change it later, so such
/// a file is always replaced). Reading is cheaper than replacing: an unlink and an exclusive
/// create cost ≈0.1 ms of every `Bash` call (issue 33).
fn holds_exactly(dir: &std::os::fd::OwnedFd, name: &std::ffi::CStr, bytes: &[u8]) -> bool {
    use std::io::Read as _;
    use std::os::fd::{AsRawFd as _, FromRawFd as _};
    use std::os::unix::fs::MetadataExt as _;
    // SAFETY: `openat` on a descriptor owned by the caller and a C string; the new descriptor
    // is owned by the `File` at once.
    let file = unsafe {
        let fd = libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        );
        if fd == -1 {
            return false;
        }
        std::fs::File::from_raw_fd(fd)
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if !meta.is_file() || meta.nlink() != 1 || meta.len() != bytes.len() as u64 {
        return false;
    }
    let mut held = Vec::with_capacity(bytes.len() + 1);
    file.take(bytes.len() as u64 + 1)
        .read_to_end(&mut held)
        .is_ok_and(|_| held == bytes)
}

/// True for `…/.nvm/versions/node/vX`.
fn is_nvm_version(dir: &Path) -> bool {
    dir.parent()
        .is_some_and(|node| node.ends_with(".nvm/versions/node"))
}

/// A `PATH` directory may be read unless it is the root, the host's home or a directory above
/// it, or lies in or above a credential store.
fn readable(dir: &Path, host_home: Option<&Path>) -> bool {
    if dir == Path::new("/") {
        return false;
    }
    let Some(home) = host_home else {
        return true;
    };
    if home.starts_with(dir) {
        return false;
    }
    // Neither inside a credential store nor above one (`~/.config` holds `~/.config/gh`).
    !CREDENTIALS.iter().any(|store| {
        let store = home.join(store);
        dir.starts_with(&store) || store.starts_with(dir)
    })
}

fn set(env: &mut Vec<(String, String)>, name: &str, value: &Path) {
    env.retain(|(existing, _)| existing != name);
    env.push((name.to_owned(), value.to_string_lossy().into_owned()));
}

fn add(dirs: &mut Vec<PathBuf>, dir: PathBuf) {
    if !dirs.contains(&dir) {
        dirs.push(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command may leave a symlink or a hard link where janua writes the `.gitconfig`; janua
    /// (unconfined) must replace it, never write through it.
    #[test]
    fn the_gitconfig_is_never_written_through_a_link() {
        let root = tempfile::tempdir().unwrap();
        let temp = root.path().join("tmp");
        let victim_dir = root.path().join("victim");
        std::fs::create_dir_all(temp.join("home")).unwrap();
        std::fs::create_dir_all(&victim_dir).unwrap();
        let victim = victim_dir.join("config");
        std::fs::write(&victim, "original\n").unwrap();
        std::fs::hard_link(&victim, temp.join("home/.gitconfig")).unwrap();
        write_gitconfig(&temp, b"[user]\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original\n");
        std::fs::remove_file(temp.join("home/.gitconfig")).unwrap();
        std::os::unix::fs::symlink(&victim, temp.join("home/.gitconfig")).unwrap();
        write_gitconfig(&temp, b"[user]\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original\n");
        std::fs::remove_dir_all(temp.join("home")).unwrap();
        std::os::unix::fs::symlink(&victim_dir, temp.join("home")).unwrap();
        write_gitconfig(&temp, b"[user]\n").unwrap();
        assert!(!victim_dir.join(".gitconfig").exists());
        assert!(temp.join("home").is_dir() && !temp.join("home").is_symlink());
        assert_eq!(
            std::fs::read_to_string(temp.join("home/.gitconfig")).unwrap(),
            "[user]\n"
        );
    }

    /// The file is rewritten only when a command changed it; an unchanged one is kept as is,
    /// and one with a second link is replaced even when its bytes match.
    #[test]
    fn the_gitconfig_is_rewritten_only_when_a_command_changed_it() {
        use std::os::unix::fs::MetadataExt as _;
        let root = tempfile::tempdir().unwrap();
        let temp = root.path().join("tmp");
        std::fs::create_dir_all(&temp).unwrap();
        let config = temp.join("home/.gitconfig");
        let inode = || std::fs::symlink_metadata(&config).unwrap().ino();
        let wanted = b"[user]\n\tname = \"A\"\n";
        write_gitconfig(&temp, wanted).unwrap();
        let first = inode();
        write_gitconfig(&temp, wanted).unwrap();
        assert_eq!(inode(), first, "an unchanged file was replaced");
        for edited in [
            &b"[user]\n\tname = \"B\"\n"[..],
            b"[core]\n\thooksPath = /x\n",
            b"",
        ] {
            std::fs::write(&config, edited).unwrap();
            write_gitconfig(&temp, wanted).unwrap();
            assert_eq!(std::fs::read(&config).unwrap(), wanted);
        }
        // Same bytes, but a workspace file linked to it could change it before the next
        // command: replaced, and the other link keeps its own copy.
        let outside = root.path().join("outside");
        std::fs::write(&outside, wanted).unwrap();
        std::fs::remove_file(&config).unwrap();
        std::fs::hard_link(&outside, &config).unwrap();
        write_gitconfig(&temp, wanted).unwrap();
        assert_eq!(std::fs::symlink_metadata(&config).unwrap().nlink(), 1);
        assert_ne!(inode(), std::fs::metadata(&outside).unwrap().ino());
    }

    #[test]
    fn the_gitconfig_holds_only_a_quoted_identity() {
        let identity = GitIdentity {
            name: Some("A \"B\" \\ C".to_owned()),
            email: Some("bad\n[core]\n\thooksPath = /x".to_owned()),
        };
        let text = identity.gitconfig();
        assert!(text.contains("\tname = \"A \\\"B\\\" \\\\ C\"\n"), "{text}");
        assert!(!text.contains("hooksPath"), "{text}");
    }

    #[test]
    fn path_entries_reached_through_links_are_bound_at_both_names() {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let home = base.join("home");
        for dir in ["home", "data/cargo/bin", "data/tools/bin"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        std::os::unix::fs::symlink(base.join("data/cargo"), home.join(".cargo")).unwrap();
        std::os::unix::fs::symlink(base.join("data/tools"), home.join("tools")).unwrap();
        let path = format!(
            "{}:{}",
            home.join(".cargo/bin").display(),
            home.join("tools/bin").display()
        );
        let temp = base.join("tmp");
        reset(&temp, &GitIdentity::default()).unwrap();
        let child = toolchains(&temp, Some(&home), &path, &|_| None);
        assert!(child.complete);
        for dir in [
            home.join(".cargo"),
            base.join("data/cargo"),
            home.join("tools/bin"),
            base.join("data/tools/bin"),
        ] {
            assert!(
                child.read_dirs.contains(&dir),
                "{dir:?} in {:?}",
                child.read_dirs
            );
        }
        let env: std::collections::BTreeMap<_, _> = child.env.into_iter().collect();
        assert!(env.contains_key("CARGO_HOME"), "{env:?}");
        // A toolchain name leading to a credential store is not followed there.
        let elsewhere = base.join("elsewhere");
        std::fs::create_dir_all(home.join(".config/gh")).unwrap();
        std::fs::create_dir_all(home.join(".config/bin")).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(home.join(".config"), elsewhere.join(".pyenv")).unwrap();
        let path = format!("{}", elsewhere.join(".pyenv/bin").display());
        let child = toolchains(&temp, Some(&home), &path, &|_| None);
        assert!(
            !child
                .read_dirs
                .iter()
                .any(|dir| home.join(".config/gh").starts_with(dir)),
            "{:?}",
            child.read_dirs
        );
    }

    #[test]
    fn toolchains_on_path_are_readable_and_credentials_never() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        for dir in [
            ".cargo/bin",
            ".rustup/toolchains",
            ".local/bin",
            ".ssh",
            ".nvm/versions/node/v20/bin",
            ".pyenv/shims",
        ] {
            std::fs::create_dir_all(home.join(dir)).unwrap();
        }
        let path = std::env::join_paths(
            [
                ".cargo/bin",
                ".local/bin",
                ".ssh",
                "",
                ".nvm/versions/node/v20/bin",
                ".pyenv/shims",
            ]
            .iter()
            .map(|dir| home.join(dir)),
        )
        .unwrap();
        let temp = root.path().join("tmp");
        reset(&temp, &GitIdentity::default()).unwrap();
        let child = toolchains(&temp, Some(&home), &path.to_string_lossy(), &|_| None);
        assert!(child.complete, "every entry exists");
        let missing = format!(
            "{}:{}",
            path.to_string_lossy(),
            home.join("absent").display()
        );
        assert!(
            !toolchains(&temp, Some(&home), &missing, &|_| None).complete,
            "a missing entry on PATH went unnoticed"
        );
        let home = std::fs::canonicalize(&home).unwrap();
        let mut read = child.read_dirs;
        read.sort();
        let mut expected: Vec<PathBuf> = [
            ".cargo",
            ".rustup",
            ".local/bin",
            ".nvm/versions/node/v20",
            ".pyenv",
        ]
        .iter()
        .map(|dir| home.join(dir))
        .collect();
        expected.sort();
        assert_eq!(read, expected, "neither .ssh nor the home itself");
        let env: std::collections::BTreeMap<_, _> = child.env.into_iter().collect();
        assert_eq!(env["HOME"], temp.join("home").to_string_lossy());
        assert_eq!(
            env["GIT_CONFIG_GLOBAL"],
            temp.join("home/.gitconfig").to_string_lossy()
        );
        for (dir, allowed) in [
            (".config", false),
            (".local/share", false),
            (".local/share/keyrings/x", false),
            (".local/bin", true),
            (".config/nvim", true),
        ] {
            assert_eq!(readable(&home.join(dir), Some(&home)), allowed, "{dir}");
        }
        assert_eq!(env["CARGO_HOME"], home.join(".cargo").to_string_lossy());
        assert_eq!(env["RUSTUP_HOME"], home.join(".rustup").to_string_lossy());
        assert_eq!(env["PYENV_ROOT"], home.join(".pyenv").to_string_lossy());
        assert!(temp.join("home/.gitconfig").is_file());
    }
}
