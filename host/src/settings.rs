//! Settings files in Claude Code's schema, from every scope, merged into one [`Policy`].
//!
//! ```json
//! { "permissions": { "allow": ["Read", {"rule": "Bash(git log *)", "match": ["git log -5"]}],
//!                    "ask": [], "deny": ["Read(.env)"], "defaultMode": "acceptEdits",
//!                    "additionalDirectories": ["../shared"] },
//!   "aliases": { "Cat": "Read" } }
//! ```
//!
//! Scopes, highest precedence first (for `defaultMode`; lists merge and a deny anywhere wins):
//! command-line flags, `--settings FILE-or-JSON`, local `.janua/settings.local.json`, project
//! `.janua/settings.json`, user `~/.config/janua/settings.json`. A project that has not been
//! trusted (`--trust-workspace`, or its path in the user settings' `trustedWorkspaces`) keeps its
//! deny and ask rules, but its allow rules, additional directories and any widening
//! `defaultMode` are not used. Unknown keys warn; a malformed rule is an error naming file, list
//! and position.

mod file;
mod hooks;
mod load;

pub use file::{PermissionSettings, RuleEntry, Settings};
pub use hooks::HookSetting;
pub use load::{
    CLAUDE_MANAGED_SETTINGS, ClaudeCodeSettings, SettingsChange, SettingsInput,
    claude_managed_files, claude_user_settings_path, user_settings_path,
};

pub(crate) use load::{
    ScopedHook, load, local_settings_path, plugin_approvals, save_local_approvals,
    update_settings_file,
};

use std::path::PathBuf;

/// A settings file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("settings {}: {message}", path.display())]
pub struct SettingsError {
    /// The file (or `--settings JSON` for inline settings).
    pub path: PathBuf,
    /// What is wrong, with line and column or key and position when known.
    pub message: String,
}
