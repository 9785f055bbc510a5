//! Permission modes, as Claude Code names them.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// How calls that no rule settles are treated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub enum PermissionMode {
    /// Read-only tools inside the workspace run; everything else asks.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// Also write-class tools inside the workspace (protected paths excepted).
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    /// No writes and no processes: such calls are denied.
    #[serde(rename = "plan")]
    Plan,
    /// Anything that would ask is denied.
    #[serde(rename = "dontAsk")]
    DontAsk,
    /// Everything runs except what deny and ask rules and protected paths stop.
    #[serde(rename = "bypassPermissions")]
    BypassPermissions,
}

impl PermissionMode {
    /// Every mode's name, for messages.
    pub const NAMES: &'static str = "default, acceptEdits, plan, dontAsk, bypassPermissions";

    /// The name as written in settings and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }

    /// True for modes that approve more than `default` does; a project that has not been trusted
    /// may not select them.
    pub fn widens(self) -> bool {
        matches!(
            self,
            PermissionMode::AcceptEdits | PermissionMode::BypassPermissions
        )
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not one of [`PermissionMode::NAMES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode {name:?}; expected one of {names}", name = .0, names = PermissionMode::NAMES)]
pub struct UnknownMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "default" | "manual" => Ok(PermissionMode::Default),
            "acceptEdits" => Ok(PermissionMode::AcceptEdits),
            "plan" => Ok(PermissionMode::Plan),
            "dontAsk" => Ok(PermissionMode::DontAsk),
            "bypassPermissions" => Ok(PermissionMode::BypassPermissions),
            other => Err(UnknownMode(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for name in PermissionMode::NAMES.split(", ") {
            assert_eq!(name.parse::<PermissionMode>().unwrap().as_str(), name);
        }
        assert_eq!("manual".parse(), Ok(PermissionMode::Default));
        let error = "auto".parse::<PermissionMode>().unwrap_err().to_string();
        assert!(error.contains("bypassPermissions"), "{error}");
    }
}
