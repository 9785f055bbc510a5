//! What a call presents to rules: a split command line, a path (as spelled and as the filesystem
//! resolves it), a URL's host, or the tool's rule-field value. This is the one place the decision
//! touches the disk: to resolve symlinks, and to read the shell scripts a command line runs
//! (`sh FILE`, `source FILE`, `./FILE`), which are read like a code string.

mod candidates;
mod command;
mod files;

use std::path::Path;

use serde_json::Value;

use super::rules::{Family, is_shell_tool, is_url_tool};
use janua_types::url_host;

pub use candidates::PathCandidates;
pub use command::CommandTarget;

/// What rules are matched against for one call.
#[derive(Debug, Clone)]
pub enum Target {
    /// The tool has no rule field, or the call left it out.
    None,
    /// A shell command line.
    Command(Box<CommandTarget>),
    /// A file path.
    Path(PathCandidates),
    /// A URL.
    Url {
        /// The URL as given.
        url: String,
        /// Its host, when it has one.
        host: Option<String>,
    },
    /// Any other rule-field value.
    Field(String),
}

impl Target {
    /// The target of a call to `tool` whose rule field is `field` (read from `input`), with
    /// relative names read from `cwd`.
    pub fn new(
        tool: &str,
        field: Option<&str>,
        path_tool: bool,
        input: &Value,
        cwd: &Path,
        home: Option<&Path>,
    ) -> Self {
        Self::in_directories(tool, field, path_tool, input, (cwd, cwd), home)
    }

    /// [`Target::new`] with two directories `(workspace, shell)`: paths are read from the
    /// workspace, a command line from the session shell's directory, where it runs.
    pub fn in_directories(
        tool: &str,
        field: Option<&str>,
        path_tool: bool,
        input: &Value,
        (cwd, shell): (&Path, &Path),
        home: Option<&Path>,
    ) -> Self {
        let given = field.and_then(|field| input.get(field));
        if path_tool && given.is_none_or(Value::is_null) {
            // A path tool called without its path works on the working directory (Glob and
            // Grep without `path`), so rules judge that directory.
            return Target::Path(PathCandidates::new(".", cwd, home));
        }
        let Some(value) = given.and_then(Value::as_str) else {
            return Target::None;
        };
        if is_shell_tool(tool) || (field == Some("command") && !path_tool) {
            return Target::Command(Box::new(CommandTarget::new(value, shell, home)));
        }
        if path_tool || Family::of(tool).is_some() {
            return Target::Path(PathCandidates::new(value, cwd, home));
        }
        if is_url_tool(tool) || field == Some("url") {
            return Target::Url {
                url: value.to_owned(),
                host: url_host(value),
            };
        }
        Target::Field(value.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_targets_collect_redirects_and_reads() {
        let cwd = Path::new("/ws");
        let target = CommandTarget::new(
            "cat .env secret.txt > out.txt 2>/dev/null; grep -r key config.toml < in.txt",
            cwd,
            None,
        );
        let writes: Vec<&Path> = target.writes.iter().map(|p| p.lexical.as_path()).collect();
        assert_eq!(writes, [Path::new("/ws/out.txt")]);
        let reads: Vec<&Path> = target.reads.iter().map(|p| p.lexical.as_path()).collect();
        assert_eq!(
            reads,
            [
                Path::new("/ws/.env"),
                Path::new("/ws/secret.txt"),
                Path::new("/ws/in.txt"),
                Path::new("/ws/config.toml"),
            ]
        );
        assert_eq!(target.unresolved_write, None);
        for command in ["echo x > $OUT", "echo x > ~/x", "echo x > *.log"] {
            assert!(
                CommandTarget::new(command, cwd, None)
                    .unresolved_write
                    .is_some(),
                "{command}"
            );
        }
    }

    #[test]
    fn dangling_links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink("../.git/hooks/pre-commit", root.join("src/evil")).unwrap();
        let candidates = PathCandidates::new("src/evil", &root, None);
        assert_eq!(candidates.physical, root.join(".git/hooks/pre-commit"));
        std::os::unix::fs::symlink("loop2", root.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", root.join("loop2")).unwrap();
        assert_eq!(
            PathCandidates::new("loop1/x", &root, None).physical,
            root.join("loop1/x")
        );
        let target = CommandTarget::new("cat .en? $F", &root, None);
        assert_eq!(target.unresolved_read.as_deref(), Some(".en?"));
    }

    #[test]
    fn physical_paths_follow_links_for_missing_files_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        let candidates = PathCandidates::new("link/new.txt", &root, None);
        assert_eq!(candidates.lexical, root.join("link/new.txt"));
        assert_eq!(candidates.physical, root.join("real/new.txt"));
        assert!(!candidates.climbs);
        assert!(PathCandidates::new("a/../b", &root, None).climbs);
    }
}
