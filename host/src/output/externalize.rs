//! Saving a whole result to `<session>/tool-results/<tool_use_id>.txt` when it does not fit
//! inline: the model gets a preview, the path and exact counts, and pages through the file with
//! Read (`offset`, `limit`), which may read the session's `tool-results/`.

use std::path::{Path, PathBuf};

/// The file a result of call `tool_use_id` is saved to (the id made file-name safe).
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
    results_dir.join(format!("{safe}.txt"))
}

/// Writes `text` to the result file of `tool_use_id` and returns the marker note naming it, or
/// `None` when it could not be written (the cut result then says only what was cut).
pub(crate) fn externalize(results_dir: &Path, tool_use_id: &str, text: &str) -> Option<String> {
    let path = result_file(results_dir, tool_use_id);
    let written = std::fs::create_dir_all(results_dir)
        .and_then(|()| crate::session::write_atomically(&path, text.as_bytes()));
    if let Err(error) = written {
        tracing::warn!("cannot save the full result to {}: {error}", path.display());
        return None;
    }
    let chars = text.chars().count();
    let lines = text.lines().count();
    Some(format!(
        "; all {chars} characters ({lines} lines) are in {}; read it with Read, using offset and limit",
        path.display()
    ))
}
