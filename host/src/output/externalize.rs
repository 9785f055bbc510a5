//! Saving a whole result to `<session>/tool-results/<tool_use_id>.txt` when it does not fit
//! inline: the model gets a preview, the path and exact counts, and pages through the file with
//! Read (`offset`, `limit`), which may read the session's `tool-results/`.

use std::path::{Path, PathBuf};

/// A new file for a result of call `tool_use_id`: `<id>.txt`, or `<id>-2.txt`, ... when ids
/// repeat (some models restart their ids every message), so no path the model was given is ever
/// overwritten. The id is made file-name safe.
pub(crate) fn result_file(results_dir: &Path, tool_use_id: &str) -> PathBuf {
    let safe: String = tool_use_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    let mut path = results_dir.join(format!("{safe}.txt"));
    let mut number = 1u32;
    while path.exists() {
        number += 1;
        path = results_dir.join(format!("{safe}-{number}.txt"));
    }
    path
}

/// Writes `text` to a new result file of `tool_use_id` and returns it with the marker note
/// naming it, or `None` when it could not be written (the cut result then says only what was
/// cut).
pub(crate) fn externalize(
    results_dir: &Path,
    tool_use_id: &str,
    text: &str,
) -> Option<(PathBuf, String)> {
    let written = std::fs::create_dir_all(results_dir).and_then(|()| {
        let path = result_file(results_dir, tool_use_id);
        janua_types::write_whole(&path, text.as_bytes()).map(|()| path)
    });
    let path = match written {
        Ok(path) => path,
        Err(error) => {
            tracing::warn!(
                "cannot save a full result in {}: {error}",
                results_dir.display()
            );
            return None;
        }
    };
    let chars = text.chars().count();
    let lines = text.lines().count();
    let note = format!(
        "; all {chars} characters ({lines} lines) are in {}; read it with Read, using offset and limit",
        path.display()
    );
    Some((path, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_ids_get_new_files_and_odd_ids_safe_names() {
        let dir = tempfile::tempdir().unwrap();
        let (first, _) = externalize(dir.path(), "call_0", "one").unwrap();
        let (second, note) = externalize(dir.path(), "call_0", "two\nlines").unwrap();
        assert_ne!(first, second);
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "one");
        assert!(note.contains("all 9 characters (2 lines)"), "{note}");
        let odd = result_file(dir.path(), "../a/b");
        assert_eq!(odd.parent(), Some(dir.path()));
        assert_eq!(odd.file_name().unwrap(), "___a_b.txt");
    }
}
