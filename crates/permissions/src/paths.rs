//! Lexical path normalization (`.`, `..`, duplicate slashes) without touching the filesystem;
//! `target.rs` adds the symlink-resolved spelling beside it.

use std::path::{Component, Path, PathBuf};

/// `path` made absolute against `cwd`, with `.` and `..` resolved lexically.
pub fn normalize(cwd: &Path, path: &str) -> PathBuf {
    let joined = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    };
    let mut normalized = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                normalized.pop();
            }
            Component::CurDir => {}
            other => normalized.push(other.as_os_str()),
        }
    }
    normalized
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_and_dot_segments() {
        let cwd = Path::new("/ws/project");
        let cases = [
            ("a.txt", "/ws/project/a.txt"),
            ("./a/../b.txt", "/ws/project/b.txt"),
            ("../outside", "/ws/outside"),
            ("/etc/passwd", "/etc/passwd"),
            ("/../../etc", "/etc"),
            ("sub/../../../..", "/"),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize(cwd, input), PathBuf::from(expected), "{input}");
        }
    }
}
