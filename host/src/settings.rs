//! Settings files (`--settings FILE`): permission rules and aliases, as JSON.
//!
//! ```json
//! { "permissions": { "allow": ["Read"], "deny": ["Read(*.env)"] }, "aliases": { "Cat": "Read" } }
//! ```
//! Parsed strictly: an unknown key is an error naming it, so a typo never silently drops a rule.
//! Settings scopes (managed, user, project, local) arrive with the permission-engine issue.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// A settings file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("settings {}: {message}", path.display())]
pub struct SettingsError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, with line and column when known.
    pub message: String,
}

/// One settings file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Permission rules.
    #[serde(default)]
    pub permissions: PermissionSettings,
    /// Aliases, `from` -> `to`.
    #[serde(default)]
    pub aliases: BTreeMap<String, String>,
}

/// `permissions` in a settings file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionSettings {
    /// Allow rules.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Deny rules.
    #[serde(default)]
    pub deny: Vec<String>,
}

impl Settings {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Self, SettingsError> {
        let error = |message: String| SettingsError {
            path: path.to_path_buf(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| error(format!("cannot read: {e}")))?;
        serde_json::from_str(&text).map_err(|e| error(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_bad_json_are_errors_with_location() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (r#"{"permissions": {"alow": []}}"#, "unknown field `alow`"),
            (r#"{"permissions": "#, "line 1"),
            (r#"{"aliases": {"Cat": 1}}"#, "invalid type"),
        ];
        for (text, expected) in cases {
            let path = dir.path().join("settings.json");
            std::fs::write(&path, text).unwrap();
            let message = Settings::load(&path).unwrap_err().to_string();
            assert!(message.contains(expected), "{text}: {message}");
            assert!(message.contains("settings.json"), "{message}");
        }
    }
}
