//! What `--watch` compares: a fingerprint of every file in the plugin directories (path, size,
//! modification time), so a rebuilt component or an edited manifest is noticed.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

/// Deepest directory level looked at below a plugin directory.
const MAX_DEPTH: usize = 4;
/// Most entries looked at per plugin directory; a plugin directory is small.
const MAX_ENTRIES: usize = 10_000;

/// A hash of the names, sizes and modification times of the files under `dirs` (not under a
/// crate's `target/`, nor hidden entries, which a build touches constantly).
pub(crate) fn fingerprint(dirs: &[PathBuf]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for dir in dirs {
        let mut seen = 0;
        visit(dir, 0, &mut seen, &mut hasher);
    }
    hasher.finish()
}

fn visit(dir: &Path, depth: usize, seen: &mut usize, hasher: &mut DefaultHasher) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        dir.hash(hasher);
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        *seen += 1;
        if *seen > MAX_ENTRIES {
            return;
        }
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') || name == "target" {
            continue;
        }
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        entry.path().hash(hasher);
        if metadata.is_dir() {
            if depth < MAX_DEPTH {
                visit(&entry.path(), depth + 1, seen, hasher);
            }
        } else {
            metadata.len().hash(hasher);
            metadata.modified().ok().hash(hasher);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_changes_the_fingerprint_and_target_does_not() {
        let dir = tempfile::tempdir().expect("temp dir");
        let dirs = [dir.path().to_path_buf()];
        std::fs::write(dir.path().join("janua.toml"), "a").expect("write");
        let before = fingerprint(&dirs);
        assert_eq!(before, fingerprint(&dirs), "stable while nothing changes");
        std::fs::create_dir_all(dir.path().join("target/release")).expect("mkdir");
        std::fs::write(dir.path().join("target/release/x.wasm"), "build").expect("write");
        assert_eq!(before, fingerprint(&dirs), "target/ is ignored");
        std::fs::write(dir.path().join("janua.toml"), "ab").expect("write");
        assert_ne!(before, fingerprint(&dirs), "a resized file is a change");
        let resized = fingerprint(&dirs);
        std::fs::write(dir.path().join("tool.wasm"), "x").expect("write");
        assert_ne!(resized, fingerprint(&dirs), "a new file is a change");
    }
}
