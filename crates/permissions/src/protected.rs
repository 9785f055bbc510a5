//! Protected paths: configuration that changes how tools, shells or version control behave. Writes
//! to them always ask, in every mode and whatever allow rule or hook would approve them.

use std::path::{Component, Path};

use janua_types::{PROTECTED_DIRECTORIES, PROTECTED_FILES};

/// True when writing `path` must always ask.
pub fn is_protected(path: &Path) -> bool {
    let names: Vec<&str> = path
        .components()
        .filter_map(|part| match part {
            Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .collect();
    let in_directory = names.iter().enumerate().any(|(at, name)| {
        let parent_dir = at + 1 < names.len() || path.to_string_lossy().ends_with('/');
        let worktree = *name == ".claude" && names.get(at + 1) == Some(&"worktrees");
        (PROTECTED_DIRECTORIES.contains(name) && !worktree && (parent_dir || at + 1 == names.len()))
            || (matches!(*name, "git" | "fish") && at > 0 && names[at - 1] == ".config")
    });
    in_directory
        || names
            .last()
            .is_some_and(|name| PROTECTED_FILES.contains(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_table() {
        let cases = [
            ("/ws/.git/config", true),
            ("/ws/.git", true),
            ("/ws/sub/.git/hooks/pre-commit", true),
            ("/ws/.janua/settings.json", true),
            ("/ws/.claude/settings.json", true),
            ("/ws/.claude/worktrees/x/file.rs", false),
            ("/home/u/.config/git/config", true),
            ("/ws/.bashrc", true),
            ("/ws/src/.mcp.json", true),
            ("/ws/src/main.rs", false),
            ("/ws/.gitignore", false),
            ("/ws/docs/git/notes.md", false),
            ("/ws/.github/workflows/ci.yml", false),
        ];
        for (path, expected) in cases {
            assert_eq!(is_protected(Path::new(path)), expected, "{path}");
        }
    }
}
