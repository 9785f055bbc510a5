//! The checks the permission engine hands to the sandbox as closures: the sandbox applies them on
//! every file access and every outgoing request without knowing the rules behind them.

use std::path::Path;
use std::sync::Arc;

/// Whether a path is hidden by a `Read` deny rule: the sandbox asks it on every file access a
/// guest makes (true: the path does not exist for the guest).
pub type HiddenPaths = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// Whether a call may send a request to a host: `Err` says which rule refuses it, in words the
/// model sees.
pub type HostCheck = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;
