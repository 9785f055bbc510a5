//! The checks the permission engine hands to the sandbox as closures: the sandbox applies them on
//! every file access and every outgoing request without knowing the rules behind them.

use std::path::Path;
use std::sync::Arc;

/// Whether a path is hidden by a `Read` deny rule: the sandbox asks it on every file access a
/// guest makes (true: the path does not exist for the guest).
pub type HiddenPaths = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// Whether a call may send a request to a host: `Err` says which rule refuses it.
pub type HostCheck = Arc<dyn Fn(&str) -> Result<(), HostRefused> + Send + Sync>;

/// Why the permission rules refuse a request to a host (the `Err` of a [`HostCheck`]); the text
/// is what the model sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostRefused {
    /// A deny rule names the host.
    #[error("{host} is denied by the rule {rule:?} ({origin})")]
    Denied {
        /// The host asked for.
        host: String,
        /// The deny rule's text.
        rule: String,
        /// Where the rule comes from (settings file, session, CLI).
        origin: String,
    },
    /// An ask rule names a host other than the one the decision looked at; nobody can be asked
    /// in the middle of a call.
    #[error(
        "{host} is not the host {tool} was allowed to fetch and the rule {rule:?} ({origin}) asks for it; fetch it in a call of its own"
    )]
    Asked {
        /// The host asked for.
        host: String,
        /// The tool making the request.
        tool: String,
        /// The ask rule's text.
        rule: String,
        /// Where the rule comes from.
        origin: String,
    },
    /// No allow rule covers a host other than the one the decision looked at.
    #[error(
        "{host} is not the host {tool} was allowed to fetch{}, and no allow rule such as WebFetch(domain:{host}) covers it",
        decided.as_deref().map(|decided| format!(" ({decided})")).unwrap_or_default()
    )]
    NotAllowed {
        /// The host asked for.
        host: String,
        /// The tool making the request.
        tool: String,
        /// The host the decision looked at, if any.
        decided: Option<String>,
    },
}
